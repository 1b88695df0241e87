//! The example binaries talk through `tracing`: the URL at start-up at `info` by default, and
//! `RUST_LOG` decides.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HELLO: &str = env!("CARGO_BIN_EXE_hello");

/// Start hello on a free port with `rust_log` (unset: the default), and return the stderr
/// lines it wrote before it answered its card, then stop it.
fn startup_lines(rust_log: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new(HELLO);
    cmd.args(["--bind", "127.0.0.1:0"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match rust_log {
        Some(v) => cmd.env("RUST_LOG", v),
        None => cmd.env_remove("RUST_LOG"),
    };
    let mut child = cmd.spawn().expect("run hello");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        match rx.recv_timeout(Duration::from_millis(300)) {
            Ok(line) => {
                let done = line.contains("listening on");
                lines.push(line);
                if done {
                    break;
                }
            }
            // Quiet for a while after starting: nothing more is coming.
            Err(_) if rust_log.is_some() => break,
            Err(_) => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    lines
}

#[test]
fn the_url_is_logged_at_info_by_default() {
    let lines = startup_lines(None);
    let line = lines
        .iter()
        .find(|l| l.contains("listening on http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no start-up line in {lines:?}"));
    assert!(line.contains("INFO"), "{line}");
    assert!(line.contains("/.well-known/agent-card.json"), "{line}");
}

#[test]
fn rust_log_is_respected() {
    let lines = startup_lines(Some("warn"));
    assert!(
        lines.iter().all(|l| !l.contains("listening on")),
        "{lines:?}"
    );
}
