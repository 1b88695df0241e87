//! The app's view of remote tasks, kept by notifications, streams and polls in a store; the
//! deadline after which a task is polled and then surfaced as timed out; and the inbox a
//! delegation waits on.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use a2a_kit::client::{A2aClient, ClientError};
use a2a_kit::protocol::{
    Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
};
use a2a_kit::store::{
    InMemoryTaskManager, RemoteTaskRecord, RemoteTaskStore, StoreError, TaskManager, TimedOut,
};
use futures::future::BoxFuture;
use tokio::sync::Notify;

use super::tokens::{capable, now_ms};
use super::*;

/// What [`RemoteTasks::apply`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The local task changed.
    Changed,
    /// Nothing changed (a repeated or stale update; terminal tasks never change).
    Unchanged,
}

impl From<bool> for Applied {
    /// `true`: changed.
    fn from(changed: bool) -> Self {
        if changed {
            Applied::Changed
        } else {
            Applied::Unchanged
        }
    }
}

/// Why a poll or a cancel of a remote task failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteTaskError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The remote agent could not be asked, or answered with an error.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// No remote task of that id is tracked.
    #[error("no remote task {0} is tracked")]
    UnknownTask(String),
}

/// How a task whose webhook did not come by its deadline is polled (GetTask): at the
/// deadline, then after `first`, twice as long each time up to `max_interval`, `attempts`
/// polls in all; when none finds it settled (terminal, or waiting for input), the task is
/// surfaced as timed out ([`RemoteTaskRecord::timed_out`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollPolicy {
    /// Polls after the deadline before giving up (at least 1).
    pub attempts: u32,
    /// The wait after the first poll.
    pub first: Duration,
    /// The longest wait between polls.
    pub max_interval: Duration,
}

impl Default for PollPolicy {
    /// Five polls: at the deadline and 2, 6, 14 and 30 seconds after it.
    fn default() -> Self {
        PollPolicy {
            attempts: 5,
            first: Duration::from_secs(2),
            max_interval: Duration::from_secs(30),
        }
    }
}

impl PollPolicy {
    fn wait_after(&self, polls: u32) -> Duration {
        let factor = 1u32
            .checked_shl(polls.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.first.saturating_mul(factor).min(self.max_interval)
    }
}

/// The app's local view of tasks it started on remote agents, kept up to date by webhooks
/// ([`WebhookReceiver::store`]), stream events or polls, and kept in a store: in memory by
/// default, or [`open`](Self::open) on a SQLite file or PostgreSQL to survive a restart
/// (with [`PushTokens::open`] on the same store, the pending webhooks' tokens survive too).
///
/// Every update is applied once and in order whatever order it arrives in: a Task snapshot
/// or a status older than the local status (by its timestamp) is ignored, an update seen
/// already changes nothing, artifacts are only added or replaced, never lost to an older
/// snapshot, and a task terminal locally changes only to a fuller snapshot of that same final
/// status or by a whole artifact it lacks. (Appended artifact chunks, sent only with a sender's per-event
/// option, carry no order: they are appended as they come, and the final Task snapshot,
/// a2a-kit's default final notification, or a poll settles the artifacts.) Updates are
/// read-modify-write with a revision check in the store, so two webhooks, or two replicas
/// sharing a database, never lose each other's change.
///
/// A task [tracked](Self::track) with a deadline is polled when no webhook settled it by
/// then ([`watch`](Self::watch), [`PollPolicy`]) and, if the agent still says nothing
/// conclusive, surfaced as timed out with a reason; [`retry`](Self::retry) polls again,
/// [`cancel`](Self::cancel) cancels it on the agent.
///
/// Cheap to clone (clones share the store).
#[derive(Clone)]
pub struct RemoteTasks {
    inner: Arc<RemoteInner>,
}

pub(super) struct RemoteInner {
    store: Arc<dyn TaskManager>,
    changed: Notify,
}

impl std::fmt::Debug for RemoteTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTasks")
            .field("durable", &self.inner.store.is_durable())
            .finish()
    }
}

