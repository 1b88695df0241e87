//! Execution: one spawned tokio task per running A2A task, owning the skill future and a
//! cancellation token, writing every event through the [`TaskManager`].
//!
//! Readers (blocking SendMessage, streams, SubscribeToTask) never receive events from the
//! executor directly: they subscribe to a per-task doorbell, then read the store's event log
//! after the last sequence number they saw. The store is the single source of truth, so a
//! late, slow or reconnecting reader sees every event exactly once, in log order, and a slow
//! reader can never hold events in memory for the others. A reader keeps its task's log alive
//! (its doorbell subscription); when a finished task has no reader left, the store is told it
//! may drop the log ([`TaskManager::release_log`]), so a client that reconnects long after the
//! end gets the final `Task` snapshot instead of the events.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::json;
use tokio::sync::{oneshot, watch};
use tokio::task::AbortHandle;

use crate::context::TaskContext;
use crate::error::{A2aError, SkillError};
use crate::protocol::{
    Artifact, Message, Metadata, Part, Role, StreamResponse, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use crate::reply::{Content, Outcome, OutcomeKind};
use crate::store::{EventRecord, Seq, StoreError, TaskManager, TaskView};

/// Message metadata key marking working-state status messages.
pub const STATUS_MESSAGE_KIND_KEY: &str = "kind";
/// Its value.
pub const STATUS_MESSAGE_KIND: &str = "status-message";

/// How [`TaskContext::status`] texts travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusStyle {
    /// A data part `{"type":"status-indicator","text":...}`, message metadata
    /// `kind: "status-message"`. Clients that accumulate text parts never mix progress into
    /// the answer.
    #[default]
    Indicator,
    /// A text part, with the same metadata.
    Text,
    /// No message: a bare WORKING status update.
    None,
}

/// What a [`StatusNarrator`] is told each time it is asked.
#[derive(Debug, Clone)]
pub struct NarrationContext {
    /// The task.
    pub task_id: String,
    /// The skill running it.
    pub skill_id: String,
    /// Time since the skill started.
    pub elapsed: Duration,
    /// How many times the narrator has been asked for this task (from 1).
    pub tick: u32,
    /// The task's most recent status texts, read from the store (oldest first), so a narrator
    /// can avoid repeating itself, even after a restart.
    pub recent_statuses: Vec<String>,
}

/// Periodic progress narration: asked every [`ExecutionConfig::narration_interval`] while a
/// skill runs, until it produces its first artifact or the task ends. `None` says nothing.
///
/// ```
/// use a2a_kit::runtime::{NarrationContext, StatusNarrator};
/// struct Elapsed;
/// #[async_trait::async_trait]
/// impl StatusNarrator for Elapsed {
///     async fn narrate(&self, n: &NarrationContext) -> Option<String> {
///         Some(format!("Still working ({}s)", n.elapsed.as_secs()))
///     }
/// }
/// ```
#[async_trait]
pub trait StatusNarrator: Send + Sync + 'static {
    /// The next status text, or `None`.
    async fn narrate(&self, n: &NarrationContext) -> Option<String>;
}

/// Sees every event right after it is stored, in log order per task. Implementations must not
/// block: they hand the event to their own task (the push outbox does this).
///
/// ```
/// use a2a_kit::runtime::EventObserver;
/// use a2a_kit::protocol::StreamResponse;
/// struct Log;
/// impl EventObserver for Log {
///     fn on_event(&self, task_id: &str, seq: u64, event: &StreamResponse) {
///         println!("{task_id}#{seq}: {:?}", event.state());
///     }
/// }
/// ```
pub trait EventObserver: Send + Sync + 'static {
    /// Called after event `seq` of `task_id` was stored.
    fn on_event(&self, task_id: &str, seq: Seq, event: &StreamResponse);
}

/// Knobs of the execution pipeline.
#[derive(Clone)]
pub struct ExecutionConfig {
    /// How working-state status texts are sent.
    pub status_style: StatusStyle,
    /// How long a canceled skill may keep running before it is aborted.
    pub cancel_grace: Duration,
    /// Fail a skill that runs longer than this (`None`: no limit).
    pub skill_timeout: Option<Duration>,
    /// Whether streams also close on AUTH_REQUIRED (they always close on INPUT_REQUIRED and on
    /// terminal states). The spec contradicts itself here; closing is the default.
    pub close_streams_on_auth_required: bool,
    /// The narrator, if any.
    pub narrator: Option<Arc<dyn StatusNarrator>>,
    /// How often the narrator is asked.
    pub narration_interval: Duration,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        ExecutionConfig {
            status_style: StatusStyle::Indicator,
            cancel_grace: Duration::from_secs(5),
            skill_timeout: None,
            close_streams_on_auth_required: true,
            narrator: None,
            narration_interval: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Debug for ExecutionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionConfig")
            .field("status_style", &self.status_style)
            .field("cancel_grace", &self.cancel_grace)
            .field("skill_timeout", &self.skill_timeout)
            .field("narrator", &self.narrator.is_some())
            .field("narration_interval", &self.narration_interval)
            .finish()
    }
}

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
}

