use serde_json::json;

use super::convert::{FromV03, ToV03, create_push_config_from_v03, renamed_fields};
use super::{pb, status_code, status_message};
use crate::error::A2aError;
use crate::protocol::{
    AgentCapabilities, AgentCard, AgentInterface, ApiKeySecurityScheme, GetTaskRequest, Message,
    Part, PartContent, Role, SecurityRequirement, SecurityScheme, SendMessageRequest,
    StreamResponse, StringList, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

fn text(t: &str) -> pb::Part {
    pb::Part {
        part: Some(pb::part::Part::Text(t.into())),
    }
}

fn user_message(parts: Vec<pb::Part>) -> pb::Message {
    pb::Message {
        message_id: "m-1".into(),
        role: pb::Role::User as i32,
        content: parts,
        ..Default::default()
    }
}

fn send(parts: Vec<pb::Part>) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        request: Some(user_message(parts)),
        ..Default::default()
    }
}

/// The field an `InvalidParams` names, and its message.
fn refused<T: std::fmt::Debug>(result: Result<T, A2aError>) -> (String, String) {
    match result {
        Err(A2aError::InvalidParams {
            message,
            violations,
        }) => (violations[0].field.clone(), message),
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

#[test]
fn blocking_is_the_default_and_a_configuration_says_otherwise() {
    let plain = SendMessageRequest::from_v03(send(vec![text("hi")])).unwrap();
    assert!(!plain.configuration.unwrap_or_default().return_immediately);
    let mut with = send(vec![text("hi")]);
    with.configuration = Some(pb::SendMessageConfiguration::default());
    let with = SendMessageRequest::from_v03(with).unwrap();
    let config = with.configuration.unwrap();
    assert!(
        config.return_immediately,
        "blocking false in a configuration"
    );
    assert_eq!(config.history_length, None, "0 is unset");
    let mut blocking = send(vec![text("hi")]);
    blocking.configuration = Some(pb::SendMessageConfiguration {
        blocking: true,
        history_length: 3,
        ..Default::default()
    });
    let config = SendMessageRequest::from_v03(blocking)
        .unwrap()
        .configuration
        .unwrap();
    assert!(!config.return_immediately);
    assert_eq!(config.history_length, Some(3));
    assert!(config.to_v03().blocking);
}

#[test]
fn files_carry_base64_text_both_ways() {
    let file = |file: pb::file_part::File| pb::Part {
        part: Some(pb::part::Part::File(pb::FilePart {
            file: Some(file),
            mime_type: "text/plain".into(),
        })),
    };
    let req = send(vec![
        file(pb::file_part::File::FileWithBytes(b"aGVsbG8=".to_vec())),
        file(pb::file_part::File::FileWithUri(
            "https://x.example/f".into(),
        )),
    ]);
    let message = SendMessageRequest::from_v03(req).unwrap().message;
    assert_eq!(
        message.parts[0].content,
        PartContent::Raw(b"hello".to_vec())
    );
    assert_eq!(message.parts[0].media_type.as_deref(), Some("text/plain"));
    assert_eq!(
        message.parts[1].content,
        PartContent::Url("https://x.example/f".into())
    );
    let out = Part::raw(b"hello".to_vec()).to_v03();
    match out.part {
        Some(pb::part::Part::File(f)) => assert_eq!(
            f.file,
            Some(pb::file_part::File::FileWithBytes(b"aGVsbG8=".to_vec()))
        ),
        other => panic!("{other:?}"),
    }
    let bad = send(vec![
        text("ok"),
        file(pb::file_part::File::FileWithBytes(vec![0xff, 0x00])),
    ]);
    let (field, message) = refused(SendMessageRequest::from_v03(bad));
    assert_eq!(field, "message.content[1].file.fileWithBytes");
    assert!(message.contains("base64"), "{message}");
}

#[test]
fn unset_oneofs_and_enums_are_named() {
    let (field, message) = refused(SendMessageRequest::from_v03(send(vec![
        text("a"),
        pb::Part { part: None },
    ])));
    assert_eq!(field, "message.content[1]");
    assert!(message.contains("`text`, `file`, `data`"), "{message}");
    let (field, _) = refused(SendMessageRequest::from_v03(send(vec![pb::Part {
        part: Some(pb::part::Part::File(pb::FilePart::default())),
    }])));
    assert_eq!(field, "message.content[0].file");
    let mut no_role = send(vec![text("a")]);
    no_role.request.as_mut().unwrap().role = 0;
    assert_eq!(
        refused(SendMessageRequest::from_v03(no_role)).0,
        "message.role"
    );
    let mut odd_role = send(vec![text("a")]);
    odd_role.request.as_mut().unwrap().role = 7;
    let (field, message) = refused(SendMessageRequest::from_v03(odd_role));
    assert_eq!(field, "message.role");
    assert!(message.contains("7 is not a Role value"), "{message}");
    assert_eq!(
        refused(SendMessageRequest::from_v03(
            pb::SendMessageRequest::default()
        ))
        .0,
        "message"
    );
    let task = pb::Task {
        id: "t".into(),
        status: Some(pb::TaskStatus {
            state: 42,
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(refused(Task::from_v03(task)).0, "status.state");
}

#[test]
fn states_follow_v03s_numbering_and_spelling() {
    let task = Task {
        id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus {
            state: TaskState::Canceled,
            message: Some(Message::agent(vec![Part::text("stopped")])),
            timestamp: None,
        },
        ..Default::default()
    };
    let out = task.clone().to_v03();
    let status = out.status.clone().unwrap();
    assert_eq!(status.state, pb::TaskState::Cancelled as i32);
    assert_eq!(status.state, 5);
    assert_eq!(status.update.as_ref().unwrap().role, pb::Role::Agent as i32);
    let back = Task::from_v03(out).unwrap();
    assert_eq!(back.status.state, TaskState::Canceled);
    assert_eq!(
        back.status.message.unwrap().parts,
        vec![Part::text("stopped")]
    );
    for (state, n) in [
        (TaskState::Submitted, 1),
        (TaskState::Working, 2),
        (TaskState::Completed, 3),
        (TaskState::Failed, 4),
        (TaskState::InputRequired, 6),
        (TaskState::Rejected, 7),
        (TaskState::AuthRequired, 8),
    ] {
        let status = TaskStatus {
            state,
            message: None,
            timestamp: None,
        };
        assert_eq!(status.to_v03().state, n, "{state:?}");
    }
}

#[test]
fn data_parts_are_objects() {
    let out = Part::data(json!([1, 2])).to_v03();
    let back = Part::from_v03(out).unwrap();
    assert_eq!(back.content, PartContent::Data(json!({"value": [1, 2]})));
    let empty = pb::Part {
        part: Some(pb::part::Part::Data(pb::DataPart { data: None })),
    };
    assert_eq!(
        Part::from_v03(empty).unwrap().content,
        PartContent::Data(json!({}))
    );
}

#[test]
fn resource_names_are_exact() {
    let get = |name: &str| {
        GetTaskRequest::from_v03(pb::GetTaskRequest {
            name: name.into(),
            history_length: 0,
        })
    };
    assert_eq!(get("tasks/abc").unwrap().id, "abc");
    for bad in ["abc", "tasks/", "tasks/a/b", "task/abc"] {
        let (field, message) = refused(get(bad));
        assert_eq!(field, "name", "{bad}");
        assert!(message.contains("tasks/{id}"), "{message}");
    }
    assert!(refused(get("")).1.contains("is required"));
    let config = |name: &str| {
        crate::protocol::GetTaskPushNotificationConfigRequest::from_v03(
            pb::GetTaskPushNotificationConfigRequest { name: name.into() },
        )
    };
    let ok = config("tasks/t/pushNotificationConfigs/c").unwrap();
    assert_eq!((ok.task_id.as_str(), ok.id.as_str()), ("t", "c"));
    for bad in [
        "tasks/t",
        "tasks/t/pushNotificationConfigs/",
        "tasks//pushNotificationConfigs/c",
        "tasks/t/pushNotificationConfigs/c/d",
    ] {
        assert_eq!(refused(config(bad)).0, "name", "{bad}");
    }
}

#[test]
fn push_configs_by_name_and_config_id() {
    let webhook = |id: &str| pb::PushNotificationConfig {
        id: id.into(),
        url: "https://hooks.example.com/a2a".into(),
        token: "tok".into(),
        authentication: Some(pb::AuthenticationInfo {
            schemes: vec!["Bearer".into(), "Basic".into()],
            credentials: "secret".into(),
        }),
    };
    let create = |config_id: &str, own: &str| {
        create_push_config_from_v03(pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".into(),
            config_id: config_id.into(),
            config: Some(pb::TaskPushNotificationConfig {
                name: "tasks/t-1/pushNotificationConfigs/None".into(),
                push_notification_config: Some(webhook(own)),
            }),
        })
    };
    let config = create("c-1", "").unwrap();
    assert_eq!(config.id.as_deref(), Some("c-1"));
    assert_eq!(config.task_id.as_deref(), Some("t-1"));
    assert_eq!(config.authentication.as_ref().unwrap().scheme, "Bearer");
    assert_eq!(create("", "own").unwrap().id.as_deref(), Some("own"));
    assert_eq!(create("", "").unwrap().id, None, "the agent makes one");
    assert_eq!(refused(create("a", "b")).0, "configId");
    let out = config.to_v03();
    assert_eq!(out.name, "tasks/t-1/pushNotificationConfigs/c-1");
    let webhook_out = out.push_notification_config.clone().unwrap();
    assert_eq!(webhook_out.authentication.unwrap().schemes, vec!["Bearer"]);
    let back = TaskPushNotificationConfig::from_v03(out).unwrap();
    assert_eq!(back.id.as_deref(), Some("c-1"));
    let no_parent = create_push_config_from_v03(pb::CreateTaskPushNotificationConfigRequest {
        parent: String::new(),
        ..Default::default()
    });
    assert_eq!(refused(no_parent).0, "parent");
    let no_url = create_push_config_from_v03(pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t".into(),
        config: Some(pb::TaskPushNotificationConfig {
            name: String::new(),
            push_notification_config: Some(pb::PushNotificationConfig::default()),
        }),
        ..Default::default()
    });
    assert_eq!(refused(no_url).0, "config.pushNotificationConfig.url");
    let no_scheme = create_push_config_from_v03(pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t".into(),
        config: Some(pb::TaskPushNotificationConfig {
            name: String::new(),
            push_notification_config: Some(pb::PushNotificationConfig {
                url: "https://h.example".into(),
                authentication: Some(pb::AuthenticationInfo::default()),
                ..Default::default()
            }),
        }),
        ..Default::default()
    });
    assert_eq!(
        refused(no_scheme).0,
        "config.pushNotificationConfig.authentication.schemes"
    );
}

#[test]
fn status_updates_say_whether_they_end_the_stream() {
    let update = |state| {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            metadata: None,
        })
    };
    let is_final = |event: StreamResponse| match event.to_v03().payload {
        Some(pb::stream_response::Payload::StatusUpdate(u)) => u.r#final,
        other => panic!("{other:?}"),
    };
    assert!(!is_final(update(TaskState::Working)));
    assert!(is_final(update(TaskState::Completed)));
    assert!(is_final(update(TaskState::InputRequired)));
    assert!(is_final(update(TaskState::AuthRequired)));
    let round = StreamResponse::from_v03(update(TaskState::Failed).to_v03()).unwrap();
    assert_eq!(round, update(TaskState::Failed));
    let (field, _) = refused(StreamResponse::from_v03(pb::StreamResponse {
        payload: None,
    }));
    assert_eq!(field, "payload");
}

