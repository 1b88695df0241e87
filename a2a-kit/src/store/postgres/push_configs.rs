//! PostgreSQL's push configs ([`PushConfigStore`]): a row each in `push_configs`, and with each
//! its lane in `push_lanes` (see [`outbox`](super::outbox)), written in one transaction under
//! the task's row lock.

use async_trait::async_trait;
use sqlx::Row;

use super::{PostgresTaskManager, db, from_json, lock_task, require_task, to_json};
use crate::protocol::TaskPushNotificationConfig;
use crate::store::{PushConfigStore, StoreError, config_task_id};

#[async_trait]
impl PushConfigStore for PostgresTaskManager {
    async fn put(
        &self,
        config: TaskPushNotificationConfig,
        limit: usize,
    ) -> Result<(), StoreError> {
        let task_id = config_task_id(&config)?;
        let body = to_json(&config)?;
        let mut tx = self.begin().await?;
        // The task's row lock orders concurrent puts to the task: of one config id, and
        // the count below against the insert after it.
        lock_task(&mut tx, &task_id).await?;
        let updated = sqlx::query(
            "UPDATE push_configs SET config = $3 WHERE task_id = $1 AND config_id IS NOT DISTINCT FROM $2",
        )
        .bind(&task_id)
        .bind(config.id.as_deref())
        .bind(&body)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        if updated.rows_affected() == 0 {
            let count: i64 = sqlx::query("SELECT COUNT(*) FROM push_configs WHERE task_id = $1")
                .bind(&task_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(db)?
                .get(0);
            if usize::try_from(count).unwrap_or(usize::MAX) >= limit {
                return Err(StoreError::PushConfigLimit(limit));
            }
            sqlx::query(
                "INSERT INTO push_configs (task_id, config_id, config) VALUES ($1, $2, $3)",
            )
            .bind(&task_id)
            .bind(config.id.as_deref())
            .bind(&body)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        }
        // The config's push lane starts at the task's last event (kept when a config is
        // replaced: its deliveries so far stay counted).
        sqlx::query(
            "INSERT INTO push_lanes (task_id, config_id, cursor) \
             SELECT id, $2, last_seq FROM tasks WHERE id = $1 ON CONFLICT DO NOTHING",
        )
        .bind(&task_id)
        .bind(config.id.as_deref().unwrap_or_default())
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    async fn get(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        let mut conn = self.inner.cx.pool.acquire().await.map_err(db)?;
        let row = sqlx::query(
            "SELECT config FROM push_configs WHERE task_id = $1 AND config_id = $2 ORDER BY pos LIMIT 1",
        )
        .bind(task_id)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
        match row {
            Some(row) => Ok(Some(from_json(row.get::<&str, _>(0))?)),
            None => {
                require_task(&mut conn, task_id).await?;
                Ok(None)
            }
        }
    }

    async fn list(&self, task_id: &str) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let mut conn = self.inner.cx.pool.acquire().await.map_err(db)?;
        let rows = sqlx::query("SELECT config FROM push_configs WHERE task_id = $1 ORDER BY pos")
            .bind(task_id)
            .fetch_all(&mut *conn)
            .await
            .map_err(db)?;
        if rows.is_empty() {
            require_task(&mut conn, task_id).await?;
        }
        rows.iter()
            .map(|row| from_json(row.get::<&str, _>(0)))
            .collect()
    }

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.inner.cx.pool.acquire().await.map_err(db)?;
        let deleted = sqlx::query(
            "WITH lane AS (DELETE FROM push_lanes WHERE task_id = $1 AND config_id = $2) \
             DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2",
        )
        .bind(task_id)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map_err(db)?
        .rows_affected();
        if deleted == 0 {
            require_task(&mut conn, task_id).await?;
        }
        Ok(deleted > 0)
    }
}
