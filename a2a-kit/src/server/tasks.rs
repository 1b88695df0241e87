//! GetTask, ListTasks, CancelTask and SubscribeToTask, and the service's lifecycle: recovery
//! of tasks a previous process left running, and graceful shutdown.

use std::time::Duration;

use futures::StreamExt;

use super::{AgentService, EventStream, history_length, require_id};
use crate::error::A2aError;
use crate::protocol::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Message, Part,
    SubscribeToTaskRequest, Task, TaskState,
};
use crate::request::RequestContext;
use crate::store::{ListQuery, Seq, StoreError, TaskView};

impl AgentService {
    // ----- Tasks -----

    /// GetTask for the context's caller: another owner's task is not found (see
    /// [`TaskOwnership`](super::TaskOwnership)). Without a caller, only tasks created without
    /// one (in the request's tenant) are found.
    pub async fn get_task(
        &self,
        cx: &RequestContext,
        req: GetTaskRequest,
    ) -> Result<Task, A2aError> {
        require_id("id", &req.id)?;
        crate::observe::record_task(&req.id, None);
        let history_length = history_length("historyLength", req.history_length)?;
        let owner = self.owner(cx, req.tenant.as_deref())?;
        self.read_task(
            &req.id,
            TaskView {
                history_length,
                include_artifacts: true,
            },
            &owner,
        )
        .await
    }

    /// ListTasks for the context's caller: its own tasks in the request's tenant, never another owner's.
    pub async fn list_tasks(
        &self,
        cx: &RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        let page_size = match req.page_size {
            None | Some(0) => 50,
            Some(n @ 1..=100) => n as usize,
            Some(n) => {
                return Err(A2aError::invalid_field(
                    "pageSize",
                    format!("must be between 1 and 100, got {n}"),
                ));
            }
        };
        let query = ListQuery {
            owner: self.owner(cx, req.tenant.as_deref())?,
            context_id: req.context_id.filter(|c| !c.is_empty()),
            status: req.status.filter(|s| *s != TaskState::Unspecified),
            status_timestamp_after: req.status_timestamp_after,
            page_size,
            page_token: req.page_token.filter(|t| !t.is_empty()),
            view: TaskView {
                history_length: history_length("historyLength", req.history_length)?,
                include_artifacts: req.include_artifacts.unwrap_or(false),
            },
        };
        Ok(self.rt().store.list_tasks(&query).await?)
    }

