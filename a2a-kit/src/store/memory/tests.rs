//! The in-memory store's own tests: capacity, eviction, compact tasks and logs, and a
//! property test of the event log.

use super::*;
use crate::protocol::{
    Artifact, Part, TaskArtifactUpdateEvent, TaskRef, TaskStatus, TaskStatusUpdateEvent,
};
use proptest::prelude::*;

fn task(id: &str, state: TaskState) -> Task {
    Task {
        id: id.into(),
        context_id: "c".into(),
        status: TaskStatus::new(state),
        artifacts: vec![],
        history: vec![Message::user_text("hi")],
        metadata: None,
    }
}

fn status(id: &str, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.into(),
        context_id: "c".into(),
        status: TaskStatus::new(state),
        metadata: None,
    })
}

fn chunk(id: &str, text: &str, append: bool) -> StreamResponse {
    let mut artifact = Artifact::new(vec![Part::text(text)]);
    artifact.artifact_id = "a".into();
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: id.into(),
        context_id: "c".into(),
        artifact,
        append,
        last_chunk: false,
        metadata: None,
    })
}

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn capacity_evicts_terminal_tasks_first_and_refuses_when_all_live() {
    block(async {
        let store = InMemoryTaskManager::new(InMemoryConfig {
            max_tasks: 2,
            terminal_ttl: None,
        });
        store
            .create_task(task("done", TaskState::Completed), None, None)
            .await
            .unwrap();
        store
            .create_task(task("live1", TaskState::Working), None, None)
            .await
            .unwrap();
        store
            .create_task(task("live2", TaskState::Working), None, None)
            .await
            .unwrap();
        assert!(
            store
                .get_task("done", TaskView::FULL)
                .await
                .unwrap()
                .is_none(),
            "the terminal task made room"
        );
        let err = store
            .create_task(task("live3", TaskState::Working), None, None)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Full(2)));
        assert_eq!(store.len(), 2);
    });
}

#[test]
fn ttl_evicts_finished_tasks() {
    block(async {
        let store = InMemoryTaskManager::new(InMemoryConfig {
            max_tasks: 10,
            terminal_ttl: Some(Duration::from_millis(20)),
        });
        store
            .create_task(task("t", TaskState::Working), None, None)
            .await
            .unwrap();
        store
            .append_event("t", status("t", TaskState::Completed))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        store
            .create_task(task("u", TaskState::Working), None, None)
            .await
            .unwrap();
        assert!(store.get_task("t", TaskView::FULL).await.unwrap().is_none());
        assert!(
            store.get_task("u", TaskView::FULL).await.unwrap().is_some(),
            "live tasks are never evicted"
        );
    });
}

#[test]
fn purge_removes_only_old_terminal_tasks() {
    block(async {
        let store = InMemoryTaskManager::default();
        store
            .create_task(task("old", TaskState::Working), None, None)
            .await
            .unwrap();
        store
            .append_event("old", status("old", TaskState::Failed))
            .await
            .unwrap();
        store
            .create_task(task("live", TaskState::Working), None, None)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let n = store.purge_terminal_before(Timestamp::now()).await.unwrap();
        assert_eq!(n, 1);
        assert_eq!(store.len(), 1);
    });
}

fn done_with_message(id: &str) -> StreamResponse {
    let mut status = TaskStatus::new(TaskState::Completed);
    status.message = Some(Message::agent(vec![Part::text("bye")]));
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.into(),
        context_id: "c".into(),
        status,
        metadata: None,
    })
}

