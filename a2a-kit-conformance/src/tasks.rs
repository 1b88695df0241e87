//! Checks of a task and its changes: creation, views, status and artifact updates, history.

use serde_json::json;

use a2a_kit::protocol::{
    Artifact, Metadata, Part, Role, StreamResponse, Task, TaskState, TaskStatus,
};
use a2a_kit::store::{EventRecord, Seq, StoreError, TaskView};

use crate::fixtures::*;
use crate::*;

/// create_task / get_task basics: the snapshot is event 1, duplicates and UNSPECIFIED are
/// refused, a missing task reads as `None`.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::create_and_get(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn create_and_get(s: Store) {
    let b = base();
    let mut t = new_task("t1", "c1", TaskState::Submitted, b);
    t.metadata = Some(
        json!({"k": "v", "n": 1})
            .as_object()
            .cloned()
            .unwrap_or_default()
            .into(),
    );
    t.artifacts
        .push(artifact("a0", vec![Part::text("preloaded")]));
    assert_eq!(
        s.create_task(t.clone(), Some("skill-a".into()), None).await,
        Ok(1)
    );
    let rec = full(&s, "t1").await;
    assert_eq!(rec.task, t, "get_task returns the task as created");
    assert_eq!(rec.skill_id.as_deref(), Some("skill-a"));
    assert_eq!(rec.last_seq, 1);

    assert_eq!(
        s.get_task("missing", TaskView::FULL).await,
        Ok(None),
        "a missing task reads as None"
    );
    assert_eq!(
        s.create_task(new_task("t1", "c9", TaskState::Working, b), None, None)
            .await,
        Err(StoreError::TaskExists("t1".into())),
        "a second task with the same id is refused"
    );
    assert_eq!(
        full(&s, "t1").await.task,
        t,
        "a refused create changes nothing"
    );
    assert!(
        matches!(
            s.create_task(new_task("t2", "c1", TaskState::Unspecified, b), None, None)
                .await,
            Err(StoreError::IllegalTransition(_))
        ),
        "a task cannot start UNSPECIFIED"
    );
    assert_eq!(
        s.get_task("t2", TaskView::FULL).await,
        Ok(None),
        "a refused create stores nothing"
    );

    // Any other initial state is accepted, with or without a skill.
    for (id, state) in [
        ("w", TaskState::Working),
        ("d", TaskState::Completed),
        ("i", TaskState::InputRequired),
    ] {
        let t = new_task(id, "c2", state, b);
        create(&s, &t).await;
        let rec = full(&s, id).await;
        assert_eq!(rec.task, t);
        assert_eq!(rec.skill_id, None);
    }
    assert_eq!(
        all_events(&s, "t1").await,
        vec![EventRecord {
            seq: 1,
            event: StreamResponse::Task(t)
        }],
        "event 1 is the creation snapshot"
    );
}

/// [`TaskView`] trimming in get_task: history length none / 0 / n / more than stored, artifacts
/// on and off.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::task_views(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn task_views(s: Store) {
    // One clock reading: `base()` moves when a second boundary passes between two calls.
    let b = base();
    let mut t = new_task("v", "c", TaskState::Working, b);
    for i in 1..5 {
        t.history.push(msg(
            if i % 2 == 0 { Role::User } else { Role::Agent },
            &format!("v-m{i}"),
            &format!("m{i}"),
        ));
    }
    t.artifacts = vec![
        artifact("x", vec![Part::text("1")]),
        artifact("y", vec![Part::text("2")]),
    ];
    create(&s, &t).await;
    check_views(&s, &t, 1).await;
    // Finished, with a status message (which is also the last history message): stores may
    // hold finished tasks differently; every view must still read back the same.
    let done = status_msg("v-done", "done");
    append(
        &s,
        "v",
        status_ev("v", "c", TaskState::Completed, b + 1, Some(done.clone())),
    )
    .await;
    t.status = TaskStatus {
        state: TaskState::Completed,
        message: Some(done.clone()),
        timestamp: Some(ts(b + 1)),
    };
    t.history.push(done);
    check_views(&s, &t, 2).await;
}

