//! Push-notification configuration: where and how an agent posts task updates.

use serde::{Deserialize, Serialize};

use super::ProtocolVersion;
use super::serde_util::de_opt_string;

/// Credentials the agent sends to the webhook (`Authorization: <scheme> <credentials>`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// HTTP auth scheme from the IANA registry, e.g. `Bearer` (case-insensitive).
    #[serde(default)]
    pub scheme: String,
    /// The credential value for that scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub credentials: Option<String>,
}

/// A webhook registered for a task. Also the request and response body of the
/// push-config CRUD methods, and embedded (without `task_id`) in SendMessage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Routing value copied from the chosen `AgentInterface`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// Config id; assigned by the server on create when absent.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    /// The task to notify about; empty when embedded in SendMessage.
    #[serde(
        alias = "task_id",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_id: Option<String>,
    /// The webhook URL.
    #[serde(default)]
    pub url: String,
    /// Opaque value the receiver can use to validate notifications.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
    /// The protocol version the webhook's bodies are written in: that of the request that
    /// registered it, set by the agent (an A2A 0.3 client's webhook gets 0.3 bodies). Not
    /// part of the A2A wire: stores keep it under this crate's own key, the operations never
    /// answer with it, and what a client sends there is replaced.
    #[serde(
        rename = "a2aKitProtocolVersion",
        default,
        skip_serializing_if = "ProtocolVersion::is_v1"
    )]
    pub protocol_version: ProtocolVersion,
}
