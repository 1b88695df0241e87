//! The edge every request crosses before its binding's codec: the HTTP concerns of an agent
//! as tower layers, configured by one [`HttpConfig`].
//!
//! [`A2aHttpService`](super::A2aHttpService) is these layers around the codec, in this order:
//!
//! 1. [`CardLayer`]: the agent card (public, before anything else) and `405` for a JSON-RPC
//!    request that is not a POST;
//! 2. [`AuthLayer`]: the service's authenticator and per-caller quota, before the body is
//!    read (an unknown caller costs the agent nothing more); the caller goes on in the
//!    request's extensions as an `Arc<Caller>`;
//! 3. [`BodyLayer`]: the whole body within the size limit and read timeout;
//! 4. [`Codec`]: JSON-RPC at `/`, HTTP+JSON below it, each request one
//!    [`AgentService`] operation called with a [`RequestContext`].
//!
//! Each refusal is an answer in the binding's format (its status, a JSON error body), never a
//! transport error. The futures are written out (no box per layer): an open agent's unary
//! request costs one allocation for the codec's call, as before the layers; an authenticator's
//! check costs one more (its request head travels with it), and a body that does not come at
//! once a timer.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures::future::{BoxFuture, Either, Ready};
use http_body_util::{BodyExt, Limited, combinators::Collect};
use tower_service::Service;

use super::card::{card_response, is_card_path};
use super::refusal::{as_binding, edge_refusal_for};
use super::response::{A2aBody, close_if_unread, edge_refusal, json, rest_body_as};
use super::{jsonrpc, rest};
use crate::auth::Caller;
use crate::error::A2aError;
use crate::observe::TraceContext;
use crate::request::RequestContext;
use crate::server::AgentService;

/// The default largest request body: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// The default time a request body may take once its headers are in: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How the HTTP edge treats requests: one value for what the agent's own builder does not
/// configure (the agent is the same behind any edge).
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::binding::HttpConfig;
/// let config = HttpConfig::default()
///     .body_limit(64 * 1024)
///     .body_read_timeout(Duration::from_secs(5))
///     .trust_forwarded_headers(true);
/// assert_eq!(config.body_limit, 64 * 1024);
/// assert!(HttpConfig::default().body_limit(0).check().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The largest request body (default [`DEFAULT_BODY_LIMIT`]); a larger one is refused
    /// with 413, unread when its `Content-Length` says so.
    pub body_limit: usize,
    /// How long a request body may take once the headers are in (default
    /// [`DEFAULT_BODY_READ_TIMEOUT`]); a slower or stalled one is refused with 408. Together
    /// with a server's header timeout it bounds how long one request holds a connection.
    pub body_read_timeout: Duration,
    /// Whether a proxy's `Forwarded` / `X-Forwarded-*` headers are believed (default `false`:
    /// a client could otherwise name any host in the card a cache keeps, and any address as
    /// its own). With it on, the card's URL (when the agent has no public URL) comes from
    /// them, and so does the client's address each caller's share is counted by (the address
    /// the proxy next to the agent added). Turn it on behind a proxy that sets them: without
    /// it, every anonymous client behind the proxy shares the proxy's address.
    pub trust_forwarded_headers: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            body_limit: DEFAULT_BODY_LIMIT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            trust_forwarded_headers: false,
        }
    }
}

impl HttpConfig {
    /// Set [`body_limit`](Self::body_limit).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Set [`body_read_timeout`](Self::body_read_timeout).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Set [`trust_forwarded_headers`](Self::trust_forwarded_headers).
    pub fn trust_forwarded_headers(mut self, on: bool) -> Self {
        self.trust_forwarded_headers = on;
        self
    }

    /// What is wrong with this configuration, if anything (checked when a service is made
    /// with it).
    pub fn check(&self) -> Result<(), InvalidHttpConfig> {
        if self.body_limit == 0 {
            return Err(InvalidHttpConfig(
                "body_limit must be at least one byte".into(),
            ));
        }
        if self.body_read_timeout.is_zero() {
            return Err(InvalidHttpConfig(
                "body_read_timeout must be longer than zero".into(),
            ));
        }
        Ok(())
    }
}

