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

mod bus;
mod config;
mod quota;
mod run;
mod share;
mod staging;
mod turns;

use turns::Turns;

pub(crate) use bus::BusSubscription;
pub use config::{EventObserver, ExecutionConfig, NarrationContext, StatusNarrator, StatusStyle};
pub use quota::CallerQuota;
pub(crate) use quota::Quotas;
pub(crate) use run::{Ending, NoReply, TaskRun, TraceParent, recorded_answers};
pub use share::CallerShare;
pub(crate) use share::{LiveTask, OverShare, ShareKey, Shares};
pub(crate) use staging::Emitting;

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::error::A2aError;
use crate::fast_map::FastMap;
use crate::protocol::{
    Message, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent, status_message_text,
};
use crate::store::{EventRecord, Seq, StoreError, TaskManager, TaskView};
use bus::EventBus;

/// The running-set entry of `run`'s run `generation`.
fn running_entry(
    run: &TaskRun,
    generation: u64,
    waiter: Option<oneshot::Sender<Message>>,
) -> Running {
    Running {
        generation,
        cancel: run.cancel.clone(),
        waiter,
        abort: None,
        span: run.span.clone(),
    }
}

struct Running {
    /// Distinguishes successive runs of one task (stateless multi-turn re-invokes the skill).
    generation: u64,
    cancel: tokio_util::sync::CancellationToken,
    waiter: Option<oneshot::Sender<Message>>,
    abort: Option<AbortHandle>,
    /// The run's span, for the cancel event.
    span: tracing::Span,
}

/// How a runtime continues a reply handed to it for a task no skill of it waits for: the
/// service runs the task's skill again with the history (the runtime cannot: skills are a
/// floor above it).
pub(crate) type ContinueReply = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// The shared execution state behind an `server::AgentService`.
pub(crate) struct Runtime {
    pub(crate) store: Arc<dyn TaskManager>,
    pub(crate) bus: Arc<EventBus>,
    pub(crate) config: ExecutionConfig,
    running: Mutex<FastMap<String, Running>>,
    generations: AtomicU64,
    pub(crate) observers: Vec<Arc<dyn EventObserver>>,
    /// Turns to run a skill ([`ExecutionConfig::max_running_skills`]).
    pub(crate) turns: Turns,
    /// The live tasks of tasks a skill left waiting for the user with no run (it returned
    /// INPUT_REQUIRED or AUTH_REQUIRED), by task: still counted against their caller's
    /// share until the reply comes, the task ends or the reply timeout passes.
    parked: Mutex<FastMap<String, (u64, LiveTask)>>,
    /// The agent's name, for the runs' spans (`invoke_agent {name}`).
    pub(crate) agent_name: Arc<str>,
}

