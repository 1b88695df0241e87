//! Task storage: the [`TaskManager`] trait and its default, [`InMemoryTaskManager`].
//!
//! A task manager owns tasks, their history and artifacts and one ordered **event log per
//! task**. Every change to a task goes through [`TaskManager::append_event`], which checks the
//! transition with [`TaskStateMachine`](crate::task::TaskStateMachine), applies it to the stored
//! task ([`apply_event`]) and appends the event to the log under one sequence number,
//! atomically. Streams, `SubscribeToTask` and `Last-Event-ID` replay read that log, so every
//! reader sees the same events in the same order. Once a task has finished and no reader needs
//! its log, the runtime says so ([`TaskManager::release_log`]) and a store may drop it; a later
//! read of it gets the final `Task` snapshot instead ([`TaskManager::events_after`]).
//!
//! The core trait is small (eight required methods); what not every store can do is a
//! **capability** of its own trait, which a store opts into by returning itself from an
//! accessor of the core:
//!
//! | capability | accessor | without it |
//! |---|---|---|
//! | [`PushConfigStore`]: push notification configs | [`TaskManager::push_configs`] | the agent does not support push notifications |
//! | [`PushOutbox`]: delivery progress that outlives the process | [`TaskManager::push_outbox`] | the push dispatcher tracks deliveries in memory |
//! | [`ClusterStore`]: several processes share the store | [`TaskManager::cluster`] | the runtime assumes one process |
//!
//! The traits are object-safe (`Arc<dyn TaskManager>`) through `async_trait`: the kit picks the
//! store at run time (`--store sqlite:PATH`), and one boxed future per store call is noise next
//! to the HTTP work around it.

mod apply;
mod cluster;
mod memory;
mod metered;
mod page;
mod push;
mod remote;
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

pub use apply::apply_event;
pub(crate) use apply::{
    check_artifact_update, check_status_update, check_takes_artifacts, is_closing_part,
    merge_metadata, not_appendable, task_after,
};
pub use cluster::{ClusterStore, ReplyRoute, StoreChange};
pub use memory::{DEFAULT_HOT_FINISHED, InMemoryConfig, InMemoryTaskManager};
pub(crate) use metered::Metered;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use page::keyset_page;
pub(crate) use page::{decode_cursor, encode_cursor};
pub(crate) use push::config_task_id;
pub use push::{PushConfigStore, PushLane, PushOutbox};
pub use remote::{RemoteTaskRecord, RemoteTaskStore, Revised, TimedOut, TokenHash};

use crate::error::A2aError;
use crate::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};
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
    /// A new push config would take its task over the limit it was put with (the limit,
    /// [`PushConfigStore::put`]); nothing was stored.
    #[error("the task has {0} push notification configs, the most it may have")]
    PushConfigLimit(usize),
    /// The backend failed (I/O, database).
    #[error("storage backend error: {0}")]
    Backend(String),
    /// The backend cannot be reached right now (a database server that went away); the
    /// same call may succeed later.
    #[error("the task store is unreachable: {0}")]
    Unavailable(String),
}

/// Words of the [`StoreError::Backend`] message of a SQLite file another process holds.
pub(crate) const SQLITE_IN_USE: &str = "is in use by another process";
/// Words of the [`StoreError::Backend`] message of a PostgreSQL database that does not exist.
pub(crate) const POSTGRES_NO_DATABASE: &str = "there is no database";

impl StoreError {
    /// Opening a SQLite store failed because another process has the file open (one file
    /// serves one process).
    pub fn is_sqlite_in_use(&self) -> bool {
        matches!(self, StoreError::Backend(m) if m.contains(SQLITE_IN_USE))
    }

    /// Connecting to PostgreSQL failed because the URL names a database the server does not
    /// have (it must be created first: the store creates its schema, not the database).
    pub fn is_missing_database(&self) -> bool {
        matches!(self, StoreError::Backend(m) if m.contains(POSTGRES_NO_DATABASE))
    }
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
            // The request's own doing (the server names the field when it knows it).
            StoreError::PushConfigLimit(_) => A2aError::invalid_params(e.to_string()),
            other => A2aError::Internal(other.to_string()),
        }
    }
}

