use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::{
    EventRecord, ListQuery, Seq, StoreError, TaskManager, TaskRecord, TaskView, apply_event,
    decode_cursor, encode_cursor,
};
use crate::protocol::{
    ListTasksResponse, Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
    Timestamp,
};

/// Limits of an [`InMemoryTaskManager`].
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// let store = InMemoryTaskManager::new(InMemoryConfig {
///     max_tasks: 10_000,
///     terminal_ttl: Some(Duration::from_secs(600)),
/// });
/// # let _ = store;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InMemoryConfig {
    /// At most this many tasks are kept. When full, the oldest terminal tasks are evicted
    /// first; if every task is still live, creating a task fails.
    pub max_tasks: usize,
    /// Terminal tasks are evicted this long after their final status (`None`: kept until
    /// capacity forces eviction).
    pub terminal_ttl: Option<Duration>,
}

impl Default for InMemoryConfig {
    fn default() -> Self {
        InMemoryConfig {
            max_tasks: 100_000,
            terminal_ttl: Some(Duration::from_secs(3600)),
        }
    }
}

/// The default task manager: everything in memory, bounded by [`InMemoryConfig`].
///
/// One mutex guards the state; it is never held across an `.await`, and every operation is
/// O(log n) except ListTasks with filters, which scans the time index.
#[derive(Debug, Default)]
pub struct InMemoryTaskManager {
    config: InMemoryConfig,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// (status timestamp millis, task id): the ListTasks order, iterated newest first.
    by_time: BTreeSet<(i64, String)>,
    /// (terminal-at millis, task id): eviction order.
    terminal: BTreeSet<(i64, String)>,
}

#[derive(Debug)]
struct Entry {
    task: Task,
    skill_id: Option<String>,
    events: Vec<StreamResponse>,
    push: Vec<TaskPushNotificationConfig>,
    time_key: i64,
}

fn millis(ts: Option<Timestamp>) -> i64 {
    ts.unwrap_or_else(Timestamp::now).0.timestamp_millis()
}

