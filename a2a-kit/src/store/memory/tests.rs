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

// ----- The ListTasks index -----

/// A time in Unix milliseconds as a status timestamp.
fn at(ms: i64) -> Option<Timestamp> {
    Some(Timestamp::from(
        chrono::DateTime::from_timestamp_millis(ms).expect("a valid time"),
    ))
}

fn task_at(id: &str, context: &str, state: TaskState, ms: i64) -> Task {
    Task {
        id: id.into(),
        context_id: context.into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: at(ms),
        },
        artifacts: vec![],
        history: vec![Message::user_text("hi")],
        metadata: None,
    }
}

fn user(k: usize) -> Option<Owner> {
    Owner::new(Some("acme"), Some(&format!("user-{k}")))
}

/// One ListTasks call, and how many index keys it walked.
async fn list_walked(store: &InMemoryTaskManager, q: &ListQuery) -> (ListTasksResponse, usize) {
    listing::WALKED.with(|w| w.set(0));
    let page = store.list_tasks(q).await.unwrap();
    (page, listing::WALKED.with(|w| w.get()))
}

fn ids(page: &ListTasksResponse) -> Vec<String> {
    page.tasks.iter().map(|t| t.id.clone()).collect()
}

/// Issue #29: with 100,000 tasks stored, a caller with no task walked all of them (28 ms
/// under the store's lock). ListTasks now walks the caller's own tasks only: none for a
/// caller with none, a page and one more for a caller with many, and all of its own (never
/// anyone else's) when a filter other than the owner's must count them.
#[test]
fn list_tasks_walks_only_the_callers_own_tasks() {
    block(async {
        let store = InMemoryTaskManager::new(InMemoryConfig {
            max_tasks: 200_000,
            terminal_ttl: None,
        });
        let base = 1_700_000_000_000;
        // user-k owns tasks k, k + 1000, ...: 100 each, a third of them WORKING.
        let state = |i: usize| {
            if i.is_multiple_of(3) {
                TaskState::Working
            } else {
                TaskState::Completed
            }
        };
        for i in 0..100_000usize {
            let t = task_at(&format!("t-{i}"), "c", state(i), base + i as i64);
            store.create_task(t, None, user(i % 1000)).await.unwrap();
        }
        let query = |owner: Option<Owner>| ListQuery {
            owner,
            page_size: 10,
            view: TaskView::FULL,
            ..ListQuery::default()
        };

        for nobody in [user(5000), None] {
            let (page, walked) = list_walked(&store, &query(nobody)).await;
            assert_eq!((page.tasks.len(), page.total_size), (0, 0));
            assert!(page.next_page_token.is_empty());
            assert_eq!(walked, 0, "a caller with no task walks none");
        }

        // user-7's tasks, newest first, page by page.
        let mine: Vec<String> = (0..100)
            .rev()
            .map(|k| format!("t-{}", 7 + 1000 * k))
            .collect();
        let mut q = query(user(7));
        let mut listed = Vec::new();
        loop {
            let (page, walked) = list_walked(&store, &q).await;
            assert_eq!(page.total_size, 100);
            assert!(walked <= 11, "a page and one more, not {walked}");
            listed.extend(ids(&page));
            if page.next_page_token.is_empty() {
                break;
            }
            q.page_token = Some(page.next_page_token);
        }
        assert_eq!(listed, mine);

        // A state filter counts the caller's tasks, no one else's.
        let mut q = query(user(7));
        q.status = Some(TaskState::Working);
        let (page, walked) = list_walked(&store, &q).await;
        let working: Vec<String> = (0..100)
            .rev()
            .map(|k| 7 + 1000 * k)
            .filter(|i| state(*i) == TaskState::Working)
            .map(|i| format!("t-{i}"))
            .collect();
        assert_eq!(page.total_size as usize, working.len());
        assert_eq!(ids(&page), working[..10]);
        assert!(
            walked <= 200,
            "the caller's 100 tasks at most twice, not {walked}"
        );

        // A timestamp floor counts the window only.
        let mut q = query(user(7));
        q.status_timestamp_after = at(base + 50_000);
        let (page, walked) = list_walked(&store, &q).await;
        assert_eq!(page.total_size, 50);
        assert_eq!(ids(&page), mine[..10]);
        assert!(walked <= 11 + 50, "a page and the window, not {walked}");
    });
}