/// An [`HttpConfig`] that makes no sense, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid HTTP configuration: {0}")]
pub struct InvalidHttpConfig(String);

type Response = http::Response<A2aBody>;

// ----- 1. The card -----

/// Serves the agent card at [`AGENT_CARD_PATH`](super::AGENT_CARD_PATH) (and the legacy
/// path) to anyone, and answers `405` to a JSON-RPC request (at `/`) that is not a POST.
#[derive(Clone, Debug)]
pub struct CardLayer {
    service: AgentService,
    trust_forwarded: bool,
}

impl CardLayer {
    /// The card of `service`, named as `config` says.
    pub fn new(service: AgentService, config: &HttpConfig) -> Self {
        CardLayer {
            service,
            trust_forwarded: config.trust_forwarded_headers,
        }
    }
}

impl<S> tower_layer::Layer<S> for CardLayer {
    type Service = Card<S>;
    fn layer(&self, inner: S) -> Card<S> {
        Card {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`CardLayer`].
#[derive(Clone, Debug)]
pub struct Card<S> {
    inner: S,
    layer: CardLayer,
}

impl<S, B> Service<http::Request<B>> for Card<S>
where
    S: Service<http::Request<B>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let path = req.uri().path();
        let jsonrpc = matches!(path, "" | "/");
        let get = matches!(*req.method(), http::Method::GET | http::Method::HEAD);
        if !jsonrpc && get && is_card_path(path) {
            let (parts, _) = req.into_parts();
            let (service, trust) = (&self.layer.service, self.layer.trust_forwarded);
            return Either::Left(futures::future::ready(Ok(card_response(
                service, &parts, "", trust,
            ))));
        }
        if jsonrpc && req.method() != http::Method::POST {
            // What a router with a POST-only route at `/` answers, saying what is here (a
            // person who opens the agent's URL in a browser lands here).
            let mut resp = edge_refusal(
                http::StatusCode::METHOD_NOT_ALLOWED,
                "UNIMPLEMENTED",
                &format!(
                    "this is an A2A agent's JSON-RPC endpoint: POST a JSON-RPC 2.0 request \
                     here (method `SendMessage`, …); its card is at {} below this URL",
                    super::AGENT_CARD_PATH
                ),
                None,
            );
            resp.headers_mut()
                .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
            return Either::Left(futures::future::ready(Ok(resp)));
        }
        Either::Right(self.inner.call(req))
    }
}

// ----- 2. Who is calling -----

/// Runs the service's [`Authenticator`](crate::auth::Authenticator) and per-caller quota
/// before the body is read: a refusal is 401 (with the authenticator's challenge), 403 or
/// 429 (with `Retry-After`); an accepted caller goes on as an `Arc<Caller>` in the request's
/// extensions. With no authenticator the request passes untouched.
#[derive(Clone, Debug)]
pub struct AuthLayer {
    service: AgentService,
}

impl AuthLayer {
    /// The authenticator and quotas of `service`.
    pub fn new(service: AgentService) -> Self {
        AuthLayer { service }
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = Auth<S>;
    fn layer(&self, inner: S) -> Auth<S> {
        Auth {
            inner,
            service: self.service.clone(),
        }
    }
}

/// The service of [`AuthLayer`].
#[derive(Clone, Debug)]
pub struct Auth<S> {
    inner: S,
    service: AgentService,
}

impl<S, B> Service<http::Request<B>> for Auth<S>
where
    S: Service<http::Request<B>, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = AuthFuture<S, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let Some(auth) = self.service.authenticator() else {
            return AuthFuture::Calling {
                future: self.inner.call(req),
            };
        };
        let (mut parts, body) = req.into_parts();
        // An authenticator that decides at once (API keys): no future to box.
        if let Some(verdict) = auth.authenticate_now(&parts) {
            let verdict = match verdict {
                Err(e) => Err(Box::new(refused(auth.as_ref(), &e))),
                Ok(caller) => admit(&self.service, caller),
            };
            return match verdict {
                Ok(caller) => {
                    parts.extensions.insert(caller);
                    let req = http::Request::from_parts(parts, body);
                    AuthFuture::Calling {
                        future: self.inner.call(req),
                    }
                }
                Err(refusal) if refusal.status() == http::StatusCode::TOO_MANY_REQUESTS => {
                    // Over the quota: answered when the wait is over (see `paced`).
                    let ready = self.inner.clone();
                    let inner = std::mem::replace(&mut self.inner, ready);
                    AuthFuture::Checking {
                        check: Box::pin(async move {
                            let refusal = paced(refusal).await;
                            (parts, Err(refusal))
                        }),
                        rest: Some((body, inner)),
                    }
                }
                Err(refusal) => {
                    let mut refusal = as_binding(&parts.headers, *refusal);
                    close_if_unread(&mut refusal, parts.version);
                    AuthFuture::Refused {
                        response: Some(refusal),
                    }
                }
            };
        }
        let auth = auth.clone();
        // The inner service that was made ready goes with the request (tower's rule).
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let service = self.service.clone();
        AuthFuture::Checking {
            check: Box::pin(async move {
                let verdict = match auth.authenticate(&parts).await {
                    Err(e) => Err(Box::new(refused(auth.as_ref(), &e))),
                    Ok(caller) => match admit(&service, caller) {
                        Err(refusal) => Err(paced(refusal).await),
                        admitted => admitted,
                    },
                };
                (parts, verdict)
            }),
            rest: Some((body, inner)),
        }
    }
}

