//! How a client is configured, and what it holds once built.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use reqwest::Url;

use super::transport::Http;
use super::*;

#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) bindings: Vec<Binding>,
    pub(super) client_order: bool,
    /// The protocol version to speak; `None`: the newest the card offers.
    pub(super) version: Option<ProtocolVersion>,
    pub(super) timeout: Option<Duration>,
    pub(super) stream_idle_timeout: Option<Duration>,
    pub(super) resume: ResumePolicy,
    pub(super) card_ttl: Duration,
    /// How long a connection may take (HTTP, and the gRPC channel's).
    pub(super) connect_timeout: Duration,
    #[cfg(feature = "jose")]
    pub(super) card_verifier: Option<crate::signing::Verifier>,
}

/// Configures an [`A2aClient`].
#[must_use]
pub struct ClientBuilder {
    http: Option<reqwest::Client>,
    interceptors: Vec<Arc<dyn Interceptor>>,
    trusted_origins: Vec<Url>,
    extensions: Vec<String>,
    config: Config,
    cache: CardCache,
    user_agent: String,
    #[cfg(feature = "rustls")]
    roots: Vec<reqwest::Certificate>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            http: None,
            interceptors: Vec::new(),
            trusted_origins: Vec::new(),
            extensions: Vec::new(),
            config: Config {
                bindings: Vec::new(),
                client_order: false,
                version: None,
                timeout: Some(Duration::from_secs(300)),
                stream_idle_timeout: Some(Duration::from_secs(120)),
                resume: ResumePolicy::default(),
                card_ttl: Duration::from_secs(300),
                connect_timeout: Duration::from_secs(10),
                #[cfg(feature = "jose")]
                card_verifier: None,
            },
            cache: CardCache::default(),
            user_agent: format!("a2a-kit/{}", env!("CARGO_PKG_VERSION")),
            #[cfg(feature = "rustls")]
            roots: Vec::new(),
        }
    }
}

impl ClientBuilder {
    /// Use only this binding (JSON-RPC, HTTP+JSON, or gRPC with feature `grpc`); the card
    /// must offer it.
    pub fn binding(mut self, binding: Binding) -> Self {
        self.config.bindings = vec![binding];
        self
    }

    /// Bindings in the client's order of preference; by default the card's order wins among
    /// them (the agent lists its preferred interface first), see
    /// [`prefer_client_order`](Self::prefer_client_order).
    pub fn bindings(mut self, bindings: impl IntoIterator<Item = Binding>) -> Self {
        self.config.bindings = bindings.into_iter().collect();
        self
    }

