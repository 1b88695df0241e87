//! An A2A 1.0 client: discovery, every operation over JSON-RPC or HTTP+JSON, streams that
//! resume, and delegation from a running skill to another agent.
//!
//! Enabled by the `client` cargo feature (on by default). Plain `http://` only by default:
//! enable the opt-in **`rustls`** feature for `https://` agents (it is left out of the default
//! build to keep compile times and CI lean).
//!
//! ```no_run
//! use a2a_kit::client::{A2aClient, SendRequest};
//! use a2a_kit::protocol::{SendMessageResponse, StreamResponse};
//! use futures::StreamExt;
//!
//! # async fn demo() -> Result<(), a2a_kit::client::ClientError> {
//! // Resolve the card at /.well-known/agent-card.json and pick the agent's preferred interface.
//! let client = A2aClient::builder().bearer_token("secret")?.connect("http://127.0.0.1:3000").await?;
//! println!("talking to {} over {}", client.card().name, client.binding());
//!
//! // Blocking send: returns when the task is done (or needs input).
//! match client.send("Hello").await? {
//!     SendMessageResponse::Task(task) => println!("{:?}", task.status.state),
//!     SendMessageResponse::Message(msg) => println!("{}", msg.text()),
//! }
//!
//! // Streaming send, routed to a skill (a2a-kit agents read `metadata.skillId`).
//! let mut events = client.send_streaming(SendRequest::text("4").skill("count")).await?;
//! while let Some(event) = events.next().await {
//!     if let StreamResponse::ArtifactUpdate(chunk) = event? {
//!         print!("{}", chunk.artifact.parts.iter().filter_map(|p| p.as_text()).collect::<String>());
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! - **Discovery**: [`ClientBuilder::connect`] fetches the card from the well-known path below
//!   the URL (then at the host's root), caches it in a [`CardCache`] (honouring
//!   `Cache-Control: max-age`, revalidating with `If-None-Match` / `If-Modified-Since`), and
//!   takes the first interface of `supportedInterfaces` whose binding it speaks and whose
//!   `protocolVersion` is 1.x. [`ClientBuilder::binding`] forces one binding.
//! - **Service parameters**: `A2A-Version: 1.0` on every request, `A2A-Extensions` when
//!   configured, and the interface's `tenant` copied into every request (JSON-RPC `params`,
//!   REST path prefix).
//! - **Auth**: [`Interceptor`]s see every request; [`BearerAuth`], [`BearerTokenProvider`]
//!   (a fresh token per request from a [`TokenProvider`]), [`ApiKeyAuth`] and
//!   [`StaticHeaders`] are built in.
//! - **Errors**: [`ClientError`]; errors the agent sent are [`ClientError::Agent`] with the A2A
//!   code, `ErrorInfo.reason` and message.
//! - **Streams**: [`TaskStream`], decoded with `eventsource-stream`, resumed with
//!   `Last-Event-ID` after a dropped connection ([`ResumePolicy`]).
//! - **Delegation**: [`RemoteAgent::delegate`] runs a task on another agent from inside a skill.


mod auth;
mod card;
mod delegate;
mod error;
mod stream;
mod transport;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::Url;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use auth::{
    ApiKeyAuth, ApiKeyLocation, BearerAuth, BearerTokenProvider, CallInfo, FnInterceptor,
    Interceptor, StaticHeaders, TokenProvider,
};
pub use card::{AGENT_CARD_PATH, CardCache};
pub use delegate::{
    DELEGATIONS_KEY, DelegateOptions, DelegationResult, Inbox, PushInbox, RemoteAgent,
};
pub use error::{AgentError, ClientError, code_for_reason, error_name};
pub use reqwest;
pub use stream::{ResumePolicy, TaskAccumulator, TaskStream, status_text};
pub use transport::Binding;

/// The client's decoders over raw bytes, for the fuzz targets in `fuzz/`. Not public API: it
/// may change in any release.
#[doc(hidden)]
pub mod fuzzing {
    use super::*;
    use crate::protocol::StreamResponse;

