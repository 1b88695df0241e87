//! Binding-independent request handling: [`AgentService`] implements the 11 A2A operations;
//! [`jsonrpc`] and [`rest`] map bytes to them; [`sse`] frames streams. No web framework types
//! appear here (only the `http` crate's), so any framework can host an agent;
//! `a2a-kit-axum` is the one we ship.

pub mod jsonrpc;
pub mod params;
pub mod rest;
pub mod sse;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::agent::{
    Agent, DynAgent, Route, RouteRequest, SkillRouter, explicit_skill_id, no_skill_error,
};
use crate::context::TaskContext;
use crate::error::A2aError;
use crate::extract::SkillRequest;
use crate::protocol::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Role, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskState,
    TaskStatus,
};
use crate::reply::OutcomeKind;
use crate::runtime::{EventObserver, ExecutionConfig, Runtime};
use crate::store::{InMemoryTaskManager, ListQuery, Seq, TaskManager, TaskView};

pub use params::RequestMeta;

/// One item of an event stream: the event and its sequence number in the task's log (the SSE
/// `id:`). A direct-message stream has no sequence number.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamItem {
    /// Sequence number within the task's event log.
    pub seq: Option<Seq>,
    /// The event.
    pub event: StreamResponse,
}

/// A stream of events for SendStreamingMessage / SubscribeToTask. An `Err` item ends it.
pub type EventStream = BoxStream<'static, Result<StreamItem, A2aError>>;

/// Hosts one agent: card, task lifecycle, streams, push configs.
///
/// ```
/// # use a2a_kit::server::AgentService;
/// # fn demo(agent: impl a2a_kit::agent::Agent) {
/// let service = AgentService::builder(agent).public_url("http://127.0.0.1:3000").build();
/// assert_eq!(service.card().supported_interfaces[0].url, "http://127.0.0.1:3000");
/// # }
/// ```
#[derive(Clone)]
pub struct AgentService {
    inner: Arc<ServiceInner>,
}

struct ServiceInner {
    agent: DynAgent,
    runtime: Arc<Runtime>,
    router: Option<Arc<dyn SkillRouter>>,
    card: AgentCard,
    card_json: Bytes,
    card_etag: String,
    card_last_modified: String,
    extended_card: Option<AgentCard>,
    required_extensions: Vec<String>,
    supported_extensions: Vec<String>,
    streaming: bool,
    push: bool,
    webhook_validator: WebhookValidator,
}

/// Checks a push notification URL when a config is created; `Err` is the reason it is refused
/// (sent back as InvalidParams). The default accepts absolute http and https URLs; the push
/// module's SSRF guard installs a stricter one.
pub type WebhookValidator = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// An edit applied to the card after the kit built it.
type CardEdit = Box<dyn FnOnce(&mut AgentCard) + Send>;

/// Builds an observer once the store is known.
type ObserverFactory = Box<dyn FnOnce(&Arc<dyn TaskManager>) -> Arc<dyn EventObserver> + Send>;

/// Configures an [`AgentService`].
#[must_use]
pub struct AgentServiceBuilder {
    agent: DynAgent,
    public_url: String,
    store: Option<Arc<dyn TaskManager>>,
    execution: ExecutionConfig,
    router: Option<Arc<dyn SkillRouter>>,
    extended_card: Option<AgentCard>,
    required_extensions: Vec<String>,
    streaming: Option<bool>,
    push: Option<bool>,
    customize: Vec<CardEdit>,
    observers: Vec<ObserverFactory>,
    webhook_validator: Option<WebhookValidator>,
}

