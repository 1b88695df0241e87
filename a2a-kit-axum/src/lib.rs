//! # a2a-kit-axum
//!
//! Mount an [a2a-kit](a2a_kit) agent into an axum application, or serve it alone.
//!
//! Routers are generic over the application's state (`Router<S>`), so they merge into any
//! app; the agent's own state lives in the agent value.
//!
//! ```no_run
//! use a2a_kit::prelude::*;
//! use a2a_kit_axum::A2a;
//! use axum::{Router, routing::get};
//!
//! # #[derive(Clone)] struct AppState;
//! # async fn demo(agent: impl Agent) -> std::io::Result<()> {
//! let agent = A2a::new(agent).public_url("https://api.example.com/agents/travel");
//! let app: Router = Router::new()
//!     .route("/health", get(|| async { "ok" }))
//!     .nest("/agents/travel", agent.router())
//!     .merge(agent.well_known_router())
//!     .with_state(AppState);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app).await
//! # }
//! ```

#![warn(missing_docs)]

pub mod webhook;

use std::convert::Infallible;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::agent::{Agent, SkillRouter};
use a2a_kit::error::A2aError;
use a2a_kit::protocol::AgentCard;
use a2a_kit::runtime::ExecutionConfig;
use a2a_kit::server::{
    AgentService, AgentServiceBuilder, BindingBody, BindingResponse, jsonrpc, rest,
};
use a2a_kit::store::TaskManager;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use futures::StreamExt;
use futures::future::BoxFuture;

/// The default request body limit (1 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// The well-known path of the agent card.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// An agent ready to mount: configure it, then take its routers.
///
/// The service is built on first use of a router (or [`service`](Self::service)); configure
/// everything before that.
pub struct A2a {
    state: Arc<Mutex<State>>,
    body_limit: usize,
    url_set: bool,
}

enum State {
    Building(Box<AgentServiceBuilder>),
    Built(AgentService),
    Poisoned,
}

impl A2a {
    /// Wrap an agent (e.g. a `#[a2a_agent]` struct).
    pub fn new(agent: impl Agent) -> Self {
        Self::from_builder(AgentService::builder(agent))
    }

    /// Wrap a configured [`AgentServiceBuilder`].
    pub fn from_builder(builder: AgentServiceBuilder) -> Self {
        A2a {
            state: Arc::new(Mutex::new(State::Building(Box::new(builder)))),
            body_limit: DEFAULT_BODY_LIMIT,
            url_set: false,
        }
    }

    /// Wrap an already built service.
    pub fn from_service(service: AgentService) -> Self {
        A2a {
            state: Arc::new(Mutex::new(State::Built(service))),
            body_limit: DEFAULT_BODY_LIMIT,
            url_set: false,
        }
    }

    fn configure(self, f: impl FnOnce(AgentServiceBuilder) -> AgentServiceBuilder) -> Self {
        {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            *st = match std::mem::replace(&mut *st, State::Poisoned) {
                State::Building(b) => State::Building(Box::new(f(*b))),
                built => {
                    tracing::warn!(
                        "A2a configured after its routers were taken; the change is ignored"
                    );
                    built
                }
            };
        }
        self
    }

    /// The absolute URL clients reach the agent at (include the mount prefix).
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.url_set = true;
        self.configure(|b| b.public_url(url))
    }
    /// The task store (default: in-memory).
    pub fn task_manager(self, store: impl TaskManager) -> Self {
        self.configure(|b| b.task_manager(store))
    }
    /// The task store, shared.
    pub fn shared_task_manager(self, store: Arc<dyn TaskManager>) -> Self {
        self.configure(|b| b.shared_task_manager(store))
    }
    /// Execution knobs.
    pub fn execution(self, config: ExecutionConfig) -> Self {
        self.configure(|b| b.execution(config))
    }
    /// Routing step 5.
    pub fn skill_router(self, router: impl SkillRouter) -> Self {
        self.configure(|b| b.skill_router(router))
    }
    /// Deliver push notifications (outbox, retries, SSRF guard); see `a2a_kit::push`.
    #[cfg(feature = "push")]
    pub fn push_delivery(self, config: a2a_kit::push::PushConfig) -> Self {
        self.configure(|b| b.push_delivery(config))
    }
    /// Serve an extended card.
    pub fn extended_card(self, card: AgentCard) -> Self {
        self.configure(|b| b.extended_card(card))
    }
    /// Edit the card.
    pub fn card(self, f: impl FnOnce(&mut AgentCard) + Send + 'static) -> Self {
        self.configure(|b| b.card(f))
    }
    /// Override any builder setting.
    pub fn with_builder(self, f: impl FnOnce(AgentServiceBuilder) -> AgentServiceBuilder) -> Self {
        self.configure(f)
    }
    /// The largest accepted request body (default [`DEFAULT_BODY_LIMIT`]); larger ones get 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The service (built now if it was not yet).
    pub fn service(&self) -> AgentService {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *st, State::Poisoned) {
            State::Building(b) => {
                let svc = b.build();
                *st = State::Built(svc.clone());
                svc
            }
            State::Built(svc) => {
                *st = State::Built(svc.clone());
                svc
            }
            State::Poisoned => unreachable!("A2a state is only poisoned inside this function"),
        }
    }

    /// The agent's endpoints: JSON-RPC at `/` and HTTP+JSON below it. Nest it anywhere.
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        agent_router(self.service(), self.body_limit)
    }

    /// `GET /.well-known/agent-card.json` (and the pre-0.3 `/.well-known/agent.json`). Merge
    /// it at the root of the app.
    pub fn well_known_router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        card_router(self.service())
    }

    /// Both routers at the root: a complete standalone app.
    pub fn into_router(self) -> Router {
        self.router().merge(self.well_known_router())
    }

    /// Serve on `addr` until Ctrl-C / SIGTERM, then shut down gracefully (running tasks get
    /// [`SHUTDOWN_GRACE`] to finish; the rest end FAILED). The public URL defaults to the
    /// bound address.
    pub async fn serve(self, addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_listener(listener, shutdown_signal()).await
    }

    /// Serve on a bound listener until `shutdown` resolves.
    pub async fn serve_listener(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let local: SocketAddr = listener.local_addr()?;
        let me = {
            let unset = matches!(
                &*self.state.lock().unwrap_or_else(|p| p.into_inner()),
                State::Building(_)
            );
            if unset && !self.url_set {
                self.public_url(format!("http://{local}"))
            } else {
                self
            }
        };
        let service = me.service();
        match service.recover().await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(tasks = n, "ended tasks left running by a previous process"),
            Err(e) => tracing::error!(error = %e, "could not recover tasks from the store"),
        }
        let app = me.into_router();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        // Streams write many small frames: without TCP_NODELAY, Nagle's algorithm stalls them.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let server = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop_rx.await;
            })
            .into_future();
        let mut server = tokio::spawn(server);
        tokio::select! {
            r = &mut server => return r.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            _ = shutdown => {}
        }
        tracing::info!("shutting down: letting running tasks finish");
        let _ = stop_tx.send(());
        service.shutdown(SHUTDOWN_GRACE).await;
        // Streams on tasks that ended close by themselves; give them a moment, then stop.
        match tokio::time::timeout(Duration::from_secs(2), &mut server).await {
            Ok(r) => r.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            Err(_) => {
                server.abort();
                Ok(())
            }
        }
    }
}

