//! A2A 0.3 served beside 1.0 on the same URLs: every 0.3 JSON-RPC method and HTTP+JSON route
//! over real HTTP, in 0.3's shapes in and out; bad 0.3 input answered with 0.3's codes and a
//! message naming the field, nothing stored; tasks crossing versions both ways; a webhook
//! registered in 0.3 getting 0.3 bodies while a 1.0 one of the same task gets 1.0 bodies; the
//! hybrid card; `v03(false)`; and the version rules (a 1.0 method without `A2A-Version`, or
//! any unknown version, is still VersionNotSupported; `/v1/` with `A2A-Version: 1.0` is a
//! tenant named `v1`). The official 0.3 SDKs' checks are in `interop_v03`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::push::{PushConfig, PushDispatcher};
use a2a_kit::server::AgentService;
use a2a_tests::*;
use serde_json::{Value, json};

/// A 0.3 JSON-RPC call (no `A2A-Version`, as 0.3 clients send it).
async fn rpc03(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    client()
        .post(base)
        .json(&body)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// A 0.3 user message with one text part, to `skill`.
fn msg03(skill: &str, text: &str) -> Value {
    json!({"kind": "message", "messageId": uuid(), "role": "user",
        "parts": [{"kind": "text", "text": text}], "metadata": {"skillId": skill}})
}

/// A 0.3 HTTP+JSON message (ProtoJSON of the 0.3 proto), to `skill`.
fn rest_msg03(skill: &str, text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": text}],
        "metadata": {"skillId": skill}})
}

