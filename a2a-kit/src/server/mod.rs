//! Binding-independent request handling: [`AgentService`] implements the 11 A2A operations,
//! one file per concern: [`builder`](AgentServiceBuilder) (configuration, checked when built),
//! `send` (SendMessage and SendStreamingMessage), `tasks` (get, list, cancel, subscribe,
//! recovery and shutdown), `push_configs` and `card`. No web framework types appear here;
//! the `binding` layer maps HTTP requests to these operations.

mod builder;
mod card;
mod follow_up;
mod ownership;
mod push_configs;
mod send;
mod tasks;

pub use crate::request::RequestContext;
pub use builder::{
    AgentServiceBuilder, BuildError, DEFAULT_PUSH_CONFIGS_PER_TASK, WebhookHostCheck,
    WebhookValidator, check_webhook_url,
};
pub use card::{PER_REQUEST_AUTHORITY, PER_REQUEST_URL, authority_of};
pub use ownership::TaskOwnership;

use std::sync::Arc;

use futures::stream::BoxStream;

use crate::error::A2aError;
use crate::protocol::{AgentCard, StreamResponse, Task};
use crate::runtime::Runtime;
use crate::skill::{Agent, SkillRouter, SkillTable};
use crate::store::{Owner, Seq, TaskManager, TaskView};

/// Builds the extended card per request: see
/// [`AgentServiceBuilder::extended_card_for`].
pub(crate) type ExtendedCardHook =
    Arc<dyn Fn(Option<&crate::auth::Caller>, Option<&str>, &mut AgentCard) + Send + Sync>;

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

/// `stream`, counted among the open streams of `method` until it is dropped.
fn counted(stream: EventStream, method: &'static str) -> EventStream {
    crate::observe::metrics::stream(method, 1);
    Box::pin(Counted { stream, method })
}

/// An open stream, counted (see [`counted`]).
struct Counted {
    stream: EventStream,
    method: &'static str,
}

impl futures::Stream for Counted {
    type Item = Result<StreamItem, A2aError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        crate::observe::metrics::stream(self.method, -1);
    }
}

/// The bindings that serve A2A 0.3 too, at the same URLs as 1.0 (when the agent serves 0.3):
/// the card offers a 0.3 client these of its 1.0 interfaces.
pub const V03_BINDINGS: &[&str] = &["JSONRPC", "HTTP+JSON"];

/// [`V03_BINDINGS`] and gRPC (`a2a.v1.A2AService` beside `lf.a2a.v1.A2AService`), for an agent
/// that serves gRPC.
const V03_BINDINGS_WITH_GRPC: &[&str] = &["JSONRPC", "HTTP+JSON", "GRPC"];

/// The bindings an agent serves A2A 0.3 over, whether it `serves_grpc`.
pub(crate) fn v03_bindings(serves_grpc: bool) -> &'static [&'static str] {
    match serves_grpc {
        true => V03_BINDINGS_WITH_GRPC,
        false => V03_BINDINGS,
    }
}

/// Hosts one agent: card, task lifecycle, streams, push configs.
///
/// ```
/// # use a2a_kit::server::AgentService;
/// # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), a2a_kit::server::BuildError> {
/// let service = AgentService::builder(agent).public_url("https://agents.example.com/travel").build()?;
/// assert_eq!(service.card().supported_interfaces[0].url, "https://agents.example.com/travel");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct AgentService {
    inner: Arc<ServiceInner>,
}

