//! Shared by the A2A v0.3 interop tests (included with `#[path]`): a virtualenv with the
//! official Python SDK of v0.3 (`a2a-sdk` 0.3.26, the newest 0.3.x), pinned, created on first
//! use under the target directory, beside (not in) the 1.x one of support_python_sdk.rs; and
//! the SDK's own v0.3 server (tests/interop/v03/py_server.py) as a child process. The venv is
//! reused while its marker names the same pins. As in support_python_sdk.rs, a missing
//! `python3 -m venv` skips with a note, except in CI (`CI` set), where it fails.

#![allow(dead_code)]

pub use a2a_tests::ChildGuard;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// What is installed: the official v0.3 SDK, pinned, with its HTTP server and gRPC extras,
/// and uvicorn (py_server.py). The packages that shape what goes over the wire are pinned
/// too, so that a new release of any of them cannot change what the tests run: the HTTP
/// server extra's (`fastapi`, `starlette`, `sse-starlette`), the gRPC extra's (`grpcio`,
/// `grpcio-tools`, `grpcio-reflection`: py_grpc_client.py's channel), the client's HTTP stack
/// (`httpx`, `httpx-sse`), `pydantic` (the SDK's types, which the client script validates
/// strictly with) and the `protobuf` runtime its HTTP+JSON and gRPC bindings parse with.
pub const REQUIREMENTS: &[&str] = &[
    "a2a-sdk[http-server,grpc]==0.3.26",
    "uvicorn==0.54.0",
    "fastapi==0.165.0",
    "starlette==1.10.0",
    "sse-starlette==3.7.0",
    "httpx==0.28.1",
    "httpx-sse==0.4.3",
    "pydantic==2.14.4",
    "protobuf==7.36.2",
    "grpcio==1.85.1",
    "grpcio-tools==1.85.1",
    "grpcio-reflection==1.85.1",
];

/// The v0.3 scripts: tests/interop/v03.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interop")
        .join("v03")
        .join(name)
}

/// Where the v0.3 interop tests keep what they install and write: target/tmp/interop-v03.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-v03")
}

fn venv_dir() -> PathBuf {
    interop_dir().join("venv-a2a-sdk-0.3.26")
}

/// The venv's python, creating the venv if needed. `None` (with a printed note) only when
/// `python3 -m venv` is unavailable, and never in CI (`CI` set: it panics then, as a failing
/// `pip install` does).
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            a2a_tests::python_venv(&venv_dir(), REQUIREMENTS, "the v0.3 Python interop tests")
        })
        .clone()
}

/// The official v0.3 server (py_server.py) on a free port; returns it and its base URL (the
/// line it prints once it serves). Its log (the SDK logs every error it answers with) goes to
/// a file under the interop directory, named in any panic.
pub fn start_reference_server(py: &Path) -> (ChildGuard, String) {
    let log = interop_dir().join(format!("py-server-{}.log", std::process::id()));
    let child = Command::new(py)
        .arg(script("py_server.py"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("server log"))
        .spawn()
        .expect("start py_server.py");
    let mut guard = ChildGuard(child);
    let stdout = guard.0.stdout.take().expect("py_server.py's stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(line) if line.trim().starts_with("http://") => (guard, line.trim().to_string()),
        got => panic!(
            "py_server.py printed no URL within 60 s ({got:?}); log {}:\n{}",
            log.display(),
            std::fs::read_to_string(&log).unwrap_or_default()
        ),
    }
}
