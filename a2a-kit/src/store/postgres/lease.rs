//! Leases and liveness: the replica running a task renews its lease on it while it lives, and
//! holds a liveness lock (a session advisory lock on a connection of its own) for as long as
//! the store lives. A survivor ends the tasks of a replica that is gone, as soon as it knows:
//! at once when the replica's liveness lock is free (PostgreSQL ends the session, and frees the
//! lock, when the process dies), else when its lease runs out. Push claims are renewed with the
//! leases.
//!
//! A reply handed to a replica whose skill waits in `ask` ([`ClusterStore::route_reply`]) is
//! marked (`reply_after`) until that replica takes it; if the replica dies first, a survivor
//! takes the question over and continues the reply itself, exactly once (under the row lock).
//!
//! [`ClusterStore::route_reply`]: crate::store::ClusterStore::route_reply

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection, Row};

use super::{Inner, db, from_json, now_millis, to_i64, to_json};
use crate::protocol::{
    Message, Part, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use crate::store::{Seq, StoreChange, StoreError, apply_event};

/// The status message of a task ended because its replica went away.
pub(super) const LEASE_RAN_OUT: &str =
    "the replica running this task stopped answering (it stopped, or its lease ran out)";

/// Tasks one reaping transaction takes: a pass repeats until no task is left, so a backlog of
/// any size is cleared in one pass, a few hundred rows per commit.
const REAP_BATCH: i64 = 500;

/// How soon after its own liveness session (re)connects a replica trusts other replicas'
/// free liveness locks: after a database restart every replica reconnects, and none should be
/// taken for dead while it is still on its way back.
const LIVENESS_GRACE_MS: i64 = 1_000;

/// The advisory lock key of the replica `$1`.
const LIVENESS_KEY: &str = "hashtextextended('a2a-kit replica ' || $1, 0)";

/// Renew this store's leases four times per lease, and look for replicas that are gone as
/// often (at least every second, as the check is one small query), for as long as the store
/// lives.
pub(super) fn spawn_keeper(inner: Weak<Inner>) {
    tokio::spawn(async move {
        let mut renewed = now_millis();
        loop {
            let every = match inner.upgrade() {
                Some(i) => Duration::from_millis(tick_ms(&i).min(1_000)),
                None => return,
            };
            tokio::time::sleep(every).await;
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let renew = now_millis() - renewed >= i64::try_from(tick_ms(&inner)).unwrap_or(0);
            if renew {
                renewed = now_millis();
            }
            if let Err(e) = keep(&inner, renew).await {
                tracing::warn!(error = %e, "could not renew or check task leases");
            }
        }
    });
}

/// A quarter of the lease (at least 25 ms): how often leases are renewed.
fn tick_ms(inner: &Inner) -> u64 {
    u64::try_from(inner.cx.lease_ms / 4).unwrap_or(25).max(25)
}

/// Take this replica's liveness lock and list it, on a connection of its own.
async fn register(options: &PgConnectOptions, instance: &str) -> Result<PgConnection, sqlx::Error> {
    let mut conn = PgConnection::connect_with(options).await?;
    sqlx::query(&format!("SELECT pg_advisory_lock({LIVENESS_KEY})"))
        .bind(instance)
        .execute(&mut conn)
        .await?;
    sqlx::query(
        "INSERT INTO replicas (instance, since) VALUES ($1, $2) ON CONFLICT (instance) DO NOTHING",
    )
    .bind(instance)
    .bind(now_millis())
    .execute(&mut conn)
    .await?;
    Ok(conn)
}

/// Hold this replica's liveness lock for as long as the store lives: taken now (so the store
/// is known live before it writes a task), then watched, and taken again after its connection
/// drops. When the store is dropped, the replica leaves the list.
pub(super) async fn hold_liveness(
    inner: &Arc<Inner>,
    options: PgConnectOptions,
) -> Result<(), StoreError> {
    let instance = inner.cx.instance.clone();
    let mut conn = register(&options, &instance).await.map_err(db)?;
    inner.live_since.store(now_millis(), Ordering::Relaxed);
    let weak = Arc::downgrade(inner);
    tokio::spawn(async move {
        loop {
            let every = match weak.upgrade() {
                Some(i) => Duration::from_millis(tick_ms(&i).min(1_000)),
                None => break,
            };
            tokio::time::sleep(every).await;
            let Some(inner) = weak.upgrade() else {
                break;
            };
            if sqlx::query("SELECT 1").execute(&mut conn).await.is_ok() {
                continue;
            }
            inner.live_since.store(0, Ordering::Relaxed);
            tracing::warn!("lost this replica's liveness session; taking it again");
            drop(inner);
            conn = loop {
                if weak.strong_count() == 0 {
                    return;
                }
                match register(&options, &instance).await {
                    Ok(conn) => break conn,
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            };
            if let Some(inner) = weak.upgrade() {
                inner.live_since.store(now_millis(), Ordering::Relaxed);
            }
        }
        let _ = sqlx::query("DELETE FROM replicas WHERE instance = $1")
            .bind(&instance)
            .execute(&mut conn)
            .await;
        let _ = conn.close().await;
    });
    Ok(())
}

impl Inner {
    /// Whether this replica may take another replica's free liveness lock as proof that it
    /// died: its own liveness session has been up for a while.
    fn trusts_liveness(&self) -> bool {
        let since = self.live_since.load(Ordering::Relaxed);
        since != 0 && now_millis() - since >= LIVENESS_GRACE_MS.min(self.cx.lease_ms)
    }
}

/// Whether `holder` is a listed replica whose liveness lock is free: its process is gone.
/// Asked inside the caller's transaction (the lock taken to check is held until it ends).
pub(super) async fn is_dead(
    inner: &Inner,
    conn: &mut PgConnection,
    holder: &str,
) -> Result<bool, StoreError> {
    if !inner.trusts_liveness() {
        return Ok(false);
    }
    sqlx::query_scalar(&format!(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM replicas WHERE instance = $1) \
         THEN pg_try_advisory_xact_lock({LIVENESS_KEY}) ELSE false END"
    ))
    .bind(holder)
    .fetch_one(conn)
    .await
    .map_err(db)
}

/// Listed replicas other than this one whose liveness lock is free, taken off the list.
async fn dead_replicas(inner: &Inner) -> Result<Vec<String>, StoreError> {
    if !inner.trusts_liveness() {
        return Ok(Vec::new());
    }
    let mut tx = inner.cx.pool.begin().await.map_err(db)?;
    let dead: Vec<String> = sqlx::query_scalar(
        "SELECT instance FROM replicas WHERE instance <> $1 \
         AND pg_try_advisory_xact_lock(hashtextextended('a2a-kit replica ' || instance, 0))",
    )
    .bind(&inner.cx.instance)
    .fetch_all(&mut *tx)
    .await
    .map_err(db)?;
    if !dead.is_empty() {
        sqlx::query("DELETE FROM replicas WHERE instance = ANY($1)")
            .bind(&dead)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        tracing::warn!(replicas = ?dead, "other replicas stopped; taking over their tasks");
    }
    tx.commit().await.map_err(db)?;
    Ok(dead)
}

/// Renew this replica's leases and claims (`renew`), then end the tasks of replicas that are
/// gone, all of them, in batches.
async fn keep(inner: &Inner, renew: bool) -> Result<(), StoreError> {
    if renew {
        sqlx::query("UPDATE tasks SET lease_until = $2 WHERE owner = $1 AND terminal_at IS NULL")
            .bind(&inner.cx.instance)
            .bind(inner.cx.lease_until())
            .execute(&inner.cx.pool)
            .await
            .map_err(db)?;
        sqlx::query("UPDATE push_claims SET claim_until = $2 WHERE claimed_by = $1")
            .bind(&inner.cx.instance)
            .bind(inner.cx.lease_until())
            .execute(&inner.cx.pool)
            .await
            .map_err(db)?;
    }
    let dead = dead_replicas(inner).await?;
    while reap(inner, &dead).await? == REAP_BATCH as usize {}
    Ok(())
}

/// What reaping does to one task.
enum Reaped {
    /// It ran: it ends FAILED.
    Failed(Box<(Task, StreamResponse)>),
    /// It waits for a reply nobody gave yet: any replica may continue it.
    Freed,
    /// It waits with a reply its asker never took: this replica continues it.
    TakenOver,
}

/// One batch: the tasks of replicas that are gone (`dead`, or whose lease ran out), locked
/// and settled in one transaction. Rows locked by a live writer are skipped (it holds them;
/// the next round looks again). Returns how many rows it took.
async fn reap(inner: &Inner, dead: &[String]) -> Result<usize, StoreError> {
    // A reply is taken over only by a replica whose runtime follows this store: it is the
    // one that runs the skill again.
    let follows = inner.has_followers();
    let mut tx = inner.cx.pool.begin().await.map_err(db)?;
    let rows = sqlx::query(
        // Each half of the candidates comes from its own index (`tasks_by_lease`,
        // `tasks_by_holder`), so a check that finds nothing reads nothing.
        "SELECT id, task, last_seq, reply_after FROM tasks \
         WHERE id IN (SELECT id FROM tasks WHERE owner IS NOT NULL AND lease_until < $2 \
                      UNION ALL SELECT id FROM tasks WHERE owner = ANY($3)) \
         AND owner <> $1 AND terminal_at IS NULL \
         AND ($4 OR reply_after IS DISTINCT FROM last_seq \
              OR state NOT IN ('TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')) \
         ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED",
    )
    .bind(&inner.cx.instance)
    .bind(now_millis())
    .bind(dead)
    .bind(follows)
    .bind(REAP_BATCH)
    .fetch_all(&mut *tx)
    .await
    .map_err(db)?;
    if rows.is_empty() {
        return Ok(0);
    }
    let taken = rows.len();
    let mut batch = Batch::default();
    for row in rows {
        let id: String = row.get(0);
        let json: &str = row.get(1);
        let last_seq = row.get::<i64, _>(2) as Seq;
        let reply_after: Option<i64> = row.get(3);
        let mut task: Task = from_json(json)?;
        let reaped = if task.status.state.is_interrupted() {
            if reply_after == Some(to_i64(last_seq)) {
                Reaped::TakenOver
            } else {
                Reaped::Freed
            }
        } else {
            let event = failed(&task);
            apply_event(&mut task, &event)?;
            Reaped::Failed(Box::new((task, event)))
        };
        batch.add(inner, id, last_seq, reaped)?;
    }
    batch.write(inner, &mut tx).await?;
    tx.commit().await.map_err(db)?;
    batch.report(inner);
    Ok(taken)
}

/// The FAILED status update of a task whose replica went away.
fn failed(task: &Task) -> StreamResponse {
    let message = Message::agent(vec![Part::text(LEASE_RAN_OUT)])
        .with_task_id(&task.id)
        .with_context_id(&task.context_id);
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: TaskStatus {
            state: TaskState::Failed,
            message: Some(message),
            timestamp: Some(Timestamp::now()),
        },
        metadata: None,
    })
}

