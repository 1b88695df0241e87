//! Task storage: the [`TaskManager`] trait and its default, [`InMemoryTaskManager`].
//!
//! A task manager owns tasks, their history and artifacts, push notification configs and one
//! ordered **event log per task**. Every change to a task goes through
//! [`TaskManager::append_event`], which checks the transition with
//! [`TaskStateMachine`](crate::task::TaskStateMachine), applies it to the stored task and appends
//! the event to the log under one sequence number, atomically. Streams, `SubscribeToTask` and
//! `Last-Event-ID` replay read that log, so every reader sees the same events in the same order.
//! Once a task has finished and no reader needs its log, the runtime says so
//! ([`TaskManager::release_log`]) and a store may drop it; a later read of it gets the final
//! `Task` snapshot instead ([`TaskManager::events_after`]).
//!
//! The trait is object-safe (`Arc<dyn TaskManager>`) through `async_trait`: the kit picks the
//! store at run time (`--store sqlite:PATH`), and one boxed future per store call is noise next
//! to the HTTP work around it.

mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteTaskManager, Synchronous};
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresTaskManager};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod just_finished;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use just_finished::JustFinished;
pub mod retention;

use async_trait::async_trait;
use futures::stream::BoxStream;

pub use memory::{DEFAULT_HOT_FINISHED, InMemoryConfig, InMemoryTaskManager};

use crate::error::A2aError;
use crate::protocol::{
    ListTasksResponse, Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
    Timestamp,
};
use crate::task::TransitionError;

/// A sequence number in a task's event log. The task's creation snapshot is event 1.
pub type Seq = u64;

/// One entry of a task's event log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// Position in the task's log, starting at 1.
    pub seq: Seq,
    /// The event as clients receive it: the creation snapshot is a `Task`, later events are
    /// `StatusUpdate` and `ArtifactUpdate`.
    pub event: StreamResponse,
}

/// A task as stored, with what the runtime needs besides the wire object.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task (history and artifacts trimmed as the query asked).
    pub task: Task,
    /// The skill that handles the task, so follow-up messages reach it.
    pub skill_id: Option<String>,
    /// Whose task it is (see [`Owner`]); `None` for a task created without one.
    pub owner: Option<Owner>,
    /// The sequence number of the last event applied to `task`.
    pub last_seq: Seq,
}

/// Who a task belongs to: the tenant it was created under and its creator's owner key, as
/// one opaque string the stores keep beside the task and compare for equality. The server
/// makes it ([`AgentService`](crate::server::AgentService) scopes every task operation by
/// it); a store only keeps it, returns it with the task and filters ListTasks by it.
///
/// Both parts are percent-encoded and joined by `/` (`acme/alice`, `/alice` without a
/// tenant, `acme/` for a tenant's shared tasks), so no two pairs make the same key and an
/// operator can read it in the database.
///
/// ```
/// use a2a_kit::store::Owner;
/// assert_eq!(Owner::new(Some("acme"), Some("alice")).unwrap().as_str(), "acme/alice");
/// assert_eq!(Owner::new(None, Some("a/b")).unwrap().as_str(), "/a%2Fb");
/// assert_eq!(Owner::new(None, None), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(std::sync::Arc<str>);

impl Owner {
    /// The owner key of `tenant` and `principal` (the caller's owner key); `None` when
    /// neither is given (an open agent without tenants: tasks belong to nobody).
    pub fn new(tenant: Option<&str>, principal: Option<&str>) -> Option<Owner> {
        let tenant = tenant.filter(|t| !t.is_empty());
        let principal = principal.filter(|p| !p.is_empty());
        if tenant.is_none() && principal.is_none() {
            return None;
        }
        let (tenant, principal) = (tenant.unwrap_or(""), principal.unwrap_or(""));
        // Most names need no escape: copied as they are, into the key's one allocation.
        let plain = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'*'))
        };
        let mut buf = [0u8; 128];
        let len = tenant.len() + 1 + principal.len();
        if len <= buf.len() && plain(tenant) && plain(principal) {
            buf[..tenant.len()].copy_from_slice(tenant.as_bytes());
            buf[tenant.len()] = b'/';
            buf[tenant.len() + 1..len].copy_from_slice(principal.as_bytes());
            let key = std::str::from_utf8(&buf[..len]).expect("ASCII");
            return Some(Owner(key.into()));
        }
        let mut key: String = form_urlencoded::byte_serialize(tenant.as_bytes()).collect();
        key.push('/');
        key.extend(form_urlencoded::byte_serialize(principal.as_bytes()));
        Some(Owner(key.into()))
    }

    /// A key as a store kept it (read back from a database column).
    pub fn from_stored(key: impl Into<std::sync::Arc<str>>) -> Owner {
        Owner(key.into())
    }

    /// The key, as stores keep it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// How much of a task to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskView {
    /// `None`: the whole history; `Some(0)`: none; `Some(n)`: the `n` most recent messages.
    pub history_length: Option<usize>,
    /// Whether to include artifacts.
    pub include_artifacts: bool,
}