/// How long running tasks get to finish when a standalone server shuts down.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serve `agent` alone on `addr`: the one-call way to run an agent.
///
/// ```no_run
/// # async fn demo(agent: impl a2a_kit::agent::Agent) -> std::io::Result<()> {
/// a2a_kit_axum::serve(agent, "127.0.0.1:3000").await
/// # }
/// ```
pub async fn serve(agent: impl Agent, addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<()> {
    A2a::new(agent).serve(addr).await
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// The agent's endpoints for a built service.
pub fn agent_router<S: Clone + Send + Sync + 'static>(
    service: AgentService,
    body_limit: usize,
) -> Router<S> {
    let rpc = service.clone();
    Router::new()
        .route(
            "/",
            // The whole request, not the `HeaderMap` extractor: that one clones every header.
            post(move |req: Request| {
                let service = rpc.clone();
                // Boxed here, once: the request's future is several KB (the whole A2A call
                // inline), and axum would otherwise move it by value twice more before boxing.
                let fut: BoxFuture<'static, Response> = Box::pin(async move {
                    let (parts, body) = req.into_parts();
                    let bytes = match read_body(body, body_limit).await {
                        Ok(b) => b,
                        Err(resp) => return resp,
                    };
                    into_response(
                        jsonrpc::handle(&service, &parts.headers, parts.uri.query(), &bytes).await,
                    )
                });
                fut
            }),
        )
        .fallback(move |req: Request| {
            let service = service.clone();
            let fut: BoxFuture<'static, Response> = Box::pin(async move {
                let (parts, body) = req.into_parts();
                let bytes = match read_body(body, body_limit).await {
                    Ok(b) => b,
                    Err(resp) => return resp,
                };
                let (method, uri) = (&parts.method, &parts.uri);
                into_response(
                    rest::handle(
                        &service,
                        method,
                        uri.path(),
                        uri.query(),
                        &parts.headers,
                        &bytes,
                    )
                    .await,
                )
            });
            fut
        })
}

/// The well-known card routes for a built service.
pub fn card_router<S: Clone + Send + Sync + 'static>(service: AgentService) -> Router<S> {
    let handler = move |headers: HeaderMap| {
        let service = service.clone();
        async move { into_response(service.card_response(&headers)) }
    };
    Router::new()
        .route(AGENT_CARD_PATH, get(handler.clone()))
        .route("/.well-known/agent.json", get(handler))
}

async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, Response> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_large {
            let err = A2aError::InvalidRequest(format!(
                "the request body exceeds the {limit}-byte limit"
            ));
            let mut resp = into_response(BindingResponse::json(
                StatusCode::PAYLOAD_TOO_LARGE,
                serde_json::to_vec(&err.to_rest_body()).unwrap_or_default(),
            ));
            *resp.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            resp
        } else {
            let err = A2aError::InvalidRequest(format!("could not read the request body: {e}"));
            into_response(BindingResponse::json(
                StatusCode::BAD_REQUEST,
                serde_json::to_vec(&err.to_rest_body()).unwrap_or_default(),
            ))
        }
    })
}

/// Convert a binding response into an axum response.
pub fn into_response(resp: BindingResponse) -> Response {
    let body = match resp.body {
        BindingBody::Full(b) => Body::from(b),
        BindingBody::Sse(s) => Body::from_stream(s.map(Ok::<_, Infallible>)),
    };
    let mut out = Response::new(body);
    *out.status_mut() = resp.status;
    *out.headers_mut() = resp.headers;
    out
}
