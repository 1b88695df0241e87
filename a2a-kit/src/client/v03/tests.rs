use super::*;

fn resp(status: u16, body: &'static str) -> reqwest::Response {
    reqwest::Response::from(http::Response::builder().status(status).body(body).unwrap())
}

#[tokio::test]
async fn jsonrpc_errors_carry_the_task_and_state_of_their_data() {
    let e = read(
        Binding::JsonRpc,
        Target::Task,
        resp(
            200,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"no","data":{"taskId":"t","state":"completed"}}}"#,
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Some(-32002));
    assert_eq!(e.reason(), Some("TASK_NOT_CANCELABLE"));
    assert_eq!(
        e.agent_error().unwrap().to_a2a_error(),
        A2aError::TaskNotCancelable {
            task_id: "t".into(),
            state: TaskState::Completed
        }
    );
}

#[tokio::test]
async fn jsonrpc_results_and_envelopes_without_one() {
    let read = |body| read(Binding::JsonRpc, Target::PushConfig, resp(200, body));
    assert_eq!(
        read(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#)
            .await
            .unwrap(),
        json!({"a": 1})
    );
    assert_eq!(
        read(r#"{"jsonrpc":"2.0","id":1}"#).await.unwrap(),
        Value::Null
    );
    assert!(matches!(
        read(r#"{"a":1}"#).await,
        Err(ClientError::InvalidResponse(_))
    ));
}

#[tokio::test]
async fn rest_errors_by_code_or_status() {
    let read = |status, body, target| read(Binding::HttpJson, target, resp(status, body));
    // The JS SDK's and a2a-kit's: the code says.
    let e = read(
        404,
        r#"{"code":-32001,"message":"Task not found","data":{"taskId":"t"}}"#,
        Target::Task,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Some(-32001));
    assert_eq!(e.agent_error().unwrap().http_status, Some(404));
    // The Python SDK's: the status says, by what was addressed.
    for (status, target, code) in [
        (404, Target::Task, -32001),
        (404, Target::Card, -32007),
        (404, Target::Message, -32601),
        (409, Target::Task, -32002),
        (422, Target::Message, -32602),
        (501, Target::PushConfig, -32003),
        (501, Target::Task, -32004),
        (500, Target::Task, -32603),
    ] {
        let e = read(status, r#"{"message":"m"}"#, target)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some(code), "{status} {target:?}");
    }
    // No A2A error at all: an HTTP error.
    let e = read(
        405,
        r#"{"detail":"Method Not Allowed"}"#,
        Target::PushConfig,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, ClientError::Http { status: 405, .. }), "{e}");
    let e = read(401, r#"{"message":"who?"}"#, Target::Task)
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Http { status: 401, .. }), "{e}");
}

#[test]
fn stream_events_of_both_bindings() {
    let rpc = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"input-required"},"final":true}}"#;
    let ev = parse_event(Binding::JsonRpc, "", rpc).unwrap();
    assert_eq!(ev.state(), Some(TaskState::InputRequired));
    let rest = r#"{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]}}}"#;
    let StreamResponse::ArtifactUpdate(u) = parse_event(Binding::HttpJson, "", rest).unwrap()
    else {
        panic!()
    };
    assert_eq!(u.artifact.parts[0].as_text(), Some("x"));
    let err = r#"{"code":-32001,"message":"Task not found"}"#;
    let e = parse_event(Binding::HttpJson, "error", err).unwrap_err();
    assert_eq!(e.code(), Some(-32001));
    let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"no"}}"#;
    assert_eq!(
        parse_event(Binding::JsonRpc, "", err).unwrap_err().code(),
        Some(-32004)
    );
    let bad = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"nonsense"}}"#;
    assert!(matches!(
        parse_event(Binding::JsonRpc, "", bad),
        Err(ClientError::InvalidResponse(_))
    ));
}

#[test]
fn nulls_are_left_out() {
    assert_eq!(
        without_nulls(json!({"a": null, "b": {"c": null, "d": 1}, "e": [{"f": null}]})),
        json!({"b": {"d": 1}, "e": [{}]})
    );
}
