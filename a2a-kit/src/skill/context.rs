//! [`TaskContext`]: what a running skill uses to report progress, produce artifacts, ask for
//! input and notice cancellation. Every call becomes an event in the task's log.
//!
//! The context reaches the executor through [`TaskHost`], a small trait this layer owns: the
//! runtime's task run implements it, and a context no task backs has a stand-in: for unit
//! tests it drops every report; for a skill that answers with a Message it drops progress
//! and refuses what only a task can hold (artifacts, questions) with an error saying so.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures::FutureExt;
use futures::future::{BoxFuture, Either, Map};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::outcome::IntoParts;
use crate::error::SkillError;
use crate::observe::TraceContext;
use crate::protocol::{Artifact, Message, Metadata, Part, Task, TaskState};
use crate::runtime::{Emitting, NoReply, TaskRun};
use crate::store::{Seq, StoreError};

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
    host: Arc<dyn TaskHost>,
}

/// A report in flight: the executor's append, its error as the skill sees it.
pub(crate) type Reported<'a> =
    Map<Emitting<'a>, fn(Result<Seq, StoreError>) -> Result<(), SkillError>>;

/// What a [`TaskContext`] needs from whatever runs its task.
pub(crate) trait TaskHost: Send + Sync + 'static {
    fn task_id(&self) -> &str;
    fn context_id(&self) -> &str;
    fn skill_id(&self) -> &str;
    fn message(&self) -> &Message;
    fn cancellation(&self) -> &CancellationToken;
    fn started(&self) -> Instant;
    fn produced_artifact(&self) -> bool;
    /// A WORKING status update carrying `text`.
    fn status(&self, text: String) -> Reported<'_>;
    /// An artifact chunk.
    fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Reported<'_>;
    /// INPUT_REQUIRED / AUTH_REQUIRED with `parts`, until the next message arrives.
    fn wait_for_reply(
        &self,
        state: TaskState,
        parts: Vec<Part>,
    ) -> BoxFuture<'_, Result<Message, SkillError>>;
    /// The task's history as it stands.
    fn history(&self) -> BoxFuture<'_, Vec<Message>>;
    /// A WORKING status update carrying `metadata`, merged into the task's.
    fn metadata(&self, metadata: Metadata) -> Reported<'_>;
    /// The tasks of the context (this one included, once stored), oldest first.
    fn context_tasks(&self) -> BoxFuture<'_, Vec<Task>>;
    /// Whether the task's store is durable (writes cost more than in memory).
    fn durable_store(&self) -> bool;
    /// The task's metadata as stored.
    fn task_metadata(&self) -> BoxFuture<'_, Metadata>;
    /// The trace context the run carries on (none without a run).
    fn trace_context(&self) -> Option<&TraceContext> {
        None
    }
}

/// A status update that cannot be written: the task ended (canceled), or the store failed.
fn status_error(r: Result<Seq, StoreError>) -> Result<(), SkillError> {
    r.map(|_| ()).map_err(|e| match e {
        StoreError::IllegalTransition(_) | StoreError::TaskNotFound(_) => SkillError::Canceled,
        other => SkillError::failed(other.to_string()),
    })
}

/// An artifact that cannot be written: the task is over for this skill.
fn artifact_error(r: Result<Seq, StoreError>) -> Result<(), SkillError> {
    r.map(|_| ()).map_err(|_| SkillError::Canceled)
}

impl TaskHost for TaskRun {
    fn task_id(&self) -> &str {
        &self.task_id
    }
    fn trace_context(&self) -> Option<&TraceContext> {
        self.trace.as_deref()
    }
    fn context_id(&self) -> &str {
        &self.context_id
    }
    fn skill_id(&self) -> &str {
        &self.skill_id
    }
    fn message(&self) -> &Message {
        &self.message
    }
    fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
    fn started(&self) -> Instant {
        self.started
    }
    fn produced_artifact(&self) -> bool {
        TaskRun::produced_artifact(self)
    }
    fn status(&self, text: String) -> Reported<'_> {
        self.report_status(text).map(status_error as fn(_) -> _)
    }
    fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Reported<'_> {
        self.emit_artifact(artifact, append, last_chunk)
            .map(artifact_error as fn(_) -> _)
    }
    fn wait_for_reply(
        &self,
        state: TaskState,
        parts: Vec<Part>,
    ) -> BoxFuture<'_, Result<Message, SkillError>> {
        Box::pin(TaskRun::wait_for_reply(self, state, parts).map(|r| {
            r.map_err(|e| match e {
                NoReply::Ended => SkillError::Canceled,
                NoReply::Store(e) => SkillError::failed(e.to_string()),
                NoReply::Expired(limit) => SkillError::failed(format!(
                    "no reply came within {} s: the question expired",
                    limit.as_secs_f64()
                )),
            })
        }))
    }
    fn history(&self) -> BoxFuture<'_, Vec<Message>> {
        Box::pin(TaskRun::history(self))
    }
    fn metadata(&self, metadata: Metadata) -> Reported<'_> {
        self.record_metadata(metadata)
            .map(status_error as fn(_) -> _)
    }
    fn context_tasks(&self) -> BoxFuture<'_, Vec<Task>> {
        Box::pin(TaskRun::context_tasks(self))
    }
    fn durable_store(&self) -> bool {
        self.store_is_durable()
    }
    fn task_metadata(&self) -> BoxFuture<'_, Metadata> {
        Box::pin(TaskRun::task_metadata(self))
    }
}

