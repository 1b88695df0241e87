//! Without `--public-url`, an example's card names the address a client reached it at: the
//! real port of `--bind 127.0.0.1:0`, the client's host for `--bind 0.0.0.0:PORT`, never a
//! guessed `127.0.0.1:3000`; `--print-card` shows the bind address.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use support::Example;

const HELLO: &str = env!("CARGO_BIN_EXE_hello");

/// Start hello with `args`; returns it and the port it logged.
fn start(args: &[&str]) -> (Example, u16) {
    let hello = Example::start(HELLO, args);
    let port = hello.port();
    (hello, port)
}

/// GET the card from 127.0.0.1:`port` with `Host: host`; its first interface URL.
fn card_url(port: u16, host: &str) -> String {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        tcp,
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let card: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not a card ({e}): {response}"));
    card["supportedInterfaces"][0]["url"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn port_zero_advertises_the_port_it_got() {
    let (_hello, port) = start(&["--bind", "127.0.0.1:0"]);
    assert_ne!(port, 0);
    assert_eq!(
        card_url(port, &format!("127.0.0.1:{port}")),
        format!("http://127.0.0.1:{port}")
    );
}

#[test]
fn any_address_advertises_the_host_the_client_used() {
    let (_hello, port) = start(&["--bind", "0.0.0.0:0"]);
    assert_eq!(
        card_url(port, &format!("agent.internal:{port}")),
        format!("http://agent.internal:{port}")
    );
}

#[test]
fn a_public_url_wins_and_print_card_shows_the_bind_address() {
    let (_hello, port) = start(&[
        "--bind",
        "127.0.0.1:0",
        "--public-url",
        "https://agents.example.com/hello",
    ]);
    assert_eq!(
        card_url(port, "127.0.0.1"),
        "https://agents.example.com/hello"
    );
    let out = Command::new(HELLO)
        .args(["--bind", "127.0.0.1:4321", "--print-card"])
        .output()
        .unwrap();
    let card: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "http://127.0.0.1:4321"
    );
}

/// `--rate-limit N`: N requests a second per client address, bursts of 2N, then 429; zero is
/// refused on the command line.
#[test]
fn rate_limit_answers_429_over_the_rate() {
    let (_hello, port) = start(&["--bind", "127.0.0.1:0", "--rate-limit", "1"]);
    let status = || {
        let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            tcp,
            "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        tcp.read_to_string(&mut response).unwrap();
        response.split(' ').nth(1).unwrap_or_default().to_string()
    };
    let got: Vec<String> = (0..3).map(|_| status()).collect();
    assert_eq!(got, ["200", "200", "429"]);
    let out = Command::new(HELLO)
        .args(["--print-card", "--rate-limit", "0"])
        .output()
        .expect("run hello");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--rate-limit"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--api-key KEY` (repeatable): requests without one of the keys get 401, the card stays
/// public and names the scheme; without the flag the agent says first that it is open.
#[test]
fn api_keys_guard_the_agent_and_an_open_one_says_so() {
    let request = |port: u16, path: &str, key: Option<&str>| {
        let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let key = key
            .map(|k| format!("X-API-Key: {k}\r\n"))
            .unwrap_or_default();
        write!(
            tcp,
            "GET {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n{key}Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        tcp.read_to_string(&mut response).unwrap();
        response
    };
    let status = |r: &str| r.split(' ').nth(1).unwrap_or_default().to_string();
    let guarded = Example::start(
        HELLO,
        &[
            "--bind",
            "127.0.0.1:0",
            "--api-key",
            "k1",
            "--api-key",
            "k2",
        ],
    );
    let port = guarded.port();
    assert!(
        !guarded
            .before
            .iter()
            .any(|l| l.contains("no authentication")),
        "{:?}",
        guarded.before
    );
    assert_eq!(status(&request(port, "/tasks", None)), "401");
    assert_eq!(status(&request(port, "/tasks", Some("k3"))), "401");
    assert_eq!(status(&request(port, "/tasks", Some("k2"))), "200");
    let card = request(port, "/.well-known/agent-card.json", None);
    assert_eq!(status(&card), "200");
    assert!(card.contains("\"apiKeySecurityScheme\""), "{card}");

    let (open, _) = start(&["--bind", "127.0.0.1:0"]);
    assert!(
        open.before
            .first()
            .is_some_and(|l| l.contains("no authentication")),
        "{:?}",
        open.before
    );
}
