//! The HTTP+JSON binding through real HTTP: every route, the tenant prefix, SSE without the
//! JSON-RPC envelope, and the error shapes.

use a2a_tests::*;
use serde_json::{Value, json};

/// An HTTP+JSON request with the A2A-Version header.
fn rest_request(method: reqwest::Method, url: String) -> reqwest::RequestBuilder {
    client().request(method, url).header("A2A-Version", "1.0")
}

/// `POST /message:send` of `text` to `skill`; the response body (200 or the test fails).
async fn rest_send_to_skill(base: &str, skill: &str, text: &str) -> Value {
    let resp = rest_request(reqwest::Method::POST, format!("{base}/message:send"))
        .json(&json!({"message": to_skill(skill, text)}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

#[tokio::test]
async fn routes_work() {
    let s = serve_test_agent().await;
    let v = rest_send_to_skill(&s.base, "echo", "rest!").await;
    let id = v["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    let got: Value = rest_request(
        reqwest::Method::GET,
        format!("{}/tasks/{id}?historyLength=1", s.base),
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(got["id"], id);
    assert_eq!(got["history"].as_array().unwrap().len(), 1);

    let list: Value = rest_request(
        reqwest::Method::GET,
        format!(
            "{}/tasks?pageSize=1&includeArtifacts=true&status=TASK_STATE_COMPLETED",
            s.base
        ),
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(list["totalSize"], 1);
    assert_eq!(list["pageSize"], 1);
    assert_eq!(list["nextPageToken"], "");
    assert!(list["tasks"][0]["artifacts"].is_array());

    // Cancel an input-required task, with and without a body.
    let asked = rest_send_to_skill(&s.base, "ask", "x").await;
    let aid = asked["task"]["id"].as_str().unwrap();
    let c = rest_request(
        reqwest::Method::POST,
        format!("{}/tasks/{aid}:cancel", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(c.status(), 200);
    let c: Value = c.json().await.unwrap();
    assert_eq!(c["status"]["state"], "TASK_STATE_CANCELED");
    let again = rest_request(
        reqwest::Method::POST,
        format!("{}/tasks/{aid}:cancel", s.base),
    )
    .json(&json!({}))
    .send()
    .await
    .unwrap();
    assert_eq!(again.status(), 409);
    let e: Value = again.json().await.unwrap();
    assert_eq!(e["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(e["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE");
}

#[tokio::test]
async fn tenant_prefix_and_application_a2a_json() {
    let s = serve_test_agent().await;
    let resp = rest_request(
        reqwest::Method::POST,
        format!("{}/acme/message:send", s.base),
    )
    .header("content-type", "application/a2a+json")
    .body(json!({"message": to_skill("echo", "t")}).to_string())
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let id = v["task"]["id"].as_str().unwrap();
    let got = rest_request(reqwest::Method::GET, format!("{}/acme/tasks/{id}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
}

#[tokio::test]
async fn streams_carry_bare_stream_responses() {
    let s = serve_test_agent().await;
    let resp = rest_request(reqwest::Method::POST, format!("{}/message:stream", s.base))
        .json(&json!({"message": to_skill("chunks", "2")}))
        .send()
        .await
        .unwrap();
    let evs = read_sse(resp, 100).await;
    assert!(evs[0].data.get("jsonrpc").is_none());
    assert!(evs[0].data.get("task").is_some());
    assert_eq!(
        evs.last().unwrap().data["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // Subscribe by GET and by POST; Last-Event-ID replay.
    let v = rest_send_to_skill(&s.base, "slow", "300").await;
    let id = v["task"]["id"].as_str().unwrap();
    for method in [reqwest::Method::GET, reqwest::Method::POST] {
        let resp = rest_request(method.clone(), format!("{}/tasks/{id}:subscribe", s.base))
            .header("Last-Event-ID", "1")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{method}");
        let evs = read_sse(resp, 100).await;
        assert_eq!(evs[0].id, "2");
        assert_eq!(
            evs.last().unwrap().data["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    let fresh = rest_request(
        reqwest::Method::GET,
        format!("{}/tasks/{id}:subscribe", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(
        fresh.status(),
        400,
        "a terminal task cannot be subscribed to"
    );
}

#[tokio::test]
async fn push_config_routes() {
    let s = serve_test_agent().await;
    let v = rest_send_to_skill(&s.base, "ask", "x").await;
    let id = v["task"]["id"].as_str().unwrap();
    let base = format!("{}/tasks/{id}/pushNotificationConfigs", s.base);
    let created: Value = rest_request(reqwest::Method::POST, base.clone())
        .json(&json!({"url": "https://example.com/hook", "authentication": {"scheme": "Bearer", "credentials": "c"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let cid = created["id"].as_str().unwrap();
    assert_eq!(created["taskId"], id);
    let list: Value = rest_request(reqwest::Method::GET, base.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["configs"][0]["id"], cid);
    let one = rest_request(reqwest::Method::GET, format!("{base}/{cid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(one.status(), 200);
    let del = rest_request(reqwest::Method::DELETE, format!("{base}/{cid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 200);
    assert_eq!(del.json::<Value>().await.unwrap(), json!({}));
    let gone = rest_request(reqwest::Method::GET, format!("{base}/{cid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn errors_have_the_right_status_and_shape() {
    let s = serve_test_agent().await;
    let nf = rest_request(reqwest::Method::GET, format!("{}/tasks/nope", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(nf.status(), 404);
    let e: Value = nf.json().await.unwrap();
    assert_eq!(e["error"]["code"], 404);
    assert_eq!(e["error"]["status"], "NOT_FOUND");
    assert_eq!(
        e["error"]["details"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );

    let route = rest_request(
        reqwest::Method::GET,
        format!("{}/nothing/here/at/all", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(route.status(), 404);

    let verb = rest_request(reqwest::Method::DELETE, format!("{}/message:send", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(verb.status(), 405);
    assert_eq!(verb.headers()["allow"], "POST");
    // The body's code is the status, as in every error body (found by fuzz/ `rest`).
    let e: Value = verb.json().await.unwrap();
    assert_eq!(e["error"]["code"], 405, "{e}");

    let ct = rest_request(reqwest::Method::POST, format!("{}/message:send", s.base))
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(ct.status(), 415);
    let e: Value = ct.json().await.unwrap();
    assert_eq!(
        e["error"]["details"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );

    let bad = rest_request(reqwest::Method::POST, format!("{}/message:send", s.base))
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let page = rest_request(
        reqwest::Method::GET,
        format!("{}/tasks?pageSize=150", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(page.status(), 400);
    let e: Value = page.json().await.unwrap();
    assert!(e["error"]["message"].as_str().unwrap().contains("pageSize"));
    let flag = rest_request(
        reqwest::Method::GET,
        format!("{}/tasks?includeArtifacts=yes", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(flag.status(), 400);
    let status = rest_request(
        reqwest::Method::GET,
        format!("{}/tasks?status=DONE", s.base),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(status.status(), 400);

    let nover = client()
        .get(format!("{}/tasks", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(nover.status(), 400);
    let e: Value = nover.json().await.unwrap();
    assert_eq!(e["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
}

/// A body naming a key twice, at any depth, is refused (400, naming the key) and creates no
/// task, as the JSON-RPC binding refuses it; the same body without the repeat is served.
#[tokio::test]
async fn duplicate_keys_are_refused() {
    let s = serve_test_agent().await;
    let message = to_skill("echo", "once").to_string();
    let inner = message.replacen('{', r#"{"messageId":"first","#, 1);
    let cases = [
        (
            format!(r#"{{"message":{message},"message":{message}}}"#),
            "message",
        ),
        (format!(r#"{{"message":{inner}}}"#), "messageId"),
        (
            format!(r#"{{"message":{message},"metadata":{{"k":1,"k":2}}}}"#),
            "k",
        ),
    ];
    for (body, key) in cases {
        let resp = rest_request(reqwest::Method::POST, format!("{}/message:send", s.base))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let e: Value = resp.json().await.unwrap();
        let text = e["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains(&format!("duplicate key `{key}`")), "{e}");
    }
    let list: Value = rest_request(reqwest::Method::GET, format!("{}/tasks", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["totalSize"], 0, "no task was created");
    rest_send_to_skill(&s.base, "echo", "once").await;
}
