//! [`PostgresTaskManager`]: tasks, event logs and push configs in PostgreSQL (cargo feature
//! `postgres`), one database shared by every replica of an agent.
//!
//! The design is documented on [`PostgresTaskManager`].

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Connection, PgConnection, Row};
use tokio::sync::mpsc;

mod changes;
mod cluster;
mod lease;
mod migrations;
mod outbox;
mod push_configs;
mod remote;
mod writer;

use super::{
    ClusterStore, EventRecord, ListQuery, Owner, PushConfigStore, PushOutbox, Seq, StoreChange,
    StoreError, TaskManager, TaskRecord, TaskView, decode_cursor, keyset_page, task_after,
};
use crate::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};

/// How a [`PostgresTaskManager`] connects.
///
/// ```
/// use a2a_kit::store::PostgresOptions;
/// let options = PostgresOptions::default().schema("travel_agent").max_connections(32);
/// assert_eq!(options.schema, "travel_agent");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PostgresOptions {
    /// The schema the store's tables live in, created if missing (default `a2a`): agents
    /// that share a database keep their tasks apart by schema. Lowercase letters, digits and
    /// `_`, starting with a letter or `_`, at most 48 characters.
    pub schema: String,
    /// Connections in the pool (default 16).
    pub max_connections: u32,
    /// How long a call waits for a free connection before failing (default 5 s): also how
    /// long a request waits before it is refused with 503 while the database is away.
    pub acquire_timeout: Duration,
    /// How long a task outlives a silent replica (default 30 s): the replica running a task
    /// renews its lease on it several times per lease; once a lease has run out, any other
    /// replica ends the task FAILED (or, if it waits for the user's reply, lets any replica
    /// continue it).
    pub lease: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: "a2a".into(),
            max_connections: 16,
            acquire_timeout: Duration::from_secs(5),
            lease: Duration::from_secs(30),
        }
    }
}

impl PostgresOptions {
    /// The schema the tables live in.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Connections in the pool.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n;
        self
    }

    /// How long a call waits for a free connection.
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }

    /// How long a task outlives a silent replica (at least 100 ms).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }
}

/// A durable [`TaskManager`] on PostgreSQL (cargo feature `postgres`), for agents that run as
/// several replicas: every replica connected to the same database and schema sees the same
/// tasks, logs and push configs, and hears of the others' events.
///
/// ```no_run
/// use a2a_kit::store::PostgresTaskManager;
/// # async fn demo() -> Result<(), a2a_kit::store::StoreError> {
/// let store = PostgresTaskManager::connect("postgres://postgres@127.0.0.1:5432/agents").await?;
/// # let _ = store; Ok(()) }
/// ```
///
/// # Design
///
/// * **Driver**: `sqlx` (async, pooled; `PgListener` for notifications).
/// * **Schema**: versioned migrations embedded in the binary, applied at connect time by
///   `sqlx`'s migrator (under an advisory lock, so replicas starting together are safe; a
///   migration edited after it was applied is refused by its checksum). Tables live in their
///   own schema ([`PostgresOptions::schema`]). Wire objects are stored as their exact JSON
///   text; everything that filters or orders is a real, indexed column (`tasks` by
///   `(status_ts, id)`, by context, by state, by `terminal_at`; `events` by `(task_id, seq)`,
///   with no foreign key, whose per-row check cost a fifth of a task's write; `push_configs`
///   by `(task_id, pos)`). Task ids compare bytewise (`COLLATE "C"`), so pages
///   come in the same order as from the other stores.
/// * **Writes**: creations and appends go through a group-commit writer: what concurrent
///   callers queued is written in one transaction, one statement per kind, and each caller is
///   answered once that transaction committed (nothing acknowledged can be lost). An append
///   locks its task's row (`SELECT … FOR UPDATE`, rows in id order), checks the transition on
///   the stored task, and writes the task, the log entry and a notification together: two
///   replicas can never interleave an illegal transition, a terminal state stays final whoever
///   writes after it, and one refused write never fails another of its batch. Other
///   operations are a transaction each. Server-made ids are UUIDv7, so new rows land at the
///   right edge of each index.
/// * **Push outbox** ([`PushOutbox`]): a lane per push config
///   (its progress through the task's log) and a claim per task (which replica delivers it,
///   renewed with the leases), so each event reaches each webhook from one replica and a
///   survivor continues a dead replica's deliveries.
/// * **Other replicas' events**: each append notifies the channel `a2a_<schema>` with the
///   task id, sequence number and state (`NOTIFY`, delivered at commit). Each store listens
///   on its own connection and hands other processes' changes to the runtime
///   ([`ClusterStore::changes`]), which rings its readers' doorbells; readers then read the log,
///   which stays the truth. When the listening connection drops and comes back, readers are
///   told to read their logs again, so nothing is missed.
/// * **Leases** (`owner`, `lease_until`): a replica that writes a task's status holds a lease
///   on it until the task ends, renewed four times per [lease](PostgresOptions::lease).
/// * **Liveness**: each store lists itself in `replicas` and holds a session advisory lock on
///   a connection of its own while it lives; PostgreSQL frees the lock when the process dies
///   (`kill -9` included), so the others know at once. Every store checks, about once a
///   second, for listed replicas whose lock is free and for leases that ran out (a replica
///   that is frozen, or from before liveness), and ends all of their tasks in one pass, in
///   batches: a running task ends FAILED ("the replica running this task stopped answering"),
///   under the task's row lock with the condition checked again there, so a replica that is
///   merely slow is never overtaken; a task waiting for the user's reply is freed, for any
///   replica to continue. A store trusts a free lock only once its own liveness session has
///   been up for a second (after a database restart every replica takes its lock again).
///   This replaces start-up recovery, which a shared store skips.
/// * **Replies** ([`ClusterStore::route_reply`]): a reply to a task whose skill waits in `ask`
///   on a live replica is added to its history, marked (`reply_after`) and handed to that
///   replica, which takes it under the row's lock before resuming its skill. A reply to a
///   dead replica's question is continued where it arrives; a marked reply whose replica died
///   (or let go, or whose lease ran out) before taking it is taken over by a survivor, which
///   runs the skill again with the history. Each reply is continued exactly once.
#[derive(Clone)]
pub struct PostgresTaskManager {
    inner: Arc<Inner>,
}

