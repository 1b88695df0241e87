//! The `orchestrator` example end to end, as real processes on 127.0.0.1: it sends a
//! non-blocking message with a push config to the `push_worker` example agent, tracks the
//! acknowledged task in its store, and learns of the end by webhook; restarted in the middle
//! it goes on waiting for the same task; with a webhook that cannot arrive, its deadline
//! passes and a poll finds the task done; with a task that never ends, it is marked timed out
//! and cancelled.
//!
//! Cargo builds both binaries with this test (`CARGO_BIN_EXE_*`), with the same features and
//! profile, so the test never starts a second cargo build of its own.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use support::Example;

const ORCHESTRATOR: &str = env!("CARGO_BIN_EXE_orchestrator");
const PUSH_WORKER: &str = env!("CARGO_BIN_EXE_push_worker");

/// Start the worker agent, its skill taking `work_ms`; returns it and its URL.
fn start_worker(work_ms: u64, extra: &[&str]) -> (Example, String) {
    let work = work_ms.to_string();
    let mut args = vec!["--bind", "127.0.0.1:0", "--work-ms", &work];
    args.extend_from_slice(extra);
    let worker = Example::start(PUSH_WORKER, &args);
    let url = worker.url.clone();
    (worker, url)
}

/// A running orchestrator, its stdout read line by line.
struct Orchestrator {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Orchestrator {
    fn start(args: &[&str]) -> Orchestrator {
        let mut child = Command::new(ORCHESTRATOR)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn orchestrator");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("orchestrator: {line}");
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Orchestrator {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The first line starting with `prefix` (within a minute).
    fn line(&mut self, prefix: &str) -> String {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(l) = self.seen.iter().find(|l| l.starts_with(prefix)) {
                return l.clone();
            }
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no line starting with {prefix:?}; saw {:?}", self.seen),
            }
        }
    }

    /// SIGKILL: the process stops at once, as in a crash.
    fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Wait for the exit (within a minute); its code and every line it printed.
    fn finish(mut self) -> (Option<i32>, Vec<String>) {
        let until = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < until, "the orchestrator did not finish");
            std::thread::sleep(Duration::from_millis(50));
        };
        // The reader thread ends with the pipe.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status.code(), std::mem::take(&mut self.seen))
    }
}

impl Drop for Orchestrator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory of its own under the system's temporary one, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "a2a-push-e2e-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn task_id(ack: &str) -> String {
    ack.split(' ').nth(2).expect("a task id").to_string()
}

/// A port free now, for an orchestrator that must come back on the same address.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_answer_arrives_by_webhook_with_its_artifacts() {
    let (_worker, url) = start_worker(300, &[]);
    let mut orch = Orchestrator::start(&[
        "--agent",
        &url,
        "--bind",
        "127.0.0.1:0",
        "Delegated work arrives by webhook",
    ]);
    let ack = orch.line("acknowledged: task ");
    // Non-blocking: the acknowledgement comes before the work is done.
    assert!(!ack.contains("COMPLETED"), "{ack}");
    let id = task_id(&ack);
    let (code, lines) = orch.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        lines.contains(&format!("webhook: task {id} -> TASK_STATE_COMPLETED")),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("result: TASK_STATE_COMPLETED (by webhook): 5 word(s), starting with \"Delegated\"")
    );
}

#[test]
fn restarted_in_the_middle_it_waits_for_the_same_task() {
    let dir = TempDir::new();
    let store = format!("sqlite:{}", dir.0.join("orchestrator.db").display());
    let bind = format!("127.0.0.1:{}", free_port());
    let (_worker, url) = start_worker(2500, &[]);
    let args = ["--agent", &url, "--bind", &bind, "--store", &store];

    let mut first = Orchestrator::start(&[&args[..], &["Work across a restart"]].concat());
    let id = task_id(&first.line("acknowledged: task "));
    first.crash();

    // Started again: nothing new is sent; the webhook, posted after the restart with the
    // token issued before it, is accepted.
    let mut second = Orchestrator::start(&[&args[..], &["This text is not sent"]].concat());
    let resumed = second.line("resuming: task ");
    assert!(
        resumed.starts_with(&format!("resuming: task {id} (")),
        "{resumed}"
    );
    let (code, lines) = second.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.starts_with("acknowledged")),
        "{lines:?}"
    );
    assert!(
        lines.contains(&format!("webhook: task {id} -> TASK_STATE_COMPLETED")),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("result: TASK_STATE_COMPLETED (by webhook): 4 word(s), starting with \"Work\"")
    );
}

#[test]
fn a_late_webhook_is_replaced_by_a_poll_after_the_deadline() {
    let dir = TempDir::new();
    let store = format!("sqlite:{}", dir.0.join("orchestrator.db").display());
    let (_worker, url) = start_worker(1500, &[]);
    // The agent is told a webhook URL where nobody listens (port 9, discard): no webhook
    // ever arrives, the deadline passes, polls find the task working, then done.
    let mut orch = Orchestrator::start(&[
        "--agent",
        &url,
        "--bind",
        "127.0.0.1:0",
        "--public-url",
        "http://127.0.0.1:9",
        "--store",
        &store,
        "--deadline",
        "1",
        "--poll-every",
        "1",
        "--polls",
        "10",
        "Polled after the deadline",
    ]);
    let id = task_id(&orch.line("acknowledged: task "));
    let (code, lines) = orch.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.starts_with("webhook:")),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("result: TASK_STATE_COMPLETED (by poll): 4 word(s), starting with \"Polled\""),
        "task {id}"
    );
}

#[test]
fn a_task_that_never_settles_times_out_and_is_cancelled() {
    let (_worker, url) = start_worker(120_000, &[]);
    let mut orch = Orchestrator::start(&[
        "--agent",
        &url,
        "--bind",
        "127.0.0.1:0",
        "--public-url",
        "http://127.0.0.1:9",
        "--deadline",
        "1",
        "--poll-every",
        "1",
        "--polls",
        "2",
        "--cancel-on-timeout",
        "Never done",
    ]);
    let id = task_id(&orch.line("acknowledged: task "));
    let (code, lines) = orch.finish();
    assert_eq!(code, Some(2), "{lines:?}");
    assert!(
        lines.contains(&format!(
            "timed out: task {id}: no webhook by the deadline, and after 2 polls the agent still says TASK_STATE_WORKING"
        )),
        "{lines:?}"
    );
    assert!(
        lines.contains(&format!("canceled: task {id} (TASK_STATE_CANCELED)")),
        "{lines:?}"
    );
}

#[test]
fn a_private_network_webhook_is_refused_up_front_with_a_hint() {
    // Loopback is allowed by the demo; a private network is not, unless the worker says so.
    let (worker, url) = start_worker(100, &[]);
    assert!(
        worker
            .before
            .iter()
            .any(|l| l.contains("push notifications may go to loopback webhooks")),
        "the worker says it allows loopback webhooks: {:?}",
        worker.before
    );
    let out = Command::new(ORCHESTRATOR)
        .args([
            "--agent",
            &url,
            "--bind",
            "127.0.0.1:0",
            "--public-url",
            "http://10.1.2.3:4000",
            "x",
        ])
        .env("NO_COLOR", "1")
        .output()
        .expect("run orchestrator");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("acknowledged"), "{stdout}");
    assert!(stderr.contains("private"), "{stderr}");
    assert!(stderr.contains("--allow-private-webhooks"), "{stderr}");
}
