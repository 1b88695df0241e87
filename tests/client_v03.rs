//! The client speaking A2A **v0.3**: against the official Python SDK's own v0.3 server
//! (`a2a-sdk` 0.3.26, tests/interop/v03/py_server.py, its virtualenv set up by
//! tests/support_python_sdk_v03.rs) over both v0.3 bindings, every client operation with its
//! answers read back as the kit's 1.0 types; delegation from an a2a-kit agent to it; and, in
//! process, how cards decide the version (a v0.3 card makes the client speak v0.3, a hybrid
//! one keeps v1.0 unless v0.3 is asked for) and what goes over the wire (no `A2A-Version`,
//! `X-A2A-Extensions`, the v0.3 method names, the v1.0 operation names for interceptors).
//!
//! The Python half is skipped, with a printed note, only when `python3 -m venv` is missing,
//! and never in CI.
//!
//! What the official server itself does not do (so the client gets an error, asserted here):
//! over HTTP+JSON it lists no push configs (500: `list_push_notifications` raises
//! NotImplementedError) and routes no DELETE of one (405), and it writes a file's bytes
//! base64-encoded twice (its `fileWithBytes` holds the base64 text's bytes).

#[path = "support_python_sdk_v03.rs"]
mod python_sdk;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_examples::conformance::{self, ConformanceAgent, ConformanceFlags};
use a2a_examples::planner;
use a2a_kit::client::{
    A2aClient, ApiKeyAuth, Binding, CallInfo, CardCache, ClientError, DELEGATIONS_KEY, Interceptor,
    SendRequest, TaskAccumulator,
};
use a2a_kit::error::A2aError;
use a2a_kit::protocol::{
    GetTaskRequest, ListTasksRequest, Message, Part, ProtocolVersion, SendMessageResponse,
    StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use a2a_tests::{ChildGuard, serve};
use axum::Json;
use axum::http::HeaderMap;
use futures::StreamExt;
use serde_json::{Value, json};

/// The official v0.3 server, or `None` (skipped) without `python3 -m venv`.
fn reference_server() -> Option<(ChildGuard, String)> {
    let py = python_sdk::python()?;
    Some(python_sdk::start_reference_server(&py))
}

fn task(r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("expected a task, got {m:?}"),
    }
}

/// A user message whose messageId starts with `prefix`: the reference server's behaviours
/// are keyed on it.
fn keyed(prefix: &str, text: &str) -> Message {
    let mut m = Message::user_text(text);
    m.message_id = format!("{prefix}-{}", a2a_tests::uuid());
    m
}

fn artifact_text(t: &Task) -> String {
    t.artifacts
        .iter()
        .flat_map(|a| &a.parts)
        .filter_map(Part::as_text)
        .collect()
}

