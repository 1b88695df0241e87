//! SendMessage and SendStreamingMessage: validate, route (see [`crate::skill`]'s routing
//! rules), extract the skill's arguments, create or continue the task, and run the skill.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;

use super::{AgentService, EventStream, StreamItem, history_length, new_id};
use crate::auth::Caller;
use crate::error::A2aError;
use crate::observe::{TRACE_METADATA_KEY, TraceContext};
use crate::protocol::{
    Message, Metadata, Role, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState, TaskStatus,
};
use crate::request::RequestContext;
use crate::runtime::TraceParent;
use crate::runtime::{BusSubscription, Ending, LiveTask, OverShare, ShareKey, TaskRun};
use crate::skill::{Routed, SkillCall, SkillInfo, SkillRequest, TaskContext, route_new};
use crate::store::{Owner, Seq, TaskView};

impl AgentService {
    // ----- SendMessage / SendStreamingMessage -----

    /// SendMessage: blocking unless `configuration.returnImmediately`.
    ///
    /// A blocking send that starts a task stores it after the skill's first poll, not before:
    /// a skill that ends there (most do) has its task written once, finished, with its whole
    /// event log; one that has to wait has its task stored before it goes on. Until then no
    /// other request can see the task (its id is not out yet; ListTasks does not list it).
    /// A store that refuses the task fails this call.
    ///
    /// A context with a [deadline](RequestContext::deadline) that passes while the task runs
    /// answers with the task as it stands then, as `returnImmediately` would; the task goes on.
    pub async fn send_message(
        &self,
        cx: &RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        match self.send_and_settle(cx, Box::new(req), true).await? {
            Sent::Message(m) => Ok(SendMessageResponse::Message(m)),
            // A task written finished in the request's own poll, as written: not read back.
            Sent::Task {
                written: Some(mut task),
                view,
                ..
            } => {
                view.apply(&mut task);
                Ok(SendMessageResponse::Task(*task))
            }
            Sent::Task {
                task_id,
                view,
                owner,
                written: None,
            } => Ok(SendMessageResponse::Task(
                self.read_task(&task_id, view, &owner).await?,
            )),
        }
    }

    /// [`send_message`](Self::send_message) with the `SendMessageResponse` appended to `out`
    /// as ProtoJSON, for the bindings: `out` may hold the start of the binding's envelope, and
    /// the task is written into it by the store from what it holds (a finished task in the
    /// in-memory store is bytes already), with no intermediate `Task` value or buffer.
    pub(crate) async fn send_message_json(
        &self,
        cx: &RequestContext,
        req: Box<SendMessageRequest>,
        out: &mut Vec<u8>,
    ) -> Result<(), A2aError> {
        match self.send_and_settle(cx, req, false).await? {
            Sent::Message(m) => serde_json::to_writer(out, &SendMessageResponse::Message(m))
                .map_err(|e| A2aError::Internal(format!("could not serialize the result: {e}"))),
            // The caller's own task: it just created or continued it.
            Sent::Task { task_id, view, .. } => {
                out.extend_from_slice(b"{\"task\":");
                if !self.rt().store.write_task_json(&task_id, view, out).await? {
                    return Err(A2aError::task_not_found(&task_id));
                }
                out.push(b'}');
                Ok(())
            }
        }
    }

