//! Checks of the event log: sequence numbers, replay, creation with events.

use a2a_kit::protocol::{Part, Role, StreamResponse, Task, TaskState};
use a2a_kit::store::{EventRecord, Seq, StoreError, TaskView};

use crate::fixtures::*;
use crate::*;

/// The event log: contiguous sequence numbers from 1, `events_after` windows, exact events.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::event_log(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn event_log(s: Store) {
    let b = base();
    let t = new_task("e", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut log = vec![StreamResponse::Task(t)];
    for i in 0..9i64 {
        let ev = if i % 3 == 2 {
            artifact_ev(
                "e",
                "c",
                artifact("out", vec![Part::text(format!("chunk {i}"))]),
                i > 2,
                false,
            )
        } else {
            status_ev(
                "e",
                "c",
                TaskState::Working,
                b + i,
                Some(status_msg(&format!("e-{i}"), &format!("step {i}"))),
            )
        };
        assert_eq!(
            append(&s, "e", ev.clone()).await,
            i as Seq + 2,
            "sequence numbers are contiguous"
        );
        log.push(ev);
    }
    let want: Vec<EventRecord> = log
        .iter()
        .enumerate()
        .map(|(i, ev)| EventRecord {
            seq: i as Seq + 1,
            event: ev.clone(),
        })
        .collect();
    assert_eq!(
        s.events_after("e", 0, 100).await.expect("events"),
        want,
        "events_after(0) is the whole log"
    );
    assert_eq!(
        s.events_after("e", 3, 4).await.expect("events"),
        want[3..7].to_vec(),
        "a window"
    );
    assert_eq!(
        s.events_after("e", 8, 100).await.expect("events"),
        want[8..].to_vec(),
        "the tail"
    );
    assert_eq!(
        s.events_after("e", 10, 5).await.expect("events"),
        vec![],
        "nothing after the last"
    );
    assert_eq!(
        s.events_after("e", 500, 5).await.expect("events"),
        vec![],
        "nothing past the end"
    );
    assert_eq!(
        s.events_after("e", 0, 0).await.expect("events"),
        vec![],
        "limit 0"
    );
    assert_eq!(
        s.events_after("e", 0, 1).await.expect("events"),
        want[..1].to_vec(),
        "limit 1"
    );
    assert_eq!(
        s.events_after("missing", 0, 10).await,
        Err(StoreError::TaskNotFound("missing".into()))
    );
    assert_eq!(
        full(&s, "e").await.last_seq,
        10,
        "last_seq is the last event's seq"
    );
}

