//! # a2a-kit-axum
//!
//! Mount an [a2a-kit](a2a_kit) agent into an axum application, or serve it alone.
//!
//! Configure and build the agent once with [`AgentService::builder`] (checked when built),
//! then mount the built service: [`router`] (JSON-RPC at `/`, HTTP+JSON and the card below
//! it; nest it anywhere, several agents side by side) and, for a nested agent that should
//! also answer at the host's root, [`well_known_router`]. Routers are generic over the
//! application's state (`Router<S>`), so they merge into any app; the agent's own state lives
//! in the agent value. Both wrap [`A2aHttpService`], the tower service plain hyper can mount
//! too.
//!
//! With the `console` feature, [`console::Console`] serves a console for the agent in the
//! browser at `/_console/` (`a2a console URL` serves it for any agent).
//!
//! ```no_run
//! use a2a_kit::server::AgentService;
//! use axum::{Router, routing::get};
//!
//! # #[derive(Clone)] struct AppState;
//! # async fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), Box<dyn std::error::Error>> {
//! let service = AgentService::builder(agent)
//!     .public_url("https://api.example.com/agents/travel")
//!     .build()?;
//! let app: Router = Router::new()
//!     .route("/health", get(|| async { "ok" }))
//!     .nest("/agents/travel", a2a_kit_axum::router(&service))
//!     .merge(a2a_kit_axum::well_known_router(&service))
//!     .with_state(AppState);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "console")]
pub mod console;
mod server;
pub mod webhook;

pub use server::{RateLimit, ServerLimits};

use std::net::SocketAddr;
use std::time::Duration;

/// How each request is treated at the edge (body size and time, forwarded headers).
pub use a2a_kit::binding::HttpConfig;
use a2a_kit::binding::{A2aBody, A2aHttpService, LEGACY_AGENT_CARD_PATH, jwks_response};
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_kit::skill::Agent;
use axum::Router;
use axum::extract::{OriginalUri, Request};
use axum::http::Response;
use axum::routing::get;

/// The well-known path of the agent card.
pub use a2a_kit::binding::AGENT_CARD_PATH;
/// The well-known path of the agent's public signing keys (a JWKS).
pub use a2a_kit::signing::JWKS_PATH;

/// How long working tasks get to finish when a standalone server shuts down.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The agent's endpoints: JSON-RPC at `/`, HTTP+JSON below it and its card at
/// [`AGENT_CARD_PATH`] below it (and its signing keys at [`JWKS_PATH`] when it publishes any).
/// Nest it where the agent lives: nested at `/agents/travel`, the card is at
/// `/agents/travel/.well-known/agent-card.json` and, without a public URL, names
/// `http://HOST/agents/travel`. Several agents nest side by side.
///
/// Pass the [`AgentService`] (the default [`HttpConfig`]) or an [`A2aHttpService`] made with
/// the configuration of your choice:
///
/// ```
/// # fn demo(service: a2a_kit::server::AgentService) -> Result<(), Box<dyn std::error::Error>> {
/// use a2a_kit::binding::{A2aHttpService, HttpConfig};
/// let plain: axum::Router = a2a_kit_axum::router(&service);
/// let edge = A2aHttpService::with_config(service, HttpConfig::default().body_limit(64 * 1024))?;
/// let limited: axum::Router = a2a_kit_axum::router(&edge);
/// # let _ = (plain, limited); Ok(()) }
/// ```
pub fn router<S: Clone + Send + Sync + 'static>(agent: impl Into<A2aHttpService>) -> Router<S> {
    let http: A2aHttpService = agent.into();
    let http = http.client_addr_from(connect_info);
    let service = http.agent_service().clone();
    with_jwks(
        Router::new()
            .route(AGENT_CARD_PATH, get(nested_card(http.clone())))
            .route(LEGACY_AGENT_CARD_PATH, get(nested_card(http.clone()))),
        &service,
    )
    .route_service("/", http.clone())
    .fallback_service(http)
}

