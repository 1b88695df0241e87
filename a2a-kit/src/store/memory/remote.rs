//! The in-memory store's [`RemoteTaskStore`]: records and tokens under a lock of their own.

use std::collections::{HashMap, VecDeque};

use async_trait::async_trait;

use super::InMemoryTaskManager;
use crate::store::remote::now_ms;
use crate::store::{RemoteTaskRecord, RemoteTaskStore, Revised, StoreError, TokenHash};

/// Pending tokens kept at most; the oldest beyond go (each is a webhook URL handed out and
/// never used).
const MAX_PENDING: usize = 10_000;

#[derive(Debug, Default)]
pub(super) struct Remote {
    records: HashMap<String, Revised>,
    /// When each finished record was first saved finished (Unix millis).
    finished: HashMap<String, u64>,
    /// Bound tokens: task id → (hash, expiry).
    bound: HashMap<String, (TokenHash, Option<u64>)>,
    /// The task each bound token is bound to: a token opens one task only, as in the SQL
    /// stores, whose token table is keyed by the hash.
    holders: HashMap<TokenHash, String>,
    /// Issued, not bound yet, oldest first, with their expiry.
    pending: VecDeque<(TokenHash, u64)>,
}

impl Remote {
    /// Drop `task_id`'s token.
    fn unbind(&mut self, task_id: &str) {
        if let Some((hash, _)) = self.bound.remove(task_id) {
            self.holders.remove(&hash);
        }
    }

    /// Make `hash` the token of `task_id` alone: the task's previous token, the task the
    /// token was bound to and its pending entry let go.
    fn bind(&mut self, hash: TokenHash, task_id: &str, expires_ms: Option<u64>) {
        self.unbind(task_id);
        if let Some(previous) = self.holders.remove(&hash) {
            self.bound.remove(&previous);
        }
        self.pending.retain(|(p, _)| *p != hash);
        self.bound.insert(task_id.to_string(), (hash, expires_ms));
        self.holders.insert(hash, task_id.to_string());
    }
}

impl InMemoryTaskManager {
    fn remote(&self) -> std::sync::MutexGuard<'_, Remote> {
        self.remote.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl RemoteTaskStore for InMemoryTaskManager {
    async fn load(&self, task_id: &str) -> Result<Option<Revised>, StoreError> {
        Ok(self.remote().records.get(task_id).cloned())
    }

    async fn save(
        &self,
        record: &RemoteTaskRecord,
        expected: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let mut remote = self.remote();
        let current = remote.records.get(&record.task.id).map(|r| r.revision);
        if current != expected {
            return Ok(None);
        }
        let revision = current.unwrap_or(0) + 1;
        if record.is_finished() {
            remote
                .finished
                .entry(record.task.id.clone())
                .or_insert_with(now_ms);
        } else {
            remote.finished.remove(&record.task.id);
        }
        remote.records.insert(
            record.task.id.clone(),
            Revised {
                record: record.clone(),
                revision,
            },
        );
        Ok(Some(revision))
    }

    async fn unsettled(&self) -> Result<Vec<Revised>, StoreError> {
        Ok(self
            .remote()
            .records
            .values()
            .filter(|r| !r.record.is_settled())
            .cloned()
            .collect())
    }

    async fn all_remote(&self) -> Result<Vec<Revised>, StoreError> {
        Ok(self.remote().records.values().cloned().collect())
    }

    async fn remove(&self, task_id: &str) -> Result<bool, StoreError> {
        let mut remote = self.remote();
        remote.finished.remove(task_id);
        remote.unbind(task_id);
        Ok(remote.records.remove(task_id).is_some())
    }

    async fn purge_finished_before(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut remote = self.remote();
        let old: Vec<String> = remote
            .finished
            .iter()
            .filter(|(_, at)| **at < before_ms)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &old {
            remote.finished.remove(id);
            remote.unbind(id);
            remote.records.remove(id);
        }
        Ok(old.len() as u64)
    }

    async fn issue_token(&self, hash: TokenHash, expires_ms: u64) -> Result<(), StoreError> {
        let mut remote = self.remote();
        // A token already kept (pending or bound) stays as it is.
        if remote.holders.contains_key(&hash) || remote.pending.iter().any(|(p, _)| *p == hash) {
            return Ok(());
        }
        remote.pending.push_back((hash, expires_ms));
        while remote.pending.len() > MAX_PENDING {
            remote.pending.pop_front();
        }
        Ok(())
    }

    async fn bind_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        self.remote().bind(hash, task_id, expires_ms);
        Ok(())
    }

    async fn claim_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut remote = self.remote();
        if remote.bound.contains_key(task_id) {
            return Ok(false);
        }
        let Some(i) = remote
            .pending
            .iter()
            .position(|(p, exp)| *p == hash && *exp > now_ms)
        else {
            return Ok(false);
        };
        remote.pending.remove(i);
        remote.bind(hash, task_id, expires_ms);
        Ok(true)
    }

    async fn token_of(
        &self,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<Option<TokenHash>>, StoreError> {
        Ok(self
            .remote()
            .bound
            .get(task_id)
            .map(|(h, exp)| exp.is_none_or(|e| e > now_ms).then_some(*h)))
    }

    async fn forget_token(&self, task_id: &str) -> Result<(), StoreError> {
        self.remote().unbind(task_id);
        Ok(())
    }

    async fn purge_expired_tokens(&self, now_ms: u64) -> Result<u64, StoreError> {
        let mut remote = self.remote();
        let before = remote.pending.len();
        remote.pending.retain(|(_, exp)| *exp > now_ms);
        let mut purged = before - remote.pending.len();
        let expired: Vec<String> = remote
            .bound
            .iter()
            .filter(|(_, (_, exp))| exp.is_some_and(|e| e <= now_ms))
            .map(|(task, _)| task.clone())
            .collect();
        for task in &expired {
            remote.unbind(task);
        }
        purged += expired.len();
        Ok(purged as u64)
    }
}
