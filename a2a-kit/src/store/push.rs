//! The push capabilities a store may have: [`PushConfigStore`] (the configs of the four
//! push-config operations) and [`PushOutbox`] (delivery progress that outlives the process).
//! A store offers them through [`TaskManager::push_configs`](super::TaskManager::push_configs)
//! and [`TaskManager::push_outbox`](super::TaskManager::push_outbox); without them the agent
//! does not support push notifications, or tracks deliveries in memory.

use async_trait::async_trait;

use super::{Seq, StoreError};
use crate::protocol::TaskPushNotificationConfig;

/// The push notification configs of each task: what CreateTaskPushNotificationConfig stores
/// and Get, List and Delete read, and what push delivery sends to. A store that has it returns
/// itself from [`TaskManager::push_configs`](super::TaskManager::push_configs); the agent then
/// may support push notifications (without it the card says `pushNotifications: false` and the
/// four operations answer PushNotificationNotSupportedError).
///
/// Configs belong to their task: every method answers [`StoreError::TaskNotFound`] for a task
/// the store does not hold, and purging a task
/// ([`purge_terminal_before`](super::TaskManager::purge_terminal_before)) deletes its configs.
/// Storing a config logs no event.
///
/// ```
/// use a2a_kit::protocol::{Task, TaskPushNotificationConfig, TaskState, TaskStatus};
/// use a2a_kit::store::{InMemoryTaskManager, TaskManager};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryTaskManager::default();
/// let task = Task { id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Working), ..Task::default() };
/// store.create_task(task, None, None).await.unwrap();
/// let configs = store.push_configs().expect("the in-memory store keeps push configs");
/// let config = TaskPushNotificationConfig {
///     task_id: Some("t".into()),
///     id: Some("hook".into()),
///     url: "https://example.com/hook".into(),
///     ..Default::default()
/// };
/// configs.put(config.clone(), 10).await.unwrap();
/// assert_eq!(configs.get("t", "hook").await.unwrap(), Some(config));
/// assert!(configs.delete("t", "hook").await.unwrap());
/// # });
/// ```
#[async_trait]
pub trait PushConfigStore: Send + Sync {
    /// Store (insert or replace by `id`) a push config; `config.id` and `config.task_id` are
    /// set. A replaced config keeps its place in the task's list; a new one goes last.
    ///
    /// A new config that would give the task more than `limit` is refused with
    /// [`StoreError::PushConfigLimit`] and nothing is stored; replacing one always works. The
    /// count and the insert are one atomic step: concurrent puts to a task at `limit - 1`
    /// store one config, not several. (Every config is delivered to on every event: the
    /// limit bounds one task's fan-out. The agent's is
    /// `AgentServiceBuilder::push_configs_per_task`.)
    async fn put(&self, config: TaskPushNotificationConfig, limit: usize)
    -> Result<(), StoreError>;

    /// One push config of a task; `Ok(None)` when the task has none of that id.
    async fn get(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError>;

    /// All push configs of a task, in creation order.
    async fn list(&self, task_id: &str) -> Result<Vec<TaskPushNotificationConfig>, StoreError>;

    /// Delete a push config; `Ok(false)` when there was none.
    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, StoreError>;
}

/// Durable delivery progress of one push config: its lane in the push outbox
/// ([`PushOutbox`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushLane {
    /// The config's id (empty for a config stored without one).
    pub config_id: String,
    /// Events of the task's log up to here were handled for this config (delivered, given
    /// up on, or not matching the triggers). A lane starts at the task's last event when its
    /// config is stored: a config receives the events after it.
    pub cursor: Seq,
    /// Events accepted by the webhook.
    pub delivered: u64,
    /// Events that could not be delivered.
    pub failed: u64,
    /// Failed events since the last success.
    pub consecutive_failures: u32,
    /// No more deliveries are attempted.
    pub suspended: bool,
    /// Why the last failed event failed, or the last failed attempt of the event being
    /// retried.
    pub last_error: Option<String>,
    /// HTTP attempts made so far for the event being delivered (the one after `cursor`); 0
    /// when none is being retried. A process that takes over the lane (a restart, another
    /// replica) goes on counting from here.
    pub attempts: u32,
    /// When the event being retried is tried again (Unix milliseconds), if it is.
    pub next_attempt_at: Option<i64>,
}

/// The durable half of the push outbox, for stores several processes share or that outlive
/// a crash: which events each push config has had, and which process is delivering a task's
/// events now.
///
/// A process delivers a task's events only while it holds the task's **claim**; the claim
/// lasts the store's lease, is renewed while the process lives, and is taken over by another
/// process once it ran out. Lanes are written only by the claim's holder, so each event
/// reaches each config from one process, and the process that takes over starts where the
/// last one recorded it stopped.
///
/// A store that has it returns itself from
/// [`TaskManager::push_outbox`](super::TaskManager::push_outbox); it keeps
/// [push configs](PushConfigStore) too, since a lane is made when its config is stored
/// (starting at the task's last event), kept when the config is replaced and dropped with it.
#[async_trait]
pub trait PushOutbox: Send + Sync {
    /// Claim `task_id`'s push deliveries for this process: its lanes when the claim is now
    /// this process's (it was free, ran out, or was already held here), `None` when another
    /// live process holds it. A task without lanes (no push configs) is not claimed: `Some`
    /// of nothing.
    async fn claim_push(&self, task_id: &str) -> Result<Option<Vec<PushLane>>, StoreError>;

    /// Record a lane's progress while this process holds the task's claim; `false` when the
    /// claim was lost (the caller stops: another process delivers now).
    async fn save_push_lane(&self, task_id: &str, lane: &PushLane) -> Result<bool, StoreError>;

    /// The task's lanes as stored, without claiming anything: the delivery status that
    /// outlives the process and is the same from every replica.
    async fn push_lanes(&self, task_id: &str) -> Result<Vec<PushLane>, StoreError>;

    /// Let go of the task's claim (its events are handled, or the process stops).
    async fn release_push_claim(&self, task_id: &str) -> Result<(), StoreError>;

    /// Tasks with events some lane has not handled whose claim ran out, or that nobody
    /// claimed for longer than the lease: work a process that stopped left behind, or
    /// events written where nobody delivers (a task ended by a survivor). At most `limit`.
    async fn orphaned_push_work(&self, limit: usize) -> Result<Vec<String>, StoreError>;

    /// How long a claim lasts without renewal (the store's lease): how often to look for
    /// orphaned work.
    fn push_claim_ttl(&self) -> std::time::Duration;
}

/// The task a push config belongs to (set by the server before a store sees the config).
pub(crate) fn config_task_id(config: &TaskPushNotificationConfig) -> Result<String, StoreError> {
    config
        .task_id
        .clone()
        .ok_or_else(|| StoreError::InvalidEvent("push config without taskId".into()))
}