async fn rest03(method: reqwest::Method, url: String, body: Option<Value>) -> (u16, Value) {
    let mut req = client().request(method, url);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn sse03(resp: reqwest::Response) -> Vec<Value> {
    read_sse(resp, 64)
        .await
        .into_iter()
        .map(|e| e.data)
        .collect()
}

#[tokio::test]
async fn every_jsonrpc_method_answers_in_0_3_shapes() {
    let s = serve_test_agent().await;
    let base = &s.base;

    // message/send, blocking by default: a bare Task with `kind`, lowercase states and roles.
    let r = rpc03(
        base,
        "message/send",
        json!({"message": msg03("echo", "hi")}),
    )
    .await;
    let task = &r["result"];
    assert_eq!(task["kind"], "task", "{r}");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(
        task["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "hi"})
    );
    assert_eq!(task["history"][0]["role"], "user");
    assert_eq!(task["history"][0]["kind"], "message");
    let id = task["id"].as_str().unwrap().to_string();

    // A direct message answers with a bare Message.
    let r = rpc03(
        base,
        "message/send",
        json!({"message": msg03("direct", "yo")}),
    )
    .await;
    assert_eq!(r["result"]["kind"], "message", "{r}");
    assert_eq!(r["result"]["role"], "agent");

    // Every part kind goes in: file bytes, file uri, data.
    let mut m = msg03("echo", "parts");
    m["parts"] = json!([{"kind": "text", "text": "t"},
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "hi.txt"}},
        {"kind": "file", "file": {"uri": "https://example.com/x.png", "mimeType": "image/png"}},
        {"kind": "data", "data": {"n": 1}}]);
    let r = rpc03(base, "message/send", json!({"message": m})).await;
    let history = &r["result"]["history"][0]["parts"];
    assert_eq!(
        history[1]["file"],
        json!({"bytes": "aGk=", "mimeType": "text/plain", "name": "hi.txt"}),
        "{r}"
    );
    assert_eq!(history[2]["file"]["uri"], "https://example.com/x.png");
    assert_eq!(history[3], json!({"kind": "data", "data": {"n": 1}}));

    // tasks/get, with historyLength.
    let r = rpc03(base, "tasks/get", json!({"id": id, "historyLength": 1})).await;
    assert_eq!(r["result"]["id"], id.as_str());
    assert_eq!(
        r["result"]["history"].as_array().map(Vec::len),
        Some(1),
        "{r}"
    );

    // blocking: false returns at once; the task goes on.
    let r = rpc03(
        base,
        "message/send",
        json!({"message": msg03("slow", "200"), "configuration": {"blocking": false}}),
    )
    .await;
    assert_eq!(r["result"]["status"]["state"], "submitted", "{r}");

    // tasks/cancel of an input-required task, then again: TaskNotCancelable, 0.3's data.
    let r = rpc03(base, "message/send", json!({"message": msg03("ask", "q")})).await;
    assert_eq!(r["result"]["status"]["state"], "input-required", "{r}");
    let asked = r["result"]["id"].as_str().unwrap().to_string();
    let r = rpc03(base, "tasks/cancel", json!({"id": asked})).await;
    assert_eq!(r["result"]["status"]["state"], "canceled", "{r}");
    let r = rpc03(base, "tasks/cancel", json!({"id": asked})).await;
    assert_eq!(r["error"]["code"], -32002, "{r}");
    assert_eq!(r["error"]["data"]["state"], "canceled");

    // A missing task: -32001 with the task in `data` (0.3's free-form data, not 1.0's array).
    let r = rpc03(base, "tasks/get", json!({"id": "nope"})).await;
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert_eq!(r["error"]["data"], json!({"taskId": "nope"}));

    // message/stream: task, status-update (final on the last), artifact-update.
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": "message/stream",
        "params": {"message": msg03("chunks", "3")}});
    let resp = client().post(base).json(&body).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let events = sse03(resp).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"task"), "{events:?}");
    assert!(kinds.contains(&"artifact-update"), "{kinds:?}");
    let last = &events.last().unwrap()["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    assert!(
        events
            .iter()
            .filter(|e| e["result"]["kind"] == "status-update")
            .rev()
            .skip(1)
            .all(|e| e["result"]["final"] == false),
        "{events:?}"
    );

    // tasks/resubscribe to a running task, and to one that has ended (the task, then closed).
    let r = rpc03(
        base,
        "message/send",
        json!({"message": msg03("slow", "400"), "configuration": {"blocking": false}}),
    )
    .await;
    let running = r["result"]["id"].as_str().unwrap().to_string();
    let body = json!({"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe", "params": {"id": running}});
    let events = sse03(client().post(base).json(&body).send().await.unwrap()).await;
    assert_eq!(events[0]["result"]["kind"], "task", "{events:?}");
    assert_eq!(
        events.last().unwrap()["result"]["status"]["state"],
        "completed"
    );
    let body =
        json!({"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe", "params": {"id": id}});
    let events = sse03(client().post(base).json(&body).send().await.unwrap()).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["result"]["status"]["state"], "completed");

    // ListTasks does not exist in 0.3.
    let r = rpc03(base, "tasks/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");

    // The extended card: this agent has none.
    let r = rpc03(base, "agent/getAuthenticatedExtendedCard", json!({})).await;
    assert_eq!(r["error"]["code"], -32007, "{r}");
}

