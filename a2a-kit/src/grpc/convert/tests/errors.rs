//! What `from_proto` refuses, and the exact ProtoJSON path each refusal names.

use prost_types::value::Kind;

use super::super::super::pb;
use super::*;
use crate::error::A2aError;

/// The one field violation of `T::from_proto(proto)`, which must be `InvalidParams`.
fn violation<T>(proto: T::Proto) -> (String, String)
where
    T: FromProto + Debug,
{
    match T::from_proto(proto) {
        Err(A2aError::InvalidParams {
            message,
            mut violations,
        }) => {
            assert_eq!(violations.len(), 1, "{message}");
            let v = violations.remove(0);
            assert!(message.contains(&v.field), "{message}");
            (v.field, v.description)
        }
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

/// Checks that `edit` applied to `base`'s message makes `T::from_proto` name `field`, with a
/// description containing `says`.
fn refuses<T, F>(base: &T, edit: F, field: &str, says: &str)
where
    T: ToProto + FromProto<Proto = <T as ToProto>::Proto> + Clone + Debug,
    F: FnOnce(&mut <T as ToProto>::Proto),
{
    let mut proto = base.clone().to_proto();
    edit(&mut proto);
    let (got, description) = violation::<T>(proto);
    assert_eq!(got, field, "{description}");
    assert!(
        description.contains(says),
        "{field}: `{description}` does not say `{says}`"
    );
}

const REQUIRED: &str = "is required";

fn nan() -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::NumberValue(f64::NAN)),
    }
}

fn content(part: &mut pb::Part) -> &mut Option<pb::part::Content> {
    &mut part.content
}

#[test]
fn send_message_request() {
    let base = send_request();
    refuses(&base, |p| p.message = None, "message", REQUIRED);
    fn m(p: &mut pb::SendMessageRequest) -> &mut pb::Message {
        p.message.as_mut().unwrap()
    }
    refuses(
        &base,
        |p| m(p).message_id.clear(),
        "message.messageId",
        REQUIRED,
    );
    refuses(&base, |p| m(p).role = 0, "message.role", REQUIRED);
    refuses(
        &base,
        |p| m(p).role = 7,
        "message.role",
        "7 is not a Role value",
    );
    refuses(&base, |p| m(p).role = -1, "message.role", "-1");
    refuses(
        &base,
        |p| *content(&mut m(p).parts[3]) = None,
        "message.parts[3]",
        "expected one of `text`, `raw`, `url`, `data`",
    );
    fn cfg(p: &mut pb::SendMessageRequest) -> &mut pb::TaskPushNotificationConfig {
        p.configuration
            .as_mut()
            .and_then(|c| c.task_push_notification_config.as_mut())
            .unwrap()
    }
    refuses(
        &base,
        |p| cfg(p).url.clear(),
        "configuration.taskPushNotificationConfig.url",
        REQUIRED,
    );
    refuses(
        &base,
        |p| cfg(p).authentication.as_mut().unwrap().scheme.clear(),
        "configuration.taskPushNotificationConfig.authentication.scheme",
        REQUIRED,
    );
    refuses(
        &base,
        |p| {
            p.metadata
                .as_mut()
                .unwrap()
                .fields
                .insert("bad".into(), nan());
        },
        "metadata.bad",
        "NaN is not a JSON number",
    );
}

