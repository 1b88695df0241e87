//! [`AgentServiceBuilder`]: the one way to configure an agent, checked when it is built.

use std::sync::Arc;

use super::card::{CardJson, PER_REQUEST_URL};
use super::{AgentService, ServiceInner};
use std::collections::BTreeMap;

use crate::protocol::{AgentCard, AgentExtension, SecurityRequirement, SecurityScheme, StringList};
use crate::runtime::{EventObserver, ExecutionConfig, Runtime};
use crate::skill::{AgentInfo, BoundBlock, DynAgent, SkillInfo, SkillRouter, SkillTable};
use crate::store::{InMemoryTaskManager, TaskManager};

/// What is wrong with a configuration; [`AgentServiceBuilder::build`] returns it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The public URL is not an absolute http or https URL.
    #[error("public_url `{url}` is not an absolute http or https URL: {reason}")]
    PublicUrl {
        /// The URL as configured.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// A required extension has an empty URI.
    #[error("require_extension: an extension URI must not be empty")]
    EmptyExtensionUri,
    /// The gRPC address is not a `host:port`.
    #[error("grpc_address `{0}` is not a host:port (e.g. `agent.example:50051`)")]
    GrpcAddress(String),
    /// A narrator is set with a zero narration interval.
    #[error("execution: narration_interval must be greater than zero when a narrator is set")]
    ZeroNarrationInterval,
    /// `ExecutionConfig::max_running_skills` was zero: no skill could ever run.
    #[error("execution: max_running_skills must be at least 1")]
    ZeroRunningSkills,
    /// [`AgentServiceBuilder::push_configs_per_task`] was zero: no config could ever be
    /// stored (turn push off instead: `push_notifications(false)`).
    #[error(
        "push_configs_per_task must be at least 1 (to offer no push notifications, use push_notifications(false))"
    )]
    ZeroPushConfigsPerTask,
    /// A caller quota that cannot work.
    #[error("caller_quota: {0}")]
    CallerQuota(String),
    /// [`ExecutionConfig::per_caller`](crate::runtime::ExecutionConfig::per_caller) allows a
    /// caller nothing.
    #[error("per_caller: {0}")]
    CallerShare(String),
    /// An extended card (or a skill for it only) without an authenticator: the spec requires
    /// GetExtendedAgentCard to be authenticated.
    #[error(
        "the extended agent card must be served to authenticated callers only: add an authenticator (AgentServiceBuilder::authenticate), or say that the host authenticates in front of the agent (extended_card_authenticated_upstream)"
    )]
    ExtendedCardWithoutAuthenticator,
    /// A skill requires scopes but there is no authenticator to name callers and their scopes.
    #[error(
        "skill `{0}` requires scopes, which only an authenticator can grant (AgentServiceBuilder::authenticate)"
    )]
    ScopesWithoutAuthenticator(String),
    /// `task_ownership` was set without an authenticator: without callers every task is
    /// everyone's, so the setting would do nothing.
    #[error(
        "task_ownership needs an authenticator (AgentServiceBuilder::authenticate): without one there are no callers to tell apart"
    )]
    OwnershipWithoutAuthenticator,
    /// The agent's skills conflict: two impl blocks declare one skill id, or two defaults.
    /// The message names both blocks.
    #[error("{0}")]
    Skills(String),
    /// The card cannot be serialized (a card edit put something unserializable in it).
    #[error("the agent card cannot be serialized: {0}")]
    Card(String),
    /// A card is signed ([`AgentServiceBuilder::sign_card`]) but the agent has no public
    /// URL: a card naming each request's own URL would differ per request and break its
    /// signature.
    #[error(
        "a signed agent card needs a fixed URL: set public_url (a card naming each request's URL would break its signature)"
    )]
    SignedCardNeedsPublicUrl,
    /// The card could not be signed with a configured key.
    #[error("the agent card cannot be signed: {0}")]
    CardSigning(String),
    /// A store shared by several processes needs a Tokio runtime when the service is built
    /// (it listens for the other processes' changes from then on).
    #[error("a store shared by several processes needs `build()` to run inside a Tokio runtime")]
    NoRuntime,
    /// Push notifications were asked for (`push_notifications(true)`, `push_delivery`, or
    /// the agent's `push_notifications`) but the task store keeps no push configs: its
    /// [`TaskManager::push_configs`] is `None`.
    #[error(
        "push notifications need a task store with the PushConfigStore capability, and this store has none (TaskManager::push_configs returns None): use a store that keeps push configs (InMemoryTaskManager, SqliteTaskManager, PostgresTaskManager), or turn push off (push_notifications(false))"
    )]
    PushWithoutConfigStore,
}