    /// Read an agent card document as [`A2aClient::connect`] does.
    pub fn card(body: &[u8]) -> Result<AgentCard, String> {
        let value: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        match card::parse_card(&value)? {
            Ok(card) => Ok(card),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Decode a response to SendStreamingMessage / SubscribeToTask as the client does: an SSE
    /// body when `content_type` says so, else one JSON body. Every event or error it yields.
    pub async fn stream(
        binding: Binding,
        status: u16,
        content_type: &str,
        body: Vec<u8>,
    ) -> Vec<Result<(Option<String>, StreamResponse), ClientError>> {
        let Some(resp) = response(status, content_type, body) else {
            return Vec::new();
        };
        match transport::stream(binding, resp, None).await {
            Ok(events) => events.collect().await,
            Err(e) => vec![Err(e)],
        }
    }

    /// Decode a unary response (SendMessage's) as the client does.
    pub async fn unary(
        binding: Binding,
        status: u16,
        content_type: &str,
        body: Vec<u8>,
    ) -> Option<Result<SendMessageResponse, ClientError>> {
        let resp = response(status, content_type, body)?;
        Some(transport::unary(binding, resp).await)
    }

    fn response(status: u16, content_type: &str, body: Vec<u8>) -> Option<reqwest::Response> {
        let resp = http::Response::builder()
            .status(status)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(body)
            .ok()?;
        Some(reqwest::Response::from(resp))
    }
}

use crate::protocol::{
    AgentCard, AgentInterface, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Metadata, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig,
};
use transport::{Call, Http, Rest};

/// What to send: a message plus the request's configuration. Built from a `&str`/`String`
/// (a user text message), a [`Message`] or a full [`SendMessageRequest`].
///
/// ```
/// use a2a_kit::client::SendRequest;
/// let req = SendRequest::text("plan a trip").skill("plan").return_immediately(true).history_length(0);
/// assert_eq!(req.request.message.metadata.as_ref().unwrap()["skillId"], "plan");
/// assert!(req.request.configuration.as_ref().unwrap().return_immediately);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    /// The request as it will be sent (the tenant is filled in from the interface).
    pub request: SendMessageRequest,
}

impl SendRequest {
    /// Send `message`.
    pub fn new(message: Message) -> Self {
        SendRequest {
            request: SendMessageRequest {
                message,
                ..SendMessageRequest::default()
            },
        }
    }

    /// A user message with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(Message::user_text(text))
    }

    fn config(&mut self) -> &mut SendMessageConfiguration {
        self.request
            .configuration
            .get_or_insert_with(SendMessageConfiguration::default)
    }

    /// Route to a skill: sets `message.metadata.skillId` (the a2a-kit convention).
    #[must_use]
    pub fn skill(mut self, skill_id: impl Into<String>) -> Self {
        self.request
            .message
            .metadata
            .get_or_insert_with(Metadata::new)
            .insert("skillId".into(), Value::String(skill_id.into()));
        self
    }

    /// Return as soon as the task exists instead of waiting for it to finish.
    #[must_use]
    pub fn return_immediately(mut self, yes: bool) -> Self {
        self.config().return_immediately = yes;
        self
    }

    /// At most `n` history messages in the returned task (0: none).
    #[must_use]
    pub fn history_length(mut self, n: i32) -> Self {
        self.config().history_length = Some(n);
        self
    }

    /// The media types the client accepts.
    #[must_use]
    pub fn accepted_output_modes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        modes: I,
    ) -> Self {
        self.config().accepted_output_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Ask for push notifications for the task this message creates.
    #[must_use]
    pub fn push_config(mut self, config: TaskPushNotificationConfig) -> Self {
        self.config().task_push_notification_config = Some(config);
        self
    }

    /// Continue an existing task (sets `message.taskId`).
    #[must_use]
    pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
        self.request.message.task_id = Some(task_id.into());
        self
    }

    /// Send within a context (sets `message.contextId`).
    #[must_use]
    pub fn context_id(mut self, context_id: impl Into<String>) -> Self {
        self.request.message.context_id = Some(context_id.into());
        self
    }

    /// Request-level metadata.
    #[must_use]
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.request.metadata = Some(metadata);
        self
    }
}