/// Runs `t` to COMPLETED (with a status message) and returns its log as written. Its
/// WORKING update carries metadata, so the log is kept as events (see
/// [`finish_quick`] for one kept as steps).
async fn finish(store: &InMemoryTaskManager, t: &str) -> Vec<EventRecord> {
    let mut working = status(t, TaskState::Working);
    if let StreamResponse::StatusUpdate(u) = &mut working {
        u.metadata = Some(serde_json::from_str(r#"{"note":1}"#).unwrap());
    }
    finish_with(store, t, working).await
}

/// [`finish`] with a plain WORKING update: every event can be rebuilt from the final task.
async fn finish_quick(store: &InMemoryTaskManager, t: &str) -> Vec<EventRecord> {
    finish_with(store, t, status(t, TaskState::Working)).await
}

async fn finish_with(
    store: &InMemoryTaskManager,
    t: &str,
    working: StreamResponse,
) -> Vec<EventRecord> {
    store
        .create_task(task(t, TaskState::Submitted), Some("s".into()), None)
        .await
        .unwrap();
    store.append_event(t, working).await.unwrap();
    store.append_event(t, chunk(t, "x", false)).await.unwrap();
    let mut log = store.events_after(t, 0, usize::MAX).await.unwrap();
    let done = done_with_message(t);
    store.append_event(t, done.clone()).await.unwrap();
    log.push(EventRecord {
        seq: 4,
        event: done,
    });
    log
}

#[test]
fn a_quick_tasks_log_is_kept_as_steps_and_stays_exact() {
    block(async {
        let store = InMemoryTaskManager::default().hot_finished(1);
        let written = finish_quick(&store, "t").await;
        {
            let inner = store.lock();
            let e = &inner.tasks["t"];
            assert!(matches!(e.body, Body::Compact { .. }));
            assert_eq!((e.steps.len(), e.events.len()), (4, 0), "kept as steps");
            assert!(inner.finished.is_empty(), "not in the window of kept logs");
        }
        let same = |log: Vec<EventRecord>, from: std::ops::Range<usize>| {
            // Timestamps are kept to the millisecond, as on the wire.
            let wire = |l: &[EventRecord]| {
                serde_json::to_value(l.iter().map(|r| (r.seq, &r.event)).collect::<Vec<_>>())
                    .unwrap()
            };
            assert_eq!(wire(&log), wire(&written[from]));
        };
        same(store.events_after("t", 0, usize::MAX).await.unwrap(), 0..4);
        // Released, and long out of any window: still exact.
        store.release_log("t");
        finish(&store, "u").await;
        finish(&store, "v").await;
        same(store.events_after("t", 1, usize::MAX).await.unwrap(), 1..4);
        same(store.events_after("t", 2, 1).await.unwrap(), 2..3);
        assert!(store.events_after("t", 4, 10).await.unwrap().is_empty());
        assert!(store.events_after("t", 0, 0).await.unwrap().is_empty());
    });
}

#[test]
fn finished_tasks_are_held_as_json_and_read_back_the_same() {
    block(async {
        let store = InMemoryTaskManager::default().hot_finished(1);
        let log = finish(&store, "old").await;
        let before = store
            .get_task("old", TaskView::FULL)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            before.task.status.message.as_ref().map(|m| m.parts.len()),
            Some(1),
            "the status message is put back when read"
        );
        assert_eq!(before.task.history.len(), 2, "and is in the history once");
        // Finished tasks are held as their JSON, in the window of kept logs or not.
        finish(&store, "new").await;
        {
            let inner = store.lock();
            assert!(matches!(inner.tasks["old"].body, Body::Compact { .. }));
            assert!(!inner.tasks["old"].hot && inner.tasks["new"].hot);
        }
        let after = store
            .get_task("old", TaskView::FULL)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after, before);
        assert!(
            matches!(
                store.lock().tasks["old"].body,
                Body::Compact {
                    status_message: Some(_),
                    ..
                }
            ),
            "the status message is stored once"
        );
        let mut json = Vec::new();
        assert!(
            store
                .write_task_json("old", TaskView::FULL, &mut json)
                .await
                .unwrap()
        );
        assert_eq!(
            json,
            serde_json::to_vec(&before.task).unwrap(),
            "and spliced back into the full JSON"
        );
        let trimmed = TaskView {
            history_length: Some(1),
            include_artifacts: false,
        };
        let t = store.get_task("old", trimmed).await.unwrap().unwrap().task;
        assert_eq!(t.history.len(), 1);
        assert!(t.artifacts.is_empty());
        // Its log was never released: it is still exact.
        assert_eq!(store.events_after("old", 0, usize::MAX).await.unwrap(), log);
        assert_eq!(
            store.events_after("old", 1, 2).await.unwrap(),
            log[1..3].to_vec()
        );
    });
}

#[test]
fn a_released_log_stays_exact_in_the_window_then_becomes_the_final_snapshot() {
    block(async {
        let store = InMemoryTaskManager::default().hot_finished(1);
        let log = finish(&store, "t").await;
        store.release_log("t");
        assert_eq!(
            store.events_after("t", 0, usize::MAX).await.unwrap(),
            log,
            "hot: a Last-Event-ID replay is still exact"
        );
        finish(&store, "u").await;
        let rec = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
        let rest = store.events_after("t", 2, usize::MAX).await.unwrap();
        assert_eq!(
            rest,
            vec![EventRecord {
                seq: 4,
                event: StreamResponse::Task(rec.task.clone()),
            }],
            "one snapshot event, under the last sequence number, stands for the rest"
        );
        assert!(
            store
                .events_after("t", 4, usize::MAX)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.events_after("t", 0, 0).await.unwrap().is_empty());
        assert_eq!(rec.last_seq, 4, "the sequence count survives");
    });
}

#[test]
fn live_tasks_keep_their_logs_whatever_is_released() {
    block(async {
        let store = InMemoryTaskManager::default().hot_finished(0);
        store
            .create_task(task("live", TaskState::Submitted), None, None)
            .await
            .unwrap();
        store.release_log("live");
        store.release_log("missing");
        assert_eq!(store.events_after("live", 0, 10).await.unwrap().len(), 1);
    });
}