/// Checks a push notification URL when a config is created; `Err` is the reason it is refused
/// (sent back as InvalidParams). The default accepts absolute http and https URLs; the push
/// module's SSRF guard installs a stricter one.
pub type WebhookValidator = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Checks a push notification URL's host when a config is created, after the
/// [`WebhookValidator`] and before anything is stored: the push dispatcher resolves the name
/// and applies its SSRF policy to the addresses, so a name that resolves to a private
/// address is refused to the client at once, not silently at each delivery. `Err` is the
/// reason (sent back as InvalidParams). None by default.
pub type WebhookHostCheck =
    Arc<dyn Fn(&str) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// How many push configs a task may have unless
/// [`AgentServiceBuilder::push_configs_per_task`] says otherwise.
pub const DEFAULT_PUSH_CONFIGS_PER_TASK: usize = 10;

/// An edit applied to the card after the kit built it.
type CardEdit = Box<dyn FnOnce(&mut AgentCard) + Send>;

/// Builds an observer once the store is known.
type ObserverFactory = Box<dyn FnOnce(&Arc<dyn TaskManager>) -> Arc<dyn EventObserver> + Send>;

/// Configures an [`AgentService`].
#[must_use]
pub struct AgentServiceBuilder {
    agent: DynAgent,
    /// The agent as its own type, for skill sets.
    type_name: &'static str,
    skill_sets: Vec<BoundBlock>,
    public_url: Option<String>,
    store: Option<Arc<dyn TaskManager>>,
    execution: ExecutionConfig,
    router: Option<Arc<dyn SkillRouter>>,
    narrator: Option<Arc<dyn crate::runtime::StatusNarrator>>,
    extended_card: Option<AgentCard>,
    required_extensions: Vec<String>,
    streaming: Option<bool>,
    push: Option<bool>,
    customize: Vec<CardEdit>,
    observers: Vec<ObserverFactory>,
    webhook_validator: Option<WebhookValidator>,
    webhook_host_check: Option<WebhookHostCheck>,
    push_configs_per_task: usize,
    authenticator: Option<Arc<dyn crate::auth::Authenticator>>,
    caller_quota: Option<crate::runtime::CallerQuota>,
    ownership: Option<super::TaskOwnership>,
    extended_card_for: Option<super::ExtendedCardHook>,
    extended_card_upstream: bool,
    #[cfg(feature = "jose")]
    card_signers: Vec<crate::signing::Signer>,
    #[cfg(feature = "jose")]
    published_keys: Vec<crate::signing::Signer>,
    /// Where the gRPC binding is served: `Some(None)` where the public URL (or each
    /// request) is, `Some(Some(host_port))` there, `None` not at all.
    #[cfg(feature = "grpc")]
    grpc: Option<Option<String>>,
    /// Whether A2A 0.3 is served beside 1.0.
    v03: bool,
}

impl AgentServiceBuilder {
    pub(super) fn new(agent: DynAgent, type_name: &'static str) -> Self {
        AgentServiceBuilder {
            agent,
            type_name,
            skill_sets: Vec::new(),
            public_url: None,
            store: None,
            execution: ExecutionConfig::default(),
            router: None,
            narrator: None,
            extended_card: None,
            required_extensions: Vec::new(),
            streaming: None,
            push: None,
            customize: Vec::new(),
            observers: Vec::new(),
            webhook_validator: None,
            webhook_host_check: None,
            push_configs_per_task: DEFAULT_PUSH_CONFIGS_PER_TASK,
            authenticator: None,
            caller_quota: None,
            ownership: None,
            extended_card_for: None,
            extended_card_upstream: false,
            #[cfg(feature = "jose")]
            card_signers: Vec::new(),
            #[cfg(feature = "jose")]
            published_keys: Vec::new(),
            #[cfg(feature = "grpc")]
            grpc: Some(None),
            v03: true,
        }
    }

