//! [`SqliteTaskManager`]: tasks, history, artifacts, push configs and event logs in one SQLite
//! file (cargo feature `sqlite`).
//!
//! The design is documented on [`SqliteTaskManager`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

mod connection;
mod outbox;
mod process_lock;
mod push_configs;
mod remote;
mod rows;

use connection::*;
pub use connection::{SqliteOptions, Synchronous};
use rows::*;
use rusqlite::{Connection, OptionalExtension, params};

use super::{
    EventRecord, ListQuery, Owner, PushConfigStore, PushOutbox, Seq, StoreError, TaskManager,
    TaskRecord, TaskView, decode_cursor, keyset_page,
};
use crate::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};

/// A durable [`TaskManager`] on one SQLite file (cargo feature `sqlite`).
///
/// Same behaviour as [`InMemoryTaskManager`](super::InMemoryTaskManager) for every operation
/// (the conformance suite checks it), except that it has no capacity limit and evicts nothing
/// by itself: purge old terminal tasks with [`spawn_retention`](super::retention::spawn_retention).
/// Cloning is cheap and shares the connections; the database closes when the last clone is
/// dropped.
///
/// ```
/// use a2a_kit::store::{SqliteTaskManager, TaskManager, TaskView};
/// use a2a_kit::protocol::{Message, Task, TaskState, TaskStatus};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("a2a-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("tasks.db");
/// let store = SqliteTaskManager::open(&path).await.unwrap();
/// let task = Task {
///     id: "t-1".into(),
///     context_id: "c-1".into(),
///     status: TaskStatus::new(TaskState::Submitted),
///     artifacts: vec![],
///     history: vec![Message::user_text("hi")],
///     metadata: None,
/// };
/// store.create_task(task.clone(), Some("greet".into()), None).await.unwrap();
/// drop(store);
///
/// // Everything is still there after reopening the file.
/// let store = SqliteTaskManager::open(&path).await.unwrap();
/// let rec = store.get_task("t-1", TaskView::FULL).await.unwrap().unwrap();
/// assert_eq!(rec.task, task);
/// assert_eq!(rec.skill_id.as_deref(), Some("greet"));
/// # drop(store);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
///
/// # Design
///
/// * **Backend**: `rusqlite` with the `bundled` SQLite (no system library needed, one C
///   compile, no duplicate crates in the tree). It is a thin synchronous wrapper, so no
///   database call ever runs on the async executor: writes run on a dedicated writer thread,
///   reads on Tokio's blocking pool (`spawn_blocking`).
/// * **Writes: one writer thread with group commit.** It owns the only writing connection, so
///   this process never contends with itself for SQLite's write lock. Queued write operations
///   are taken in batches (up to 128) and run in one `BEGIN IMMEDIATE` transaction, each inside
///   its own savepoint (an operation that fails is rolled back alone); every caller gets its
///   answer only after the `COMMIT`, so an acknowledged write is a committed write. Under load
///   many operations share one commit; alone, an operation is its own batch.
/// * **Reads: a pool of reader connections** (default 4). In WAL mode readers never wait for
///   the writer; each operation reads in one read transaction, so it sees one consistent
///   snapshot. A database in memory ([`open_in_memory`](SqliteTaskManager::open_in_memory))
///   has one connection, the writer thread's, for everything.
/// * **Journal**: WAL, `busy_timeout` (default 5 s, covers the stores of one process opening a
///   file together and WAL recovery at open), and `BEGIN IMMEDIATE` for every write
///   transaction so a lock is never upgraded mid-transaction (the one case a busy timeout
///   cannot retry).
/// * **One process per file**: the stores of one process share a file freely, but a store of
///   another process is refused at open (an advisory lock on `FILE-lock`, released when the
///   process ends, even killed): its start-up recovery would fail the first process's running
///   tasks. Several processes on one database are for a store built for it (PostgreSQL).
/// * **Durability**: `synchronous=NORMAL` by default. With WAL this means a committed
///   transaction survives the *process* dying at any point (`kill -9`, panic, OOM): the commit
///   is in the WAL file before the call returns. Only an operating-system crash or power loss
///   can roll back the last few commits (the WAL is fsynced at checkpoints, not per commit); the
///   database is never corrupted either way. Choose [`Synchronous::Full`] to fsync every commit
///   (with group commit that is one fsync per batch, not per operation).
/// * **Schema**: versioned migrations (`PRAGMA user_version`) applied at open in one
///   `BEGIN IMMEDIATE` transaction, so two processes opening a new file at once are safe.
///   Wire objects are stored as their JSON (the protocol's own serde form); everything that
///   filters or orders has a real, indexed column:
///
/// | table          | key                 | indexed columns                                       |
/// |----------------|---------------------|-------------------------------------------------------|
/// | `tasks`        | `id`                | `(status_ts, id)`, `(context_id, status_ts, id)`, `(state, status_ts, id)`, `terminal_at` |
/// | `messages`     | `(task_id, pos)`    | `(task_id, kind, pos)` where `kind` (message metadata `kind`, e.g. `status-message`) is set |
/// | `artifacts`    | `(task_id, pos)`    | `(task_id, artifact_id)`                               |
/// | `artifact_chunks` | `(task_id, pos, seq)` | (the key): streamed chunks appended to an artifact, one row each, so an append never rewrites the artifact |
/// | `events`       | `(task_id, seq)`    |                                                       |
/// | `push_configs` | `(task_id, pos)`    | `(task_id, config_id)`                                 |
///
/// ListTasks is a keyset query on `(status_ts DESC, id DESC)` with the same cursor as
/// [`InMemoryTaskManager`](super::InMemoryTaskManager); `totalSize` is a `COUNT(*)` with the same
/// filters. [`append_event`](TaskManager::append_event) loads only what
/// [`apply_event`](super::apply_event) needs (the status, or the one artifact the event names), applies it, and
/// writes the task row, the history or artifact row and the log row in one transaction.
#[derive(Clone)]
pub struct SqliteTaskManager {
    inner: Arc<Inner>,
}