    /// Start the message's task and, unless asked to return at once, wait until it settles.
    /// The request is boxed: it would otherwise be held by each future down the call. With
    /// `keep_task`, a task written finished in the request's own poll comes back as written
    /// (for an answer as a typed task; the JSON answer copies the stored bytes instead).
    async fn send_and_settle(
        &self,
        cx: &RequestContext,
        req: Box<SendMessageRequest>,
        keep_task: bool,
    ) -> Result<Sent, A2aError> {
        let history_length = self.validate_send(&req)?;
        let owner = self.owner(cx, req.tenant.as_deref())?;
        let return_immediately = req
            .configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately);
        let view = TaskView {
            history_length,
            include_artifacts: true,
        };
        // Boxed: starting a task is most of a request's state (several KB of future), and a
        // future that size inline is copied whole each time a caller moves or boxes its own.
        // A new task may be staged (stored once its first poll is over) unless the caller
        // returns at once.
        match Box::pin(self.start(req, !return_immediately, cx, &owner)).await? {
            Started::Message(m) => Ok(Sent::Message(m)),
            Started::Task {
                task_id,
                after,
                launch,
            } => {
                let mut written = None;
                match launch {
                    _ if return_immediately => self.launch(launch),
                    // A quick skill finishes in its first poll, here: nothing to wait for.
                    // Otherwise it went on in the background, and the log tells what it
                    // wrote meanwhile.
                    Launch::Spawn {
                        run,
                        future,
                        emit_working,
                    } => {
                        let rt = self.rt();
                        let kept = keep_task.then(|| {
                            run.keep_written_task();
                            run.clone()
                        });
                        if rt.run_inline_first(run, future, emit_working).await? {
                            written = kept.and_then(|run| run.take_written_task());
                        } else {
                            let mut sub = rt.subscribe(&task_id);
                            until(cx, rt.wait_settled(&mut sub, after)).await?;
                        }
                    }
                    launch => {
                        // Subscribe before the task can move on: then the log is read once.
                        let mut sub = self.rt().subscribe(&task_id);
                        self.launch(launch);
                        until(cx, self.rt().wait_settled(&mut sub, after)).await?;
                    }
                }
                Ok(Sent::Task {
                    task_id,
                    view,
                    owner,
                    written,
                })
            }
        }
    }

    /// SendStreamingMessage: the Task first, then its events, closing on terminal and
    /// interrupted states; a direct-message reply is exactly one Message.
    pub async fn send_streaming_message(
        &self,
        cx: &RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        let stream = self.send_streaming_uncounted(cx, req).await?;
        Ok(super::counted(stream, "SendStreamingMessage"))
    }

    async fn send_streaming_uncounted(
        &self,
        cx: &RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.inner.streaming {
            return Err(A2aError::unsupported(
                "streaming is not supported by this agent",
            ));
        }
        self.validate_send(&req)?;
        let owner = self.owner(cx, req.tenant.as_deref())?;
        match Box::pin(self.start(Box::new(req), false, cx, &owner)).await? {
            Started::Message(m) => {
                let item = StreamItem {
                    seq: None,
                    event: StreamResponse::Message(m),
                };
                Ok(futures::stream::once(async move { Ok(item) }).boxed())
            }
            Started::Task {
                task_id,
                after: 0,
                launch,
            } => {
                let sub = self.rt().subscribe(&task_id);
                self.launch(launch);
                Ok(self.log_stream(sub, 0))
            }
            Started::Task {
                task_id,
                after: _,
                launch,
            } => {
                let sub = self.rt().subscribe(&task_id);
                self.launch(launch);
                self.snapshot_stream(sub, &task_id).await
            }
        }
    }

    /// Set a started task's skill going (after the caller subscribed to its doorbell).
    fn launch(&self, launch: Launch) {
        match launch {
            Launch::Spawn {
                run,
                future,
                emit_working,
            } => self.rt().spawn(run, future, emit_working),
            // If the skill vanished meanwhile it was canceled, and the task says so.
            Launch::Resume { waiter, message } => drop(waiter.send(message)),
            Launch::Nothing => {}
        }
    }

    pub(super) fn log_stream(&self, sub: BusSubscription, after: Seq) -> EventStream {
        self.rt()
            .event_stream(sub, after)
            .map(|r| {
                r.map(|rec| StreamItem {
                    seq: Some(rec.seq),
                    event: rec.event,
                })
            })
            .boxed()
    }

    /// A Task snapshot (its `seq` is the last event it reflects), then the live tail. `sub` is
    /// taken before the snapshot is read, so the log after it is kept for this reader.
    pub(super) async fn snapshot_stream(
        &self,
        sub: BusSubscription,
        task_id: &str,
    ) -> Result<EventStream, A2aError> {
        let rec = self
            .rt()
            .store
            .get_task(task_id, TaskView::FULL)
            .await?
            .ok_or_else(|| A2aError::task_not_found(task_id))?;
        let first = StreamItem {
            seq: Some(rec.last_seq),
            event: StreamResponse::Task(rec.task),
        };
        let tail = self.log_stream(sub, rec.last_seq);
        Ok(futures::stream::once(async move { Ok(first) })
            .chain(tail)
            .boxed())
    }

    /// Route, extract, create or continue the task, start the skill. With `stage` (a caller
    /// that waits for the task), a new task may be staged
    /// ([`new_task_run`](Self::new_task_run)): then the runtime stores it, after the skill's
    /// first poll, not this call.
    async fn start(
        &self,
        req: Box<SendMessageRequest>,
        stage: bool,
        cx: &RequestContext,
        owner: &Option<Owner>,
    ) -> Result<Started, A2aError> {
        let caller = cx.caller();
        let SendMessageRequest {
            message,
            configuration,
            metadata,
            ..
        } = *req;
        let push_config = configuration
            .and_then(|c| c.task_push_notification_config)
            .map(|mut config| {
                config.protocol_version = cx.protocol_version();
                config
            });
        if let Some(config) = &push_config {
            if !self.inner.push {
                return Err(A2aError::PushNotificationNotSupported);
            }
            // Its host, before anything is created. Boxed: rare, and it would size every
            // send's future.
            let field = "configuration.taskPushNotificationConfig.url";
            Box::pin(self.check_webhook_host(field, &config.url)).await?;
        }
        match message.task_id.clone() {
            // Boxed apart: each would otherwise size the other's future.
            Some(task_id) => {
                let continued =
                    self.continue_task(task_id, message, metadata, push_config, caller, owner);
                Box::pin(continued).await
            }
            None => {
                self.new_task(message, metadata, push_config, stage, cx, owner)
                    .await
            }
        }
    }

    /// Store an inline push config for `task_id` (before the task can emit anything, so no
    /// event is missed).
    pub(super) async fn attach_push(
        &self,
        task_id: &str,
        config: Option<TaskPushNotificationConfig>,
    ) -> Result<(), A2aError> {
        if let Some(mut config) = config {
            config.task_id = Some(task_id.to_string());
            // Boxed: rare, and it would size every send's future. (Its URL was checked
            // with the request.)
            let field = "configuration.taskPushNotificationConfig";
            Box::pin(self.store_push_config(config, field)).await?;
        }
        Ok(())
    }

    /// Extract the skill's arguments and build its future (the agent's `prepare`).
    pub(super) fn prepare(
        &self,
        skill_id: &'static str,
        metadata: Option<Metadata>,
        history: Option<Vec<Message>>,
        ctx: &TaskContext,
        caller: Option<&Arc<Caller>>,
    ) -> Result<SkillCall, A2aError> {
        let req = SkillRequest {
            skill_id: skill_id.into(),
            message: None,
            metadata,
            history,
            context: ctx.clone(),
            caller: caller.cloned(),
        };
        self.inner.skills.prepare(skill_id, &req)
    }

    /// Admit a new task: refused while every turn is taken and the queue is full, or while
    /// its caller (the authenticated one, else the client's address) holds its share of live
    /// tasks or of waiting runs (nothing is stored: the client may simply come back). Returns
    /// the live task the run holds, counted against that share.
    fn admit(&self, cx: &RequestContext) -> Result<Option<LiveTask>, A2aError> {
        let rt = self.rt();
        if rt.saturated() {
            crate::observe::metrics::refused("busy");
            tracing::info!(
                refused = "busy",
                running = rt.config.max_running_skills,
                waiting = rt.config.max_waiting_skills,
                "refused a request: every turn is taken and the queue is full"
            );
            return Err(A2aError::Unavailable(format!(
                "{} skills are running and {} more are waiting; retry later",
                rt.config.max_running_skills, rt.config.max_waiting_skills
            )));
        }
        let Some(key) = share_key(cx) else {
            return Ok(None);
        };
        self.inner.shares.enter(&key).map(Some).map_err(|over| {
            crate::observe::metrics::refused("share");
            tracing::info!(refused = "share", caller = %key, ?over, "refused a request: over the caller's share");
            A2aError::Unavailable(match over {
                OverShare::LiveTasks(n) => {
                    format!("{key} has {n} live tasks, its share; retry when one ends")
                }
                OverShare::WaitingSkills(n) => format!(
                    "{key} has {n} runs waiting for a turn, its share; retry when they have run"
                ),
            })
        })
    }

    async fn new_task(
        &self,
        mut message: Message,
        metadata: Option<Metadata>,
        push: Option<TaskPushNotificationConfig>,
        stage: bool,
        cx: &RequestContext,
        owner: &Option<Owner>,
    ) -> Result<Started, A2aError> {
        let caller = cx.caller();
        let live = self.admit(cx)?;
        let skills = self.inner.skills.skills();
        let router = self.inner.router.as_deref();
        let skill = match route_new(skills, router, &message, metadata.as_ref()).await? {
            Routed::Skill(skill) => {
                check_scopes(skill, caller)?;
                skill
            }
            Routed::Reply(reply) => {
                let context_id = message.context_id.clone().unwrap_or_else(new_id);
                return Ok(Started::Message(direct_reply(reply, context_id)));
            }
        };
        let context_id = message.context_id.clone().unwrap_or_else(new_id);
        let task_id = new_id();
        message.context_id = Some(context_id.clone());
        if skill.direct_message {
            // No task behind its context, and no live task held.
            drop(live);
            let ctx = TaskContext::unbacked(
                task_id.clone(),
                context_id.clone(),
                skill.id,
                message.clone(),
            );
            let call = self.prepare(skill.id, metadata, None, &ctx, caller)?;
            // Boxed: a rare path, kept out of the size of every request's future.
            let direct = self.run_direct(
                call.future,
                message,
                (task_id, context_id),
                (skill.id, cx),
                owner,
                push,
            );
            return Box::pin(direct).await;
        }
        message.task_id = Some(task_id.clone());
        // Not staged with a push config: it is stored before the task's first event.
        let stage = stage && push.is_none();
        let (run, unstaged) = self.new_task_run(
            stage,
            (&task_id, &context_id),
            skill.id,
            owner,
            message,
            (live, cx.trace_context()),
        );
        let ctx = TaskContext::for_run(run.clone());
        let call = self.prepare(skill.id, metadata, None, &ctx, caller)?;
        if let Some(message) = unstaged {
            let trace = cx.trace_context();
            self.create_task(&task_id, &context_id, skill.id, owner, message, trace)
                .await?;
            self.attach_push(&task_id, push).await?;
        }
        crate::observe::record_task(&task_id, Some(&context_id));
        Ok(Started::Task {
            task_id,
            after: 0,
            launch: Launch::Spawn {
                run,
                future: call.future,
                emit_working: true,
            },
        })
    }

    /// The run of a new task, with its message when the caller stores the task: staged (the
    /// runtime stores the task after the skill's first poll; nobody can see it before) if
    /// `stage` and the runtime stages new tasks, else plain.
    #[inline]
    fn new_task_run(
        &self,
        stage: bool,
        (task_id, context_id): (&str, &str),
        skill_id: &'static str,
        owner: &Option<Owner>,
        message: Message,
        (live, trace): (Option<LiveTask>, Option<&TraceContext>),
    ) -> (Arc<TaskRun>, Option<Message>) {
        let rt = self.rt();
        if stage && rt.stages_new_tasks() {
            let ctx_message = message.clone();
            let task = new_task_value(task_id, context_id, message, trace);
            return (
                rt.staged_run(task, skill_id, owner.clone(), ctx_message, live, trace),
                None,
            );
        }
        let ids = (task_id.to_string(), context_id.to_string());
        let run = rt.run(
            ids,
            skill_id,
            message.clone(),
            live,
            TraceParent::Current(trace),
        );
        (run, Some(message))
    }

    /// Run a direct-message skill: its reply is the answer; if it fails instead, the failure
    /// is recorded as a task.
    async fn run_direct(
        &self,
        future: BoxFuture<'static, Ending>,
        mut message: Message,
        (task_id, context_id): (String, String),
        (skill_id, cx): (&'static str, &RequestContext),
        owner: &Option<Owner>,
        push: Option<TaskPushNotificationConfig>,
    ) -> Result<Started, A2aError> {
        let ending = self.rt().run_guarded(future, None).await;
        if let Ending::Reply(reply) = ending {
            return Ok(Started::Message(direct_reply(reply, context_id)));
        }
        message.task_id = Some(task_id.clone());
        let ids = (task_id.clone(), context_id.clone());
        let trace = cx.trace_context();
        let run = self.rt().run(
            ids,
            skill_id,
            message.clone(),
            None,
            TraceParent::Current(trace),
        );
        self.create_task(&task_id, &context_id, skill_id, owner, message, trace)
            .await?;
        self.attach_push(&task_id, push).await?;
        run.finish(ending).await;
        Ok(Started::Task {
            task_id,
            after: 0,
            launch: Launch::Nothing,
        })
    }

    async fn create_task(
        &self,
        task_id: &str,
        context_id: &str,
        skill_id: &str,
        owner: &Option<Owner>,
        message: Message,
        trace: Option<&TraceContext>,
    ) -> Result<(), A2aError> {
        let task = new_task_value(task_id, context_id, message, trace);
        self.rt()
            .store
            .create_task(task, Some(skill_id.to_string()), owner.clone())
            .await?;
        Ok(())
    }
}