impl InMemoryTaskManager {
    /// A store with these limits.
    pub fn new(config: InMemoryConfig) -> Self {
        InMemoryTaskManager {
            config,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Number of tasks held.
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether the store holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave an entry half-updated (every mutation
        // is computed first, then written), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    fn evict_expired(&mut self, ttl: Option<Duration>) {
        let Some(ttl) = ttl else { return };
        let cutoff = Timestamp::now().0.timestamp_millis() - ttl.as_millis() as i64;
        self.evict_terminal_before(cutoff + 1);
    }

    /// Evict terminal tasks that ended strictly before `cutoff` (millis); returns how many.
    fn evict_terminal_before(&mut self, cutoff: i64) -> usize {
        let mut n = 0;
        while self.terminal.first().is_some_and(|(at, _)| *at < cutoff) {
            let Some((_, id)) = self.terminal.pop_first() else {
                break;
            };
            if let Some(e) = self.tasks.remove(&id) {
                self.by_time.remove(&(e.time_key, id));
                n += 1;
            }
        }
        n
    }

    fn evict_for_capacity(&mut self, max: usize) -> Result<(), StoreError> {
        while self.tasks.len() >= max {
            let Some((_, id)) = self.terminal.pop_first() else {
                return Err(StoreError::Full(self.tasks.len()));
            };
            if let Some(e) = self.tasks.remove(&id) {
                self.by_time.remove(&(e.time_key, id));
            }
        }
        Ok(())
    }
}

#[async_trait]
impl TaskManager for InMemoryTaskManager {
    async fn create_task(&self, task: Task, skill_id: Option<String>) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        let mut inner = self.lock();
        if inner.tasks.contains_key(&task.id) {
            return Err(StoreError::TaskExists(task.id));
        }
        inner.evict_expired(self.config.terminal_ttl);
        inner.evict_for_capacity(self.config.max_tasks.max(1))?;
        let time_key = millis(task.status.timestamp);
        let id = task.id.clone();
        if task.status.state.is_terminal() {
            inner.terminal.insert((time_key, id.clone()));
        }
        inner.by_time.insert((time_key, id.clone()));
        let entry = Entry {
            events: vec![StreamResponse::Task(task.clone())],
            task,
            skill_id,
            push: Vec::new(),
            time_key,
        };
        inner.tasks.insert(id, entry);
        Ok(1)
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        // `apply_event` checks everything before it mutates, so applying in place is atomic
        // (and avoids cloning a task whose artifact grows with every chunk).
        let was_terminal = entry.task.status.state.is_terminal();
        apply_event(&mut entry.task, &event)?;
        let old_key = entry.time_key;
        let new_key = millis(entry.task.status.timestamp);
        let became_terminal = entry.task.status.state.is_terminal() && !was_terminal;
        entry.events.push(event);
        entry.time_key = new_key;
        let seq = entry.events.len() as Seq;
        if old_key != new_key {
            inner.by_time.remove(&(old_key, task_id.to_string()));
            inner.by_time.insert((new_key, task_id.to_string()));
        }
        if became_terminal {
            inner.terminal.insert((new_key, task_id.to_string()));
        }
        Ok(seq)
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        entry.task.history.push(message);
        Ok(())
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let inner = self.lock();
        Ok(inner.tasks.get(task_id).map(|e| TaskRecord {
            task: view_of(&e.task, view),
            skill_id: e.skill_id.clone(),
            last_seq: e.events.len() as Seq,
        }))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let inner = self.lock();
        let entry = inner
            .tasks
            .get(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        let start = (after as usize).min(entry.events.len());
        Ok(entry.events[start..]
            .iter()
            .take(limit)
            .enumerate()
            .map(|(i, ev)| EventRecord {
                seq: (start + i + 1) as Seq,
                event: ev.clone(),
            })
            .collect())
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        use std::ops::Bound;
        let cursor = q.page_token.as_deref().map(decode_cursor).transpose()?;
        let after_ms = q.status_timestamp_after.map(|t| t.0.timestamp_millis());
        let mut inner = self.lock();
        inner.evict_expired(self.config.terminal_ttl);
        let inner = &*inner;
        let matches = |e: &Entry| {
            q.status.is_none_or(|s| e.task.status.state == s)
                && q.context_id
                    .as_deref()
                    .is_none_or(|c| e.task.context_id == c)
        };
        // Newest first: walk the time index downwards from the cursor, stopping at the
        // timestamp floor, so a page costs O(log n + page) when nothing else filters.
        let floor = after_ms.unwrap_or(i64::MIN);
        let upper = match &cursor {
            Some((ts, id)) => Bound::Excluded((*ts, id.clone())),
            None => Bound::Unbounded,
        };
        let mut page = Vec::with_capacity(q.page_size.min(100));
        let mut has_more = false;
        for (ts, id) in inner.by_time.range((Bound::Unbounded, upper)).rev() {
            if *ts < floor {
                break;
            }
            let Some(e) = inner.tasks.get(id) else {
                continue;
            };
            if !matches(e) {
                continue;
            }
            if page.len() == q.page_size {
                has_more = true;
                break;
            }
            page.push((*ts, e));
        }
        let in_window = inner.by_time.range((floor, String::new())..);
        let total = if q.status.is_none() && q.context_id.is_none() {
            if after_ms.is_none() {
                inner.by_time.len()
            } else {
                in_window.count()
            }
        } else {
            in_window
                .filter(|(_, id)| inner.tasks.get(id).is_some_and(matches))
                .count()
        };
        let next_page_token = match (has_more, page.last()) {
            (true, Some((ts, e))) => encode_cursor(*ts, &e.task.id),
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: page
                .into_iter()
                .map(|(_, e)| view_of(&e.task, q.view))
                .collect(),
            next_page_token,
            page_size: q.page_size as i32,
            total_size: total as i32,
        })
    }

    async fn put_push_config(&self, config: TaskPushNotificationConfig) -> Result<(), StoreError> {
        let task_id = config
            .task_id
            .clone()
            .ok_or_else(|| StoreError::InvalidEvent("push config without taskId".into()))?;
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(&task_id)
            .ok_or(StoreError::TaskNotFound(task_id))?;
        match entry.push.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => *existing = config,
            None => entry.push.push(config),
        }
        Ok(())
    }

    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        let inner = self.lock();
        let entry = inner
            .tasks
            .get(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        Ok(entry
            .push
            .iter()
            .find(|c| c.id.as_deref() == Some(id))
            .cloned())
    }

    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let inner = self.lock();
        let entry = inner
            .tasks
            .get(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        Ok(entry.push.clone())
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        let before = entry.push.len();
        entry.push.retain(|c| c.id.as_deref() != Some(id));
        Ok(entry.push.len() != before)
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        Ok(self
            .lock()
            .evict_terminal_before(before.0.timestamp_millis()))
    }

    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .tasks
            .values()
            .filter(|e| states.contains(&e.task.status.state))
            .map(|e| e.task.id.clone())
            .collect())
    }
}

