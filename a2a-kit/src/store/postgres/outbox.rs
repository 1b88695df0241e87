//! The push outbox's durable half ([`PushOutbox`]): lanes per config and a claim per task.
//!
//! A claim is taken by one conditional upsert (free, ran out, or already ours), which the
//! task's claim row serialises: among replicas racing for a task exactly one wins, with no
//! lock held across a delivery. Lane writes are fenced on the claim, so a replica that lost
//! its claim (it stalled past its lease) can no longer move a lane.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::Row;

use super::{PostgresTaskManager, db, now_millis};
use crate::store::{PushLane, PushOutbox, StoreError};

#[async_trait]
impl PushOutbox for PostgresTaskManager {
    async fn claim_push(&self, task_id: &str) -> Result<Option<Vec<PushLane>>, StoreError> {
        let inner = &self.inner;
        let has_lanes: bool =
            sqlx::query("SELECT EXISTS (SELECT 1 FROM push_lanes WHERE task_id = $1)")
                .bind(task_id)
                .fetch_one(&inner.cx.pool)
                .await
                .map_err(db)?
                .get(0);
        if !has_lanes {
            return Ok(Some(Vec::new()));
        }
        let claimed = sqlx::query(
            "INSERT INTO push_claims AS c (task_id, claimed_by, claim_until) \
             SELECT id, $2, $3 FROM tasks WHERE id = $1 \
             ON CONFLICT (task_id) DO UPDATE SET claimed_by = $2, claim_until = $3 \
             WHERE c.claimed_by IS NULL OR c.claimed_by = $2 OR c.claim_until < $4 \
             RETURNING 1",
        )
        .bind(task_id)
        .bind(&inner.cx.instance)
        .bind(inner.cx.lease_until())
        .bind(now_millis())
        .fetch_optional(&inner.cx.pool)
        .await
        .map_err(db)?;
        if claimed.is_none() {
            return Ok(None);
        }
        // Read after the claim is taken: a previous holder's last writes preceded its release.
        self.push_lanes(task_id).await.map(Some)
    }

    async fn push_lanes(&self, task_id: &str) -> Result<Vec<PushLane>, StoreError> {
        let rows = sqlx::query(
            "SELECT config_id, cursor, delivered, failed, consecutive_failures, suspended, \
             last_error, attempts, next_attempt_at FROM push_lanes WHERE task_id = $1 \
             ORDER BY config_id",
        )
        .bind(task_id)
        .fetch_all(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| PushLane {
                config_id: r.get(0),
                cursor: u64::try_from(r.get::<i64, _>(1)).unwrap_or(0),
                delivered: u64::try_from(r.get::<i64, _>(2)).unwrap_or(0),
                failed: u64::try_from(r.get::<i64, _>(3)).unwrap_or(0),
                consecutive_failures: u32::try_from(r.get::<i32, _>(4)).unwrap_or(0),
                suspended: r.get(5),
                last_error: r.get(6),
                attempts: u32::try_from(r.get::<i32, _>(7)).unwrap_or(0),
                next_attempt_at: r.get(8),
            })
            .collect())
    }

    async fn save_push_lane(&self, task_id: &str, lane: &PushLane) -> Result<bool, StoreError> {
        let held = sqlx::query(
            "WITH held AS (SELECT 1 FROM push_claims WHERE task_id = $1 AND claimed_by = $2), \
             saved AS (UPDATE push_lanes SET cursor = $4, delivered = $5, failed = $6, \
             consecutive_failures = $7, suspended = $8, last_error = $9, attempts = $10, \
             next_attempt_at = $11 WHERE task_id = $1 AND config_id = $3 AND EXISTS (SELECT 1 FROM held) RETURNING 1) \
             SELECT EXISTS (SELECT 1 FROM held)",
        )
        .bind(task_id)
        .bind(&self.inner.cx.instance)
        .bind(&lane.config_id)
        .bind(i64::try_from(lane.cursor).unwrap_or(i64::MAX))
        .bind(i64::try_from(lane.delivered).unwrap_or(i64::MAX))
        .bind(i64::try_from(lane.failed).unwrap_or(i64::MAX))
        .bind(i32::try_from(lane.consecutive_failures).unwrap_or(i32::MAX))
        .bind(lane.suspended)
        .bind(lane.last_error.as_deref())
        .bind(i32::try_from(lane.attempts).unwrap_or(i32::MAX))
        .bind(lane.next_attempt_at)
        .fetch_one(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(held.get(0))
    }

    async fn release_push_claim(&self, task_id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE push_claims SET claimed_by = NULL, claim_until = $3 \
             WHERE task_id = $1 AND claimed_by = $2",
        )
        .bind(task_id)
        .bind(&self.inner.cx.instance)
        .bind(now_millis())
        .execute(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(())
    }

    async fn orphaned_push_work(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let now = now_millis();
        // Unclaimed work is left to the replica that wrote it for one lease (its own
        // dispatcher is on it); a claim that ran out is up for grabs at once.
        let rows = sqlx::query(
            "SELECT DISTINCT l.task_id FROM push_lanes l \
             JOIN tasks t ON t.id = l.task_id \
             LEFT JOIN push_claims c ON c.task_id = l.task_id \
             WHERE NOT l.suspended AND l.cursor < t.last_seq AND ( \
               (c.claimed_by IS NULL AND t.status_ts < $2) \
               OR (c.claimed_by IS NOT NULL AND c.claimed_by <> $1 AND c.claim_until < $3)) \
             LIMIT $4",
        )
        .bind(&self.inner.cx.instance)
        .bind(now - self.inner.cx.lease_ms)
        .bind(now)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn push_claim_ttl(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.inner.cx.lease_ms).unwrap_or(30_000))
    }
}
