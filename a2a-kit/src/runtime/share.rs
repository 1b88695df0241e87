//! Each caller's share of the agent: skill turns running and waiting, and live tasks, counted
//! per caller (the authenticated caller, else the client's address), so one caller's backlog
//! cannot take what the others need.
//!
//! A caller's counts are atomics in one [`Share`], looked up once per new task; the run holds
//! it ([`LiveTask`]) until it ends, so taking and giving back a turn or a live task costs an
//! atomic operation, not a lookup. Shares nobody holds are swept from the table as it grows.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::fast_map::FastMap;

/// What one caller may hold at once ([`ExecutionConfig::per_caller`](super::ExecutionConfig::per_caller)).
///
/// A caller is the authenticated caller (its subject), else the client's address (an IPv6
/// client is its /64); a request with neither (an [`AgentService`](crate::server::AgentService)
/// called directly, an app that does not pass the address on) counts against nobody's share.
/// The defaults keep an agent on the internet usable for everyone when one client floods it;
/// raise them for an agent serving a few trusted callers (an orchestrator, a proxy whose
/// clients all come from one address).
///
/// ```
/// let share = a2a_kit::runtime::CallerShare { running_skills: 64, ..Default::default() };
/// assert_eq!(share.live_tasks, 1_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallerShare {
    /// Skills of one caller running at once (default 256, a quarter of
    /// [`max_running_skills`](super::ExecutionConfig::max_running_skills)'s default). Beyond
    /// it the caller's runs wait for a turn while other callers' runs take the free ones.
    pub running_skills: usize,
    /// Runs of one caller waiting for a turn (default 1,000, a tenth of
    /// [`max_waiting_skills`](super::ExecutionConfig::max_waiting_skills)'s default). Beyond
    /// it the caller's new tasks are refused with the "unavailable" error (503 with
    /// `Retry-After`), before anything is stored.
    pub waiting_skills: usize,
    /// Tasks of one caller whose skill is running or waiting for a turn, and tasks waiting
    /// for its reply, whether the skill waits in `ctx.ask` or returned INPUT_REQUIRED (those
    /// count until the reply comes, the task ends, or the reply timeout passes). Default
    /// 1,000, 1% of the in-memory store's default size. Beyond it the caller's new tasks are
    /// refused the same way, so one caller's questions left unanswered cannot fill the store
    /// for everyone. Counted per process.
    pub live_tasks: usize,
}

impl Default for CallerShare {
    fn default() -> Self {
        CallerShare {
            running_skills: 256,
            waiting_skills: 1_000,
            live_tasks: 1_000,
        }
    }
}

impl CallerShare {
    /// What is wrong with this share, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.running_skills == 0 || self.waiting_skills == 0 || self.live_tasks == 0 {
            return Err(format!(
                "running_skills, waiting_skills and live_tasks must be at least 1, not {self:?}"
            ));
        }
        Ok(())
    }
}

/// Who a share belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ShareKey<'a> {
    /// An authenticated caller, by subject.
    Caller(&'a str),
    /// An anonymous client, by address (an IPv6 client by its /64, what one host usually has).
    Address(IpAddr),
}

impl ShareKey<'_> {
    /// The key of a client at `ip`.
    pub(crate) fn address(ip: IpAddr) -> Self {
        ShareKey::Address(crate::request::client_key(ip))
    }
}

impl std::fmt::Display for ShareKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShareKey::Caller(subject) => write!(f, "caller `{subject}`"),
            ShareKey::Address(ip) => write!(f, "client {ip}"),
        }
    }
}

/// One caller's counts.
#[derive(Debug)]
pub(crate) struct Share {
    /// Its skills holding a turn.
    pub(crate) running: AtomicUsize,
    /// Its runs waiting for a turn.
    pub(crate) waiting: AtomicUsize,
    /// Its live tasks.
    live: AtomicUsize,
}

impl Share {
    fn new() -> Self {
        Share {
            running: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            live: AtomicUsize::new(0),
        }
    }

    /// Count one more of `counter` if under `max`.
    pub(crate) fn try_add(counter: &AtomicUsize, max: usize) -> bool {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }
}

/// Why a caller's new task is refused.
#[derive(Debug)]
pub(crate) enum OverShare {
    LiveTasks(usize),
    WaitingSkills(usize),
}

/// Every caller's share, shared by a service's requests.
pub(crate) struct Shares {
    pub(crate) limits: CallerShare,
    table: Mutex<Table>,
}

/// Two maps, so a caller's subject is looked up as the `&str` it is (no key built).
#[derive(Default)]
struct Table {
    callers: FastMap<Arc<str>, Arc<Share>>,
    addresses: FastMap<IpAddr, Arc<Share>>,
    /// Sweep when the table grows past this (twice its size after the last sweep).
    sweep_at: usize,
}

