//! The execution pipeline through real HTTP on 127.0.0.1: blocking and non-blocking sends,
//! streams, subscriptions with replay, cancellation, failures, multi-turn.

use std::time::Duration;

use a2a_tests::*;
use serde_json::{Value, json};

fn task_of(r: &Value) -> &Value {
    &r["result"]["task"]
}

#[tokio::test]
async fn blocking_send_completes_with_forced_artifact() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "hi there")}),
    )
    .await;
    let t = task_of(&r);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "hi there");
    // The answer appears once: in the artifact, not copied into the final status.
    assert!(t["status"].get("message").is_none(), "{r}");
    assert_eq!(t["history"][0]["role"], "ROLE_USER");
    assert_eq!(t["history"][0]["taskId"], t["id"]);
    assert!(t["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn return_immediately_then_background_completion() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "300"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let t = task_of(&r);
    let state = t["status"]["state"].as_str().unwrap();
    assert!(
        state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING",
        "{state}"
    );
    let id = t["id"].as_str().unwrap();
    let done = wait_task(&s.base, id, |t| {
        t["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], "slept 300");
}

/// The answer appears once by default (the artifact); `answer_in_status` also makes a
/// text-only answer the final status message, unless the skill set one.
#[tokio::test]
async fn where_the_answer_is() {
    let plain = serve_test_agent().await;
    let copy = serve(a2a_kit::server::AgentService::builder(TestAgent).execution(
        a2a_kit::runtime::ExecutionConfig {
            answer_in_status: true,
            ..Default::default()
        },
    ))
    .await;
    for (s, in_status) in [(&plain, false), (&copy, true)] {
        let r = rpc(
            &s.base,
            "SendMessage",
            json!({"message": to_skill("echo", "an answer")}),
        )
        .await;
        let t = task_of(&r);
        assert_eq!(t["artifacts"][0]["parts"][0]["text"], "an answer", "{r}");
        let status_text = t["status"]["message"]["parts"][0]["text"].as_str();
        assert_eq!(status_text, in_status.then_some("an answer"), "{r}");
        if in_status {
            assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
        }
    }
}

#[tokio::test]
async fn history_length_semantics() {
    // With the answer also in the final status message, a finished task has two messages.
    let s = serve(a2a_kit::server::AgentService::builder(TestAgent).execution(
        a2a_kit::runtime::ExecutionConfig {
            answer_in_status: true,
            ..Default::default()
        },
    ))
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "a"), "configuration": {"historyLength": 0}}),
    )
    .await;
    assert!(task_of(&r).get("history").is_none(), "{r}");
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let full = rpc(&s.base, "GetTask", json!({"id": id})).await;
    assert_eq!(
        full["result"]["history"].as_array().unwrap().len(),
        2,
        "user message + final agent message"
    );
    let one = rpc(&s.base, "GetTask", json!({"id": id, "historyLength": 1})).await;
    let h = one["result"]["history"].as_array().unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(
        h[0]["role"], "ROLE_AGENT",
        "the most recent message is kept"
    );
    let neg = rpc(&s.base, "GetTask", json!({"id": id, "historyLength": -1})).await;
    assert_eq!(neg["error"]["code"], -32602);
    assert!(
        neg["error"]["message"]
            .as_str()
            .unwrap()
            .contains("historyLength")
    );
}

