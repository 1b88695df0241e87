//! [`SqliteTaskManager`]: tasks, history, artifacts, push configs and event logs in one SQLite
//! file (cargo feature `sqlite`).
//!
//! The design is documented on [`SqliteTaskManager`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{
    EventRecord, ListQuery, Seq, StoreError, TaskManager, TaskRecord, TaskView, apply_event,
    decode_cursor, encode_cursor,
};
use crate::protocol::{
    Artifact, ListTasksResponse, Message, StreamResponse, Task, TaskPushNotificationConfig,
    TaskState, TaskStatus, Timestamp,
};

/// How hard SQLite works to make each commit durable (`PRAGMA synchronous`).
///
/// ```
/// use a2a_kit::store::{SqliteOptions, Synchronous};
/// let options = SqliteOptions { synchronous: Synchronous::Full, ..SqliteOptions::default() };
/// assert_eq!(options.synchronous, Synchronous::Full);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// `NORMAL`: commits survive a crash of the process; a power loss or OS crash may roll back
    /// the most recent commits (never corrupts). The default, and the usual choice with WAL.
    #[default]
    Normal,
    /// `FULL`: every commit is fsynced before it returns; slower writes.
    Full,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

/// Tuning for [`SqliteTaskManager::open_with`].
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::store::SqliteOptions;
/// let options = SqliteOptions {
///     read_connections: 8,
///     busy_timeout: Duration::from_secs(10),
///     ..SqliteOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Reader connections kept open (at least 1; default 4). Writes always use the single
    /// writer connection.
    pub read_connections: usize,
    /// How long a statement waits for a lock held by another connection or process before it
    /// fails with "database is locked" (default 5 s).
    pub busy_timeout: Duration,
    /// Commit durability (default [`Synchronous::Normal`]).
    pub synchronous: Synchronous,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            read_connections: 4,
            busy_timeout: Duration::from_secs(5),
            synchronous: Synchronous::Normal,
        }
    }
}

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
/// store.create_task(task.clone(), Some("greet".into())).await.unwrap();
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
/// * **Journal**: WAL, `busy_timeout` (default 5 s, covers other processes on the same file and
///   WAL recovery at open), and `BEGIN IMMEDIATE` for every write transaction so a lock is never
///   upgraded mid-transaction (the one case a busy timeout cannot retry).
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
/// [`apply_event`] needs (the status, or the one artifact the event names), applies it, and
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
}

/// What the writer thread runs: given the connection inside the batch's transaction (or the
/// error that prevented the transaction), do the work and return how to report it once the
/// transaction's outcome is known.
type Job = Box<dyn FnOnce(Result<&Connection, &StoreError>) -> Completion + Send>;

/// Reports a job's result; called with the commit error if the batch did not commit.
type Completion = Box<dyn FnOnce(Option<&StoreError>) + Send>;

/// Queued jobs the writer accepts before callers wait (backpressure).
const QUEUE: usize = 1024;
/// At most this many jobs share one transaction.
const MAX_BATCH: usize = 128;

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