#[test]
fn nan_and_infinity_are_refused_at_any_depth() {
    let base = send_request();
    let infinite = |sign: f64| prost_types::Value {
        kind: Some(Kind::NumberValue(sign * f64::INFINITY)),
    };
    // message.parts[6] is the data part {"answer":42,"list":[1.5,"two",null],...}.
    fn data(p: &mut pb::SendMessageRequest) -> &mut prost_types::Struct {
        match &mut p.message.as_mut().unwrap().parts[6].content {
            Some(pb::part::Content::Data(prost_types::Value {
                kind: Some(Kind::StructValue(s)),
            })) => s,
            other => panic!("{other:?}"),
        }
    }
    refuses(
        &base,
        |p| {
            let list = data(p).fields.get_mut("list").unwrap();
            if let Some(Kind::ListValue(l)) = &mut list.kind {
                l.values[1] = infinite(1.0);
            }
        },
        "message.parts[6].data.list[1]",
        "inf is not a JSON number",
    );
    refuses(
        &base,
        |p| {
            let nested = data(p).fields.get_mut("nested").unwrap();
            if let Some(Kind::StructValue(s)) = &mut nested.kind {
                s.fields.insert("neg".into(), infinite(-1.0));
            }
        },
        "message.parts[6].data.nested.neg",
        "-inf is not a JSON number",
    );
    refuses(
        &base,
        |p| m_part(p, 7).content = Some(pb::part::Content::Data(nan())),
        "message.parts[7].data",
        "NaN",
    );
    refuses(
        &base,
        |p| {
            m_part(p, 1)
                .metadata
                .as_mut()
                .unwrap()
                .fields
                .insert("x".into(), nan());
        },
        "message.parts[1].metadata.x",
        "NaN",
    );
}

fn m_part(p: &mut pb::SendMessageRequest, i: usize) -> &mut pb::Part {
    &mut p.message.as_mut().unwrap().parts[i]
}

#[test]
fn task_requests_name_their_ids() {
    let get = GetTaskRequest {
        tenant: None,
        id: "t".into(),
        history_length: None,
    };
    refuses(&get, |p| p.id.clear(), "id", REQUIRED);
    let cancel = CancelTaskRequest {
        tenant: None,
        id: "t".into(),
        metadata: Some(meta()),
    };
    refuses(&cancel, |p| p.id.clear(), "id", REQUIRED);
    refuses(
        &cancel,
        |p| {
            p.metadata
                .as_mut()
                .unwrap()
                .fields
                .insert("n".into(), nan());
        },
        "metadata.n",
        "NaN",
    );
    let subscribe = SubscribeToTaskRequest {
        tenant: None,
        id: "t".into(),
    };
    refuses(&subscribe, |p| p.id.clear(), "id", REQUIRED);
}

#[test]
fn list_tasks_filters() {
    let base = list_tasks_request();
    refuses(
        &base,
        |p| p.status = 9,
        "status",
        "9 is not a TaskState value",
    );
    refuses(&base, |p| p.status = -4, "status", "-4");
    fn ts(p: &mut pb::ListTasksRequest) -> &mut prost_types::Timestamp {
        p.status_timestamp_after.as_mut().unwrap()
    }
    refuses(
        &base,
        |p| ts(p).nanos = -1,
        "statusTimestampAfter",
        "nanos -1",
    );
    refuses(
        &base,
        |p| ts(p).nanos = 1_000_000_000,
        "statusTimestampAfter",
        "nanos 1000000000",
    );
    refuses(
        &base,
        |p| ts(p).seconds = 253_402_300_800,
        "statusTimestampAfter",
        "seconds 253402300800",
    );
    refuses(
        &base,
        |p| ts(p).seconds = -62_135_596_801,
        "statusTimestampAfter",
        "seconds -62135596801",
    );
    refuses(
        &base,
        |p| ts(p).seconds = i64::MIN,
        "statusTimestampAfter",
        "range",
    );
}

#[test]
fn push_config_requests() {
    let base = push_config();
    refuses(&base, |p| p.url.clear(), "url", REQUIRED);
    refuses(
        &base,
        |p| p.authentication.as_mut().unwrap().scheme.clear(),
        "authentication.scheme",
        REQUIRED,
    );
    refuses(
        &AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: None,
        },
        |p| p.scheme.clear(),
        "scheme",
        REQUIRED,
    );
    let get = GetTaskPushNotificationConfigRequest {
        tenant: None,
        task_id: "t".into(),
        id: "c".into(),
    };
    refuses(&get, |p| p.task_id.clear(), "taskId", REQUIRED);
    refuses(&get, |p| p.id.clear(), "id", REQUIRED);
    let delete = DeleteTaskPushNotificationConfigRequest {
        tenant: None,
        task_id: "t".into(),
        id: "c".into(),
    };
    refuses(&delete, |p| p.task_id.clear(), "taskId", REQUIRED);
    refuses(&delete, |p| p.id.clear(), "id", REQUIRED);
    let list = ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id: "t".into(),
        page_size: None,
        page_token: None,
    };
    refuses(&list, |p| p.task_id.clear(), "taskId", REQUIRED);
    refuses(
        &list_push_configs_response(),
        |p| p.configs[1].url.clear(),
        "configs[1].url",
        REQUIRED,
    );
}