#[tokio::test]
async fn streaming_chunks_in_order_and_close() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("chunks", "5")}),
        None,
    )
    .await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let evs = read_sse(resp, 100).await;
    let kinds: Vec<&str> = evs.iter().map(|e| kind(&e.data)).collect();
    assert_eq!(
        kinds,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    assert_eq!(
        state_of(&evs[0].data).as_deref(),
        Some("TASK_STATE_SUBMITTED")
    );
    assert_eq!(
        state_of(&evs[1].data).as_deref(),
        Some("TASK_STATE_WORKING")
    );
    assert_eq!(
        state_of(&evs[7].data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    let ids: Vec<u64> = evs.iter().map(|e| e.id.parse().unwrap()).collect();
    assert_eq!(
        ids,
        (1..=8).collect::<Vec<_>>(),
        "SSE ids are the log sequence"
    );
    let arts: Vec<&Value> = evs[2..7]
        .iter()
        .map(|e| &e.data["result"]["artifactUpdate"])
        .collect();
    let aid = &arts[0]["artifact"]["artifactId"];
    for (i, a) in arts.iter().enumerate() {
        assert_eq!(&a["artifact"]["artifactId"], aid);
        assert_eq!(a["append"].as_bool().unwrap_or(false), i > 0);
        assert_eq!(a["lastChunk"].as_bool().unwrap_or(false), i == 4);
        assert_eq!(a["artifact"]["parts"][0]["text"], format!("c{i} "));
    }
    // Completion persisted the assembled artifact and did not re-emit it.
    let task_id = evs[0].data["result"]["task"]["id"].as_str().unwrap();
    let t = rpc(&s.base, "GetTask", json!({"id": task_id})).await;
    let parts = t["result"]["artifacts"][0]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 5);
    assert_eq!(t["result"]["artifacts"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn direct_message_stream_is_one_message() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("direct", "yo")}),
        None,
    )
    .await;
    let evs = read_sse(resp, 10).await;
    assert_eq!(evs.len(), 1);
    assert_eq!(kind(&evs[0].data), "message");
    assert_eq!(
        evs[0].data["result"]["message"]["parts"][0]["text"],
        "direct: yo"
    );
    assert!(evs[0].data["result"]["message"]["contextId"].is_string());
    // Unary too, and no task was created.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("direct", "x")}),
    )
    .await;
    assert_eq!(r["result"]["message"]["role"], "ROLE_AGENT");
    let l = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(l["result"]["totalSize"], 0);
}

#[tokio::test]
async fn status_messages_are_indicators_kept_in_history() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("status", "")}),
        None,
    )
    .await;
    let evs = read_sse(resp, 100).await;
    let statuses: Vec<&Value> = evs
        .iter()
        .filter(|e| kind(&e.data) == "statusUpdate")
        .filter_map(|e| e.data["result"]["statusUpdate"]["status"].get("message"))
        .collect();
    assert_eq!(
        statuses.len(),
        3,
        "three progress messages (the final artifact is not text content)"
    );
    for (i, m) in statuses.iter().enumerate() {
        assert_eq!(m["metadata"]["kind"], "status-message");
        assert_eq!(m["parts"][0]["data"]["type"], "status-indicator");
        assert_eq!(m["parts"][0]["data"]["text"], format!("step {}", i + 1));
    }
    let task_id = evs[0].data["result"]["task"]["id"].as_str().unwrap();
    let t = rpc(&s.base, "GetTask", json!({"id": task_id})).await;
    let kinds: Vec<&Value> = t["result"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["metadata"]["kind"])
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "status-message").count(), 3);
    assert_eq!(t["result"]["artifacts"][0]["name"], "answer");
}

#[tokio::test]
async fn many_subscribers_see_identical_sequences() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "700"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let mut handles = Vec::new();
    for i in 0..8 {
        let (base, id) = (s.base.clone(), id.clone());
        handles.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(i * 30)).await;
            let resp = rpc_stream(&base, "SubscribeToTask", json!({"id": id}), None).await;
            read_sse(resp, 100).await
        }));
    }
    let mut tails = Vec::new();
    for h in handles {
        let evs = h.await.unwrap();
        assert_eq!(kind(&evs[0].data), "task", "a snapshot comes first");
        let snap_seq: u64 = evs[0].id.parse().unwrap();
        let seqs: Vec<u64> = evs[1..].iter().map(|e| e.id.parse().unwrap()).collect();
        let expected: Vec<u64> = (snap_seq + 1..=snap_seq + seqs.len() as u64).collect();
        assert_eq!(seqs, expected, "no gap, no duplicate after the snapshot");
        assert_eq!(
            state_of(&evs.last().unwrap().data).as_deref(),
            Some("TASK_STATE_COMPLETED")
        );
        tails.push(
            evs.iter()
                .map(|e| (e.id.clone(), kind(&e.data).to_string()))
                .collect::<Vec<_>>(),
        );
    }
    // Every subscriber ends with the same final events (log positions are global).
    let last: Vec<_> = tails.iter().map(|t| t.last().cloned()).collect();
    assert!(last.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test]
async fn last_event_id_replays_after_the_task_ended() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("chunks", "3")}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    // Fresh subscription to a terminal task: UnsupportedOperation.
    let fresh = rpc(&s.base, "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(fresh["error"]["code"], -32004, "{fresh}");
    // Reconnect after event 2: replay 3.. to the end, then close.
    let resp = rpc_stream(&s.base, "SubscribeToTask", json!({"id": id}), Some("2")).await;
    let evs = read_sse(resp, 100).await;
    let ids: Vec<&str> = evs.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["3", "4", "5", "6"]);
    assert_eq!(
        state_of(&evs[3].data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    // Caught up already: an empty stream that closes.
    let resp = rpc_stream(&s.base, "SubscribeToTask", json!({"id": id}), Some("6")).await;
    assert!(read_sse(resp, 100).await.is_empty());
    // Garbage Last-Event-ID is a client error naming the header.
    let bad = rpc_stream(&s.base, "SubscribeToTask", json!({"id": id}), Some("abc")).await;
    let v: Value = bad.json().await.unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Last-Event-ID")
    );
}

