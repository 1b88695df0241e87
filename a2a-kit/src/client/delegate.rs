//! Delegation: a skill hands (part of) its work to another agent with one call, and the
//! remote task's progress and artifacts become its own.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;

use super::stream::status_text;
use super::{A2aClient, ClientError, SendRequest, TaskAccumulator};
use crate::error::SkillError;
use crate::protocol::{
    Message, Part, Role, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
    TaskState,
};
use crate::skill::TaskContext;
use crate::skill::{IntoOutcome, Outcome};

/// The task metadata key listing the remote tasks a task handed work to:
/// `[{"agent", "url", "taskId", "contextId", "state"}]`, one entry per remote task, its state
/// updated when the delegation returns. An operator follows the chain with it; later
/// delegations of the same context continue the recorded remote context.
pub const DELEGATIONS_KEY: &str = "a2a-kit/delegations";

/// Record (or update) `remote` in this task's [`DELEGATIONS_KEY`].
async fn record_delegation(
    ctx: &TaskContext,
    (agent, url): &(String, String),
    remote: &Task,
) -> Result<(), SkillError> {
    let mut list = ctx
        .task_metadata()
        .await
        .get(DELEGATIONS_KEY)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let entry = serde_json::json!({
        "agent": agent,
        "url": url,
        "taskId": remote.id,
        "contextId": remote.context_id,
        "state": remote.status.state.as_str(),
    });
    match list
        .iter_mut()
        .find(|d| d.get("taskId").and_then(|t| t.as_str()) == Some(remote.id.as_str()))
    {
        Some(existing) if *existing == entry => return Ok(()),
        Some(existing) => *existing = entry,
        None => list.push(entry),
    }
    let mut metadata = crate::protocol::Metadata::new();
    metadata.insert(DELEGATIONS_KEY.into(), serde_json::Value::Array(list));
    ctx.record(metadata).await
}

/// How [`RemoteAgent::delegate`] behaves.
#[derive(Debug, Clone)]
pub struct DelegateOptions {
    /// Forward the remote WORKING status texts as this task's progress (default true).
    pub forward_status: bool,
    /// Put this before each forwarded status text (e.g. `"worker: "`).
    pub status_prefix: String,
    /// When the remote task needs input, ask this task's user (the task goes INPUT_REQUIRED)
    /// and send the reply on (default true). When false, delegation returns with the remote
    /// task INPUT_REQUIRED.
    pub relay_input_required: bool,
    /// Poll interval for agents that cannot stream (default 500 ms).
    pub poll_interval: Duration,
    /// How long to wait for the remote CancelTask when this task is canceled (default 10 s).
    pub cancel_timeout: Duration,
    /// Forward the remote artifact events into this task (default true). Off for a remote
    /// agent used as a model's tool: its artifacts are the tool's answer, not this task's.
    pub forward_artifacts: bool,
    /// Send without waiting and hear of the remote task through this webhook (a push config
    /// sent with the message) instead of a stream (default: none, stream or poll).
    pub push: Option<Inbox>,
    /// With [`push`](Self::push): how long to wait for a notification before asking the
    /// remote agent (GetTask) anyway (default 30 s), so a webhook that never comes (a
    /// firewall, a lost delivery) slows the delegation down, never stops it.
    pub push_fallback: Duration,
}

/// A webhook this process serves, where a delegation sent without waiting hears of its
/// remote task ([`DelegateOptions::push`]). `a2a_kit_axum::webhook::WebhookInbox` is one.
#[async_trait::async_trait]
pub trait PushInbox: Send + Sync + 'static {
    /// The push config to send with a new remote task: the webhook's URL and a fresh token.
    async fn config(&self) -> Result<TaskPushNotificationConfig, ClientError>;
    /// The remote agent acknowledged `task`, whose config carried `token`: its
    /// notifications are expected from now on.
    async fn expect(&self, task: &Task, token: &str) -> Result<(), ClientError>;
    /// The task as its notifications left it, once that differs from `seen` (another
    /// state, status time or number of artifacts).
    async fn changed(&self, task_id: &str, seen: &Task) -> Result<Task, ClientError>;
    /// The delegation is over: notifications of `task_id` are no longer expected.
    async fn forget(&self, task_id: &str);
}

