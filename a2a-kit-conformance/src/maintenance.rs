//! Checks of retention, recovery queries and JSON fidelity.

use a2a_kit::protocol::{Part, Role, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use a2a_kit::store::{EventRecord, StoreError, TaskView, apply_event};

use crate::fixtures::*;
use crate::*;

/// Retention: `purge_terminal_before` deletes terminal tasks that ended strictly before the
/// cutoff, with their log, and never a live task (their push configs: see
/// [`push_configs_go_with_their_task`](crate::push_configs_go_with_their_task)).
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::retention(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn retention(s: Store) {
    let b = base();
    let cut = b - 5_000;
    create(
        &s,
        &new_task("old-done", "c", TaskState::Completed, b - 10_000),
    )
    .await;
    create(
        &s,
        &new_task("old-failed", "c", TaskState::Working, b - 20_000),
    )
    .await;
    append(
        &s,
        "old-failed",
        artifact_ev(
            "old-failed",
            "c",
            artifact("r", vec![Part::text("r")]),
            false,
            true,
        ),
    )
    .await;
    append(
        &s,
        "old-failed",
        status_ev(
            "old-failed",
            "c",
            TaskState::Failed,
            b - 9_000,
            Some(msg(Role::Agent, "of", "x")),
        ),
    )
    .await;
    create(&s, &new_task("at-cut", "c", TaskState::Rejected, cut)).await;
    create(
        &s,
        &new_task("old-live", "c", TaskState::Working, b - 50_000),
    )
    .await;
    create(
        &s,
        &new_task("old-input", "c", TaskState::InputRequired, b - 50_000),
    )
    .await;
    create(
        &s,
        &new_task("old-submitted", "c", TaskState::Submitted, b - 50_000),
    )
    .await;
    create(&s, &new_task("new-done", "c", TaskState::Canceled, b)).await;

    assert_eq!(
        s.purge_terminal_before(ts(cut)).await,
        Ok(2),
        "two terminal tasks ended before the cutoff"
    );
    for gone in ["old-done", "old-failed"] {
        assert_eq!(
            s.get_task(gone, TaskView::FULL).await,
            Ok(None),
            "{gone} is purged"
        );
        assert_eq!(
            s.events_after(gone, 0, 10).await,
            Err(StoreError::TaskNotFound(gone.into())),
            "{gone}'s log is purged"
        );
    }
    for kept in [
        "at-cut",
        "old-live",
        "old-input",
        "old-submitted",
        "new-done",
    ] {
        assert!(
            s.get_task(kept, TaskView::FULL)
                .await
                .expect("get")
                .is_some(),
            "{kept} is kept"
        );
    }
    assert_eq!(s.list_tasks(&query(100)).await.expect("list").total_size, 5);
    assert_eq!(
        s.purge_terminal_before(ts(cut)).await,
        Ok(0),
        "purging again deletes nothing"
    );
    assert_eq!(
        s.purge_terminal_before(ts(b + 1)).await,
        Ok(2),
        "the cutoff is exclusive; later cutoffs take more"
    );
    assert_eq!(
        sorted(ids(&walk(&s, query(100)).await)),
        ["old-input", "old-live", "old-submitted"],
        "live tasks are never purged"
    );

    // A purged id can be used again, with a fresh log.
    let again = new_task("old-failed", "c2", TaskState::Submitted, b);
    create(&s, &again).await;
    assert_eq!(
        all_events(&s, "old-failed").await,
        vec![EventRecord {
            seq: 1,
            event: StreamResponse::Task(again.clone())
        }]
    );
    assert_eq!(full(&s, "old-failed").await.task, again);
}

/// `task_ids_in_states` (start-up recovery) finds exactly the tasks in the given states.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::task_ids_in_states(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn task_ids_in_states(s: Store) {
    let b = base();
    for (id, state) in [
        ("s1", TaskState::Submitted),
        ("s2", TaskState::Submitted),
        ("w1", TaskState::Working),
        ("i1", TaskState::InputRequired),
        ("d1", TaskState::Completed),
        ("x1", TaskState::Submitted),
    ] {
        create(&s, &new_task(id, "c", state, b)).await;
    }
    append(
        &s,
        "x1",
        status_ev("x1", "c", TaskState::Failed, b + 1, None),
    )
    .await;
    let q = |states: &'static [TaskState]| {
        let s = s.clone();
        async move {
            sorted(
                s.task_ids_in_states(states)
                    .await
                    .expect("task_ids_in_states"),
            )
        }
    };
    assert_eq!(
        q(&[TaskState::Submitted, TaskState::Working]).await,
        ["s1", "s2", "w1"]
    );
    assert_eq!(
        q(&[TaskState::Working, TaskState::Working]).await,
        ["w1"],
        "each task once"
    );
    assert_eq!(
        q(&[TaskState::Failed]).await,
        ["x1"],
        "the current state counts"
    );
    assert_eq!(q(&[TaskState::AuthRequired]).await, Vec::<String>::new());
    assert_eq!(q(&[]).await, Vec::<String>::new());
}

/// Every field of tasks, messages, parts, artifacts and events survives storage unchanged.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::json_fidelity(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn json_fidelity(s: Store) {
    let b = base();
    let meta = rich_metadata();
    let rich = rich_message("rich-1", "rich", "ctx-é");
    let t = rich_task("rich", "ctx-é", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut ev = TaskStatusUpdateEvent {
        task_id: "rich".into(),
        context_id: "ctx-é".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(rich.clone()),
            timestamp: Some(ts(b + 1)),
        },
        metadata: Some(meta.clone()),
    };
    append(&s, "rich", StreamResponse::StatusUpdate(ev.clone())).await;
    ev.status.state = TaskState::AuthRequired;
    append(&s, "rich", StreamResponse::StatusUpdate(ev.clone())).await;
    let mut model = t.clone();
    for e in all_events(&s, "rich").await.iter().skip(1) {
        apply_event(&mut model, &e.event).expect("apply");
    }
    assert_eq!(full(&s, "rich").await.task, model);
    assert_eq!(
        all_events(&s, "rich").await[0].event,
        StreamResponse::Task(t),
        "the snapshot is stored as given"
    );
    assert_eq!(
        all_events(&s, "rich").await[2].event,
        StreamResponse::StatusUpdate(ev)
    );
}