#[tokio::test]
async fn reconnect_mid_stream_sees_every_event_once() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "500"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let resp = rpc_stream(&s.base, "SubscribeToTask", json!({"id": id}), None).await;
    let first = read_sse(resp, 1).await; // snapshot only, then drop the connection
    let seen: u64 = first[0].id.parse().unwrap();
    let resp = rpc_stream(
        &s.base,
        "SubscribeToTask",
        json!({"id": id}),
        Some(&seen.to_string()),
    )
    .await;
    let rest = read_sse(resp, 100).await;
    let seqs: Vec<u64> = rest.iter().map(|e| e.id.parse().unwrap()).collect();
    assert_eq!(
        seqs,
        (seen + 1..=seen + seqs.len() as u64).collect::<Vec<_>>()
    );
    assert_eq!(
        state_of(&rest.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
}

#[tokio::test]
async fn cancel_fires_token_and_is_final() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "20000"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let c = rpc(&s.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED", "{c}");
    let again = rpc(&s.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002);
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("TASK_STATE_CANCELED")
    );
    let missing = rpc(&s.base, "CancelTask", json!({"id": "nope"})).await;
    assert_eq!(missing["error"]["code"], -32001);
}

#[tokio::test]
async fn canceled_is_never_overwritten_by_a_stubborn_skill() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("stubborn", "x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    wait_task(&s.base, &id, |t| {
        t["status"]["state"] == "TASK_STATE_WORKING"
    })
    .await;
    let c = rpc(&s.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED");
    tokio::time::sleep(Duration::from_millis(600)).await; // past the 300 ms grace: aborted
    let t = rpc(&s.base, "GetTask", json!({"id": id})).await;
    assert_eq!(t["result"]["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn cancel_races_with_completion() {
    let s = serve_test_agent().await;
    let mut handles = Vec::new();
    for i in 0..20u64 {
        let base = s.base.clone();
        handles.push(tokio::spawn(async move {
            let r = rpc(&base, "SendMessage", json!({"message": to_skill("slow", &(i % 5).to_string()), "configuration": {"returnImmediately": true}})).await;
            let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
            let c = rpc(&base, "CancelTask", json!({"id": id})).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            let t = rpc(&base, "GetTask", json!({"id": id})).await;
            (c, t)
        }));
    }
    for h in handles {
        let (c, t) = h.await.unwrap();
        let final_state = t["result"]["status"]["state"].as_str().unwrap().to_string();
        if c.get("result").is_some() {
            assert_eq!(
                final_state, "TASK_STATE_CANCELED",
                "a successful cancel is final"
            );
        } else {
            assert_eq!(c["error"]["code"], -32002);
            assert_eq!(final_state, "TASK_STATE_COMPLETED");
        }
    }
}

#[tokio::test]
async fn disconnect_is_not_cancel() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("slow", "300")}),
        None,
    )
    .await;
    let first = read_sse(resp, 1).await; // then the response is dropped
    let id = first[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = wait_task(&s.base, &id, |t| {
        t["status"]["state"]
            .as_str()
            .is_some_and(|s| s != "TASK_STATE_WORKING" && s != "TASK_STATE_SUBMITTED")
    })
    .await;
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
}

