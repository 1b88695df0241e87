//! The JSON-RPC binding through real HTTP: every class of bad input gets the spec's error and
//! a message naming what is wrong; the card endpoint; service parameters; capabilities.

use a2a_tests::*;
use serde_json::{Value, json};

async fn raw(
    base: &str,
    content_type: Option<&str>,
    version: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let mut req = client().post(base).body(body);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error code in {v}"))
}

fn message(v: &Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn envelope_errors() {
    let s = serve_test_agent().await;
    let ok_body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}).to_string();

    let (st, v) = raw(&s.base, Some("text/plain"), Some("1.0"), ok_body.clone()).await;
    assert_eq!(
        (st, code(&v)),
        (200, -32005),
        "non-JSON content type is refused before parsing"
    );
    assert!(message(&v).contains("text/plain"));

    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), "{not json").await;
    assert_eq!(code(&v), -32700);
    assert_eq!(v["id"], Value::Null);

    let (_, v) = raw(
        &s.base,
        Some("application/json"),
        Some("1.0"),
        format!("[{ok_body}]"),
    )
    .await;
    assert_eq!(code(&v), -32600);
    assert!(message(&v).contains("batch"));

    let no_id = json!({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), no_id).await;
    assert_eq!(code(&v), -32600);
    assert!(message(&v).contains("id"));

    let wrong = json!({"jsonrpc": "1.0", "id": 7, "method": "GetTask"}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), wrong).await;
    assert_eq!(code(&v), -32600);
    assert_eq!(v["id"], 7, "the id is echoed once known");

    let bad_id = json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "GetTask"}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), bad_id).await;
    assert_eq!(code(&v), -32600);

    let unknown =
        json!({"jsonrpc": "2.0", "id": "a", "method": "DoMagic", "params": {}}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), unknown).await;
    assert_eq!(code(&v), -32601);
    assert!(message(&v).contains("DoMagic"));

    let old =
        json!({"jsonrpc": "2.0", "id": "a", "method": "message/send", "params": {}}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), old).await;
    assert_eq!(code(&v), -32601);
    assert!(message(&v).contains("0.3"));

    let arr =
        json!({"jsonrpc": "2.0", "id": "a", "method": "GetTask", "params": ["x"]}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), arr).await;
    assert_eq!(code(&v), -32602);
}

#[tokio::test]
async fn version_errors() {
    let s = serve_test_agent().await;
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}).to_string();
    let (_, v) = raw(&s.base, Some("application/json"), None, body.clone()).await;
    assert_eq!(code(&v), -32009, "a missing version means 0.3");
    assert!(message(&v).contains("A2A-Version"));
    assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    let (_, v) = raw(&s.base, Some("application/json"), Some("2.0"), body.clone()).await;
    assert_eq!(code(&v), -32009);
    // The query parameter form works.
    let resp = client()
        .post(format!("{}/?A2A-Version=1.0", s.base))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(
        code(&v),
        -32001,
        "version accepted; the task does not exist"
    );
}

#[tokio::test]
async fn params_errors_name_the_field() {
    let s = serve_test_agent().await;
    let cases = [
        (json!({}), "params.message"),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER"}}),
            "params.message",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_ROBOT", "parts": [{"text": "x"}]}}),
            "params.message.role",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "url": "http://a"}]}}),
            "params.message.parts",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
            "message.parts",
        ),
        (
            json!({"message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            "message.messageId",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}),
            "message.role",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": 5}]}}),
            "params.message.parts",
        ),
        (
            json!({"message": user_text("x"), "configuration": {"historyLength": -2}}),
            "historyLength",
        ),
    ];
    for (params, field) in cases {
        let v = rpc(&s.base, "SendMessage", params.clone()).await;
        assert_eq!(code(&v), -32602, "{params}: {v}");
        assert!(
            message(&v).contains(field),
            "{params}: `{}` should name {field}",
            message(&v)
        );
        assert_eq!(
            v["error"]["data"][0]["@type"],
            "type.googleapis.com/google.rpc.ErrorInfo"
        );
        assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
    }
    // Nothing was created by any of them.
    let l = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(l["result"]["totalSize"], 0);
}

