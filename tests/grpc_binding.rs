//! The gRPC binding over real HTTP/2 on 127.0.0.1: every method with tonic's generated client,
//! errors with their `google.rpc` details, tasks shared with JSON-RPC and HTTP+JSON, the edge
//! (authentication, quotas, body limit) refusing gRPC calls as gRPC statuses, and bad input
//! (malformed protobuf, unknown enum values, missing fields, bad metadata) refused with
//! INVALID_ARGUMENT naming the field, nothing stored.

use std::time::Duration;

use a2a_kit::grpc::pb;
use a2a_kit::grpc::pb::a2a_service_client::A2aServiceClient;
use a2a_kit::server::AgentService;
use a2a_tests::{TestAgent, rpc, uuid};
use bytes::{Buf, BufMut, Bytes};
use futures::StreamExt;
use serde_json::{Value, json};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

/// An agent served by the kit's own accept loop (HTTP/1.1 and h2c on one port).
struct Served {
    base: String,
    authority: String,
    _task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self._task.abort();
    }
}

async fn serve(a2a: a2a_kit::server::AgentServiceBuilder) -> Served {
    serve_limited(a2a, a2a_kit_axum::ServerLimits::default()).await
}

async fn serve_limited(
    a2a: a2a_kit::server::AgentServiceBuilder,
    limits: a2a_kit_axum::ServerLimits,
) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    let base = format!("http://{authority}");
    let service = a2a.public_url(&base).build().expect("valid");
    let task = tokio::spawn(async move {
        a2a_kit_axum::serve_service_with(service, listener, std::future::pending(), limits)
            .await
            .expect("serve");
    });
    Served {
        base,
        authority,
        _task: task,
    }
}

fn test_agent() -> a2a_kit::server::AgentServiceBuilder {
    AgentService::builder(TestAgent)
        .push_notifications(true)
        .execution(a2a_kit::runtime::ExecutionConfig {
            cancel_grace: Duration::from_millis(300),
            ..Default::default()
        })
}

async fn connect(s: &Served) -> A2aServiceClient<Channel> {
    let channel = Channel::from_shared(format!("http://{}", s.authority))
        .unwrap()
        .connect()
        .await
        .expect("connect over h2c");
    A2aServiceClient::new(channel)
}

/// A request with the A2A version metadata every call needs.
fn req<T>(message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    r
}

fn text_part(text: &str) -> pb::Part {
    pb::Part {
        content: Some(pb::part::Content::Text(text.into())),
        ..Default::default()
    }
}

fn struct_of(v: Value) -> prost_types::Struct {
    let Value::Object(map) = v else {
        panic!("an object")
    };
    prost_types::Struct {
        fields: map.into_iter().map(|(k, v)| (k, value_of(v))).collect(),
    }
}

fn value_of(v: Value) -> prost_types::Value {
    use prost_types::value::Kind;
    prost_types::Value {
        kind: Some(match v {
            Value::Null => Kind::NullValue(0),
            Value::Bool(b) => Kind::BoolValue(b),
            Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap()),
            Value::String(s) => Kind::StringValue(s),
            Value::Array(a) => Kind::ListValue(prost_types::ListValue {
                values: a.into_iter().map(value_of).collect(),
            }),
            obj @ Value::Object(_) => Kind::StructValue(struct_of(obj)),
        }),
    }
}

/// A user message to one of the test agent's skills.
fn to_skill(skill: &str, text: &str) -> pb::Message {
    pb::Message {
        message_id: uuid(),
        role: pb::Role::User as i32,
        parts: vec![text_part(text)],
        metadata: Some(struct_of(json!({"skillId": skill}))),
        ..Default::default()
    }
}

fn send(message: pb::Message) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        message: Some(message),
        ..Default::default()
    }
}

/// SendMessage over `client`: the task it answered with.
async fn sent_task(
    client: &mut A2aServiceClient<Channel>,
    send: pb::SendMessageRequest,
) -> pb::Task {
    task_of(
        client
            .send_message(req(send))
            .await
            .expect("SendMessage")
            .into_inner(),
    )
}