async fn wait_for_state(c: &A2aClient, id: &str, done: impl Fn(TaskState) -> bool) -> Task {
    for _ in 0..200 {
        let t = c.get_task(id).await.unwrap();
        if done(t.status.state) {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached the state waited for");
}

fn code(e: &ClientError) -> Option<i32> {
    e.code()
}

/// The v0.3 agent under test: the official Python server, or an a2a-kit agent (the
/// conformance agent: the same behaviours by messageId prefix) spoken to in v0.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Python,
    Kit,
}

/// Every client operation against `agent` at `base` over v0.3 `binding`.
async fn every_operation(agent: Agent, base: &str, binding: Binding) {
    let c = A2aClient::builder()
        .binding(binding)
        .protocol_version(ProtocolVersion::V0_3)
        .connect(base)
        .await
        .unwrap();
    let rest = binding == Binding::HttpJson;
    let python = agent == Agent::Python;

    // The card: v0.3, read as 1.0's.
    assert_eq!(c.protocol_version(), ProtocolVersion::V0_3);
    assert_eq!(c.binding(), binding);
    assert_eq!(c.interface().protocol_version, "0.3");
    let card = c.card();
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.capabilities.push_notifications, Some(true));
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    if python {
        let path = if rest { "/a2a/rest" } else { "/a2a/jsonrpc" };
        assert_eq!(c.endpoint().as_str(), format!("{base}{path}"));
        assert_eq!(card.name, "a2a-sdk 0.3 reference agent");
        assert_eq!(card.skills.len(), 3);
    } else {
        assert_eq!(card.name, "a2a-kit conformance agent");
    }

    // A blocking send: the echo.
    let t = task(c.send("hello there").await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(artifact_text(&t), "hello there");
    assert_eq!(t.status.message.as_ref().unwrap().text(), "hello there");
    assert!(!t.context_id.is_empty());

    // Artifacts of every part kind.
    let t = task(c.send(keyed("tck-artifact-file-url", "f")).await.unwrap());
    let part = &t.artifacts[0].parts[0];
    assert_eq!(part.as_url(), Some("https://example.com/output.txt"));
    assert_eq!(part.filename.as_deref(), Some("output.txt"));
    assert_eq!(part.media_type.as_deref(), Some("text/plain"));
    let t = task(c.send(keyed("tck-artifact-file", "f")).await.unwrap());
    let bytes = t.artifacts[0].parts[0].as_raw().unwrap().to_vec();
    if python && rest {
        // The server's `fileWithBytes` carries the base64 text's bytes (see the module doc).
        assert_eq!(bytes, b"R2VuZXJhdGVkIGZpbGUgY29udGVudA==");
    } else {
        assert_eq!(bytes, b"Generated file content");
    }
    let t = task(c.send(keyed("tck-artifact-data", "d")).await.unwrap());
    let data = t
        .artifacts
        .iter()
        .flat_map(|a| &a.parts)
        .find_map(Part::as_data)
        .unwrap_or_else(|| panic!("no data part in {t:?}"));
    assert_eq!(data["key"], "value");
    // (Over HTTP+JSON a number is a protobuf Struct's double: 42.0 from the official server.)
    assert_eq!(data["count"].as_f64(), Some(42.0));
    // Parts of every kind sent (the echo answers with the text).
    let mut m = Message::user(vec![
        Part::text("mixed"),
        Part::raw(b"raw".to_vec()).with_media_type("application/octet-stream"),
        Part::url("https://example.com/x").with_filename("x"),
        Part::data(json!({"a": 1})),
    ]);
    m.message_id = a2a_tests::uuid();
    let t = task(c.send(m).await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(artifact_text(&t), "mixed");
    let t = task(c.send(keyed("tck-reject-task", "no")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Rejected);

    // A direct message.
    let SendMessageResponse::Message(m) =
        c.send(keyed("tck-message-response", "hi")).await.unwrap()
    else {
        panic!("expected a message")
    };
    assert_eq!(m.text(), "Direct message response");

    // Multi-turn: input required, then the reply completes the task.
    let asked = task(c.send(keyed("tck-input-required", "q")).await.unwrap());
    assert_eq!(asked.status.state, TaskState::InputRequired);
    assert_eq!(
        asked.status.message.as_ref().unwrap().text(),
        "Please provide more input"
    );
    let reply = SendRequest::new(keyed("tck-complete-task", "Ada"))
        .task_id(&asked.id)
        .context_id(&asked.context_id);
    let t = task(c.send(reply).await.unwrap());
    assert_eq!(t.id, asked.id);
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(t.status.message.as_ref().unwrap().text(), "Hello from TCK");

    // Without waiting, then GetTask (with a history length).
    let slow =
        || SendRequest::new(keyed("test-resubscribe-message-id", "slow")).return_immediately(true);
    let t = task(c.send(slow()).await.unwrap());
    assert!(!t.status.state.is_terminal(), "{:?}", t.status.state);
    let done = wait_for_state(&c, &t.id, TaskState::is_terminal).await;
    assert_eq!(done.status.state, TaskState::Completed);
    let got = c
        .get_task_with(GetTaskRequest {
            id: t.id.clone(),
            history_length: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(got.id, t.id);
    assert!(got.history.len() <= 1, "{:?}", got.history);

    // Errors: a task that is not there, one that cannot be canceled.
    let e = c.get_task("no-such-task").await.unwrap_err();
    assert_eq!(code(&e), Some(-32001), "{e}");
    assert_eq!(e.reason(), Some("TASK_NOT_FOUND"));
    assert!(matches!(
        e.agent_error().unwrap().to_a2a_error(),
        A2aError::TaskNotFound { .. }
    ));
    let e = c.cancel_task("no-such-task").await.unwrap_err();
    assert_eq!(code(&e), Some(-32001), "{e}");
    let waiting = task(c.send(keyed("tck-input-required", "q")).await.unwrap());
    let canceled = c.cancel_task(&waiting.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let e = c.cancel_task(&waiting.id).await.unwrap_err();
    assert_eq!(code(&e), Some(-32002), "{e}");
    assert_eq!(e.reason(), Some("TASK_NOT_CANCELABLE"));

    // ListTasks does not exist in v0.3.
    let e = c.list_tasks(ListTasksRequest::default()).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::Unsupported(m) if m.contains("0.3")),
        "{e}"
    );

    // A stream: the task, WORKING, the chunks, COMPLETED, each a 1.0 event.
    let events: Vec<StreamResponse> = c
        .send_streaming(keyed("tck-stream-artifact-chunked", "c"))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert!(
        matches!(events.first(), Some(StreamResponse::Task(_))),
        "{events:?}"
    );
    let chunks = events
        .iter()
        .filter(|e| matches!(e, StreamResponse::ArtifactUpdate(_)))
        .count();
    assert_eq!(chunks, 2, "{events:?}");
    assert_eq!(
        events.last().unwrap().state(),
        Some(TaskState::Completed),
        "{events:?}"
    );
    let mut acc = TaskAccumulator::default();
    events.iter().for_each(|e| acc.apply(e));
    assert_eq!(artifact_text(acc.task().unwrap()), "chunk-1 chunk-2");
    // A stream that is one direct message.
    let out = c
        .send_streaming(keyed("tck-message-response", "hi"))
        .await
        .unwrap()
        .into_result()
        .await
        .unwrap();
    assert!(
        matches!(out, SendMessageResponse::Message(m) if m.text() == "Direct message response")
    );
    // A stream that stops for input.
    let mut s = c
        .send_streaming(keyed("tck-input-required", "q"))
        .await
        .unwrap();
    let mut last = None;
    while let Some(ev) = s.next().await {
        last = Some(ev.unwrap());
    }
    assert_eq!(last.unwrap().state(), Some(TaskState::InputRequired));
    assert!(s.task_id().is_some());

    // Resubscribe to a running task.
    let t = task(c.send(slow()).await.unwrap());
    let followed = c
        .subscribe(&t.id)
        .await
        .unwrap()
        .into_result()
        .await
        .unwrap();
    let followed = task(followed);
    assert_eq!(followed.id, t.id);
    assert_eq!(followed.status.state, TaskState::Completed);
    // Resubscribe to a task that has ended: the task (the official server refuses, over
    // JSON-RPC with InvalidParams, over HTTP+JSON with a stream that closes at once; the
    // client reads the task then); to one that does not exist: TaskNotFound.
    let ended = c
        .subscribe(&t.id)
        .await
        .unwrap()
        .into_result()
        .await
        .unwrap();
    assert_eq!(task(ended).status.state, TaskState::Completed);
    let e = match c.subscribe("no-such-task").await {
        Err(e) => e,
        Ok(s) => s.into_result().await.unwrap_err(),
    };
    assert_eq!(code(&e), Some(-32001), "{e}");

    // Push configs: create, get, list, delete.
    let waiting = task(c.send(keyed("tck-input-required", "q")).await.unwrap());
    let created = c
        .create_push_config(TaskPushNotificationConfig {
            id: Some("cfg-1".into()),
            task_id: Some(waiting.id.clone()),
            url: "http://127.0.0.1:9/hook".into(),
            token: Some("secret-token".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(created.task_id.as_deref(), Some(waiting.id.as_str()));
    assert_eq!(created.id.as_deref(), Some("cfg-1"));
    assert_eq!(created.url, "http://127.0.0.1:9/hook");
    let got = c.get_push_config(&waiting.id, "cfg-1").await.unwrap();
    assert_eq!(got.url, "http://127.0.0.1:9/hook");
    assert_eq!(got.task_id.as_deref(), Some(waiting.id.as_str()));
    if python {
        // (a2a-kit's push configs are write-only for their token.)
        assert_eq!(got.token.as_deref(), Some("secret-token"));
    }
    let listed = c.list_push_configs(&waiting.id).await;
    let deleted = c.delete_push_config(&waiting.id, "cfg-1").await;
    if python && rest {
        // Neither is served by the official server's HTTP+JSON binding (module doc).
        assert_eq!(code(&listed.unwrap_err()), Some(-32603));
        let e = deleted.unwrap_err();
        assert!(matches!(e, ClientError::Http { status: 405, .. }), "{e}");
    } else {
        let listed = listed.unwrap();
        assert_eq!(listed.configs.len(), 1);
        assert_eq!(listed.configs[0].id.as_deref(), Some("cfg-1"));
        deleted.unwrap();
        assert!(
            c.list_push_configs(&waiting.id)
                .await
                .unwrap()
                .configs
                .is_empty()
        );
    }
    let e = c
        .get_push_config("no-such-task", "cfg-1")
        .await
        .unwrap_err();
    assert!(e.code().is_some(), "{e}");

    // The extended card replaces the public one.
    let extended = c.extended_card().await.unwrap();
    assert!(extended.name.ends_with("(extended)"), "{}", extended.name);
    if python {
        assert_eq!(extended.skills.len(), 4);
    }
    assert_eq!(c.card().name, extended.name);
    assert_eq!(c.protocol_version(), ProtocolVersion::V0_3);
}

#[tokio::test]
async fn every_operation_over_v03_jsonrpc_against_the_official_server() {
    let Some((_server, base)) = reference_server() else {
        return;
    };
    every_operation(Agent::Python, &base, Binding::JsonRpc).await;
}

#[tokio::test]
async fn every_operation_over_v03_http_json_against_the_official_server() {
    let Some((_server, base)) = reference_server() else {
        return;
    };
    every_operation(Agent::Python, &base, Binding::HttpJson).await;
}

/// An a2a-kit agent serving v0.3 beside v1.0: its hybrid card keeps the client on v1.0 unless
/// v0.3 is asked for; asked for, every operation over both v0.3 bindings.
#[tokio::test]
async fn every_operation_over_v03_against_an_a2a_kit_agent() {
    let flags = ConformanceFlags {
        push: true,
        extended_card: true,
        ..Default::default()
    };
    let agent = ConformanceAgent {
        slow: Duration::from_millis(1500),
    };
    let s = serve(conformance::a2a_with(agent, &flags)).await;
    let c = A2aClient::connect(&s.base).await.unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V1_0);
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        every_operation(Agent::Kit, &s.base, binding).await;
    }
}

/// An a2a-kit agent (the example planner) delegating to the official v0.3 server: its
/// progress streamed over v0.3, its question relayed, its artifacts forwarded.
#[tokio::test]
async fn delegation_to_a_v03_agent() {
    let Some((_server, base)) = reference_server() else {
        return;
    };
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let p = serve(planner::a2a_over(&base, binding)).await;
        let c = A2aClient::connect(&p.base).await.unwrap();
        assert_eq!(c.protocol_version(), ProtocolVersion::V1_0);
        // `plan` hands the goal over; the reference agent echoes it.
        let t = task(
            c.send(SendRequest::text("launch a newsletter").skill("plan"))
                .await
                .unwrap(),
        );
        assert_eq!(t.status.state, TaskState::Completed, "{binding}: {t:?}");
        let echoed: String = t
            .artifacts
            .iter()
            .filter(|a| a.name.as_deref() == Some("echo"))
            .flat_map(|a| &a.parts)
            .filter_map(Part::as_text)
            .collect();
        assert_eq!(echoed, "launch a newsletter", "{binding}: {t:?}");
        let delegations = &t.metadata.as_ref().unwrap()[DELEGATIONS_KEY];
        assert_eq!(delegations[0]["state"], "TASK_STATE_COMPLETED");
        assert!(delegations[0]["url"].as_str().unwrap().starts_with(&base));

        // `brief` relays the remote question and the reply.
        let asked = task(
            c.send(SendRequest::text("ask").skill("brief"))
                .await
                .unwrap(),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired, "{binding}");
        assert_eq!(
            asked.status.message.as_ref().unwrap().text(),
            "What is your name?"
        );
        let t = task(
            c.send(
                SendRequest::text("Grace")
                    .task_id(&asked.id)
                    .context_id(&asked.context_id),
            )
            .await
            .unwrap(),
        );
        assert_eq!(t.status.state, TaskState::Completed, "{binding}: {t:?}");
        assert_eq!(artifact_text(&t), "Hello, Grace", "{binding}");
    }
}

// ---------------------------------------------------------------------------------------------
// In process: cards and the wire

/// What a mock agent saw: each request's headers and JSON body (`null` for a card fetch).
type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

/// The JSON-RPC requests among what a mock agent saw.
fn rpc_requests(seen: &Seen) -> Vec<(HeaderMap, Value)> {
    let seen = seen.lock().unwrap();
    seen.iter().filter(|(_, b)| !b.is_null()).cloned().collect()
}

/// The `A2A-Version` of each card fetch a mock agent saw.
fn card_fetch_versions(seen: &Seen) -> Vec<Option<String>> {
    let seen = seen.lock().unwrap();
    seen.iter()
        .filter(|(_, b)| b.is_null())
        .map(|(h, _)| {
            h.get("a2a-version")
                .map(|v| v.to_str().unwrap().to_string())
        })
        .collect()
}

/// A mock v0.3 agent at a random port: `card` (with `{base}` replaced) at the well-known
/// path, and a JSON-RPC endpoint at `/rpc` answering `message/send` with a completed v0.3 task
/// and everything else with a -32601.
async fn mock_agent(card: Value) -> (String, Seen, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card: Value = serde_json::from_str(&card.to_string().replace("{base}", &base)).unwrap();
    let seen: Seen = Arc::default();
    let rpc_seen = seen.clone();
    let card_seen = seen.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move |headers: HeaderMap| async move {
                card_seen.lock().unwrap().push((headers, Value::Null));
                Json(card)
            }),
        )
        .route(
            "/rpc",
            axum::routing::post(move |headers: HeaderMap, Json(body): Json<Value>| {
                let seen = rpc_seen.clone();
                async move {
                    seen.lock().unwrap().push((headers, body.clone()));
                    let answer = match body["method"].as_str() {
                        Some("message/send") => json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                            "kind": "task", "id": "t-1", "contextId": "c-1",
                            "status": {"state": "completed", "message": {"kind": "message",
                                "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "done"}]}},
                            "artifacts": [{"artifactId": "a", "parts": [{"kind": "file",
                                "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "hi.txt"}}]}]
                        }}),
                        _ => json!({"jsonrpc": "2.0", "id": body["id"],
                            "error": {"code": -32601, "message": "Method not found"}}),
                    };
                    Json(answer)
                }
            }),
        );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, seen, task)
}

fn v03_card() -> Value {
    json!({
        "name": "mock", "description": "a v0.3 agent", "version": "1", "protocolVersion": "0.3.0",
        "url": "{base}/rpc", "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "{base}/rpc", "transport": "JSONRPC"},
                                 {"url": "{base}/grpc", "transport": "GRPC"}],
        "capabilities": {"streaming": false},
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Agent-Key"}},
        "security": [{"key": []}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "", "tags": []}]
    })
}

/// Records the operation names interceptors are called with.
struct Operations(Arc<Mutex<Vec<String>>>);

#[async_trait::async_trait]
impl Interceptor for Operations {
    async fn intercept(
        &self,
        call: &CallInfo<'_>,
        _req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        self.0.lock().unwrap().push(call.operation.to_string());
        Ok(())
    }
}

#[tokio::test]
async fn a_v03_card_makes_the_client_speak_v03_on_the_wire() {
    let (base, seen, _agent) = mock_agent(v03_card()).await;
    let card = A2aClient::connect(&base).await.unwrap().card();
    // The card's OpenAPI-shaped scheme is the one the auth helper places the key by.
    let auth = ApiKeyAuth::from_card(&card, "k-1").unwrap();
    let placed = format!("{auth:?}");
    assert!(
        placed.contains("Header") && placed.contains("X-Agent-Key"),
        "{placed}"
    );
    assert_eq!(card.security_requirements.len(), 1);

    let operations = Arc::new(Mutex::new(Vec::new()));
    let c = A2aClient::builder()
        .interceptor(Operations(operations.clone()))
        .interceptor(auth)
        .extensions(["urn:example:ext"])
        .connect(&base)
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V0_3);
    assert_eq!(c.binding(), Binding::JsonRpc);
    assert_eq!(c.endpoint().as_str(), format!("{base}/rpc"));

    let t = task(c.send(SendRequest::text("hi").skill("s")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(t.status.message.unwrap().text(), "done");
    let part = &t.artifacts[0].parts[0];
    assert_eq!(part.as_raw(), Some(&b"hi"[..]));
    assert_eq!(part.filename.as_deref(), Some("hi.txt"));
    let e = c.get_task("t-1").await.unwrap_err();
    assert_eq!(e.code(), Some(-32601));

    let seen = rpc_requests(&seen);
    let (headers, body) = &seen[0];
    assert!(headers.get("a2a-version").is_none(), "{headers:?}");
    assert_eq!(headers["x-a2a-extensions"], "urn:example:ext");
    assert!(headers.get("a2a-extensions").is_none());
    assert_eq!(headers["x-agent-key"], "k-1");
    assert_eq!(body["method"], "message/send");
    let params = &body["params"];
    assert_eq!(params["message"]["kind"], "message");
    assert_eq!(params["message"]["role"], "user");
    assert_eq!(
        params["message"]["parts"][0],
        json!({"kind": "text", "text": "hi"})
    );
    assert_eq!(params["message"]["metadata"]["skillId"], "s");
    assert_eq!(params["configuration"]["blocking"], true);
    assert_eq!(seen[1].1["method"], "tasks/get");
    assert_eq!(seen[1].1["params"], json!({"id": "t-1"}));
    // Interceptors see the operations by their 1.0 names, the card fetches too.
    let ops = operations.lock().unwrap();
    assert!(ops.contains(&"SendMessage".to_string()), "{ops:?}");
    assert!(ops.contains(&"GetTask".to_string()), "{ops:?}");
}

#[tokio::test]
async fn hybrid_cards_keep_v1_unless_v03_is_asked_for() {
    // A hybrid card as the official 1.x SDKs serve it: 1.0 interfaces, the 0.3 fields beside.
    let hybrid = json!({
        "name": "hybrid", "description": "", "version": "1", "protocolVersion": "0.3.0",
        "url": "{base}/rpc", "preferredTransport": "JSONRPC",
        "supportedInterfaces": [{"url": "{base}/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "skills": [], "defaultInputModes": [], "defaultOutputModes": []
    });
    let (base, seen, _agent) = mock_agent(hybrid).await;
    let cache = CardCache::new();
    let c = A2aClient::builder()
        .card_cache(cache.clone())
        .connect(&base)
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V1_0);
    assert_eq!(c.endpoint().as_str(), format!("{base}/v1"));
    // Asked for 0.3: the interface its 0.3 fields name.
    let c = A2aClient::builder()
        .card_cache(cache)
        .protocol_version(ProtocolVersion::V0_3)
        .connect(&base)
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V0_3);
    assert_eq!(c.endpoint().as_str(), format!("{base}/rpc"));
    // The card is asked for as each kind of client asks (an agent that speaks both versions
    // answers a 1.0 client with its 1.0 card), and cached apart.
    assert_eq!(card_fetch_versions(&seen), [Some("1.0".to_string()), None]);
    assert_eq!(c.interface().protocol_version, "0.3");
    // The card stays as served: its 0.3 fields are no interface of its own.
    assert_eq!(c.card().supported_interfaces.len(), 1);
    task(c.send("hi").await.unwrap());
    assert_eq!(rpc_requests(&seen)[0].1["method"], "message/send");

    // Asked for 1.0 of a 0.3 agent: refused, naming what it offers.
    let (base, _seen, _agent) = mock_agent(v03_card()).await;
    let e = A2aClient::builder()
        .protocol_version(ProtocolVersion::V1_0)
        .connect(&base)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ClientError::UnsupportedVersion { offered } if offered.contains(&"JSONRPC 0.3".to_string())),
        "{e:?}"
    );

    // A v0.3 agent reachable over gRPC only: refused with a clear error.
    let grpc_only = json!({"name": "g", "protocolVersion": "0.3.0", "url": "127.0.0.1:1",
        "preferredTransport": "GRPC", "capabilities": {}, "skills": []});
    let (base, _seen, _agent) = mock_agent(grpc_only).await;
    let e = A2aClient::connect(&base).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::Unsupported(m) if m.contains("0.3 over gRPC")),
        "{e}"
    );
}