    /// Add bound skill blocks (from [`AgentService::builder_with`](super::AgentService::builder_with)).
    pub(super) fn with_skill_blocks(
        mut self,
        blocks: impl IntoIterator<Item = BoundBlock>,
    ) -> Self {
        self.skill_sets.extend(blocks);
        self
    }

    // ----- How skills run: routing, narration, execution limits, observers -----

    /// Routing rule 6 (see [`SkillRouter`]), and rule 4 when several skills take data; a
    /// router that [decides first](SkillRouter::decides_first) is asked before rules 3 to 5.
    pub fn skill_router(mut self, router: impl SkillRouter) -> Self {
        self.router = Some(Arc::new(router));
        self
    }

    /// Narrate running tasks (see [`StatusNarrator`](crate::runtime::StatusNarrator)): it
    /// takes precedence over [`ExecutionConfig::narrator`], whichever is set first.
    pub fn narrator(mut self, narrator: impl crate::runtime::StatusNarrator) -> Self {
        self.narrator = Some(Arc::new(narrator));
        self
    }

    /// Execution knobs (status style, cancel grace, timeouts, narration).
    pub fn execution(mut self, config: ExecutionConfig) -> Self {
        self.execution = config;
        self
    }

    /// Add an observer of every stored event (built with the service's store).
    pub fn observe_with(
        mut self,
        factory: impl FnOnce(&Arc<dyn TaskManager>) -> Arc<dyn EventObserver> + Send + 'static,
    ) -> Self {
        self.observers.push(Box::new(factory));
        self
    }

    // ----- Where tasks are kept -----

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

    // ----- Who may call, and what each caller sees -----

    /// Authenticate every request (the card aside) with `authenticator` before it is read:
    /// without valid credentials, 401 with `WWW-Authenticate` (403 for a known caller without
    /// the right). The card's `securitySchemes` and `securityRequirements` (any one scheme)
    /// come from it. Without one, the agent is open to anyone who reaches it.
    pub fn authenticate(mut self, authenticator: impl crate::auth::Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// Requests a second each authenticated caller may send (429 with `Retry-After` over it,
    /// before the request is read). Needs an [`authenticate`](Self::authenticate)r: without
    /// callers there is nobody to count for (per address, see a2a-kit-axum's
    /// `ServerLimits::rate_limit_per_ip`). What a caller may hold at once (turns, live tasks)
    /// is its share, on by default: [`ExecutionConfig::per_caller`](crate::runtime::ExecutionConfig::per_caller).
    pub fn caller_quota(mut self, quota: crate::runtime::CallerQuota) -> Self {
        self.caller_quota = Some(quota);
        self
    }

    /// Who shares tasks with whom (default: each caller, by subject, owns the tasks it
    /// creates; see [`TaskOwnership`](super::TaskOwnership)). Every task operation on
    /// another owner's task answers TaskNotFound and ListTasks lists the caller's own; the
    /// request's tenant isolates tasks in every mode. Needs an
    /// [`authenticate`](Self::authenticate)r.
    pub fn task_ownership(mut self, ownership: super::TaskOwnership) -> Self {
        self.ownership = Some(ownership);
        self
    }

    // ----- The card: URL, capabilities, extensions, the extended card, signatures -----

    /// The absolute URL clients reach the agent at (scheme, host and the path it is mounted
    /// at: JSON-RPC there, HTTP+JSON below it); the card advertises it. Without one, the card names the URL each request came in on: its
    /// `Host` (and the path the agent's router is nested at), or the `Forwarded` /
    /// `X-Forwarded-*` headers when the HTTP edge trusts them
    /// ([`HttpConfig::trust_forwarded_headers`](crate::binding::HttpConfig::trust_forwarded_headers)). Behind a proxy
    /// that terminates TLS, set one or trust the proxy's headers.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// Serve the gRPC binding (feature `grpc`: on by default, on the same port as the
    /// others). `false` turns it off: the card no longer lists a `GRPC` interface and a gRPC
    /// call is answered `UNIMPLEMENTED`.
    #[cfg(feature = "grpc")]
    pub fn grpc(mut self, on: bool) -> Self {
        self.grpc = on.then_some(None);
        self
    }

    /// The `host:port` gRPC clients dial, when it is not the public URL's (a port of its
    /// own): the card's `GRPC` interface names it. Turns the binding on.
    #[cfg(feature = "grpc")]
    pub fn grpc_address(mut self, host_port: impl Into<String>) -> Self {
        self.grpc = Some(Some(host_port.into()));
        self
    }

    /// Serve A2A 0.3 beside 1.0 on the same URLs (on by default): its JSON-RPC methods
    /// (`message/send`...), its HTTP+JSON routes (`/v1/...`) and, with the gRPC binding, its
    /// gRPC service (`a2a.v1.A2AService`), translated at the edge to the same operations;
    /// the card carries the fields a 0.3 client reads beside its own. `false` serves 1.0
    /// only: a 0.3 method is MethodNotFound, a request without `A2A-Version`
    /// VersionNotSupported.
    pub fn v03(mut self, on: bool) -> Self {
        self.v03 = on;
        self
    }

    /// Whether a public URL was set.
    pub fn has_public_url(&self) -> bool {
        self.public_url.is_some()
    }

    /// Edit the card after the kit built it.
    pub fn card(mut self, f: impl FnOnce(&mut AgentCard) + Send + 'static) -> Self {
        self.customize.push(Box::new(f));
        self
    }

    /// Override the streaming capability (default: the agent's).
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = Some(on);
        self
    }

