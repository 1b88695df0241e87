//! Tasks this process just wrote in a terminal state, as stored, for the durable stores: the
//! caller that wrote one reads it back at once (a blocking SendMessage answers with it), and a
//! terminal task never changes again, so that read need not go to the database.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Just-finished tasks kept, at most.
const KEPT: usize = 4096;
/// How long one is kept: long enough for the read that follows its write; short, since
/// retention may delete the task later (and another replica may).
const KEPT_FOR: Duration = Duration::from_secs(5);

/// The JSON of tasks this process just finished (see the module docs).
#[derive(Default)]
pub(crate) struct JustFinished {
    tasks: Mutex<Tasks>,
}

#[derive(Default)]
struct Tasks {
    /// When each was kept, and its JSON.
    by_id: HashMap<String, (Instant, Arc<str>)>,
    /// Oldest first.
    order: VecDeque<String>,
}

impl JustFinished {
    /// The stored JSON of `task_id`, if this process finished it moments ago.
    pub(crate) fn get(&self, task_id: &str) -> Option<Arc<str>> {
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks
            .by_id
            .get(task_id)
            .filter(|(at, _)| at.elapsed() < KEPT_FOR)
            .map(|(_, json)| json.clone())
    }

    /// Forget every task (retention deleted some).
    pub(crate) fn clear(&self) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.by_id.clear();
        tasks.order.clear();
    }

    /// Keep tasks just written terminal: (id, the task's JSON as stored).
    pub(crate) fn keep<J: Into<Arc<str>>>(&self, finished: impl IntoIterator<Item = (String, J)>) {
        let now = Instant::now();
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let Tasks { by_id, order } = &mut *tasks;
        for (id, json) in finished {
            if by_id.insert(id.clone(), (now, json.into())).is_none() {
                order.push_back(id);
            }
        }
        while order.len() > KEPT
            || order
                .front()
                .and_then(|id| by_id.get(id))
                .is_some_and(|(at, _)| at.elapsed() >= KEPT_FOR)
        {
            if let Some(id) = order.pop_front() {
                by_id.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_forgets_on_clear() {
        let f = JustFinished::default();
        f.keep((0..KEPT + 10).map(|i| (format!("t{i}"), format!("{{\"id\":\"t{i}\"}}"))));
        assert!(f.get("t0").is_none(), "the oldest went first");
        assert_eq!(f.get("t4100").as_deref(), Some("{\"id\":\"t4100\"}"));
        f.clear();
        assert!(f.get("t4100").is_none());
    }
}