/// Storage for tasks and their event logs: the core every store implements.
///
/// Implementations must make [`append_event`](Self::append_event) atomic: the transition check,
/// the change to the task and the log entry happen together or not at all. The crate
/// `a2a-kit-conformance` checks a store against the semantics the runtime relies on; every
/// store of the kit passes it.
///
/// # Required methods
///
/// Eight, all a working store needs: [`create_task`](Self::create_task),
/// [`append_event`](Self::append_event), [`add_message`](Self::add_message),
/// [`get_task`](Self::get_task), [`events_after`](Self::events_after),
/// [`list_tasks`](Self::list_tasks), [`purge_terminal_before`](Self::purge_terminal_before) and
/// [`task_ids_in_states`](Self::task_ids_in_states).
///
/// # Optional speed-ups
///
/// Each has a default built on the required methods that gives the same answers; a store
/// overrides one to do the same work in fewer steps:
/// [`create_task_with_events`](Self::create_task_with_events) (a task and its first events in
/// one write), [`create_task_with_released_log`](Self::create_task_with_released_log) (the same,
/// for a task nobody will read event by event), [`write_task_json`](Self::write_task_json)
/// (GetTask's bytes without a typed copy) and [`release_log`](Self::release_log) (drop a
/// finished task's log). [`is_durable`](Self::is_durable) says whether tasks outlive the
/// process (default: no).
///
/// # Capabilities
///
/// What not every store can do is a trait of its own, reached through an accessor that
/// returns `None` by default: [`push_configs`](Self::push_configs) ([`PushConfigStore`]),
/// [`push_outbox`](Self::push_outbox) ([`PushOutbox`]) and [`cluster`](Self::cluster)
/// ([`ClusterStore`]). The runtime and the server check for each and do without it.
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
    // ----- Required: tasks and their event logs -----

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

    /// Append a message to a task's history without logging an event (a client follow-up).
    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError>;

    /// Read a task.
    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError>;

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

    /// One page of the query's owner's tasks, newest status timestamp first.
    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError>;

    /// Delete terminal tasks whose last status change is older than `before`, with their logs
    /// (and whatever a capability keeps for them: push configs, lanes); returns how many.
    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError>;

    /// Ids of tasks in any of `states` (used at start-up to end tasks a crash left running).
    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError>;

    // ----- Optional speed-ups: sound defaults over the required methods -----

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

    // ----- What the store is -----

    /// Whether the tasks outlive the process (a file or a server, not memory). A graceful
    /// shutdown then leaves tasks waiting for input as they are, for the next process to
    /// continue; with a store in memory they end FAILED, since they would be lost anyway.
    fn is_durable(&self) -> bool {
        false
    }

    // ----- Capabilities: `None` unless the store has them -----

    /// The [`PushConfigStore`] capability: the store keeps push notification configs.
    /// `None` (the default): the agent does not support push notifications (its card says so
    /// and the push-config operations answer PushNotificationNotSupportedError); asking for
    /// them anyway (`AgentServiceBuilder::push_notifications(true)`, push delivery) is an error
    /// from `AgentServiceBuilder::build`. A store that has it returns `Some(self)`.
    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        None
    }

    /// The [`PushOutbox`] capability: delivery progress kept in the store, so deliveries
    /// survive a restart and replicas share them. `None` (the default): the push dispatcher
    /// tracks deliveries in memory. A store that has it has [push configs](Self::push_configs)
    /// too.
    fn push_outbox(&self) -> Option<&dyn PushOutbox> {
        None
    }

    /// The [`ClusterStore`] capability: other processes write the same tasks (replicas on one
    /// database), and the store coordinates them. `None` (the default): this process is the
    /// only one, so start-up recovery ends the tasks a crash left running, and replies are
    /// continued where they arrive.
    fn cluster(&self) -> Option<&dyn ClusterStore> {
        None
    }

    /// The [`RemoteTaskStore`] capability: the calling side's tasks on other agents and the
    /// webhook tokens issued for them, kept beside this store's own tasks. `None` (the
    /// default): a caller using this store keeps them in memory only.
    fn remote_tasks(&self) -> Option<&dyn RemoteTaskStore> {
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
