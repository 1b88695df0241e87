//! The responses both bindings write: a JSON document or an SSE stream, as plain
//! `http::Response`s over [`A2aBody`], and the agent card's.

use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body::Frame;
use http_body_util::{Either, Full, StreamBody};

use super::params::{EXTENSIONS_HEADER, RequestMeta};
use crate::error::A2aError;
use crate::server::AgentService;

/// The frames of an SSE response.
pub type SseFrames = BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

/// The body of every response: a complete JSON document, or SSE frames as they come.
pub type A2aBody = Either<Full<Bytes>, StreamBody<SseFrames>>;

/// The HTTP+JSON error body of `err`.
pub(super) fn rest_body(err: &A2aError) -> Vec<u8> {
    serde_json::to_vec(&err.to_rest_body()).unwrap_or_default()
}

pub(super) fn response(status: http::StatusCode, body: Full<Bytes>) -> http::Response<A2aBody> {
    let mut resp = http::Response::new(Either::Left(body));
    *resp.status_mut() = status;
    resp
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
    if !meta.extensions.is_empty() {
        if let Ok(v) = http::HeaderValue::from_str(&meta.extensions.join(", ")) {
            resp.headers_mut().insert(EXTENSIONS_HEADER, v);
        }
    }
    resp
}

/// The agent card, with `ETag`, `Last-Modified` and a five-minute `Cache-Control`; 304 when
/// the client's copy is current: its `If-None-Match` names the `ETag` (or `*`), or, without
/// `If-None-Match` (which takes precedence, RFC 9110 §13.2.2), its `If-Modified-Since` is not
/// before `Last-Modified`. A date that does not parse is ignored, as RFC 9110 says.
pub fn card_response(service: &AgentService, headers: &http::HeaderMap) -> http::Response<A2aBody> {
    let (json_bytes, etag, last_modified) = service.card_document();
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &http::HeaderValue| v.to_str().ok())
    };
    let not_modified = match header(http::header::IF_NONE_MATCH) {
        Some(v) => v.split(',').any(|t| t.trim() == etag || t.trim() == "*"),
        None => header(http::header::IF_MODIFIED_SINCE)
            .and_then(http_date)
            .zip(http_date(last_modified))
            .is_some_and(|(since, modified)| since >= modified),
    };
    let mut resp = if not_modified {
        response(http::StatusCode::NOT_MODIFIED, Full::default())
    } else {
        json(http::StatusCode::OK, json_bytes.clone())
    };
    let h = resp.headers_mut();
    h.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=300"),
    );
    if let Ok(v) = http::HeaderValue::from_str(etag) {
        h.insert(http::header::ETAG, v);
    }
    if let Ok(v) = http::HeaderValue::from_str(last_modified) {
        h.insert(http::header::LAST_MODIFIED, v);
    }
    resp
}

/// An HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) as a Unix timestamp.
fn http_date(value: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc2822(value.trim())
        .ok()
        .map(|d| d.timestamp())
}