/// The schema, one entry per version: entry `i` takes `user_version` from `i` to `i + 1`.
/// Never edit an entry once released; append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    CREATE TABLE tasks (
        id          TEXT    NOT NULL PRIMARY KEY,
        context_id  TEXT    NOT NULL,
        state       TEXT    NOT NULL,   -- TaskState wire name, e.g. TASK_STATE_WORKING
        status_ts   INTEGER NOT NULL,   -- status timestamp, Unix millis (ListTasks order)
        terminal_at INTEGER,            -- status timestamp when it became terminal, else NULL
        skill_id    TEXT,
        status      TEXT    NOT NULL,   -- TaskStatus JSON
        metadata    TEXT,               -- Task.metadata JSON
        last_seq    INTEGER NOT NULL,   -- seq of the last event applied
        n_messages  INTEGER NOT NULL,   -- next messages.pos
        n_artifacts INTEGER NOT NULL,   -- next artifacts.pos
        created_at  INTEGER NOT NULL    -- Unix millis
    );
    CREATE INDEX tasks_by_time    ON tasks (status_ts, id);
    CREATE INDEX tasks_by_context ON tasks (context_id, status_ts, id);
    CREATE INDEX tasks_by_state   ON tasks (state, status_ts, id);
    CREATE INDEX tasks_terminal   ON tasks (terminal_at) WHERE terminal_at IS NOT NULL;

    CREATE TABLE messages (
        task_id    TEXT    NOT NULL,
        pos        INTEGER NOT NULL,    -- position in the task's history, from 0
        message_id TEXT    NOT NULL,
        role       TEXT    NOT NULL,
        kind       TEXT,                -- metadata.kind, e.g. 'status-message'
        created_at INTEGER NOT NULL,
        body       TEXT    NOT NULL,    -- Message JSON
        PRIMARY KEY (task_id, pos)
    );
    CREATE INDEX messages_by_kind ON messages (task_id, kind, pos) WHERE kind IS NOT NULL;

    CREATE TABLE artifacts (
        task_id     TEXT    NOT NULL,
        pos         INTEGER NOT NULL,   -- position in the task's artifacts, from 0
        artifact_id TEXT    NOT NULL,
        body        TEXT    NOT NULL,   -- Artifact JSON
        PRIMARY KEY (task_id, pos)
    );
    CREATE INDEX artifacts_by_id ON artifacts (task_id, artifact_id, pos);

    CREATE TABLE events (
        task_id    TEXT    NOT NULL,
        seq        INTEGER NOT NULL,    -- from 1 (the creation snapshot)
        kind       TEXT    NOT NULL,    -- task | statusUpdate | artifactUpdate
        state      TEXT,                -- the state the event reports, if any
        created_at INTEGER NOT NULL,
        body       TEXT    NOT NULL,    -- StreamResponse JSON
        PRIMARY KEY (task_id, seq)
    );

    CREATE TABLE push_configs (
        task_id   TEXT    NOT NULL,
        pos       INTEGER NOT NULL,     -- creation order
        config_id TEXT,
        url       TEXT    NOT NULL,
        body      TEXT    NOT NULL,     -- TaskPushNotificationConfig JSON
        PRIMARY KEY (task_id, pos)
    );
    CREATE INDEX push_configs_by_id ON push_configs (task_id, config_id);
    "#,
    // 2: streamed chunks are rows of their own, so appending one costs the same however long
    // the artifact already is (version 1 rewrote the whole artifact on every chunk).
    r#"
    CREATE TABLE artifact_chunks (
        task_id  TEXT    NOT NULL,
        pos      INTEGER NOT NULL,      -- artifacts.pos of the artifact the chunk extends
        seq      INTEGER NOT NULL,      -- the seq of the event that appended it
        parts    TEXT    NOT NULL,      -- the appended parts (JSON array)
        metadata TEXT,                  -- the artifact metadata the chunk replaced, if any
        PRIMARY KEY (task_id, pos, seq)
    );
    "#,
];

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

    /// The most recent status messages of a task (history messages whose metadata `kind` is
    /// `status-message`, i.e. `ctx.status(..)` texts), at most `limit`, oldest first.
    ///
    /// ```
    /// use a2a_kit::protocol::*;
    /// use a2a_kit::store::{SqliteTaskManager, TaskManager};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = SqliteTaskManager::open_in_memory().await.unwrap();
    /// let task = Task { id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Submitted), ..Default::default() };
    /// store.create_task(task, None).await.unwrap();
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
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, StoreError>>();
        let job: Job = Box::new(move |conn| {
            let result = match conn {
                Ok(conn) => in_savepoint(conn, f),
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

/// Run blocking work on Tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(StoreError::Backend(format!(
            "database task did not finish: {e}"
        ))),
    }
}

