//! The official clients of A2A **v0.3** against the conformance agent
//! (examples/src/conformance.rs), over v0.3 JSON-RPC (`message/send`, ...) and v0.3 HTTP+JSON
//! (`POST /v1/message:send`, ...): the Python `a2a-sdk` 0.3.26 (PyPI, its `http-server` extra)
//! and `@a2a-js/sdk` 0.3.14 (npm), the newest 0.3.x of each, pinned
//! (tests/support_python_sdk_v03.rs, tests/interop/v03/js/package-lock.json) and installed from
//! the registries on first use under the target directory. v0.3 is served beside v1.0 on the
//! same URLs: a request without an `A2A-Version` header is v0.3, and the card at
//! /.well-known/agent-card.json is a hybrid (v1.0 and v0.3 members) that the v0.3 SDKs must
//! accept and pick their transport and URL from. Both SDKs speak v0.3 HTTP+JSON as the
//! ProtoJSON of the v0.3 protobuf (`content` parts, `ROLE_USER`, `TASK_STATE_COMPLETED`, ...),
//! not as the JSON-RPC objects: that is what they send and parse.
//!
//! The agent runs in-process (push notifications, delivered to a webhook receiver this test
//! runs on 127.0.0.1, and an extended card), as in interop_conformance.rs. Each client script
//! (tests/interop/v03/py_client.py, js_client.mjs) runs once per binding and prints one JSON
//! line, `{"check": "ok" | "failure description"}`, over every v0.3 operation: the card; a
//! blocking message/send with text, file (bytes and uri) and data parts, each part kind back as
//! an artifact, a rejection, a direct Message, a multi-turn reply; message/stream (task,
//! status-update with `final`, artifact-update; chunks; a direct message); tasks/get with
//! historyLength, and of a missing task (-32001); tasks/cancel of an input-required task and
//! again once canceled (-32002) (over HTTP+JSON: HTTP 404 and 409, which the Python SDK reads,
//! and the error body's `code`, which the JS SDK types its errors from); tasks/resubscribe to a
//! running task (over HTTP+JSON the Python SDK GETs `:subscribe`, the JS SDK POSTs it);
//! tasks/pushNotificationConfig/set, get, list and delete, with an actual delivery;
//! agent/getAuthenticatedExtendedCard; malformed messages (no messageId, an unknown part kind:
//! -32602 or -32600, the message naming the field). The Python script also validates every
//! response strictly against the SDK's own types (`strict_wire`: pydantic for JSON-RPC, the
//! v0.3 protobuf for HTTP+JSON). This test adds one check per run of its own, `push_bodies`:
//! every body pushed to the run's webhook keys is a v0.3 Task (`"kind": "task"`, a lowercase
//! state), never the v1.0 StreamResponse, with the config's token in `X-A2A-Notification-Token`.
//!
//! Every check must pass, except those listed in [`KNOWN_DEVIATIONS`] (a fault of the SDK, not
//! of the agent: reported, not failed).
//!
//! A second test runs the same scripts against the official Python SDK's own v0.3 server
//! (tests/interop/v03/py_server.py, the same behaviours by messageId prefix): the reference that
//! keeps the scripts honest about the SDKs' API. The official server fails some checks itself;
//! [`REFERENCE_DEVIATIONS`] lists each, with why, and any other failure there is a fault of
//! the scripts.
//!
//! A half is skipped, with a printed note, only when its toolchain is missing (`python3 -m venv`,
//! or `node` >= 18 with `npm`), and never in CI (`CI` set: a missing toolchain fails); when
//! present, a failed install from the registries fails the test.

#[path = "support_python_sdk_v03.rs"]
mod python_sdk;

#[path = "support_js_sdk.rs"]
mod js_sdk;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_examples::conformance::{ConformanceAgent, ConformanceFlags, a2a_with};
use a2a_tests::{TestServer, note, serve};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The checks every run reports (py_client.py and js_client.mjs alike), in their order.
const CHECKS: &[&str] = &[
    "card",
    "send_text",
    "send_parts",
    "send_artifact_text",
    "send_artifact_file_bytes",
    "send_artifact_file_uri",
    "send_artifact_data",
    "send_rejected",
    "send_direct_message",
    "input_required_reply",
    "stream",
    "stream_chunked",
    "stream_direct_message",
    "get",
    "get_missing",
    "cancel_input_required",
    "cancel_terminal",
    "resubscribe_running",
    "push_config_set",
    "push_config_get",
    "push_config_list",
    "push_delivery",
    "push_config_delete",
    "extended_card",
    "bad_input_missing_message_id",
    "bad_input_unknown_part_kind",
];

