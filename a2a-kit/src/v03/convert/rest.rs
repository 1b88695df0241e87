//! Between 0.3's HTTP+JSON shapes ([`rest`], ProtoJSON of the 0.3 proto)
//! and this crate's 1.0 types. Errors name the field by its 0.3 HTTP+JSON path
//! (`message.content[0].file`). The decisions of the JSON-RPC translation hold here too
//! (`historyLength`, push schemes, data parts that are no object), but for `blocking`:
//! ProtoJSON leaves a `false` out, so a `configuration` without `blocking` does not block
//! (no `configuration` at all still does, as 1.0's default).

use base64::Engine as _;

use crate::error::A2aError;
use crate::protocol::{
    self as v1, Part, PartContent, Role, SendMessageConfiguration, SendMessageRequest,
    StreamResponse, TaskState,
};
use crate::v03::rest;

// ----- 0.3 → 1.0 -----

fn role_from_rest(role: rest::Role) -> Role {
    match role {
        rest::Role::Unspecified => Role::Unspecified,
        rest::Role::User => Role::User,
        rest::Role::Agent => Role::Agent,
    }
}

/// A 0.3 HTTP+JSON part as 1.0's; `at` is its path, for errors.
pub fn part_from_rest(part: rest::Part, at: &str) -> Result<Part, A2aError> {
    let content = match (part.text, part.file, part.data) {
        (Some(text), None, None) => PartContent::Text(text),
        (None, None, Some(data)) => {
            PartContent::Data(serde_json::Value::Object(data.data.into_map()))
        }
        (None, Some(file), None) => {
            let content = super::file_content(
                file.file_with_bytes,
                file.file_with_uri,
                &format!("{at}.file"),
                ("fileWithBytes", "fileWithUri"),
            )?;
            return Ok(Part {
                content,
                metadata: part.metadata,
                filename: file.name,
                media_type: file.mime_type,
            });
        }
        _ => {
            return Err(A2aError::invalid_field(
                at,
                "must have exactly one of `text`, `file` and `data`",
            ));
        }
    };
    Ok(Part {
        content,
        metadata: part.metadata,
        filename: None,
        media_type: None,
    })
}

/// A 0.3 HTTP+JSON message as 1.0's; `at` is its path, for errors.
pub fn message_from_rest(m: rest::Message, at: &str) -> Result<v1::Message, A2aError> {
    Ok(v1::Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: role_from_rest(m.role),
        parts: m
            .content
            .into_iter()
            .enumerate()
            .map(|(i, p)| part_from_rest(p, &format!("{at}.content[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: m.metadata,
        extensions: m.extensions,
        reference_task_ids: Vec::new(),
    })
}

/// `message:send`'s body as a SendMessage request.
pub fn send_from_rest(body: rest::SendMessageRequest) -> Result<SendMessageRequest, A2aError> {
    let configuration = match body.configuration {
        None => None,
        Some(c) => Some(SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c
                .push_notification
                .map(|p| super::push_config_from_v03(p, None, "configuration.pushNotification"))
                .transpose()?,
            history_length: c.history_length,
            // ProtoJSON leaves `false` out: a configuration without `blocking` is one that
            // does not block (what the official SDKs send for it, and their servers read).
            return_immediately: !c.blocking.unwrap_or(false),
        }),
    };
    Ok(SendMessageRequest {
        tenant: None,
        message: message_from_rest(body.message, "message")?,
        configuration,
        metadata: body.metadata,
    })
}

/// A create request's body as the config for `task_id`: the wrapped or the bare form.
pub fn push_config_from_rest(
    body: rest::CreatePushConfigBody,
    task_id: &str,
) -> Result<v1::TaskPushNotificationConfig, A2aError> {
    let (config, at, config_id) = match body.config {
        Some(config) => (
            config.push_notification_config,
            "config.pushNotificationConfig",
            body.config_id,
        ),
        None => (
            body.push_notification_config,
            "pushNotificationConfig",
            None,
        ),
    };
    let Some(mut config) = config else {
        return Err(A2aError::invalid_field(at, "is required"));
    };
    if config.id.as_deref().is_none_or(str::is_empty) {
        config.id = config_id;
    }
    super::push_config_from_v03(config, Some(task_id.to_string()), at)
}

// ----- 1.0 → 0.3 -----

fn state_to_rest(state: TaskState) -> rest::TaskState {
    match state {
        TaskState::Unspecified => rest::TaskState::Unspecified,
        TaskState::Submitted => rest::TaskState::Submitted,
        TaskState::Working => rest::TaskState::Working,
        TaskState::Completed => rest::TaskState::Completed,
        TaskState::Failed => rest::TaskState::Failed,
        TaskState::Canceled => rest::TaskState::Cancelled,
        TaskState::InputRequired => rest::TaskState::InputRequired,
        TaskState::Rejected => rest::TaskState::Rejected,
        TaskState::AuthRequired => rest::TaskState::AuthRequired,
    }
}

fn part_to_rest(part: Part) -> rest::Part {
    let mut out = rest::Part {
        metadata: part.metadata,
        ..Default::default()
    };
    let file = |bytes, uri| rest::FilePart {
        file_with_uri: uri,
        file_with_bytes: bytes,
        mime_type: part.media_type,
        name: part.filename,
    };
    match part.content {
        PartContent::Text(text) => out.text = Some(text),
        PartContent::Raw(bytes) => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            out.file = Some(file(Some(b64), None));
        }
        PartContent::Url(url) => out.file = Some(file(None, Some(url))),
        PartContent::Data(value) => {
            out.data = Some(rest::DataPart {
                data: super::data_object(value).into(),
            });
        }
    }
    out
}

