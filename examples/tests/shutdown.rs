//! SIGTERM stops an example gracefully: it says so, and exits with success.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_stops_an_idle_agent_gracefully() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hello"))
        .args(["--bind", "127.0.0.1:0"])
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hello");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("listening on"));
    assert!(started, "hello did not start");
    let pid = child.id().to_string();
    let sent = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .is_ok_and(|s| s.success())
    );
    let status = child.wait().expect("wait");
    // Not a timing test (that is measured by hand: ~20 ms); only that nothing waits on a
    // deadline meant for running tasks (10 s).
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
}