/// Checks an official client fails against the conformance agent through a fault of its own,
/// as `(client, binding, check, why)`: reported, not failed.
const KNOWN_DEVIATIONS: &[(&str, &str, &str, &str)] = &[(
    "py",
    "rest",
    "send_artifact_file_bytes",
    "a2a-sdk 0.3.26's HTTP+JSON converters base64-encode a FileWithBytes twice: \
     `proto_utils.ToProto.file` puts the UTF-8 of the base64 string into the protobuf `bytes` \
     field (which ProtoJSON base64-encodes again), and `FromProto.file` hands back \
     `file_with_bytes.decode('utf-8')` as the base64 string; so a file whose `fileWithBytes` is \
     the content base64-encoded once (ProtoJSON's rule, what @a2a-js/sdk 0.3.14 sends and reads) \
     comes out with `bytes` = the raw content, not its base64. The SDK's own server agrees with \
     its client (both double), @a2a-js/sdk does not; an agent cannot satisfy both",
)];

/// Checks that fail against the official Python SDK's own v0.3 server (py_server.py), as
/// `(client, binding, check, why)`. Seen with a2a-sdk 0.3.26 and @a2a-js/sdk 0.3.14.
const REFERENCE_DEVIATIONS: &[(&str, &str, &str, &str)] = &[
    // Both clients, JSON-RPC.
    ("py", "jsonrpc", "push_config_delete", DELETE_NO_RESULT),
    ("py", "jsonrpc", "strict_wire", DELETE_NO_RESULT),
    ("py", "jsonrpc", "bad_input_missing_message_id", RPC_MESSAGE),
    ("py", "jsonrpc", "bad_input_unknown_part_kind", RPC_MESSAGE),
    ("js", "jsonrpc", "bad_input_missing_message_id", RPC_MESSAGE),
    ("js", "jsonrpc", "bad_input_unknown_part_kind", RPC_MESSAGE),
    // Python client, HTTP+JSON.
    (
        "py",
        "rest",
        "push_config_list",
        "GET /v1/tasks/{id}/pushNotificationConfigs answers 500 \
         {\"message\":\"unknown exception\"}: `RESTHandler.list_push_notifications` raises \
         NotImplementedError",
    ),
    (
        "py",
        "rest",
        "push_config_delete",
        "DELETE /v1/tasks/{id}/pushNotificationConfigs/{configId} is not routed (405)",
    ),
    (
        "py",
        "rest",
        "bad_input_missing_message_id",
        REST_NO_MESSAGE_ID,
    ),
    (
        "py",
        "rest",
        "bad_input_unknown_part_kind",
        REST_UNKNOWN_PART,
    ),
    // JS client, HTTP+JSON: where the two SDKs' HTTP+JSON bindings disagree.
    (
        "js",
        "rest",
        "send_parts",
        "a file part's fileWithBytes sent as ProtoJSON bytes (the content base64-encoded once) \
         answers 500: the server's converter decodes the bytes as UTF-8 (it expects the \
         double-encoded form of its own client, see KNOWN_DEVIATIONS)",
    ),
    (
        "js",
        "rest",
        "send_artifact_file_bytes",
        "the server's fileWithBytes is base64-encoded twice (see KNOWN_DEVIATIONS)",
    ),
    ("js", "rest", "stream", SSE_MULTILINE),
    ("js", "rest", "stream_chunked", SSE_MULTILINE),
    ("js", "rest", "stream_direct_message", SSE_MULTILINE),
    ("js", "rest", "get_missing", REST_NO_CODE),
    ("js", "rest", "cancel_terminal", REST_NO_CODE),
    (
        "js",
        "rest",
        "resubscribe_running",
        "the JS SDK POSTs /v1/tasks/{id}:subscribe (the v0.3 specification's verb); the server \
         routes GET only (its own client's verb): 405",
    ),
    ("js", "rest", "push_config_set", JS_PUSH_SET),
    ("js", "rest", "push_config_get", JS_PUSH_SET),
    ("js", "rest", "push_config_list", JS_PUSH_SET),
    ("js", "rest", "push_delivery", JS_PUSH_SET),
    ("js", "rest", "push_config_delete", JS_PUSH_SET),
    ("js", "rest", "push_bodies", JS_PUSH_SET),
    (
        "js",
        "rest",
        "bad_input_missing_message_id",
        REST_NO_MESSAGE_ID,
    ),
    (
        "js",
        "rest",
        "bad_input_unknown_part_kind",
        REST_UNKNOWN_PART,
    ),
];

