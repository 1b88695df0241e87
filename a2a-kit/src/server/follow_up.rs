//! Follow-ups: a message to a task that exists (a reply to its question, or more input while
//! it works), and a reply another replica handed over, continued here.

use std::sync::Arc;

use crate::observe::TraceContext;
use crate::runtime::TraceParent;

use futures::future::BoxFuture;

use super::AgentService;
use super::send::{Launch, Started, check_scopes};
use crate::auth::Caller;
use crate::error::A2aError;
use crate::protocol::{Message, Metadata, Task, TaskPushNotificationConfig, TaskState};
use crate::runtime::{Ending, TaskRun};
use crate::skill::{SkillInfo, TaskContext, continued_skill};
use crate::store::{Owner, ReplyRoute, TaskRecord, TaskView};

impl AgentService {
    pub(super) async fn continue_task(
        &self,
        task_id: String,
        mut message: Message,
        metadata: Option<Metadata>,
        push: Option<TaskPushNotificationConfig>,
        caller: Option<&Arc<Caller>>,
        owner: &Option<Owner>,
    ) -> Result<Started, A2aError> {
        crate::observe::record_task(&task_id, None);
        let rec = self.owned_task(&task_id, TaskView::FULL, owner).await?;
        check_follow_up(&rec.task, &mut message)?;
        let skill_id = rec.skill_id.as_deref().unwrap_or_default();
        // Scopes are checked again: the caller's may have shrunk since the task began.
        if let Some(skill) = self.inner.skills.skills().iter().find(|s| s.id == skill_id) {
            check_scopes(skill, caller)?;
        }
        if rec.task.status.state.is_interrupted() {
            return self
                .answer_interrupted(task_id, rec, message, metadata, push, caller)
                .await;
        }
        // SUBMITTED or WORKING: keep the message; the running skill can read it from history.
        self.attach_push(&task_id, push).await?;
        self.rt().store.add_message(&task_id, message).await?;
        Ok(Started::Task {
            task_id,
            after: rec.last_seq,
            launch: Launch::Nothing,
        })
    }

    /// A reply to an interrupted task: handed to the skill waiting for it in `ask`, here or on
    /// a replica sharing the store, else the task's skill is invoked again with the whole
    /// history.
    async fn answer_interrupted(
        &self,
        task_id: String,
        rec: TaskRecord,
        message: Message,
        metadata: Option<Metadata>,
        push: Option<TaskPushNotificationConfig>,
        caller: Option<&Arc<Caller>>,
    ) -> Result<Started, A2aError> {
        let rt = self.rt();
        let (context_id, after) = (&rec.task.context_id, rec.last_seq);
        // The inline push config first: one refused (the task has as many as it may) refuses
        // the reply before a waiting skill is taken from its `ask`.
        self.attach_push(&task_id, push).await?;
        if let Some(waiter) = rt.take_waiter(&task_id) {
            // A skill is suspended in `ask`: hand it the reply.
            rt.store.add_message(&task_id, message.clone()).await?;
            rt.emit_status_for(&task_id, context_id, TaskState::Working, None)
                .await?;
            return Ok(Started::Task {
                task_id,
                after,
                launch: Launch::Resume { waiter, message },
            });
        }
        // On replicas sharing a store, the skill may wait in `ask` on another one: the
        // reply goes there, and this request follows the task from here.
        let route = match rt.store.cluster() {
            Some(cluster) => cluster.route_reply(&task_id, &message).await?,
            None => ReplyRoute::Here,
        };
        if route == ReplyRoute::HandedOver {
            return Ok(Started::Task {
                task_id,
                after,
                launch: Launch::Nothing,
            });
        }
        // Nobody waits for the reply: invoke the task's skill again with the whole history.
        let skill_id = rec.skill_id.as_deref().unwrap_or_default();
        let skill = continued_skill(self.inner.skills.skills(), &task_id, skill_id)?;
        let mut history = rec.task.history;
        history.push(message.clone());
        let (run, future) = self.rerun(
            &rec.task.id,
            context_id,
            rec.task.status.message.as_ref(),
            history,
            skill,
            &message,
            metadata,
            caller,
            TraceContext::from_metadata(rec.task.metadata.as_ref()).as_ref(),
        )?;
        rt.store.add_message(&task_id, message).await?;
        rt.emit_status_for(&task_id, context_id, TaskState::Working, None)
            .await?;
        Ok(Started::Task {
            task_id,
            after,
            launch: Launch::Spawn {
                run,
                future,
                emit_working: false,
            },
        })
    }