struct Inner {
    /// The writer thread's queue. Dropping the last sender stops the thread.
    jobs: tokio::sync::mpsc::Sender<Job>,
    /// Reader connections; `None` for a database in memory (reads go to the writer thread).
    readers: Option<ReadPool>,
    path: Option<PathBuf>,
    options: SqliteOptions,
    /// Keeps the file to this process while the store lives (`None` in memory).
    _lock: Option<Arc<process_lock::ProcessLock>>,
    /// Tasks this store just created finished, for the read that follows.
    finished: crate::store::JustFinished,
}

struct ReadPool {
    idle: Mutex<Vec<Connection>>,
    permits: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for SqliteTaskManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTaskManager")
            .field("path", &self.inner.path)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

/// Terminal tasks deleted per write transaction by a purge, so a large purge never holds the
/// writer for long.
const PURGE_BATCH: usize = 256;

impl SqliteTaskManager {
    /// The schema version this build creates and understands (`PRAGMA user_version`).
    ///
    /// ```
    /// assert!(a2a_kit::store::SqliteTaskManager::SCHEMA_VERSION >= 1);
    /// ```
    pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

    /// Open (creating if needed) the database at `path` with default [`SqliteOptions`], and
    /// apply pending migrations.
    ///
    /// Needs a Tokio runtime (every database call runs on its blocking pool).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), a2a_kit::store::StoreError> {
    /// let store = a2a_kit::store::SqliteTaskManager::open("tasks.db").await?;
    /// # let _ = store; Ok(()) }
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// Open the database at `path` with these options.
    ///
    /// ```no_run
    /// use a2a_kit::store::{SqliteOptions, SqliteTaskManager, Synchronous};
    /// # async fn demo() -> Result<(), a2a_kit::store::StoreError> {
    /// let options = SqliteOptions { synchronous: Synchronous::Full, ..Default::default() };
    /// let store = SqliteTaskManager::open_with("tasks.db", options).await?;
    /// # let _ = store; Ok(()) }
    /// ```
    pub async fn open_with(
        path: impl AsRef<Path>,
        options: SqliteOptions,
    ) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let lock = {
            let p = path.clone();
            blocking(move || process_lock::lock(&p)).await?
        };
        let p = path.clone();
        let writer = blocking(move || {
            // SQLite answers SQLITE_BUSY at once, without the busy handler, in a few cases
            // (two connections switching a new file to WAL together); several stores opening
            // one new file at once then retry, within the busy timeout.
            let deadline = std::time::Instant::now() + options.busy_timeout;
            loop {
                let attempt = Connection::open(&p).db().and_then(|mut conn| {
                    configure(&conn, &options, true)?;
                    migrate(&mut conn)?;
                    Ok(conn)
                });
                match attempt {
                    Err(StoreError::Backend(e))
                        if e.contains("locked") && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    other => return other,
                }
            }
        })
        .await?;
        let n = options.read_connections.max(1);
        Ok(SqliteTaskManager {
            inner: Arc::new(Inner {
                jobs: spawn_writer(writer)?,
                readers: Some(ReadPool {
                    idle: Mutex::new(Vec::with_capacity(n)),
                    permits: Arc::new(tokio::sync::Semaphore::new(n)),
                }),
                path: Some(path),
                options,
                _lock: Some(lock),
                finished: Default::default(),
            }),
        })
    }

