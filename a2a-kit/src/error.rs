//! Errors: the protocol's error codes ([`A2aError`]) and what a skill can fail with ([`SkillError`]).
//!
//! One [`A2aError`] value renders to all three wire forms (JSON-RPC error object, HTTP+JSON
//! `google.rpc.Status` body, HTTP status), so the bindings can never disagree about an error.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::protocol::TaskState;

/// The `domain` of every `google.rpc.ErrorInfo` the kit emits.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// A single field problem, rendered as a `google.rpc.BadRequest` field violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldViolation {
    /// Path of the offending field, e.g. `message.parts[0]`.
    pub field: String,
    /// What is wrong with it.
    pub description: String,
}

/// An A2A protocol error: one variant per error the spec defines.
///
/// ```
/// use a2a_kit::error::A2aError;
/// let err = A2aError::task_not_found("t-1");
/// assert_eq!(err.code(), -32001);
/// assert_eq!(err.http_status(), 404);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum A2aError {
    /// -32700: the body is not JSON.
    #[error("{0}")]
    JsonParse(String),
    /// -32600: JSON, but not a valid JSON-RPC request.
    #[error("{0}")]
    InvalidRequest(String),
    /// -32601: unknown method (JSON-RPC) or route (HTTP+JSON).
    #[error("{0}")]
    MethodNotFound(String),
    /// -32602: parameters fail validation.
    #[error("{message}")]
    InvalidParams {
        /// Human-readable summary naming the field.
        message: String,
        /// Per-field details.
        violations: Vec<FieldViolation>,
    },
    /// -32603: a server-side failure. The message must not leak internals.
    #[error("{0}")]
    Internal(String),
    /// -32603 with HTTP 503: the agent cannot serve the request right now (its task store is
    /// unreachable); the same request may succeed later (`Retry-After` on HTTP+JSON).
    #[error("{0}")]
    Unavailable(String),
    /// -32001
    #[error("task {task_id} was not found")]
    TaskNotFound {
        /// The id that was asked for.
        task_id: String,
    },
    /// -32002
    #[error("task {task_id} cannot be canceled: it is already {}", .state.as_str())]
    TaskNotCancelable {
        /// The task.
        task_id: String,
        /// Its (terminal) state.
        state: TaskState,
    },
    /// -32003
    #[error("push notifications are not supported by this agent")]
    PushNotificationNotSupported,
    /// -32004
    #[error("{0}")]
    UnsupportedOperation(String),
    /// -32005
    #[error("{0}")]
    ContentTypeNotSupported(String),
    /// -32006
    #[error("{0}")]
    InvalidAgentResponse(String),
    /// -32007
    #[error("this agent declares an extended agent card but none is configured")]
    ExtendedAgentCardNotConfigured,
    /// -32008
    #[error(
        "extension {uri} is required by this agent; activate it with the A2A-Extensions header"
    )]
    ExtensionSupportRequired {
        /// The required extension's URI.
        uri: String,
    },
    /// A known caller without the right to this (a skill's scopes): HTTP 403
    /// `PERMISSION_DENIED` in both bindings. The spec gives authorization failures no
    /// JSON-RPC code (they are HTTP's), so the JSON-RPC binding answers with the same HTTP
    /// 403 body as the HTTP+JSON one (see CONFORMANCE.md).
    #[error("{0}")]
    PermissionDenied(String),
    /// -32009
    #[error("{message}")]
    VersionNotSupported {
        /// The version the client asked for (`""` when it sent none).
        version: String,
        /// Explanation, naming the supported versions.
        message: String,
    },
}