impl TaskView {
    /// Everything: full history and artifacts.
    pub const FULL: TaskView = TaskView {
        history_length: None,
        include_artifacts: true,
    };

    /// Trim `task` to this view.
    pub fn apply(&self, task: &mut Task) {
        match self.history_length {
            None => {}
            Some(0) => task.history.clear(),
            Some(n) if task.history.len() > n => {
                task.history.drain(..task.history.len() - n);
            }
            Some(_) => {}
        }
        if !self.include_artifacts {
            task.artifacts.clear();
        }
    }
}

/// A validated ListTasks query (the server checks the wire request before building it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListQuery {
    /// Only tasks of this owner; `None`: only tasks created without one. Never another
    /// owner's tasks.
    pub owner: Option<Owner>,
    /// Only tasks in this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this instant.
    pub status_timestamp_after: Option<Timestamp>,
    /// Page size, 1..=100.
    pub page_size: usize,
    /// The opaque cursor from a previous page's `nextPageToken`.
    pub page_token: Option<String>,
    /// How much of each task to return.
    pub view: TaskView,
}

/// Errors a task manager reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// No task with that id.
    #[error("task {0} was not found")]
    TaskNotFound(String),
    /// A task with that id exists already.
    #[error("task {0} exists already")]
    TaskExists(String),
    /// The event would make an illegal state transition; nothing was written.
    #[error(transparent)]
    IllegalTransition(#[from] TransitionError),
    /// The event does not fit the task (wrong task id, a second creation snapshot, ...).
    #[error("invalid event: {0}")]
    InvalidEvent(String),
    /// A page token this store did not issue.
    #[error("pageToken is not a token this server issued")]
    InvalidPageToken,
    /// The store is at capacity and nothing can be evicted.
    #[error("task store is full ({0} live tasks); retry later")]
    Full(usize),
    /// The backend failed (I/O, database).
    #[error("storage backend error: {0}")]
    Backend(String),
    /// The backend cannot be reached right now (a database server that went away); the
    /// same call may succeed later.
    #[error("the task store is unreachable: {0}")]
    Unavailable(String),
}

impl From<StoreError> for A2aError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TaskNotFound(id) => A2aError::task_not_found(id),
            StoreError::IllegalTransition(t) => {
                A2aError::unsupported(format!("{t}: the task cannot change state"))
            }
            StoreError::InvalidPageToken => A2aError::invalid_field("pageToken", e.to_string()),
            StoreError::Unavailable(_) => A2aError::Unavailable(format!("{e}; retry in a moment")),
            // Not the server's fault: it is busy, and a retry later may find room.
            StoreError::Full(_) => A2aError::Unavailable(e.to_string()),
            other => A2aError::Internal(other.to_string()),
        }
    }
}

/// A change another process made to a store several processes share
/// ([`TaskManager::changes`]).
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
    /// `ask` here ([`TaskManager::route_reply`]); the reply is the task's last message.
    Reply {
        /// The task.
        task_id: String,
    },
}

/// Where the user's reply to an interrupted task is continued ([`TaskManager::route_reply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyRoute {
    /// In this process: nobody else holds the task, and now this process does.
    Here,
    /// In the process whose skill waits for it: the reply is in the task's history and that
    /// process was told ([`StoreChange::Reply`]).
    HandedOver,
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