impl AgentServiceBuilder {
    /// Add an observer of every stored event (built with the service's store).
    pub fn observe_with(
        mut self,
        factory: impl FnOnce(&Arc<dyn TaskManager>) -> Arc<dyn EventObserver> + Send + 'static,
    ) -> Self {
        self.observers.push(Box::new(factory));
        self
    }
    /// Replace the check applied to push notification URLs when configs are created.
    pub fn webhook_validator(
        mut self,
        check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.webhook_validator = Some(Arc::new(check));
        self
    }
    /// The absolute URL clients reach the agent at (JSON-RPC there, HTTP+JSON below it).
    /// Default `http://127.0.0.1:3000`.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = url.into();
        self
    }
    /// The task store (default: [`InMemoryTaskManager`] with default limits).
    pub fn task_manager(mut self, store: impl TaskManager) -> Self {
        self.store = Some(Arc::new(store));
        self
    }
    /// The task store, shared.
    pub fn shared_task_manager(mut self, store: Arc<dyn TaskManager>) -> Self {
        self.store = Some(store);
        self
    }
    /// Execution knobs (status style, cancel grace, timeouts, narration).
    pub fn execution(mut self, config: ExecutionConfig) -> Self {
        self.execution = config;
        self
    }
    /// Routing step 5 (see [`crate::agent`]).
    pub fn skill_router(mut self, router: impl SkillRouter) -> Self {
        self.router = Some(Arc::new(router));
        self
    }
    /// Serve this card from GetExtendedAgentCard (and advertise `extendedAgentCard`).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }
    /// Declare an extension as required: requests that do not activate it through
    /// `A2A-Extensions` get ExtensionSupportRequiredError.
    pub fn require_extension(mut self, uri: impl Into<String>) -> Self {
        self.required_extensions.push(uri.into());
        self
    }
    /// Override the streaming capability (default: the agent's).
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = Some(on);
        self
    }
    /// Override the push notification capability (default: the agent's). This alone only
    /// stores configs; `push_delivery` (feature `push`) also delivers them.
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.push = Some(on);
        self
    }
    /// Edit the card after the kit built it.
    pub fn card(mut self, f: impl FnOnce(&mut AgentCard) + Send + 'static) -> Self {
        self.customize.push(Box::new(f));
        self
    }

    /// Build the service.
    pub fn build(self) -> AgentService {
        let info = self.agent.info();
        let mut card = info.card(&self.public_url);
        self.agent.customize_card(&mut card);
        let streaming = self.streaming.unwrap_or(info.streaming);
        let push = self.push.unwrap_or(info.push_notifications);
        card.capabilities.streaming = Some(streaming);
        card.capabilities.push_notifications = Some(push);
        card.capabilities.extended_agent_card = Some(self.extended_card.is_some());
        for uri in &self.required_extensions {
            match card
                .capabilities
                .extensions
                .iter_mut()
                .find(|e| e.uri.as_deref() == Some(uri))
            {
                Some(e) => e.required = true,
                None => card
                    .capabilities
                    .extensions
                    .push(crate::protocol::AgentExtension {
                        uri: Some(uri.clone()),
                        description: None,
                        required: true,
                        params: None,
                    }),
            }
        }
        for f in self.customize {
            f(&mut card);
        }
        let card_json = Bytes::from(serde_json::to_vec(&card).unwrap_or_default());
        let card_etag = format!("\"{:016x}\"", fnv1a(&card_json));
        let card_last_modified = chrono::Utc::now()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let supported_extensions = card
            .capabilities
            .extensions
            .iter()
            .filter_map(|e| e.uri.clone())
            .collect();
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(InMemoryTaskManager::default()));
        let mut runtime = Runtime::new(store.clone(), self.execution);
        runtime.set_observers(self.observers.into_iter().map(|f| f(&store)).collect());
        AgentService {
            inner: Arc::new(ServiceInner {
                agent: self.agent,
                runtime: Arc::new(runtime),
                router: self.router,
                card,
                card_json,
                card_etag,
                card_last_modified,
                extended_card: self.extended_card,
                required_extensions: self.required_extensions,
                supported_extensions,
                streaming,
                push,
                webhook_validator: self
                    .webhook_validator
                    .unwrap_or_else(|| Arc::new(check_webhook_url)),
            }),
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    })
}

impl AgentService {
    /// Start configuring a service for `agent`.
    pub fn builder(agent: impl Agent) -> AgentServiceBuilder {
        Self::builder_arc(Arc::new(agent))
    }

    /// Start configuring a service for a shared agent.
    pub fn builder_arc(agent: Arc<dyn Agent>) -> AgentServiceBuilder {
        AgentServiceBuilder {
            agent,
            public_url: "http://127.0.0.1:3000".into(),
            store: None,
            execution: ExecutionConfig::default(),
            router: None,
            extended_card: None,
            required_extensions: Vec::new(),
            streaming: None,
            push: None,
            customize: Vec::new(),
            observers: Vec::new(),
            webhook_validator: None,
        }
    }

    /// The public agent card.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The card as served (JSON bytes), its `ETag` and `Last-Modified` values.
    pub fn card_document(&self) -> (&Bytes, &str, &str) {
        (
            &self.inner.card_json,
            &self.inner.card_etag,
            &self.inner.card_last_modified,
        )
    }

    /// The task store.
    pub fn task_manager(&self) -> &Arc<dyn TaskManager> {
        &self.inner.runtime.store
    }

    /// Validate the A2A service parameters of a request (version, extensions).
    pub fn check_request(
        &self,
        headers: &http::HeaderMap,
        query: Option<&str>,
    ) -> Result<RequestMeta, A2aError> {
        params::check(
            headers,
            query,
            &self.inner.required_extensions,
            &self.inner.supported_extensions,
        )
    }

    fn rt(&self) -> &Arc<Runtime> {
        &self.inner.runtime
    }

    // ----- SendMessage / SendStreamingMessage -----