impl Table {
    fn len(&self) -> usize {
        self.callers.len() + self.addresses.len()
    }
}

/// Shares held by nobody are kept until the table reaches this many.
const SWEEP_FLOOR: usize = 1024;

impl Shares {
    pub(crate) fn new(limits: CallerShare) -> Self {
        Shares {
            limits,
            table: Mutex::new(Table {
                sweep_at: SWEEP_FLOOR,
                ..Table::default()
            }),
        }
    }

    /// A live task of `key`, counted until the returned guard drops; refused when `key`
    /// holds its share of live tasks or of runs waiting for a turn.
    pub(crate) fn enter(&self, key: &ShareKey) -> Result<LiveTask, OverShare> {
        let share = self.share(key);
        if share.waiting.load(Ordering::SeqCst) >= self.limits.waiting_skills {
            return Err(OverShare::WaitingSkills(self.limits.waiting_skills));
        }
        if !Share::try_add(&share.live, self.limits.live_tasks) {
            return Err(OverShare::LiveTasks(self.limits.live_tasks));
        }
        Ok(LiveTask { share })
    }

    fn share(&self, key: &ShareKey) -> Arc<Share> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let found = match key {
            ShareKey::Caller(subject) => table.callers.get(*subject),
            ShareKey::Address(ip) => table.addresses.get(ip),
        };
        if let Some(share) = found {
            return share.clone();
        }
        if table.len() >= table.sweep_at {
            // Amortized: a sweep of n shares comes after at least n/2 new ones.
            table.callers.retain(|_, s| Arc::strong_count(s) > 1);
            table.addresses.retain(|_, s| Arc::strong_count(s) > 1);
            table.sweep_at = (table.len() * 2).max(SWEEP_FLOOR);
        }
        let share = Arc::new(Share::new());
        match key {
            ShareKey::Caller(subject) => table.callers.insert((*subject).into(), share.clone()),
            ShareKey::Address(ip) => table.addresses.insert(*ip, share.clone()),
        };
        share
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().unwrap().len()
    }
}

/// One live task of a caller: its count goes down when this drops (the run ended). The run's
/// turns are counted against the same share.
#[derive(Debug)]
pub(crate) struct LiveTask {
    pub(crate) share: Arc<Share>,
}

impl LiveTask {
    /// One more live task of the same caller, counted whatever its share (a task going on
    /// after the run that held this one).
    pub(crate) fn another(&self) -> LiveTask {
        self.share.live.fetch_add(1, Ordering::SeqCst);
        LiveTask {
            share: self.share.clone(),
        }
    }
}

impl Drop for LiveTask {
    fn drop(&mut self) {
        self.share.live.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u8) -> ShareKey<'static> {
        ShareKey::address(IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn a_caller_holds_at_most_its_live_tasks_and_others_are_untouched() {
        let shares = Shares::new(CallerShare {
            live_tasks: 2,
            ..Default::default()
        });
        let a1 = shares.enter(&addr(1)).unwrap();
        let _a2 = shares.enter(&addr(1)).unwrap();
        assert!(matches!(
            shares.enter(&addr(1)),
            Err(OverShare::LiveTasks(2))
        ));
        let _b = shares.enter(&addr(2)).unwrap();
        drop(a1);
        shares.enter(&addr(1)).unwrap();
    }

    #[test]
    fn a_caller_with_its_share_of_waiting_runs_is_refused_and_others_are_not() {
        let shares = Shares::new(CallerShare {
            waiting_skills: 1,
            ..Default::default()
        });
        let held = shares.enter(&addr(1)).unwrap();
        held.share.waiting.fetch_add(1, Ordering::SeqCst);
        assert!(matches!(
            shares.enter(&addr(1)),
            Err(OverShare::WaitingSkills(1))
        ));
        assert!(shares.enter(&addr(2)).is_ok());
        held.share.waiting.fetch_sub(1, Ordering::SeqCst);
        assert!(shares.enter(&addr(1)).is_ok());
    }

    #[test]
    fn shares_nobody_holds_are_swept_as_the_table_grows() {
        let shares = Shares::new(CallerShare::default());
        let kept = shares.enter(&addr(1)).unwrap();
        for i in 0..10_000u32 {
            let key = ShareKey::address(IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 + i)));
            drop(shares.enter(&key).unwrap());
        }
        assert!(shares.len() <= 2 * SWEEP_FLOOR, "{}", shares.len());
        // The held share survived every sweep with its count.
        assert_eq!(kept.share.live.load(Ordering::SeqCst), 1);
        let again = shares.share(&addr(1));
        assert!(Arc::ptr_eq(&again, &kept.share));
    }
}