/// The client's address when the request carries no `ClientAddr`: the standalone server's
/// (see `server::polled_for`), else what axum's `ConnectInfo` holds when the
/// app is served with `into_make_service_with_connect_info::<SocketAddr>()`. Anonymous
/// callers' shares are counted by it.
fn connect_info(extensions: &http::Extensions) -> Option<SocketAddr> {
    server::polled_for().or_else(|| {
        extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|info| info.0)
    })
}

/// `GET` [`JWKS_PATH`]: the public keys the agent signs its card and push deliveries with
/// (so a signature's `jku` can point there), cached and revalidated like the card. Added
/// only when the agent publishes a key.
fn with_jwks<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    service: &AgentService,
) -> Router<S> {
    if service.jwks_document().is_none() {
        return router;
    }
    let service = service.clone();
    router.route(
        JWKS_PATH,
        get(move |request: Request| {
            let (parts, _) = request.into_parts();
            std::future::ready(jwks_response(&service, &parts))
        }),
    )
}

/// The card, naming the path the router is nested at (what the outer routers stripped).
fn nested_card(
    http: A2aHttpService,
) -> impl Fn(OriginalUri, Request) -> std::future::Ready<Response<A2aBody>> + Clone {
    move |OriginalUri(original): OriginalUri, request: Request| {
        let (parts, _) = request.into_parts();
        let mount = original
            .path()
            .strip_suffix(parts.uri.path())
            .unwrap_or_default();
        std::future::ready(http.card_response(&parts, mount))
    }
}

/// `GET /.well-known/agent-card.json` (and the pre-0.3 `/.well-known/agent.json`) at the root
/// of the app: merge it there for the host's main agent when that agent is nested elsewhere
/// ([`router`] at the root serves these paths itself). Without a public URL its card names
/// the host's root, so for a nested agent set one, or let clients use the card under the
/// agent's own path. Takes what [`router`] takes.
pub fn well_known_router<S: Clone + Send + Sync + 'static>(
    agent: impl Into<A2aHttpService>,
) -> Router<S> {
    let http: A2aHttpService = agent.into();
    let service = http.agent_service().clone();
    let handler = move |request: Request| {
        let (parts, _) = request.into_parts();
        std::future::ready(http.card_response(&parts, ""))
    };
    let card_routes = Router::new()
        .route(AGENT_CARD_PATH, get(handler.clone()))
        .route(LEGACY_AGENT_CARD_PATH, get(handler));
    with_jwks(card_routes, &service)
}

/// The agent at the root, card included: a complete standalone app (see [`router`]).
pub fn app(agent: impl Into<A2aHttpService>) -> Router {
    router(agent)
}

