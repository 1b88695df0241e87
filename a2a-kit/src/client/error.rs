//! [`ClientError`]: everything a client call can fail with, keeping the A2A error code,
//! `ErrorInfo.reason` and message of errors the agent sent ([`AgentError`]).

use serde_json::{Map, Value};

use crate::error::A2aError;
use crate::protocol::TaskState;

/// The A2A error codes with their names and `ErrorInfo.reason`s (spec §3.3).
const CODES: &[(i32, &str, &str)] = &[
    (-32700, "JSONParseError", "JSON_PARSE"),
    (-32600, "InvalidRequestError", "INVALID_REQUEST"),
    (-32601, "MethodNotFoundError", "METHOD_NOT_FOUND"),
    (-32602, "InvalidParamsError", "INVALID_PARAMS"),
    (-32603, "InternalError", "INTERNAL"),
    (-32001, "TaskNotFoundError", "TASK_NOT_FOUND"),
    (-32002, "TaskNotCancelableError", "TASK_NOT_CANCELABLE"),
    (
        -32003,
        "PushNotificationNotSupportedError",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    (-32004, "UnsupportedOperationError", "UNSUPPORTED_OPERATION"),
    (
        -32005,
        "ContentTypeNotSupportedError",
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    (
        -32006,
        "InvalidAgentResponseError",
        "INVALID_AGENT_RESPONSE",
    ),
    (
        -32007,
        "ExtendedAgentCardNotConfiguredError",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    (
        -32008,
        "ExtensionSupportRequiredError",
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    (-32009, "VersionNotSupportedError", "VERSION_NOT_SUPPORTED"),
];

/// The A2A code for an `ErrorInfo.reason` (`TASK_NOT_FOUND` → -32001).
pub fn code_for_reason(reason: &str) -> Option<i32> {
    CODES
        .iter()
        .find(|(_, _, r)| *r == reason)
        .map(|(c, _, _)| *c)
}

/// The spec's name for an A2A error code (-32001 → `TaskNotFoundError`).
pub fn error_name(code: i32) -> Option<&'static str> {
    CODES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, n, _)| *n)
}

/// An error the agent answered with: JSON-RPC `error`, or an HTTP+JSON `google.rpc.Status`.
///
/// ```
/// use a2a_kit::client::AgentError;
/// let e = AgentError::new(-32001, "Task not found");
/// assert_eq!(e.name(), Some("TaskNotFoundError"));
/// assert_eq!(e.reason.as_deref(), Some("TASK_NOT_FOUND"));
/// assert_eq!(e.to_a2a_error().code(), -32001);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AgentError {
    /// The A2A / JSON-RPC error code (-32001 …). Over HTTP+JSON it comes from the
    /// `ErrorInfo.reason`; without one, from the HTTP status (400 → -32602, 404 → -32601,
    /// 5xx → -32603).
    pub code: i32,
    /// `ErrorInfo.reason` (`TASK_NOT_FOUND`), when the agent sent one (or the code implies it).
    pub reason: Option<String>,
    /// The agent's message.
    pub message: String,
    /// The HTTP status (HTTP+JSON binding, or a JSON-RPC error carried with a non-200 status).
    pub http_status: Option<u16>,
    /// `ErrorInfo.metadata` (e.g. `{"taskId": "..."}`), empty when absent.
    pub metadata: Map<String, Value>,
    /// All detail objects as sent (`error.data` / `error.details`).
    pub details: Vec<Value>,
}

