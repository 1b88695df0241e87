//! PostgreSQL's [`RemoteTaskStore`]: a row per remote task in `remote_tasks` (its record as
//! JSON, a revision for conditional saves) and a row per token in `remote_tokens` (its
//! SHA-256), migration 8. Every write is one statement or one transaction, so replicas of a
//! caller sharing the database see each other's updates and never lose one.

use async_trait::async_trait;
use sqlx::Row;

use super::{PostgresTaskManager, db, from_json, to_json};
use crate::store::remote::now_ms;
use crate::store::{RemoteTaskRecord, RemoteTaskStore, Revised, StoreError, TokenHash};

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn revised(row: &sqlx::postgres::PgRow) -> Result<Revised, StoreError> {
    let record: String = row.get(0);
    let revision: i64 = row.get(1);
    Ok(Revised {
        record: from_json(&record)?,
        revision: revision as u64,
    })
}

impl PostgresTaskManager {
    async fn remote_rows(&self, sql: &'static str) -> Result<Vec<Revised>, StoreError> {
        sqlx::query(sql)
            .fetch_all(self.pool())
            .await
            .map_err(db)?
            .iter()
            .map(revised)
            .collect()
    }
}

#[async_trait]
impl RemoteTaskStore for PostgresTaskManager {
    async fn load(&self, task_id: &str) -> Result<Option<Revised>, StoreError> {
        sqlx::query("SELECT record, revision FROM remote_tasks WHERE task_id = $1")
            .bind(task_id)
            .fetch_optional(self.pool())
            .await
            .map_err(db)?
            .as_ref()
            .map(revised)
            .transpose()
    }

    async fn save(
        &self,
        record: &RemoteTaskRecord,
        expected: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let body = to_json(record)?;
        let settled = record.is_settled();
        let finished = record.is_finished().then(|| ms(now_ms()));
        let written = match expected {
            None => sqlx::query(
                "INSERT INTO remote_tasks (task_id, record, revision, settled, finished_ms) \
                 VALUES ($1, $2, 1, $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(&record.task.id)
            .bind(&body)
            .bind(settled)
            .bind(finished)
            .execute(self.pool())
            .await
            .map_err(db)?,
            Some(rev) => sqlx::query(
                "UPDATE remote_tasks SET record = $2, revision = revision + 1, settled = $3, \
                 finished_ms = CASE WHEN $5::bigint IS NULL THEN NULL ELSE COALESCE(finished_ms, $5) END \
                 WHERE task_id = $1 AND revision = $4",
            )
            .bind(&record.task.id)
            .bind(&body)
            .bind(settled)
            .bind(ms(rev))
            .bind(finished)
            .execute(self.pool())
            .await
            .map_err(db)?,
        };
        Ok((written.rows_affected() == 1).then(|| expected.unwrap_or(0) + 1))
    }

    async fn unsettled(&self) -> Result<Vec<Revised>, StoreError> {
        self.remote_rows("SELECT record, revision FROM remote_tasks WHERE NOT settled")
            .await
    }

    async fn all_remote(&self) -> Result<Vec<Revised>, StoreError> {
        self.remote_rows("SELECT record, revision FROM remote_tasks")
            .await
    }

    async fn remove(&self, task_id: &str) -> Result<bool, StoreError> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM remote_tokens WHERE task_id = $1")
            .bind(task_id)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        let n = sqlx::query("DELETE FROM remote_tasks WHERE task_id = $1")
            .bind(task_id)
            .execute(&mut *tx)
            .await
            .map_err(db)?
            .rows_affected();
        tx.commit().await.map_err(db)?;
        Ok(n > 0)
    }

    async fn purge_finished_before(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "DELETE FROM remote_tokens WHERE task_id IN \
             (SELECT task_id FROM remote_tasks WHERE finished_ms < $1)",
        )
        .bind(ms(before_ms))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        let n = sqlx::query("DELETE FROM remote_tasks WHERE finished_ms < $1")
            .bind(ms(before_ms))
            .execute(&mut *tx)
            .await
            .map_err(db)?
            .rows_affected();
        tx.commit().await.map_err(db)?;
        Ok(n)
    }

    async fn issue_token(&self, hash: TokenHash, expires_ms: u64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO remote_tokens (hash, task_id, expires_ms) VALUES ($1, NULL, $2) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&hash[..])
        .bind(ms(expires_ms))
        .execute(self.pool())
        .await
        .map_err(db)?;
        Ok(())
    }

    async fn bind_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM remote_tokens WHERE task_id = $1 AND hash <> $2")
            .bind(task_id)
            .bind(&hash[..])
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        sqlx::query(
            "INSERT INTO remote_tokens (hash, task_id, expires_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (hash) DO UPDATE SET task_id = $2, expires_ms = $3",
        )
        .bind(&hash[..])
        .bind(task_id)
        .bind(expires_ms.map(ms))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    async fn claim_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        // The unique task_id makes a second claim for the task fail; a claim of a token
        // another task took finds no pending row.
        let claimed = sqlx::query(
            "UPDATE remote_tokens SET task_id = $2, expires_ms = $3 \
             WHERE hash = $1 AND task_id IS NULL AND expires_ms > $4 \
             AND NOT EXISTS (SELECT 1 FROM remote_tokens WHERE task_id = $2)",
        )
        .bind(&hash[..])
        .bind(task_id)
        .bind(expires_ms.map(ms))
        .bind(ms(now_ms))
        .execute(self.pool())
        .await;
        match claimed {
            Ok(r) => Ok(r.rows_affected() == 1),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(db(e)),
        }
    }

    async fn token_of(
        &self,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<Option<TokenHash>>, StoreError> {
        let row = sqlx::query("SELECT hash, expires_ms FROM remote_tokens WHERE task_id = $1")
            .bind(task_id)
            .fetch_optional(self.pool())
            .await
            .map_err(db)?;
        let Some(row) = row else { return Ok(None) };
        let expires: Option<i64> = row.get(1);
        if expires.is_some_and(|e| e <= ms(now_ms)) {
            return Ok(Some(None));
        }
        let hash: Vec<u8> = row.get(0);
        let hash: TokenHash = hash
            .try_into()
            .map_err(|_| StoreError::Backend("corrupt row: a token hash is not 32 bytes".into()))?;
        Ok(Some(Some(hash)))
    }

    async fn forget_token(&self, task_id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM remote_tokens WHERE task_id = $1")
            .bind(task_id)
            .execute(self.pool())
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn purge_expired_tokens(&self, now_ms: u64) -> Result<u64, StoreError> {
        Ok(
            sqlx::query("DELETE FROM remote_tokens WHERE expires_ms <= $1")
                .bind(ms(now_ms))
                .execute(self.pool())
                .await
                .map_err(db)?
                .rows_affected(),
        )
    }
}