pub(super) enum Started {
    Message(Message),
    /// The task, and the sequence number its stream starts after (0: a new task, from its
    /// creation snapshot).
    Task {
        task_id: String,
        after: Seq,
        launch: Launch,
    },
}

/// What a SendMessage settled to, before the task is read back.
enum Sent {
    Message(Message),
    Task {
        task_id: String,
        view: TaskView,
        owner: Option<Owner>,
        /// The task as its staged write stored it, when the caller asked to keep it (boxed:
        /// rare, and every future down a send holds this value).
        written: Option<Box<Task>>,
    },
}

/// What starting a task leaves for the caller to set going once it has subscribed to the
/// task's doorbell (so that it cannot miss the events it waits for).
#[cfg_attr(feature = "llm", allow(clippy::large_enum_variant))]
pub(super) enum Launch {
    /// Run the skill (`emit_working`: a new task, which goes SUBMITTED -> WORKING first).
    Spawn {
        run: Arc<TaskRun>,
        future: BoxFuture<'static, Ending>,
        emit_working: bool,
    },
    /// Hand the message to a skill suspended in `ask`.
    Resume {
        waiter: tokio::sync::oneshot::Sender<Message>,
        message: Message,
    },
    /// Nothing to start: the skill is running already, or everything was written (a failed
    /// direct-message skill, recorded as a task). Events may precede the caller's subscription.
    Nothing,
}

