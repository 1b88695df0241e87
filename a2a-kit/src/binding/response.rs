//! The responses both bindings write: a JSON document or an SSE stream, as plain
//! `http::Response`s over [`A2aBody`].

use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body::Frame;
use http_body_util::{Either, Full, StreamBody};

use super::params::{EXTENSIONS_HEADER, RequestMeta};
use crate::error::A2aError;

/// The frames of an SSE response.
pub type SseFrames = BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

/// The body of every response: a complete JSON document, or SSE frames as they come.
pub type A2aBody = Either<Full<Bytes>, StreamBody<SseFrames>>;

/// The HTTP+JSON error body of `err`.
pub(super) fn rest_body(err: &A2aError) -> Vec<u8> {
    serde_json::to_vec(&err.to_rest_body()).unwrap_or_default()
}

/// The HTTP+JSON error body of `err` answered with `status` rather than its own (405, 413,
/// 408): the body's `code` is always the response's status.
pub(super) fn rest_body_as(err: &A2aError, status: http::StatusCode) -> Vec<u8> {
    let mut body = err.to_rest_body();
    body["error"]["code"] = status.as_u16().into();
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A refusal at the agent's edge, before the request is read (authentication, quotas, a
/// server's rate limit): a google.rpc.Status body in both bindings (a JSON-RPC request never
/// read has no id for an envelope), with `Retry-After` in whole seconds (at least 1) when the
/// client may come back.
pub fn edge_refusal(
    status: http::StatusCode,
    grpc_status: &str,
    message: &str,
    retry_after: Option<std::time::Duration>,
) -> http::Response<A2aBody> {
    let secs = retry_after.map(|wait| (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1));
    let message = match secs {
        Some(secs) => format!("{message}; retry in {secs}s"),
        None => message.to_string(),
    };
    let body = serde_json::json!({"error": {
        "code": status.as_u16(), "status": grpc_status, "message": message}});
    let mut resp = json(status, body.to_string());
    if let Some(secs) = secs {
        resp.headers_mut()
            .insert(http::header::RETRY_AFTER, http::HeaderValue::from(secs));
    }
    // What a gRPC call's form of the refusal is made of (see `as_binding`).
    resp.extensions_mut().insert(RefusalStatus {
        code: grpc_status.to_string(),
        message,
    });
    resp
}

/// The gRPC status of an [`edge_refusal`], for a gRPC call's form of it (read by the gRPC
/// binding only).
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "grpc"), allow(dead_code))]
pub(super) struct RefusalStatus {
    pub code: String,
    pub message: String,
}

/// What is left of a request body that was never read cannot be skipped: on HTTP/1 the
/// connection cannot carry another request (HTTP/2 resets the stream alone).
pub(super) fn close_if_unread(resp: &mut http::Response<A2aBody>, version: http::Version) {
    if version < http::Version::HTTP_2 {
        resp.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
}

pub(super) fn response(status: http::StatusCode, body: Full<Bytes>) -> http::Response<A2aBody> {
    let mut resp = http::Response::new(Either::Left(body));
    *resp.status_mut() = status;
    resp
}

/// The response of `err`, in either binding, says when to come back when the agent is only
/// busy or its store unreachable (`Retry-After: 1`).
pub(super) fn retry_if_unavailable(err: &A2aError, resp: &mut http::Response<A2aBody>) {
    if matches!(err, A2aError::Unavailable(_)) {
        resp.headers_mut().insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("1"),
        );
    }
}

/// A JSON response.
pub(super) fn json(status: http::StatusCode, body: impl Into<Bytes>) -> http::Response<A2aBody> {
    let mut resp = response(status, Full::new(body.into()));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// An SSE response.
pub(super) fn sse(frames: BoxStream<'static, Bytes>) -> http::Response<A2aBody> {
    let frames: SseFrames = frames.map(|b| Ok(Frame::data(b))).boxed();
    let mut resp = http::Response::new(Either::Right(StreamBody::new(frames)));
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    resp
}

/// Echo the activated extensions.
pub(super) fn with_extensions(
    mut resp: http::Response<A2aBody>,
    meta: &RequestMeta,
) -> http::Response<A2aBody> {
    if !meta.extensions.is_empty()
        && let Ok(v) = http::HeaderValue::from_str(&meta.extensions.join(", "))
    {
        // Echoed in the header the client's version uses.
        let name = if meta.version == "0.3" {
            "x-a2a-extensions"
        } else {
            EXTENSIONS_HEADER
        };
        resp.headers_mut().insert(name, v);
    }
    resp
}
