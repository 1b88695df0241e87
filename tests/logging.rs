//! What the library logs for an operator: a failed task with its reason, a refused request
//! with why, a refused push URL.
//! Captured with a `tracing` subscriber on the test's (single-threaded) runtime, where the
//! server's tasks run too.

use a2a_tests::*;
use serde_json::json;

#[tokio::test]
async fn a_failed_task_is_logged_with_its_reason() {
    let (logs, _guard) = capture_logs();
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("fail", "x")}),
    )
    .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{r}");
    let (id, context) = (
        task["id"].as_str().unwrap(),
        task["contextId"].as_str().unwrap(),
    );
    let text = logs.text();
    let line = text
        .lines()
        .find(|l| l.contains("task failed"))
        .unwrap_or_else(|| panic!("no failure logged in {text}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains(id) && line.contains("it broke"), "{line}");
    assert!(line.contains("skill=fail"), "{line}");
    // Its context, inside the run's span and the request's.
    assert!(
        line.contains(&format!("context_id=\"{context}\"")),
        "{line}"
    );
    assert!(line.contains("invoke_agent{"), "{line}");
    assert!(line.contains("a2a.request{"), "{line}");
    // No colour codes: the log is not a terminal.
    assert!(!text.contains('\u{1b}'), "{text}");
}

#[tokio::test]
async fn a_refused_request_is_logged_with_why() {
    let (logs, _guard) = capture_logs();
    let s = serve(
        a2a_kit::server::AgentService::builder(TestAgent)
            .authenticate(a2a_kit::auth::ApiKeys::header("X-API-Key").key("k", "alice")),
    )
    .await;
    let resp = client()
        .post(&s.base)
        .header("X-API-Key", "wrong")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let text = logs.text();
    let line = text
        .lines()
        .find(|l| l.contains("refused a request"))
        .unwrap_or_else(|| panic!("no refusal logged in {text}"));
    assert!(line.contains("refused=\"unauthenticated\""), "{line}");
    assert!(line.contains("reason="), "{line}");
}

#[tokio::test]
async fn a_refused_push_url_is_logged() {
    let (logs, _guard) = capture_logs();
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "x"),
               "configuration": {"taskPushNotificationConfig": {"url": "ftp://example.com/hook"}}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let text = logs.text();
    assert!(
        text.lines()
            .any(|l| l.contains("refused a push notification URL")
                && l.contains("ftp://example.com/hook")),
        "{text}"
    );
}

/// Issue #30: a second replica on one PostgreSQL database logged the server's notices at
/// INFO (`schema "a2a" already exists, skipping`, from its migrations' `IF NOT EXISTS`).
#[tokio::test]
async fn a_second_postgres_replica_logs_no_server_notices() {
    let (logs, _guard) = capture_logs();
    let schema = PostgresSchema::new(2).await;
    let text = logs.text();
    assert!(
        !text.contains("already exists") && !text.contains("notice"),
        "{text}"
    );
    schema.drop().await;
}