/// A reaping batch's rows, written one statement per kind.
#[derive(Default)]
struct Batch {
    ids: Vec<String>,
    states: Vec<&'static str>,
    status_ts: Vec<i64>,
    terminal: Vec<bool>,
    last_seqs: Vec<i64>,
    tasks: Vec<String>,
    owners: Vec<Option<String>>,
    leases: Vec<Option<i64>>,
    event_ids: Vec<String>,
    event_seqs: Vec<i64>,
    events: Vec<String>,
    notes: Vec<String>,
    freed: usize,
    taken_over: Vec<String>,
}

impl Batch {
    fn add(
        &mut self,
        inner: &Inner,
        id: String,
        last_seq: Seq,
        reaped: Reaped,
    ) -> Result<(), StoreError> {
        let (mut seq, mut owner, mut lease) = (last_seq, None, None);
        // A task that ends is written whole; the others only change hands (their JSON is
        // not sent back: `terminal` false leaves it as it is).
        let (state, status_ts, json) = match reaped {
            Reaped::Failed(failed) => {
                let (task, event) = *failed;
                seq = last_seq + 1;
                self.event_ids.push(id.clone());
                self.event_seqs.push(to_i64(seq));
                self.events.push(to_json(&event)?);
                if let Some(note) = inner.cx.announcement(&id, seq, Some(TaskState::Failed)) {
                    self.notes.push(note);
                }
                let ts = super::millis(task.status.timestamp);
                (task.status.state.as_str(), ts, to_json(&task)?)
            }
            Reaped::Freed => {
                self.freed += 1;
                ("", 0, String::new())
            }
            Reaped::TakenOver => {
                self.taken_over.push(id.clone());
                owner = Some(inner.cx.instance.clone());
                lease = Some(inner.cx.lease_until());
                ("", 0, String::new())
            }
        };
        self.terminal.push(!json.is_empty());
        self.states.push(state);
        self.status_ts.push(status_ts);
        self.tasks.push(json);
        self.ids.push(id);
        self.last_seqs.push(to_i64(seq));
        self.owners.push(owner);
        self.leases.push(lease);
        Ok(())
    }

