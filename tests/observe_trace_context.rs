//! W3C trace context with no exporter installed: the kit passes its callers' trace on
//! unchanged. A request's `traceparent`, `tracestate` and `baggage` (JSON-RPC, HTTP+JSON,
//! gRPC metadata) reach the skill's `TaskContext`, the calls it makes to other agents and
//! its task's webhooks; the task keeps them, so a reply handled by another replica on
//! PostgreSQL stays in the trace; a malformed `traceparent` starts no trace and fails nothing.

use std::time::Duration;

use a2a_kit::client::{A2aClient, Binding, SendRequest};
use a2a_kit::observe::{TRACE_METADATA_KEY, TraceContext};
use a2a_kit::prelude::*;
use a2a_kit::protocol::SendMessageResponse;
use a2a_kit::push::PushConfig;
use a2a_kit::server::AgentService;
use a2a_kit::skill::History;
use a2a_tests::{PostgresSchema, serve};
use serde_json::{Value, json};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// Says which trace its task runs in.
#[derive(Clone)]
struct Echo;

/// A test agent.
#[a2a_agent(name = "Echo")]
impl Echo {
    /// The run's traceparent, tracestate and baggage, or `none`.
    #[skill]
    async fn trace(&self, ctx: TaskContext) -> String {
        describe(ctx.trace_context())
    }
}

fn describe(trace: Option<&TraceContext>) -> String {
    match trace {
        Some(t) => format!(
            "{} | {} | {}",
            t.traceparent(),
            t.tracestate().unwrap_or("-"),
            t.baggage().unwrap_or("-")
        ),
        None => "none".into(),
    }
}

/// Asks the echo agent, over `binding`, and answers with what it said; with a question first
/// when `ask` (its reply runs the skill again, wherever it lands).
#[derive(Clone)]
struct Relay {
    echo: String,
    binding: Binding,
    ask: bool,
}

/// A test agent.
#[a2a_agent(name = "Relay")]
impl Relay {
    /// Relay the echo agent's answer.
    #[skill]
    async fn relay(&self, History(history): History) -> Result<Outcome, SkillError> {
        if self.ask && history.len() < 2 {
            return Ok(Outcome::input_required("Go on?"));
        }
        let client = A2aClient::builder()
            .binding(self.binding)
            .connect(&self.echo)
            .await
            .map_err(SkillError::from_display)?;
        let answer = client
            .send(SendRequest::text("which trace?"))
            .await
            .map_err(SkillError::from_display)?;
        Ok(Outcome::completed(answer_text(&answer)))
    }
}

fn answer_text(answer: &SendMessageResponse) -> String {
    match answer {
        SendMessageResponse::Task(t) => t
            .artifacts
            .iter()
            .flat_map(|a| a.parts.iter())
            .filter_map(|p| p.as_text())
            .collect(),
        SendMessageResponse::Message(m) => m.text(),
    }
}

/// A JSON-RPC SendMessage with these headers; its result.
async fn send(base: &str, message: Value, headers: &[(&str, &str)]) -> Value {
    let mut req = a2a_tests::client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message}));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let v: Value = req.send().await.unwrap().json().await.unwrap();
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

fn artifact_text(task: &Value) -> String {
    a2a_tests::stored_artifact_text(task)
}

async fn echo_and_relay(
    binding: Binding,
    ask: bool,
) -> (a2a_tests::TestServer, a2a_tests::TestServer) {
    let echo = serve(AgentService::builder(Echo)).await;
    let relay = Relay {
        echo: echo.base.clone(),
        binding,
        ask,
    };
    let relay = serve(AgentService::builder(relay)).await;
    (echo, relay)
}

#[tokio::test]
async fn a_callers_trace_reaches_the_skill_and_the_agent_it_calls_on_every_binding() {
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let (_echo, relay) = echo_and_relay(binding, false).await;
        let headers = [
            ("traceparent", TRACEPARENT),
            ("tracestate", "vendor=opaque"),
            ("baggage", "tenant=acme"),
        ];
        let result = send(
            &relay.base,
            json!({"message": a2a_tests::user_text("go")}),
            &headers,
        )
        .await;
        let task = &result["task"];
        // The relay's call to the echo agent carried the caller's context unchanged.
        assert_eq!(
            artifact_text(task),
            format!("{TRACEPARENT} | vendor=opaque | tenant=acme"),
            "{binding:?}: {task}"
        );
        // The task keeps it.
        assert_eq!(
            task["metadata"][TRACE_METADATA_KEY],
            json!({"traceparent": TRACEPARENT, "tracestate": "vendor=opaque", "baggage": "tenant=acme"}),
            "{task}"
        );
    }
}