#[tokio::test]
async fn routing_errors_list_the_skills() {
    let s = serve_test_agent().await;
    let v = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("which skill?")}),
    )
    .await;
    assert_eq!(code(&v), -32602);
    assert!(
        message(&v).contains("echo") && message(&v).contains("chunks"),
        "{}",
        message(&v)
    );
    let v = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("nope", "x")}),
    )
    .await;
    assert_eq!(code(&v), -32602);
    assert!(message(&v).contains("nope"));
    // An extractor failure names the skill and the part, before any task exists.
    let mut m = to_skill("echo", "x");
    m["parts"] = json!([{"data": {"a": 1}}]);
    let v = rpc(&s.base, "SendMessage", json!({"message": m})).await;
    assert_eq!(code(&v), -32602);
    assert!(
        message(&v).contains("skill `echo`") && message(&v).contains("text part"),
        "{}",
        message(&v)
    );
    assert_eq!(
        v["error"]["data"][1]["fieldViolations"][0]["field"],
        "message.parts"
    );
    let l = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(l["result"]["totalSize"], 0);
}

#[tokio::test]
async fn unknown_ids_are_task_not_found() {
    let s = serve_test_agent().await;
    for (method, params) in [
        ("GetTask", json!({"id": "missing"})),
        ("CancelTask", json!({"id": "missing"})),
        ("SubscribeToTask", json!({"id": "missing"})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "missing", "url": "https://example.com/hook"}),
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": "missing"}),
        ),
    ] {
        let v = rpc(&s.base, method, params).await;
        assert_eq!(code(&v), -32001, "{method}: {v}");
        assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(v["error"]["data"][0]["metadata"]["taskId"], "missing");
    }
    let v = rpc(&s.base, "GetTask", json!({})).await;
    assert_eq!(code(&v), -32602);
    assert!(message(&v).contains("id"));
}

#[tokio::test]
async fn oversized_bodies_get_413() {
    let s = serve_test_agent().await;
    let big = "x".repeat(2 * 1024 * 1024);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": user_text(&big)}}).to_string();
    let (st, v) = raw(&s.base, Some("application/json"), Some("1.0"), body).await;
    assert_eq!(st, 413);
    assert!(v["error"]["message"].as_str().unwrap().contains("limit"));
    // A JSON-RPC envelope: the request was never read, so its id is null.
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v["id"].is_null(), "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
}

#[tokio::test]
async fn push_config_crud() {
    let s = serve_test_agent().await;
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("ask", "x")}),
    )
    .await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let created = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "url": "https://example.com/hook", "token": "t0k", "authentication": {"scheme": "Bearer", "credentials": "c"}}),
    )
    .await;
    let id = created["result"]["id"]
        .as_str()
        .expect("an id is generated")
        .to_string();
    assert_eq!(created["result"]["taskId"], task_id);
    let got = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    )
    .await;
    assert_eq!(got["result"]["url"], "https://example.com/hook");
    assert!(got["result"].get("token").is_none(), "write-only: {got}");
    let listed = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(listed["result"]["configs"].as_array().unwrap().len(), 1);
    let del = rpc(
        &s.base,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    )
    .await;
    assert_eq!(del["result"], json!({}));
    let del2 = rpc(
        &s.base,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    )
    .await;
    assert_eq!(del2["result"], json!({}), "delete is idempotent");
    let missing = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    )
    .await;
    assert_eq!(code(&missing), -32001);
    let bad = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "url": "ftp://x"}),
    )
    .await;
    assert_eq!(code(&bad), -32602);
    assert!(message(&bad).contains("url"));
}

#[tokio::test]
async fn capabilities_off_give_the_spec_errors() {
    let s = serve(a2a_kit::server::AgentService::builder(TestAgent).streaming(false)).await;
    let v = rpc(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("echo", "x")}),
    )
    .await;
    assert_eq!(code(&v), -32004);
    let v = rpc(&s.base, "SubscribeToTask", json!({"id": "x"})).await;
    assert_eq!(code(&v), -32004);
    let v = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "x", "url": "https://e.com"}),
    )
    .await;
    assert_eq!(code(&v), -32003);
    let v = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "x"), "configuration": {"taskPushNotificationConfig": {"url": "https://e.com"}}}),
    )
    .await;
    assert_eq!(code(&v), -32003);
    let v = rpc(&s.base, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(code(&v), -32004);
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(card["capabilities"]["streaming"], false);
    assert_eq!(card["capabilities"]["pushNotifications"], false);
}

