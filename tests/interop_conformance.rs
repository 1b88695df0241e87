//! The official clients against the conformance agent (examples/src/conformance.rs), over
//! JSON-RPC, HTTP+JSON and gRPC: the Python `a2a-sdk` 1.3.0 (PyPI, with its `grpc` extra) and
//! `@a2a-js/sdk` 1.3.0 (npm, with `@grpc/grpc-js` and `@bufbuild/protobuf` for its gRPC
//! transport), all pinned and installed from the registries on first use under the target
//! directory. Over gRPC each SDK uses its own gRPC transport, picked from the card's `GRPC`
//! interface (`host:port`): the agents' listener speaks h2c (the tests crate's axum has its
//! `http2` feature), and a2a-kit serves gRPC there beside the HTTP bindings.
//!
//! The agent runs in-process twice: with push notifications (delivered to a webhook receiver
//! this test runs on 127.0.0.1) and an extended card, and with `--no-streaming`. Each client
//! script (tests/interop/conformance/) runs once per binding and agent and prints one JSON line
//! with a result per check:
//!
//! - main agent: card, blocking send (every part kind, a direct message, a rejection),
//!   streaming send (plain, chunked, direct message), get, get of a missing task, list (pages;
//!   status / artifacts / history filters), cancel of an input-required task and again once it
//!   is canceled, subscribe to a running task, push config create/get/list/delete with an actual
//!   delivery to the webhook, extended card;
//! - `--no-streaming` agent: card, blocking send, the SDK's own fallback from streaming to
//!   blocking, and the "not supported" errors for stream, subscribe, push configs and the
//!   extended card (through a client that ignores the card's capabilities).
//!
//! The Python script also parses every response body, SSE event and pushed body strictly into
//! the SDK's protobuf types (`json_format.Parse(..., ignore_unknown_fields=False)`): any wire
//! deviation fails its `strict_wire` check. Over gRPC the messages are protobuf already: there
//! it checks every response message for fields and enum values the SDK's schema does not
//! know, and every error status for a `google.rpc.Status` in `grpc-status-details-bin` that
//! matches the call and carries an `ErrorInfo` (tests/interop/python/strict_wire.py). Every
//! check runs over every binding, gRPC included ([`GRPC_OVER_HTTP`] names the parts of a check
//! that stay HTTP there), and must pass, except those listed in [`KNOWN_DEVIATIONS`].
//!
//! A half is skipped, with a printed note, only when its toolchain is missing (`python3 -m venv`,
//! or `node` >= 20 with `npm`), and never in CI (`CI` set: a missing toolchain fails); when
//! present, a failed install from the registries fails the test.

#[path = "support_python_sdk.rs"]
mod python_sdk;

#[path = "support_js_sdk.rs"]
mod js_sdk;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_examples::conformance::{ConformanceAgent, ConformanceFlags, a2a_with};
use a2a_tests::{TestServer, serve};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// Checks an official client disagrees on, as `(client, binding, check, why)`: reported, not
/// failed. Empty: both SDKs accept everything the conformance agent sends. A deviation found
/// later goes here with the exact request, response and what the client expected, and a
/// "Known gaps" bullet in CONFORMANCE.md.
const KNOWN_DEVIATIONS: &[(&str, &str, &str, &str)] = &[];

/// The parts of a check that stay HTTP when the binding is gRPC, as `(check, what)`: the
/// check still runs over gRPC for the rest, and says so in its detail.
const GRPC_OVER_HTTP: &[(&str, &str)] = &[
    (
        "card",
        "the public card is fetched with HTTP GET /.well-known/agent-card.json (A2A has no gRPC \
         method for it); the SDK then picks its gRPC transport from the card's GRPC interface",
    ),
    (
        "push_delivery",
        "the config is registered over gRPC; the delivery is the agent's HTTP POST to the \
         webhook, as over every binding",
    ),
    (
        "strict_wire",
        "the card and the pushed bodies are HTTP and parsed as strict ProtoJSON; the gRPC \
         messages and statuses are checked as protobuf",
    ),
];

/// The checks every run must report, per agent.
const MAIN_CHECKS: &[&str] = &[
    "card",
    "send_blocking",
    "send_parts",
    "send_direct_message",
    "stream",
    "stream_chunked",
    "stream_direct_message",
    "get",
    "get_missing",
    "list_pages",
    "list_filters",
    "cancel_input_required",
    "cancel_terminal",
    "subscribe_running",
    "push_config_crud",
    "push_delivery",
    "extended_card",
];
const NO_STREAMING_CHECKS: &[&str] = &[
    "card",
    "send_blocking",
    "stream_falls_back",
    "stream_unsupported",
    "subscribe_unsupported",
    "push_unsupported",
    "extended_card_unsupported",
];

