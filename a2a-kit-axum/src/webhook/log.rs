//! The last deliveries a receiver answered, for a developer to look at (the console shows
//! them): bounded, in memory, accepted and refused alike.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::{Notification, WebhookRejection, lock};

/// One delivery a receiver answered.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
    /// When it arrived, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The task it was about, when that could be read.
    pub task_id: Option<String>,
    /// The HTTP status the sender got.
    pub status: u16,
    /// Why it was refused (`None`: accepted).
    pub refused: Option<String>,
    /// The update, as JSON (`StreamResponse`), when it was accepted.
    pub event: Option<Value>,
}

/// A bounded log of the deliveries one or more receivers answered
/// ([`WebhookReceiver::record_to`](super::WebhookReceiver::record_to)). Cheap to clone; the
/// oldest records go first, and refusals keep to a quarter of it.
#[derive(Debug, Clone)]
pub struct DeliveryLog {
    records: Arc<Mutex<VecDeque<DeliveryRecord>>>,
    capacity: usize,
}

impl DeliveryLog {
    /// A log keeping the last `capacity` deliveries (at least one).
    pub fn new(capacity: usize) -> Self {
        DeliveryLog {
            records: Arc::default(),
            capacity: capacity.max(1),
        }
    }

    /// The deliveries kept, oldest first.
    pub fn records(&self) -> Vec<DeliveryRecord> {
        lock(&self.records).iter().cloned().collect()
    }

    /// The deliveries about `task_id`, oldest first.
    pub fn for_task(&self, task_id: &str) -> Vec<DeliveryRecord> {
        lock(&self.records)
            .iter()
            .filter(|r| r.task_id.as_deref() == Some(task_id))
            .cloned()
            .collect()
    }

    /// Keep `outcome`; `task_hint` is the task a refused body named, if any.
    pub(super) fn record(
        &self,
        outcome: &Result<Notification, WebhookRejection>,
        task_hint: Option<String>,
    ) {
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let record = match outcome {
            Ok(n) => DeliveryRecord {
                at_ms,
                task_id: Some(n.task_id.clone()),
                status: 204,
                refused: None,
                event: serde_json::to_value(&n.event).ok(),
            },
            Err(rejection) => DeliveryRecord {
                at_ms,
                task_id: match rejection {
                    WebhookRejection::UnknownTask(task) => Some(task.clone()),
                    _ => task_hint,
                },
                status: rejection.status().as_u16(),
                refused: Some(rejection.to_string()),
                event: None,
            },
        };
        let mut records = lock(&self.records);
        // Refusals (anyone can post one) keep to a quarter of the log, so a flood of them does
        // not push out the deliveries that were taken.
        let refusals = records.iter().filter(|r| r.refused.is_some()).count();
        if record.refused.is_some() && refusals >= (self.capacity / 4).max(1) {
            if let Some(oldest) = records.iter().position(|r| r.refused.is_some()) {
                records.remove(oldest);
            }
        } else if records.len() == self.capacity {
            records.pop_front();
        }
        records.push_back(record);
    }
}

/// The task a delivery's body names (a `StreamResponse` or a bare Task), read leniently: a
/// refused delivery is still listed under its task.
pub(super) fn task_named_in(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let id = v
        .get("task")
        .and_then(|t| t.get("id"))
        .or_else(|| v.get("statusUpdate").and_then(|u| u.get("taskId")))
        .or_else(|| v.get("artifactUpdate").and_then(|u| u.get("taskId")))
        .or_else(|| v.get("id"))?;
    id.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

impl Default for DeliveryLog {
    /// The last 200 deliveries.
    fn default() -> Self {
        DeliveryLog::new(200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_to_a_quarter_and_the_oldest_go_first() {
        let log = DeliveryLog::new(8);
        let taken = |id: &str| {
            Ok(Notification {
                task_id: id.into(),
                event: a2a_kit::protocol::StreamResponse::Task(a2a_kit::protocol::Task {
                    id: id.into(),
                    ..Default::default()
                }),
                bare_task: true,
                task: None,
            })
        };
        for i in 0..3 {
            log.record(&taken(&format!("t{i}")), None);
        }
        for _ in 0..10 {
            log.record(&Err(WebhookRejection::WrongToken), Some("t0".into()));
        }
        let records = log.records();
        assert_eq!(records.len(), 5);
        assert_eq!(records.iter().filter(|r| r.refused.is_some()).count(), 2);
        assert_eq!(log.for_task("t0").len(), 3);
        for i in 3..12 {
            log.record(&taken(&format!("t{i}")), None);
        }
        let records = log.records();
        assert_eq!(records.len(), 8);
        assert_eq!(records.last().unwrap().task_id.as_deref(), Some("t11"));
        assert!(records.iter().all(|r| r.refused.is_none()));
    }
}
