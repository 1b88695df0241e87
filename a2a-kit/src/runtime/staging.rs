//! Staging, a speed technique for a blocking SendMessage: its skill is polled once on the
//! caller's task before anything is spawned ([`Runtime::run_inline_first`]), and its new task
//! is held back from the store during that poll ([`Runtime::staged_run`]), so that a quick
//! skill's task is written once, finished, with its whole log. Private to the runtime: the
//! request path only chooses a staged run or a plain one, and runs a blocking send's run
//! inline first; a plain run's code does not know how staging works.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use super::{Ending, Running, Runtime, TaskRun, running_entry};
use crate::protocol::{Message, StreamResponse, Task, TaskState};
use crate::store::{Owner, Seq, StoreError};

/// A new task held back from the store while its skill's first poll runs, for a blocking
/// SendMessage. Nobody else knows the task's id yet, so nothing can read the task meanwhile;
/// a skill that ends in that poll (the common quick skill) then has its task written once,
/// finished, with its whole log ([`TaskManager::create_task_with_events`]), instead of once
/// per event. Events are checked as they are held, as the store would check them, so a skill
/// sees the same refusals either way. A skill that has to wait has its task written as it
/// stands before it is polled again.
pub(super) struct Staging {
    stage: Mutex<Stage>,
    /// Rung when the task leaves [`Stage::Writing`].
    stored: tokio::sync::Notify,
    /// The generation of its run. A staged task enters the running set only when it must
    /// (it asks for input, or has to wait): nobody can cancel a task whose id is not out.
    run: AtomicU64,
    /// The task as written, for a caller that answers with the typed task (gRPC) and asked
    /// for it ([`TaskRun::keep_written_task`]): built from what was held, not read back
    /// from the store (which may keep it as JSON).
    written: Mutex<Option<Box<Task>>>,
    keep_written: AtomicBool,
}

enum Stage {
    /// Not stored: the task as created, the events since and the state they left it in.
    Held {
        task: Box<Task>,
        skill_id: String,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
        state: TaskState,
    },
    /// Being written: an event from elsewhere (a clone of the context) waits for it.
    Writing,
    /// Written, or the write failed: events go to the store.
    Stored,
}

impl Staging {
    fn new(task: Task, skill_id: &str, owner: Option<Owner>) -> Self {
        Staging {
            stage: Mutex::new(Stage::Held {
                state: task.status.state,
                task: Box::new(task),
                skill_id: skill_id.to_string(),
                owner,
                events: Vec::with_capacity(3),
            }),
            stored: tokio::sync::Notify::new(),
            run: AtomicU64::new(u64::MAX),
            written: Mutex::new(None),
            keep_written: AtomicBool::new(false),
        }
    }

    /// The state the held task is in; `None` once it is written.
    fn held_state(&self) -> Option<TaskState> {
        match &*self.lock() {
            Stage::Held { state, .. } => Some(*state),
            _ => None,
        }
    }