const DELETE_NO_RESULT: &str = "tasks/pushNotificationConfig/delete answers \
    {\"id\":...,\"jsonrpc\":\"2.0\"} without `\"result\": null` (dumped with exclude_none), which \
    the SDK's own DeleteTaskPushNotificationConfigResponse rejects (result is required)";
const RPC_MESSAGE: &str = "the -32602 error's message is \"Invalid parameters\"; the field is \
    named only in `data` (pydantic's error list)";
const REST_NO_MESSAGE_ID: &str = "a message without messageId is accepted (ProtoJSON's default \
    \"\"): 200 and a completed task";
const REST_UNKNOWN_PART: &str = "a part {\"video\": ...} answers 500 \
    {\"message\":\"unknown exception\"}, not a 4xx naming the field";
const SSE_MULTILINE: &str = "the server writes each SSE event as indented multi-line JSON \
    (several `data:` lines); the JS SDK's SSE parser keeps only the last `data:` line of an \
    event (\"}\") and fails to parse it";
const REST_NO_CODE: &str = "the error body is {\"message\": ...} with no `code`; the JS SDK \
    types HTTP+JSON errors from the body's `code` only, so it throws a plain Error";
const JS_PUSH_SET: &str = "the JS SDK sets a config with the body \
    TaskPushNotificationConfig {name, pushNotificationConfig}; the server parses \
    CreateTaskPushNotificationConfigRequest {parent, configId, config} (its own client's body) \
    and answers 500, so no config is set and the push checks after it cannot run";

/// One script run must finish within this.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The states of v0.3 (`TaskState`'s values).
const V03_STATES: &[&str] = &[
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown",
];

// ---------------------------------------------------------------------------------------------
// The webhook receiver

type Records = Arc<Mutex<HashMap<String, Vec<Value>>>>;

/// `POST /hook/{key}` records the delivery; `GET /received/{key}` lists them. The records stay
/// readable here, for the `push_bodies` check.
async fn webhook() -> (String, Records, tokio::task::JoinHandle<()>) {
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
    let records = Records::default();
    let app = axum::Router::new()
        .route("/hook/{key}", post(hook))
        .route("/received/{key}", get(received))
        .with_state(records.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the webhook");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve the webhook");
    });
    (base, records, task)
}