#[test]
fn the_card_in_v03_shape() {
    let mut card = AgentCard {
        name: "a".into(),
        description: "d".into(),
        version: "1".into(),
        supported_interfaces: vec![
            AgentInterface::new("http://h:1", "JSONRPC"),
            AgentInterface::new("h:1", "GRPC"),
        ],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            extended_agent_card: Some(true),
            ..Default::default()
        },
        ..Default::default()
    };
    card.security_schemes.insert(
        "key".into(),
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            location: "header".into(),
            name: "X-API-Key".into(),
            ..Default::default()
        }),
    );
    card.security_requirements = vec![SecurityRequirement {
        schemes: [("key".to_string(), StringList::default())].into(),
    }];
    let out = card.clone().to_v03();
    assert_eq!(out.protocol_version, "0.3.0");
    assert_eq!(out.url, "http://h:1");
    assert_eq!(out.preferred_transport, "JSONRPC");
    assert_eq!(out.additional_interfaces.len(), 2);
    assert_eq!(out.additional_interfaces[1].transport, "GRPC");
    assert!(out.supports_authenticated_extended_card);
    assert!(out.capabilities.unwrap().streaming);
    assert_eq!(out.security[0].schemes["key"].list, Vec::<String>::new());
    assert!(matches!(
        out.security_schemes["key"].scheme,
        Some(pb::security_scheme::Scheme::ApiKeySecurityScheme(_))
    ));
    // Offering the interfaces of the bindings that serve v0.3.
    let out = super::card_to_v03(card, &["GRPC"]);
    assert_eq!(
        (out.url.as_str(), out.preferred_transport.as_str()),
        ("h:1", "GRPC")
    );
    assert_eq!(out.additional_interfaces.len(), 1);
}