/// Start the writer thread: it owns the writer connection and commits queued jobs in batches
/// (group commit): under load, many operations share one commit, each still acknowledged only
/// after it is durable.
fn spawn_writer(conn: Connection) -> Result<tokio::sync::mpsc::Sender<Job>, StoreError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Job>(QUEUE);
    std::thread::Builder::new()
        .name("a2a-sqlite-writer".into())
        .spawn(move || {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            let mut done = Vec::with_capacity(MAX_BATCH);
            // Ends when every sender (every store clone) is gone; the connection closes then.
            while let Some(first) = rx.blocking_recv() {
                batch.push(first);
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) => break,
                    }
                }
                match conn.execute_batch("BEGIN IMMEDIATE").db() {
                    Ok(()) => {
                        // An I/O error can make SQLite roll the whole transaction back; then no
                        // job of the batch may be reported as done.
                        let mut aborted = None;
                        for job in batch.drain(..) {
                            match &aborted {
                                Some(e) => done.push(job(Err(e))),
                                None => {
                                    done.push(job(Ok(&conn)));
                                    if conn.is_autocommit() {
                                        aborted = Some(StoreError::Backend(
                                            "the write transaction was rolled back by the database"
                                                .into(),
                                        ));
                                    }
                                }
                            }
                        }
                        let committed = match aborted {
                            Some(e) => Err(e),
                            None => conn.execute_batch("COMMIT").db(),
                        };
                        match committed {
                            Ok(()) => done.drain(..).for_each(|c| c(None)),
                            Err(e) => {
                                if !conn.is_autocommit() {
                                    let _ = conn.execute_batch("ROLLBACK");
                                }
                                done.drain(..).for_each(|c| c(Some(&e)));
                            }
                        }
                    }
                    Err(e) => batch.drain(..).for_each(|job| job(Err(&e))(None)),
                }
            }
        })
        .map_err(|e| StoreError::Backend(format!("could not start the writer thread: {e}")))?;
    Ok(tx)
}

/// Run `f` inside a savepoint of the open transaction; roll it back if `f` fails or panics.
fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.execute_batch("SAVEPOINT job").db()?;
    let out = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn))) {
        Ok(r) => r,
        Err(_) => Err(StoreError::Backend(
            "a store operation panicked; it was rolled back".into(),
        )),
    };
    let end = if out.is_ok() {
        "RELEASE job"
    } else {
        "ROLLBACK TO job; RELEASE job"
    };
    conn.execute_batch(end).db()?;
    out
}

fn open_reader(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).db()?;
    configure(&conn, options, false)?;
    Ok(conn)
}

/// Per-connection settings. The writer also switches the file to WAL (a persistent setting).
fn configure(conn: &Connection, options: &SqliteOptions, writer: bool) -> Result<(), StoreError> {
    conn.busy_timeout(options.busy_timeout).db()?;
    if writer {
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .db()?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(StoreError::Backend(format!(
                "could not switch the database to WAL (journal_mode is {mode})"
            )));
        }
    }
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {}; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16000;{}",
        options.synchronous.pragma(),
        if writer {
            ""
        } else {
            " PRAGMA query_only = ON;"
        }
    ))
    .db()?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// Apply pending migrations in one immediate transaction.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let version: u32 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .db()?;
    let known = MIGRATIONS.len() as u32;
    if version > known {
        return Err(StoreError::Backend(format!(
            "the database has schema version {version}, newer than this build understands ({known})"
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .map_err(|e| StoreError::Backend(format!("migration {}: {e}", i + 1)))?;
        tx.pragma_update(None, "user_version", (i + 1) as u32)
            .db()?;
    }
    tx.commit().db()
}

// ----- row helpers -------------------------------------------------------------------------

trait Db<T> {
    fn db(self) -> Result<T, StoreError>;
}

impl<T> Db<T> for Result<T, rusqlite::Error> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::Backend(e.to_string()))
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("could not encode a row: {e}")))
}

fn from_json<T: DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Backend(format!("corrupt row: {e}")))
}

fn millis(ts: Option<Timestamp>) -> i64 {
    ts.unwrap_or_else(Timestamp::now).0.timestamp_millis()
}

fn now_millis() -> i64 {
    Timestamp::now().0.timestamp_millis()
}

fn clamp(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn message_kind(m: &Message) -> Option<&str> {
    m.metadata
        .as_ref()?
        .get(crate::protocol::STATUS_MESSAGE_KIND_KEY)?
        .as_str()
}

fn event_kind(ev: &StreamResponse) -> &'static str {
    match ev {
        StreamResponse::Task(_) => "task",
        StreamResponse::Message(_) => "message",
        StreamResponse::StatusUpdate(_) => "statusUpdate",
        StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
    }
}

fn insert_message(tx: &Connection, task_id: &str, pos: i64, m: &Message) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO messages (task_id, pos, message_id, role, kind, created_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .db()?
    .execute(params![task_id, pos, m.message_id, m.role.as_str(), message_kind(m), now_millis(), to_json(m)?])
    .db()?;
    Ok(())
}

fn insert_artifact(
    tx: &Connection,
    task_id: &str,
    pos: i64,
    a: &Artifact,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO artifacts (task_id, pos, artifact_id, body) VALUES (?1, ?2, ?3, ?4)",
    )
    .db()?
    .execute(params![task_id, pos, a.artifact_id, to_json(a)?])
    .db()?;
    Ok(())
}

