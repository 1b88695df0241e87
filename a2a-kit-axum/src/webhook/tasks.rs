//! The app's view of remote tasks, kept by the notifications, and the inbox a delegation
//! waits on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use a2a_kit::protocol::{Message, StreamResponse, Task, TaskPushNotificationConfig, TaskStatus};
use tokio::sync::Notify;

use super::*;

/// What [`RemoteTasks::apply`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The local task changed.
    Changed,
    /// Nothing changed (a repeated or stale update; terminal tasks never change).
    Unchanged,
}

/// The app's local view of tasks running on remote agents, kept up to date by notifications.
/// Cheap to clone (clones share the map).
#[derive(Clone, Default)]
pub struct RemoteTasks {
    inner: Arc<RemoteInner>,
}

#[derive(Default)]
pub(super) struct RemoteInner {
    pub(super) tasks: Mutex<HashMap<String, Task>>,
    pub(super) changed: Notify,
}

impl std::fmt::Debug for RemoteTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTasks")
            .field("tasks", &lock(&self.inner.tasks).len())
            .finish()
    }
}

impl RemoteTasks {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store a task as the remote agent returned it (e.g. its acknowledgement). A task already
    /// terminal locally is kept.
    pub fn insert(&self, task: Task) -> Applied {
        self.apply(&StreamResponse::Task(task))
    }

    /// The local copy of a task.
    pub fn get(&self, task_id: &str) -> Option<Task> {
        lock(&self.inner.tasks).get(task_id).cloned()
    }

    /// All tasks (unordered).
    pub fn all(&self) -> Vec<Task> {
        lock(&self.inner.tasks).values().cloned().collect()
    }

    /// Apply an update: a Task snapshot replaces the local copy; a status update sets the
    /// status (and adds its message to the history); an artifact update adds or extends an
    /// artifact. A task already terminal locally never changes, and a snapshot or status
    /// older than the local status (by its timestamp) is ignored, so an acknowledgement that
    /// arrives after a notification does not roll the task back.
    pub fn apply(&self, event: &StreamResponse) -> Applied {
        let applied = {
            let mut tasks = lock(&self.inner.tasks);
            apply_to(&mut tasks, event)
        };
        if applied == Applied::Changed {
            self.inner.changed.notify_waiters();
        }
        applied
    }

    /// Wait until the local copy of `task_id` satisfies `pred`, and return it.
    pub async fn wait_for(&self, task_id: &str, pred: impl Fn(&Task) -> bool) -> Task {
        loop {
            let notified = self.inner.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(t) = self.get(task_id).filter(|t| pred(t)) {
                return t;
            }
            notified.await;
        }
    }
}

/// A webhook this app serves, as the place a delegation sent without waiting hears of its
/// remote task ([`a2a_kit::client::PushInbox`], set with
/// [`DelegateOptions::push`](a2a_kit::client::DelegateOptions::push)): the tokens and remote
/// tasks of a [`WebhookReceiver`] (built with [`WebhookReceiver::store`]) and the URL it is
/// served at.
///
/// ```no_run
/// use a2a_kit::client::{DelegateOptions, RemoteAgent};
/// use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookInbox, WebhookReceiver};
/// # async fn demo() -> Result<(), a2a_kit::client::ClientError> {
/// let (tokens, tasks) = (PushTokens::new(), RemoteTasks::new());
/// let receiver = WebhookReceiver::new(tokens.clone()).store(tasks.clone());
/// let app: axum::Router = receiver.router("/a2a/webhook"); // serve it at the URL below
/// let inbox = WebhookInbox::new(tokens, tasks, "https://me.example.com/a2a/webhook");
/// let worker = RemoteAgent::connect("https://worker.example.com").await?.with_options(
///     DelegateOptions { push: Some(inbox.into()), ..Default::default() },
/// );
/// # let _ = (app, worker); Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct WebhookInbox {
    tokens: PushTokens,
    tasks: RemoteTasks,
    url: String,
}

impl WebhookInbox {
    /// The inbox of a receiver holding `tokens` and storing into `tasks`, served at `url`.
    pub fn new(tokens: PushTokens, tasks: RemoteTasks, url: impl Into<String>) -> Self {
        WebhookInbox {
            tokens,
            tasks,
            url: url.into(),
        }
    }
}

