//! Push-notification delivery: an outbox fed by each task's event log, HTTP delivery with
//! retries, and an SSRF guard.
//!
//! Switch it on with [`AgentServiceBuilder::push_delivery`] (or
//! [`push_dispatcher`](AgentServiceBuilder::push_dispatcher) to keep a handle for
//! [delivery status](PushDispatcher::status)):
//!
//! ```no_run
//! use a2a_kit::push::{PushConfig, PushDispatcher};
//! # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), a2a_kit::server::BuildError> {
//! let push = PushDispatcher::new(PushConfig::default());
//! let service = a2a_kit::server::AgentService::builder(agent).push_dispatcher(&push).build()?;
//! // later: push.status("task-id", "config-id")
//! # Ok(()) }
//! ```
//!
//! **How it works.** The capability is advertised and the four push-config operations are
//! served by [`AgentService`](crate::server::AgentService); configs live in the
//! [`TaskManager`]. The dispatcher observes every stored event (an
//! [`EventObserver`]): the observer only notes "task T has events up to N" and, when T has no
//! worker, spawns one. The worker reads the events it has not handled from the store
//! ([`TaskManager::events_after`]), so nothing is buffered in memory however far behind a
//! webhook is, and the task's execution and its streams never wait for a webhook. There is one
//! worker per task with pending events: one task's events are delivered in log order, and a
//! slow or dead webhook delays only its own task.
//!
//! **What is sent.** For each event matching the [triggers](PushTriggers) (by default terminal
//! and interrupted states), each of the task's configs gets a `POST` with a `StreamResponse`
//! JSON body (`Content-Type: application/a2a+json`):
//!
//! - a terminal or interrupted state is sent as the task itself, `{"task": ...}`, with its
//!   artifacts and history as GetTask shows them ([`PushBody::Task`], the default), so the
//!   receiver has the answer without asking. The snapshot is the task as of that event: when
//!   the task has moved on by the time the body is built (an INPUT_REQUIRED answered while
//!   earlier deliveries were slow), the status update is sent instead, never a task whose
//!   status is another. A snapshot larger than [`PushConfig::max_task_body`] (1 MiB) loses
//!   its history, then its largest artifacts, whole, and says so in its metadata
//!   ([`TrimmedSnapshot`]): GetTask has the rest. A task too large even then is sent as its
//!   status update;
//! - any other pushed event (with [`PushTriggers::Every`]) is sent as itself;
//! - with [`PushConfig::per_event_bodies`] ([`PushBody::Events`]), every pushed event is sent
//!   as itself, a settled state as its status update.
//!
//! **Credentials.** `Authorization: <scheme> <credentials>` from the config's
//! `authentication`, and the config's `token`, if any, in [`NOTIFICATION_TOKEN_HEADER`] (v0.3
//! receivers read it there; v1 defines no header for it). With
//! [`PushConfig::token_as_bearer`], a config with a token and no `authentication` (the common
//! `{url, token}`) also sends `Authorization: Bearer <token>`; one with an `authentication`
//! keeps that in `Authorization`.
//!
//! **Late configs.** A config receives the events handled after it was stored. A config
//! stored within [`PushConfig::late_config_window`] after its task reached a terminal or
//! interrupted state (for example one sent inline with a SendMessage whose task settled at
//! once, before the config was stored) still gets that state, with the body the others got,
//! unless the task has moved on meanwhile.
//!
//! **Retries.** Each attempt has a [timeout](PushConfig::timeout). Connection errors,
//! timeouts, `5xx` and `429` are retried with exponential backoff and jitter, honouring
//! `Retry-After`, up to [`RetryPolicy::max_attempts`]; any other answer outside `2xx` (other
//! `4xx`, and `3xx`, since redirects are not followed) is final. A retry sends the same body
//! bytes (signed anew, with [`PushConfig::sign`]: the signature covers the body sent). A retry
//! resumed from a durable outbox (after a restart, or by another replica) builds the body
//! again from the store: the same task for a terminal state, which never changes; for an
//! interrupted state the task has left since, its status update. Every outcome is logged
//! through `tracing` (target `a2a_kit::push`) and kept as a [`DeliveryStatus`] per config.
//! After [`PushConfig::suspend_after`] consecutive failed events, a config is suspended.
//!
//! **Durable outbox, several processes.** With a store that keeps a [`PushOutbox`]
//! (PostgreSQL; a SQLite file, where deliveries pending or being retried when the process
//! stopped are made after the restart, the first look coming at once), each
//! config's progress (its lane: the events it has had, its counters, whether it is
//! suspended) lives in the store, and a process delivers a task's events only while it holds
//! the task's claim there. The claim lasts the store's lease and is renewed with it; a sweeper
//! in every process looks, twice per lease, for work whose claim ran out (a replica died
//! mid-retry) or that nobody claimed (a survivor ended a task), and delivers it from the
//! lanes on. Each event reaches each config from one process; only an attempt in flight at a
//! crash is sent again. [`PushDispatcher::status`] shows the deliveries this process made.
//!
//! **Bounds.** At most [`PushConfig::max_concurrent_deliveries`] webhook requests are in
//! flight at once, whatever the tasks and configs: the others wait their turn (a backoff
//! waits without one), so webhooks cannot take the file descriptors and connections the
//! agent serves with. Idle connections are kept a few per host, briefly. A task has at most
//! [`AgentServiceBuilder::push_configs_per_task`] configs, which bounds what one event sends.
//!
//! **SSRF.** See [`SsrfPolicy`]: public addresses only by default, checked when a config is
//! created (InvalidParams with the reason; a host name is resolved then:
//! [`GuardedResolver::check_url_host`]) and again against the address actually dialled.
//!
//! **TLS.** `https` webhooks use this crate's `rustls` feature (on by default: rustls with the
//! web's root certificates). Built without it, deliveries to `https` URLs fail as
//! [`DeliveryOutcome::Invalid`].

mod body;
mod config;
mod deliver;
mod dispatcher;
mod observed;
mod report;
mod ssrf;
mod state;
mod worker;

pub use body::{TRIMMED_KEY, TrimmedSnapshot};
pub use config::{DEFAULT_MAX_TASK_BODY, PushBody, PushConfig, PushTriggers, RetryPolicy};
pub use dispatcher::PushDispatcher;
pub use report::{DeliveryOutcome, DeliveryReport, DeliveryStatus};
pub use ssrf::{
    AddressClass, AllowRule, BlockedDestination, GuardedResolver, IpNet, SsrfPolicy, classify,
};

#[cfg(doc)]
use crate::runtime::EventObserver;
#[cfg(doc)]
use crate::server::AgentServiceBuilder;
#[cfg(doc)]
use crate::store::{PushOutbox, TaskManager};

/// The header carrying the config's `token` (v0.3's informative header, sent for older
/// receivers).
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// The media type of push bodies.
pub const PUSH_CONTENT_TYPE: &str = "application/a2a+json";