/// The index agrees with the tasks it indexes: each task once, under its owner and its
/// status time, and no owner kept without tasks.
fn check_listings(store: &InMemoryTaskManager) -> Result<(), TestCaseError> {
    let inner = store.lock();
    let mut indexed = inner.listings.all();
    let mut tasks: Vec<_> = inner
        .tasks
        .values()
        .map(|e| (e.owner.clone(), (e.time_key, e.id.clone())))
        .collect();
    indexed.sort();
    tasks.sort();
    prop_assert_eq!(indexed, tasks);
    Ok(())
}

/// The query answered by a scan of every task (how ListTasks worked before the index):
/// the ids that match, newest first (ties: the greater id first).
fn scan(store: &InMemoryTaskManager, q: &ListQuery) -> Vec<String> {
    let inner = store.lock();
    let floor = q
        .status_timestamp_after
        .map_or(i64::MIN, |t| t.0.timestamp_millis());
    let mut keys: Vec<(i64, Arc<str>)> = inner
        .tasks
        .values()
        .filter(|e| {
            e.owner == q.owner
                && q.status.is_none_or(|s| e.body.state() == s)
                && q.context_id
                    .as_deref()
                    .is_none_or(|c| e.body.context_id() == c)
                && e.time_key >= floor
        })
        .map(|e| (e.time_key, e.id.clone()))
        .collect();
    keys.sort_by(|a, b| b.cmp(a));
    keys.into_iter().map(|(_, id)| id.to_string()).collect()
}

#[derive(Debug, Clone)]
enum ListOp {
    /// A task of owner `owner` (0: none) in context `context`, created in `state` at `ms`,
    /// and completed at `done` in the same write if that is given.
    Create {
        owner: usize,
        context: usize,
        state: TaskState,
        ms: i64,
        done: Option<i64>,
    },
    /// A status update of a task created before (evicted or not).
    Update {
        task: prop::sample::Index,
        state: TaskState,
        ms: i64,
    },
    Purge(i64),
    List {
        owner: usize,
        context: Option<usize>,
        status: Option<TaskState>,
        after: Option<i64>,
        page: usize,
    },
}

fn list_op() -> impl Strategy<Value = ListOp> {
    let state = || prop::sample::select(TaskState::ALL.to_vec());
    prop_oneof![
        3 => (0..4usize, 0..3usize, state(), 0..40i64, prop::option::of(0..40i64)).prop_map(
            |(owner, context, state, ms, done)| ListOp::Create { owner, context, state, ms, done }
        ),
        3 => (any::<prop::sample::Index>(), state(), 0..40i64)
            .prop_map(|(task, state, ms)| ListOp::Update { task, state, ms }),
        1 => (0..40i64).prop_map(ListOp::Purge),
        2 => (
            0..4usize,
            prop::option::of(0..3usize),
            prop::option::of(state()),
            prop::option::of(0..40i64),
            1..5usize,
        )
            .prop_map(|(owner, context, status, after, page)| ListOp::List {
                owner,
                context,
                status,
                after,
                page,
            }),
    ]
}

