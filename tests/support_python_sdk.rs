//! Shared by the Python interop tests (included with `#[path]`): a virtualenv with the
//! official SDK, pinned, created on first use under the target directory, and child-process
//! handling. The venv is reused while its marker names the same pins.

#![allow(dead_code)]

pub use a2a_tests::{ChildGuard, free_port};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What is installed: the official SDK, pinned, with its HTTP server and gRPC extras, and
/// uvicorn. The gRPC extra's packages are pinned too (`grpcio`, and the `grpcio-tools` and
/// `grpcio-reflection` it also brings), with the `protobuf` runtime they all share and the
/// `setuptools` that `grpcio-tools` requires, so that a new release of any of them cannot
/// change what the interop tests run.
pub const REQUIREMENTS: &[&str] = &[
    "a2a-sdk[http-server,grpc]==1.3.0",
    "uvicorn==0.54.0",
    "grpcio==1.85.3",
    "grpcio-tools==1.85.1",
    "grpcio-reflection==1.85.1",
    "protobuf==7.36.2",
    "setuptools==84.2.1",
];

/// The scripts: tests/interop/python.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interop")
        .join("python")
        .join(name)
}

fn venv_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("interop-python")
        .join("venv-a2a-sdk-1.3.0")
}

/// The venv's python, creating the venv if needed. `None` (with a printed note) only when
/// `python3 -m venv` is unavailable, and never in CI (`CI` set: it panics then, as a failing
/// `pip install` does).
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            a2a_tests::python_venv(&venv_dir(), REQUIREMENTS, "the Python interop tests")
        })
        .clone()
}

/// Start the Python SDK server; returns it and its base URL once its card is served.
pub async fn start_python_server(py: &Path) -> (ChildGuard, String) {
    let port = free_port();
    // The SDK logs every error it answers with; keep that out of the test output.
    let log = venv_dir().with_file_name(format!("server-{port}.log"));
    let child = Command::new(py)
        .arg(script("server.py"))
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("server log"))
        .spawn()
        .expect("start server.py");
    let mut guard = ChildGuard(child);
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = guard.0.try_wait().expect("poll server.py") {
            panic!(
                "server.py exited early ({status}):\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        let ok = http
            .get(format!("{base}/.well-known/agent-card.json"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ok {
            return (guard, base);
        }
        assert!(
            Instant::now() < deadline,
            "server.py did not come up within 60 s; log: {}",
            log.display()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