/// Per-task doorbells: a watch channel per task with readers. When the last reader of a
/// finished task goes (or the task finishes with none), its log is released to the store.
pub(crate) struct EventBus {
    bells: Mutex<crate::FastMap<String, watch::Sender<Bell>>>,
    store: Arc<dyn TaskManager>,
    /// Off when an observer (the push outbox) may read logs of finished tasks later.
    release_logs: std::sync::atomic::AtomicBool,
}

pub(crate) struct BusSubscription {
    bus: Arc<EventBus>,
    task_id: String,
    rx: Option<watch::Receiver<Bell>>,
}

impl BusSubscription {
    async fn changed(&mut self) {
        if let Some(rx) = &mut self.rx {
            // The sender lives in the map while any receiver exists, so this only errs if the
            // bus itself is gone; then there is nothing left to wait for.
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    fn bell(&self) -> Bell {
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
            release_logs: std::sync::atomic::AtomicBool::new(true),
        }
    }

    fn releases_logs(&self) -> bool {
        self.release_logs.load(std::sync::atomic::Ordering::Relaxed)
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

/// A new task held back from the store while its skill's first poll runs, for a blocking
/// SendMessage. Nobody else knows the task's id yet, so nothing can read the task meanwhile;
/// a skill that ends in that poll (the common quick skill) then has its task written once,
/// finished, with its whole log ([`TaskManager::create_task_with_events`]), instead of once
/// per event. Events are checked as they are held, as the store would check them, so a skill
/// sees the same refusals either way. A skill that has to wait has its task written as it
/// stands before it is polled again.
pub(crate) struct Staging {
    stage: Mutex<Stage>,
    /// Rung when the task leaves [`Stage::Writing`].
    stored: tokio::sync::Notify,
    /// The generation of its run. A staged task enters the running set only when it must
    /// (it asks for input, or has to wait): nobody can cancel a task whose id is not out.
    run: std::sync::atomic::AtomicU64,
}

enum Stage {
    /// Not stored: the task as created, the events since and the state they left it in.
    Held {
        task: Box<crate::protocol::Task>,
        skill_id: String,
        events: Vec<StreamResponse>,
        state: TaskState,
    },
    /// Being written: an event from elsewhere (a clone of the context) waits for it.
    Writing,
    /// Written, or the write failed: events go to the store.
    Stored,
}

impl Staging {
    pub(crate) fn new(task: crate::protocol::Task, skill_id: &str) -> Self {
        Staging {
            stage: Mutex::new(Stage::Held {
                state: task.status.state,
                task: Box::new(task),
                skill_id: skill_id.to_string(),
                events: Vec::with_capacity(3),
            }),
            stored: tokio::sync::Notify::new(),
            run: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
    }

    fn is_held(&self) -> bool {
        matches!(*self.lock(), Stage::Held { .. })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The history the task would have now, if it is still held.
    pub(crate) fn held_history(&self) -> Option<Vec<Message>> {
        let Stage::Held { task, events, .. } = &*self.lock() else {
            return None;
        };
        let messages = events.iter().filter_map(|e| match e {
            StreamResponse::StatusUpdate(u) => u.status.message.clone(),
            _ => None,
        });
        Some(task.history.iter().cloned().chain(messages).collect())
    }
}

impl Stage {
    /// Hold one more event, refused exactly as `apply_event` would refuse it (the context
    /// builds its events for its own task, so only the state can make one wrong).
    fn hold(&mut self, event: StreamResponse) -> Result<Seq, StoreError> {
        let Stage::Held {
            task,
            events,
            state,
            ..
        } = self
        else {
            unreachable!("only held tasks hold events")
        };
        match &event {
            StreamResponse::StatusUpdate(u) => {
                crate::task::TaskStateMachine::check(*state, u.status.state)?;
                *state = u.status.state;
            }
            StreamResponse::ArtifactUpdate(_) => {
                crate::store::check_takes_artifacts(&task.id, *state)?
            }
            StreamResponse::Task(_) | StreamResponse::Message(_) => {
                return Err(crate::store::not_appendable());
            }
        }
        events.push(event);
        // The creation snapshot is event 1.
        Ok(events.len() as Seq + 1)
    }
}

/// An append in flight: ready at once when it was held for a staged task, else the store's
/// write, boxed so that the futures awaiting it stay small (each would hold it inline, and a
/// future is copied whole whenever it moves).
pub(crate) type Emitting<'a> = futures::future::Either<
    std::future::Ready<Result<Seq, StoreError>>,
    BoxFuture<'a, Result<Seq, StoreError>>,
>;

/// Lets emitters waiting on [`Stage::Writing`] go on every way out of a write, including
/// its future being dropped half-way.
struct WriteDone<'a>(&'a Staging);

impl Drop for WriteDone<'_> {
    fn drop(&mut self) {
        *self.0.lock() = Stage::Stored;
        self.0.stored.notify_waiters();
    }
}

/// The running-set entry of `ctx`'s run `generation`.
fn running_entry(
    ctx: &TaskContext,
    generation: u64,
    waiter: Option<oneshot::Sender<Message>>,
) -> Running {
    Running {
        generation,
        cancel: ctx.inner.cancel.clone(),
        waiter,
        abort: None,
    }
}

struct Running {
    /// Distinguishes successive runs of one task (stateless multi-turn re-invokes the skill).
    generation: u64,
    cancel: tokio_util::sync::CancellationToken,
    waiter: Option<oneshot::Sender<Message>>,
    abort: Option<AbortHandle>,
}

/// The shared execution state behind an [`AgentService`](crate::server::AgentService).
pub(crate) struct Runtime {
    pub(crate) store: Arc<dyn TaskManager>,
    pub(crate) bus: Arc<EventBus>,
    pub(crate) config: ExecutionConfig,
    running: Mutex<crate::FastMap<String, Running>>,
    generations: std::sync::atomic::AtomicU64,
    pub(crate) observers: Vec<Arc<dyn EventObserver>>,
}

/// A status update of `task_id`, stamped now.
fn status_update(
    task_id: &str,
    context_id: &str,
    state: TaskState,
    message: Option<Message>,
) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task_id.to_string(),
        context_id: context_id.to_string(),
        status: TaskStatus {
            state,
            message,
            timestamp: Some(crate::protocol::Timestamp::now()),
        },
        metadata: None,
    })
}