    /// SendMessage: blocking unless `configuration.returnImmediately`.
    ///
    /// A blocking send that starts a task stores it after the skill's first poll, not before:
    /// a skill that ends there (most do) has its task written once, finished, with its whole
    /// event log; one that has to wait has its task stored before it goes on. Until then no
    /// other request can see the task (its id is not out yet; ListTasks does not list it).
    /// A store that refuses the task fails this call.
    pub async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        match self.send_and_settle(Box::new(req)).await? {
            Sent::Message(m) => Ok(SendMessageResponse::Message(m)),
            Sent::Task { task_id, view } => Ok(SendMessageResponse::Task(
                self.read_task(&task_id, view).await?,
            )),
        }
    }

    /// [`send_message`](Self::send_message) with the `SendMessageResponse` appended to `out`
    /// as ProtoJSON, for the bindings: `out` may hold the start of the binding's envelope, and
    /// the task is written into it by the store from what it holds (a finished task in the
    /// in-memory store is bytes already), with no intermediate `Task` value or buffer.
    pub(crate) async fn send_message_json(
        &self,
        req: Box<SendMessageRequest>,
        out: &mut Vec<u8>,
    ) -> Result<(), A2aError> {
        match self.send_and_settle(req).await? {
            Sent::Message(m) => serde_json::to_writer(out, &SendMessageResponse::Message(m))
                .map_err(|e| A2aError::Internal(format!("could not serialize the result: {e}"))),
            Sent::Task { task_id, view } => {
                out.extend_from_slice(b"{\"task\":");
                if !self.rt().store.write_task_json(&task_id, view, out).await? {
                    return Err(A2aError::task_not_found(&task_id));
                }
                out.push(b'}');
                Ok(())
            }
        }
    }

    /// Start the message's task and, unless asked to return at once, wait until it settles.
    /// The request is boxed: it would otherwise be held by each future down the call.
    async fn send_and_settle(&self, req: Box<SendMessageRequest>) -> Result<Sent, A2aError> {
        let history_length = self.validate_send(&req)?;
        let return_immediately = req
            .configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately);
        let view = TaskView {
            history_length,
            include_artifacts: true,
        };
        // Boxed: starting a task is most of a request's state (several KB of future), and a
        // future that size inline is copied whole each time a caller moves or boxes its own.
        // A new task is staged (stored once its first poll is over) unless the caller returns
        // at once.
        match Box::pin(self.start(req, !return_immediately)).await? {
            Started::Message(m) => Ok(Sent::Message(m)),
            Started::Task {
                task_id,
                after,
                launch,
            } => {
                match launch {
                    _ if return_immediately => self.launch(launch),
                    // A quick skill finishes in its first poll, here: nothing to wait for.
                    // Otherwise it went on in the background, and the log tells what it
                    // wrote meanwhile.
                    Launch::Spawn {
                        ctx,
                        future,
                        emit_working,
                    } => {
                        let rt = self.rt();
                        if !rt.run_inline_first(ctx, future, emit_working).await? {
                            let mut sub = rt.subscribe(&task_id);
                            rt.wait_settled(&mut sub, after).await?;
                        }
                    }
                    launch => {
                        // Subscribe before the task can move on: then the log is read once.
                        let mut sub = self.rt().subscribe(&task_id);
                        self.launch(launch);
                        self.rt().wait_settled(&mut sub, after).await?;
                    }
                }
                Ok(Sent::Task { task_id, view })
            }
        }
    }

    /// SendStreamingMessage: the Task first, then its events, closing on terminal and
    /// interrupted states; a direct-message reply is exactly one Message.
    pub async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.inner.streaming {
            return Err(A2aError::unsupported(
                "streaming is not supported by this agent",
            ));
        }
        self.validate_send(&req)?;
        match Box::pin(self.start(Box::new(req), false)).await? {
            Started::Message(m) => {
                let item = StreamItem {
                    seq: None,
                    event: StreamResponse::Message(m),
                };
                Ok(futures::stream::once(async move { Ok(item) }).boxed())
            }
            Started::Task {
                task_id,
                after: 0,
                launch,
            } => {
                let sub = self.rt().subscribe(&task_id);
                self.launch(launch);
                Ok(self.log_stream(sub, 0))
            }
            Started::Task {
                task_id,
                after: _,
                launch,
            } => {
                let sub = self.rt().subscribe(&task_id);
                self.launch(launch);
                self.snapshot_stream(sub, &task_id).await
            }
        }
    }

    /// Set a started task's skill going (after the caller subscribed to its doorbell).
    fn launch(&self, launch: Launch) {
        match launch {
            Launch::Spawn {
                ctx,
                future,
                emit_working,
            } => self.rt().spawn(ctx, future, emit_working),
            // If the skill vanished meanwhile it was canceled, and the task says so.
            Launch::Resume { waiter, message } => drop(waiter.send(message)),
            Launch::Nothing => {}
        }
    }

    fn log_stream(&self, sub: crate::runtime::BusSubscription, after: Seq) -> EventStream {
        self.rt()
            .event_stream(sub, after)
            .map(|r| {
                r.map(|rec| StreamItem {
                    seq: Some(rec.seq),
                    event: rec.event,
                })
            })
            .boxed()
    }

    /// A Task snapshot (its `seq` is the last event it reflects), then the live tail. `sub` is
    /// taken before the snapshot is read, so the log after it is kept for this reader.
    async fn snapshot_stream(
        &self,
        sub: crate::runtime::BusSubscription,
        task_id: &str,
    ) -> Result<EventStream, A2aError> {
        let rec = self
            .rt()
            .store
            .get_task(task_id, TaskView::FULL)
            .await?
            .ok_or_else(|| A2aError::task_not_found(task_id))?;
        let first = StreamItem {
            seq: Some(rec.last_seq),
            event: StreamResponse::Task(rec.task),
        };
        let tail = self.log_stream(sub, rec.last_seq);
        Ok(futures::stream::once(async move { Ok(first) })
            .chain(tail)
            .boxed())
    }

    async fn read_task(&self, task_id: &str, view: TaskView) -> Result<Task, A2aError> {
        self.rt()
            .store
            .get_task(task_id, view)
            .await?
            .map(|r| r.task)
            .ok_or_else(|| A2aError::task_not_found(task_id))
    }

    /// Route, extract, create or continue the task, start the skill. With `stage`, a new task
    /// is not stored here: its context holds it for `Runtime::run_inline_first`, which
    /// stores it after the skill's first poll ([`Staging`](crate::runtime::Staging)).
    async fn start(&self, req: Box<SendMessageRequest>, stage: bool) -> Result<Started, A2aError> {
        let SendMessageRequest {
            message,
            configuration,
            metadata,
            ..
        } = *req;
        let push_config = configuration.and_then(|c| c.task_push_notification_config);
        if push_config.is_some() && !self.inner.push {
            return Err(A2aError::PushNotificationNotSupported);
        }
        match message.task_id.clone() {
            // Boxed apart: each would otherwise size the other's future.
            Some(task_id) => {
                Box::pin(self.continue_task(task_id, message, metadata, push_config)).await
            }
            None => self.new_task(message, metadata, push_config, stage).await,
        }
    }

    /// Store an inline push config for `task_id` (before the task can emit anything, so no
    /// event is missed).
    async fn attach_push(
        &self,
        task_id: &str,
        config: Option<TaskPushNotificationConfig>,
    ) -> Result<(), A2aError> {
        if let Some(mut config) = config {
            config.task_id = Some(task_id.to_string());
            // Boxed: rare, and it would size every send's future.
            Box::pin(self.store_push_config(config)).await?;
        }
        Ok(())
    }

    /// Extract the skill's arguments and build its future (the agent's `prepare`).
    fn prepare(
        &self,
        skill_id: &'static str,
        metadata: Option<crate::protocol::Metadata>,
        history: Option<Vec<Message>>,
        ctx: &TaskContext,
    ) -> Result<crate::agent::SkillCall, A2aError> {
        let req = SkillRequest {
            skill_id: skill_id.into(),
            message: None,
            metadata,
            history,
            context: ctx.clone(),
        };
        self.inner.agent.clone().prepare(skill_id, &req)
    }

    async fn new_task(
        &self,
        mut message: Message,
        metadata: Option<crate::protocol::Metadata>,
        push: Option<TaskPushNotificationConfig>,
        stage: bool,
    ) -> Result<Started, A2aError> {
        let info = self.inner.agent.info();
        let skill = match explicit_skill_id(&message, metadata.as_ref()) {
            Some(id) => info
                .skill(id)
                .ok_or_else(|| no_skill_error(info, &format!("this agent has no skill `{id}`")))?,
            None => match info.skills {
                [only] => only,
                skills => match skills.iter().find(|s| s.default) {
                    Some(d) => d,
                    None => {
                        let route = match &self.inner.router {
                            Some(r) => {
                                r.route(RouteRequest {
                                    message: &message,
                                    metadata: metadata.as_ref(),
                                    skills,
                                })
                                .await
                            }
                            None => Route::NoMatch,
                        };
                        match route {
                            Route::Skill(id) => info.skill(&id).ok_or_else(|| {
                                A2aError::Internal(format!(
                                    "the skill router chose `{id}`, which does not exist"
                                ))
                            })?,
                            Route::Reply(reply) => {
                                let context_id = message.context_id.clone().unwrap_or_else(new_id);
                                return Ok(Started::Message(direct_reply(reply, context_id)));
                            }
                            Route::NoMatch => {
                                return Err(no_skill_error(
                                    info,
                                    "the message does not name a skill",
                                ));
                            }
                        }
                    }
                },
            },
        };
        let context_id = message.context_id.clone().unwrap_or_else(new_id);
        let task_id = new_id();
        message.context_id = Some(context_id.clone());
        let direct = skill.direct_message;
        if !direct {
            message.task_id = Some(task_id.clone());
        }
        // Staged: nobody can see the task before the skill's first poll is over. Not with a
        // push config (stored before the task's first event) or a narrator (which reads the
        // task from the store on its own schedule).
        let rt = self.rt();
        let stage = stage && !direct && push.is_none() && rt.config.narrator.is_none();
        // The message, unless the staged task holds it.
        let (ctx, unstaged) = if stage {
            let ctx_message = message.clone();
            let task = new_task_value(&task_id, &context_id, message);
            let ctx = TaskContext::staged(task, skill.id, ctx_message, rt.clone());
            (ctx, None)
        } else {
            let ctx = TaskContext::new(
                task_id.clone(),
                context_id.clone(),
                skill.id,
                message.clone(),
                (!direct).then(|| rt.clone()),
            );
            (ctx, Some(message))
        };
        let call = self.prepare(skill.id, metadata, None, &ctx)?;

        if direct {
            let Some(message) = unstaged else {
                unreachable!("a direct-message skill has no task to stage")
            };
            // Boxed: a rare path, kept out of the size of every request's future.
            let direct = self.run_direct(call.future, message, task_id, context_id, skill.id, push);
            return Box::pin(direct).await;
        }

        if let Some(message) = unstaged {
            self.create_task(&task_id, &context_id, skill.id, message)
                .await?;
            self.attach_push(&task_id, push).await?;
        }
        Ok(Started::Task {
            task_id,
            after: 0,
            launch: Launch::Spawn {
                ctx,
                future: call.future,
                emit_working: true,
            },
        })
    }

    /// Run a direct-message skill: its reply is the answer; if it fails instead, the failure
    /// is recorded as a task.
    async fn run_direct(
        &self,
        future: futures::future::BoxFuture<'static, crate::reply::Outcome>,
        mut message: Message,
        task_id: String,
        context_id: String,
        skill_id: &'static str,
        push: Option<TaskPushNotificationConfig>,
    ) -> Result<Started, A2aError> {
        let outcome = self.rt().run_guarded(future).await;
        if let OutcomeKind::Message(reply) = outcome.kind {
            return Ok(Started::Message(direct_reply(reply, context_id)));
        }
        message.task_id = Some(task_id.clone());
        let ctx = TaskContext::new(
            task_id.clone(),
            context_id.clone(),
            skill_id,
            message.clone(),
            Some(self.rt().clone()),
        );
        self.create_task(&task_id, &context_id, skill_id, message)
            .await?;
        self.attach_push(&task_id, push).await?;
        self.rt().finish(&ctx, outcome).await;
        Ok(Started::Task {
            task_id,
            after: 0,
            launch: Launch::Nothing,
        })
    }

    async fn create_task(
        &self,
        task_id: &str,
        context_id: &str,
        skill_id: &str,
        message: Message,
    ) -> Result<(), A2aError> {
        let task = new_task_value(task_id, context_id, message);
        self.rt()
            .store
            .create_task(task, Some(skill_id.to_string()))
            .await?;
        Ok(())
    }

    async fn continue_task(
        &self,
        task_id: String,
        mut message: Message,
        metadata: Option<crate::protocol::Metadata>,
        push: Option<TaskPushNotificationConfig>,
    ) -> Result<Started, A2aError> {
        let rt = self.rt();
        let rec = rt
            .store
            .get_task(&task_id, TaskView::FULL)
            .await?
            .ok_or_else(|| A2aError::task_not_found(&task_id))?;
        let state = rec.task.status.state;
        if state.is_terminal() {
            return Err(A2aError::unsupported(format!(
                "task {task_id} is {} and cannot take more messages; start a new task in context {} \
                 (list the old one in referenceTaskIds)",
                state.as_str(),
                rec.task.context_id
            )));
        }
        match message.context_id.as_deref() {
            Some(c) if c != rec.task.context_id => {
                return Err(A2aError::invalid_field(
                    "message.contextId",
                    format!(
                        "task {task_id} belongs to context {}, not {c}",
                        rec.task.context_id
                    ),
                ));
            }
            _ => message.context_id = Some(rec.task.context_id.clone()),
        }
        let context_id = rec.task.context_id.clone();
        let info = self.inner.agent.info();
        let skill_id = rec.skill_id.clone().unwrap_or_default();
        let after = rec.last_seq;

        if state.is_interrupted() {
            if let Some(waiter) = rt.take_waiter(&task_id) {
                // A skill is suspended in `ask`: hand it the reply.
                self.attach_push(&task_id, push).await?;
                rt.store.add_message(&task_id, message.clone()).await?;
                rt.emit_status_for(&task_id, &context_id, TaskState::Working, None)
                    .await?;
                return Ok(Started::Task {
                    task_id,
                    after,
                    launch: Launch::Resume { waiter, message },
                });
            }
            // Stateless multi-turn: invoke the task's skill again with the whole history.
            let skill = info.skill(&skill_id).ok_or_else(|| {
                A2aError::Internal(format!(
                    "task {task_id} belongs to skill `{skill_id}`, which no longer exists"
                ))
            })?;
            let ctx = TaskContext::new(
                task_id.clone(),
                context_id.clone(),
                skill.id,
                message.clone(),
                Some(rt.clone()),
            );
            let mut history = rec.task.history;
            history.push(message.clone());
            let call = self.prepare(skill.id, metadata, Some(history), &ctx)?;
            self.attach_push(&task_id, push).await?;
            rt.store.add_message(&task_id, message).await?;
            rt.emit_status_for(&task_id, &context_id, TaskState::Working, None)
                .await?;
            return Ok(Started::Task {
                task_id,
                after,
                launch: Launch::Spawn {
                    ctx,
                    future: call.future,
                    emit_working: false,
                },
            });
        }
        // SUBMITTED or WORKING: keep the message; the running skill can read it from history.
        self.attach_push(&task_id, push).await?;
        rt.store.add_message(&task_id, message).await?;
        Ok(Started::Task {
            task_id,
            after,
            launch: Launch::Nothing,
        })
    }

    fn check_webhook(&self, field: &str, url: &str) -> Result<(), A2aError> {
        if url.is_empty() {
            return Err(A2aError::invalid_field(field, "is required"));
        }
        (self.inner.webhook_validator)(url).map_err(|why| A2aError::invalid_field(field, why))
    }

    // ----- Tasks -----

    /// GetTask.
    pub async fn get_task(&self, req: GetTaskRequest) -> Result<Task, A2aError> {
        require_id("id", &req.id)?;
        let history_length = history_length("historyLength", req.history_length)?;
        self.read_task(
            &req.id,
            TaskView {
                history_length,
                include_artifacts: true,
            },
        )
        .await
    }

    /// ListTasks.
    pub async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, A2aError> {
        let page_size = match req.page_size {
            None | Some(0) => 50,
            Some(n @ 1..=100) => n as usize,
            Some(n) => {
                return Err(A2aError::invalid_field(
                    "pageSize",
                    format!("must be between 1 and 100, got {n}"),
                ));
            }
        };
        let query = ListQuery {
            context_id: req.context_id.filter(|c| !c.is_empty()),
            status: req.status.filter(|s| *s != TaskState::Unspecified),
            status_timestamp_after: req.status_timestamp_after,
            page_size,
            page_token: req.page_token.filter(|t| !t.is_empty()),
            view: TaskView {
                history_length: history_length("historyLength", req.history_length)?,
                include_artifacts: req.include_artifacts.unwrap_or(false),
            },
        };
        Ok(self.rt().store.list_tasks(&query).await?)
    }

    /// CancelTask: CANCELED is recorded at once (so a late COMPLETED can never overwrite it),
    /// the skill's token fires, and a skill that ignores it is aborted after the grace period.
    /// Canceling a terminal task (including a canceled one) is TaskNotCancelableError.
    pub async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, A2aError> {
        require_id("id", &req.id)?;
        let rt = self.rt();
        let rec = rt
            .store
            .get_task(&req.id, TaskView::FULL)
            .await?
            .ok_or_else(|| A2aError::task_not_found(&req.id))?;
        if rec.task.status.state.is_terminal() {
            return Err(A2aError::TaskNotCancelable {
                task_id: req.id,
                state: rec.task.status.state,
            });
        }
        match rt
            .emit_status_for(&req.id, &rec.task.context_id, TaskState::Canceled, None)
            .await
        {
            Ok(_) => {}
            Err(crate::store::StoreError::IllegalTransition(t)) => {
                return Err(A2aError::TaskNotCancelable {
                    task_id: req.id,
                    state: t.from,
                });
            }
            Err(e) => return Err(e.into()),
        }
        rt.signal_cancel(&req.id);
        self.read_task(&req.id, TaskView::FULL).await
    }

    /// SubscribeToTask: a Task snapshot, then the live tail with no gap and no duplicate. With
    /// `last_event_id` (SSE `Last-Event-ID`), replays the events after it instead, even when
    /// the task has ended meanwhile. A fresh subscription to a terminal task is
    /// UnsupportedOperationError.
    pub async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        last_event_id: Option<Seq>,
    ) -> Result<EventStream, A2aError> {
        if !self.inner.streaming {
            return Err(A2aError::unsupported(
                "streaming is not supported by this agent",
            ));
        }
        require_id("id", &req.id)?;
        let rec = self
            .rt()
            .store
            .get_task(
                &req.id,
                TaskView {
                    history_length: Some(0),
                    include_artifacts: false,
                },
            )
            .await?
            .ok_or_else(|| A2aError::task_not_found(&req.id))?;
        let terminal = rec.task.status.state.is_terminal();
        match last_event_id {
            None if terminal => Err(A2aError::unsupported(format!(
                "task {} is {}; there is nothing to subscribe to (use GetTask)",
                req.id,
                rec.task.status.state.as_str()
            ))),
            None => {
                let sub = self.rt().subscribe(&req.id);
                self.snapshot_stream(sub, &req.id).await
            }
            Some(seen) if terminal && seen >= rec.last_seq => Ok(futures::stream::empty().boxed()),
            Some(seen) => Ok(self.log_stream(self.rt().subscribe(&req.id), seen)),
        }
    }

    // ----- Push notification configs -----

    fn require_push(&self) -> Result<(), A2aError> {
        if self.inner.push {
            Ok(())
        } else {
            Err(A2aError::PushNotificationNotSupported)
        }
    }

    async fn store_push_config(
        &self,
        mut config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.check_webhook("url", &config.url)?;
        if config.id.as_deref().is_none_or(str::is_empty) {
            config.id = Some(new_id());
        }
        self.rt().store.put_push_config(config.clone()).await?;
        Ok(config)
    }

    /// CreateTaskPushNotificationConfig: `taskId` is required; `id` is generated when absent.
    pub async fn create_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.require_push()?;
        let task_id = config.task_id.clone().unwrap_or_default();
        require_id("taskId", &task_id)?;
        self.read_task(
            &task_id,
            TaskView {
                history_length: Some(0),
                include_artifacts: false,
            },
        )
        .await?;
        self.store_push_config(config).await
    }

    /// GetTaskPushNotificationConfig: a missing config is TaskNotFoundError (the spec has no
    /// dedicated code; not-found is what it means).
    pub async fn get_push_config(
        &self,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.require_push()?;
        require_id("taskId", &req.task_id)?;
        require_id("id", &req.id)?;
        self.rt()
            .store
            .get_push_config(&req.task_id, &req.id)
            .await?
            .ok_or_else(|| A2aError::TaskNotFound {
                task_id: req.task_id.clone(),
            })
    }

    /// ListTaskPushNotificationConfigs (offset pagination; `pageSize` 0 means all).
    pub async fn list_push_configs(
        &self,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        self.require_push()?;
        require_id("taskId", &req.task_id)?;
        let all = self.rt().store.list_push_configs(&req.task_id).await?;
        let start = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
            None => 0,
            Some(t) => t.parse::<usize>().map_err(|_| {
                A2aError::invalid_field("pageToken", "not a token this server issued")
            })?,
        };
        let size = match req.page_size {
            None | Some(0) => usize::MAX,
            Some(n) if n < 0 => {
                return Err(A2aError::invalid_field("pageSize", "must not be negative"));
            }
            Some(n) => n as usize,
        };
        let end = start.saturating_add(size).min(all.len());
        let configs = all
            .get(start.min(all.len())..end)
            .unwrap_or_default()
            .to_vec();
        let next_page_token = (end < all.len()).then(|| end.to_string());
        Ok(ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token,
        })
    }

    /// DeleteTaskPushNotificationConfig: idempotent (deleting a missing config succeeds).
    pub async fn delete_push_config(
        &self,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2aError> {
        self.require_push()?;
        require_id("taskId", &req.task_id)?;
        require_id("id", &req.id)?;
        self.rt()
            .store
            .delete_push_config(&req.task_id, &req.id)
            .await?;
        Ok(())
    }

    // ----- Extended card -----

    /// GetExtendedAgentCard. Authentication is the host application's job (axum middleware);
    /// without an extended card the capability is off and this is UnsupportedOperationError.
    pub async fn get_extended_agent_card(
        &self,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        match (
            &self.inner.extended_card,
            self.inner.card.capabilities.extended_agent_card,
        ) {
            (Some(card), _) => Ok(card.clone()),
            (None, Some(true)) => Err(A2aError::ExtendedAgentCardNotConfigured),
            (None, _) => Err(A2aError::unsupported(
                "this agent has no extended agent card",
            )),
        }
    }

    // ----- Lifecycle -----

    /// End the tasks a previous process left SUBMITTED or WORKING (it crashed or was killed):
    /// each ends FAILED with a "server restarted" status message, so no task stays WORKING.
    /// Call it once at start-up with a durable store (`A2a::serve` does); returns how many.
    pub async fn recover(&self) -> Result<usize, A2aError> {
        let rt = self.rt();
        let stale = rt
            .store
            .task_ids_in_states(&[TaskState::Submitted, TaskState::Working])
            .await?;
        let mut n = 0;
        for task_id in stale {
            if rt.running_ids().contains(&task_id) {
                continue;
            }
            let Some(rec) = rt
                .store
                .get_task(
                    &task_id,
                    TaskView {
                        history_length: Some(0),
                        include_artifacts: false,
                    },
                )
                .await?
            else {
                continue;
            };
            let msg = Runtime::agent_message(
                &task_id,
                &rec.task.context_id,
                vec![crate::protocol::Part::text(
                    "the server restarted while the task was running",
                )],
            );
            if rt
                .emit_status_for(&task_id, &rec.task.context_id, TaskState::Failed, Some(msg))
                .await
                .is_ok()
            {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Let running tasks finish for up to `deadline`, then end the rest FAILED with a reason.
    /// No task is left WORKING.
    pub async fn shutdown(&self, deadline: Duration) {
        let rt = self.rt();
        let until = tokio::time::Instant::now() + deadline;
        while !rt.running_ids().is_empty() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for task_id in rt.running_ids() {
            if let Ok(Some(rec)) = rt
                .store
                .get_task(
                    &task_id,
                    TaskView {
                        history_length: Some(0),
                        include_artifacts: false,
                    },
                )
                .await
            {
                let msg = Runtime::agent_message(
                    &task_id,
                    &rec.task.context_id,
                    vec![crate::protocol::Part::text(
                        "the server shut down before the task finished",
                    )],
                );
                let _ = rt
                    .emit_status_for(&task_id, &rec.task.context_id, TaskState::Failed, Some(msg))
                    .await;
            }
            rt.signal_cancel(&task_id);
        }
    }
}

enum Started {
    Message(Message),
    /// The task, and the sequence number its stream starts after (0: a new task, from its
    /// creation snapshot).
    Task {
        task_id: String,
        after: Seq,
        launch: Launch,
    },
}

/// What a SendMessage settled to, before the task is read back.
enum Sent {
    Message(Message),
    Task { task_id: String, view: TaskView },
}

/// What starting a task leaves for the caller to set going once it has subscribed to the
/// task's doorbell (so that it cannot miss the events it waits for).
enum Launch {
    /// Run the skill (`emit_working`: a new task, which goes SUBMITTED -> WORKING first).
    Spawn {
        ctx: TaskContext,
        future: futures::future::BoxFuture<'static, crate::reply::Outcome>,
        emit_working: bool,
    },
    /// Hand the message to a skill suspended in `ask`.
    Resume {
        waiter: tokio::sync::oneshot::Sender<Message>,
        message: Message,
    },
    /// Nothing to start: the skill is running already, or everything was written (a failed
    /// direct-message skill, recorded as a task). Events may precede the caller's subscription.
    Nothing,
}

/// A new task as the first message creates it: SUBMITTED, that message its history.
fn new_task_value(task_id: &str, context_id: &str, message: Message) -> Task {
    Task {
        id: task_id.to_string(),
        context_id: context_id.to_string(),
        status: TaskStatus::new(TaskState::Submitted),
        artifacts: Vec::new(),
        // Room for the status message a quick skill ends with.
        history: {
            let mut history = Vec::with_capacity(2);
            history.push(message);
            history
        },
        metadata: None,
    }
}

fn direct_reply(mut reply: Message, context_id: String) -> Message {
    reply.role = Role::Agent;
    reply.task_id = None;
    if reply.context_id.is_none() {
        reply.context_id = Some(context_id);
    }
    reply
}

fn new_id() -> String {
    crate::protocol::new_uuid()
}

fn require_id(field: &str, value: &str) -> Result<(), A2aError> {
    if value.is_empty() {
        Err(A2aError::invalid_field(field, "is required"))
    } else {
        Ok(())
    }
}

fn history_length(field: &str, v: Option<i32>) -> Result<Option<usize>, A2aError> {
    match v {
        Some(n) if n < 0 => Err(A2aError::invalid_field(
            field,
            format!("must not be negative, got {n}"),
        )),
        Some(n) => Ok(Some(n as usize)),
        None => Ok(None),
    }
}

impl AgentService {
    /// Check a SendMessage request; returns its history length.
    fn validate_send(&self, req: &SendMessageRequest) -> Result<Option<usize>, A2aError> {
        let m = &req.message;
        if m.message_id.is_empty() {
            return Err(A2aError::invalid_field("message.messageId", "is required"));
        }
        if m.role != Role::User {
            return Err(A2aError::invalid_field(
                "message.role",
                format!(
                    "must be ROLE_USER for messages sent to an agent, got {}",
                    m.role.as_str()
                ),
            ));
        }
        if m.parts.is_empty() {
            return Err(A2aError::invalid_field(
                "message.parts",
                "must contain at least one part",
            ));
        }
        let hl = history_length(
            "configuration.historyLength",
            req.configuration.as_ref().and_then(|c| c.history_length),
        )?;
        if let Some(p) = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.as_ref())
        {
            if !self.inner.push {
                return Err(A2aError::PushNotificationNotSupported);
            }
            self.check_webhook("configuration.taskPushNotificationConfig.url", &p.url)?;
        }
        Ok(hl)
    }
}

/// The default webhook check: an absolute http or https URL with a host.
pub fn check_webhook_url(url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    match uri.scheme_str() {
        Some("http") | Some("https") if uri.host().is_some() => Ok(()),
        _ => Err(format!("`{url}` must be an absolute http or https URL")),
    }
}

/// What a binding produces: a status, headers, and a complete body or an SSE stream.
pub struct BindingResponse {
    /// HTTP status.
    pub status: http::StatusCode,
    /// Headers (content type included).
    pub headers: http::HeaderMap,
    /// The body.
    pub body: BindingBody,
}

/// A complete body or a stream of SSE frames.
pub enum BindingBody {
    /// The whole body.
    Full(Bytes),
    /// SSE frames, keep-alives included.
    Sse(BoxStream<'static, Bytes>),
}

impl std::fmt::Debug for BindingResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = match &self.body {
            BindingBody::Full(b) => format!("Full({} bytes)", b.len()),
            BindingBody::Sse(_) => "Sse".into(),
        };
        f.debug_struct("BindingResponse")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &body)
            .finish()
    }
}

