//! What a client of a 0.3 agent needs besides what a server does: its requests written in
//! 0.3 (JSON-RPC params, HTTP+JSON bodies), the agent's answers read back as this crate's 1.0
//! types, and a 0.3 card read as 1.0's [`AgentCard`].
//!
//! Decisions:
//! - A send always carries its configuration with `blocking` written out: 0.3 servers read
//!   its absence differently.
//! - 0.3's HTTP+JSON message has no `referenceTaskIds`: they are not sent there.
//! - A 0.3 card's interfaces are its `url` with `preferredTransport` (JSONRPC when absent),
//!   then its `additionalInterfaces`, each URL and transport once, all with protocolVersion
//!   0.3. Its OpenAPI-shaped schemes (`{"type": "apiKey", "in", "name"}`...) become 1.0's;
//!   a scheme of an unknown `type` is left out. An OAuth 2.0 scheme listing several flows
//!   keeps one (1.0 takes one): authorization code, else client credentials, else implicit,
//!   else password. `security: [{scheme: [scopes]}]` becomes `securityRequirements` (the
//!   card's and each skill's); `supportsAuthenticatedExtendedCard` becomes
//!   `capabilities.extendedAgentCard`. The 0.3 proto's ProtoJSON (as `GET /v1/card` answers
//!   on some servers) is read too: its schemes and requirements already have 1.0's shape.

use serde_json::{Map, Value, json};

use super::{event_from_v03, push_config_from_v03};
use crate::error::A2aError;
use crate::protocol::{
    self as v1, AgentCard, AgentInterface, SendMessageRequest, SendMessageResponse, StreamResponse,
    TaskState,
};
use crate::v03::convert::rest::{message_from_rest, message_to_rest, part_from_rest};
use crate::v03::{rest, wire};

// ----- requests: 1.0 → 0.3 -----

/// A 1.0 push config's webhook in 0.3's shape (its task travels beside it).
pub fn webhook_to_v03(config: v1::TaskPushNotificationConfig) -> wire::PushNotificationConfig {
    wire::TaskPushNotificationConfig::from(config).push_notification_config
}

/// A SendMessage request as `message/send`'s (and `message/stream`'s) params.
pub fn send_to_v03(req: SendMessageRequest) -> wire::MessageSendParams {
    let c = req.configuration.unwrap_or_default();
    wire::MessageSendParams {
        message: req.message.into(),
        configuration: Some(wire::MessageSendConfiguration {
            accepted_output_modes: (!c.accepted_output_modes.is_empty())
                .then_some(c.accepted_output_modes),
            blocking: Some(!c.return_immediately),
            history_length: c.history_length,
            push_notification_config: c.task_push_notification_config.map(webhook_to_v03),
        }),
        metadata: req.metadata,
    }
}

/// A SendMessage request as the body of 0.3's `POST /v1/message:send` (and `:stream`).
pub fn send_to_rest(req: SendMessageRequest) -> rest::SendMessageRequest {
    let c = req.configuration.unwrap_or_default();
    rest::SendMessageRequest {
        message: message_to_rest(req.message),
        configuration: Some(rest::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            push_notification: c.task_push_notification_config.map(webhook_to_v03),
            history_length: c.history_length,
            blocking: Some(!c.return_immediately),
        }),
        metadata: req.metadata,
    }
}

/// A push config as the body of 0.3's `POST /v1/tasks/{id}/pushNotificationConfigs`: the
/// proto's `CreateTaskPushNotificationConfigRequest` (`{parent, configId, config}`), which the
/// official servers and a2a-kit's read.
pub fn create_push_config_to_rest(config: v1::TaskPushNotificationConfig) -> Value {
    let task_id = config.task_id.clone().unwrap_or_default();
    let id = config.id.clone().filter(|id| !id.is_empty());
    let webhook = webhook_to_v03(config);
    let mut inner = json!({ "pushNotificationConfig": webhook });
    if let Some(id) = &id {
        inner["name"] = format!("tasks/{task_id}/pushNotificationConfigs/{id}").into();
    }
    let mut body = json!({ "parent": format!("tasks/{task_id}"), "config": inner });
    if let Some(id) = id {
        body["configId"] = id.into();
    }
    body
}