/// Whether `event` ends a stream: terminal states, INPUT_REQUIRED, and AUTH_REQUIRED unless
/// configured otherwise.
pub(crate) fn closes_stream(state: Option<TaskState>, close_on_auth: bool) -> bool {
    match state {
        Some(s) if s.is_terminal() => true,
        Some(TaskState::InputRequired) => true,
        Some(TaskState::AuthRequired) => close_on_auth,
        _ => false,
    }
}

impl Runtime {
    pub(crate) fn new(store: Arc<dyn TaskManager>, config: ExecutionConfig) -> Self {
        Runtime {
            bus: Arc::new(EventBus::new(store.clone())),
            store,
            config,
            running: Mutex::default(),
            generations: std::sync::atomic::AtomicU64::new(0),
            observers: Vec::new(),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, crate::FastMap<String, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Set the observers (before the runtime is shared). Observers may read logs late, so
    /// with any, logs of finished tasks are not released.
    pub(crate) fn set_observers(&mut self, observers: Vec<Arc<dyn EventObserver>>) {
        self.bus
            .release_logs
            .store(observers.is_empty(), std::sync::atomic::Ordering::Relaxed);
        self.observers = observers;
    }

    /// Append an event and ring the task's doorbell.
    pub(crate) async fn emit(
        &self,
        task_id: &str,
        event: StreamResponse,
    ) -> Result<Seq, StoreError> {
        let state = event.state();
        let seq = if self.observers.is_empty() {
            self.store.append_event(task_id, event).await?
        } else {
            let seq = self.store.append_event(task_id, event.clone()).await?;
            for o in &self.observers {
                o.on_event(task_id, seq, &event);
            }
            seq
        };
        let listened = self.bus.notify(task_id, seq, state);
        if !listened && state.is_some_and(|s| s.is_terminal()) && self.bus.releases_logs() {
            self.store.release_log(task_id);
        }
        // A skill that emits in a loop (a stream of chunks) would otherwise never yield on a
        // store that answers at once, and its readers would see nothing until it ends.
        tokio::task::consume_budget().await;
        Ok(seq)
    }

    /// Append an event for `ctx`'s task: held while the task is staged ([`Staging`]),
    /// otherwise [`emit`](Self::emit)ted.
    pub(crate) fn emit_for<'a>(
        &'a self,
        ctx: &'a TaskContext,
        event: StreamResponse,
    ) -> Emitting<'a> {
        use futures::future::Either;
        if let Some(staging) = &ctx.inner.staging {
            let mut stage = staging.lock();
            if let Stage::Held { .. } = &*stage {
                return Either::Left(std::future::ready(stage.hold(event)));
            }
            drop(stage);
            let task_id = &ctx.inner.task_id;
            return Either::Right(Box::pin(self.emit_once_stored(staging, task_id, event)));
        }
        Either::Right(Box::pin(self.emit(&ctx.inner.task_id, event)))
    }

    /// [`emit`](Self::emit) for a task that was staged: after its write, if one is going on.
    async fn emit_once_stored(
        &self,
        staging: &Staging,
        task_id: &str,
        event: StreamResponse,
    ) -> Result<Seq, StoreError> {
        loop {
            // Taken before the check, so the wake-up after the write cannot be missed.
            let stored = staging.stored.notified();
            // Not held any more: being written, or written (it never goes back).
            let written = matches!(*staging.lock(), Stage::Stored);
            if written {
                break;
            }
            stored.await;
        }
        self.emit(task_id, event).await
    }