#[tokio::test]
async fn the_client_carries_the_context_it_runs_in_over_grpc_and_http() {
    let echo = serve(AgentService::builder(Echo)).await;
    let trace = TraceContext::parse(TRACEPARENT, None, Some("k=v")).unwrap();
    for binding in [Binding::Grpc, Binding::HttpJson, Binding::JsonRpc] {
        let client = A2aClient::builder()
            .binding(binding)
            .connect(&echo.base)
            .await
            .unwrap();
        let answer = trace
            .clone()
            .scope(client.send(SendRequest::text("which?")))
            .await
            .unwrap();
        assert_eq!(
            answer_text(&answer),
            format!("{TRACEPARENT} | - | k=v"),
            "{binding:?}"
        );
        // Outside any context, none is sent.
        let answer = client.send(SendRequest::text("which?")).await.unwrap();
        assert_eq!(answer_text(&answer), "none", "{binding:?}");
    }
}

#[tokio::test]
async fn a_malformed_traceparent_starts_no_trace_and_fails_nothing() {
    let (_echo, relay) = echo_and_relay(Binding::JsonRpc, false).await;
    for bad in [
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "junk",
        "",
    ] {
        let result = send(
            &relay.base,
            json!({"message": a2a_tests::user_text("go")}),
            &[
                ("traceparent", bad),
                ("tracestate", "a=b"),
                ("baggage", "k=v"),
            ],
        )
        .await;
        let task = &result["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{bad}: {task}"
        );
        assert_eq!(artifact_text(task), "none", "{bad}: {task}");
        assert!(task["metadata"].get(TRACE_METADATA_KEY).is_none(), "{task}");
    }
    // Over HTTP+JSON too.
    let resp = a2a_tests::client()
        .post(format!("{}/message:send", relay.base))
        .header("A2A-Version", "1.0")
        .header("traceparent", "nonsense")
        .json(&json!({"message": a2a_tests::user_text("go")}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_continued_on_another_replica_stays_in_its_trace() {
    let echo = serve(AgentService::builder(Echo)).await;
    let schema = PostgresSchema::new(2).await;
    let relay = Relay {
        echo: echo.base.clone(),
        binding: Binding::JsonRpc,
        ask: true,
    };
    let push = || PushConfig::default().allow_private_networks();
    let a = serve(
        AgentService::builder(relay.clone())
            .task_manager(schema.stores[0].clone())
            .push_delivery(push()),
    )
    .await;
    let b = serve(
        AgentService::builder(relay)
            .task_manager(schema.stores[1].clone())
            .push_delivery(push()),
    )
    .await;
    let webhook = a2a_tests::RecordingWebhook::default();
    let hook = webhook.serve().await;

    // Started on A in the caller's trace, with a webhook: it asks first.
    let result = send(
        &a.base,
        json!({
            "message": a2a_tests::user_text("go"),
            "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "tok"}},
        }),
        &[("traceparent", TRACEPARENT)],
    )
    .await;
    let task = &result["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    let task_id = task["id"].as_str().unwrap();

    // The reply reaches B, in no trace: B runs the skill again, in the task's.
    let mut reply = a2a_tests::user_text("yes");
    reply["taskId"] = json!(task_id);
    let result = send(&b.base, json!({"message": reply}), &[]).await;
    let task = &result["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(
        artifact_text(task),
        format!("{TRACEPARENT} | - | -"),
        "{task}"
    );

    // Every push of the task (from either replica) carries its trace.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while webhook.count(task_id, "TASK_STATE_COMPLETED", true) == 0
        && std::time::Instant::now() < until
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = webhook.traceparents();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.iter().all(|t| t.as_deref() == Some(TRACEPARENT)),
        "{seen:?}"
    );
    schema.drop().await;
}