struct Inner {
    /// The pool, the notification channel, this store's id and its lease: what the writer
    /// loops share with the store.
    cx: writer::Context,
    schema: String,
    /// Creations and appends go through the group-commit writer.
    writer: writer::Writer,
    /// Since when (Unix ms) this replica's liveness session is up; 0 while it is down.
    live_since: AtomicI64,
    /// The runtimes following this store ([`ClusterStore::changes`]): replies this replica
    /// takes over from a dead one are handed to them directly.
    followers: std::sync::Mutex<Vec<mpsc::UnboundedSender<StoreChange>>>,
}

/// What an update does to a task's lease.
#[derive(Clone, Copy)]
enum Lease<'a> {
    /// Leave it as it is.
    Keep,
    /// This replica runs the task: it holds the lease until `until` (Unix ms).
    Take { owner: &'a str, until: i64 },
    /// Nobody runs the task any more (it ended).
    Release,
}

fn now_millis() -> i64 {
    Timestamp::now().0.timestamp_millis()
}

impl std::fmt::Debug for PostgresTaskManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTaskManager")
            .field("schema", &self.inner.schema)
            .finish_non_exhaustive()
    }
}

/// A backend failure, with PostgreSQL's message: [`StoreError::Unavailable`] when the server
/// cannot be reached (the call may work once it is back), else [`StoreError::Backend`].
fn db(e: sqlx::Error) -> StoreError {
    let unreachable = match &e {
        // A connection cut mid-handshake shows as a protocol error ("unexpected response").
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // Class 08: connection exceptions; 57P01-57P03: the server is shutting down or starting.
        sqlx::Error::Database(d) => d
            .code()
            .is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")),
        _ => false,
    };
    if unreachable {
        StoreError::Unavailable(format!("PostgreSQL: {e}"))
    } else {
        StoreError::Backend(format!("PostgreSQL: {e}"))
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("could not serialize: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Backend(format!("corrupt row: {e}")))
}

fn millis(ts: Option<Timestamp>) -> i64 {
    ts.unwrap_or_else(Timestamp::now).0.timestamp_millis()
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The first connection's error, naming the URL (`shown`, without its password); a database
/// the server does not have says so in words of our own (the server's own are translated to
/// its locale), with how to create it.
fn connect_failed(shown: &str, connect: &PgConnectOptions, e: &sqlx::Error) -> StoreError {
    // SQLSTATE 3D000: invalid_catalog_name.
    let missing = e
        .as_database_error()
        .and_then(|db| db.code())
        .is_some_and(|code| code == "3D000");
    if missing {
        // Without one in the URL, PostgreSQL connects to the database named like the user.
        let name = connect
            .get_database()
            .unwrap_or_else(|| connect.get_username());
        return StoreError::Backend(format!(
            "cannot connect to PostgreSQL at {shown}: {} `{name}` there; create it first \
             (`createdb {name}`, or `CREATE DATABASE \"{name}\"`): the store creates its \
             schema, not the database",
            super::POSTGRES_NO_DATABASE
        ));
    }
    StoreError::Backend(format!("cannot connect to PostgreSQL at {shown}: {e}"))
}

/// `url` with its password (if any) replaced by `***`, for messages and logs.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            let hidden = if user_info.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

fn valid_schema(schema: &str) -> bool {
    let mut chars = schema.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && schema.len() <= 48
}

impl PostgresTaskManager {
    /// Connect to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`) with the default
    /// options, creating or upgrading the schema.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connect to `url` with `options`, creating or upgrading the schema.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        if !valid_schema(&options.schema) {
            return Err(StoreError::Backend(format!(
                "`{}` is not a schema name this store uses: lowercase letters, digits and `_`, \
                 starting with a letter or `_`, at most 48 characters",
                options.schema
            )));
        }
        // Errors name the URL without its password.
        let shown = redacted(url);
        let connect = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Backend(format!("`{shown}` is not a PostgreSQL URL: {e}")))?
            .options([("search_path", options.schema.as_str())])
            // The migrations' `IF NOT EXISTS` make a second replica's server send NOTICEs
            // ("already exists, skipping"), which sqlx logs at INFO: not worth an operator's
            // eye. Warnings and errors still come.
            .options([("client_min_messages", "warning")]);
        // One connection first: a refused connection or password fails now, with the
        // server's reason, instead of as a pool timeout.
        PgConnection::connect_with(&connect)
            .await
            .map_err(|e| connect_failed(&shown, &connect, &e))?
            .close()
            .await
            .map_err(db)?;
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect.clone())
            .await
            .map_err(|e| {
                StoreError::Backend(format!("cannot connect to PostgreSQL at {shown}: {e}"))
            })?;
        migrations::run(&pool, &options.schema).await?;
        let cx = writer::Context {
            pool,
            channel: format!("a2a_{}", options.schema),
            instance: crate::protocol::new_uuid(),
            lease_ms: i64::try_from(options.lease.max(Duration::from_millis(100)).as_millis())
                .unwrap_or(i64::MAX),
            finished: Default::default(),
        };
        let inner = Arc::new(Inner {
            writer: writer::Writer::spawn(cx.clone()),
            schema: options.schema,
            cx,
            live_since: AtomicI64::new(0),
            followers: Default::default(),
        });
        lease::hold_liveness(&inner, connect).await?;
        lease::spawn_keeper(Arc::downgrade(&inner));
        Ok(PostgresTaskManager { inner })
    }

    /// The connection pool (for health checks or the application's own queries).
    pub fn pool(&self) -> &PgPool {
        &self.inner.cx.pool
    }

    /// ListTasks' statements for `query` (the count, then the page), each as the store
    /// prepares it, with its arguments (`$1`, ...) as SQL literals: what
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

    /// The schema the tables live in.
    pub fn schema(&self) -> &str {
        &self.inner.schema
    }

    /// Delete the schema and every task, log and push config in it (tests, tear-down). Other
    /// clones of this store fail from then on.
    pub async fn drop_schema(&self) -> Result<(), StoreError> {
        // The schema name was checked to be a plain identifier.
        sqlx::query(&format!(
            "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
            self.inner.schema
        ))
        .execute(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(())
    }

    /// Queue a new task for the writer (`released`: its log is released at creation).
    async fn create(
        &self,
        task: Task,
        skill_id: Option<String>,
        owned_by: Option<Owner>,
        events: Vec<StreamResponse>,
        released: bool,
    ) -> Result<Seq, StoreError> {
        let last = task_after(&task, &events)?;
        let released = released && last.status.state.is_terminal();
        self.inner
            .writer
            .write(writer::Write::Create(Box::new(writer::NewTask {
                first: task,
                last,
                skill_id,
                owned_by,
                events,
                released,
            })))
            .await
    }

    async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        self.inner.cx.pool.begin().await.map_err(db)
    }
}

