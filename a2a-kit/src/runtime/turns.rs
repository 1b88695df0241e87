//! Turns to run skills: at most `max_running_skills` at once and at most a caller's share of
//! them ([`CallerShare::running_skills`](super::CallerShare::running_skills)); the rest wait,
//! served caller by caller in turn (each caller's own runs in arrival order), so one caller's
//! backlog never stands in front of another caller's run.
//!
//! A counter and atomics rather than a `tokio::sync::Semaphore`: giving a semaphore's permit
//! back locks its queue every time, queue or not, and every task takes and gives back a turn
//! (about half a percent of a unary request). Here taking and giving back a turn with nobody
//! waiting is an atomic operation or two; the queue is locked only while runs wait.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::share::Share;
use crate::fast_map::FastMap;

pub(crate) struct Turns {
    /// Turns not taken.
    free: AtomicUsize,
    /// Runs waiting for a turn.
    waiting: AtomicUsize,
    /// Turns one caller may hold.
    per_caller: usize,
    queue: Mutex<Queue>,
    ids: AtomicU64,
}

/// The runs waiting, by caller.
#[derive(Default)]
struct Queue {
    /// Callers with runs waiting, in the order they are served next.
    ring: VecDeque<LaneKey>,
    lanes: FastMap<LaneKey, Lane>,
}

/// A caller's share by identity; 0 for runs that count against nobody's share.
type LaneKey = usize;

fn lane_key(share: Option<&Arc<Share>>) -> LaneKey {
    share.map_or(0, |s| Arc::as_ptr(s) as usize)
}

/// One caller's waiting runs (the share kept alive, so its key stays unique).
struct Lane {
    share: Option<Arc<Share>>,
    waiters: VecDeque<(u64, oneshot::Sender<()>)>,
}

impl Turns {
    pub(crate) fn new(max: usize, per_caller: usize) -> Self {
        Turns {
            free: AtomicUsize::new(max.max(1)),
            waiting: AtomicUsize::new(0),
            per_caller: per_caller.max(1),
            queue: Mutex::default(),
            ids: AtomicU64::new(0),
        }
    }

    fn try_take_free(&self) -> bool {
        // SeqCst with `waiting` (see `give_back`): a waiter either sees the turn given back,
        // or the giver sees the waiter.
        self.free
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
            .is_ok()
    }

    /// A free turn for `share`'s caller if it is under its share, both counted.
    fn try_take(&self, share: Option<&Arc<Share>>) -> bool {
        if let Some(s) = share
            && !Share::try_add(&s.running, self.per_caller)
        {
            return false;
        }
        if self.try_take_free() {
            return true;
        }
        if let Some(s) = share {
            s.running.fetch_sub(1, Ordering::SeqCst);
        }
        false
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take a turn for a run of `share`'s caller (`None`: a run counted against nobody's
    /// share): at once if one is free, the caller is under its share and nobody waits, else
    /// when its caller's turn comes. Give it back with [`give_back`](Self::give_back).
    pub(crate) async fn take(&self, share: Option<&Arc<Share>>) {
        // `share` is borrowed by the wait below, which removes itself from the queue if dropped.
        if self.waiting.load(Ordering::SeqCst) == 0 && self.try_take(share) {
            return;
        }
        let (tx, rx) = oneshot::channel();
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let key = lane_key(share);
        {
            let mut q = self.queue();
            let lane = q.lanes.entry(key).or_insert_with(|| Lane {
                share: share.cloned(),
                waiters: VecDeque::new(),
            });
            lane.waiters.push_back((id, tx));
            if lane.waiters.len() == 1 {
                q.ring.push_back(key);
            }
            self.waiting.fetch_add(1, Ordering::SeqCst);
            if let Some(s) = share {
                s.waiting.fetch_add(1, Ordering::SeqCst);
            }
            self.dispatch(&mut q);
        }
        let mut waiting = Waiting {
            turns: self,
            share,
            key,
            id,
            rx: Some(rx),
        };
        if let Some(rx) = waiting.rx.as_mut() {
            // The sender lives in the queue until this run is served (or this wait is dropped).
            let _ = rx.await;
        }
        waiting.rx = None;
    }

    /// Hand free turns to waiting runs, one per caller in turn, skipping callers at their share.
    fn dispatch(&self, q: &mut Queue) {
        let mut skipped = 0;
        while skipped < q.ring.len() && self.free.load(Ordering::SeqCst) > 0 {
            let Some(key) = q.ring.pop_front() else { break };
            let Some(lane) = q.lanes.get_mut(&key) else {
                continue;
            };
            if !self.try_take(lane.share.as_ref()) {
                // At its share (or the free turn went meanwhile): the next caller's turn.
                q.ring.push_back(key);
                skipped += 1;
                continue;
            }
            skipped = 0;
            let (_, tx) = lane
                .waiters
                .pop_front()
                .expect("a lane in the ring has waiters");
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            if let Some(s) = &lane.share {
                s.waiting.fetch_sub(1, Ordering::SeqCst);
            }
            let share = lane.share.clone();
            if lane.waiters.is_empty() {
                q.lanes.remove(&key);
            } else {
                q.ring.push_back(key);
            }
            if tx.send(()).is_err() {
                // Its wait is gone (a dropped wait removes itself, so this is only a guard).
                self.release(share.as_ref());
            }
        }
    }

    /// Give a turn of `share`'s caller back, serving the next waiting run if any.
    pub(crate) fn give_back(&self, share: Option<&Arc<Share>>) {
        self.release(share);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.dispatch(&mut self.queue());
        }
    }

    fn release(&self, share: Option<&Arc<Share>>) {
        if let Some(s) = share {
            s.running.fetch_sub(1, Ordering::SeqCst);
        }
        self.free.fetch_add(1, Ordering::SeqCst);
    }