/// Storage for tasks, history, artifacts, push configs and per-task event logs.
///
/// Implementations must make [`append_event`](Self::append_event) atomic: the transition check,
/// the change to the task and the log entry happen together or not at all. The shared
/// conformance tests in this crate's `tests/` run against every implementation.
///
/// ```
/// use a2a_kit::store::{InMemoryTaskManager, TaskManager, TaskView};
/// use a2a_kit::protocol::{Message, Task, TaskState, TaskStatus};
/// # tokio_test_block(async {
/// let store = InMemoryTaskManager::default();
/// let task = Task {
///     id: "t-1".into(),
///     context_id: "c-1".into(),
///     status: TaskStatus::new(TaskState::Submitted),
///     artifacts: vec![],
///     history: vec![Message::user_text("hi")],
///     metadata: None,
/// };
/// store.create_task(task, Some("greet".into()), None).await.unwrap();
/// let rec = store.get_task("t-1", TaskView::FULL).await.unwrap().unwrap();
/// assert_eq!(rec.last_seq, 1);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[async_trait]
pub trait TaskManager: Send + Sync + 'static {
    /// Store a new task for `owner`; its snapshot becomes event 1 of its log. The owner is
    /// kept beside the task, returned by [`get_task`](Self::get_task) and matched by
    /// [`list_tasks`](Self::list_tasks); it never changes.
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError>;

    /// Apply a `StatusUpdate` or `ArtifactUpdate` to the task and append it to the log.
    ///
    /// A status update that carries a message also appends that message to the history.
    /// An artifact update with `append` adds its parts to the stored artifact of that id;
    /// without `append` it replaces it (or adds a new artifact).
    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError>;

    /// Store a new task with the first events of its log, as one write; returns the last
    /// sequence number. The outcome is that of [`create_task`](Self::create_task) followed by
    /// [`append_event`](Self::append_event) for each event, in order.
    ///
    /// The runtime uses it for a task nobody can have read yet: a blocking SendMessage whose
    /// skill ends in its first poll writes its task once, finished, instead of once per event.
    ///
    /// All or nothing: if any event is refused, no task is stored. The default checks the
    /// events on a copy of the task, then writes them one by one (so only a backend failure
    /// half-way can leave part of them); the kit's stores write them in one step.
    ///
    /// ```
    /// use a2a_kit::protocol::{StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};
    /// use a2a_kit::store::{InMemoryTaskManager, TaskManager, TaskView};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryTaskManager::default();
    /// let task = Task {
    ///     id: "t-1".into(),
    ///     context_id: "c-1".into(),
    ///     status: TaskStatus::new(TaskState::Submitted),
    ///     ..Task::default()
    /// };
    /// let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
    ///     task_id: "t-1".into(),
    ///     context_id: "c-1".into(),
    ///     status: TaskStatus::new(TaskState::Completed),
    ///     metadata: None,
    /// });
    /// assert_eq!(store.create_task_with_events(task, None, None, vec![done]).await.unwrap(), 2);
    /// let rec = store.get_task("t-1", TaskView::FULL).await.unwrap().unwrap();
    /// assert_eq!(rec.task.status.state, TaskState::Completed);
    /// # });
    /// ```
    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        if !events.is_empty() {
            task_after(&task, &events)?;
        }
        let id = task.id.clone();
        let mut seq = self.create_task(task, skill_id, owner).await?;
        for event in events {
            seq = self.append_event(&id, event).await?;
        }
        Ok(seq)
    }

    /// [`create_task_with_events`](Self::create_task_with_events) then
    /// [`release_log`](Self::release_log), in one call: the runtime's write of a task whose
    /// skill finished before anyone could know its id, when no observer (push) reads logs.
    /// Knowing at once that nobody will read the log event by event, a store can write the
    /// finished task in its compact form (the SQLite store: one row holding the task's JSON,
    /// whose log is the final snapshot). Reads answer exactly as after the two calls.
    ///
    /// ```
    /// use a2a_kit::protocol::{StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};
    /// use a2a_kit::store::{InMemoryTaskManager, TaskManager, TaskView};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryTaskManager::default();
    /// let task = Task { id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Submitted), ..Task::default() };
    /// let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
    ///     task_id: "t".into(), context_id: "c".into(), status: TaskStatus::new(TaskState::Completed), metadata: None,
    /// });
    /// assert_eq!(store.create_task_with_released_log(task, None, None, vec![done]).await.unwrap(), 2);
    /// let rec = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
    /// assert_eq!((rec.task.status.state, rec.last_seq), (TaskState::Completed, 2));
    /// # });
    /// ```
    async fn create_task_with_released_log(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        let id = task.id.clone();
        let seq = self
            .create_task_with_events(task, skill_id, owner, events)
            .await?;
        self.release_log(&id);
        Ok(seq)
    }

    /// Append a message to a task's history without logging an event (a client follow-up).
    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError>;

    /// Read a task.
    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError>;

    /// Append a task's ProtoJSON to `out`, exactly what GetTask returns for `view`; `false`
    /// (and `out` untouched) if there is no such task; after an error `out` may hold part of
    /// it, and is discarded. The caller's buffer may already hold
    /// the start of a response envelope, so the task is copied once, into the response. The
    /// default serializes [`get_task`](Self::get_task); a store that holds tasks as bytes
    /// copies them (the in-memory store does for finished tasks).
    ///
    /// ```
    /// use a2a_kit::store::{InMemoryTaskManager, TaskManager, TaskView};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryTaskManager::default();
    /// let mut out = Vec::new();
    /// assert!(!store.write_task_json("nope", TaskView::FULL, &mut out).await.unwrap());
    /// assert!(out.is_empty());
    /// # });
    /// ```
    async fn write_task_json(
        &self,
        task_id: &str,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        write_found(out, self.get_task(task_id, view).await?)
    }

    /// Events with `seq > after`, in order, at most `limit`.
    ///
    /// After [`release_log`](Self::release_log) a store may have dropped the events of a
    /// finished task; it then answers a read that starts before its end with **one** event:
    /// the final `Task` snapshot, under the last sequence number. Readers treat it as the
    /// rest of the log (it holds every artifact and the final status), so nothing is lost
    /// but the granularity.
    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError>;

    /// A hint from the runtime: the task is terminal and no live reader (stream, blocking
    /// SendMessage, push worker) is subscribed to it. A reader that comes later (a blocking
    /// SendMessage whose skill finished before it subscribed, a reconnecting stream) gets the
    /// final `Task` snapshot for the rest of the log. A store may drop the events to save
    /// memory, keeping the sequence count (see [`events_after`](Self::events_after)). The
    /// default keeps everything; [`InMemoryTaskManager`] drops all but the most recent logs.
    /// The runtime never calls it while an `runtime::EventObserver`
    /// is installed (push delivery is one), since an observer's worker may read a log late.
    ///
    /// ```
    /// use a2a_kit::store::{InMemoryTaskManager, TaskManager};
    /// let store = InMemoryTaskManager::default();
    /// store.release_log("no-such-task"); // a hint: unknown or live tasks are ignored
    /// ```
    fn release_log(&self, task_id: &str) {
        let _ = task_id;
    }

    /// One page of the query's owner's tasks, newest status timestamp first.
    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError>;

    /// Store (insert or replace by `id`) a push config; `config.id` and `config.task_id` are set.
    async fn put_push_config(&self, config: TaskPushNotificationConfig) -> Result<(), StoreError>;

    /// One push config.
    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError>;

    /// All push configs of a task, in creation order.
    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError>;

    /// Delete a push config; `Ok(false)` when there was none.
    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<bool, StoreError>;

    /// Delete terminal tasks whose last status change is older than `before`; returns how many.
    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError>;

    /// Ids of tasks in any of `states` (used at start-up to end tasks a crash left running).
    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError>;

    /// Whether the tasks outlive the process (a file or a server, not memory). A graceful
    /// shutdown then leaves tasks waiting for input as they are, for the next process to
    /// continue; with a store in memory they end FAILED, since they would be lost anyway.
    fn is_durable(&self) -> bool {
        false
    }

    /// Whether other processes write to the same tasks (replicas on one database). Start-up
    /// recovery then leaves tasks in progress alone: they may be running elsewhere.
    fn is_shared(&self) -> bool {
        false
    }

    /// For a [shared](Self::is_shared) store: the changes other processes make, as they
    /// happen. The runtime rings its readers' doorbells with them (readers then read the log)
    /// and stops a local skill whose task another process ended (a CancelTask that reached
    /// another replica). Called once per service; `None` (the default) when only this process
    /// writes.
    fn changes(&self) -> Option<BoxStream<'static, StoreChange>> {
        None
    }

    /// For a [shared](Self::is_shared) store: decide where the user's reply to an
    /// INPUT_REQUIRED or AUTH_REQUIRED task continues. If another live process holds the task
    /// (its skill waits in `ask` there), append `message` to the history and tell that
    /// process ([`ReplyRoute::HandedOver`]); otherwise this process becomes the holder and
    /// nothing is written ([`ReplyRoute::Here`]). Decided under the task's lock, so among
    /// replies arriving at several processes at once exactly one continues the task. The
    /// default (one process) is `Here`.
    async fn route_reply(
        &self,
        task_id: &str,
        message: &Message,
    ) -> Result<ReplyRoute, StoreError> {
        let _ = (task_id, message);
        Ok(ReplyRoute::Here)
    }

    /// For a [shared](Self::is_shared) store: this process no longer runs or holds the
    /// task's skill (its run ended without ending the task, or the process is stopping), so
    /// another process may continue it. The default does nothing.
    async fn release(&self, task_id: &str) -> Result<(), StoreError> {
        let _ = task_id;
        Ok(())
    }

    /// The durable push outbox, if this store keeps one; `None` (the default): the push
    /// dispatcher tracks deliveries in memory.
    fn push_outbox(&self) -> Option<&dyn PushOutbox> {
        None
    }
}

