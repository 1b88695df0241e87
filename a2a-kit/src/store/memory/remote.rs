//! The in-memory store's [`RemoteTaskStore`]: two maps under a lock of their own.

use std::collections::{HashMap, VecDeque};

use async_trait::async_trait;

use super::InMemoryTaskManager;
use crate::store::{RemoteTaskRecord, RemoteTaskStore, Revised, StoreError, TokenHash};

/// Pending tokens kept at most; the oldest beyond go (each is a webhook URL handed out and
/// never used).
const MAX_PENDING: usize = 10_000;

#[derive(Debug, Default)]
pub(super) struct Remote {
    records: HashMap<String, Revised>,
    /// Bound tokens: task id → (hash, expiry).
    bound: HashMap<String, (TokenHash, Option<u64>)>,
    /// Issued, not bound yet, oldest first, with their expiry.
    pending: VecDeque<(TokenHash, u64)>,
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
        remote.bound.remove(task_id);
        Ok(remote.records.remove(task_id).is_some())
    }

    async fn issue_token(&self, hash: TokenHash, expires_ms: u64) -> Result<(), StoreError> {
        let mut remote = self.remote();
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
        let mut remote = self.remote();
        remote.pending.retain(|(p, _)| *p != hash);
        remote.bound.insert(task_id.to_string(), (hash, expires_ms));
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
        remote.bound.insert(task_id.to_string(), (hash, expires_ms));
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
        self.remote().bound.remove(task_id);
        Ok(())
    }

    async fn purge_expired_tokens(&self, now_ms: u64) -> Result<u64, StoreError> {
        let mut remote = self.remote();
        let before = remote.pending.len() + remote.bound.len();
        remote.pending.retain(|(_, exp)| *exp > now_ms);
        remote
            .bound
            .retain(|_, (_, exp)| exp.is_none_or(|e| e > now_ms));
        Ok((before - remote.pending.len() - remote.bound.len()) as u64)
    }
}