#[tokio::test]
async fn extended_card_and_required_extensions() {
    let mut extended = a2a_kit::skill::Agent::info(&TestAgent).card("http://x");
    extended.name = "Test Agent (extended)".into();
    let s = serve(
        a2a_kit::server::AgentService::builder(TestAgent)
            .extended_card(extended)
            .extended_card_authenticated_upstream()
            .require_extension("urn:a2a-kit:test-ext"),
    )
    .await;
    let v = rpc(&s.base, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(
        code(&v),
        -32008,
        "the required extension was not activated: {v}"
    );
    assert!(message(&v).contains("urn:a2a-kit:test-ext"));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"});
    let resp = client()
        .post(&s.base)
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", "urn:other, urn:a2a-kit:test-ext")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["a2a-extensions"],
        "urn:a2a-kit:test-ext",
        "activated extensions are echoed"
    );
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["result"]["name"], "Test Agent (extended)");
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    let required = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == "urn:a2a-kit:test-ext")
        .unwrap_or_else(|| panic!("the required extension is on the card: {card}"));
    assert_eq!(required["required"], true);
}

#[tokio::test]
async fn agent_card_caching() {
    let s = serve_test_agent().await;
    let url = format!("{}/.well-known/agent-card.json", s.base);
    let resp = client().get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let etag = resp.headers()["etag"].to_str().unwrap().to_string();
    assert!(
        resp.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    assert!(resp.headers().contains_key("last-modified"));
    let card: Value = resp.json().await.unwrap();
    assert_eq!(card["supportedInterfaces"][0]["url"], s.base);
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    let again = client()
        .get(&url)
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    let legacy = client()
        .get(format!("{}/.well-known/agent.json", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(legacy.status(), 200);
}

/// `If-Modified-Since` revalidates like `If-None-Match`; `If-None-Match` wins when both are
/// sent, and a date that does not parse is ignored.
#[tokio::test]
async fn agent_card_if_modified_since() {
    let s = serve_test_agent().await;
    let url = format!("{}/.well-known/agent-card.json", s.base);
    let resp = client().get(&url).send().await.unwrap();
    let modified = resp.headers()["last-modified"]
        .to_str()
        .unwrap()
        .to_string();
    let etag = resp.headers()["etag"].to_str().unwrap().to_string();
    let get = |since: &str, none_match: Option<&str>| {
        let mut req = client().get(&url).header("If-Modified-Since", since);
        if let Some(tag) = none_match {
            req = req.header("If-None-Match", tag);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get(&modified, None).await, 304, "the same date");
    assert_eq!(
        get("Fri, 31 Dec 2100 23:59:59 GMT", None).await,
        304,
        "a later date"
    );
    assert_eq!(
        get("Sat, 01 Jan 2000 00:00:00 GMT", None).await,
        200,
        "an earlier date"
    );
    assert_eq!(get("yesterday", None).await, 200, "not a date");
    assert_eq!(
        get(&modified, Some("\"other\"")).await,
        200,
        "If-None-Match takes precedence"
    );
    assert_eq!(get("Sat, 01 Jan 2000 00:00:00 GMT", Some(&etag)).await, 304);
}

/// The send methods' params are parsed in the envelope's pass when `method` comes first, and
/// apart when it does not: both orders give the same result and the same errors.
#[tokio::test]
async fn send_params_parse_the_same_in_any_member_order() {
    let s = serve_test_agent().await;
    let send = |params: &Value, params_first: bool| {
        let (p, m) = (params.to_string(), r#""method":"SendMessage""#);
        if params_first {
            format!(r#"{{"params":{p},"jsonrpc":"2.0","id":7,{m}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":7,{m},"params":{p}}}"#)
        }
    };
    let mut message_to_echo = user_text("Alice");
    message_to_echo["metadata"] = json!({"skillId": "echo"});
    let good = json!({ "message": message_to_echo });
    let bad =
        json!({"message": {"messageId": "m", "role": "ROLE_ROBOT", "parts": [{"text": "x"}]}});
    let post = |body: String| raw(&s.base, Some("application/json"), Some("1.0"), body);
    for params_first in [false, true] {
        let (_, ok) = post(send(&good, params_first)).await;
        assert_eq!(ok["id"], 7, "{ok}");
        assert_eq!(
            ok["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{ok}"
        );

        let (_, v) = post(send(&bad, params_first)).await;
        assert_eq!(code(&v), -32602, "{v}");
        assert!(message(&v).contains("params.message.role"), "{v}");
        assert_eq!(v["id"], 7);

        let (_, v) = post(send(&json!([good]), params_first)).await;
        assert_eq!(code(&v), -32602, "{v}");
        assert!(message(&v).contains("params"), "{v}");

        let dup = send(&good, params_first).replacen(r#""id":7,"#, r#""id":7,"id":8,"#, 1);
        let (_, v) = post(dup).await;
        assert_eq!(code(&v), -32600, "{v}");
        assert!(message(&v).contains("duplicate field `id`"), "{v}");
    }
}

/// A key named twice in a free-form object (`metadata` of the request, of its message or of a
/// part; a data part's value, at any depth) is refused as over HTTP+JSON: InvalidParams naming
/// the object and the key, whatever the members' order, and no task is created. (A plain JSON
/// map would keep the last one silently.)
#[tokio::test]
async fn duplicate_keys_in_free_form_objects_are_refused_as_over_rest() {
    let s = serve_test_agent().await;
    let msg = |extra: &str, parts: &str| {
        format!(
            r#"{{"messageId":"m-dup","role":"ROLE_USER","parts":{parts},"metadata":{{"skillId":"echo"{extra}}}}}"#
        )
    };
    let text = r#"[{"text":"x"}]"#;
    let cases = [
        (
            format!(r#"{{"message":{}}}"#, msg(r#","skillId":"echo""#, text)),
            "skillId",
            "message.metadata",
        ),
        (
            format!(
                r#"{{"message":{},"metadata":{{"k":1,"k":2}}}}"#,
                msg("", text)
            ),
            "k",
            "metadata",
        ),
        (
            format!(
                r#"{{"message":{}}}"#,
                msg("", r#"[{"data":{"a":{"b":1,"c":[{"b":2,"b":3}]}}}]"#)
            ),
            "b",
            "message.parts[0].data",
        ),
        (
            format!(
                r#"{{"message":{}}}"#,
                msg("", r#"[{"text":"x","metadata":{"m":1,"m":1}}]"#)
            ),
            "m",
            "message.parts[0].metadata",
        ),
    ];
    for (params, key, field) in &cases {
        for params_first in [false, true] {
            let body = if params_first {
                format!(r#"{{"params":{params},"jsonrpc":"2.0","id":3,"method":"SendMessage"}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{params}}}"#)
            };
            let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), body).await;
            assert_eq!(code(&v), -32602, "{params}: {v}");
            assert_eq!(v["id"], 3);
            let m = message(&v);
            assert!(m.contains(&format!("duplicate key `{key}`")), "{m}");
            assert!(m.contains(&format!("params.{field}")), "{m}");
        }
        let r = client()
            .post(format!("{}/message:send", s.base))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(params.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{params}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["details"][0]["reason"], "INVALID_PARAMS", "{e}");
        let m = e["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains(&format!("duplicate key `{key}`")), "{m}");
        assert!(m.contains(&format!("`{field}")), "{m}");
    }
    let list = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(
        list["result"]["totalSize"], 0,
        "no task was created: {list}"
    );
    let once = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{{"message":{}}}}}"#,
        msg("", r#"[{"text":"x"},{"data":{"a":{"b":1,"c":{"b":2}}}}]"#)
    );
    let (_, v) = raw(&s.base, Some("application/json"), Some("1.0"), once).await;
    assert!(v["result"]["task"].is_object(), "{v}");
}