    /// Write `ctx`'s staged task with the events held so far (nothing if it is not staged, or
    /// is written already). Once this returns, every event goes to the store.
    pub(crate) async fn store_staged(&self, ctx: &TaskContext) -> Result<(), StoreError> {
        let Some(staging) = &ctx.inner.staging else {
            return Ok(());
        };
        let held = {
            let mut stage = staging.lock();
            match std::mem::replace(&mut *stage, Stage::Writing) {
                Stage::Held {
                    task,
                    skill_id,
                    events,
                    state,
                } => (task, skill_id, events, state),
                other => {
                    *stage = other;
                    return Ok(());
                }
            }
        };
        let _done = WriteDone(staging);
        let (task, skill_id, events, state) = held;
        let task_id = &ctx.inner.task_id;
        let observed = (!self.observers.is_empty()).then(|| events.clone());
        let last = self
            .store
            .create_task_with_events(*task, Some(skill_id), events)
            .await?;
        if let Some(events) = observed {
            let first = last + 1 - events.len() as Seq;
            for (seq, event) in (first..).zip(&events) {
                for o in &self.observers {
                    o.on_event(task_id, seq, event);
                }
            }
        }
        // No doorbell to ring: nobody could subscribe to a task whose id was never out.
        if state.is_terminal() && self.bus.releases_logs() {
            self.store.release_log(task_id);
        }
        Ok(())
    }

