//! A task's worker: reads the events it has not handled from the store and delivers each to
//! every config of the task, in log order.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tracing::Instrument;

use crate::observe::TraceContext;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::protocol::{StreamResponse, TaskPushNotificationConfig, Timestamp};
use crate::store::{EventRecord, PushLane, PushOutbox, Seq, StoreError, TaskManager, TaskView};

use super::{body::*, config::*, deliver::*, report::*, state::*};

pub(super) struct Worker {
    pub(super) inner: Arc<Inner>,
    pub(super) store: Arc<dyn TaskManager>,
    pub(super) task_id: String,
    /// The task's trace context (read once, on the first delivery): its deliveries' parent.
    pub(super) trace: tokio::sync::OnceCell<Option<TraceContext>>,
}

impl Worker {
    pub(super) async fn run(self, cursor: Seq) {
        let _busy = BusyGuard(self.inner.clone());
        let store = self.store.clone();
        match store.push_outbox() {
            Some(outbox) => self.run_durable(outbox).await,
            None => self.run_in_memory(cursor).await,
        }
    }

    /// The task's push configs; none from a store that keeps none (`build` refuses push
    /// delivery on such a store, but an observer may be installed by hand).
    async fn configs(&self, task_id: &str) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        match self.store.push_configs() {
            Some(configs) => configs.list(task_id).await,
            None => Ok(Vec::new()),
        }
    }

    async fn run_in_memory(self, mut cursor: Seq) {
        let task_id = self.task_id.as_str();
        // The last event handled, when it was a terminal or interrupted state, with the configs
        // that existed then (they have it).
        let mut settled: Option<(Outgoing, HashSet<String>)> = None;
        let mut lingered = false;
        let mut terminal = false;
        loop {
            let events = match self.store.events_after(task_id, cursor, BATCH).await {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!(target: "a2a_kit::push", task_id, error = %e, "could not read the task's events; pushes skipped");
                    let mut tasks = lock(&self.inner.tasks);
                    if let Some(slot) = tasks.get_mut(task_id) {
                        slot.cursor = slot.latest.max(cursor);
                        slot.running = false;
                    }
                    return;
                }
            };
            if events.is_empty() {
                if let (Some((out, have)), false) = (&mut settled, lingered) {
                    lingered = true;
                    self.late_configs(have, out, cursor).await;
                    continue;
                }
                let mut tasks = lock(&self.inner.tasks);
                match tasks.get_mut(task_id) {
                    // Observed meanwhile, not read yet: go round again.
                    Some(slot) if slot.latest > cursor => continue,
                    Some(slot) => {
                        slot.cursor = cursor;
                        slot.running = false;
                    }
                    None => {}
                }
                break;
            }
            lingered = false;
            let configs = match self.configs(task_id).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(target: "a2a_kit::push", task_id, error = %e, "could not read the task's push configs");
                    Vec::new()
                }
            };
            for rec in events {
                let state = rec.event.state();
                let is_settled = is_settled(state);
                let deliver_now =
                    !configs.is_empty() && self.inner.config.triggers.matches(&rec.event);
                if deliver_now || is_settled {
                    let out = self.body_for(rec.seq, &rec.event).await;
                    if deliver_now {
                        self.deliver_all(&configs, &out).await;
                    }
                    if is_settled {
                        settled =
                            Some((out, configs.iter().filter_map(|c| c.id.clone()).collect()));
                    }
                } else {
                    settled = None;
                }
                terminal |= state.is_some_and(|s| s.is_terminal());
                cursor = rec.seq;
                if let Some(slot) = lock(&self.inner.tasks).get_mut(task_id) {
                    slot.cursor = cursor;
                }
            }
        }
        if terminal {
            self.finished(cursor);
        }
    }

    /// The task's final event, `cursor`, is handled: forget it, and ignore late observer
    /// calls for it rather than starting a worker that would deliver twice.
    fn finished(&self, cursor: Seq) {
        {
            let mut finished = lock(&self.inner.finished);
            if finished.0.insert(self.task_id.clone(), cursor).is_none() {
                finished.1.push_back(self.task_id.clone());
            }
            while finished.1.len() > MAX_FINISHED {
                if let Some(old) = finished.1.pop_front() {
                    finished.0.remove(&old);
                }
            }
        }
        // Only now forget the slot: a late observer call finds the task finished.
        lock(&self.inner.tasks).remove(&self.task_id);
    }

    /// With a durable outbox: deliver the task's events while this process holds its claim,
    /// each config from its lane's cursor, recording every lane's progress in the store.
    async fn run_durable(self, outbox: &dyn PushOutbox) {
        let task_id = self.task_id.as_str();
        let mut claim = ClaimGuard {
            store: self.store.clone(),
            task_id: self.task_id.clone(),
            held: true,
        };
        loop {
            // What was observed before this round: anything later means another round.
            let seen = lock(&self.inner.tasks).get(task_id).map_or(0, |s| s.latest);
            let end = match self.drain(outbox).await {
                Ok(end) => end,
                Err(stop) => {
                    claim.held = matches!(stop, Stop::Store(_));
                    match stop {
                        Stop::Busy => {
                            tracing::debug!(target: "a2a_kit::push", task_id, "another replica delivers this task's events")
                        }
                        Stop::Lost => {
                            tracing::warn!(target: "a2a_kit::push", task_id, "lost this task's push claim to another replica; it delivers from here")
                        }
                        Stop::Store(e) => {
                            tracing::error!(target: "a2a_kit::push", task_id, error = %e, "push outbox unavailable; deliveries resume when it is back")
                        }
                    }
                    self.idle(seen);
                    return;
                }
            };
            if let Some((out, mut have)) = end.settled {
                self.late_configs(&mut have, &out, out.seq).await;
            }
            if end.from.is_some() {
                claim.release().await;
            }
            claim.held = false;
            if lock(&self.inner.tasks)
                .get(task_id)
                .is_some_and(|s| s.latest > seen)
            {
                claim.held = true;
                continue;
            }
            // Events another replica wrote while this one held the claim (its dispatcher could
            // not claim them) are delivered now, not at the next sweep.
            let newer = match end.from {
                Some(from) => self
                    .store
                    .events_after(task_id, from, 1)
                    .await
                    .is_ok_and(|e| !e.is_empty()),
                None => false,
            };
            if newer {
                claim.held = true;
                continue;
            }
            if end.terminal {
                self.finished(end.from.unwrap_or(0).max(seen));
            } else {
                self.idle(seen);
            }
            return;
        }
    }

    /// No worker runs for the task any more (one starts at its next event).
    fn idle(&self, seen: Seq) {
        if let Some(slot) = lock(&self.inner.tasks).get_mut(&self.task_id) {
            slot.cursor = slot.cursor.max(seen);
            slot.running = false;
        }
    }

    /// Claim the task and deliver until every lane has handled the task's log.
    async fn drain(&self, outbox: &dyn PushOutbox) -> Result<Drained, Stop> {
        let task_id = self.task_id.as_str();
        let mut settled: Option<(Outgoing, HashSet<String>)> = None;
        let mut terminal = false;
        loop {
            let mut lanes = self.claim(outbox).await?;
            if lanes.is_empty() {
                return Ok(Drained {
                    from: None,
                    settled: None,
                    terminal,
                });
            }
            let configs = self.configs(task_id).await.map_err(Stop::Store)?;
            let Some(from) = lowest_cursor(&configs, &lanes) else {
                return Ok(Drained {
                    from: None,
                    settled: None,
                    terminal,
                });
            };
            let events = self
                .store
                .events_after(task_id, from, BATCH)
                .await
                .map_err(Stop::Store)?;
            if events.is_empty() {
                return Ok(Drained {
                    from: Some(from),
                    settled,
                    terminal,
                });
            }
            let mut moved: HashSet<String> = HashSet::new();
            for rec in events {
                let state = rec.event.state();
                let out = self
                    .handle_event(outbox, &configs, &mut lanes, &mut moved, &rec)
                    .await?;
                settled = match out {
                    Some(out) if is_settled(state) => {
                        Some((out, configs.iter().filter_map(|c| c.id.clone()).collect()))
                    }
                    _ => None,
                };
                terminal |= state.is_some_and(|s| s.is_terminal());
            }
            self.save_moved(outbox, &lanes, moved).await?;
        }
    }

    /// Claim the task's lanes, by config id. Claimed again each batch: it renews the claim
    /// and brings configs stored since.
    async fn claim(&self, outbox: &dyn PushOutbox) -> Result<HashMap<String, PushLane>, Stop> {
        let lanes = outbox
            .claim_push(&self.task_id)
            .await
            .map_err(Stop::Store)?
            .ok_or(Stop::Busy)?;
        Ok(lanes
            .into_iter()
            .map(|l| (l.config_id.clone(), l))
            .collect())
    }

    /// One event of a durable worker's batch, for the lanes it is due on (behind it, not
    /// suspended): delivered if the triggers match, else their cursors move past it
    /// (`moved`, saved after the batch). Returns its body when one was built (a delivery, or
    /// a terminal or interrupted state, which late configs get).
    async fn handle_event(
        &self,
        outbox: &dyn PushOutbox,
        configs: &[TaskPushNotificationConfig],
        lanes: &mut HashMap<String, PushLane>,
        moved: &mut HashSet<String>,
        rec: &EventRecord,
    ) -> Result<Option<Outgoing>, Stop> {
        let due: Vec<&TaskPushNotificationConfig> = configs
            .iter()
            .filter(|c| {
                lanes
                    .get(c.id.as_deref().unwrap_or_default())
                    .is_some_and(|l| !l.suspended && l.cursor < rec.seq)
            })
            .collect();
        let matches = self.inner.config.triggers.matches(&rec.event);
        let out = if (matches && !due.is_empty()) || is_settled(rec.event.state()) {
            Some(self.body_for(rec.seq, &rec.event).await)
        } else {
            None
        };
        if let (true, Some(out)) = (matches, &out) {
            self.deliver_due(outbox, &due, lanes, moved, out).await?;
        } else {
            for config in &due {
                let id = config.id.clone().unwrap_or_default();
                if let Some(lane) = lanes.get_mut(&id) {
                    lane.cursor = rec.seq;
                    moved.insert(id);
                }
            }
        }
        Ok(out)
    }

    /// Deliver `out` to the configs it is due on, all at once, then count each outcome in its
    /// lane and save the lane; `Lost` if the claim went to another process meanwhile.
    async fn deliver_due(
        &self,
        outbox: &dyn PushOutbox,
        due: &[&TaskPushNotificationConfig],
        lanes: &mut HashMap<String, PushLane>,
        moved: &mut HashSet<String>,
        out: &Outgoing,
    ) -> Result<(), Stop> {
        let task_id = self.task_id.as_str();
        let sends = due.iter().map(|c| {
            let lane = lanes.get(c.id.as_deref().unwrap_or_default()).cloned();
            let retrying = lane.map(|lane| Retrying {
                outbox,
                task_id,
                lane,
            });
            self.attempt(c, out, retrying)
        });
        let reports = futures::future::join_all(sends).await;
        for (config, report) in due.iter().zip(reports) {
            let id = config.id.clone().unwrap_or_default();
            let Some(lane) = lanes.get_mut(&id) else {
                continue;
            };
            self.count(lane, &report);
            lane.cursor = out.seq;
            let key = (self.task_id.clone(), id.clone());
            self.record(key, &config.url, report, Some(lane));
            if !outbox
                .save_push_lane(task_id, lane)
                .await
                .map_err(Stop::Store)?
            {
                return Err(Stop::Lost);
            }
            moved.remove(&id);
        }
        Ok(())
    }

    /// Save the lanes whose cursors moved without a delivery; `Lost` if the claim went to
    /// another process meanwhile.
    async fn save_moved(
        &self,
        outbox: &dyn PushOutbox,
        lanes: &HashMap<String, PushLane>,
        moved: HashSet<String>,
    ) -> Result<(), Stop> {
        for id in moved {
            if let Some(lane) = lanes.get(&id)
                && !outbox
                    .save_push_lane(&self.task_id, lane)
                    .await
                    .map_err(Stop::Store)?
            {
                return Err(Stop::Lost);
            }
        }
        Ok(())
    }

    /// A config's counters after one event's delivery (suspended after
    /// [`PushConfig::suspend_after`] failures in a row).
    fn count(&self, lane: &mut PushLane, report: &DeliveryReport) {
        // The event is done with, either way: no retry is pending.
        lane.attempts = 0;
        lane.next_attempt_at = None;
        if report.outcome.is_delivered() {
            lane.delivered += 1;
            lane.consecutive_failures = 0;
            return;
        }
        lane.failed += 1;
        lane.consecutive_failures += 1;
        lane.last_error = Some(report.outcome.to_string());
        if !lane.suspended
            && self
                .inner
                .config
                .suspend_after
                .is_some_and(|n| lane.consecutive_failures >= n)
        {
            lane.suspended = true;
        }
    }

    /// Configs stored shortly after a terminal or interrupted state was handled (an inline
    /// config of a SendMessage whose task settled at once) get that state. Stops early when
    /// the task moves on.
    async fn late_configs(&self, have: &mut HashSet<String>, settled: &Outgoing, cursor: Seq) {
        let window = self.inner.config.late_config_window;
        let until = Instant::now() + window;
        let mut pause = Duration::from_millis(20);
        while Instant::now() < until {
            tokio::time::sleep(pause.min(until.saturating_duration_since(Instant::now()))).await;
            pause = (pause * 2).min(Duration::from_millis(250));
            if lock(&self.inner.tasks)
                .get(&self.task_id)
                .is_some_and(|s| s.latest > cursor)
            {
                return;
            }
            let Ok(configs) = self.configs(&self.task_id).await else {
                return;
            };
            let late: Vec<TaskPushNotificationConfig> = configs
                .into_iter()
                .filter(|c| c.id.as_ref().is_some_and(|id| have.insert(id.clone())))
                .collect();
            if !late.is_empty() {
                self.deliver_all(&late, settled).await;
            }
        }
    }

    /// The body of `event` (number `seq`): with [`PushBody::Task`], a terminal or interrupted
    /// state as the task as of it (bounded by [`PushConfig::max_task_body`]), if the task has
    /// not moved on; else the event itself.
    async fn body_for(&self, seq: Seq, event: &StreamResponse) -> Outgoing {
        let cfg = &self.inner.config;
        let task_id = self.task_id.as_str();
        if cfg.body == PushBody::Task && is_settled(event.state()) {
            match self.store.get_task(task_id, TaskView::FULL).await {
                Ok(Some(rec)) if rec.last_seq == seq => {
                    if let Some(body) = task_body(rec.task, cfg.max_task_body) {
                        return Outgoing {
                            seq,
                            body: Bytes::from(body),
                        };
                    }
                    tracing::warn!(
                        target: "a2a_kit::push", task_id, seq, limit = cfg.max_task_body,
                        "the task is larger than max_task_body even without its history and artifacts; pushing its status update"
                    );
                }
                Ok(Some(rec)) => tracing::debug!(
                    target: "a2a_kit::push", task_id, seq, now = rec.last_seq,
                    "the task moved on since this state; pushing its status update"
                ),
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    target: "a2a_kit::push", task_id, seq, error = %e,
                    "could not read the task; pushing its status update"
                ),
            }
        }
        Outgoing {
            seq,
            body: Bytes::from(serde_json::to_vec(event).unwrap_or_default()),
        }
    }

    async fn deliver_all(&self, configs: &[TaskPushNotificationConfig], out: &Outgoing) {
        let sends = configs.iter().map(|c| self.deliver(c, out));
        futures::future::join_all(sends).await;
    }

    async fn deliver(&self, config: &TaskPushNotificationConfig, out: &Outgoing) {
        let key = (self.task_id.clone(), config.id.clone().unwrap_or_default());
        if lock(&self.inner.statuses)
            .map
            .get(&key)
            .is_some_and(|s| s.suspended)
        {
            return;
        }
        let report = self.attempt(config, out, None).await;
        self.record(key, &config.url, report, None);
    }

    /// Send one event to one config, with retries (recorded in its lane, with a durable
    /// outbox), and log the outcome.
    async fn attempt(
        &self,
        config: &TaskPushNotificationConfig,
        out: &Outgoing,
        retrying: Option<Retrying<'_>>,
    ) -> DeliveryReport {
        let stored = self
            .trace
            .get_or_init(|| async {
                let view = TaskView {
                    history_length: Some(0),
                    include_artifacts: false,
                };
                match self.store.get_task(&self.task_id, view).await {
                    Ok(Some(rec)) => TraceContext::from_metadata(rec.task.metadata.as_ref()),
                    _ => None,
                }
            })
            .await;
        let span = super::observed::push_span(&self.task_id, &config.url, stored.as_ref());
        // What the webhook's request carries: this delivery's span (`otel`), else the task's.
        let carried = crate::observe::context_of(&span, stored.as_ref());
        crate::observe::metrics::outbox(1);
        let (attempts, outcome) = send_with_retries(
            &self.inner.client,
            &self.inner.config,
            &self.inner.in_flight,
            (config, carried.as_ref()),
            out,
            retrying,
        )
        .instrument(span.clone())
        .await;
        crate::observe::metrics::outbox(-1);
        super::observed::record_push(&span, attempts, &outcome);
        let task_id = self.task_id.as_str();
        let config_id = config.id.as_deref().unwrap_or_default();
        match &outcome {
            DeliveryOutcome::Delivered { status } => tracing::info!(
                target: "a2a_kit::push", task_id, config_id, seq = out.seq, attempts, status, "push delivered"
            ),
            other => tracing::warn!(
                target: "a2a_kit::push", task_id, config_id, seq = out.seq, attempts, outcome = ?other, "push not delivered"
            ),
        }
        DeliveryReport {
            seq: out.seq,
            attempts,
            outcome,
            at: Timestamp::now(),
        }
    }

    /// Keep `report` as the config's last delivery, with its counters: the lane's when the
    /// store keeps one (`counted`, already counted), else counted here.
    fn record(
        &self,
        key: (String, String),
        url: &str,
        report: DeliveryReport,
        counted: Option<&PushLane>,
    ) {
        let cfg = &self.inner.config;
        let mut table = lock(&self.inner.statuses);
        if !table.map.contains_key(&key) {
            table.order.push_back(key.clone());
            while table.order.len() > cfg.max_statuses.max(1) {
                if let Some(old) = table.order.pop_front() {
                    table.map.remove(&old);
                }
            }
        }
        let status = table
            .map
            .entry(key.clone())
            .or_insert_with(|| DeliveryStatus {
                task_id: key.0.clone(),
                config_id: key.1.clone(),
                url: url.to_string(),
                delivered: 0,
                failed: 0,
                consecutive_failures: 0,
                suspended: false,
                last: None,
            });
        status.url = url.to_string();
        let lane = match counted {
            Some(lane) => lane.clone(),
            None => {
                let mut lane = PushLane {
                    delivered: status.delivered,
                    failed: status.failed,
                    consecutive_failures: status.consecutive_failures,
                    suspended: status.suspended,
                    ..PushLane::default()
                };
                self.count(&mut lane, &report);
                lane
            }
        };
        if lane.suspended && !status.suspended {
            tracing::warn!(
                target: "a2a_kit::push", task_id = %key.0, config_id = %key.1,
                failures = lane.consecutive_failures, "push config suspended after consecutive failures"
            );
        }
        status.delivered = lane.delivered;
        status.failed = lane.failed;
        status.consecutive_failures = lane.consecutive_failures;
        status.suspended = lane.suspended;
        status.last = Some(report);
    }
}

