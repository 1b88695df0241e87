//! Checks of push configs, retention, recovery queries and JSON fidelity.

use serde_json::json;

use a2a_kit::protocol::{
    Artifact, AuthenticationInfo, Message, Metadata, Part, Role, StreamResponse, Task, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use a2a_kit::store::{EventRecord, StoreError, TaskView, apply_event};

use crate::fixtures::*;
use crate::*;

/// Push configs: put (insert or replace by id, creation order kept), get, list, delete, per-task
/// isolation, missing tasks.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_configs(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_configs(s: Store) {
    let b = base();
    create(&s, &new_task("p1", "c", TaskState::Working, b)).await;
    create(&s, &new_task("p2", "c", TaskState::Completed, b)).await;
    let a = push("p1", "a", "https://example.com/a");
    let mut bb = push("p1", "b", "https://example.com/b");
    bb.authentication = Some(AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("secret".into()),
    });
    bb.tenant = Some("tenant-1".into());
    let c = push("p2", "a", "https://example.com/other");
    for cfg in [&a, &bb, &c] {
        assert_eq!(s.put_push_config(cfg.clone()).await, Ok(()));
    }
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![a.clone(), bb.clone()]),
        "creation order"
    );
    assert_eq!(
        s.list_push_configs("p2").await,
        Ok(vec![c.clone()]),
        "configs are per task (same id, other task)"
    );
    assert_eq!(s.get_push_config("p1", "b").await, Ok(Some(bb.clone())));
    assert_eq!(s.get_push_config("p2", "a").await, Ok(Some(c.clone())));
    assert_eq!(s.get_push_config("p1", "zzz").await, Ok(None));

    let mut a2 = a.clone();
    a2.url = "https://example.com/a-v2".into();
    a2.token = None;
    s.put_push_config(a2.clone()).await.expect("replace");
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![a2.clone(), bb.clone()]),
        "a replaced config keeps its place"
    );
    assert_eq!(s.get_push_config("p1", "a").await, Ok(Some(a2.clone())));

    assert_eq!(s.delete_push_config("p1", "a").await, Ok(true));
    assert_eq!(
        s.delete_push_config("p1", "a").await,
        Ok(false),
        "deleting twice"
    );
    assert_eq!(s.get_push_config("p1", "a").await, Ok(None));
    assert_eq!(
        s.list_push_configs("p2").await,
        Ok(vec![c.clone()]),
        "deleting p1/a leaves p2/a"
    );
    s.put_push_config(a.clone()).await.expect("put again");
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![bb.clone(), a.clone()]),
        "a re-created config goes last"
    );

    let mut orphan = push("p1", "o", "https://example.com/o");
    orphan.task_id = None;
    assert!(
        matches!(
            s.put_push_config(orphan).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a config needs a taskId"
    );
    let missing = || StoreError::TaskNotFound("missing".into());
    assert_eq!(
        s.put_push_config(push("missing", "a", "https://example.com"))
            .await,
        Err(missing())
    );
    assert_eq!(s.get_push_config("missing", "a").await, Err(missing()));
    assert_eq!(s.list_push_configs("missing").await, Err(missing()));
    assert_eq!(s.delete_push_config("missing", "a").await, Err(missing()));
    assert_eq!(
        full(&s, "p1").await.last_seq,
        1,
        "push configs log no event"
    );
}

/// Retention: `purge_terminal_before` deletes terminal tasks that ended strictly before the
/// cutoff, with their log and push configs, and never a live task.
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
    s.put_push_config(push("old-failed", "cfg", "https://example.com/hook"))
        .await
        .expect("push");
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
        let missing = StoreError::TaskNotFound(gone.into());
        assert_eq!(
            s.events_after(gone, 0, 10).await,
            Err(missing.clone()),
            "{gone}'s log is purged"
        );
        assert_eq!(
            s.list_push_configs(gone).await,
            Err(missing),
            "{gone}'s push configs are purged"
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

    // A purged id can be used again, with a fresh log and no configs.
    let again = new_task("old-failed", "c2", TaskState::Submitted, b);
    create(&s, &again).await;
    assert_eq!(
        all_events(&s, "old-failed").await,
        vec![EventRecord {
            seq: 1,
            event: StreamResponse::Task(again.clone())
        }]
    );
    assert_eq!(s.list_push_configs("old-failed").await, Ok(vec![]));
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
    let mut meta = Metadata::new();
    meta.insert(
        "nested".into(),
        json!({"a": [1, 2.5, -3, true, null, "é✓"], "big": 9_007_199_254_740_993u64}),
    );
    let rich = Message {
        message_id: "rich-1".into(),
        context_id: Some("ctx-é".into()),
        task_id: Some("rich".into()),
        role: Role::User,
        parts: vec![
            Part::text("multi\nline \"quoted\" ✓"),
            Part::data(json!({"k": {"deep": [null, 0.1]}})).with_metadata(meta.clone()),
            Part::raw(vec![0u8, 1, 2, 254, 255])
                .with_filename("bytes.bin")
                .with_media_type("application/octet-stream"),
            Part::url("https://example.com/f.pdf")
                .with_media_type("application/pdf")
                .with_filename("f.pdf"),
        ],
        metadata: Some(meta.clone()),
        extensions: vec!["https://example.com/ext/v1".into()],
        reference_task_ids: vec!["older-task".into()],
    };
    let t = Task {
        id: "rich".into(),
        context_id: "ctx-é".into(),
        status: TaskStatus {
            state: TaskState::Submitted,
            message: Some(rich.clone()),
            timestamp: Some(ts(b)),
        },
        artifacts: vec![Artifact {
            artifact_id: "art-✓".into(),
            name: Some("name".into()),
            description: Some("desc".into()),
            parts: rich.parts.clone(),
            metadata: Some(meta.clone()),
            extensions: vec!["https://example.com/ext/v1".into()],
        }],
        history: vec![rich.clone()],
        metadata: Some(meta.clone()),
    };
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
    let mut cfg = push("rich", "cfg-✓", "https://example.com/hook?x=1&y=é");
    cfg.authentication = Some(AuthenticationInfo {
        scheme: "Basic".into(),
        credentials: None,
    });
    s.put_push_config(cfg.clone()).await.expect("push");
    assert_eq!(s.get_push_config("rich", "cfg-✓").await, Ok(Some(cfg)));
}