/// Every view of `t` (5 history messages at creation, 2 artifacts) through `get_task` and
/// `write_task_json`, whose bytes must be exactly the JSON of the typed task.
pub(crate) async fn check_views(s: &Store, t: &Task, last_seq: Seq) {
    let extra = t.history.len() - 5;
    for (view, history, artifacts) in [
        (TaskView::FULL, 5, 2),
        (
            TaskView {
                history_length: None,
                include_artifacts: false,
            },
            5,
            0,
        ),
        (
            TaskView {
                history_length: Some(0),
                include_artifacts: true,
            },
            0,
            2,
        ),
        (
            TaskView {
                history_length: Some(2),
                include_artifacts: true,
            },
            2,
            2,
        ),
        (
            TaskView {
                history_length: Some(5),
                include_artifacts: false,
            },
            5,
            0,
        ),
        (
            TaskView {
                history_length: Some(50),
                include_artifacts: true,
            },
            5,
            2,
        ),
        (TaskView::default(), 5, 0),
    ] {
        let got = s
            .get_task("v", view)
            .await
            .expect("get_task")
            .expect("task");
        let mut want = t.clone();
        view.apply(&mut want);
        assert_eq!(got.task, want, "view {view:?}");
        let history = match view.history_length {
            Some(n) => n.min(5 + extra),
            None => history + extra,
        };
        assert_eq!(
            (got.task.history.len(), got.task.artifacts.len()),
            (history, artifacts),
            "view {view:?}"
        );
        assert_eq!(got.last_seq, last_seq);
        let mut json = b"[prefix]".to_vec();
        assert!(
            s.write_task_json("v", view, &mut json)
                .await
                .expect("write_task_json"),
            "write_task_json found no task"
        );
        assert_eq!(
            String::from_utf8_lossy(&json),
            format!(
                "[prefix]{}",
                serde_json::to_string(&want).expect("serialize")
            ),
            "write_task_json appends the task's JSON, view {view:?}"
        );
    }
}

