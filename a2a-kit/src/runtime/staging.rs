//! Staging: a blocking SendMessage's new task held back from the store during its skill's
//! first poll, so that a quick skill's task is written once, finished, with its whole log.
//! Private to the runtime; the request path only chooses whether a new run is staged.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use futures::future::BoxFuture;

use super::{Runtime, TaskRun};
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
    pub(super) run: AtomicU64,
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
    pub(super) fn new(task: Task, skill_id: &str, owner: Option<Owner>) -> Self {
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
        }
    }

    /// The state the held task is in; `None` once it is written.
    pub(super) fn held_state(&self) -> Option<TaskState> {
        match &*self.lock() {
            Stage::Held { state, .. } => Some(*state),
            _ => None,
        }
    }

    pub(super) fn is_held(&self) -> bool {
        matches!(*self.lock(), Stage::Held { .. })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The owner of the task, if it is still held.
    pub(super) fn held_owner(&self) -> Option<Option<Owner>> {
        match &*self.lock() {
            Stage::Held { owner, .. } => Some(owner.clone()),
            _ => None,
        }
    }

    /// The history the task would have now, if it is still held.
    pub(super) fn held_history(&self) -> Option<Vec<Message>> {
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
        let run = rt.staged_run(task, "s", None, Message::user_text("hi"));
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