    /// CancelTask for the context's caller (another owner's task is not found): CANCELED is recorded at
    /// once (so a late COMPLETED can never overwrite it), the skill's token fires, and a skill
    /// that ignores it is aborted after the grace period. Canceling a terminal task
    /// (including a canceled one) is TaskNotCancelableError.
    pub async fn cancel_task(
        &self,
        cx: &RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError> {
        require_id("id", &req.id)?;
        crate::observe::record_task(&req.id, None);
        let rt = self.rt();
        let owner = self.owner(cx, req.tenant.as_deref())?;
        let rec = self.owned_task(&req.id, TaskView::FULL, &owner).await?;
        if rec.task.status.state.is_terminal() {
            return Err(A2aError::TaskNotCancelable {
                task_id: req.id,
                state: rec.task.status.state,
            });
        }
        match rt
            .emit_status_for(&req.id, &rec.task.context_id, TaskState::Canceled, None)
            .await
        {
            Ok(_) => {}
            Err(StoreError::IllegalTransition(t)) => {
                return Err(A2aError::TaskNotCancelable {
                    task_id: req.id,
                    state: t.from,
                });
            }
            Err(e) => return Err(e.into()),
        }
        rt.signal_cancel(&req.id);
        self.read_task(&req.id, TaskView::FULL, &owner).await
    }

    /// SubscribeToTask for the context's caller (another owner's task is not found): a Task snapshot,
    /// then the live tail with no gap and no duplicate. With `last_event_id` (SSE
    /// `Last-Event-ID`), replays the events after it instead, even when the task has ended
    /// meanwhile. A fresh subscription to a terminal task is UnsupportedOperationError.
    pub async fn subscribe_to_task(
        &self,
        cx: &RequestContext,
        req: SubscribeToTaskRequest,
        last_event_id: Option<Seq>,
    ) -> Result<EventStream, A2aError> {
        crate::observe::record_task(&req.id, None);
        let stream = self.subscribe_uncounted(cx, req, last_event_id).await?;
        Ok(super::counted(stream, "SubscribeToTask"))
    }

    async fn subscribe_uncounted(
        &self,
        cx: &RequestContext,
        req: SubscribeToTaskRequest,
        last_event_id: Option<Seq>,
    ) -> Result<EventStream, A2aError> {
        if !self.inner.streaming {
            return Err(A2aError::unsupported(
                "streaming is not supported by this agent",
            ));
        }
        require_id("id", &req.id)?;
        let owner = self.owner(cx, req.tenant.as_deref())?;
        let rec = self
            .owned_task(
                &req.id,
                TaskView {
                    history_length: Some(0),
                    include_artifacts: false,
                },
                &owner,
            )
            .await?;
        let terminal = rec.task.status.state.is_terminal();
        match last_event_id {
            None if terminal => Err(A2aError::unsupported(format!(
                "task {} is {}; there is nothing to subscribe to (use GetTask)",
                req.id,
                rec.task.status.state.as_str()
            ))),
            None => {
                let sub = self.rt().subscribe(&req.id);
                self.snapshot_stream(sub, &req.id).await
            }
            Some(seen) if terminal && seen >= rec.last_seq => Ok(futures::stream::empty().boxed()),
            Some(seen) => Ok(self.log_stream(self.rt().subscribe(&req.id), seen)),
        }
    }

    // ----- Lifecycle -----

    /// End the tasks a previous process left SUBMITTED or WORKING (it crashed or was killed):
    /// each ends FAILED with a "server restarted" status message, so no task stays WORKING.
    /// Call it once at start-up with a durable store (`a2a_kit_axum::serve_service` does); returns how many.
    /// With a store several processes share ([`TaskManager::cluster`](crate::store::TaskManager::cluster)),
    /// tasks in progress may be running on another replica: none is ended.
    pub async fn recover(&self) -> Result<usize, A2aError> {
        let rt = self.rt();
        if rt.store.cluster().is_some() {
            return Ok(0);
        }
        let stale = rt
            .store
            .task_ids_in_states(&[TaskState::Submitted, TaskState::Working])
            .await?;
        let mut n = 0;
        for task_id in stale {
            if rt.running_ids().contains(&task_id)
                || !self
                    .fail_task(&task_id, "the server restarted while the task was running")
                    .await?
            {
                continue;
            }
            n += 1;
        }
        Ok(n)
    }

    /// Let working tasks finish for up to `deadline`, then end the rest FAILED with a reason.
    /// No task is left WORKING. A task waiting for the user's reply (`ask`) is not waited
    /// for; with a durable store it is left waiting, for the next process to continue when the
    /// reply comes (the stateless way: its skill runs again with the history); with a store
    /// in memory it ends FAILED like the others.
    pub async fn shutdown(&self, deadline: Duration) {
        let rt = self.rt();
        let until = tokio::time::Instant::now() + deadline;
        while !rt.working_ids().is_empty() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let durable = rt.store.is_durable();
        let working = rt.working_ids();
        for task_id in rt.running_ids() {
            if durable && !working.contains(&task_id) {
                // Another replica may take the reply from now on.
                if let Some(cluster) = rt.store.cluster() {
                    let _ = cluster.release(&task_id).await;
                }
                continue;
            }
            let _ = self
                .fail_task(&task_id, "the server shut down before the task finished")
                .await;
            rt.signal_cancel(&task_id);
        }
    }

    /// End `task_id` FAILED with `reason` as its status message; `false` if the task is gone
    /// or had ended meanwhile.
    async fn fail_task(&self, task_id: &str, reason: &str) -> Result<bool, A2aError> {
        let rt = self.rt();
        let view = TaskView {
            history_length: Some(0),
            include_artifacts: false,
        };
        let Some(rec) = rt.store.get_task(task_id, view).await? else {
            return Ok(false);
        };
        let context_id = &rec.task.context_id;
        let msg = Message::agent(vec![Part::text(reason)])
            .with_task_id(task_id)
            .with_context_id(context_id);
        Ok(rt
            .emit_status_for(task_id, context_id, TaskState::Failed, Some(msg))
            .await
            .is_ok())
    }
}