/// `push_bodies`: what the run's scripts had pushed to their keys (`{client}-{binding}-...`).
fn push_bodies(records: &Records, client: &str, binding: &str) -> Result<usize, String> {
    let prefix = format!("{client}-{binding}-");
    let records = records.lock().unwrap_or_else(|p| p.into_inner());
    let mine: Vec<&Value> = records
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .flat_map(|(_, v)| v)
        .collect();
    if mine.is_empty() {
        return Err(format!("no delivery recorded for a key {prefix}*"));
    }
    let mut faults = Vec::new();
    for r in &mine {
        let raw = r["body"].as_str().unwrap_or_default();
        let Ok(body) = serde_json::from_str::<Value>(raw) else {
            faults.push(format!("not JSON: {raw}"));
            continue;
        };
        let state = body["status"]["state"].as_str().unwrap_or_default();
        let shaped = body["kind"] == "task"
            && body["id"].is_string()
            && body["contextId"].is_string()
            && V03_STATES.contains(&state)
            && body.get("task").is_none()
            && body.get("statusUpdate").is_none();
        if !shaped {
            faults.push(format!(
                "not a v0.3 Task (\"kind\": \"task\", id, contextId, a lowercase state): {raw}"
            ));
        }
        if !r["token"].is_string() {
            faults.push(format!("no X-A2A-Notification-Token: {r}"));
        }
    }
    if faults.is_empty() {
        Ok(mine.len())
    } else {
        Err(faults.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------------
// Script runs

#[derive(Clone, Copy)]
struct Run {
    client: &'static str,
    binding: &'static str,
}

impl Run {
    fn label(&self) -> String {
        format!("{} {}", self.client, self.binding)
    }
}

struct Outcome {
    results: Option<serde_json::Map<String, Value>>,
    /// What went wrong running the script itself, with its output.
    error: Option<String>,
    seconds: f64,
}

async fn run_script(mut cmd: Command, label: String) -> Outcome {
    // One directory per run: both tests of this file run scripts at once, with the same labels.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = python_sdk::interop_dir().join(format!(
        "run-{}-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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
            results: None,
            error: Some(format!("took more than {RUN_TIMEOUT:?}\n{output}")),
            seconds,
        };
    };
    match serde_json::from_str::<Value>(stdout.lines().last().unwrap_or("")) {
        Ok(Value::Object(results)) if status.success() => Outcome {
            results: Some(results),
            error: None,
            seconds,
        },
        Ok(_) if status.success() => Outcome {
            results: None,
            error: Some(format!("printed no JSON object\n{output}")),
            seconds,
        },
        Ok(_) => Outcome {
            results: None,
            error: Some(format!("exited with {status}\n{output}")),
            seconds,
        },
        Err(e) => Outcome {
            results: None,
            error: Some(format!("printed no JSON summary ({e}), {status}\n{output}")),
            seconds,
        },
    }
}

fn command(run: Run, py: Option<&Path>, js: Option<&Path>, base: &str, webhook: &str) -> Command {
    let mut cmd = match run.client {
        "py" => {
            let mut c = Command::new(py.expect("the venv"));
            c.arg(python_sdk::script("py_client.py"))
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
    cmd
}

/// The verdicts of every run: failures (a failing or missing check not in `deviations`), the
/// deviations seen, and one summary line per run.
struct Verdicts {
    failures: Vec<String>,
    known: Vec<String>,
    lines: Vec<String>,
}

fn judge(
    runs: &[Run],
    outcomes: &[Outcome],
    records: &Records,
    deviations: &[(&str, &str, &str, &str)],
) -> Verdicts {
    let mut v = Verdicts {
        failures: Vec::new(),
        known: Vec::new(),
        lines: Vec::new(),
    };
    for (run, outcome) in runs.iter().zip(outcomes) {
        let label = run.label();
        let Some(results) = &outcome.results else {
            v.failures.push(format!(
                "{label}: the script failed: {}",
                outcome.error.as_deref().unwrap_or("?")
            ));
            v.lines
                .push(format!("{label}: SCRIPT FAILED ({:.1} s)", outcome.seconds));
            continue;
        };
        let mut results = results.clone();
        let pushed = push_bodies(records, run.client, run.binding);
        results.insert(
            "push_bodies".into(),
            Value::String(match &pushed {
                Ok(_) => "ok".into(),
                Err(e) => e.clone(),
            }),
        );
        let mut expected: Vec<&str> = CHECKS.to_vec();
        expected.push("push_bodies");
        if run.client == "py" {
            expected.push("strict_wire");
        }
        let mut ok = 0;
        // Checks a script could not run (their prerequisite failed, itself reported): one line.
        let mut not_run: Vec<(&str, &str)> = Vec::new();
        for name in &expected {
            let deviation = deviations
                .iter()
                .find(|(c, b, n, _)| *c == run.client && *b == run.binding && n == name);
            match results.get(*name).and_then(Value::as_str) {
                Some("ok") => {
                    ok += 1;
                    if let Some((.., why)) = deviation {
                        note(&format!(
                            "NOTE: {label}: `{name}` passes now; remove it from the deviations ({why})"
                        ));
                    }
                }
                Some(failure) if failure.starts_with("not run:") && deviation.is_none() => {
                    not_run.push((name, failure));
                }
                Some(failure) => match deviation {
                    Some((.., why)) => v.known.push(format!(
                        "{label}: `{name}` (known deviation: {why}):\n    {failure}"
                    )),
                    None => v
                        .failures
                        .push(format!("{label}: `{name}` failed:\n    {failure}")),
                },
                None => v.failures.push(format!(
                    "{label}: `{name}` was not reported (reported: {:?})",
                    results.keys().collect::<Vec<_>>()
                )),
            }
        }
        if !not_run.is_empty() {
            let names: Vec<&str> = not_run.iter().map(|(n, _)| *n).collect();
            v.failures.push(format!(
                "{label}: {} check(s) not run ({}): {}",
                names.len(),
                not_run[0].1,
                names.join(", ")
            ));
        }
        for (name, result) in &results {
            if !expected.contains(&name.as_str()) {
                v.failures.push(format!(
                    "{label}: unexpected check `{name}` (add it to CHECKS): {result}"
                ));
            }
        }
        v.lines.push(format!(
            "{label}: {ok}/{} checks ok ({:.1} s{})",
            expected.len(),
            outcome.seconds,
            match pushed {
                Ok(n) => format!(", {n} v0.3 push bodies"),
                Err(_) => String::new(),
            }
        ));
    }
    v
}

/// Runs both scripts over both bindings against the agent at `base`, in parallel.
async fn run_all(
    base: &str,
    py: Option<&Path>,
    js: Option<&Path>,
    deviations: &[(&str, &str, &str, &str)],
) -> Verdicts {
    let (hook, records, hook_task) = webhook().await;
    let mut runs = Vec::new();
    for (client, present) in [("py", py.is_some()), ("js", js.is_some())] {
        if present {
            for binding in ["jsonrpc", "rest"] {
                runs.push(Run { client, binding });
            }
        }
    }
    let outcomes = futures::future::join_all(
        runs.iter()
            .map(|&run| run_script(command(run, py, js, base, &hook), run.label())),
    )
    .await;
    hook_task.abort();
    judge(&runs, &outcomes, &records, deviations)
}

async fn setup() -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>, f64) {
    let start = Instant::now();
    let (py, js) = tokio::join!(
        tokio::task::spawn_blocking(python_sdk::python),
        tokio::task::spawn_blocking(js_sdk::js_dir_v03)
    );
    (
        py.expect("python setup"),
        js.expect("npm setup"),
        start.elapsed().as_secs_f64(),
    )
}

fn report(what: &str, v: &Verdicts, setup: f64) {
    println!("setup (venv / npm, cached after the first run): {setup:.1} s");
    for line in &v.lines {
        println!("{line}");
    }
    for k in &v.known {
        println!("{k}");
    }
    assert!(
        v.failures.is_empty(),
        "{} v0.3 official-client check(s) failed against {what}:\n\n{}\n\n{}",
        v.failures.len(),
        v.failures.join("\n\n"),
        v.lines.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn official_v03_clients_against_the_conformance_agent() {
    let (py, js, setup) = setup().await;
    if py.is_none() && js.is_none() {
        return;
    }
    // Long enough for a client to resubscribe to (or register a push config on) a running task.
    let agent: TestServer = serve(a2a_with(
        ConformanceAgent {
            slow: Duration::from_millis(1500),
        },
        &ConformanceFlags {
            push: true,
            extended_card: true,
            ..Default::default()
        },
    ))
    .await;
    let v = run_all(&agent.base, py.as_deref(), js.as_deref(), KNOWN_DEVIATIONS).await;
    report("the conformance agent", &v, setup);
}

/// The scripts against the official Python SDK's own v0.3 server: what they check is what the
/// SDKs do, except where [`REFERENCE_DEVIATIONS`] says the official server itself falls short.
#[tokio::test(flavor = "multi_thread")]
async fn official_v03_clients_against_the_official_python_server() {
    let (py, js, setup) = setup().await;
    let Some(py) = py else {
        // The reference server is Python; its absence was noted (and fails in CI).
        return;
    };
    let (_server, base) = tokio::task::spawn_blocking({
        let py = py.clone();
        move || python_sdk::start_reference_server(&py)
    })
    .await
    .expect("start the reference server");
    let v = run_all(&base, Some(&py), js.as_deref(), REFERENCE_DEVIATIONS).await;
    report("the official Python server (py_server.py)", &v, setup);
}
