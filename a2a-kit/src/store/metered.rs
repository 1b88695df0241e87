//! A task store whose operations are timed (`a2a.store.operation.duration`): what a service
//! built while the kit's metrics are on uses in front of its store.

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    ClusterStore, EventRecord, ListQuery, Owner, PushConfigStore, PushOutbox, RemoteTaskStore, Seq,
    StoreError, TaskManager, TaskRecord, TaskView,
};
use crate::observe::metrics::{start, store_op};
use crate::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};

/// `inner`, timed.
pub(crate) struct Metered(pub(crate) Arc<dyn TaskManager>);

/// Time `$op` as the operation `$name`.
macro_rules! timed {
    ($name:literal, $op:expr) => {{
        let started = start();
        let result = $op.await;
        store_op(started, $name);
        result
    }};
}

#[async_trait]
impl TaskManager for Metered {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        timed!("create_task", self.0.create_task(task, skill_id, owner))
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        timed!("append_event", self.0.append_event(task_id, event))
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        timed!("add_message", self.0.add_message(task_id, message))
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        timed!("get_task", self.0.get_task(task_id, view))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        timed!("events_after", self.0.events_after(task_id, after, limit))
    }

    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        timed!("list_tasks", self.0.list_tasks(query))
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        timed!(
            "purge_terminal_before",
            self.0.purge_terminal_before(before)
        )
    }

    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        timed!("task_ids_in_states", self.0.task_ids_in_states(states))
    }

    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        timed!(
            "create_task_with_events",
            self.0
                .create_task_with_events(task, skill_id, owner, events)
        )
    }

    async fn create_task_with_released_log(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        timed!(
            "create_task_with_events",
            self.0
                .create_task_with_released_log(task, skill_id, owner, events)
        )
    }

    async fn write_task_json(
        &self,
        task_id: &str,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        timed!("get_task", self.0.write_task_json(task_id, view, out))
    }

    fn release_log(&self, task_id: &str) {
        self.0.release_log(task_id)
    }

    fn is_durable(&self) -> bool {
        self.0.is_durable()
    }

    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        self.0.push_configs()
    }

    fn push_outbox(&self) -> Option<&dyn PushOutbox> {
        self.0.push_outbox()
    }

    fn cluster(&self) -> Option<&dyn ClusterStore> {
        self.0.cluster()
    }

    fn remote_tasks(&self) -> Option<&dyn RemoteTaskStore> {
        self.0.remote_tasks()
    }
}
