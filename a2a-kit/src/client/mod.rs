//! An A2A 1.0 client: discovery, every operation over JSON-RPC, HTTP+JSON or (feature
//! `grpc`) gRPC, streams that resume, and delegation from a running skill to another agent.
//! It speaks A2A 0.3 too, to agents that offer only 0.3, with the same types in and out.
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
//! - **A2A 0.3**: a 0.3 card (`url`, `preferredTransport`, `additionalInterfaces`,
//!   `protocolVersion` 0.3.x) is read as a card whose interfaces are 0.3 ones; when a card
//!   offers no 1.x interface the client speaks 0.3 over JSON-RPC or HTTP+JSON
//!   ([`A2aClient::protocol_version`]), translating every request and answer through
//!   [`crate::v03::convert`]; a hybrid card (1.0 with the 0.3 fields beside) keeps 1.0 unless
//!   [`ClientBuilder::protocol_version`] asks for 0.3. ListTasks does not exist in 0.3.
//! - **Service parameters**: `A2A-Version: 1.0` on every request, `A2A-Extensions` when
//!   configured (in 0.3: no version, `X-A2A-Extensions`), and the interface's `tenant`
//!   copied into every request (JSON-RPC `params`, REST path prefix).
//! - **Auth**: [`Interceptor`]s see every request; [`BearerAuth`], [`BearerTokenProvider`]
//!   (a fresh token per request from a [`TokenProvider`]), [`ApiKeyAuth`] and
//!   [`StaticHeaders`] are built in.
//! - **Errors**: [`ClientError`]; errors the agent sent are [`ClientError::Agent`] with the A2A
//!   code, `ErrorInfo.reason` and message.
//! - **Streams**: [`TaskStream`], decoded with `eventsource-stream`, resumed with
//!   `Last-Event-ID` after a dropped connection ([`ResumePolicy`]).
//! - **Delegation**: [`RemoteAgent::delegate`] runs a task on another agent from inside a skill.

mod auth;
mod builder;
mod card;
mod delegate;
mod error;
#[cfg(feature = "grpc")]
mod grpc;
mod request;
mod stream;
mod transport;
mod v03;