/// The longest a refusal that says when to come back is held (see [`paced`]).
const MAX_PACE: Duration = Duration::from_secs(1);

/// Hold a refusal with `Retry-After` until that wait is over (at most [`MAX_PACE`]): a client
/// that asks again as soon as it is answered is paced to what it is allowed, instead of being
/// refused as fast as it can ask (which costs the agent what serving would). A refusal
/// without `Retry-After` passes at once.
pub(crate) async fn paced<R: std::ops::Deref<Target = Response>>(refusal: R) -> R {
    let wait = refusal
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(|secs| Duration::from_secs(secs).min(MAX_PACE));
    if let Some(wait) = wait {
        tokio::time::sleep(wait).await;
    }
    refusal
}

/// The caller, unless it is over its quota.
/// (The refusal is boxed: rare, and large beside a caller.)
fn admit(service: &AgentService, caller: Arc<Caller>) -> Result<Arc<Caller>, Box<Response>> {
    match service.quotas().and_then(|q| q.wait(&caller.subject)) {
        None => Ok(caller),
        Some(wait) => {
            crate::observe::metrics::refused("quota");
            tracing::info!(
                refused = "quota",
                caller = %caller.subject,
                retry_after_s = wait.as_secs(),
                "refused a request: over the caller's quota"
            );
            Err(Box::new(edge_refusal(
                http::StatusCode::TOO_MANY_REQUESTS,
                "RESOURCE_EXHAUSTED",
                "too many requests from this caller",
                Some(wait),
            )))
        }
    }
}

/// 401 with the authenticator's challenge (403 for a known caller without the right), the
/// spec assigning auth failures no JSON-RPC code (they are HTTP's). The reason is logged, not
/// sent.
fn refused(auth: &dyn crate::auth::Authenticator, err: &crate::auth::AuthError) -> Response {
    use crate::auth::AuthError;
    let what = match err {
        AuthError::Forbidden(_) => "forbidden",
        _ => "unauthenticated",
    };
    crate::observe::metrics::refused(what);
    tracing::info!(refused = what, reason = %err, "refused a request: {what}");
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

type Verdict = (http::request::Parts, Result<Arc<Caller>, Box<Response>>);

pin_project_lite::pin_project! {
    /// The future of [`Auth`]: the check, then the inner service's call.
    #[allow(missing_docs)] // pin-project-lite takes no docs on variant fields: see the variants'
    #[project = AuthProj]
    pub enum AuthFuture<S: Service<http::Request<B>>, B> {
        /// Refused at once.
        Refused { response: Option<Response> },
        /// The authenticator (and quota) decide.
        Checking {
            check: BoxFuture<'static, Verdict>,
            rest: Option<(B, S)>,
        },
        /// The request goes on.
        Calling {
            #[pin]
            future: S::Future,
        },
    }
}

impl<S, B> Future for AuthFuture<S, B>
where
    S: Service<http::Request<B>, Response = Response, Error = Infallible>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                AuthProj::Calling { future } => return future.poll(cx),
                AuthProj::Refused { response } => {
                    let response = response
                        .take()
                        .expect("AuthFuture polled after it answered");
                    return Poll::Ready(Ok(response));
                }
                AuthProj::Checking { check, rest } => {
                    let (mut parts, verdict) = ready!(check.as_mut().poll(cx));
                    let Some((body, mut inner)) = rest.take() else {
                        unreachable!("AuthFuture polled after it answered");
                    };
                    match verdict {
                        Err(refusal) => {
                            let mut refusal = as_binding(&parts.headers, *refusal);
                            close_if_unread(&mut refusal, parts.version);
                            return Poll::Ready(Ok(refusal));
                        }
                        Ok(caller) => {
                            parts.extensions.insert(caller);
                            let future = inner.call(http::Request::from_parts(parts, body));
                            self.set(AuthFuture::Calling { future });
                        }
                    }
                }
            }
        }
    }
}