// ----- answers: 0.3 → 1.0 -----

/// `message/send`'s result as SendMessage's: a task or a message (`at` names it in errors).
pub fn send_response_from_v03(
    result: wire::Event,
    at: &str,
) -> Result<SendMessageResponse, A2aError> {
    match event_from_v03(result, at)? {
        StreamResponse::Task(t) => Ok(SendMessageResponse::Task(t)),
        StreamResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
        _ => Err(A2aError::invalid_field(at, "must be a task or a message")),
    }
}

/// A 0.3 JSON-RPC webhook of a task as 1.0's.
pub fn push_config_from_v03_task(
    config: wire::TaskPushNotificationConfig,
    at: &str,
) -> Result<v1::TaskPushNotificationConfig, A2aError> {
    push_config_from_v03(
        config.push_notification_config,
        Some(config.task_id),
        &format!("{at}.pushNotificationConfig"),
    )
}

fn state_from_rest(state: rest::TaskState) -> TaskState {
    match state {
        rest::TaskState::Unspecified => TaskState::Unspecified,
        rest::TaskState::Submitted => TaskState::Submitted,
        rest::TaskState::Working => TaskState::Working,
        rest::TaskState::Completed => TaskState::Completed,
        rest::TaskState::Failed => TaskState::Failed,
        rest::TaskState::Cancelled => TaskState::Canceled,
        rest::TaskState::InputRequired => TaskState::InputRequired,
        rest::TaskState::Rejected => TaskState::Rejected,
        rest::TaskState::AuthRequired => TaskState::AuthRequired,
    }
}

fn status_from_rest(s: rest::TaskStatus, at: &str) -> Result<v1::TaskStatus, A2aError> {
    Ok(v1::TaskStatus {
        state: state_from_rest(s.state),
        message: s
            .message
            .map(|m| message_from_rest(m, &format!("{at}.message")))
            .transpose()?,
        timestamp: s.timestamp,
    })
}

