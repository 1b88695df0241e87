//! Accessibility checks in the browser: axe-core (pinned in `examples/tests/a11y`, installed
//! with `npm ci` under the target directory on first use) run on the page as it stands.
//! Without npm the checks fail, in CI and out: an unchecked page is not a passing one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::browser::Browser;

/// axe-core's script, installed once per test process.
fn axe_script() -> &'static str {
    static SCRIPT: OnceLock<String> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        let pins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a11y");
        let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-a11y");
        let script = dir.join("node_modules/axe-core/axe.min.js");
        let lock = std::fs::read(pins.join("package-lock.json")).expect("the a11y pins");
        let installed_lock = std::fs::read(dir.join("package-lock.json")).ok();
        if !script.exists() || installed_lock.as_deref() != Some(lock.as_slice()) {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("the a11y directory");
            for file in ["package.json", "package-lock.json"] {
                std::fs::copy(pins.join(file), dir.join(file)).expect("copy the a11y pins");
            }
            let out = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
                .current_dir(&dir)
                .output()
                .unwrap_or_else(|e| panic!("run npm (install Node.js and npm): {e}"));
            assert!(
                out.status.success(),
                "npm ci of axe-core in {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::read_to_string(&script).expect("axe.min.js")
    })
}

/// The accessibility violations axe-core finds on the page now (of any impact: minor ones
/// too), each as `rule: what (where)`.
pub async fn violations(b: &Browser) -> Vec<String> {
    let installed = b
        .eval(&format!(
            "if (!window.axe) {{ {} }} return typeof window.axe;",
            axe_script()
        ))
        .await;
    assert_eq!(
        installed,
        Value::String("object".into()),
        "axe-core is loaded"
    );
    let found = b
        .eval(
            "return axe.run(document, { resultTypes: ['violations'] }).then(r => r.violations
                .map(v => `${v.id}: ${v.help} (${v.nodes.map(n => n.target.join(' ')).join(', ')})`));",
        )
        .await;
    serde_json::from_value(found).expect("a list of violations")
}