#[test]
fn a_compacted_task_refuses_events_and_takes_messages() {
    block(async {
        let store = InMemoryTaskManager::default().hot_finished(0);
        finish(&store, "t").await;
        let err = store
            .append_event("t", status("t", TaskState::Working))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::IllegalTransition(_)), "{err:?}");
        let err = store
            .append_event("t", chunk("t", "late", true))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidEvent(_)), "{err:?}");
        store
            .add_message("t", Message::user_text("thanks"))
            .await
            .unwrap();
        assert!(
            matches!(store.lock().tasks["t"].body, Body::Compact { .. }),
            "still compact"
        );
        let t = store
            .get_task("t", TaskView::FULL)
            .await
            .unwrap()
            .unwrap()
            .task;
        assert_eq!(t.history.len(), 3);
        assert_eq!(t.status.state, TaskState::Completed);
        assert!(t.status.message.is_some());
    });
}

#[derive(Debug, Clone)]
enum Op {
    Status(TaskState),
    Chunk(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        prop::sample::select(TaskState::ALL.to_vec()).prop_map(Op::Status),
        any::<bool>().prop_map(Op::Chunk),
    ]
}

/// A compact task finds its context id inside its JSON when it is written there as is,
/// and keeps a copy when escapes (in it or in the id before it) move or change it.
#[test]
fn compact_context_ids_read_back_whatever_they_hold() {
    for (id, context) in [
        ("t-1", "c-1"),
        ("t\"2", "c-2"),
        ("t-3", "c\\3"),
        ("t-4", "c\n4 \u{e9}"),
        ("t-5", ""),
    ] {
        let task = Task {
            id: id.into(),
            context_id: context.into(),
            status: TaskStatus::new(TaskState::Completed),
            ..Task::default()
        };
        let mut json = Vec::new();
        TaskRef::from(&task).write_json(&mut json, None).unwrap();
        let located = ContextId::locate(&json, id, context);
        let in_json = matches!(located, ContextId::InJson { .. });
        // Only the first is written as is, after an id written as is.
        assert_eq!(in_json, id == "t-1", "{id} {context:?}");
        assert_eq!(located.get(&json), context, "{id}");
    }
}

proptest! {
    /// Whatever order tasks end in, they are evicted oldest end first, each once; with a
    /// cutoff, exactly those that ended before it.
    #[test]
    fn eviction_order_is_oldest_end_first(
        ends in prop::collection::vec(0i64..50, 0..60),
        cutoff in 0i64..60,
    ) {
        let fill = || {
            let mut order = EvictionOrder::default();
            for (i, at) in ends.iter().enumerate() {
                order.insert(*at, Arc::from(format!("{i}")));
            }
            order
        };
        let at = |id: &Arc<str>| ends[id.parse::<usize>().unwrap()];
        let mut order = fill();
        let mut popped = Vec::new();
        while let Some(id) = order.pop_oldest() {
            popped.push(id);
        }
        let times: Vec<i64> = popped.iter().map(at).collect();
        let mut sorted = ends.clone();
        sorted.sort();
        prop_assert_eq!(times, sorted);
        let mut order = fill();
        let mut before = Vec::new();
        while let Some(id) = order.pop_before(cutoff) {
            before.push(at(&id));
        }
        let mut want: Vec<i64> = ends.iter().copied().filter(|t| *t < cutoff).collect();
        want.sort();
        prop_assert_eq!(before, want);
    }

    /// Whatever is appended, the log is dense and ordered, every event reads back as
    /// written (artifacts shared with the task included), rejected events change nothing,
    /// and every suffix read returns exactly the tail of the log.
    #[test]
    fn event_log_is_dense_ordered_and_atomic(ops in prop::collection::vec(op(), 1..30)) {
        block(async {
            let store = InMemoryTaskManager::default();
            store.create_task(task("t", TaskState::Submitted), None, None).await.unwrap();
            let mut expected_seq = 1;
            let mut written = Vec::new();
            for (i, op) in ops.iter().enumerate() {
                let before = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
                let ev = match op {
                    Op::Status(s) => status("t", *s),
                    Op::Chunk(append) => chunk("t", &format!("p{i}"), *append),
                };
                match store.append_event("t", ev.clone()).await {
                    Ok(seq) => {
                        written.push(ev);
                        expected_seq += 1;
                        prop_assert_eq!(seq, expected_seq);
                        prop_assert!(!before.task.status.state.is_terminal());
                    }
                    Err(_) => {
                        let after = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
                        prop_assert_eq!(after, before, "a rejected event changes nothing");
                    }
                }
            }
            let log = store.events_after("t", 0, usize::MAX).await.unwrap();
            prop_assert_eq!(log.len() as u64, expected_seq);
            let read: Vec<_> = log[1..].iter().map(|r| r.event.clone()).collect();
            prop_assert_eq!(&read, &written, "every event reads back as written");
            for (i, rec) in log.iter().enumerate() {
                prop_assert_eq!(rec.seq, i as u64 + 1);
                let tail = store.events_after("t", rec.seq, usize::MAX).await.unwrap();
                prop_assert_eq!(&tail[..], &log[i + 1..]);
            }
            Ok(())
        })?;
    }
}