    fn is_held(&self) -> bool {
        matches!(*self.lock(), Stage::Held { .. })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The owner of the task, if it is still held.
    fn held_owner(&self) -> Option<Option<Owner>> {
        match &*self.lock() {
            Stage::Held { owner, .. } => Some(owner.clone()),
            _ => None,
        }
    }

    /// The history the task would have now, if it is still held.
    fn held_history(&self) -> Option<Vec<Message>> {
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

impl Runtime {
    /// A run of a new task that is not stored yet: it is stored with the events held
    /// meanwhile, after the skill's first poll ([`run_inline_first`](Self::run_inline_first)).
    pub(crate) fn staged_run(
        self: &Arc<Self>,
        task: Task,
        skill_id: &'static str,
        owner: Option<Owner>,
        message: Message,
        live: Option<super::LiveTask>,
        trace: Option<&crate::observe::TraceContext>,
    ) -> Arc<TaskRun> {
        let ids = (task.id.clone(), task.context_id.clone());
        let staging = Staging::new(task, skill_id, owner);
        self.new_run(
            ids,
            skill_id.into(),
            message,
            Some(staging),
            live,
            (None, trace),
        )
    }

    /// Whether a new task may be staged: not with a narrator, which reads the task from the
    /// store on its own schedule.
    pub(crate) fn stages_new_tasks(&self) -> bool {
        self.config.narrator.is_none()
    }

    /// Run a skill future for `run`'s task, polling it once on the caller's task first: a
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
        run: Arc<TaskRun>,
        fut: BoxFuture<'static, Ending>,
        emit_working: bool,
    ) -> Result<bool, StoreError> {
        let generation = self.new_generation(&run);
        let this = run.clone();
        let mut run: BoxFuture<'static, ()> =
            Box::pin(self.clone().execute(run, fut, emit_working, generation));
        // One poll, on this task's waker; no await point between it and the spawn below, so a
        // caller that goes away (a client disconnecting) cannot drop the skill half-way.
        match first_poll(&mut run).await {
            Ok(Poll::Ready(())) => {}
            Ok(Poll::Pending) if this.staging.is_none() => {
                let handle = tokio::spawn(run);
                self.set_abort(&this.task_id, generation, handle.abort_handle());
                return Ok(false);
            }
            Ok(Poll::Pending) => return self.store_and_go_on(this, run, generation).await,
            Err(_) => {
                tracing::error!(task_id = this.task_id, "running a task panicked");
                drop(run);
                self.forget(&this.task_id, generation);
                let _ = this.emit_status(TaskState::Failed, None).await;
            }
        }
        if this.staging.is_none() {
            return Ok(true);
        }
        // Finished inline: write the staged task, finished, in one step. Polled here first;
        // a store that has to wait finishes the write in a spawned task, so a caller that
        // goes away cannot lose it.
        let mut write = self.store_finished(this);
        let written = std::future::poll_fn(|cx| Poll::Ready(write.as_mut().poll(cx))).await;
        match written {
            Poll::Ready(r) => r?,
            Poll::Pending => tokio::spawn(write)
                .await
                .map_err(|e| StoreError::Backend(format!("storing the task failed: {e}")))??,
        }
        Ok(true)
    }

    /// The generation of a new run of `run`'s task. A plain run enters the running set now;
    /// a staged one only when it must ([`Staging::run`]).
    fn new_generation(&self, run: &TaskRun) -> u64 {
        match &run.staging {
            Some(staging) => {
                let generation = self.next_generation();
                staging.run.store(generation, Ordering::Relaxed);
                generation
            }
            None => self.register(run),
        }
    }

    /// A staged run whose first poll did not finish it: its task is stored as it stands
    /// before the skill is polled again, in a spawned task, so a caller that goes away drops
    /// neither. Returns once the task is stored (`Ok(false)`: the run goes on).
    async fn store_and_go_on(
        self: &Arc<Self>,
        this: Arc<TaskRun>,
        run: BoxFuture<'static, ()>,
        generation: u64,
    ) -> Result<bool, StoreError> {
        let task_id = this.task_id.clone();
        // Enter the running set (unless it asked, which entered it), so the task can be
        // canceled once it is stored.
        {
            let mut running = self.running();
            if !running.contains_key(&task_id) {
                running.insert(task_id.clone(), running_entry(&this, generation, None));
            }
        }
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
                rt.forget(&this.task_id, generation);
            }
        });
        self.set_abort(&task_id, generation, handle.abort_handle());
        match stored_rx.await {
            Ok(Ok(())) => Ok(false),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StoreError::Backend(
                "the task could not be stored (its run ended first)".into(),
            )),
        }
    }

    /// The write of a staged task whose skill finished in its first poll: the task, finished,
    /// with its whole log, then let go of if it ended waiting for the user.
    fn store_finished(
        self: &Arc<Self>,
        run: Arc<TaskRun>,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        let rt = self.clone();
        let held_in = run.staging.as_ref().and_then(|s| s.held_state());
        Box::pin(async move {
            rt.store_staged(&run).await?;
            rt.release_if_interrupted(&run.task_id, held_in).await;
            Ok(())
        })
    }
}

