//! A2A errors as a 0.3 client reads them.
//!
//! Codes -32001 to -32007 mean the same in both versions (-32007 was 0.3's
//! `AuthenticatedExtendedCardNotConfiguredError`). 1.0's -32008 (an extension is required)
//! and -32009 (version not supported) do not exist in 0.3: they are InvalidRequest (-32600),
//! the message saying which. 0.3's `data` is free-form: the task for task errors, the field
//! violations for invalid params, else none.

use serde_json::{Value, json};

use crate::error::A2aError;

/// The JSON-RPC code a 0.3 client gets for `err`.
///
/// ```
/// use a2a_kit::error::A2aError;
/// let missing = A2aError::ExtensionSupportRequired { uri: "urn:x".into() };
/// assert_eq!(a2a_kit::v03::error_code(&missing), -32600);
/// assert_eq!(a2a_kit::v03::error_code(&A2aError::PushNotificationNotSupported), -32003);
/// ```
pub fn error_code(err: &A2aError) -> i32 {
    match err {
        A2aError::ExtensionSupportRequired { .. } | A2aError::VersionNotSupported { .. } => -32600,
        other => other.code(),
    }
}

/// The JSON-RPC `error` object a 0.3 client gets for `err`.
pub fn jsonrpc_error(err: &A2aError) -> Value {
    let data = match err {
        A2aError::TaskNotFound { task_id } => Some(json!({ "taskId": task_id })),
        A2aError::TaskNotCancelable { task_id, state } => Some(json!({
            "taskId": task_id,
            "state": super::wire::TaskState::from(*state),
        })),
        A2aError::InvalidParams { violations, .. } if !violations.is_empty() => Some(json!({
            "fields": violations
                .iter()
                .map(|v| json!({ "field": v.field, "description": v.description }))
                .collect::<Vec<_>>(),
        })),
        A2aError::ExtensionSupportRequired { uri } => Some(json!({ "extension": uri })),
        _ => None,
    };
    let mut out = json!({ "code": error_code(err), "message": err.to_string() });
    if let Some(data) = data {
        out["data"] = data;
    }
    out
}