/// What [`TaskManager::write_task_json`] writes from a record read with `get_task`: the
/// task's JSON, and whether there was one.
pub(crate) fn write_found(
    out: &mut Vec<u8>,
    found: Option<TaskRecord>,
) -> Result<bool, StoreError> {
    match found {
        Some(rec) => serde_json::to_writer(out, &rec.task)
            .map(|()| true)
            .map_err(|e| StoreError::Backend(format!("could not serialize a task: {e}"))),
        None => Ok(false),
    }
}

/// The task a push config belongs to (set by the server before a store sees the config).
pub(crate) fn config_task_id(config: &TaskPushNotificationConfig) -> Result<String, StoreError> {
    config
        .task_id
        .clone()
        .ok_or_else(|| StoreError::InvalidEvent("push config without taskId".into()))
}

/// One ListTasks page from what a keyset query read: at most one task more than a page, newest
/// first, each with its status timestamp (the extra one only says another page follows).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn keyset_page(
    rows: Vec<(i64, Task)>,
    page_size: usize,
    total: usize,
) -> ListTasksResponse {
    let has_more = rows.len() > page_size;
    let mut tasks = Vec::with_capacity(rows.len().min(page_size));
    let mut last_key = None;
    for (ts, task) in rows.into_iter().take(page_size) {
        last_key = Some((ts, task.id.clone()));
        tasks.push(task);
    }
    let next_page_token = match (has_more, last_key) {
        (true, Some((ts, id))) => encode_cursor(ts, &id),
        _ => String::new(),
    };
    ListTasksResponse {
        tasks,
        next_page_token,
        page_size: page_size as i32,
        total_size: total as i32,
    }
}

