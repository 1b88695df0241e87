//! [`A2aHttpService`]: both bindings behind one `tower::Service<http::Request<B>>`, and the
//! agent card's response.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use http_body::Frame;
use http_body_util::{BodyExt, Either, Full, Limited, StreamBody};

use super::params::{EXTENSIONS_HEADER, RequestMeta};
use super::{jsonrpc, rest};
use crate::error::A2aError;
use crate::server::AgentService;

/// The frames of an SSE response.
pub type SseFrames = BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

/// The body of every response: a complete JSON document, or SSE frames as they come.
pub type A2aBody = Either<Full<Bytes>, StreamBody<SseFrames>>;

/// An agent's JSON-RPC endpoint (at `/`) and HTTP+JSON endpoints (below it) as one tower
/// service: mount it where the agent lives, with the agent card at the host's
/// `/.well-known/agent-card.json` ([`card_response`]).
///
/// Request bodies over the service's body limit are refused with 413; anything else a client
/// gets wrong is an A2A error in the binding's format, never a transport error.
///
/// ```
/// # use a2a_kit::binding::A2aHttpService;
/// # fn demo(service: a2a_kit::server::AgentService) {
/// let http = A2aHttpService::new(service);
/// // axum: Router::new().nest_service("/agents/travel", http)
/// // hyper: hyper_util::service::TowerToHyperService::new(http)
/// # let _ = http;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct A2aHttpService {
    service: AgentService,
}

impl A2aHttpService {
    /// Serve `service` over both bindings.
    pub fn new(service: AgentService) -> Self {
        A2aHttpService { service }
    }

    /// The agent service behind it.
    pub fn agent_service(&self) -> &AgentService {
        &self.service
    }

    /// Handle one request.
    pub async fn handle<B>(&self, req: http::Request<B>) -> http::Response<A2aBody>
    where
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = req.into_parts();
        let jsonrpc = matches!(parts.uri.path(), "" | "/");
        if jsonrpc && parts.method != http::Method::POST {
            // What a router with a POST-only route at `/` answers.
            let mut resp = response(http::StatusCode::METHOD_NOT_ALLOWED, Full::default());
            resp.headers_mut()
                .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
            return resp;
        }
        let body = match read_body(body, self.service.body_limit()).await {
            Ok(b) => b,
            Err(resp) => return resp,
        };
        let (uri, headers) = (&parts.uri, &parts.headers);
        if jsonrpc {
            jsonrpc::handle(&self.service, headers, uri.query(), &body).await
        } else {
            let path = uri.path();
            rest::handle(
                &self.service,
                &parts.method,
                path,
                uri.query(),
                headers,
                &body,
            )
            .await
        }
    }
}

impl<B> tower_service::Service<http::Request<B>> for A2aHttpService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<A2aBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let this = self.clone();
        // Boxed once, here: the request's future is the whole A2A call inline.
        Box::pin(async move { this.handle(req).await }.map(Ok))
    }
}

async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, http::Response<A2aBody>>
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            let err = A2aError::InvalidRequest(format!(
                "the request body exceeds the {limit}-byte limit"
            ));
            Err(json(http::StatusCode::PAYLOAD_TOO_LARGE, rest_body(&err)))
        }
        Err(e) => {
            let err = A2aError::InvalidRequest(format!("could not read the request body: {e}"));
            Err(json(http::StatusCode::BAD_REQUEST, rest_body(&err)))
        }
    }
}

/// The HTTP+JSON error body of `err`.
pub(super) fn rest_body(err: &A2aError) -> Vec<u8> {
    serde_json::to_vec(&err.to_rest_body()).unwrap_or_default()
}

fn response(status: http::StatusCode, body: Full<Bytes>) -> http::Response<A2aBody> {
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

/// The agent card, honouring `If-None-Match` (304), with `ETag`, `Last-Modified` and a
/// five-minute `Cache-Control`.
pub fn card_response(service: &AgentService, headers: &http::HeaderMap) -> http::Response<A2aBody> {
    let (json_bytes, etag, last_modified) = service.card_document();
    let not_modified = headers
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
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