/// A new task as the first message creates it: SUBMITTED, that message its history, and the
/// trace context of the request that started it (its span's with `otel`, else the one the
/// request came in) kept in its metadata, so that later work on it stays in its trace.
fn new_task_value(
    task_id: &str,
    context_id: &str,
    message: Message,
    trace: Option<&TraceContext>,
) -> Task {
    let metadata = crate::observe::current_context(trace).map(|trace| {
        let mut m = crate::protocol::Metadata::new();
        m.insert(TRACE_METADATA_KEY.into(), trace.to_json());
        m
    });
    Task {
        id: task_id.to_string(),
        context_id: context_id.to_string(),
        status: TaskStatus::new(TaskState::Submitted),
        artifacts: Vec::new(),
        // Room for the status message a quick skill ends with.
        history: {
            let mut history = Vec::with_capacity(2);
            history.push(message);
            history
        },
        metadata,
    }
}

/// Whose share a new task of `cx` counts against: the authenticated caller, else the client's
/// address; `None` when neither is known.
fn share_key(cx: &RequestContext) -> Option<ShareKey<'_>> {
    match (cx.caller(), cx.client_addr()) {
        (Some(caller), _) => Some(ShareKey::Caller(&caller.subject)),
        (None, Some(ip)) => Some(ShareKey::address(ip)),
        (None, None) => None,
    }
}