impl AgentError {
    /// An error with this code and message (reason derived from the code).
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        AgentError {
            code,
            reason: CODES
                .iter()
                .find(|(c, _, _)| *c == code)
                .map(|(_, _, r)| (*r).to_string()),
            message: message.into(),
            http_status: None,
            metadata: Map::new(),
            details: Vec::new(),
        }
    }

    /// The spec's name of the error (`TaskNotFoundError`), if the code is a known one.
    pub fn name(&self) -> Option<&'static str> {
        error_name(self.code)
    }

    /// Parse a JSON-RPC `error` object (`{code, message, data}`; `data` as v1's array of
    /// `Any`s or anything else).
    pub fn from_jsonrpc(error: &Value, http_status: Option<u16>) -> Self {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603) as i32;
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let details = match error.get("data") {
            Some(Value::Array(a)) => a.clone(),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![other.clone()],
        };
        let mut e = AgentError::new(code, message);
        e.http_status = http_status;
        e.absorb_details(details);
        e
    }

    /// Parse an HTTP+JSON error body (`{"error": {code, status, message, details}}`), or
    /// `None` when the body is not one.
    pub fn from_rest(body: &Value, http_status: u16) -> Option<Self> {
        let err = body.get("error")?;
        if !err.is_object() {
            return None;
        }
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let details = err
            .get("details")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let status = err.get("status").and_then(Value::as_str).unwrap_or("");
        let fallback = match (http_status, status) {
            (_, "INVALID_ARGUMENT") | (400, _) => -32602,
            (_, "NOT_FOUND") | (_, "UNIMPLEMENTED") | (404, _) | (405, _) => -32601,
            _ => -32603,
        };
        let mut e = AgentError::new(fallback, message);
        e.reason = None;
        e.http_status = Some(http_status);
        e.absorb_details(details);
        if e.reason.is_none() {
            e.reason = AgentError::new(e.code, "").reason;
        }
        Some(e)
    }

    fn absorb_details(&mut self, details: Vec<Value>) {
        let info = details.iter().find(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
                || (d.get("reason").is_some() && d.get("@type").is_none())
        });
        if let Some(info) = info {
            if let Some(reason) = info.get("reason").and_then(Value::as_str) {
                if let Some(code) = code_for_reason(reason) {
                    self.code = code;
                }
                self.reason = Some(reason.to_string());
            }
            if let Some(Value::Object(m)) = info.get("metadata") {
                self.metadata = m.clone();
            }
        }
        self.details = details;
    }

    /// The kit's own [`A2aError`] for this error (e.g. to pass it on from a server that
    /// called another agent). Codes outside the spec become `Internal`.
    pub fn to_a2a_error(&self) -> A2aError {
        let m = self.message.clone();
        let meta = |k: &str| {
            self.metadata
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match self.code {
            -32700 => A2aError::JsonParse(m),
            -32600 => A2aError::InvalidRequest(m),
            -32601 => A2aError::MethodNotFound(m),
            -32602 => A2aError::invalid_params(m),
            -32001 => A2aError::TaskNotFound {
                task_id: meta("taskId"),
            },
            -32002 => A2aError::TaskNotCancelable {
                task_id: meta("taskId"),
                state: TaskState::from_proto_name(&meta("state")).unwrap_or_default(),
            },
            -32003 => A2aError::PushNotificationNotSupported,
            -32004 => A2aError::UnsupportedOperation(m),
            -32005 => A2aError::ContentTypeNotSupported(m),
            -32006 => A2aError::InvalidAgentResponse(m),
            -32007 => A2aError::ExtendedAgentCardNotConfigured,
            -32008 => A2aError::ExtensionSupportRequired { uri: meta("uri") },
            -32009 => A2aError::VersionNotSupported {
                version: meta("requestedVersion"),
                message: m,
            },
            _ => A2aError::Internal(m),
        }
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({}): {}", self.code, self.message),
            None => write!(f, "error {}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for AgentError {}

/// Why a client call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The host could not be reached (DNS failure, connection refused, TLS failure).
    #[error("cannot reach {url}: {reason}")]
    Unreachable {
        /// The URL that was tried.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The request took longer than the configured timeout.
    #[error("request to {url} timed out")]
    Timeout {
        /// The URL that was tried.
        url: String,
    },
    /// The URL answered, but not with an A2A agent card.
    #[error("{url} is not an A2A agent: {reason}")]
    NotAnAgent {
        /// The card URL that was tried.
        url: String,
        /// What was found instead.
        reason: String,
    },
    /// The agent offers only protocol versions this client does not speak (it speaks 1.0,
    /// and 0.3 over JSON-RPC and HTTP+JSON), or not the one
    /// [`ClientBuilder::protocol_version`](super::ClientBuilder::protocol_version) asked for.
    #[error("the agent does not support A2A 1.0 or 0.3 (or not the version asked for); it offers {}", offered.join(", "))]
    UnsupportedVersion {
        /// `binding version` of each interface the card lists.
        offered: Vec<String>,
    },
    /// The agent offers no interface this client can use (e.g. gRPC only, or not the
    /// binding the caller forced).
    #[error("no usable interface: the agent offers {}", if offered.is_empty() { "none".to_string() } else { offered.join(", ") })]
    NoSupportedInterface {
        /// `binding version` of each interface the card lists.
        offered: Vec<String>,
    },
    /// The agent answered with an A2A error (boxed: it is large, and errors travel in every
    /// `Result` of the client).
    #[error("{0}")]
    Agent(Box<AgentError>),
    /// An HTTP error without an A2A error body (401, 403, 502, …).
    #[error("HTTP {status} from {url}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Http {
        /// The HTTP status.
        status: u16,
        /// The URL.
        url: String,
        /// The start of the body, for diagnosis.
        body: String,
    },
    /// The response does not follow the protocol.
    #[error("invalid response from the agent: {0}")]
    InvalidResponse(String),
    /// The connection broke (mid-stream, after any resume attempts).
    #[error("connection lost: {0}")]
    Connection(String),
    /// A URL could not be parsed or built.
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// The call cannot be made over the binding in use (e.g. resuming a stream from an
    /// event id over gRPC, which numbers no events).
    #[error("not possible over this binding: {0}")]
    Unsupported(String),
    /// A request interceptor refused the call.
    #[error("request interceptor failed: {0}")]
    Interceptor(String),
    /// The place a caller keeps its remote tasks and webhook tokens failed (a store error).
    #[error("the remote-task store failed: {0}")]
    Store(String),
    /// A certificate given to trust is not one.
    #[error("invalid certificate: {0}")]
    Certificate(String),
    /// The card was refused: the client verifies cards
    /// ([`ClientBuilder::verify_card`](super::ClientBuilder::verify_card)) and no signature of
    /// this one verifies against a trusted key.
    #[cfg(feature = "jose")]
    #[error("agent card refused: {0}")]
    CardSignature(crate::signing::VerifyError),
}

impl ClientError {
    /// The A2A error code, for errors the agent sent.
    pub fn code(&self) -> Option<i32> {
        match self {
            ClientError::Agent(e) => Some(e.code),
            _ => None,
        }
    }

    /// `ErrorInfo.reason`, for errors the agent sent.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ClientError::Agent(e) => e.reason.as_deref(),
            _ => None,
        }
    }

    /// The agent's error, if this is one.
    pub fn agent_error(&self) -> Option<&AgentError> {
        match self {
            ClientError::Agent(e) => Some(&**e),
            _ => None,
        }
    }

    /// Whether retrying the same call may succeed (network trouble, timeouts, 502/503/504).
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Unreachable { .. }
            | ClientError::Timeout { .. }
            | ClientError::Connection(_) => true,
            ClientError::Http { status, .. } => matches!(status, 502..=504),
            _ => false,
        }
    }

    pub(crate) fn from_reqwest(url: &str, e: &reqwest::Error) -> Self {
        if e.is_timeout() {
            return ClientError::Timeout {
                url: url.to_string(),
            };
        }
        if e.is_connect() {
            return ClientError::Unreachable {
                url: url.to_string(),
                reason: root_cause(e),
            };
        }
        if e.is_body() || e.is_decode() {
            return ClientError::Connection(root_cause(e));
        }
        if e.is_builder() {
            return ClientError::InvalidUrl(format!("{url}: {}", root_cause(e)));
        }
        ClientError::Unreachable {
            url: url.to_string(),
            reason: root_cause(e),
        }
    }
}