#[test]
fn tasks_and_their_parts() {
    let base = task();
    refuses(&base, |p| p.id.clear(), "id", REQUIRED);
    refuses(&base, |p| p.status = None, "status", REQUIRED);
    fn status(p: &mut pb::Task) -> &mut pb::TaskStatus {
        p.status.as_mut().unwrap()
    }
    refuses(&base, |p| status(p).state = 0, "status.state", REQUIRED);
    refuses(
        &base,
        |p| status(p).state = 42,
        "status.state",
        "42 is not a TaskState value",
    );
    refuses(
        &base,
        |p| status(p).timestamp.as_mut().unwrap().nanos = -5,
        "status.timestamp",
        "nanos -5",
    );
    refuses(
        &base,
        |p| status(p).message.as_mut().unwrap().role = 3,
        "status.message.role",
        "3 is not a Role value",
    );
    refuses(
        &base,
        |p| p.history[1].message_id.clear(),
        "history[1].messageId",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.history[0].role = 0,
        "history[0].role",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.artifacts[1].artifact_id.clear(),
        "artifacts[1].artifactId",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.artifacts[0].parts[10].content = None,
        "artifacts[0].parts[10]",
        "expected one of",
    );
    refuses(
        &list_tasks_response(),
        |p| p.tasks[1].status.as_mut().unwrap().state = 0,
        "tasks[1].status.state",
        REQUIRED,
    );
}

#[test]
fn stream_items_and_send_answers() {
    let item = StreamResponse::Task(task());
    refuses(
        &item,
        |p| p.payload = None,
        "payload",
        "expected one of `task`, `message`, `statusUpdate`, `artifactUpdate`",
    );
    refuses(
        &item,
        |p| {
            if let Some(pb::stream_response::Payload::Task(t)) = &mut p.payload {
                t.status.as_mut().unwrap().state = 99;
            }
        },
        "task.status.state",
        "99",
    );
    refuses(
        &StreamResponse::Message(message(Role::Agent)),
        |p| {
            if let Some(pb::stream_response::Payload::Message(m)) = &mut p.payload {
                m.parts[0].content = None;
            }
        },
        "message.parts[0]",
        "expected one of",
    );
    let update = StreamResponse::StatusUpdate(status_update());
    fn event(p: &mut pb::StreamResponse) -> &mut pb::TaskStatusUpdateEvent {
        match &mut p.payload {
            Some(pb::stream_response::Payload::StatusUpdate(e)) => e,
            other => panic!("{other:?}"),
        }
    }
    refuses(
        &update,
        |p| event(p).task_id.clear(),
        "statusUpdate.taskId",
        REQUIRED,
    );
    refuses(
        &update,
        |p| event(p).context_id.clear(),
        "statusUpdate.contextId",
        REQUIRED,
    );
    refuses(
        &update,
        |p| event(p).status = None,
        "statusUpdate.status",
        REQUIRED,
    );
    let chunk = StreamResponse::ArtifactUpdate(artifact_update());
    fn chunk_event(p: &mut pb::StreamResponse) -> &mut pb::TaskArtifactUpdateEvent {
        match &mut p.payload {
            Some(pb::stream_response::Payload::ArtifactUpdate(e)) => e,
            other => panic!("{other:?}"),
        }
    }
    refuses(
        &chunk,
        |p| chunk_event(p).task_id.clear(),
        "artifactUpdate.taskId",
        REQUIRED,
    );
    refuses(
        &chunk,
        |p| chunk_event(p).context_id.clear(),
        "artifactUpdate.contextId",
        REQUIRED,
    );
    refuses(
        &chunk,
        |p| chunk_event(p).artifact = None,
        "artifactUpdate.artifact",
        REQUIRED,
    );
    refuses(
        &chunk,
        |p| {
            chunk_event(p)
                .artifact
                .as_mut()
                .unwrap()
                .artifact_id
                .clear()
        },
        "artifactUpdate.artifact.artifactId",
        REQUIRED,
    );
    let answer = SendMessageResponse::Message(message(Role::Agent));
    refuses(
        &answer,
        |p| p.payload = None,
        "payload",
        "expected one of `task`, `message`",
    );
    refuses(
        &answer,
        |p| {
            if let Some(pb::send_message_response::Payload::Message(m)) = &mut p.payload {
                m.role = 0;
            }
        },
        "message.role",
        REQUIRED,
    );
}