    /// A private database in memory (gone when the last clone is dropped): for tests.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = a2a_kit::store::SqliteTaskManager::open_in_memory().await.unwrap();
    /// assert_eq!(store.schema_version().await.unwrap(), a2a_kit::store::SqliteTaskManager::SCHEMA_VERSION);
    /// # });
    /// ```
    pub async fn open_in_memory() -> Result<Self, StoreError> {
        let options = SqliteOptions::default();
        let writer = blocking(move || {
            let mut conn = Connection::open_in_memory().db()?;
            configure(&conn, &options, true)?;
            migrate(&mut conn)?;
            Ok(conn)
        })
        .await?;
        Ok(SqliteTaskManager {
            inner: Arc::new(Inner {
                jobs: spawn_writer(writer)?,
                readers: None,
                path: None,
                options,
                _lock: None,
                finished: Default::default(),
            }),
        })
    }

    /// The database file, or `None` in memory.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = a2a_kit::store::SqliteTaskManager::open_in_memory().await.unwrap();
    /// assert!(store.path().is_none());
    /// # });
    /// ```
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The schema version of the open database (`PRAGMA user_version`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use a2a_kit::store::SqliteTaskManager;
    /// let store = SqliteTaskManager::open_in_memory().await.unwrap();
    /// assert_eq!(store.schema_version().await.unwrap(), SqliteTaskManager::SCHEMA_VERSION);
    /// # });
    /// ```
    pub async fn schema_version(&self) -> Result<u32, StoreError> {
        self.read(|conn| {
            conn.pragma_query_value(None, "user_version", |r| r.get::<_, u32>(0))
                .db()
        })
        .await
    }

    /// ListTasks' statements for `query` (the count, then the page), each as the store
    /// prepares it, with its parameters (`?1`, ...) as SQL literals: what
    /// `tests/store_list_index.rs` explains, to check that they search an index. Not public
    /// API: it may change in any release.
    #[doc(hidden)]
    pub fn list_statements(query: &ListQuery) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let cursor = query.page_token.as_deref().map(decode_cursor).transpose()?;
        Ok(list_statements(query, cursor.as_ref())
            .into_iter()
            .map(|(sql, args)| (sql, literals(&args)))
            .collect())
    }

