//! Push-notification delivery: an outbox fed by each task's event log, HTTP delivery with
//! retries, and an SSRF guard.
//!
//! Switch it on with [`AgentServiceBuilder::push_delivery`] (or
//! [`push_dispatcher`](AgentServiceBuilder::push_dispatcher) to keep a handle for
//! [delivery status](PushDispatcher::status)):
//!
//! ```no_run
//! use a2a_kit::push::{PushConfig, PushDispatcher};
//! # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), a2a_kit::server::BuildError> {
//! let push = PushDispatcher::new(PushConfig::default());
//! let service = a2a_kit::server::AgentService::builder(agent).push_dispatcher(&push).build()?;
//! // later: push.status("task-id", "config-id")
//! # Ok(()) }
//! ```
//!
//! **How it works.** The capability is advertised and the four push-config operations are
//! served by [`AgentService`](crate::server::AgentService); configs live in the
//! [`TaskManager`]. The dispatcher observes every stored event (an
//! [`EventObserver`]): the observer only notes "task T has events up to N" and, when T has no
//! worker, spawns one. The worker reads the events it has not handled from the store
//! ([`TaskManager::events_after`]), so nothing is buffered in memory however far behind a
//! webhook is, and the task's execution and its streams never wait for a webhook. There is one
//! worker per task with pending events: one task's events are delivered in log order, and a
//! slow or dead webhook delays only its own task.
//!
//! **What is sent.** For each event matching the [triggers](PushTriggers) (by default terminal
//! and interrupted states), each of the task's configs gets a `POST` of the event as a
//! `StreamResponse` JSON body (`Content-Type: application/a2a+json`), with
//! `Authorization: <scheme> <credentials>` from the config's `authentication` and the config's
//! `token`, if any, in `X-A2A-Notification-Token` (v0.3 receivers read it there; v1 defines no
//! header for it). A config receives the events handled after it was stored. A config stored
//! within [`PushConfig::late_config_window`] after its task reached a terminal or interrupted
//! state (for example one sent inline with a SendMessage whose task settled at once, before
//! the config was stored) still gets that state, unless the task has moved on meanwhile.
//!
//! **Retries.** Each attempt has a [timeout](PushConfig::timeout). Connection errors,
//! timeouts, `5xx` and `429` are retried with exponential backoff and jitter, honouring
//! `Retry-After`, up to [`RetryPolicy::max_attempts`]; any other answer outside `2xx` (other
//! `4xx`, and `3xx`, since redirects are not followed) is final. Every outcome is logged
//! through `tracing` (target `a2a_kit::push`) and kept as a [`DeliveryStatus`] per config.
//! After [`PushConfig::suspend_after`] consecutive failed events, a config is suspended.
//!
//! **Durable outbox, several processes.** With a store that keeps a [`PushOutbox`]
//! (PostgreSQL; a SQLite file, where deliveries pending or being retried when the process
//! stopped are made after the restart, the first look coming at once), each
//! config's progress (its lane: the events it has had, its counters, whether it is
//! suspended) lives in the store, and a process delivers a task's events only while it holds
//! the task's claim there. The claim lasts the store's lease and is renewed with it; a sweeper
//! in every process looks, twice per lease, for work whose claim ran out (a replica died
//! mid-retry) or that nobody claimed (a survivor ended a task), and delivers it from the
//! lanes on. Each event reaches each config from one process; only an attempt in flight at a
//! crash is sent again. [`PushDispatcher::status`] shows the deliveries this process made.
//!
//! **SSRF.** See [`SsrfPolicy`]: public addresses only by default, checked when a config is
//! created (InvalidParams with the reason) and again against the address actually dialled.
//!
//! **TLS.** `https` webhooks use this crate's `rustls` feature (on by default: rustls with the
//! web's root certificates). Built without it, deliveries to `https` URLs fail as
//! [`DeliveryOutcome::Invalid`].

mod ssrf;

pub use ssrf::{
    AddressClass, AllowRule, BlockedDestination, GuardedResolver, IpNet, SsrfPolicy, classify,
};

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::watch;

use crate::protocol::{StreamResponse, TaskPushNotificationConfig, TaskState, Timestamp};
use crate::runtime::EventObserver;
use crate::server::AgentServiceBuilder;
use crate::store::{PushLane, PushOutbox, Seq, StoreError, TaskManager, TaskView};

/// The header carrying the config's `token` (v0.3's informative header, sent for older
/// receivers).
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// The media type of push bodies.
pub const PUSH_CONTENT_TYPE: &str = "application/a2a+json";

/// Which events are pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PushTriggers {
    /// Terminal states (COMPLETED, FAILED, CANCELED, REJECTED) and interrupted ones
    /// (INPUT_REQUIRED, AUTH_REQUIRED): the moments a client has to act or can stop waiting.
    #[default]
    TerminalAndInterrupted,
    /// Every event of the task's log after the config was stored: status updates and artifact
    /// chunks.
    Every,
}

impl PushTriggers {
    /// Whether `event` is pushed.
    pub fn matches(self, event: &StreamResponse) -> bool {
        match self {
            PushTriggers::Every => true,
            PushTriggers::TerminalAndInterrupted => is_settled(event.state()),
        }
    }
}

fn is_settled(state: Option<TaskState>) -> bool {
    state.is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

/// How failed deliveries are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per event and config, the first included (1: no retries). Default 5.
    pub max_attempts: u32,
    /// The delay before the first retry. Default 500 ms.
    pub initial_backoff: Duration,
    /// The longest delay between attempts. Default 30 s.
    pub max_backoff: Duration,
    /// Randomise each delay within its upper half, so receivers that failed together are not
    /// retried together. Default on.
    pub jitter: bool,
    /// The longest `Retry-After` honoured; a receiver asking for more is given up on. Default
    /// 120 s.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            jitter: true,
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A single attempt.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The delay after failed attempt number `attempt` (from 1): `initial_backoff` doubled per
    /// attempt, capped at `max_backoff`, then (with jitter) drawn from its upper half.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_kit::push::RetryPolicy;
    /// let p = RetryPolicy { jitter: false, ..RetryPolicy::default() };
    /// assert_eq!(p.backoff(1), Duration::from_millis(500));
    /// assert_eq!(p.backoff(3), Duration::from_secs(2));
    /// assert_eq!(p.backoff(30), Duration::from_secs(30));
    /// ```
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(31));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        if !self.jitter || base.is_zero() {
            return base;
        }
        let half = base / 2;
        let spread = (base - half).as_nanos() as u64;
        half + Duration::from_nanos(if spread == 0 {
            0
        } else {
            random_u64() % (spread + 1)
        })
    }
}

