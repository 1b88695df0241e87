//! The bindings: JSON-RPC 2.0 and HTTP+JSON (REST), with SSE for the two streaming
//! operations, and with feature `grpc` gRPC (`lf.a2a.v1.A2AService`, dispatched by its
//! `application/grpc` content type), served by one [`tower::Service`](tower_service::Service):
//! [`A2aHttpService`]. axum, plain hyper or any tower-based server mount the same service.
//!
//! Every request first crosses the [`edge`]: the card, authentication and quotas, the body's
//! size and time, as tower layers configured by one [`HttpConfig`]. Then each binding's
//! codec turns it into an [`A2aMethod`] and its parameters; one dispatcher
//! calls the [`AgentService`](crate::server::AgentService) operation for the method; the
//! binding writes the answer (a JSON-RPC envelope or a bare REST body, one SSE frame per
//! event). Paths are relative to where the service is mounted: JSON-RPC at `/`, HTTP+JSON
//! below it.

mod card;
mod dispatch;
pub mod edge;
#[cfg(feature = "grpc")]
mod grpc;
#[cfg(feature = "grpc")]
mod grpc_v03;
mod jsonrpc;
pub mod params;
mod refusal;
mod response;
mod rest;
mod rest_v03;
mod route;
mod service;
pub mod sse;
mod v03;

#[cfg(feature = "jose")]
pub use card::jwks_response;
pub use card::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH, card_response, request_base_url};
pub use dispatch::A2aMethod;
pub use edge::{
    ClientAddrFrom, DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT, HttpConfig, InvalidHttpConfig,
};
pub use params::RequestMeta;
pub use refusal::edge_refusal_for;
pub use response::{A2aBody, SseFrames, edge_refusal};
pub use service::{A2aHttpFuture, A2aHttpService};

use crate::protocol::is_json_media_type;

/// Whether a Content-Type is JSON (`application/json`, `application/a2a+json`, any `+json`).
///
/// ```
/// use a2a_kit::binding::is_json_content_type;
/// let with = |ct: &str| {
///     let mut h = http::HeaderMap::new();
///     h.insert(http::header::CONTENT_TYPE, ct.parse().unwrap());
///     is_json_content_type(&h)
/// };
/// assert!(with("application/json"));
/// assert!(with(" Application/JSON ; charset=utf-8"));
/// assert!(with("application/a2a+json"));
/// assert!(!with("text/plain"));
/// assert!(!with("application/jsonl"));
/// assert!(!with("text/x+json"));
/// assert!(!is_json_content_type(&http::HeaderMap::new()));
/// ```
pub fn is_json_content_type(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| std::str::from_utf8(v.as_bytes()).is_ok_and(is_json_media_type))
}

/// The `Content-Type` of a request, for error messages.
fn content_type(headers: &http::HeaderMap) -> &str {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none")
}