struct ServiceInner {
    skills: SkillTable,
    runtime: Arc<Runtime>,
    router: Option<Arc<dyn SkillRouter>>,
    card: AgentCard,
    card_json: card::CardJson,
    built_at: std::time::SystemTime,
    public_url: Option<String>,
    extended_card: Option<AgentCard>,
    extended_card_for: Option<ExtendedCardHook>,
    required_extensions: Vec<String>,
    supported_extensions: Vec<String>,
    streaming: bool,
    push: bool,
    webhook_validator: WebhookValidator,
    webhook_host_check: Option<WebhookHostCheck>,
    push_configs_per_task: usize,
    authenticator: Option<Arc<dyn crate::auth::Authenticator>>,
    quotas: Option<crate::runtime::Quotas>,
    /// Each caller's share of turns and live tasks.
    shares: crate::runtime::Shares,
    ownership: TaskOwnership,
    /// Re-sign the extended card after the per-request hook.
    #[cfg(feature = "jose")]
    extended_card_signers: Vec<crate::signing::Signer>,
    /// The published public keys, served at `signing::JWKS_PATH`.
    #[cfg(feature = "jose")]
    jwks: Option<bytes::Bytes>,
    /// Whether the gRPC binding is served.
    #[cfg(feature = "grpc")]
    grpc: bool,
    /// Whether A2A 0.3 is served beside 1.0.
    v03: bool,
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService")
            .field("name", &self.card().name)
            .finish_non_exhaustive()
    }
}

impl AgentService {
    /// Start configuring a service for `agent`.
    pub fn builder<A: Agent>(agent: A) -> AgentServiceBuilder {
        Self::builder_shared(Arc::new(agent))
    }

    /// Start configuring a service for a shared agent.
    pub fn builder_shared<A: Agent>(agent: Arc<A>) -> AgentServiceBuilder {
        AgentServiceBuilder::new(agent, std::any::type_name::<A>())
    }

    /// Start configuring a service for `agent` (or an `Arc` of it) with its skill sets
    /// (`#[a2a_agent(skill_set = name)]` blocks, `Type::name()`, joined with `+`) beside its
    /// own skills. A set belongs to the type whose impl block declares it: another type's set
    /// does not compile. A skill id or `default` that two blocks declare is an error from
    /// [`build`](AgentServiceBuilder::build) naming both.
    ///
    /// ```ignore
    /// let service = AgentService::builder_with(Travel, Travel::hotels() + Travel::cars()).build()?;
    /// ```
    pub fn builder_with<A: Agent>(
        agent: impl Into<Arc<A>>,
        skills: crate::skill::SkillSet<A>,
    ) -> AgentServiceBuilder {
        let agent = agent.into();
        Self::builder_shared(agent.clone()).with_skill_blocks(skills.bind(agent))
    }

    /// Start configuring a service for an agent behind a trait object. Skill sets need the
    /// agent's type: add them through [`builder_with`](Self::builder_with).
    pub fn builder_arc(agent: Arc<dyn Agent>) -> AgentServiceBuilder {
        AgentServiceBuilder::new(agent, "dyn Agent")
    }

    /// The public agent card. Built without a public URL, its URLs start with
    /// [`PER_REQUEST_URL`]: each request is served the card with its own URL in their place
    /// ([`card_for_url`](Self::card_for_url)).
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The task store.
    pub fn task_manager(&self) -> &Arc<dyn TaskManager> {
        &self.inner.runtime.store
    }

    /// The extensions this agent requires and those it supports (its card's), for the
    /// bindings' check of `A2A-Extensions`.
    pub(crate) fn extensions(&self) -> (&[String], &[String]) {
        (
            &self.inner.required_extensions,
            &self.inner.supported_extensions,
        )
    }

    /// Who authenticates its callers, if anyone ([`AgentServiceBuilder::authenticate`]).
    pub fn authenticator(&self) -> Option<&Arc<dyn crate::auth::Authenticator>> {
        self.inner.authenticator.as_ref()
    }

    /// The per-caller quotas, if configured.
    pub(crate) fn quotas(&self) -> Option<&crate::runtime::Quotas> {
        self.inner.quotas.as_ref()
    }

    fn rt(&self) -> &Arc<Runtime> {
        &self.inner.runtime
    }

    /// The task, if it is `owner`'s (see [`owned_task`](Self::owned_task)).
    async fn read_task(
        &self,
        task_id: &str,
        view: TaskView,
        owner: &Option<Owner>,
    ) -> Result<Task, A2aError> {
        Ok(self.owned_task(task_id, view, owner).await?.task)
    }
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
