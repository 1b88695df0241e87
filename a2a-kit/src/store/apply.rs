//! The semantics every store shares: how a status or artifact event changes a task
//! ([`apply_event`]), and the checks made before it does. One place, so the stores cannot
//! drift apart (the conformance suite checks them against it).

use super::StoreError;
use crate::protocol::{StreamResponse, Task, TaskState};

/// A new task as its first `events` leave it, checked as
/// [`create_task_with_events`](super::TaskManager::create_task_with_events) must: a state a task may
/// start in, then each event as [`apply_event`] allows it.
pub(crate) fn task_after(task: &Task, events: &[StreamResponse]) -> Result<Task, StoreError> {
    crate::task::TaskStateMachine::check_initial(task.status.state)?;
    let mut last = task.clone();
    for event in events {
        apply_event(&mut last, event)?;
    }
    Ok(last)
}

/// Apply a status or artifact event to a task in place: the shared semantics of every store.
///
/// Every check runs before the first change, so on `Err` the task is untouched and stores may
/// apply events to their stored task directly.
pub fn apply_event(task: &mut Task, event: &StreamResponse) -> Result<(), StoreError> {
    match event {
        StreamResponse::StatusUpdate(u) => {
            check_status_update(task, u)?;
            if let Some(m) = &u.status.message {
                task.history.push(m.clone());
            }
            task.status = u.status.clone();
            merge_metadata(&mut task.metadata, u.metadata.as_ref());
            Ok(())
        }
        StreamResponse::ArtifactUpdate(u) => {
            check_artifact_update(task, u)?;
            let incoming = &u.artifact;
            let existing = task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == incoming.artifact_id);
            match (existing, u.append) {
                (Some(a), true) => {
                    a.parts.extend(
                        incoming
                            .parts
                            .iter()
                            .filter(|p| !is_closing_part(p))
                            .cloned(),
                    );
                    if incoming.metadata.is_some() {
                        a.metadata.clone_from(&incoming.metadata);
                    }
                }
                (Some(a), false) => *a = incoming.clone(),
                (None, _) => {
                    let mut a = incoming.clone();
                    a.parts.retain(|p| !is_closing_part(p));
                    task.artifacts.push(a);
                }
            }
            Ok(())
        }
        StreamResponse::Task(_) | StreamResponse::Message(_) => Err(not_appendable()),
    }
}

/// A status update's metadata, merged into its task's (key by key, the update's value
/// winning): how a skill records facts on its task as it runs (token usage, the remote tasks
/// it delegated to). Every store applies it the same way.
pub(crate) fn merge_metadata(
    task: &mut Option<crate::protocol::Metadata>,
    update: Option<&crate::protocol::Metadata>,
) {
    let Some(update) = update.filter(|u| !u.is_empty()) else {
        return;
    };
    let task = task.get_or_insert_with(Default::default);
    for (k, v) in update {
        task.insert(k.clone(), v.clone());
    }
}

/// An event names the task it is applied to.
fn same_task(kind: &str, event_task_id: &str, task: &Task) -> Result<(), StoreError> {
    if event_task_id == task.id {
        return Ok(());
    }
    Err(StoreError::InvalidEvent(format!(
        "{kind} update for task {event_task_id} applied to task {}",
        task.id
    )))
}

/// The checks [`apply_event`] makes before a status update changes anything.
pub(crate) fn check_status_update(
    task: &Task,
    u: &crate::protocol::TaskStatusUpdateEvent,
) -> Result<(), StoreError> {
    same_task("status", &u.task_id, task)?;
    crate::task::TaskStateMachine::check(task.status.state, u.status.state)?;
    Ok(())
}

/// The checks [`apply_event`] makes before an artifact update changes anything.
pub(crate) fn check_artifact_update(
    task: &Task,
    u: &crate::protocol::TaskArtifactUpdateEvent,
) -> Result<(), StoreError> {
    same_task("artifact", &u.task_id, task)?;
    check_takes_artifacts(&task.id, task.status.state)
}

/// A task in `state` takes artifacts unless it has ended.
pub(crate) fn check_takes_artifacts(task_id: &str, state: TaskState) -> Result<(), StoreError> {
    if state.is_terminal() {
        return Err(StoreError::InvalidEvent(format!(
            "task {task_id} is {} and cannot take more artifacts",
            state.as_str()
        )));
    }
    Ok(())
}

/// The refusal of an event that is neither a status nor an artifact update.
pub(crate) fn not_appendable() -> StoreError {
    StoreError::InvalidEvent("only status and artifact updates can be appended to a task".into())
}

/// The empty text part that closes a streamed artifact (see `ArtifactWriter::finish`); stores
/// drop it from the assembled artifact since it carries no content.
pub(crate) fn is_closing_part(p: &crate::protocol::Part) -> bool {
    matches!(&p.content, crate::protocol::PartContent::Text(t) if t.is_empty())
        && p.metadata.is_none()
        && p.filename.is_none()
}