/// The id of the one task in `context`, once it exists.
async fn task_in_context(base: &str, context: &str) -> String {
    for _ in 0..200 {
        let l = rpc(base, "ListTasks", json!({"contextId": context})).await;
        if let Some(id) = l["result"]["tasks"][0]["id"].as_str() {
            return id.to_string();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no task in context {context}");
}

/// A blocking SendMessage runs the skill's first poll on the request's own task; a skill that
/// has to wait goes on in the background, so a client that gives up does not end it.
#[tokio::test]
async fn blocking_send_outlives_its_client() {
    let s = serve_test_agent().await;
    let mut message = to_skill("slow", "300");
    message["contextId"] = json!("outlives");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": message}});
    let gave_up = reqwest::Client::new()
        .post(&s.base)
        .header("A2A-Version", "1.0")
        .json(&body)
        .timeout(Duration::from_millis(100))
        .send()
        .await;
    assert!(
        gave_up.is_err(),
        "the client gave up before the skill ended"
    );
    let id = task_in_context(&s.base, "outlives").await;
    let t = wait_task(&s.base, &id, |t| {
        t["status"]["state"]
            .as_str()
            .is_some_and(|s| s != "TASK_STATE_WORKING" && s != "TASK_STATE_SUBMITTED")
    })
    .await;
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
}

/// A blocking SendMessage waiting on a skill that went on in the background returns as soon
/// as another client cancels the task, with the canceled task.
#[tokio::test]
async fn blocking_send_returns_when_its_task_is_canceled() {
    let s = serve_test_agent().await;
    for skill in ["slow", "stubborn"] {
        let context = format!("canceled-{skill}");
        let mut message = to_skill(skill, "20000");
        message["contextId"] = json!(context);
        let base = s.base.clone();
        let blocking =
            tokio::spawn(
                async move { rpc(&base, "SendMessage", json!({"message": message})).await },
            );
        let id = task_in_context(&s.base, &context).await;
        wait_task(&s.base, &id, |t| {
            t["status"]["state"] == "TASK_STATE_WORKING"
        })
        .await;
        let c = rpc(&s.base, "CancelTask", json!({"id": id})).await;
        assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED", "{c}");
        let r = tokio::time::timeout(Duration::from_secs(5), blocking)
            .await
            .expect("the blocking call returns")
            .expect("join");
        assert_eq!(
            task_of(&r)["status"]["state"],
            "TASK_STATE_CANCELED",
            "{skill}: {r}"
        );
    }
}

#[tokio::test]
async fn failures_end_the_task_with_a_reason() {
    let s = serve_test_agent().await;
    for (skill, state, text) in [
        ("panic", "TASK_STATE_FAILED", "panicked: boom"),
        ("fail", "TASK_STATE_FAILED", "it broke"),
        ("reject", "TASK_STATE_REJECTED", "not today"),
    ] {
        let r = rpc(
            &s.base,
            "SendMessage",
            json!({"message": to_skill(skill, "x")}),
        )
        .await;
        let t = task_of(&r);
        assert_eq!(t["status"]["state"], state, "{skill}: {r}");
        let msg = t["status"]["message"]["parts"][0]["text"].as_str().unwrap();
        assert!(msg.contains(text), "{skill}: {msg}");
    }
}

#[tokio::test]
async fn skill_timeout_fails_the_task() {
    let s = serve(a2a_kit::server::AgentService::builder(TestAgent).execution(
        a2a_kit::runtime::ExecutionConfig {
            skill_timeout: Some(Duration::from_millis(100)),
            ..Default::default()
        },
    ))
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "5000")}),
    )
    .await;
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_FAILED");
    assert!(
        task_of(&r)["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
}

/// Waiting for a reply is not running: a skill whose questions were answered only after
/// longer than its timeout still completes.
#[tokio::test]
async fn skill_timeout_does_not_count_waits_for_replies() {
    let s = serve(a2a_kit::server::AgentService::builder(TestAgent).execution(
        a2a_kit::runtime::ExecutionConfig {
            skill_timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        },
    ))
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("interview", "x")}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    for answer in ["Ada", "London"] {
        assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut m = user_text(answer);
        m["taskId"] = json!(id);
        let r2 = rpc(&s.base, "SendMessage", json!({"message": m})).await;
        let t = task_of(&r2);
        if answer == "London" {
            assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{r2}");
            assert_eq!(t["artifacts"][0]["parts"][0]["text"], "x: Ada from London");
        } else {
            assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{r2}");
        }
    }
}

