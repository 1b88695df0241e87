//! The SQLite store's push configs ([`PushConfigStore`]): a row each in `push_configs`, and
//! with each its lane in `push_lanes` (see [`outbox`](super::outbox)), written in one
//! transaction.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::SqliteTaskManager;
use super::connection::Db;
use super::rows::{from_json, require_task, to_json};
use crate::protocol::TaskPushNotificationConfig;
use crate::store::{PushConfigStore, StoreError, config_task_id};

#[async_trait]
impl PushConfigStore for SqliteTaskManager {
    async fn put(
        &self,
        config: TaskPushNotificationConfig,
        limit: usize,
    ) -> Result<(), StoreError> {
        let task_id = config_task_id(&config)?;
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
                    // Counted in the write transaction (one writer): concurrent puts cannot
                    // both fit.
                    let count: i64 = tx
                        .prepare_cached("SELECT COUNT(*) FROM push_configs WHERE task_id = ?1")
                        .db()?
                        .query_row([&task_id], |r| r.get(0))
                        .db()?;
                    if usize::try_from(count).unwrap_or(usize::MAX) >= limit {
                        return Err(StoreError::PushConfigLimit(limit));
                    }
                    tx.prepare_cached(
                        "INSERT INTO push_configs (task_id, pos, config_id, url, body) VALUES \
                         (?1, (SELECT COALESCE(MAX(pos) + 1, 0) FROM push_configs WHERE task_id = ?1), ?2, ?3, ?4)",
                    )
                    .db()?
                    .execute(params![task_id, config.id, config.url, body])
                    .db()?;
                }
            }
            // The config's push lane starts at the task's last event (kept when a config is
            // replaced).
            tx.prepare_cached(
                "INSERT OR IGNORE INTO push_lanes (task_id, config_id, cursor) \
                 SELECT id, ?2, last_seq FROM tasks WHERE id = ?1",
            )
            .db()?
            .execute(params![task_id, config.id.as_deref().unwrap_or_default()])
            .db()?;
            Ok(())
        })
        .await
    }

    async fn get(
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

    async fn list(&self, task_id: &str) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
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

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let (task_id, id) = (task_id.to_string(), id.to_string());
        self.write(move |tx| {
            require_task(tx, &task_id)?;
            let n = tx
                .prepare_cached("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2")
                .db()?
                .execute(params![task_id, id])
                .db()?;
            tx.prepare_cached("DELETE FROM push_lanes WHERE task_id = ?1 AND config_id = ?2")
                .db()?
                .execute(params![task_id, id])
                .db()?;
            Ok(n > 0)
        })
        .await
    }
}
