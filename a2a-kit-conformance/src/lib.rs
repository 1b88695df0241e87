//! The task store conformance suite: test support, not part of the SDK.
//!
//! Every store must behave the same: the runtime, the HTTP bindings and `Last-Event-ID` replay
//! rely on exactly the semantics of [`InMemoryTaskManager`](a2a_kit::store::InMemoryTaskManager)
//! and [`apply_event`](a2a_kit::store::apply_event). This crate checks them, so a third-party
//! store can run the same suite as the kit's own stores:
//!
//! ```toml
//! [dev-dependencies]
//! a2a-kit-conformance = "0.1"
//! ```
//!
//! The checks come in [groups](GROUPS): the [core](CORE) checks the
//! [`TaskManager`] trait every store implements; each capability a store may have
//! ([`Capability`]: push configs, a push outbox, cluster coordination, the calling side's
//! remote tasks) has checks of its own, run on a store that has it. [`run_all`] runs the core
//! and the groups of every capability the store has, and reports the others as skipped:
//!
//! ```
//! use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
//! use a2a_kit_conformance as conformance;
//!
//! #[tokio::test(flavor = "multi_thread")]
//! # async fn never() {}
//! async fn my_store_conforms() {
//!     // Replace with your store; each check gets a fresh, empty one.
//!     let report = conformance::run_all(|| async {
//!         InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
//!     })
//!     .await;
//!     assert!(report.capabilities.push_configs && report.capabilities.remote_tasks);
//! }
//! # tokio::runtime::Runtime::new().unwrap().block_on(my_store_conforms());
//! ```
//!
//! For one test per check (a failure then names the check), use [`store_tests!`].
//!
//! Rules for the store under test:
//!
//! * each call of the factory returns a **new, empty** store;
//! * the store evicts nothing by itself while a check runs (for the in-memory store:
//!   `terminal_ttl: None`): some checks use status timestamps minutes or hours in the past;
//! * a Tokio runtime is running (the concurrency checks spawn tasks; a multi-thread runtime
//!   exercises them best).
//!
//! A failing check panics with a message naming what differed; a capability's check run on a
//! store without the capability panics saying so. [`run_check`] runs one check by name.
//! [`kit_cursor_format`] is in no group: it pins the page-token format the kit's own stores
//! share, which other stores need not follow.

#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use a2a_kit::store::TaskManager;

mod cluster;
mod concurrency;
mod fixtures;
mod list;
mod log;
mod maintenance;
mod model;
mod push;
mod remote;
mod suite;
mod tasks;

pub use cluster::*;
pub use concurrency::*;
pub use list::*;
pub use log::*;
pub use maintenance::*;
pub use model::*;
pub use push::*;
pub use remote::*;
pub use tasks::*;

/// The keyset cursor the kit's stores share: (status timestamp, task id), base64url. Pinned
/// here, apart from the stores, so a change to it is a visible change of the suite.
pub(crate) fn encode_cursor(ts_millis: i64, task_id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts_millis}:{task_id}"))
}

/// The store handed to each check.
pub type Store = Arc<dyn TaskManager>;

/// One named check of the suite.
///
/// ```
/// let names: Vec<&str> = a2a_kit_conformance::CORE.iter().map(|c| c.name).collect();
/// assert!(names.contains(&"event_log"));
/// ```
#[derive(Clone, Copy)]
pub struct Check {
    /// The check's name (the name of its function in this crate).
    pub name: &'static str,
    /// Run it against a fresh store; panics on a difference.
    pub run: fn(Store) -> BoxFuture<'static, ()>,
}

impl Check {
    /// Run the check on `store` (a fresh, empty one).
    pub fn run_on<M: TaskManager>(self, store: M) -> BoxFuture<'static, ()> {
        (self.run)(Arc::new(store))
    }
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A capability a store may have besides the core [`TaskManager`]: each is a trait of its
/// own, reached through an accessor of the core, and has a group of checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// [`PushConfigStore`](a2a_kit::store::PushConfigStore), through
    /// [`TaskManager::push_configs`].
    PushConfigs,
    /// [`PushOutbox`](a2a_kit::store::PushOutbox), through [`TaskManager::push_outbox`];
    /// its checks need push configs too.
    PushOutbox,
    /// [`ClusterStore`](a2a_kit::store::ClusterStore), through [`TaskManager::cluster`].
    Cluster,
    /// [`RemoteTaskStore`](a2a_kit::store::RemoteTaskStore), through
    /// [`TaskManager::remote_tasks`]: the calling side's remote tasks and webhook tokens.
    RemoteTasks,
}

impl Capability {
    /// Whether `store` has it.
    pub fn of(self, store: &dyn TaskManager) -> bool {
        match self {
            Capability::PushConfigs => store.push_configs().is_some(),
            Capability::PushOutbox => {
                store.push_outbox().is_some() && store.push_configs().is_some()
            }
            Capability::Cluster => store.cluster().is_some(),
            Capability::RemoteTasks => store.remote_tasks().is_some(),
        }
    }

