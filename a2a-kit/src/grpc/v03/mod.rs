//! A2A v0.3's gRPC wire: the messages and stubs of `a2a.v1.A2AService` (prost and tonic code
//! generated from `a2a-kit/proto/a2a_v03.proto`, committed), their translation to and from
//! the kit's 1.0 types ([`convert`]: the one place the two meet), and how an A2A error is
//! told to a v0.3 gRPC client ([`status_code`], [`error_type`]).
//!
//! The binding serves this service beside `lf.a2a.v1.A2AService` on the same listener: each
//! v0.3 call is translated into the 1.0 operation, answered by the same
//! [`AgentService`](crate::server::AgentService), and its answer translated back.
//!
//! ```
//! use a2a_kit::grpc::v03::{convert::FromV03, pb};
//! use a2a_kit::protocol::{GetTaskRequest, Role, SendMessageRequest};
//!
//! let send = SendMessageRequest::from_v03(pb::SendMessageRequest {
//!     request: Some(pb::Message {
//!         message_id: "m-1".into(),
//!         role: pb::Role::User as i32,
//!         content: vec![pb::Part { part: Some(pb::part::Part::Text("hi".into())) }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! })?;
//! assert_eq!(send.message.role, Role::User);
//! assert_eq!(send.message.parts[0].as_text(), Some("hi"));
//!
//! let get = GetTaskRequest::from_v03(pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 0 })?;
//! assert_eq!(get.id, "t-1");
//! assert_eq!(get.history_length, None, "0 is unset in v0.3's proto");
//!
//! let bad = GetTaskRequest::from_v03(pb::GetTaskRequest { name: "t-1".into(), history_length: 0 });
//! assert!(bad.unwrap_err().to_string().contains("`name`"));
//! # Ok::<(), a2a_kit::error::A2aError>(())
//! ```

use tonic::Code;

use crate::error::A2aError;

mod card;
pub mod convert;

pub use card::card_to_v03;
#[cfg(test)]
mod tests;

/// The prost messages and tonic stubs of package `a2a.v1`, generated from
/// `a2a-kit/proto/a2a_v03.proto` (wire-identical to the A2A v0.3.0 specification's proto).
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
pub mod pb {
    include!("../gen/a2a.v1.rs");
}

/// The full name of the A2A v0.3 gRPC service.
pub const SERVICE_NAME: &str = "a2a.v1.A2AService";

/// The gRPC status code a v0.3 client gets for `err`: the table of the official v0.3 SDKs'
/// gRPC servers (a2a-sdk 0.3.x for Python), which differs from 1.0's
/// ([`A2aError::grpc_status`]): TaskNotCancelable is `UNIMPLEMENTED` (1.0:
/// `FAILED_PRECONDITION`), MethodNotFound `NOT_FOUND` (1.0: `UNIMPLEMENTED`), JSON parse
/// errors `INTERNAL`. 1.0's errors that 0.3 lacks take the code of what 0.3 calls them:
/// an extension required or a version not supported is 0.3's InvalidRequest
/// (`INVALID_ARGUMENT`). The rest keep 1.0's code: the extended card not configured
/// `FAILED_PRECONDITION` (the v0.3 SDK has no code for it), the agent unavailable
/// `UNAVAILABLE`, a caller without the right `PERMISSION_DENIED`.
///
/// ```
/// use a2a_kit::error::A2aError;
/// use a2a_kit::grpc::v03::status_code;
/// assert_eq!(status_code(&A2aError::task_not_found("t")), tonic::Code::NotFound);
/// assert_eq!(status_code(&A2aError::PushNotificationNotSupported), tonic::Code::Unimplemented);
/// ```
pub fn status_code(err: &A2aError) -> Code {
    match err {
        A2aError::InvalidRequest(_)
        | A2aError::InvalidParams { .. }
        | A2aError::ExtensionSupportRequired { .. }
        | A2aError::VersionNotSupported { .. } => Code::InvalidArgument,
        A2aError::MethodNotFound(_) | A2aError::TaskNotFound { .. } => Code::NotFound,
        A2aError::JsonParse(_) | A2aError::Internal(_) | A2aError::InvalidAgentResponse(_) => {
            Code::Internal
        }
        A2aError::TaskNotCancelable { .. }
        | A2aError::PushNotificationNotSupported
        | A2aError::UnsupportedOperation(_)
        | A2aError::ContentTypeNotSupported(_) => Code::Unimplemented,
        A2aError::Unavailable(_) => Code::Unavailable,
        A2aError::PermissionDenied(_) => Code::PermissionDenied,
        A2aError::ExtendedAgentCardNotConfigured => Code::FailedPrecondition,
    }
}

/// The name v0.3 gives `err` (`TaskNotFoundError`...), which its SDKs' gRPC servers put
/// before the status message (`TaskNotFoundError: task t-1 was not found`) and some of its
/// clients read the error back from; `None` for what v0.3 has no error for (the agent
/// unavailable, a caller without the right).
pub fn error_type(err: &A2aError) -> Option<&'static str> {
    Some(match err {
        A2aError::JsonParse(_) => "JSONParseError",
        A2aError::InvalidRequest(_)
        | A2aError::ExtensionSupportRequired { .. }
        | A2aError::VersionNotSupported { .. } => "InvalidRequestError",
        A2aError::MethodNotFound(_) => "MethodNotFoundError",
        A2aError::InvalidParams { .. } => "InvalidParamsError",
        A2aError::Internal(_) => "InternalError",
        A2aError::TaskNotFound { .. } => "TaskNotFoundError",
        A2aError::TaskNotCancelable { .. } => "TaskNotCancelableError",
        A2aError::PushNotificationNotSupported => "PushNotificationNotSupportedError",
        A2aError::UnsupportedOperation(_) => "UnsupportedOperationError",
        A2aError::ContentTypeNotSupported(_) => "ContentTypeNotSupportedError",
        A2aError::InvalidAgentResponse(_) => "InvalidAgentResponseError",
        A2aError::ExtendedAgentCardNotConfigured => "AuthenticatedExtendedCardNotConfiguredError",
        A2aError::Unavailable(_) | A2aError::PermissionDenied(_) => return None,
    })
}

/// The status message a v0.3 client gets for `err`: its [`error_type`], then the error's own
/// text.
pub fn status_message(err: &A2aError) -> String {
    match error_type(err) {
        Some(name) => format!("{name}: {err}"),
        None => err.to_string(),
    }
}
