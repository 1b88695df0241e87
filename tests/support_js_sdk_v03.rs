//! Shared by the A2A v0.3 interop tests (included with `#[path]`): the official JS SDK of v0.3
//! (`@a2a-js/sdk` 0.3.14, the newest 0.3.x), pinned in tests/interop/v03/js (package.json and
//! package-lock.json), installed with `npm ci` under the target directory on first use, with
//! the `.mjs` scripts of tests/interop/v03 copied beside its node_modules (where they resolve
//! the SDK). support_js_sdk.rs does the same for the 1.x SDK and its own folder; this one is
//! apart so that the two pins never meet. A missing `node` (>= 18, the SDK's minimum) or `npm`
//! skips with a note, except in CI (`CI` set), where it fails; a failing `npm ci` panics.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The v0.3 scripts: tests/interop/v03.
pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interop")
        .join("v03")
}

fn install_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-v03")
}

fn tool_version(program: &str) -> Option<String> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The directory holding node_modules with the pinned SDK and a fresh copy of every script,
/// installing it if needed; `None` (with a printed note) when node >= 18 or npm is missing.
pub fn js_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(js_setup).clone()
}

fn js_setup() -> Option<PathBuf> {
    let Some(node) = tool_version("node") else {
        a2a_tests::skip_unless_ci("the @a2a-js/sdk 0.3 interop checks need `node`, not installed");
        return None;
    };
    // @a2a-js/sdk 0.3.14 declares engines.node >= 18.
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 18 {
        a2a_tests::skip_unless_ci(&format!(
            "the @a2a-js/sdk 0.3 interop checks need node 18 or newer (the SDK's minimum); this is {node}"
        ));
        return None;
    }
    if tool_version("npm").is_none() {
        a2a_tests::skip_unless_ci("the @a2a-js/sdk 0.3 interop checks need `npm`, not installed");
        return None;
    }
    let src = scripts().join("js");
    let lock =
        std::fs::read_to_string(src.join("package-lock.json")).expect("read js/package-lock.json");
    let manifest = std::fs::read_to_string(src.join("package.json")).expect("read js/package.json");
    let dir = install_dir().join("js");
    std::fs::create_dir_all(install_dir()).expect("create the interop directory");
    let _lock =
        a2a_tests::DirLock::acquire(install_dir().join("js.lock"), Duration::from_secs(900));
    let marker = dir.join(".a2a-kit-installed");
    let wanted = format!("{manifest}\n{lock}");
    let installed = std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted)
        && dir
            .join("node_modules")
            .join("@a2a-js")
            .join("sdk")
            .join("package.json")
            .exists();
    if !installed {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the npm directory");
        std::fs::write(dir.join("package.json"), &manifest).expect("copy package.json");
        std::fs::write(dir.join("package-lock.json"), &lock).expect("copy package-lock.json");
        let start = Instant::now();
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("run npm ci");
        assert!(
            out.status.success(),
            "could not install @a2a-js/sdk 0.3 from the npm registry into {} ({}):\n{}\n{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        a2a_tests::note(&format!(
            "installed @a2a-js/sdk 0.3.14 (npm ci) in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        std::fs::write(&marker, wanted).expect("write the npm marker");
    }
    // The scripts resolve the SDK from the node_modules beside them.
    for entry in std::fs::read_dir(scripts()).expect("tests/interop/v03") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "mjs") {
            let name = path.file_name().expect("a file name");
            std::fs::copy(&path, dir.join(name))
                .unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        }
    }
    Some(dir)
}
