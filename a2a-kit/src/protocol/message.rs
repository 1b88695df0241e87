//! `Message` and `Role`: one turn of communication between client and agent.

use serde::{Deserialize, Serialize};

use super::serde_util::{de_opt_string, proto_enum};
use super::{Metadata, Part};

proto_enum! {
    /// Who sent a message; servers use it to tell client input from agent output.
    pub enum Role {
        /// Not set; never meaningful on a valid message.
        #[default]
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// Sent by the client to the agent.
        User = 1 => "ROLE_USER",
        /// Sent by the agent to the client.
        Agent = 2 => "ROLE_AGENT",
    }
}

/// One unit of communication: a client request turn or an agent reply/status note.
///
/// Results belong in artifacts; messages carry instructions, questions and
/// progress. A server-sent message carries `context_id` (and `task_id` once a
/// task exists).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Created by the sender so both sides can refer to this exact message.
    #[serde(alias = "message_id", default)]
    pub message_id: String,
    /// Groups related tasks and messages into one conversation.
    #[serde(
        alias = "context_id",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_id: Option<String>,
    /// Ties the message to an existing task (continuing it).
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
    /// The content; required on the wire, so a missing `parts` is an error.
    pub parts: Vec<Part>,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions that contributed to this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Other tasks the agent should consider as context.
    #[serde(
        alias = "reference_task_ids",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with a fresh UUID v4 id and no context or task.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self {
            message_id: crate::protocol::new_uuid(),
            role,
            parts,
            ..Self::default()
        }
    }

    /// A client-side message, the usual way to start or continue a task.
    pub fn user(parts: Vec<Part>) -> Self {
        Self::new(Role::User, parts)
    }

    /// An agent-side message, for replies and status notes.
    pub fn agent(parts: Vec<Part>) -> Self {
        Self::new(Role::Agent, parts)
    }

    /// A client message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![Part::text(text)])
    }

    /// An agent message holding one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::agent(vec![Part::text(text)])
    }

    /// Places the message in a conversation.
    #[must_use]
    pub fn with_context_id(mut self, context_id: impl Into<String>) -> Self {
        self.context_id = Some(context_id.into());
        self
    }

    /// Attaches the message to a task.
    #[must_use]
    pub fn with_task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// Attaches extension metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// All text parts joined without separator, for agents that only read text.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}