/// Where a durable worker's batch starts: the lowest cursor of the lanes still delivered
/// (a config deleted meanwhile has no say, a suspended one waits); `None` if none is.
fn lowest_cursor(
    configs: &[TaskPushNotificationConfig],
    lanes: &HashMap<String, PushLane>,
) -> Option<Seq> {
    configs
        .iter()
        .filter_map(|c| lanes.get(c.id.as_deref().unwrap_or_default()))
        .filter(|l| !l.suspended)
        .map(|l| l.cursor)
        .min()
}

/// How a durable worker's round ended: every lane has handled the log from `from` on.
pub(super) struct Drained {
    /// The lowest cursor of the lanes still delivered (`None`: none are).
    pub(super) from: Option<Seq>,
    /// The last event handled, when it was a terminal or interrupted state, with the configs
    /// that had it.
    pub(super) settled: Option<(Outgoing, HashSet<String>)>,
    /// A terminal state was handled.
    pub(super) terminal: bool,
}

/// Why a durable worker stopped before catching up.
pub(super) enum Stop {
    /// Another process holds the task's claim.
    Busy,
    /// The claim ran out and another process took it.
    Lost,
    /// The store failed.
    Store(StoreError),
}

/// Lets go of a task's push claim if its worker ends without doing so (a panic, or the
/// runtime shutting down), so another process need not wait for the claim to run out.
pub(super) struct ClaimGuard {
    pub(super) store: Arc<dyn TaskManager>,
    pub(super) task_id: String,
    pub(super) held: bool,
}

