use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

mod entry;

use entry::*;

use super::{
    EventRecord, ListQuery, Owner, Seq, StoreError, TaskManager, TaskRecord, TaskView,
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
///
/// **Memory.** A retained finished task costs about its wire size: when a task finishes it
/// is kept as its ProtoJSON bytes, which also answer GetTask and a blocking SendMessage
/// without re-serializing (a typed read parses them). Its event log is kept too when every
/// event can be rebuilt from the finished task (a quick task: created, WORKING, one whole
/// artifact, the end), as a few bytes per event, so a `Last-Event-ID` replay of it is exact
/// for as long as the task is retained. Other logs (a streamed artifact, events with
/// metadata) are kept for the most recently finished tasks (see
/// [`hot_finished`](Self::hot_finished)) and dropped once the runtime says no reader needs
/// them ([`TaskManager::release_log`]); a reader that asks for those events later gets one
/// `Task` snapshot event instead (see [`TaskManager::events_after`]). Ids are shared by the
/// map and both indexes.
#[derive(Debug)]
pub struct InMemoryTaskManager {
    config: InMemoryConfig,
    hot_finished: usize,
    inner: Mutex<Inner>,
}

impl Default for InMemoryTaskManager {
    fn default() -> Self {
        InMemoryTaskManager::new(InMemoryConfig::default())
    }
}

/// How many finished tasks keep their event logs for replay, by default.
///
/// ```
/// use a2a_kit::store::{DEFAULT_HOT_FINISHED, InMemoryTaskManager};
/// let store = InMemoryTaskManager::default().hot_finished(DEFAULT_HOT_FINISHED * 4);
/// # let _ = store;
/// ```
pub const DEFAULT_HOT_FINISHED: usize = 1024;

#[derive(Debug, Default)]
struct Inner {
    /// Boxed: the table of a full store is large and cold, and an insert or a removal then
    /// touches one small bucket, not a whole entry's cache lines.
    tasks: crate::fast_map::FastMap<Arc<str>, Box<Entry>>,
    /// (status timestamp millis, task id): the ListTasks order, iterated newest first.
    by_time: BTreeSet<(i64, Arc<str>)>,
    /// Terminal tasks, oldest end first: eviction order.
    terminal: EvictionOrder,
    /// The most recently finished tasks, oldest first; the one that falls out is compacted.
    finished: VecDeque<Arc<str>>,
    /// How many tasks have an owner (none: ListTasks of unowned tasks counts them all).
    owned: usize,
    /// Skill ids seen (at most [`MAX_INTERNED_SKILL_IDS`]).
    skill_ids: std::collections::HashSet<Arc<str>, foldhash::fast::RandomState>,
}

/// Terminal tasks in eviction order, oldest end first. Tasks nearly always end in clock order
/// (the runtime stamps their statuses), so they queue up at the back, at no cost; one stamped
/// earlier than the last queued (a status written with a past timestamp) waits in a sorted set.
/// Among equal times the one that ended first goes first.
#[derive(Debug, Default)]
struct EvictionOrder {
    in_order: VecDeque<(i64, Arc<str>)>,
    early: BTreeSet<(i64, Arc<str>)>,
}

impl EvictionOrder {
    fn insert(&mut self, at: i64, id: Arc<str>) {
        if self.in_order.back().is_none_or(|(last, _)| *last <= at) {
            self.in_order.push_back((at, id));
        } else {
            self.early.insert((at, id));
        }
    }

    /// The oldest task, if it ended before `cutoff`.
    fn pop_before(&mut self, cutoff: i64) -> Option<Arc<str>> {
        let queued = self.in_order.front().map(|(at, _)| *at);
        let early = self.early.first().map(|(at, _)| *at);
        match (queued, early) {
            (Some(q), e) if q < cutoff && e.is_none_or(|e| q <= e) => {
                self.in_order.pop_front().map(|(_, id)| id)
            }
            (_, Some(e)) if e < cutoff => self.early.pop_first().map(|(_, id)| id),
            _ => None,
        }
    }

    /// The oldest task.
    fn pop_oldest(&mut self) -> Option<Arc<str>> {
        self.pop_before(i64::MAX)
            .or_else(|| self.in_order.pop_front().map(|(_, id)| id))
            .or_else(|| self.early.pop_first().map(|(_, id)| id))
    }
}

impl InMemoryTaskManager {
    /// A store with these limits.
    pub fn new(config: InMemoryConfig) -> Self {
        InMemoryTaskManager {
            config,
            hot_finished: DEFAULT_HOT_FINISHED,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Keep the event logs of the `n` most recently finished tasks (default
    /// [`DEFAULT_HOT_FINISHED`]) even when no reader needs them, so `Last-Event-ID` replays
    /// of them are exact. The cost is bounded: `n` logs, not a share of every retained task.
    /// (Logs that can be rebuilt from their finished task are kept anyway, at a few bytes.)
    ///
    /// ```
    /// use a2a_kit::store::InMemoryTaskManager;
    /// let store = InMemoryTaskManager::default().hot_finished(0); // drop released logs at once
    /// # let _ = store;
    /// ```
    pub fn hot_finished(mut self, n: usize) -> Self {
        self.hot_finished = n;
        self
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
        // Millis since the epoch, without a calendar date: this runs on every create.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let cutoff = now.saturating_sub(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        self.evict_terminal_before(cutoff.saturating_add(1));
    }

    /// Evict terminal tasks that ended strictly before `cutoff` (millis); returns how many.
    fn evict_terminal_before(&mut self, cutoff: i64) -> usize {
        let mut n = 0;
        while let Some(id) = self.terminal.pop_before(cutoff) {
            if let Some(e) = self.tasks.remove(&id) {
                self.forget(&e);
                n += 1;
            }
        }
        n
    }

    fn evict_for_capacity(&mut self, max: usize) -> Result<(), StoreError> {
        while self.tasks.len() >= max {
            let Some(id) = self.terminal.pop_oldest() else {
                return Err(StoreError::Full(self.tasks.len()));
            };
            if let Some(e) = self.tasks.remove(&id) {
                self.forget(&e);
            }
        }
        Ok(())
    }

    /// Drop a removed entry from the indexes.
    fn forget(&mut self, e: &Entry) {
        self.by_time.remove(&(e.time_key, e.id.clone()));
        if e.owner.is_some() {
            self.owned -= 1;
        }
    }
}

/// A bound on interned skill ids, in case a caller invents one per task.
const MAX_INTERNED_SKILL_IDS: usize = 1024;

impl Inner {
    fn intern_skill_id(&mut self, id: String) -> Arc<str> {
        if let Some(known) = self.skill_ids.get(id.as_str()) {
            return known.clone();
        }
        let id: Arc<str> = id.into();
        if self.skill_ids.len() < MAX_INTERNED_SKILL_IDS {
            self.skill_ids.insert(id.clone());
        }
        id
    }

    /// A task finished ([`Entry::finished`]): it joins the window of kept logs, and the task
    /// that falls out of it loses its log if no reader needs it.
    fn joined_window(&mut self, id: Arc<str>, window: usize) {
        if window == 0 {
            return;
        }
        self.finished.push_back(id);
        while self.finished.len() > window {
            let Some(old) = self.finished.pop_front() else {
                break;
            };
            if let Some(e) = self.tasks.get_mut(&old) {
                e.hot = false;
                if e.log_released {
                    e.events = Vec::new();
                }
            }
        }
    }
}

fn not_found(task_id: &str) -> StoreError {
    StoreError::TaskNotFound(task_id.to_string())
}

#[async_trait]
impl TaskManager for InMemoryTaskManager {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        self.create_task_with_events(task, skill_id, owner, Vec::new())
            .await
    }

    async fn create_task_with_events(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
        events: Vec<StreamResponse>,
    ) -> Result<Seq, StoreError> {
        crate::task::TaskStateMachine::check_initial(task.status.state)?;
        let window = self.hot_finished;
        // The entry is nobody else's until it is inserted: built and written outside the lock,
        // and dropped whole if an event is refused.
        let id: Arc<str> = Arc::from(task.id.as_str());
        let mut entry = Box::new(Entry::new(id.clone(), task, events.len()));
        if entry.body.state().is_terminal() {
            entry.finished(window);
        }
        for event in events {
            entry.append(event, window)?;
        }
        let terminal = entry.body.state().is_terminal();
        let kept_as_steps = !entry.steps.is_empty();
        let (seq, time_key) = (entry.last_seq, entry.time_key);
        let mut inner = self.lock();
        if inner.tasks.contains_key(&id) {
            return Err(StoreError::TaskExists(id.to_string()));
        }
        inner.evict_expired(self.config.terminal_ttl);
        inner.evict_for_capacity(self.config.max_tasks.max(1))?;
        entry.skill_id = skill_id.map(|s| inner.intern_skill_id(s));
        if owner.is_some() {
            inner.owned += 1;
        }
        entry.owner = owner;
        inner.tasks.insert(id.clone(), entry);
        inner.by_time.insert((time_key, id.clone()));
        if terminal {
            inner.terminal.insert(time_key, id.clone());
            // A log kept as steps stays with its task: nothing to drop later.
            if !kept_as_steps {
                inner.joined_window(id, window);
            }
        }
        Ok(seq)
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| not_found(task_id))?;
        let old_key = entry.time_key;
        let became_terminal = entry.append(event, self.hot_finished)?;
        let (seq, new_key) = (entry.last_seq, entry.time_key);
        if old_key == new_key && !became_terminal {
            return Ok(seq);
        }
        let id = entry.id.clone();
        let kept_as_steps = !entry.steps.is_empty();
        if old_key != new_key {
            inner.by_time.remove(&(old_key, id.clone()));
            inner.by_time.insert((new_key, id.clone()));
        }
        if became_terminal {
            inner.terminal.insert(new_key, id.clone());
            if !kept_as_steps {
                inner.joined_window(id, self.hot_finished);
            }
        }
        Ok(seq)
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| not_found(task_id))?;
        let compact = matches!(entry.body, Body::Compact { .. });
        entry.live()?.task.history.push(message);
        if compact {
            entry.body.compact();
        }
        Ok(())
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let inner = self.lock();
        let Some(e) = inner.tasks.get(task_id) else {
            return Ok(None);
        };
        Ok(Some(TaskRecord {
            task: e.view(view)?,
            skill_id: e.skill_id.as_deref().map(str::to_string),
            owner: e.owner.clone(),
            last_seq: e.last_seq,
        }))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let inner = self.lock();
        let entry = inner.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        if entry.events.is_empty() && entry.steps.is_empty() {
            // The log was released: the final snapshot stands for the events after `after`.
            return Ok(if after < entry.last_seq && limit > 0 {
                vec![EventRecord {
                    seq: entry.last_seq,
                    event: StreamResponse::Task(entry.view(TaskView::FULL)?),
                }]
            } else {
                Vec::new()
            });
        }
        // A log kept as steps is read as the entries they stand for.
        let from_steps: Vec<Logged>;
        let log: &[Logged] = if entry.steps.is_empty() {
            &entry.events
        } else {
            from_steps = entry.steps.iter().map(Step::logged).collect();
            &from_steps
        };
        let start = (after as usize).min(log.len());
        let page = &log[start..(start.saturating_add(limit)).min(log.len())];
        // Entries that share the task's messages are rebuilt from it (parsed once if compact).
        let inflated;
        let task = match &entry.body {
            _ if !page.iter().any(Logged::needs_task) => None,
            Body::Live(s) => Some(&s.task),
            compact => {
                inflated = compact.inflate()?;
                Some(&inflated.task)
            }
        };
        Ok(page
            .iter()
            .enumerate()
            .map(|(i, ev)| EventRecord {
                seq: (start + i + 1) as Seq,
                event: ev.event((&entry.id, entry.body.context_id()), task),
            })
            .collect())
    }

    async fn write_task_json(
        &self,
        task_id: &str,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        let inner = self.lock();
        let Some(e) = inner.tasks.get(task_id) else {
            return Ok(false);
        };
        match &e.body {
            Body::Live(s) => s.write_view_json(view, out)?,
            compact if view == TaskView::FULL && compact.write_full_json(out) => {}
            compact => compact.inflate()?.write_view_json(view, out)?,
        }
        Ok(true)
    }

    fn release_log(&self, task_id: &str) {
        let mut inner = self.lock();
        if let Some(e) = inner.tasks.get_mut(task_id) {
            if e.body.state().is_terminal() {
                e.log_released = true;
                // Past the hot window already: nothing keeps the log any more.
                if !e.hot {
                    e.events = Vec::new();
                }
            }
        }
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        use std::ops::Bound;
        let cursor = q.page_token.as_deref().map(decode_cursor).transpose()?;
        let after_ms = q.status_timestamp_after.map(|t| t.0.timestamp_millis());
        let mut inner = self.lock();
        inner.evict_expired(self.config.terminal_ttl);
        let inner = &*inner;
        let matches = |e: &Entry| {
            e.owner == q.owner
                && q.status.is_none_or(|s| e.body.state() == s)
                && q.context_id
                    .as_deref()
                    .is_none_or(|c| e.body.context_id() == c)
        };
        // Newest first: walk the time index downwards from the cursor, stopping at the
        // timestamp floor, so a page costs O(log n + page) when nothing else filters.
        let floor = after_ms.unwrap_or(i64::MIN);
        let upper = match &cursor {
            Some((ts, id)) => Bound::Excluded((*ts, Arc::<str>::from(id.as_str()))),
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
        let in_window = inner.by_time.range((floor, Arc::<str>::from(""))..);
        let every_task_matches = q.owner.is_none() && inner.owned == 0;
        let total = if every_task_matches && q.status.is_none() && q.context_id.is_none() {
            if after_ms.is_none() {
                inner.by_time.len()
            } else {
                in_window.count()
            }
        } else {
            in_window
                .filter(|(_, id)| inner.tasks.get(id).is_some_and(|e| matches(e)))
                .count()
        };
        let next_page_token = match (has_more, page.last()) {
            (true, Some((ts, e))) => encode_cursor(*ts, &e.id),
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: page
                .into_iter()
                .map(|(_, e)| e.view(q.view))
                .collect::<Result<_, _>>()?,
            next_page_token,
            page_size: q.page_size as i32,
            total_size: total as i32,
        })
    }

    async fn put_push_config(&self, config: TaskPushNotificationConfig) -> Result<(), StoreError> {
        let task_id = super::config_task_id(&config)?;
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id.as_str())
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
        let entry = inner.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
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
        let entry = inner.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        Ok(entry.push.clone())
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| not_found(task_id))?;
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
            .filter(|e| states.contains(&e.body.state()))
            .map(|e| e.id.to_string())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        Artifact, Part, TaskArtifactUpdateEvent, TaskRef, TaskStatus, TaskStatusUpdateEvent,
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
                .create_task(task("done", TaskState::Completed), None, None)
                .await
                .unwrap();
            store
                .create_task(task("live1", TaskState::Working), None, None)
                .await
                .unwrap();
            store
                .create_task(task("live2", TaskState::Working), None, None)
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
                .create_task(task("live3", TaskState::Working), None, None)
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
                .create_task(task("t", TaskState::Working), None, None)
                .await
                .unwrap();
            store
                .append_event("t", status("t", TaskState::Completed))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(40)).await;
            store
                .create_task(task("u", TaskState::Working), None, None)
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
                .create_task(task("old", TaskState::Working), None, None)
                .await
                .unwrap();
            store
                .append_event("old", status("old", TaskState::Failed))
                .await
                .unwrap();
            store
                .create_task(task("live", TaskState::Working), None, None)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
            let n = store.purge_terminal_before(Timestamp::now()).await.unwrap();
            assert_eq!(n, 1);
            assert_eq!(store.len(), 1);
        });
    }

    fn done_with_message(id: &str) -> StreamResponse {
        let mut status = TaskStatus::new(TaskState::Completed);
        status.message = Some(Message::agent(vec![Part::text("bye")]));
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.into(),
            context_id: "c".into(),
            status,
            metadata: None,
        })
    }

    /// Runs `t` to COMPLETED (with a status message) and returns its log as written. Its
    /// WORKING update carries metadata, so the log is kept as events (see
    /// [`finish_quick`] for one kept as steps).
    async fn finish(store: &InMemoryTaskManager, t: &str) -> Vec<EventRecord> {
        let mut working = status(t, TaskState::Working);
        if let StreamResponse::StatusUpdate(u) = &mut working {
            u.metadata = Some(serde_json::from_str(r#"{"note":1}"#).unwrap());
        }
        finish_with(store, t, working).await
    }

    /// [`finish`] with a plain WORKING update: every event can be rebuilt from the final task.
    async fn finish_quick(store: &InMemoryTaskManager, t: &str) -> Vec<EventRecord> {
        finish_with(store, t, status(t, TaskState::Working)).await
    }

    async fn finish_with(
        store: &InMemoryTaskManager,
        t: &str,
        working: StreamResponse,
    ) -> Vec<EventRecord> {
        store
            .create_task(task(t, TaskState::Submitted), Some("s".into()), None)
            .await
            .unwrap();
        store.append_event(t, working).await.unwrap();
        store.append_event(t, chunk(t, "x", false)).await.unwrap();
        let mut log = store.events_after(t, 0, usize::MAX).await.unwrap();
        let done = done_with_message(t);
        store.append_event(t, done.clone()).await.unwrap();
        log.push(EventRecord {
            seq: 4,
            event: done,
        });
        log
    }

    #[test]
    fn a_quick_tasks_log_is_kept_as_steps_and_stays_exact() {
        block(async {
            let store = InMemoryTaskManager::default().hot_finished(1);
            let written = finish_quick(&store, "t").await;
            {
                let inner = store.lock();
                let e = &inner.tasks["t"];
                assert!(matches!(e.body, Body::Compact { .. }));
                assert_eq!((e.steps.len(), e.events.len()), (4, 0), "kept as steps");
                assert!(inner.finished.is_empty(), "not in the window of kept logs");
            }
            let same = |log: Vec<EventRecord>, from: std::ops::Range<usize>| {
                // Timestamps are kept to the millisecond, as on the wire.
                let wire = |l: &[EventRecord]| {
                    serde_json::to_value(l.iter().map(|r| (r.seq, &r.event)).collect::<Vec<_>>())
                        .unwrap()
                };
                assert_eq!(wire(&log), wire(&written[from]));
            };
            same(store.events_after("t", 0, usize::MAX).await.unwrap(), 0..4);
            // Released, and long out of any window: still exact.
            store.release_log("t");
            finish(&store, "u").await;
            finish(&store, "v").await;
            same(store.events_after("t", 1, usize::MAX).await.unwrap(), 1..4);
            same(store.events_after("t", 2, 1).await.unwrap(), 2..3);
            assert!(store.events_after("t", 4, 10).await.unwrap().is_empty());
            assert!(store.events_after("t", 0, 0).await.unwrap().is_empty());
        });
    }

    #[test]
    fn finished_tasks_are_held_as_json_and_read_back_the_same() {
        block(async {
            let store = InMemoryTaskManager::default().hot_finished(1);
            let log = finish(&store, "old").await;
            let before = store
                .get_task("old", TaskView::FULL)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                before.task.status.message.as_ref().map(|m| m.parts.len()),
                Some(1),
                "the status message is put back when read"
            );
            assert_eq!(before.task.history.len(), 2, "and is in the history once");
            // Finished tasks are held as their JSON, in the window of kept logs or not.
            finish(&store, "new").await;
            {
                let inner = store.lock();
                assert!(matches!(inner.tasks["old"].body, Body::Compact { .. }));
                assert!(!inner.tasks["old"].hot && inner.tasks["new"].hot);
            }
            let after = store
                .get_task("old", TaskView::FULL)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(after, before);
            assert!(
                matches!(
                    store.lock().tasks["old"].body,
                    Body::Compact {
                        status_message: Some(_),
                        ..
                    }
                ),
                "the status message is stored once"
            );
            let mut json = Vec::new();
            assert!(
                store
                    .write_task_json("old", TaskView::FULL, &mut json)
                    .await
                    .unwrap()
            );
            assert_eq!(
                json,
                serde_json::to_vec(&before.task).unwrap(),
                "and spliced back into the full JSON"
            );
            let trimmed = TaskView {
                history_length: Some(1),
                include_artifacts: false,
            };
            let t = store.get_task("old", trimmed).await.unwrap().unwrap().task;
            assert_eq!(t.history.len(), 1);
            assert!(t.artifacts.is_empty());
            // Its log was never released: it is still exact.
            assert_eq!(store.events_after("old", 0, usize::MAX).await.unwrap(), log);
            assert_eq!(
                store.events_after("old", 1, 2).await.unwrap(),
                log[1..3].to_vec()
            );
        });
    }

    #[test]
    fn a_released_log_stays_exact_in_the_window_then_becomes_the_final_snapshot() {
        block(async {
            let store = InMemoryTaskManager::default().hot_finished(1);
            let log = finish(&store, "t").await;
            store.release_log("t");
            assert_eq!(
                store.events_after("t", 0, usize::MAX).await.unwrap(),
                log,
                "hot: a Last-Event-ID replay is still exact"
            );
            finish(&store, "u").await;
            let rec = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
            let rest = store.events_after("t", 2, usize::MAX).await.unwrap();
            assert_eq!(
                rest,
                vec![EventRecord {
                    seq: 4,
                    event: StreamResponse::Task(rec.task.clone()),
                }],
                "one snapshot event, under the last sequence number, stands for the rest"
            );
            assert!(
                store
                    .events_after("t", 4, usize::MAX)
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert!(store.events_after("t", 0, 0).await.unwrap().is_empty());
            assert_eq!(rec.last_seq, 4, "the sequence count survives");
        });
    }

    #[test]
    fn live_tasks_keep_their_logs_whatever_is_released() {
        block(async {
            let store = InMemoryTaskManager::default().hot_finished(0);
            store
                .create_task(task("live", TaskState::Submitted), None, None)
                .await
                .unwrap();
            store.release_log("live");
            store.release_log("missing");
            assert_eq!(store.events_after("live", 0, 10).await.unwrap().len(), 1);
        });
    }

    #[test]
    fn a_compacted_task_refuses_events_and_takes_messages() {
        block(async {
            let store = InMemoryTaskManager::default().hot_finished(0);
            finish(&store, "t").await;
            let err = store
                .append_event("t", status("t", TaskState::Working))
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::IllegalTransition(_)), "{err:?}");
            let err = store
                .append_event("t", chunk("t", "late", true))
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::InvalidEvent(_)), "{err:?}");
            store
                .add_message("t", Message::user_text("thanks"))
                .await
                .unwrap();
            assert!(
                matches!(store.lock().tasks["t"].body, Body::Compact { .. }),
                "still compact"
            );
            let t = store
                .get_task("t", TaskView::FULL)
                .await
                .unwrap()
                .unwrap()
                .task;
            assert_eq!(t.history.len(), 3);
            assert_eq!(t.status.state, TaskState::Completed);
            assert!(t.status.message.is_some());
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

    /// A compact task finds its context id inside its JSON when it is written there as is,
    /// and keeps a copy when escapes (in it or in the id before it) move or change it.
    #[test]
    fn compact_context_ids_read_back_whatever_they_hold() {
        for (id, context) in [
            ("t-1", "c-1"),
            ("t\"2", "c-2"),
            ("t-3", "c\\3"),
            ("t-4", "c\n4 \u{e9}"),
            ("t-5", ""),
        ] {
            let task = Task {
                id: id.into(),
                context_id: context.into(),
                status: TaskStatus::new(TaskState::Completed),
                ..Task::default()
            };
            let mut json = Vec::new();
            TaskRef::from(&task).write_json(&mut json, None).unwrap();
            let located = ContextId::locate(&json, id, context);
            let in_json = matches!(located, ContextId::InJson { .. });
            // Only the first is written as is, after an id written as is.
            assert_eq!(in_json, id == "t-1", "{id} {context:?}");
            assert_eq!(located.get(&json), context, "{id}");
        }
    }

    proptest! {
        /// Whatever order tasks end in, they are evicted oldest end first, each once; with a
        /// cutoff, exactly those that ended before it.
        #[test]
        fn eviction_order_is_oldest_end_first(
            ends in prop::collection::vec(0i64..50, 0..60),
            cutoff in 0i64..60,
        ) {
            let fill = || {
                let mut order = EvictionOrder::default();
                for (i, at) in ends.iter().enumerate() {
                    order.insert(*at, Arc::from(format!("{i}")));
                }
                order
            };
            let at = |id: &Arc<str>| ends[id.parse::<usize>().unwrap()];
            let mut order = fill();
            let mut popped = Vec::new();
            while let Some(id) = order.pop_oldest() {
                popped.push(id);
            }
            let times: Vec<i64> = popped.iter().map(at).collect();
            let mut sorted = ends.clone();
            sorted.sort();
            prop_assert_eq!(times, sorted);
            let mut order = fill();
            let mut before = Vec::new();
            while let Some(id) = order.pop_before(cutoff) {
                before.push(at(&id));
            }
            let mut want: Vec<i64> = ends.iter().copied().filter(|t| *t < cutoff).collect();
            want.sort();
            prop_assert_eq!(before, want);
        }

        /// Whatever is appended, the log is dense and ordered, every event reads back as
        /// written (artifacts shared with the task included), rejected events change nothing,
        /// and every suffix read returns exactly the tail of the log.
        #[test]
        fn event_log_is_dense_ordered_and_atomic(ops in prop::collection::vec(op(), 1..30)) {
            block(async {
                let store = InMemoryTaskManager::default();
                store.create_task(task("t", TaskState::Submitted), None, None).await.unwrap();
                let mut expected_seq = 1;
                let mut written = Vec::new();
                for (i, op) in ops.iter().enumerate() {
                    let before = store.get_task("t", TaskView::FULL).await.unwrap().unwrap();
                    let ev = match op {
                        Op::Status(s) => status("t", *s),
                        Op::Chunk(append) => chunk("t", &format!("p{i}"), *append),
                    };
                    match store.append_event("t", ev.clone()).await {
                        Ok(seq) => {
                            written.push(ev);
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
                let read: Vec<_> = log[1..].iter().map(|r| r.event.clone()).collect();
                prop_assert_eq!(&read, &written, "every event reads back as written");
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
