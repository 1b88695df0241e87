//! Between the 0.3 shapes ([`wire`]) and this crate's 1.0 types: the one place
//! the two versions meet.
//!
//! Reading 0.3 names the offending field by its 0.3 path (`params.message.parts[1].file`);
//! writing 0.3 cannot fail. Decisions where the versions disagree:
//! - `blocking` absent means blocking (1.0's default); `historyLength: 0` means no history,
//!   as in 1.0 (the 0.3 proto's comment said "unlimited"; its JSON schema says nothing).
//! - 0.3 push authentication lists schemes, 1.0 takes one: the first is kept (a config with
//!   an empty list is refused), and it is written back as a list of one.
//! - 0.3 has no media type or file name on text and data parts: they are left out; a data
//!   part whose value is not an object (0.3 requires one) is written as `{"value": ...}`.
//! - `unknown` is 1.0's `TASK_STATE_UNSPECIFIED`; a 1.0 message with no role is written as
//!   the agent's.

pub mod client;
pub mod rest;

use base64::Engine as _;

use super::wire;
use crate::error::A2aError;
use crate::protocol::part::decode_base64;
use crate::protocol::{
    self as v1, AuthenticationInfo, Part, PartContent, Role, SendMessageConfiguration,
    SendMessageRequest, StreamResponse, TaskState,
};

// ----- 0.3 → 1.0 -----

impl From<wire::TaskState> for TaskState {
    fn from(state: wire::TaskState) -> Self {
        match state {
            wire::TaskState::Submitted => TaskState::Submitted,
            wire::TaskState::Working => TaskState::Working,
            wire::TaskState::InputRequired => TaskState::InputRequired,
            wire::TaskState::Completed => TaskState::Completed,
            wire::TaskState::Canceled => TaskState::Canceled,
            wire::TaskState::Failed => TaskState::Failed,
            wire::TaskState::Rejected => TaskState::Rejected,
            wire::TaskState::AuthRequired => TaskState::AuthRequired,
            wire::TaskState::Unknown => TaskState::Unspecified,
        }
    }
}

impl From<wire::Role> for Role {
    fn from(role: wire::Role) -> Self {
        match role {
            wire::Role::User => Role::User,
            wire::Role::Agent => Role::Agent,
        }
    }
}

/// A 0.3 part as 1.0's; `at` is its path, for errors.
pub fn part_from_v03(part: wire::Part, at: &str) -> Result<Part, A2aError> {
    Ok(match part {
        wire::Part::Text(p) => Part {
            metadata: p.metadata,
            ..Part::text(p.text)
        },
        wire::Part::Data(p) => Part {
            metadata: p.metadata,
            ..Part::data(serde_json::Value::Object(p.data.into_map()))
        },
        wire::Part::File(p) => {
            let file = p.file;
            let content = file_content(file.bytes, file.uri, &format!("{at}.file"), FILE_MEMBERS)?;
            Part {
                content,
                metadata: p.metadata,
                filename: file.name,
                media_type: file.mime_type,
            }
        }
    })
}

/// The member names of a 0.3 JSON-RPC file: its bytes and its URI.
const FILE_MEMBERS: (&str, &str) = ("bytes", "uri");

/// A 0.3 file's content, from whichever of its bytes (base64) and its URI it has; `at` is the
/// file's path and `members` its two members' names, for errors (0.3's bindings name them
/// differently).
pub(super) fn file_content(
    bytes: Option<String>,
    uri: Option<String>,
    at: &str,
    members: (&str, &str),
) -> Result<PartContent, A2aError> {
    match (bytes, uri) {
        (Some(bytes), None) => decode_base64(&bytes).map(PartContent::Raw).map_err(|e| {
            A2aError::invalid_field(format!("{at}.{}", members.0), format!("not base64: {e}"))
        }),
        (None, Some(uri)) => Ok(PartContent::Url(uri)),
        _ => Err(A2aError::invalid_field(
            at,
            format!(
                "must have exactly one of `{}` and `{}`",
                members.0, members.1
            ),
        )),
    }
}

/// A data part's value as 0.3 carries it: an object as it is; anything else, which 0.3
/// cannot carry, as `{"value": ...}`.
pub fn data_object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => std::iter::once(("value".to_string(), other)).collect(),
    }
}

fn parts_from_v03(parts: Vec<wire::Part>, at: &str) -> Result<Vec<Part>, A2aError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part_from_v03(p, &format!("{at}[{i}]")))
        .collect()
}

