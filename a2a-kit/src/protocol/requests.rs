//! Request and response bodies of the A2A operations (JSON-RPC `params`/`result`, REST bodies).

use serde::{Deserialize, Serialize};

use super::serde_util::{
    de_i32, de_opt_enum_nonzero, de_opt_i32, de_opt_i32_nonzero, de_opt_string, is_false,
};
use super::{Message, Metadata, Task, TaskPushNotificationConfig, TaskState, Timestamp};

/// How the client wants a SendMessage handled.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client can handle in response parts.
    #[serde(
        alias = "accepted_output_modes",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// Webhook to register for the task this message creates.
    #[serde(
        alias = "task_push_notification_config",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// Most recent history messages to return; `Some(0)` means none, `None` no limit.
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "de_opt_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return as soon as the task exists instead of waiting for a terminal or interrupted state.
    #[serde(
        alias = "return_immediately",
        default,
        skip_serializing_if = "is_false"
    )]
    pub return_immediately: bool,
}

/// Body of SendMessage and SendStreamingMessage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The message to send; required, so a missing `message` is an error.
    pub message: Message,
    /// Delivery options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Body of GetTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task to fetch.
    #[serde(default)]
    pub id: String,
    /// Most recent history messages to return; `Some(0)` means none, `None` no limit.
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "de_opt_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
}

/// Body (or REST query) of ListTasks; every field is a filter or paging option.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// Only tasks in this context.
    #[serde(
        alias = "context_id",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_id: Option<String>,
    /// Only tasks in this state (`TASK_STATE_UNSPECIFIED` on input means no filter).
    #[serde(
        default,
        deserialize_with = "de_opt_enum_nonzero",
        skip_serializing_if = "Option::is_none"
    )]
    pub status: Option<TaskState>,
    /// Page size, 1 to 100; the server uses 50 when unset.
    #[serde(
        alias = "page_size",
        default,
        deserialize_with = "de_opt_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_size: Option<i32>,
    /// Cursor from a previous response's `nextPageToken`.
    #[serde(
        alias = "page_token",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_token: Option<String>,
    /// Most recent history messages to include per task.
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "de_opt_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this instant.
    #[serde(
        alias = "status_timestamp_after",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts in the returned tasks (omitted when unset or false).
    #[serde(
        alias = "include_artifacts",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
}

/// Result of ListTasks. All four fields are always written, even `""` and `0`,
/// because the spec makes them required.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page of tasks, newest status first.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// Cursor for the next page; `""` on the last page.
    #[serde(alias = "next_page_token", default)]
    pub next_page_token: String,
    /// The page size actually used.
    #[serde(alias = "page_size", default, deserialize_with = "de_i32")]
    pub page_size: i32,
    /// Number of matching tasks before pagination.
    #[serde(alias = "total_size", default, deserialize_with = "de_i32")]
    pub total_size: i32,
}

/// Body of CancelTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task to cancel.
    #[serde(default)]
    pub id: String,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Body of SubscribeToTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task to follow.
    #[serde(default)]
    pub id: String,
}

/// Body of GetTaskPushNotificationConfig.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task that owns the config.
    #[serde(alias = "task_id", default)]
    pub task_id: String,
    /// The config to fetch.
    #[serde(default)]
    pub id: String,
}

/// Body of DeleteTaskPushNotificationConfig (which returns `{}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task that owns the config.
    #[serde(alias = "task_id", default)]
    pub task_id: String,
    /// The config to delete.
    #[serde(default)]
    pub id: String,
}

/// Body of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task whose configs to list.
    #[serde(alias = "task_id", default)]
    pub task_id: String,
    /// Maximum configs to return; `0` on input means unset (implicit-presence int32).
    #[serde(
        alias = "page_size",
        default,
        deserialize_with = "de_opt_i32_nonzero",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_size: Option<i32>,
    /// Cursor from a previous response's `nextPageToken`.
    #[serde(
        alias = "page_token",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_token: Option<String>,
}

/// Result of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// This page of configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor for the next page; absent on the last page.
    #[serde(
        alias = "next_page_token",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
}

/// Body of GetExtendedAgentCard (only routing; the caller's credentials do the rest).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
}