fn view_of(task: &Task, view: TaskView) -> Task {
    // Clone only what the view keeps.
    let history = match view.history_length {
        None => task.history.clone(),
        Some(n) => task.history[task.history.len().saturating_sub(n)..].to_vec(),
    };
    Task {
        id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        artifacts: if view.include_artifacts {
            task.artifacts.clone()
        } else {
            Vec::new()
        },
        history,
        metadata: task.metadata.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        Artifact, Part, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent,
    };
    use proptest::prelude::*;

    fn task(id: &str, state: TaskState) -> Task {
        Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus::new(state),
            artifacts: vec![],
            history: vec![Message::user_text("hi")],
            metadata: None,
        }
    }

    fn status(id: &str, state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.into(),
            context_id: "c".into(),
            status: TaskStatus::new(state),
            metadata: None,
        })
    }

    fn chunk(id: &str, text: &str, append: bool) -> StreamResponse {
        let mut artifact = Artifact::new(vec![Part::text(text)]);
        artifact.artifact_id = "a".into();
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: id.into(),
            context_id: "c".into(),
            artifact,
            append,
            last_chunk: false,
            metadata: None,
        })
    }

    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn capacity_evicts_terminal_tasks_first_and_refuses_when_all_live() {
        block(async {
            let store = InMemoryTaskManager::new(InMemoryConfig {
                max_tasks: 2,
                terminal_ttl: None,
            });
            store
                .create_task(task("done", TaskState::Completed), None)
                .await
                .unwrap();
            store
                .create_task(task("live1", TaskState::Working), None)
                .await
                .unwrap();
            store
                .create_task(task("live2", TaskState::Working), None)
                .await
                .unwrap();
            assert!(
                store
                    .get_task("done", TaskView::FULL)
                    .await
                    .unwrap()
                    .is_none(),
                "the terminal task made room"
            );
            let err = store
                .create_task(task("live3", TaskState::Working), None)
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::Full(2)));
            assert_eq!(store.len(), 2);
        });
    }

    #[test]
    fn ttl_evicts_finished_tasks() {
        block(async {
            let store = InMemoryTaskManager::new(InMemoryConfig {
                max_tasks: 10,
                terminal_ttl: Some(Duration::from_millis(20)),
            });
            store
                .create_task(task("t", TaskState::Working), None)
                .await
                .unwrap();
            store
                .append_event("t", status("t", TaskState::Completed))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(40)).await;
            store
                .create_task(task("u", TaskState::Working), None)
                .await
                .unwrap();
            assert!(store.get_task("t", TaskView::FULL).await.unwrap().is_none());
            assert!(
                store.get_task("u", TaskView::FULL).await.unwrap().is_some(),
                "live tasks are never evicted"
            );
        });
    }

    #[test]
    fn purge_removes_only_old_terminal_tasks() {
        block(async {
            let store = InMemoryTaskManager::default();
            store
                .create_task(task("old", TaskState::Working), None)
                .await
                .unwrap();
            store
                .append_event("old", status("old", TaskState::Failed))
                .await
                .unwrap();
            store
                .create_task(task("live", TaskState::Working), None)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
            let n = store.purge_terminal_before(Timestamp::now()).await.unwrap();
            assert_eq!(n, 1);
            assert_eq!(store.len(), 1);
        });
    }

    #[derive(Debug, Clone)]
    enum Op {
        Status(TaskState),
        Chunk(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            prop::sample::select(TaskState::ALL.to_vec()).prop_map(Op::Status),
            any::<bool>().prop_map(Op::Chunk),
        ]
    }

    proptest! {
        /// Whatever is appended, the log is dense and ordered, rejected events change nothing,
        /// and every suffix read returns exactly the tail of the log.
        #[test]
        fn event_log_is_dense_ordered_and_atomic(ops in prop::collection::vec(op(), 1..30)) {
            block(async {
                let store = InMemoryTaskManager::default();
                store.create_task(task("t", TaskState::Submitted), None).await.unwrap();
                let mut expected_seq = 1;
                for (i, op) in ops.iter().enumerate() {
                    let before = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
                    let ev = match op {
                        Op::Status(s) => status("t", *s),
                        Op::Chunk(append) => chunk("t", &format!("p{i}"), *append),
                    };
                    match store.append_event("t", ev).await {
                        Ok(seq) => {
                            expected_seq += 1;
                            prop_assert_eq!(seq, expected_seq);
                            prop_assert!(!before.task.status.state.is_terminal());
                        }
                        Err(_) => {
                            let after = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
                            prop_assert_eq!(after, before, "a rejected event changes nothing");
                        }
                    }
                }
                let log = store.events_after("t", 0, usize::MAX).await.unwrap();
                prop_assert_eq!(log.len() as u64, expected_seq);
                for (i, rec) in log.iter().enumerate() {
                    prop_assert_eq!(rec.seq, i as u64 + 1);
                    let tail = store.events_after("t", rec.seq, usize::MAX).await.unwrap();
                    prop_assert_eq!(&tail[..], &log[i + 1..]);
                }
                Ok(())
            })?;
        }
    }
}
