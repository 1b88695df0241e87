//! Leases: the replica running a task renews its lease on it while it lives; a survivor ends
//! the tasks of a replica whose lease ran out, so no task stays WORKING after a `kill -9`.
//! Push claims are renewed with them.

use std::sync::Weak;
use std::time::Duration;

use sqlx::Row;

use super::{Inner, Lease, db, insert_event, lock_row, now_millis, update_task};
use crate::protocol::{
    Message, Part, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use crate::store::{StoreError, apply_event};

/// The status message of a task ended because its replica went silent.
pub(super) const LEASE_RAN_OUT: &str =
    "the replica running this task stopped answering (its lease ran out)";

/// Renew this store's leases and end expired ones, four times per lease, for as long as the
/// store lives.
pub(super) fn spawn_keeper(inner: Weak<Inner>) {
    tokio::spawn(async move {
        loop {
            let every = match inner.upgrade() {
                Some(i) => {
                    Duration::from_millis(u64::try_from(i.cx.lease_ms / 4).unwrap_or(25).max(25))
                }
                None => return,
            };
            tokio::time::sleep(every).await;
            let Some(inner) = inner.upgrade() else {
                return;
            };
            if let Err(e) = keep(&inner).await {
                tracing::warn!(error = %e, "could not renew or check task leases");
            }
        }
    });
}

async fn keep(inner: &Inner) -> Result<(), StoreError> {
    let now = now_millis();
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
    let expired = sqlx::query(
        "SELECT id FROM tasks WHERE owner IS NOT NULL AND owner <> $1 AND lease_until < $2 \
         AND terminal_at IS NULL ORDER BY lease_until LIMIT 100",
    )
    .bind(&inner.cx.instance)
    .bind(now)
    .fetch_all(&inner.cx.pool)
    .await
    .map_err(db)?;
    for row in expired {
        let task_id: String = row.get(0);
        reap(inner, &task_id).await?;
    }
    Ok(())
}

/// End one task whose lease ran out (or, if it waits for the user's reply, free it for any
/// replica to continue), if under its row lock the lease has still run out.
async fn reap(inner: &Inner, task_id: &str) -> Result<(), StoreError> {
    let mut tx = inner.cx.pool.begin().await.map_err(db)?;
    // SKIP LOCKED: a task being written right now has a live writer; look again next round.
    let Some(locked) = lock_row(&mut tx, task_id, true).await? else {
        return Ok(());
    };
    let expired = locked
        .holder
        .as_deref()
        .is_some_and(|h| h != inner.cx.instance)
        && !locked.held_by_other(&inner.cx.instance);
    if locked.task.status.state.is_terminal() || !expired {
        return Ok(());
    }
    let (mut task, last_seq) = (locked.task, locked.last_seq);
    if task.status.state.is_interrupted() {
        // The question outlives its asker: any replica may take the answer now (the
        // stateless way, re-running the skill with the history).
        sqlx::query("UPDATE tasks SET owner = NULL, lease_until = NULL WHERE id = $1")
            .bind(task_id)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        tracing::info!(task_id, "freed a question whose replica stopped answering");
        return Ok(());
    }
    let message = Message::agent(vec![Part::text(LEASE_RAN_OUT)])
        .with_task_id(task_id)
        .with_context_id(&task.context_id);
    let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task_id.to_string(),
        context_id: task.context_id.clone(),
        status: TaskStatus {
            state: TaskState::Failed,
            message: Some(message),
            timestamp: Some(Timestamp::now()),
        },
        metadata: None,
    });
    apply_event(&mut task, &event)?;
    let seq = last_seq + 1;
    update_task(&mut tx, &task, seq, Lease::Release).await?;
    insert_event(&mut tx, task_id, seq, &event).await?;
    inner
        .notify(&mut tx, task_id, seq, Some(TaskState::Failed))
        .await?;
    tx.commit().await.map_err(db)?;
    tracing::warn!(
        task_id,
        "ended FAILED a task whose replica stopped answering (its lease ran out)"
    );
    Ok(())
}
