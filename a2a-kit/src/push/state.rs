//! What the dispatcher and its workers share: the tasks the outbox knows, the delivery
//! statuses, the HTTP client and the settings.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::store::{Seq, TaskManager};

use super::{GuardedResolver, config::*, report::*};

pub(super) struct Inner {
    pub(super) config: PushConfig,
    pub(super) client: reqwest::Client,
    /// What the client dials through, also asked when a config is created.
    pub(super) resolver: GuardedResolver,
    /// A turn per webhook request in flight ([`PushConfig::max_concurrent_deliveries`]),
    /// across every task.
    pub(super) in_flight: tokio::sync::Semaphore,
    pub(super) tasks: Mutex<HashMap<String, Slot>>,
    /// Tasks whose final event was handled, and its sequence number: late observer calls for
    /// them are ignored rather than starting a worker that would deliver twice.
    pub(super) finished: Mutex<(HashMap<String, Seq>, VecDeque<String>)>,
    pub(super) statuses: Mutex<StatusTable>,
    /// Workers with events to handle.
    pub(super) busy: watch::Sender<usize>,
    /// The store the dispatcher was installed on (for [`PushDispatcher::stored_statuses`]).
    pub(super) store: std::sync::OnceLock<Arc<dyn TaskManager>>,
}

/// One task the outbox knows about (kept until the task ends).
pub(super) struct Slot {
    /// Events up to here are handled.
    pub(super) cursor: Seq,
    /// The highest sequence number observed.
    pub(super) latest: Seq,
    /// A worker is handling this task's events.
    pub(super) running: bool,
}

#[derive(Default)]
pub(super) struct StatusTable {
    pub(super) map: HashMap<(String, String), DeliveryStatus>,
    pub(super) order: VecDeque<(String, String)>,
}

pub(super) const MAX_FINISHED: usize = 4096;
pub(super) const BATCH: usize = 32;
/// Tasks taken over per sweep.
pub(super) const SWEEP_BATCH: usize = 64;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Decrements the busy count when a worker is done (or panics).
pub(super) struct BusyGuard(pub(super) Arc<Inner>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}