impl A2aError {
    /// InvalidParams with one field violation; the message names the field.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        let field = field.into();
        let description = description.into();
        A2aError::InvalidParams {
            message: format!("invalid `{field}`: {description}"),
            violations: vec![FieldViolation { field, description }],
        }
    }

    /// InvalidParams with a message and no field detail.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        A2aError::InvalidParams {
            message: message.into(),
            violations: Vec::new(),
        }
    }

    /// InvalidParams for a serde failure at `path` (serde_path_to_error's rendering, `.` for
    /// the root) under `prefix`: names the field, including a missing one.
    pub fn from_serde(prefix: &str, path: &str, err: &serde_json::Error) -> Self {
        let mut text = err.to_string();
        if let Some(i) = text.find(" at line ") {
            text.truncate(i);
        }
        let mut field = match (prefix.is_empty(), path == ".") {
            (_, true) => prefix.to_string(),
            (true, false) => path.to_string(),
            (false, false) => format!("{prefix}.{path}"),
        };
        if let Some(name) = text
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            field = if field.is_empty() {
                name.to_string()
            } else {
                format!("{field}.{name}")
            };
            text = "is required".to_string();
        }
        if field.is_empty() {
            field = "body".into();
        }
        A2aError::invalid_field(field, text)
    }

    /// TaskNotFoundError for `task_id`.
    pub fn task_not_found(task_id: impl Into<String>) -> Self {
        A2aError::TaskNotFound {
            task_id: task_id.into(),
        }
    }

    /// UnsupportedOperationError with an explanation.
    pub fn unsupported(message: impl Into<String>) -> Self {
        A2aError::UnsupportedOperation(message.into())
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            A2aError::JsonParse(_) => -32700,
            // Never in a JSON-RPC envelope (HTTP 403 instead); the nearest code if one is made.
            A2aError::InvalidRequest(_) | A2aError::PermissionDenied(_) => -32600,
            A2aError::MethodNotFound(_) => -32601,
            A2aError::InvalidParams { .. } => -32602,
            A2aError::Internal(_) | A2aError::Unavailable(_) => -32603,
            A2aError::TaskNotFound { .. } => -32001,
            A2aError::TaskNotCancelable { .. } => -32002,
            A2aError::PushNotificationNotSupported => -32003,
            A2aError::UnsupportedOperation(_) => -32004,
            A2aError::ContentTypeNotSupported(_) => -32005,
            A2aError::InvalidAgentResponse(_) => -32006,
            A2aError::ExtendedAgentCardNotConfigured => -32007,
            A2aError::ExtensionSupportRequired { .. } => -32008,
            A2aError::VersionNotSupported { .. } => -32009,
        }
    }

    /// `ErrorInfo.reason`: the error name in UPPER_SNAKE_CASE without `Error`.
    pub fn reason(&self) -> &'static str {
        match self {
            A2aError::JsonParse(_) => "JSON_PARSE",
            A2aError::InvalidRequest(_) => "INVALID_REQUEST",
            A2aError::MethodNotFound(_) => "METHOD_NOT_FOUND",
            A2aError::InvalidParams { .. } => "INVALID_PARAMS",
            A2aError::Internal(_) => "INTERNAL",
            A2aError::Unavailable(_) => "UNAVAILABLE",
            A2aError::TaskNotFound { .. } => "TASK_NOT_FOUND",
            A2aError::TaskNotCancelable { .. } => "TASK_NOT_CANCELABLE",
            A2aError::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            A2aError::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            A2aError::ContentTypeNotSupported(_) => "CONTENT_TYPE_NOT_SUPPORTED",
            A2aError::InvalidAgentResponse(_) => "INVALID_AGENT_RESPONSE",
            A2aError::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            A2aError::ExtensionSupportRequired { .. } => "EXTENSION_SUPPORT_REQUIRED",
            A2aError::VersionNotSupported { .. } => "VERSION_NOT_SUPPORTED",
            A2aError::PermissionDenied(_) => "PERMISSION_DENIED",
        }
    }

    /// The HTTP status of the HTTP+JSON binding.
    ///
    /// The table of A2A v1.0.0 (and of the conformance suite, a2a-tck 1.0, and the official
    /// SDKs): TaskNotCancelable 409, ContentTypeNotSupported 415, InvalidAgentResponse 502.
    /// v1.0.1's table says 400, 400 and 500 for these three; a client that reads `error.status`
    /// or `ErrorInfo.reason` (as the spec asks) sees no difference. See CONFORMANCE.md.
    pub fn http_status(&self) -> u16 {
        match self {
            A2aError::TaskNotFound { .. } | A2aError::MethodNotFound(_) => 404,
            A2aError::TaskNotCancelable { .. } => 409,
            A2aError::PermissionDenied(_) => 403,
            A2aError::ContentTypeNotSupported(_) => 415,
            A2aError::InvalidAgentResponse(_) => 502,
            A2aError::Internal(_) => 500,
            A2aError::Unavailable(_) => 503,
            _ => 400,
        }
    }

    /// The gRPC status name: the gRPC binding's status and `error.status` in HTTP+JSON bodies.
    ///
    /// The table of A2A v1.0.0, as for [`http_status`](Self::http_status) and as the
    /// conformance suite (a2a-tck 1.0, `GRPC-ERR-002`) tests it: PushNotificationNotSupported,
    /// UnsupportedOperation and VersionNotSupported are `UNIMPLEMENTED`, where v1.0.1 says
    /// `FAILED_PRECONDITION`. `ErrorInfo.reason` tells them apart either way.
    pub fn grpc_status(&self) -> &'static str {
        match self {
            A2aError::JsonParse(_)
            | A2aError::InvalidRequest(_)
            | A2aError::InvalidParams { .. }
            | A2aError::ContentTypeNotSupported(_) => "INVALID_ARGUMENT",
            A2aError::MethodNotFound(_)
            | A2aError::PushNotificationNotSupported
            | A2aError::UnsupportedOperation(_)
            | A2aError::VersionNotSupported { .. } => "UNIMPLEMENTED",
            A2aError::Internal(_) | A2aError::InvalidAgentResponse(_) => "INTERNAL",
            A2aError::Unavailable(_) => "UNAVAILABLE",
            A2aError::TaskNotFound { .. } => "NOT_FOUND",
            A2aError::PermissionDenied(_) => "PERMISSION_DENIED",
            _ => "FAILED_PRECONDITION",
        }
    }

    /// `ErrorInfo.metadata`: the ids and values the error is about.
    pub(crate) fn metadata(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match self {
            A2aError::TaskNotFound { task_id } => {
                m.insert("taskId".into(), task_id.clone().into());
            }
            A2aError::TaskNotCancelable { task_id, state } => {
                m.insert("taskId".into(), task_id.clone().into());
                m.insert("state".into(), state.as_str().into());
            }
            A2aError::ExtensionSupportRequired { uri } => {
                m.insert("uri".into(), uri.clone().into());
            }
            A2aError::VersionNotSupported { version, .. } => {
                m.insert("requestedVersion".into(), version.clone().into());
                m.insert(
                    "supportedVersions".into(),
                    crate::protocol::PROTOCOL_VERSION.into(),
                );
            }
            _ => {}
        }
        m
    }

    /// The `google.protobuf.Any` detail objects: an `ErrorInfo` always, plus a `BadRequest`
    /// when there are field violations.
    pub fn details(&self) -> Vec<Value> {
        let mut details = vec![json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason(),
            "domain": ERROR_DOMAIN,
            "metadata": self.metadata(),
        })];
        if let A2aError::InvalidParams { violations, .. } = self
            && !violations.is_empty()
        {
            let fv: Vec<Value> = violations
                .iter()
                .map(|v| json!({"field": v.field, "description": v.description}))
                .collect();
            details.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": fv,
            }));
        }
        details
    }

    /// The JSON-RPC `error` member.
    pub fn to_jsonrpc_error(&self) -> Value {
        json!({"code": self.code(), "message": self.to_string(), "data": self.details()})
    }

    /// The HTTP+JSON error body: `{"error": {code, status, message, details}}`.
    pub fn to_rest_body(&self) -> Value {
        json!({"error": {
            "code": self.http_status(),
            "status": self.grpc_status(),
            "message": self.to_string(),
            "details": self.details(),
        }})
    }
}

