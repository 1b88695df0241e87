//! The push outbox's durable half ([`PushOutbox`]) for a SQLite file: each push config's lane
//! is a row, so deliveries pending or being retried when the process stopped are made after
//! a restart, from where the lanes say. One process holds the file (the process lock), and
//! the push dispatcher runs one worker per task, so a claim always succeeds here.

use std::time::Duration;

use async_trait::async_trait;
use rusqlite::params;

use super::SqliteTaskManager;
use super::connection::Db;
use crate::store::{PushLane, PushOutbox, StoreError};

/// How often the dispatcher looks for deliveries nobody makes: twice per this.
const SWEEP: Duration = Duration::from_secs(20);

#[async_trait]
impl PushOutbox for SqliteTaskManager {
    async fn claim_push(&self, task_id: &str) -> Result<Option<Vec<PushLane>>, StoreError> {
        self.push_lanes(task_id).await.map(Some)
    }

    async fn push_lanes(&self, task_id: &str) -> Result<Vec<PushLane>, StoreError> {
        let task_id = task_id.to_string();
        let lanes = self
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT config_id, cursor, delivered, failed, consecutive_failures, \
                     suspended, last_error, attempts, next_attempt_at FROM push_lanes \
                     WHERE task_id = ?1 ORDER BY config_id",
                )
                .db()?
                .query_map([&task_id], |r| {
                    Ok(PushLane {
                        config_id: r.get(0)?,
                        cursor: r.get::<_, i64>(1)? as u64,
                        delivered: r.get::<_, i64>(2)? as u64,
                        failed: r.get::<_, i64>(3)? as u64,
                        consecutive_failures: r.get::<_, i64>(4)? as u32,
                        suspended: r.get::<_, i64>(5)? != 0,
                        last_error: r.get(6)?,
                        attempts: r.get::<_, i64>(7)? as u32,
                        next_attempt_at: r.get(8)?,
                    })
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()
            })
            .await?;
        Ok(lanes)
    }

    async fn save_push_lane(&self, task_id: &str, lane: &PushLane) -> Result<bool, StoreError> {
        let (task_id, lane) = (task_id.to_string(), lane.clone());
        self.write(move |tx| {
            tx.prepare_cached(
                "UPDATE push_lanes SET cursor = ?3, delivered = ?4, failed = ?5, \
                 consecutive_failures = ?6, suspended = ?7, last_error = ?8, attempts = ?9, \
                 next_attempt_at = ?10 WHERE task_id = ?1 AND config_id = ?2",
            )
            .db()?
            .execute(params![
                task_id,
                lane.config_id,
                lane.cursor as i64,
                lane.delivered as i64,
                lane.failed as i64,
                lane.consecutive_failures as i64,
                lane.suspended,
                lane.last_error,
                lane.attempts as i64,
                lane.next_attempt_at,
            ])
            .db()?;
            Ok(true)
        })
        .await
    }

    async fn release_push_claim(&self, _task_id: &str) -> Result<(), StoreError> {
        Ok(())
    }

    async fn orphaned_push_work(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT DISTINCT l.task_id FROM push_lanes l JOIN tasks t ON t.id = l.task_id \
                 WHERE l.suspended = 0 AND l.cursor < t.last_seq LIMIT ?1",
            )
            .db()?
            .query_map([limit as i64], |r| r.get(0))
            .db()?
            .collect::<Result<Vec<String>, _>>()
            .db()
        })
        .await
    }

    fn push_claim_ttl(&self) -> Duration {
        SWEEP
    }
}
