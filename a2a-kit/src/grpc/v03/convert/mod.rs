//! Between the v0.3 gRPC messages ([`pb`]) and the kit's 1.0 types: the one place
//! the two meet, as [`crate::grpc::convert`] is for 1.0's messages.
//!
//! Into the kit ([`FromV03`]) a message is checked as 1.0's are: a required field missing or
//! empty, an enum value v0.3 does not define, a `oneof` left unset, a resource name that is
//! not one is `InvalidParams` naming the field by its v0.3 ProtoJSON path
//! (`message.content[0].file`). Out of the kit ([`ToV03`]) nothing can fail. The rules of
//! 1.0's conversion hold here too (an empty string is an absent one, numbers in `Struct`s,
//! timestamps); where the versions disagree:
//! - Tasks and push configs are named by resource names: `tasks/{id}` and
//!   `tasks/{id}/pushNotificationConfigs/{config}`, exactly (an empty id or a further segment
//!   is refused).
//! - `history_length` 0 is unset (full history): proto3 cannot tell it from absent, and v0.3's
//!   proto says so. A 1.0 `historyLength` of 0 therefore goes out as unset.
//! - `SendMessageConfiguration.blocking`: a request without a configuration is blocking (1.0's
//!   default, and the official Go SDK's reading); with one, its `blocking` decides (false, the
//!   proto3 default, returns at once, as the proto says). The official Python client always
//!   sends a configuration, with `blocking` true unless asked to poll.
//! - A file's bytes (`file_with_bytes`) carry the base64 *text* of the content, as the official
//!   v0.3 SDKs for Python and Go write and read them: decoded on the way in (standard or
//!   URL-safe, padded or not; anything else is refused naming the field), encoded on the way
//!   out. (The JS SDK's v0.3 layer puts the raw bytes there, as the proto's type says: the SDKs
//!   cannot all be served; its bytes are refused unless they happen to be base64 text.)
//! - v0.3's proto has no media type or file name on text and data parts, no file name on file
//!   parts, no part metadata and no `reference_task_ids`: they are left out. A data part whose
//!   value is not an object (v0.3 requires a `Struct`) goes out as `{"value": ...}`; one
//!   without `data` reads as `{}`.
//! - Push authentication lists schemes in v0.3, 1.0 takes one: the first is kept (an empty
//!   list is refused) and it goes out as a list of one.
//! - A status update's `final`: whether the stream ends with it. [`ToV03`] says so of the
//!   states that end a stream by default (terminal, input-required, auth-required); the
//!   binding says it as its streams end ([`stream_response_to_v03`]). Read back, it is dropped.
//! - CreateTaskPushNotificationConfig's config id is `config_id`, else the config's own `id`
//!   (both given and different is refused), else the agent makes one; `config.name` is not
//!   read (the official Python client writes `…/pushNotificationConfigs/None` there).
//! - The card goes out in v0.3's shape only ([`card_to_v03`](super::card_to_v03), [`ToV03`]
//!   for [`AgentCard`](crate::protocol::AgentCard)): `protocol_version` `0.3.0`; `url`,
//!   `preferred_transport` and `additional_interfaces` from the card's interfaces whose
//!   binding serves v0.3 too (all of them for [`ToV03`]), as
//!   [`hybrid_card`](crate::v03::hybrid_card) offers them; `supports_authenticated_extended_card`
//!   from `capabilities.extendedAgentCard`; `security` from `securityRequirements`. An
//!   interface's tenant, a PKCE flag, a Device Code flow and the icon URL have no place in it.

use base64::Engine as _;
use serde_json::Value;