/// Build the opaque keyset cursor shared by the kit's stores: (status timestamp, task id).
pub(crate) fn encode_cursor(ts_millis: i64, task_id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts_millis}:{task_id}"))
}

/// Parse a cursor made by [`encode_cursor`].
pub(crate) fn decode_cursor(token: &str) -> Result<(i64, String), StoreError> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| StoreError::InvalidPageToken)?;
    let s = String::from_utf8(raw).map_err(|_| StoreError::InvalidPageToken)?;
    let (ts, id) = s.split_once(':').ok_or(StoreError::InvalidPageToken)?;
    let ts = ts.parse().map_err(|_| StoreError::InvalidPageToken)?;
    Ok((ts, id.to_string()))
}

/// A new task as its first `events` leave it, checked as
/// [`create_task_with_events`](TaskManager::create_task_with_events) must: a state a task may
/// start in, then each event as [`apply_event`] allows it.
pub(crate) fn task_after(task: &Task, events: &[StreamResponse]) -> Result<Task, StoreError> {
    crate::task::TaskStateMachine::check_initial(task.status.state)?;
    let mut last = task.clone();
    for event in events {
        apply_event(&mut last, event)?;
    }
    Ok(last)
}

/// Apply a status or artifact event to a task in place: the shared semantics of every store.
///
/// Every check runs before the first change, so on `Err` the task is untouched and stores may
/// apply events to their stored task directly.
pub fn apply_event(task: &mut Task, event: &StreamResponse) -> Result<(), StoreError> {
    match event {
        StreamResponse::StatusUpdate(u) => {
            check_status_update(task, u)?;
            if let Some(m) = &u.status.message {
                task.history.push(m.clone());
            }
            task.status = u.status.clone();
            merge_metadata(&mut task.metadata, u.metadata.as_ref());
            Ok(())
        }
        StreamResponse::ArtifactUpdate(u) => {
            check_artifact_update(task, u)?;
            let incoming = &u.artifact;
            let existing = task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == incoming.artifact_id);
            match (existing, u.append) {
                (Some(a), true) => {
                    a.parts.extend(
                        incoming
                            .parts
                            .iter()
                            .filter(|p| !is_closing_part(p))
                            .cloned(),
                    );
                    if incoming.metadata.is_some() {
                        a.metadata.clone_from(&incoming.metadata);
                    }
                }
                (Some(a), false) => *a = incoming.clone(),
                (None, _) => {
                    let mut a = incoming.clone();
                    a.parts.retain(|p| !is_closing_part(p));
                    task.artifacts.push(a);
                }
            }
            Ok(())
        }
        StreamResponse::Task(_) | StreamResponse::Message(_) => Err(not_appendable()),
    }
}

