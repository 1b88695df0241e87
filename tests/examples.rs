//! Every example agent through real HTTP on 127.0.0.1, plus a snapshot of each card.

use std::time::Duration;

use a2a_examples::{hello, streaming, travel, workshop};
use a2a_tests::*;
use serde_json::{Value, json};

fn snapshot_card(card: &a2a_kit::protocol::AgentCard) -> Value {
    sorted(serde_json::to_value(card).expect("card serializes"))
}

/// Object keys in alphabetical order, whether or not serde_json keeps insertion order (it does
/// when a crate turns on `preserve_order`, as the `llm` feature's model library does).
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[test]
fn cards_snapshot() {
    let url = "http://127.0.0.1:3000";
    insta::assert_json_snapshot!(
        "hello_card",
        snapshot_card(&hello::HelloAgent::agent_card(url))
    );
    insta::assert_json_snapshot!(
        "streaming_card",
        snapshot_card(&streaming::CounterAgent::agent_card(url))
    );
    insta::assert_json_snapshot!(
        "travel_card",
        snapshot_card(&travel::TravelAgent::agent_card(url))
    );
    insta::assert_json_snapshot!(
        "workshop_card",
        snapshot_card(&workshop::WorkshopAgent::agent_card(url))
    );
}

/// The hello skill answers with a direct Message over both bindings, blocking and streamed:
/// no task is created, and the card says so.
#[tokio::test]
async fn hello_greets_with_a_message_over_both_bindings() {
    let s = serve(hello::a2a()).await;
    let mut context = json!("ctx-hello");
    for (rest, name) in [(false, "Alice"), (true, "Bob")] {
        let mut message = user_text(name);
        message["contextId"] = context.clone();
        let v: Value = send_message(&s.base, rest, message, None)
            .await
            .json()
            .await
            .unwrap();
        let reply = if rest {
            &v["message"]
        } else {
            &v["result"]["message"]
        };
        assert_eq!(reply["role"], "ROLE_AGENT", "{v}");
        assert_eq!(reply["parts"][0]["text"], format!("Hello, {name}!"), "{v}");
        assert_eq!(
            reply["contextId"], context,
            "the reply keeps the context: {v}"
        );
        assert!(
            reply.get("taskId").is_none(),
            "a Message reply names no task: {v}"
        );
        assert!(
            v.get("task").is_none() && v["result"].get("task").is_none(),
            "{v}"
        );
        context = json!("ctx-hello-rest");
    }

    // Streamed, it is one Message, then the stream closes (JSON-RPC and HTTP+JSON).
    let events = stream_message(&s.base, user_text("Carol")).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["message"]["parts"][0]["text"], "Hello, Carol!");
    let resp = client()
        .post(format!("{}/message:stream", s.base))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": user_text("Dan")}))
        .send()
        .await
        .unwrap();
    let events = read_sse(resp, 10).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].data["message"]["parts"][0]["text"], "Hello, Dan!");

    // No task was created by any of them.
    let list = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 0, "{list}");

    // The card names the skill as one that answers with a Message.
    let card = public_card(&s.base).await;
    let ext = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == a2a_kit::skill::MESSAGE_REPLY_EXTENSION)
        .unwrap_or_else(|| panic!("the message-reply extension: {card}"));
    assert_eq!(ext["params"]["skills"], json!(["greet"]));
    assert!(ext.get("required").is_none_or(|r| r == false), "{ext}");
}