/// The host of a context no task backs: progress and metadata are dropped; artifacts and
/// questions are dropped too in a unit test's context, and refused in a direct-message
/// skill's (`reply`), whose client would never see them.
struct Detached {
    task_id: String,
    context_id: String,
    skill_id: Cow<'static, str>,
    message: Message,
    cancel: CancellationToken,
    started: Instant,
    produced_artifact: AtomicBool,
    /// The context of a skill that answers with a Message.
    reply: bool,
}

/// The error of an artifact a direct-message skill tried to write (carried as the store
/// error's text, since a report's mapping is a plain function).
fn refused(r: Result<Seq, StoreError>) -> Result<(), SkillError> {
    r.map(|_| ()).map_err(|e| match e {
        StoreError::InvalidEvent(why) => SkillError::failed(why),
        other => SkillError::failed(other.to_string()),
    })
}

impl TaskHost for Detached {
    fn task_id(&self) -> &str {
        &self.task_id
    }
    fn context_id(&self) -> &str {
        &self.context_id
    }
    fn skill_id(&self) -> &str {
        &self.skill_id
    }
    fn message(&self) -> &Message {
        &self.message
    }
    fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
    fn started(&self) -> Instant {
        self.started
    }
    fn produced_artifact(&self) -> bool {
        self.produced_artifact.load(Ordering::Acquire)
    }
    fn status(&self, _text: String) -> Reported<'_> {
        Either::Left(std::future::ready(Ok(0))).map(status_error as fn(_) -> _)
    }
    fn artifact(&self, _: Artifact, _: bool, _: bool) -> Reported<'_> {
        if self.reply {
            let why = format!(
                "skill `{}` answers with a Message, which has no artifacts: return the \
                 content instead (it becomes the Message's parts), or answer with a task",
                self.skill_id
            );
            return Either::Left(std::future::ready(Err(StoreError::InvalidEvent(why))))
                .map(refused as fn(_) -> _);
        }
        self.produced_artifact.store(true, Ordering::Release);
        Either::Left(std::future::ready(Ok(0))).map(artifact_error as fn(_) -> _)
    }
    fn wait_for_reply(
        &self,
        _: TaskState,
        _: Vec<Part>,
    ) -> BoxFuture<'_, Result<Message, SkillError>> {
        let why = if self.reply {
            format!(
                "skill `{}` answers with a Message, so it cannot ask for input: a question \
                 needs a task that waits for the reply",
                self.skill_id
            )
        } else {
            "this skill asked for input outside of a task".to_string()
        };
        Box::pin(std::future::ready(Err(SkillError::failed(why))))
    }
    fn history(&self) -> BoxFuture<'_, Vec<Message>> {
        Box::pin(std::future::ready(vec![self.message.clone()]))
    }
    fn metadata(&self, _: Metadata) -> Reported<'_> {
        Either::Left(std::future::ready(Ok(0))).map(status_error as fn(_) -> _)
    }
    fn context_tasks(&self) -> BoxFuture<'_, Vec<Task>> {
        Box::pin(std::future::ready(Vec::new()))
    }
    fn durable_store(&self) -> bool {
        false
    }
    fn task_metadata(&self) -> BoxFuture<'_, Metadata> {
        Box::pin(std::future::ready(Metadata::new()))
    }
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.task_id())
            .field("context_id", &self.context_id())
            .field("skill_id", &self.skill_id())
            .finish_non_exhaustive()
    }
}

impl TaskContext {
    /// The context of a run of the executor.
    pub(crate) fn for_run(run: Arc<TaskRun>) -> Self {
        TaskContext { host: run }
    }

    /// The context of a skill that answers with a Message: no task backs it. Progress is
    /// dropped; an artifact or a question fails the skill, saying why.
    pub(crate) fn unbacked(
        task_id: String,
        context_id: String,
        skill_id: impl Into<Cow<'static, str>>,
        message: Message,
    ) -> Self {
        Self::without_task(task_id, context_id, skill_id.into(), message, true)
    }

    fn without_task(
        task_id: String,
        context_id: String,
        skill_id: Cow<'static, str>,
        message: Message,
        reply: bool,
    ) -> Self {
        TaskContext {
            host: Arc::new(Detached {
                task_id,
                context_id,
                skill_id,
                message,
                cancel: CancellationToken::new(),
                started: Instant::now(),
                produced_artifact: AtomicBool::new(false),
                reply,
            }),
        }
    }