#[tokio::test]
async fn ask_suspends_and_resumes() {
    let s = serve_test_agent().await;
    let m1 = to_skill("ask", "start");
    let r = rpc(&s.base, "SendMessage", json!({"message": m1})).await;
    let t = task_of(&r);
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{r}");
    assert_eq!(
        t["status"]["message"]["parts"][0]["text"],
        "What is your name?"
    );
    let (id, ctx) = (
        t["id"].as_str().unwrap().to_string(),
        t["contextId"].as_str().unwrap().to_string(),
    );
    // Follow-up with taskId only: the context is inferred.
    let mut m2 = user_text("Ada");
    m2["taskId"] = json!(id);
    let r2 = rpc(&s.base, "SendMessage", json!({"message": m2})).await;
    let t2 = task_of(&r2);
    assert_eq!(t2["status"]["state"], "TASK_STATE_COMPLETED", "{r2}");
    assert_eq!(t2["artifacts"][0]["parts"][0]["text"], "Hello, Ada");
    assert_eq!(t2["contextId"], ctx);
    let users: Vec<&Value> = t2["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .collect();
    assert_eq!(users.len(), 2);
    assert_eq!(users[1]["parts"][0]["text"], "Ada");
}

#[tokio::test]
async fn ask_over_a_stream_closes_on_input_required() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("ask", "go")}),
        None,
    )
    .await;
    let evs = read_sse(resp, 100).await;
    assert_eq!(
        state_of(&evs.last().unwrap().data).as_deref(),
        Some("TASK_STATE_INPUT_REQUIRED")
    );
    let id = evs[0].data["result"]["task"]["id"].as_str().unwrap();
    let mut m = user_text("Grace");
    m["taskId"] = json!(id);
    let resp = rpc_stream(&s.base, "SendStreamingMessage", json!({"message": m}), None).await;
    let evs = read_sse(resp, 100).await;
    assert_eq!(kind(&evs[0].data), "task");
    assert_eq!(
        state_of(evs.last().map(|e| &e.data).unwrap()).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
}

#[tokio::test]
async fn stateless_multi_turn_keeps_every_message() {
    let s = serve_test_agent().await;
    let first = to_skill("stateless", "one");
    let dup_id = first["messageId"].clone();
    let r = rpc(&s.base, "SendMessage", json!({"message": first})).await;
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let ctx = task_of(&r)["contextId"].clone();
    for (n, expect) in [
        (2, "TASK_STATE_INPUT_REQUIRED"),
        (3, "TASK_STATE_COMPLETED"),
    ] {
        // The same messageId every time: duplicates are accepted and kept.
        let m = json!({"messageId": dup_id, "role": "ROLE_USER", "taskId": id, "contextId": ctx, "parts": [{"text": format!("msg {n}")}]});
        let r = rpc(&s.base, "SendMessage", json!({"message": m})).await;
        assert_eq!(task_of(&r)["status"]["state"], expect, "{r}");
    }
    let t = rpc(&s.base, "GetTask", json!({"id": id})).await;
    let users: Vec<&str> = t["result"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["one", "msg 2", "msg 3"]);
    assert_eq!(t["result"]["artifacts"][0]["parts"][0]["text"], "got 3");
}

#[tokio::test]
async fn multi_turn_errors() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "done")}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let mut m = user_text("more");
    m["taskId"] = json!(id);
    let e = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(e["error"]["code"], -32004, "terminal task: {e}");

    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("ask", "x")}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let mut m = user_text("more");
    m["taskId"] = json!(id);
    m["contextId"] = json!("some-other-context");
    let e = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("contextId")
    );

    let mut m = user_text("more");
    m["taskId"] = json!("no-such-task");
    let e = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(e["error"]["code"], -32001);
}

#[tokio::test]
async fn auth_required_resumes() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("auth", "x")}),
    )
    .await;
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_AUTH_REQUIRED");
    let mut m = user_text("token ok");
    m["taskId"] = task_of(&r)["id"].clone();
    let r = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn list_tasks_filters_and_pages() {
    let s = serve_test_agent().await;
    let ctx = "ctx-list";
    for i in 0..7 {
        let mut m = to_skill("echo", &format!("n{i}"));
        m["contextId"] = json!(ctx);
        rpc(&s.base, "SendMessage", json!({"message": m})).await;
    }
    rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("reject", "x")}),
    )
    .await;
    let mut seen = Vec::new();
    let mut token = String::new();
    for page in 0.. {
        let r = rpc(
            &s.base,
            "ListTasks",
            json!({"contextId": ctx, "pageSize": 3, "pageToken": token}),
        )
        .await;
        let res = &r["result"];
        assert_eq!(res["totalSize"], 7);
        assert_eq!(res["pageSize"], 3);
        for t in res["tasks"].as_array().unwrap() {
            assert!(
                t.get("artifacts").is_none(),
                "artifacts omitted unless asked"
            );
            seen.push((
                t["status"]["timestamp"].as_str().unwrap().to_string(),
                t["id"].as_str().unwrap().to_string(),
            ));
        }
        token = res["nextPageToken"]
            .as_str()
            .expect("nextPageToken always present")
            .to_string();
        if token.is_empty() {
            assert_eq!(page, 2);
            break;
        }
    }
    assert_eq!(seen.len(), 7);
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, sorted, "newest first");
    let with = rpc(
        &s.base,
        "ListTasks",
        json!({"contextId": ctx, "includeArtifacts": true, "pageSize": 1}),
    )
    .await;
    assert!(with["result"]["tasks"][0]["artifacts"].is_array());
    let rej = rpc(
        &s.base,
        "ListTasks",
        json!({"status": "TASK_STATE_REJECTED"}),
    )
    .await;
    assert_eq!(rej["result"]["totalSize"], 1);
    let future = rpc(
        &s.base,
        "ListTasks",
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(future["result"]["totalSize"], 0);
    assert_eq!(future["result"]["nextPageToken"], "");
    for bad in [
        json!({"pageSize": 101}),
        json!({"pageSize": -1}),
        json!({"historyLength": -1}),
        json!({"status": "TASK_STATE_BOGUS"}),
        json!({"pageToken": "garbage!"}),
    ] {
        let e = rpc(&s.base, "ListTasks", bad.clone()).await;
        assert_eq!(e["error"]["code"], -32602, "{bad}: {e}");
    }
}