impl Default for RemoteTasks {
    fn default() -> Self {
        Self::new()
    }
}

/// How often a waiter looks at the store even when this process heard of no change (another
/// replica may have applied the webhook).
const RECHECK: Duration = Duration::from_secs(1);

impl RemoteTasks {
    /// An empty view in memory (lost with the process).
    pub fn new() -> Self {
        Self::on(Arc::new(InMemoryTaskManager::default()))
    }

    /// The view kept in `store` (one of the kit's stores: in memory, a SQLite file,
    /// PostgreSQL; it may be the agent's own store). Errors when the store does not keep
    /// remote tasks ([`TaskManager::remote_tasks`]).
    pub fn open(store: Arc<dyn TaskManager>) -> Result<Self, StoreError> {
        capable(&store)?;
        Ok(Self::on(store))
    }

    fn on(store: Arc<dyn TaskManager>) -> Self {
        RemoteTasks {
            inner: Arc::new(RemoteInner {
                store,
                changed: Notify::new(),
            }),
        }
    }

    fn store(&self) -> &dyn RemoteTaskStore {
        self.inner
            .store
            .remote_tasks()
            .expect("checked when the view was made")
    }

    /// Store a task as the remote agent returned it (e.g. its acknowledgement). A task already
    /// terminal locally is kept.
    pub async fn insert(&self, task: Task) -> Result<Applied, StoreError> {
        self.apply(&StreamResponse::Task(task)).await
    }

    /// Store a task the app started on the agent at `agent_url` (the URL its card was read
    /// from) and, with `deadline`, when to stop waiting for its webhook and poll instead.
    pub async fn track(
        &self,
        task: Task,
        agent_url: &str,
        deadline: Option<Duration>,
    ) -> Result<Applied, StoreError> {
        let deadline_ms = deadline.map(|d| now_ms().saturating_add(d.as_millis() as u64));
        let changed = self
            .update(&task.id.clone(), |record| {
                let mut record = match record {
                    Some(mut r) => {
                        if let Some(t) = applied(Some(&r.task), &StreamResponse::Task(task.clone()))
                        {
                            r.task = t;
                        }
                        r
                    }
                    None => RemoteTaskRecord::new(task.clone()),
                };
                record.agent_url = Some(agent_url.to_string());
                record.deadline_ms = deadline_ms;
                Some(record)
            })
            .await?;
        Ok(Applied::from(changed.is_some()))
    }

    /// The local copy of a task.
    pub async fn get(&self, task_id: &str) -> Result<Option<Task>, StoreError> {
        Ok(self.record(task_id).await?.map(|r| r.task))
    }

    /// Everything kept of a task: its copy, its agent, its deadline, whether it timed out.
    pub async fn record(&self, task_id: &str) -> Result<Option<RemoteTaskRecord>, StoreError> {
        Ok(self.store().load(task_id).await?.map(|r| r.record))
    }

    /// All tasks (unordered).
    pub async fn all(&self) -> Result<Vec<Task>, StoreError> {
        Ok(self
            .store()
            .all_remote()
            .await?
            .into_iter()
            .map(|r| r.record.task)
            .collect())
    }

    /// The tasks not settled yet (neither terminal nor waiting for input), timed out or not:
    /// what an app restarting goes on waiting for.
    pub async fn unsettled(&self) -> Result<Vec<RemoteTaskRecord>, StoreError> {
        Ok(self
            .store()
            .unsettled()
            .await?
            .into_iter()
            .map(|r| r.record)
            .collect())
    }

    /// Stop tracking the tasks that finished (terminal) more than `age` ago, with their
    /// tokens; how many. Run it now and then (at start-up, daily): without it a caller's store
    /// keeps every task it ever delegated.
    pub async fn purge_finished(&self, age: Duration) -> Result<u64, StoreError> {
        let before = now_ms().saturating_sub(age.as_millis() as u64);
        self.store().purge_finished_before(before).await
    }

