//! Shared by the JS interop tests (included with `#[path]`): the official `@a2a-js/sdk`,
//! pinned in tests/interop/conformance/js (package.json and package-lock.json), installed
//! with `npm ci` under the target directory on first use, with the client scripts of
//! tests/interop/conformance copied beside its node_modules (where they resolve the SDK); and
//! the same for the SDK of A2A 0.3 (`@a2a-js/sdk` 0.3.14, pinned in tests/interop/v03/js, its
//! scripts in tests/interop/v03), installed apart so that the two pins never meet.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One pinned SDK: the folder of its scripts and pins under tests/interop (installed under
/// target/tmp/interop-FOLDER), its name in notes, and the oldest node it runs on.
struct JsSdk {
    folder: &'static str,
    name: &'static str,
    min_node: u32,
}

/// The 1.x SDK (it declares engines.node >= 20).
const V1: JsSdk = JsSdk {
    folder: "conformance",
    name: "@a2a-js/sdk",
    min_node: 20,
};

/// The SDK of A2A 0.3 (0.3.14 declares engines.node >= 18).
const V03: JsSdk = JsSdk {
    folder: "v03",
    name: "@a2a-js/sdk 0.3",
    min_node: 18,
};

impl JsSdk {
    fn scripts(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("interop")
            .join(self.folder)
    }

    fn interop_dir(&self) -> PathBuf {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-{}", self.folder))
    }
}

/// The scripts: tests/interop/conformance.
pub fn scripts() -> PathBuf {
    V1.scripts()
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
/// installing it if needed. `None` (with a printed note) when node >= 20 or npm is missing,
/// and never in CI (`CI` set: it panics then); a failing `npm ci` panics.
pub fn js_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| js_setup(&V1)).clone()
}

/// [`js_dir`] for the SDK of A2A 0.3, with the scripts of tests/interop/v03.
pub fn js_dir_v03() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| js_setup(&V03)).clone()
}

fn js_setup(sdk: &JsSdk) -> Option<PathBuf> {
    let name = sdk.name;
    let Some(node) = tool_version("node") else {
        a2a_tests::skip_unless_ci(&format!(
            "the {name} interop checks need `node`, not installed"
        ));
        return None;
    };
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < sdk.min_node {
        a2a_tests::skip_unless_ci(&format!(
            "the {name} interop checks need node {} or newer (the SDK's minimum); this is {node}",
            sdk.min_node
        ));
        return None;
    }
    if tool_version("npm").is_none() {
        a2a_tests::skip_unless_ci(&format!(
            "the {name} interop checks need `npm`, not installed"
        ));
        return None;
    }
    let (scripts, interop_dir) = (sdk.scripts(), sdk.interop_dir());
    let src = scripts.join("js");
    let lock =
        std::fs::read_to_string(src.join("package-lock.json")).expect("read js/package-lock.json");
    let manifest = std::fs::read_to_string(src.join("package.json")).expect("read js/package.json");
    let dir = interop_dir.join("js");
    std::fs::create_dir_all(&interop_dir).expect("create the interop directory");
    let _lock = a2a_tests::DirLock::acquire(interop_dir.join("js.lock"), Duration::from_secs(900));
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
            "could not install {name} from the npm registry into {} ({}):\n{}\n{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        a2a_tests::note(&format!(
            "installed {name} (npm ci) in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        std::fs::write(&marker, wanted).expect("write the npm marker");
    }
    // The scripts resolve the SDK from the node_modules beside them.
    for entry in std::fs::read_dir(&scripts).expect("the scripts' folder under tests/interop") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "mjs") {
            let name = path.file_name().expect("a file name");
            std::fs::copy(&path, dir.join(name))
                .unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        }
    }
    Some(dir)
}