    async fn write(&self, inner: &Inner, conn: &mut PgConnection) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE tasks t SET \
             state = CASE WHEN u.terminal THEN u.state ELSE t.state END, \
             status_ts = CASE WHEN u.terminal THEN u.status_ts ELSE t.status_ts END, \
             terminal_at = CASE WHEN u.terminal THEN u.status_ts ELSE t.terminal_at END, \
             last_seq = u.last_seq, task = CASE WHEN u.terminal THEN u.task ELSE t.task END, \
             owner = u.owner, lease_until = u.lease, \
             reply_after = NULL \
             FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::bool[], $5::int8[], $6::text[], \
                         $7::text[], $8::int8[]) \
             AS u(id, state, status_ts, terminal, last_seq, task, owner, lease) \
             WHERE t.id = u.id",
        )
        .bind(&self.ids)
        .bind(&self.states)
        .bind(&self.status_ts)
        .bind(&self.terminal)
        .bind(&self.last_seqs)
        .bind(&self.tasks)
        .bind(&self.owners)
        .bind(&self.leases)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
        if !self.events.is_empty() {
            sqlx::query(
                "INSERT INTO events (task_id, seq, event) \
                 SELECT * FROM UNNEST($1::text[], $2::int8[], $3::text[])",
            )
            .bind(&self.event_ids)
            .bind(&self.event_seqs)
            .bind(&self.events)
            .execute(&mut *conn)
            .await
            .map_err(db)?;
        }
        if !self.notes.is_empty() {
            sqlx::query("SELECT pg_notify($1, p) FROM UNNEST($2::text[]) AS p")
                .bind(&inner.cx.channel)
                .bind(&self.notes)
                .execute(&mut *conn)
                .await
                .map_err(db)?;
        }
        Ok(())
    }

    /// After the commit: hand the replies taken over to this replica's runtime, and say what
    /// was done.
    fn report(self, inner: &Inner) {
        let failed = self.events.len();
        if failed > 0 {
            tracing::warn!(
                tasks = failed,
                "ended FAILED tasks whose replica stopped answering"
            );
        }
        if self.freed > 0 {
            tracing::info!(
                tasks = self.freed,
                "freed questions whose replica stopped answering"
            );
        }
        for task_id in self.taken_over {
            tracing::info!(
                task_id,
                "took over a reply whose asking replica stopped answering"
            );
            inner.tell_followers(StoreChange::Reply { task_id });
        }
    }
}