    /// Stop tracking a task (its record and its webhook token go).
    pub async fn remove(&self, task_id: &str) -> Result<bool, StoreError> {
        self.store().remove(task_id).await
    }

    /// Apply an update: a Task snapshot replaces the local copy; a status update sets the
    /// status (and adds its message to the history); an artifact update adds or extends an
    /// artifact; a message joins the history. See the type's docs for the order rules.
    pub async fn apply(&self, event: &StreamResponse) -> Result<Applied, StoreError> {
        let Some(task_id) = event.task_id().filter(|t| !t.is_empty()) else {
            return Ok(Applied::Unchanged);
        };
        let changed = self
            .update(task_id, |record| {
                let next = applied(record.as_ref().map(|r| &r.task), event)?;
                let mut record = record.unwrap_or_else(|| RemoteTaskRecord::new(next.clone()));
                record.task = next;
                if record.is_settled() {
                    // Settled: nothing to poll for, and not timed out any more.
                    record.timed_out = None;
                    record.next_poll_ms = None;
                }
                Some(record)
            })
            .await?;
        Ok(Applied::from(changed.is_some()))
    }

    /// Read, change and write back one record, again if another writer got there first.
    /// `change` returns `None` for "no change". The record written, if any.
    async fn update(
        &self,
        task_id: &str,
        mut change: impl FnMut(Option<RemoteTaskRecord>) -> Option<RemoteTaskRecord>,
    ) -> Result<Option<RemoteTaskRecord>, StoreError> {
        for _ in 0..64 {
            let current = self.store().load(task_id).await?;
            let revision = current.as_ref().map(|r| r.revision);
            let before = current.map(|r| r.record);
            let Some(next) = change(before.clone()) else {
                return Ok(None);
            };
            if before.as_ref() == Some(&next) {
                return Ok(None);
            }
            if self.store().save(&next, revision).await?.is_some() {
                self.inner.changed.notify_waiters();
                return Ok(Some(next));
            }
        }
        Err(StoreError::Backend(format!(
            "remote task {task_id} kept changing under 64 attempts to update it"
        )))
    }

    /// Wait until the local copy of `task_id` satisfies `pred`, and return it.
    pub async fn wait_for(
        &self,
        task_id: &str,
        pred: impl Fn(&Task) -> bool,
    ) -> Result<Task, StoreError> {
        let record = self.wait_record(task_id, |r| pred(&r.task)).await?;
        Ok(record.task)
    }

    /// Wait until `task_id` is settled (terminal, or waiting for input) or timed out, and
    /// return its record.
    pub async fn wait_settled(&self, task_id: &str) -> Result<RemoteTaskRecord, StoreError> {
        self.wait_record(task_id, |r| r.is_settled() || r.timed_out.is_some())
            .await
    }

    async fn wait_record(
        &self,
        task_id: &str,
        pred: impl Fn(&RemoteTaskRecord) -> bool,
    ) -> Result<RemoteTaskRecord, StoreError> {
        loop {
            let notified = self.inner.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(r) = self.record(task_id).await?.filter(|r| pred(r)) {
                return Ok(r);
            }
            let _ = tokio::time::timeout(RECHECK, notified).await;
        }
    }

    /// Ask the agent for the task now (GetTask) and apply what it says. Counts as one of the
    /// deadline's polls when the task is past its deadline: the last inconclusive one marks
    /// it timed out.
    pub async fn poll(
        &self,
        task_id: &str,
        client: &A2aClient,
        policy: &PollPolicy,
    ) -> Result<RemoteTaskRecord, RemoteTaskError> {
        let answer = client.get_task(task_id).await;
        if let Ok(task) = &answer {
            self.insert(task.clone()).await?;
        }
        let now = now_ms();
        let record = self
            .update(task_id, |record| {
                let mut r = record?;
                if r.is_settled() || r.deadline_ms.is_none_or(|d| d > now) || r.timed_out.is_some()
                {
                    return None;
                }
                count_poll(&mut r, policy, now, answer.as_ref().err());
                Some(r)
            })
            .await?;
        match record {
            Some(r) => Ok(r),
            None => {
                answer?;
                self.record(task_id)
                    .await?
                    .ok_or_else(|| RemoteTaskError::UnknownTask(task_id.to_string()))
            }
        }
    }