// ----- 3. The body -----

/// Reads the whole request body, at most [`HttpConfig::body_limit`] bytes within
/// [`HttpConfig::body_read_timeout`], and hands the inner service an
/// `http::Request<Bytes>`. Over the limit is 413 (at once, unread, when `Content-Length`
/// says so), too slow 408, unreadable 400: each in the binding's error format (a JSON-RPC
/// envelope with a null `id`, since the request was never read, or an HTTP+JSON error whose
/// `code` is that status).
#[derive(Clone, Debug)]
pub struct BodyLayer {
    limit: usize,
    timeout: Duration,
}

impl BodyLayer {
    /// The limits of `config`, which should have passed [`HttpConfig::check`]: a zero limit
    /// or timeout refuses every body.
    pub fn new(config: &HttpConfig) -> Self {
        debug_assert!(config.check().is_ok(), "{:?}", config.check());
        BodyLayer {
            limit: config.body_limit,
            timeout: config.body_read_timeout,
        }
    }
}

impl<S> tower_layer::Layer<S> for BodyLayer {
    type Service = BodyReader<S>;
    fn layer(&self, inner: S) -> BodyReader<S> {
        BodyReader {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`BodyLayer`].
#[derive(Clone, Debug)]
pub struct BodyReader<S> {
    inner: S,
    layer: BodyLayer,
}

impl<S, B> Service<http::Request<B>> for BodyReader<S>
where
    S: Service<http::Request<Bytes>, Response = Response, Error = Infallible> + Clone,
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BodyFuture<S, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let (parts, body) = req.into_parts();
        let limit = self.layer.limit;
        // hyper's body knows its `Content-Length`: no header lookup to refuse it unread.
        if body.size_hint().lower() > limit as u64 {
            let (status, err) = too_large(limit);
            return BodyFuture::Refused {
                response: Some(refusal(&parts, status, &err)),
            };
        }
        let ready = self.inner.clone();
        BodyFuture::Reading {
            collect: Limited::new(body, limit).collect(),
            timer: None,
            pending: Some((parts, std::mem::replace(&mut self.inner, ready))),
            limit,
            timeout: self.layer.timeout,
        }
    }
}

fn too_large(limit: usize) -> (http::StatusCode, A2aError) {
    (
        http::StatusCode::PAYLOAD_TOO_LARGE,
        A2aError::InvalidRequest(format!("the request body exceeds the {limit}-byte limit")),
    )
}

/// A refusal of a request whose body was not read, in its binding's error format.
fn refusal(parts: &http::request::Parts, status: http::StatusCode, err: &A2aError) -> Response {
    let what = match status {
        http::StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        http::StatusCode::REQUEST_TIMEOUT => "body_timeout",
        _ => "body_unreadable",
    };
    crate::observe::metrics::refused(what);
    tracing::info!(refused = what, path = parts.uri.path(), reason = %err, "refused a request: {what}");
    #[cfg(feature = "grpc")]
    if super::grpc::is_grpc(&parts.headers) {
        let code = match status {
            http::StatusCode::PAYLOAD_TOO_LARGE => "RESOURCE_EXHAUSTED",
            http::StatusCode::REQUEST_TIMEOUT => "DEADLINE_EXCEEDED",
            _ => err.grpc_status(),
        };
        return super::grpc::refusal_as_grpc(&http::HeaderMap::new(), code, &err.to_string());
    }
    let body = if matches!(parts.uri.path(), "" | "/") {
        jsonrpc::failure(&serde_json::Value::Null, err)
    } else {
        Bytes::from(rest_body_as(err, status))
    };
    let mut resp = json(status, body);
    close_if_unread(&mut resp, parts.version);
    resp
}

