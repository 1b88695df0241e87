//! The SQLite store's [`RemoteTaskStore`]: a row per remote task in `remote_tasks` (its record
//! as JSON, a revision for conditional saves) and a row per token in `remote_tokens` (its
//! SHA-256), migration 8.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::SqliteTaskManager;
use super::connection::Db;
use super::rows::{from_json, to_json};
use crate::store::remote::now_ms;
use crate::store::{RemoteTaskRecord, RemoteTaskStore, Revised, StoreError, TokenHash};

fn revised(record: String, revision: i64) -> Result<Revised, StoreError> {
    Ok(Revised {
        record: from_json(&record)?,
        revision: revision as u64,
    })
}

/// The records a query of `(record, revision)` finds.
fn rows(conn: &rusqlite::Connection, sql: &str) -> Result<Vec<Revised>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).db()?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .db()?
        .collect::<Result<Vec<(String, i64)>, _>>()
        .db()?;
    rows.into_iter().map(|(b, r)| revised(b, r)).collect()
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn hash_of(v: Vec<u8>) -> Result<TokenHash, StoreError> {
    v.try_into()
        .map_err(|_| StoreError::Backend("corrupt row: a token hash is not 32 bytes".into()))
}

#[async_trait]
impl RemoteTaskStore for SqliteTaskManager {
    async fn load(&self, task_id: &str) -> Result<Option<Revised>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |conn| {
            let row: Option<(String, i64)> = conn
                .prepare_cached("SELECT record, revision FROM remote_tasks WHERE task_id = ?1")
                .db()?
                .query_row([&task_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .db()?;
            row.map(|(record, rev)| revised(record, rev)).transpose()
        })
        .await
    }

    async fn save(
        &self,
        record: &RemoteTaskRecord,
        expected: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let body = to_json(record)?;
        let task_id = record.task.id.clone();
        let settled = record.is_settled();
        let finished = record.is_finished().then(|| ms(now_ms()));
        self.write_one_statement(move |conn| {
            let written = match expected {
                None => conn
                    .prepare_cached(
                        "INSERT OR IGNORE INTO remote_tasks (task_id, record, revision, settled, finished_ms) \
                         VALUES (?1, ?2, 1, ?3, ?4)",
                    )
                    .db()?
                    .execute(params![task_id, body, settled, finished])
                    .db()?,
                Some(rev) => conn
                    .prepare_cached(
                        "UPDATE remote_tasks SET record = ?2, revision = revision + 1, settled = ?3, \
                         finished_ms = CASE WHEN ?5 IS NULL THEN NULL ELSE COALESCE(finished_ms, ?5) END \
                         WHERE task_id = ?1 AND revision = ?4",
                    )
                    .db()?
                    .execute(params![task_id, body, settled, ms(rev), finished])
                    .db()?,
            };
            Ok((written == 1).then(|| expected.unwrap_or(0) + 1))
        })
        .await
    }

    async fn unsettled(&self) -> Result<Vec<Revised>, StoreError> {
        self.read(|conn| {
            rows(
                conn,
                "SELECT record, revision FROM remote_tasks WHERE settled = 0",
            )
        })
        .await
    }

    async fn all_remote(&self) -> Result<Vec<Revised>, StoreError> {
        self.read(|conn| rows(conn, "SELECT record, revision FROM remote_tasks"))
            .await
    }

    async fn remove(&self, task_id: &str) -> Result<bool, StoreError> {
        let task_id = task_id.to_string();
        self.write(move |conn| {
            conn.prepare_cached("DELETE FROM remote_tokens WHERE task_id = ?1")
                .db()?
                .execute([&task_id])
                .db()?;
            let n = conn
                .prepare_cached("DELETE FROM remote_tasks WHERE task_id = ?1")
                .db()?
                .execute([&task_id])
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn purge_finished_before(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.write(move |conn| {
            conn.prepare_cached(
                "DELETE FROM remote_tokens WHERE task_id IN \
                 (SELECT task_id FROM remote_tasks WHERE finished_ms < ?1)",
            )
            .db()?
            .execute([ms(before_ms)])
            .db()?;
            let n = conn
                .prepare_cached("DELETE FROM remote_tasks WHERE finished_ms < ?1")
                .db()?
                .execute([ms(before_ms)])
                .db()?;
            Ok(n as u64)
        })
        .await
    }

    async fn issue_token(&self, hash: TokenHash, expires_ms: u64) -> Result<(), StoreError> {
        self.write_one_statement(move |conn| {
            conn.prepare_cached(
                "INSERT OR IGNORE INTO remote_tokens (hash, task_id, expires_ms) VALUES (?1, NULL, ?2)",
            )
            .db()?
            .execute(params![&hash[..], ms(expires_ms)])
            .db()?;
            Ok(())
        })
        .await
    }

    async fn bind_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let task_id = task_id.to_string();
        self.write(move |conn| {
            conn.prepare_cached("DELETE FROM remote_tokens WHERE task_id = ?1 AND hash <> ?2")
                .db()?
                .execute(params![task_id, &hash[..]])
                .db()?;
            conn.prepare_cached(
                "INSERT INTO remote_tokens (hash, task_id, expires_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (hash) DO UPDATE SET task_id = ?2, expires_ms = ?3",
            )
            .db()?
            .execute(params![&hash[..], task_id, expires_ms.map(ms)])
            .db()?;
            Ok(())
        })
        .await
    }

    async fn claim_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let task_id = task_id.to_string();
        self.write_one_statement(move |conn| {
            let n = conn
                .prepare_cached(
                    "UPDATE remote_tokens SET task_id = ?2, expires_ms = ?3 \
                     WHERE hash = ?1 AND task_id IS NULL AND expires_ms > ?4 \
                     AND NOT EXISTS (SELECT 1 FROM remote_tokens WHERE task_id = ?2)",
                )
                .db()?
                .execute(params![&hash[..], task_id, expires_ms.map(ms), ms(now_ms)])
                .db()?;
            Ok(n == 1)
        })
        .await
    }

    async fn token_of(
        &self,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<Option<TokenHash>>, StoreError> {
        let task_id = task_id.to_string();
        self.read(move |conn| {
            let row: Option<(Vec<u8>, Option<i64>)> = conn
                .prepare_cached("SELECT hash, expires_ms FROM remote_tokens WHERE task_id = ?1")
                .db()?
                .query_row([&task_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .db()?;
            row.map(|(h, exp)| {
                let live = exp.is_none_or(|e| e > ms(now_ms));
                Ok(if live { Some(hash_of(h)?) } else { None })
            })
            .transpose()
        })
        .await
    }

    async fn forget_token(&self, task_id: &str) -> Result<(), StoreError> {
        let task_id = task_id.to_string();
        self.write_one_statement(move |conn| {
            conn.prepare_cached("DELETE FROM remote_tokens WHERE task_id = ?1")
                .db()?
                .execute([&task_id])
                .db()?;
            Ok(())
        })
        .await
    }

    async fn purge_expired_tokens(&self, now_ms: u64) -> Result<u64, StoreError> {
        self.write_one_statement(move |conn| {
            let n = conn
                .prepare_cached("DELETE FROM remote_tokens WHERE expires_ms <= ?1")
                .db()?
                .execute([ms(now_ms)])
                .db()?;
            Ok(n as u64)
        })
        .await
    }
}
