//! SQLite-specific behaviour: durability across reopen, concurrency without "database is
//! locked", idempotent and versioned migrations, WAL, indexed queries, the status-message column.
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_kit::protocol::*;
use a2a_kit::store::{
    ListQuery, SqliteOptions, SqliteTaskManager, StoreError, Synchronous, TaskManager, TaskView,
    apply_event,
};
use serde_json::json;

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "a2a-store-sqlite-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
    fn db(&self) -> PathBuf {
        self.0.join("tasks.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ts(ms: i64) -> Timestamp {
    Timestamp::from(chrono::DateTime::from_timestamp_millis(ms).expect("in range"))
}

fn now_ms() -> i64 {
    Timestamp::now().0.timestamp_millis()
}

fn task(id: &str, ctx: &str, state: TaskState, at: i64) -> Task {
    Task {
        id: id.into(),
        context_id: ctx.into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(ts(at)),
        },
        artifacts: vec![],
        history: vec![
            Message::user_text(format!("start {id}"))
                .with_task_id(id)
                .with_context_id(ctx),
        ],
        metadata: None,
    }
}

fn status(
    id: &str,
    ctx: &str,
    state: TaskState,
    at: i64,
    message: Option<Message>,
) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.into(),
        context_id: ctx.into(),
        status: TaskStatus {
            state,
            message,
            timestamp: Some(ts(at)),
        },
        metadata: None,
    })
}

fn chunk(id: &str, ctx: &str, text: &str, append: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: id.into(),
        context_id: ctx.into(),
        artifact: Artifact {
            artifact_id: "out".into(),
            parts: vec![Part::text(text)],
            ..Default::default()
        },
        append,
        last_chunk: false,
        metadata: None,
    })
}

fn status_message(text: &str) -> Message {
    let mut meta = Metadata::new();
    meta.insert("kind".into(), json!("status-message"));
    Message::agent(vec![Part::data(
        json!({"type": "status-indicator", "text": text}),
    )])
    .with_metadata(meta)
}

fn all(page_size: usize) -> ListQuery {
    ListQuery {
        page_size,
        view: TaskView::FULL,
        ..Default::default()
    }
}