/// Why a skill did not complete; turns into a FAILED, REJECTED or CANCELED task.
///
/// Any `std::error::Error` converts into it, so `?` works in skills; for plain strings use
/// [`SkillError::failed`].
/// It deliberately does not implement `std::error::Error` itself, like `anyhow::Error`,
/// so that blanket conversion can exist.
///
/// ```
/// use a2a_kit::error::SkillError;
/// fn parse(n: &str) -> Result<u32, SkillError> {
///     let n: u32 = n.parse()?; // ParseIntError -> SkillError::Failed
///     if n > 100 { return Err(SkillError::rejected("at most 100")); }
///     Ok(n)
/// }
/// assert!(parse("x").is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum SkillError {
    /// The task ends FAILED with this text in its status message.
    Failed(String),
    /// The task ends REJECTED: the agent declines the work.
    Rejected(String),
    /// The task was canceled; ends CANCELED (it already is, when the client canceled it).
    Canceled,
}

impl SkillError {
    /// A FAILED outcome with this reason.
    pub fn failed(reason: impl Into<String>) -> Self {
        SkillError::Failed(reason.into())
    }
    /// A REJECTED outcome with this reason.
    pub fn rejected(reason: impl Into<String>) -> Self {
        SkillError::Rejected(reason.into())
    }
    /// Wrap anything displayable (e.g. `anyhow::Error`) as a failure.
    pub fn from_display(err: impl fmt::Display) -> Self {
        SkillError::Failed(err.to_string())
    }
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::Failed(r) => write!(f, "{r}"),
            SkillError::Rejected(r) => write!(f, "rejected: {r}"),
            SkillError::Canceled => f.write_str("canceled"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for SkillError {
    fn from(e: E) -> Self {
        SkillError::Failed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_body_carries_error_info() {
        let body = A2aError::task_not_found("abc").to_rest_body();
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["metadata"]["taskId"], "abc");
    }

    #[test]
    fn invalid_field_adds_bad_request() {
        let e = A2aError::invalid_field("pageSize", "must be between 1 and 100");
        let v = e.to_jsonrpc_error();
        assert_eq!(v["code"], -32602);
        assert!(v["message"].as_str().unwrap().contains("pageSize"));
        assert_eq!(v["data"][1]["fieldViolations"][0]["field"], "pageSize");
    }
}