/// `create_task_with_events` is `create_task` then `append_event` per event, as one write:
/// the same task, log, sequence numbers and list entry; a refused event stores nothing; a
/// duplicate id changes nothing. `create_task_with_released_log` reads back the same, its
/// finished task's log possibly the final snapshot, and takes later messages alike.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::create_with_events(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn create_with_events(s: Store) {
    let b = base();
    let task = |id: &str| {
        let mut t = new_task(id, "c", TaskState::Submitted, b);
        t.history = vec![msg(Role::User, "m0", "start")];
        t
    };
    // Scripts of events (for a task id): a quick skill, a streamed artifact, an interruption,
    // and none at all.
    type Script = fn(&str, i64) -> Vec<StreamResponse>;
    let scripts: [(&str, Script); 4] = [
        ("quick", |id, b| {
            vec![
                status_ev(id, "c", TaskState::Working, b + 1, None),
                artifact_ev(
                    id,
                    "c",
                    artifact("r", vec![Part::text("hello")]),
                    false,
                    true,
                ),
                status_ev(
                    id,
                    "c",
                    TaskState::Completed,
                    b + 2,
                    Some(msg(Role::Agent, "m1", "hello")),
                ),
            ]
        }),
        ("streamed", |id, b| {
            vec![
                status_ev(
                    id,
                    "c",
                    TaskState::Working,
                    b + 1,
                    Some(status_msg("s1", "on it")),
                ),
                artifact_ev(id, "c", artifact("r", vec![Part::text("a")]), false, false),
                artifact_ev(id, "c", artifact("r", vec![Part::text("b")]), true, false),
                artifact_ev(id, "c", artifact("r", vec![Part::text("")]), true, true),
                status_ev(id, "c", TaskState::Completed, b + 3, None),
            ]
        }),
        ("interrupted", |id, b| {
            vec![
                status_ev(id, "c", TaskState::Working, b + 1, None),
                status_ev(
                    id,
                    "c",
                    TaskState::InputRequired,
                    b + 2,
                    Some(msg(Role::Agent, "q", "which one?")),
                ),
            ]
        }),
        ("none", |_, _| Vec::new()),
    ];
    // Ids differ between the twins; everything else must not.
    fn anon_task(mut t: Task) -> Task {
        t.id = "_".into();
        t
    }
    fn anon(records: Vec<EventRecord>) -> Vec<EventRecord> {
        records
            .into_iter()
            .map(|mut r| {
                match &mut r.event {
                    StreamResponse::Task(t) => t.id = "_".into(),
                    StreamResponse::StatusUpdate(u) => u.task_id = "_".into(),
                    StreamResponse::ArtifactUpdate(u) => u.task_id = "_".into(),
                    StreamResponse::Message(_) => {}
                }
                r
            })
            .collect()
    }
    for (name, script) in scripts {
        let (one, batch) = (format!("{name}-one"), format!("{name}-batch"));
        create(&s, &task(&one)).await;
        let mut last = 1;
        for ev in script(&one, b) {
            last = append(&s, &one, ev).await;
        }
        let got = s
            .create_task_with_events(task(&batch), Some("skill".into()), None, script(&batch, b))
            .await
            .unwrap_or_else(|e| panic!("create_task_with_events({batch}): {e}"));
        assert_eq!(got, last, "{name}: the last sequence number");
        let (a, z) = (full(&s, &one).await, full(&s, &batch).await);
        assert_eq!(z.last_seq, last, "{name}: last_seq");
        assert_eq!(z.skill_id.as_deref(), Some("skill"), "{name}: the skill id");
        assert_eq!(anon_task(z.task), anon_task(a.task), "{name}: the task");
        assert_eq!(
            anon(all_events(&s, &batch).await),
            anon(all_events(&s, &one).await),
            "{name}: the event log"
        );
        assert_eq!(
            anon(s.events_after(&batch, 2, 2).await.expect("events")),
            anon(s.events_after(&one, 2, 2).await.expect("events")),
            "{name}: a window of the log"
        );
        // Released logs read back the same too.
        s.release_log(&one);
        s.release_log(&batch);
        assert_eq!(
            anon(all_events(&s, &batch).await),
            anon(all_events(&s, &one).await),
            "{name}: the event log after release_log"
        );

        // A released creation reads back as the creation then release_log: the same task,
        // and the exact log or (a finished task's) final snapshot standing for it.
        let released = format!("{name}-released");
        let got = s
            .create_task_with_released_log(
                task(&released),
                Some("skill".into()),
                None,
                script(&released, b),
            )
            .await
            .unwrap_or_else(|e| panic!("create_task_with_released_log({released}): {e}"));
        assert_eq!(got, last, "{name}: released: the last sequence number");
        let r = full(&s, &released).await;
        assert_eq!(
            (r.last_seq, r.skill_id.as_deref()),
            (last, Some("skill")),
            "{name}: released: bookkeeping"
        );
        assert_eq!(
            anon_task(r.task.clone()),
            anon_task(full(&s, &one).await.task),
            "{name}: released: the task"
        );
        let exact = anon(all_events(&s, &one).await);
        let log = anon(all_events(&s, &released).await);
        let snapshot = vec![EventRecord {
            seq: last,
            event: StreamResponse::Task(anon_task(r.task.clone())),
        }];
        if r.task.status.state.is_terminal() {
            assert!(
                log == exact || log == snapshot,
                "{name}: released: the log is exact or the final snapshot: {log:?}"
            );
        } else {
            assert_eq!(log, exact, "{name}: released: a live task keeps its log");
        }
        assert!(
            s.events_after(&released, last, 10)
                .await
                .expect("events")
                .is_empty(),
            "{name}: released: nothing after the end"
        );
        assert!(
            s.events_after(&released, 0, 0)
                .await
                .expect("events")
                .is_empty(),
            "{name}: released: a limit of 0"
        );
        for view in [
            TaskView {
                history_length: Some(1),
                include_artifacts: false,
            },
            TaskView {
                history_length: Some(0),
                include_artifacts: true,
            },
        ] {
            let (a, z) = (
                s.get_task(&one, view).await.expect("get"),
                s.get_task(&released, view).await.expect("get"),
            );
            assert_eq!(
                z.map(|r| anon_task(r.task)),
                a.map(|r| anon_task(r.task)),
                "{name}: released: {view:?}"
            );
        }
        let mut json = Vec::new();
        assert!(
            s.write_task_json(&released, TaskView::FULL, &mut json)
                .await
                .expect("json")
        );
        let parsed: Task = serde_json::from_slice(&json).expect("write_task_json writes a task");
        assert_eq!(parsed, r.task, "{name}: released: write_task_json");

        // Later changes: a follow-up message lands in both; an event is refused (or taken)
        // alike.
        let m = msg(Role::User, "later", "thanks");
        s.add_message(&one, m.clone()).await.expect("add_message");
        s.add_message(&released, m)
            .await
            .expect("add_message (released)");
        let late = |id: &str| status_ev(id, "c", TaskState::Completed, b + 9, None);
        let (a, z) = (
            s.append_event(&one, late(&one)).await,
            s.append_event(&released, late(&released)).await,
        );
        assert_eq!(
            a.is_ok(),
            z.is_ok(),
            "{name}: released: a later event: {a:?} / {z:?}"
        );
        if let (Err(a), Err(z)) = (&a, &z) {
            assert_eq!(
                std::mem::discriminant(a),
                std::mem::discriminant(z),
                "{name}: the same refusal: {a} / {z}"
            );
        }
        assert_eq!(
            anon_task(full(&s, &released).await.task),
            anon_task(full(&s, &one).await.task),
            "{name}: released: after the changes"
        );
    }
    let listed = walk(&s, query(100)).await;
    assert_eq!(listed.len(), 12, "every task is listed once");

    // Refused events (an artifact after the end, a way out of a terminal state) store
    // nothing, and the id stays free.
    let mut bad = scripts[0].1("bad", b);
    bad.push(artifact_ev(
        "bad",
        "c",
        artifact("late", vec![Part::text("x")]),
        false,
        true,
    ));
    let illegal = vec![
        status_ev("bad", "c", TaskState::Completed, b + 1, None),
        status_ev("bad", "c", TaskState::Working, b + 2, None),
    ];
    type Refusal = fn(&StoreError) -> bool;
    let cases: [(&str, Vec<StreamResponse>, Refusal); 2] = [
        ("an artifact after the end", bad, |e| {
            matches!(e, StoreError::InvalidEvent(_))
        }),
        ("a transition out of a terminal state", illegal, |e| {
            matches!(e, StoreError::IllegalTransition(_))
        }),
    ];
    for (what, events, expected) in cases {
        let refused = s
            .create_task_with_events(task("bad"), None, None, events)
            .await;
        assert!(
            refused.as_ref().is_err_and(expected),
            "{what} is refused: {refused:?}"
        );
        let stored = s.get_task("bad", TaskView::FULL).await.expect("get");
        assert!(stored.is_none(), "{what}: a refused batch leaves no task");
    }
    assert_eq!(
        s.create_task_with_events(task("bad"), None, None, scripts[0].1("bad", b))
            .await
            .expect("the id is still free"),
        4
    );

    // A duplicate id is refused and the stored task is untouched.
    let before = full(&s, "quick-one").await;
    let dup = s
        .create_task_with_events(task("quick-one"), None, None, scripts[2].1("quick-one", b))
        .await;
    assert!(
        matches!(dup, Err(StoreError::TaskExists(_))),
        "a duplicate id is refused: {dup:?}"
    );
    assert_eq!(
        full(&s, "quick-one").await,
        before,
        "the stored task is untouched"
    );
    for id in ["quick-one", "quick-released"] {
        let before = full(&s, id).await;
        let dup = s
            .create_task_with_released_log(task(id), None, None, scripts[0].1(id, b))
            .await;
        assert!(
            matches!(dup, Err(StoreError::TaskExists(_))),
            "a released creation of a duplicate id is refused: {dup:?}"
        );
        assert_eq!(full(&s, id).await, before, "{id} is untouched");
    }
}
