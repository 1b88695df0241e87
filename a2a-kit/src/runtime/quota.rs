//! Per-caller quotas: requests a second (`governor`'s keyed GCRA), checked at the edge before
//! a request's body is read. What a caller may hold at once is its share
//! ([`CallerShare`](super::CallerShare)).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};

/// What one caller may use ([`AgentServiceBuilder::caller_quota`](crate::server::AgentServiceBuilder::caller_quota)).
///
/// ```
/// let quota = a2a_kit::runtime::CallerQuota { requests_per_second: 20, burst: 40 };
/// # let _ = quota;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallerQuota {
    /// Requests a second, on average (at least 1). Over it: 429 with `Retry-After`.
    pub requests_per_second: u32,
    /// Requests at once before the average applies (at least 1).
    pub burst: u32,
}

/// The quotas' state, shared by a service's requests.
pub(crate) struct Quotas {
    rate: governor::DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
}

impl Quotas {
    pub(crate) fn new(quota: CallerQuota) -> Self {
        let nonzero = |n: u32| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        Quotas {
            rate: governor::RateLimiter::keyed(
                governor::Quota::per_second(nonzero(quota.requests_per_second))
                    .allow_burst(nonzero(quota.burst)),
            ),
            checks: AtomicU64::new(0),
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
}