/// One script run must finish within this.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-conformance")
}

use js_sdk::{js_dir, scripts};

/// Print past the test harness's output capture, so the note shows in every run.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The webhook receiver

type Records = Arc<Mutex<HashMap<String, Vec<Value>>>>;

/// `POST /hook/{key}` records the delivery; `GET /received/{key}` lists them.
async fn webhook() -> (String, tokio::task::JoinHandle<()>) {
    async fn hook(
        State(records): State<Records>,
        UrlPath(key): UrlPath<String>,
        headers: HeaderMap,
        body: Bytes,
    ) -> StatusCode {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let record = json!({
            "token": header("x-a2a-notification-token"),
            "authorization": header("authorization"),
            "contentType": header("content-type"),
            "body": String::from_utf8_lossy(&body),
        });
        records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_default()
            .push(record);
        StatusCode::NO_CONTENT
    }
    async fn received(
        State(records): State<Records>,
        UrlPath(key): UrlPath<String>,
    ) -> Json<Value> {
        let list = records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
            .unwrap_or_default();
        Json(Value::Array(list))
    }
    let app = axum::Router::new()
        .route("/hook/{key}", post(hook))
        .route("/received/{key}", get(received))
        .with_state(Records::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the webhook");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve the webhook");
    });
    (base, task)
}

// ---------------------------------------------------------------------------------------------
// Script runs

struct Run {
    client: &'static str,
    binding: &'static str,
    no_streaming: bool,
}

impl Run {
    fn label(&self) -> String {
        format!(
            "{} {} {}",
            self.client,
            self.binding,
            if self.no_streaming {
                "no-streaming"
            } else {
                "main"
            }
        )
    }
}

struct Outcome {
    summary: Option<Value>,
    /// What went wrong running the script itself, with its output.
    error: Option<String>,
    seconds: f64,
}

async fn run_script(mut cmd: Command, label: String) -> Outcome {
    let dir = interop_dir().join(format!(
        "run-{}-{}",
        std::process::id(),
        label.replace(' ', "-")
    ));
    std::fs::create_dir_all(&dir).expect("create the run directory");
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let start = Instant::now();
    // Output goes to files, so a chatty child can never block on a full pipe.
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("start {label}: {e}"));
    let mut child = python_sdk::ChildGuard(child);
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("poll the script") {
            break Some(status);
        }
        if start.elapsed() > RUN_TIMEOUT {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(child);
    let seconds = start.elapsed().as_secs_f64();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let output = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    let Some(status) = status else {
        return Outcome {
            summary: None,
            error: Some(format!("took more than {RUN_TIMEOUT:?}\n{output}")),
            seconds,
        };
    };
    match serde_json::from_str::<Value>(stdout.lines().last().unwrap_or("")) {
        Ok(summary) if status.success() => Outcome {
            summary: Some(summary),
            error: None,
            seconds,
        },
        Ok(_) => Outcome {
            summary: None,
            error: Some(format!("exited with {status}\n{output}")),
            seconds,
        },
        Err(e) => Outcome {
            summary: None,
            error: Some(format!("printed no JSON summary ({e}), {status}\n{output}")),
            seconds,
        },
    }
}

fn command(run: &Run, py: Option<&Path>, js: Option<&Path>, base: &str, webhook: &str) -> Command {
    let mut cmd = match run.client {
        "py" => {
            let mut c = Command::new(py.expect("the venv"));
            c.arg(scripts().join("py_client.py"))
                .env("PYTHONDONTWRITEBYTECODE", "1");
            c
        }
        _ => {
            let dir = js.expect("node_modules");
            let mut c = Command::new("node");
            c.arg(dir.join("js_client.mjs")).current_dir(dir);
            c
        }
    };
    cmd.args([base, run.binding, webhook]);
    if run.no_streaming {
        cmd.arg("--no-streaming");
    }
    cmd
}

