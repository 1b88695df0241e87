//! Per-caller quotas: requests a second (`governor`'s keyed GCRA) and live tasks (a count per
//! caller, held by each run until it ends), so one caller cannot take the agent's capacity
//! from the others.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};

/// What one caller may use ([`AgentServiceBuilder::caller_quota`](crate::server::AgentServiceBuilder::caller_quota)).
///
/// ```
/// let quota = a2a_kit::runtime::CallerQuota { requests_per_second: 20, burst: 40, live_tasks: 100 };
/// # let _ = quota;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallerQuota {
    /// Requests a second, on average (at least 1). Over it: 429 with `Retry-After`.
    pub requests_per_second: u32,
    /// Requests at once before the average applies (at least 1).
    pub burst: u32,
    /// Tasks whose skill is running or waiting for a reply, at once (at least 1). Over it, a
    /// new task is refused with the "unavailable" error (503 with `Retry-After`) before
    /// anything is stored.
    pub live_tasks: usize,
}

/// The quotas' state, shared by a service's requests.
pub(crate) struct Quotas {
    quota: CallerQuota,
    rate: governor::DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
    live: Arc<Mutex<HashMap<String, usize>>>,
}

impl Quotas {
    pub(crate) fn new(quota: CallerQuota) -> Self {
        let nonzero = |n: u32| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        Quotas {
            quota,
            rate: governor::RateLimiter::keyed(
                governor::Quota::per_second(nonzero(quota.requests_per_second))
                    .allow_burst(nonzero(quota.burst)),
            ),
            checks: AtomicU64::new(0),
            live: Arc::default(),
        }
    }

    /// `None` if `subject` may send a request now, else how long until it may.
    pub(crate) fn wait(&self, subject: &str) -> Option<Duration> {
        // The limiter keeps a bucket per caller it saw: forget full ones now and then.
        if self.checks.fetch_add(1, Ordering::Relaxed) % 65_536 == 65_535 {
            self.rate.retain_recent();
        }
        let key = subject.to_string();
        self.rate
            .check_key(&key)
            .err()
            .map(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// A live task of `subject`, counted until the returned guard drops; `Err` with the
    /// quota when it has that many already.
    pub(crate) fn enter(&self, subject: &str) -> Result<LiveTask, usize> {
        let mut live = self.lock();
        let n = live.entry(subject.to_string()).or_default();
        if *n >= self.quota.live_tasks {
            return Err(self.quota.live_tasks);
        }
        *n += 1;
        Ok(LiveTask {
            live: self.live.clone(),
            subject: subject.to_string(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One live task of a caller; its count goes down when this drops (the run ended).
pub(crate) struct LiveTask {
    live: Arc<Mutex<HashMap<String, usize>>>,
    subject: String,
}

impl Drop for LiveTask {
    fn drop(&mut self) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = live.get_mut(&self.subject) {
            *n -= 1;
            if *n == 0 {
                live.remove(&self.subject);
            }
        }
    }
}