#[test]
fn the_agent_card() {
    let base = card();
    refuses(&base, |p| p.name.clear(), "name", REQUIRED);
    refuses(&base, |p| p.description.clear(), "description", REQUIRED);
    refuses(&base, |p| p.version.clear(), "version", REQUIRED);
    refuses(&base, |p| p.capabilities = None, "capabilities", REQUIRED);
    fn iface(p: &mut pb::AgentCard) -> &mut pb::AgentInterface {
        &mut p.supported_interfaces[1]
    }
    refuses(
        &base,
        |p| iface(p).url.clear(),
        "supportedInterfaces[1].url",
        REQUIRED,
    );
    refuses(
        &base,
        |p| iface(p).protocol_binding.clear(),
        "supportedInterfaces[1].protocolBinding",
        REQUIRED,
    );
    refuses(
        &base,
        |p| iface(p).protocol_version.clear(),
        "supportedInterfaces[1].protocolVersion",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.provider.as_mut().unwrap().url.clear(),
        "provider.url",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.provider.as_mut().unwrap().organization.clear(),
        "provider.organization",
        REQUIRED,
    );
    refuses(&base, |p| p.skills[1].id.clear(), "skills[1].id", REQUIRED);
    refuses(
        &base,
        |p| p.skills[0].name.clear(),
        "skills[0].name",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.skills[0].description.clear(),
        "skills[0].description",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.signatures[0].protected.clear(),
        "signatures[0].protected",
        REQUIRED,
    );
    refuses(
        &base,
        |p| p.signatures[0].signature.clear(),
        "signatures[0].signature",
        REQUIRED,
    );
    refuses(
        &base,
        |p| {
            let header = p.signatures[0].header.as_mut().unwrap();
            header.fields.insert("alg".into(), nan());
        },
        "signatures[0].header.alg",
        "NaN",
    );
    refuses(
        &base,
        |p| {
            let ext = &mut p.capabilities.as_mut().unwrap().extensions[0];
            ext.params
                .as_mut()
                .unwrap()
                .fields
                .insert("p".into(), nan());
        },
        "capabilities.extensions[0].params.p",
        "NaN",
    );
}