/// A [`PushInbox`] in [`DelegateOptions`].
#[derive(Clone)]
pub struct Inbox(pub std::sync::Arc<dyn PushInbox>);

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inbox")
    }
}

impl<T: PushInbox> From<T> for Inbox {
    fn from(inbox: T) -> Self {
        Inbox(std::sync::Arc::new(inbox))
    }
}

impl Default for DelegateOptions {
    fn default() -> Self {
        DelegateOptions {
            forward_status: true,
            status_prefix: String::new(),
            relay_input_required: true,
            poll_interval: Duration::from_millis(500),
            cancel_timeout: Duration::from_secs(10),
            forward_artifacts: true,
            push: None,
            push_fallback: Duration::from_secs(30),
        }
    }
}

/// Another agent that skills can hand work to.
///
/// ```no_run
/// use a2a_kit::client::RemoteAgent;
/// use a2a_kit::prelude::*;
///
/// #[derive(Clone)]
/// struct Planner { worker: RemoteAgent }
///
/// /// Plans, and lets a worker do the work.
/// #[a2a_agent]
/// impl Planner {
///     /// Plan, letting the worker do the work.
///     #[skill]
///     async fn plan(&self, ctx: TaskContext, Text(goal): Text) -> Result<Outcome, SkillError> {
///         ctx.status(format!("Planning {goal}")).await?;
///         // The worker's progress and artifacts show up in this task as they happen;
///         // canceling this task cancels the worker's.
///         let result = self.worker.delegate(&ctx, goal).await?;
///         Ok(result.into_outcome())
///     }
/// }
///
/// # async fn demo() -> Result<(), a2a_kit::client::ClientError> {
/// let worker = RemoteAgent::connect("http://127.0.0.1:3001").await?;
/// let planner = Planner { worker };
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RemoteAgent {
    client: A2aClient,
    options: DelegateOptions,
}

/// What a delegation ended with.
#[derive(Debug, Clone, PartialEq)]
pub struct DelegationResult {
    /// The remote task as assembled from its events (artifacts put together), if the agent
    /// created one.
    pub task: Option<Task>,
    /// The remote agent's direct reply, if it answered with a message instead.
    pub message: Option<Message>,
    /// How many artifact events were forwarded into this task.
    pub artifacts_forwarded: usize,
    /// Whether this task was canceled during the delegation (the remote task was canceled too).
    pub canceled: bool,
}

impl DelegationResult {
    /// The remote task's final state (`None` for a direct message).
    pub fn state(&self) -> Option<TaskState> {
        self.task.as_ref().map(|t| t.status.state)
    }

    /// The text of the result: the direct message, or every text part of the remote
    /// artifacts, in order.
    pub fn text(&self) -> String {
        if let Some(m) = &self.message {
            return m.text();
        }
        self.task
            .iter()
            .flat_map(|t| t.artifacts.iter())
            .flat_map(|a| a.parts.iter())
            .filter_map(Part::as_text)
            .collect()
    }

    /// The outcome that mirrors the remote one: COMPLETED (the artifacts are already in this
    /// task; a remote direct reply becomes the artifact), FAILED / REJECTED with the remote
    /// reason, INPUT_REQUIRED / AUTH_REQUIRED with the remote question, CANCELED when this
    /// task was canceled. (The same as its `IntoOutcome` impl, without importing the trait.)
    pub fn into_outcome(self) -> Outcome {
        if self.canceled {
            return SkillError::Canceled.into();
        }
        if let Some(m) = self.message {
            return Outcome::completed(m.parts);
        }
        let reason = self.status_string();
        match self.state() {
            Some(TaskState::Completed) if self.artifacts_forwarded == 0 => {
                match self.status_parts() {
                    Some(parts) => Outcome::completed(parts),
                    None => Outcome::done(),
                }
            }
            Some(TaskState::Completed) => match reason {
                Some(text) => Outcome::done().with_status_text(text),
                None => Outcome::done(),
            },
            Some(TaskState::Failed) => {
                Outcome::failed(reason.unwrap_or_else(|| "the remote agent failed".into()))
            }
            Some(TaskState::Rejected) => Outcome::rejected(
                reason.unwrap_or_else(|| "the remote agent rejected the task".into()),
            ),
            Some(TaskState::Canceled) => Outcome::failed("the remote agent's task was canceled"),
            Some(TaskState::InputRequired) => Outcome::input_required(
                self.status_parts()
                    .unwrap_or_else(|| vec![Part::text("More input is needed.")]),
            ),
            Some(TaskState::AuthRequired) => Outcome::auth_required(
                self.status_parts()
                    .unwrap_or_else(|| vec![Part::text("Authorization is needed.")]),
            ),
            other => Outcome::failed(format!(
                "the remote task ended in state {}",
                other.map_or("(none)", TaskState::as_str)
            )),
        }
    }

