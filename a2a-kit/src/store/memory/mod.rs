use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

mod entry;
mod listing;
mod push_configs;
mod remote;

use entry::*;
use listing::Listings;

use super::{
    EventRecord, ListQuery, Owner, PushConfigStore, Seq, StoreError, TaskManager, TaskRecord,
    TaskView, decode_cursor, encode_cursor,
};
use crate::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};

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
/// O(log n) except ListTasks, which walks the caller's own tasks (an index per owner, in
/// ListTasks order): a page's worth when nothing but the owner filters, all of them (to count
/// them) when a context or state does.
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
/// map and its indexes, and an owner's tasks share its key.
#[derive(Debug)]
pub struct InMemoryTaskManager {
    config: InMemoryConfig,
    hot_finished: usize,
    inner: Mutex<Inner>,
    /// The calling side's remote tasks and tokens (a lock of their own: webhooks never wait
    /// for the agent's tasks).
    remote: Mutex<remote::Remote>,
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
    /// Each owner's tasks by (status timestamp millis, task id): the ListTasks order.
    listings: Listings,
    /// Terminal tasks, oldest end first: eviction order.
    terminal: EvictionOrder,
    /// The most recently finished tasks, oldest first; the one that falls out is compacted.
    finished: VecDeque<Arc<str>>,
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

/// Tasks a filtered ListTasks walks per hold of the store's lock.
const SCAN_CHUNK: usize = 1024;

impl InMemoryTaskManager {
    /// Walk `owner`'s tasks newest first, from after `cursor` down to `floor`, SCAN_CHUNK at
    /// a time with the lock let go (and the task yielding) between chunks, so a long walk
    /// never holds the store for everyone else. `visit` sees each task and says whether to
    /// go on.
    async fn walk<F>(
        &self,
        owner: Option<&Owner>,
        cursor: Option<listing::Key>,
        floor: i64,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(&listing::Key, &Entry) -> Result<bool, StoreError>,
    {
        let mut resume = cursor;
        loop {
            let more = {
                let inner = self.lock();
                let mut at = None;
                let mut more = false;
                let keys = inner.listings.of(owner).newest_first(resume.as_ref());
                for (walked, key) in keys.enumerate() {
                    if key.0 < floor {
                        break;
                    }
                    if walked == SCAN_CHUNK {
                        more = true;
                        break;
                    }
                    at = Some(key);
                    if let Some(e) = inner.tasks.get(&key.1)
                        && !visit(key, e)?
                    {
                        break;
                    }
                }
                resume = at.cloned();
                more
            };
            if !more {
                return Ok(());
            }
            tokio::task::yield_now().await;
        }
    }

    /// A store with these limits.
    pub fn new(config: InMemoryConfig) -> Self {
        InMemoryTaskManager {
            config,
            hot_finished: DEFAULT_HOT_FINISHED,
            inner: Mutex::new(Inner::default()),
            remote: Mutex::default(),
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
        self.listings
            .remove(e.owner.as_ref(), &(e.time_key, e.id.clone()));
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
        entry.owner = inner.listings.insert(owner, (time_key, id.clone()));
        inner.tasks.insert(id.clone(), entry);
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
        let mut guard = self.lock();
        let inner = &mut *guard;
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
        if old_key != new_key {
            inner
                .listings
                .moved(entry.owner.as_ref(), &entry.id, old_key, new_key);
        }
        let id = entry.id.clone();
        let kept_as_steps = !entry.steps.is_empty();
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
        if let Some(e) = inner.tasks.get_mut(task_id)
            && e.body.state().is_terminal()
        {
            e.log_released = true;
            // Past the hot window already: nothing keeps the log any more.
            if !e.hot {
                e.events = Vec::new();
            }
        }
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        let cursor = q.page_token.as_deref().map(decode_cursor).transpose()?;
        let cursor = cursor.map(|(ts, id)| (ts, Arc::<str>::from(id)));
        let floor = q
            .status_timestamp_after
            .map_or(i64::MIN, |t| t.0.timestamp_millis());
        self.lock().evict_expired(self.config.terminal_ttl);
        let filtered = q.status.is_some() || q.context_id.is_some();
        let matches = |e: &Entry| {
            q.status.is_none_or(|s| e.body.state() == s)
                && q.context_id
                    .as_deref()
                    .is_none_or(|c| e.body.context_id() == c)
        };
        // Only the query's owner's tasks, newest first from the cursor down to the timestamp
        // floor: O(log n + page) when nothing but the owner filters. A filter may have to walk
        // all of the owner's tasks (an open agent's are every task): the walk takes the lock
        // for SCAN_CHUNK tasks at a time, so it never holds the store for everyone else.
        let mut page = Vec::with_capacity(q.page_size.min(100));
        let mut last = None;
        let mut has_more = false;
        self.walk(q.owner.as_ref(), cursor, floor, |key, e| {
            if !matches(e) {
                return Ok(true);
            }
            if page.len() == q.page_size {
                has_more = true;
                return Ok(false);
            }
            page.push(e.view(q.view)?);
            last = Some(key.clone());
            Ok(true)
        })
        .await?;
        let total = if filtered {
            let mut count = 0;
            self.walk(q.owner.as_ref(), None, floor, |_, e| {
                count += usize::from(matches(e));
                Ok(true)
            })
            .await?;
            count
        } else {
            let inner = self.lock();
            let listing = inner.listings.of(q.owner.as_ref());
            match q.status_timestamp_after {
                None => listing.len(),
                Some(_) => listing.count_from(floor),
            }
        };
        let next_page_token = match (has_more, last) {
            (true, Some((ts, id))) => encode_cursor(ts, &id),
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: page,
            next_page_token,
            page_size: q.page_size as i32,
            total_size: total as i32,
        })
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

    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        Some(self)
    }

    fn remote_tasks(&self) -> Option<&dyn crate::store::RemoteTaskStore> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
