//! [`TaskRun`]: one run of a skill on a task, as the executor sees it, and [`Ending`], what
//! the run ended with. The skill layer's `TaskContext` wraps a run; the runtime never sees
//! the context.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::staging::{Emitting, Staging};
use super::{Runtime, StatusStyle, status_update};
use crate::observe::TraceContext;
use crate::protocol::{
    Artifact, Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent, TaskState,
    status_indicator, status_message_metadata,
};
use crate::store::{StoreError, TaskView};

/// One run of a skill on a task: its ids, the message that started it, its cancellation
/// token, and the way its events reach the store (held while the task is staged).
pub(crate) struct TaskRun {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// Borrowed from the agent's skill table in the usual case: no copy per task.
    pub(crate) skill_id: Cow<'static, str>,
    pub(crate) message: Message,
    pub(crate) cancel: CancellationToken,
    pub(crate) started: Instant,
    produced_artifact: AtomicBool,
    pub(super) staging: Option<Staging>,
    pub(super) runtime: Arc<Runtime>,
    /// Replies already recorded for the questions this run will ask again, last first: a
    /// skill re-run after its process stopped mid-`ask` gets them back in order
    /// ([`recorded_answers`]).
    replay: std::sync::Mutex<Vec<Message>>,
    /// Whether the run holds a turn: while its skill runs, not while it waits for a reply.
    holds_turn: AtomicBool,
    /// Time spent waiting for replies, which the skill timeout does not count.
    pauses: std::sync::Mutex<Pauses>,
    /// The caller's live task this run is (counted against its share), until it ends.
    live: Option<super::LiveTask>,
    /// The run's span (`invoke_agent`): the skill runs in it, the task's events are its events.
    pub(crate) span: tracing::Span,
    /// The trace context the run's outgoing calls and its task's push deliveries carry
    /// (boxed: most runs have none, and every run's allocation would carry its size).
    pub(crate) trace: Option<Box<TraceContext>>,
    /// Artifact chunks emitted so far (recorded on the span).
    chunks: AtomicU32,
}

