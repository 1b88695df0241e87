//! The kit's metrics as Prometheus text: requests by method, binding and outcome (failures
//! before any operation included), tasks by skill and final state, open streams, store
//! operations, push deliveries and refusals, each counting exactly what happened.

use std::time::Duration;

use a2a_kit::auth::ApiKeys;
use a2a_kit::prelude::*;
use a2a_kit::push::PushConfig;
use a2a_kit::server::AgentService;
use a2a_tests::serve;
use serde_json::{Value, json};

/// Succeeds, fails or streams, as asked.
#[derive(Clone)]
struct Counted;

/// A test agent.
#[a2a_agent(name = "Counted")]
impl Counted {
    /// Answers.
    #[skill]
    async fn ok(&self, Text(t): Text) -> String {
        format!("ok: {t}")
    }

    /// Fails.
    #[skill]
    async fn fail(&self) -> Result<String, SkillError> {
        Err(SkillError::failed("on purpose"))
    }

    /// Takes a while.
    #[skill]
    async fn slow(&self, ctx: TaskContext) -> Result<String, SkillError> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        ctx.status("still here").await?;
        Ok("slow".into())
    }
}

/// The value of `metric` summed over the series with these labels.
fn value(text: &str, metric: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            let name = l.split(['{', ' ']).next().unwrap_or_default();
            name == metric
                && labels
                    .iter()
                    .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn rpc(base: &str, method: &str, params: Value, key: Option<&str>) -> (u16, Value) {
    let mut req = a2a_tests::client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(key) = key {
        req = req.header("X-API-Key", key);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_count_what_happened() {
    // Installed before the agent is built (its store is timed from then on).
    let (recorder, handle) = a2a_kit::observe::prometheus::recorder();
    a2a_kit::observe::metrics::install(vec![Box::new(recorder)]).expect("the only recorder");
    assert!(a2a_kit::observe::metrics::enabled());
    let hook = a2a_tests::RecordingWebhook::default().serve().await;
    let agent = serve(
        AgentService::builder(Counted)
            .authenticate(ApiKeys::header("X-API-Key").key("k1", "alice"))
            .push_delivery(PushConfig::default().allow_private_networks()),
    )
    .await;
    let base = agent.base.as_str();
    let key = Some("k1");

    // 5 answered sends (one with a webhook), 1 failed task.
    for i in 0..5 {
        let mut params = json!({"message": a2a_tests::to_skill("ok", &format!("n{i}"))});
        if i == 0 {
            params["configuration"] =
                json!({"taskPushNotificationConfig": {"url": hook, "token": "t"}});
        }
        let (status, v) = rpc(base, "SendMessage", params, key).await;
        assert_eq!(status, 200);
        assert_eq!(
            v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{v}"
        );
    }
    let (_, v) = rpc(
        base,
        "SendMessage",
        json!({"message": a2a_tests::to_skill("fail", "x")}),
        key,
    )
    .await;
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_FAILED",
        "{v}"
    );
    // 2 unknown tasks over HTTP+JSON.
    for _ in 0..2 {
        let resp = a2a_tests::client()
            .get(format!("{base}/tasks/nope"))
            .header("A2A-Version", "1.0")
            .header("X-API-Key", "k1")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404);
    }
    // 1 refused before its operation: no such method; 1 with no A2A-Version.
    let (_, v) = rpc(base, "NoSuchMethod", json!({}), key).await;
    assert_eq!(v["error"]["code"], -32601, "{v}");
    let v: Value = a2a_tests::client()
        .post(base)
        .header("X-API-Key", "k1")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["error"]["code"], -32009, "{v}");
    // 3 refused at the edge: no key.
    for _ in 0..3 {
        let (status, _) = rpc(base, "GetTask", json!({"id": "x"}), None).await;
        assert_eq!(status, 401);
    }
    // A stream, open while the skill runs, closed after.
    let resp = a2a_tests::client()
        .post(base)
        .header("A2A-Version", "1.0")
        .header("X-API-Key", "k1")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": a2a_tests::to_skill("slow", "x")}}),
        )
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let open = handle.render();
    let events = a2a_tests::read_sse(resp, 10).await;
    assert!(!events.is_empty());

    let until = std::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = handle.render();
        let delivered = value(&text, "a2a_push_deliveries", &[("outcome", "delivered")]);
        let closed = value(&text, "a2a_server_active_streams", &[]) == 0.0;
        if (delivered >= 1.0 && closed) || std::time::Instant::now() > until {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let count = |labels: &[(&str, &str)]| value(&text, "a2a_server_request_duration_count", labels);
    assert_eq!(
        count(&[
            ("a2a_method_name", "SendMessage"),
            ("a2a_binding", "jsonrpc"),
            ("outcome", "OK")
        ]),
        6.0,
        "{text}"
    );
    assert_eq!(
        count(&[
            ("a2a_method_name", "GetTask"),
            ("a2a_binding", "http+json"),
            ("outcome", "TASK_NOT_FOUND")
        ]),
        2.0,
        "{text}"
    );
    assert_eq!(
        count(&[
            ("a2a_method_name", "unknown"),
            ("outcome", "METHOD_NOT_FOUND")
        ]),
        1.0,
        "{text}"
    );
    assert_eq!(
        count(&[
            ("a2a_method_name", "GetTask"),
            ("outcome", "VERSION_NOT_SUPPORTED")
        ]),
        1.0,
        "{text}"
    );
    assert_eq!(
        count(&[
            ("a2a_method_name", "SendStreamingMessage"),
            ("outcome", "OK")
        ]),
        1.0,
        "{text}"
    );
    let tasks = |skill: &str, state: &str| {
        value(
            &text,
            "a2a_server_task_duration_count",
            &[("a2a_skill_id", skill), ("a2a_task_state", state)],
        )
    };
    assert_eq!(tasks("ok", "TASK_STATE_COMPLETED"), 5.0, "{text}");
    assert_eq!(tasks("fail", "TASK_STATE_FAILED"), 1.0, "{text}");
    assert_eq!(tasks("slow", "TASK_STATE_COMPLETED"), 1.0, "{text}");
    assert_eq!(
        value(
            &text,
            "a2a_server_refusals",
            &[("reason", "unauthenticated")]
        ),
        3.0,
        "{text}"
    );
    // The stream was counted open while it was, and closed after.
    assert_eq!(
        value(
            &open,
            "a2a_server_active_streams",
            &[("a2a_method_name", "SendStreamingMessage")]
        ),
        1.0,
        "{open}"
    );
    assert_eq!(
        value(&text, "a2a_server_active_streams", &[]),
        0.0,
        "{text}"
    );
    // The webhook got the task's end (a settled state is what is pushed), at once.
    assert_eq!(
        value(&text, "a2a_push_deliveries", &[("outcome", "delivered")]),
        1.0,
        "{text}"
    );
    assert_eq!(value(&text, "a2a_push_retries", &[]), 0.0, "{text}");
    assert_eq!(value(&text, "a2a_push_outbox_depth", &[]), 0.0, "{text}");
    // The store was timed.
    assert!(
        value(&text, "a2a_store_operation_duration_count", &[]) >= 7.0,
        "{text}"
    );
}
