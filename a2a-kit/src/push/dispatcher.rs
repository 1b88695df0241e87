//! The dispatcher: an event observer that starts one worker per task with pending events,
//! and the sweeper that takes over work other processes left.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::protocol::StreamResponse;
use crate::runtime::EventObserver;
use crate::server::AgentServiceBuilder;
use crate::store::{PushLane, Seq, StoreError, TaskManager};

use super::{config::*, report::*, state::*, worker::*, *};

/// The push outbox: observes stored events and delivers them to each task's webhooks. Cheap to
/// clone (all clones share one outbox). Use one dispatcher per service.
#[derive(Clone)]
pub struct PushDispatcher {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for PushDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushDispatcher")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl PushDispatcher {
    /// A dispatcher with its own HTTP client (SSRF-guarded resolver, no redirects, no proxy,
    /// [`PushConfig::idle_connections_per_host`] kept for
    /// [`idle_connection_timeout`](PushConfig::idle_connection_timeout)).
    ///
    /// # Panics
    /// If the HTTP client cannot be built (only a broken TLS setup does that); see
    /// [`try_new`](Self::try_new).
    pub fn new(config: PushConfig) -> Self {
        Self::try_new(config).expect("the push dispatcher's HTTP client could not be built")
    }

    /// A dispatcher, or the reason its HTTP client could not be built.
    pub fn try_new(config: PushConfig) -> Result<Self, reqwest::Error> {
        let resolver =
            GuardedResolver::with_pinned_hosts(config.ssrf.clone(), config.pinned_hosts.clone());
        // reqwest keeps idle connections without bound by default (per host, for 90 s):
        // as many as webhooks were ever reached at once.
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(resolver.clone()))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .pool_max_idle_per_host(config.idle_connections_per_host)
            .pool_idle_timeout(config.idle_connection_timeout)
            .user_agent(config.user_agent.clone())
            .build()?;
        Ok(PushDispatcher {
            inner: Arc::new(Inner {
                in_flight: tokio::sync::Semaphore::new(config.max_concurrent_deliveries.max(1)),
                config,
                client,
                resolver,
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

    /// The check of a webhook URL's host when a config is created, after
    /// [`check_url`](Self::check_url): resolved now, within
    /// [`PushConfig::connect_timeout`], it must have an address the SSRF policy accepts
    /// ([`GuardedResolver::check_url_host`]; install it with
    /// [`AgentServiceBuilder::webhook_host_check`];
    /// [`push_dispatcher`](AgentServiceBuilder::push_dispatcher) does).
    pub async fn check_host(&self, url: &str) -> Result<(), String> {
        let wait = self.inner.config.connect_timeout;
        self.inner.resolver.check_url_host(url, wait).await
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
    /// feeds the outbox from the event log and checks webhook URLs with the SSRF policy (their
    /// host names resolved when a config is created, and again at each delivery).
    pub fn push_delivery(self, config: PushConfig) -> Self {
        self.push_dispatcher(&PushDispatcher::new(config))
    }

    /// Deliver push notifications through `dispatcher` (keep a clone to query
    /// [`PushDispatcher::status`]).
    pub fn push_dispatcher(self, dispatcher: &PushDispatcher) -> Self {
        let observer = dispatcher.clone();
        let validator = dispatcher.clone();
        let host_check = dispatcher.clone();
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
            .webhook_host_check(move |url| {
                let (dispatcher, url) = (host_check.clone(), url.to_string());
                async move { dispatcher.check_host(&url).await }
            })
    }
}

pub(super) struct PushObserver {
    pub(super) inner: Arc<Inner>,
    pub(super) store: Arc<dyn TaskManager>,
}

impl EventObserver for PushObserver {
    fn on_event(&self, task_id: &str, seq: Seq, _event: &StreamResponse) {
        start_worker(&self.inner, &self.store, task_id, Some(seq));
    }
}

/// Note that `task_id` has events up to `seq` (`None`: unknown, work found by the sweeper)
/// and start its worker unless one runs; whether one was started.
pub(super) fn start_worker(
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
        trace: Default::default(),
    };
    handle.spawn(worker.run(start));
    true
}

/// With a durable outbox: look for push work nobody delivers (its claimer stopped, or a
/// survivor wrote the event) twice per claim lifetime, for as long as the dispatcher lives.
pub(super) fn spawn_sweeper(inner: std::sync::Weak<Inner>, store: Arc<dyn TaskManager>) {
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
