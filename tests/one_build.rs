//! One build for the README's commands: `cargo run --bin hello` (every member),
//! `cargo test` (every member and its dev-dependencies) and `cargo run -p a2a-cli` (the CLI
//! alone) ask for the same features of every third-party crate they share, so none of them
//! rebuilds what another built (`workspace-hack/Cargo.toml` says how; ARCHITECTURE.md, "One
//! build"). Reads `cargo tree` for the host.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package (`name version`) of a selection, with the features it is built with.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // A package seen before is marked `(*)` at the end of its line.
        let line = line.trim_end_matches(" (*)");
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        // `name vX.Y.Z (path)` or `name vX.Y.Z (*)`: the name and version identify it.
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let local = package.contains(" (/");
        if local {
            continue;
        }
        map.entry(format!("{name} {version}")).or_default().extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(String::from),
        );
    }
    map
}

fn differences(
    a: &BTreeMap<String, BTreeSet<String>>,
    b: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    a.iter()
        .filter_map(|(package, fa)| {
            let fb = b.get(package)?;
            (fa != fb).then(|| {
                format!(
                    "{package}: only in one {:?}, only in the other {:?}",
                    fa.difference(fb).collect::<Vec<_>>(),
                    fb.difference(fa).collect::<Vec<_>>()
                )
            })
        })
        .collect()
}

#[test]
fn the_readme_commands_share_one_build_of_every_dependency() {
    let agents = features(&["--workspace", "-e", "normal,build"]);
    let tests = features(&["--workspace", "-e", "normal,build,dev"]);
    let cli = features(&["-p", "a2a-cli", "-e", "normal,build"]);
    let test_diff = differences(&agents, &tests);
    assert!(
        test_diff.is_empty(),
        "`cargo test` would rebuild these (a dev-dependency adds features; add them to \
         workspace-hack or drop them):\n{}",
        test_diff.join("\n")
    );
    let cli_diff = differences(&cli, &agents);
    assert!(
        cli_diff.is_empty(),
        "`cargo run -p a2a-cli` would rebuild these (add the agents' features to \
         workspace-hack/Cargo.toml):\n{}",
        cli_diff.join("\n")
    );
}

/// The model library is compiled only with the `llm` feature: an agent without it (the CLI,
/// a2a-kit's defaults) builds no LLM crate.
#[test]
fn no_model_library_without_the_llm_feature() {
    let is_model_crate = |p: &String| p.starts_with("rig-") || p.starts_with("rig-core ");
    for args in [
        &["-p", "a2a-kit", "-e", "normal"][..],
        &[
            "-p",
            "a2a-kit",
            "-e",
            "normal",
            "--features",
            "sqlite,postgres",
        ][..],
        &["-p", "a2a-cli", "-e", "normal"][..],
    ] {
        let found: Vec<String> = features(args).into_keys().filter(is_model_crate).collect();
        assert!(found.is_empty(), "cargo tree {args:?} has {found:?}");
    }
    let with = features(&["-p", "a2a-kit", "-e", "normal", "--features", "llm"]);
    assert!(
        with.keys().any(is_model_crate),
        "the llm feature brings the model library"
    );
}