/// A 0.3 message as 1.0's; `at` is its path, for errors.
pub fn message_from_v03(m: wire::Message, at: &str) -> Result<v1::Message, A2aError> {
    Ok(v1::Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: m.role.into(),
        parts: parts_from_v03(m.parts, &format!("{at}.parts"))?,
        metadata: m.metadata,
        extensions: m.extensions,
        reference_task_ids: m.reference_task_ids,
    })
}

fn status_from_v03(s: wire::TaskStatus, at: &str) -> Result<v1::TaskStatus, A2aError> {
    Ok(v1::TaskStatus {
        state: s.state.into(),
        message: s
            .message
            .map(|m| message_from_v03(m, &format!("{at}.message")))
            .transpose()?,
        timestamp: s.timestamp,
    })
}

fn artifact_from_v03(a: wire::Artifact, at: &str) -> Result<v1::Artifact, A2aError> {
    Ok(v1::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: parts_from_v03(a.parts, &format!("{at}.parts"))?,
        metadata: a.metadata,
        extensions: a.extensions,
    })
}

/// A 0.3 task as 1.0's; `at` is its path, for errors.
pub fn task_from_v03(t: wire::Task, at: &str) -> Result<v1::Task, A2aError> {
    Ok(v1::Task {
        id: t.id,
        context_id: t.context_id,
        status: status_from_v03(t.status, &format!("{at}.status"))?,
        artifacts: t
            .artifacts
            .into_iter()
            .enumerate()
            .map(|(i, a)| artifact_from_v03(a, &format!("{at}.artifacts[{i}]")))
            .collect::<Result<_, _>>()?,
        history: t
            .history
            .into_iter()
            .enumerate()
            .map(|(i, m)| message_from_v03(m, &format!("{at}.history[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: t.metadata,
    })
}

/// A 0.3 stream item, `message/send` result or push body as 1.0's; `at` is its path.
pub fn event_from_v03(event: wire::Event, at: &str) -> Result<StreamResponse, A2aError> {
    Ok(match event {
        wire::Event::Task(t) => StreamResponse::Task(task_from_v03(t, at)?),
        wire::Event::Message(m) => StreamResponse::Message(message_from_v03(m, at)?),
        wire::Event::StatusUpdate(e) => StreamResponse::StatusUpdate(v1::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: status_from_v03(e.status, &format!("{at}.status"))?,
            metadata: e.metadata,
        }),
        wire::Event::ArtifactUpdate(e) => {
            StreamResponse::ArtifactUpdate(v1::TaskArtifactUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: artifact_from_v03(e.artifact, &format!("{at}.artifact"))?,
                append: e.append.unwrap_or(false),
                last_chunk: e.last_chunk.unwrap_or(false),
                metadata: e.metadata,
            })
        }
    })
}

/// A 0.3 webhook as 1.0's; `at` is its path, for errors.
pub fn push_config_from_v03(
    c: wire::PushNotificationConfig,
    task_id: Option<String>,
    at: &str,
) -> Result<v1::TaskPushNotificationConfig, A2aError> {
    let authentication = match c.authentication {
        None => None,
        Some(auth) => {
            let Some(scheme) = auth.schemes.into_iter().next() else {
                return Err(A2aError::invalid_field(
                    format!("{at}.authentication.schemes"),
                    "must name at least one scheme",
                ));
            };
            Some(AuthenticationInfo {
                scheme,
                credentials: auth.credentials,
            })
        }
    };
    Ok(v1::TaskPushNotificationConfig {
        id: c.id.filter(|id| !id.is_empty()),
        task_id,
        url: c.url,
        token: c.token.filter(|t| !t.is_empty()),
        authentication,
        ..Default::default()
    })
}

/// `message/send`'s params as a SendMessage request.
pub fn send_from_v03(p: wire::MessageSendParams) -> Result<SendMessageRequest, A2aError> {
    let configuration = match p.configuration {
        None => None,
        Some(c) => Some(SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
            task_push_notification_config: c
                .push_notification_config
                .map(|c| {
                    push_config_from_v03(c, None, "params.configuration.pushNotificationConfig")
                })
                .transpose()?,
            history_length: c.history_length,
            return_immediately: !c.blocking.unwrap_or(true),
        }),
    };
    Ok(SendMessageRequest {
        tenant: None,
        message: message_from_v03(p.message, "params.message")?,
        configuration,
        metadata: p.metadata,
    })
}

// ----- 1.0 → 0.3 -----