#[tokio::test]
async fn streaming_counts_in_chunks() {
    let s = serve(streaming::a2a()).await;
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": user_text("4")}),
        None,
    )
    .await;
    let evs = read_sse(resp, 100).await;
    let chunks: Vec<&Value> = evs
        .iter()
        .filter(|e| kind(&e.data) == "artifactUpdate")
        .map(|e| &e.data["result"]["artifactUpdate"])
        .collect();
    assert_eq!(chunks.len(), 5, "4 numbers and the closing chunk");
    assert_eq!(chunks[0]["artifact"]["parts"][0]["text"], "1\n");
    assert_eq!(chunks[4]["lastChunk"], true);
    assert!(chunks[1..].iter().all(|c| c["append"] == true));
    assert_eq!(
        state_of(&evs.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    // A plain SendMessage gets the assembled artifact (the empty closing part is not kept).
    let r = rpc(&s.base, "SendMessage", json!({"message": user_text("3")})).await;
    let parts = r["result"]["task"]["artifacts"][0]["parts"]
        .as_array()
        .unwrap();
    let text: String = parts.iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert_eq!(text, "1\n2\n3\n");
    assert_eq!(parts.len(), 3);
}

#[tokio::test]
async fn travel_typed_skills() {
    let s = serve(travel::a2a()).await;
    let book = json!({"messageId": uuid(), "role": "ROLE_USER", "metadata": {"skillId": "book-flight"},
        "parts": [{"data": {"from": "LIS", "to": "AMS", "date": "2026-12-01", "passengers": 2}}]});
    let r = rpc(&s.base, "SendMessage", json!({"message": book})).await;
    let booking = &r["result"]["task"]["artifacts"][0]["parts"][0]["data"];
    assert_eq!(booking["route"], "LIS-AMS");
    assert_eq!(booking["price_eur"], 178);

    // A payload that does not deserialize: InvalidParams naming the skill and the serde path.
    let bad = json!({"messageId": uuid(), "role": "ROLE_USER", "metadata": {"skillId": "book-flight"},
        "parts": [{"data": {"from": "LIS", "to": "AMS", "date": "2026-12-01", "passengers": "two"}}]});
    let r = rpc(&s.base, "SendMessage", json!({"message": bad})).await;
    assert_eq!(r["error"]["code"], -32602);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("book-flight") && msg.contains("message.parts[0].data.passengers"),
        "{msg}"
    );

    // A typed error rejects the task.
    let zero = json!({"messageId": uuid(), "role": "ROLE_USER", "metadata": {"skillId": "book-flight"},
        "parts": [{"data": {"from": "LIS", "to": "AMS", "date": "2026-12-01", "passengers": 0}}]});
    let r = rpc(&s.base, "SendMessage", json!({"message": zero})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"],
        "TASK_STATE_REJECTED"
    );

    // JSON in a text part works for typed skills too.
    let conv = json!({"messageId": uuid(), "role": "ROLE_USER", "metadata": {"skillId": "convert"},
        "parts": [{"text": "{\"amount\": 100, \"from\": \"EUR\", \"to\": \"USD\"}"}]});
    let r = rpc(&s.base, "SendMessage", json!({"message": conv})).await;
    assert_eq!(
        r["result"]["task"]["artifacts"][0]["parts"][0]["data"]["amount"],
        108.0
    );

    // Free text goes to the default skill.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("somewhere warm")}),
    )
    .await;
    assert!(
        r["result"]["task"]["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Lisbon")
    );

    let card = travel::TravelAgent::agent_card("http://x");
    let ext = &card.capabilities.extensions[0];
    assert_eq!(
        ext.uri.as_deref(),
        Some(a2a_kit::skill::SKILL_SCHEMA_EXTENSION)
    );
    let params = ext.params.as_ref().unwrap();
    assert!(params["skills"]["book-flight"]["input"]["properties"]["passengers"].is_object());
    assert!(params["skills"]["book-flight"]["output"]["properties"]["confirmation"].is_object());
}

/// The texts of a task's status messages (progress indicators), oldest first.
fn status_texts(task: &Value) -> Vec<String> {
    task["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metadata"]["kind"] == "status-message")
        .map(|m| m["parts"][0]["data"]["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn workshop_runs_the_whole_pipeline() {
    let s = serve(workshop::a2a_with(
        workshop::WorkshopAgent::new(Duration::from_millis(250)),
        Duration::from_millis(100),
    ))
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("a stool")}),
    )
    .await;
    let t = &r["result"]["task"];
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{r}");
    assert!(
        t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Which finish")
    );
    let id = t["id"].as_str().unwrap().to_string();

    // A reply the skill cannot use keeps the task waiting, with the reason.
    let mut m = user_text("plastic");
    m["taskId"] = json!(id);
    let r = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );

    let mut m = user_text("oak");
    m["taskId"] = json!(id);
    let resp = rpc_stream(&s.base, "SendStreamingMessage", json!({"message": m}), None).await;
    let evs = read_sse(resp, 200).await;
    let last = evs.last().unwrap();
    assert_eq!(
        state_of(&last.data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    assert!(
        last.data["result"]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("a stool, finished in oak")
    );
    let chunks = evs
        .iter()
        .filter(|e| kind(&e.data) == "artifactUpdate")
        .count();
    assert_eq!(chunks, 4);

    let t = rpc(&s.base, "GetTask", json!({"id": id})).await;
    let statuses = status_texts(&t["result"]);
    assert!(
        statuses.iter().any(|s| s.starts_with("Step 1/4")),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().any(|s| s.starts_with("Still working")),
        "the narrator spoke before the first artifact: {statuses:?}"
    );
    let mut dedup = statuses.clone();
    dedup.dedup();
    assert_eq!(dedup, statuses, "the narrator never repeats itself");
}

/// With its default settings (as `cargo run --bin workshop` runs it), the workshop's
/// narrator speaks while the materials are gathered, before the first artifact.
#[tokio::test]
async fn workshop_narrates_in_a_normal_run() {
    let s = serve(workshop::a2a()).await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("a shelf")}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let mut m = user_text("walnut");
    m["taskId"] = json!(id);
    let r = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );
    let statuses = status_texts(&r["result"]["task"]);
    // The narrator stops at the first artifact, so it spoke before it.
    assert!(
        statuses.iter().any(|s| s.starts_with("Still working")),
        "the narrator never spoke: {statuses:?}"
    );
}

#[tokio::test]
async fn workshop_cancel_mid_build() {
    let s = serve(workshop::a2a_with(
        workshop::WorkshopAgent::new(Duration::from_secs(5)),
        Duration::from_secs(60),
    ))
    .await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("a table")}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let mut m = user_text("walnut");
    m["taskId"] = json!(id);
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": m, "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(r["result"]["task"]["status"]["state"], "TASK_STATE_WORKING");
    let c = rpc(&s.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = rpc(&s.base, "GetTask", json!({"id": id})).await;
    assert_eq!(t["result"]["status"]["state"], "TASK_STATE_CANCELED");
}