/// Write a changed task back to its row.
async fn update_task(
    conn: &mut PgConnection,
    task: &Task,
    last_seq: Seq,
    lease: Lease<'_>,
) -> Result<(), StoreError> {
    let status_ts = millis(task.status.timestamp);
    let (set_owner, owner, until) = match lease {
        Lease::Keep => (false, None, None),
        Lease::Take { owner, until } => (true, Some(owner), Some(until)),
        Lease::Release => (true, None, None),
    };
    sqlx::query(
        "UPDATE tasks SET state = $2, status_ts = $3, \
         terminal_at = CASE WHEN $4 THEN $3 ELSE terminal_at END, last_seq = $5, task = $6, \
         owner = CASE WHEN $7 THEN $8 ELSE owner END, \
         lease_until = CASE WHEN $7 THEN $9 ELSE lease_until END \
         WHERE id = $1",
    )
    .bind(&task.id)
    .bind(task.status.state.as_str())
    .bind(status_ts)
    .bind(task.status.state.is_terminal())
    .bind(to_i64(last_seq))
    .bind(to_json(task)?)
    .bind(set_owner)
    .bind(owner)
    .bind(until)
    .execute(conn)
    .await
    .map_err(db)?;
    Ok(())
}

/// A task's row, locked until the transaction ends.
struct LockedTask {
    task: Task,
    last_seq: Seq,
    /// The replica holding the task's lease, and until when (Unix ms).
    holder: Option<String>,
    lease_until: Option<i64>,
}