    /// A context backed by no task: every report is dropped. For unit-testing skills.
    ///
    /// ```
    /// # use a2a_kit::skill::TaskContext;
    /// # use a2a_kit::protocol::Message;
    /// let ctx = TaskContext::detached("greet", Message::user_text("Ada"));
    /// assert!(!ctx.is_cancelled());
    /// ```
    pub fn detached(skill_id: impl Into<String>, message: Message) -> Self {
        let context_id = message
            .context_id
            .clone()
            .unwrap_or_else(crate::protocol::new_uuid);
        Self::without_task(
            crate::protocol::new_uuid(),
            context_id,
            Cow::Owned(skill_id.into()),
            message,
            false,
        )
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        self.host.task_id()
    }

    /// The W3C trace context of this run: what its calls to other agents carry (the
    /// request's that started the task, or the task's kept one when a later request or
    /// process continues it; with `otel`, the run's own span's). The client, delegation and
    /// model tools use it without being asked; a call the skill makes by other means can
    /// [`inject`](TraceContext::inject) it.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.host.trace_context()
    }
    /// The task's context id.
    pub fn context_id(&self) -> &str {
        self.host.context_id()
    }
    /// The skill running the task.
    pub fn skill_id(&self) -> &str {
        self.host.skill_id()
    }
    /// The message that started this invocation.
    pub fn message(&self) -> &Message {
        self.host.message()
    }
    /// How long this invocation has been running.
    pub fn elapsed(&self) -> std::time::Duration {
        self.host.started().elapsed()
    }

    /// Report progress: a WORKING status update. By default the text travels as a status
    /// indicator (a data part, message metadata `kind: "status-message"`) so clients do not mix
    /// it into the answer; see [`StatusStyle`](crate::runtime::StatusStyle).
    ///
    /// It returns a `Result` because a task can end under a running skill: once it has
    /// (canceled, or its store failed) the update fails with [`SkillError::Canceled`] (or
    /// the store's error), and `ctx.status(..).await?` ends the skill there, which is what a
    /// canceled skill should do. In a skill that answers with a Message it does nothing: no
    /// task shows it.
    pub async fn status(&self, text: impl Into<String>) -> Result<(), SkillError> {
        self.host.status(text.into()).await
    }

    /// Produce a whole artifact in one event.
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), SkillError> {
        self.host.artifact(artifact, false, true).await
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

    /// Record facts on the task: `metadata` is merged into the task's metadata (key by key),
    /// through a WORKING status update that carries it. How a skill leaves what an operator
    /// needs on the task (token usage, the remote tasks it started).
    ///
    /// Fails with [`SkillError::Canceled`] once the task has ended.
    pub async fn record(&self, metadata: Metadata) -> Result<(), SkillError> {
        self.host.metadata(metadata).await
    }

    /// The tasks of this task's context, this one included once stored, oldest first.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) async fn context_tasks(&self) -> Vec<Task> {
        self.host.context_tasks().await
    }

    /// The task's metadata as stored now.
    pub async fn task_metadata(&self) -> Metadata {
        self.host.task_metadata().await
    }

    /// The conversation so far: the other tasks of this task's context (that its caller may
    /// see), oldest first, each with its history and artifacts, read from the store (so it
    /// is the same after a restart and on every replica). At most the 100 most recent.
    pub async fn earlier_tasks(&self) -> Vec<Task> {
        let mut tasks = self.host.context_tasks().await;
        tasks.retain(|t| t.id != self.task_id());
        tasks
    }

    /// Whether the task's store is durable (a file or a server): writes cost more there, so
    /// a skill streaming many small pieces may gather them into fewer chunks.
    pub fn durable_store(&self) -> bool {
        self.host.durable_store()
    }

    /// Whether the skill produced an artifact.
    pub fn produced_artifact(&self) -> bool {
        self.host.produced_artifact()
    }

    /// Resolves when the task is canceled. Select on it in long-running work.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.host.cancellation().cancelled()
    }

    /// Whether the task has been canceled.
    pub fn is_cancelled(&self) -> bool {
        self.host.cancellation().is_cancelled()
    }

    /// The task's history as stored now (status messages included, marked by metadata).
    pub async fn history(&self) -> Vec<Message> {
        self.host.history().await
    }

    /// Suspend in `state` with `parts` until the next message for the task arrives.
    pub(crate) fn wait_for_reply(
        &self,
        state: TaskState,
        parts: Vec<Part>,
    ) -> BoxFuture<'_, Result<Message, SkillError>> {
        self.host.wait_for_reply(state, parts)
    }

    pub(crate) fn emit_artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last: bool,
    ) -> Reported<'_> {
        self.host.artifact(artifact, append, last)
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