/// Status updates: state, status and history change together; refused events change nothing.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::status_updates(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn status_updates(s: Store) {
    let b = base();
    let t = new_task("s", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut log = vec![StreamResponse::Task(t.clone())];

    let e2 = status_ev("s", "c", TaskState::Working, b + 1, None);
    assert_eq!(append(&s, "s", e2.clone()).await, 2);
    log.push(e2);
    let rec = full(&s, "s").await;
    assert_eq!(rec.task.status.state, TaskState::Working);
    assert_eq!(rec.task.status.timestamp, Some(ts(b + 1)));
    assert_eq!(
        rec.task.history, t.history,
        "a status without a message adds no history"
    );
    assert_eq!(rec.last_seq, 2);

    let m1 = status_msg("s-m1", "thinking");
    let e3 = status_ev("s", "c", TaskState::Working, b + 2, Some(m1.clone()));
    assert_eq!(append(&s, "s", e3.clone()).await, 3);
    log.push(e3);
    let rec = full(&s, "s").await;
    assert_eq!(
        rec.task.status.message.as_ref(),
        Some(&m1),
        "the status carries its message"
    );
    assert_eq!(
        rec.task.history.last(),
        Some(&m1),
        "a status message is appended to the history"
    );
    assert_eq!(rec.task.history.len(), 2);

    let m3 = msg(Role::Agent, "s-m3", "which city?");
    let e4 = status_ev("s", "c", TaskState::InputRequired, b + 3, Some(m3.clone()));
    assert_eq!(append(&s, "s", e4.clone()).await, 4);
    log.push(e4);

    let before = full(&s, "s").await;
    // Refused events: wrong task, wrong kind, illegal transition, unknown task.
    let wrong_task = status_ev("other", "c", TaskState::Working, b + 4, None);
    assert!(
        matches!(
            s.append_event("s", wrong_task).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "wrong taskId"
    );
    assert!(
        matches!(
            s.append_event("s", StreamResponse::Task(t.clone())).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a Task cannot be appended"
    );
    assert!(
        matches!(
            s.append_event("s", StreamResponse::Message(m3.clone()))
                .await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a Message cannot be appended"
    );
    let back = status_ev(
        "s",
        "c",
        TaskState::Submitted,
        b + 4,
        Some(msg(Role::Agent, "s-x", "x")),
    );
    assert!(
        matches!(
            s.append_event("s", back).await,
            Err(StoreError::IllegalTransition(_))
        ),
        "INPUT_REQUIRED -> SUBMITTED is illegal"
    );
    assert_eq!(
        s.append_event("nope", status_ev("nope", "c", TaskState::Working, b, None))
            .await,
        Err(StoreError::TaskNotFound("nope".into()))
    );
    assert_eq!(full(&s, "s").await, before, "refused events change nothing");
    assert_eq!(
        all_events(&s, "s").await.len(),
        4,
        "refused events are not logged"
    );

    let done = status_ev(
        "s",
        "c",
        TaskState::Completed,
        b + 5,
        Some(msg(Role::Agent, "s-m5", "done")),
    );
    assert_eq!(
        append(&s, "s", done.clone()).await,
        5,
        "refused events do not use up a sequence number"
    );
    log.push(done);
    assert!(
        matches!(
            s.append_event("s", status_ev("s", "c", TaskState::Working, b + 6, None))
                .await,
            Err(StoreError::IllegalTransition(_))
        ),
        "a terminal task cannot change state"
    );
    assert!(
        matches!(
            s.append_event(
                "s",
                artifact_ev(
                    "s",
                    "c",
                    artifact("late", vec![Part::text("x")]),
                    false,
                    true
                )
            )
            .await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a terminal task takes no artifacts"
    );
    let got: Vec<StreamResponse> = all_events(&s, "s")
        .await
        .into_iter()
        .map(|r| r.event)
        .collect();
    assert_eq!(got, log, "the log holds exactly the accepted events");
}

/// Artifact updates: new, appended (closing empty parts dropped), replaced in place, metadata.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::artifact_updates(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn artifact_updates(s: Store) {
    let b = base();
    create(&s, &new_task("a", "c", TaskState::Working, b)).await;
    let text = |t: &str| Part::text(t);
    let closing = Part::text("");
    let ev = |a: Artifact, append: bool| artifact_ev("a", "c", a, append, false);

    assert_eq!(
        append(&s, "a", ev(artifact("x", vec![text("Hel")]), false)).await,
        2
    );
    append(&s, "a", ev(artifact("x", vec![text("lo")]), true)).await;
    let mut meta = Metadata::new();
    meta.insert("chunks".into(), json!(3));
    let mut last = artifact("x", vec![closing.clone()]);
    last.metadata = Some(meta.clone());
    append(&s, "a", artifact_ev("a", "c", last, true, true)).await;
    // A second artifact that starts with append=true and a closing part.
    append(
        &s,
        "a",
        ev(artifact("y", vec![text("y1"), closing.clone()]), true),
    )
    .await;
    let rec = full(&s, "a").await;
    assert_eq!(rec.task.artifacts.len(), 2);
    assert_eq!(
        rec.task.artifacts[0].parts,
        vec![text("Hel"), text("lo")],
        "chunks append; the closing part is dropped"
    );
    assert_eq!(
        rec.task.artifacts[0].metadata.as_ref(),
        Some(&meta),
        "an appended chunk's metadata replaces the old"
    );
    assert_eq!(rec.task.artifacts[1].parts, vec![text("y1")]);
    assert_eq!(rec.last_seq, 5);

    // Replace without append: same position, new content.
    let mut replacement = artifact("x", vec![text("new")]);
    replacement.name = Some("renamed".into());
    append(&s, "a", ev(replacement.clone(), false)).await;
    let rec = full(&s, "a").await;
    assert_eq!(
        rec.task.artifacts[0], replacement,
        "append=false replaces the artifact in place"
    );
    assert_eq!(
        rec.task.artifacts[1].artifact_id, "y",
        "other artifacts keep their order"
    );
    // Appending without metadata keeps the old metadata (none here) and the name.
    append(&s, "a", ev(artifact("x", vec![text("+")]), true)).await;
    let rec = full(&s, "a").await;
    assert_eq!(rec.task.artifacts[0].name.as_deref(), Some("renamed"));
    assert_eq!(rec.task.artifacts[0].parts, vec![text("new"), text("+")]);
    assert_eq!(
        rec.task.status.state,
        TaskState::Working,
        "artifact updates leave the status alone"
    );
    assert_eq!(
        rec.task.history.len(),
        1,
        "artifact updates leave the history alone"
    );

    let wrong = artifact_ev("b", "c", artifact("z", vec![text("z")]), false, true);
    assert!(
        matches!(
            s.append_event("a", wrong).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "wrong taskId"
    );
    assert_eq!(
        full(&s, "a").await,
        rec,
        "a refused artifact changes nothing"
    );
}

/// History: creation messages, status messages and client follow-ups (`add_message`, which logs
/// no event) in one order; `history_length` keeps the most recent.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::history_semantics(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn history_semantics(s: Store) {
    let b = base();
    let t = new_task("h", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut want = t.history.clone();
    let m1 = status_msg("h-1", "working on it");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Working, b + 1, Some(m1.clone())),
    )
    .await;
    want.push(m1);
    let q = msg(Role::Agent, "h-2", "what size?");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::InputRequired, b + 2, Some(q.clone())),
    )
    .await;
    want.push(q);
    let reply = msg(Role::User, "h-3", "large");
    assert_eq!(s.add_message("h", reply.clone()).await, Ok(()));
    want.push(reply);
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Working, b + 3, None),
    )
    .await;
    let follow = msg(Role::User, "h-4", "and blue");
    s.add_message("h", follow.clone())
        .await
        .expect("add_message");
    want.push(follow);
    let end = msg(Role::Agent, "h-5", "done");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Completed, b + 4, Some(end.clone())),
    )
    .await;
    want.push(end);

    let rec = full(&s, "h").await;
    assert_eq!(
        rec.task.history, want,
        "history keeps every message in order"
    );
    assert_eq!(rec.last_seq, 5, "add_message logs no event");
    assert_eq!(all_events(&s, "h").await.len(), 5);
    let recent = s
        .get_task(
            "h",
            TaskView {
                history_length: Some(3),
                include_artifacts: false,
            },
        )
        .await
        .expect("get")
        .expect("task");
    assert_eq!(
        recent.task.history,
        want[want.len() - 3..].to_vec(),
        "history_length keeps the most recent"
    );
    assert_eq!(
        s.add_message("missing", msg(Role::User, "x", "x")).await,
        Err(StoreError::TaskNotFound("missing".into()))
    );
}