#[tokio::test]
async fn reconnect_at_every_point_replays_exactly_the_rest() {
    let s = serve_test_agent().await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("chunks", "6")}),
        None,
    )
    .await;
    let full = read_sse(resp, 100).await;
    let task_id = full[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let all: Vec<(String, Value)> = full
        .iter()
        .map(|e| (e.id.clone(), e.data["result"].clone()))
        .collect();
    // Resume after every possible event: the replay is exactly the suffix, byte for byte.
    for k in 1..all.len() {
        let resp = rpc_stream(
            &s.base,
            "SubscribeToTask",
            json!({"id": task_id}),
            Some(&all[k - 1].0),
        )
        .await;
        let rest: Vec<(String, Value)> = read_sse(resp, 100)
            .await
            .into_iter()
            .map(|e| (e.id, e.data["result"].clone()))
            .collect();
        assert_eq!(rest, all[k..].to_vec(), "resume after event {k}");
    }
}

#[tokio::test]
async fn graceful_shutdown_leaves_no_task_working() {
    let s = serve_test_agent().await;
    let quick = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "100"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let stuck = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("stubborn", "x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    s.service.shutdown(Duration::from_millis(500)).await;
    let quick = rpc(&s.base, "GetTask", json!({"id": task_of(&quick)["id"]})).await;
    assert_eq!(
        quick["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "finished within the deadline"
    );
    let stuck = rpc(&s.base, "GetTask", json!({"id": task_of(&stuck)["id"]})).await;
    assert_eq!(stuck["result"]["status"]["state"], "TASK_STATE_FAILED");
    assert!(
        stuck["result"]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("shut down")
    );
}

/// A task waiting for the user's reply does not hold a graceful shutdown up to its deadline;
/// with a store in memory it ends FAILED (it would be lost with the process anyway).
#[tokio::test]
async fn shutdown_does_not_wait_for_a_question() {
    let s = serve_test_agent().await;
    let asked = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("ask", "x")}),
    )
    .await;
    assert_eq!(
        task_of(&asked)["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let started = std::time::Instant::now();
    s.service.shutdown(Duration::from_secs(30)).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the deadline is for working tasks"
    );
    let t = rpc(&s.base, "GetTask", json!({"id": task_of(&asked)["id"]})).await;
    assert_eq!(t["result"]["status"]["state"], "TASK_STATE_FAILED", "{t}");
}

#[tokio::test]
async fn status_styles_are_configurable() {
    use a2a_kit::runtime::{ExecutionConfig, StatusStyle};
    for (style, expect) in [(StatusStyle::Text, Some("text")), (StatusStyle::None, None)] {
        let s = serve(a2a_kit::server::AgentService::builder(TestAgent).execution(
            ExecutionConfig {
                status_style: style,
                ..Default::default()
            },
        ))
        .await;
        let resp = rpc_stream(
            &s.base,
            "SendStreamingMessage",
            json!({"message": to_skill("status", "")}),
            None,
        )
        .await;
        let evs = read_sse(resp, 100).await;
        let working: Vec<&Value> = evs
            .iter()
            .filter(|e| state_of(&e.data).as_deref() == Some("TASK_STATE_WORKING"))
            .map(|e| &e.data["result"]["statusUpdate"]["status"])
            .collect();
        assert_eq!(
            working.len(),
            4,
            "the initial WORKING and three progress updates"
        );
        match expect {
            Some(key) => assert_eq!(working[1]["message"]["parts"][0][key], "step 1"),
            None => assert!(working.iter().all(|s| s.get("message").is_none())),
        }
    }
}