proptest! {
    /// Whatever tasks are created, updated, evicted (for capacity, by age, by a purge) and
    /// listed, the index holds exactly the stored tasks, and every ListTasks answers, page by
    /// page, what a scan of every task answers, with the same total on each page.
    #[test]
    fn the_list_index_answers_as_a_scan_of_every_task(
        ops in prop::collection::vec(list_op(), 1..80),
        ttl in prop::option::of(Just(Duration::from_secs(3600))),
    ) {
        block(async {
            let store = InMemoryTaskManager::new(InMemoryConfig { max_tasks: 12, terminal_ttl: ttl });
            // Long ago, so a TTL evicts every finished task.
            let base = 1_700_000_000_000;
            let owner = |k: usize| if k == 0 { None } else { user(k) };
            let mut created: Vec<String> = Vec::new();
            for op in ops {
                match op {
                    ListOp::Create { owner: o, context, state, ms, done } => {
                        let id = format!("t-{}", created.len());
                        created.push(id.clone());
                        let context = format!("c-{context}");
                        let task = task_at(&id, &context, state, base + ms);
                        let events: Vec<StreamResponse> = done
                            .map(|done| StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                                task_id: id.clone(),
                                context_id: context.clone(),
                                status: TaskStatus {
                                    state: TaskState::Completed,
                                    message: None,
                                    timestamp: at(base + done),
                                },
                                metadata: None,
                            }))
                            .into_iter()
                            .collect();
                        let _ = store.create_task_with_events(task, None, owner(o), events).await;
                    }
                    ListOp::Update { task, state, ms } => {
                        if created.is_empty() {
                            continue;
                        }
                        let id = task.get(&created).clone();
                        let context = match store.get_task(&id, TaskView::default()).await.unwrap() {
                            Some(rec) => rec.task.context_id,
                            None => String::from("c-0"),
                        };
                        let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                            task_id: id.clone(),
                            context_id: context,
                            status: TaskStatus { state, message: None, timestamp: at(base + ms) },
                            metadata: None,
                        });
                        let _ = store.append_event(&id, update).await;
                    }
                    ListOp::Purge(before) => {
                        store.purge_terminal_before(at(base + before).unwrap()).await.unwrap();
                    }
                    ListOp::List { owner: o, context, status, after, page } => {
                        let mut q = ListQuery {
                            owner: owner(o),
                            context_id: context.map(|c| format!("c-{c}")),
                            status,
                            status_timestamp_after: after.and_then(|a| at(base + a)),
                            page_size: page,
                            page_token: None,
                            view: TaskView::default(),
                        };
                        let first = store.list_tasks(&q).await.unwrap();
                        // After the list's own eviction of expired tasks.
                        let want = scan(&store, &q);
                        let mut got = ids(&first);
                        prop_assert_eq!(first.total_size as usize, want.len());
                        let mut token = first.next_page_token;
                        while !token.is_empty() {
                            prop_assert!(got.len() <= want.len(), "pages past the end");
                            q.page_token = Some(token);
                            let next = store.list_tasks(&q).await.unwrap();
                            prop_assert_eq!(next.total_size as usize, want.len());
                            prop_assert!(!next.tasks.is_empty(), "a token leads to a task");
                            got.extend(ids(&next));
                            token = next.next_page_token;
                        }
                        prop_assert_eq!(got, want);
                    }
                }
                check_listings(&store)?;
            }
            Ok(())
        })?;
    }
}

/// A filter over many of one owner's tasks (an open agent's are all of them) walks them a
/// chunk per hold of the store's lock, with other work in between: its pages and total are
/// the same as one walk's, across chunk boundaries.
#[test]
fn a_filtered_list_over_many_tasks_is_walked_in_chunks_and_stays_exact() {
    block(async {
        let store = std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig {
            max_tasks: 200_000,
            terminal_ttl: None,
        }));
        let base = 1_700_000_000_000;
        let n = 3 * SCAN_CHUNK + 17;
        for i in 0..n {
            let state = if i % 7 == 0 {
                TaskState::Working
            } else {
                TaskState::Completed
            };
            let t = task_at(&format!("t-{i}"), "c", state, base + i as i64);
            store.create_task(t, None, None).await.unwrap();
        }
        let expected: Vec<String> = (0..n)
            .rev()
            .filter(|i| i % 7 == 0)
            .map(|i| format!("t-{i}"))
            .collect();
        let mut q = ListQuery {
            status: Some(TaskState::Working),
            page_size: 50,
            view: TaskView::FULL,
            ..ListQuery::default()
        };
        // Another caller's reads go on while the walk lets the lock go.
        let reader = {
            let store = store.clone();
            tokio::spawn(async move {
                for _ in 0..100 {
                    store
                        .get_task("t-0", TaskView::FULL)
                        .await
                        .unwrap()
                        .unwrap();
                    tokio::task::yield_now().await;
                }
            })
        };
        let mut seen = Vec::new();
        loop {
            let page = store.list_tasks(&q).await.unwrap();
            assert_eq!(page.total_size as usize, expected.len());
            seen.extend(ids(&page));
            if page.next_page_token.is_empty() {
                break;
            }
            q.page_token = Some(page.next_page_token);
        }
        assert_eq!(seen, expected);
        reader.await.unwrap();
    });
}