/// Poll a run once, its panics caught: the skill's own are caught inside, but one from the
/// rest of the run (a store, an observer) must not unwind through the request's task either
/// (the task fails).
fn first_poll(
    run: &mut BoxFuture<'static, ()>,
) -> impl Future<Output = std::thread::Result<Poll<()>>> {
    std::future::poll_fn(move |cx| {
        Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| {
            run.as_mut().poll(cx)
        })))
    })
}

impl TaskRun {
    /// Keep the task as the staged write stores it, for [`take_written_task`]
    /// (Self::take_written_task): a caller answering with the typed task need not read it
    /// back. Nothing for a plain run.
    pub(crate) fn keep_written_task(&self) {
        if let Some(staging) = &self.staging {
            staging.keep_written.store(true, Ordering::Relaxed);
        }
    }

    /// The task as the staged write stored it, if [`keep_written_task`]
    /// (Self::keep_written_task) asked for it and the write happened.
    pub(crate) fn take_written_task(&self) -> Option<Box<Task>> {
        let staging = self.staging.as_ref()?;
        staging
            .written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Whether the run's task is still held back: its first poll's caller writes it, and
    /// lets go of it.
    pub(super) fn is_held(&self) -> bool {
        self.staging.as_ref().is_some_and(Staging::is_held)
    }

    /// The owner of the task while it is held (it can be read nowhere else then).
    pub(super) fn held_owner(&self) -> Option<Option<Owner>> {
        self.staging.as_ref().and_then(Staging::held_owner)
    }

    /// The history the task would have now, while it is held.
    pub(super) fn held_history(&self) -> Option<Vec<Message>> {
        self.staging.as_ref().and_then(Staging::held_history)
    }

    /// The running-set entry, with `waiter`, of a held task whose skill asks in its first
    /// poll: it enters the running set only now. `None` if the task is not held.
    pub(super) fn held_entry(&self, waiter: oneshot::Sender<Message>) -> Option<Running> {
        let staging = self.staging.as_ref().filter(|s| s.is_held())?;
        let generation = staging.run.load(Ordering::Relaxed);
        Some(running_entry(self, generation, Some(waiter)))
    }
}

impl Runtime {
    /// Append an event for `run`'s task: held while the task is staged ([`Staging`]),
    /// otherwise [`emit`](Self::emit)ted.
    pub(super) fn emit_for<'a>(&'a self, run: &'a TaskRun, event: StreamResponse) -> Emitting<'a> {
        use futures::future::Either;
        if let Some(staging) = &run.staging {
            let mut stage = staging.lock();
            if let Stage::Held { .. } = &*stage {
                return Either::Left(std::future::ready(stage.hold(event)));
            }
            drop(stage);
            let task_id = &run.task_id;
            return Either::Right(Box::pin(self.emit_once_stored(staging, task_id, event)));
        }
        Either::Right(Box::pin(self.emit(&run.task_id, event)))
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

    /// Write `run`'s staged task with the events held so far (nothing if it is not staged, or
    /// is written already). Once this returns, every event goes to the store.
    pub(super) async fn store_staged(&self, run: &TaskRun) -> Result<(), StoreError> {
        let Some(staging) = &run.staging else {
            return Ok(());
        };
        let held = {
            let mut stage = staging.lock();
            match std::mem::replace(&mut *stage, Stage::Writing) {
                Stage::Held {
                    task,
                    skill_id,
                    owner,
                    events,
                    state,
                } => (task, skill_id, owner, events, state),
                other => {
                    *stage = other;
                    return Ok(());
                }
            }
        };
        let _done = WriteDone(staging);
        let (task, skill_id, owner, events, state) = held;
        let task_id = &run.task_id;
        let written = staging
            .keep_written
            .load(Ordering::Relaxed)
            .then(|| crate::store::task_after(&task, &events).ok().map(Box::new))
            .flatten();
        let observed = (!self.observers.is_empty()).then(|| events.clone());
        // No doorbell to ring: nobody could subscribe to a task whose id was never out.
        let last = if state.is_terminal() && self.bus.releases_logs() {
            self.store
                .create_task_with_released_log(*task, Some(skill_id), owner, events)
                .await?
        } else {
            self.store
                .create_task_with_events(*task, Some(skill_id), owner, events)
                .await?
        };
        if let Some(task) = written {
            *staging.written.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        }
        if let Some(events) = observed {
            let first = last + 1 - events.len() as Seq;
            for (seq, event) in (first..).zip(&events) {
                for o in &self.observers {
                    o.on_event(task_id, seq, event);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::protocol::{Artifact, Part, TaskArtifactUpdateEvent, TaskStatus};
    use crate::runtime::{ExecutionConfig, status_update};
    use crate::store::{InMemoryTaskManager, TaskManager, TaskView};

    fn staged(id: &str) -> (Arc<Runtime>, Arc<dyn TaskManager>, Arc<TaskRun>) {
        let store: Arc<dyn TaskManager> = Arc::new(InMemoryTaskManager::default());
        let rt = Arc::new(Runtime::new(store.clone(), ExecutionConfig::default()));
        let task = Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![Message::user_text("hi")],
            ..Task::default()
        };
        let run = rt.staged_run(task, "s", None, Message::user_text("hi"), None, None);
        (rt, store, run)
    }

    fn artifact_event(run: &TaskRun) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: run.task_id.clone(),
            context_id: run.context_id.clone(),
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
        let (_rt, store, run) = staged("t");
        assert_eq!(run.emit_status(TaskState::Working, None).await, Ok(2));
        let staging = run.staging.as_ref().expect("staged");
        // The write begins (as `store_staged` begins it).
        let held = std::mem::replace(&mut *staging.lock(), Stage::Writing);
        let emitter = tokio::spawn({
            let run = run.clone();
            async move { run.emit_status(TaskState::Completed, None).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!emitter.is_finished(), "the event waits for the write");
        let Stage::Held { task, events, .. } = held else {
            panic!("the task was held")
        };
        assert_eq!(
            store
                .create_task_with_events(*task, None, None, events)
                .await,
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
        let (rt, store, run) = staged("held");
        let (_, _, stored_run) = staged("stored");
        // The same task, stored as it goes.
        let Some(Stage::Held { task, .. }) = stored_run
            .staging
            .as_ref()
            .map(|s| std::mem::replace(&mut *s.lock(), Stage::Stored))
        else {
            panic!("the task was held")
        };
        store.create_task(*task, None, None).await.unwrap();
        let done = |run: &TaskRun| {
            status_update(&run.task_id, &run.context_id, TaskState::Completed, None)
        };
        let working =
            |run: &TaskRun| status_update(&run.task_id, &run.context_id, TaskState::Working, None);
        assert_eq!(rt.emit_for(&run, done(&run)).await, Ok(2));
        assert_eq!(rt.emit_for(&stored_run, done(&stored_run)).await, Ok(2));
        for (name, event) in [
            (
                "an artifact after the end",
                artifact_event as fn(&TaskRun) -> _,
            ),
            ("a transition out of a terminal state", working),
        ] {
            let held = rt.emit_for(&run, event(&run)).await;
            let stored = rt.emit_for(&stored_run, event(&stored_run)).await;
            assert!(held.is_err(), "{name}: {held:?}");
            assert_eq!(
                format!("{held:?}").replace("held", "_"),
                format!("{stored:?}").replace("stored", "_"),
                "{name}"
            );
        }
        assert_eq!(rt.store_staged(&run).await, Ok(()));
        assert_eq!(
            rt.store_staged(&run).await,
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
            run.history().await.len(),
            1,
            "a stored task's history is read from the store"
        );
    }
}
