//! Per-task doorbells. Readers never receive events from the executor: they wait on their
//! task's bell, then read the store's log after the last sequence number they saw.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::fast_map::FastMap;
use crate::protocol::TaskState;
use crate::store::{Seq, TaskManager};

/// What a task's doorbell says: the last event written, and enough of its state that a
/// blocking SendMessage can wait without reading the log.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bell {
    /// The last sequence number written.
    pub(crate) seq: Seq,
    /// The sequence number of the last terminal or interrupted status written.
    pub(crate) settled_seq: Seq,
    /// Whether a terminal status was written.
    pub(crate) terminal: bool,
    /// Bumped when the store may have missed telling of events (another process's, on a
    /// shared store): readers then read the log again instead of trusting the counts above.
    pub(crate) resyncs: u64,
}

/// Per-task doorbells: a watch channel per task with readers. When the last reader of a
/// finished task goes (or the task finishes with none), its log is released to the store.
pub(crate) struct EventBus {
    bells: Mutex<FastMap<String, watch::Sender<Bell>>>,
    store: Arc<dyn TaskManager>,
    /// Off when an observer (the push outbox) may read logs of finished tasks later.
    pub(super) release_logs: AtomicBool,
}

pub(crate) struct BusSubscription {
    bus: Arc<EventBus>,
    pub(super) task_id: String,
    rx: Option<watch::Receiver<Bell>>,
}

impl BusSubscription {
    pub(super) async fn changed(&mut self) {
        if let Some(rx) = &mut self.rx {
            // The sender lives in the map while any receiver exists, so this only errs if the
            // bus itself is gone; then there is nothing left to wait for.
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    pub(super) fn bell(&self) -> Bell {
        self.rx.as_ref().map(|rx| *rx.borrow()).unwrap_or_default()
    }
}

impl Drop for BusSubscription {
    fn drop(&mut self) {
        drop(self.rx.take());
        let mut bells = self.bus.bells.lock().unwrap_or_else(|p| p.into_inner());
        let release = match bells.get(&self.task_id) {
            Some(tx) if tx.receiver_count() == 0 => {
                let terminal = tx.borrow().terminal;
                bells.remove(&self.task_id);
                terminal
            }
            _ => false,
        };
        drop(bells);
        if release && self.bus.releases_logs() {
            self.bus.store.release_log(&self.task_id);
        }
    }
}

impl EventBus {
    pub(crate) fn new(store: Arc<dyn TaskManager>) -> Self {
        EventBus {
            bells: Mutex::default(),
            store,
            release_logs: AtomicBool::new(true),
        }
    }

    pub(super) fn releases_logs(&self) -> bool {
        self.release_logs.load(Ordering::Relaxed)
    }

    pub(crate) fn subscribe(self: &Arc<Self>, task_id: &str) -> BusSubscription {
        let mut bells = self.bells.lock().unwrap_or_else(|p| p.into_inner());
        let rx = match bells.get(task_id) {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = watch::channel(Bell::default());
                bells.insert(task_id.to_string(), tx);
                rx
            }
        };
        BusSubscription {
            bus: self.clone(),
            task_id: task_id.to_string(),
            rx: Some(rx),
        }
    }

    /// Ring every bell: events may have been written that nobody announced.
    pub(crate) fn resync(&self) {
        let bells = self.bells.lock().unwrap_or_else(|p| p.into_inner());
        for tx in bells.values() {
            tx.send_modify(|b| b.resyncs += 1);
        }
    }

    /// Ring the task's bell; returns whether anyone was listening.
    pub(crate) fn notify(&self, task_id: &str, seq: Seq, state: Option<TaskState>) -> bool {
        let bells = self.bells.lock().unwrap_or_else(|p| p.into_inner());
        let Some(tx) = bells.get(task_id) else {
            return false;
        };
        let settled = state.is_some_and(|s| s.is_terminal() || s.is_interrupted());
        let terminal = state.is_some_and(|s| s.is_terminal());
        tx.send_modify(|b| {
            b.seq = b.seq.max(seq);
            if settled {
                b.settled_seq = b.settled_seq.max(seq);
            }
            b.terminal |= terminal;
        });
        true
    }
}