fn insert_event(
    tx: &Connection,
    task_id: &str,
    seq: i64,
    ev: &StreamResponse,
) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT INTO events (task_id, seq, kind, state, created_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .db()?
        .execute(params![task_id, seq, event_kind(ev), ev.state().map(|s| s.as_str()), now_millis(), to_json(ev)?])
        .db()?;
    Ok(())
}

fn task_exists(conn: &Connection, task_id: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT 1 FROM tasks WHERE id = ?1")
        .db()?
        .query_row([task_id], |_| Ok(()))
        .optional()
        .db()
        .map(|r| r.is_some())
}

fn require_task(conn: &Connection, task_id: &str) -> Result<(), StoreError> {
    if task_exists(conn, task_id)? {
        Ok(())
    } else {
        Err(StoreError::TaskNotFound(task_id.to_string()))
    }
}

/// The task columns [`raw_row`] reads, in this order.
const TASK_COLUMNS: &str =
    "id, context_id, status, metadata, skill_id, last_seq, status_ts, n_messages, n_artifacts";

/// A `tasks` row as read.
struct RawRow {
    id: String,
    context_id: String,
    status: String,
    metadata: Option<String>,
    skill_id: Option<String>,
    last_seq: i64,
    status_ts: i64,
    n_messages: i64,
    n_artifacts: i64,
}

fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: r.get(0)?,
        context_id: r.get(1)?,
        status: r.get(2)?,
        metadata: r.get(3)?,
        skill_id: r.get(4)?,
        last_seq: r.get(5)?,
        status_ts: r.get(6)?,
        n_messages: r.get(7)?,
        n_artifacts: r.get(8)?,
    })
}

/// A task without history and artifacts, with the row's bookkeeping.
struct TaskRow {
    task: Task,
    skill_id: Option<String>,
    last_seq: i64,
    status_ts: i64,
    n_messages: i64,
    n_artifacts: i64,
}

fn decode_row(raw: RawRow) -> Result<TaskRow, StoreError> {
    let status: TaskStatus = from_json(&raw.status)?;
    let metadata = raw.metadata.as_deref().map(from_json).transpose()?;
    Ok(TaskRow {
        task: Task {
            id: raw.id,
            context_id: raw.context_id,
            status,
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata,
        },
        skill_id: raw.skill_id,
        last_seq: raw.last_seq,
        status_ts: raw.status_ts,
        n_messages: raw.n_messages,
        n_artifacts: raw.n_artifacts,
    })
}

/// Fill in the history and artifacts `view` asks for.
fn load_view(conn: &Connection, task: &mut Task, view: TaskView) -> Result<(), StoreError> {
    match view.history_length {
        Some(0) => {}
        None => {
            let mut stmt = conn
                .prepare_cached("SELECT body FROM messages WHERE task_id = ?1 ORDER BY pos")
                .db()?;
            let rows = stmt.query_map([&task.id], |r| r.get::<_, String>(0)).db()?;
            for body in rows {
                task.history.push(from_json(&body.db()?)?);
            }
        }
        Some(n) => {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM messages WHERE task_id = ?1 ORDER BY pos DESC LIMIT ?2",
                )
                .db()?;
            let rows = stmt
                .query_map(params![task.id, clamp(n)], |r| r.get::<_, String>(0))
                .db()?;
            for body in rows {
                task.history.push(from_json(&body.db()?)?);
            }
            task.history.reverse();
        }
    }
    if view.include_artifacts {
        let mut stmt = conn
            .prepare_cached("SELECT pos, body FROM artifacts WHERE task_id = ?1 ORDER BY pos")
            .db()?;
        let rows = stmt
            .query_map([&task.id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .db()?;
        let mut positions = Vec::new();
        for row in rows {
            let (pos, body) = row.db()?;
            positions.push(pos);
            task.artifacts.push(from_json(&body)?);
        }
        if !positions.is_empty() {
            // The streamed chunks, in the order they were appended (apply_event's append).
            let mut stmt = conn
                .prepare_cached(
                    "SELECT pos, parts, metadata FROM artifact_chunks WHERE task_id = ?1 ORDER BY pos, seq",
                )
                .db()?;
            let rows = stmt
                .query_map([&task.id], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                })
                .db()?;
            for row in rows {
                let (pos, parts, metadata) = row.db()?;
                let Ok(i) = positions.binary_search(&pos) else {
                    continue;
                };
                let a = &mut task.artifacts[i];
                a.parts
                    .extend(from_json::<Vec<crate::protocol::Part>>(&parts)?);
                if let Some(m) = metadata {
                    a.metadata = Some(from_json(&m)?);
                }
            }
        }
    }
    Ok(())
}