    /// Append a status update for the context's task.
    pub(crate) fn emit_status<'a>(
        &'a self,
        ctx: &'a TaskContext,
        state: TaskState,
        message: Option<Message>,
    ) -> impl Future<Output = Result<Seq, SkillError>> + Send + 'a {
        self.status_event(ctx, state, message).map(|r| {
            r.map_err(|e| match e {
                StoreError::IllegalTransition(_) | StoreError::TaskNotFound(_) => {
                    SkillError::Canceled
                }
                other => SkillError::failed(other.to_string()),
            })
        })
    }

    /// [`emit_status`](Self::emit_status) with the store's error.
    fn status_event<'a>(
        &'a self,
        ctx: &'a TaskContext,
        state: TaskState,
        message: Option<Message>,
    ) -> Emitting<'a> {
        let event = status_update(&ctx.inner.task_id, &ctx.inner.context_id, state, message);
        self.emit_for(ctx, event)
    }

    pub(crate) async fn emit_status_for(
        &self,
        task_id: &str,
        context_id: &str,
        state: TaskState,
        message: Option<Message>,
    ) -> Result<Seq, StoreError> {
        self.emit(task_id, status_update(task_id, context_id, state, message))
            .await
    }

    /// An agent message for this task.
    pub(crate) fn agent_message(task_id: &str, context_id: &str, parts: Vec<Part>) -> Message {
        Message::agent(parts)
            .with_task_id(task_id)
            .with_context_id(context_id)
    }

    /// The working-state status message for `text`, per the configured style.
    pub(crate) fn status_message(&self, ctx: &TaskContext, text: String) -> Option<Message> {
        let part = match self.config.status_style {
            StatusStyle::None => return None,
            StatusStyle::Text => Part::text(text),
            StatusStyle::Indicator => Part::data(json!({"type": "status-indicator", "text": text})),
        };
        let mut meta = Metadata::new();
        meta.insert(STATUS_MESSAGE_KIND_KEY.into(), STATUS_MESSAGE_KIND.into());
        Some(
            Self::agent_message(&ctx.inner.task_id, &ctx.inner.context_id, vec![part])
                .with_metadata(meta),
        )
    }

    /// Run a skill future for `ctx`'s task in the background.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        ctx: TaskContext,
        fut: BoxFuture<'static, Outcome>,
        emit_working: bool,
    ) {
        let task_id = ctx.inner.task_id.clone();
        let generation = self.register(&ctx);
        debug_assert!(
            ctx.inner.staging.is_none(),
            "a staged task runs through run_inline_first"
        );
        let handle = tokio::spawn(self.clone().execute(ctx, fut, emit_working, generation));
        self.set_abort(&task_id, generation, handle.abort_handle());
    }

    /// Run a skill future for `ctx`'s task, polling it once on the caller's task first: a
    /// skill that finishes without waiting on anything (the common quick skill) then costs no
    /// spawned task, no wake-up and no doorbell, and its task, if staged ([`Staging`]), is
    /// written once. If it must wait, the same future moves to a spawned task (it is boxed, so
    /// moving it is sound) and goes on without the caller, after its task is stored.
    /// Returns whether it finished inline, i.e. its final events are written; `Err` if its
    /// staged task could not be written (then no task exists and the skill is dropped).
    ///
    /// Only for callers that wait for the task anyway (a blocking SendMessage): a stream
    /// wants its first event before the skill has produced many more.
    pub(crate) async fn run_inline_first(
        self: &Arc<Self>,
        ctx: TaskContext,
        fut: BoxFuture<'static, Outcome>,
        emit_working: bool,
    ) -> Result<bool, StoreError> {
        let generation = match &ctx.inner.staging {
            Some(staging) => {
                let generation = self.next_generation();
                staging
                    .run
                    .store(generation, std::sync::atomic::Ordering::Relaxed);
                generation
            }
            None => self.register(&ctx),
        };
        let this = ctx.clone();
        let mut run: BoxFuture<'static, ()> =
            Box::pin(self.clone().execute(ctx, fut, emit_working, generation));
        // One poll, on this task's waker; no await point between it and the spawn below, so a
        // caller that goes away (a client disconnecting) cannot drop the skill half-way. The
        // skill's own panics are caught inside; one from the rest of the run (a store, an
        // observer) must not unwind through the request's task either: the task fails.
        let first = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| {
                run.as_mut().poll(cx)
            })))
        })
        .await;
        match first {
            Ok(std::task::Poll::Ready(())) => {}
            Ok(std::task::Poll::Pending) => {
                let task_id = this.inner.task_id.clone();
                if this.inner.staging.is_none() {
                    let handle = tokio::spawn(run);
                    self.set_abort(&task_id, generation, handle.abort_handle());
                    return Ok(false);
                }
                // Enter the running set (unless it asked, which entered it), so the task can
                // be canceled once it is stored.
                {
                    let mut running = self.running();
                    if !running.contains_key(&task_id) {
                        running.insert(task_id.clone(), running_entry(&this, generation, None));
                    }
                }
                // The task is stored as it stands before the skill is polled again, in the
                // spawned task, so a caller that goes away drops neither.
                let (stored_tx, stored_rx) = oneshot::channel();
                let rt = self.clone();
                let handle = tokio::spawn(async move {
                    let stored = rt.store_staged(&this).await;
                    let ok = stored.is_ok();
                    let _ = stored_tx.send(stored);
                    if ok {
                        run.await;
                    } else {
                        drop(run);
                        rt.forget(&this.inner.task_id, generation);
                    }
                });
                self.set_abort(&task_id, generation, handle.abort_handle());
                return match stored_rx.await {
                    Ok(Ok(())) => Ok(false),
                    Ok(Err(e)) => Err(e),
                    Err(_) => Err(StoreError::Backend(
                        "the task could not be stored (its run ended first)".into(),
                    )),
                };
            }
            Err(_) => {
                tracing::error!(task_id = this.inner.task_id, "running a task panicked");
                drop(run);
                self.forget(&this.inner.task_id, generation);
                let _ = self.emit_status(&this, TaskState::Failed, None).await;
            }
        }
        if this.inner.staging.is_none() {
            return Ok(true);
        }
        // Finished inline: write the staged task, finished, in one step. Polled here first;
        // a store that has to wait finishes the write in a spawned task, so a caller that
        // goes away cannot lose it.
        let rt = self.clone();
        let mut write: BoxFuture<'static, Result<(), StoreError>> =
            Box::pin(async move { rt.store_staged(&this).await });
        let written =
            std::future::poll_fn(|cx| std::task::Poll::Ready(write.as_mut().poll(cx))).await;
        match written {
            std::task::Poll::Ready(r) => r?,
            std::task::Poll::Pending => tokio::spawn(write)
                .await
                .map_err(|e| StoreError::Backend(format!("storing the task failed: {e}")))??,
        }
        Ok(true)
    }

    /// Enter a run of `ctx`'s task in the running set; returns its generation.
    fn register(&self, ctx: &TaskContext) -> u64 {
        let generation = self.next_generation();
        self.running().insert(
            ctx.inner.task_id.clone(),
            running_entry(ctx, generation, None),
        );
        generation
    }

    fn next_generation(&self) -> u64 {
        self.generations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Record the spawned run's abort handle. A cancel that came before it (while the first
    /// poll ran inline) could not schedule the abort, so it is scheduled now.
    fn set_abort(self: &Arc<Self>, task_id: &str, generation: u64, abort: AbortHandle) {
        let cancelled = match self
            .running()
            .get_mut(task_id)
            .filter(|r| r.generation == generation)
        {
            Some(r) => {
                r.abort = Some(abort);
                r.cancel.is_cancelled()
            }
            None => false,
        };
        if cancelled {
            self.signal_cancel(task_id);
        }
    }

    /// The whole run of a skill: WORKING (if asked), the skill with narration, then its
    /// outcome as events.
    async fn execute(
        self: Arc<Self>,
        ctx: TaskContext,
        fut: BoxFuture<'static, Outcome>,
        emit_working: bool,
        generation: u64,
    ) {
        let rt = self;
        if emit_working
            && rt
                .emit_status(&ctx, TaskState::Working, None)
                .await
                .is_err()
        {
            rt.forget(&ctx.inner.task_id, generation);
            return;
        }
        let narration = rt.config.narrator.clone().map(|n| {
            let (rt, ctx) = (rt.clone(), ctx.clone());
            tokio::spawn(async move { rt.narrate(n, ctx).await })
        });
        let outcome = rt.run_guarded(fut).await;
        if let Some(n) = narration {
            n.abort();
        }
        // Leave the running set before the final event is visible, so a follow-up message
        // that reacts to INPUT_REQUIRED never races with this run's bookkeeping.
        rt.forget(&ctx.inner.task_id, generation);
        rt.finish(&ctx, outcome).await;
    }

    fn forget(&self, task_id: &str, generation: u64) {
        let mut running = self.running();
        if running
            .get(task_id)
            .is_some_and(|r| r.generation == generation)
        {
            running.remove(task_id);
        }
    }

    /// Run a skill future with panics and the configured timeout turned into FAILED outcomes.
    pub(crate) async fn run_guarded(&self, fut: BoxFuture<'static, Outcome>) -> Outcome {
        let guarded = AssertUnwindSafe(fut).catch_unwind();
        let result = match self.config.skill_timeout {
            Some(limit) => match tokio::time::timeout(limit, guarded).await {
                Ok(r) => r,
                Err(_) => return Outcome::failed(format!("the skill timed out after {limit:?}")),
            },
            None => guarded.await,
        };
        result.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(panic = %what, "skill panicked");
            Outcome::failed(format!("the skill panicked: {what}"))
        })
    }

    /// Turn an outcome into the task's final (or interrupted) events.
    pub(crate) async fn finish(&self, ctx: &TaskContext, outcome: Outcome) {
        let (task_id, context_id) = (&ctx.inner.task_id, &ctx.inner.context_id);
        let result = match outcome.kind {
            OutcomeKind::Completed {
                content,
                status_text,
            } => {
                let mut final_text = status_text;
                let artifact = match content {
                    Content::None => None,
                    Content::Artifact(a) => Some(a),
                    Content::Parts(parts) => {
                        if final_text.is_none() && parts.iter().all(|p| p.as_text().is_some()) {
                            final_text = Some(parts.iter().filter_map(|p| p.as_text()).collect());
                        }
                        Some(Artifact::new(parts).with_name("result"))
                    }
                };
                // Forced artifact: content returned without an artifact produced goes through
                // the same artifact path a streaming skill uses.
                let mut ok = true;
                if let Some(a) = artifact {
                    if !ctx.produced_artifact() || !a.parts.is_empty() {
                        ok = ctx.emit_artifact(a, false, true).await.is_ok();
                    }
                }
                if ok {
                    let msg = final_text
                        .map(|t| Self::agent_message(task_id, context_id, vec![Part::text(t)]));
                    self.status_event(ctx, TaskState::Completed, msg)
                        .await
                        .map(|_| ())
                } else {
                    Ok(())
                }
            }
            OutcomeKind::Interrupted { state, parts } => {
                let msg = Self::agent_message(task_id, context_id, parts);
                self.status_event(ctx, state, Some(msg)).await.map(|_| ())
            }
            OutcomeKind::Ended { state, reason } => {
                let msg =
                    reason.map(|r| Self::agent_message(task_id, context_id, vec![Part::text(r)]));
                self.status_event(ctx, state, msg).await.map(|_| ())
            }
            OutcomeKind::Message(mut m) => {
                m.task_id = Some(task_id.clone());
                m.context_id = Some(context_id.clone());
                m.role = Role::Agent;
                self.status_event(ctx, TaskState::Completed, Some(m))
                    .await
                    .map(|_| ())
            }
        };
        match result {
            Ok(()) | Err(StoreError::IllegalTransition(_)) | Err(StoreError::TaskNotFound(_)) => {}
            Err(e) => tracing::error!(task_id, error = %e, "could not record the end of a task"),
        }
    }

    async fn narrate(&self, narrator: Arc<dyn StatusNarrator>, ctx: TaskContext) {
        let mut tick = 0u32;
        let mut interval = tokio::time::interval(self.config.narration_interval);
        interval.tick().await;
        loop {
            interval.tick().await;
            if ctx.produced_artifact() || ctx.is_cancelled() {
                return;
            }
            let Ok(Some(rec)) = self
                .store
                .get_task(&ctx.inner.task_id, TaskView::FULL)
                .await
            else {
                return;
            };
            if rec.task.status.state != TaskState::Working {
                if rec.task.status.state.is_terminal() {
                    return;
                }
                continue;
            }
            tick += 1;
            let recent: Vec<String> = rec.task.history.iter().filter_map(status_text).collect();
            let recent = recent[recent.len().saturating_sub(5)..].to_vec();
            let n = NarrationContext {
                task_id: ctx.inner.task_id.clone(),
                skill_id: ctx.inner.skill_id.to_string(),
                elapsed: ctx.elapsed(),
                tick,
                recent_statuses: recent.clone(),
            };
            if let Some(text) = narrator.narrate(&n).await {
                if !recent.contains(&text)
                    && !ctx.produced_artifact()
                    && ctx.status(text).await.is_err()
                {
                    return;
                }
            }
        }
    }

    /// Suspend a skill in `state` until the next message for its task arrives.
    pub(crate) async fn wait_for_reply(
        &self,
        ctx: &TaskContext,
        state: TaskState,
        parts: Vec<Part>,
    ) -> Result<Message, SkillError> {
        let (tx, rx) = oneshot::channel();
        // Register the waiter before the state change is visible, so a client that sees the
        // interrupted state always finds someone to deliver its reply to.
        {
            let mut running = self.running();
            match running.get_mut(&ctx.inner.task_id) {
                Some(r) => r.waiter = Some(tx),
                // A staged task that asks in its first poll enters the running set now.
                None => match &ctx.inner.staging {
                    Some(staging) if staging.is_held() => {
                        let generation = staging.run.load(std::sync::atomic::Ordering::Relaxed);
                        let entry = running_entry(ctx, generation, Some(tx));
                        running.insert(ctx.inner.task_id.clone(), entry);
                    }
                    _ => return Err(SkillError::Canceled),
                },
            }
        }
        let msg = Self::agent_message(&ctx.inner.task_id, &ctx.inner.context_id, parts);
        if let Err(e) = self.emit_status(ctx, state, Some(msg)).await {
            if let Some(r) = self.running().get_mut(&ctx.inner.task_id) {
                r.waiter = None;
            }
            return Err(e);
        }
        tokio::select! {
            reply = rx => reply.map_err(|_| SkillError::Canceled),
            _ = ctx.cancelled() => Err(SkillError::Canceled),
        }
    }

    /// Take the suspended skill's reply channel, if a skill is waiting on this task.
    pub(crate) fn take_waiter(&self, task_id: &str) -> Option<oneshot::Sender<Message>> {
        self.running()
            .get_mut(task_id)
            .and_then(|r| r.waiter.take())
    }

    /// Fire the task's cancellation token and abort it after the grace period.
    pub(crate) fn signal_cancel(self: &Arc<Self>, task_id: &str) {
        // The token fires under the lock: `set_abort` (which stores the handle of a run that
        // was polled inline first) checks it under the same lock, so one of the two always
        // schedules the abort.
        let (abort, generation) = match self.running().get_mut(task_id) {
            Some(r) => {
                r.waiter = None;
                r.cancel.cancel();
                (r.abort.clone(), r.generation)
            }
            None => return,
        };
        if let Some(abort) = abort {
            let grace = self.config.cancel_grace;
            let rt = self.clone();
            let task_id = task_id.to_string();
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                if !abort.is_finished() {
                    tracing::warn!(task_id, "skill ignored cancellation; aborting it");
                    abort.abort();
                }
                rt.forget(&task_id, generation);
            });
        }
    }

    /// Ids of tasks with a skill executing.
    pub(crate) fn running_ids(&self) -> Vec<String> {
        self.running().keys().cloned().collect()
    }

    /// Subscribe to a task's doorbell. A stream subscribes before the events it wants can be
    /// written (before launching the skill); a waiter that subscribes later reads the log once
    /// first ([`wait_settled`](Self::wait_settled)).
    pub(crate) fn subscribe(&self, task_id: &str) -> BusSubscription {
        self.bus.subscribe(task_id)
    }

    /// Wait until the task reaches a terminal or interrupted state after event `after`.
    ///
    /// `sub` is taken before this call; the events written before it are read from the log
    /// once, then the doorbell alone (which carries the settle state) says when it settles.
    pub(crate) async fn wait_settled(
        &self,
        sub: &mut BusSubscription,
        after: Seq,
    ) -> Result<(), A2aError> {
        let mut last = after;
        loop {
            let events = self.store.events_after(&sub.task_id, last, 256).await?;
            for ev in &events {
                last = ev.seq;
                let s = ev.event.state();
                if s.is_some_and(|s| s.is_terminal() || s.is_interrupted()) {
                    return Ok(());
                }
            }
            if events.len() < 256 {
                break;
            }
        }
        loop {
            if sub.bell().settled_seq > after {
                return Ok(());
            }
            sub.changed().await;
        }
    }

    /// The task's events after `after`, live, ending after an event that closes streams.
    /// `sub` is taken by the caller before the events it wants can be written (and keeps
    /// the task's log from being released while this reader lives).
    pub(crate) fn event_stream(
        self: &Arc<Self>,
        mut sub: BusSubscription,
        after: Seq,
    ) -> BoxStream<'static, Result<EventRecord, A2aError>> {
        let rt = self.clone();
        let close_on_auth = self.config.close_streams_on_auth_required;
        let task_id = sub.task_id.clone();
        Box::pin(async_stream::stream! {
            let mut last = after;
            loop {
                let events = match rt.store.events_after(&task_id, last, 256).await {
                    Ok(e) => e,
                    Err(e) => { yield Err(A2aError::from(e)); return; }
                };
                let n = events.len();
                for ev in events {
                    last = ev.seq;
                    let closes = closes_stream(ev.event.state(), close_on_auth);
                    yield Ok(ev);
                    if closes { return; }
                }
                if n < 256 {
                    sub.changed().await;
                }
            }
        })
    }
}