    /// Override the push notification capability (default: the agent's). This alone only
    /// stores configs; `push_delivery` (feature `push`) also delivers them. Push needs a task
    /// store that keeps configs ([`TaskManager::push_configs`]): on one without,
    /// [`build`](Self::build) fails with [`BuildError::PushWithoutConfigStore`].
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.push = Some(on);
        self
    }

    /// Declare an extension as required: requests that do not activate it through
    /// `A2A-Extensions` get ExtensionSupportRequiredError.
    pub fn require_extension(mut self, uri: impl Into<String>) -> Self {
        self.required_extensions.push(uri.into());
        self
    }

    /// Serve this card from GetExtendedAgentCard (and advertise `extendedAgentCard`) to
    /// authenticated callers. Without it, an agent with `#[skill(extended_only)]` skills or
    /// an [`extended_card_for`](Self::extended_card_for) hook serves its own card with every
    /// skill. Needs an [`authenticate`](Self::authenticate)r (the spec requires the call to
    /// be authenticated), or [`extended_card_authenticated_upstream`](Self::extended_card_authenticated_upstream).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Build the extended card per request: `f` sees the caller (`None` only when the host
    /// authenticates upstream), the request's tenant and the extended card, and may change it
    /// (add what this caller may use, remove what it may not: a per-tenant card).
    ///
    /// ```
    /// # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), a2a_kit::server::BuildError> {
    /// use a2a_kit::auth::ApiKeys;
    /// let service = a2a_kit::server::AgentService::builder(agent)
    ///     .authenticate(ApiKeys::header("X-API-Key").key("k", "alice"))
    ///     .extended_card_for(|caller, tenant, card| {
    ///         let who = caller.map_or("someone", |c| c.subject.as_str());
    ///         card.description = format!("{} (for {who} in {})", card.description, tenant.unwrap_or("no tenant"));
    ///     })
    ///     .build()?;
    /// # let _ = service; Ok(()) }
    /// ```
    pub fn extended_card_for(
        mut self,
        f: impl Fn(Option<&crate::auth::Caller>, Option<&str>, &mut AgentCard) + Send + Sync + 'static,
    ) -> Self {
        self.extended_card_for = Some(Arc::new(f));
        self
    }

    /// The host authenticates requests in front of the agent (middleware of its own, a
    /// gateway), so an extended card may be configured without an
    /// [`authenticate`](Self::authenticate)r. The kit then cannot tell callers apart.
    pub fn extended_card_authenticated_upstream(mut self) -> Self {
        self.extended_card_upstream = true;
        self
    }

    /// Sign the card with `signer` (feature `jose`): a detached JWS over the card's JCS form,
    /// added to its `signatures` after every other card edit. Call it again with another key
    /// to carry several signatures (a key rotation: clients trusting either key accept the
    /// card). The signer's public key is published in the JWKS at
    /// [`JWKS_PATH`](crate::signing::JWKS_PATH). Needs a [`public_url`](Self::public_url)
    /// (else [`BuildError::SignedCardNeedsPublicUrl`]): a card naming each request's URL
    /// could not carry one signature.
    ///
    /// The extended card is signed too: once, when built, if it is the same for every
    /// caller; after the [`extended_card_for`](Self::extended_card_for) hook on every
    /// request when there is one (the hook may change anything, so only a signature made
    /// after it covers what the caller receives).
    #[cfg(feature = "jose")]
    pub fn sign_card(mut self, signer: crate::signing::Signer) -> Self {
        self.card_signers.push(signer);
        self
    }

    /// Publish `signer`'s public key in the agent's JWKS (feature `jose`), served at
    /// [`JWKS_PATH`](crate::signing::JWKS_PATH) by a2a-kit-axum's routers: for keys that sign
    /// something else than the card (push deliveries do it themselves with
    /// `push_delivery`). Card signers are published without it.
    #[cfg(feature = "jose")]
    pub fn publish_key(mut self, signer: &crate::signing::Signer) -> Self {
        self.published_keys.push(signer.clone());
        self
    }

    // ----- Push notifications (delivery itself: `push_delivery`, in `push`) -----

    /// Replace the check applied to push notification URLs when configs are created.
    pub fn webhook_validator(
        mut self,
        check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.webhook_validator = Some(Arc::new(check));
        self
    }

    /// Check each push notification URL's host when its config is created, after the
    /// [`webhook_validator`](Self::webhook_validator) (see [`WebhookHostCheck`]);
    /// [`push_dispatcher`](Self::push_dispatcher) installs its SSRF policy's.
    pub fn webhook_host_check<F>(
        mut self,
        check: impl Fn(&str) -> F + Send + Sync + 'static,
    ) -> Self
    where
        F: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        self.webhook_host_check = Some(Arc::new(move |url| Box::pin(check(url))));
        self
    }

    /// The most push configs one task may have (default
    /// [`DEFAULT_PUSH_CONFIGS_PER_TASK`], 10; at least 1). Every event is sent to each of a
    /// task's configs, so this bounds what one task can make the agent send. Beyond it,
    /// CreateTaskPushNotificationConfig, and a SendMessage to an existing task carrying a
    /// config, are refused with InvalidParams naming the limit, and nothing is stored;
    /// replacing a config (the same `id`) still works. The store counts and inserts in one
    /// step ([`PushConfigStore::put`](crate::store::PushConfigStore::put)), so concurrent
    /// creations cannot overshoot it.
    pub fn push_configs_per_task(mut self, limit: usize) -> Self {
        self.push_configs_per_task = limit;
        self
    }

    // ----- Building -----

    /// Check the configuration and build the service; the error names what is wrong.
    pub fn build(mut self) -> Result<AgentService, BuildError> {
        self.check_settings()?;
        let info = self.agent.info();
        let skill_sets = std::mem::take(&mut self.skill_sets);
        let skills = SkillTable::new(self.agent.clone(), info, self.type_name, skill_sets)
            .map_err(BuildError::Skills)?;
        if self.authenticator.is_none()
            && let Some(s) = skills.skills().iter().find(|s| !s.scopes.is_empty())
        {
            return Err(BuildError::ScopesWithoutAuthenticator(s.id.to_string()));
        }
        let cards = self.cards(info, &skills)?;
        let service = self.service(skills, cards)?;
        if service.inner.runtime.store.cluster().is_some() {
            follow_handed_replies(&service);
        }
        Ok(service)
    }

    /// Check the settings that do not depend on the skills (the narrator joins the execution
    /// settings first).
    fn check_settings(&mut self) -> Result<(), BuildError> {
        if let Some(url) = &self.public_url {
            check_public_url(url)?;
        }
        if self.required_extensions.iter().any(|u| u.trim().is_empty()) {
            return Err(BuildError::EmptyExtensionUri);
        }
        if let Some(narrator) = self.narrator.take() {
            self.execution.narrator = Some(narrator);
        }
        if self.execution.narrator.is_some() && self.execution.narration_interval.is_zero() {
            return Err(BuildError::ZeroNarrationInterval);
        }
        if self.execution.max_running_skills == 0 {
            return Err(BuildError::ZeroRunningSkills);
        }
        self.execution
            .per_caller
            .check()
            .map_err(BuildError::CallerShare)?;
        if self.push_configs_per_task == 0 {
            return Err(BuildError::ZeroPushConfigsPerTask);
        }
        if let Some(q) = &self.caller_quota {
            if self.authenticator.is_none() {
                return Err(BuildError::CallerQuota(
                    "it needs an authenticator (AgentServiceBuilder::authenticate)".into(),
                ));
            }
            if q.requests_per_second == 0 || q.burst == 0 {
                return Err(BuildError::CallerQuota(format!(
                    "requests_per_second and burst must be at least 1, not {q:?}"
                )));
            }
        }
        if self.ownership.is_some() && self.authenticator.is_none() {
            return Err(BuildError::OwnershipWithoutAuthenticator);
        }
        #[cfg(feature = "jose")]
        if !self.card_signers.is_empty() && self.public_url.is_none() {
            return Err(BuildError::SignedCardNeedsPublicUrl);
        }
        Ok(())
    }

    /// The public card (skills for the extended card only left out) and the extended card,
    /// with their capabilities, security fields and the configured edits, signed last.
    fn cards(&mut self, info: &AgentInfo, skills: &SkillTable) -> Result<Cards, BuildError> {
        let base_url = self.public_url.as_deref().unwrap_or(PER_REQUEST_URL);
        let public_skills: Vec<SkillInfo> = skills
            .skills()
            .iter()
            .filter(|s| !s.extended_only)
            .copied()
            .collect();
        let has_extended_skills = public_skills.len() < skills.skills().len();
        let mut card = info.card_with(&public_skills, base_url);
        #[cfg(feature = "grpc")]
        let grpc = self.grpc_interface()?;
        #[cfg(feature = "grpc")]
        card.supported_interfaces.extend(grpc.clone());
        // The extended card: as configured, else this agent's own card with every skill.
        let own_extended_card = self.extended_card.is_none();
        let mut extended_card = match self.extended_card.take() {
            Some(card) => Some(card),
            None if has_extended_skills || self.extended_card_for.is_some() => {
                let mut full = info.card_with(skills.skills(), base_url);
                #[cfg(feature = "grpc")]
                full.supported_interfaces.extend(grpc);
                self.agent.customize_card(&mut full);
                Some(full)
            }
            None => None,
        };
        if extended_card.is_some() && self.authenticator.is_none() && !self.extended_card_upstream {
            return Err(BuildError::ExtendedCardWithoutAuthenticator);
        }
        self.agent.customize_card(&mut card);
        let streaming = self.streaming.unwrap_or(info.streaming);
        // Push needs somewhere to keep configs; without it the agent does not offer push.
        // (The default store, in memory, keeps them.)
        let keeps_configs = self
            .store
            .as_ref()
            .is_none_or(|s| s.push_configs().is_some());
        let push = match self.push.unwrap_or(info.push_notifications) {
            true if !keeps_configs => {
                return Err(BuildError::PushWithoutConfigStore);
            }
            on => on,
        };
        card.capabilities.streaming = Some(streaming);
        card.capabilities.push_notifications = Some(push);
        card.capabilities.extended_agent_card = Some(extended_card.is_some());
        require_extensions(&mut card, &self.required_extensions);
        if let Some(extended) = extended_card.as_mut().filter(|_| own_extended_card) {
            extended.capabilities = card.capabilities.clone();
        }
        if let Some(auth) = &self.authenticator {
            let schemes = auth.security_schemes();
            secure(&mut card, &schemes, skills.skills());
            if let Some(extended) = extended_card
                .as_mut()
                .filter(|c| c.security_schemes.is_empty())
            {
                secure(extended, &schemes, skills.skills());
            }
        }
        for f in std::mem::take(&mut self.customize) {
            f(&mut card);
        }
        // Signed last: nothing changes the cards after this.
        #[cfg(feature = "jose")]
        self.sign_cards(&mut card, extended_card.as_mut())?;
        Ok(Cards {
            card,
            extended: extended_card,
            streaming,
            push,
        })
    }

    /// Sign the card, and the extended card unless a per-request hook changes it (then it is
    /// signed after the hook), with every card signer.
    #[cfg(feature = "jose")]
    fn sign_cards(
        &self,
        card: &mut AgentCard,
        mut extended_card: Option<&mut AgentCard>,
    ) -> Result<(), BuildError> {
        for signer in &self.card_signers {
            let failed = |e: crate::signing::KeyError| BuildError::CardSigning(e.to_string());
            // Over the card as 1.0 writes it; the card served with the 0.3 fields beside
            // its own verifies without them (`Verifier::verify_card_json`).
            signer.sign_card(card).map_err(failed)?;
            if let Some(extended) = extended_card
                .as_deref_mut()
                .filter(|_| self.extended_card_for.is_none())
            {
                signer.sign_card(extended).map_err(failed)?;
            }
        }
        Ok(())
    }

    /// The JWKS document of the card signers' and published keys, if there are any.
    #[cfg(feature = "jose")]
    fn jwks(&self) -> Option<bytes::Bytes> {
        let keys: Vec<_> = self
            .card_signers
            .iter()
            .chain(&self.published_keys)
            .collect();
        (!keys.is_empty()).then(|| {
            bytes::Bytes::from(serde_json::to_vec(&crate::signing::jwks(keys)).unwrap_or_default())
        })
    }

    /// The service: the cards as served, the runtime on the store, every setting.
    fn service(self, skills: SkillTable, cards: Cards) -> Result<AgentService, BuildError> {
        #[cfg(feature = "jose")]
        let (jwks, has_hook) = (self.jwks(), self.extended_card_for.is_some());
        let Cards {
            card,
            extended: extended_card,
            streaming,
            push,
        } = cards;
        #[cfg(feature = "grpc")]
        let grpc = self.grpc.is_some();
        #[cfg(not(feature = "grpc"))]
        let grpc = false;
        let v03 = self.v03.then(|| super::v03_bindings(grpc));
        let card_json = CardJson::new(&card, self.public_url.is_none(), v03)
            .map_err(|e| BuildError::Card(e.to_string()))?;
        let supported_extensions = card
            .capabilities
            .extensions
            .iter()
            .filter_map(|e| e.uri.clone())
            .collect();
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(InMemoryTaskManager::default()));
        // Timed only when metrics are on as the service is built (else no wrapper to pass).
        let store: Arc<dyn TaskManager> = if crate::observe::metrics::enabled() {
            Arc::new(crate::store::Metered(store))
        } else {
            store
        };
        let per_caller = self.execution.per_caller;
        let mut runtime = Runtime::new(store.clone(), self.execution);
        runtime.agent_name = std::sync::Arc::from(card.name.as_str());
        runtime.set_observers(self.observers.into_iter().map(|f| f(&store)).collect());
        let runtime = Arc::new(runtime);
        if store.cluster().is_some() && tokio::runtime::Handle::try_current().is_err() {
            return Err(BuildError::NoRuntime);
        }
        Ok(AgentService {
            inner: Arc::new(ServiceInner {
                skills,
                runtime,
                router: self.router,
                card,
                card_json,
                built_at: std::time::SystemTime::now(),
                public_url: self.public_url,
                extended_card,
                extended_card_for: self.extended_card_for,
                required_extensions: self.required_extensions,
                supported_extensions,
                streaming,
                push,
                webhook_validator: self
                    .webhook_validator
                    .unwrap_or_else(|| Arc::new(check_webhook_url)),
                webhook_host_check: self.webhook_host_check,
                push_configs_per_task: self.push_configs_per_task,
                authenticator: self.authenticator,
                quotas: self.caller_quota.map(crate::runtime::Quotas::new),
                shares: crate::runtime::Shares::new(per_caller),
                ownership: self.ownership.unwrap_or_default(),
                #[cfg(feature = "jose")]
                extended_card_signers: if has_hook {
                    self.card_signers
                } else {
                    Vec::new()
                },
                #[cfg(feature = "jose")]
                jwks,
                #[cfg(feature = "grpc")]
                grpc: self.grpc.is_some(),
                v03: self.v03,
            }),
        })
    }
}