fn artifact_from_rest(a: rest::Artifact, at: &str) -> Result<v1::Artifact, A2aError> {
    Ok(v1::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: a
            .parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| part_from_rest(p, &format!("{at}.parts[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: a.metadata,
        extensions: a.extensions,
    })
}

/// A 0.3 HTTP+JSON task as 1.0's; `at` is its path, for errors.
pub fn task_from_rest(t: rest::Task, at: &str) -> Result<v1::Task, A2aError> {
    Ok(v1::Task {
        id: t.id,
        context_id: t.context_id,
        status: status_from_rest(t.status, &format!("{at}.status"))?,
        artifacts: t
            .artifacts
            .into_iter()
            .enumerate()
            .map(|(i, a)| artifact_from_rest(a, &format!("{at}.artifacts[{i}]")))
            .collect::<Result<_, _>>()?,
        history: t
            .history
            .into_iter()
            .enumerate()
            .map(|(i, m)| message_from_rest(m, &format!("{at}.history[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: t.metadata,
    })
}

/// A 0.3 HTTP+JSON stream item (or `message:send` answer) as 1.0's.
pub fn event_from_rest(event: rest::StreamResponse, at: &str) -> Result<StreamResponse, A2aError> {
    Ok(match event {
        rest::StreamResponse::Task(t) => {
            StreamResponse::Task(task_from_rest(t, &format!("{at}.task"))?)
        }
        rest::StreamResponse::Message(m) => {
            StreamResponse::Message(message_from_rest(m, &format!("{at}.msg"))?)
        }
        rest::StreamResponse::StatusUpdate(e) => {
            StreamResponse::StatusUpdate(v1::TaskStatusUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                status: status_from_rest(e.status, &format!("{at}.statusUpdate.status"))?,
                metadata: e.metadata,
            })
        }
        rest::StreamResponse::ArtifactUpdate(e) => {
            StreamResponse::ArtifactUpdate(v1::TaskArtifactUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: artifact_from_rest(e.artifact, &format!("{at}.artifactUpdate.artifact"))?,
                append: e.append,
                last_chunk: e.last_chunk,
                metadata: e.metadata,
            })
        }
    })
}

/// `message:send`'s answer as SendMessage's: a task or a message.
pub fn send_response_from_rest(
    answer: rest::StreamResponse,
    at: &str,
) -> Result<SendMessageResponse, A2aError> {
    match event_from_rest(answer, at)? {
        StreamResponse::Task(t) => Ok(SendMessageResponse::Task(t)),
        StreamResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
        _ => Err(A2aError::invalid_field(at, "must be a task or a message")),
    }
}

/// A 0.3 HTTP+JSON webhook (the named resource `tasks/{task}/pushNotificationConfigs/{id}`)
/// as 1.0's: the task and the id from its name where the config does not say.
pub fn push_config_from_rest(
    config: rest::TaskPushNotificationConfig,
    at: &str,
) -> Result<v1::TaskPushNotificationConfig, A2aError> {
    let mut segments = config.name.split('/');
    let (task_id, id) = match (
        segments.next(),
        segments.next(),
        segments.next(),
        segments.next(),
    ) {
        (Some("tasks"), Some(task), Some("pushNotificationConfigs"), id) => (
            Some(task.to_string()).filter(|t| !t.is_empty()),
            id.map(str::to_string).filter(|i| !i.is_empty()),
        ),
        _ => (None, None),
    };
    let Some(mut webhook) = config.push_notification_config else {
        return Err(A2aError::invalid_field(
            format!("{at}.pushNotificationConfig"),
            "is required",
        ));
    };
    if webhook.id.as_deref().is_none_or(str::is_empty) {
        webhook.id = id;
    }
    push_config_from_v03(webhook, task_id, &format!("{at}.pushNotificationConfig"))
}

// ----- the card -----

/// The interfaces a 0.3 card names (its `url` with `preferredTransport`, then its
/// `additionalInterfaces`), each with protocolVersion 0.3; none when `card` has no `url`.
pub fn interfaces_from_v03(card: &Value) -> Vec<AgentInterface> {
    let mut out: Vec<AgentInterface> = Vec::new();
    let mut add = |url: Option<&str>, transport: Option<&str>| {
        let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
            return;
        };
        let binding = transport
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or(AgentInterface::JSONRPC);
        if out
            .iter()
            .any(|i| i.url == url && i.protocol_binding.eq_ignore_ascii_case(binding))
        {
            return;
        }
        out.push(AgentInterface {
            url: url.to_string(),
            protocol_binding: binding.to_string(),
            tenant: None,
            protocol_version: crate::protocol::ProtocolVersion::V0_3.as_str().to_string(),
        });
    };
    add(
        str_field(card, "url", "url"),
        str_field(card, "preferredTransport", "preferred_transport"),
    );
    if let Some(Value::Array(more)) = field(card, "additionalInterfaces", "additional_interfaces") {
        for i in more {
            add(
                str_field(i, "url", "url"),
                str_field(i, "transport", "transport"),
            );
        }
    }
    out
}

/// A 0.3 card (its JSON-RPC shape or its proto's ProtoJSON) as 1.0's [`AgentCard`], as the
/// module's decisions say. What 1.0 has no place for (`protocolVersion`, `url`...) is left out.
pub fn card_from_v03(card: &Value) -> serde_json::Result<AgentCard> {
    let Value::Object(source) = card else {
        return serde_json::from_value(card.clone());
    };
    let mut out = source.clone();
    if field(card, "supportedInterfaces", "supported_interfaces").is_none() {
        let interfaces = serde_json::to_value(interfaces_from_v03(card))?;
        out.insert("supportedInterfaces".into(), interfaces);
    }
    if let Some(Value::Bool(true)) = field(
        card,
        "supportsAuthenticatedExtendedCard",
        "supports_authenticated_extended_card",
    ) {
        let capabilities = out
            .entry("capabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(c) = capabilities
            && !c.contains_key("extendedAgentCard")
            && !c.contains_key("extended_agent_card")
        {
            c.insert("extendedAgentCard".into(), true.into());
        }
    }
    let schemes_key = ["securitySchemes", "security_schemes"]
        .into_iter()
        .find(|k| out.contains_key(*k));
    if let Some(key) = schemes_key
        && let Some(Value::Object(schemes)) = out.remove(key)
    {
        let schemes: Map<String, Value> = schemes
            .into_iter()
            .filter_map(|(name, s)| scheme_from_v03(s).map(|s| (name, s)))
            .collect();
        out.insert("securitySchemes".into(), schemes.into());
    }
    requirements_from_v03(&mut out);
    if let Some(Value::Array(skills)) = out.get_mut("skills") {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            requirements_from_v03(skill);
        }
    }
    serde_json::from_value(Value::Object(out))
}

fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

fn str_field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a str> {
    field(v, camel, snake).and_then(Value::as_str)
}

/// `security` (0.3's `[{scheme: [scopes]}]`, or the proto's `[{schemes: {scheme: {list}}}]`)
/// as `securityRequirements`, unless `object` has those already.
fn requirements_from_v03(object: &mut Map<String, Value>) {
    let Some(security) = object.remove("security") else {
        return;
    };
    if object.contains_key("securityRequirements") || object.contains_key("security_requirements") {
        return;
    }
    let Value::Array(alternatives) = security else {
        return;
    };
    let requirements: Vec<Value> = alternatives
        .into_iter()
        .filter_map(|alternative| {
            let Value::Object(schemes) = alternative else {
                return None;
            };
            // The proto's shape: one `schemes` object of `{list}`s.
            if let (1, Some(Value::Object(_))) = (schemes.len(), schemes.get("schemes")) {
                return Some(Value::Object(schemes));
            }
            let schemes: Map<String, Value> = schemes
                .into_iter()
                .map(|(name, scopes)| {
                    let list = match scopes {
                        Value::Array(scopes) => scopes,
                        _ => Vec::new(),
                    };
                    (name, json!({ "list": list }))
                })
                .collect();
            Some(json!({ "schemes": schemes }))
        })
        .collect();
    object.insert("securityRequirements".into(), requirements.into());
}

/// A security scheme in 1.0's shape: an OpenAPI-shaped 0.3 one translated, one in 1.0's (or
/// the 0.3 proto's) shape as it is; `None` for an unknown `type`.
fn scheme_from_v03(scheme: Value) -> Option<Value> {
    let Some(kind) = scheme.get("type").and_then(Value::as_str) else {
        return Some(scheme);
    };
    let mut out = Map::new();
    let mut copy = |from: &str, to: &str| {
        if let Some(v) = scheme.get(from).filter(|v| !v.is_null()) {
            out.insert(to.to_string(), v.clone());
        }
    };
    copy("description", "description");
    let member = match kind {
        "apiKey" => {
            copy("in", "location");
            copy("name", "name");
            "apiKeySecurityScheme"
        }
        "http" => {
            copy("scheme", "scheme");
            copy("bearerFormat", "bearerFormat");
            "httpAuthSecurityScheme"
        }
        "oauth2" => {
            copy("oauth2MetadataUrl", "oauth2MetadataUrl");
            let flows = scheme.get("flows").and_then(Value::as_object);
            let flow = [
                "authorizationCode",
                "clientCredentials",
                "implicit",
                "password",
            ]
            .into_iter()
            .find_map(|name| Some((name, flows?.get(name)?.clone())));
            let (name, flow) = flow?;
            out.insert("flows".into(), json!({ name: flow }));
            "oauth2SecurityScheme"
        }
        "openIdConnect" => {
            copy("openIdConnectUrl", "openIdConnectUrl");
            "openIdConnectSecurityScheme"
        }
        "mutualTLS" => "mtlsSecurityScheme",
        _ => return None,
    };
    Some(json!({ member: out }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, SecurityScheme, SendMessageConfiguration};

    #[test]
    fn a_send_writes_blocking_and_its_webhook() {
        let req = SendMessageRequest {
            message: Message::user_text("hi"),
            configuration: Some(SendMessageConfiguration {
                return_immediately: true,
                task_push_notification_config: Some(v1::TaskPushNotificationConfig {
                    url: "http://hook".into(),
                    token: Some("t".into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let rpc = serde_json::to_value(send_to_v03(req.clone())).unwrap();
        assert_eq!(rpc["message"]["kind"], "message");
        assert_eq!(rpc["message"]["role"], "user");
        assert_eq!(rpc["configuration"]["blocking"], false);
        assert_eq!(
            rpc["configuration"]["pushNotificationConfig"],
            json!({"url": "http://hook", "token": "t"})
        );
        let body = serde_json::to_value(send_to_rest(req)).unwrap();
        assert_eq!(body["message"]["role"], "ROLE_USER");
        assert_eq!(body["message"]["content"][0]["text"], "hi");
        assert_eq!(body["configuration"]["blocking"], false);
        assert_eq!(
            body["configuration"]["pushNotification"]["url"],
            "http://hook"
        );
    }

    #[test]
    fn rest_answers_read_back() {
        let answer: rest::StreamResponse = serde_json::from_value(json!({"task": {
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_CANCELLED"},
            "artifacts": [{"artifactId": "a", "parts": [{"file": {"fileWithUri": "http://f", "mimeType": "text/plain"}}]}],
            "history": [{"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}]
        }}))
        .unwrap();
        let SendMessageResponse::Task(task) = send_response_from_rest(answer, "").unwrap() else {
            panic!()
        };
        assert_eq!(task.status.state, TaskState::Canceled);
        assert_eq!(task.history[0].text(), "hi");
        assert_eq!(
            task.artifacts[0].parts[0].media_type.as_deref(),
            Some("text/plain")
        );
        let msg: rest::StreamResponse = serde_json::from_value(
            json!({"msg": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "yo"}]}}),
        )
        .unwrap();
        assert!(matches!(
            send_response_from_rest(msg, "").unwrap(),
            SendMessageResponse::Message(m) if m.text() == "yo"
        ));
        let update: rest::StreamResponse = serde_json::from_value(json!({"artifactUpdate": {
            "taskId": "t", "contextId": "c", "append": true, "lastChunk": true,
            "artifact": {"artifactId": "a", "parts": [{"data": {"data": {"k": 1}}}]}
        }}))
        .unwrap();
        let StreamResponse::ArtifactUpdate(u) = event_from_rest(update, "").unwrap() else {
            panic!()
        };
        assert!(u.append && u.last_chunk);
        assert_eq!(u.artifact.parts[0].as_data().unwrap()["k"], 1);
    }

    #[test]
    fn push_configs_read_their_task_and_id_from_the_name() {
        let c: rest::TaskPushNotificationConfig = serde_json::from_value(json!({
            "name": "tasks/t-1/pushNotificationConfigs/c-1",
            "pushNotificationConfig": {"url": "http://hook", "authentication": {"schemes": ["Bearer"]}}
        }))
        .unwrap();
        let c = push_config_from_rest(c, "").unwrap();
        assert_eq!(c.task_id.as_deref(), Some("t-1"));
        assert_eq!(c.id.as_deref(), Some("c-1"));
        assert_eq!(c.authentication.unwrap().scheme, "Bearer");
        let body = create_push_config_to_rest(v1::TaskPushNotificationConfig {
            id: Some("c-2".into()),
            task_id: Some("t-2".into()),
            url: "http://hook".into(),
            ..Default::default()
        });
        assert_eq!(
            body,
            json!({"parent": "tasks/t-2", "configId": "c-2", "config": {
                "name": "tasks/t-2/pushNotificationConfigs/c-2",
                "pushNotificationConfig": {"id": "c-2", "url": "http://hook"}}})
        );
    }

    #[test]
    fn a_0_3_card_reads_as_1_0() {
        let card = json!({
            "name": "old", "description": "d", "version": "1", "protocolVersion": "0.3.0",
            "url": "http://h/rpc", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [
                {"url": "http://h/rpc", "transport": "JSONRPC"},
                {"url": "http://h/rest", "transport": "HTTP+JSON"}
            ],
            "capabilities": {"streaming": true, "stateTransitionHistory": false},
            "supportsAuthenticatedExtendedCard": true,
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "oauth": {"type": "oauth2", "flows": {
                    "clientCredentials": {"tokenUrl": "http://t", "scopes": {"a": "A"}},
                    "authorizationCode": {"authorizationUrl": "http://a", "tokenUrl": "http://t", "scopes": {}}
                }},
                "future": {"type": "somethingElse"}
            },
            "security": [{"key": []}, {"oauth": ["a"]}],
            "skills": [{"id": "s", "name": "s", "description": "", "tags": [], "security": [{"bearer": []}]}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"]
        });
        let out = card_from_v03(&card).unwrap();
        let ifaces: Vec<_> = out
            .supported_interfaces
            .iter()
            .map(|i| {
                (
                    i.url.as_str(),
                    i.protocol_binding.as_str(),
                    i.protocol_version.as_str(),
                )
            })
            .collect();
        assert_eq!(
            ifaces,
            [
                ("http://h/rpc", "JSONRPC", "0.3"),
                ("http://h/rest", "HTTP+JSON", "0.3")
            ]
        );
        assert_eq!(out.capabilities.extended_agent_card, Some(true));
        assert!(matches!(
            &out.security_schemes["key"],
            SecurityScheme::ApiKeySecurityScheme(k) if k.location == "header" && k.name == "X-Key"
        ));
        assert!(matches!(
            &out.security_schemes["bearer"],
            SecurityScheme::HttpAuthSecurityScheme(h) if h.scheme == "bearer"
        ));
        assert!(matches!(
            &out.security_schemes["oauth"],
            SecurityScheme::Oauth2SecurityScheme(o)
                if matches!(o.flows, v1::OAuthFlows::AuthorizationCode(_))
        ));
        assert!(!out.security_schemes.contains_key("future"));
        assert_eq!(out.security_requirements.len(), 2);
        assert_eq!(out.security_requirements[1].schemes["oauth"].list, ["a"]);
        assert!(
            out.skills[0].security_requirements[0]
                .schemes
                .contains_key("bearer")
        );
    }

    #[test]
    fn the_0_3_proto_card_reads_as_1_0() {
        let card = json!({
            "name": "p", "protocolVersion": "0.3.0", "url": "http://h/", "preferredTransport": "HTTP+JSON",
            "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "query", "name": "k"}}},
            "security": [{"schemes": {"key": {"list": []}}}]
        });
        let out = card_from_v03(&card).unwrap();
        assert_eq!(out.supported_interfaces[0].protocol_binding, "HTTP+JSON");
        assert!(matches!(
            &out.security_schemes["key"],
            SecurityScheme::ApiKeySecurityScheme(k) if k.location == "query"
        ));
        assert!(out.security_requirements[0].schemes.contains_key("key"));
    }
}
