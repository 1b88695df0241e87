//! The group-commit writer: task creations and event appends from concurrent callers share
//! one transaction, one round trip per statement kind, and one WAL flush.
//!
//! A caller hands its write to a queue and waits; a few writer loops each take what is queued
//! (up to [`MAX_BATCH`]) and write it in one transaction: new tasks in one multi-row `INSERT`,
//! the rows of tasks that get events locked in one `SELECT … FOR UPDATE` (in id order, so two
//! batches never wait on each other in a cycle), every transition checked in Rust exactly as a
//! lone append checks it, then the changed rows, the log entries and the notifications in one
//! statement each. A write is answered only once its transaction has committed: nothing
//! acknowledged can be lost. One write's refusal (a transition the state machine forbids, a
//! task that exists or does not) is that write's error and leaves the batch alone; a failure of
//! the database fails the whole batch, which is retried once when PostgreSQL chose it as a
//! deadlock victim.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sqlx::{PgConnection, PgPool, Row};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::{Lease, changes, db, from_json, millis, now_millis, to_i64, to_json};
use crate::protocol::{StreamResponse, Task, TaskState};
use crate::store::{JustFinished, Seq, StoreError, apply_event};

/// Writes that share one transaction, at most.
pub(super) const MAX_BATCH: usize = 128;
/// Writer loops: while one batch waits for its commit, the next is being written.
const WRITERS: usize = 2;
/// Writes queued before callers wait for room (backpressure).
const QUEUE: usize = 4096;

/// A new task for the writer, its first events already checked.
pub(super) struct NewTask {
    pub(super) first: Task,
    /// The task after `events`.
    pub(super) last: Task,
    pub(super) skill_id: Option<String>,
    pub(super) owned_by: Option<crate::store::Owner>,
    pub(super) events: Vec<StreamResponse>,
    /// Finished, its log released at creation: the row alone (its log is its final
    /// snapshot: see `events_after`).
    pub(super) released: bool,
}

/// A write for the writer.
#[allow(clippy::large_enum_variant)] // an event is moved once, into the queue: no box needed
pub(super) enum Write {
    /// A new task.
    Create(Box<NewTask>),
    /// An event for an existing task.
    Append {
        task_id: String,
        event: StreamResponse,
    },
}

struct Job {
    write: Write,
    done: oneshot::Sender<Result<Seq, StoreError>>,
}

/// What the writer loops need of the store (not the store itself: the store owns the queue,
/// and the loops end when the store is gone).
#[derive(Clone)]
pub(super) struct Context {
    pub(super) pool: PgPool,
    /// The notification channel of the store's schema.
    pub(super) channel: String,
    /// This store's id in notifications (so it can skip its own) and in the leases it holds.
    pub(super) instance: String,
    /// The lease, in milliseconds.
    pub(super) lease_ms: i64,
    /// Tasks this store just finished.
    pub(super) finished: Arc<JustFinished>,
}

impl Context {
    /// The lease an event written by this replica gives its task: a running skill's status
    /// takes it, an ending lets go of it; a question keeps whoever holds it (the replica whose
    /// `ask` waits; a skill that ended asking is let go of by the runtime, `release`).
    fn lease_for(&self, event: &StreamResponse) -> Lease<'_> {
        match event.state() {
            Some(s) if s.is_terminal() => Lease::Release,
            Some(s) if s.is_interrupted() => Lease::Keep,
            Some(_) => self.take(),
            None => Lease::Keep,
        }
    }

    /// When a lease taken or renewed now runs out (Unix ms).
    pub(super) fn lease_until(&self) -> i64 {
        now_millis() + self.lease_ms
    }

    /// This replica takes (or renews) a task's lease.
    fn take(&self) -> Lease<'_> {
        Lease::Take {
            owner: &self.instance,
            until: self.lease_until(),
        }
    }

    /// The notification of an event for the other replicas, unless it would not fit:
    /// NOTIFY payloads are limited to 8000 bytes, so a task id that long is not announced
    /// (its readers elsewhere still see its events when they next read the log).
    pub(super) fn announcement(
        &self,
        task_id: &str,
        seq: Seq,
        state: Option<TaskState>,
    ) -> Option<String> {
        Some(changes::payload(&self.instance, task_id, seq, state)).filter(|p| p.len() < 8000)
    }
}