impl LockedTask {
    /// Whether a replica other than `me` holds the task, with its lease still running.
    fn held_by_other(&self, me: &str) -> bool {
        self.holder.as_deref().is_some_and(|h| h != me)
            && self.lease_until.unwrap_or(0) >= now_millis()
    }
}

/// Lock a task's row and read it (`None` for a task that does not exist).
async fn lock_row(
    conn: &mut PgConnection,
    task_id: &str,
) -> Result<Option<LockedTask>, StoreError> {
    let Some(row) = sqlx::query(
        "SELECT task, last_seq, owner, lease_until FROM tasks WHERE id = $1 FOR UPDATE",
    )
    .bind(task_id)
    .fetch_optional(conn)
    .await
    .map_err(db)?
    else {
        return Ok(None);
    };
    Ok(Some(LockedTask {
        task: from_json(row.get::<&str, _>(0))?,
        last_seq: row.get::<i64, _>(1) as Seq,
        holder: row.get(2),
        lease_until: row.get(3),
    }))
}

/// The task and its last sequence number, its row locked until the transaction ends.
async fn lock_task(conn: &mut PgConnection, task_id: &str) -> Result<(Task, Seq), StoreError> {
    let locked = lock_row(conn, task_id)
        .await?
        .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
    Ok((locked.task, locked.last_seq))
}

/// [`StoreError::TaskNotFound`] unless the task exists.
async fn require_task(conn: &mut PgConnection, task_id: &str) -> Result<(), StoreError> {
    let found = sqlx::query("SELECT 1 FROM tasks WHERE id = $1")
        .bind(task_id)
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::TaskNotFound(task_id.to_string())),
    }
}

/// A bound value of a query built at run time.
#[derive(Clone)]
enum Arg {
    Text(String),
    Int(i64),
}

fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    args: &'q [Arg],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    for arg in args {
        query = match arg {
            Arg::Text(s) => query.bind(s.as_str()),
            Arg::Int(i) => query.bind(*i),
        };
    }
    query
}

