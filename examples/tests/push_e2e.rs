//! The `orchestrator` example end to end, as two processes on 127.0.0.1: the orchestrator
//! sends a non-blocking message with a push config to the `push_worker` example agent, stores
//! the acknowledged task, receives the completion webhook and prints the result.
//!
//! Cargo builds both binaries with this test (`CARGO_BIN_EXE_*`), with the same features and
//! profile, so the test never starts a second cargo build of its own.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::Example;

const ORCHESTRATOR: &str = env!("CARGO_BIN_EXE_orchestrator");
const PUSH_WORKER: &str = env!("CARGO_BIN_EXE_push_worker");

/// Start the worker agent; returns it and its URL.
fn start_worker(extra: &[&str]) -> (Example, String) {
    let mut args = vec!["--bind", "127.0.0.1:0", "--work-ms", "500"];
    args.extend_from_slice(extra);
    let worker = Example::start(PUSH_WORKER, &args);
    let url = worker.url.clone();
    (worker, url)
}

/// Run the orchestrator to completion (bounded); returns its exit code, stdout and stderr.
fn run_orchestrator(agent: &str, text: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(ORCHESTRATOR)
        .args([
            "--agent",
            agent,
            "--bind",
            "127.0.0.1:0",
            "--timeout",
            "30",
            text,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn orchestrator");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let out = child.wait_with_output().expect("output");
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            eprintln!("orchestrator stderr:\n{stderr}");
            return (status.code(), stdout, stderr);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the orchestrator did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn orchestrator_learns_of_completion_by_webhook() {
    let (_worker, url) = start_worker(&["--allow-private-webhooks"]);
    let (code, stdout, _) = run_orchestrator(&url, "Delegated work arrives by webhook");
    println!("{stdout}");
    assert_eq!(code, Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let ack = lines
        .iter()
        .find(|l| l.starts_with("acknowledged: task "))
        .expect("an acknowledgement");
    // Non-blocking: the acknowledgement comes before the work is done.
    assert!(!ack.contains("COMPLETED"), "{ack}");
    let task_id = ack
        .trim_start_matches("acknowledged: task ")
        .split(' ')
        .next()
        .unwrap();
    assert!(
        lines.contains(&format!("webhook: task {task_id} -> TASK_STATE_COMPLETED").as_str()),
        "no completion webhook: {stdout}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("result: TASK_STATE_COMPLETED: 5 word(s), starting with \"Delegated\"")
    );
}

#[test]
fn without_the_allowance_a_loopback_webhook_is_refused_up_front() {
    let (_worker, url) = start_worker(&[]);
    let (code, stdout, stderr) = run_orchestrator(&url, "x");
    assert_ne!(code, Some(0), "{stdout}");
    assert!(!stdout.contains("acknowledged"), "{stdout}");
    // The agent's InvalidParams names the reason.
    assert!(stderr.contains("loopback"), "{stderr}");
}