/// A random number from the standard library's per-process random hash keys (jitter needs no
/// cryptographic quality).
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}

/// How the push dispatcher behaves.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// Which events are pushed (default: terminal and interrupted states).
    pub triggers: PushTriggers,
    /// Retries (default: 5 attempts, 0.5 s doubling to 30 s, with jitter).
    pub retry: RetryPolicy,
    /// The time limit of one attempt, connection included (default 10 s).
    pub timeout: Duration,
    /// The time limit for connecting (default 5 s).
    pub connect_timeout: Duration,
    /// Which destinations may be dialled (default: [`SsrfPolicy::Strict`]).
    pub ssrf: SsrfPolicy,
    /// For terminal and interrupted states, send the whole task (`{"task": ...}`, with its
    /// artifacts) instead of the status update, when the task has not moved on since. Default
    /// off.
    pub task_snapshot_on_settle: bool,
    /// Suspend a config after this many consecutive events could not be delivered (`None`:
    /// never). Default 5.
    pub suspend_after: Option<u32>,
    /// How long after a terminal or interrupted state configs stored late still get it (see
    /// the module docs). Default 1 s; zero turns it off.
    pub late_config_window: Duration,
    /// How many per-config delivery statuses are kept (the oldest are forgotten first).
    /// Default 10 000.
    pub max_statuses: usize,
    /// The `User-Agent` of deliveries.
    pub user_agent: String,
    /// Sign every delivery (feature `jose`; see [`sign`](Self::sign)). Default none.
    #[cfg(feature = "jose")]
    pub signer: Option<crate::signing::Signer>,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            triggers: PushTriggers::default(),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            ssrf: SsrfPolicy::Strict,
            task_snapshot_on_settle: false,
            suspend_after: Some(5),
            late_config_window: Duration::from_secs(1),
            max_statuses: 10_000,
            user_agent: concat!("a2a-kit/", env!("CARGO_PKG_VERSION")).to_string(),
            #[cfg(feature = "jose")]
            signer: None,
        }
    }
}

impl PushConfig {
    /// Push every event, not only terminal and interrupted states.
    pub fn every_event(mut self) -> Self {
        self.triggers = PushTriggers::Every;
        self
    }
    /// The SSRF policy.
    pub fn ssrf(mut self, policy: SsrfPolicy) -> Self {
        self.ssrf = policy;
        self
    }
    /// Allow loopback and private-network webhooks: for development and tests only.
    pub fn allow_private_networks(self) -> Self {
        self.ssrf(SsrfPolicy::AllowPrivate)
    }
    /// The retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
    /// The per-attempt timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// Sign every delivery with `signer` (feature `jose`): each attempt carries
    /// [`SIGNATURE_HEADER`](crate::signing::SIGNATURE_HEADER), a detached JWS over the exact
    /// body bytes whose protected header names `alg`, `kid`, `iat` and a fresh `jti`, so a
    /// receiver can check who sent it, that it is unchanged, recent, and not a replay
    /// (a2a-kit-axum's `WebhookReceiver::verify_signatures`). The credentials of each push
    /// config are sent as before. The key is published in the agent's JWKS.
    #[cfg(feature = "jose")]
    pub fn sign(mut self, signer: crate::signing::Signer) -> Self {
        self.signer = Some(signer);
        self
    }
}

/// The result of delivering one event to one config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The webhook answered `2xx`.
    Delivered {
        /// Its HTTP status.
        status: u16,
    },
    /// The webhook answered with a final refusal (a `4xx` other than `429`, or a redirect,
    /// which is not followed).
    Rejected {
        /// Its HTTP status.
        status: u16,
    },
    /// Every attempt failed with a retryable error (connection, timeout, `5xx`, `429`), or the
    /// receiver asked to wait longer than [`RetryPolicy::max_retry_after`].
    GaveUp {
        /// The last error.
        error: String,
    },
    /// The SSRF guard refused the destination; nothing was sent.
    Blocked {
        /// Why.
        reason: String,
    },
    /// The request could not be built (a malformed URL or header value in the config).
    Invalid {
        /// Why.
        reason: String,
    },
}

impl DeliveryOutcome {
    /// Whether the webhook accepted the event.
    pub fn is_delivered(&self) -> bool {
        matches!(self, DeliveryOutcome::Delivered { .. })
    }
}

impl std::fmt::Display for DeliveryOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeliveryOutcome::Delivered { status } => write!(f, "delivered ({status})"),
            DeliveryOutcome::Rejected { status } => write!(f, "the webhook refused it ({status})"),
            DeliveryOutcome::GaveUp { error } => write!(f, "gave up: {error}"),
            DeliveryOutcome::Blocked { reason } => write!(f, "blocked: {reason}"),
            DeliveryOutcome::Invalid { reason } => write!(f, "invalid: {reason}"),
        }
    }
}

/// One delivery, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryReport {
    /// The event's sequence number in the task's log.
    pub seq: Seq,
    /// HTTP attempts made (0 when nothing was sent).
    pub attempts: u32,
    /// What happened.
    pub outcome: DeliveryOutcome,
    /// When it ended.
    pub at: Timestamp,
}

/// Delivery status of one push config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryStatus {
    /// The task.
    pub task_id: String,
    /// The config.
    pub config_id: String,
    /// The webhook URL used.
    pub url: String,
    /// Events accepted by the webhook.
    pub delivered: u64,
    /// Events that could not be delivered.
    pub failed: u64,
    /// Failed events since the last success.
    pub consecutive_failures: u32,
    /// No more deliveries are attempted (see [`PushConfig::suspend_after`]).
    pub suspended: bool,
    /// The most recent delivery.
    pub last: Option<DeliveryReport>,
}