/// The innermost cause's message, e.g. "Connection refused (os error 111)".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let inner = cur.to_string();
    let outer = e.to_string();
    if inner == outer {
        outer
    } else {
        format!("{outer} ({inner})")
    }
}

impl From<AgentError> for ClientError {
    fn from(e: AgentError) -> Self {
        ClientError::Agent(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonrpc_error_keeps_code_reason_message() {
        let e = AgentError::from_jsonrpc(
            &json!({"code": -32001, "message": "Task not found", "data": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                 "domain": "a2a-protocol.org", "metadata": {"taskId": "t-9"}}]}),
            None,
        );
        assert_eq!(e.code, -32001);
        assert_eq!(e.reason.as_deref(), Some("TASK_NOT_FOUND"));
        assert_eq!(e.message, "Task not found");
        assert_eq!(e.to_a2a_error(), A2aError::task_not_found("t-9"));
    }

    #[test]
    fn rest_error_code_comes_from_reason() {
        let body = json!({"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "no",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_CANCELABLE",
                         "metadata": {"taskId": "t", "state": "TASK_STATE_COMPLETED"}}]}});
        let e = AgentError::from_rest(&body, 400).unwrap();
        assert_eq!(e.code, -32002);
        assert_eq!(e.http_status, Some(400));
        assert!(matches!(
            e.to_a2a_error(),
            A2aError::TaskNotCancelable {
                state: TaskState::Completed,
                ..
            }
        ));
        // Without ErrorInfo the HTTP status decides.
        let e =
            AgentError::from_rest(&json!({"error": {"code": 404, "message": "x"}}), 404).unwrap();
        assert_eq!(e.code, -32601);
        assert!(AgentError::from_rest(&json!({"detail": "x"}), 500).is_none());
    }

    #[test]
    fn every_kit_error_round_trips() {
        for err in [
            A2aError::task_not_found("a"),
            A2aError::PushNotificationNotSupported,
            A2aError::unsupported("x"),
            A2aError::ContentTypeNotSupported("x".into()),
            A2aError::InvalidAgentResponse("x".into()),
            A2aError::ExtendedAgentCardNotConfigured,
            A2aError::ExtensionSupportRequired { uri: "u".into() },
            A2aError::VersionNotSupported {
                version: "0.3".into(),
                message: "m".into(),
            },
            A2aError::invalid_field("f", "bad"),
        ] {
            let rpc = AgentError::from_jsonrpc(&err.to_jsonrpc_error(), None);
            assert_eq!(rpc.code, err.code());
            assert_eq!(rpc.reason.as_deref(), Some(err.reason()));
            let rest = AgentError::from_rest(&err.to_rest_body(), err.http_status()).unwrap();
            assert_eq!(rest.code, err.code(), "{err:?}");
            assert_eq!(rest.to_a2a_error().code(), err.code());
        }
    }
}