/// Everything a store holds about some tasks, for before/after comparisons.
async fn snapshot(s: &SqliteTaskManager, ids: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        let rec = s
            .get_task(id, TaskView::FULL)
            .await
            .expect("get")
            .expect("task");
        out.push(format!("{:?}", (rec.task, rec.skill_id, rec.last_seq)));
        out.push(format!(
            "{:?}",
            s.events_after(id, 0, usize::MAX).await.expect("events")
        ));
        out.push(format!(
            "{:?}",
            s.push_configs()
                .expect("push configs")
                .list(id)
                .await
                .expect("push")
        ));
    }
    let mut q = all(7);
    loop {
        let page = s.list_tasks(&q).await.expect("list");
        out.push(format!("{page:?}"));
        if page.next_page_token.is_empty() {
            break;
        }
        q.page_token = Some(page.next_page_token);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_the_file_finds_everything() {
    let dir = TempDir::new();
    let b = now_ms() - 60_000;
    let mut ids = Vec::new();
    let before = {
        let s = SqliteTaskManager::open(dir.db()).await.expect("open");
        for i in 0..20 {
            let id = format!("t{i:02}");
            let ctx = format!("c{}", i % 3);
            s.create_task(
                task(&id, &ctx, TaskState::Submitted, b + i),
                Some("skill".into()),
                None,
            )
            .await
            .expect("create");
            s.append_event(
                &id,
                status(
                    &id,
                    &ctx,
                    TaskState::Working,
                    b + 100 + i,
                    Some(status_message("go")),
                ),
            )
            .await
            .expect("working");
            for k in 0..3 {
                s.append_event(&id, chunk(&id, &ctx, &format!("part {k}"), k > 0))
                    .await
                    .expect("chunk");
            }
            s.add_message(&id, Message::user_text("more"))
                .await
                .expect("add_message");
            if i % 2 == 0 {
                let done = status(
                    &id,
                    &ctx,
                    TaskState::Completed,
                    b + 200 + i,
                    Some(Message::agent_text("done")),
                );
                s.append_event(&id, done).await.expect("complete");
            }
            let cfg = TaskPushNotificationConfig {
                id: Some(format!("cfg-{i}")),
                task_id: Some(id.clone()),
                url: "https://example.com/hook".into(),
                token: Some("t".into()),
                ..Default::default()
            };
            s.push_configs()
                .expect("push configs")
                .put(cfg, 10)
                .await
                .expect("push");
            ids.push(id);
        }
        snapshot(&s, &ids).await
    };
    // Dropped: every connection closed. Reopen and compare everything.
    let s = SqliteTaskManager::open(dir.db()).await.expect("reopen");
    let after = snapshot(&s, &ids).await;
    assert_eq!(before, after);
    // And the log continues where it stopped.
    let seq = s
        .append_event(
            "t01",
            status("t01", "c1", TaskState::Completed, b + 999, None),
        )
        .await
        .expect("append");
    assert_eq!(seq, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_appends_never_see_database_is_locked() {
    const TASKS: usize = 64;
    const EVENTS: usize = 40;
    let dir = TempDir::new();
    let s = SqliteTaskManager::open(dir.db()).await.expect("open");
    let b = now_ms();
    let mut handles = Vec::new();
    for t in 0..TASKS {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let id = format!("task-{t}");
            s.create_task(task(&id, "c", TaskState::Submitted, b), None, None)
                .await?;
            for i in 0..EVENTS {
                let ev = if i % 2 == 0 {
                    status(
                        &id,
                        "c",
                        TaskState::Working,
                        b + i as i64,
                        Some(status_message("tick")),
                    )
                } else {
                    chunk(&id, "c", "x", true)
                };
                s.append_event(&id, ev).await?;
            }
            s.append_event(&id, status(&id, "c", TaskState::Completed, b + 1000, None))
                .await?;
            Ok::<_, StoreError>(())
        }));
    }
    // Readers hammer the store meanwhile.
    let reader = {
        let s = s.clone();
        tokio::spawn(async move {
            let mut reads = 0usize;
            for _ in 0..200 {
                s.list_tasks(&ListQuery {
                    page_size: 50,
                    ..Default::default()
                })
                .await?;
                s.get_task("task-0", TaskView::FULL).await?;
                let _ = s.events_after("task-1", 0, 100).await;
                reads += 1;
            }
            Ok::<_, StoreError>(reads)
        })
    };
    for h in handles {
        h.await
            .expect("join")
            .expect("no store error under concurrency");
    }
    assert_eq!(reader.await.expect("join").expect("reads"), 200);
    for t in 0..TASKS {
        let rec = s
            .get_task(&format!("task-{t}"), TaskView::FULL)
            .await
            .expect("get")
            .expect("task");
        assert_eq!(rec.last_seq, EVENTS as u64 + 2);
        assert_eq!(rec.task.status.state, TaskState::Completed);
    }
}