/// The failures of one run (a missing or failing check), and the known deviations it showed.
fn judge(
    run: &Run,
    outcome: &Outcome,
    failures: &mut Vec<String>,
    known: &mut Vec<String>,
) -> String {
    let label = run.label();
    let Some(summary) = &outcome.summary else {
        failures.push(format!(
            "{label}: the script failed: {}",
            outcome.error.as_deref().unwrap_or("?")
        ));
        return format!("{label}: SCRIPT FAILED ({:.1} s)", outcome.seconds);
    };
    let checks = summary["checks"].as_array().cloned().unwrap_or_default();
    let mut expected: Vec<&str> = if run.no_streaming {
        NO_STREAMING_CHECKS
    } else {
        MAIN_CHECKS
    }
    .to_vec();
    if run.client == "py" {
        expected.push("strict_wire");
    }
    let by_name: HashMap<&str, &Value> = checks
        .iter()
        .filter_map(|c| Some((c["check"].as_str()?, c)))
        .collect();
    let mut ok = 0;
    for name in &expected {
        let deviation = KNOWN_DEVIATIONS
            .iter()
            .find(|(c, b, n, _)| *c == run.client && *b == run.binding && n == name);
        match by_name.get(name) {
            Some(c) if c["ok"] == true => {
                ok += 1;
                if let Some((.., why)) = deviation {
                    note(&format!(
                        "NOTE: {label}: `{name}` passes now, remove it from KNOWN_DEVIATIONS ({why})"
                    ));
                }
            }
            Some(c) => {
                let detail = serde_json::to_string_pretty(&c["detail"]).unwrap_or_default();
                match deviation {
                    Some((.., why)) => known.push(format!(
                        "{label}: `{name}` (known deviation: {why}):\n{detail}"
                    )),
                    None => failures.push(format!("{label}: `{name}` failed:\n{detail}")),
                }
            }
            None => failures.push(format!(
                "{label}: `{name}` was not reported (checks: {:?})",
                by_name.keys().collect::<Vec<_>>()
            )),
        }
    }
    for c in &checks {
        let name = c["check"].as_str().unwrap_or("?");
        if !expected.contains(&name) && c["ok"] != true {
            failures.push(format!(
                "{label}: `{name}` failed:\n{}",
                serde_json::to_string_pretty(&c["detail"]).unwrap_or_default()
            ));
        }
    }
    // What the transport was and what strict checking saw, so a run shows it used the binding.
    let transport = by_name
        .get("card")
        .map(|c| c["detail"]["transport"].as_str().unwrap_or("?"))
        .unwrap_or("?");
    let parsed = by_name
        .get("strict_wire")
        .map(|c| format!(", strict_wire parsed {}", c["detail"]["parsed"]))
        .unwrap_or_default();
    format!(
        "{label}: {ok}/{} checks ok ({:.1} s; {transport}{parsed})",
        expected.len(),
        outcome.seconds
    )
}