    /// Speak this A2A version only; the card must offer it. By default the client speaks 1.0
    /// when the card offers it, else 0.3 (over JSON-RPC or HTTP+JSON; see
    /// [`A2aClient::protocol_version`]): forcing [`ProtocolVersion::V0_3`] speaks 0.3 to an
    /// agent that offers both (to test it as a 0.3 client would see it).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), a2a_kit::client::ClientError> {
    /// use a2a_kit::client::A2aClient;
    /// use a2a_kit::protocol::ProtocolVersion;
    /// let client = A2aClient::builder()
    ///     .protocol_version(ProtocolVersion::V0_3)
    ///     .connect("http://127.0.0.1:3000")
    ///     .await?;
    /// assert_eq!(client.protocol_version(), ProtocolVersion::V0_3);
    /// # Ok(()) }
    /// ```
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.config.version = Some(version);
        self
    }

    /// Let the order given to [`bindings`](Self::bindings) win over the card's.
    pub fn prefer_client_order(mut self, yes: bool) -> Self {
        self.config.client_order = yes;
        self
    }

    /// Add an interceptor (run in the order added). Interceptors (credentials) run only for
    /// requests to the agent's origin (scheme, host and port of the URL given to
    /// [`connect`](Self::connect), or of the card URL given to [`from_card`](Self::from_card))
    /// and to origins added with [`trust_origin`](Self::trust_origin): a card that names
    /// another host for its interfaces gets no credentials there. The client follows no
    /// redirect to another origin either (with a reqwest client of your own, its policy
    /// applies).
    pub fn interceptor(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Arc::new(interceptor));
        self
    }

    /// Send credentials to `url`'s origin too (an agent whose card lives on one host and its
    /// interfaces on another). An error names a URL that does not parse.
    pub fn trust_origin(mut self, url: &str) -> Result<Self, ClientError> {
        let url = Url::parse(url).map_err(|e| ClientError::InvalidUrl(format!("`{url}`: {e}")))?;
        self.trusted_origins.push(url);
        Ok(self)
    }

    /// `Authorization: Bearer <token>` on every request to the agent.
    pub fn bearer_token(self, token: impl AsRef<str>) -> Result<Self, ClientError> {
        Ok(self.interceptor(BearerAuth::new(token)?))
    }

    /// `Authorization: Bearer <token>` on every request to the agent, the token asked from
    /// `provider` each time (tokens that expire and are renewed). Sent to the agent's origin
    /// only, as every credential (see [`interceptor`](Self::interceptor)).
    pub fn bearer_token_provider(self, provider: impl TokenProvider) -> Self {
        self.interceptor(BearerTokenProvider::new(provider))
    }

    /// An API key in header `name`.
    pub fn api_key(self, name: impl Into<String>, key: impl Into<String>) -> Self {
        self.interceptor(ApiKeyAuth::header(name, key))
    }

    /// A header on every request.
    pub fn header(self, name: &str, value: &str) -> Result<Self, ClientError> {
        Ok(self.interceptor(StaticHeaders::from_pairs([(name, value)])?))
    }

    /// Extensions to activate (`A2A-Extensions`).
    pub fn extensions<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.extensions = uris.into_iter().map(Into::into).collect();
        self
    }

    /// Overall time limit of a unary call, blocking sends included (default 300 s; `None`:
    /// no limit). Streams are not limited; see [`stream_idle_timeout`](Self::stream_idle_timeout).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// Time limit for establishing a connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// A stream that receives nothing, not even a keep-alive comment, for this long counts
    /// as dropped and is resumed (default 120 s; `None`: wait forever).
    pub fn stream_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.stream_idle_timeout = timeout;
        self
    }

    /// How dropped streams are resumed.
    pub fn resume(mut self, policy: ResumePolicy) -> Self {
        self.config.resume = policy;
        self
    }

    /// How long a card without `Cache-Control: max-age` is used before revalidating
    /// (default 300 s).
    pub fn card_ttl(mut self, ttl: Duration) -> Self {
        self.config.card_ttl = ttl;
        self
    }

    /// Accept only signed cards (feature `jose`): every card this client fetches or
    /// revalidates (and one given to [`from_card`](Self::from_card)) must carry a signature
    /// that verifies against one of `verifier`'s keys, over the card as received; otherwise
    /// the card is refused with [`ClientError::CardSignature`] saying why (no signature,
    /// unknown `kid`, bad signature, an `alg` its key does not take). The key that verified
    /// it: [`A2aClient::card_verified_by`].
    #[cfg(feature = "jose")]
    pub fn verify_card(mut self, verifier: crate::signing::Verifier) -> Self {
        self.config.card_verifier = Some(verifier);
        self
    }

    /// Share a card cache between clients.
    pub fn card_cache(mut self, cache: CardCache) -> Self {
        self.cache = cache;
        self
    }

    /// Use this reqwest client (its own timeouts and TLS settings apply; `connect_timeout`
    /// is then ignored).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Trust the certificates of this PEM document (a private CA, a self-signed agent) besides
    /// the usual web roots, for https:// agents. An error names what is not a certificate.
    #[cfg(feature = "rustls")]
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, ClientError> {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| ClientError::Certificate(format!("not a PEM certificate bundle: {e}")))?;
        if certs.is_empty() {
            return Err(ClientError::Certificate(
                "no certificate in it (expected -----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        self.roots.extend(certs);
        Ok(self)
    }

    /// The `User-Agent` (default `a2a-kit/<version>`).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// The HTTP layer for an agent at `agent` (its base or card URL).
    pub(super) fn http(&self, agent: &str) -> Result<Http, ClientError> {
        let client = match &self.http {
            Some(c) => c.clone(),
            None => {
                let builder = reqwest::Client::builder()
                    .connect_timeout(self.config.connect_timeout)
                    .user_agent(self.user_agent.clone())
                    .redirect(same_origin_redirects());
                #[cfg(feature = "rustls")]
                let builder = self
                    .roots
                    .iter()
                    .fold(builder, |b, cert| b.add_root_certificate(cert.clone()));
                builder.build().map_err(|e| {
                    ClientError::InvalidUrl(format!("could not build the HTTP client: {e}"))
                })?
            }
        };
        let mut credential_origins = self.trusted_origins.clone();
        credential_origins.extend(Url::parse(agent.trim()).ok());
        Ok(Http {
            client,
            interceptors: self.interceptors.clone(),
            extensions: self.extensions.clone(),
            credential_origins,
        })
    }

    /// Resolve the agent card from `url` (an agent's base URL, or its card URL) and choose
    /// the interface.
    pub async fn connect(self, url: impl AsRef<str>) -> Result<A2aClient, ClientError> {
        let base = url.as_ref().trim().to_string();
        let http = self.http(&base)?;
        let fetched = self
            .cache
            .resolve(
                &http,
                &base,
                self.config.card_ttl,
                false,
                self.config.version,
            )
            .await?;
        let verified_by = self.config.check_card(&fetched.raw)?;
        let selected = card::select_interface(
            &fetched.card,
            Some(&fetched.raw),
            &fetched.url,
            &self.config.bindings,
            self.config.client_order,
            self.config.version,
        )?;
        Ok(self.finish(http, base, fetched.card, fetched.url, selected, verified_by))
    }

    /// Build a client from a card already in hand; `card_url` resolves relative interface
    /// URLs (and is where [`A2aClient::refresh_card`] looks).
    pub fn from_card(self, card: AgentCard, card_url: &str) -> Result<A2aClient, ClientError> {
        let http = self.http(card_url)?;
        let url = Url::parse(card_url)
            .map_err(|e| ClientError::InvalidUrl(format!("`{card_url}`: {e}")))?;
        let raw = serde_json::to_value(&card).unwrap_or_default();
        let verified_by = self.config.check_card(&raw)?;
        let selected = card::select_interface(
            &card,
            Some(&raw),
            &url,
            &self.config.bindings,
            self.config.client_order,
            self.config.version,
        )?;
        Ok(self.finish(
            http,
            card_url.to_string(),
            Arc::new(card),
            url,
            selected,
            verified_by,
        ))
    }

    pub(super) fn finish(
        self,
        http: Http,
        base: String,
        card: Arc<AgentCard>,
        card_url: Url,
        s: card::Selected,
        verified_by: Option<String>,
    ) -> A2aClient {
        let timeout = self.config.timeout;
        A2aClient {
            inner: Arc::new(Inner {
                http,
                config: self.config,
                cache: self.cache,
                base,
                resolved: RwLock::new(Arc::new(Resolved {
                    card,
                    card_url,
                    interface: s.interface,
                    binding: s.binding,
                    endpoint: s.endpoint,
                    version: s.version,
                    verified_by,
                    #[cfg(feature = "grpc")]
                    grpc: Default::default(),
                })),
                next_id: AtomicU64::new(1),
                rest_subscribe_post: AtomicBool::new(false),
            }),
            timeout,
        }
    }
}

/// Follow up to 10 redirects within one origin, none to another: a request carrying the
/// agent's credentials never reaches a host the user did not send it to.
pub(super) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .last()
            .is_some_and(|from| transport::same_origin(from, attempt.url()));
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

pub(super) struct Inner {
    pub(super) http: Http,
    pub(super) config: Config,
    pub(super) cache: CardCache,
    pub(super) base: String,
    pub(super) resolved: RwLock<Arc<Resolved>>,
    pub(super) next_id: AtomicU64,
    /// The agent's REST binding wanted POST for `:subscribe` (the spec's tables) over GET.
    pub(super) rest_subscribe_post: AtomicBool,
}

pub(super) struct Resolved {
    pub(super) card: Arc<AgentCard>,
    pub(super) card_url: Url,
    pub(super) interface: AgentInterface,
    pub(super) binding: Binding,
    pub(super) endpoint: Url,
    /// The protocol version spoken at `endpoint`.
    pub(super) version: ProtocolVersion,
    /// The `kid` of the key that verified the card, when the client verifies cards.
    pub(super) verified_by: Option<String>,
    /// The gRPC channel to `endpoint`, made on first use (for the gRPC binding).
    #[cfg(feature = "grpc")]
    pub(super) grpc: std::sync::OnceLock<tonic::transport::Channel>,
}

impl Config {
    /// The key that verified `raw`, when this client verifies cards (`None` when it does
    /// not); the refusal otherwise.
    pub(super) fn check_card(
        &self,
        raw: &serde_json::Value,
    ) -> Result<Option<String>, ClientError> {
        #[cfg(feature = "jose")]
        if let Some(v) = &self.card_verifier {
            return v
                .verify_card_json(raw)
                .map(Some)
                .map_err(ClientError::CardSignature);
        }
        let _ = raw;
        Ok(None)
    }
}