    fn status_parts(&self) -> Option<Vec<Part>> {
        self.task
            .as_ref()?
            .status
            .message
            .as_ref()
            .map(|m| m.parts.clone())
            .filter(|p| !p.is_empty())
    }

    fn status_string(&self) -> Option<String> {
        self.task
            .as_ref()?
            .status
            .message
            .as_ref()
            .and_then(status_text)
    }
}

impl IntoOutcome for DelegationResult {
    fn into_outcome(self) -> Outcome {
        DelegationResult::into_outcome(self)
    }
}

/// How one exchange with the remote agent ended.
enum Leg {
    Finished,
    Canceled,
}

struct Forwarder<'a> {
    ctx: &'a TaskContext,
    /// The remote agent's name and card URL, as recorded on this task.
    agent: (String, String),
    /// The remote task already recorded on this task.
    recorded: Option<String>,
    options: &'a DelegateOptions,
    /// Remote artifact id → this task's artifact id.
    ids: HashMap<String, String>,
    forwarded: usize,
    acc: TaskAccumulator,
    last_status: Option<String>,
}

impl Forwarder<'_> {
    /// Forward one event; `Err` means this task ended (it was canceled).
    async fn forward(&mut self, ev: &StreamResponse) -> Result<(), SkillError> {
        self.acc.apply(ev);
        if let Some(task) = self
            .acc
            .task()
            .filter(|t| self.recorded.as_deref() != Some(&t.id))
        {
            // Where the work went, on this task, as soon as it is known.
            self.recorded = Some(task.id.clone());
            let task = task.clone();
            record_delegation(self.ctx, &self.agent, &task).await?;
        }
        match ev {
            StreamResponse::StatusUpdate(u) => {
                self.status(u.status.state, u.status.message.as_ref())
                    .await?
            }
            StreamResponse::Task(t) => {
                self.status(t.status.state, t.status.message.as_ref())
                    .await?;
                // A snapshot (e.g. after a resumed stream) may hold artifacts not seen as chunks.
                for a in &t.artifacts {
                    if !self.ids.contains_key(&a.artifact_id) {
                        self.artifact(a.clone(), false, true).await?;
                    }
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.artifact(u.artifact.clone(), u.append, u.last_chunk)
                    .await?
            }
            StreamResponse::Message(_) => {}
        }
        Ok(())
    }

    async fn status(
        &mut self,
        state: TaskState,
        message: Option<&Message>,
    ) -> Result<(), SkillError> {
        if !self.options.forward_status || state != TaskState::Working {
            return Ok(());
        }
        let Some(text) = message.and_then(status_text) else {
            return Ok(());
        };
        if self.last_status.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        self.last_status = Some(text.clone());
        self.ctx
            .status(format!("{}{text}", self.options.status_prefix))
            .await
    }

    async fn artifact(
        &mut self,
        mut artifact: crate::protocol::Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), SkillError> {
        if !self.options.forward_artifacts {
            return Ok(());
        }
        let local = self
            .ids
            .entry(artifact.artifact_id.clone())
            .or_insert_with(crate::protocol::new_uuid);
        artifact.artifact_id = local.clone();
        self.forwarded += 1;
        self.ctx.emit_artifact(artifact, append, last_chunk).await
    }
}

impl RemoteAgent {
    /// Connect to the agent at `url` with default client settings.
    pub async fn connect(url: impl AsRef<str>) -> Result<Self, ClientError> {
        Ok(Self::new(A2aClient::connect(url).await?))
    }

    /// Delegate through this client.
    pub fn new(client: A2aClient) -> Self {
        RemoteAgent {
            client,
            options: DelegateOptions::default(),
        }
    }