    /// Every turn taken and at least `max_waiting` runs waiting.
    pub(crate) fn saturated(&self, max_waiting: usize) -> bool {
        self.free.load(Ordering::Relaxed) == 0
            && self.waiting.load(Ordering::Relaxed) >= max_waiting
    }
}

/// A run waiting for its turn; dropped before it is served (its task canceled), it leaves the
/// queue, and dropped just after, it gives the turn it got back.
struct Waiting<'a> {
    turns: &'a Turns,
    share: Option<&'a Arc<Share>>,
    key: LaneKey,
    id: u64,
    rx: Option<oneshot::Receiver<()>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        let turns = self.turns;
        let mut q = turns.queue();
        if let Some(lane) = q.lanes.get_mut(&self.key)
            && let Some(at) = lane.waiters.iter().position(|(id, _)| *id == self.id)
        {
            lane.waiters.remove(at);
            turns.waiting.fetch_sub(1, Ordering::SeqCst);
            if let Some(s) = &lane.share {
                s.waiting.fetch_sub(1, Ordering::SeqCst);
            }
            if lane.waiters.is_empty() {
                q.lanes.remove(&self.key);
                q.ring.retain(|k| *k != self.key);
            }
            return;
        }
        // Served under the lock before this drop took it: the turn is this run's to give back.
        if rx.try_recv().is_ok() {
            drop(q);
            turns.give_back(self.share);
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::share::{CallerShare, ShareKey, Shares};
    use std::time::Duration;

    fn share_of(shares: &Shares, n: u8) -> Arc<Share> {
        let key = ShareKey::address(std::net::IpAddr::from([10, 0, 0, n]));
        let live = shares.enter(&key).unwrap();
        let share = live.share.clone();
        std::mem::forget(live);
        share
    }

    #[tokio::test]
    async fn a_callers_backlog_does_not_stand_before_another_callers_run() {
        let shares = Shares::new(CallerShare::default());
        let (hog, other) = (share_of(&shares, 1), share_of(&shares, 2));
        let turns = Arc::new(Turns::new(1, 1));
        turns.take(Some(&hog)).await;
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        // The hog queues five runs, then the other caller one.
        for (i, share) in [&hog, &hog, &hog, &hog, &hog, &other]
            .into_iter()
            .enumerate()
        {
            let (turns, order, share) = (turns.clone(), order.clone(), share.clone());
            waiters.push(tokio::spawn(async move {
                turns.take(Some(&share)).await;
                order.lock().unwrap().push(i);
                turns.give_back(Some(&share));
            }));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(hog.waiting.load(Ordering::SeqCst), 5);
        turns.give_back(Some(&hog));
        for w in waiters {
            w.await.unwrap();
        }
        // The other caller's run went second, not sixth.
        assert_eq!(*order.lock().unwrap(), [0, 5, 1, 2, 3, 4]);
        assert_eq!(turns.free.load(Ordering::SeqCst), 1);
        assert_eq!(hog.running.load(Ordering::SeqCst), 0);
        assert_eq!(hog.waiting.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_caller_at_its_share_waits_while_others_take_the_free_turns() {
        let shares = Shares::new(CallerShare::default());
        let (hog, other) = (share_of(&shares, 1), share_of(&shares, 2));
        let turns = Arc::new(Turns::new(4, 2));
        turns.take(Some(&hog)).await;
        turns.take(Some(&hog)).await;
        let third = tokio::spawn({
            let (turns, hog) = (turns.clone(), hog.clone());
            async move { turns.take(Some(&hog)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!third.is_finished(), "a third turn is over the hog's share");
        // Two turns are still free: the other caller gets them at once, queue or not.
        tokio::time::timeout(Duration::from_secs(5), async {
            turns.take(Some(&other)).await;
            turns.take(Some(&other)).await;
        })
        .await
        .expect("free turns go to a caller under its share");
        turns.give_back(Some(&hog));
        tokio::time::timeout(Duration::from_secs(5), third)
            .await
            .expect("the hog's run gets the turn its own run gave back")
            .unwrap();
        assert_eq!(hog.running.load(Ordering::SeqCst), 2);
        assert_eq!(other.running.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_dropped_wait_leaves_the_queue_and_loses_no_turn() {
        let shares = Shares::new(CallerShare::default());
        let a = share_of(&shares, 1);
        let turns = Arc::new(Turns::new(1, 1));
        turns.take(Some(&a)).await;
        let waiter = tokio::spawn({
            let (turns, a) = (turns.clone(), a.clone());
            async move { turns.take(Some(&a)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(turns.waiting.load(Ordering::SeqCst), 1);
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(turns.waiting.load(Ordering::SeqCst), 0);
        assert_eq!(a.waiting.load(Ordering::SeqCst), 0);
        turns.give_back(Some(&a));
        assert_eq!(turns.free.load(Ordering::SeqCst), 1);
        assert_eq!(a.running.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn runs_beyond_the_cap_wait_in_order_and_none_is_lost() {
        let turns = Arc::new(Turns::new(2, 2));
        turns.take(None).await;
        turns.take(None).await;
        assert!(turns.saturated(0));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..3 {
            let (turns, order) = (turns.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                turns.take(None).await;
                order.lock().unwrap().push(i);
            }));
            // Queue them in a known order.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(turns.saturated(3) && !turns.saturated(4));
        for _ in 0..3 {
            turns.give_back(None);
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
        let turns = Arc::new(Turns::new(3, 3));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let runs: Vec<_> = (0..200)
            .map(|_| {
                let (turns, running, most) = (turns.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    turns.take(None).await;
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    turns.give_back(None);
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
