//! [`TaskContext`]: what a running skill uses to report progress, produce artifacts, ask for
//! input and notice cancellation. Every call becomes an event in the task's log.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::error::SkillError;
use crate::extract::{FromSkillRequest, SkillRequest};
use crate::protocol::{
    Artifact, Message, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState,
};
use crate::reply::IntoParts;
use crate::runtime::Runtime;
use crate::store::TaskView;

/// The handle a skill gets to its task. Cheap to clone.
///
/// ```no_run
/// use a2a_kit::prelude::*;
///
/// async fn plan(ctx: TaskContext, Text(goal): Text) -> Result<Outcome, SkillError> {
///     ctx.status(format!("Planning: {goal}")).await?;          // WORKING progress update
///     let mut itinerary = ctx.artifact_writer("itinerary");    // one artifact, in chunks
///     itinerary.write("Day 1: arrive\n").await?;
///     let Text(choice) = ctx.ask("Hotel or hostel?").await?;    // INPUT_REQUIRED until the reply
///     itinerary.write_last(format!("Stay: {choice}\n")).await?;
///     tokio::select! {
///         _ = ctx.cancelled() => Err(SkillError::Canceled),
///         _ = tokio::time::sleep(std::time::Duration::from_millis(10)) => Ok(Outcome::done()),
///     }
/// }
/// ```
#[derive(Clone)]
pub struct TaskContext {
    pub(crate) inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// Borrowed from the agent's skill table in the usual case: no copy per task.
    pub(crate) skill_id: std::borrow::Cow<'static, str>,
    pub(crate) message: Message,
    /// `None` when no task backs this context (direct-message skills, unit tests).
    pub(crate) runtime: Option<Arc<Runtime>>,
    pub(crate) cancel: CancellationToken,
    pub(crate) produced_artifact: AtomicBool,
    pub(crate) started: Instant,
    /// The task, while it is held back from the store (a blocking SendMessage's first poll).
    pub(crate) staging: Option<crate::runtime::Staging>,
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.inner.task_id)
            .field("context_id", &self.inner.context_id)
            .field("skill_id", &self.inner.skill_id)
            .finish_non_exhaustive()
    }
}

impl TaskContext {
    pub(crate) fn new(
        task_id: String,
        context_id: String,
        skill_id: impl Into<std::borrow::Cow<'static, str>>,
        message: Message,
        runtime: Option<Arc<Runtime>>,
    ) -> Self {
        Self::build(task_id, context_id, skill_id.into(), message, runtime, None)
    }

    /// A context whose `task` is not stored yet: the runtime stores it with the events held
    /// meanwhile ([`Staging`](crate::runtime::Staging)).
    pub(crate) fn staged(
        task: crate::protocol::Task,
        skill_id: &'static str,
        message: Message,
        runtime: Arc<Runtime>,
    ) -> Self {
        let (task_id, context_id) = (task.id.clone(), task.context_id.clone());
        let staging = crate::runtime::Staging::new(task, skill_id);
        Self::build(
            task_id,
            context_id,
            skill_id.into(),
            message,
            Some(runtime),
            Some(staging),
        )
    }

    fn build(
        task_id: String,
        context_id: String,
        skill_id: std::borrow::Cow<'static, str>,
        message: Message,
        runtime: Option<Arc<Runtime>>,
        staging: Option<crate::runtime::Staging>,
    ) -> Self {
        TaskContext {
            inner: Arc::new(ContextInner {
                task_id,
                context_id,
                skill_id,
                message,
                runtime,
                cancel: CancellationToken::new(),
                produced_artifact: AtomicBool::new(false),
                started: Instant::now(),
                staging,
            }),
        }
    }

    /// A context backed by no task: every report is dropped. For unit-testing skills.
    ///
    /// ```
    /// # use a2a_kit::context::TaskContext;
    /// # use a2a_kit::protocol::Message;
    /// let ctx = TaskContext::detached("greet", Message::user_text("Ada"));
    /// assert!(!ctx.is_cancelled());
    /// ```
    pub fn detached(skill_id: impl Into<String>, message: Message) -> Self {
        let context_id = message
            .context_id
            .clone()
            .unwrap_or_else(crate::protocol::new_uuid);
        Self::new(
            crate::protocol::new_uuid(),
            context_id,
            skill_id.into(),
            message,
            None,
        )
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }
    /// The task's context id.
    pub fn context_id(&self) -> &str {
        &self.inner.context_id
    }
    /// The skill running the task.
    pub fn skill_id(&self) -> &str {
        &self.inner.skill_id
    }
    /// The message that started this invocation.
    pub fn message(&self) -> &Message {
        &self.inner.message
    }
    /// How long this invocation has been running.
    pub fn elapsed(&self) -> std::time::Duration {
        self.inner.started.elapsed()
    }

    /// Report progress: a WORKING status update. By default the text travels as a status
    /// indicator (a data part, message metadata `kind: "status-message"`) so clients do not mix
    /// it into the answer; see [`StatusStyle`](crate::runtime::StatusStyle).
    ///
    /// Fails with [`SkillError::Canceled`] once the task has ended (e.g. it was canceled).
    pub async fn status(&self, text: impl Into<String>) -> Result<(), SkillError> {
        let Some(rt) = &self.inner.runtime else {
            return Ok(());
        };
        let message = rt.status_message(self, text.into());
        rt.emit_status(self, TaskState::Working, message)
            .await
            .map(|_| ())
    }