/// The queue the store's writes go through.
#[derive(Clone)]
pub(super) struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Start the writer loops on the current runtime.
    pub(super) fn spawn(cx: Context) -> Writer {
        let (queue, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..WRITERS {
            tokio::spawn(run(cx.clone(), rx.clone()));
        }
        Writer { queue }
    }

    /// Write and wait for the commit: the new last sequence number of the task.
    pub(super) async fn write(&self, write: Write) -> Result<Seq, StoreError> {
        let (done, answer) = oneshot::channel();
        self.queue
            .send(Job { write, done })
            .await
            .map_err(|_| StoreError::Backend("the store's writer stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Backend("the store's writer stopped".into()))?
    }
}

async fn run(cx: Context, rx: Arc<Mutex<mpsc::Receiver<Job>>>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    loop {
        {
            let mut rx = rx.lock().await;
            if rx.recv_many(&mut jobs, MAX_BATCH).await == 0 {
                return;
            }
        }
        let writes: Vec<&Write> = jobs.iter().map(|j| &j.write).collect();
        let mut outcome = commit(&cx, &writes).await;
        if matches!(&outcome, Err(e) if e.deadlocked) {
            outcome = commit(&cx, &writes).await;
        }
        match outcome {
            Ok(results) => {
                for (job, result) in jobs.drain(..).zip(results) {
                    let _ = job.done.send(result);
                }
            }
            Err(failed) => {
                for job in jobs.drain(..) {
                    let _ = job.done.send(Err(failed.error.clone()));
                }
            }
        }
    }
}

/// Why a batch did not commit.
struct Failed {
    error: StoreError,
    /// PostgreSQL broke a deadlock by failing this transaction: worth one more try.
    deadlocked: bool,
}

impl From<sqlx::Error> for Failed {
    fn from(e: sqlx::Error) -> Self {
        let deadlocked = e.as_database_error().and_then(|d| d.code()).as_deref() == Some("40P01");
        Failed {
            error: db(e),
            deadlocked,
        }
    }
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Self {
        Failed {
            error,
            deadlocked: false,
        }
    }
}

/// Write `writes` in one transaction; each write's own result once it committed.
async fn commit(cx: &Context, writes: &[&Write]) -> Result<Vec<Result<Seq, StoreError>>, Failed> {
    let mut results: Vec<Option<Result<Seq, StoreError>>> = vec![None; writes.len()];
    let mut batch = Batch::default();
    if writes.iter().all(|w| matches!(w, Write::Create(_))) {
        // New tasks only: one statement, its own transaction (one round trip).
        let mut conn = cx.pool.acquire().await?;
        create(cx, &mut conn, writes, &mut batch, &mut results).await?;
    } else {
        let mut tx = cx.pool.begin().await?;
        create(cx, &mut tx, writes, &mut batch, &mut results).await?;
        append(cx, &mut tx, writes, &mut batch, &mut results).await?;
        batch.flush(cx, &mut tx).await?;
        tx.commit().await?;
    }
    if !batch.finished.is_empty() {
        cx.finished.keep(batch.finished);
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(StoreError::Backend("a write was left out".into()))))
        .collect())
}

/// Log entries and notifications of a batch, written together at its end.
#[derive(Default)]
struct Batch {
    event_tasks: Vec<String>,
    event_seqs: Vec<i64>,
    event_bodies: Vec<String>,
    notifications: Vec<String>,
    /// Tasks the batch leaves terminal, with their stored JSON.
    finished: Vec<(String, String)>,
}

impl Batch {
    fn event(&mut self, task_id: &str, seq: Seq, event: &StreamResponse) -> Result<(), StoreError> {
        self.event_tasks.push(task_id.to_string());
        self.event_seqs.push(to_i64(seq));
        self.event_bodies.push(to_json(event)?);
        Ok(())
    }

    /// Queue the event's notification; whether it was (see [`Context::announcement`]).
    fn notify(&mut self, cx: &Context, task_id: &str, seq: Seq, state: Option<TaskState>) -> bool {
        let payload = cx.announcement(task_id, seq, state);
        let queued = payload.is_some();
        self.notifications.extend(payload);
        queued
    }