fn get_row(conn: &Connection, task_id: &str) -> Result<Option<TaskRow>, StoreError> {
    let raw = conn
        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"))
        .db()?
        .query_row([task_id], raw_row)
        .optional()
        .db()?;
    raw.map(decode_row).transpose()
}

/// The WHERE clause and parameters of a ListTasks query (without the cursor).
fn list_filter(q: &ListQuery) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut clauses = Vec::new();
    let mut args = Vec::new();
    if let Some(c) = &q.context_id {
        args.push(Value::Text(c.clone()));
        clauses.push(format!("context_id = ?{}", args.len()));
    }
    if let Some(s) = q.status {
        args.push(Value::Text(s.as_str().to_string()));
        clauses.push(format!("state = ?{}", args.len()));
    }
    if let Some(t) = q.status_timestamp_after {
        args.push(Value::Integer(t.0.timestamp_millis()));
        clauses.push(format!("status_ts >= ?{}", args.len()));
    }
    let clause = if clauses.is_empty() {
        String::from("1")
    } else {
        clauses.join(" AND ")
    };
    (clause, args)
}

/// Insert a new task and its creation event (event 1), inside the caller's transaction.
fn create_in(tx: &Connection, task: Task, skill_id: Option<String>) -> Result<Seq, StoreError> {
    if task_exists(tx, &task.id)? {
        return Err(StoreError::TaskExists(task.id));
    }
    let status_ts = millis(task.status.timestamp);
    let terminal_at = task.status.state.is_terminal().then_some(status_ts);
    tx.prepare_cached(
        "INSERT INTO tasks (id, context_id, state, status_ts, terminal_at, skill_id, status, metadata, \
         last_seq, n_messages, n_artifacts, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?11)",
    )
    .db()?
    .execute(params![
        task.id,
        task.context_id,
        task.status.state.as_str(),
        status_ts,
        terminal_at,
        skill_id,
        to_json(&task.status)?,
        task.metadata.as_ref().map(to_json).transpose()?,
        clamp(task.history.len()),
        clamp(task.artifacts.len()),
        now_millis(),
    ])
    .db()?;
    for (i, m) in task.history.iter().enumerate() {
        insert_message(tx, &task.id, clamp(i), m)?;
    }
    for (i, a) in task.artifacts.iter().enumerate() {
        insert_artifact(tx, &task.id, clamp(i), a)?;
    }
    let id = task.id.clone();
    insert_event(tx, &id, 1, &StreamResponse::Task(task))?;
    Ok(1)
}