impl AgentServiceBuilder {
    /// The card's `GRPC` interface: `host:port`, the public URL's or each request's unless
    /// configured.
    #[cfg(feature = "grpc")]
    fn grpc_interface(&self) -> Result<Option<crate::protocol::AgentInterface>, BuildError> {
        use crate::protocol::AgentInterface;
        let Some(at) = &self.grpc else {
            return Ok(None);
        };
        let authority = match (at, &self.public_url) {
            (Some(host_port), _) => {
                let valid = host_port
                    .rsplit_once(':')
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
                    && !host_port.contains(['/', ' ']);
                if !valid {
                    return Err(BuildError::GrpcAddress(host_port.clone()));
                }
                host_port.clone()
            }
            (None, Some(url)) => super::authority_of(url),
            (None, None) => super::PER_REQUEST_AUTHORITY.to_string(),
        };
        Ok(Some(AgentInterface::new(authority, AgentInterface::GRPC)))
    }
}

/// The cards a service serves, and the capabilities they state.
struct Cards {
    card: AgentCard,
    extended: Option<AgentCard>,
    streaming: bool,
    push: bool,
}

/// Mark the required extensions required on the card, declaring those it does not list.
fn require_extensions(card: &mut AgentCard, required: &[String]) {
    for uri in required {
        match card
            .capabilities
            .extensions
            .iter_mut()
            .find(|e| e.uri.as_deref() == Some(uri))
        {
            Some(e) => e.required = true,
            None => card.capabilities.extensions.push(AgentExtension {
                uri: Some(uri.clone()),
                description: None,
                required: true,
                params: None,
            }),
        }
    }
}