    /// Produce a whole artifact in one event.
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), SkillError> {
        self.emit_artifact(artifact, false, true).await
    }

    /// Start an artifact produced in chunks (`append` after the first, `lastChunk` at the end).
    pub fn artifact_writer(&self, name: impl Into<String>) -> ArtifactWriter {
        ArtifactWriter {
            ctx: self.clone(),
            artifact: Artifact::new(Vec::new()).with_name(name.into()),
            sent: false,
            finished: false,
        }
    }

    pub(crate) async fn emit_artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), SkillError> {
        self.inner.produced_artifact.store(true, Ordering::Release);
        let Some(rt) = &self.inner.runtime else {
            return Ok(());
        };
        let event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.inner.task_id.clone(),
            context_id: self.inner.context_id.clone(),
            artifact,
            append,
            last_chunk,
            metadata: None,
        });
        rt.emit_for(self, event)
            .await
            .map(|_| ())
            .map_err(|_| SkillError::Canceled)
    }

    /// Whether the skill produced an artifact (forced-artifact and narration logic use it).
    pub fn produced_artifact(&self) -> bool {
        self.inner.produced_artifact.load(Ordering::Acquire)
    }

    /// Ask the user: the task goes INPUT_REQUIRED with `question` as its status message, and
    /// this call resumes when the next message for the task arrives, extracted as `T`. A reply
    /// that does not extract is answered by asking again, with the reason.
    pub async fn ask<T: FromSkillRequest>(
        &self,
        question: impl IntoParts,
    ) -> Result<T, SkillError> {
        self.interrupt(TaskState::InputRequired, question).await
    }

    /// Ask for authorization: AUTH_REQUIRED with `explanation`, resuming on the next message.
    pub async fn require_auth<T: FromSkillRequest>(
        &self,
        explanation: impl IntoParts,
    ) -> Result<T, SkillError> {
        self.interrupt(TaskState::AuthRequired, explanation).await
    }

    async fn interrupt<T: FromSkillRequest>(
        &self,
        state: TaskState,
        question: impl IntoParts,
    ) -> Result<T, SkillError> {
        let Some(rt) = self.inner.runtime.clone() else {
            return Err(SkillError::failed(
                "this skill asked for input outside of a task",
            ));
        };
        let mut parts = question.into_parts()?;
        loop {
            let reply = rt.wait_for_reply(self, state, parts).await?;
            let history = self.history().await;
            let req = SkillRequest {
                skill_id: self.inner.skill_id.clone(),
                message: Some(reply),
                metadata: None,
                history: Some(history),
                context: self.clone(),
            };
            match T::from_request(&req) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    parts = vec![Part::text(format!(
                        "I could not use that reply: expected {} ({}). Please try again.",
                        e.expected, e.detail
                    ))];
                }
            }
        }
    }

    /// Resolves when the task is canceled. Select on it in long-running work.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.inner.cancel.cancelled()
    }

    /// Whether the task has been canceled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The task's history as stored now (status messages included, marked by metadata).
    pub async fn history(&self) -> Vec<Message> {
        if let Some(held) = self.inner.staging.as_ref().and_then(|s| s.held_history()) {
            return held;
        }
        match &self.inner.runtime {
            Some(rt) => rt
                .store
                .get_task(&self.inner.task_id, TaskView::FULL)
                .await
                .ok()
                .flatten()
                .map(|r| r.task.history)
                .unwrap_or_default(),
            None => vec![self.inner.message.clone()],
        }
    }
}

/// Writes one artifact in chunks. Each `write` is one `artifactUpdate` event, sent at once.
///
/// A2A marks the last chunk on the chunk itself. Use [`write_last`](Self::write_last) when you
/// know which chunk is last; otherwise [`finish`](Self::finish) sends a closing chunk holding
/// one empty text part with `lastChunk`, which stores leave out of the assembled artifact.
#[derive(Debug)]
pub struct ArtifactWriter {
    ctx: TaskContext,
    artifact: Artifact,
    sent: bool,
    finished: bool,
}

impl ArtifactWriter {
    /// The artifact's id (the same on every chunk).
    pub fn artifact_id(&self) -> &str {
        &self.artifact.artifact_id
    }

    /// Send a chunk.
    pub async fn write(&mut self, content: impl IntoParts) -> Result<(), SkillError> {
        self.send(content.into_parts()?, false).await
    }

    /// Send the final chunk.
    pub async fn write_last(&mut self, content: impl IntoParts) -> Result<(), SkillError> {
        self.send(content.into_parts()?, true).await
    }

    /// Close the artifact if `write_last` was not used. Does nothing if nothing was written.
    pub async fn finish(&mut self) -> Result<(), SkillError> {
        if self.finished || !self.sent {
            return Ok(());
        }
        self.send(vec![Part::text("")], true).await
    }

    async fn send(&mut self, parts: Vec<Part>, last: bool) -> Result<(), SkillError> {
        if self.finished {
            return Err(SkillError::failed("artifact already finished"));
        }
        let mut chunk = self.artifact.clone();
        chunk.parts = parts;
        if self.sent {
            // Name and description travel with the first chunk only.
            chunk.name = None;
            chunk.description = None;
        }
        let append = self.sent;
        self.sent = true;
        self.finished = last;
        self.ctx.emit_artifact(chunk, append, last).await
    }
}
