//! Messages, parts, tasks, artifacts, the update events and the two answer `oneof`s.

use super::{
    A2aError, FromProto, FromProtoAt, Path, ToProto, from_proto_at_root, metadata,
    metadata_to_proto, non_empty, oneof_unset, optional, repeated, required, required_message,
    required_role, required_task_state, to_repeated, value_from_proto, value_to_proto,
};
use crate::grpc::pb;
use crate::protocol::{
    Artifact, Message, Part, PartContent, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent,
};

impl FromProtoAt for Part {
    fn from_proto_at(p: pb::Part, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::part::Content;
        let content = match p.content {
            Some(Content::Text(text)) => PartContent::Text(text),
            Some(Content::Raw(bytes)) => PartContent::Raw(bytes.into()),
            Some(Content::Url(url)) => PartContent::Url(url),
            Some(Content::Data(value)) => {
                PartContent::Data(value_from_proto(value, &at.field("data"))?)
            }
            None => return Err(oneof_unset(at, "content", PartContent::MEMBERS)),
        };
        Ok(Part {
            content,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
            filename: non_empty(p.filename),
            media_type: non_empty(p.media_type),
        })
    }
}

impl ToProto for Part {
    type Proto = pb::Part;
    fn to_proto(self) -> pb::Part {
        use pb::part::Content;
        let content = match self.content {
            PartContent::Text(text) => Content::Text(text),
            PartContent::Raw(bytes) => Content::Raw(bytes.into()),
            PartContent::Url(url) => Content::Url(url),
            PartContent::Data(value) => Content::Data(value_to_proto(value)),
        };
        pb::Part {
            metadata: metadata_to_proto(self.metadata),
            filename: self.filename.unwrap_or_default(),
            media_type: self.media_type.unwrap_or_default(),
            content: Some(content),
        }
    }
}

