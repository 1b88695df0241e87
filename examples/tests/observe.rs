//! One trace across agents, replicas, a model tool and a webhook: the example binaries run as
//! processes with `--otel`, exporting to an OTLP collector in this test (over gRPC and
//! HTTP/protobuf, one per process), and with `--metrics`.
//!
//! The test is the caller: each of its requests carries a `traceparent` of one trace.
//! 1. It asks the model agent (`llm_orchestrator`, on a scripted model server), whose model
//!    calls its tool for the `planner`, which delegates to the `worker`; the worker runs as two
//!    replicas on one fresh PostgreSQL database behind a round-robin proxy. The model agent
//!    pushes the task's states to a webhook of the test.
//! 2. It asks the planner for a brief: the worker asks a question, the test answers it
//!    through the planner, and the answer reaches the other worker replica, which hands it to
//!    the one whose skill is waiting.
//!
//! Every span lands in the one trace with the parent its caller says; the webhook's request
//! carries the trace; the metrics (OTLP and `/metrics`) count what happened; a malformed
//! `traceparent` starts a trace of its own. (`OBSERVE_DEBUG=1` prints every span collected.) The spans are
//! drawn as a waterfall (`target/observe/trace.svg`; `A2A_UPDATE_TRACE_PICTURE=1` also
//! writes the README's `docs/observe-trace.svg`).

mod support;

#[path = "../../tests/support_model.rs"]
mod model;
#[path = "../../tests/support_otlp.rs"]
mod otlp;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Response};
use serde_json::{Value, json};
use support::{Database, Example};

use model::{FakeModel, Reply, dynamic, text, tool};
use otlp::SpanData;

const WORKER: &str = env!("CARGO_BIN_EXE_worker");
const PLANNER: &str = env!("CARGO_BIN_EXE_planner");
const ORCHESTRATOR: &str = env!("CARGO_BIN_EXE_llm_orchestrator");

/// The test's trace.
const TRACE: &str = "5e1f2b3c4d5e6f708192a3b4c5d6e7f8";

fn traceparent(parent: &str) -> String {
    format!("00-{TRACE}-{parent}-01")
}

/// A request the proxy passed on: to which upstream, its path, its `traceparent`.
type Seen = Arc<Mutex<Vec<(usize, String, Option<String>)>>>;

/// A proxy on `listener` sending each request to the next of `upstreams` in turn.
fn round_robin(listener: tokio::net::TcpListener, upstreams: Vec<String>) -> Seen {
    let seen: Seen = Arc::default();
    let next = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::new();
    let state = (upstreams, next, client, seen.clone());
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(Arc::new(state));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    seen
}

type ProxyState = Arc<(Vec<String>, Arc<AtomicUsize>, reqwest::Client, Seen)>;