#[async_trait::async_trait]
impl a2a_kit::client::PushInbox for WebhookInbox {
    fn config(&self) -> TaskPushNotificationConfig {
        self.tokens.issue_config(self.url.clone())
    }

    fn expect(&self, task: &Task, token: &str) {
        self.tokens.bind(task.id.clone(), token);
        self.tasks.insert(task.clone());
    }

    async fn changed(&self, task_id: &str, seen: &Task) -> Task {
        self.tasks
            .wait_for(task_id, |t| {
                t.status.state != seen.status.state
                    || t.status.timestamp != seen.status.timestamp
                    || t.artifacts.len() != seen.artifacts.len()
            })
            .await
    }

    fn forget(&self, task_id: &str) {
        self.tokens.forget(task_id);
    }
}

pub(super) fn apply_to(tasks: &mut HashMap<String, Task>, event: &StreamResponse) -> Applied {
    let Some(task_id) = event.task_id().map(str::to_string) else {
        return Applied::Unchanged;
    };
    if tasks
        .get(&task_id)
        .is_some_and(|t| t.status.state.is_terminal())
    {
        return Applied::Unchanged;
    }
    match event {
        StreamResponse::Task(t) => {
            if tasks
                .get(&task_id)
                .is_some_and(|local| local == t || is_stale(&t.status, &local.status))
            {
                return Applied::Unchanged;
            }
            tasks.insert(task_id, t.clone());
            Applied::Changed
        }
        StreamResponse::StatusUpdate(u) => {
            let task = tasks.entry(task_id.clone()).or_insert_with(|| Task {
                id: task_id,
                context_id: u.context_id.clone(),
                status: TaskStatus {
                    state: u.status.state,
                    message: None,
                    timestamp: None,
                },
                artifacts: Vec::new(),
                history: Vec::new(),
                metadata: None,
            });
            if task.status == u.status || is_stale(&u.status, &task.status) {
                return Applied::Unchanged;
            }
            if let Some(m) = &u.status.message {
                push_message(&mut task.history, m);
            }
            task.status = u.status.clone();
            Applied::Changed
        }
        StreamResponse::ArtifactUpdate(u) => {
            let Some(task) = tasks.get_mut(&task_id) else {
                let mut task = Task {
                    id: task_id.clone(),
                    context_id: u.context_id.clone(),
                    status: TaskStatus::default(),
                    artifacts: vec![u.artifact.clone()],
                    history: Vec::new(),
                    metadata: None,
                };
                task.status.state = a2a_kit::protocol::TaskState::Working;
                tasks.insert(task_id, task);
                return Applied::Changed;
            };
            match task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == u.artifact.artifact_id)
            {
                Some(a) if u.append => a.parts.extend(u.artifact.parts.iter().cloned()),
                Some(a) => {
                    if *a == u.artifact {
                        return Applied::Unchanged;
                    }
                    *a = u.artifact.clone();
                }
                None => task.artifacts.push(u.artifact.clone()),
            }
            Applied::Changed
        }
        StreamResponse::Message(m) => {
            let Some(task) = tasks.get_mut(&task_id) else {
                return Applied::Unchanged;
            };
            if task.history.iter().any(|h| h.message_id == m.message_id) {
                return Applied::Unchanged;
            }
            task.history.push(m.clone());
            Applied::Changed
        }
    }
}

/// Whether `incoming` is older than `local` (so an acknowledgement that arrives after a
/// notification does not roll the task back): an earlier timestamp, or the same millisecond
/// and an earlier point in the lifecycle.
pub(super) fn is_stale(incoming: &TaskStatus, local: &TaskStatus) -> bool {
    fn rank(s: a2a_kit::protocol::TaskState) -> u8 {
        if s.is_terminal() {
            3
        } else if s.is_interrupted() {
            2
        } else if s == a2a_kit::protocol::TaskState::Working {
            1
        } else {
            0
        }
    }
    match (incoming.timestamp, local.timestamp) {
        (Some(i), Some(l)) => i < l || (i == l && rank(incoming.state) < rank(local.state)),
        _ => false,
    }
}

pub(super) fn push_message(history: &mut Vec<Message>, m: &Message) {
    if m.message_id.is_empty() || !history.iter().any(|h| h.message_id == m.message_id) {
        history.push(m.clone());
    }
}