impl BindingResponse {
    /// A JSON response.
    pub fn json(status: http::StatusCode, body: impl Into<Bytes>) -> Self {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        BindingResponse {
            status,
            headers,
            body: BindingBody::Full(body.into()),
        }
    }

    /// An SSE response.
    pub fn sse(frames: BoxStream<'static, Bytes>) -> Self {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-cache"),
        );
        BindingResponse {
            status: http::StatusCode::OK,
            headers,
            body: BindingBody::Sse(frames),
        }
    }

    /// Echo the activated extensions.
    pub fn with_extensions(mut self, meta: &RequestMeta) -> Self {
        if !meta.extensions.is_empty() {
            if let Ok(v) = http::HeaderValue::from_str(&meta.extensions.join(", ")) {
                self.headers.insert(params::EXTENSIONS_HEADER, v);
            }
        }
        self
    }
}

/// Whether a Content-Type is JSON (`application/json`, `application/a2a+json`, any `+json`).
///
/// ```
/// use a2a_kit::server::is_json_content_type;
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
    let Some(value) = headers.get(http::header::CONTENT_TYPE) else {
        return false;
    };
    // The media type, before any parameters; compared without case and without allocating.
    let media = value.as_bytes().split(|b| *b == b';').next().unwrap_or(b"");
    let media = media.trim_ascii();
    let prefix = b"application/";
    media.eq_ignore_ascii_case(b"application/json")
        || (media.len() >= prefix.len() + 5
            && media[..prefix.len()].eq_ignore_ascii_case(prefix)
            && media[media.len() - 5..].eq_ignore_ascii_case(b"+json"))
}

impl AgentService {
    /// The agent card response, honouring `If-None-Match` (304).
    pub fn card_response(&self, headers: &http::HeaderMap) -> BindingResponse {
        let (json, etag, last_modified) = self.card_document();
        let not_modified = headers
            .get(http::header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
        let mut resp = if not_modified {
            let mut r = BindingResponse::json(http::StatusCode::NOT_MODIFIED, Bytes::new());
            r.headers.remove(http::header::CONTENT_TYPE);
            r
        } else {
            BindingResponse::json(http::StatusCode::OK, json.clone())
        };
        resp.headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("public, max-age=300"),
        );
        if let Ok(v) = http::HeaderValue::from_str(etag) {
            resp.headers.insert(http::header::ETAG, v);
        }
        if let Ok(v) = http::HeaderValue::from_str(last_modified) {
            resp.headers.insert(http::header::LAST_MODIFIED, v);
        }
        resp
    }
}
