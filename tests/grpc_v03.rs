//! A2A v0.3's gRPC service (`a2a.v1.A2AService`) over real HTTP/2 on 127.0.0.1, beside 1.0's
//! on the same listener: every v0.3 RPC with tonic's client generated from the v0.3 proto,
//! tasks shared with 1.0's service both ways, v0.3's errors (codes, messages naming the
//! field, nothing stored), the edge (authentication, extensions, `grpc-timeout`) as for 1.0,
//! and the official Python SDK 0.3's gRPC client against the agent.

#[path = "support_python_sdk_v03.rs"]
mod support_python_sdk_v03;

use std::process::Command;
use std::time::Duration;

use a2a_kit::grpc::pb as pb10;
use a2a_kit::grpc::pb::a2a_service_client::A2aServiceClient as Client10;
use a2a_kit::grpc::v03::pb;
use a2a_kit::grpc::v03::pb::a2a_service_client::A2aServiceClient;
use a2a_kit::protocol::ProtocolVersion;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_tests::{TestAgent, uuid};
use futures::StreamExt;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

/// An agent served by the kit's own accept loop; the service too, to look into its store.
struct Served {
    authority: String,
    service: AgentService,
    _task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self._task.abort();
    }
}

async fn serve(a2a: AgentServiceBuilder) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    let service = a2a
        .public_url(format!("http://{authority}"))
        .build()
        .expect("valid");
    let served = service.clone();
    let task = tokio::spawn(async move {
        a2a_kit_axum::serve_service(served, listener, std::future::pending())
            .await
            .expect("serve");
    });
    Served {
        authority,
        service,
        _task: task,
    }
}

fn test_agent() -> AgentServiceBuilder {
    AgentService::builder(TestAgent)
        .push_notifications(true)
        .execution(a2a_kit::runtime::ExecutionConfig {
            cancel_grace: Duration::from_millis(300),
            ..Default::default()
        })
}

async fn channel(s: &Served) -> Channel {
    Channel::from_shared(format!("http://{}", s.authority))
        .unwrap()
        .connect()
        .await
        .expect("connect over h2c")
}

async fn connect(s: &Served) -> A2aServiceClient<Channel> {
    A2aServiceClient::new(channel(s).await)
}

/// A 1.0 request: the version metadata every 1.0 call needs.
fn req10<T>(message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    r
}

fn text_part(text: &str) -> pb::Part {
    pb::Part {
        part: Some(pb::part::Part::Text(text.into())),
    }
}

fn struct_of(v: Value) -> prost_types::Struct {
    use prost_types::value::Kind;
    let Value::Object(map) = v else {
        panic!("an object")
    };
    prost_types::Struct {
        fields: map
            .into_iter()
            .map(|(k, v)| {
                let kind = match v {
                    Value::String(s) => Kind::StringValue(s),
                    Value::Bool(b) => Kind::BoolValue(b),
                    Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap()),
                    other => panic!("not in these tests: {other}"),
                };
                (k, prost_types::Value { kind: Some(kind) })
            })
            .collect(),
    }
}

/// A v0.3 user message to one of the test agent's skills.
fn to_skill(skill: &str, text: &str) -> pb::Message {
    pb::Message {
        message_id: uuid(),
        role: pb::Role::User as i32,
        content: vec![text_part(text)],
        metadata: Some(struct_of(json!({"skillId": skill}))),
        ..Default::default()
    }
}

fn send(message: pb::Message) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        request: Some(message),
        ..Default::default()
    }
}