/// On a shared store, replies handed to this replica with no skill waiting for them here are
/// continued by the service (the runtime does not know skills).
fn follow_handed_replies(service: &AgentService) {
    let weak = Arc::downgrade(&service.inner);
    service
        .inner
        .runtime
        .follow_store_changes(Arc::new(move |task_id: String| {
            let service = weak.upgrade().map(|inner| AgentService { inner });
            Box::pin(async move {
                if let Some(service) = service {
                    service.continue_handed_reply(&task_id).await;
                }
            })
        }));
}

/// The card's security fields from the authenticator's `schemes` (any one of them), and each
/// skill's scopes as its own requirements (any scheme, with those scopes).
fn secure(card: &mut AgentCard, schemes: &BTreeMap<String, SecurityScheme>, skills: &[SkillInfo]) {
    for (name, scheme) in schemes {
        card.security_requirements.push(SecurityRequirement {
            schemes: [(name.clone(), StringList::default())].into(),
        });
        card.security_schemes.insert(name.clone(), scheme.clone());
    }
    for skill in &mut card.skills {
        let Some(info) = skills.iter().find(|s| s.id == skill.id) else {
            continue;
        };
        if info.scopes.is_empty() {
            continue;
        }
        let list = StringList {
            list: info.scopes.iter().map(|s| s.to_string()).collect(),
        };
        skill.security_requirements = schemes
            .keys()
            .map(|name| SecurityRequirement {
                schemes: [(name.clone(), list.clone())].into(),
            })
            .collect();
    }
}

/// An absolute http or https URL with a host.
fn check_public_url(url: &str) -> Result<(), BuildError> {
    let refuse = |reason: String| BuildError::PublicUrl {
        url: url.to_string(),
        reason,
    };
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => match u.host_str() {
            Some(host) if !host.is_empty() => Ok(()),
            _ => Err(refuse("it has no host".into())),
        },
        Ok(_) | Err(url::ParseError::RelativeUrlWithoutBase) => {
            Err(refuse("it needs an http:// or https:// scheme".into()))
        }
        Err(url::ParseError::EmptyHost) => Err(refuse("it has no host".into())),
        Err(e) => Err(refuse(e.to_string())),
    }
}

/// The default webhook check: an absolute http or https URL with a host.
pub fn check_webhook_url(url: &str) -> Result<(), String> {
    match url::Url::parse(url) {
        Ok(u)
            if matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some_and(|h| !h.is_empty()) =>
        {
            Ok(())
        }
        Ok(_) | Err(url::ParseError::RelativeUrlWithoutBase | url::ParseError::EmptyHost) => {
            Err(format!("`{url}` must be an absolute http or https URL"))
        }
        Err(e) => Err(format!("`{url}` is not a URL: {e}")),
    }
}
