//! What is pushed, how often it is retried, and the dispatcher's settings.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use crate::protocol::{StreamResponse, TaskState};

use super::ssrf::normal_host;
use super::*;

/// Which events are pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PushTriggers {
    /// Terminal states (COMPLETED, FAILED, CANCELED, REJECTED) and interrupted ones
    /// (INPUT_REQUIRED, AUTH_REQUIRED): the moments a client has to act or can stop waiting.
    #[default]
    TerminalAndInterrupted,
    /// Every event of the task's log after the config was stored: status updates and artifact
    /// chunks.
    Every,
}

impl PushTriggers {
    /// Whether `event` is pushed.
    pub fn matches(self, event: &StreamResponse) -> bool {
        match self {
            PushTriggers::Every => true,
            PushTriggers::TerminalAndInterrupted => is_settled(event.state()),
        }
    }
}

pub(super) fn is_settled(state: Option<TaskState>) -> bool {
    state.is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

/// What the body of a delivery is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PushBody {
    /// A terminal or interrupted state is sent as the task itself (`{"task": ...}`: status,
    /// artifacts, history, as GetTask shows it), so the receiver has the answer without
    /// asking; other pushed events (with [`PushTriggers::Every`]) as themselves.
    ///
    /// The snapshot is the task as of the event delivered: when the task has moved on by the
    /// time the body is built (an INPUT_REQUIRED answered meanwhile, while earlier deliveries
    /// were slow), the event's status update is sent instead, never a task whose status is
    /// another. A snapshot larger than [`PushConfig::max_task_body`] is trimmed.
    #[default]
    Task,
    /// Each pushed event as its own `StreamResponse`, a terminal or interrupted state as its
    /// status update.
    Events,
}

/// The default [`PushConfig::max_task_body`]: 1 MiB.
pub const DEFAULT_MAX_TASK_BODY: usize = 1024 * 1024;

/// How failed deliveries are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per event and config, the first included (1: no retries). Default 5.
    pub max_attempts: u32,
    /// The delay before the first retry. Default 500 ms.
    pub initial_backoff: Duration,
    /// The longest delay between attempts. Default 30 s.
    pub max_backoff: Duration,
    /// Randomise each delay within its upper half, so receivers that failed together are not
    /// retried together. Default on.
    pub jitter: bool,
    /// The longest `Retry-After` honoured; a receiver asking for more is given up on. Default
    /// 120 s.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            jitter: true,
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A single attempt.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The delay after failed attempt number `attempt` (from 1): `initial_backoff` doubled per
    /// attempt, capped at `max_backoff`, then (with jitter) drawn from its upper half.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_kit::push::RetryPolicy;
    /// let p = RetryPolicy { jitter: false, ..RetryPolicy::default() };
    /// assert_eq!(p.backoff(1), Duration::from_millis(500));
    /// assert_eq!(p.backoff(3), Duration::from_secs(2));
    /// assert_eq!(p.backoff(30), Duration::from_secs(30));
    /// ```
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(31));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        if !self.jitter || base.is_zero() {
            return base;
        }
        let half = base / 2;
        let spread = (base - half).as_nanos() as u64;
        half + Duration::from_nanos(if spread == 0 {
            0
        } else {
            random_u64() % (spread + 1)
        })
    }
}

/// A random number from the standard library's per-process random hash keys (jitter needs no
/// cryptographic quality).
pub(super) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}