    /// The most recent status messages of a task (history messages whose metadata `kind` is
    /// `status-message`, i.e. `ctx.status(..)` texts), at most `limit`, oldest first.
    ///
    /// ```
    /// use a2a_kit::protocol::*;
    /// use a2a_kit::store::{SqliteTaskManager, TaskManager};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = SqliteTaskManager::open_in_memory().await.unwrap();
    /// let task = Task { id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Submitted), ..Default::default() };
    /// store.create_task(task, None, None).await.unwrap();
    /// for text in ["reading", "thinking"] {
    ///     let mut meta = Metadata::new();
    ///     meta.insert("kind".into(), "status-message".into());
    ///     let status = TaskStatus::new(TaskState::Working).with_message(Message::agent_text(text).with_metadata(meta));
    ///     let ev = TaskStatusUpdateEvent { task_id: "t".into(), context_id: "c".into(), status, metadata: None };
    ///     store.append_event("t", StreamResponse::StatusUpdate(ev)).await.unwrap();
    /// }
    /// let recent = store.recent_status_messages("t", 1).await.unwrap();
    /// assert_eq!(recent.len(), 1);
    /// assert_eq!(recent[0].text(), "thinking");
    /// # });
    /// ```
    pub async fn recent_status_messages(
        &self,
        task_id: &str,
        limit: usize,
    ) -> Result<Vec<Message>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |conn| {
            if let Some(body) = compact_body(conn, &task_id)? {
                let task: Task = from_json(&body)?;
                let mut out: Vec<Message> = task
                    .history
                    .into_iter()
                    .rev()
                    .filter(|m| message_kind(m) == Some(crate::protocol::STATUS_MESSAGE_KIND))
                    .take(limit)
                    .collect();
                out.reverse();
                return Ok(out);
            }
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM messages WHERE task_id = ?1 AND kind = ?2 ORDER BY pos DESC LIMIT ?3",
                )
                .db()?;
            let rows = stmt
                .query_map(params![task_id, crate::protocol::STATUS_MESSAGE_KIND, clamp(limit)], |r| r.get::<_, String>(0))
                .db()?;
            let mut out = rows.map(|r| r.db().and_then(|b| from_json::<Message>(&b))).collect::<Result<Vec<_>, _>>()?;
            out.reverse();
            Ok(out)
        })
        .await
    }

    /// Run `f` in a write transaction on the writer thread; returns once that transaction
    /// committed (or failed). `f` runs inside a savepoint: when it returns `Err`, its changes
    /// are rolled back and the other jobs of the batch are unaffected.
    async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.submit(f, true).await
    }

    /// [`write`](Self::write) for `f` that makes one change with one statement: a statement
    /// that fails changes nothing, so `f` needs no savepoint of its own (whose journal copies
    /// every page it touches).
    async fn write_one_statement<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.submit(f, false).await
    }

    async fn submit<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        savepoint: bool,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, StoreError>>();
        let job: Job = Box::new(move |conn| {
            let result = match conn {
                Ok(conn) if savepoint => in_savepoint(conn, f),
                Ok(conn) => unwinding(|| f(conn)),
                Err(e) => Err(e.clone()),
            };
            Box::new(move |commit_error| {
                let _ = tx.send(match commit_error {
                    Some(e) => Err(e.clone()),
                    None => result,
                });
            })
        });
        self.inner
            .jobs
            .send(job)
            .await
            .map_err(|_| StoreError::Backend("the store's writer has stopped".into()))?;
        rx.await
            .map_err(|_| StoreError::Backend("the store's writer has stopped".into()))?
    }

    /// Run `f` on a reader connection (the writer for a database in memory).
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let Some(pool) = &self.inner.readers else {
            // In memory there is one connection: the writer thread's.
            return self.write(f).await;
        };
        let permit = pool
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Backend("store closed".into()))?;
        let inner = self.inner.clone();
        blocking(move || {
            let _permit = permit;
            let Some(pool) = &inner.readers else {
                unreachable!("checked above")
            };
            let idle = pool.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let conn = match idle {
                Some(c) => c,
                None => open_reader(
                    inner.path.as_deref().unwrap_or(Path::new(":memory:")),
                    &inner.options,
                )?,
            };
            // One read transaction per operation: everything it reads comes from one snapshot.
            conn.execute_batch("BEGIN").db()?;
            let out = f(&conn);
            conn.execute_batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" })
                .db()?;
            // A connection is returned only after a clean run; one that panicked is dropped
            // (and reopened on demand).
            pool.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(conn);
            out
        })
        .await
    }
}