fn task_of(resp: pb::SendMessageResponse) -> pb::Task {
    match resp.payload {
        Some(pb::send_message_response::Payload::Task(t)) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn text_of(part: &pb::Part) -> &str {
    match &part.content {
        Some(pb::part::Content::Text(t)) => t,
        other => panic!("expected text, got {other:?}"),
    }
}

/// The status's `ErrorInfo.reason`, checking its domain.
fn reason(status: &Status) -> String {
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo detail");
    assert_eq!(info.domain, "a2a-protocol.org");
    info.reason.clone()
}

/// The fields a status's `BadRequest` names.
fn violated_fields(status: &Status) -> Vec<String> {
    status
        .get_error_details()
        .bad_request()
        .map(|b| b.field_violations.iter().map(|v| v.field.clone()).collect())
        .unwrap_or_default()
}

async fn list_all(client: &mut A2aServiceClient<Channel>) -> Vec<pb::Task> {
    client
        .list_tasks(req(pb::ListTasksRequest::default()))
        .await
        .expect("ListTasks")
        .into_inner()
        .tasks
}

#[tokio::test]
async fn the_card_lists_grpc_at_the_same_host_and_port() {
    let s = serve(test_agent()).await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", s.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let bindings: Vec<(&str, &str)> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap(),
                i["url"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bindings,
        [
            ("JSONRPC", s.base.as_str()),
            ("HTTP+JSON", s.base.as_str()),
            ("GRPC", s.authority.as_str()),
        ]
    );
    assert_eq!(card["supportedInterfaces"][2]["protocolVersion"], "1.0");
}

#[tokio::test]
async fn a_card_without_a_public_url_names_each_requests_authority() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let service = test_agent().build().unwrap();
    let _task = tokio::spawn(async move {
        a2a_kit_axum::serve_service(service, listener, std::future::pending())
            .await
            .unwrap();
    });
    let card: Value = reqwest::get(format!(
        "http://localhost:{port}/.well-known/agent-card.json"
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("http://localhost:{port}")
    );
    assert_eq!(
        card["supportedInterfaces"][2]["url"],
        format!("localhost:{port}")
    );
}

#[tokio::test]
async fn send_message_answers_a_task_or_a_message() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let task = sent_task(&mut client, send(to_skill("echo", "hi over grpc"))).await;
    let status = task.status.as_ref().unwrap();
    assert_eq!(status.state, pb::TaskState::Completed as i32);
    assert!(status.timestamp.is_some());
    assert_eq!(text_of(&task.artifacts[0].parts[0]), "hi over grpc");
    assert_eq!(task.history.len(), 1, "the user's message is the history");
    // The answer (the task as the request's own write stored it) is the task as stored.
    let stored = client
        .get_task(req(pb::GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stored, task);
    let direct = client
        .send_message(req(send(to_skill("direct", "hello"))))
        .await
        .expect("SendMessage")
        .into_inner();
    match direct.payload {
        Some(pb::send_message_response::Payload::Message(m)) => {
            assert_eq!(m.role, pb::Role::Agent as i32);
            assert!(!m.parts.is_empty());
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

#[tokio::test]
async fn streams_carry_the_task_its_chunks_and_its_end() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let mut stream = client
        .send_streaming_message(req(send(to_skill("chunks", "3"))))
        .await
        .expect("SendStreamingMessage")
        .into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event.expect("an event").payload.expect("a payload"));
    }
    use pb::stream_response::Payload;
    assert!(matches!(events[0], Payload::Task(_)), "{events:?}");
    let chunks: Vec<&pb::TaskArtifactUpdateEvent> = events
        .iter()
        .filter_map(|e| match e {
            Payload::ArtifactUpdate(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(chunks.len(), 3);
    assert!(chunks[2].last_chunk);
    assert!(chunks[1].append);
    match events.last().unwrap() {
        Payload::StatusUpdate(u) => {
            assert_eq!(
                u.status.as_ref().unwrap().state,
                pb::TaskState::Completed as i32
            )
        }
        other => panic!("the stream ends with the final status, not {other:?}"),
    }
}

#[tokio::test]
async fn get_list_cancel_and_subscribe() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let mut first = send(to_skill("slow", "20000"));
    first.configuration = Some(pb::SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let task = sent_task(&mut client, first).await;
    let id = task.id.clone();
    let got = client
        .get_task(req(pb::GetTaskRequest {
            id: id.clone(),
            history_length: Some(0),
            ..Default::default()
        }))
        .await
        .expect("GetTask")
        .into_inner();
    assert_eq!(got.id, id);
    assert!(got.history.is_empty(), "historyLength 0");
    let listed = list_all(&mut client).await;
    assert_eq!(listed.len(), 1);
    let page = client
        .list_tasks(req(pb::ListTasksRequest {
            status: pb::TaskState::Completed as i32,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(page.tasks.is_empty(), "filtered by state");
    assert_eq!(page.total_size, 0);
    let mut sub = client
        .subscribe_to_task(req(pb::SubscribeToTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("SubscribeToTask")
        .into_inner();
    let first = sub.next().await.unwrap().unwrap();
    assert!(matches!(
        first.payload,
        Some(pb::stream_response::Payload::Task(_))
    ));
    let canceled = client
        .cancel_task(req(pb::CancelTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("CancelTask")
        .into_inner();
    assert_eq!(
        canceled.status.unwrap().state,
        pb::TaskState::Canceled as i32
    );
    // The subscriber sees the cancellation and the stream ends.
    let mut last = None;
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("the stream ends")
    {
        last = Some(ev.unwrap());
    }
    match last.and_then(|e| e.payload) {
        Some(pb::stream_response::Payload::StatusUpdate(u)) => {
            assert_eq!(u.status.unwrap().state, pb::TaskState::Canceled as i32)
        }
        other => panic!("expected the CANCELED status, got {other:?}"),
    }
    let again = client
        .cancel_task(req(pb::CancelTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition);
    assert_eq!(reason(&again), "TASK_NOT_CANCELABLE");
}

#[tokio::test]
async fn push_configs_round_trip() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let mut first = send(to_skill("slow", "20000"));
    first.configuration = Some(pb::SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let task = sent_task(&mut client, first).await;
    let created = client
        .create_task_push_notification_config(req(pb::TaskPushNotificationConfig {
            task_id: task.id.clone(),
            url: "https://hooks.example/a2a".into(),
            token: "tok".into(),
            authentication: Some(pb::AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: "secret".into(),
            }),
            ..Default::default()
        }))
        .await
        .expect("CreateTaskPushNotificationConfig")
        .into_inner();
    assert!(!created.id.is_empty(), "an id is assigned");
    assert_eq!(created.task_id, task.id);
    let got = client
        .get_task_push_notification_config(req(pb::GetTaskPushNotificationConfigRequest {
            task_id: task.id.clone(),
            id: created.id.clone(),
            ..Default::default()
        }))
        .await
        .expect("Get")
        .into_inner();
    assert_eq!(got.url, "https://hooks.example/a2a");
    assert_eq!(got.authentication.unwrap().scheme, "Bearer");
    let listed = client
        .list_task_push_notification_configs(req(pb::ListTaskPushNotificationConfigsRequest {
            task_id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .expect("List")
        .into_inner();
    assert_eq!(listed.configs.len(), 1);
    client
        .delete_task_push_notification_config(req(pb::DeleteTaskPushNotificationConfigRequest {
            task_id: task.id.clone(),
            id: created.id.clone(),
            ..Default::default()
        }))
        .await
        .expect("Delete");
    let gone = client
        .get_task_push_notification_config(req(pb::GetTaskPushNotificationConfigRequest {
            task_id: task.id.clone(),
            id: created.id,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::NotFound);
}

#[tokio::test]
async fn a2a_errors_are_statuses_with_error_info() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let missing = client
        .get_task(req(pb::GetTaskRequest {
            id: "no-such-task".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert_eq!(reason(&missing), "TASK_NOT_FOUND");
    assert_eq!(
        missing.get_error_details().error_info().unwrap().metadata["taskId"],
        "no-such-task"
    );
    // No extended card configured: UnsupportedOperation (v1.0.0's UNIMPLEMENTED).
    let extended = client
        .get_extended_agent_card(req(pb::GetExtendedAgentCardRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(extended.code(), Code::Unimplemented);
    assert_eq!(reason(&extended), "UNSUPPORTED_OPERATION");
    // No version: 0.3, which this agent does not speak.
    let unversioned = client
        .get_task(Request::new(pb::GetTaskRequest {
            id: "x".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(unversioned.code(), Code::Unimplemented);
    assert_eq!(reason(&unversioned), "VERSION_NOT_SUPPORTED");
    let mut wrong = req(pb::GetTaskRequest {
        id: "x".into(),
        ..Default::default()
    });
    wrong
        .metadata_mut()
        .insert("a2a-version", "2.0".parse().unwrap());
    let wrong = client.get_task(wrong).await.unwrap_err();
    assert_eq!(reason(&wrong), "VERSION_NOT_SUPPORTED");
    assert!(wrong.message().contains("2.0"), "{}", wrong.message());
}

#[tokio::test]
async fn required_extensions_and_their_echo() {
    let ext = "https://example.com/ext/required/v1";
    let s = serve(test_agent().require_extension(ext)).await;
    let mut client = connect(&s).await;
    let refused = client
        .send_message(req(send(to_skill("echo", "x"))))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert_eq!(reason(&refused), "EXTENSION_SUPPORT_REQUIRED");
    let mut with = req(send(to_skill("echo", "x")));
    with.metadata_mut()
        .insert("a2a-extensions", ext.parse().unwrap());
    let resp = client.send_message(with).await.expect("activated");
    assert_eq!(
        resp.metadata()
            .get("a2a-extensions")
            .unwrap()
            .to_str()
            .unwrap(),
        ext
    );
}

#[tokio::test]
async fn invalid_requests_name_the_field_and_store_nothing() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let cases: Vec<(pb::SendMessageRequest, &str)> = vec![
        (pb::SendMessageRequest::default(), "message"),
        (
            send(pb::Message {
                role: 7,
                ..to_skill("echo", "x")
            }),
            "message.role",
        ),
        (
            send(pb::Message {
                role: 0,
                ..to_skill("echo", "x")
            }),
            "message.role",
        ),
        (
            send(pb::Message {
                message_id: String::new(),
                ..to_skill("echo", "x")
            }),
            "message.messageId",
        ),
        (
            send(pb::Message {
                parts: vec![pb::Part::default()],
                ..to_skill("echo", "x")
            }),
            "message.parts[0]",
        ),
    ];
    for (bad, field) in cases {
        let err = client.send_message(req(bad)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{field}: {err:?}");
        assert_eq!(reason(&err), "INVALID_PARAMS", "{field}");
        let fields = violated_fields(&err);
        assert!(
            fields.iter().any(|f| f.starts_with(field)),
            "{field}: {fields:?}"
        );
        assert!(err.message().contains(field), "{}", err.message());
    }
    let err = client
        .get_task(req(pb::GetTaskRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(violated_fields(&err), ["id"]);
    let err = client
        .list_tasks(req(pb::ListTasksRequest {
            status: 42,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(violated_fields(&err), ["status"]);
    let err = client
        .list_tasks(req(pb::ListTasksRequest {
            page_size: Some(-1),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("pageSize"), "{}", err.message());
    // tonic's client writes `grpc-timeout` itself: a bad one needs a plain HTTP/2 request.
    let (status, message) = h2_call(&s, &[("grpc-timeout", "soon")], Bytes::new()).await;
    assert_eq!(status, "3", "INVALID_ARGUMENT: {message}");
    assert!(message.contains("grpc-timeout"), "{message}");
    assert!(list_all(&mut client).await.is_empty(), "nothing stored");
}

/// A call to `method` as a plain HTTP/2 request (hyper's client, no gRPC library) with these
/// extra headers and `message` framed as gRPC frames it; the response as it arrived.
async fn h2_request(
    s: &Served,
    method: &str,
    headers: &[(&str, &str)],
    message: Bytes,
) -> http::Response<hyper::body::Incoming> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let tcp = tokio::net::TcpStream::connect(&s.authority).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut framed = vec![0u8];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message);
    let mut req = http::Request::post(format!(
        "http://{}/lf.a2a.v1.A2AService/{method}",
        s.authority
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers");
    if !headers.iter().any(|(k, _)| *k == "a2a-version") {
        req = req.header("a2a-version", "1.0");
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = send
        .send_request(
            req.body(http_body_util::Full::new(Bytes::from(framed)))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "gRPC answers are HTTP 200");
    resp
}

/// A ListTasks call as a plain HTTP/2 request with these extra headers: its `grpc-status`
/// and `grpc-message` (from the trailers, or the headers of a Trailers-Only answer).
async fn h2_call(s: &Served, headers: &[(&str, &str)], message: Bytes) -> (String, String) {
    use http_body_util::BodyExt;
    let (parts, body) = h2_request(s, "ListTasks", headers, message)
        .await
        .into_parts();
    let collected = body.collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let get = |name: &str| {
        trailers
            .get(name)
            .or_else(|| parts.headers.get(name))
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    (get("grpc-status"), get("grpc-message"))
}

/// An A2A error before any message is Trailers-Only, as the gRPC protocol has it: the status
/// in the response's one HEADERS frame, which ends the stream. Clients on gRPC's C core
/// (Python's grpcio) and grpc-js take an empty DATA frame ending the stream without trailers
/// for a broken call (`UNKNOWN`: "Stream removed"), and lose the status and its details.
#[tokio::test]
async fn errors_before_any_message_are_trailers_only() {
    use hyper::body::Body as _;
    let s = serve(test_agent()).await;
    // GetTaskRequest / SubscribeToTaskRequest { id (field 2) = "no-such-task" }.
    let missing = Bytes::from_static(b"\x12\x0cno-such-task");
    for method in ["GetTask", "SubscribeToTask"] {
        let resp = h2_request(&s, method, &[], missing.clone()).await;
        let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap());
        assert_eq!(header("grpc-status"), Some("5"), "{method}: NOT_FOUND");
        assert!(
            header("grpc-status-details-bin").is_some(),
            "{method}: the status's details are in the headers too"
        );
        assert!(
            resp.body().is_end_stream(),
            "{method}: the HEADERS frame ends the stream, no DATA frame follows"
        );
    }
    // A refusal on the way (here: a version this agent does not speak) is the same.
    let resp = h2_request(&s, "GetTask", &[("a2a-version", "9.9")], missing).await;
    assert!(resp.headers().contains_key("grpc-status"));
    assert!(resp.body().is_end_stream(), "a Trailers-Only refusal");
    // A call that succeeds sends its message, then the status in trailers.
    let resp = h2_request(&s, "ListTasks", &[], Bytes::new()).await;
    assert!(!resp.headers().contains_key("grpc-status"));
    assert!(!resp.body().is_end_stream());
}

#[tokio::test]
async fn bad_metadata_is_refused_by_name() {
    let s = serve(test_agent()).await;
    for (headers, want) in [
        (&[("grpc-timeout", "10x")][..], "grpc-timeout"),
        (&[("grpc-timeout", "123456789S")][..], "grpc-timeout"),
        (&[("a2a-version", "9.9")][..], "9.9"),
    ] {
        let (status, message) = h2_call(&s, headers, Bytes::new()).await;
        assert!(
            matches!(status.as_str(), "3" | "12"),
            "{headers:?}: {status} {message}"
        );
        let message = percent_decoded(&message);
        assert!(message.contains(want), "{headers:?}: {message}");
    }
    // A compressed message this agent never offered to accept.
    let (status, message) = h2_call(
        &s,
        &[("grpc-encoding", "gzip")],
        Bytes::from_static(b"junk"),
    )
    .await;
    assert_eq!(status, "12", "UNIMPLEMENTED: {message}");
    // The same call, well formed, is answered.
    let (status, _) = h2_call(&s, &[], Bytes::new()).await;
    assert_eq!(status, "0");
}

/// `grpc-message` is percent-encoded.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(Ok(b)) = s.get(i + 1..i + 3).map(|h| u8::from_str_radix(h, 16))
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Bytes as they are: to send what no generated client would.
#[derive(Default)]
struct RawCodec;

struct Raw;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

async fn raw_call(s: &Served, method: &str, body: Bytes) -> Result<Bytes, Status> {
    let channel = Channel::from_shared(format!("http://{}", s.authority))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = format!("/lf.a2a.v1.A2AService/{method}").parse().unwrap();
    grpc.unary(req(body), path, RawCodec)
        .await
        .map(|r| r.into_inner())
}

#[tokio::test]
async fn malformed_protobuf_is_invalid_argument() {
    let s = serve(test_agent()).await;
    // A field 2 (message) whose length runs past the end; a varint that never ends; a wire
    // type that does not exist.
    for garbage in [
        &[0x12, 0x40, 0x01][..],
        &[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ][..],
        &[0x0f, 0x00][..],
    ] {
        let err = raw_call(&s, "SendMessage", Bytes::copy_from_slice(garbage))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{garbage:?}: {err:?}");
    }
    let err = raw_call(&s, "NoSuchMethod", Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let mut client = connect(&s).await;
    assert!(list_all(&mut client).await.is_empty(), "nothing stored");
}

#[tokio::test]
async fn the_body_limit_refuses_large_messages() {
    let limits = a2a_kit_axum::ServerLimits {
        http: a2a_kit::binding::HttpConfig::default().body_limit(64 * 1024),
        ..Default::default()
    };
    let s = serve_limited(test_agent(), limits).await;
    let mut client = connect(&s).await;
    let big = to_skill("echo", &"x".repeat(200 * 1024));
    let err = client.send_message(req(send(big))).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    assert!(err.message().contains("65536"), "{}", err.message());
    // The connection is still good for the next call.
    let ok = client
        .send_message(req(send(to_skill("echo", "small"))))
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    assert_eq!(list_all(&mut client).await.len(), 1);
}

#[tokio::test]
async fn authentication_and_quotas_apply_to_grpc() {
    let keys = a2a_kit::auth::ApiKeys::header("X-API-Key").key("k1", "alice");
    let s = serve(
        test_agent()
            .authenticate(keys)
            .caller_quota(a2a_kit::runtime::CallerQuota {
                requests_per_second: 1,
                burst: 2,
            }),
    )
    .await;
    let mut client = connect(&s).await;
    let anonymous = client
        .send_message(req(send(to_skill("echo", "x"))))
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::Unauthenticated, "{anonymous:?}");
    let mut wrong = req(send(to_skill("echo", "x")));
    wrong
        .metadata_mut()
        .insert("x-api-key", "nope".parse().unwrap());
    assert_eq!(
        client.send_message(wrong).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    let mut codes = Vec::new();
    for _ in 0..4 {
        let mut r = req(send(to_skill("echo", "x")));
        r.metadata_mut().insert("x-api-key", "k1".parse().unwrap());
        codes.push(match client.send_message(r).await {
            Ok(_) => Code::Ok,
            Err(e) => e.code(),
        });
    }
    assert_eq!(&codes[..2], [Code::Ok, Code::Ok], "{codes:?}");
    assert!(codes.contains(&Code::ResourceExhausted), "{codes:?}");
}

#[tokio::test]
async fn tasks_are_shared_with_the_other_bindings() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    // Created over gRPC: read over JSON-RPC and HTTP+JSON.
    let task = sent_task(&mut client, send(to_skill("echo", "made over grpc"))).await;
    let over_rpc = rpc(&s.base, "GetTask", json!({"id": task.id})).await;
    assert_eq!(
        over_rpc["result"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        over_rpc["result"]["artifacts"][0]["parts"][0]["text"],
        "made over grpc"
    );
    let over_rest: Value = reqwest::Client::new()
        .get(format!("{}/tasks/{}", s.base, task.id))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(over_rest["id"], task.id);
    // Created over JSON-RPC: subscribed to and canceled over gRPC.
    let created = rpc(
        &s.base,
        "SendMessage",
        json!({"message": a2a_tests::to_skill("slow", "20000"),
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = created["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut sub = client
        .subscribe_to_task(req(pb::SubscribeToTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(sub.next().await.unwrap().is_ok());
    let canceled = client
        .cancel_task(req(pb::CancelTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        canceled.status.unwrap().state,
        pb::TaskState::Canceled as i32
    );
    let over_rpc = rpc(&s.base, "GetTask", json!({"id": id})).await;
    assert_eq!(over_rpc["result"]["status"]["state"], "TASK_STATE_CANCELED");
    // Both are listed the same over either binding.
    let listed = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(list_all(&mut client).await.len(), 2);
}

#[tokio::test]
async fn grpc_can_be_turned_off() {
    let s = serve(test_agent().grpc(false)).await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", s.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["supportedInterfaces"].as_array().unwrap().len(), 2);
    let mut client = connect(&s).await;
    let err = client
        .list_tasks(req(pb::ListTasksRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
}

#[tokio::test]
async fn a_separate_grpc_address_is_what_the_card_names() {
    let card = test_agent()
        .public_url("https://agent.example/a2a")
        .grpc_address("grpc.agent.example:50051")
        .build()
        .unwrap()
        .card()
        .clone();
    let grpc = card
        .supported_interfaces
        .iter()
        .find(|i| i.protocol_binding == "GRPC")
        .unwrap();
    assert_eq!(grpc.url, "grpc.agent.example:50051");
    let card = test_agent()
        .public_url("https://agent.example/a2a")
        .build()
        .unwrap()
        .card()
        .clone();
    assert_eq!(card.supported_interfaces[2].url, "agent.example:443");
    for bad in ["no-port", "host:notaport", ":50051", "http://host:1"] {
        let err = test_agent().grpc_address(bad).build().unwrap_err();
        assert!(err.to_string().contains(bad), "{err}");
    }
}

#[tokio::test]
async fn grpc_timeout_bounds_a_blocking_send() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    // The client waits 1 s; the skill takes 20: the answer is the task as it stands then.
    let mut r = req(send(to_skill("slow", "20000")));
    r.set_timeout(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let task = task_of(
        client
            .send_message(r)
            .await
            .expect("answered in time")
            .into_inner(),
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(task.status.unwrap().state, pb::TaskState::Working as i32);
}

#[tokio::test]
async fn tenants_scope_tasks_over_grpc_as_over_http() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let mut made = send(to_skill("echo", "for acme"));
    made.tenant = "acme".into();
    let task = sent_task(&mut client, made).await;
    let get = |tenant: &str| pb::GetTaskRequest {
        tenant: tenant.into(),
        id: task.id.clone(),
        ..Default::default()
    };
    // Another tenant, or none, does not see it.
    let err = client.get_task(req(get("other"))).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        client.get_task(req(get(""))).await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        client
            .get_task(req(get("acme")))
            .await
            .unwrap()
            .into_inner()
            .id,
        task.id
    );
    // HTTP+JSON's tenant prefix reaches the same task; JSON-RPC's `tenant` field too.
    let over_rest = reqwest::Client::new()
        .get(format!("{}/acme/tasks/{}", s.base, task.id))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(over_rest.status(), 200);
    let over_rpc = rpc(&s.base, "GetTask", json!({"id": task.id, "tenant": "acme"})).await;
    assert_eq!(over_rpc["result"]["id"], task.id);
    let listed = client
        .list_tasks(req(pb::ListTasksRequest {
            tenant: "acme".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.tasks.len(), 1);
    assert!(
        list_all(&mut client).await.is_empty(),
        "no tenant: none of acme's"
    );
}

/// Each A2A error a gRPC request can cause, with its status (A2A v1.0.0's table, as the
/// HTTP+JSON binding's) and `ErrorInfo.reason`.
#[tokio::test]
async fn every_reachable_a2a_error_over_grpc() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let done = sent_task(&mut client, send(to_skill("echo", "x"))).await;
    let expect = |err: Status, code: Code, why: &str| {
        assert_eq!(err.code(), code, "{why}: {err:?}");
        assert_eq!(reason(&err), why, "{err:?}");
    };
    let subscribe = client
        .subscribe_to_task(req(pb::SubscribeToTaskRequest {
            id: done.id.clone(),
            ..Default::default()
        }))
        .await;
    expect(
        subscribe.expect_err("a finished task has nothing to follow"),
        Code::Unimplemented,
        "UNSUPPORTED_OPERATION",
    );
    let big_page = client
        .list_tasks(req(pb::ListTasksRequest {
            page_size: Some(1000),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    expect(big_page, Code::InvalidArgument, "INVALID_PARAMS");
    // Errors that need an agent configured for them.
    let off = serve(test_agent().push_notifications(false).streaming(false)).await;
    let mut off_client = connect(&off).await;
    let push = off_client
        .create_task_push_notification_config(req(pb::TaskPushNotificationConfig {
            task_id: "t".into(),
            url: "https://hooks.example/a2a".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    expect(push, Code::Unimplemented, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    let stream = off_client
        .send_streaming_message(req(send(to_skill("echo", "x"))))
        .await;
    expect(
        stream.expect_err("streaming is off"),
        Code::Unimplemented,
        "UNSUPPORTED_OPERATION",
    );
    let no_card =
        serve(test_agent().card(|c| c.capabilities.extended_agent_card = Some(true))).await;
    let err = connect(&no_card)
        .await
        .get_extended_agent_card(req(pb::GetExtendedAgentCardRequest::default()))
        .await
        .unwrap_err();
    expect(
        err,
        Code::FailedPrecondition,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    );
}
