//! The [`TaskManager`] conformance suite: test support, not part of the SDK.
//!
//! Every store must behave the same: the runtime, the HTTP bindings and `Last-Event-ID` replay
//! rely on exactly the semantics of [`InMemoryTaskManager`](a2a_kit::store::InMemoryTaskManager)
//! and [`apply_event`](a2a_kit::store::apply_event). This crate checks them, so a third-party store can run the same suite
//! as the kit's own stores:
//!
//! ```toml
//! [dev-dependencies]
//! a2a-kit-conformance = "0.1"
//! ```
//!
//! ```
//! use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
//! use a2a_kit_conformance as conformance;
//!
//! #[tokio::test(flavor = "multi_thread")]
//! # async fn never() {}
//! async fn my_store_conforms() {
//!     // Replace with your store; each check gets a fresh, empty one.
//!     conformance::run_all(|| async {
//!         InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
//!     })
//!     .await;
//! }
//! # tokio::runtime::Runtime::new().unwrap().block_on(my_store_conforms());
//! ```
//!
//! Rules for the store under test:
//!
//! * each call of the factory returns a **new, empty** store;
//! * the store evicts nothing by itself while a check runs (for the in-memory store:
//!   `terminal_ttl: None`): some checks use status timestamps minutes or hours in the past;
//! * a Tokio runtime is running (the concurrency checks spawn tasks; a multi-thread runtime
//!   exercises them best).
//!
//! A failing check panics with a message naming what differed. [`CHECKS`] lists every check by
//! name; [`run_check`] runs one. [`kit_cursor_format`] is not part of [`run_all`]: it pins the
//! page-token format the kit's own stores share, which other stores need not follow.

#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use a2a_kit::store::TaskManager;

mod concurrency;
mod fixtures;
mod list;
mod log;
mod maintenance;
mod model;
mod tasks;

pub use concurrency::*;
pub use list::*;
pub use log::*;
pub use maintenance::*;
pub use model::*;
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
/// let names: Vec<&str> = a2a_kit_conformance::CHECKS.iter().map(|c| c.name).collect();
/// assert!(names.contains(&"event_log"));
/// ```
#[derive(Clone, Copy)]
pub struct Check {
    /// The check's name (the name of its function in this module).
    pub name: &'static str,
    /// Run it against a fresh store; panics on a difference.
    pub run: fn(Store) -> BoxFuture<'static, ()>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

macro_rules! checks {
    ($($f:ident),* $(,)?) => {
        &[$(Check { name: stringify!($f), run: |s| Box::pin($f(s)) }),*]
    };
}

/// Every check [`run_all`] runs, in order.
///
/// ```
/// assert!(a2a_kit_conformance::CHECKS.len() > 10);
/// ```
pub const CHECKS: &[Check] = checks![
    create_and_get,
    task_views,
    status_updates,
    artifact_updates,
    history_semantics,
    event_log,
    create_with_events,
    list_empty,
    list_order_and_pagination,
    list_filters,
    list_views,
    list_page_tokens,
    list_pagination_is_stable_under_inserts,
    push_configs,
    retention,
    task_ids_in_states,
    json_fidelity,
    concurrent_appends_across_tasks,
    concurrent_appends_to_one_task,
    concurrent_refusals_stay_their_own,
    model_replay,
    owners,
];

/// Run every check in [`CHECKS`], each on a fresh store from `make`.
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::run_all(|| async {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
/// })
/// .await;
/// # });
/// ```
pub async fn run_all<F, Fut, M>(mut make: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = M>,
    M: TaskManager,
{
    for check in CHECKS {
        let store: Store = Arc::new(make().await);
        eprintln!("conformance: {}", check.name);
        (check.run)(store).await;
    }
}

/// Run the check called `name` on a fresh store from `make`; panics if there is no such check.
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
    let check = CHECKS
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no conformance check named `{name}`"));
    (check.run)(Arc::new(make().await)).await;
}
