//! The cluster capability: a store several processes (replicas of one agent) share, and the
//! coordination it gives them ([`ClusterStore`]). A store offers it through
//! [`TaskManager::cluster`](super::TaskManager::cluster); without it the runtime assumes it is
//! the only process writing the store.

use async_trait::async_trait;
use futures::stream::BoxStream;

use super::{Seq, StoreError};
use crate::protocol::{Message, TaskState};

/// What a store several processes write at once (replicas on one database) tells and decides
/// for them. With it, start-up recovery leaves tasks in progress alone (they may be running
/// elsewhere), the runtime follows the other processes' events ([`changes`](Self::changes)),
/// and a reply to a question goes where the question's skill waits
/// ([`route_reply`](Self::route_reply)).
#[async_trait]
pub trait ClusterStore: Send + Sync {
    /// The changes other processes make, as they happen. The runtime rings its readers'
    /// doorbells with them (readers then read the log) and stops a local skill whose task
    /// another process ended (a CancelTask that reached another replica). Called once per
    /// service.
    fn changes(&self) -> BoxStream<'static, StoreChange>;

    /// Decide where the user's reply to an INPUT_REQUIRED or AUTH_REQUIRED task continues.
    /// If another live process holds the task (its skill waits in `ask` there), append
    /// `message` to the history and tell that process ([`ReplyRoute::HandedOver`]); otherwise
    /// this process becomes the holder and nothing is written ([`ReplyRoute::Here`]). Decided
    /// under the task's lock, so among replies arriving at several processes at once exactly
    /// one continues the task.
    async fn route_reply(&self, task_id: &str, message: &Message)
    -> Result<ReplyRoute, StoreError>;

    /// This process no longer runs or holds the task's skill (its run ended without ending
    /// the task, or the process is stopping), so another process may continue it. A task
    /// this process does not hold is left as it is.
    async fn release(&self, task_id: &str) -> Result<(), StoreError>;
}

/// A change another process made to a store several processes share
/// ([`ClusterStore::changes`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StoreChange {
    /// An event was appended to a task's log; `state` is the status it set, if any.
    Appended {
        /// The task.
        task_id: String,
        /// The event's sequence number.
        seq: Seq,
        /// The state a status update set.
        state: Option<TaskState>,
    },
    /// Changes may have been missed (the feed's connection dropped and came back): every
    /// reader should read its task's log again.
    Resync,
    /// Another process handed this process the user's reply to a task whose skill waits in
    /// `ask` here ([`ClusterStore::route_reply`]); the reply is the task's last message.
    Reply {
        /// The task.
        task_id: String,
    },
}

/// Where the user's reply to an interrupted task is continued ([`ClusterStore::route_reply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyRoute {
    /// In this process: nobody else holds the task, and now this process does.
    Here,
    /// In the process whose skill waits for it: the reply is in the task's history and that
    /// process was told ([`StoreChange::Reply`]).
    HandedOver,
}