#[test]
fn errors_as_v03_clients_read_them() {
    use tonic::Code;
    let not_found = A2aError::task_not_found("t-1");
    assert_eq!(status_code(&not_found), Code::NotFound);
    assert_eq!(
        status_message(&not_found),
        "TaskNotFoundError: task t-1 was not found"
    );
    let not_cancelable = A2aError::TaskNotCancelable {
        task_id: "t".into(),
        state: TaskState::Completed,
    };
    assert_eq!(status_code(&not_cancelable), Code::Unimplemented);
    assert_eq!(
        status_code(&A2aError::MethodNotFound("x".into())),
        Code::NotFound
    );
    assert_eq!(
        status_code(&A2aError::invalid_field("a", "b")),
        Code::InvalidArgument
    );
    let renamed = renamed_fields(
        A2aError::invalid_field("message.parts", "must not be empty"),
        &[("message.parts", "message.content")],
    );
    assert_eq!(
        renamed.to_string(),
        "invalid `message.content`: must not be empty"
    );
    let untouched = renamed_fields(
        A2aError::invalid_field("message.partsX", "x"),
        &[("message.parts", "message.content")],
    );
    assert!(untouched.to_string().contains("`message.partsX`"));
    let nested = renamed_fields(
        A2aError::invalid_field("message.parts[2].url", "x"),
        &[("message.parts", "message.content")],
    );
    assert!(nested.to_string().contains("`message.content[2].url`"));
}

#[test]
fn messages_round_trip_what_v03_has() {
    let message = Message {
        message_id: "m".into(),
        context_id: Some("c".into()),
        task_id: Some("t".into()),
        role: Role::User,
        parts: vec![Part::text("a"), Part::data(json!({"k": 1}))],
        metadata: Some(serde_json::from_value(json!({"x": true})).unwrap()),
        extensions: vec!["urn:e".into()],
        reference_task_ids: vec!["lost".into()],
    };
    let back = Message::from_v03(message.clone().to_v03()).unwrap();
    assert_eq!(
        back,
        Message {
            reference_task_ids: Vec::new(),
            ..message
        }
    );
}
