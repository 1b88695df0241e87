//! The conformance agent's fixed behaviours, through real HTTP on 127.0.0.1.

use std::time::Duration;

use a2a_examples::conformance::{ConformanceAgent, ConformanceFlags, a2a_with};
use a2a_tests::*;
use serde_json::{Value, json};

async fn agent(flags: ConformanceFlags) -> TestServer {
    serve(a2a_with(
        ConformanceAgent {
            slow: Duration::from_millis(400),
        },
        &flags,
    ))
    .await
}

fn msg(prefix: &str, text: &str) -> Value {
    json!({"messageId": format!("{prefix}-{}", uuid()), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// SendMessage of a TCK message (its messageId prefix picks the behaviour) over JSON-RPC;
/// the `result`.
async fn send_tck_message(base: &str, m: Value) -> Value {
    let r = rpc(base, "SendMessage", json!({"message": m})).await;
    assert!(r.get("result").is_some(), "{r}");
    r["result"].clone()
}

#[tokio::test]
async fn unary_behaviours() {
    let s = agent(ConformanceFlags::default()).await;
    let t = send_tck_message(&s.base, msg("tck-complete-task", "hi")).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        t["task"]["status"]["message"]["parts"][0]["text"],
        "Hello from TCK"
    );

    let t = send_tck_message(&s.base, msg("tck-artifact-text", "x")).await;
    assert_eq!(
        t["task"]["artifacts"][0]["parts"][0]["text"],
        "Generated text content"
    );
    let t = send_tck_message(&s.base, msg("tck-artifact-file", "x")).await;
    let p = &t["task"]["artifacts"][0]["parts"][0];
    assert!(p["raw"].is_string());
    assert_eq!(
        (p["filename"].as_str(), p["mediaType"].as_str()),
        (Some("output.txt"), Some("text/plain"))
    );
    let t = send_tck_message(&s.base, msg("tck-artifact-file-url", "x")).await;
    assert_eq!(
        t["task"]["artifacts"][0]["parts"][0]["url"],
        "https://example.com/output.txt"
    );
    let t = send_tck_message(&s.base, msg("tck-artifact-data", "x")).await;
    assert_eq!(
        t["task"]["artifacts"][0]["parts"][0]["data"],
        json!({"key": "value", "count": 42})
    );
    let t = send_tck_message(&s.base, msg("tck-message-response", "x")).await;
    assert_eq!(t["message"]["parts"][0]["text"], "Direct message response");
    let t = send_tck_message(&s.base, msg("tck-reject-task", "x")).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_REJECTED");
    let t = send_tck_message(&s.base, msg("anything", "echo me")).await;
    assert_eq!(t["task"]["artifacts"][0]["parts"][0]["text"], "echo me");
}

#[tokio::test]
async fn input_required_follow_ups() {
    let s = agent(ConformanceFlags::default()).await;
    let dup = format!("tck-input-required-{}", uuid());
    let first = json!({"messageId": dup, "role": "ROLE_USER", "parts": [{"text": "one"}]});
    let t = send_tck_message(&s.base, first).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let id = t["task"]["id"].as_str().unwrap().to_string();
    // The suite re-uses one messageId: accepted, and the task stays waiting.
    let again =
        json!({"messageId": dup, "role": "ROLE_USER", "taskId": id, "parts": [{"text": "two"}]});
    let t = send_tck_message(&s.base, again).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    // A follow-up with taskId and no contextId completes it.
    let mut done = msg("tck-complete-task", "three");
    done["taskId"] = json!(id);
    let t = send_tck_message(&s.base, done).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let users = t["task"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .count();
    assert_eq!(users, 3, "every message is kept");
    // Cancel of an input-required task.
    let t = send_tck_message(&s.base, msg("tck-input-required", "x")).await;
    let c = rpc(&s.base, "CancelTask", json!({"id": t["task"]["id"]})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED");
}

async fn stream_states(base: &str, prefix: &str) -> Vec<SseEvent> {
    let resp = rpc_stream(
        base,
        "SendStreamingMessage",
        json!({"message": msg(prefix, "s")}),
        None,
    )
    .await;
    read_sse(resp, 100).await
}

#[tokio::test]
async fn streaming_behaviours() {
    let s = agent(ConformanceFlags::default()).await;
    for prefix in [
        "tck-stream-001",
        "tck-stream-003",
        "tck-stream-ordering-001",
        "tck-stream-artifact-text",
        "tck-stream-artifact-file",
    ] {
        let evs = stream_states(&s.base, prefix).await;
        let kinds: Vec<&str> = evs.iter().map(|e| kind(&e.data)).collect();
        assert_eq!(
            kinds,
            ["task", "statusUpdate", "artifactUpdate", "statusUpdate"],
            "{prefix}"
        );
        assert_eq!(
            state_of(&evs[1].data).as_deref(),
            Some("TASK_STATE_WORKING")
        );
        assert_eq!(
            state_of(&evs[3].data).as_deref(),
            Some("TASK_STATE_COMPLETED")
        );
    }
    let evs = stream_states(&s.base, "tck-stream-artifact-chunked").await;
    let chunks: Vec<&Value> = evs
        .iter()
        .filter(|e| kind(&e.data) == "artifactUpdate")
        .map(|e| &e.data["result"]["artifactUpdate"])
        .collect();
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0]["artifact"]["parts"][0]["text"], "chunk-1 ");
    assert_eq!(
        (
            chunks[1]["append"].as_bool(),
            chunks[1]["lastChunk"].as_bool()
        ),
        (Some(true), Some(true))
    );
    assert_eq!(chunks[1]["artifact"]["parts"][0]["text"], "chunk-2");
    let evs = stream_states(&s.base, "tck-stream-002").await;
    assert!(evs.iter().all(|e| kind(&e.data) != "artifactUpdate"));
    assert_eq!(
        state_of(&evs.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    let evs = stream_states(&s.base, "tck-message-response").await;
    assert_eq!(evs.len(), 1);
    assert_eq!(kind(&evs[0].data), "message");
}

#[tokio::test]
async fn resubscribe_to_a_running_task() {
    let s = agent(ConformanceFlags::default()).await;
    let r = rpc(&s.base, "SendMessage", json!({"message": msg("test-resubscribe-message-id", "x"), "configuration": {"returnImmediately": true}})).await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let resp = rpc_stream(&s.base, "SubscribeToTask", json!({"id": id}), None).await;
    let evs = read_sse(resp, 100).await;
    assert_eq!(kind(&evs[0].data), "task");
    assert_eq!(
        state_of(&evs.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
}

#[tokio::test]
async fn capability_flags() {
    let off = agent(ConformanceFlags {
        no_streaming: true,
        ..Default::default()
    })
    .await;
    let v = rpc(
        &off.base,
        "SendStreamingMessage",
        json!({"message": msg("tck-stream-001", "x")}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32004);
    let v = rpc(
        &off.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "x", "url": "https://e.com/h"}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32003);
    let v = rpc(&off.base, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(v["error"]["code"], -32004);

    let on = agent(ConformanceFlags {
        extended_card: true,
        require_extension: vec!["urn:tck:ext".into()],
        ..Default::default()
    })
    .await;
    let v = rpc(
        &on.base,
        "SendMessage",
        json!({"message": msg("tck-complete-task", "x")}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32008);
    let resp = client()
        .post(&on.base)
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", "urn:tck:ext")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"}))
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert!(v["result"]["name"].as_str().unwrap().contains("extended"));
}
