//! The kit's metrics, recorded through the [`metrics`](https://docs.rs/metrics) facade once
//! [`enable`]d: whatever recorder the program installed (Prometheus text, OTLP, both) gets them.
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `a2a.server.request.duration` (s) | histogram | `a2a.method.name`, `a2a.binding`, `outcome` (`OK` or the error's reason, e.g. `TASK_NOT_FOUND`) |
//! | `a2a.server.task.duration` (s) | histogram | `a2a.skill.id`, `a2a.task.state` (the state a run ended in) |
//! | `a2a.server.active_streams` | gauge | `a2a.method.name` |
//! | `a2a.server.refusals` | counter | `reason` (`unauthenticated`, `forbidden`, `quota`, `rate_limit`, `busy`, `share`, `body_too_large`, `body_timeout`, `body_unreadable`, `connections`) |
//! | `a2a.store.operation.duration` (s) | histogram | `db.operation.name` |
//! | `a2a.push.deliveries` | counter | `outcome` (`delivered`, `failed`, `refused`) |
//! | `a2a.push.retries` | counter | |
//! | `a2a.push.outbox.depth` | gauge | (events waiting to be delivered in this process) |
//!
//! Prometheus renders the dots as underscores (`a2a_server_request_duration_bucket`).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

/// `a2a.server.request.duration`
pub const REQUEST_DURATION: &str = "a2a.server.request.duration";
/// `a2a.server.task.duration`
pub const TASK_DURATION: &str = "a2a.server.task.duration";
/// `a2a.server.active_streams`
pub const ACTIVE_STREAMS: &str = "a2a.server.active_streams";
/// `a2a.server.refusals`
pub const REFUSALS: &str = "a2a.server.refusals";
/// `a2a.store.operation.duration`
pub const STORE_DURATION: &str = "a2a.store.operation.duration";
/// `a2a.push.deliveries`
pub const PUSH_DELIVERIES: &str = "a2a.push.deliveries";
/// `a2a.push.retries`
pub const PUSH_RETRIES: &str = "a2a.push.retries";
/// `a2a.push.outbox.depth`
pub const PUSH_OUTBOX_DEPTH: &str = "a2a.push.outbox.depth";

static ON: AtomicBool = AtomicBool::new(false);

/// Record the kit's metrics from now on (and describe them to the recorder). [`install`]
/// calls it; a program that installs its own `metrics` recorder calls it once after. Off,
/// recording costs one relaxed load. Call it before building the agent: a service built
/// while metrics are off does not time its store (`a2a.store.operation.duration`), as that
/// takes a wrapper around the store.
pub fn enable() {
    if ON.swap(true, Ordering::Relaxed) {
        return;
    }
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_histogram!(
        REQUEST_DURATION,
        Unit::Seconds,
        "A2A requests by method, binding and outcome"
    );
    describe_histogram!(
        TASK_DURATION,
        Unit::Seconds,
        "Runs of skills by skill and the state they ended in"
    );
    describe_gauge!(ACTIVE_STREAMS, "Open SSE and gRPC streams");
    describe_counter!(REFUSALS, "Requests refused before they ran, by reason");
    describe_histogram!(STORE_DURATION, Unit::Seconds, "Task store operations");
    describe_counter!(PUSH_DELIVERIES, "Push notifications by outcome");
    describe_counter!(PUSH_RETRIES, "Push delivery attempts after the first");
    describe_gauge!(
        PUSH_OUTBOX_DEPTH,
        "Push notifications waiting to be delivered"
    );
}

/// Whether [`enable`] was called.
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// When a timed operation began, if metrics are on (no clock read otherwise).
#[inline]
pub(crate) fn start() -> Option<Instant> {
    enabled().then(Instant::now)
}

/// One answered request.
pub(crate) fn request(
    started: Option<Instant>,
    method: &'static str,
    binding: &'static str,
    error: Option<&crate::error::A2aError>,
) {
    if let Some(t) = started {
        let outcome = error.map_or("OK", crate::error::A2aError::reason);
        metrics::histogram!(REQUEST_DURATION, "a2a.method.name" => method, "a2a.binding" => binding, "outcome" => outcome)
            .record(t.elapsed().as_secs_f64());
    }
}

/// One run of a skill that ended in `state`.
pub(crate) fn task_ended(skill: &str, state: &'static str, started: Instant) {
    if enabled() {
        metrics::histogram!(TASK_DURATION, "a2a.skill.id" => skill.to_string(), "a2a.task.state" => state)
            .record(started.elapsed().as_secs_f64());
    }
}

/// A request refused before it ran (a server in front of the kit counts its own refusals
/// here too: `rate_limit`, `connections`).
pub fn refused(reason: &'static str) {
    if enabled() {
        metrics::counter!(REFUSALS, "reason" => reason).increment(1);
    }
}

/// Open streams by method (a process-wide count, set as the gauge's value: an OTLP gauge
/// only takes values).
static STREAMS: [AtomicI64; 2] = [AtomicI64::new(0), AtomicI64::new(0)];

/// A stream of `method` opened (`+1`) or closed (`-1`).
pub(crate) fn stream(method: &'static str, delta: i64) {
    let slot = usize::from(method != "SendStreamingMessage");
    let now = STREAMS[slot].fetch_add(delta, Ordering::Relaxed) + delta;
    if enabled() {
        metrics::gauge!(ACTIVE_STREAMS, "a2a.method.name" => method).set(now as f64);
    }
}

/// One store operation that began at `started`.
pub(crate) fn store_op(started: Option<Instant>, operation: &'static str) {
    if let Some(t) = started {
        metrics::histogram!(STORE_DURATION, "db.operation.name" => operation)
            .record(t.elapsed().as_secs_f64());
    }
}

/// One push notification's fate, after `attempts` attempts.
#[cfg(feature = "push")]
pub(crate) fn push_delivery(outcome: &'static str, attempts: u32) {
    if enabled() {
        metrics::counter!(PUSH_DELIVERIES, "outcome" => outcome).increment(1);
        if attempts > 1 {
            metrics::counter!(PUSH_RETRIES).increment(u64::from(attempts - 1));
        }
    }
}

#[cfg(feature = "push")]
static OUTBOX: AtomicI64 = AtomicI64::new(0);

/// Push notifications entering (`+n`) or leaving (`-n`) this process's outbox.
#[cfg(feature = "push")]
pub(crate) fn outbox(delta: i64) {
    let now = OUTBOX.fetch_add(delta, Ordering::Relaxed) + delta;
    if enabled() {
        metrics::gauge!(PUSH_OUTBOX_DEPTH).set(now.max(0) as f64);
    }
}

/// Install `recorders` as the process's `metrics` recorder (several: each gets every
/// measurement) and [`enable`] the kit's metrics. A process has one recorder: a second
/// install is an error.
#[cfg(any(feature = "otel", feature = "prometheus"))]
pub fn install(
    recorders: Vec<Box<dyn metrics::Recorder + Send + Sync>>,
) -> Result<(), metrics::SetRecorderError<metrics_util::layers::Fanout>> {
    let fanout = recorders
        .into_iter()
        .fold(metrics_util::layers::FanoutBuilder::default(), |b, r| {
            b.add_recorder(BoxedRecorder(r))
        })
        .build();
    metrics::set_global_recorder(fanout)?;
    enable();
    Ok(())
}

/// A boxed recorder as a recorder (the fanout takes them by value).
#[cfg(any(feature = "otel", feature = "prometheus"))]
struct BoxedRecorder(Box<dyn metrics::Recorder + Send + Sync>);

#[cfg(any(feature = "otel", feature = "prometheus"))]
impl metrics::Recorder for BoxedRecorder {
    fn describe_counter(
        &self,
        k: metrics::KeyName,
        u: Option<metrics::Unit>,
        d: metrics::SharedString,
    ) {
        self.0.describe_counter(k, u, d)
    }
    fn describe_gauge(
        &self,
        k: metrics::KeyName,
        u: Option<metrics::Unit>,
        d: metrics::SharedString,
    ) {
        self.0.describe_gauge(k, u, d)
    }
    fn describe_histogram(
        &self,
        k: metrics::KeyName,
        u: Option<metrics::Unit>,
        d: metrics::SharedString,
    ) {
        self.0.describe_histogram(k, u, d)
    }
    fn register_counter(&self, k: &metrics::Key, m: &metrics::Metadata<'_>) -> metrics::Counter {
        self.0.register_counter(k, m)
    }
    fn register_gauge(&self, k: &metrics::Key, m: &metrics::Metadata<'_>) -> metrics::Gauge {
        self.0.register_gauge(k, m)
    }
    fn register_histogram(
        &self,
        k: &metrics::Key,
        m: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        self.0.register_histogram(k, m)
    }
}