/// Apply `event` to the stored task and log it, inside the caller's transaction.
fn append_in(tx: &Connection, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
    let Some(TaskRow {
        mut task,
        last_seq,
        mut n_messages,
        mut n_artifacts,
        ..
    }) = get_row(tx, task_id)?
    else {
        return Err(StoreError::TaskNotFound(task_id.to_string()));
    };
    let was_terminal = task.status.state.is_terminal();
    // Load exactly what apply_event reads: the status (always) and, for an artifact
    // update, the first stored artifact with that id.
    // An append needs only to know that the artifact exists: an empty stand-in takes
    // the chunk, which is stored as a row of its own (`artifact_chunks`).
    let mut artifact_pos = None;
    if let StreamResponse::ArtifactUpdate(u) = &event {
        let found = tx
            .prepare_cached(
                "SELECT pos FROM artifacts WHERE task_id = ?1 AND artifact_id = ?2 ORDER BY pos LIMIT 1",
            )
            .db()?
            .query_row(params![task_id, u.artifact.artifact_id], |r| r.get::<_, i64>(0))
            .optional()
            .db()?;
        if let Some(pos) = found {
            task.artifacts.push(Artifact {
                artifact_id: u.artifact.artifact_id.clone(),
                ..Artifact::default()
            });
            artifact_pos = Some(pos);
        }
    }
    apply_event(&mut task, &event)?;
    let seq = last_seq + 1;

    match &event {
        StreamResponse::StatusUpdate(_) => {
            if let Some(m) = task.history.pop() {
                insert_message(tx, task_id, n_messages, &m)?;
                n_messages += 1;
            }
        }
        StreamResponse::ArtifactUpdate(u) => {
            let a = task.artifacts.first().ok_or_else(|| {
                StoreError::Backend("apply_event left no artifact for an artifact update".into())
            })?;
            match artifact_pos {
                Some(pos) if u.append => {
                    let metadata = u.artifact.metadata.as_ref().map(to_json).transpose()?;
                    tx.prepare_cached(
                        "INSERT INTO artifact_chunks (task_id, pos, seq, parts, metadata) VALUES (?1, ?2, ?3, ?4, ?5)",
                    )
                    .db()?
                    .execute(params![task_id, pos, seq, to_json(&a.parts)?, metadata])
                    .db()?;
                }
                Some(pos) => {
                    // A replacement: the new artifact, without the old one's chunks.
                    tx.prepare_cached("UPDATE artifacts SET artifact_id = ?3, body = ?4 WHERE task_id = ?1 AND pos = ?2")
                        .db()?
                        .execute(params![task_id, pos, a.artifact_id, to_json(a)?])
                        .db()?;
                    tx.prepare_cached(
                        "DELETE FROM artifact_chunks WHERE task_id = ?1 AND pos = ?2",
                    )
                    .db()?
                    .execute(params![task_id, pos])
                    .db()?;
                }
                None => {
                    insert_artifact(tx, task_id, n_artifacts, a)?;
                    n_artifacts += 1;
                }
            }
        }
        // apply_event rejects the other kinds.
        StreamResponse::Task(_) | StreamResponse::Message(_) => {}
    }
    let status_ts = millis(task.status.timestamp);
    let became_terminal = task.status.state.is_terminal() && !was_terminal;
    tx.prepare_cached(
        "UPDATE tasks SET state = ?2, status_ts = ?3, terminal_at = CASE WHEN ?4 THEN ?3 ELSE terminal_at END, \
         status = ?5, last_seq = ?6, n_messages = ?7, n_artifacts = ?8 WHERE id = ?1",
    )
    .db()?
    .execute(params![
        task_id,
        task.status.state.as_str(),
        status_ts,
        became_terminal,
        to_json(&task.status)?,
        seq,
        n_messages,
        n_artifacts,
    ])
    .db()?;
    insert_event(tx, task_id, seq, &event)?;
    Ok(seq as Seq)
}