use super::pb;
use crate::error::A2aError;
use crate::grpc::convert::ToProto;
use crate::grpc::convert::{
    FromProtoAt, Path, invalid, metadata, metadata_to_proto, non_empty, object_from_proto,
    object_to_proto, oneof_unset, required, unknown_enum,
};
use crate::protocol::part::decode_base64;
use crate::protocol::{
    Artifact, AuthenticationInfo, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, Message, Part,
    PartContent, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

pub use requests::{create_push_config_from_v03, renamed_fields};

/// A v0.3 message into the kit's type.
pub trait FromV03: Sized {
    /// The generated v0.3 message.
    type Proto;
    /// `proto` as the kit's type; a field that breaks v0.3 is `InvalidParams` naming it.
    fn from_v03(proto: Self::Proto) -> Result<Self, A2aError>;
}

/// The kit's type as its v0.3 message.
pub trait ToV03 {
    /// The generated v0.3 message.
    type Proto;
    /// `self` as the v0.3 message (moved: no string is copied).
    fn to_v03(self) -> Self::Proto;
}

/// [`FromV03`] at a place in a larger message, so an error can name the field from the
/// request's root. Its message is the one [`ToV03`] makes.
trait FromV03At: ToV03 + Sized {
    fn from_v03_at(proto: <Self as ToV03>::Proto, at: &Path<'_>) -> Result<Self, A2aError>;
}

/// Implements [`FromV03`] as [`FromV03At`] at the root.
macro_rules! from_v03_at_root {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl FromV03 for $ty {
                type Proto = <$ty as ToV03>::Proto;
                fn from_v03(proto: Self::Proto) -> Result<Self, A2aError> {
                    <$ty as FromV03At>::from_v03_at(proto, &Path::Root)
                }
            }
        )+
    };
}

fn required_message<T: FromV03At>(
    proto: Option<<T as ToV03>::Proto>,
    at: &Path<'_>,
) -> Result<T, A2aError> {
    match proto {
        Some(proto) => T::from_v03_at(proto, at),
        None => Err(invalid(at, "is required")),
    }
}

fn optional<T: FromV03At>(
    proto: Option<<T as ToV03>::Proto>,
    at: &Path<'_>,
) -> Result<Option<T>, A2aError> {
    proto.map(|proto| T::from_v03_at(proto, at)).transpose()
}

fn repeated<T: FromV03At>(
    protos: Vec<<T as ToV03>::Proto>,
    at: &Path<'_>,
) -> Result<Vec<T>, A2aError> {
    let mut out = Vec::with_capacity(protos.len());
    for (i, proto) in protos.into_iter().enumerate() {
        out.push(T::from_v03_at(proto, &at.index(i))?);
    }
    Ok(out)
}

fn to_repeated<T: ToV03>(items: Vec<T>) -> Vec<<T as ToV03>::Proto> {
    items.into_iter().map(T::to_v03).collect()
}