#[tokio::test]
async fn mounts_under_a_prefix_in_an_app_with_state() {
    #[derive(Clone)]
    struct AppState {
        greeting: &'static str,
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let agent = a2a_kit::server::AgentService::builder(TestAgent)
        .public_url(format!("{base}/agents/test"))
        .build()
        .expect("a valid configuration");
    let app = axum::Router::new()
        .route(
            "/health",
            axum::routing::get(
                |axum::extract::State(s): axum::extract::State<AppState>| async move { s.greeting },
            ),
        )
        .nest("/agents/test", a2a_kit_axum::router(&agent))
        .merge(a2a_kit_axum::well_known_router(&agent))
        .with_state(AppState { greeting: "ok" });
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    assert_eq!(
        client()
            .get(format!("{base}/health"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "ok"
    );
    let card: Value = client()
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = card["supportedInterfaces"][0]["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(url, format!("{base}/agents/test"));
    let r = rpc(
        &url,
        "SendMessage",
        json!({"message": to_skill("echo", "nested")}),
    )
    .await;
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_COMPLETED");
    let id = task_of(&r)["id"].as_str().unwrap();
    let got = client()
        .get(format!("{url}/tasks/{id}"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    server.abort();
}

/// The events of a finished task as `Last-Event-ID: 0` replays them, without what differs
/// between two runs (ids, timestamps).
async fn replayed(base: &str, id: &str) -> Vec<Value> {
    let resp = rpc_stream(base, "SubscribeToTask", json!({"id": id}), Some("0")).await;
    let mut events = Vec::new();
    for ev in read_sse(resp, 100).await {
        let mut data = ev.data["result"].clone();
        strip_run_specific(&mut data);
        events.push(json!({"id": ev.id, "event": data}));
    }
    events
}

fn strip_run_specific(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in [
                "id",
                "taskId",
                "contextId",
                "messageId",
                "artifactId",
                "timestamp",
            ] {
                map.remove(key);
            }
            map.values_mut().for_each(strip_run_specific);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_run_specific),
        _ => {}
    }
}

/// A blocking SendMessage stores a task its skill finishes in the first poll once, finished
/// (it is staged); the task and its log are exactly those of a task stored as it went (one
/// sent with `returnImmediately`).
#[tokio::test]
async fn a_staged_task_is_stored_as_it_would_have_been_step_by_step() {
    let s = serve_test_agent().await;
    for skill in ["status", "echo", "chunks", "recall", "fail", "reject"] {
        let staged = rpc(
            &s.base,
            "SendMessage",
            json!({"message": to_skill(skill, "2")}),
        )
        .await;
        let staged = task_of(&staged)["id"].as_str().unwrap().to_string();
        let stepwise = rpc(
            &s.base,
            "SendMessage",
            json!({"message": to_skill(skill, "2"), "configuration": {"returnImmediately": true}}),
        )
        .await;
        let stepwise = task_of(&stepwise)["id"].as_str().unwrap().to_string();
        let mut want = wait_task(&s.base, &stepwise, |t| {
            t["status"]["state"]
                .as_str()
                .is_some_and(|s| s != "TASK_STATE_WORKING" && s != "TASK_STATE_SUBMITTED")
        })
        .await;
        let mut got = rpc(&s.base, "GetTask", json!({"id": staged})).await["result"].clone();
        strip_run_specific(&mut want);
        strip_run_specific(&mut got);
        assert_eq!(got, want, "{skill}: the task");
        let (got, want) = (
            replayed(&s.base, &staged).await,
            replayed(&s.base, &stepwise).await,
        );
        assert!(want.len() >= 3, "{skill}: {want:?}");
        assert_eq!(got, want, "{skill}: the event log");
    }
}

/// A staged skill that reads its history sees what a stored task would give it: the user's
/// message and the status message it just sent.
#[tokio::test]
async fn a_staged_skill_reads_its_history() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("recall", "hi")}),
    )
    .await;
    assert_eq!(
        task_of(&r)["artifacts"][0]["parts"][0]["text"],
        "2 messages: ROLE_USER ROLE_AGENT",
        "{r}"
    );
}

