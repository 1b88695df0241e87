//! The fake model server (`support_model.rs`) speaks both wire formats as scripted.

#[path = "support_model.rs"]
mod support_model;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use support_model::{FakeModel, Reply, Step, text, tool};

const OPENAI: &str = "/v1/chat/completions";
const ANTHROPIC: &str = "/v1/messages";

/// POST of `body` to the fake model's `path`, with a bearer key.
async fn post_to_fake(fake: &FakeModel, path: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{path}", fake.base))
        .header("authorization", "Bearer sk-test")
        .json(&body)
        .send()
        .await
        .expect("send")
}

/// A chat request body, streamed or not.
fn chat_request(stream: bool) -> Value {
    json!({"model": "m1", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
}

/// The SSE events of a body: `(event name, data)`.
fn events(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = None;
            let mut data = String::new();
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            (name, data)
        })
        .collect()
}

fn json_of(data: &str) -> Value {
    serde_json::from_str(data).unwrap()
}

async fn sse_events(fake: &FakeModel, path: &str) -> Vec<(Option<String>, String)> {
    let resp = post_to_fake(fake, path, chat_request(true)).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    events(&resp.text().await.unwrap())
}

#[tokio::test]
async fn openai_stream_text_and_tool() {
    let fake = FakeModel::start().await;
    fake.push(Reply::Steps(vec![text("Hel"), text("lo")]));
    let ev = sse_events(&fake, OPENAI).await;
    let datas: Vec<&str> = ev.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(datas.last(), Some(&"[DONE]"));
    let first = json_of(datas[0]);
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(first["model"], "m1");
    assert_eq!(
        first["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(json_of(datas[1])["choices"][0]["delta"]["content"], "Hel");
    assert_eq!(json_of(datas[2])["choices"][0]["delta"]["content"], "lo");
    assert_eq!(json_of(datas[3])["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        json_of(datas[4])["usage"],
        json!({"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})
    );
    assert_eq!(datas.len(), 6);

    fake.usage(3, 4);
    fake.push(Reply::Steps(vec![tool(
        "call_1",
        "ask",
        &["{\"q\":", "\"x\"}"],
    )]));
    let ev = sse_events(&fake, OPENAI).await;
    let d: Vec<Value> = ev[..ev.len() - 1].iter().map(|e| json_of(&e.1)).collect();
    assert_eq!(
        d[1]["choices"][0]["delta"]["tool_calls"][0],
        json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "ask", "arguments": ""}})
    );
    assert_eq!(
        d[2]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
        "{\"q\":"
    );
    assert_eq!(
        d[3]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
        "\"x\"}"
    );
    assert_eq!(d[4]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(d[5]["usage"]["total_tokens"], 7);
}

#[tokio::test]
async fn anthropic_stream_text_and_tool() {
    let fake = FakeModel::start().await;
    fake.push(Reply::Steps(vec![
        text("a"),
        text("b"),
        tool("toolu_1", "ask", &["{\"q\":", "1}"]),
    ]));
    let ev = sse_events(&fake, ANTHROPIC).await;
    for (name, data) in &ev {
        assert_eq!(name.as_deref(), json_of(data)["type"].as_str());
    }
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    let d: Vec<Value> = ev.iter().map(|e| json_of(&e.1)).collect();
    assert_eq!(d[0]["message"]["usage"]["input_tokens"], 7);
    assert_eq!(d[3]["delta"], json!({"type": "text_delta", "text": "b"}));
    assert_eq!(
        d[5]["content_block"],
        json!({"type": "tool_use", "id": "toolu_1", "name": "ask", "input": {}})
    );
    assert_eq!(d[6]["index"], 1);
    assert_eq!(
        d[7]["delta"],
        json!({"type": "input_json_delta", "partial_json": "1}"})
    );
    assert_eq!(d[9]["delta"]["stop_reason"], "tool_use");
    assert_eq!(d[9]["usage"]["output_tokens"], 5);

    fake.push(Reply::Steps(vec![text("x")]));
    let ev = sse_events(&fake, ANTHROPIC).await;
    assert_eq!(
        json_of(&ev[ev.len() - 2].1)["delta"]["stop_reason"],
        "end_turn"
    );
}

#[tokio::test]
async fn non_stream_replies_are_folded() {
    let fake = FakeModel::start().await;
    let steps = vec![
        text("Hel"),
        text("lo"),
        tool("c1", "ask", &["{\"q\":", "2}"]),
    ];
    fake.push(Reply::Steps(steps.clone()));
    fake.push(Reply::Steps(steps));
    fake.push(Reply::Steps(vec![tool("c2", "ask", &["{}"])]));

    let v: Value = post_to_fake(&fake, OPENAI, chat_request(false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        v["choices"][0]["message"],
        json!({"role": "assistant", "content": "Hello", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ask", "arguments": "{\"q\":2}"}}]})
    );
    assert_eq!(v["usage"]["total_tokens"], 12);

    let mut body = chat_request(false);
    body.as_object_mut().unwrap().remove("stream");
    let v: Value = post_to_fake(&fake, ANTHROPIC, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": "Hello"}, {"type": "tool_use", "id": "c1", "name": "ask", "input": {"q": 2}}])
    );
    assert_eq!(v["stop_reason"], "tool_use");
    assert_eq!(v["usage"], json!({"input_tokens": 7, "output_tokens": 5}));

    let v: Value = post_to_fake(&fake, OPENAI, chat_request(false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], Value::Null);

    // The queue is empty: the default reply.
    let v: Value = post_to_fake(&fake, OPENAI, chat_request(false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["choices"][0]["message"],
        json!({"role": "assistant", "content": "ok"})
    );
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn status_empty_raw_and_finish() {
    let fake = FakeModel::start().await;
    for path in [OPENAI, ANTHROPIC] {
        fake.push(Reply::Status {
            status: 429,
            headers: vec![("retry-after".into(), "7".into())],
            body: r#"{"error":{"message":"slow down"}}"#.into(),
        });
        let resp = post_to_fake(&fake, path, chat_request(true)).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "7");
        assert_eq!(resp.headers()["content-type"], "application/json");

        fake.push(Reply::Empty);
        let resp = post_to_fake(&fake, path, chat_request(true)).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        assert_eq!(resp.text().await.unwrap(), "");

        fake.push(Reply::Steps(vec![
            Step::Raw("{not json".into()),
            Step::EndWithoutDone,
        ]));
        let ev = sse_events(&fake, path).await;
        assert_eq!(ev.last().unwrap().1, "{not json");

        fake.push(Reply::Steps(vec![text("a"), Step::Finish("length".into())]));
        let body = post_to_fake(&fake, path, chat_request(true))
            .await
            .text()
            .await
            .unwrap();
        assert!(
            body.contains("\"length\"") || body.contains("\"max_tokens\""),
            "{body}"
        );
    }
}

#[tokio::test]
async fn cut_breaks_the_body() {
    let fake = FakeModel::start().await;
    for path in [OPENAI, ANTHROPIC] {
        fake.push(Reply::Steps(vec![text("a"), Step::Cut, text("never")]));
        let resp = post_to_fake(&fake, path, chat_request(true)).await;
        assert_eq!(resp.status(), 200);
        assert!(resp.text().await.is_err());

        fake.push(Reply::Steps(vec![text("a"), Step::Cut]));
        let resp = post_to_fake(&fake, path, chat_request(false)).await;
        assert!(resp.bytes().await.is_err());
    }
    assert_eq!(fake.disconnects(), 0);
}

#[tokio::test]
async fn hang_counts_a_disconnect_when_the_client_leaves() {
    let fake = FakeModel::start().await;
    for (n, path) in [(1, OPENAI), (2, ANTHROPIC)] {
        fake.push(Reply::Steps(vec![text("a"), Step::Hang]));
        let resp = post_to_fake(&fake, path, chat_request(true)).await;
        let mut body = resp.bytes_stream();
        let first = body.next().await.unwrap().unwrap();
        assert!(!first.is_empty());
        let more = tokio::time::timeout(Duration::from_millis(300), async {
            // The first text chunk may still be on its way; nothing after it comes.
            while body.next().await.is_some() {}
        })
        .await;
        assert!(more.is_err(), "the body should hang");
        assert_eq!(fake.disconnects(), n - 1);
        drop(body);
        assert!(fake.wait_disconnect(n, Duration::from_secs(2)).await);
    }

    // A non-stream request hangs before the reply; the client giving up counts too.
    fake.push(Reply::Steps(vec![Step::Hang]));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let sent = client
        .post(format!("{}{OPENAI}", fake.base))
        .json(&chat_request(false))
        .send()
        .await;
    assert!(sent.is_err());
    assert!(fake.wait_disconnect(3, Duration::from_secs(2)).await);
    assert!(!fake.wait_disconnect(4, Duration::from_millis(50)).await);
}

#[tokio::test]
async fn delay_and_records() {
    let fake = FakeModel::start().await;
    fake.push(Reply::Steps(vec![
        Step::Delay(Duration::from_millis(150)),
        text("late"),
    ]));
    let t0 = std::time::Instant::now();
    let body = post_to_fake(&fake, OPENAI, chat_request(true))
        .await
        .text()
        .await
        .unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(150));
    assert!(body.contains("late"));
    post_to_fake(&fake, ANTHROPIC, json!({"model": "c", "messages": []})).await;

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0], chat_request(true));
    assert_eq!(reqs[1]["model"], "c");
    let headers = fake.request_headers();
    assert!(headers[1].contains(&("authorization".to_string(), "Bearer sk-test".to_string())));
    assert_eq!(fake.openai_url(), format!("{}/v1", fake.base));
}