/// SendMessage without waiting for the task to finish.
fn send_returning_at_once(message: pb::Message) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        request: Some(message),
        configuration: Some(pb::SendMessageConfiguration {
            blocking: false,
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn sent_task(
    client: &mut A2aServiceClient<Channel>,
    send: pb::SendMessageRequest,
) -> pb::Task {
    match client
        .send_message(send)
        .await
        .expect("SendMessage")
        .into_inner()
        .payload
    {
        Some(pb::send_message_response::Payload::Task(t)) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn text_of(part: &pb::Part) -> &str {
    match &part.part {
        Some(pb::part::Part::Text(t)) => t,
        other => panic!("expected text, got {other:?}"),
    }
}

fn state_of(task: &pb::Task) -> i32 {
    task.status.as_ref().expect("a status").state
}

fn name(task_id: &str) -> String {
    format!("tasks/{task_id}")
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

/// Every task the agent has, read over 1.0's ListTasks.
async fn all_tasks(s: &Served) -> Vec<pb10::Task> {
    Client10::new(channel(s).await)
        .list_tasks(req10(pb10::ListTasksRequest::default()))
        .await
        .expect("ListTasks")
        .into_inner()
        .tasks
}

/// A stream's items until it ends (within 20 s).
async fn drain(
    mut stream: tonic::Streaming<pb::StreamResponse>,
) -> Vec<pb::stream_response::Payload> {
    let mut out = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("the stream ends")
    {
        out.push(item.expect("an event").payload.expect("a payload"));
    }
    out
}

#[tokio::test]
async fn get_agent_card_is_the_card_in_v03_shape() {
    let s = serve(test_agent()).await;
    let card = connect(&s)
        .await
        .get_agent_card(pb::GetAgentCardRequest {})
        .await
        .expect("GetAgentCard")
        .into_inner();
    assert_eq!(card.protocol_version, "0.3.0");
    assert_eq!(card.name, s.service.card().name);
    // The interfaces that serve v0.3, gRPC's too: JSON-RPC preferred, as in the JSON card.
    let base = format!("http://{}", s.authority);
    assert_eq!(card.url, base);
    assert_eq!(card.preferred_transport, "JSONRPC");
    let transports: Vec<(&str, &str)> = card
        .additional_interfaces
        .iter()
        .map(|i| (i.transport.as_str(), i.url.as_str()))
        .collect();
    assert_eq!(
        transports,
        [
            ("JSONRPC", base.as_str()),
            ("HTTP+JSON", base.as_str()),
            ("GRPC", s.authority.as_str()),
        ]
    );
    let capabilities = card.capabilities.expect("capabilities");
    assert!(capabilities.streaming && capabilities.push_notifications);
    assert!(!card.supports_authenticated_extended_card);
    assert_eq!(card.skills.len(), s.service.card().skills.len());
}

#[tokio::test]
async fn get_agent_card_names_each_requests_authority_without_a_public_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let service = test_agent().build().unwrap();
    let _task = tokio::spawn(async move {
        a2a_kit_axum::serve_service(service, listener, std::future::pending())
            .await
            .unwrap();
    });
    let channel = Channel::from_shared(format!("http://localhost:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let card = A2aServiceClient::new(channel)
        .get_agent_card(pb::GetAgentCardRequest {})
        .await
        .unwrap()
        .into_inner();
    let grpc = card
        .additional_interfaces
        .iter()
        .find(|i| i.transport == "GRPC")
        .expect("a GRPC interface");
    assert_eq!(grpc.url, format!("localhost:{port}"));
    assert_eq!(card.url, format!("http://localhost:{port}"));
}

#[tokio::test]
async fn get_agent_card_is_the_extended_card_when_there_is_one() {
    let keys = a2a_kit::auth::ApiKeys::header("X-API-Key").key("k1", "alice");
    let s = serve(
        test_agent()
            .authenticate(keys)
            .extended_card_for(|caller, _, card| {
                card.description = format!("for {}", caller.map_or("?", |c| c.subject.as_str()));
            }),
    )
    .await;
    let mut r = Request::new(pb::GetAgentCardRequest {});
    r.metadata_mut().insert("x-api-key", "k1".parse().unwrap());
    let card = connect(&s)
        .await
        .get_agent_card(r)
        .await
        .expect("GetAgentCard")
        .into_inner();
    assert!(card.supports_authenticated_extended_card);
    assert_eq!(card.description, "for alice");
    assert_eq!(card.protocol_version, "0.3.0");
    assert_eq!(card.security.len(), 1, "{:?}", card.security);
    assert!(
        card.security_schemes
            .contains_key(card.security[0].schemes.keys().next().unwrap())
    );
    let anonymous = connect(&s)
        .await
        .get_agent_card(pb::GetAgentCardRequest {})
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::Unauthenticated);
}

#[tokio::test]
async fn send_message_blocks_unless_the_configuration_says_not_to() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    // No configuration: blocking.
    let task = sent_task(&mut client, send(to_skill("echo", "hi over v0.3"))).await;
    assert_eq!(state_of(&task), pb::TaskState::Completed as i32);
    assert!(task.status.as_ref().unwrap().timestamp.is_some());
    assert_eq!(text_of(&task.artifacts[0].parts[0]), "hi over v0.3");
    assert_eq!(task.history.len(), 1, "the user's message is the history");
    assert_eq!(text_of(&task.history[0].content[0]), "hi over v0.3");
    // `blocking: true`: the same.
    let mut blocking = send(to_skill("echo", "again"));
    blocking.configuration = Some(pb::SendMessageConfiguration {
        blocking: true,
        ..Default::default()
    });
    let task = sent_task(&mut client, blocking).await;
    assert_eq!(state_of(&task), pb::TaskState::Completed as i32);
    // `blocking: false` (proto3's default in a configuration): at once.
    let started = std::time::Instant::now();
    let task = sent_task(
        &mut client,
        send_returning_at_once(to_skill("slow", "20000")),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        [
            pb::TaskState::Submitted as i32,
            pb::TaskState::Working as i32
        ]
        .contains(&state_of(&task)),
        "{task:?}"
    );
    // A skill answering with a message.
    let direct = client
        .send_message(send(to_skill("direct", "hello")))
        .await
        .expect("SendMessage")
        .into_inner();
    match direct.payload {
        Some(pb::send_message_response::Payload::Msg(m)) => {
            assert_eq!(m.role, pb::Role::Agent as i32);
            assert!(!m.content.is_empty());
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

#[tokio::test]
async fn streams_say_which_status_update_is_final() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let stream = client
        .send_streaming_message(send(to_skill("chunks", "3")))
        .await
        .expect("SendStreamingMessage")
        .into_inner();
    let events = drain(stream).await;
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
    assert!(chunks[1].append && chunks[2].last_chunk);
    let updates: Vec<&pb::TaskStatusUpdateEvent> = events
        .iter()
        .filter_map(|e| match e {
            Payload::StatusUpdate(u) => Some(u),
            _ => None,
        })
        .collect();
    let (last, earlier) = updates.split_last().expect("status updates");
    assert_eq!(
        last.status.as_ref().unwrap().state,
        pb::TaskState::Completed as i32
    );
    assert!(last.r#final, "the stream ends with it");
    assert!(earlier.iter().all(|u| !u.r#final), "{earlier:?}");
    assert!(matches!(events.last(), Some(Payload::StatusUpdate(_))));
    // A task that asks: the stream ends with INPUT_REQUIRED, final.
    let stream = client
        .send_streaming_message(send(to_skill("ask", "hi")))
        .await
        .unwrap()
        .into_inner();
    match drain(stream).await.last() {
        Some(Payload::StatusUpdate(u)) => {
            assert_eq!(
                u.status.as_ref().unwrap().state,
                pb::TaskState::InputRequired as i32
            );
            assert!(u.r#final);
        }
        other => panic!("expected the INPUT_REQUIRED update, got {other:?}"),
    }
}

#[tokio::test]
async fn get_cancel_and_subscribe_by_name() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let task = sent_task(
        &mut client,
        send_returning_at_once(to_skill("slow", "20000")),
    )
    .await;
    let got = client
        .get_task(pb::GetTaskRequest {
            name: name(&task.id),
            history_length: 0,
        })
        .await
        .expect("GetTask")
        .into_inner();
    assert_eq!(got.id, task.id);
    assert_eq!(got.history.len(), 1, "history_length 0 is unset: all of it");
    let mut sub = client
        .task_subscription(pb::TaskSubscriptionRequest {
            name: name(&task.id),
        })
        .await
        .expect("TaskSubscription")
        .into_inner();
    let first = sub.next().await.unwrap().unwrap();
    assert!(matches!(
        first.payload,
        Some(pb::stream_response::Payload::Task(_))
    ));
    let canceled = client
        .cancel_task(pb::CancelTaskRequest {
            name: name(&task.id),
        })
        .await
        .expect("CancelTask")
        .into_inner();
    assert_eq!(state_of(&canceled), pb::TaskState::Cancelled as i32);
    match drain(sub).await.last() {
        Some(pb::stream_response::Payload::StatusUpdate(u)) => {
            assert_eq!(
                u.status.as_ref().unwrap().state,
                pb::TaskState::Cancelled as i32
            );
            assert!(u.r#final);
        }
        other => panic!("expected the CANCELLED update, got {other:?}"),
    }
    // Subscribing to a task that has ended: the task, and the stream closes.
    let sub = client
        .task_subscription(pb::TaskSubscriptionRequest {
            name: name(&task.id),
        })
        .await
        .expect("TaskSubscription to an ended task")
        .into_inner();
    match drain(sub).await.as_slice() {
        [pb::stream_response::Payload::Task(t)] => {
            assert_eq!(t.id, task.id);
            assert_eq!(state_of(t), pb::TaskState::Cancelled as i32);
        }
        other => panic!("expected the task alone, got {other:?}"),
    }
    // v0.3's codes and messages.
    let again = client
        .cancel_task(pb::CancelTaskRequest {
            name: name(&task.id),
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::Unimplemented);
    assert!(
        again.message().starts_with("TaskNotCancelableError: "),
        "{}",
        again.message()
    );
    assert_eq!(reason(&again), "TASK_NOT_CANCELABLE");
    let missing = client
        .get_task(pb::GetTaskRequest {
            name: name("no-such-task"),
            history_length: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert!(missing.message().starts_with("TaskNotFoundError: "));
    assert_eq!(
        missing.get_error_details().error_info().unwrap().metadata["taskId"],
        "no-such-task"
    );
    let missing = client
        .task_subscription(pb::TaskSubscriptionRequest {
            name: name("no-such-task"),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
}

#[tokio::test]
async fn push_configs_by_resource_name() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let task = sent_task(
        &mut client,
        send_returning_at_once(to_skill("slow", "20000")),
    )
    .await;
    let webhook = pb::PushNotificationConfig {
        url: "https://hooks.example/a2a".into(),
        token: "tok".into(),
        authentication: Some(pb::AuthenticationInfo {
            schemes: vec!["Bearer".into()],
            credentials: "secret".into(),
        }),
        ..Default::default()
    };
    let created = client
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: name(&task.id),
            config_id: "hook-1".into(),
            config: Some(pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(webhook.clone()),
            }),
        })
        .await
        .expect("CreateTaskPushNotificationConfig")
        .into_inner();
    let config_name = format!("tasks/{}/pushNotificationConfigs/hook-1", task.id);
    assert_eq!(created.name, config_name);
    let created_webhook = created.push_notification_config.unwrap();
    assert_eq!(created_webhook.id, "hook-1");
    assert_eq!(
        created_webhook.token, "tok",
        "its creator sees what it stored"
    );
    // Registered over v0.3: its webhook gets v0.3 bodies.
    let stored = s
        .service
        .task_manager()
        .push_configs()
        .expect("a push config store")
        .get(&task.id, "hook-1")
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.protocol_version, ProtocolVersion::V0_3);
    // Without a config id: the agent makes one.
    let unnamed = client
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: name(&task.id),
            config_id: String::new(),
            config: Some(pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(webhook),
            }),
        })
        .await
        .expect("Create without an id")
        .into_inner();
    assert!(!unnamed.push_notification_config.unwrap().id.is_empty());
    let got = client
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest {
            name: config_name.clone(),
        })
        .await
        .expect("Get")
        .into_inner();
    assert_eq!(got.name, config_name);
    let got = got.push_notification_config.unwrap();
    assert_eq!(got.url, "https://hooks.example/a2a");
    assert_eq!(got.token, "", "credentials are write-only");
    assert_eq!(got.authentication.unwrap().schemes, ["Bearer"]);
    let listed = client
        .list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest {
            parent: name(&task.id),
            ..Default::default()
        })
        .await
        .expect("List")
        .into_inner();
    assert_eq!(listed.configs.len(), 2);
    let page = client
        .list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest {
            parent: name(&task.id),
            page_size: 1,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.configs.len(), 1);
    assert!(!page.next_page_token.is_empty());
    client
        .delete_task_push_notification_config(pb::DeleteTaskPushNotificationConfigRequest {
            name: config_name.clone(),
        })
        .await
        .expect("Delete");
    let gone = client
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest {
            name: config_name,
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::NotFound);
    // The Python SDK writes a config asked for without an id as `None`: the task's one config
    // (the unnamed one is left).
    let only = client
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest {
            name: format!("{}/pushNotificationConfigs/None", name(&task.id)),
        })
        .await
        .expect("Get of `None`")
        .into_inner();
    assert_eq!(
        only.push_notification_config.unwrap().url,
        "https://hooks.example/a2a"
    );
    // A config sent with the message is v0.3's too.
    let mut with_push = send_returning_at_once(to_skill("slow", "20000"));
    with_push.configuration.as_mut().unwrap().push_notification =
        Some(pb::PushNotificationConfig {
            id: "inline".into(),
            url: "https://hooks.example/inline".into(),
            ..Default::default()
        });
    let task = sent_task(&mut client, with_push).await;
    let stored = s
        .service
        .task_manager()
        .push_configs()
        .unwrap()
        .get(&task.id, "inline")
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.protocol_version, ProtocolVersion::V0_3);
    // Without push notifications: v0.3's UNIMPLEMENTED.
    let off = serve(AgentService::builder(TestAgent)).await;
    let mut client = connect(&off).await;
    let task = sent_task(&mut client, send(to_skill("echo", "x"))).await;
    let refused = client
        .list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest {
            parent: name(&task.id),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unimplemented);
    assert!(
        refused
            .message()
            .starts_with("PushNotificationNotSupportedError: ")
    );
}

#[tokio::test]
async fn tasks_are_shared_with_the_1_0_service() {
    let s = serve(test_agent()).await;
    let mut v03 = connect(&s).await;
    let mut v10 = Client10::new(channel(&s).await);
    // Created over v0.3: read over 1.0.
    let task = sent_task(&mut v03, send(to_skill("echo", "made over v0.3"))).await;
    let read = v10
        .get_task(req10(pb10::GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .expect("GetTask over 1.0")
        .into_inner();
    assert_eq!(
        read.status.as_ref().unwrap().state,
        pb10::TaskState::Completed as i32
    );
    match &read.artifacts[0].parts[0].content {
        Some(pb10::part::Content::Text(t)) => assert_eq!(t, "made over v0.3"),
        other => panic!("{other:?}"),
    }
    assert_eq!(read.context_id, task.context_id);
    // Created over 1.0: read, subscribed to and canceled over v0.3.
    let created = v10
        .send_message(req10(pb10::SendMessageRequest {
            message: Some(pb10::Message {
                message_id: uuid(),
                role: pb10::Role::User as i32,
                parts: vec![pb10::Part {
                    content: Some(pb10::part::Content::Text("20000".into())),
                    ..Default::default()
                }],
                metadata: Some(struct_of(json!({"skillId": "slow"}))),
                ..Default::default()
            }),
            configuration: Some(pb10::SendMessageConfiguration {
                return_immediately: true,
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .expect("SendMessage over 1.0")
        .into_inner();
    let id = match created.payload {
        Some(pb10::send_message_response::Payload::Task(t)) => t.id,
        other => panic!("{other:?}"),
    };
    let got = v03
        .get_task(pb::GetTaskRequest {
            name: name(&id),
            history_length: 0,
        })
        .await
        .expect("GetTask over v0.3")
        .into_inner();
    assert_eq!(text_of(&got.history[0].content[0]), "20000");
    let mut sub = v03
        .task_subscription(pb::TaskSubscriptionRequest { name: name(&id) })
        .await
        .unwrap()
        .into_inner();
    assert!(sub.next().await.unwrap().is_ok());
    let canceled = v03
        .cancel_task(pb::CancelTaskRequest { name: name(&id) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state_of(&canceled), pb::TaskState::Cancelled as i32);
    let read = v10
        .get_task(req10(pb10::GetTaskRequest {
            id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.status.unwrap().state, pb10::TaskState::Canceled as i32);
    assert_eq!(all_tasks(&s).await.len(), 2);
}

#[tokio::test]
async fn files_and_data_cross_the_versions() {
    let s = serve(test_agent()).await;
    let mut v03 = connect(&s).await;
    let file = pb::Part {
        part: Some(pb::part::Part::File(pb::FilePart {
            file: Some(pb::file_part::File::FileWithBytes(b"aGVsbG8=".to_vec())),
            mime_type: "text/plain".into(),
        })),
    };
    let data = pb::Part {
        part: Some(pb::part::Part::Data(pb::DataPart {
            data: Some(struct_of(json!({"k": "v"}))),
        })),
    };
    let mut message = to_skill("echo", "with a file");
    message.content.extend([file, data]);
    let task = sent_task(&mut v03, send(message)).await;
    // Over 1.0 the file is its bytes, the data its object.
    let read = Client10::new(channel(&s).await)
        .get_task(req10(pb10::GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let parts = &read.history[0].parts;
    match &parts[1].content {
        Some(pb10::part::Content::Raw(bytes)) => assert_eq!(&bytes[..], b"hello"),
        other => panic!("{other:?}"),
    }
    assert_eq!(parts[1].media_type, "text/plain");
    assert!(matches!(
        parts[2].content,
        Some(pb10::part::Content::Data(_))
    ));
    // And back over v0.3 the file is its base64 text again.
    let got = v03
        .get_task(pb::GetTaskRequest {
            name: name(&task.id),
            history_length: 0,
        })
        .await
        .unwrap()
        .into_inner();
    match &got.history[0].content[1].part {
        Some(pb::part::Part::File(f)) => {
            assert_eq!(
                f.file,
                Some(pb::file_part::File::FileWithBytes(b"aGVsbG8=".to_vec()))
            );
            assert_eq!(f.mime_type, "text/plain");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn bad_input_names_the_field_and_stores_nothing() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let bad_file = pb::Part {
        part: Some(pb::part::Part::File(pb::FilePart {
            file: Some(pb::file_part::File::FileWithBytes(vec![0xff, 0xfe])),
            mime_type: String::new(),
        })),
    };
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
                content: vec![text_part("x"), pb::Part { part: None }],
                ..to_skill("echo", "x")
            }),
            "message.content[1]",
        ),
        (
            send(pb::Message {
                content: vec![bad_file],
                ..to_skill("echo", "x")
            }),
            "message.content[0].file.fileWithBytes",
        ),
        // Refused by the operation, which names 1.0's field: renamed to v0.3's.
        (
            send(pb::Message {
                content: Vec::new(),
                ..to_skill("echo", "x")
            }),
            "message.content",
        ),
        // Refused by the skill's arguments, which name 1.0's field: renamed too.
        (
            send(to_skill("slow", "not a number")),
            "message.content[0].text",
        ),
        (
            pb::SendMessageRequest {
                configuration: Some(pb::SendMessageConfiguration {
                    push_notification: Some(pb::PushNotificationConfig::default()),
                    ..Default::default()
                }),
                ..send(to_skill("echo", "x"))
            },
            "configuration.pushNotification.url",
        ),
    ];
    for (bad, field) in cases {
        let err = client.send_message(bad).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{field}: {err:?}");
        assert_eq!(reason(&err), "INVALID_PARAMS", "{field}");
        assert_eq!(violated_fields(&err), [field], "{field}");
        assert!(
            err.message().starts_with("InvalidParamsError: ")
                && err.message().contains(&format!("`{field}`")),
            "{field}: {}",
            err.message()
        );
    }
    for bad in ["", "t-1", "tasks/", "tasks/a/b"] {
        let err = client
            .get_task(pb::GetTaskRequest {
                name: bad.into(),
                history_length: 0,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad}");
        assert_eq!(violated_fields(&err), ["name"], "{bad}");
    }
    let err = client
        .get_task(pb::GetTaskRequest {
            name: name("t-1"),
            history_length: -1,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(violated_fields(&err), ["historyLength"]);
    let err = client
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest {
            name: "tasks/t-1".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&err), ["name"]);
    let err = client
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: "t-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&err), ["parent"]);
    assert!(all_tasks(&s).await.is_empty(), "nothing stored");
}

#[tokio::test]
async fn extensions_and_the_edge_as_for_1_0() {
    let ext = "https://example.com/ext/required/v1";
    let keys = a2a_kit::auth::ApiKeys::header("X-API-Key").key("k1", "alice");
    let s = serve(test_agent().require_extension(ext).authenticate(keys)).await;
    let mut client = connect(&s).await;
    let authed = |message: pb::SendMessageRequest| {
        let mut r = Request::new(message);
        r.metadata_mut().insert("x-api-key", "k1".parse().unwrap());
        r
    };
    let anonymous = client
        .send_message(send(to_skill("echo", "x")))
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::Unauthenticated);
    let refused = client
        .send_message(authed(send(to_skill("echo", "x"))))
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        Code::InvalidArgument,
        "0.3's InvalidRequest"
    );
    assert_eq!(reason(&refused), "EXTENSION_SUPPORT_REQUIRED");
    assert!(refused.message().starts_with("InvalidRequestError: "));
    // v0.3's header, echoed in it.
    let mut with = authed(send(to_skill("echo", "x")));
    with.metadata_mut()
        .insert("x-a2a-extensions", ext.parse().unwrap());
    let resp = client.send_message(with).await.expect("activated");
    assert_eq!(
        resp.metadata()
            .get("x-a2a-extensions")
            .unwrap()
            .to_str()
            .unwrap(),
        ext
    );
    let mut with = authed(send(to_skill("echo", "x")));
    with.metadata_mut()
        .insert("a2a-extensions", ext.parse().unwrap());
    client.send_message(with).await.expect("1.0's header too");
    // A2A-Version: absent or 0.3 is served as 0.3; anything else is 1.0's, which has no
    // such service (as JSON-RPC's 0.3 method names with 1.0).
    for (version, refused) in [
        ("0.3", None),
        ("1.0", Some("METHOD_NOT_FOUND")),
        ("2.0", Some("VERSION_NOT_SUPPORTED")),
    ] {
        let mut r = authed(send(to_skill("echo", "x")));
        r.metadata_mut()
            .insert("x-a2a-extensions", ext.parse().unwrap());
        r.metadata_mut()
            .insert("a2a-version", version.parse().unwrap());
        match (client.send_message(r).await, refused) {
            (Ok(_), None) => {}
            (Err(e), Some(why)) => {
                assert_eq!(e.code(), Code::Unimplemented, "{version}: {e:?}");
                assert_eq!(reason(&e), why, "{version}");
            }
            (got, _) => panic!("{version}: {got:?}"),
        }
    }
}

#[tokio::test]
async fn an_agent_serving_1_0_only_refuses_v03_calls() {
    let s = serve(test_agent().v03(false)).await;
    let err = connect(&s)
        .await
        .get_task(pb::GetTaskRequest {
            name: name("t-1"),
            history_length: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert_eq!(reason(&err), "VERSION_NOT_SUPPORTED");
    assert!(err.message().contains("0.3"), "{}", err.message());
    // 1.0's service is there as ever.
    let tasks = Client10::new(channel(&s).await)
        .list_tasks(req10(pb10::ListTasksRequest::default()))
        .await;
    assert!(tasks.is_ok());
}

#[tokio::test]
async fn grpc_timeout_bounds_a_blocking_send() {
    let s = serve(test_agent()).await;
    let mut client = connect(&s).await;
    let mut r = Request::new(send(to_skill("slow", "20000")));
    r.set_timeout(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let task = match client
        .send_message(r)
        .await
        .expect("answered")
        .into_inner()
        .payload
    {
        Some(pb::send_message_response::Payload::Task(t)) => t,
        other => panic!("{other:?}"),
    };
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        [
            pb::TaskState::Submitted as i32,
            pb::TaskState::Working as i32
        ]
        .contains(&state_of(&task))
    );
}

#[tokio::test]
async fn grpc_turned_off_turns_off_v03_too() {
    let s = serve(test_agent().grpc(false)).await;
    let err = connect(&s)
        .await
        .get_agent_card(pb::GetAgentCardRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
}

/// The official Python SDK 0.3's gRPC client (a2a-sdk 0.3.26, `GrpcTransport`) against the
/// agent: every v0.3 operation, as tests/interop/v03/py_grpc_client.py checks it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_client_over_grpc() {
    let Some(py) = tokio::task::spawn_blocking(support_python_sdk_v03::python)
        .await
        .unwrap()
    else {
        return;
    };
    let s = serve(test_agent()).await;
    let script = support_python_sdk_v03::script("py_grpc_client.py");
    let authority = s.authority.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(py)
            .arg(script)
            .arg(authority)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("run py_grpc_client.py")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "py_grpc_client.py failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("all v0.3 gRPC checks passed"), "{stdout}");
    // What it left behind is the agent's, read over 1.0.
    assert!(!all_tasks(&s).await.is_empty());
}
