//! `--jwt-secret` / `--jwt-jwks` / `--jwt-issuer` / `--jwt-audience` (issue #19): an example
//! binary accepts a good bearer JWT and refuses a bad one with a Bearer challenge, says which
//! authentication is on in its first log line, takes API keys beside JWTs, and refuses bad
//! combinations with a message.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use support::Example;

const HELLO: &str = env!("CARGO_BIN_EXE_hello");
const SECRET: &str = "an-example-secret-of-at-least-32-bytes";

fn token(secret: &str, iss: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let claims = serde_json::json!({"sub": "alice", "iss": iss, "exp": exp});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

/// GET /tasks with `header`; the status and the response head.
fn list_tasks(port: u16, header: &str) -> (String, String) {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        tcp,
        "GET /tasks HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n{header}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap_or_default().to_string();
    (status, response)
}

#[test]
fn jwt_secret_accepts_good_tokens_and_refuses_bad_ones() {
    let iss = "https://issuer.test/";
    let hello = Example::start(
        HELLO,
        &[
            "--bind",
            "127.0.0.1:0",
            "--jwt-secret",
            SECRET,
            "--jwt-issuer",
            iss,
            "--api-key",
            "k1",
        ],
    );
    let first = hello.before.first().cloned().unwrap_or_default();
    assert!(
        first.contains("authentication: API keys in X-API-Key (1 key) or bearer JWT signed with an HMAC secret, issuer https://issuer.test/"),
        "{:?}",
        hello.before
    );
    assert!(!first.contains(SECRET), "{first}");
    let port = hello.port();
    let good = token(SECRET, iss);
    let (status, _) = list_tasks(port, &format!("Authorization: Bearer {good}\r\n"));
    assert_eq!(status, "200");
    let (status, head) = list_tasks(port, "X-API-Key: k1\r\n");
    assert_eq!(status, "200", "{head}");
    let (status, head) = list_tasks(port, "");
    assert_eq!(status, "401");
    assert!(
        head.contains(
            "www-authenticate: ApiKey realm=\"a2a\", header=\"X-API-Key\", Bearer realm=\"a2a\"\r\n"
        ),
        "{head}"
    );
    for bad in [
        token("another-secret-of-at-least-32-bytes!!", iss),
        token(SECRET, "https://evil.test/"),
        "garbage".to_string(),
    ] {
        let (status, head) = list_tasks(port, &format!("Authorization: Bearer {bad}\r\n"));
        assert_eq!(status, "401", "{head}");
        assert!(head.contains("error=\"invalid_token\""), "{head}");
    }
}

#[test]
fn bad_jwt_options_are_refused_with_a_message() {
    let run = |args: &[&str], secret_env: Option<&str>| {
        let mut cmd = Command::new(HELLO);
        cmd.args(["--print-card"])
            .args(args)
            .env_remove("A2A_JWT_SECRET");
        if let Some(secret) = secret_env {
            cmd.env("A2A_JWT_SECRET", secret);
        }
        let out = cmd.output().expect("run hello");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = run(&["--jwt-issuer", "https://issuer.test/"], None);
    assert!(
        !ok && err.contains("need a key to verify tokens with"),
        "{err}"
    );
    let (ok, err) = run(&["--jwt-secret", "short"], None);
    assert!(!ok && err.contains("at least 32"), "{err}");
    let (ok, err) = run(&[], Some("short"));
    assert!(!ok && err.contains("A2A_JWT_SECRET"), "{err}");
    let (ok, err) = run(
        &[
            "--jwt-secret",
            SECRET,
            "--jwt-jwks",
            "https://idp.test/jwks.json",
        ],
        None,
    );
    assert!(!ok && err.contains("pick one"), "{err}");
    let (ok, err) = run(&["--jwt-jwks", "not a url"], None);
    assert!(!ok && err.contains("--jwt-jwks"), "{err}");
    // From the environment, with a JWKS URL: the card names the bearer scheme.
    let (ok, card) = {
        let out = Command::new(HELLO)
            .args(["--print-card"])
            .env("A2A_JWT_SECRET", SECRET)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert!(ok && card.contains("\"bearerFormat\": \"JWT\""), "{card}");
}