async fn forward(State(state): State<ProxyState>, req: Request) -> Response<Body> {
    let (upstreams, next, client, seen) = &*state;
    let i = next.fetch_add(1, Ordering::Relaxed) % upstreams.len();
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let trace = header(&parts.headers, "traceparent");
    seen.lock().unwrap().push((i, path.clone(), trace));
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut headers = parts.headers.clone();
    headers.remove(http::header::HOST);
    let sent = client
        .request(parts.method, format!("{}{path}", upstreams[i]))
        .headers(headers)
        .body(body)
        .send()
        .await;
    match sent {
        Ok(resp) => {
            let mut out = Response::builder().status(resp.status());
            for (name, value) in resp.headers() {
                out = out.header(name, value);
            }
            out.body(Body::from_stream(resp.bytes_stream())).unwrap()
        }
        Err(e) => Response::builder()
            .status(502)
            .body(Body::from(e.to_string()))
            .unwrap(),
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The scripted model: the first turn calls the tool for the planner, the next answers.
fn scripted(request: &Value) -> Reply {
    let answered = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    if answered {
        return Reply::Steps(vec![text("The planner has it in hand.")]);
    }
    let tool_name = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .find(|n| n.contains("planner"));
    match tool_name {
        Some(name) => Reply::Steps(vec![tool(
            "call-1",
            name,
            &[r#"{"message": "launch a newsletter"}"#],
        )]),
        None => Reply::Steps(vec![text("Working on it")]),
    }
}

/// A JSON-RPC call with a `traceparent` whose parent is `parent`.
async fn call(base: &str, method: &str, params: Value, parent: &str) -> Value {
    a2a_tests::client()
        .post(base)
        .header("A2A-Version", "1.0")
        .header("traceparent", traceparent(parent))
        .header("tracestate", "test=1")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .expect("the call")
        .json()
        .await
        .expect("a JSON-RPC answer")
}

fn user(text: &str) -> Value {
    json!({"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// The span of `service` named `name` (the first, in start order).
fn span<'a>(spans: &'a [SpanData], service: &str, name: &str) -> &'a SpanData {
    spans
        .iter()
        .filter(|s| s.service_name.as_deref() == Some(service) && s.name == name)
        .min_by_key(|s| s.start_ns)
        .unwrap_or_else(|| panic!("no span {name} of {service} in {}", names(spans)))
}

fn names(spans: &[SpanData]) -> String {
    let mut all: Vec<String> = spans
        .iter()
        .map(|s| {
            format!(
                "{}:{}({})",
                s.service_name.as_deref().unwrap_or("?"),
                s.name,
                s.kind
            )
        })
        .collect();
    all.sort();
    all.join(", ")
}

fn child_of(child: &SpanData, parent: &SpanData) {
    assert_eq!(
        child.parent_span_id.as_deref(),
        Some(parent.span_id.as_str()),
        "{} ({:?}) should be a child of {} ({:?})",
        child.name,
        child.service_name,
        parent.name,
        parent.service_name
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_trace_across_agents_replicas_a_model_tool_and_a_webhook() {
    let collector = otlp::OtlpReceiver::start().await;
    let endpoint = collector.endpoint();
    let db = Database::fresh("observe").await;
    let env = |service: &'static str, protocol: &'static str| -> Vec<(&'static str, String)> {
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol.to_string()),
            ("OTEL_SERVICE_NAME", service.to_string()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
            ("OTEL_METRIC_EXPORT_INTERVAL", "300".to_string()),
        ]
    };
    let start = |bin: &str, args: &[&str], env: Vec<(&'static str, String)>| {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Example::start_with(bin, args, &env)
    };

    // Two worker replicas on one database, reached through one URL.
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let worker_args = |metrics: bool| {
        let mut args = vec![
            "--bind",
            "127.0.0.1:0",
            "--store",
            db.url.as_str(),
            "--public-url",
            proxy_url.as_str(),
            "--no-grpc",
            "--otel",
        ];
        if metrics {
            args.push("--metrics");
        }
        args
    };
    let worker_a = start(WORKER, &worker_args(true), env("worker-a", "grpc"));
    let worker_b = start(
        WORKER,
        &worker_args(false),
        env("worker-b", "http/protobuf"),
    );
    let routed = round_robin(proxy, vec![worker_a.url.clone(), worker_b.url.clone()]);
    let planner = start(
        PLANNER,
        &[
            "--bind",
            "127.0.0.1:0",
            "--worker",
            &proxy_url,
            "--no-grpc",
            "--otel",
        ],
        env("planner", "grpc"),
    );
    let fake = FakeModel::start().await;
    fake.set_default(dynamic(scripted));
    let base_url = fake.openai_url();
    let orchestrator = start(
        ORCHESTRATOR,
        &[
            "--bind",
            "127.0.0.1:0",
            "--agent",
            &planner.url,
            "--model",
            "scripted",
            "--base-url",
            &base_url,
            "--model-api-key",
            "unused",
            "--no-grpc",
            "--push-webhooks",
            "loopback",
            "--otel",
        ],
        env("orchestrator", "http/protobuf"),
    );
    let webhook = a2a_tests::RecordingWebhook::default();
    let hook = webhook.serve().await;

    // 1. The model agent, its tool, the planner, the workers; pushed to the webhook.
    let root1 = "1000000000000001";
    let send = json!({
        "message": user("Plan a newsletter launch"),
        "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "t-1"}},
    });
    let v = call(&orchestrator.url, "SendMessage", send, root1).await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    // The task keeps its trace (what a later process continues it in).
    let kept = &task["metadata"][a2a_kit::observe::TRACE_METADATA_KEY];
    assert!(
        kept["traceparent"]
            .as_str()
            .is_some_and(|t| t.contains(TRACE)),
        "{task}"
    );

    // 2. A question asked by one worker replica, answered through the other.
    let root2 = "2000000000000002";
    let brief = json!({"message": {
        "messageId": a2a_tests::uuid(), "role": "ROLE_USER",
        "parts": [{"text": "a product launch"}],
        "metadata": {"skillId": "brief"},
    }});
    let v = call(&planner.url, "SendMessage", brief, root2).await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{v}");
    let task_id = task["id"].as_str().unwrap().to_string();
    let root3 = "3000000000000003";
    let mut reply = user("engineers");
    reply["taskId"] = json!(task_id);
    let v = call(
        &planner.url,
        "SendMessage",
        json!({"message": reply}),
        root3,
    )
    .await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");

    // The webhook heard the task's end, in the trace.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while !webhook
        .hits()
        .iter()
        .any(|(_, s, _)| s == "TASK_STATE_COMPLETED")
        && std::time::Instant::now() < until
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deliveries = webhook.traceparents();
    assert!(!deliveries.is_empty(), "no push delivery");
    for trace in &deliveries {
        let trace = trace.as_deref().unwrap_or_default();
        assert!(trace.contains(TRACE), "pushed outside the trace: {trace}");
    }
    // Both replicas served the planner's calls, each call in the trace.
    let routed = routed.lock().unwrap().clone();
    for replica in [0, 1] {
        assert!(
            routed.iter().any(|(i, path, trace)| *i == replica
                && !path.contains(".well-known")
                && trace.as_deref().is_some_and(|t| t.contains(TRACE))),
            "replica {replica} served no call in the trace: {routed:?}"
        );
    }

    // The metrics a replica serves at /metrics.
    let text = a2a_tests::client()
        .get(format!("{}/metrics", worker_a.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("a2a_server_request_duration_count{")
            && text.contains("a2a_store_operation_duration_count{"),
        "{text}"
    );

    // A malformed traceparent: answered, in a trace of its own.
    let v: Value = a2a_tests::client()
        .post(&planner.url)
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{TRACE}-0000000000000000-01"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v["result"]["tasks"].is_array(), "{v}");

    // Every process exports what it has as it stops.
    for process in [&orchestrator, &planner, &worker_a, &worker_b] {
        process.terminate();
    }
    for process in [orchestrator, planner, worker_a, worker_b] {
        let (status, _) = process.wait();
        assert!(status.success(), "{status:?}");
    }
    db.drop().await;

    let all = collector.spans();
    if std::env::var_os("OBSERVE_DEBUG").is_some() {
        for s in &all {
            eprintln!(
                "{} {} {:?} {} {} parent={:?} task={:?} state={:?} events={:?}",
                s.trace_id,
                s.span_id,
                s.service_name,
                s.name,
                s.kind,
                s.parent_span_id,
                s.attr_str("a2a.task.id"),
                s.attr_str("a2a.task.state"),
                s.events.iter().map(|e| e.0.clone()).collect::<Vec<_>>()
            );
        }
    }
    let fresh = all
        .iter()
        .find(|s| s.name == "ListTasks" && s.kind == "server")
        .expect("the ListTasks span");
    assert_ne!(fresh.trace_id, TRACE);
    assert_eq!(fresh.parent_span_id, None);
    assert_eq!(fresh.status_code, 0, "not an error");
    let spans: Vec<SpanData> = all.into_iter().filter(|s| s.trace_id == TRACE).collect();
    let (grpc, http) = collector.requests_received();
    assert!(
        grpc > 0 && http > 0,
        "exports over both protocols: {grpc} gRPC, {http} HTTP"
    );

    // 1: caller -> model agent -> its model and tool -> planner -> worker; -> webhook.
    let o_server = span(&spans, "orchestrator", "SendMessage");
    assert_eq!(o_server.kind, "server");
    assert_eq!(o_server.parent_span_id.as_deref(), Some(root1));
    assert_eq!(o_server.attr_str("a2a.binding"), Some("jsonrpc"));
    assert_eq!(o_server.attr_str("a2a.method.name"), Some("SendMessage"));
    let o_run = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("orchestrator")
                && s.attr_str("gen_ai.operation.name") == Some("invoke_agent")
                && s.kind == "internal"
        })
        .unwrap_or_else(|| panic!("no invoke_agent span: {}", names(&spans)));
    child_of(o_run, o_server);
    assert_eq!(
        o_run.attr_str("a2a.task.state"),
        Some("TASK_STATE_COMPLETED")
    );
    assert!(
        o_run
            .events
            .iter()
            .any(|(name, attrs)| name == "a2a.task.status"
                && attrs.get("a2a.task.state") == Some(&json!("TASK_STATE_WORKING"))),
        "{:?}",
        o_run.events
    );
    let chat = spans
        .iter()
        .find(|s| s.name == "chat scripted")
        .unwrap_or_else(|| panic!("no chat span: {}", names(&spans)));
    child_of(chat, o_run);
    assert_eq!(chat.attr_str("gen_ai.request.model"), Some("scripted"));
    let tool = spans
        .iter()
        .find(|s| s.attr_str("gen_ai.operation.name") == Some("execute_tool"))
        .unwrap_or_else(|| panic!("no execute_tool span: {}", names(&spans)));
    child_of(tool, o_run);
    let o_client = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("orchestrator")
                && s.kind == "client"
                && s.name.starts_with("Send")
                && s.parent_span_id.as_deref() == Some(tool.span_id.as_str())
        })
        .unwrap_or_else(|| panic!("no client span under the tool: {}", names(&spans)));
    let p_server = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("planner")
                && s.kind == "server"
                && s.parent_span_id.as_deref() == Some(o_client.span_id.as_str())
        })
        .unwrap_or_else(|| {
            panic!(
                "the planner's span is not under the tool's call: {}",
                names(&spans)
            )
        });
    let p_run = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("planner")
                && s.attr_str("gen_ai.operation.name") == Some("invoke_agent")
                && s.parent_span_id.as_deref() == Some(p_server.span_id.as_str())
        })
        .unwrap_or_else(|| panic!("no planner run under its request: {}", names(&spans)));
    assert_eq!(p_run.attr_str("a2a.skill.id"), Some("plan"));
    let p_client = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("planner")
                && s.kind == "client"
                && s.name.starts_with("Send")
                && s.parent_span_id.as_deref() == Some(p_run.span_id.as_str())
        })
        .unwrap_or_else(|| panic!("no delegation call under the plan: {}", names(&spans)));
    let w_server = spans
        .iter()
        .find(|s| {
            s.service_name
                .as_deref()
                .is_some_and(|n| n.starts_with("worker"))
                && s.kind == "server"
                && s.parent_span_id.as_deref() == Some(p_client.span_id.as_str())
        })
        .unwrap_or_else(|| panic!("no worker request under the delegation: {}", names(&spans)));
    let w_run = spans
        .iter()
        .find(|s| {
            s.attr_str("a2a.skill.id") == Some("work")
                && s.parent_span_id.as_deref() == Some(w_server.span_id.as_str())
        })
        .unwrap_or_else(|| panic!("no work run under the worker's request: {}", names(&spans)));
    assert!(
        w_run
            .events
            .iter()
            .any(|(name, _)| name == "a2a.task.artifact"),
        "{:?}",
        w_run.events
    );
    let push = spans
        .iter()
        .find(|s| s.service_name.as_deref() == Some("orchestrator") && s.name == "a2a.push.deliver")
        .unwrap_or_else(|| panic!("no push span: {}", names(&spans)));
    child_of(push, o_server);
    assert_eq!(push.attr_str("a2a.push.outcome"), Some("delivered"));
    assert!(
        deliveries
            .iter()
            .any(|t| t.as_deref().is_some_and(|t| t.contains(&push.span_id))),
        "the webhook's traceparent names a push span: {deliveries:?}"
    );

    // 2: the question's answer crosses replicas in the trace.
    for replica in ["worker-a", "worker-b"] {
        assert!(
            spans
                .iter()
                .any(|s| s.service_name.as_deref() == Some(replica) && s.kind == "server"),
            "{replica} has no span in the trace: {}",
            names(&spans)
        );
    }
    let answered = spans
        .iter()
        .find(|s| {
            s.service_name.as_deref() == Some("planner")
                && s.parent_span_id.as_deref() == Some(root3)
        })
        .unwrap_or_else(|| panic!("no planner span for the answer: {}", names(&spans)));
    assert_eq!(answered.kind, "server");

    // The metrics over OTLP counted the requests, by method and outcome.
    let sends = collector.latest_count(
        "a2a.server.request.duration",
        &[("a2a.method.name", "SendMessage"), ("outcome", "OK")],
    );
    assert!(sends.is_some_and(|n| n >= 3), "{sends:?}");

    // The picture.
    let svg = otlp::render_waterfall_svg(
        &spans,
        "One request across agents, replicas, a model tool and a webhook",
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/observe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("trace.svg"), &svg).unwrap();
    if std::env::var_os("A2A_UPDATE_TRACE_PICTURE").is_some() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("observe-trace.svg"), &svg).unwrap();
    }
}