impl From<Message> for SendRequest {
    fn from(m: Message) -> Self {
        SendRequest::new(m)
    }
}
impl From<SendMessageRequest> for SendRequest {
    fn from(request: SendMessageRequest) -> Self {
        SendRequest { request }
    }
}
impl From<&str> for SendRequest {
    fn from(text: &str) -> Self {
        SendRequest::text(text)
    }
}
impl From<String> for SendRequest {
    fn from(text: String) -> Self {
        SendRequest::text(text)
    }
}

#[derive(Debug, Clone)]
struct Config {
    bindings: Vec<Binding>,
    client_order: bool,
    timeout: Option<Duration>,
    stream_idle_timeout: Option<Duration>,
    resume: ResumePolicy,
    card_ttl: Duration,
    #[cfg(feature = "jose")]
    card_verifier: Option<crate::signing::Verifier>,
}

/// Configures an [`A2aClient`].
#[must_use]
pub struct ClientBuilder {
    http: Option<reqwest::Client>,
    interceptors: Vec<Arc<dyn Interceptor>>,
    trusted_origins: Vec<Url>,
    extensions: Vec<String>,
    config: Config,
    connect_timeout: Duration,
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
                timeout: Some(Duration::from_secs(300)),
                stream_idle_timeout: Some(Duration::from_secs(120)),
                resume: ResumePolicy::default(),
                card_ttl: Duration::from_secs(300),
                #[cfg(feature = "jose")]
                card_verifier: None,
            },
            connect_timeout: Duration::from_secs(10),
            cache: CardCache::default(),
            user_agent: format!("a2a-kit/{}", env!("CARGO_PKG_VERSION")),
            #[cfg(feature = "rustls")]
            roots: Vec::new(),
        }
    }
}