    /// Change the options.
    #[must_use]
    pub fn with_options(mut self, options: DelegateOptions) -> Self {
        self.options = options;
        self
    }

    /// The options.
    pub fn options(&self) -> &DelegateOptions {
        &self.options
    }

    /// The client underneath.
    pub fn client(&self) -> &A2aClient {
        &self.client
    }

    /// Run `request` on the remote agent as part of `ctx`'s task.
    ///
    /// While the remote task runs, its WORKING status texts become `ctx.status` updates and
    /// its artifact events become this task's artifact events, chunk for chunk (`append` and
    /// `lastChunk` kept, artifact ids mapped to fresh ones). If the remote task needs input,
    /// this task asks its own user and relays the reply (see
    /// [`DelegateOptions::relay_input_required`]). If this task is canceled, the remote task
    /// is canceled and the result has `canceled` set. Agents that cannot stream are polled.
    ///
    /// Returns the remote result; return it from the skill (it implements `IntoOutcome`) or
    /// inspect it first.
    pub async fn delegate(
        &self,
        ctx: &TaskContext,
        request: impl Into<SendRequest>,
    ) -> Result<DelegationResult, ClientError> {
        let mut fwd = Forwarder {
            ctx,
            agent: (self.client.card().name.clone(), self.agent_url()),
            recorded: None,
            options: &self.options,
            ids: HashMap::new(),
            forwarded: 0,
            acc: TaskAccumulator::default(),
            last_status: None,
        };
        let mut request: SendRequest = request.into();
        let message = &mut request.request.message;
        if message.task_id.is_none() && message.context_id.is_none() {
            // One conversation here, one context there: later delegations of this context
            // continue the remote context the first one started.
            message.context_id = self.remote_context(ctx).await;
        }
        let result = self.delegate_legs(ctx, &mut fwd, request).await;
        let settled = match &result {
            Ok(r) => r.task.as_ref(),
            Err(_) => fwd.acc.task(),
        };
        if let Some(task) = settled {
            // The remote task's final state, for whoever follows the chain.
            let _ = record_delegation(ctx, &fwd.agent, task).await;
        }
        result
    }

    /// The card URL that names this agent in the delegations recorded on tasks.
    fn agent_url(&self) -> String {
        self.client.card_url().to_string()
    }

    /// The remote context this task's context talks to this agent in, if an earlier
    /// delegation (of this task or another of its context) recorded one.
    pub async fn remote_context(&self, ctx: &TaskContext) -> Option<String> {
        let url = self.agent_url();
        ctx.context_tasks()
            .await
            .iter()
            .rev()
            .filter_map(|t| {
                t.metadata
                    .as_ref()?
                    .get(DELEGATIONS_KEY)?
                    .as_array()
                    .cloned()
            })
            .flat_map(|list| list.into_iter().rev())
            .find(|d| d.get("url").and_then(|u| u.as_str()) == Some(url.as_str()))
            .and_then(|d| d.get("contextId")?.as_str().map(str::to_string))
    }