pin_project_lite::pin_project! {
    /// The future of [`BodyReader`]: the body, then the inner service's call.
    #[allow(missing_docs)] // pin-project-lite takes no docs on variant fields: see the variants'
    #[project = BodyProj]
    pub enum BodyFuture<S, B>
    where
        S: Service<http::Request<Bytes>>,
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        /// Refused before reading.
        Refused {
            response: Option<Response>,
        },
        /// Reading the body; the timer is armed only if it does not come at once (a small
        /// body usually came with its headers).
        Reading {
            #[pin]
            collect: Collect<Limited<B>>,
            timer: Option<Pin<Box<tokio::time::Sleep>>>,
            pending: Option<(http::request::Parts, S)>,
            limit: usize,
            timeout: Duration,
        },
        /// The request goes on.
        Calling {
            #[pin]
            future: S::Future,
        },
    }
}

impl<S, B> Future for BodyFuture<S, B>
where
    S: Service<http::Request<Bytes>, Response = Response, Error = Infallible>,
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (body, parts, mut inner) = match self.as_mut().project() {
            BodyProj::Calling { future } => return future.poll(cx),
            BodyProj::Refused { response } => {
                let response = response
                    .take()
                    .expect("BodyFuture polled after it answered");
                return Poll::Ready(Ok(response));
            }
            BodyProj::Reading {
                collect,
                timer,
                pending,
                limit,
                timeout,
            } => {
                let read = match collect.poll(cx) {
                    Poll::Ready(read) => read.map_err(|e| (*limit, e)),
                    Poll::Pending => {
                        let timer =
                            timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(*timeout)));
                        ready!(timer.as_mut().poll(cx));
                        let (parts, _) =
                            pending.take().expect("BodyFuture polled after it answered");
                        let err = A2aError::InvalidRequest(format!(
                            "the request body did not arrive within {} s",
                            timeout.as_secs_f64()
                        ));
                        let status = http::StatusCode::REQUEST_TIMEOUT;
                        return Poll::Ready(Ok(refusal(&parts, status, &err)));
                    }
                };
                let (parts, inner) = pending.take().expect("BodyFuture polled after it answered");
                match read {
                    Ok(collected) => (collected.to_bytes(), parts, inner),
                    Err((limit, e)) => {
                        let (status, err) = if e.is::<http_body_util::LengthLimitError>() {
                            too_large(limit)
                        } else {
                            (
                                http::StatusCode::BAD_REQUEST,
                                A2aError::InvalidRequest(format!(
                                    "could not read the request body: {e}"
                                )),
                            )
                        };
                        return Poll::Ready(Ok(refusal(&parts, status, &err)));
                    }
                }
            }
        };
        let future = inner.call(http::Request::from_parts(parts, body));
        self.set(BodyFuture::Calling { future });
        self.poll(cx)
    }
}

// ----- 4. The codec -----

/// The two HTTP bindings' codec: JSON-RPC at `/`, HTTP+JSON below it. It reads the caller
/// an [`AuthLayer`] left in the request's extensions into the operation's
/// [`RequestContext`] (the request's other extensions go into the context's); a service that
/// authenticates refuses (500, logged) a request that reached it without one, so a stack
/// missing its `AuthLayer` fails closed. An `Arc<Caller>` is trusted wherever it came from: a
/// host that authenticates in front (see
/// [`extended_card_authenticated_upstream`](crate::server::AgentServiceBuilder::extended_card_authenticated_upstream))
/// may insert one for an agent built without an authenticator, and must then make sure no
/// client can.
#[derive(Clone, Debug)]
pub struct Codec {
    service: AgentService,
    trust_forwarded: bool,
    client_addr_from: Option<ClientAddrFrom>,
    /// The gRPC binding, unless the service turned it off.
    #[cfg(feature = "grpc")]
    grpc: Option<super::grpc::GrpcBinding>,
}