async fn conformance_agent(flags: ConformanceFlags) -> TestServer {
    // Long enough for a client to subscribe to (or register a push config on) a running task.
    serve(a2a_with(
        ConformanceAgent {
            slow: Duration::from_millis(1500),
        },
        &flags,
    ))
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn official_clients_against_the_conformance_agent() {
    let start = Instant::now();
    let (py, js) = tokio::join!(
        tokio::task::spawn_blocking(python_sdk::python),
        tokio::task::spawn_blocking(js_dir)
    );
    let (py, js) = (py.expect("python setup"), js.expect("npm setup"));
    let setup = start.elapsed().as_secs_f64();
    if py.is_none() && js.is_none() {
        return;
    }

    let main = conformance_agent(ConformanceFlags {
        push: true,
        extended_card: true,
        ..Default::default()
    })
    .await;
    let off = conformance_agent(ConformanceFlags {
        no_streaming: true,
        ..Default::default()
    })
    .await;
    let (hook, hook_task) = webhook().await;
    for agent in [&main, &off] {
        a2a_tests::assert_card_lists_grpc(&agent.base, "the conformance agent").await;
    }

    let mut runs = Vec::new();
    for client in ["py", "js"] {
        if (client == "py" && py.is_none()) || (client == "js" && js.is_none()) {
            continue;
        }
        for binding in ["jsonrpc", "rest", "grpc"] {
            for no_streaming in [false, true] {
                runs.push(Run {
                    client,
                    binding,
                    no_streaming,
                });
            }
        }
    }
    let outcomes = futures::future::join_all(runs.iter().map(|run| {
        let base = if run.no_streaming {
            &off.base
        } else {
            &main.base
        };
        run_script(
            command(run, py.as_deref(), js.as_deref(), base, &hook),
            run.label(),
        )
    }))
    .await;
    hook_task.abort();

    let (mut failures, mut known) = (Vec::new(), Vec::new());
    let lines: Vec<String> = runs
        .iter()
        .zip(&outcomes)
        .map(|(run, o)| judge(run, o, &mut failures, &mut known))
        .collect();
    println!("setup (venv / npm, cached after the first run): {setup:.1} s");
    for line in &lines {
        println!("{line}");
    }
    for (check, what) in GRPC_OVER_HTTP {
        println!("grpc: `{check}`: {what}");
    }
    for k in &known {
        println!("{k}");
    }
    assert!(
        failures.is_empty(),
        "{} official-client check(s) failed against the conformance agent:\n\n{}\n\n{}",
        failures.len(),
        failures.join("\n\n"),
        lines.join("\n")
    );
}

/// Runs js_auth_client.mjs against an agent built with `auth`, the client's fetch carrying
/// `header: value`; `None` without Node.js (as the other JS tests).
async fn js_auth_summary(
    auth: impl a2a_kit::auth::Authenticator,
    header: &str,
    value: &str,
) -> Option<Value> {
    let js = tokio::task::spawn_blocking(js_dir).await.unwrap()?;
    let server = a2a_tests::serve(
        a2a_kit::server::AgentService::builder(a2a_tests::TestAgent).authenticate(auth),
    )
    .await;
    let mut cmd = Command::new("node");
    cmd.arg(js.join("js_auth_client.mjs"))
        .current_dir(&js)
        .args([server.base.as_str(), value, header]);
    let outcome = run_script(cmd, "js auth".into()).await;
    let summary = outcome
        .summary
        .unwrap_or_else(|| panic!("{}", outcome.error.unwrap_or_default()));
    println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let r = &summary["bindings"][binding];
        assert_eq!(
            r["with_key"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {r}"
        );
        let refused = r["without_key"].to_string();
        let why = if binding == "GRPC" {
            // gRPC: the status UNAUTHENTICATED (16), its message the refusal's.
            r["without_key"]["status"] == 16 && refused.contains("authentication required")
        } else {
            // JSON-RPC reports the HTTP status, HTTP+JSON the error body's message.
            refused.contains("401") || refused.contains("authentication required")
        };
        assert!(
            r["without_key"].get("exception").is_some() && why,
            "{binding}: {r}"
        );
    }
    Some(summary)
}

/// The JS SDK's own credential support (a fetch that carries the key, through
/// `createAuthenticatingFetchWithRetry`; over gRPC, which has no fetch, the key as a service
/// parameter set by an SDK `CallInterceptor`, sent as call metadata) reaches an agent that
/// takes API keys over JSON-RPC, HTTP+JSON and gRPC, and its card resolver reads the card's
/// security fields; without credentials it is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_js_sdk_client_authenticates_with_an_api_key() {
    let keys = a2a_kit::auth::ApiKeys::header("X-API-Key").key("js-key", "js");
    let Some(summary) = js_auth_summary(keys, "X-API-Key", "js-key").await else {
        return;
    };
    assert_eq!(
        summary["card"]["schemes"]["apiKey"]["scheme"]["value"]["name"], "X-API-Key",
        "the card's scheme as the SDK read it: {summary}"
    );
    assert!(
        summary["card"]["requirements"]
            .to_string()
            .contains("apiKey"),
        "{summary}"
    );
}

/// The same with a bearer JWT: the SDK's card resolver reads the bearer scheme, and its
/// authenticating fetch (over gRPC: its call metadata) sends the token.
#[tokio::test(flavor = "multi_thread")]
async fn the_js_sdk_client_authenticates_with_a_bearer_jwt() {
    let secret = b"interop-secret-of-at-least-32-bytes!";
    let jwt = a2a_kit::auth::Jwt::hmac(secret).expect("a secret");
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "js", "exp": exp}),
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("signs");
    let Some(summary) = js_auth_summary(jwt, "Authorization", &format!("Bearer {token}")).await
    else {
        return;
    };
    let schemes = summary["card"]["schemes"].as_object().expect("schemes");
    assert_eq!(schemes.len(), 1, "{summary}");
    let scheme = &schemes.values().next().unwrap()["scheme"];
    assert_eq!(scheme["$case"], "httpAuthSecurityScheme", "{summary}");
    assert_eq!(scheme["value"]["scheme"], "Bearer", "{summary}");
    assert_eq!(scheme["value"]["bearerFormat"], "JWT", "{summary}");
}
