//! SIGTERM stops an example gracefully: it says so, and exits with success.

mod support;

use std::time::{Duration, Instant};

use support::Example;

#[test]
fn sigterm_stops_an_idle_agent_gracefully() {
    let hello = Example::start(env!("CARGO_BIN_EXE_hello"), &["--bind", "127.0.0.1:0"]);
    let sent = Instant::now();
    hello.terminate();
    let (status, rest) = hello.wait();
    // Not a timing test (that is measured by hand: ~20 ms); only that nothing waits on a
    // deadline meant for running tasks (10 s).
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status:?}");
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
}