/// ListTasks' two statements for `q` after `cursor`, each with its arguments: the count of
/// the owner's matching tasks, and the page (one row more than a page says another follows).
fn list_statements(q: &ListQuery, cursor: Option<&(i64, String)>) -> [(String, Vec<Arg>); 2] {
    let (filter, count_args) = list_filter(q);
    let count = format!("SELECT COUNT(*) FROM tasks WHERE {filter}");
    let mut args = count_args.clone();
    let mut page = format!("SELECT task, status_ts FROM tasks WHERE {filter}");
    if let Some((ts, id)) = cursor {
        args.push(Arg::Int(*ts));
        args.push(Arg::Text(id.clone()));
        page.push_str(&format!(
            " AND (status_ts, id) < (${}, ${})",
            args.len() - 1,
            args.len()
        ));
    }
    args.push(Arg::Int(
        i64::try_from(q.page_size)
            .unwrap_or(i64::MAX)
            .saturating_add(1),
    ));
    page.push_str(&format!(
        " ORDER BY status_ts DESC, id DESC LIMIT ${}",
        args.len()
    ));
    [(count, count_args), (page, args)]
}

/// Arguments as SQL literals (for the tests, which EXPLAIN ListTasks' statements).
fn literals(args: &[Arg]) -> Vec<String> {
    args.iter()
        .map(|arg| match arg {
            Arg::Int(n) => n.to_string(),
            Arg::Text(t) => format!("'{}'", t.replace('\'', "''")),
        })
        .collect()
}

/// The WHERE clause and arguments of a ListTasks query's filters.
fn list_filter(q: &ListQuery) -> (String, Vec<Arg>) {
    let mut args = Vec::new();
    // Always one owner's tasks (two forms, both served by `tasks_by_owned_by`).
    let mut clauses = vec![match &q.owner {
        Some(owner) => {
            args.push(Arg::Text(owner.as_str().to_string()));
            String::from("owned_by = $1")
        }
        None => String::from("owned_by IS NULL"),
    }];
    if let Some(c) = &q.context_id {
        args.push(Arg::Text(c.clone()));
        clauses.push(format!("context_id = ${}", args.len()));
    }
    if let Some(s) = q.status {
        args.push(Arg::Text(s.as_str().to_string()));
        clauses.push(format!("state = ${}", args.len()));
    }
    if let Some(t) = q.status_timestamp_after {
        args.push(Arg::Int(t.0.timestamp_millis()));
        clauses.push(format!("status_ts >= ${}", args.len()));
    }
    (clauses.join(" AND "), args)
}

/// Terminal tasks deleted per statement by [`TaskManager::purge_terminal_before`].
const PURGE_BATCH: i64 = 500;