/// An int32 with implicit presence: 0 is unset; anything else (a negative number too, for
/// the operation's check to name) is kept.
fn set_int(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

// ----- Resource names -----

const TASKS: &str = "tasks/";
const CONFIGS: &str = "/pushNotificationConfigs/";

/// `tasks/{id}` → the id.
fn task_name(name: String, at: &Path<'_>) -> Result<String, A2aError> {
    match name.strip_prefix(TASKS) {
        Some(id) if !id.is_empty() && !id.contains('/') => Ok(id.to_owned()),
        _ if name.is_empty() => Err(invalid(at, "is required")),
        _ => Err(invalid(
            at,
            format!("`{name}` is not a task's name: expected `tasks/{{id}}`"),
        )),
    }
}

/// `tasks/{id}/pushNotificationConfigs/{config}` → the task's id and the config's.
fn config_name(name: String, at: &Path<'_>) -> Result<(String, String), A2aError> {
    let ids = name
        .strip_prefix(TASKS)
        .and_then(|rest| rest.split_once(CONFIGS));
    match ids {
        Some((task, config))
            if !task.is_empty()
                && !config.is_empty()
                && !task.contains('/')
                && !config.contains('/') =>
        {
            Ok((task.to_owned(), config.to_owned()))
        }
        _ if name.is_empty() => Err(invalid(at, "is required")),
        _ => Err(invalid(
            at,
            format!(
                "`{name}` is not a push config's name: expected \
                 `tasks/{{id}}/pushNotificationConfigs/{{configId}}`"
            ),
        )),
    }
}

fn task_name_of(id: &str) -> String {
    format!("{TASKS}{id}")
}

fn config_name_of(task_id: &str, id: &str) -> String {
    format!("{TASKS}{task_id}{CONFIGS}{id}")
}

// ----- Enums -----

/// A v0.3 `TaskState` number (v0.3's numbering, `CANCELLED` spelled so), `UNSPECIFIED`
/// included.
fn task_state(n: i32, at: &Path<'_>) -> Result<TaskState, A2aError> {
    use pb::TaskState as V03;
    let state = V03::try_from(n).map_err(|_| unknown_enum(at, "TaskState", n))?;
    Ok(match state {
        V03::Unspecified => TaskState::Unspecified,
        V03::Submitted => TaskState::Submitted,
        V03::Working => TaskState::Working,
        V03::Completed => TaskState::Completed,
        V03::Failed => TaskState::Failed,
        V03::Cancelled => TaskState::Canceled,
        V03::InputRequired => TaskState::InputRequired,
        V03::Rejected => TaskState::Rejected,
        V03::AuthRequired => TaskState::AuthRequired,
    })
}

fn required_task_state(n: i32, at: &Path<'_>) -> Result<TaskState, A2aError> {
    match task_state(n, at)? {
        TaskState::Unspecified => Err(invalid(at, "is required")),
        state => Ok(state),
    }
}

fn task_state_to_v03(state: TaskState) -> i32 {
    use pb::TaskState as V03;
    let state = match state {
        TaskState::Unspecified => V03::Unspecified,
        TaskState::Submitted => V03::Submitted,
        TaskState::Working => V03::Working,
        TaskState::Completed => V03::Completed,
        TaskState::Failed => V03::Failed,
        TaskState::Canceled => V03::Cancelled,
        TaskState::InputRequired => V03::InputRequired,
        TaskState::Rejected => V03::Rejected,
        TaskState::AuthRequired => V03::AuthRequired,
    };
    state as i32
}

fn required_role(n: i32, at: &Path<'_>) -> Result<Role, A2aError> {
    match pb::Role::try_from(n) {
        Ok(pb::Role::User) => Ok(Role::User),
        Ok(pb::Role::Agent) => Ok(Role::Agent),
        Ok(pb::Role::Unspecified) => Err(invalid(at, "is required")),
        Err(_) => Err(unknown_enum(at, "Role", n)),
    }
}

fn role_to_v03(role: Role) -> i32 {
    let role = match role {
        Role::User => pb::Role::User,
        Role::Agent => pb::Role::Agent,
        Role::Unspecified => pb::Role::Unspecified,
    };
    role as i32
}

/// Whether a stream ends, by default, with a status update in `state`: terminal states,
/// input-required and auth-required (an agent may keep auth-required streams open: the
/// binding asks its service).
pub fn ends_stream_by_default(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

// ----- Parts, messages, artifacts -----

/// `file_with_bytes`: the content's base64 text.
fn base64_text(bytes: &[u8], at: &Path<'_>) -> Result<Vec<u8>, A2aError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| decode_base64(text.trim()).ok())
        .ok_or_else(|| {
            invalid(
                at,
                "is not base64 text (v0.3 carries a file's content as its base64 text, \
                 as the official v0.3 SDKs send it)",
            )
        })
}

impl FromV03At for Part {
    fn from_v03_at(p: pb::Part, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::part::Part as V03;
        match p.part {
            Some(V03::Text(text)) => Ok(Part::text(text)),
            Some(V03::File(file)) => {
                use pb::file_part::File;
                let at = at.field("file");
                let content = match file.file {
                    Some(File::FileWithUri(uri)) => {
                        PartContent::Url(required(uri, &at.field("fileWithUri"))?)
                    }
                    Some(File::FileWithBytes(bytes)) => {
                        PartContent::Raw(base64_text(&bytes, &at.field("fileWithBytes"))?)
                    }
                    None => {
                        return Err(oneof_unset(&at, "file", &["fileWithUri", "fileWithBytes"]));
                    }
                };
                Ok(Part {
                    content,
                    metadata: None,
                    filename: None,
                    media_type: non_empty(file.mime_type),
                })
            }
            Some(V03::Data(data)) => {
                let object = match data.data {
                    Some(s) => object_from_proto(s, &at.field("data").field("data"))?,
                    None => serde_json::Map::new(),
                };
                Ok(Part::data(Value::Object(object)))
            }
            None => Err(oneof_unset(at, "part", &["text", "file", "data"])),
        }
    }
}

impl ToV03 for Part {
    type Proto = pb::Part;
    fn to_v03(self) -> pb::Part {
        use pb::file_part::File;
        use pb::part::Part as V03;
        let file = |file: File, mime_type: Option<String>| {
            V03::File(pb::FilePart {
                file: Some(file),
                mime_type: mime_type.unwrap_or_default(),
            })
        };
        let part = match self.content {
            PartContent::Text(text) => V03::Text(text),
            PartContent::Raw(bytes) => file(
                File::FileWithBytes(
                    base64::engine::general_purpose::STANDARD
                        .encode(bytes)
                        .into_bytes(),
                ),
                self.media_type,
            ),
            PartContent::Url(url) => file(File::FileWithUri(url), self.media_type),
            PartContent::Data(value) => V03::Data(pb::DataPart {
                data: Some(object_to_proto(crate::v03::convert::data_object(value))),
            }),
        };
        pb::Part { part: Some(part) }
    }
}

impl FromV03At for Message {
    fn from_v03_at(p: pb::Message, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(Message {
            message_id: required(p.message_id, &at.field("messageId"))?,
            context_id: non_empty(p.context_id),
            task_id: non_empty(p.task_id),
            role: required_role(p.role, &at.field("role"))?,
            parts: repeated(p.content, &at.field("content"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
            extensions: p.extensions,
            reference_task_ids: Vec::new(),
        })
    }
}

impl ToV03 for Message {
    type Proto = pb::Message;
    fn to_v03(self) -> pb::Message {
        pb::Message {
            message_id: self.message_id,
            context_id: self.context_id.unwrap_or_default(),
            task_id: self.task_id.unwrap_or_default(),
            role: role_to_v03(self.role),
            content: to_repeated(self.parts),
            metadata: metadata_to_proto(self.metadata),
            extensions: self.extensions,
        }
    }
}

impl FromV03At for Artifact {
    fn from_v03_at(p: pb::Artifact, at: &Path<'_>) -> Result<Self, A2aError> {
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

impl ToV03 for Artifact {
    type Proto = pb::Artifact;
    fn to_v03(self) -> pb::Artifact {
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

// ----- Tasks and their events -----

impl FromV03At for TaskStatus {
    fn from_v03_at(p: pb::TaskStatus, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskStatus {
            state: required_task_state(p.state, &at.field("state"))?,
            // `update`, whose JSON name is `message`.
            message: optional(p.update, &at.field("message"))?,
            timestamp: p
                .timestamp
                .map(|t| Timestamp::from_proto_at(t, &at.field("timestamp")))
                .transpose()?,
        })
    }
}

impl ToV03 for TaskStatus {
    type Proto = pb::TaskStatus;
    fn to_v03(self) -> pb::TaskStatus {
        pb::TaskStatus {
            state: task_state_to_v03(self.state),
            update: self.message.map(ToV03::to_v03),
            timestamp: self.timestamp.map(ToProto::to_proto),
        }
    }
}

impl FromV03At for Task {
    fn from_v03_at(p: pb::Task, at: &Path<'_>) -> Result<Self, A2aError> {
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

impl ToV03 for Task {
    type Proto = pb::Task;
    fn to_v03(self) -> pb::Task {
        pb::Task {
            id: self.id,
            context_id: self.context_id,
            status: Some(self.status.to_v03()),
            artifacts: to_repeated(self.artifacts),
            history: to_repeated(self.history),
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromV03At for TaskStatusUpdateEvent {
    fn from_v03_at(p: pb::TaskStatusUpdateEvent, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskStatusUpdateEvent {
            task_id: required(p.task_id, &at.field("taskId"))?,
            context_id: required(p.context_id, &at.field("contextId"))?,
            status: required_message(p.status, &at.field("status"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

/// A status update with its `final` as given.
fn status_update_to_v03(e: TaskStatusUpdateEvent, is_final: bool) -> pb::TaskStatusUpdateEvent {
    pb::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: Some(e.status.to_v03()),
        r#final: is_final,
        metadata: metadata_to_proto(e.metadata),
    }
}

impl ToV03 for TaskStatusUpdateEvent {
    type Proto = pb::TaskStatusUpdateEvent;
    /// `final` as the state ends a stream by default ([`ends_stream_by_default`]).
    fn to_v03(self) -> pb::TaskStatusUpdateEvent {
        let is_final = ends_stream_by_default(self.status.state);
        status_update_to_v03(self, is_final)
    }
}

impl FromV03At for TaskArtifactUpdateEvent {
    fn from_v03_at(p: pb::TaskArtifactUpdateEvent, at: &Path<'_>) -> Result<Self, A2aError> {
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

impl ToV03 for TaskArtifactUpdateEvent {
    type Proto = pb::TaskArtifactUpdateEvent;
    fn to_v03(self) -> pb::TaskArtifactUpdateEvent {
        pb::TaskArtifactUpdateEvent {
            task_id: self.task_id,
            context_id: self.context_id,
            artifact: Some(self.artifact.to_v03()),
            append: self.append,
            last_chunk: self.last_chunk,
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromV03At for StreamResponse {
    fn from_v03_at(p: pb::StreamResponse, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::stream_response::Payload;
        Ok(match p.payload {
            Some(Payload::Task(task)) => {
                StreamResponse::Task(Task::from_v03_at(task, &at.field("task"))?)
            }
            Some(Payload::Msg(message)) => {
                StreamResponse::Message(Message::from_v03_at(message, &at.field("message"))?)
            }
            Some(Payload::StatusUpdate(event)) => StreamResponse::StatusUpdate(
                TaskStatusUpdateEvent::from_v03_at(event, &at.field("statusUpdate"))?,
            ),
            Some(Payload::ArtifactUpdate(event)) => StreamResponse::ArtifactUpdate(
                TaskArtifactUpdateEvent::from_v03_at(event, &at.field("artifactUpdate"))?,
            ),
            None => {
                return Err(oneof_unset(
                    at,
                    "payload",
                    &["task", "message", "statusUpdate", "artifactUpdate"],
                ));
            }
        })
    }
}

/// A stream item as v0.3's; `is_final` is whether the stream ends with it (a status update's
/// `final`; the other items have none).
pub fn stream_response_to_v03(event: StreamResponse, is_final: bool) -> pb::StreamResponse {
    use pb::stream_response::Payload;
    let payload = match event {
        StreamResponse::Task(task) => Payload::Task(task.to_v03()),
        StreamResponse::Message(message) => Payload::Msg(message.to_v03()),
        StreamResponse::StatusUpdate(event) => {
            Payload::StatusUpdate(status_update_to_v03(event, is_final))
        }
        StreamResponse::ArtifactUpdate(event) => Payload::ArtifactUpdate(event.to_v03()),
    };
    pb::StreamResponse {
        payload: Some(payload),
    }
}

impl ToV03 for StreamResponse {
    type Proto = pb::StreamResponse;
    /// A status update's `final` as its state ends a stream by default
    /// ([`ends_stream_by_default`]).
    fn to_v03(self) -> pb::StreamResponse {
        let is_final = self.state().is_some_and(ends_stream_by_default)
            && matches!(self, StreamResponse::StatusUpdate(_));
        stream_response_to_v03(self, is_final)
    }
}

impl FromV03At for SendMessageResponse {
    fn from_v03_at(p: pb::SendMessageResponse, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::send_message_response::Payload;
        Ok(match p.payload {
            Some(Payload::Task(task)) => {
                SendMessageResponse::Task(Task::from_v03_at(task, &at.field("task"))?)
            }
            Some(Payload::Msg(message)) => {
                SendMessageResponse::Message(Message::from_v03_at(message, &at.field("message"))?)
            }
            None => return Err(oneof_unset(at, "payload", &["task", "message"])),
        })
    }
}

impl ToV03 for SendMessageResponse {
    type Proto = pb::SendMessageResponse;
    fn to_v03(self) -> pb::SendMessageResponse {
        use pb::send_message_response::Payload;
        let payload = match self {
            SendMessageResponse::Task(task) => Payload::Task(task.to_v03()),
            SendMessageResponse::Message(message) => Payload::Msg(message.to_v03()),
        };
        pb::SendMessageResponse {
            payload: Some(payload),
        }
    }
}

// After the macros above: textual scope.
mod requests;
