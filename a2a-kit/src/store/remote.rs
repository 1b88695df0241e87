//! The calling side's capability: [`RemoteTaskStore`], the tasks this process started on other
//! agents (as it last heard of them) and the webhook tokens it issued for them, kept so that
//! they outlive the process. A store offers it through
//! [`TaskManager::remote_tasks`](super::TaskManager::remote_tasks); `a2a-kit-axum`'s
//! `RemoteTasks` and `PushTokens` are built on it.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::StoreError;

/// Now, in Unix milliseconds: when a store saw a record finish.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
use crate::protocol::Task;

/// A webhook token as a store keeps it: its SHA-256, never the token itself, so a copy of the
/// database opens no webhook.
pub type TokenHash = [u8; 32];

/// One task this process started on a remote agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteTaskRecord {
    /// The local view of the remote task, as the last webhook, stream event or poll left it.
    pub task: Task,
    /// The base URL of the agent running it (where its card was read), for polls and cancels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_url: Option<String>,
    /// When the caller stops waiting for a webhook and polls instead (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// The polls made since the deadline that found nothing conclusive.
    #[serde(default)]
    pub polls: u32,
    /// When to poll next (Unix milliseconds), while polling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_poll_ms: Option<u64>,
    /// Set when the caller gave up waiting: the task is surfaced as timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<TimedOut>,
}

impl RemoteTaskRecord {
    /// Whether the remote task is terminal (what [`RemoteTaskStore::purge_finished_before`]
    /// may drop).
    pub fn is_finished(&self) -> bool {
        self.task.status.state.is_terminal()
    }

    /// A record of `task`, nothing scheduled.
    pub fn new(task: Task) -> Self {
        RemoteTaskRecord {
            task,
            agent_url: None,
            deadline_ms: None,
            polls: 0,
            next_poll_ms: None,
            timed_out: None,
        }
    }

    /// Whether the remote task is settled: terminal, or waiting for its caller (input or
    /// authentication required). A settled task is not polled.
    pub fn is_settled(&self) -> bool {
        let state = self.task.status.state;
        state.is_terminal() || state.is_interrupted()
    }
}

/// Why a remote task was given up on, for the application to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedOut {
    /// When (Unix milliseconds).
    pub at_ms: u64,
    /// What happened, in a sentence (no webhook by the deadline, what the polls found).
    pub reason: String,
}

/// A stored record and its revision, the version a conditional save compares with.
#[derive(Debug, Clone, PartialEq)]
pub struct Revised {
    /// The record.
    pub record: RemoteTaskRecord,
    /// Its revision: 1 when first saved, one more at each save.
    pub revision: u64,
}

/// The tasks this process started on remote agents and the webhook tokens it issued, kept by
/// the store. Every write is atomic; [`save`](Self::save) compares revisions, so two
/// processes (or two webhooks) updating one record cannot lose each other's change: the
/// loser reads again and reapplies.
///
/// ```
/// use a2a_kit::protocol::{Task, TaskState, TaskStatus};
/// use a2a_kit::store::{InMemoryTaskManager, RemoteTaskRecord, TaskManager};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryTaskManager::default();
/// let remote = store.remote_tasks().expect("the in-memory store keeps remote tasks");
/// let task = Task { id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Working), ..Task::default() };
/// assert_eq!(remote.save(&RemoteTaskRecord::new(task), None).await.unwrap(), Some(1));
/// // A save that expects another revision changes nothing.
/// let stale = remote.load("t").await.unwrap().unwrap();
/// assert_eq!(remote.save(&stale.record, Some(1)).await.unwrap(), Some(2));
/// assert_eq!(remote.save(&stale.record, Some(1)).await.unwrap(), None);
/// # });
/// ```
#[async_trait]
pub trait RemoteTaskStore: Send + Sync {
    /// One record and its revision.
    async fn load(&self, task_id: &str) -> Result<Option<Revised>, StoreError>;

    /// Write `record` (keyed by its task's id) if the stored revision is `expected` (`None`:
    /// if there is none). `Ok(Some(revision))` with the new revision when written, `Ok(None)`
    /// when the stored revision was another (nothing written).
    async fn save(
        &self,
        record: &RemoteTaskRecord,
        expected: Option<u64>,
    ) -> Result<Option<u64>, StoreError>;

    /// The records whose task is not settled (see [`RemoteTaskRecord::is_settled`]), timed
    /// out or not: what a process restarting goes on waiting for.
    async fn unsettled(&self) -> Result<Vec<Revised>, StoreError>;

    /// Every record (unordered).
    async fn all_remote(&self) -> Result<Vec<Revised>, StoreError>;

    /// Drop a record and its token; `true` if there was a record.
    async fn remove(&self, task_id: &str) -> Result<bool, StoreError>;

    /// Drop the records whose task is terminal and was first saved so before `before_ms`
    /// (Unix milliseconds, this process's clock), with their tokens; how many. What keeps a
    /// long-running caller's store from growing with every task it ever delegated.
    async fn purge_finished_before(&self, before_ms: u64) -> Result<u64, StoreError>;

    /// Keep a token issued and not yet tied to a task, until `expires_ms`.
    async fn issue_token(&self, hash: TokenHash, expires_ms: u64) -> Result<(), StoreError>;

    /// Make `hash` the token of `task_id` (replacing the task's previous one, taking a
    /// pending one), valid until `expires_ms` if set.
    async fn bind_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
    ) -> Result<(), StoreError>;

    /// Tie the pending token `hash`, unexpired at `now_ms`, to `task_id` if the task has no
    /// token yet (a webhook that came before its acknowledgement); `true` if it did. One
    /// atomic step: a pending token opens one task only.
    async fn claim_token(
        &self,
        hash: TokenHash,
        task_id: &str,
        expires_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<bool, StoreError>;

    /// The hash of `task_id`'s token, if it has one unexpired at `now_ms`. `Ok(Some(None))`:
    /// the task had a token and it expired.
    async fn token_of(
        &self,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<Option<TokenHash>>, StoreError>;

    /// Drop `task_id`'s token (its webhooks are then refused).
    async fn forget_token(&self, task_id: &str) -> Result<(), StoreError>;

    /// Drop the tokens expired at `now_ms`; how many.
    async fn purge_expired_tokens(&self, now_ms: u64) -> Result<u64, StoreError>;
}