impl ClaimGuard {
    async fn release(&mut self) {
        if let Some(outbox) = self.store.push_outbox()
            && let Err(e) = outbox.release_push_claim(&self.task_id).await
        {
            tracing::warn!(target: "a2a_kit::push", task_id = %self.task_id, error = %e, "could not let go of a push claim; it runs out with the lease");
        }
        self.held = false;
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let (store, task_id) = (self.store.clone(), std::mem::take(&mut self.task_id));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Some(outbox) = store.push_outbox() {
                    let _ = outbox.release_push_claim(&task_id).await;
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Artifact, Part, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus};
    use crate::protocol::{Message, TaskStatusUpdateEvent};
    use crate::push::{PushConfig, PushDispatcher};
    use crate::store::InMemoryTaskManager;

    fn status(state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(state),
            metadata: None,
        })
    }

    fn worker(config: PushConfig, store: &Arc<dyn TaskManager>) -> Worker {
        Worker {
            inner: PushDispatcher::new(config).inner,
            store: store.clone(),
            task_id: "t".into(),
            trace: Default::default(),
        }
    }

    fn parse(out: &Outgoing) -> StreamResponse {
        serde_json::from_slice(&out.body).unwrap()
    }

    /// An INPUT_REQUIRED answered before its body was built goes as its status update; the
    /// final state goes as the task, artifacts included; per-event bodies are the events.
    #[tokio::test]
    async fn a_snapshot_is_the_task_as_of_the_event_or_the_event() {
        let store: Arc<dyn TaskManager> = Arc::new(InMemoryTaskManager::default());
        let task = Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Working),
            history: vec![Message::user_text("hi")],
            ..Default::default()
        };
        store.create_task(task, None, None).await.unwrap();
        let asked = store
            .append_event("t", status(TaskState::InputRequired))
            .await
            .unwrap();
        let w = worker(PushConfig::default(), &store);
        match parse(&w.body_for(asked, &status(TaskState::InputRequired)).await) {
            StreamResponse::Task(t) => assert_eq!(t.status.state, TaskState::InputRequired),
            other => panic!("expected the task: {other:?}"),
        }
        store
            .append_event("t", status(TaskState::Working))
            .await
            .unwrap();
        let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text("the answer")],
                ..Default::default()
            },
            append: false,
            last_chunk: true,
            metadata: None,
        });
        store.append_event("t", artifact).await.unwrap();
        let done = store
            .append_event("t", status(TaskState::Completed))
            .await
            .unwrap();
        // The task has moved past INPUT_REQUIRED: its status update, not a WORKING task.
        match parse(&w.body_for(asked, &status(TaskState::InputRequired)).await) {
            StreamResponse::StatusUpdate(u) => assert_eq!(u.status.state, TaskState::InputRequired),
            other => panic!("expected the status update: {other:?}"),
        }
        match parse(&w.body_for(done, &status(TaskState::Completed)).await) {
            StreamResponse::Task(t) => {
                assert_eq!(t.status.state, TaskState::Completed);
                assert_eq!(t.artifacts[0].parts[0].as_text(), Some("the answer"));
            }
            other => panic!("expected the task: {other:?}"),
        }
        // A task too large even bare: its status update.
        let tiny = worker(PushConfig::default().max_task_body(10), &store);
        assert!(matches!(
            parse(&tiny.body_for(done, &status(TaskState::Completed)).await),
            StreamResponse::StatusUpdate(_)
        ));
        let events = worker(PushConfig::default().per_event_bodies(), &store);
        assert!(matches!(
            parse(&events.body_for(done, &status(TaskState::Completed)).await),
            StreamResponse::StatusUpdate(_)
        ));
    }
}
