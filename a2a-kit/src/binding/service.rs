//! [`A2aHttpService`]: both bindings behind one `tower::Service<http::Request<B>>`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::FutureExt;
use http_body_util::{BodyExt, Full, Limited};

use super::card::{card_response, is_card_path};
use super::response::{A2aBody, close_if_unread, edge_refusal, json, response, rest_body_as};
use super::{jsonrpc, rest};
use crate::error::A2aError;
use crate::request::RequestContext;
use crate::server::AgentService;

/// An agent's JSON-RPC endpoint (at `/`), HTTP+JSON endpoints (below it) and card (at
/// [`AGENT_CARD_PATH`](super::AGENT_CARD_PATH) below it) as one tower service: mount it where
/// the agent lives. Without a public URL, the card names the request's host and the paths it
/// sees, so a server that strips a prefix before calling it should serve the card itself with
/// [`card_response`](super::card_response) and that prefix (a2a-kit-axum's router does).
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
        if !jsonrpc
            && is_card_path(parts.uri.path())
            && matches!(parts.method, http::Method::GET | http::Method::HEAD)
        {
            return card_response(&self.service, &parts, "");
        }
        if jsonrpc && parts.method != http::Method::POST {
            // What a router with a POST-only route at `/` answers.
            let mut resp = response(http::StatusCode::METHOD_NOT_ALLOWED, Full::default());
            resp.headers_mut()
                .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
            return resp;
        }
        let mut caller = None;
        if let Some(auth) = self.service.authenticator() {
            // Before the body is read: an unknown caller costs the agent nothing more.
            let refusal = match auth.authenticate(&parts).await {
                Err(e) => Err(refused(auth.as_ref(), &e)),
                Ok(caller) => match self.service.quotas().and_then(|q| q.wait(&caller.subject)) {
                    Some(wait) => {
                        tracing::info!(caller = %caller.subject, "refused a request over the caller's quota");
                        Err(edge_refusal(
                            http::StatusCode::TOO_MANY_REQUESTS,
                            "RESOURCE_EXHAUSTED",
                            "too many requests from this caller",
                            Some(wait),
                        ))
                    }
                    None => Ok(caller),
                },
            };
            match refusal {
                Ok(known) => caller = Some(known),
                Err(mut resp) => {
                    close_if_unread(&mut resp, parts.version);
                    return resp;
                }
            }
        }
        let limits = (self.service.body_limit(), self.service.body_read_timeout());
        let body = match read_body(body, limits, jsonrpc).await {
            Ok(b) => b,
            Err(mut resp) => {
                close_if_unread(&mut resp, parts.version);
                return resp;
            }
        };
        let (uri, headers) = (&parts.uri, &parts.headers);
        let cx = match caller {
            Some(caller) => RequestContext::new().with_caller(caller),
            None => RequestContext::new(),
        };
        if jsonrpc {
            jsonrpc::handle(&self.service, headers, uri.query(), &cx, &body).await
        } else {
            let path = uri.path();
            rest::handle(
                &self.service,
                &parts.method,
                path,
                uri.query(),
                headers,
                cx,
                &body,
            )
            .await
        }
    }
}

/// 401 with the authenticator's challenge (403 for a known caller without the right), the
/// spec assigning auth failures no JSON-RPC code (they are HTTP's). The reason is logged, not
/// sent.
fn refused(
    auth: &dyn crate::auth::Authenticator,
    err: &crate::auth::AuthError,
) -> http::Response<A2aBody> {
    use crate::auth::AuthError;
    tracing::info!(reason = %err, "refused a request");
    if let AuthError::Forbidden(_) = err {
        return edge_refusal(
            http::StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            "the caller may not do this",
            None,
        );
    }
    let mut resp = edge_refusal(
        http::StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "authentication required: see the agent card's securitySchemes",
        None,
    );
    if let Ok(v) = http::HeaderValue::from_str(&auth.challenge_for(err)) {
        resp.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
    }
    resp
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

/// The whole body, at most `limit` bytes, within `timeout`. A body over the limit is 413 (at
/// once, unread, when its `Content-Length` says so), one that takes longer 408, and one that
/// cannot be read 400, each in its binding's error format: a JSON-RPC envelope (`id` null,
/// since the request was never read) or an HTTP+JSON error whose `code` is that status.
async fn read_body<B>(
    body: B,
    (limit, timeout): (usize, std::time::Duration),
    jsonrpc: bool,
) -> Result<Bytes, http::Response<A2aBody>>
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let too_large = || {
        (
            http::StatusCode::PAYLOAD_TOO_LARGE,
            A2aError::InvalidRequest(format!("the request body exceeds the {limit}-byte limit")),
        )
    };
    // hyper's body knows its `Content-Length`: no header lookup to refuse it unread.
    let declared = body.size_hint().lower();
    let (status, err) = if declared > limit as u64 {
        too_large()
    } else {
        let mut collect = std::pin::pin!(Limited::new(body, limit).collect());
        // A small body usually came with its headers: read at once, with no timer to arm.
        let read = match collect.as_mut().now_or_never() {
            Some(r) => Ok(r),
            None => tokio::time::timeout(timeout, collect).await,
        };
        match read {
            Ok(Ok(collected)) => return Ok(collected.to_bytes()),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => too_large(),
            Ok(Err(e)) => (
                http::StatusCode::BAD_REQUEST,
                A2aError::InvalidRequest(format!("could not read the request body: {e}")),
            ),
            Err(_) => (
                http::StatusCode::REQUEST_TIMEOUT,
                A2aError::InvalidRequest(format!(
                    "the request body did not arrive within {} s",
                    timeout.as_secs_f64()
                )),
            ),
        }
    };
    let body = if jsonrpc {
        jsonrpc::failure(&serde_json::Value::Null, &err)
    } else {
        Bytes::from(rest_body_as(&err, status))
    };
    Err(json(status, body))
}