/// A skill's future run in its run's span and trace context (re-boxed only when there is one).
fn traced(fut: BoxFuture<'static, Ending>, run: &TaskRun) -> BoxFuture<'static, Ending> {
    use tracing::Instrument;
    let fut = if run.span.is_disabled() {
        fut
    } else {
        Box::pin(fut.instrument(run.span.clone()))
    };
    match &run.trace {
        Some(trace) => Box::pin(crate::observe::TraceContext::clone(trace).scope(fut)),
        None => fut,
    }
}

/// A status update of `task_id`, stamped now.
pub(super) fn status_update(
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
    /// Whether a stream ends with an event in `state`, as this runtime's streams end.
    pub(crate) fn closes_stream(&self, state: TaskState) -> bool {
        closes_stream(Some(state), self.config.close_streams_on_auth_required)
    }

    pub(crate) fn new(store: Arc<dyn TaskManager>, config: ExecutionConfig) -> Self {
        let turns = Turns::new(config.max_running_skills, config.per_caller.running_skills);
        Runtime {
            bus: Arc::new(EventBus::new(store.clone())),
            store,
            config,
            running: Mutex::default(),
            generations: AtomicU64::new(0),
            observers: Vec::new(),
            turns,
            parked: Mutex::default(),
            agent_name: Arc::from(""),
        }
    }

    /// Whether new work must be refused: every turn is taken and the queue is full.
    pub(crate) fn saturated(&self) -> bool {
        self.turns.saturated(self.config.max_waiting_skills)
    }

    fn running(&self) -> std::sync::MutexGuard<'_, FastMap<String, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Set the observers (before the runtime is shared). Observers may read logs late, so
    /// with any, logs of finished tasks are not released.
    pub(crate) fn set_observers(&mut self, observers: Vec<Arc<dyn EventObserver>>) {
        self.bus
            .release_logs
            .store(observers.is_empty(), Ordering::Relaxed);
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

    /// Run a skill future for `run`'s task in the background.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        run: Arc<TaskRun>,
        fut: BoxFuture<'static, Ending>,
        emit_working: bool,
    ) {
        let task_id = run.task_id.clone();
        let generation = self.register(&run);
        debug_assert!(
            run.staging.is_none(),
            "a staged task runs through run_inline_first"
        );
        let handle = tokio::spawn(self.clone().execute(run, fut, emit_working, generation));
        self.set_abort(&task_id, generation, handle.abort_handle());
    }

    /// Enter a run of `run`'s task in the running set; returns its generation.
    fn register(&self, run: &TaskRun) -> u64 {
        let generation = self.next_generation();
        self.running()
            .insert(run.task_id.clone(), running_entry(run, generation, None));
        generation
    }

    fn next_generation(&self) -> u64 {
        self.generations.fetch_add(1, Ordering::Relaxed)
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
    /// ending as events.
    async fn execute(
        self: Arc<Self>,
        run: Arc<TaskRun>,
        fut: BoxFuture<'static, Ending>,
        emit_working: bool,
        generation: u64,
    ) {
        let rt = self;
        // The task stays SUBMITTED until the skill's turn comes.
        rt.turns.take(run.share()).await;
        run.hold_turn();
        if emit_working && run.emit_status(TaskState::Working, None).await.is_err() {
            rt.forget(&run.task_id, generation);
            return;
        }
        let narration = rt.config.narrator.clone().map(|n| {
            let (rt, run) = (rt.clone(), run.clone());
            tokio::spawn(async move { rt.narrate(n, run).await })
        });
        let ending = rt.run_guarded(fut, Some(&run)).await;
        if let Some(n) = narration {
            n.abort();
        }
        let ended_in = match &ending {
            Ending::Settled { state, .. } => Some(*state),
            _ => None,
        };
        // Leave the running set before the final event is visible, so a follow-up message
        // that reacts to INPUT_REQUIRED never races with this run's bookkeeping; likewise a
        // task left waiting for the user keeps its live task for the run its reply starts.
        rt.forget(&run.task_id, generation);
        if ended_in.is_some_and(|s| s.is_interrupted())
            && let Some(live) = run.live_again()
        {
            rt.park(&run.task_id, live);
        }
        run.give_turn_up();
        run.finish(ending).await;
        // A task still held back (staged) is written, and let go of, by its first poll's caller.
        if !run.is_held() {
            rt.release_if_interrupted(&run.task_id, ended_in).await;
        }
    }

    /// Keep `live` counted for `task_id`, waiting for the user with no run, until
    /// [`unpark`](Self::unpark)ed or the reply timeout passes.
    fn park(self: &Arc<Self>, task_id: &str, live: LiveTask) {
        let generation = self.next_generation();
        self.parked()
            .insert(task_id.to_string(), (generation, live));
        if let Some(limit) = self.config.reply_timeout {
            let (rt, task_id) = (Arc::downgrade(self), task_id.to_string());
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                if let Some(rt) = rt.upgrade() {
                    let mut parked = rt.parked();
                    if parked.get(&task_id).is_some_and(|(g, _)| *g == generation) {
                        parked.remove(&task_id);
                    }
                }
            });
        }
    }

    /// The live task parked for `task_id`, if any: taken by the run its reply starts, or
    /// dropped when the task ends.
    pub(crate) fn unpark(&self, task_id: &str) -> Option<LiveTask> {
        let mut parked = self.parked();
        if parked.is_empty() {
            return None;
        }
        parked.remove(task_id).map(|(_, live)| live)
    }

    fn parked(&self) -> std::sync::MutexGuard<'_, FastMap<String, (u64, LiveTask)>> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner())
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

    /// On a shared store, let go of a task whose skill ended waiting for the user (it asked by
    /// ending INPUT_REQUIRED or AUTH_REQUIRED, no `ask` waits here): a reply then continues it
    /// on whichever replica it reaches. Ended tasks need nothing: ending one lets go of it.
    async fn release_if_interrupted(&self, task_id: &str, state: Option<TaskState>) {
        let Some(cluster) = self.store.cluster() else {
            return;
        };
        if !state.is_some_and(|s| s.is_interrupted()) {
            return;
        }
        if let Err(e) = cluster.release(task_id).await {
            tracing::warn!(task_id, error = %e, "could not let go of a task");
        }
    }

    /// Run a skill future with panics and the configured timeout turned into FAILED endings.
    /// The time `run` spends waiting for replies does not count towards the timeout.
    pub(crate) async fn run_guarded(
        &self,
        fut: BoxFuture<'static, Ending>,
        run: Option<&TaskRun>,
    ) -> Ending {
        let fut = match run {
            Some(run) => traced(fut, run),
            None => fut,
        };
        let mut guarded = std::pin::pin!(AssertUnwindSafe(fut).catch_unwind());
        // Most skills end in their first poll: no timer for them.
        let first = std::future::poll_fn(|cx| std::task::Poll::Ready(guarded.as_mut().poll(cx)));
        if let std::task::Poll::Ready(r) = first.await {
            return Self::settled(r);
        }
        let result = match self.config.skill_timeout {
            Some(limit) => {
                let start = tokio::time::Instant::now();
                let mut deadline = start + limit;
                loop {
                    match tokio::time::timeout_at(deadline, &mut guarded).await {
                        Ok(r) => break r,
                        Err(_) => {
                            let now = tokio::time::Instant::now();
                            let paused = run.map_or(std::time::Duration::ZERO, |r| r.paused(now));
                            let active = (now - start).saturating_sub(paused);
                            if active >= limit {
                                return Ending::failed(format!(
                                    "the skill timed out after {limit:?}"
                                ));
                            }
                            // It waited for replies meanwhile: the rest of its time from now.
                            deadline = now + (limit - active);
                        }
                    }
                }
            }
            None => guarded.await,
        };
        Self::settled(result)
    }

    /// A skill's ending, or FAILED for its panic.
    fn settled(result: std::thread::Result<Ending>) -> Ending {
        result.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(panic = %what, "skill panicked");
            Ending::failed(format!("the skill panicked: {what}"))
        })
    }

    async fn narrate(&self, narrator: Arc<dyn StatusNarrator>, run: Arc<TaskRun>) {
        let mut tick = 0u32;
        let every = narrator
            .interval()
            .filter(|d| !d.is_zero())
            .unwrap_or(self.config.narration_interval);
        let mut interval = tokio::time::interval(every);
        interval.tick().await;
        loop {
            interval.tick().await;
            if run.produced_artifact() || run.cancel.is_cancelled() {
                return;
            }
            let Ok(Some(rec)) = self.store.get_task(&run.task_id, TaskView::FULL).await else {
                return;
            };
            if rec.task.status.state != TaskState::Working {
                if rec.task.status.state.is_terminal() {
                    return;
                }
                continue;
            }
            tick += 1;
            let recent: Vec<String> = rec
                .task
                .history
                .iter()
                .filter_map(status_message_text)
                .collect();
            let recent = recent[recent.len().saturating_sub(5)..].to_vec();
            let request = rec
                .task
                .history
                .first()
                .map(|m| m.text())
                .unwrap_or_default();
            let n = NarrationContext {
                request,
                task_id: run.task_id.clone(),
                skill_id: run.skill_id.to_string(),
                elapsed: run.started.elapsed(),
                tick,
                recent_statuses: recent.clone(),
            };
            if let Some(text) = narrator.narrate(&n).await
                && !recent.contains(&text)
                && !run.produced_artifact()
                && run.report_status(text).await.is_err()
            {
                return;
            }
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
        drop(self.unpark(task_id));
        // The token fires under the lock: `set_abort` (which stores the handle of a run that
        // was polled inline first) checks it under the same lock, so one of the two always
        // schedules the abort.
        let (abort, generation) = match self.running().get_mut(task_id) {
            Some(r) => {
                tracing::debug!(parent: &r.span, "a2a.task.cancel");
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

    /// Ids of tasks whose skill is at work, not suspended waiting for the user's reply.
    pub(crate) fn working_ids(&self) -> Vec<String> {
        self.running()
            .iter()
            .filter(|(_, r)| r.waiter.is_none())
            .map(|(id, _)| id.clone())
            .collect()
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
        let mut resyncs = sub.bell().resyncs;
        if self.settles_in_log(&sub.task_id, &mut last).await? {
            return Ok(());
        }
        loop {
            let bell = sub.bell();
            if bell.settled_seq > after {
                return Ok(());
            }
            if bell.resyncs != resyncs {
                resyncs = bell.resyncs;
                if self.settles_in_log(&sub.task_id, &mut last).await? {
                    return Ok(());
                }
            }
            sub.changed().await;
        }
    }

    /// Read the task's log after `last` (advancing it): whether it reaches a terminal or
    /// interrupted state.
    async fn settles_in_log(&self, task_id: &str, last: &mut Seq) -> Result<bool, A2aError> {
        loop {
            let events = self.store.events_after(task_id, *last, 256).await?;
            for ev in &events {
                *last = ev.seq;
                let s = ev.event.state();
                if s.is_some_and(|s| s.is_terminal() || s.is_interrupted()) {
                    return Ok(true);
                }
            }
            if events.len() < 256 {
                return Ok(false);
            }
        }
    }

    /// Give the skill waiting in `ask` here the reply another process recorded for it (the
    /// task's last message). If no skill waits for it here (the skill stopped, or this
    /// replica took over the question of one that died), `continue_reply` runs the task's
    /// skill again with the history.
    async fn resume_handed_reply(&self, task_id: &str, continue_reply: &ContinueReply) {
        let Some(waiter) = self.take_waiter(task_id) else {
            continue_reply(task_id.to_string()).await;
            return;
        };
        let view = TaskView {
            history_length: Some(1),
            include_artifacts: false,
        };
        let task = match self.store.get_task(task_id, view).await {
            Ok(Some(rec)) => rec.task,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(task_id, error = %e, "could not read a reply handed over");
                return;
            }
        };
        let Some(reply) = task.history.last().cloned() else {
            return;
        };
        match self
            .emit_status_for(task_id, &task.context_id, TaskState::Working, None)
            .await
        {
            Ok(_) => drop(waiter.send(reply)),
            Err(e) => tracing::warn!(task_id, error = %e, "could not resume a task"),
        }
    }

    /// Follow the changes other processes make to a shared store: ring the doorbells of this
    /// process's readers, stop a skill running here whose task ended elsewhere (a CancelTask
    /// that reached another replica), and resume a skill waiting in `ask` here with a reply
    /// that reached another replica. Ends with the runtime.
    pub(crate) fn follow_store_changes(self: &Arc<Self>, continue_reply: ContinueReply) {
        let Some(mut changes) = self.store.cluster().map(|c| c.changes()) else {
            return;
        };
        let runtime = Arc::downgrade(self);
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(change) = changes.next().await {
                let Some(rt) = runtime.upgrade() else {
                    return;
                };
                match change {
                    crate::store::StoreChange::Appended {
                        task_id,
                        seq,
                        state,
                    } => {
                        rt.bus.notify(&task_id, seq, state);
                        // Another replica moved the task on: its live task is not ours.
                        if state.is_some_and(|s| !s.is_interrupted()) {
                            drop(rt.unpark(&task_id));
                        }
                        if state.is_some_and(|s| s.is_terminal()) {
                            rt.signal_cancel(&task_id);
                        }
                    }
                    crate::store::StoreChange::Resync => rt.bus.resync(),
                    crate::store::StoreChange::Reply { task_id } => {
                        rt.resume_handed_reply(&task_id, &continue_reply).await
                    }
                }
            }
        });
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