/// PermissionDenied unless `caller` holds every scope `skill` requires. Before a task exists:
/// a caller without the right leaves nothing behind.
pub(super) fn check_scopes(
    skill: &SkillInfo,
    caller: Option<&Arc<Caller>>,
) -> Result<(), A2aError> {
    if skill.scopes.is_empty() {
        return Ok(());
    }
    let held = caller.map_or(&[][..], |c| c.scopes.as_slice());
    let missing: Vec<&str> = skill
        .scopes
        .iter()
        .copied()
        .filter(|s| !held.iter().any(|h| h == s))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    tracing::info!(
        skill = skill.id,
        ?missing,
        "refused a skill: missing scopes"
    );
    Err(A2aError::PermissionDenied(format!(
        "skill `{}` requires scope{} {}",
        skill.id,
        if missing.len() == 1 { "" } else { "s" },
        missing.join(" ")
    )))
}

fn direct_reply(mut reply: Message, context_id: String) -> Message {
    reply.role = Role::Agent;
    reply.task_id = None;
    if reply.context_id.is_none() {
        reply.context_id = Some(context_id);
    }
    reply
}

impl AgentService {
    /// Check a SendMessage request; returns its history length.
    fn validate_send(&self, req: &SendMessageRequest) -> Result<Option<usize>, A2aError> {
        let m = &req.message;
        if m.message_id.is_empty() {
            return Err(A2aError::invalid_field("message.messageId", "is required"));
        }
        if m.role != Role::User {
            return Err(A2aError::invalid_field(
                "message.role",
                format!(
                    "must be ROLE_USER for messages sent to an agent, got {}",
                    m.role.as_str()
                ),
            ));
        }
        if m.parts.is_empty() {
            return Err(A2aError::invalid_field(
                "message.parts",
                "must contain at least one part",
            ));
        }
        let hl = history_length(
            "configuration.historyLength",
            req.configuration.as_ref().and_then(|c| c.history_length),
        )?;
        if let Some(p) = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.as_ref())
        {
            if !self.inner.push {
                return Err(A2aError::PushNotificationNotSupported);
            }
            self.check_webhook("configuration.taskPushNotificationConfig.url", &p.url)?;
        }
        Ok(hl)
    }
}

/// Wait for `settled` until the context's deadline, if it has one; past it, go on as if the
/// task had settled (the caller then reads the task as it stands).
async fn until(
    cx: &RequestContext,
    settled: impl std::future::Future<Output = Result<(), A2aError>>,
) -> Result<(), A2aError> {
    match cx.deadline() {
        None => settled.await,
        Some(deadline) => tokio::time::timeout_at(deadline, settled)
            .await
            .unwrap_or(Ok(())),
    }
}
