//! Every error code through both bindings: each A2A error a request can cause, caused over
//! JSON-RPC (the code, with HTTP 200) and over HTTP+JSON (the HTTP status of the spec's
//! §5.4 table, `error.code` equal to it, the gRPC status name, and the ErrorInfo reason), and
//! the table itself for every error, reachable by a request or not.

use a2a_kit::error::A2aError;
use a2a_kit::protocol::TaskState;
use a2a_kit::server::AgentService;
use a2a_tests::*;
use serde_json::{Value, json};

/// One request: JSON-RPC method and params, and its HTTP+JSON form.
struct Case {
    name: &'static str,
    jsonrpc: (&'static str, Value),
    rest: (reqwest::Method, String, Option<Value>),
    /// Sent as they are (a version header is added unless `no_version`).
    content_type: &'static str,
    raw_body: Option<&'static str>,
    no_version: bool,
    code: i64,
    http: u16,
    grpc: &'static str,
    reason: Option<&'static str>,
}

fn case(
    name: &'static str,
    jsonrpc: (&'static str, Value),
    rest: (reqwest::Method, String, Option<Value>),
    expect: (i64, u16, &'static str, Option<&'static str>),
) -> Case {
    Case {
        name,
        jsonrpc,
        rest,
        content_type: "application/json",
        raw_body: None,
        no_version: false,
        code: expect.0,
        http: expect.1,
        grpc: expect.2,
        reason: expect.3,
    }
}

/// The request of an error case over JSON-RPC (when `jsonrpc`) or HTTP+JSON: (status, body).
async fn send_error_case(base: &str, c: &Case, jsonrpc: bool) -> (u16, Value) {
    let req = if jsonrpc {
        let body = match c.raw_body {
            Some(raw) => raw.to_string(),
            None => {
                json!({"jsonrpc": "2.0", "id": 1, "method": c.jsonrpc.0, "params": c.jsonrpc.1})
                    .to_string()
            }
        };
        client().post(base).body(body)
    } else {
        let (method, path, body) = &c.rest;
        let req = client().request(method.clone(), format!("{base}{path}"));
        match (c.raw_body, body) {
            (Some(raw), _) => req.body(raw),
            (None, Some(b)) => req.body(b.to_string()),
            (None, None) => req,
        }
    };
    let mut req = req.header("content-type", c.content_type);
    if !c.no_version {
        req = req.header("A2A-Version", "1.0");
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn error_info_reason(details: &Value) -> Option<&str> {
    details.as_array()?.iter().find_map(|d| {
        (d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
            .then(|| d["reason"].as_str())
            .flatten()
    })
}

async fn check(base: &str, c: &Case) {
    let (status, v) = send_error_case(base, c, true).await;
    assert_eq!(
        status, 200,
        "{}: JSON-RPC errors travel with 200: {v}",
        c.name
    );
    assert_eq!(v["error"]["code"], c.code, "{}: {v}", c.name);
    if let Some(reason) = c.reason {
        assert_eq!(
            error_info_reason(&v["error"]["data"]),
            Some(reason),
            "{}: {v}",
            c.name
        );
    }
    let (status, v) = send_error_case(base, c, false).await;
    assert_eq!(status, c.http, "{}: {v}", c.name);
    assert_eq!(v["error"]["code"], c.http, "{}: {v}", c.name);
    assert_eq!(v["error"]["status"], c.grpc, "{}: {v}", c.name);
    if let Some(reason) = c.reason {
        assert_eq!(
            error_info_reason(&v["error"]["details"]),
            Some(reason),
            "{}: {v}",
            c.name
        );
    }
}

#[tokio::test]
async fn every_reachable_error_through_both_bindings() {
    use reqwest::Method as M;
    let s = serve_test_agent().await;
    let base = s.base.clone();
    let done = rpc(
        &base,
        "SendMessage",
        json!({"message": to_skill("echo", "x")}),
    )
    .await;
    let done = done["result"]["task"]["id"].as_str().unwrap().to_string();
    let send_body = json!({"message": to_skill("echo", "x")});

    let mut cases = vec![
        case(
            "TaskNotFound",
            ("GetTask", json!({"id": "nope"})),
            (M::GET, "/tasks/nope".into(), None),
            (-32001, 404, "NOT_FOUND", Some("TASK_NOT_FOUND")),
        ),
        case(
            "TaskNotCancelable",
            ("CancelTask", json!({"id": done})),
            (M::POST, format!("/tasks/{done}:cancel"), None),
            (
                -32002,
                409,
                "FAILED_PRECONDITION",
                Some("TASK_NOT_CANCELABLE"),
            ),
        ),
        case(
            "UnsupportedOperation",
            ("SubscribeToTask", json!({"id": done})),
            (M::GET, format!("/tasks/{done}:subscribe"), None),
            (-32004, 400, "UNIMPLEMENTED", Some("UNSUPPORTED_OPERATION")),
        ),
        case(
            "InvalidParams",
            ("ListTasks", json!({"pageSize": 1000})),
            (M::GET, "/tasks?pageSize=1000".into(), None),
            (-32602, 400, "INVALID_ARGUMENT", None),
        ),
        case(
            "MethodNotFound",
            ("tasks/get", json!({"id": "x"})),
            (M::GET, "/nothing/here".into(), None),
            (-32601, 404, "UNIMPLEMENTED", None),
        ),
    ];
    let mut ct = case(
        "ContentTypeNotSupported",
        ("SendMessage", send_body.clone()),
        (M::POST, "/message:send".into(), Some(send_body.clone())),
        (
            -32005,
            415,
            "INVALID_ARGUMENT",
            Some("CONTENT_TYPE_NOT_SUPPORTED"),
        ),
    );
    ct.content_type = "text/plain";
    cases.push(ct);
    let mut version = case(
        "VersionNotSupported",
        ("GetTask", json!({"id": "x"})),
        (M::GET, "/tasks/x".into(), None),
        (-32009, 400, "UNIMPLEMENTED", Some("VERSION_NOT_SUPPORTED")),
    );
    version.no_version = true;
    cases.push(version);
    let mut parse = case(
        "JsonParse",
        ("SendMessage", Value::Null),
        (M::POST, "/message:send".into(), None),
        (-32700, 400, "INVALID_ARGUMENT", None),
    );
    parse.raw_body = Some("{\"not json");
    cases.push(parse);
    for c in &cases {
        check(&base, c).await;
    }

    // Errors that need an agent configured for them.
    let push_off = serve(AgentService::builder(TestAgent).push_notifications(false)).await;
    let config = json!({"taskId": "t", "url": "https://example.com/hook"});
    check(
        &push_off.base,
        &case(
            "PushNotificationNotSupported",
            ("CreateTaskPushNotificationConfig", config.clone()),
            (
                M::POST,
                "/tasks/t/pushNotificationConfigs".into(),
                Some(config),
            ),
            (
                -32003,
                400,
                "UNIMPLEMENTED",
                Some("PUSH_NOTIFICATION_NOT_SUPPORTED"),
            ),
        ),
    )
    .await;
    let no_card = serve(
        AgentService::builder(TestAgent).card(|c| c.capabilities.extended_agent_card = Some(true)),
    )
    .await;
    check(
        &no_card.base,
        &case(
            "ExtendedAgentCardNotConfigured",
            ("GetExtendedAgentCard", json!({})),
            (M::GET, "/extendedAgentCard".into(), None),
            (
                -32007,
                400,
                "FAILED_PRECONDITION",
                Some("EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
            ),
        ),
    )
    .await;
    let ext = serve(AgentService::builder(TestAgent).require_extension("urn:test:ext")).await;
    check(
        &ext.base,
        &case(
            "ExtensionSupportRequired",
            ("GetTask", json!({"id": "x"})),
            (M::GET, "/tasks/x".into(), None),
            (
                -32008,
                400,
                "FAILED_PRECONDITION",
                Some("EXTENSION_SUPPORT_REQUIRED"),
            ),
        ),
    )
    .await;
}

/// The §5.4 table (A2A v1.0.0, as the conformance suite grades it) for every error, including those no request can cause here
/// (an internal failure, an invalid agent response).
#[test]
fn the_mapping_table() {
    let table: Vec<(A2aError, i32, u16, &str)> = vec![
        (
            A2aError::JsonParse("x".into()),
            -32700,
            400,
            "INVALID_ARGUMENT",
        ),
        (
            A2aError::InvalidRequest("x".into()),
            -32600,
            400,
            "INVALID_ARGUMENT",
        ),
        (
            A2aError::MethodNotFound("x".into()),
            -32601,
            404,
            "UNIMPLEMENTED",
        ),
        (
            A2aError::invalid_params("x"),
            -32602,
            400,
            "INVALID_ARGUMENT",
        ),
        (A2aError::Internal("x".into()), -32603, 500, "INTERNAL"),
        (
            A2aError::Unavailable("x".into()),
            -32603,
            503,
            "UNAVAILABLE",
        ),
        (A2aError::task_not_found("t"), -32001, 404, "NOT_FOUND"),
        (
            A2aError::TaskNotCancelable {
                task_id: "t".into(),
                state: TaskState::Completed,
            },
            -32002,
            409,
            "FAILED_PRECONDITION",
        ),
        (
            A2aError::PushNotificationNotSupported,
            -32003,
            400,
            "UNIMPLEMENTED",
        ),
        (A2aError::unsupported("x"), -32004, 400, "UNIMPLEMENTED"),
        (
            A2aError::ContentTypeNotSupported("x".into()),
            -32005,
            415,
            "INVALID_ARGUMENT",
        ),
        (
            A2aError::InvalidAgentResponse("x".into()),
            -32006,
            502,
            "INTERNAL",
        ),
        (
            A2aError::ExtendedAgentCardNotConfigured,
            -32007,
            400,
            "FAILED_PRECONDITION",
        ),
        (
            A2aError::ExtensionSupportRequired { uri: "u".into() },
            -32008,
            400,
            "FAILED_PRECONDITION",
        ),
        (
            A2aError::VersionNotSupported {
                version: "0.3".into(),
                message: "x".into(),
            },
            -32009,
            400,
            "UNIMPLEMENTED",
        ),
    ];
    for (err, code, http, grpc) in table {
        assert_eq!(err.code(), code, "{err:?}");
        assert_eq!(err.http_status(), http, "{err:?}");
        assert_eq!(err.grpc_status(), grpc, "{err:?}");
        let body = err.to_rest_body();
        assert_eq!(body["error"]["code"], http, "{err:?}");
        assert_eq!(body["error"]["status"], grpc, "{err:?}");
    }
}