impl From<TaskState> for wire::TaskState {
    fn from(state: TaskState) -> Self {
        match state {
            TaskState::Submitted => wire::TaskState::Submitted,
            TaskState::Working => wire::TaskState::Working,
            TaskState::InputRequired => wire::TaskState::InputRequired,
            TaskState::Completed => wire::TaskState::Completed,
            TaskState::Canceled => wire::TaskState::Canceled,
            TaskState::Failed => wire::TaskState::Failed,
            TaskState::Rejected => wire::TaskState::Rejected,
            TaskState::AuthRequired => wire::TaskState::AuthRequired,
            TaskState::Unspecified => wire::TaskState::Unknown,
        }
    }
}

impl From<Role> for wire::Role {
    fn from(role: Role) -> Self {
        match role {
            Role::User => wire::Role::User,
            Role::Agent | Role::Unspecified => wire::Role::Agent,
        }
    }
}

impl From<Part> for wire::Part {
    fn from(part: Part) -> Self {
        let metadata = part.metadata;
        let file = |bytes, uri| {
            wire::Part::File(wire::FilePart {
                file: wire::FileContent {
                    bytes,
                    uri,
                    mime_type: part.media_type,
                    name: part.filename,
                },
                metadata: metadata.clone(),
            })
        };
        match part.content {
            PartContent::Text(text) => wire::Part::Text(wire::TextPart { text, metadata }),
            PartContent::Raw(bytes) => file(
                Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                None,
            ),
            PartContent::Url(url) => file(None, Some(url)),
            PartContent::Data(value) => wire::Part::Data(wire::DataPart {
                data: data_object(value).into(),
                metadata,
            }),
        }
    }
}

impl From<v1::Message> for wire::Message {
    fn from(m: v1::Message) -> Self {
        wire::Message {
            kind: wire::MessageKind,
            message_id: m.message_id,
            role: m.role.into(),
            parts: m.parts.into_iter().map(Into::into).collect(),
            context_id: m.context_id,
            task_id: m.task_id,
            reference_task_ids: m.reference_task_ids,
            extensions: m.extensions,
            metadata: m.metadata,
        }
    }
}

impl From<v1::TaskStatus> for wire::TaskStatus {
    fn from(s: v1::TaskStatus) -> Self {
        wire::TaskStatus {
            state: s.state.into(),
            message: s.message.map(Into::into),
            timestamp: s.timestamp,
        }
    }
}

impl From<v1::Artifact> for wire::Artifact {
    fn from(a: v1::Artifact) -> Self {
        wire::Artifact {
            artifact_id: a.artifact_id,
            name: a.name,
            description: a.description,
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl From<v1::Task> for wire::Task {
    fn from(t: v1::Task) -> Self {
        wire::Task {
            kind: wire::TaskKind,
            id: t.id,
            context_id: t.context_id,
            status: t.status.into(),
            artifacts: t.artifacts.into_iter().map(Into::into).collect(),
            history: t.history.into_iter().map(Into::into).collect(),
            metadata: t.metadata,
        }
    }
}

/// A 1.0 stream item as 0.3's; `ends_stream` is whether the stream closes with it (a status
/// update's `final`).
pub fn event_to_v03(event: StreamResponse, ends_stream: bool) -> wire::Event {
    match event {
        StreamResponse::Task(t) => wire::Event::Task(t.into()),
        StreamResponse::Message(m) => wire::Event::Message(m.into()),
        StreamResponse::StatusUpdate(e) => wire::Event::StatusUpdate(wire::TaskStatusUpdateEvent {
            kind: wire::StatusUpdateKind,
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.into(),
            is_final: ends_stream,
            metadata: e.metadata,
        }),
        StreamResponse::ArtifactUpdate(e) => {
            wire::Event::ArtifactUpdate(wire::TaskArtifactUpdateEvent {
                kind: wire::ArtifactUpdateKind,
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: e.artifact.into(),
                append: e.append.then_some(true),
                last_chunk: e.last_chunk.then_some(true),
                metadata: e.metadata,
            })
        }
    }
}

impl From<v1::TaskPushNotificationConfig> for wire::TaskPushNotificationConfig {
    fn from(c: v1::TaskPushNotificationConfig) -> Self {
        wire::TaskPushNotificationConfig {
            task_id: c.task_id.unwrap_or_default(),
            push_notification_config: wire::PushNotificationConfig {
                id: c.id,
                url: c.url,
                token: c.token,
                authentication: c.authentication.map(|a| {
                    wire::PushNotificationAuthenticationInfo {
                        schemes: vec![a.scheme],
                        credentials: a.credentials,
                    }
                }),
            },
        }
    }
}