impl ClientBuilder {
    /// Use only this binding (JSON-RPC or HTTP+JSON); the card must offer it.
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
        self.connect_timeout = timeout;
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
    fn http(&self, agent: &str) -> Result<Http, ClientError> {
        let client = match &self.http {
            Some(c) => c.clone(),
            None => {
                let builder = reqwest::Client::builder()
                    .connect_timeout(self.connect_timeout)
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
            .resolve(&http, &base, self.config.card_ttl, false)
            .await?;
        let verified_by = self.config.check_card(&fetched.raw)?;
        let selected = card::select_interface(
            &fetched.card,
            &fetched.url,
            &self.config.bindings,
            self.config.client_order,
        )?;
        Ok(self.finish(http, base, fetched.card, fetched.url, selected, verified_by))
    }

    /// Build a client from a card already in hand; `card_url` resolves relative interface
    /// URLs (and is where [`A2aClient::refresh_card`] looks).
    pub fn from_card(self, card: AgentCard, card_url: &str) -> Result<A2aClient, ClientError> {
        let http = self.http(card_url)?;
        let url = Url::parse(card_url)
            .map_err(|e| ClientError::InvalidUrl(format!("`{card_url}`: {e}")))?;
        let verified_by = self
            .config
            .check_card(&serde_json::to_value(&card).unwrap_or_default())?;
        let selected =
            card::select_interface(&card, &url, &self.config.bindings, self.config.client_order)?;
        Ok(self.finish(
            http,
            card_url.to_string(),
            Arc::new(card),
            url,
            selected,
            verified_by,
        ))
    }

    fn finish(
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
                    verified_by,
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
fn same_origin_redirects() -> reqwest::redirect::Policy {
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

struct Inner {
    http: Http,
    config: Config,
    cache: CardCache,
    base: String,
    resolved: RwLock<Arc<Resolved>>,
    next_id: AtomicU64,
    /// The agent's REST binding wanted POST for `:subscribe` (the spec's tables) over GET.
    rest_subscribe_post: AtomicBool,
}

struct Resolved {
    card: Arc<AgentCard>,
    card_url: Url,
    interface: AgentInterface,
    binding: Binding,
    endpoint: Url,
    /// The `kid` of the key that verified the card, when the client verifies cards.
    verified_by: Option<String>,
}

impl Config {
    /// The key that verified `raw`, when this client verifies cards (`None` when it does
    /// not); the refusal otherwise.
    fn check_card(&self, raw: &serde_json::Value) -> Result<Option<String>, ClientError> {
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

/// A client for one agent. Cheap to clone; clones share the connection pool and card.
#[derive(Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.resolved();
        f.debug_struct("A2aClient")
            .field("agent", &r.card.name)
            .field("binding", &r.binding)
            .field("endpoint", &r.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl A2aClient {
    /// Start configuring a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Connect with default settings.
    pub async fn connect(url: impl AsRef<str>) -> Result<A2aClient, ClientError> {
        Self::builder().connect(url).await
    }

    fn config(&self) -> &Config {
        &self.inner.config
    }

    fn resolved(&self) -> Arc<Resolved> {
        self.inner
            .resolved
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The same client with another unary timeout (e.g. a long blocking send).
    #[must_use]
    pub fn with_timeout(&self, timeout: Option<Duration>) -> A2aClient {
        A2aClient {
            inner: self.inner.clone(),
            timeout,
        }
    }

    /// The agent card in use (no I/O; see [`fresh_card`](Self::fresh_card)).
    pub fn card(&self) -> Arc<AgentCard> {
        self.resolved().card.clone()
    }

    /// Where the card was fetched from.
    pub fn card_url(&self) -> Url {
        self.resolved().card_url.clone()
    }

    /// The chosen interface, as listed in the card.
    pub fn interface(&self) -> AgentInterface {
        self.resolved().interface.clone()
    }

    /// The chosen binding.
    pub fn binding(&self) -> Binding {
        self.resolved().binding
    }

    /// The chosen interface's absolute URL.
    pub fn endpoint(&self) -> Url {
        self.resolved().endpoint.clone()
    }

    /// The card, revalidated first if its cache lifetime is over (a 304 keeps it).
    pub async fn fresh_card(&self) -> Result<Arc<AgentCard>, ClientError> {
        self.reload_card(false).await
    }

    /// Revalidate the card now (`If-None-Match` / `If-Modified-Since`); a changed card is
    /// adopted and the interface chosen again. Returns the card in use.
    pub async fn refresh_card(&self) -> Result<Arc<AgentCard>, ClientError> {
        self.reload_card(true).await
    }

    async fn reload_card(&self, force: bool) -> Result<Arc<AgentCard>, ClientError> {
        let current = self.resolved();
        let f = self
            .inner
            .cache
            .resolve(
                &self.inner.http,
                &self.inner.base,
                self.config().card_ttl,
                force,
            )
            .await?;
        if Arc::ptr_eq(&f.card, &current.card) || (!f.changed && *f.card == *current.card) {
            return Ok(current.card.clone());
        }
        // A changed card is verified before it replaces the one in use.
        let verified_by = self.config().check_card(&f.raw)?;
        self.adopt(f.card, f.url, verified_by)
    }

    /// The `kid` of the key whose signature verified the card in use, when the client
    /// verifies cards ([`ClientBuilder::verify_card`]); `None` otherwise.
    pub fn card_verified_by(&self) -> Option<String> {
        self.resolved().verified_by.clone()
    }

    fn adopt(
        &self,
        card: Arc<AgentCard>,
        card_url: Url,
        verified_by: Option<String>,
    ) -> Result<Arc<AgentCard>, ClientError> {
        let s = card::select_interface(
            &card,
            &card_url,
            &self.config().bindings,
            self.config().client_order,
        )?;
        let r = Resolved {
            card: card.clone(),
            card_url,
            interface: s.interface,
            binding: s.binding,
            endpoint: s.endpoint,
            verified_by,
        };
        *self
            .inner
            .resolved
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(r);
        Ok(card)
    }

    fn tenant(&self, given: Option<String>) -> Option<String> {
        given.or_else(|| {
            self.resolved()
                .interface
                .tenant
                .clone()
                .filter(|t| !t.is_empty())
        })
    }

    async fn send_call(
        &self,
        call: &Call,
        stream: bool,
        last_event_id: Option<&str>,
    ) -> Result<(reqwest::Response, Binding), ClientError> {
        let r = self.resolved();
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let post_sub = self.inner.rest_subscribe_post.load(Ordering::Relaxed);
        let mut req = transport::build(
            &self.inner.http.client,
            r.binding,
            &r.endpoint,
            call,
            id,
            stream,
            post_sub,
        )?;
        if let Some(last) = last_event_id {
            if let Ok(v) = reqwest::header::HeaderValue::from_str(last) {
                req.headers_mut().insert("Last-Event-ID", v);
            }
        }
        let timeout = if stream { None } else { self.timeout };
        let resp = self
            .inner
            .http
            .execute(call.method, Some(&r.card), req, timeout)
            .await?;
        Ok((resp, r.binding))
    }

    async fn unary<T: DeserializeOwned>(&self, call: Call) -> Result<T, ClientError> {
        let (resp, binding) = self.send_call(&call, false, None).await?;
        transport::unary(binding, resp).await
    }

    async fn open_stream(
        &self,
        call: Call,
        last_event_id: Option<&str>,
    ) -> Result<stream::RawEvents, ClientError> {
        let idle = self.config().stream_idle_timeout;
        let (resp, binding) = self.send_call(&call, true, last_event_id).await?;
        // The proto maps `:subscribe` to GET, the spec's tables to POST: fall back once.
        let retry_with_post = binding == Binding::HttpJson
            && call.method == "SubscribeToTask"
            && matches!(resp.status().as_u16(), 404 | 405)
            && !self.inner.rest_subscribe_post.load(Ordering::Relaxed);
        if retry_with_post {
            self.inner
                .rest_subscribe_post
                .store(true, Ordering::Relaxed);
            let (resp, binding) = self.send_call(&call, true, last_event_id).await?;
            return transport::stream(binding, resp, idle).await;
        }
        transport::stream(binding, resp, idle).await
    }

    pub(crate) async fn open_subscription(
        &self,
        task_id: &str,
        last_event_id: Option<&str>,
    ) -> Result<stream::RawEvents, ClientError> {
        let req = SubscribeToTaskRequest {
            tenant: self.tenant(None),
            id: task_id.to_string(),
        };
        self.open_stream(subscribe_call(&req), last_event_id).await
    }

    // ----- operations -----

    fn send_call_for(
        &self,
        req: impl Into<SendRequest>,
        method: &'static str,
        path: &'static str,
    ) -> Call {
        let mut req = req.into().request;
        req.tenant = self.tenant(req.tenant.take());
        Call::new(method, &req, |body| {
            Rest::Post(vec![path.into()], Value::Object(body))
        })
    }

    /// SendMessage: blocking by default (returns when the task is terminal or interrupted);
    /// with [`SendRequest::return_immediately`] it returns once the task exists.
    pub async fn send(
        &self,
        req: impl Into<SendRequest>,
    ) -> Result<SendMessageResponse, ClientError> {
        self.unary(self.send_call_for(req, "SendMessage", "message:send"))
            .await
    }

    /// SendStreamingMessage: a live [`TaskStream`] of the task's events.
    pub async fn send_streaming(
        &self,
        req: impl Into<SendRequest>,
    ) -> Result<TaskStream, ClientError> {
        let call = self.send_call_for(req, "SendStreamingMessage", "message:stream");
        let known = call
            .params
            .pointer("/message/taskId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let first = self.open_stream(call, None).await?;
        Ok(TaskStream::new(self.clone(), first, known, None))
    }

    /// GetTask with the server's default history.
    pub async fn get_task(&self, id: &str) -> Result<Task, ClientError> {
        self.get_task_with(GetTaskRequest {
            id: id.to_string(),
            ..GetTaskRequest::default()
        })
        .await
    }

    /// GetTask with every option.
    pub async fn get_task_with(&self, mut req: GetTaskRequest) -> Result<Task, ClientError> {
        req.tenant = self.tenant(req.tenant.take());
        let id = req.id.clone();
        self.unary(Call::new("GetTask", &req, |b| {
            Rest::Get(vec!["tasks".into(), id], transport::query(&b, &["id"]))
        }))
        .await
    }

    /// ListTasks: one page.
    pub async fn list_tasks(
        &self,
        mut req: ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        req.tenant = self.tenant(req.tenant.take());
        self.unary(Call::new("ListTasks", &req, |b| {
            Rest::Get(vec!["tasks".into()], transport::query(&b, &[]))
        }))
        .await
    }

    /// ListTasks across all pages, as a stream of tasks (pages are fetched as it is read).
    ///
    /// ```no_run
    /// # async fn demo(client: a2a_kit::client::A2aClient) -> Result<(), a2a_kit::client::ClientError> {
    /// use futures::TryStreamExt;
    /// let all: Vec<_> = client.list_all_tasks(Default::default()).try_collect().await?;
    /// # Ok(()) }
    /// ```
    pub fn list_all_tasks(
        &self,
        req: ListTasksRequest,
    ) -> BoxStream<'static, Result<Task, ClientError>> {
        let client = self.clone();
        async_stream::try_stream! {
            let mut req = req;
            let mut seen = std::collections::HashSet::new();
            loop {
                let page = client.list_tasks(req.clone()).await?;
                for task in page.tasks {
                    yield task;
                }
                if page.next_page_token.is_empty() || !seen.insert(page.next_page_token.clone()) {
                    break;
                }
                req.page_token = Some(page.next_page_token);
            }
        }
        .boxed()
    }

    /// CancelTask; returns the task as updated.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, ClientError> {
        self.cancel_task_with(CancelTaskRequest {
            id: id.to_string(),
            ..CancelTaskRequest::default()
        })
        .await
    }

    /// CancelTask with metadata.
    pub async fn cancel_task_with(&self, mut req: CancelTaskRequest) -> Result<Task, ClientError> {
        req.tenant = self.tenant(req.tenant.take());
        let id = req.id.clone();
        self.unary(Call::new("CancelTask", &req, |mut b| {
            b.remove("id");
            Rest::Post(
                vec!["tasks".into(), format!("{id}:cancel")],
                Value::Object(b),
            )
        }))
        .await
    }

    /// SubscribeToTask: a Task snapshot, then live events.
    pub async fn subscribe(&self, id: &str) -> Result<TaskStream, ClientError> {
        self.subscribe_from(id, None).await
    }

    /// SubscribeToTask resuming after the event with SSE id `last_event_id` (sent as
    /// `Last-Event-ID`): the server replays what came after it, even if the task has ended.
    pub async fn subscribe_from(
        &self,
        id: &str,
        last_event_id: Option<&str>,
    ) -> Result<TaskStream, ClientError> {
        let first = self.open_subscription(id, last_event_id).await?;
        Ok(TaskStream::new(
            self.clone(),
            first,
            Some(id.to_string()),
            last_event_id.map(str::to_string),
        ))
    }

    /// CreateTaskPushNotificationConfig (`task_id` is required; the agent assigns `id` when
    /// absent).
    pub async fn create_push_config(
        &self,
        mut config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        config.tenant = self.tenant(config.tenant.take());
        let task_id = config.task_id.clone().unwrap_or_default();
        self.unary(Call::new(
            "CreateTaskPushNotificationConfig",
            &config,
            |b| {
                Rest::Post(
                    vec!["tasks".into(), task_id, "pushNotificationConfigs".into()],
                    Value::Object(b),
                )
            },
        ))
        .await
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let req = GetTaskPushNotificationConfigRequest {
            tenant: self.tenant(None),
            task_id: task_id.into(),
            id: id.into(),
        };
        let segs = vec![
            "tasks".into(),
            task_id.into(),
            "pushNotificationConfigs".into(),
            id.into(),
        ];
        self.unary(Call::new("GetTaskPushNotificationConfig", &req, |_| {
            Rest::Get(segs, Vec::new())
        }))
        .await
    }

    /// ListTaskPushNotificationConfigs (first page).
    pub async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        self.list_push_configs_with(ListTaskPushNotificationConfigsRequest {
            task_id: task_id.into(),
            ..Default::default()
        })
        .await
    }

    /// ListTaskPushNotificationConfigs with paging options.
    pub async fn list_push_configs_with(
        &self,
        mut req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        req.tenant = self.tenant(req.tenant.take());
        let segs = vec![
            "tasks".into(),
            req.task_id.clone(),
            "pushNotificationConfigs".into(),
        ];
        self.unary(Call::new("ListTaskPushNotificationConfigs", &req, |b| {
            Rest::Get(segs, transport::query(&b, &["taskId"]))
        }))
        .await
    }

    /// DeleteTaskPushNotificationConfig.
    pub async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let req = DeleteTaskPushNotificationConfigRequest {
            tenant: self.tenant(None),
            task_id: task_id.into(),
            id: id.into(),
        };
        let segs = vec![
            "tasks".into(),
            task_id.into(),
            "pushNotificationConfigs".into(),
            id.into(),
        ];
        let _: Value = self
            .unary(Call::new("DeleteTaskPushNotificationConfig", &req, |_| {
                Rest::Delete(segs)
            }))
            .await?;
        Ok(())
    }

    /// GetExtendedAgentCard (authenticated). The extended card replaces the public one in
    /// this client (as the spec recommends) when it still offers the chosen interface. A
    /// client that [verifies cards](ClientBuilder::verify_card) refuses an extended card
    /// without a valid signature too.
    pub async fn extended_card(&self) -> Result<Arc<AgentCard>, ClientError> {
        let req = GetExtendedAgentCardRequest {
            tenant: self.tenant(None),
        };
        let card: AgentCard = self
            .unary(Call::new("GetExtendedAgentCard", &req, |_| {
                Rest::Get(vec!["extendedAgentCard".into()], Vec::new())
            }))
            .await?;
        // A client that verifies cards verifies this one too (the agent signs it per caller).
        let verified_by = self
            .config()
            .check_card(&serde_json::to_value(&card).unwrap_or_default())?;
        let card = Arc::new(card);
        let r = self.resolved();
        if card::select_interface(
            &card,
            &r.card_url,
            &self.config().bindings,
            self.config().client_order,
        )
        .is_ok()
        {
            let _ = self.adopt(card.clone(), r.card_url.clone(), verified_by);
        }
        Ok(card)
    }
}

fn subscribe_call(req: &SubscribeToTaskRequest) -> Call {
    let id = req.id.clone();
    Call::new("SubscribeToTask", req, |_| {
        Rest::Get(vec!["tasks".into(), format!("{id}:subscribe")], Vec::new())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_types_are_thread_safe() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<A2aClient>();
        send_sync::<RemoteAgent>();
        send::<TaskStream>();
    }

    #[test]
    fn from_card_picks_interface_and_tenant() {
        let card = AgentCard {
            name: "a".into(),
            supported_interfaces: vec![AgentInterface::new("/rpc", "JSONRPC").with_tenant("acme")],
            ..AgentCard::default()
        };
        let c = A2aClient::builder()
            .from_card(card, "http://h:1/.well-known/agent-card.json")
            .unwrap();
        assert_eq!(c.endpoint().as_str(), "http://h:1/rpc");
        assert_eq!(c.tenant(None).as_deref(), Some("acme"));
        assert_eq!(c.tenant(Some("x".into())).as_deref(), Some("x"));
        let call = c.send_call_for("hi", "SendMessage", "message:send");
        assert_eq!(call.params["tenant"], "acme");
        assert_eq!(call.tenant(), Some("acme"));
        let transport::Rest::Post(_, body) = &call.rest else {
            panic!()
        };
        assert!(
            body.get("tenant").is_none(),
            "REST carries the tenant in the path"
        );
    }
}