use std::sync::Arc;
use std::sync::atomic::Ordering;
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
pub use builder::ClientBuilder;
use builder::{Config, Inner, Resolved};
pub use card::{AGENT_CARD_PATH, CardCache};
pub use delegate::{
    DELEGATIONS_KEY, DelegateOptions, DelegationResult, Inbox, PushInbox, RemoteAgent,
};
pub use error::{AgentError, ClientError, code_for_reason, error_name};
pub use request::SendRequest;
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
    ListTasksRequest, ListTasksResponse, Message, Metadata, ProtocolVersion,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest,
    Task, TaskPushNotificationConfig,
};
use transport::{Call, Rest};

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
            .field("version", &r.version)
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

    /// The A2A version spoken to the agent: 1.0 when its card offers it, else 0.3 (a 0.3
    /// agent), unless [`ClientBuilder::protocol_version`] chose. Either way the operations
    /// take and return the same (1.0) types; over 0.3 ListTasks is
    /// [`ClientError::Unsupported`].
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.resolved().version
    }

    fn speaks_v03(&self) -> bool {
        self.protocol_version() == ProtocolVersion::V0_3
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
                self.config().version,
            )
            .await?;
        if Arc::ptr_eq(&f.card, &current.card) || (!f.changed && *f.card == *current.card) {
            return Ok(current.card.clone());
        }
        // A changed card is verified before it replaces the one in use.
        let verified_by = self.config().check_card(&f.raw)?;
        self.adopt(f.card, &f.raw, f.url, verified_by)
    }

    /// The `kid` of the key whose signature verified the card in use, when the client
    /// verifies cards ([`ClientBuilder::verify_card`]); `None` otherwise.
    pub fn card_verified_by(&self) -> Option<String> {
        self.resolved().verified_by.clone()
    }

    fn adopt(
        &self,
        card: Arc<AgentCard>,
        raw: &Value,
        card_url: Url,
        verified_by: Option<String>,
    ) -> Result<Arc<AgentCard>, ClientError> {
        let s = card::select_interface(
            &card,
            Some(raw),
            &card_url,
            &self.config().bindings,
            self.config().client_order,
            self.config().version,
        )?;
        let r = Resolved {
            card: card.clone(),
            card_url,
            interface: s.interface,
            binding: s.binding,
            endpoint: s.endpoint,
            version: s.version,
            verified_by,
            #[cfg(feature = "grpc")]
            grpc: Default::default(),
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
        if let Some(last) = last_event_id
            && let Ok(v) = reqwest::header::HeaderValue::from_str(last)
        {
            req.headers_mut().insert("Last-Event-ID", v);
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
        #[cfg(feature = "grpc")]
        if let Some((r, channel)) = self.grpc()? {
            let http = &self.inner.http;
            return grpc::unary(http, &r.card, &r.endpoint, channel, &call, self.timeout).await;
        }
        let (resp, binding) = self.send_call(&call, false, None).await?;
        transport::unary(binding, resp).await
    }

    /// The resolved interface and its channel, when the client speaks gRPC to the agent.
    #[cfg(feature = "grpc")]
    fn grpc(&self) -> Result<Option<(Arc<Resolved>, tonic::transport::Channel)>, ClientError> {
        let r = self.resolved();
        if r.binding != Binding::Grpc {
            return Ok(None);
        }
        let channel = match r.grpc.get() {
            Some(channel) => channel.clone(),
            None => {
                let channel = grpc::channel(&r.endpoint, self.config().connect_timeout)?;
                r.grpc.get_or_init(|| channel).clone()
            }
        };
        Ok(Some((r, channel)))
    }

    async fn open_stream(
        &self,
        call: Call,
        last_event_id: Option<&str>,
    ) -> Result<stream::RawEvents, ClientError> {
        let idle = self.config().stream_idle_timeout;
        #[cfg(feature = "grpc")]
        if let Some((r, channel)) = self.grpc()? {
            if last_event_id.is_some() {
                return Err(ClientError::Unsupported(
                    "resuming from an event id: gRPC streams number no events (subscribe \
                     without one, or use JSON-RPC or HTTP+JSON)"
                        .into(),
                ));
            }
            let http = &self.inner.http;
            return grpc::stream(http, &r.card, &r.endpoint, channel, &call, idle).await;
        }
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
        if self.speaks_v03() {
            return self.v03_subscribe(task_id, last_event_id).await;
        }
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
        if self.speaks_v03() {
            return self.v03_send(req.into().request).await;
        }
        self.unary(self.send_call_for(req, "SendMessage", "message:send"))
            .await
    }

    /// SendStreamingMessage: a live [`TaskStream`] of the task's events.
    pub async fn send_streaming(
        &self,
        req: impl Into<SendRequest>,
    ) -> Result<TaskStream, ClientError> {
        if self.speaks_v03() {
            let req = req.into().request;
            let known = req.message.task_id.clone();
            let first = self.v03_send_streaming(req).await?;
            return Ok(TaskStream::new(self.clone(), first, known, None));
        }
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
        if self.speaks_v03() {
            return self.v03_get_task(req).await;
        }
        req.tenant = self.tenant(req.tenant.take());
        let id = req.id.clone();
        self.unary(Call::new("GetTask", &req, |b| {
            Rest::Get(vec!["tasks".into(), id], transport::query(&b, &["id"]))
        }))
        .await
    }

    /// ListTasks: one page. (A2A 0.3 has no ListTasks: against a 0.3 agent it is
    /// [`ClientError::Unsupported`].)
    pub async fn list_tasks(
        &self,
        mut req: ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        if self.speaks_v03() {
            return Err(v03::no_list_tasks());
        }
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
        if self.speaks_v03() {
            return self.v03_cancel_task(req).await;
        }
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
        if self.speaks_v03() {
            return self.v03_create_push_config(config).await;
        }
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
        if self.speaks_v03() {
            return self.v03_get_push_config(task_id, id).await;
        }
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

    /// ListTaskPushNotificationConfigs with paging options (A2A 0.3 has no pages: every
    /// config is on the first).
    pub async fn list_push_configs_with(
        &self,
        mut req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        if self.speaks_v03() {
            return self.v03_list_push_configs(&req.task_id).await;
        }
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
        if self.speaks_v03() {
            return self.v03_delete_push_config(task_id, id).await;
        }
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
        let (card, raw) = if self.speaks_v03() {
            self.v03_extended_card().await?
        } else {
            let req = GetExtendedAgentCardRequest {
                tenant: self.tenant(None),
            };
            let card: AgentCard = self
                .unary(Call::new("GetExtendedAgentCard", &req, |_| {
                    Rest::Get(vec!["extendedAgentCard".into()], Vec::new())
                }))
                .await?;
            let raw = serde_json::to_value(&card).unwrap_or_default();
            (card, raw)
        };
        // A client that verifies cards verifies this one too (the agent signs it per caller).
        let verified_by = self.config().check_card(&raw)?;
        let card = Arc::new(card);
        let r = self.resolved();
        if card::select_interface(
            &card,
            Some(&raw),
            &r.card_url,
            &self.config().bindings,
            self.config().client_order,
            self.config().version,
        )
        .is_ok()
        {
            let _ = self.adopt(card.clone(), &raw, r.card_url.clone(), verified_by);
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