impl FromProtoAt for Message {
    fn from_proto_at(p: pb::Message, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(Message {
            message_id: required(p.message_id, &at.field("messageId"))?,
            context_id: non_empty(p.context_id),
            task_id: non_empty(p.task_id),
            role: required_role(p.role, &at.field("role"))?,
            parts: repeated(p.parts, &at.field("parts"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
            extensions: p.extensions,
            reference_task_ids: p.reference_task_ids,
        })
    }
}

impl ToProto for Message {
    type Proto = pb::Message;
    fn to_proto(self) -> pb::Message {
        pb::Message {
            message_id: self.message_id,
            context_id: self.context_id.unwrap_or_default(),
            task_id: self.task_id.unwrap_or_default(),
            role: self.role.as_i32(),
            parts: to_repeated(self.parts),
            metadata: metadata_to_proto(self.metadata),
            extensions: self.extensions,
            reference_task_ids: self.reference_task_ids,
        }
    }
}

impl FromProtoAt for Artifact {
    fn from_proto_at(p: pb::Artifact, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(Artifact {
            artifact_id: required(p.artifact_id, &at.field("artifactId"))?,
            name: non_empty(p.name),
            description: non_empty(p.description),
            parts: repeated(p.parts, &at.field("parts"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
            extensions: p.extensions,
        })
    }
}

impl ToProto for Artifact {
    type Proto = pb::Artifact;
    fn to_proto(self) -> pb::Artifact {
        pb::Artifact {
            artifact_id: self.artifact_id,
            name: self.name.unwrap_or_default(),
            description: self.description.unwrap_or_default(),
            parts: to_repeated(self.parts),
            metadata: metadata_to_proto(self.metadata),
            extensions: self.extensions,
        }
    }
}

impl FromProtoAt for TaskStatus {
    fn from_proto_at(p: pb::TaskStatus, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskStatus {
            state: required_task_state(p.state, &at.field("state"))?,
            message: optional(p.message, &at.field("message"))?,
            timestamp: optional(p.timestamp, &at.field("timestamp"))?,
        })
    }
}

impl ToProto for TaskStatus {
    type Proto = pb::TaskStatus;
    fn to_proto(self) -> pb::TaskStatus {
        pb::TaskStatus {
            state: self.state.as_i32(),
            message: self.message.map(Message::to_proto),
            timestamp: self.timestamp.map(ToProto::to_proto),
        }
    }
}

impl FromProtoAt for Task {
    fn from_proto_at(p: pb::Task, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(Task {
            id: required(p.id, &at.field("id"))?,
            context_id: p.context_id,
            status: required_message(p.status, &at.field("status"))?,
            artifacts: repeated(p.artifacts, &at.field("artifacts"))?,
            history: repeated(p.history, &at.field("history"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToProto for Task {
    type Proto = pb::Task;
    fn to_proto(self) -> pb::Task {
        pb::Task {
            id: self.id,
            context_id: self.context_id,
            status: Some(self.status.to_proto()),
            artifacts: to_repeated(self.artifacts),
            history: to_repeated(self.history),
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromProtoAt for TaskStatusUpdateEvent {
    fn from_proto_at(p: pb::TaskStatusUpdateEvent, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskStatusUpdateEvent {
            task_id: required(p.task_id, &at.field("taskId"))?,
            context_id: required(p.context_id, &at.field("contextId"))?,
            status: required_message(p.status, &at.field("status"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToProto for TaskStatusUpdateEvent {
    type Proto = pb::TaskStatusUpdateEvent;
    fn to_proto(self) -> pb::TaskStatusUpdateEvent {
        pb::TaskStatusUpdateEvent {
            task_id: self.task_id,
            context_id: self.context_id,
            status: Some(self.status.to_proto()),
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromProtoAt for TaskArtifactUpdateEvent {
    fn from_proto_at(p: pb::TaskArtifactUpdateEvent, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskArtifactUpdateEvent {
            task_id: required(p.task_id, &at.field("taskId"))?,
            context_id: required(p.context_id, &at.field("contextId"))?,
            artifact: required_message(p.artifact, &at.field("artifact"))?,
            append: p.append,
            last_chunk: p.last_chunk,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToProto for TaskArtifactUpdateEvent {
    type Proto = pb::TaskArtifactUpdateEvent;
    fn to_proto(self) -> pb::TaskArtifactUpdateEvent {
        pb::TaskArtifactUpdateEvent {
            task_id: self.task_id,
            context_id: self.context_id,
            artifact: Some(self.artifact.to_proto()),
            append: self.append,
            last_chunk: self.last_chunk,
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromProtoAt for StreamResponse {
    fn from_proto_at(p: pb::StreamResponse, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::stream_response::Payload;
        Ok(match p.payload {
            Some(Payload::Task(task)) => {
                StreamResponse::Task(Task::from_proto_at(task, &at.field("task"))?)
            }
            Some(Payload::Message(message)) => {
                StreamResponse::Message(Message::from_proto_at(message, &at.field("message"))?)
            }
            Some(Payload::StatusUpdate(event)) => StreamResponse::StatusUpdate(
                TaskStatusUpdateEvent::from_proto_at(event, &at.field("statusUpdate"))?,
            ),
            Some(Payload::ArtifactUpdate(event)) => StreamResponse::ArtifactUpdate(
                TaskArtifactUpdateEvent::from_proto_at(event, &at.field("artifactUpdate"))?,
            ),
            None => return Err(oneof_unset(at, "payload", StreamResponse::MEMBERS)),
        })
    }
}

impl ToProto for StreamResponse {
    type Proto = pb::StreamResponse;
    fn to_proto(self) -> pb::StreamResponse {
        use pb::stream_response::Payload;
        let payload = match self {
            StreamResponse::Task(task) => Payload::Task(task.to_proto()),
            StreamResponse::Message(message) => Payload::Message(message.to_proto()),
            StreamResponse::StatusUpdate(event) => Payload::StatusUpdate(event.to_proto()),
            StreamResponse::ArtifactUpdate(event) => Payload::ArtifactUpdate(event.to_proto()),
        };
        pb::StreamResponse {
            payload: Some(payload),
        }
    }
}

impl FromProtoAt for SendMessageResponse {
    fn from_proto_at(p: pb::SendMessageResponse, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::send_message_response::Payload;
        Ok(match p.payload {
            Some(Payload::Task(task)) => {
                SendMessageResponse::Task(Task::from_proto_at(task, &at.field("task"))?)
            }
            Some(Payload::Message(message)) => {
                SendMessageResponse::Message(Message::from_proto_at(message, &at.field("message"))?)
            }
            None => return Err(oneof_unset(at, "payload", SendMessageResponse::MEMBERS)),
        })
    }
}

impl ToProto for SendMessageResponse {
    type Proto = pb::SendMessageResponse;
    fn to_proto(self) -> pb::SendMessageResponse {
        use pb::send_message_response::Payload;
        let payload = match self {
            SendMessageResponse::Task(task) => Payload::Task(task.to_proto()),
            SendMessageResponse::Message(message) => Payload::Message(message.to_proto()),
        };
        pb::SendMessageResponse {
            payload: Some(payload),
        }
    }
}

from_proto_at_root!(
    Part,
    Message,
    Artifact,
    TaskStatus,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    StreamResponse,
    SendMessageResponse,
);