/// Two stores on one file (as two processes would be): writes interleave through SQLite's
/// file lock and busy timeout, and sequence numbers stay per-task contiguous.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_file_share_it_safely() {
    let dir = TempDir::new();
    let a = SqliteTaskManager::open(dir.db()).await.expect("open a");
    let b2 = SqliteTaskManager::open(dir.db()).await.expect("open b");
    let b = now_ms();
    a.create_task(task("shared", "c", TaskState::Working, b), None, None)
        .await
        .expect("create");
    let mut handles = Vec::new();
    for (n, s) in [a.clone(), b2.clone()].into_iter().enumerate() {
        handles.push(tokio::spawn(async move {
            for i in 0..50 {
                s.append_event("shared", chunk("shared", "c", &format!("{n}-{i}"), true))
                    .await?;
                let own = format!("own-{n}-{i}");
                s.create_task(task(&own, "c", TaskState::Submitted, b), None, None)
                    .await?;
            }
            Ok::<_, StoreError>(())
        }));
    }
    for h in handles {
        h.await.expect("join").expect("no database-is-locked error");
    }
    let rec = b2
        .get_task("shared", TaskView::FULL)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(rec.last_seq, 101);
    assert_eq!(
        rec.task.artifacts[0].parts.len(),
        100,
        "no lost update across connections"
    );
    let seqs: Vec<u64> = a
        .events_after("shared", 0, 1000)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=101).collect::<Vec<_>>());
    assert_eq!(
        a.list_tasks(&ListQuery {
            page_size: 1,
            ..Default::default()
        })
        .await
        .expect("list")
        .total_size,
        101
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_versioned_and_idempotent() {
    let dir = TempDir::new();
    // Many opens of a new file at once: exactly one applies the schema, none fails.
    let opens: Vec<_> = (0..8)
        .map(|_| {
            let p = dir.db();
            tokio::spawn(async move { SqliteTaskManager::open(p).await })
        })
        .collect();
    let mut stores = Vec::new();
    for o in opens {
        stores.push(o.await.expect("join").expect("concurrent open"));
    }
    for s in &stores {
        assert_eq!(
            s.schema_version().await.expect("version"),
            SqliteTaskManager::SCHEMA_VERSION
        );
    }
    stores[0]
        .create_task(task("kept", "c", TaskState::Working, now_ms()), None, None)
        .await
        .expect("create");
    drop(stores);
    for _ in 0..3 {
        let s = SqliteTaskManager::open(dir.db()).await.expect("reopen");
        assert_eq!(
            s.schema_version().await.expect("version"),
            SqliteTaskManager::SCHEMA_VERSION
        );
        assert!(
            s.get_task("kept", TaskView::FULL)
                .await
                .expect("get")
                .is_some(),
            "reopening keeps data"
        );
    }
    // One table per concern, created once.
    let conn = rusqlite::Connection::open(dir.db()).expect("raw open");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        tables,
        [
            "artifact_chunks",
            "artifacts",
            "events",
            "messages",
            "push_configs",
            "push_lanes",
            "remote_tasks",
            "remote_tokens",
            "tasks"
        ]
    );
    // A database from a newer build is refused rather than misread.
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    match SqliteTaskManager::open(dir.db()).await {
        Err(StoreError::Backend(msg)) => assert!(msg.contains("newer"), "{msg}"),
        other => panic!("expected a schema-version error, got {other:?}"),
    }
}