/// How the push dispatcher behaves.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// Which events are pushed (default: terminal and interrupted states).
    pub triggers: PushTriggers,
    /// Retries (default: 5 attempts, 0.5 s doubling to 30 s, with jitter).
    pub retry: RetryPolicy,
    /// The time limit of one attempt, connection included (default 10 s).
    pub timeout: Duration,
    /// The time limit for connecting (default 5 s).
    pub connect_timeout: Duration,
    /// Which destinations may be dialled (default: [`SsrfPolicy::Strict`]).
    pub ssrf: SsrfPolicy,
    /// What a delivery's body is (default [`PushBody::Task`]: a terminal or interrupted state
    /// is sent as the whole task, with its artifacts; [`per_event_bodies`](Self::per_event_bodies)
    /// sends each event as itself).
    pub body: PushBody,
    /// The largest task snapshot sent whole, in bytes of JSON (default
    /// [`DEFAULT_MAX_TASK_BODY`], 1 MiB, half of a2a-kit-axum's `WebhookReceiver` default
    /// body limit). A larger one is [trimmed](TrimmedSnapshot): history first, then the
    /// largest artifacts, each dropped whole and named in the marker, so the receiver knows to
    /// call GetTask; if even the bare task is larger, its status update is sent instead.
    pub max_task_body: usize,
    /// Also send a config's `token` as `Authorization: Bearer <token>` (besides
    /// `X-A2A-Notification-Token`), for receivers that read only `Authorization`. Default off.
    /// A config with an `authentication` keeps its `Authorization` header from that
    /// (`<scheme> <credentials>`): the token then goes only in `X-A2A-Notification-Token`.
    pub token_as_bearer: bool,
    /// Suspend a config after this many consecutive events could not be delivered (`None`:
    /// never). Default 5.
    pub suspend_after: Option<u32>,
    /// How long after a terminal or interrupted state configs stored late still get it (see
    /// the module docs). Default 1 s; zero turns it off.
    pub late_config_window: Duration,
    /// How many per-config delivery statuses are kept (the oldest are forgotten first).
    /// Default 10 000.
    pub max_statuses: usize,
    /// The `User-Agent` of deliveries.
    pub user_agent: String,
    /// The most webhook requests in flight at once, across all tasks (default 64; 0 counts
    /// as 1). Deliveries beyond it wait their turn, in order, and are not dropped; a wait is
    /// not counted in [`timeout`](Self::timeout), and a retry's backoff waits without a turn.
    /// It keeps webhooks, however many configs ask, from taking the descriptors and
    /// connections the agent needs to serve.
    pub max_concurrent_deliveries: usize,
    /// Idle connections kept per webhook host for the next delivery (default 2). Outside
    /// [`max_concurrent_deliveries`](Self::max_concurrent_deliveries); 0 keeps none, so push
    /// never holds more connections than that bound.
    pub idle_connections_per_host: usize,
    /// How long an idle connection is kept (default 15 s).
    pub idle_connection_timeout: Duration,
    /// Host names answered with these addresses instead of DNS, as `/etc/hosts` would
    /// (lowercase, no trailing dot): for names DNS does not know, and tests. The SSRF policy
    /// applies to them as to any address. Default none; see [`pin_host`](Self::pin_host).
    pub pinned_hosts: HashMap<String, Vec<IpAddr>>,
    /// Sign every delivery (feature `jose`; see [`sign`](Self::sign)). Default none.
    #[cfg(feature = "jose")]
    pub signer: Option<crate::signing::Signer>,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            triggers: PushTriggers::default(),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            ssrf: SsrfPolicy::Strict,
            body: PushBody::default(),
            max_task_body: DEFAULT_MAX_TASK_BODY,
            token_as_bearer: false,
            suspend_after: Some(5),
            late_config_window: Duration::from_secs(1),
            max_statuses: 10_000,
            user_agent: concat!("a2a-kit/", env!("CARGO_PKG_VERSION")).to_string(),
            max_concurrent_deliveries: 64,
            idle_connections_per_host: 2,
            idle_connection_timeout: Duration::from_secs(15),
            pinned_hosts: HashMap::new(),
            #[cfg(feature = "jose")]
            signer: None,
        }
    }
}

impl PushConfig {
    /// Push every event, not only terminal and interrupted states.
    pub fn every_event(mut self) -> Self {
        self.triggers = PushTriggers::Every;
        self
    }
    /// Send each pushed event as its own `StreamResponse`: a terminal or interrupted state as
    /// its status update (the artifacts only through GetTask, or, with
    /// [`every_event`](Self::every_event), as the artifact updates before it), instead of the
    /// task with its artifacts ([`PushBody::Events`]).
    pub fn per_event_bodies(mut self) -> Self {
        self.body = PushBody::Events;
        self
    }
    /// The largest task snapshot sent whole (see [`max_task_body`](Self::max_task_body)).
    pub fn max_task_body(mut self, bytes: usize) -> Self {
        self.max_task_body = bytes;
        self
    }
    /// Also send a config's `token` as `Authorization: Bearer <token>`, unless the config has
    /// an `authentication` of its own (see [`token_as_bearer`](Self::token_as_bearer)).
    pub fn token_as_bearer(mut self) -> Self {
        self.token_as_bearer = true;
        self
    }
    /// The SSRF policy.
    pub fn ssrf(mut self, policy: SsrfPolicy) -> Self {
        self.ssrf = policy;
        self
    }
    /// Allow loopback and private-network webhooks: for development and tests only.
    pub fn allow_private_networks(self) -> Self {
        self.ssrf(SsrfPolicy::AllowPrivate)
    }
    /// The retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
    /// The per-attempt timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// The most webhook requests in flight at once (see
    /// [`max_concurrent_deliveries`](Self::max_concurrent_deliveries)).
    pub fn max_concurrent_deliveries(mut self, n: usize) -> Self {
        self.max_concurrent_deliveries = n;
        self
    }
    /// Answer `host` with `addrs` instead of asking DNS, when deliveries connect and when a
    /// config naming it is created (see [`pinned_hosts`](Self::pinned_hosts)).
    ///
    /// ```
    /// use a2a_kit::push::PushConfig;
    /// let config = PushConfig::default().pin_host("Hooks.Internal.", ["10.0.0.5".parse().unwrap()]);
    /// assert_eq!(config.pinned_hosts["hooks.internal"], ["10.0.0.5".parse::<std::net::IpAddr>().unwrap()]);
    /// ```
    pub fn pin_host(mut self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) -> Self {
        self.pinned_hosts
            .insert(normal_host(host), addrs.into_iter().collect());
        self
    }
    /// Sign every delivery with `signer` (feature `jose`): each attempt carries
    /// [`SIGNATURE_HEADER`](crate::signing::SIGNATURE_HEADER), a detached JWS over the exact
    /// body bytes whose protected header names `alg`, `kid`, `iat` and a fresh `jti`, so a
    /// receiver can check who sent it, that it is unchanged, recent, and not a replay
    /// (a2a-kit-axum's `WebhookReceiver::verify_signatures`). The credentials of each push
    /// config are sent as before. The key is published in the agent's JWKS.
    #[cfg(feature = "jose")]
    pub fn sign(mut self, signer: crate::signing::Signer) -> Self {
        self.signer = Some(signer);
        self
    }
}