/// Observers see a staged task's events once it is stored, in log order.
#[tokio::test]
async fn observers_see_a_staged_tasks_events_in_order() {
    use a2a_kit::protocol::StreamResponse;
    use a2a_kit::runtime::EventObserver;
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, u64, Option<String>)>>);
    impl EventObserver for Seen {
        fn on_event(&self, task_id: &str, seq: u64, event: &StreamResponse) {
            let state = event.state().map(|s| s.as_str().to_string());
            self.0
                .lock()
                .unwrap()
                .push((task_id.to_string(), seq, state));
        }
    }
    let seen = Arc::new(Seen::default());
    let observer = seen.clone();
    let s = serve(
        a2a_kit::server::AgentService::builder(TestAgent)
            .observe_with(move |_| observer as Arc<dyn EventObserver>),
    )
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "hi")}),
    )
    .await;
    let id = task_of(&r)["id"].as_str().unwrap().to_string();
    let seen = seen.0.lock().unwrap().clone();
    let working = Some("TASK_STATE_WORKING".to_string());
    let completed = Some("TASK_STATE_COMPLETED".to_string());
    assert_eq!(
        seen,
        [
            (id.clone(), 2, working),
            (id.clone(), 3, None),
            (id, 4, completed)
        ]
    );
}

/// When a staged task cannot be stored (a full store whose tasks are all live), the blocking
/// SendMessage fails with the store's reason, and nothing else changes.
#[tokio::test]
async fn a_staged_task_the_store_refuses_fails_the_request() {
    use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
    let s = serve(
        a2a_kit::server::AgentService::builder(TestAgent).task_manager(InMemoryTaskManager::new(
            InMemoryConfig {
                max_tasks: 1,
                terminal_ttl: None,
            },
        )),
    )
    .await;
    let asked = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("ask", "")}),
    )
    .await;
    assert_eq!(
        task_of(&asked)["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let full = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "hi")}),
    )
    .await;
    assert_eq!(full["error"]["code"], -32603, "{full}");
    assert!(
        full["error"]["message"].as_str().unwrap().contains("full"),
        "{full}"
    );
    // The same for a skill that has to wait (it is dropped, its task never existed).
    let full = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "50")}),
    )
    .await;
    assert_eq!(full["error"]["code"], -32603, "{full}");
    let listed = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    // The live task is untouched and still resumes.
    let id = task_of(&asked)["id"].as_str().unwrap();
    let mut reply = user_text("Ada");
    reply["taskId"] = json!(id);
    let done = rpc(&s.base, "SendMessage", json!({"message": reply})).await;
    assert_eq!(
        task_of(&done)["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{done}"
    );
}

/// A typed SendMessage (the gRPC binding's, and an in-process caller's) answers with the
/// task as its own write stored it: the same task GetTask reads back, in every view and
/// store.
#[tokio::test]
async fn a_typed_send_answers_with_the_task_as_stored() {
    use a2a_kit::protocol::{
        GetTaskRequest, Message, Metadata, Part, Role, SendMessageConfiguration,
        SendMessageRequest, SendMessageResponse,
    };
    use a2a_kit::request::RequestContext;
    use a2a_kit::server::AgentService;
    let dir = std::env::temp_dir().join(format!("a2a-typed-send-{}", uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = a2a_kit::store::SqliteTaskManager::open(dir.join("tasks.db"))
        .await
        .unwrap();
    let stores: Vec<(&str, a2a_kit::server::AgentServiceBuilder)> = vec![
        ("memory", AgentService::builder(TestAgent)),
        (
            "sqlite",
            AgentService::builder(TestAgent).task_manager(sqlite),
        ),
    ];
    for (store, builder) in stores {
        let service = builder.build().unwrap();
        let cx = RequestContext::new();
        for (skill, history_length) in [("echo", None), ("recall", Some(1)), ("recall", Some(0))] {
            let metadata: Metadata = json!({"skillId": skill, "note": {"n": 1}})
                .as_object()
                .cloned()
                .unwrap()
                .into();
            let mut message = Message::new(Role::User, vec![Part::text("typed")]);
            message.metadata = Some(metadata);
            let req = SendMessageRequest {
                message,
                configuration: Some(SendMessageConfiguration {
                    history_length,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let SendMessageResponse::Task(answered) = service.send_message(&cx, req).await.unwrap()
            else {
                panic!("{store} {skill}: a task");
            };
            let stored = service
                .get_task(
                    &cx,
                    GetTaskRequest {
                        id: answered.id.clone(),
                        history_length,
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            assert_eq!(answered, stored, "{store} {skill} {history_length:?}");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