/// Streamed chunks are rows of their own (schema 2): a task reads back exactly as the typed
/// `apply_event` builds it, a replacement drops the old chunks, a purge takes the rest, and a
/// version-1 file is upgraded in place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_chunks_are_rows_and_read_back_in_order() {
    let dir = TempDir::new();
    let s = SqliteTaskManager::open(dir.db()).await.expect("open");
    let b = now_ms() - 3_600_000;
    s.create_task(task("t", "c", TaskState::Working, b), None, None)
        .await
        .expect("create");
    let mut want = task("t", "c", TaskState::Working, b);
    let mut events = vec![chunk("t", "c", "a", false)];
    events.extend((0..50).map(|i| chunk("t", "c", &format!("-{i}"), true)));
    // A chunk that also replaces the artifact's metadata.
    let mut with_meta = chunk("t", "c", "+", true);
    if let StreamResponse::ArtifactUpdate(u) = &mut with_meta {
        u.artifact.metadata = Some(serde_json::from_value(json!({"k": 1})).unwrap());
    }
    events.push(with_meta);
    // Appends `events` to the store and to the typed `want`; returns the stored artifacts,
    // which must equal the typed ones.
    async fn append_all(
        s: &SqliteTaskManager,
        want: &mut Task,
        events: Vec<StreamResponse>,
    ) -> Vec<Artifact> {
        for e in events {
            apply_event(want, &e).expect("typed apply");
            s.append_event("t", e).await.expect("append");
        }
        let got = s
            .get_task("t", TaskView::FULL)
            .await
            .expect("get")
            .expect("t");
        assert_eq!(got.task.artifacts, want.artifacts);
        got.task.artifacts
    }
    let got = append_all(&s, &mut want, events).await;
    assert_eq!(got[0].parts.len(), 52);
    // A replacement (append = false) starts the artifact over, without the old chunks.
    let replaced = vec![chunk("t", "c", "new", false), chunk("t", "c", "+1", true)];
    let got = append_all(&s, &mut want, replaced).await;
    assert_eq!(got[0].parts.len(), 2);
    let rows = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("SELECT COUNT(*) FROM artifact_chunks", [], |r| r.get(0))
            .unwrap()
    };
    let conn = rusqlite::Connection::open(dir.db()).expect("raw open");
    assert_eq!(rows(&conn), 1, "the replaced artifact's chunks are gone");
    s.append_event("t", status("t", "c", TaskState::Completed, b + 1, None))
        .await
        .expect("complete");
    assert_eq!(
        s.purge_terminal_before(Timestamp::now())
            .await
            .expect("purge"),
        1
    );
    assert_eq!(rows(&conn), 0, "a purge takes the chunks with the task");

    // A version-1 file (no chunk table) is upgraded at open and keeps its data.
    s.create_task(task("v1", "c", TaskState::Working, b), None, None)
        .await
        .expect("create");
    s.append_event("v1", chunk("v1", "c", "x", false))
        .await
        .expect("artifact");
    drop(s);
    conn.execute_batch(
        "DROP INDEX tasks_by_owner_context; DROP INDEX tasks_by_owner_state; \
         CREATE INDEX tasks_by_time ON tasks (status_ts, id); \
         CREATE INDEX tasks_by_context ON tasks (context_id, status_ts, id); \
         DROP TABLE artifact_chunks; DROP TABLE push_lanes; ALTER TABLE tasks DROP COLUMN body; \
         DROP INDEX tasks_by_owner; ALTER TABLE tasks DROP COLUMN owned_by; \
         DROP TABLE remote_tasks; DROP TABLE remote_tokens; \
         PRAGMA user_version = 1;",
    )
    .expect("downgrade");
    drop(conn);
    let s = SqliteTaskManager::open(dir.db()).await.expect("reopen");
    assert_eq!(
        s.schema_version().await.expect("version"),
        SqliteTaskManager::SCHEMA_VERSION
    );
    s.append_event("v1", chunk("v1", "c", "y", true))
        .await
        .expect("append after the upgrade");
    let got = s
        .get_task("v1", TaskView::FULL)
        .await
        .expect("get")
        .expect("v1");
    let texts: Vec<_> = got.task.artifacts[0]
        .parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect();
    assert_eq!(texts, ["x", "y"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_is_in_wal_mode_and_queries_use_indexes() {
    let dir = TempDir::new();
    let s = SqliteTaskManager::open_with(
        dir.db(),
        SqliteOptions {
            synchronous: Synchronous::Full,
            read_connections: 2,
            ..Default::default()
        },
    )
    .await
    .expect("open");
    s.create_task(task("x", "c", TaskState::Working, now_ms()), None, None)
        .await
        .expect("create");
    let conn = rusqlite::Connection::open(dir.db()).expect("raw open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let plan = |sql: &str| -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.join(" | ")
    };
    // ListTasks' own statements: tests/store_list_index.rs. Start-up recovery's:
    let by_state = plan("SELECT id FROM tasks WHERE state = 'TASK_STATE_WORKING'");
    assert!(by_state.contains("tasks_by_state"), "{by_state}");
    let terminal = plan("SELECT id FROM tasks WHERE terminal_at < 5 ORDER BY terminal_at LIMIT 10");
    assert!(terminal.contains("tasks_terminal"), "{terminal}");
    let kind = plan(
        "SELECT body FROM messages WHERE task_id = 'x' AND kind = 'status-message' ORDER BY pos DESC LIMIT 3",
    );
    assert!(kind.contains("messages_by_kind"), "{kind}");
    drop(s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_messages_are_marked_and_queryable() {
    let dir = TempDir::new();
    let s = SqliteTaskManager::open(dir.db()).await.expect("open");
    let b = now_ms();
    s.create_task(task("t", "c", TaskState::Submitted, b), None, None)
        .await
        .expect("create");
    for (i, text) in ["reading", "thinking", "writing"].into_iter().enumerate() {
        s.append_event(
            "t",
            status(
                "t",
                "c",
                TaskState::Working,
                b + i as i64,
                Some(status_message(text)),
            ),
        )
        .await
        .expect("status");
        s.add_message("t", Message::user_text(format!("user {i}")))
            .await
            .expect("add");
    }
    s.append_event(
        "t",
        status(
            "t",
            "c",
            TaskState::Completed,
            b + 10,
            Some(Message::agent_text("final")),
        ),
    )
    .await
    .expect("done");
    let recent = s.recent_status_messages("t", 2).await.expect("recent");
    let texts: Vec<String> = recent
        .iter()
        .map(|m| {
            m.parts[0]
                .as_data()
                .and_then(|d| d["text"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        texts,
        ["thinking", "writing"],
        "the two most recent, oldest first"
    );
    assert_eq!(
        s.recent_status_messages("t", 10)
            .await
            .expect("recent")
            .len(),
        3
    );
    assert!(
        s.recent_status_messages("missing", 10)
            .await
            .expect("recent")
            .is_empty()
    );
    // The column is plain SQL for operators too.
    let conn = rusqlite::Connection::open(dir.db()).expect("raw open");
    let kinds: Vec<Option<String>> = conn
        .prepare("SELECT kind FROM messages WHERE task_id = 't' ORDER BY pos")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let status = Some("status-message".to_string());
    assert_eq!(
        kinds,
        [
            None,
            status.clone(),
            None,
            status.clone(),
            None,
            status,
            None,
            None
        ]
    );
}

/// A task created finished with a released log is one row holding its JSON: no history,
/// artifact or log rows; it reads back whole after a reopen (status messages included), its
/// log is its final snapshot, and a purge takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_finished_with_a_released_log_is_one_row() {
    let dir = TempDir::new();
    let s = SqliteTaskManager::open(dir.db()).await.expect("open");
    let b = now_ms() - 1000;
    let mut first = task("t", "c", TaskState::Submitted, b);
    first.history = vec![Message::user_text("hi")];
    let events = vec![
        status(
            "t",
            "c",
            TaskState::Working,
            b + 1,
            Some(status_message("reading")),
        ),
        chunk("t", "c", "hello", false),
        status(
            "t",
            "c",
            TaskState::Completed,
            b + 2,
            Some(Message::agent_text("done")),
        ),
    ];
    let mut want = first.clone();
    for e in &events {
        apply_event(&mut want, e).expect("apply");
    }
    let seq = s
        .create_task_with_released_log(first, Some("greet".into()), None, events)
        .await
        .expect("create");
    assert_eq!(seq, 4);
    drop(s);

    let conn = rusqlite::Connection::open(dir.db()).expect("raw open");
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(
        [
            "tasks",
            "messages",
            "artifacts",
            "artifact_chunks",
            "events"
        ]
        .map(count),
        [1, 0, 0, 0, 0],
        "one row"
    );
    let s = SqliteTaskManager::open(dir.db()).await.expect("reopen");
    let rec = s
        .get_task("t", TaskView::FULL)
        .await
        .expect("get")
        .expect("t");
    assert_eq!(
        (rec.task, rec.last_seq, rec.skill_id.as_deref()),
        (want.clone(), 4, Some("greet"))
    );
    let mut json = Vec::new();
    assert!(
        s.write_task_json("t", TaskView::FULL, &mut json)
            .await
            .expect("json")
    );
    assert_eq!(serde_json::from_slice::<Task>(&json).expect("a task"), want);
    let log = s.events_after("t", 1, 10).await.expect("events");
    assert_eq!(log.len(), 1, "the final snapshot stands for the log");
    assert_eq!(
        (log[0].seq, &log[0].event),
        (4, &StreamResponse::Task(want.clone()))
    );
    let recent = s.recent_status_messages("t", 5).await.expect("recent");
    assert_eq!(recent.len(), 1);
    assert_eq!(recent[0], want.history[1], "the status message");
    s.add_message("t", Message::user_text("thanks"))
        .await
        .expect("add");
    let rec = s
        .get_task(
            "t",
            TaskView {
                history_length: Some(1),
                include_artifacts: false,
            },
        )
        .await
        .expect("get")
        .expect("t");
    assert_eq!(rec.task.history.len(), 1);
    assert!(rec.task.artifacts.is_empty());
    assert!(matches!(
        s.append_event("t", status("t", "c", TaskState::Working, b + 3, None))
            .await,
        Err(StoreError::IllegalTransition(_))
    ));
    assert_eq!(
        s.purge_terminal_before(Timestamp::now())
            .await
            .expect("purge"),
        1
    );
    assert_eq!(count("tasks"), 0, "a purge takes it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_many_tasks_goes_in_batches_and_takes_everything_with_it() {
    let s = SqliteTaskManager::open_in_memory().await.expect("open");
    let b = now_ms() - 3_600_000;
    for i in 0..700 {
        let id = format!("old-{i}");
        s.create_task(task(&id, "c", TaskState::Working, b), None, None)
            .await
            .expect("create");
        s.append_event(
            &id,
            status(
                &id,
                "c",
                TaskState::Completed,
                b + i,
                Some(Message::agent_text("ok")),
            ),
        )
        .await
        .expect("done");
        s.push_configs()
            .expect("push configs")
            .put(
                TaskPushNotificationConfig {
                    id: Some("p".into()),
                    task_id: Some(id.clone()),
                    url: "https://example.com".into(),
                    ..Default::default()
                },
                10,
            )
            .await
            .expect("push");
    }
    s.create_task(task("live", "c", TaskState::Working, b - 1), None, None)
        .await
        .expect("create");
    let purged = s
        .purge_terminal_before(Timestamp::now())
        .await
        .expect("purge");
    assert_eq!(purged, 700);
    let page = s
        .list_tasks(&ListQuery {
            page_size: 10,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(page.total_size, 1);
    assert_eq!(page.tasks[0].id, "live");
    // No orphan rows remain in any table.
    s.create_task(task("old-5", "c", TaskState::Submitted, b), None, None)
        .await
        .expect("re-create");
    assert_eq!(
        s.events_after("old-5", 0, 10).await.expect("events").len(),
        1
    );
    assert!(
        s.push_configs()
            .expect("push configs")
            .list("old-5")
            .await
            .expect("push")
            .is_empty()
    );
    assert_eq!(
        s.get_task("old-5", TaskView::FULL)
            .await
            .expect("get")
            .expect("task")
            .task
            .history
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursor_from_the_in_memory_store_pages_the_sqlite_store() {
    use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
    let mem = InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 1000,
        terminal_ttl: None,
    });
    let sql = SqliteTaskManager::open_in_memory().await.expect("open");
    let b = now_ms();
    for i in 0..9 {
        let t = task(&format!("t{i}"), "c", TaskState::Working, b + i / 2);
        mem.create_task(t.clone(), None, None).await.expect("mem");
        sql.create_task(t, None, None).await.expect("sql");
    }
    let mut q = ListQuery {
        page_size: 4,
        view: TaskView::FULL,
        ..Default::default()
    };
    let m1 = mem.list_tasks(&q).await.expect("mem page");
    let s1 = sql.list_tasks(&q).await.expect("sql page");
    assert_eq!(m1, s1);
    q.page_token = Some(m1.next_page_token.clone());
    assert_eq!(
        sql.list_tasks(&q).await.expect("sql with mem token"),
        mem.list_tasks(&q).await.expect("mem")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_as_dyn_task_manager() {
    let s: Arc<dyn TaskManager> =
        Arc::new(SqliteTaskManager::open_in_memory().await.expect("open"));
    s.create_task(task("d", "c", TaskState::Submitted, now_ms()), None, None)
        .await
        .expect("create");
    assert_eq!(
        s.task_ids_in_states(&[TaskState::Submitted])
            .await
            .expect("ids"),
        ["d"]
    );
}