/// A status update's metadata, merged into its task's (key by key, the update's value
/// winning): how a skill records facts on its task as it runs (token usage, the remote tasks
/// it delegated to). Every store applies it the same way.
pub(crate) fn merge_metadata(
    task: &mut Option<crate::protocol::Metadata>,
    update: Option<&crate::protocol::Metadata>,
) {
    let Some(update) = update.filter(|u| !u.is_empty()) else {
        return;
    };
    let task = task.get_or_insert_with(Default::default);
    for (k, v) in update {
        task.insert(k.clone(), v.clone());
    }
}

/// An event names the task it is applied to.
fn same_task(kind: &str, event_task_id: &str, task: &Task) -> Result<(), StoreError> {
    if event_task_id == task.id {
        return Ok(());
    }
    Err(StoreError::InvalidEvent(format!(
        "{kind} update for task {event_task_id} applied to task {}",
        task.id
    )))
}

/// The checks [`apply_event`] makes before a status update changes anything.
pub(crate) fn check_status_update(
    task: &Task,
    u: &crate::protocol::TaskStatusUpdateEvent,
) -> Result<(), StoreError> {
    same_task("status", &u.task_id, task)?;
    crate::task::TaskStateMachine::check(task.status.state, u.status.state)?;
    Ok(())
}

/// The checks [`apply_event`] makes before an artifact update changes anything.
pub(crate) fn check_artifact_update(
    task: &Task,
    u: &crate::protocol::TaskArtifactUpdateEvent,
) -> Result<(), StoreError> {
    same_task("artifact", &u.task_id, task)?;
    check_takes_artifacts(&task.id, task.status.state)
}

/// A task in `state` takes artifacts unless it has ended.
pub(crate) fn check_takes_artifacts(task_id: &str, state: TaskState) -> Result<(), StoreError> {
    if state.is_terminal() {
        return Err(StoreError::InvalidEvent(format!(
            "task {task_id} is {} and cannot take more artifacts",
            state.as_str()
        )));
    }
    Ok(())
}

/// The refusal of an event that is neither a status nor an artifact update.
pub(crate) fn not_appendable() -> StoreError {
    StoreError::InvalidEvent("only status and artifact updates can be appended to a task".into())
}

/// The empty text part that closes a streamed artifact (see `ArtifactWriter::finish`); stores
/// drop it from the assembled artifact since it carries no content.
pub(crate) fn is_closing_part(p: &crate::protocol::Part) -> bool {
    matches!(&p.content, crate::protocol::PartContent::Text(t) if t.is_empty())
        && p.metadata.is_none()
        && p.filename.is_none()
}
