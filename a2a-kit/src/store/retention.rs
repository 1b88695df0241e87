//! Retention: purge terminal tasks older than a TTL, in the background.
//!
//! [`spawn_retention`] works with any [`TaskManager`]: every `every` it asks the store to
//! delete the tasks that ended (COMPLETED, FAILED, CANCELED, REJECTED) more than `ttl` ago,
//! with their history, artifacts, push configs and event logs. It runs on its own Tokio task,
//! never on the request path; `SqliteTaskManager` (feature `sqlite`) deletes in small
//! batches so requests get the database between them. Live tasks (SUBMITTED, WORKING,
//! INPUT_REQUIRED, AUTH_REQUIRED) are never purged, however old.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::{StoreError, TaskManager};
use crate::protocol::Timestamp;

/// The instant `ttl` before now: terminal tasks whose final status is older are expired.
/// A TTL too large to represent saturates to the earliest representable instant.
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::protocol::Timestamp;
/// let cutoff = a2a_kit::store::retention::cutoff(Duration::from_secs(3600));
/// assert!(cutoff < Timestamp::now());
/// ```
pub fn cutoff(ttl: Duration) -> Timestamp {
    let now = Timestamp::now().0;
    let earliest = chrono::DateTime::<chrono::Utc>::MIN_UTC;
    let at = chrono::Duration::from_std(ttl)
        .ok()
        .and_then(|d| now.checked_sub_signed(d))
        .unwrap_or(earliest);
    Timestamp::from(at)
}

/// Purge once: delete terminal tasks whose final status is more than `ttl` old; returns how
/// many were deleted.
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::store::{InMemoryTaskManager, retention};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = InMemoryTaskManager::default();
/// let purged = retention::purge_expired(&store, Duration::from_secs(3600)).await.unwrap();
/// assert_eq!(purged, 0);
/// # });
/// ```
pub async fn purge_expired<S: TaskManager + ?Sized>(
    store: &S,
    ttl: Duration,
) -> Result<usize, StoreError> {
    store.purge_terminal_before(cutoff(ttl)).await
}

/// Purge expired terminal tasks from `store` now and then every `every`, on a background Tokio
/// task, until the returned handle is aborted (or the runtime shuts down). Errors are logged
/// (`tracing`) and the next round tries again.
///
/// Needs a Tokio runtime. `every` must be non-zero.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use a2a_kit::store::{InMemoryTaskManager, TaskManager, retention::spawn_retention};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store: Arc<dyn TaskManager> = Arc::new(InMemoryTaskManager::default());
/// // Keep finished tasks for a day; look every ten minutes.
/// let handle = spawn_retention(store.clone(), Duration::from_secs(86_400), Duration::from_secs(600));
/// // ... serve with `store` ...
/// handle.abort();
/// # });
/// ```
pub fn spawn_retention<S>(store: Arc<S>, ttl: Duration, every: Duration) -> JoinHandle<()>
where
    S: TaskManager + ?Sized,
{
    let every = every.max(Duration::from_millis(1));
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match purge_expired(&*store, ttl).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(purged = n, "retention: purged expired terminal tasks"),
                Err(e) => {
                    tracing::warn!(error = %e, "retention: purge failed; retrying next round")
                }
            }
        }
    })
}