#[async_trait]
impl TaskManager for SqliteTaskManager {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        self.write(move |tx| create_in(tx, task, skill_id, owner))
            .await
    }

    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        // The task is written once as its events leave it (checked here as a lone append
        // would check each event). A task created finished (a skill that answered at once)
        // is read back right away: its JSON is kept for that read.
        let last = crate::store::task_after(&task, &events)?;
        let finished = if last.status.state.is_terminal() {
            serde_json::to_string(&last)
                .ok()
                .map(|json| (last.id.clone(), json))
        } else {
            None
        };
        // One job: one savepoint, so a refused event leaves no task behind.
        let seq = self
            .write(move |tx| create_with_events_in(tx, task, Some(&last), skill_id, owner, &events))
            .await?;
        if let Some(finished) = finished {
            self.inner.finished.keep([finished]);
        }
        Ok(seq)
    }

    async fn create_task_with_released_log(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        let last = crate::store::task_after(&task, &events)?;
        if !last.status.state.is_terminal() {
            return self
                .create_task_with_events(task, skill_id, owner, events)
                .await;
        }
        // Finished, and nobody will read its log event by event: one row holding its JSON,
        // kept for the read that follows too.
        let json: Arc<str> = rows::to_json(&last)?.into();
        let last_seq = 1 + events.len() as Seq;
        let (row, id) = (json.clone(), last.id.clone());
        let seq = self
            .write_one_statement(move |tx| {
                create_compact_in(tx, &last, &row, skill_id, owner, last_seq)
            })
            .await?;
        self.inner.finished.keep([(id, json)]);
        Ok(seq)
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        let task_id = task_id.to_string();
        self.write(move |tx| append_in(tx, &task_id, event)).await
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let task_id = task_id.to_string();
        self.write(move |tx| {
            let (pos, body): (i64, Option<String>) = tx
                .prepare_cached("UPDATE tasks SET n_messages = n_messages + 1 WHERE id = ?1 RETURNING n_messages - 1, body")
                .db()?
                .query_row([&task_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .db()?
                .ok_or_else(|| StoreError::TaskNotFound(task_id.clone()))?;
            match body {
                // A task stored compact keeps its history in its JSON.
                Some(body) => {
                    let mut task: Task = from_json(&body)?;
                    task.history.push(message);
                    tx.prepare_cached("UPDATE tasks SET body = ?2 WHERE id = ?1")
                        .db()?
                        .execute(params![task_id, to_json(&task)?])
                        .db()?;
                }
                None => insert_message(tx, &task_id, pos, &message)?,
            }
            Ok(())
        })
        .await
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |tx| {
            let Some(TaskRow {
                mut task,
                compact,
                skill_id,
                owner,
                last_seq,
                ..
            }) = get_row(tx, &task_id)?
            else {
                return Ok(None);
            };
            load_view(tx, &mut task, compact, view)?;
            Ok(Some(TaskRecord {
                task,
                skill_id,
                owner,
                last_seq: last_seq as Seq,
            }))
        })
        .await
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |tx| {
            let (last_seq, compact): (i64, Option<String>) = tx
                .prepare_cached("SELECT last_seq, body FROM tasks WHERE id = ?1")
                .db()?
                .query_row([&task_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .db()?
                .ok_or_else(|| StoreError::TaskNotFound(task_id.clone()))?;
            let after = i64::try_from(after).unwrap_or(i64::MAX);
            if let Some(body) = compact {
                // Stored compact: the final snapshot stands for the log (a released log).
                return Ok(if after < last_seq && limit > 0 {
                    vec![EventRecord {
                        seq: last_seq as Seq,
                        event: StreamResponse::Task(from_json(&body)?),
                    }]
                } else {
                    Vec::new()
                });
            }
            let mut stmt = tx
                .prepare_cached("SELECT seq, body FROM events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")
                .db()?;
            let rows = stmt
                .query_map(params![task_id, after, clamp(limit)], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .db()?;
            let mut out = Vec::new();
            for row in rows {
                let (seq, body) = row.db()?;
                out.push(EventRecord { seq: seq as Seq, event: from_json(&body)? });
            }
            Ok(out)
        })
        .await
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        let cursor = q.page_token.as_deref().map(decode_cursor).transpose()?;
        let q = q.clone();
        self.read(move |tx| {
            let [(count, count_args), (page, args)] = list_statements(&q, cursor.as_ref());
            let total: i64 = tx
                .prepare_cached(&count)
                .db()?
                .query_row(rusqlite::params_from_iter(count_args.iter()), |r| r.get(0))
                .db()?;
            let mut stmt = tx.prepare_cached(&page).db()?;
            let raw = stmt
                .query_map(rusqlite::params_from_iter(args.iter()), raw_row)
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            drop(stmt);
            // The page and the one more row that says whether another follows.
            let mut rows = Vec::with_capacity(raw.len());
            for (i, row) in raw.into_iter().enumerate() {
                let TaskRow {
                    mut task,
                    compact,
                    status_ts,
                    ..
                } = decode_row(row)?;
                if i < q.page_size {
                    load_view(tx, &mut task, compact, q.view)?;
                }
                rows.push((status_ts, task));
            }
            Ok(keyset_page(rows, q.page_size, total as usize))
        })
        .await
    }

    async fn write_task_json(
        &self,
        task_id: &str,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        if view == TaskView::FULL {
            if let Some(json) = self.inner.finished.get(task_id) {
                out.extend_from_slice(json.as_bytes());
                return Ok(true);
            }
            // A task stored compact is its JSON: copied as it is.
            let task_id = task_id.to_string();
            let json = self
                .read(move |tx| {
                    let Some(mut raw) = get_raw_row(tx, &task_id)? else {
                        return Ok(None);
                    };
                    if let Some(body) = raw.body.take() {
                        return Ok(Some(body));
                    }
                    let mut task = decode_row(raw)?.task;
                    load_view(tx, &mut task, false, view)?;
                    to_json(&task).map(Some)
                })
                .await?;
            let found = json.is_some();
            out.extend_from_slice(json.unwrap_or_default().as_bytes());
            return Ok(found);
        }
        crate::store::write_found(out, self.get_task(task_id, view).await?)
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.inner.finished.clear();
        let cutoff = before.0.timestamp_millis();
        let mut total = 0;
        loop {
            // One batch per write transaction: requests get the writer between batches.
            let n = self
                .write(move |tx| {
                    let ids: Vec<String> = tx
                        .prepare_cached("SELECT id FROM tasks WHERE terminal_at < ?1 ORDER BY terminal_at LIMIT ?2")
                        .db()?
                        .query_map(params![cutoff, clamp(PURGE_BATCH)], |r| r.get(0))
                        .db()?
                        .collect::<Result<_, _>>()
                        .db()?;
                    for id in &ids {
                        for table in ["messages", "artifacts", "artifact_chunks", "events", "push_configs", "push_lanes"] {
                            tx.prepare_cached(&format!("DELETE FROM {table} WHERE task_id = ?1"))
                                .db()?
                                .execute([id])
                                .db()?;
                        }
                        tx.prepare_cached("DELETE FROM tasks WHERE id = ?1").db()?.execute([id]).db()?;
                    }
                            Ok(ids.len())
                })
                .await?;
            total += n;
            if n < PURGE_BATCH {
                return Ok(total);
            }
        }
    }

    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        let states: Vec<&'static str> = states.iter().map(|s| s.as_str()).collect();
        self.read(move |tx| {
            let mut stmt = tx
                .prepare_cached("SELECT id FROM tasks WHERE state = ?1")
                .db()?;
            let mut out = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for s in states {
                if !seen.insert(s) {
                    continue;
                }
                for id in stmt.query_map([s], |r| r.get::<_, String>(0)).db()? {
                    out.push(id.db()?);
                }
            }
            Ok(out)
        })
        .await
    }

    fn is_durable(&self) -> bool {
        self.inner.path.is_some()
    }

    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        Some(self)
    }

    fn push_outbox(&self) -> Option<&dyn PushOutbox> {
        // A file outlives the process: its lanes let a restart finish what was pending.
        self.inner.path.is_some().then_some(self as &dyn PushOutbox)
    }
    fn remote_tasks(&self) -> Option<&dyn crate::store::RemoteTaskStore> {
        Some(self)
    }
}
