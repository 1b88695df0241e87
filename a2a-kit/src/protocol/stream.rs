//! The `oneof` wrappers returned by SendMessage and carried by streams and push notifications.

use super::serde_util::proto_oneof;
use super::{Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent};

proto_oneof! {
    /// One item of a stream (SSE event, gRPC stream item, push-notification body).
    ///
    /// On the wire: `{"task":..}`, `{"message":..}`, `{"statusUpdate":..}` or `{"artifactUpdate":..}`.
    pub enum StreamResponse {
        /// A full task snapshot (usually first, optionally last).
        Task(Task) = "task",
        /// A direct message reply (the only item when no task is created).
        Message(Message) = "message",
        /// A status change.
        StatusUpdate(TaskStatusUpdateEvent) = "statusUpdate" | "status_update",
        /// A new artifact or artifact chunk.
        ArtifactUpdate(TaskArtifactUpdateEvent) = "artifactUpdate" | "artifact_update",
    }
}

impl StreamResponse {
    /// The task this item is about, for routing events to subscribers.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Self::Task(task) => Some(&task.id),
            Self::Message(message) => message.task_id.as_deref(),
            Self::StatusUpdate(event) => Some(&event.task_id),
            Self::ArtifactUpdate(event) => Some(&event.task_id),
        }
    }

    /// The context this item belongs to, if it says.
    pub fn context_id(&self) -> Option<&str> {
        let id = match self {
            Self::Task(task) => task.context_id.as_str(),
            Self::Message(message) => message.context_id.as_deref()?,
            Self::StatusUpdate(event) => event.context_id.as_str(),
            Self::ArtifactUpdate(event) => event.context_id.as_str(),
        };
        Some(id).filter(|id| !id.is_empty())
    }

    /// The task state this item reports, so a reader can tell when to stop.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Task(task) => Some(task.status.state),
            Self::StatusUpdate(event) => Some(event.status.state),
            Self::Message(_) | Self::ArtifactUpdate(_) => None,
        }
    }
}

proto_oneof! {
    /// The result of a blocking SendMessage: a task, or a direct message reply.
    pub enum SendMessageResponse {
        /// The task created or updated by the message.
        Task(Task) = "task",
        /// A direct reply without a task.
        Message(Message) = "message",
    }
}

impl From<SendMessageResponse> for StreamResponse {
    /// A SendMessage result is also a valid first (and last) stream item.
    fn from(response: SendMessageResponse) -> Self {
        match response {
            SendMessageResponse::Task(task) => Self::Task(task),
            SendMessageResponse::Message(message) => Self::Message(message),
        }
    }
}