    /// The run of a task's skill invoked again for a reply nobody waits for, with the whole
    /// `history` (ending with `reply`). A skill that asked in `ctx.ask` (its process stopped
    /// meanwhile) runs again from the task's first message, and each `ask` it repeats returns
    /// the reply recorded for it; a skill that returned INPUT_REQUIRED takes the reply as its
    /// message.
    #[allow(clippy::too_many_arguments)]
    fn rerun(
        &self,
        task_id: &str,
        context_id: &str,
        question: Option<&Message>,
        history: Vec<Message>,
        skill: &SkillInfo,
        reply: &Message,
        metadata: Option<Metadata>,
        caller: Option<&Arc<Caller>>,
        trace: Option<&TraceContext>,
    ) -> Result<(Arc<TaskRun>, BoxFuture<'static, Ending>), A2aError> {
        let rt = self.rt();
        let replay = crate::runtime::recorded_answers(question, &history);
        let first = replay.as_ref().map_or(reply, |(first, _)| first).clone();
        let live = rt.unpark(task_id);
        // In the task's trace when it kept one (it began in another request, maybe another
        // process), else in this request's.
        let parent = match trace {
            Some(stored) => TraceParent::Stored(stored),
            None => TraceParent::Current(None),
        };
        let ids = (task_id.to_string(), context_id.to_string());
        let run = rt.run(ids, skill.id, first, live, parent);
        if let Some((_, answers)) = replay {
            run.replay_answers(answers);
        }
        let ctx = TaskContext::for_run(run.clone());
        let call = self.prepare(skill.id, metadata, Some(history), &ctx, caller)?;
        Ok((run, call.future))
    }

    /// Continue a task whose reply this replica was handed with no skill waiting for it here
    /// (a replica sharing the store took it over from one that died, or the skill that asked
    /// stopped): the reply is the task's last message. Exactly one replica is handed a reply
    /// (the store decides under the task's lock), so it is continued once. The caller who
    /// replied is not known here: a skill that reads `Caller` sees none.
    pub(super) async fn continue_handed_reply(&self, task_id: &str) {
        let rt = self.rt();
        let rec = match rt.store.get_task(task_id, TaskView::FULL).await {
            Ok(Some(rec)) if rec.task.status.state.is_interrupted() => rec,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(task_id, error = %e, "could not read a reply handed over");
                return;
            }
        };
        let Some(reply) = rec.task.history.last().cloned() else {
            return;
        };
        let context_id = rec.task.context_id.clone();
        let skill_id = rec.skill_id.clone().unwrap_or_default();
        let started =
            continued_skill(self.inner.skills.skills(), task_id, &skill_id).and_then(|skill| {
                self.rerun(
                    task_id,
                    &context_id,
                    rec.task.status.message.as_ref(),
                    rec.task.history.clone(),
                    skill,
                    &reply,
                    None,
                    None,
                    TraceContext::from_metadata(rec.task.metadata.as_ref()).as_ref(),
                )
            });
        let (state, message) = match &started {
            Ok(_) => (TaskState::Working, None),
            Err(e) => (
                TaskState::Failed,
                Some(
                    Message::agent_text(format!("could not continue the task: {e}"))
                        .with_task_id(task_id)
                        .with_context_id(&context_id),
                ),
            ),
        };
        if let Err(e) = rt
            .emit_status_for(task_id, &context_id, state, message)
            .await
        {
            tracing::warn!(task_id, error = %e, "could not continue a reply handed over");
            return;
        }
        match started {
            Ok((run, future)) => {
                tracing::info!(task_id, skill = skill_id, "continuing a reply handed over");
                rt.spawn(run, future, false);
            }
            Err(e) => {
                tracing::warn!(task_id, error = %e, "ended FAILED a task whose reply could not be continued")
            }
        }
    }
}

/// Check a message sent to an existing task: refused if the task is terminal or belongs to
/// another context than the message names; the message takes the task's context.
fn check_follow_up(task: &Task, message: &mut Message) -> Result<(), A2aError> {
    let (task_id, state) = (&task.id, task.status.state);
    if state.is_terminal() {
        return Err(A2aError::unsupported(format!(
            "task {task_id} is {} and cannot take more messages; start a new task in context {} \
             (list the old one in referenceTaskIds)",
            state.as_str(),
            task.context_id
        )));
    }
    match message.context_id.as_deref() {
        Some(c) if c != task.context_id => Err(A2aError::invalid_field(
            "message.contextId",
            format!(
                "task {task_id} belongs to context {}, not {c}",
                task.context_id
            ),
        )),
        _ => {
            message.context_id = Some(task.context_id.clone());
            Ok(())
        }
    }
}