/// a2a-kit's webhook receiver takes what the official v0.3 server's push sender posts (the
/// bare v0.3 Task, `kind` and lowercase states, the token in `X-A2A-Notification-Token`):
/// a task waiting for input gets a webhook through the client over v0.3, the reply completes
/// it, and the receiver's copy of the task completes with it.
#[tokio::test]
async fn the_webhook_receiver_takes_the_official_v03_servers_pushes() {
    use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
    let Some((_server, base)) = reference_server() else {
        return;
    };
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(16);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", listener.local_addr().unwrap());
    let router = receiver.router("/hook");
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let c = A2aClient::builder()
            .binding(binding)
            .protocol_version(ProtocolVersion::V0_3)
            .connect(&base)
            .await
            .unwrap();
        let asked = task(c.send(keyed("tck-input-required", "q")).await.unwrap());
        let config = tokens.issue_config(&hook_url).await.unwrap();
        let token = config.token.clone().unwrap();
        c.create_push_config(TaskPushNotificationConfig {
            task_id: Some(asked.id.clone()),
            ..config
        })
        .await
        .unwrap();
        tokens.bind(&asked.id, &token).await.unwrap();
        tasks.insert(asked.clone()).await.unwrap();
        let reply = SendRequest::new(keyed("tck-complete-task", "Ada"))
            .task_id(&asked.id)
            .context_id(&asked.context_id);
        assert_eq!(
            task(c.send(reply).await.unwrap()).status.state,
            TaskState::Completed
        );
        let done = tokio::time::timeout(
            Duration::from_secs(10),
            tasks.wait_for(&asked.id, |t| t.status.state == TaskState::Completed),
        )
        .await
        .unwrap_or_else(|_| panic!("{binding:?}: no completed push reached the receiver"))
        .unwrap();
        assert_eq!(done.id, asked.id);
        let n = loop {
            let n = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .expect("a notification")
                .expect("the channel is open");
            if n.task_id == asked.id && n.event.state() == Some(TaskState::Completed) {
                break n;
            }
        };
        assert!(
            n.bare_task,
            "{binding:?}: the official server posts the bare Task"
        );
    }
}