    async fn delegate_legs(
        &self,
        ctx: &TaskContext,
        fwd: &mut Forwarder<'_>,
        mut request: SendRequest,
    ) -> Result<DelegationResult, ClientError> {
        loop {
            let leg = if let Some(Inbox(inbox)) = &self.options.push {
                self.push_leg(fwd, request, inbox.as_ref()).await?
            } else if self.client.card().capabilities.streaming.unwrap_or(false) {
                self.stream_leg(fwd, request).await?
            } else {
                self.poll_leg(fwd, request).await?
            };
            let remote = fwd.acc.task().cloned();
            if let Leg::Canceled = leg {
                if let Some(t) = remote.as_ref().filter(|t| !t.status.state.is_terminal()) {
                    let _ = tokio::time::timeout(
                        self.options.cancel_timeout,
                        self.client.cancel_task(&t.id),
                    )
                    .await;
                }
                return Ok(self.result(fwd, true));
            }
            let Some(task) = remote else { break };
            if task.status.state != TaskState::InputRequired || !self.options.relay_input_required {
                break;
            }
            let question = task
                .status
                .message
                .as_ref()
                .map(|m| m.parts.clone())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| vec![Part::text("The remote agent needs more input.")]);
            let reply: Message = match ctx.ask::<Message>(question).await {
                Ok(m) => m,
                Err(_) => {
                    let _ = tokio::time::timeout(
                        self.options.cancel_timeout,
                        self.client.cancel_task(&task.id),
                    )
                    .await;
                    return Ok(self.result(fwd, true));
                }
            };
            let mut next = Message::new(Role::User, reply.parts);
            next.task_id = Some(task.id.clone());
            next.context_id = Some(task.context_id.clone()).filter(|c| !c.is_empty());
            request = SendRequest::new(next);
        }
        Ok(self.result(fwd, false))
    }

    fn result(&self, fwd: &mut Forwarder<'_>, canceled: bool) -> DelegationResult {
        let forwarded = fwd.forwarded;
        let (task, message) = match std::mem::take(&mut fwd.acc).into_response() {
            Some(SendMessageResponse::Task(t)) => (Some(t), None),
            Some(SendMessageResponse::Message(m)) => (None, Some(m)),
            None => (None, None),
        };
        DelegationResult {
            task,
            message,
            artifacts_forwarded: forwarded,
            canceled,
        }
    }

    async fn stream_leg(
        &self,
        fwd: &mut Forwarder<'_>,
        request: SendRequest,
    ) -> Result<Leg, ClientError> {
        let ctx = fwd.ctx;
        let opened = tokio::select! {
            s = self.client.send_streaming(request) => Some(s?),
            () = ctx.cancelled() => None,
        };
        let Some(mut stream) = opened else {
            return Ok(Leg::Canceled);
        };
        loop {
            let next = tokio::select! {
                biased;
                () = ctx.cancelled() => {
                    // Learn the remote task id if it is not known yet, so it can be canceled.
                    if fwd.acc.task().is_none()
                        && let Ok(Some(Ok(ev))) = tokio::time::timeout(Duration::from_secs(2), stream.next()).await {
                            fwd.acc.apply(&ev);
                        }
                    return Ok(Leg::Canceled);
                }
                next = stream.next() => next,
            };
            match next {
                None => break,
                Some(Err(e)) => return Err(e),
                Some(Ok(ev)) => {
                    if fwd.forward(&ev).await.is_err() {
                        return Ok(Leg::Canceled);
                    }
                }
            }
        }
        // A stream that ended early (resume gave up quietly) leaves the state open: read it.
        if let Some(t) = fwd
            .acc
            .task()
            .filter(|t| !(t.status.state.is_terminal() || t.status.state.is_interrupted()))
        {
            let t = self.client.get_task(&t.id).await?;
            if fwd.forward(&StreamResponse::Task(t)).await.is_err() {
                return Ok(Leg::Canceled);
            }
        }
        Ok(Leg::Finished)
    }

    /// Send without waiting, with a push config of `inbox`'s, and follow the task through
    /// its notifications (asking the agent when none came for a while).
    async fn push_leg(
        &self,
        fwd: &mut Forwarder<'_>,
        request: SendRequest,
        inbox: &dyn PushInbox,
    ) -> Result<Leg, ClientError> {
        let ctx = fwd.ctx;
        let config = inbox.config().await?;
        let token = config.token.clone().unwrap_or_default();
        let mut task = match self.acknowledged(fwd, request.push_config(config)).await? {
            Ok(task) => task,
            Err(leg) => return Ok(leg),
        };
        inbox.expect(&task, &token).await?;
        let leg = self.follow(fwd, &mut task, |seen| async move {
            tokio::select! {
                t = inbox.changed(&seen.id, &seen) => {
                    let t = t?;
                    if t.status.state.is_terminal() || t.status.state.is_interrupted() {
                        // A notification may carry only the status: the answer (artifacts,
                        // the question) is read from the agent once, when it settles.
                        return self.client.get_task(&seen.id).await.map(Some);
                    }
                    Ok(Some(t))
                }
                () = tokio::time::sleep(self.options.push_fallback) => {
                    tracing::info!(task_id = %seen.id, "no push notification came; asking the agent");
                    self.client.get_task(&seen.id).await.map(Some)
                }
                () = ctx.cancelled() => Ok(None),
            }
        })
        .await;
        inbox.forget(&task.id).await;
        leg
    }

    /// Send `request` without waiting: the task the agent acknowledged, or how the leg ended
    /// already (a direct reply, or this task canceled meanwhile).
    async fn acknowledged(
        &self,
        fwd: &mut Forwarder<'_>,
        request: SendRequest,
    ) -> Result<Result<Task, Leg>, ClientError> {
        let first = tokio::select! {
            r = self.client.send(request.return_immediately(true)) => r?,
            () = fwd.ctx.cancelled() => return Ok(Err(Leg::Canceled)),
        };
        Ok(match first {
            SendMessageResponse::Message(m) => {
                fwd.acc.apply(&StreamResponse::Message(m));
                Err(Leg::Finished)
            }
            SendMessageResponse::Task(t) => Ok(t),
        })
    }

    /// Forward snapshots of `task` until it settles: `next` gives the next one, or `None`
    /// when this task was canceled meanwhile. Artifacts are forwarded whole once the task
    /// settles (snapshots do not show chunks).
    async fn follow<F, Fut>(
        &self,
        fwd: &mut Forwarder<'_>,
        task: &mut Task,
        next: F,
    ) -> Result<Leg, ClientError>
    where
        F: Fn(Task) -> Fut,
        Fut: std::future::Future<Output = Result<Option<Task>, ClientError>>,
    {
        loop {
            let done = task.status.state.is_terminal() || task.status.state.is_interrupted();
            let snapshot = if done {
                task.clone()
            } else {
                Task {
                    artifacts: Vec::new(),
                    ..task.clone()
                }
            };
            if fwd.forward(&StreamResponse::Task(snapshot)).await.is_err() {
                return Ok(Leg::Canceled);
            }
            if done {
                return Ok(Leg::Finished);
            }
            match next(task.clone()).await? {
                Some(t) => *task = t,
                None => return Ok(Leg::Canceled),
            }
        }
    }

    async fn poll_leg(
        &self,
        fwd: &mut Forwarder<'_>,
        request: SendRequest,
    ) -> Result<Leg, ClientError> {
        let ctx = fwd.ctx;
        let mut task = match self.acknowledged(fwd, request).await? {
            Ok(task) => task,
            Err(leg) => return Ok(leg),
        };
        self.follow(fwd, &mut task, |seen| async move {
            tokio::select! {
                () = tokio::time::sleep(self.options.poll_interval) => {}
                () = ctx.cancelled() => return Ok(None),
            }
            self.client.get_task(&seen.id).await.map(Some)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TaskStatus;

    fn result(state: TaskState, status_text: Option<&str>, forwarded: usize) -> DelegationResult {
        let mut status = TaskStatus::new(state);
        status.message = status_text.map(Message::agent_text);
        DelegationResult {
            task: Some(Task {
                id: "r".into(),
                context_id: "c".into(),
                status,
                ..Task::default()
            }),
            message: None,
            artifacts_forwarded: forwarded,
            canceled: false,
        }
    }

    #[test]
    fn outcomes_mirror_the_remote_task() {
        assert_eq!(
            result(TaskState::Completed, None, 2).into_outcome(),
            Outcome::done()
        );
        assert_eq!(
            result(TaskState::Completed, Some("ok"), 0).into_outcome(),
            Outcome::completed("ok")
        );
        assert_eq!(
            result(TaskState::Failed, Some("boom"), 0).into_outcome(),
            Outcome::failed("boom")
        );
        assert_eq!(
            result(TaskState::Rejected, Some("no"), 0).into_outcome(),
            Outcome::rejected("no")
        );
        assert_eq!(
            result(TaskState::InputRequired, Some("who?"), 0).into_outcome(),
            Outcome::input_required("who?")
        );
        assert_eq!(
            result(TaskState::AuthRequired, None, 0)
                .into_outcome()
                .state(),
            Some(TaskState::AuthRequired)
        );
        assert_eq!(
            result(TaskState::Working, None, 0).into_outcome().state(),
            Some(TaskState::Failed)
        );
        let mut canceled = result(TaskState::Working, None, 1);
        canceled.canceled = true;
        assert_eq!(canceled.into_outcome().state(), Some(TaskState::Canceled));
        let direct = DelegationResult {
            task: None,
            message: Some(Message::agent_text("hi")),
            artifacts_forwarded: 0,
            canceled: false,
        };
        assert_eq!(direct.text(), "hi");
        assert_eq!(direct.into_outcome(), Outcome::completed("hi"));
    }
}