/// Where a host's server leaves a request's client address when it puts no
/// [`ClientAddr`](crate::request::ClientAddr) there (axum's `ConnectInfo<SocketAddr>`).
pub type ClientAddrFrom = fn(&http::Extensions) -> Option<std::net::SocketAddr>;

impl Codec {
    /// The operations of `service`, with the card URLs `config` allows.
    pub fn new(service: AgentService, config: &HttpConfig) -> Self {
        Codec {
            #[cfg(feature = "grpc")]
            grpc: service
                .serves_grpc()
                .then(|| super::grpc::GrpcBinding::new(service.clone(), config.body_limit)),
            service,
            trust_forwarded: config.trust_forwarded_headers,
            client_addr_from: None,
        }
    }

    /// Read the client's address with `read` when the request carries no
    /// [`ClientAddr`](crate::request::ClientAddr).
    pub fn client_addr_from(mut self, read: ClientAddrFrom) -> Self {
        self.client_addr_from = Some(read);
        self
    }
}

impl Service<http::Request<Bytes>> for Codec {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Bytes>) -> Self::Future {
        let this = self.clone();
        // Boxed once, here: the request's future is the whole A2A call inline.
        Box::pin(async move {
            let resp = this.handle(req).await;
            // The agent busy, a caller at its share, the store away: held like the edge's
            // refusals, so a client asking again at once is paced.
            if resp.headers().contains_key(http::header::RETRY_AFTER) {
                return Ok(*paced(Box::new(resp)).await);
            }
            Ok(resp)
        })
    }
}

impl Codec {
    /// The client's address: the server's [`ClientAddr`](crate::request::ClientAddr), or with
    /// trusted forwarded headers, the client the proxy names.
    fn client_addr(&self, parts: &http::request::Parts) -> Option<std::net::IpAddr> {
        let extensions = &parts.extensions;
        let peer = match extensions.get::<crate::request::ClientAddr>() {
            Some(addr) => Some(addr.0.ip()),
            None => self
                .client_addr_from
                .and_then(|read| read(extensions))
                .map(|a| a.ip()),
        };
        if self.trust_forwarded {
            return super::card::forwarded_client(&parts.headers).or(peer);
        }
        peer
    }

    async fn handle(&self, req: http::Request<Bytes>) -> Response {
        let (mut parts, body) = req.into_parts();
        let mut cx = match parts.extensions.remove::<Arc<Caller>>() {
            Some(caller) => RequestContext::new().with_caller(caller),
            None if self.service.authenticator().is_some() => {
                tracing::error!(
                    "a request reached an authenticating agent without a caller: \
                     put an AuthLayer in front of the Codec"
                );
                return edge_refusal_for(
                    &parts.headers,
                    http::StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    "the agent's edge is misconfigured",
                    None,
                );
            }
            None => RequestContext::new(),
        };
        if let Some(ip) = self.client_addr(&parts) {
            cx = cx.with_client_addr(ip);
        }
        // What the layers in front attached (a peer address, a trace span) goes on with it.
        cx.extensions_mut()
            .extend(std::mem::take(&mut parts.extensions));
        // The caller's trace: the operation's span is its child. A malformed `traceparent` is
        // no trace context: the request starts a new trace.
        if let Some(trace) = TraceContext::from_headers(&parts.headers) {
            cx = cx.with_trace_context(trace);
        }
        #[cfg(feature = "grpc")]
        if super::grpc::is_grpc(&parts.headers) {
            return match &self.grpc {
                Some(grpc) => {
                    let trust = self.trust_forwarded;
                    grpc.handle(&self.service, parts, trust, cx, body).await
                }
                None => super::grpc::turned_off(),
            };
        }
        let edge = super::dispatch::Edge {
            parts: &parts,
            trust_forwarded: self.trust_forwarded,
        };
        if matches!(parts.uri.path(), "" | "/") {
            jsonrpc::handle(&self.service, edge, &cx, &body).await
        } else {
            rest::handle(&self.service, edge, cx, &body).await
        }
    }
}