/// The text of a status message (indicator data part or text part), if `m` is one.
pub(crate) fn status_text(m: &Message) -> Option<String> {
    let is_status = m
        .metadata
        .as_ref()
        .and_then(|md| md.get(STATUS_MESSAGE_KIND_KEY))
        .is_some_and(|k| k == STATUS_MESSAGE_KIND);
    if !is_status {
        return None;
    }
    m.parts.iter().find_map(|p| {
        p.as_text().map(str::to_string).or_else(|| {
            p.as_data()
                .and_then(|d| d.get("text"))
                .and_then(|t| t.as_str())
                .map(str::to_string)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Task, TaskArtifactUpdateEvent};
    use crate::store::InMemoryTaskManager;

    fn staged(id: &str) -> (Arc<Runtime>, Arc<dyn TaskManager>, TaskContext) {
        let store: Arc<dyn TaskManager> = Arc::new(InMemoryTaskManager::default());
        let rt = Arc::new(Runtime::new(store.clone(), ExecutionConfig::default()));
        let task = Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![Message::user_text("hi")],
            ..Task::default()
        };
        let ctx = TaskContext::staged(task, "s", Message::user_text("hi"), rt.clone());
        (rt, store, ctx)
    }

    fn artifact_event(ctx: &TaskContext) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: ctx.task_id().into(),
            context_id: ctx.context_id().into(),
            artifact: Artifact::new(vec![Part::text("late")]),
            append: false,
            last_chunk: true,
            metadata: None,
        })
    }

    /// An event from a clone of the context while the staged task is being written waits
    /// for the write, then goes to the store after it.
    #[tokio::test]
    async fn an_event_during_the_write_waits_for_it() {
        let (rt, store, ctx) = staged("t");
        assert_eq!(rt.emit_status(&ctx, TaskState::Working, None).await, Ok(2));
        let staging = ctx.inner.staging.as_ref().expect("staged");
        // The write begins (as `store_staged` begins it).
        let held = std::mem::replace(&mut *staging.lock(), Stage::Writing);
        let emitter = tokio::spawn({
            let (rt, ctx) = (rt.clone(), ctx.clone());
            async move { rt.emit_status(&ctx, TaskState::Completed, None).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!emitter.is_finished(), "the event waits for the write");
        let Stage::Held { task, events, .. } = held else {
            panic!("the task was held")
        };
        assert_eq!(
            store.create_task_with_events(*task, None, events).await,
            Ok(2)
        );
        drop(WriteDone(staging));
        assert_eq!(
            emitter.await.expect("joined"),
            Ok(3),
            "stored after the write"
        );
        let rec = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
        assert_eq!(rec.task.status.state, TaskState::Completed);
        assert_eq!(rec.last_seq, 3);
    }

    /// Held events are refused exactly as the store refuses them, and a refused one is not
    /// held; what was held is stored by `store_staged`, once.
    #[tokio::test]
    async fn held_events_are_checked_like_stored_ones() {
        let (rt, store, ctx) = staged("held");
        let (_, _, stored_ctx) = staged("stored");
        // The same task, stored as it goes.
        let Some(Stage::Held { task, .. }) = stored_ctx
            .inner
            .staging
            .as_ref()
            .map(|s| std::mem::replace(&mut *s.lock(), Stage::Stored))
        else {
            panic!("the task was held")
        };
        store.create_task(*task, None).await.unwrap();
        let done = |ctx: &TaskContext| {
            status_update(ctx.task_id(), ctx.context_id(), TaskState::Completed, None)
        };
        let working = |ctx: &TaskContext| {
            status_update(ctx.task_id(), ctx.context_id(), TaskState::Working, None)
        };
        assert_eq!(rt.emit_for(&ctx, done(&ctx)).await, Ok(2));
        assert_eq!(rt.emit_for(&stored_ctx, done(&stored_ctx)).await, Ok(2));
        for (name, event) in [
            (
                "an artifact after the end",
                artifact_event as fn(&TaskContext) -> _,
            ),
            ("a transition out of a terminal state", working),
        ] {
            let held = rt.emit_for(&ctx, event(&ctx)).await;
            let stored = rt.emit_for(&stored_ctx, event(&stored_ctx)).await;
            assert!(held.is_err(), "{name}: {held:?}");
            assert_eq!(
                format!("{held:?}").replace("held", "_"),
                format!("{stored:?}").replace("stored", "_"),
                "{name}"
            );
        }
        assert_eq!(rt.store_staged(&ctx).await, Ok(()));
        assert_eq!(
            rt.store_staged(&ctx).await,
            Ok(()),
            "a second call does nothing"
        );
        let rec = store
            .get_task("held", TaskView::FULL)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (rec.task.status.state, rec.last_seq),
            (TaskState::Completed, 2)
        );
        assert_eq!(
            ctx.history().await.len(),
            1,
            "a stored task's history is read from the store"
        );
    }
}
