//! Turns to run skills: at most `max_running_skills` at once, the rest waiting in arrival
//! order.
//!
//! A counter and a `Notify` rather than a `tokio::sync::Semaphore`: giving a semaphore's
//! permit back locks its queue every time, queue or not, and every task takes and gives back
//! a turn (about half a percent of a unary request). Here taking and giving back a turn with
//! nobody waiting is one atomic operation each; waiters are woken in order by `Notify`.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

pub(crate) struct Turns {
    /// Turns not taken.
    free: AtomicUsize,
    /// Runs waiting for a turn.
    waiting: AtomicUsize,
    /// Wakes the longest waiting run when a turn comes back.
    given_back: Notify,
}

impl Turns {
    pub(crate) fn new(max: usize) -> Self {
        Turns {
            free: AtomicUsize::new(max.max(1)),
            waiting: AtomicUsize::new(0),
            given_back: Notify::new(),
        }
    }

    fn try_take(&self) -> bool {
        // SeqCst with `waiting` (see `give_back`): a waiter either sees the turn given back,
        // or the giver sees the waiter.
        self.free
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
            .is_ok()
    }

    /// Take a turn: at once if one is free and nobody waits, else after the runs waiting
    /// before. Give it back with [`give_back`](Self::give_back).
    pub(crate) async fn take(&self) {
        if self.waiting.load(Ordering::SeqCst) == 0 && self.try_take() {
            return;
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        loop {
            // Registered before looking, so a turn given back meanwhile wakes this run.
            let notified = self.given_back.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.try_take() {
                return;
            }
            notified.await;
        }
    }

    /// Give a turn back, waking the longest waiting run if any.
    pub(crate) fn give_back(&self) {
        self.free.fetch_add(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.given_back.notify_one();
        }
    }

    /// Every turn taken and at least `max_waiting` runs waiting.
    pub(crate) fn saturated(&self, max_waiting: usize) -> bool {
        self.free.load(Ordering::Relaxed) == 0
            && self.waiting.load(Ordering::Relaxed) >= max_waiting
    }
}

/// Counts a run as waiting while it lives (also when its wait is dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn runs_beyond_the_cap_wait_in_order_and_none_is_lost() {
        let turns = Arc::new(Turns::new(2));
        turns.take().await;
        turns.take().await;
        assert!(turns.saturated(0));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..3 {
            let (turns, order) = (turns.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                turns.take().await;
                order.lock().unwrap().push(i);
            }));
            // Queue them in a known order.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(turns.saturated(3) && !turns.saturated(4));
        for _ in 0..3 {
            turns.give_back();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
        // Two turns still held by the waiters that got them last, none free.
        assert_eq!(turns.free.load(Ordering::SeqCst), 0);
        assert_eq!(turns.waiting.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn many_runs_racing_never_exceed_the_cap() {
        let turns = Arc::new(Turns::new(3));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let runs: Vec<_> = (0..200)
            .map(|_| {
                let (turns, running, most) = (turns.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    turns.take().await;
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    turns.give_back();
                })
            })
            .collect();
        for r in runs {
            tokio::time::timeout(Duration::from_secs(10), r)
                .await
                .expect("no run waits forever")
                .unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(turns.free.load(Ordering::SeqCst), 3);
    }
}