/// Serve `agent` alone on `addr` with the default configuration: the one-call way to run an
/// agent. See [`serve_builder`] and [`serve_service`].
///
/// ```no_run
/// # async fn demo(agent: impl a2a_kit::skill::Agent) -> std::io::Result<()> {
/// a2a_kit_axum::serve(agent, "127.0.0.1:3000").await
/// # }
/// ```
pub async fn serve(agent: impl Agent, addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<()> {
    serve_builder(AgentService::builder(agent), addr).await
}

/// Build and serve a configured agent on `addr` until Ctrl-C / SIGTERM. Without a public
/// URL, the card names the host each client reached it at; a configuration `build` refuses
/// is an [`InvalidInput`](std::io::ErrorKind::InvalidInput) error naming what is wrong.
pub async fn serve_builder(
    builder: AgentServiceBuilder,
    addr: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let service = builder
        .build()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    serve_service(service, listener, shutdown_signal()).await
}

/// Serve a built service on a bound listener until `shutdown` resolves, then shut down
/// gracefully: working tasks get [`SHUTDOWN_GRACE`] to finish; the rest end FAILED, except
/// tasks waiting for the user's reply with a durable store, which the next process continues
/// ([`AgentService::shutdown`]). An idle agent stops at once. Tasks a previous process left
/// running end FAILED first ([`AgentService::recover`]). Connections are bounded by the
/// default [`ServerLimits`]; see [`serve_service_with`].
pub async fn serve_service(
    service: AgentService,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_service_with(service, listener, shutdown, ServerLimits::default()).await
}

/// [`serve_service`] with these connection limits: HTTP/1.1 and h2c, each connection given
/// [`header_read_timeout`](ServerLimits::header_read_timeout) to send its headers (and the
/// same when idle between requests), at most
/// [`max_connections`](ServerLimits::max_connections) at once, and each request as
/// [`http`](ServerLimits::http) says (the body's size and time). Limits
/// that make no sense (zero connections, zero timeouts) are an
/// [`InvalidInput`](std::io::ErrorKind::InvalidInput) error.
///
/// ```no_run
/// # async fn demo(service: a2a_kit::server::AgentService) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:3000").await?;
/// let limits = a2a_kit_axum::ServerLimits { max_connections: 10_000, ..Default::default() };
/// a2a_kit_axum::serve_service_with(service, listener, a2a_kit_axum::shutdown_signal(), limits).await
/// # }
/// ```
pub async fn serve_service_with(
    service: AgentService,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    limits: ServerLimits,
) -> std::io::Result<()> {
    serve_service_with_routes(service, Router::new(), listener, shutdown, limits).await
}

/// [`serve_service_with`], with the host's own `routes` beside the agent's (a `/metrics`
/// route, a health check): they are served behind the same connection limits.
///
/// ```no_run
/// # async fn demo(service: a2a_kit::server::AgentService) -> std::io::Result<()> {
/// use axum::routing::get;
/// let routes = axum::Router::new().route("/healthz", get(|| async { "ok" }));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// a2a_kit_axum::serve_service_with_routes(
///     service, routes, listener, a2a_kit_axum::shutdown_signal(), Default::default(),
/// ).await
/// # }
/// ```
pub async fn serve_service_with_routes(
    service: AgentService,
    routes: Router,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    limits: ServerLimits,
) -> std::io::Result<()> {
    let _: SocketAddr = listener.local_addr()?;
    // A configuration that makes no sense stops the start before anything is touched.
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    limits.check().map_err(invalid)?;
    let edge = A2aHttpService::with_config(service.clone(), limits.http.clone())
        .map_err(|e| invalid(e.to_string()))?;
    match service.recover().await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(tasks = n, "ended tasks left running by a previous process"),
        Err(e) => tracing::error!(error = %e, "could not recover tasks from the store"),
    }
    // No second router in front of the agent's when the host adds none.
    let app = if routes.has_routes() {
        routes.merge(app(edge))
    } else {
        app(edge)
    };
    let drain = async {
        tracing::info!("shutting down: letting running tasks finish");
        service.shutdown(SHUTDOWN_GRACE).await;
    };
    server::run(listener, app, &limits, shutdown, drain).await
}

/// The kit's metrics as Prometheus text (feature `prometheus`), for a route the host mounts
/// where it wants:
///
/// ```
/// let (recorder, handle) = a2a_kit::observe::prometheus::recorder();
/// // a2a_kit::observe::metrics::install(vec![Box::new(recorder)]).unwrap();
/// # drop(recorder);
/// let app: axum::Router = axum::Router::new().route("/metrics", a2a_kit_axum::metrics_route(handle));
/// ```
#[cfg(feature = "prometheus")]
pub fn metrics_route<S: Clone + Send + Sync + 'static>(
    handle: a2a_kit::observe::prometheus::PrometheusHandle,
) -> axum::routing::MethodRouter<S> {
    get(move || {
        let handle = handle.clone();
        async move {
            (
                [(
                    http::header::CONTENT_TYPE,
                    a2a_kit::observe::prometheus::CONTENT_TYPE,
                )],
                handle.render(),
            )
        }
    })
}

/// Resolves on Ctrl-C or SIGTERM. SIGTERM is caught from the call on (not from the first
/// poll): a process that calls it before saying it is ready never dies of an early SIGTERM.
/// Call it inside the Tokio runtime.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    async move {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async move {
            match term {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    }
}