/// Where a run's trace continues.
#[derive(Clone, Copy)]
pub(crate) enum TraceParent<'a> {
    /// The current span (the request that starts the run), which came in this context.
    Current(Option<&'a TraceContext>),
    /// The task's stored context: a run a later request or process starts.
    Stored(&'a TraceContext),
}

/// How long a run has waited for replies (`ctx.ask`): the past waits and the current one.
#[derive(Default)]
struct Pauses {
    total: Duration,
    since: Option<tokio::time::Instant>,
}

/// The metadata `kind` of a question a skill asked with `ctx.ask` / `ctx.require_auth` (the
/// interrupted status's message), so a later process knows the skill waits in `ask`.
pub(crate) const QUESTION_KIND: &str = "question";

fn is_question(m: &Message) -> bool {
    m.role == Role::Agent
        && m.metadata
            .as_ref()
            .and_then(|meta| meta.get(crate::protocol::STATUS_MESSAGE_KIND_KEY))
            .and_then(|k| k.as_str())
            == Some(QUESTION_KIND)
}

/// For a task interrupted by a question asked in `ctx.ask` (`question`: its status
/// message) whose skill is not waiting any more (its process stopped), what a re-run needs to
/// go back to where it was: the message that started the task, and the user's reply to each
/// question it asked, in order (`history` ends with the new reply). `None` for a task
/// interrupted by a skill's returned `Outcome::input_required`, which is re-invoked with the
/// reply as its message (stateless multi-turn).
pub(crate) fn recorded_answers(
    question: Option<&Message>,
    history: &[Message],
) -> Option<(Message, Vec<Message>)> {
    if !question.is_some_and(is_question) {
        return None;
    }
    let (first, rest) = history.split_first()?;
    if first.role != Role::User {
        return None;
    }
    let mut answers = Vec::new();
    let mut asked = false;
    for m in rest {
        if is_question(m) {
            asked = true;
        } else if asked && m.role == Role::User {
            answers.push(m.clone());
            asked = false;
        }
    }
    Some((first.clone(), answers))
}

/// How a run ended, as the executor writes it.
#[derive(Debug)]
// Larger with the `llm` feature (serde_json's `preserve_order` maps): moved once per run.
#[cfg_attr(feature = "llm", allow(clippy::large_enum_variant))]
pub(crate) enum Ending {
    /// COMPLETED: the artifact (written unless the skill produced one already and this one is
    /// empty), the final status message the skill set, and a text-only answer's text, which
    /// becomes the status message when none was set and `answer_in_status` is on.
    Completed {
        artifact: Option<Artifact>,
        message: Option<Message>,
        answer_text: Option<String>,
    },
    /// The skill answered with a message: COMPLETED's status message for a task, the reply
    /// itself for a direct-message skill.
    Reply(Message),
    /// Another state (INPUT_REQUIRED, AUTH_REQUIRED, REJECTED, FAILED, CANCELED) with its
    /// status message.
    Settled {
        state: TaskState,
        message: Option<Message>,
    },
}

impl Ending {
    /// FAILED with a reason.
    pub(crate) fn failed(reason: String) -> Self {
        Ending::Settled {
            state: TaskState::Failed,
            message: Some(Message::agent(vec![Part::text(reason)])),
        }
    }
}

/// Why a wait for the user's reply ended without one.
#[derive(Debug)]
pub(crate) enum NoReply {
    /// The task ended (it was canceled) or could not be interrupted.
    Ended,
    /// The store refused the interrupted status.
    Store(StoreError),
    /// No reply came within the configured time ([`ExecutionConfig::reply_timeout`]).
    ///
    /// [`ExecutionConfig::reply_timeout`]: crate::runtime::ExecutionConfig::reply_timeout
    Expired(std::time::Duration),
}

impl Runtime {
    /// A run of a stored task, counted as `live` (if given) until it ends.
    pub(crate) fn run(
        self: &Arc<Self>,
        (task_id, context_id): (String, String),
        skill_id: impl Into<Cow<'static, str>>,
        message: Message,
        live: Option<super::LiveTask>,
        trace: TraceParent<'_>,
    ) -> Arc<TaskRun> {
        let ids = (task_id, context_id);
        let trace = match trace {
            TraceParent::Current(t) => (None, t),
            TraceParent::Stored(t) => (Some(t), Some(t)),
        };
        self.new_run(ids, skill_id.into(), message, None, live, trace)
    }

    /// A run of `task_id`, staged when `staging` holds its new task back
    /// ([`Runtime::staged_run`]).
    pub(super) fn new_run(
        self: &Arc<Self>,
        (task_id, context_id): (String, String),
        skill_id: Cow<'static, str>,
        message: Message,
        staging: Option<Staging>,
        live: Option<super::LiveTask>,
        (stored, started_in): (Option<&TraceContext>, Option<&TraceContext>),
    ) -> Arc<TaskRun> {
        // A child of `stored` when given, else of the current span; carrying on what it
        // `started_in` unless its span says otherwise.
        let span =
            crate::observe::run_span(&self.agent_name, &skill_id, &task_id, &context_id, stored);
        let trace = crate::observe::context_of(&span, started_in).map(Box::new);
        Arc::new(TaskRun {
            span,
            trace,
            chunks: AtomicU32::new(0),
            task_id,
            context_id,
            skill_id,
            message,
            cancel: CancellationToken::new(),
            started: Instant::now(),
            produced_artifact: AtomicBool::new(false),
            staging,
            runtime: self.clone(),
            replay: std::sync::Mutex::default(),
            holds_turn: AtomicBool::new(false),
            pauses: std::sync::Mutex::default(),
            live,
        })
    }
}

impl Drop for TaskRun {
    fn drop(&mut self) {
        self.give_turn_up();
    }
}

impl TaskRun {
    /// The share of the caller whose live task this run is, if it counts against one.
    pub(crate) fn share(&self) -> Option<&Arc<super::share::Share>> {
        self.live.as_ref().map(|l| &l.share)
    }

    /// One more live task of this run's caller, for the task once the run has ended.
    pub(crate) fn live_again(&self) -> Option<super::LiveTask> {
        self.live.as_ref().map(super::LiveTask::another)
    }

    /// Keep the turn just taken while the skill runs.
    pub(crate) fn hold_turn(&self) {
        self.holds_turn.store(true, Ordering::Release);
    }

    /// Give the run's turn (if it holds one) to the next waiting run; whether it held one.
    pub(crate) fn give_turn_up(&self) -> bool {
        let held = self.holds_turn.swap(false, Ordering::AcqRel);
        if held {
            self.runtime.turns.give_back(self.share());
        }
        held
    }

    /// The time this run has spent waiting for replies, up to `now`.
    pub(crate) fn paused(&self, now: tokio::time::Instant) -> Duration {
        let p = self.pauses.lock().unwrap_or_else(|p| p.into_inner());
        p.total + p.since.map_or(Duration::ZERO, |since| now - since)
    }

    fn pause(&self, on: bool) {
        let mut p = self.pauses.lock().unwrap_or_else(|p| p.into_inner());
        let now = tokio::time::Instant::now();
        match (on, p.since) {
            (true, None) => p.since = Some(now),
            (false, Some(since)) => {
                p.total += now - since;
                p.since = None;
            }
            _ => {}
        }
    }

    /// Give this run the recorded replies to the questions it will ask again, in order.
    pub(crate) fn replay_answers(&self, mut answers: Vec<Message>) {
        answers.reverse();
        *self.replay.lock().unwrap_or_else(|p| p.into_inner()) = answers;
    }

    /// Whether the skill produced an artifact.
    pub(crate) fn produced_artifact(&self) -> bool {
        self.produced_artifact.load(Ordering::Acquire)
    }

    /// Append an artifact chunk.
    pub(crate) fn emit_artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Emitting<'_> {
        self.produced_artifact.store(true, Ordering::Release);
        let chunks = self.chunks.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(
            parent: &self.span,
            a2a.artifact.id = artifact.artifact_id.as_str(),
            a2a.artifact.chunks = chunks,
            a2a.artifact.last_chunk = last_chunk,
            "a2a.task.artifact"
        );
        let event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append,
            last_chunk,
            metadata: None,
        });
        self.runtime.emit_for(self, event)
    }

    /// Append a status update.
    pub(crate) fn emit_status(&self, state: TaskState, message: Option<Message>) -> Emitting<'_> {
        tracing::debug!(
            parent: &self.span,
            a2a.task.state = state.as_str(),
            "a2a.task.status"
        );
        let event = status_update(&self.task_id, &self.context_id, state, message);
        self.runtime.emit_for(self, event)
    }

    /// An agent message of this task.
    pub(crate) fn agent_message(&self, parts: Vec<Part>) -> Message {
        Message::agent(parts)
            .with_task_id(&self.task_id)
            .with_context_id(&self.context_id)
    }

    /// `message` as this task's agent message: its ids and role set.
    fn stamp(&self, mut message: Message) -> Message {
        message.task_id = Some(self.task_id.clone());
        message.context_id = Some(self.context_id.clone());
        message.role = Role::Agent;
        message
    }

    /// The working-state status message for `text`, per the configured style.
    pub(crate) fn status_message(&self, text: String) -> Option<Message> {
        let part = match self.runtime.config.status_style {
            StatusStyle::None => return None,
            StatusStyle::Text => Part::text(text),
            StatusStyle::Indicator => status_indicator(text),
        };
        Some(
            self.agent_message(vec![part])
                .with_metadata(status_message_metadata()),
        )
    }

    /// Report progress: a WORKING status update with `text` in the configured style.
    pub(crate) fn report_status(&self, text: String) -> Emitting<'_> {
        let message = self.status_message(text);
        self.emit_status(TaskState::Working, message)
    }

    /// Write the run's ending as the task's final (or interrupted) events.
    pub(crate) async fn finish(&self, ending: Ending) {
        self.ended_in(match &ending {
            Ending::Settled { state, .. } => *state,
            _ => TaskState::Completed,
        });
        let result = match ending {
            Ending::Completed {
                artifact,
                message,
                answer_text,
            } => {
                let message = message.or_else(|| {
                    answer_text
                        .filter(|_| self.runtime.config.answer_in_status)
                        .map(|t| Message::agent(vec![Part::text(t)]))
                });
                // Content returned without an artifact produced goes through the same
                // artifact path a streaming skill uses.
                let mut ok = true;
                if let Some(a) = artifact
                    && (!self.produced_artifact() || !a.parts.is_empty())
                {
                    ok = self.emit_artifact(a, false, true).await.is_ok();
                }
                if ok {
                    let message = message.map(|m| self.stamp(m));
                    self.emit_status(TaskState::Completed, message)
                        .await
                        .map(|_| ())
                } else {
                    Ok(())
                }
            }
            Ending::Reply(m) => {
                let message = Some(self.stamp(m));
                self.emit_status(TaskState::Completed, message)
                    .await
                    .map(|_| ())
            }
            Ending::Settled { state, message } => {
                if state == TaskState::Failed {
                    let reason = message.as_ref().map(Message::text).unwrap_or_default();
                    tracing::warn!(
                        parent: &self.span,
                        task_id = self.task_id,
                        context_id = self.context_id,
                        skill = %self.skill_id,
                        reason,
                        "task failed"
                    );
                    if !self.span.is_disabled() {
                        self.span.record("otel.status_code", "ERROR");
                        self.span.record("otel.status_description", reason.as_str());
                        self.span.record("error.type", "TASK_FAILED");
                    }
                }
                let message = message.map(|m| self.stamp(m));
                self.emit_status(state, message).await.map(|_| ())
            }
        };
        match result {
            Ok(()) | Err(StoreError::IllegalTransition(_)) | Err(StoreError::TaskNotFound(_)) => {}
            Err(e) => tracing::error!(
                task_id = self.task_id,
                error = %e,
                "could not record the end of a task"
            ),
        }
    }

    /// Record where the run ended: on its span, and in the task metrics.
    fn ended_in(&self, state: TaskState) {
        if !self.span.is_disabled() {
            self.span.record("a2a.task.state", state.as_str());
            self.span
                .record("a2a.artifact.chunks", self.chunks.load(Ordering::Relaxed));
        }
        crate::observe::metrics::task_ended(&self.skill_id, state.as_str(), self.started);
    }

    /// Suspend the skill in `state` (INPUT_REQUIRED or AUTH_REQUIRED, asking with `parts`)
    /// until the next message for its task arrives.
    pub(crate) async fn wait_for_reply(
        &self,
        state: TaskState,
        parts: Vec<Part>,
    ) -> Result<Message, NoReply> {
        let recorded = self.replay.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some(answer) = recorded {
            // Asked and answered before this run: the answer, as it was given.
            return Ok(answer);
        }
        let rt = &self.runtime;
        let (tx, rx) = oneshot::channel();
        // Register the waiter before the state change is visible, so a client that sees the
        // interrupted state always finds someone to deliver its reply to.
        {
            let mut running = rt.running();
            match running.get_mut(&self.task_id) {
                Some(r) => r.waiter = Some(tx),
                // A staged task that asks in its first poll enters the running set now.
                None => match self.held_entry(tx) {
                    Some(entry) => {
                        running.insert(self.task_id.clone(), entry);
                    }
                    None => return Err(NoReply::Ended),
                },
            }
        }
        let mut msg = self.agent_message(parts);
        msg.metadata.get_or_insert_with(Default::default).insert(
            crate::protocol::STATUS_MESSAGE_KIND_KEY.into(),
            QUESTION_KIND.into(),
        );
        if let Err(e) = self.emit_status(state, Some(msg)).await {
            if let Some(r) = rt.running().get_mut(&self.task_id) {
                r.waiter = None;
            }
            return Err(match e {
                StoreError::IllegalTransition(_) | StoreError::TaskNotFound(_) => NoReply::Ended,
                other => NoReply::Store(other),
            });
        }
        let expiry = async {
            match rt.config.reply_timeout {
                Some(limit) => {
                    tokio::time::sleep(limit).await;
                    limit
                }
                None => std::future::pending().await,
            }
        };
        // Waiting for a person takes no turn: others run meanwhile; the reply waits for one.
        let had_turn = self.give_turn_up();
        let reply = async {
            let reply = rx.await;
            if had_turn {
                rt.turns.take(self.share()).await;
                self.hold_turn();
            }
            reply
        };
        self.pause(true);
        let answer = tokio::select! {
            reply = reply => reply.map_err(|_| NoReply::Ended),
            _ = self.cancel.cancelled() => Err(NoReply::Ended),
            limit = expiry => {
                // Nobody may deliver a reply to this wait any more: the skill ends the task.
                if let Some(r) = rt.running().get_mut(&self.task_id) {
                    r.waiter = None;
                }
                Err(NoReply::Expired(limit))
            }
        };
        self.pause(false);
        answer
    }

    /// Whether the task's store is durable.
    pub(crate) fn store_is_durable(&self) -> bool {
        self.runtime.store.is_durable()
    }

    /// A WORKING status update that carries `metadata` (and no message): stores merge it
    /// into the task's metadata.
    pub(crate) fn record_metadata(&self, metadata: crate::protocol::Metadata) -> Emitting<'_> {
        let mut event = status_update(&self.task_id, &self.context_id, TaskState::Working, None);
        if let StreamResponse::StatusUpdate(u) = &mut event {
            u.metadata = Some(metadata);
        }
        self.runtime.emit_for(self, event)
    }

    /// The task's metadata as stored (none while the task is held back, staged).
    pub(crate) async fn task_metadata(&self) -> crate::protocol::Metadata {
        let view = TaskView {
            history_length: Some(0),
            include_artifacts: false,
        };
        match self.runtime.store.get_task(&self.task_id, view).await {
            Ok(Some(rec)) => rec.task.metadata.unwrap_or_default(),
            _ => Default::default(),
        }
    }

    /// The tasks of this task's context that its owner may see (this one included, once
    /// stored), oldest first (the 100 most recent), whole: the conversation so far, read from
    /// the store.
    pub(crate) async fn context_tasks(&self) -> Vec<crate::protocol::Task> {
        let store = &self.runtime.store;
        let owner = match self.held_owner() {
            Some(owner) => owner,
            None => {
                let view = TaskView {
                    history_length: Some(0),
                    include_artifacts: false,
                };
                match store.get_task(&self.task_id, view).await {
                    Ok(Some(rec)) => rec.owner,
                    _ => return Vec::new(),
                }
            }
        };
        let query = crate::store::ListQuery {
            owner,
            context_id: Some(self.context_id.clone()),
            page_size: 100,
            view: TaskView::FULL,
            ..Default::default()
        };
        match store.list_tasks(&query).await {
            Ok(page) => {
                let mut tasks = page.tasks;
                tasks.reverse();
                tasks
            }
            Err(e) => {
                tracing::warn!(task_id = %self.task_id, error = %e, "could not read the context's tasks");
                Vec::new()
            }
        }
    }

    /// The task's history as it stands (held, or read from the store).
    pub(crate) async fn history(&self) -> Vec<Message> {
        if let Some(held) = self.held_history() {
            return held;
        }
        self.runtime
            .store
            .get_task(&self.task_id, TaskView::FULL)
            .await
            .ok()
            .flatten()
            .map(|r| r.task.history)
            .unwrap_or_default()
    }
}