    /// Give a timed-out task another round of polls, starting now (the [`watch`](Self::watch)
    /// loop makes them). Returns the record, or `None` when no such task is tracked.
    pub async fn retry(&self, task_id: &str) -> Result<Option<RemoteTaskRecord>, StoreError> {
        let now = now_ms();
        self.update(task_id, |record| {
            let mut r = record?;
            if r.is_settled() {
                return None;
            }
            r.timed_out = None;
            r.polls = 0;
            r.deadline_ms = Some(now);
            r.next_poll_ms = Some(now);
            Some(r)
        })
        .await?;
        self.record(task_id).await
    }

    /// Cancel the task on its agent (CancelTask) and apply the answer.
    pub async fn cancel(&self, task_id: &str, client: &A2aClient) -> Result<Task, RemoteTaskError> {
        let task = client.cancel_task(task_id).await?;
        self.insert(task.clone()).await?;
        Ok(self.get(task_id).await?.unwrap_or(task))
    }

    /// Poll, once each, the tasks whose deadline or next poll is due; `connect` makes a
    /// client for an agent URL. How many were polled, and when the next one is due (Unix
    /// milliseconds).
    async fn poll_due<F, Fut>(
        &self,
        policy: &PollPolicy,
        connect: &F,
        clients: &mut HashMap<String, A2aClient>,
    ) -> Result<(usize, Option<u64>), StoreError>
    where
        F: Fn(String) -> Fut,
        Fut: Future<Output = Result<A2aClient, ClientError>>,
    {
        let now = now_ms();
        let (mut polled, mut next) = (0, None::<u64>);
        for r in self.unsettled().await? {
            if r.timed_out.is_some() {
                continue;
            }
            let (Some(deadline), Some(url)) = (r.deadline_ms, r.agent_url.clone()) else {
                continue;
            };
            let due = r.next_poll_ms.unwrap_or(deadline).max(deadline);
            if due > now {
                next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            let client = match clients.get(&url) {
                Some(c) => Ok(c.clone()),
                None => connect(url.clone()).await,
            };
            let result = match client {
                Ok(client) => {
                    clients.insert(url.clone(), client.clone());
                    self.poll(&r.task.id, &client, policy).await
                }
                Err(e) => self.unreachable(&r.task.id, e, policy).await,
            };
            polled += 1;
            match result {
                Ok(after) => {
                    tracing::info!(target: "a2a_kit_axum::webhook", task_id = %r.task.id, state = after.task.status.state.as_str(), timed_out = after.timed_out.is_some(), "polled a remote task past its deadline");
                    if let Some(n) = after.next_poll_ms.filter(|_| after.timed_out.is_none()) {
                        next = Some(next.map_or(n, |m| m.min(n)));
                    }
                }
                Err(RemoteTaskError::Store(e)) => return Err(e),
                Err(e) => {
                    tracing::warn!(target: "a2a_kit_axum::webhook", task_id = %r.task.id, error = %e, "could not poll a remote task");
                }
            }
        }
        Ok((polled, next))
    }

    /// A poll that could not reach the agent: counted like an inconclusive one.
    async fn unreachable(
        &self,
        task_id: &str,
        error: ClientError,
        policy: &PollPolicy,
    ) -> Result<RemoteTaskRecord, RemoteTaskError> {
        let now = now_ms();
        self.update(task_id, |record| {
            let mut r = record?;
            count_poll(&mut r, policy, now, Some(&error));
            Some(r)
        })
        .await?;
        self.record(task_id)
            .await?
            .ok_or_else(|| RemoteTaskError::UnknownTask(task_id.to_string()))
    }

    /// Poll the tasks past their deadline in the background, connecting to each agent with
    /// [`A2aClient::connect`] (its URL as tracked). The loop stops when the handle is
    /// dropped.
    pub fn watch(&self, policy: PollPolicy) -> DeadlineWatch {
        self.watch_with(policy, |url| async move { A2aClient::connect(url).await })
    }

    /// [`watch`](Self::watch) with your own way to make a client for an agent URL (its
    /// credentials, its timeouts).
    pub fn watch_with<F, Fut>(&self, policy: PollPolicy, connect: F) -> DeadlineWatch
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<A2aClient, ClientError>> + Send + 'static,
    {
        let me = self.clone();
        let connect: Arc<
            dyn Fn(String) -> BoxFuture<'static, Result<A2aClient, ClientError>> + Send + Sync,
        > = Arc::new(move |url| Box::pin(connect(url)));
        let handle = tokio::spawn(async move {
            let mut clients = HashMap::new();
            loop {
                let notified = me.inner.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let wait = match me.poll_due(&policy, &|u| connect(u), &mut clients).await {
                    Ok((_, Some(next))) => {
                        Duration::from_millis(next.saturating_sub(now_ms())).min(RECHECK)
                    }
                    Ok((_, None)) => RECHECK,
                    Err(e) => {
                        tracing::warn!(target: "a2a_kit_axum::webhook", error = %e, "the remote-task store failed; polling again in a second");
                        RECHECK
                    }
                };
                let _ = tokio::time::timeout(wait, notified).await;
            }
        });
        DeadlineWatch(handle)
    }
}

/// The background loop of [`RemoteTasks::watch`]; dropping it stops the loop.
#[derive(Debug)]
pub struct DeadlineWatch(tokio::task::JoinHandle<()>);

impl Drop for DeadlineWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One more inconclusive poll of `r` at `now`: the next one scheduled, or, after the last, the
/// task timed out.
fn count_poll(
    r: &mut RemoteTaskRecord,
    policy: &PollPolicy,
    now: u64,
    error: Option<&ClientError>,
) {
    r.polls += 1;
    if r.polls >= policy.attempts.max(1) {
        r.next_poll_ms = None;
        r.timed_out = Some(TimedOut {
            at_ms: now,
            reason: timed_out_reason(r, error),
        });
    } else {
        r.next_poll_ms = Some(now.saturating_add(policy.wait_after(r.polls).as_millis() as u64));
    }
}

fn timed_out_reason(r: &RemoteTaskRecord, error: Option<&ClientError>) -> String {
    let polls = match r.polls {
        1 => "1 poll".to_string(),
        n => format!("{n} polls"),
    };
    match error {
        Some(e) => format!("no webhook by the deadline, and the last of {polls} failed: {e}"),
        None => format!(
            "no webhook by the deadline, and after {polls} the agent still says {}",
            r.task.status.state.as_str()
        ),
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

fn store_error(e: StoreError) -> ClientError {
    ClientError::Store(e.to_string())
}

#[async_trait::async_trait]
impl a2a_kit::client::PushInbox for WebhookInbox {
    async fn config(&self) -> Result<TaskPushNotificationConfig, ClientError> {
        self.tokens
            .issue_config(self.url.clone())
            .await
            .map_err(store_error)
    }

    async fn expect(&self, task: &Task, token: &str) -> Result<(), ClientError> {
        self.tokens
            .bind(&task.id, token)
            .await
            .map_err(store_error)?;
        self.tasks.insert(task.clone()).await.map_err(store_error)?;
        Ok(())
    }

    async fn changed(&self, task_id: &str, seen: &Task) -> Result<Task, ClientError> {
        self.tasks
            .wait_for(task_id, |t| {
                t.status.state != seen.status.state
                    || t.status.timestamp != seen.status.timestamp
                    || t.artifacts.len() != seen.artifacts.len()
            })
            .await
            .map_err(store_error)
    }

    async fn forget(&self, task_id: &str) {
        if let Err(e) = self.tokens.forget(task_id).await {
            tracing::warn!(target: "a2a_kit_axum::webhook", %task_id, error = %e, "could not forget a webhook token");
        }
    }
}

/// `local` after `event`, or `None` when the event changes nothing.
pub(super) fn applied(local: Option<&Task>, event: &StreamResponse) -> Option<Task> {
    let task_id = event.task_id()?;
    if let Some(local) = local.filter(|t| t.status.state.is_terminal()) {
        // Final: only what completes the same final moment changes it: a fuller snapshot of
        // the same final status, or a whole artifact it lacks (sent before the final status,
        // arrived after it).
        return match event {
            StreamResponse::Task(t) if t.status == local.status && t != local => Some(t.clone()),
            StreamResponse::ArtifactUpdate(u)
                if !u.append
                    && !local
                        .artifacts
                        .iter()
                        .any(|a| a.artifact_id == u.artifact.artifact_id) =>
            {
                let mut task = local.clone();
                task.artifacts.push(u.artifact.clone());
                Some(task)
            }
            _ => None,
        };
    }
    match event {
        StreamResponse::Task(t) => {
            let Some(local) = local else {
                return Some(t.clone());
            };
            if is_stale(&t.status, &local.status) {
                return None;
            }
            // Artifacts are only ever added or replaced: one an update brought before this
            // (older) snapshot was taken stays.
            let mut next = t.clone();
            for a in &local.artifacts {
                if !next
                    .artifacts
                    .iter()
                    .any(|b| b.artifact_id == a.artifact_id)
                {
                    next.artifacts.push(a.clone());
                }
            }
            (next != *local).then_some(next)
        }
        StreamResponse::StatusUpdate(u) => {
            let mut task = local.cloned().unwrap_or_else(|| Task {
                id: task_id.to_string(),
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
            if local.is_some() && (task.status == u.status || is_stale(&u.status, &task.status)) {
                return None;
            }
            if let Some(m) = &u.status.message {
                push_message(&mut task.history, m);
            }
            task.status = u.status.clone();
            Some(task)
        }
        StreamResponse::ArtifactUpdate(u) => {
            let Some(local) = local else {
                let mut task = Task {
                    id: task_id.to_string(),
                    context_id: u.context_id.clone(),
                    status: TaskStatus::default(),
                    artifacts: vec![u.artifact.clone()],
                    history: Vec::new(),
                    metadata: None,
                };
                task.status.state = TaskState::Working;
                return Some(task);
            };
            let mut task = local.clone();
            match task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == u.artifact.artifact_id)
            {
                Some(a) if u.append => a.parts.extend(u.artifact.parts.iter().cloned()),
                Some(a) => {
                    if *a == u.artifact {
                        return None;
                    }
                    *a = u.artifact.clone();
                }
                None => task.artifacts.push(u.artifact.clone()),
            }
            Some(task)
        }
        StreamResponse::Message(m) => {
            let local = local?;
            if local.history.iter().any(|h| h.message_id == m.message_id) {
                return None;
            }
            let mut task = local.clone();
            task.history.push(m.clone());
            Some(task)
        }
    }
}

/// Whether `incoming` is older than `local` (so an acknowledgement that arrives after a
/// notification does not roll the task back): an earlier timestamp, or the same millisecond
/// and an earlier point in the lifecycle.
pub(super) fn is_stale(incoming: &TaskStatus, local: &TaskStatus) -> bool {
    fn rank(s: TaskState) -> u8 {
        if s.is_terminal() {
            3
        } else if s.is_interrupted() {
            2
        } else if s == TaskState::Working {
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