    /// Its trait's name.
    pub fn trait_name(self) -> &'static str {
        match self {
            Capability::PushConfigs => "PushConfigStore",
            Capability::PushOutbox => "PushOutbox",
            Capability::Cluster => "ClusterStore",
            Capability::RemoteTasks => "RemoteTaskStore",
        }
    }

    /// Why its checks do not run on a store without it.
    pub fn missing(self) -> String {
        let accessor = match self {
            Capability::PushConfigs => "push_configs",
            Capability::PushOutbox => "push_outbox (or push_configs)",
            Capability::Cluster => "cluster",
            Capability::RemoteTasks => "remote_tasks",
        };
        format!(
            "the store has no {} (TaskManager::{accessor} returns None)",
            self.trait_name()
        )
    }
}

/// Which capabilities a store has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// [`Capability::PushConfigs`].
    pub push_configs: bool,
    /// [`Capability::PushOutbox`].
    pub push_outbox: bool,
    /// [`Capability::Cluster`].
    pub cluster: bool,
    /// [`Capability::RemoteTasks`].
    pub remote_tasks: bool,
}

impl Capabilities {
    /// Those of `store`.
    pub fn of(store: &dyn TaskManager) -> Capabilities {
        Capabilities {
            push_configs: Capability::PushConfigs.of(store),
            push_outbox: Capability::PushOutbox.of(store),
            cluster: Capability::Cluster.of(store),
            remote_tasks: Capability::RemoteTasks.of(store),
        }
    }

    /// Whether `capability` is among them.
    pub fn has(self, capability: Capability) -> bool {
        match capability {
            Capability::PushConfigs => self.push_configs,
            Capability::PushOutbox => self.push_outbox,
            Capability::Cluster => self.cluster,
            Capability::RemoteTasks => self.remote_tasks,
        }
    }
}

/// The store has exactly the capabilities `declared` (what a [`store_tests!`] invocation says
/// of it): a capability the store gained or lost shows as a failure, never as checks silently
/// skipped.
pub async fn capabilities_as_declared(s: Store, declared: Capabilities) {
    assert_eq!(
        Capabilities::of(&*s),
        declared,
        "the store's capabilities (left) differ from those declared to the suite (right)"
    );
}

/// The checks of the core or of one capability.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// `core`, or the capability's name as [`store_tests!`] takes it (`push_configs`, ...).
    pub name: &'static str,
    /// `None` for the core, which every store runs.
    pub capability: Option<Capability>,
    /// Its checks, in order.
    pub checks: &'static [Check],
}

crate::__with_checks!(__check_consts! {});

/// Every group: the core, then each capability's.
///
/// ```
/// let n: usize = a2a_kit_conformance::GROUPS.iter().map(|g| g.checks.len()).sum();
/// assert!(n > 20);
/// ```
pub const GROUPS: &[Group] = &[
    Group {
        name: "core",
        capability: None,
        checks: CORE,
    },
    Group {
        name: "push_configs",
        capability: Some(Capability::PushConfigs),
        checks: PUSH_CONFIGS,
    },
    Group {
        name: "push_outbox",
        capability: Some(Capability::PushOutbox),
        checks: PUSH_OUTBOX,
    },
    Group {
        name: "cluster",
        capability: Some(Capability::Cluster),
        checks: CLUSTER,
    },
    Group {
        name: "remote_tasks",
        capability: Some(Capability::RemoteTasks),
        checks: REMOTE_TASKS,
    },
];

/// What [`run_all`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The capabilities the store has.
    pub capabilities: Capabilities,
    /// The checks run, in order (all passed: a failure panics).
    pub ran: Vec<&'static str>,
    /// The capabilities the store lacks, whose checks did not run.
    pub skipped: Vec<Capability>,
}

/// Run the core checks and those of every capability the store has, each on a fresh store
/// from `make`; the capabilities it lacks are reported (on stderr and in the [`Report`]).
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let report = conformance::run_all(|| async {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
/// })
/// .await;
/// assert_eq!(report.skipped, [conformance::Capability::PushOutbox, conformance::Capability::Cluster]);
/// # });
/// ```
pub async fn run_all<F, Fut, M>(mut make: F) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = M>,
    M: TaskManager,
{
    let capabilities = Capabilities::of(&make().await);
    let mut report = Report {
        capabilities,
        ran: Vec::new(),
        skipped: Vec::new(),
    };
    for group in GROUPS {
        if let Some(c) = group.capability.filter(|c| !capabilities.has(*c)) {
            eprintln!(
                "conformance: {} checks skipped: {}",
                group.name,
                c.missing()
            );
            report.skipped.push(c);
            continue;
        }
        for check in group.checks {
            eprintln!("conformance: {}", check.name);
            check.run_on(make().await).await;
            report.ran.push(check.name);
        }
    }
    report
}

/// Run the check called `name` (of any group, or [`kit_cursor_format`]) on a fresh store from
/// `make`; panics if there is no such check, or if the store lacks its group's capability.
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::run_check("push_configs", || async {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None })
/// })
/// .await;
/// # });
/// ```
pub async fn run_check<F, Fut, M>(name: &str, make: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = M>,
    M: TaskManager,
{
    let kit_cursor = Check {
        name: "kit_cursor_format",
        run: |s| Box::pin(kit_cursor_format(s)),
    };
    let check = GROUPS
        .iter()
        .flat_map(|g| g.checks)
        .chain([&kit_cursor])
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no conformance check named `{name}`"));
    check.run_on(make().await).await;
}