#[async_trait]
impl TaskManager for PostgresTaskManager {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        self.create(task, skill_id, owner, Vec::new(), false).await
    }

    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        self.create(task, skill_id, owner, events, false).await
    }

    async fn create_task_with_released_log(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        self.create(task, skill_id, owner, events, true).await
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        self.inner
            .writer
            .write(writer::Write::Append {
                task_id: task_id.to_string(),
                event,
            })
            .await
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        let (mut task, last_seq) = lock_task(&mut tx, task_id).await?;
        task.history.push(message);
        update_task(&mut tx, &task, last_seq, Lease::Keep).await?;
        tx.commit().await.map_err(db)
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let row = sqlx::query("SELECT task, skill_id, last_seq, owned_by FROM tasks WHERE id = $1")
            .bind(task_id)
            .fetch_optional(&self.inner.cx.pool)
            .await
            .map_err(db)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut task: Task = from_json(row.get::<&str, _>(0))?;
        view.apply(&mut task);
        Ok(Some(TaskRecord {
            task,
            skill_id: row.get(1),
            owner: row.get::<Option<&str>, _>(3).map(Owner::from_stored),
            last_seq: row.get::<i64, _>(2) as Seq,
        }))
    }

    async fn write_task_json(
        &self,
        task_id: &str,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        if view != TaskView::FULL {
            return crate::store::write_found(out, self.get_task(task_id, view).await?);
        }
        // The whole task is stored as serde wrote it: copied as it is, from memory when this
        // process just finished it.
        if let Some(json) = self.inner.cx.finished.get(task_id) {
            out.extend_from_slice(json.as_bytes());
            return Ok(true);
        }
        let row = sqlx::query("SELECT task FROM tasks WHERE id = $1")
            .bind(task_id)
            .fetch_optional(&self.inner.cx.pool)
            .await
            .map_err(db)?;
        match row {
            Some(row) => {
                out.extend_from_slice(row.get::<&str, _>(0).as_bytes());
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let mut conn = self.inner.cx.pool.acquire().await.map_err(db)?;
        let rows = sqlx::query(
            "SELECT seq, event FROM events WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(task_id)
        .bind(to_i64(after))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
        if rows.is_empty() {
            // Every task logs its creation as event 1, except one created finished with its
            // log released: its final snapshot stands for the log. (One statement, so an
            // event appended meanwhile cannot pass for that.)
            let (last_seq, released): (i64, Option<String>) = sqlx::query_as(
                "SELECT last_seq, CASE WHEN NOT EXISTS (SELECT 1 FROM events WHERE task_id = $1) \
                 THEN task END FROM tasks WHERE id = $1",
            )
            .bind(task_id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db)?
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
            return match released {
                Some(task) if to_i64(after) < last_seq && limit > 0 => Ok(vec![EventRecord {
                    seq: last_seq as Seq,
                    event: StreamResponse::Task(from_json(&task)?),
                }]),
                _ => Ok(Vec::new()),
            };
        }
        rows.iter()
            .map(|row| {
                Ok(EventRecord {
                    seq: row.get::<i64, _>(0) as Seq,
                    event: from_json(row.get::<&str, _>(1))?,
                })
            })
            .collect()
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        let cursor = q.page_token.as_deref().map(decode_cursor).transpose()?;
        let [(count, count_args), (page, args)] = list_statements(q, cursor.as_ref());
        let mut tx = self.begin().await?;
        let total: i64 = bind_all(sqlx::query(&count), &count_args)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?
            .get(0);
        let rows = bind_all(sqlx::query(&page), &args)
            .fetch_all(&mut *tx)
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        let mut page = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut task: Task = from_json(row.get::<&str, _>(0))?;
            q.view.apply(&mut task);
            page.push((row.get::<i64, _>(1), task));
        }
        Ok(keyset_page(page, q.page_size, total as usize))
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.inner.cx.finished.clear();
        let cutoff = before.0.timestamp_millis();
        let mut total = 0;
        loop {
            // One batch per statement: appends get the rows between batches. Push configs go
            // with their task (ON DELETE CASCADE), events explicitly (their table has no
            // foreign key: see migration 4).
            let n = sqlx::query(
                "WITH gone AS (DELETE FROM tasks WHERE id IN \
                 (SELECT id FROM tasks WHERE terminal_at < $1 ORDER BY terminal_at LIMIT $2) \
                 RETURNING id), \
                 events_gone AS (DELETE FROM events WHERE task_id IN (SELECT id FROM gone)) \
                 SELECT count(*) FROM gone",
            )
            .bind(cutoff)
            .bind(PURGE_BATCH)
            .fetch_one(&self.inner.cx.pool)
            .await
            .map_err(db)?
            .get::<i64, _>(0) as usize;
            total += n;
            if (n as i64) < PURGE_BATCH {
                return Ok(total);
            }
        }
    }

    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        let states: Vec<&'static str> = states.iter().map(|s| s.as_str()).collect();
        let rows = sqlx::query("SELECT id FROM tasks WHERE state = ANY($1)")
            .bind(&states)
            .fetch_all(&self.inner.cx.pool)
            .await
            .map_err(db)?;
        Ok(rows.iter().map(|row| row.get::<String, _>(0)).collect())
    }

    fn is_durable(&self) -> bool {
        true
    }

    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        Some(self)
    }

    fn push_outbox(&self) -> Option<&dyn PushOutbox> {
        Some(self)
    }

    fn cluster(&self) -> Option<&dyn ClusterStore> {
        Some(self)
    }

    fn remote_tasks(&self) -> Option<&dyn crate::store::RemoteTaskStore> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redacted("postgres://app:s3cr@t@db.example.com:5432/agents?sslmode=require"),
            "postgres://app:***@db.example.com:5432/agents?sslmode=require"
        );
        assert_eq!(
            redacted("postgres://app@db:5432/agents"),
            "postgres://app@db:5432/agents"
        );
        assert_eq!(redacted("postgres://db/agents"), "postgres://db/agents");
        assert_eq!(redacted("not a url"), "not a url");
    }
}
