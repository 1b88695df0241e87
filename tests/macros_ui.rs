//! Compile-fail and compile-pass tests of the `a2a-macros` diagnostics (trybuild).
//!
//! Every `ui/<case>.rs` must fail to compile with exactly the error recorded in
//! `ui/<case>.stderr`; every `ui/pass_*.rs` must compile. Compiler output changes between
//! releases, so the cases only run on the toolchain the `.stderr` files were recorded with
//! (`ui/TOOLCHAIN`, the output of `rustc --version`). To re-record on a new toolchain:
//! `TRYBUILD=overwrite cargo test -p a2a-tests --test macros_ui`, update `ui/TOOLCHAIN`, then
//! read every changed `.stderr`.

use std::path::Path;
use std::process::Command;

#[test]
fn macros_ui() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorded = std::fs::read_to_string(manifest.join("ui/TOOLCHAIN")).expect("ui/TOOLCHAIN");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let current = Command::new(&rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if current.trim() != recorded.trim() {
        eprintln!(
            "note: skipping the macro UI tests: they were recorded with `{}`, this is `{}`",
            recorded.trim(),
            current.trim()
        );
        return;
    }

    let mut cases: Vec<_> = std::fs::read_dir(manifest.join("ui"))
        .expect("ui/")
        .map(|e| {
            e.expect("ui/ entry")
                .file_name()
                .into_string()
                .expect("UTF-8 file name")
        })
        .filter(|name| name.ends_with(".rs"))
        .collect();
    cases.sort();
    let t = trybuild::TestCases::new();
    for case in &cases {
        let path = format!("ui/{case}");
        if case.starts_with("pass_") {
            t.pass(path);
        } else {
            t.compile_fail(path);
        }
    }
}