/// A 1.0 message in 0.3's HTTP+JSON shape.
pub fn message_to_rest(m: v1::Message) -> rest::Message {
    rest::Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: match m.role {
            Role::Unspecified => rest::Role::Unspecified,
            Role::User => rest::Role::User,
            Role::Agent => rest::Role::Agent,
        },
        content: m.parts.into_iter().map(part_to_rest).collect(),
        metadata: m.metadata,
        extensions: m.extensions,
    }
}

fn status_to_rest(s: v1::TaskStatus) -> rest::TaskStatus {
    rest::TaskStatus {
        state: state_to_rest(s.state),
        message: s.message.map(message_to_rest),
        timestamp: s.timestamp,
    }
}

fn artifact_to_rest(a: v1::Artifact) -> rest::Artifact {
    rest::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: a.parts.into_iter().map(part_to_rest).collect(),
        metadata: a.metadata,
        extensions: a.extensions,
    }
}

/// A 1.0 task in 0.3's HTTP+JSON shape.
pub fn task_to_rest(t: v1::Task) -> rest::Task {
    rest::Task {
        id: t.id,
        context_id: t.context_id,
        status: status_to_rest(t.status),
        artifacts: t.artifacts.into_iter().map(artifact_to_rest).collect(),
        history: t.history.into_iter().map(message_to_rest).collect(),
        metadata: t.metadata,
    }
}

/// A 1.0 stream item in 0.3's HTTP+JSON shape; `ends_stream` is a status update's `final`.
pub fn event_to_rest(event: StreamResponse, ends_stream: bool) -> rest::StreamResponse {
    match event {
        StreamResponse::Task(t) => rest::StreamResponse::Task(task_to_rest(t)),
        StreamResponse::Message(m) => rest::StreamResponse::Message(message_to_rest(m)),
        StreamResponse::StatusUpdate(e) => {
            rest::StreamResponse::StatusUpdate(rest::TaskStatusUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                status: status_to_rest(e.status),
                is_final: ends_stream,
                metadata: e.metadata,
            })
        }
        StreamResponse::ArtifactUpdate(e) => {
            rest::StreamResponse::ArtifactUpdate(rest::TaskArtifactUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: artifact_to_rest(e.artifact),
                append: e.append,
                last_chunk: e.last_chunk,
                metadata: e.metadata,
            })
        }
    }
}

/// A 1.0 push config as 0.3's named resource.
pub fn push_config_to_rest(c: v1::TaskPushNotificationConfig) -> rest::TaskPushNotificationConfig {
    let wire = crate::v03::wire::TaskPushNotificationConfig::from(c);
    rest::TaskPushNotificationConfig {
        name: format!(
            "tasks/{}/pushNotificationConfigs/{}",
            wire.task_id,
            wire.push_notification_config
                .id
                .as_deref()
                .unwrap_or_default()
        ),
        push_notification_config: Some(wire.push_notification_config),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_names_the_member_it_lacks_or_doubles() {
        let both = rest::Part {
            text: Some("a".into()),
            data: Some(rest::DataPart::default()),
            ..Default::default()
        };
        let err = part_from_rest(both, "message.content[0]").unwrap_err();
        assert!(err.to_string().contains("message.content[0]"), "{err}");
        let file = rest::Part {
            file: Some(rest::FilePart::default()),
            ..Default::default()
        };
        let err = part_from_rest(file, "message.content[1]").unwrap_err();
        assert!(err.to_string().contains("message.content[1].file"), "{err}");
    }

    #[test]
    fn states_round_trip_with_two_ls() {
        let json = serde_json::to_value(state_to_rest(TaskState::Canceled)).unwrap();
        assert_eq!(json, "TASK_STATE_CANCELLED");
    }
}