    /// Note the terminal tasks among `rows` (after they are written).
    fn finished(&mut self, rows: &TaskRows) {
        for (i, terminal) in rows.terminal.iter().enumerate() {
            if *terminal {
                self.finished
                    .push((rows.ids[i].clone(), rows.tasks[i].clone()));
            }
        }
    }

    async fn flush(&mut self, cx: &Context, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if !self.event_tasks.is_empty() {
            sqlx::query(
                "INSERT INTO events (task_id, seq, event) \
                 SELECT * FROM UNNEST($1::text[], $2::int8[], $3::text[])",
            )
            .bind(std::mem::take(&mut self.event_tasks))
            .bind(std::mem::take(&mut self.event_seqs))
            .bind(std::mem::take(&mut self.event_bodies))
            .execute(&mut *conn)
            .await?;
        }
        if !self.notifications.is_empty() {
            sqlx::query("SELECT pg_notify($1, p) FROM UNNEST($2::text[]) AS p")
                .bind(&cx.channel)
                .bind(std::mem::take(&mut self.notifications))
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

/// Insert the batch's new tasks (in id order) in one statement; an id already taken, in the
/// table or earlier in the batch, is that write's `TaskExists`.
async fn create(
    cx: &Context,
    conn: &mut PgConnection,
    writes: &[&Write],
    batch: &mut Batch,
    results: &mut [Option<Result<Seq, StoreError>>],
) -> Result<(), Failed> {
    let mut order: Vec<usize> = (0..writes.len())
        .filter(|&i| matches!(writes[i], Write::Create(_)))
        .collect();
    if order.is_empty() {
        return Ok(());
    }
    order.sort_by(|&a, &b| created_id(writes[a]).cmp(created_id(writes[b])));
    let (rows, inserting) = creation_rows(cx, writes, &order, results)?;
    let (log, notify_ids) = creation_logs(cx, writes, &inserting)?;
    let inserted = insert_tasks(cx, conn, &rows, &log, &notify_ids).await?;
    for (n, id) in rows.ids.iter().enumerate() {
        if rows.terminal[n] && inserted.contains(id) {
            batch.finished.push((id.clone(), rows.tasks[n].clone()));
        }
    }
    for i in inserting {
        let Write::Create(new) = writes[i] else {
            continue;
        };
        results[i] = Some(if inserted.contains(&new.last.id) {
            Ok(1 + new.events.len() as Seq)
        } else {
            Err(StoreError::TaskExists(new.last.id.clone()))
        });
    }
    Ok(())
}

/// The rows of the creations in `order` (indexes into `writes`), and which writes they are;
/// an id taken earlier in the batch is that write's `TaskExists` (in `results`).
fn creation_rows(
    cx: &Context,
    writes: &[&Write],
    order: &[usize],
    results: &mut [Option<Result<Seq, StoreError>>],
) -> Result<(TaskRows, Vec<usize>), StoreError> {
    let mut seen = HashSet::new();
    let mut rows = TaskRows::default();
    let mut inserting = Vec::new();
    for &i in order {
        let Write::Create(new) = writes[i] else {
            continue;
        };
        let (last, skill_id) = (&new.last, &new.skill_id);
        if !seen.insert(last.id.as_str()) {
            results[i] = Some(Err(StoreError::TaskExists(last.id.clone())));
            continue;
        }
        let lease = if last.status.state.is_terminal() {
            Lease::Release
        } else {
            cx.take()
        };
        rows.push(last, 1 + new.events.len() as Seq, lease)?;
        rows.skill_ids.push(skill_id.clone());
        rows.owned_bys
            .push(new.owned_by.as_ref().map(|o| o.as_str().to_string()));
        rows.context_ids.push(last.context_id.clone());
        inserting.push(i);
    }
    Ok((rows, inserting))
}

/// The log entries and notifications of the creations `inserting`, and the ids of the tasks
/// notified. For every candidate: the statement keeps those of the tasks it inserted.
fn creation_logs(
    cx: &Context,
    writes: &[&Write],
    inserting: &[usize],
) -> Result<(Batch, Vec<String>), StoreError> {
    let mut log = Batch::default();
    let mut notify_ids = Vec::new();
    for &i in inserting {
        let Write::Create(new) = writes[i] else {
            continue;
        };
        let (first, last, events) = (&new.first, &new.last, &new.events);
        if !new.released {
            log.event(&last.id, 1, &StreamResponse::Task(first.clone()))?;
            for (n, event) in events.iter().enumerate() {
                log.event(&last.id, 2 + n as Seq, event)?;
            }
        }
        if log.notify(
            cx,
            &last.id,
            1 + events.len() as Seq,
            Some(last.status.state),
        ) {
            notify_ids.push(last.id.clone());
        }
    }
    Ok((log, notify_ids))
}

/// One statement: the rows, then (for the rows inserted, an id already taken being left out)
/// their log and their notifications. The notifications' CTE is a SELECT, run only when read:
/// the final query reads it once, for the first row inserted. Returns the ids inserted.
async fn insert_tasks(
    cx: &Context,
    conn: &mut PgConnection,
    rows: &TaskRows,
    log: &Batch,
    notify_ids: &[String],
) -> Result<HashSet<String>, sqlx::Error> {
    Ok(sqlx::query(
        "WITH t AS (INSERT INTO tasks (id, context_id, state, status_ts, terminal_at, skill_id, \
         last_seq, task, owner, lease_until, owned_by) \
         SELECT id, context_id, state, status_ts, CASE WHEN terminal THEN status_ts END, \
         skill_id, last_seq, task, owner, lease_until, owned_by \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[], $5::bool[], $6::text[], \
         $7::int8[], $8::text[], $9::text[], $10::int8[], $17::text[]) \
         AS u(id, context_id, state, status_ts, terminal, skill_id, last_seq, task, owner, \
         lease_until, owned_by) \
         ON CONFLICT (id) DO NOTHING RETURNING id), \
         e AS (INSERT INTO events (task_id, seq, event) \
         SELECT u.task_id, u.seq, u.event \
         FROM UNNEST($11::text[], $12::int8[], $13::text[]) AS u(task_id, seq, event) \
         WHERE u.task_id IN (SELECT id FROM t)), \
         n AS (SELECT pg_notify($14, u.payload) \
         FROM UNNEST($15::text[], $16::text[]) AS u(task_id, payload) \
         WHERE u.task_id IN (SELECT id FROM t)) \
         SELECT id FROM t WHERE (SELECT count(*) FROM n) >= 0",
    )
    .bind(&rows.ids)
    .bind(&rows.context_ids)
    .bind(&rows.states)
    .bind(&rows.status_ts)
    .bind(&rows.terminal)
    .bind(&rows.skill_ids)
    .bind(&rows.last_seqs)
    .bind(&rows.tasks)
    .bind(&rows.owners)
    .bind(&rows.untils)
    .bind(&log.event_tasks)
    .bind(&log.event_seqs)
    .bind(&log.event_bodies)
    .bind(&cx.channel)
    .bind(notify_ids)
    .bind(&log.notifications)
    .bind(&rows.owned_bys)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

fn created_id(write: &Write) -> &str {
    match write {
        Write::Create(new) => &new.last.id,
        Write::Append { task_id, .. } => task_id,
    }
}

/// Columns of task rows written by one statement.
#[derive(Default)]
struct TaskRows {
    ids: Vec<String>,
    context_ids: Vec<String>,
    skill_ids: Vec<Option<String>>,
    owned_bys: Vec<Option<String>>,
    states: Vec<&'static str>,
    status_ts: Vec<i64>,
    terminal: Vec<bool>,
    last_seqs: Vec<i64>,
    tasks: Vec<String>,
    set_owner: Vec<bool>,
    owners: Vec<Option<String>>,
    untils: Vec<Option<i64>>,
}

impl TaskRows {
    fn push(&mut self, task: &Task, last_seq: Seq, lease: Lease<'_>) -> Result<(), StoreError> {
        let (set, owner, until) = match lease {
            Lease::Keep => (false, None, None),
            Lease::Take { owner, until } => (true, Some(owner.to_string()), Some(until)),
            Lease::Release => (true, None, None),
        };
        self.ids.push(task.id.clone());
        self.states.push(task.status.state.as_str());
        self.status_ts.push(millis(task.status.timestamp));
        self.terminal.push(task.status.state.is_terminal());
        self.last_seqs.push(to_i64(last_seq));
        self.tasks.push(to_json(task)?);
        self.set_owner.push(set);
        self.owners.push(owner);
        self.untils.push(until);
        Ok(())
    }
}

/// A task whose row this batch locked.
struct Locked<'a> {
    task: Task,
    last_seq: Seq,
    /// Its lease after the batch's events (`Keep`: as the row has it).
    lease: Lease<'a>,
    changed: bool,
}

/// Apply the batch's appends: lock their tasks' rows in id order, check and apply each event
/// in the order it was written, then write every changed row in one statement.
async fn append(
    cx: &Context,
    conn: &mut PgConnection,
    writes: &[&Write],
    batch: &mut Batch,
    results: &mut [Option<Result<Seq, StoreError>>],
) -> Result<(), Failed> {
    let mut ids: Vec<&str> = writes
        .iter()
        .filter_map(|w| match w {
            Write::Append { task_id, .. } => Some(task_id.as_str()),
            Write::Create(_) => None,
        })
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    ids.sort_unstable();
    ids.dedup();
    let mut locked = lock_rows(conn, &ids).await?;
    for (i, write) in writes.iter().enumerate() {
        let Write::Append { task_id, event } = write else {
            continue;
        };
        let Some(entry) = locked.get_mut(task_id.as_str()) else {
            results[i] = Some(Err(StoreError::TaskNotFound(task_id.clone())));
            continue;
        };
        // apply_event checks before it changes anything: a refused event leaves the task as
        // it was for the batch's next event.
        if let Err(e) = apply_event(&mut entry.task, event) {
            results[i] = Some(Err(e));
            continue;
        }
        entry.last_seq += 1;
        entry.changed = true;
        match cx.lease_for(event) {
            Lease::Keep => {}
            lease => entry.lease = lease,
        }
        batch.event(task_id, entry.last_seq, event)?;
        batch.notify(cx, task_id, entry.last_seq, event.state());
        results[i] = Some(Ok(entry.last_seq));
    }
    let mut rows = TaskRows::default();
    for entry in locked.values().filter(|e| e.changed) {
        rows.push(&entry.task, entry.last_seq, entry.lease)?;
    }
    if rows.ids.is_empty() {
        return Ok(());
    }
    update_tasks(conn, &rows).await?;
    batch.finished(&rows);
    Ok(())
}

/// Lock the rows of the tasks `ids` (sorted: two batches never wait on each other in a
/// cycle) and read them.
async fn lock_rows<'a>(
    conn: &mut PgConnection,
    ids: &[&str],
) -> Result<HashMap<String, Locked<'a>>, Failed> {
    let rows = sqlx::query(
        "SELECT id, task, last_seq FROM tasks WHERE id = ANY($1) ORDER BY id FOR UPDATE",
    )
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    let mut locked: HashMap<String, Locked> = HashMap::with_capacity(rows.len());
    for row in rows {
        locked.insert(
            row.get(0),
            Locked {
                task: from_json(row.get::<&str, _>(1))?,
                last_seq: row.get::<i64, _>(2) as Seq,
                lease: Lease::Keep,
                changed: false,
            },
        );
    }
    Ok(locked)
}

/// Write the changed rows of a batch's appends in one statement.
async fn update_tasks(conn: &mut PgConnection, rows: &TaskRows) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE tasks SET state = u.state, status_ts = u.status_ts, \
         terminal_at = CASE WHEN u.terminal THEN u.status_ts ELSE tasks.terminal_at END, \
         last_seq = u.last_seq, task = u.task, \
         owner = CASE WHEN u.set_owner THEN u.owner ELSE tasks.owner END, \
         lease_until = CASE WHEN u.set_owner THEN u.lease_until ELSE tasks.lease_until END \
         FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::bool[], $5::int8[], $6::text[], \
         $7::bool[], $8::text[], $9::int8[]) \
         AS u(id, state, status_ts, terminal, last_seq, task, set_owner, owner, lease_until) \
         WHERE tasks.id = u.id",
    )
    .bind(&rows.ids)
    .bind(&rows.states)
    .bind(&rows.status_ts)
    .bind(&rows.terminal)
    .bind(&rows.last_seqs)
    .bind(&rows.tasks)
    .bind(&rows.set_owner)
    .bind(&rows.owners)
    .bind(&rows.untils)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
