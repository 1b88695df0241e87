//! The A2A 0.3 HTTP+JSON shapes: ProtoJSON of the 0.3 proto (`a2a.v1`), not the 0.3 JSON-RPC
//! shapes. States and roles are the proto's names (`TASK_STATE_CANCELLED`, two Ls), a
//! message's parts are its `content`, a part is `{text}`, `{file: {fileWithUri |
//! fileWithBytes, mimeType, name}}` or `{data: {data}}`, oneofs are keyed by member, push
//! configs are named resources (`tasks/{id}/pushNotificationConfigs/{id}`).
//!
//! The official 0.3 clients read answers strictly (an unknown field is an error to
//! `ParseDict`), so these types write nothing else; they read leniently, as ProtoJSON does
//! (snake_case names too, unknown fields ignored).

use serde::{Deserialize, Serialize};

use super::wire::PushNotificationConfig;
use crate::protocol::serde_util::de_opt_string;
use crate::protocol::{Metadata, Timestamp};

/// A task's state, by its 0.3 proto name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    /// Not set.
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    /// Submitted.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Working.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Completed.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Failed.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Canceled (spelt with two Ls in 0.3's proto).
    #[serde(rename = "TASK_STATE_CANCELLED")]
    Cancelled,
    /// Input required.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Rejected.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Auth required.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

/// Who sent a message, by its proto name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Role {
    /// Not set.
    #[default]
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// A part: exactly one of `text`, `file` and `data` (checked when translated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FilePart>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataPart>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A file: exactly one of its URI and its bytes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePart {
    /// Where the content is.
    #[serde(
        alias = "file_with_uri",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub file_with_uri: Option<String>,
    /// The content, base64.
    #[serde(
        alias = "file_with_bytes",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub file_with_bytes: Option<String>,
    /// Its media type.
    #[serde(
        alias = "mime_type",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    /// Its name.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
}

/// Structured data: a JSON object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DataPart {
    /// The object.
    #[serde(default)]
    pub data: Metadata,
}

/// A message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The sender's id for it.
    #[serde(alias = "message_id", default)]
    pub message_id: String,
    /// The conversation.
    #[serde(
        alias = "context_id",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_id: Option<String>,
    /// The task.
    #[serde(
        alias = "task_id",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_id: Option<String>,
    /// Who sent it.
    #[serde(default)]
    pub role: Role,
    /// Its parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Part>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extensions it uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// A task's status (its message is the proto's `update`, written `message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message about it.
    #[serde(alias = "update", default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it was entered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

/// An artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id.
    #[serde(alias = "artifact_id", default)]
    pub artifact_id: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extensions it uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its conversation.
    #[serde(alias = "context_id", default)]
    pub context_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Its messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A change of status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Whether the stream ends with it.
    #[serde(rename = "final", default, skip_serializing_if = "std::ops::Not::not")]
    pub is_final: bool,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new artifact or a piece of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact or the piece.
    pub artifact: Artifact,
    /// Whether it adds to the artifact of that id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub append: bool,
    /// Whether it is the artifact's last piece.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_chunk: bool,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A stream item (`StreamResponse`) or a `message:send` answer (`SendMessageResponse`, which
/// has only the first two members).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task.
    Task(Task),
    /// A message (the proto's `msg`).
    #[serde(alias = "msg")]
    Message(Message),
    /// A status update.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// How a `message:send` is answered.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Output media types the client accepts.
    #[serde(alias = "accepted_output_modes", default)]
    pub accepted_output_modes: Vec<String>,
    /// A webhook for the task.
    #[serde(alias = "push_notification", default)]
    pub push_notification: Option<PushNotificationConfig>,
    /// How many recent messages of the history to return.
    #[serde(alias = "history_length", default)]
    pub history_length: Option<i32>,
    /// Wait for the task to finish or pause; absent means `false` (ProtoJSON's default).
    #[serde(default)]
    pub blocking: Option<bool>,
}

/// `message:send`'s and `message:stream`'s body (the proto's `request` is written `message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessageRequest {
    /// The message.
    #[serde(alias = "request")]
    pub message: Message,
    /// How to answer.
    #[serde(default)]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Metadata>,
}

/// A task's webhook, named `tasks/{task}/pushNotificationConfigs/{config}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Its resource name.
    #[serde(default)]
    pub name: String,
    /// The webhook.
    #[serde(alias = "push_notification_config", default)]
    pub push_notification_config: Option<PushNotificationConfig>,
}

/// A create request's body: the config (as the JS SDK sends it), or the proto's
/// `CreateTaskPushNotificationConfigRequest` around it (`{parent, configId, config}`, as the
/// Python SDK sends it).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatePushConfigBody {
    /// The config, when wrapped.
    #[serde(default)]
    pub config: Option<TaskPushNotificationConfig>,
    /// Its id, when wrapped and the config names none.
    #[serde(alias = "config_id", default, deserialize_with = "de_opt_string")]
    pub config_id: Option<String>,
    /// The config's name, when not wrapped.
    #[serde(default)]
    pub name: String,
    /// The webhook, when not wrapped.
    #[serde(alias = "push_notification_config", default)]
    pub push_notification_config: Option<PushNotificationConfig>,
}

/// The list of a task's webhooks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigResponse {
    /// The configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Where the next page starts (never: all are listed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub next_page_token: String,
}