#[tokio::test]
async fn push_config_methods_in_0_3_shapes() {
    let s = serve(
        AgentService::builder(TestAgent)
            .push_notifications(true)
            .push_delivery(PushConfig::default().allow_private_networks()),
    )
    .await;
    let base = &s.base;
    let r = rpc03(base, "message/send", json!({"message": msg03("ask", "q")})).await;
    let id = r["result"]["id"].as_str().unwrap().to_string();
    let hook = RecordingWebhook::default().serve().await;

    let r = rpc03(
        base,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": id,
        "pushNotificationConfig": {"url": hook, "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "c"}}}),
    )
    .await;
    let set = &r["result"];
    assert_eq!(set["taskId"], id.as_str(), "{r}");
    assert_eq!(
        set["pushNotificationConfig"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
    let config_id = set["pushNotificationConfig"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(set.get("a2aKitProtocolVersion").is_none() && !set.to_string().contains("a2aKit"));

    // get by id, and without one (the task's only config).
    for params in [
        json!({"id": id, "pushNotificationConfigId": config_id}),
        json!({"id": id}),
    ] {
        let r = rpc03(base, "tasks/pushNotificationConfig/get", params).await;
        assert_eq!(
            r["result"]["pushNotificationConfig"]["id"],
            config_id.as_str(),
            "{r}"
        );
        assert_eq!(r["result"]["pushNotificationConfig"]["url"], hook.as_str());
        // Credentials are write-only, as in 1.0.
        assert!(
            r["result"]["pushNotificationConfig"].get("token").is_none(),
            "{r}"
        );
    }
    let r = rpc03(base, "tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(
        r["result"].as_array().map(Vec::len),
        Some(1),
        "a bare array: {r}"
    );

    // An empty list of schemes names the field; nothing is stored.
    let r = rpc03(
        base,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": id,
        "pushNotificationConfig": {"url": hook, "authentication": {"schemes": []}}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.pushNotificationConfig.authentication.schemes"),
        "{r}"
    );
    let r = rpc03(base, "tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(r["result"].as_array().map(Vec::len), Some(1), "{r}");

    // delete answers null; delete without a config id names the field.
    let r = rpc03(
        base,
        "tasks/pushNotificationConfig/delete",
        json!({"id": id}),
    )
    .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pushNotificationConfigId"),
        "{r}"
    );
    let r = rpc03(
        base,
        "tasks/pushNotificationConfig/delete",
        json!({"id": id, "pushNotificationConfigId": config_id}),
    )
    .await;
    assert_eq!(r["result"], Value::Null, "{r}");
    assert!(r.get("error").is_none());
    let r = rpc03(base, "tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(r["result"], json!([]));
}

#[tokio::test]
async fn bad_0_3_input_names_the_field_and_stores_nothing() {
    let s = serve_test_agent().await;
    let base = &s.base;
    for (message, field) in [
        (
            json!({"kind": "message", "role": "user", "parts": []}),
            "params.message",
        ),
        (
            json!({"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "video", "text": "x"}]}),
            "params.message.parts[0]",
        ),
        (
            json!({"kind": "message", "messageId": "m", "role": "robot",
            "parts": [{"kind": "text", "text": "x"}]}),
            "params.message.role",
        ),
        (
            json!({"kind": "task", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "x"}]}),
            "params.message.kind",
        ),
        (
            json!({"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "file", "file": {"bytes": "aGk=", "uri": "https://x"}}]}),
            "params.message.parts[0].file",
        ),
        (
            json!({"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "data", "data": {"k": 1}, "metadata": {"a": 1}}],
            "metadata": "not an object"}),
            "params.message.metadata",
        ),
    ] {
        let r = rpc03(base, "message/send", json!({"message": message})).await;
        assert_eq!(r["error"]["code"], -32602, "{field}: {r}");
        let text = r["error"]["message"].as_str().unwrap();
        assert!(text.contains(field), "{field}: {text}");
    }
    // A key named twice in a 0.3 data part is refused, as in 1.0.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"k":1,"k":2}}]}}}"#;
    let r: Value = client()
        .post(base)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duplicate key `k`"),
        "{r}"
    );
    // Nothing was stored.
    let r = rpc(base, "ListTasks", json!({})).await;
    assert_eq!(r["result"]["tasks"], json!([]), "{r}");
}

#[tokio::test]
async fn every_http_json_route_answers_in_0_3_shapes() {
    let s = serve(
        AgentService::builder(TestAgent)
            .push_notifications(true)
            .push_delivery(PushConfig::default().allow_private_networks()),
    )
    .await;
    let base = &s.base;
    use reqwest::Method as M;

    let (status, r) = rest03(
        M::POST,
        format!("{base}/v1/message:send"),
        Some(json!({"message": rest_msg03("echo", "hi")})),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let task = &r["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(task["history"][0]["content"][0]["text"], "hi");
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert!(
        !r.to_string().contains("\"kind\""),
        "no 0.3 JSON-RPC shapes here: {r}"
    );
    let id = task["id"].as_str().unwrap().to_string();

    let (status, r) = rest03(
        M::GET,
        format!("{base}/v1/tasks/{id}?historyLength=1"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["history"].as_array().map(Vec::len), Some(1), "{r}");

    let (status, r) = rest03(M::GET, format!("{base}/v1/tasks/missing"), None).await;
    assert_eq!((status, r["code"].as_i64()), (404, Some(-32001)), "{r}");

    // Cancel: two Ls in 0.3's proto; again is 409.
    let (_, r) = rest03(
        M::POST,
        format!("{base}/v1/message:send"),
        Some(json!({"message": rest_msg03("ask", "q")})),
    )
    .await;
    let asked = r["task"]["id"].as_str().unwrap().to_string();
    let (status, r) = rest03(M::POST, format!("{base}/v1/tasks/{asked}:cancel"), None).await;
    assert_eq!(
        (status, r["status"]["state"].as_str()),
        (200, Some("TASK_STATE_CANCELLED")),
        "{r}"
    );
    let (status, r) = rest03(M::POST, format!("{base}/v1/tasks/{asked}:cancel"), None).await;
    assert_eq!((status, r["code"].as_i64()), (409, Some(-32002)), "{r}");

    // Stream: ProtoJSON StreamResponse items, `final` on the last status update.
    let resp = client()
        .post(format!("{base}/v1/message:stream"))
        .json(&json!({"message": rest_msg03("chunks", "2")}))
        .send()
        .await
        .unwrap();
    let events = sse03(resp).await;
    assert!(events[0].get("task").is_some(), "{events:?}");
    assert!(
        events.iter().any(|e| e.get("artifactUpdate").is_some()),
        "{events:?}"
    );
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["final"],
        true,
        "{events:?}"
    );

    // Subscribe, GET (the proto) and POST (the JS SDK): a task that has ended is sent once.
    for verb in [M::GET, M::POST] {
        let resp = client()
            .request(verb, format!("{base}/v1/tasks/{id}:subscribe"))
            .send()
            .await
            .unwrap();
        let events = sse03(resp).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }

    // Push configs: the bare config (JS) and the proto's create request (Python).
    let hook = RecordingWebhook::default().serve().await;
    let (status, r) = rest03(
        M::POST,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs"),
        Some(
            json!({"name": format!("tasks/{id}/pushNotificationConfigs/a"),
            "pushNotificationConfig": {"id": "a", "url": hook}}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["name"], format!("tasks/{id}/pushNotificationConfigs/a"));
    let (status, r) = rest03(
        M::POST,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs"),
        Some(json!({"parent": format!("tasks/{id}"), "configId": "b",
            "config": {"pushNotificationConfig": {"url": hook}}})),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["pushNotificationConfig"]["id"], "b", "{r}");
    let (_, r) = rest03(
        M::GET,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs"),
        None,
    )
    .await;
    assert_eq!(r["configs"].as_array().map(Vec::len), Some(2), "{r}");
    let (status, r) = rest03(
        M::GET,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs/b"),
        None,
    )
    .await;
    assert_eq!(
        (status, r["pushNotificationConfig"]["url"].as_str()),
        (200, Some(hook.as_str())),
        "{r}"
    );
    let (status, _) = rest03(
        M::DELETE,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs/b"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    // The Python SDK writes a config asked for without an id as `None`: the task's one config.
    let (status, r) = rest03(
        M::GET,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs/None"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["pushNotificationConfig"]["id"], "a", "{r}");
    let (status, r) = rest03(
        M::POST,
        format!("{base}/v1/tasks/{id}/pushNotificationConfigs"),
        Some(json!({"pushNotificationConfig": {"token": "t"}})),
    )
    .await;
    assert_eq!((status, r["code"].as_i64()), (422, Some(-32602)), "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("pushNotificationConfig.url"),
        "{r}"
    );

    // Bad input names the 0.3 HTTP+JSON field.
    let mut m = rest_msg03("echo", "x");
    m["content"] = json!([{"file": {"fileWithUri": "https://x", "fileWithBytes": "aGk="}}]);
    let (status, r) = rest03(
        M::POST,
        format!("{base}/v1/message:send"),
        Some(json!({"message": m})),
    )
    .await;
    assert_eq!((status, r["code"].as_i64()), (422, Some(-32602)), "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("message.content[0].file"),
        "{r}"
    );

    // ListTasks is 1.0's: 501, as 0.3 servers answer it.
    let (status, r) = rest03(M::GET, format!("{base}/v1/tasks"), None).await;
    assert_eq!((status, r["code"].as_i64()), (501, Some(-32004)), "{r}");

    // An agent without an extended card: 0.3's own error for it.
    let (status, r) = rest03(M::GET, format!("{base}/v1/card"), None).await;
    assert_eq!(
        (status, r["code"].as_i64()),
        (404, Some(-32007)),
        "no extended card: {r}"
    );
}

#[tokio::test]
async fn tasks_cross_versions_both_ways() {
    let s = serve_test_agent().await;
    let base = &s.base;
    // Made in 0.3, read, streamed and canceled in 1.0.
    let r = rpc03(base, "message/send", json!({"message": msg03("ask", "q")})).await;
    let id = r["result"]["id"].as_str().unwrap().to_string();
    let got = rpc(base, "GetTask", json!({"id": id})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{got}"
    );
    assert_eq!(got["result"]["history"][0]["parts"][0]["text"], "q");
    let resp = rpc_stream(base, "SubscribeToTask", json!({"id": id}), None).await;
    let first = read_sse(resp, 1).await;
    assert_eq!(first[0].data["result"]["task"]["id"], id.as_str());
    let c = rpc(base, "CancelTask", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED", "{c}");

    // Made in 1.0, continued, read and canceled in 0.3.
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": to_skill("interview", "x")}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let ctx = r["result"]["task"]["contextId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut reply = msg03("interview", "first answer");
    reply["taskId"] = json!(id);
    reply["contextId"] = json!(ctx);
    let r = rpc03(base, "message/send", json!({"message": reply})).await;
    assert_eq!(r["result"]["status"]["state"], "input-required", "{r}");
    let got = rpc03(base, "tasks/get", json!({"id": id})).await;
    assert_eq!(got["result"]["kind"], "task");
    let c = rpc03(base, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "canceled", "{c}");
    let (_, r) = rest03(reqwest::Method::GET, format!("{base}/v1/tasks/{id}"), None).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_CANCELLED", "{r}");
}

/// A webhook that keeps every body it gets, with its content type.
#[derive(Clone, Default)]
struct BodyHook(Arc<Mutex<Vec<(String, Value)>>>);

impl BodyHook {
    async fn serve(&self) -> String {
        let hook = self.clone();
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
                let hook = hook.clone();
                async move {
                    let ct = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let token = headers
                        .get("x-a2a-notification-token")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    hook.0.lock().unwrap().push((
                        format!("{ct};{token}"),
                        serde_json::from_str(&body).unwrap_or_default(),
                    ));
                    axum::http::StatusCode::NO_CONTENT
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        url
    }

    /// Every body so far, once one satisfies `done`.
    async fn wait(&self, done: impl Fn(&Value) -> bool) -> Vec<(String, Value)> {
        for _ in 0..200 {
            let got = self.0.lock().unwrap().clone();
            if got.iter().any(|(_, b)| done(b)) {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the webhook got {:?}", self.0.lock().unwrap());
    }
}

#[tokio::test]
async fn a_0_3_webhook_gets_0_3_bodies_and_a_1_0_one_1_0_bodies() {
    let push = PushDispatcher::new(PushConfig::default().allow_private_networks());
    let s = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
    let base = &s.base;
    let (old, new) = (BodyHook::default(), BodyHook::default());
    let (old_url, new_url) = (old.serve().await, new.serve().await);
    // One task, one webhook registered in each version.
    let r = rpc03(
        base,
        "message/send",
        json!({"message": msg03("ask", "q"),
        "configuration": {"pushNotificationConfig": {"url": old_url, "token": "old-token"}}}),
    )
    .await;
    let id = r["result"]["id"].as_str().unwrap().to_string();
    let ctx = r["result"]["contextId"].as_str().unwrap().to_string();
    let r = rpc(
        base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": new_url, "token": "new-token"}),
    )
    .await;
    assert!(r.get("result").is_some(), "{r}");
    // Reading the 0.3 config back over 1.0 shows no trace of the version it was made in.
    let r = rpc(
        base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert!(!r.to_string().contains("a2aKit"), "{r}");

    let mut reply = to_skill("ask", "answer");
    reply["taskId"] = json!(id);
    reply["contextId"] = json!(ctx);
    let r = rpc(base, "SendMessage", json!({"message": reply})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );

    let got = old.wait(|b| b["status"]["state"] == "completed").await;
    let (meta, last) = got
        .iter()
        .find(|(_, b)| b["status"]["state"] == "completed")
        .unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(meta, "application/json;old-token");
    assert_eq!(last["kind"], "task", "a bare 0.3 Task: {last}");
    assert_eq!(last["id"], id.as_str());
    assert!(got.iter().all(|(_, b)| b.get("kind").is_some()), "{got:?}");
    let got = new
        .wait(|b| b["task"]["status"]["state"] == "TASK_STATE_COMPLETED")
        .await;
    let (meta, last) = got
        .iter()
        .find(|(_, b)| b["task"]["status"]["state"] == "TASK_STATE_COMPLETED")
        .unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(meta, "application/a2a+json;new-token");
    assert_eq!(last["task"]["id"], id.as_str());
}

#[tokio::test]
async fn the_card_is_read_by_both_kinds_of_client() {
    let s = serve_test_agent().await;
    let card = public_card(&s.base).await;
    // 1.0: the interfaces, as before (a 1.0 client choosing by binding gets a 1.0 one).
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert!(
        interfaces.iter().all(|i| i["protocolVersion"] == "1.0"),
        "{card}"
    );
    // 0.3: its own fields beside them.
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["url"], s.base.as_str());
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(
        card["additionalInterfaces"][1],
        json!({"url": s.base, "transport": "HTTP+JSON"})
    );
    let extended = card["capabilities"]["extendedAgentCard"] == true;
    let field = card.get("supportsAuthenticatedExtendedCard");
    assert_eq!(field.is_some(), extended, "omitted when false: {card}");
    // The typed 1.0 reader reads it as the service's own card.
    let typed: a2a_kit::protocol::AgentCard = serde_json::from_value(card).unwrap();
    assert_eq!(&typed, s.service.card());
}

#[tokio::test]
async fn v03_false_serves_1_0_only() {
    let s = serve(AgentService::builder(TestAgent).v03(false)).await;
    let r = rpc03(
        &s.base,
        "message/send",
        json!({"message": msg03("echo", "x")}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let card = public_card(&s.base).await;
    assert!(
        card.get("url").is_none() && card.get("protocolVersion").is_none(),
        "{card}"
    );
    let (status, r) = rest03(
        reqwest::Method::POST,
        format!("{}/v1/message:send", s.base),
        Some(json!({"message": rest_msg03("echo", "x")})),
    )
    .await;
    // A 1.0 request without its version.
    assert_eq!(r["error"]["status"], "UNIMPLEMENTED", "{status} {r}");
}

#[tokio::test]
async fn version_rules_hold_beside_0_3() {
    let s = serve_test_agent().await;
    let base = &s.base;
    // A 1.0 method without A2A-Version: 0.3 by the spec, and no 0.3 method: as before.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}});
    let r: Value = client()
        .post(base)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32009, "{r}");
    // An unknown version, with a 0.3 method too.
    for method in ["GetTask", "tasks/get"] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": "x"}});
        let r: Value = client()
            .post(base)
            .header("A2A-Version", "99.0")
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(r["error"]["code"], -32009, "{method}: {r}");
    }
    // A 0.3 method with `A2A-Version: 0.3` is 0.3's; with 1.0 it is no 1.0 method.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}});
    let r: Value = client()
        .post(base)
        .header("A2A-Version", "0.3")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["data"], json!({"taskId": "x"}), "{r}");
    let r: Value = client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("0.3"),
        "{r}"
    );
    // `/v1/...` with A2A-Version 1.0 is a tenant named `v1` (1.0's shapes).
    let resp = client()
        .post(format!("{base}/v1/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": to_skill("echo", "in v1")}))
        .send()
        .await
        .unwrap();
    let r: Value = resp.json().await.unwrap();
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    // 0.3's extensions header is echoed as 0.3's.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}});
    let resp = client()
        .post(base)
        .header("X-A2A-Extensions", "urn:unknown")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(resp.headers().get("a2a-extensions").is_none());
}

#[tokio::test]
async fn a_1_0_client_gets_the_1_0_card_and_a_signed_hybrid_card_verifies() {
    use a2a_kit::signing::{Signer, Verifier};
    let dir = format!("{}/fixtures/signing", env!("CARGO_MANIFEST_DIR"));
    let pem = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
    let signer = Signer::from_pem(pem("es256.pem"), "card-es256").unwrap();
    let s = serve(AgentService::builder(TestAgent).sign_card(signer)).await;
    let url = format!("{}/.well-known/agent-card.json", s.base);
    // `A2A-Version: 1.0`: the card as 1.0 writes it, byte for byte what it was.
    let resp = client()
        .get(&url)
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert!(
        resp.headers()
            .get_all("vary")
            .iter()
            .any(|v| v == "A2A-Version")
    );
    let v1: Value = resp.json().await.unwrap();
    assert!(
        v1.get("url").is_none() && v1.get("protocolVersion").is_none(),
        "{v1}"
    );
    assert_eq!(v1, serde_json::to_value(s.service.card()).unwrap());
    // Without: the hybrid card, whose one signature covers its 1.0 fields.
    let hybrid = public_card(&s.base).await;
    assert_eq!(hybrid["url"], s.base.as_str());
    assert_eq!(hybrid["signatures"].as_array().map(Vec::len), Some(1));
    let verifier = Verifier::new().trust_pem(pem("es256.pub.pem")).unwrap();
    assert_eq!(verifier.verify_card_json(&v1).unwrap(), "card-es256");
    assert_eq!(verifier.verify_card_json(&hybrid).unwrap(), "card-es256");
    // A 1.0 field changed in the hybrid card breaks it.
    let mut forged = hybrid.clone();
    forged["name"] = json!("someone else");
    assert!(verifier.verify_card_json(&forged).is_err());
}

#[tokio::test]
async fn the_webhook_receiver_takes_0_3_bodies() {
    use a2a_kit::protocol::TaskState;
    use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, _rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(64);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app_base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
    let router = receiver.router("/hook");
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let hook_url = format!("{app_base}/hook");

    // A 0.3 sender's bodies, posted by hand: a status update, an artifact update, a bare Task.
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-03", &token).await.unwrap();
    let post = |body: Value| {
        let (url, token) = (hook_url.clone(), token.clone());
        async move {
            client()
                .post(url)
                .header("X-A2A-Notification-Token", token)
                .json(&body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    let status = json!({"kind": "status-update", "taskId": "t-03", "contextId": "c",
        "status": {"state": "working"}, "final": false});
    assert_eq!(post(status).await, 204);
    let artifact = json!({"kind": "artifact-update", "taskId": "t-03", "contextId": "c",
        "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "part one"}]}});
    assert_eq!(post(artifact).await, 204);
    let task = json!({"kind": "task", "id": "t-03", "contextId": "c",
        "status": {"state": "completed", "timestamp": "2026-01-05T10:00:00.000Z"},
        "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "all of it"}]}]});
    assert_eq!(post(task).await, 204);
    let kept = tasks.get("t-03").await.unwrap().unwrap();
    assert_eq!(kept.status.state, TaskState::Completed);
    assert_eq!(kept.artifacts[0].parts[0].as_text(), Some("all of it"));
    // A 0.3 body that is wrong says why; nothing is kept.
    let bad = json!({"kind": "status-update", "taskId": "t-03", "contextId": "c",
        "status": {"state": "finished"}});
    assert_eq!(post(bad).await, 400);
    assert_eq!(
        tasks.get("t-03").await.unwrap().unwrap().status.state,
        TaskState::Completed
    );

    // An a2a-kit agent pushing to it, the config registered in 0.3.
    let push = PushDispatcher::new(PushConfig::default().allow_private_networks());
    let agent = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
    let config = tokens.issue_config(&hook_url).await.unwrap();
    let r = rpc03(
        &agent.base,
        "message/send",
        json!({"message": msg03("slow", "200"),
        "configuration": {"blocking": false, "pushNotificationConfig":
            {"url": config.url, "token": config.token}}}),
    )
    .await;
    let id = r["result"]["id"].as_str().unwrap().to_string();
    tokens
        .bind(&id, config.token.as_deref().unwrap())
        .await
        .unwrap();
    tasks
        .insert(
            serde_json::from_value(
                rpc(&agent.base, "GetTask", json!({"id": id})).await["result"].clone(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        tasks.wait_for(&id, |t| t.status.state == TaskState::Completed),
    )
    .await
    .expect("the 0.3 push arrived")
    .unwrap();
    assert_eq!(done.artifacts[0].parts[0].as_text(), Some("slept 200"));
}
