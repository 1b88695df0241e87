//! [`A2aHttpService`]: both bindings behind one `tower::Service<http::Request<B>>`.

use std::convert::Infallible;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use super::edge::{
    Auth, AuthFuture, AuthLayer, BodyLayer, BodyReader, Card, CardLayer, Codec, HttpConfig,
    InvalidHttpConfig,
};
use super::response::A2aBody;
use crate::server::AgentService;

/// An agent's JSON-RPC endpoint (at `/`), HTTP+JSON endpoints (below it) and card (at
/// [`AGENT_CARD_PATH`](super::AGENT_CARD_PATH) below it) as one tower service: mount it where
/// the agent lives. Without a public URL, the card names the request's host and the paths it
/// sees, so a server that strips a prefix before calling it should serve the card itself with
/// [`card_response`](Self::card_response) and that prefix (a2a-kit-axum's router does).
///
/// It is the edge's layers ([`CardLayer`], [`AuthLayer`], [`BodyLayer`]) around the
/// [`Codec`] (see [`edge`](super::edge)); the same pieces compose with other tower layers.
/// Request bodies over the configured limit are refused with 413; anything else a client
/// gets wrong is an A2A error in the binding's format, never a transport error.
///
/// ```
/// # use a2a_kit::binding::{A2aHttpService, HttpConfig};
/// # fn demo(service: a2a_kit::server::AgentService) -> Result<(), a2a_kit::binding::InvalidHttpConfig> {
/// let http = A2aHttpService::with_config(service, HttpConfig::default().body_limit(64 * 1024))?;
/// // axum: Router::new().nest_service("/agents/travel", http)
/// // hyper: hyper_util::service::TowerToHyperService::new(http)
/// # let _ = http; Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct A2aHttpService {
    service: AgentService,
    config: HttpConfig,
    stack: Card<Auth<BodyReader<Codec>>>,
}

impl A2aHttpService {
    /// Serve `service` over both bindings with the default [`HttpConfig`].
    pub fn new(service: AgentService) -> Self {
        Self::compose(service, HttpConfig::default())
    }

    /// Serve `service` over both bindings as `config` says; a configuration that makes no
    /// sense (a zero body limit or timeout) is refused here, not at the first request.
    pub fn with_config(
        service: AgentService,
        config: HttpConfig,
    ) -> Result<Self, InvalidHttpConfig> {
        config.check()?;
        Ok(Self::compose(service, config))
    }

    /// The same service, reading the client's address with `read` when the server puts no
    /// [`ClientAddr`](crate::request::ClientAddr) in a request (a2a-kit-axum's router reads
    /// axum's `ConnectInfo`): anonymous callers' shares are counted by it.
    pub fn client_addr_from(self, read: super::edge::ClientAddrFrom) -> Self {
        Self::compose_reading(self.service, self.config, Some(read))
    }

    fn compose(service: AgentService, config: HttpConfig) -> Self {
        Self::compose_reading(service, config, None)
    }

    fn compose_reading(
        service: AgentService,
        config: HttpConfig,
        read: Option<super::edge::ClientAddrFrom>,
    ) -> Self {
        let mut codec = Codec::new(service.clone(), &config);
        if let Some(read) = read {
            codec = codec.client_addr_from(read);
        }
        let stack = CardLayer::new(service.clone(), &config)
            .layer(AuthLayer::new(service.clone()).layer(BodyLayer::new(&config).layer(codec)));
        A2aHttpService {
            service,
            config,
            stack,
        }
    }

    /// The agent service behind it.
    pub fn agent_service(&self) -> &AgentService {
        &self.service
    }

    /// Its configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// The agent card for a request that reached the agent mounted at `mount_path` (`""` at
    /// the root): see [`card_response`](super::card_response).
    pub fn card_response(
        &self,
        request: &http::request::Parts,
        mount_path: &str,
    ) -> http::Response<A2aBody> {
        super::card_response(
            &self.service,
            request,
            mount_path,
            self.config.trust_forwarded_headers,
        )
    }

    /// Handle one request.
    pub async fn handle<B>(&self, req: http::Request<B>) -> http::Response<A2aBody>
    where
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut stack = self.stack.clone();
        let ready =
            std::future::poll_fn(|cx| Service::<http::Request<B>>::poll_ready(&mut stack, cx));
        if let Err(never) = ready.await {
            match never {}
        }
        match stack.call(req).await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    }
}

impl<B> Service<http::Request<B>> for A2aHttpService
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<A2aBody>;
    type Error = Infallible;
    type Future = A2aHttpFuture<B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<http::Request<B>>::poll_ready(&mut self.stack, cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        self.stack.call(req)
    }
}

impl From<AgentService> for A2aHttpService {
    fn from(service: AgentService) -> Self {
        A2aHttpService::new(service)
    }
}

impl From<&AgentService> for A2aHttpService {
    fn from(service: &AgentService) -> Self {
        A2aHttpService::new(service.clone())
    }
}

impl From<&A2aHttpService> for A2aHttpService {
    fn from(http: &A2aHttpService) -> Self {
        http.clone()
    }
}

/// The future of an [`A2aHttpService`] call.
pub type A2aHttpFuture<B> = futures::future::Either<
    futures::future::Ready<Result<http::Response<A2aBody>, Infallible>>,
    AuthFuture<BodyReader<Codec>, B>,
>;