/// The push outbox: observes stored events and delivers them to each task's webhooks. Cheap to
/// clone (all clones share one outbox). Use one dispatcher per service.
#[derive(Clone)]
pub struct PushDispatcher {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PushDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushDispatcher")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

struct Inner {
    config: PushConfig,
    client: reqwest::Client,
    tasks: Mutex<HashMap<String, Slot>>,
    /// Tasks whose final event was handled, and its sequence number: late observer calls for
    /// them are ignored rather than starting a worker that would deliver twice.
    finished: Mutex<(HashMap<String, Seq>, VecDeque<String>)>,
    statuses: Mutex<StatusTable>,
    /// Workers with events to handle.
    busy: watch::Sender<usize>,
    /// The store the dispatcher was installed on (for [`PushDispatcher::stored_statuses`]).
    store: std::sync::OnceLock<Arc<dyn TaskManager>>,
}

/// One task the outbox knows about (kept until the task ends).
struct Slot {
    /// Events up to here are handled.
    cursor: Seq,
    /// The highest sequence number observed.
    latest: Seq,
    /// A worker is handling this task's events.
    running: bool,
}

#[derive(Default)]
struct StatusTable {
    map: HashMap<(String, String), DeliveryStatus>,
    order: VecDeque<(String, String)>,
}

const MAX_FINISHED: usize = 4096;
const BATCH: usize = 32;
/// Tasks taken over per sweep.
const SWEEP_BATCH: usize = 64;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Decrements the busy count when a worker is done (or panics).
struct BusyGuard(Arc<Inner>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl PushDispatcher {
    /// A dispatcher with its own HTTP client (SSRF-guarded resolver, no redirects, no proxy).
    ///
    /// # Panics
    /// If the HTTP client cannot be built (only a broken TLS setup does that); see
    /// [`try_new`](Self::try_new).
    pub fn new(config: PushConfig) -> Self {
        Self::try_new(config).expect("the push dispatcher's HTTP client could not be built")
    }

    /// A dispatcher, or the reason its HTTP client could not be built.
    pub fn try_new(config: PushConfig) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(config.ssrf.clone())))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(config.user_agent.clone())
            .build()?;
        Ok(PushDispatcher {
            inner: Arc::new(Inner {
                config,
                client,
                tasks: Mutex::new(HashMap::new()),
                finished: Mutex::new((HashMap::new(), VecDeque::new())),
                statuses: Mutex::new(StatusTable::default()),
                busy: watch::channel(0).0,
                store: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &PushConfig {
        &self.inner.config
    }

    /// The check applied to webhook URLs when configs are created (install it with
    /// [`AgentServiceBuilder::webhook_validator`]; [`push_dispatcher`](AgentServiceBuilder::push_dispatcher)
    /// does).
    pub fn check_url(&self, url: &str) -> Result<(), String> {
        self.inner.config.ssrf.check_url(url)
    }

    /// The observer that feeds this outbox from `store` (install it with
    /// [`AgentServiceBuilder::observe_with`]; [`push_dispatcher`](AgentServiceBuilder::push_dispatcher)
    /// does).
    pub fn observer(&self, store: Arc<dyn TaskManager>) -> Arc<dyn EventObserver> {
        let _ = self.inner.store.set(store.clone());
        if store.push_outbox().is_some() {
            spawn_sweeper(Arc::downgrade(&self.inner), store.clone());
        }
        Arc::new(PushObserver {
            inner: self.inner.clone(),
            store,
        })
    }

    /// The delivery status of one config, once a delivery to it was attempted.
    pub fn status(&self, task_id: &str, config_id: &str) -> Option<DeliveryStatus> {
        lock(&self.inner.statuses)
            .map
            .get(&(task_id.to_string(), config_id.to_string()))
            .cloned()
    }

    /// The delivery statuses of a task's configs.
    pub fn statuses(&self, task_id: &str) -> Vec<DeliveryStatus> {
        let table = lock(&self.inner.statuses);
        table
            .order
            .iter()
            .filter(|k| k.0 == task_id)
            .filter_map(|k| table.map.get(k))
            .cloned()
            .collect()
    }

    /// The delivery progress the store keeps for a task's configs (its
    /// [lanes](PushLane): events handled, delivered and failed counts, whether suspended, the
    /// last error, and a retry in progress: attempts made, when the next is due), with a store
    /// that keeps a durable outbox (a SQLite file, PostgreSQL): it survives restarts, reads
    /// the same on every replica, and a restart keeps a retry's schedule. Each failed attempt
    /// is also logged (`a2a_kit::push`, "push attempt failed; retrying"), as is each outcome. `None` with a store that keeps
    /// none, or before the dispatcher was installed on a service.
    pub async fn stored_statuses(
        &self,
        task_id: &str,
    ) -> Result<Option<Vec<PushLane>>, StoreError> {
        let Some(store) = self.inner.store.get() else {
            return Ok(None);
        };
        match store.push_outbox() {
            Some(outbox) => outbox.push_lanes(task_id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Whether no task has events waiting to be delivered.
    pub fn is_idle(&self) -> bool {
        *self.inner.busy.borrow() == 0
    }

    /// Wait until no task has events waiting to be delivered, late configs included (for
    /// graceful shutdown and tests; wrap it in a timeout: a dead webhook holds it for its
    /// whole retry schedule).
    pub async fn wait_idle(&self) {
        let mut rx = self.inner.busy.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

impl AgentServiceBuilder {
    /// Deliver push notifications with a new [`PushDispatcher`]: advertises the capability,
    /// feeds the outbox from the event log and checks webhook URLs with the SSRF policy.
    pub fn push_delivery(self, config: PushConfig) -> Self {
        self.push_dispatcher(&PushDispatcher::new(config))
    }

    /// Deliver push notifications through `dispatcher` (keep a clone to query
    /// [`PushDispatcher::status`]).
    pub fn push_dispatcher(self, dispatcher: &PushDispatcher) -> Self {
        let observer = dispatcher.clone();
        let validator = dispatcher.clone();
        #[cfg(feature = "jose")]
        let this = match &dispatcher.config().signer {
            Some(signer) => self.publish_key(signer),
            None => self,
        };
        #[cfg(not(feature = "jose"))]
        let this = self;
        this.push_notifications(true)
            .observe_with(move |store| observer.observer(store.clone()))
            .webhook_validator(move |url| validator.check_url(url))
    }
}

struct PushObserver {
    inner: Arc<Inner>,
    store: Arc<dyn TaskManager>,
}

impl EventObserver for PushObserver {
    fn on_event(&self, task_id: &str, seq: Seq, _event: &StreamResponse) {
        start_worker(&self.inner, &self.store, task_id, Some(seq));
    }
}

/// Note that `task_id` has events up to `seq` (`None`: unknown, work found by the sweeper)
/// and start its worker unless one runs; whether one was started.
fn start_worker(
    inner: &Arc<Inner>,
    store: &Arc<dyn TaskManager>,
    task_id: &str,
    seq: Option<Seq>,
) -> bool {
    if lock(&inner.finished)
        .0
        .get(task_id)
        .is_some_and(|last| seq.is_none_or(|seq| seq <= *last))
    {
        return false;
    }
    let start = {
        let mut tasks = lock(&inner.tasks);
        match tasks.get_mut(task_id) {
            Some(slot) => {
                let seq = seq.unwrap_or(slot.latest + 1);
                slot.latest = slot.latest.max(seq);
                if slot.running || seq <= slot.cursor {
                    return false;
                }
                slot.running = true;
                slot.cursor
            }
            None => {
                // First sight of this task: start with this event (the creation snapshot
                // went back to the creator synchronously).
                let seq = seq.unwrap_or(1);
                let cursor = seq.saturating_sub(1);
                tasks.insert(
                    task_id.to_string(),
                    Slot {
                        cursor,
                        latest: seq,
                        running: true,
                    },
                );
                cursor
            }
        }
    };
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        tracing::error!(target: "a2a_kit::push", task_id, "no tokio runtime: push notifications are not delivered");
        if let Some(slot) = lock(&inner.tasks).get_mut(task_id) {
            slot.running = false;
        }
        return false;
    };
    inner.busy.send_modify(|n| *n += 1);
    let worker = Worker {
        inner: inner.clone(),
        store: store.clone(),
        task_id: task_id.to_string(),
    };
    handle.spawn(worker.run(start));
    true
}

/// With a durable outbox: look for push work nobody delivers (its claimer stopped, or a
/// survivor wrote the event) twice per claim lifetime, for as long as the dispatcher lives.
fn spawn_sweeper(inner: std::sync::Weak<Inner>, store: Arc<dyn TaskManager>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        tracing::error!(target: "a2a_kit::push", "no tokio runtime: push work left by stopped replicas is not picked up");
        return;
    };
    handle.spawn(async move {
        let Some(every) = store
            .push_outbox()
            .map(|o| (o.push_claim_ttl() / 2).max(Duration::from_millis(100)))
        else {
            return;
        };
        // A first look at once: work a stopped process left in a durable store.
        let mut pause = Duration::from_millis(100);
        loop {
            tokio::time::sleep(pause).await;
            pause = every;
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let Some(outbox) = store.push_outbox() else {
                return;
            };
            match outbox.orphaned_push_work(SWEEP_BATCH).await {
                Ok(tasks) => {
                    for task_id in tasks {
                        if start_worker(&inner, &store, &task_id, None) {
                            tracing::info!(target: "a2a_kit::push", task_id, "taking over push deliveries nobody is making");
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "a2a_kit::push", error = %e, "could not look for push deliveries left behind")
                }
            }
        }
    });
}

struct Worker {
    inner: Arc<Inner>,
    store: Arc<dyn TaskManager>,
    task_id: String,
}

/// An event about to be delivered.
struct Outgoing {
    seq: Seq,
    body: Bytes,
}

impl Worker {
    async fn run(self, cursor: Seq) {
        let _busy = BusyGuard(self.inner.clone());
        let store = self.store.clone();
        match store.push_outbox() {
            Some(outbox) => self.run_durable(outbox).await,
            None => self.run_in_memory(cursor).await,
        }
    }

    async fn run_in_memory(self, mut cursor: Seq) {
        let task_id = self.task_id.as_str();
        // The last event handled, when it was a terminal or interrupted state, with the configs
        // that existed then (they have it).
        let mut settled: Option<(Outgoing, HashSet<String>)> = None;
        let mut lingered = false;
        let mut terminal = false;
        loop {
            let events = match self.store.events_after(task_id, cursor, BATCH).await {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!(target: "a2a_kit::push", task_id, error = %e, "could not read the task's events; pushes skipped");
                    let mut tasks = lock(&self.inner.tasks);
                    if let Some(slot) = tasks.get_mut(task_id) {
                        slot.cursor = slot.latest.max(cursor);
                        slot.running = false;
                    }
                    return;
                }
            };
            if events.is_empty() {
                if let (Some((out, have)), false) = (&mut settled, lingered) {
                    lingered = true;
                    self.late_configs(have, out, cursor).await;
                    continue;
                }
                let mut tasks = lock(&self.inner.tasks);
                match tasks.get_mut(task_id) {
                    // Observed meanwhile, not read yet: go round again.
                    Some(slot) if slot.latest > cursor => continue,
                    Some(slot) => {
                        slot.cursor = cursor;
                        slot.running = false;
                    }
                    None => {}
                }
                break;
            }
            lingered = false;
            let configs = match self.store.list_push_configs(task_id).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(target: "a2a_kit::push", task_id, error = %e, "could not read the task's push configs");
                    Vec::new()
                }
            };
            for rec in events {
                let state = rec.event.state();
                let is_settled = is_settled(state);
                let deliver_now =
                    !configs.is_empty() && self.inner.config.triggers.matches(&rec.event);
                if deliver_now || is_settled {
                    let out = self.body_for(rec.seq, &rec.event).await;
                    if deliver_now {
                        self.deliver_all(&configs, &out).await;
                    }
                    if is_settled {
                        settled =
                            Some((out, configs.iter().filter_map(|c| c.id.clone()).collect()));
                    }
                } else {
                    settled = None;
                }
                terminal |= state.is_some_and(|s| s.is_terminal());
                cursor = rec.seq;
                if let Some(slot) = lock(&self.inner.tasks).get_mut(task_id) {
                    slot.cursor = cursor;
                }
            }
        }
        if terminal {
            self.finished(cursor);
        }
    }

    /// The task's final event, `cursor`, is handled: forget it, and ignore late observer
    /// calls for it rather than starting a worker that would deliver twice.
    fn finished(&self, cursor: Seq) {
        {
            let mut finished = lock(&self.inner.finished);
            if finished.0.insert(self.task_id.clone(), cursor).is_none() {
                finished.1.push_back(self.task_id.clone());
            }
            while finished.1.len() > MAX_FINISHED {
                if let Some(old) = finished.1.pop_front() {
                    finished.0.remove(&old);
                }
            }
        }
        // Only now forget the slot: a late observer call finds the task finished.
        lock(&self.inner.tasks).remove(&self.task_id);
    }

    /// With a durable outbox: deliver the task's events while this process holds its claim,
    /// each config from its lane's cursor, recording every lane's progress in the store.
    async fn run_durable(self, outbox: &dyn PushOutbox) {
        let task_id = self.task_id.as_str();
        let mut claim = ClaimGuard {
            store: self.store.clone(),
            task_id: self.task_id.clone(),
            held: true,
        };
        loop {
            // What was observed before this round: anything later means another round.
            let seen = lock(&self.inner.tasks).get(task_id).map_or(0, |s| s.latest);
            let end = match self.drain(outbox).await {
                Ok(end) => end,
                Err(stop) => {
                    claim.held = matches!(stop, Stop::Store(_));
                    match stop {
                        Stop::Busy => {
                            tracing::debug!(target: "a2a_kit::push", task_id, "another replica delivers this task's events")
                        }
                        Stop::Lost => {
                            tracing::warn!(target: "a2a_kit::push", task_id, "lost this task's push claim to another replica; it delivers from here")
                        }
                        Stop::Store(e) => {
                            tracing::error!(target: "a2a_kit::push", task_id, error = %e, "push outbox unavailable; deliveries resume when it is back")
                        }
                    }
                    self.idle(seen);
                    return;
                }
            };
            if let Some((out, mut have)) = end.settled {
                self.late_configs(&mut have, &out, out.seq).await;
            }
            if end.from.is_some() {
                claim.release().await;
            }
            claim.held = false;
            if lock(&self.inner.tasks)
                .get(task_id)
                .is_some_and(|s| s.latest > seen)
            {
                claim.held = true;
                continue;
            }
            // Events another replica wrote while this one held the claim (its dispatcher could
            // not claim them) are delivered now, not at the next sweep.
            let newer = match end.from {
                Some(from) => self
                    .store
                    .events_after(task_id, from, 1)
                    .await
                    .is_ok_and(|e| !e.is_empty()),
                None => false,
            };
            if newer {
                claim.held = true;
                continue;
            }
            if end.terminal {
                self.finished(end.from.unwrap_or(0).max(seen));
            } else {
                self.idle(seen);
            }
            return;
        }
    }

    /// No worker runs for the task any more (one starts at its next event).
    fn idle(&self, seen: Seq) {
        if let Some(slot) = lock(&self.inner.tasks).get_mut(&self.task_id) {
            slot.cursor = slot.cursor.max(seen);
            slot.running = false;
        }
    }

    /// Claim the task and deliver until every lane has handled the task's log.
    async fn drain(&self, outbox: &dyn PushOutbox) -> Result<Drained, Stop> {
        let task_id = self.task_id.as_str();
        let mut settled: Option<(Outgoing, HashSet<String>)> = None;
        let mut terminal = false;
        loop {
            // Claimed again each batch: it renews the claim and brings configs stored since.
            let lanes = outbox
                .claim_push(task_id)
                .await
                .map_err(Stop::Store)?
                .ok_or(Stop::Busy)?;
            let mut lanes: HashMap<String, PushLane> = lanes
                .into_iter()
                .map(|l| (l.config_id.clone(), l))
                .collect();
            if lanes.is_empty() {
                return Ok(Drained {
                    from: None,
                    settled: None,
                    terminal,
                });
            }
            let configs = self
                .store
                .list_push_configs(task_id)
                .await
                .map_err(Stop::Store)?;
            // Only lanes whose config is there count (one deleted meanwhile has no say).
            let from = configs
                .iter()
                .filter_map(|c| lanes.get(c.id.as_deref().unwrap_or_default()))
                .filter(|l| !l.suspended)
                .map(|l| l.cursor)
                .min();
            let Some(from) = from else {
                return Ok(Drained {
                    from: None,
                    settled: None,
                    terminal,
                });
            };
            let events = self
                .store
                .events_after(task_id, from, BATCH)
                .await
                .map_err(Stop::Store)?;
            if events.is_empty() {
                return Ok(Drained {
                    from: Some(from),
                    settled,
                    terminal,
                });
            }
            let mut moved: HashSet<String> = HashSet::new();
            for rec in events {
                let state = rec.event.state();
                let is_settled = is_settled(state);
                let due: Vec<&TaskPushNotificationConfig> = configs
                    .iter()
                    .filter(|c| {
                        lanes
                            .get(c.id.as_deref().unwrap_or_default())
                            .is_some_and(|l| !l.suspended && l.cursor < rec.seq)
                    })
                    .collect();
                let matches = self.inner.config.triggers.matches(&rec.event);
                let out = if (matches && !due.is_empty()) || is_settled {
                    Some(self.body_for(rec.seq, &rec.event).await)
                } else {
                    None
                };
                if let (true, Some(out)) = (matches, &out) {
                    let sends = due.iter().map(|c| {
                        let lane = lanes.get(c.id.as_deref().unwrap_or_default()).cloned();
                        let retrying = lane.map(|lane| Retrying {
                            outbox,
                            task_id,
                            lane,
                        });
                        self.attempt(c, out, retrying)
                    });
                    let reports = futures::future::join_all(sends).await;
                    for (config, report) in due.iter().zip(reports) {
                        let id = config.id.clone().unwrap_or_default();
                        let Some(lane) = lanes.get_mut(&id) else {
                            continue;
                        };
                        self.count(lane, &report);
                        lane.cursor = rec.seq;
                        let key = (self.task_id.clone(), id.clone());
                        self.record(key, &config.url, report, Some(lane));
                        if !outbox
                            .save_push_lane(task_id, lane)
                            .await
                            .map_err(Stop::Store)?
                        {
                            return Err(Stop::Lost);
                        }
                        moved.remove(&id);
                    }
                } else {
                    for config in &due {
                        let id = config.id.clone().unwrap_or_default();
                        if let Some(lane) = lanes.get_mut(&id) {
                            lane.cursor = rec.seq;
                            moved.insert(id);
                        }
                    }
                }
                settled = match out {
                    Some(out) if is_settled => {
                        Some((out, configs.iter().filter_map(|c| c.id.clone()).collect()))
                    }
                    _ => None,
                };
                terminal |= state.is_some_and(|s| s.is_terminal());
            }
            for id in moved {
                if let Some(lane) = lanes.get(&id) {
                    if !outbox
                        .save_push_lane(task_id, lane)
                        .await
                        .map_err(Stop::Store)?
                    {
                        return Err(Stop::Lost);
                    }
                }
            }
        }
    }

    /// A config's counters after one event's delivery (suspended after
    /// [`PushConfig::suspend_after`] failures in a row).
    fn count(&self, lane: &mut PushLane, report: &DeliveryReport) {
        // The event is done with, either way: no retry is pending.
        lane.attempts = 0;
        lane.next_attempt_at = None;
        if report.outcome.is_delivered() {
            lane.delivered += 1;
            lane.consecutive_failures = 0;
            return;
        }
        lane.failed += 1;
        lane.consecutive_failures += 1;
        lane.last_error = Some(report.outcome.to_string());
        if !lane.suspended
            && self
                .inner
                .config
                .suspend_after
                .is_some_and(|n| lane.consecutive_failures >= n)
        {
            lane.suspended = true;
        }
    }

    /// Configs stored shortly after a terminal or interrupted state was handled (an inline
    /// config of a SendMessage whose task settled at once) get that state. Stops early when
    /// the task moves on.
    async fn late_configs(&self, have: &mut HashSet<String>, settled: &Outgoing, cursor: Seq) {
        let window = self.inner.config.late_config_window;
        let until = Instant::now() + window;
        let mut pause = Duration::from_millis(20);
        while Instant::now() < until {
            tokio::time::sleep(pause.min(until.saturating_duration_since(Instant::now()))).await;
            pause = (pause * 2).min(Duration::from_millis(250));
            if lock(&self.inner.tasks)
                .get(&self.task_id)
                .is_some_and(|s| s.latest > cursor)
            {
                return;
            }
            let Ok(configs) = self.store.list_push_configs(&self.task_id).await else {
                return;
            };
            let late: Vec<TaskPushNotificationConfig> = configs
                .into_iter()
                .filter(|c| c.id.as_ref().is_some_and(|id| have.insert(id.clone())))
                .collect();
            if !late.is_empty() {
                self.deliver_all(&late, settled).await;
            }
        }
    }

    async fn body_for(&self, seq: Seq, event: &StreamResponse) -> Outgoing {
        if is_settled(event.state()) && self.inner.config.task_snapshot_on_settle {
            if let Ok(Some(rec)) = self.store.get_task(&self.task_id, TaskView::FULL).await {
                if rec.last_seq == seq {
                    let body =
                        serde_json::to_vec(&StreamResponse::Task(rec.task)).unwrap_or_default();
                    return Outgoing {
                        seq,
                        body: Bytes::from(body),
                    };
                }
            }
        }
        Outgoing {
            seq,
            body: Bytes::from(serde_json::to_vec(event).unwrap_or_default()),
        }
    }

    async fn deliver_all(&self, configs: &[TaskPushNotificationConfig], out: &Outgoing) {
        let sends = configs.iter().map(|c| self.deliver(c, out));
        futures::future::join_all(sends).await;
    }

    async fn deliver(&self, config: &TaskPushNotificationConfig, out: &Outgoing) {
        let key = (self.task_id.clone(), config.id.clone().unwrap_or_default());
        if lock(&self.inner.statuses)
            .map
            .get(&key)
            .is_some_and(|s| s.suspended)
        {
            return;
        }
        let report = self.attempt(config, out, None).await;
        self.record(key, &config.url, report, None);
    }

    /// Send one event to one config, with retries (recorded in its lane, with a durable
    /// outbox), and log the outcome.
    async fn attempt(
        &self,
        config: &TaskPushNotificationConfig,
        out: &Outgoing,
        retrying: Option<Retrying<'_>>,
    ) -> DeliveryReport {
        let (attempts, outcome) = send_with_retries(&self.inner, config, out, retrying).await;
        let task_id = self.task_id.as_str();
        let config_id = config.id.as_deref().unwrap_or_default();
        match &outcome {
            DeliveryOutcome::Delivered { status } => tracing::info!(
                target: "a2a_kit::push", task_id, config_id, seq = out.seq, attempts, status, "push delivered"
            ),
            other => tracing::warn!(
                target: "a2a_kit::push", task_id, config_id, seq = out.seq, attempts, outcome = ?other, "push not delivered"
            ),
        }
        DeliveryReport {
            seq: out.seq,
            attempts,
            outcome,
            at: Timestamp::now(),
        }
    }

    /// Keep `report` as the config's last delivery, with its counters: the lane's when the
    /// store keeps one (`counted`, already counted), else counted here.
    fn record(
        &self,
        key: (String, String),
        url: &str,
        report: DeliveryReport,
        counted: Option<&PushLane>,
    ) {
        let cfg = &self.inner.config;
        let mut table = lock(&self.inner.statuses);
        if !table.map.contains_key(&key) {
            table.order.push_back(key.clone());
            while table.order.len() > cfg.max_statuses.max(1) {
                if let Some(old) = table.order.pop_front() {
                    table.map.remove(&old);
                }
            }
        }
        let status = table
            .map
            .entry(key.clone())
            .or_insert_with(|| DeliveryStatus {
                task_id: key.0.clone(),
                config_id: key.1.clone(),
                url: url.to_string(),
                delivered: 0,
                failed: 0,
                consecutive_failures: 0,
                suspended: false,
                last: None,
            });
        status.url = url.to_string();
        let lane = match counted {
            Some(lane) => lane.clone(),
            None => {
                let mut lane = PushLane {
                    delivered: status.delivered,
                    failed: status.failed,
                    consecutive_failures: status.consecutive_failures,
                    suspended: status.suspended,
                    ..PushLane::default()
                };
                self.count(&mut lane, &report);
                lane
            }
        };
        if lane.suspended && !status.suspended {
            tracing::warn!(
                target: "a2a_kit::push", task_id = %key.0, config_id = %key.1,
                failures = lane.consecutive_failures, "push config suspended after consecutive failures"
            );
        }
        status.delivered = lane.delivered;
        status.failed = lane.failed;
        status.consecutive_failures = lane.consecutive_failures;
        status.suspended = lane.suspended;
        status.last = Some(report);
    }
}

/// How a durable worker's round ended: every lane has handled the log from `from` on.
struct Drained {
    /// The lowest cursor of the lanes still delivered (`None`: none are).
    from: Option<Seq>,
    /// The last event handled, when it was a terminal or interrupted state, with the configs
    /// that had it.
    settled: Option<(Outgoing, HashSet<String>)>,
    /// A terminal state was handled.
    terminal: bool,
}

/// Why a durable worker stopped before catching up.
enum Stop {
    /// Another process holds the task's claim.
    Busy,
    /// The claim ran out and another process took it.
    Lost,
    /// The store failed.
    Store(StoreError),
}

/// Lets go of a task's push claim if its worker ends without doing so (a panic, or the
/// runtime shutting down), so another process need not wait for the claim to run out.
struct ClaimGuard {
    store: Arc<dyn TaskManager>,
    task_id: String,
    held: bool,
}

impl ClaimGuard {
    async fn release(&mut self) {
        if let Some(outbox) = self.store.push_outbox() {
            if let Err(e) = outbox.release_push_claim(&self.task_id).await {
                tracing::warn!(target: "a2a_kit::push", task_id = %self.task_id, error = %e, "could not let go of a push claim; it runs out with the lease");
            }
        }
        self.held = false;
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let (store, task_id) = (self.store.clone(), std::mem::take(&mut self.task_id));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Some(outbox) = store.push_outbox() {
                    let _ = outbox.release_push_claim(&task_id).await;
                }
            });
        }
    }
}

/// What one HTTP attempt says about the next.
enum Attempt {
    Done(DeliveryOutcome),
    Retry {
        error: String,
        after: Option<Duration>,
    },
}

/// A retry in progress, recorded in the config's lane of a durable outbox: attempts made, the
/// last error and when the next attempt is due, readable meanwhile
/// ([`PushDispatcher::stored_statuses`]) and kept by whoever delivers next (a restart,
/// another replica).
struct Retrying<'a> {
    outbox: &'a dyn PushOutbox,
    task_id: &'a str,
    lane: PushLane,
}

impl Retrying<'_> {
    /// Wait until the lane's next attempt is due (a retry scheduled before a restart).
    async fn due(&self) {
        let Some(at) = self.lane.next_attempt_at else {
            return;
        };
        let wait = at.saturating_sub(Timestamp::now().0.timestamp_millis());
        if let Ok(ms) = u64::try_from(wait) {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }

    async fn record(&mut self, attempts: u32, error: &str, wait: Duration) {
        self.lane.attempts = attempts;
        self.lane.last_error = Some(error.to_string());
        let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
        self.lane.next_attempt_at = Some(
            Timestamp::now()
                .0
                .timestamp_millis()
                .saturating_add(wait_ms),
        );
        // Progress only: a claim lost meanwhile shows when the outcome is saved.
        if let Err(e) = self.outbox.save_push_lane(self.task_id, &self.lane).await {
            tracing::warn!(target: "a2a_kit::push", task_id = self.task_id, error = %e, "could not record a push retry");
        }
    }
}

async fn send_with_retries(
    inner: &Inner,
    config: &TaskPushNotificationConfig,
    out: &Outgoing,
    mut retrying: Option<Retrying<'_>>,
) -> (u32, DeliveryOutcome) {
    let cfg = &inner.config;
    let url = match reqwest::Url::parse(&config.url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        Ok(u) => {
            return (
                0,
                DeliveryOutcome::Invalid {
                    reason: format!("unsupported scheme `{}`", u.scheme()),
                },
            );
        }
        Err(e) => {
            return (
                0,
                DeliveryOutcome::Invalid {
                    reason: format!("`{}` is not a valid URL: {e}", config.url),
                },
            );
        }
    };
    if let Err(reason) = cfg.ssrf.check_literal(&url) {
        return (0, DeliveryOutcome::Blocked { reason });
    }
    let headers = match push_headers(config) {
        Ok(h) => h,
        Err(reason) => return (0, DeliveryOutcome::Invalid { reason }),
    };
    let max = cfg.retry.max_attempts.max(1);
    // Attempts made before (recorded in the lane) count, and their schedule holds.
    let mut attempt = retrying.as_ref().map_or(0, |r| r.lane.attempts);
    if let Some(r) = &retrying {
        r.due().await;
    }
    loop {
        attempt += 1;
        #[allow(unused_mut)]
        let mut headers = headers.clone();
        #[cfg(feature = "jose")]
        if let Some(signer) = &cfg.signer {
            // Signed per attempt: a retry is a new delivery with its own `iat` and `jti`.
            match signer
                .sign_delivery(&out.body)
                .map(|s| reqwest::header::HeaderValue::from_str(&s))
            {
                Ok(Ok(v)) => {
                    headers.insert(crate::signing::SIGNATURE_HEADER, v);
                }
                _ => {
                    let reason = "the delivery could not be signed".to_string();
                    return (attempt - 1, DeliveryOutcome::Invalid { reason });
                }
            }
        }
        let sent = inner
            .client
            .post(url.clone())
            .headers(headers)
            .body(out.body.clone())
            .send()
            .await;
        let verdict = match sent {
            Ok(resp) => judge_response(resp.status(), resp.headers()),
            Err(e) => judge_error(&e),
        };
        match verdict {
            // A refusal by the resolver sent nothing.
            Attempt::Done(outcome @ DeliveryOutcome::Blocked { .. }) => {
                return (attempt - 1, outcome);
            }
            Attempt::Done(outcome) => return (attempt, outcome),
            Attempt::Retry { error, after } => {
                if attempt >= max {
                    return (attempt, DeliveryOutcome::GaveUp { error });
                }
                let wait = match after {
                    Some(d) if d > cfg.retry.max_retry_after => {
                        let error = format!(
                            "{error}; the receiver asked to retry after {d:?}, more than allowed"
                        );
                        return (attempt, DeliveryOutcome::GaveUp { error });
                    }
                    Some(d) => d,
                    None => cfg.retry.backoff(attempt),
                };
                tracing::info!(
                    target: "a2a_kit::push", task_id = config.task_id.as_deref().unwrap_or_default(),
                    config_id = config.id.as_deref().unwrap_or_default(), seq = out.seq, url = %url,
                    attempts = attempt, error, retry_in = ?wait, "push attempt failed; retrying"
                );
                if let Some(r) = &mut retrying {
                    r.record(attempt, &error, wait).await;
                }
                tokio::time::sleep(wait).await;
            }
        }
    }
}

fn push_headers(config: &TaskPushNotificationConfig) -> Result<reqwest::header::HeaderMap, String> {
    use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
    let mut h = HeaderMap::new();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(PUSH_CONTENT_TYPE));
    if let Some(auth) = config
        .authentication
        .as_ref()
        .filter(|a| !a.scheme.trim().is_empty())
    {
        let value = match auth.credentials.as_deref().filter(|c| !c.is_empty()) {
            Some(c) => format!("{} {c}", auth.scheme.trim()),
            None => auth.scheme.trim().to_string(),
        };
        let mut v = HeaderValue::from_str(&value).map_err(|_| {
            "the authentication credentials are not a valid header value".to_string()
        })?;
        v.set_sensitive(true);
        h.insert(AUTHORIZATION, v);
    }
    if let Some(token) = config.token.as_deref().filter(|t| !t.is_empty()) {
        let mut v = HeaderValue::from_str(token)
            .map_err(|_| "the token is not a valid header value".to_string())?;
        v.set_sensitive(true);
        h.insert(NOTIFICATION_TOKEN_HEADER, v);
    }
    Ok(h)
}