#[test]
fn security_schemes_and_oauth_flows() {
    use pb::o_auth_flows::Flow;
    use pb::security_scheme::Scheme;
    let base = card();
    let scheme = |p: &mut pb::AgentCard, name: &str| -> Scheme {
        p.security_schemes
            .get_mut(name)
            .and_then(|s| s.scheme.take())
            .unwrap()
    };
    let put = |p: &mut pb::AgentCard, name: &str, s: Scheme| {
        p.security_schemes
            .insert(name.into(), pb::SecurityScheme { scheme: Some(s) });
    };
    refuses(
        &base,
        |p| {
            p.security_schemes
                .insert("none".into(), pb::SecurityScheme::default());
        },
        "securitySchemes.none",
        "expected one of `apiKeySecurityScheme`, `httpAuthSecurityScheme`",
    );
    let edit_scheme = |name: &'static str, edit: fn(&mut Scheme), field: &str| {
        refuses(
            &base,
            |p| {
                let mut s = scheme(p, name);
                edit(&mut s);
                put(p, name, s);
            },
            field,
            REQUIRED,
        );
    };
    edit_scheme(
        "apiKey",
        |s| {
            if let Scheme::ApiKeySecurityScheme(k) = s {
                k.location.clear();
            }
        },
        "securitySchemes.apiKey.apiKeySecurityScheme.location",
    );
    edit_scheme(
        "apiKey",
        |s| {
            if let Scheme::ApiKeySecurityScheme(k) = s {
                k.name.clear();
            }
        },
        "securitySchemes.apiKey.apiKeySecurityScheme.name",
    );
    edit_scheme(
        "bearer",
        |s| {
            if let Scheme::HttpAuthSecurityScheme(h) = s {
                h.scheme.clear();
            }
        },
        "securitySchemes.bearer.httpAuthSecurityScheme.scheme",
    );
    edit_scheme(
        "oidc",
        |s| {
            if let Scheme::OpenIdConnectSecurityScheme(o) = s {
                o.open_id_connect_url.clear();
            }
        },
        "securitySchemes.oidc.openIdConnectSecurityScheme.openIdConnectUrl",
    );
    edit_scheme(
        "oauthCode",
        |s| {
            if let Scheme::Oauth2SecurityScheme(o) = s {
                o.flows = None;
            }
        },
        "securitySchemes.oauthCode.oauth2SecurityScheme.flows",
    );
    refuses(
        &base,
        |p| {
            let mut s = scheme(p, "oauthClient");
            if let Scheme::Oauth2SecurityScheme(o) = &mut s {
                o.flows = Some(pb::OAuthFlows::default());
            }
            put(p, "oauthClient", s);
        },
        "securitySchemes.oauthClient.oauth2SecurityScheme.flows",
        "expected one of `authorizationCode`, `clientCredentials`, `implicit`, `password`, `deviceCode`",
    );
    type FlowEdit = fn(&mut Flow);
    let flow_cases: [(&str, FlowEdit, &str); 5] = [
        (
            "oauthCode",
            |f| {
                if let Flow::AuthorizationCode(c) = f {
                    c.authorization_url.clear();
                }
            },
            "authorizationCode.authorizationUrl",
        ),
        (
            "oauthCode",
            |f| {
                if let Flow::AuthorizationCode(c) = f {
                    c.token_url.clear();
                }
            },
            "authorizationCode.tokenUrl",
        ),
        (
            "oauthClient",
            |f| {
                if let Flow::ClientCredentials(c) = f {
                    c.token_url.clear();
                }
            },
            "clientCredentials.tokenUrl",
        ),
        (
            "oauthDevice",
            |f| {
                if let Flow::DeviceCode(d) = f {
                    d.device_authorization_url.clear();
                }
            },
            "deviceCode.deviceAuthorizationUrl",
        ),
        (
            "oauthDevice",
            |f| {
                if let Flow::DeviceCode(d) = f {
                    d.token_url.clear();
                }
            },
            "deviceCode.tokenUrl",
        ),
    ];
    for (name, edit, tail) in flow_cases {
        refuses(
            &base,
            |p| {
                let mut s = scheme(p, name);
                if let Scheme::Oauth2SecurityScheme(o) = &mut s
                    && let Some(flow) = o.flows.as_mut().and_then(|f| f.flow.as_mut())
                {
                    edit(flow);
                }
                put(p, name, s);
            },
            &format!("securitySchemes.{name}.oauth2SecurityScheme.flows.{tail}"),
            REQUIRED,
        );
    }
}

#[test]
fn a_repeated_required_field_may_be_empty_as_in_json() {
    // proto3 cannot tell `[]` from absent, and the JSON bindings take `[]`: the server
    // refuses a message without parts itself.
    let mut m = minimal_message("m", Role::User);
    m.parts.clear();
    assert!(Message::from_proto(m.to_proto()).is_ok());
    let bare = AgentCard {
        name: "n".into(),
        description: "d".into(),
        version: "1".into(),
        ..AgentCard::default()
    };
    assert!(AgentCard::from_proto(bare.to_proto()).is_ok());
}
