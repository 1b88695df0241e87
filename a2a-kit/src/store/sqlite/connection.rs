//! The SQLite connections: the writer thread with its group commit, read connections, their
//! pragmas, and the versioned schema migrations.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::super::StoreError;

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

/// Tuning for [`SqliteTaskManager::open_with`](super::SqliteTaskManager::open_with).
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

/// What the writer thread runs: given the connection inside the batch's transaction (or the
/// error that prevented the transaction), do the work and return how to report it once the
/// transaction's outcome is known.
pub(super) type Job = Box<dyn FnOnce(Result<&Connection, &StoreError>) -> Completion + Send>;

/// Reports a job's result; called with the commit error if the batch did not commit.
pub(super) type Completion = Box<dyn FnOnce(Option<&StoreError>) + Send>;

/// Queued jobs the writer accepts before callers wait (backpressure).
pub(super) const QUEUE: usize = 1024;
/// At most this many jobs share one transaction.
pub(super) const MAX_BATCH: usize = 128;

/// The schema, one entry per version: entry `i` takes `user_version` from `i` to `i + 1`.
/// Never edit an entry once released; append a new one.
pub(super) const MIGRATIONS: &[&str] = &[
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
    // 3: the push outbox's lanes: what each push config has had of its task's log, so
    // deliveries pending or retried when the process stopped are made after a restart.
    r#"
    CREATE TABLE push_lanes (
        task_id              TEXT    NOT NULL,
        config_id            TEXT    NOT NULL,   -- '' for a config without an id
        cursor               INTEGER NOT NULL,   -- events up to here were handled
        delivered            INTEGER NOT NULL DEFAULT 0,
        failed               INTEGER NOT NULL DEFAULT 0,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        suspended            INTEGER NOT NULL DEFAULT 0,
        last_error           TEXT,
        PRIMARY KEY (task_id, config_id)
    );
    INSERT OR IGNORE INTO push_lanes (task_id, config_id, cursor)
        SELECT p.task_id, COALESCE(p.config_id, ''), t.last_seq
        FROM push_configs p JOIN tasks t ON t.id = p.task_id;
    "#,
    // 4: a task created finished whose log nobody reads event by event is one row: its JSON
    // (the wire form) in `body`, with no messages, artifacts or events rows; its log is its
    // final snapshot. NULL for every other task.
    r#"
    ALTER TABLE tasks ADD COLUMN body TEXT;
    "#,
    // 5: a push lane's retry in progress: attempts made for its next event, and when the
    // next one is due, so a restart goes on with the same schedule.
    r#"
    ALTER TABLE push_lanes ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE push_lanes ADD COLUMN next_attempt_at INTEGER;
    "#,
    // 6: whose task it is (`store::Owner`: tenant and owner key); NULL for a task created
    // without one. ListTasks lists one owner's tasks, newest first.
    r#"
    ALTER TABLE tasks ADD COLUMN owned_by TEXT;
    CREATE INDEX tasks_by_owner ON tasks (owned_by, status_ts, id);
    "#,
    // 7: ListTasks names its owner (version 6); asked for a context or a state it walked all
    // the owner's tasks (an open agent's: every task) to find and count them. Indexes by the
    // owner and then the context or the state find them at once. Tasks by time alone and by
    // context alone are no query's any more: dropped, so a write updates as many indexes as
    // before. (`tasks_by_state` stays: start-up recovery looks tasks up by state alone.)
    r#"
    DROP INDEX tasks_by_time;
    DROP INDEX tasks_by_context;
    CREATE INDEX tasks_by_owner_context ON tasks (owned_by, context_id, status_ts, id);
    CREATE INDEX tasks_by_owner_state   ON tasks (owned_by, state, status_ts, id);
    "#,
    // 8: the calling side's remote tasks (`RemoteTaskStore`) and the webhook tokens issued for
    // them, hashed.
    r#"
    CREATE TABLE remote_tasks (
        task_id  TEXT    NOT NULL PRIMARY KEY,
        record   TEXT    NOT NULL,   -- RemoteTaskRecord JSON
        revision INTEGER NOT NULL,
        settled  INTEGER NOT NULL,   -- 1: terminal or interrupted
        finished_ms INTEGER          -- when first saved terminal (Unix millis), else NULL
    );
    CREATE INDEX remote_tasks_finished ON remote_tasks (finished_ms) WHERE finished_ms IS NOT NULL;
    CREATE INDEX remote_tasks_unsettled ON remote_tasks (settled);
    CREATE TABLE remote_tokens (
        hash       BLOB    NOT NULL PRIMARY KEY,   -- SHA-256 of the token
        task_id    TEXT UNIQUE,                    -- NULL while pending
        expires_ms INTEGER                         -- NULL: never
    );
    "#,
];

/// Run blocking work on Tokio's blocking pool.
pub(super) async fn blocking<T: Send + 'static>(
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
pub(super) fn spawn_writer(conn: Connection) -> Result<tokio::sync::mpsc::Sender<Job>, StoreError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Job>(QUEUE);
    std::thread::Builder::new()
        .name("a2a-sqlite-writer".into())
        .spawn(move || {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            let mut done = Vec::with_capacity(MAX_BATCH);
            // Ends when every sender (every store clone) is gone; the connection closes then.
            while let Some(first) = rx.blocking_recv() {
                batch.push(first);
                // Once the queue is empty, yield once before committing: when this thread
                // shares a core with the async workers (a small machine, or a busy one), they
                // then queue what they were about to, and it joins this batch instead of
                // costing a commit and two context switches of its own. With a core to
                // itself, the yield returns at once.
                let mut yielded = false;
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) if yielded => break,
                        Err(_) => {
                            yielded = true;
                            std::thread::yield_now();
                        }
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

/// `f`'s result, or an error if it panicked (a panic must not stop the writer thread).
pub(super) fn unwinding<T>(f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(StoreError::Backend(
            "a store operation panicked; it was rolled back".into(),
        ))
    })
}

/// Run `f` inside a savepoint of the open transaction; roll it back if `f` fails or panics.
pub(super) fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    // Prepared once per connection (the cache): a job is often a handful of inserts, and
    // parsing these two statements each time was a visible share of it.
    conn.prepare_cached("SAVEPOINT job")
        .db()?
        .execute([])
        .db()?;
    let out = unwinding(|| f(conn));
    if out.is_ok() {
        conn.prepare_cached("RELEASE job").db()?.execute([]).db()?;
    } else {
        conn.execute_batch("ROLLBACK TO job; RELEASE job").db()?;
    }
    out
}

pub(super) fn open_reader(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).db()?;
    configure(&conn, options, false)?;
    Ok(conn)
}

/// Per-connection settings. The writer also switches the file to WAL (a persistent setting).
pub(super) fn configure(
    conn: &Connection,
    options: &SqliteOptions,
    writer: bool,
) -> Result<(), StoreError> {
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
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
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

/// A rusqlite result as the store's.
pub(super) trait Db<T> {
    fn db(self) -> Result<T, StoreError>;
}

impl<T> Db<T> for Result<T, rusqlite::Error> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::Backend(e.to_string()))
    }
}