fn judge_response(status: reqwest::StatusCode, headers: &reqwest::header::HeaderMap) -> Attempt {
    let code = status.as_u16();
    if status.is_success() {
        Attempt::Done(DeliveryOutcome::Delivered { status: code })
    } else if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        Attempt::Retry {
            error: format!("the webhook answered {status}"),
            after,
        }
    } else {
        Attempt::Done(DeliveryOutcome::Rejected { status: code })
    }
}

fn judge_error(e: &reqwest::Error) -> Attempt {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(b) = s.downcast_ref::<BlockedDestination>() {
            return Attempt::Done(DeliveryOutcome::Blocked {
                reason: b.reason.clone(),
            });
        }
        source = s.source();
    }
    let chain = error_chain(e);
    if e.is_builder() {
        return Attempt::Done(DeliveryOutcome::Invalid { reason: chain });
    }
    // The connector refuses https when reqwest has no TLS backend: retrying cannot help.
    if chain.contains("scheme is not http") {
        return Attempt::Done(DeliveryOutcome::Invalid {
            reason: format!(
                "{chain} (https webhooks need a TLS backend: enable a2a-kit's `rustls` feature)"
            ),
        });
    }
    Attempt::Retry {
        error: chain,
        after: None,
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

/// `Retry-After`: delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30))
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let d = parse_retry_after(&later).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_with_jitter_in_upper_half() {
        let p = RetryPolicy::default();
        for attempt in 1..8 {
            let base = RetryPolicy {
                jitter: false,
                ..p.clone()
            }
            .backoff(attempt);
            for _ in 0..20 {
                let d = p.backoff(attempt);
                assert!(d >= base / 2 && d <= base, "{attempt}: {d:?} vs {base:?}");
            }
        }
    }

    #[test]
    fn triggers() {
        use crate::protocol::{TaskStatus, TaskStatusUpdateEvent};
        let ev = |state| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus::new(state),
                metadata: None,
            })
        };
        let t = PushTriggers::TerminalAndInterrupted;
        assert!(t.matches(&ev(TaskState::Completed)));
        assert!(t.matches(&ev(TaskState::InputRequired)));
        assert!(!t.matches(&ev(TaskState::Working)));
        assert!(PushTriggers::Every.matches(&ev(TaskState::Working)));
    }

    #[test]
    fn headers() {
        use crate::protocol::AuthenticationInfo;
        let config = TaskPushNotificationConfig {
            url: "http://x".into(),
            token: Some("tok".into()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some("secret".into()),
            }),
            ..Default::default()
        };
        let h = push_headers(&config).unwrap();
        assert_eq!(h["authorization"], "Bearer secret");
        assert_eq!(h[NOTIFICATION_TOKEN_HEADER], "tok");
        assert_eq!(h["content-type"], PUSH_CONTENT_TYPE);
        let bad = TaskPushNotificationConfig {
            token: Some("a\nb".into()),
            ..config
        };
        assert!(push_headers(&bad).is_err());
    }
}