#[async_trait]
impl TaskManager for SqliteTaskManager {
    async fn create_task(&self, task: Task, skill_id: Option<String>) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        self.write(move |tx| create_in(tx, task, skill_id)).await
    }

    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        // One job: one savepoint, so a refused event leaves no task behind.
        self.write(move |tx| {
            let task_id = task.id.clone();
            let mut seq = create_in(tx, task, skill_id)?;
            for event in events {
                seq = append_in(tx, &task_id, event)?;
            }
            Ok(seq)
        })
        .await
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        let task_id = task_id.to_string();
        self.write(move |tx| append_in(tx, &task_id, event)).await
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let task_id = task_id.to_string();
        self.write(move |tx| {
            let pos: i64 = tx
                .prepare_cached("UPDATE tasks SET n_messages = n_messages + 1 WHERE id = ?1 RETURNING n_messages - 1")
                .db()?
                .query_row([&task_id], |r| r.get(0))
                .optional()
                .db()?
                .ok_or_else(|| StoreError::TaskNotFound(task_id.clone()))?;
            insert_message(tx, &task_id, pos, &message)?;
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
                skill_id,
                last_seq,
                ..
            }) = get_row(tx, &task_id)?
            else {
                return Ok(None);
            };
            load_view(tx, &mut task, view)?;
            Ok(Some(TaskRecord {
                task,
                skill_id,
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
            require_task(tx, &task_id)?;
            let mut stmt = tx
                .prepare_cached("SELECT seq, body FROM events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")
                .db()?;
            let after = i64::try_from(after).unwrap_or(i64::MAX);
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
            use rusqlite::types::Value;
            let (filter, mut args) = list_filter(&q);
            let total: i64 = tx
                .prepare_cached(&format!("SELECT COUNT(*) FROM tasks WHERE {filter}"))
                .db()?
                .query_row(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
                .db()?;
            let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {filter}");
            if let Some((ts, id)) = &cursor {
                args.push(Value::Integer(*ts));
                args.push(Value::Text(id.clone()));
                sql.push_str(&format!(
                    " AND (status_ts, id) < (?{}, ?{})",
                    args.len() - 1,
                    args.len()
                ));
            }
            // One more than a page tells whether another page follows.
            args.push(Value::Integer(clamp(q.page_size).saturating_add(1)));
            sql.push_str(&format!(
                " ORDER BY status_ts DESC, id DESC LIMIT ?{}",
                args.len()
            ));
            let mut stmt = tx.prepare_cached(&sql).db()?;
            let raw = stmt
                .query_map(rusqlite::params_from_iter(args.iter()), raw_row)
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            drop(stmt);
            let has_more = raw.len() > q.page_size;
            let mut tasks = Vec::with_capacity(raw.len().min(q.page_size));
            let mut last_key = None;
            for row in raw.into_iter().take(q.page_size) {
                let TaskRow {
                    mut task,
                    status_ts,
                    ..
                } = decode_row(row)?;
                load_view(tx, &mut task, q.view)?;
                last_key = Some((status_ts, task.id.clone()));
                tasks.push(task);
            }
            let next_page_token = match (has_more, last_key) {
                (true, Some((ts, id))) => encode_cursor(ts, &id),
                _ => String::new(),
            };
            Ok(ListTasksResponse {
                tasks,
                next_page_token,
                page_size: q.page_size as i32,
                total_size: total as i32,
            })
        })
        .await
    }

    async fn put_push_config(&self, config: TaskPushNotificationConfig) -> Result<(), StoreError> {
        let task_id = config
            .task_id
            .clone()
            .ok_or_else(|| StoreError::InvalidEvent("push config without taskId".into()))?;
        self.write(move |tx| {
            require_task(tx, &task_id)?;
            let body = to_json(&config)?;
            let existing: Option<i64> = tx
                .prepare_cached("SELECT pos FROM push_configs WHERE task_id = ?1 AND config_id IS ?2 ORDER BY pos LIMIT 1")
                .db()?
                .query_row(params![task_id, config.id], |r| r.get(0))
                .optional()
                .db()?;
            match existing {
                Some(pos) => {
                    tx.prepare_cached("UPDATE push_configs SET url = ?3, body = ?4 WHERE task_id = ?1 AND pos = ?2")
                        .db()?
                        .execute(params![task_id, pos, config.url, body])
                        .db()?;
                }
                None => {
                    tx.prepare_cached(
                        "INSERT INTO push_configs (task_id, pos, config_id, url, body) VALUES \
                         (?1, (SELECT COALESCE(MAX(pos) + 1, 0) FROM push_configs WHERE task_id = ?1), ?2, ?3, ?4)",
                    )
                    .db()?
                    .execute(params![task_id, config.id, config.url, body])
                    .db()?;
                }
            }
            Ok(())
        })
        .await
    }

    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        let (task_id, id) = (task_id.to_string(), id.to_string());
        self.read(move |tx| {
            require_task(tx, &task_id)?;
            let body: Option<String> = tx
                .prepare_cached("SELECT body FROM push_configs WHERE task_id = ?1 AND config_id = ?2 ORDER BY pos LIMIT 1")
                .db()?
                .query_row(params![task_id, id], |r| r.get(0))
                .optional()
                .db()?;
            body.as_deref().map(from_json).transpose()
        })
        .await
    }

    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |tx| {
            require_task(tx, &task_id)?;
            let mut stmt = tx
                .prepare_cached("SELECT body FROM push_configs WHERE task_id = ?1 ORDER BY pos")
                .db()?;
            let rows = stmt.query_map([&task_id], |r| r.get::<_, String>(0)).db()?;
            let mut out = Vec::new();
            for body in rows {
                out.push(from_json(&body.db()?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let (task_id, id) = (task_id.to_string(), id.to_string());
        self.write(move |tx| {
            require_task(tx, &task_id)?;
            let n = tx
                .prepare_cached("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2")
                .db()?
                .execute(params![task_id, id])
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
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
                        for table in ["messages", "artifacts", "artifact_chunks", "events", "push_configs"] {
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
}
