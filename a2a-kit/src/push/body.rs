//! The task snapshot a settled state is pushed as, kept within a size bound.

use serde::{Deserialize, Serialize};

use crate::protocol::{Metadata, StreamResponse, Task};

/// The key, in a pushed task's `metadata`, of the [`TrimmedSnapshot`] marker.
pub const TRIMMED_KEY: &str = "a2a-kit/push-trimmed";

/// What was left out of a task snapshot larger than
/// [`PushConfig::max_task_body`](super::PushConfig::max_task_body), recorded in the pushed
/// task's `metadata` under [`TRIMMED_KEY`]. The artifacts the snapshot still has are whole;
/// GetTask gives the rest.
///
/// ```
/// use a2a_kit::protocol::{Task, TaskState, TaskStatus};
/// use a2a_kit::push::TrimmedSnapshot;
/// let task = Task { id: "t".into(), status: TaskStatus::new(TaskState::Completed), ..Default::default() };
/// assert_eq!(TrimmedSnapshot::of(&task), None); // a whole snapshot has no marker
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrimmedSnapshot {
    /// How many messages of the history were left out (a trimmed snapshot has none).
    pub omitted_history: usize,
    /// The ids of the artifacts left out, each whole (the largest go first).
    pub omitted_artifacts: Vec<String>,
    /// The size of the whole snapshot, in bytes of JSON.
    pub size: usize,
    /// The limit it exceeded.
    pub limit: usize,
}

impl TrimmedSnapshot {
    /// The marker of `task`, if it is a trimmed push snapshot.
    pub fn of(task: &Task) -> Option<TrimmedSnapshot> {
        let value = task.metadata.as_ref()?.get(TRIMMED_KEY)?;
        serde_json::from_value(value.clone()).ok()
    }

    fn mark(&self, task: &mut Task) {
        let value = serde_json::to_value(self).unwrap_or_default();
        task.metadata
            .get_or_insert_with(Metadata::new)
            .insert(TRIMMED_KEY.to_string(), value);
    }
}

/// `{"task": ...}` within `limit` bytes: whole if it fits, else without its history and
/// without as many of its largest artifacts as it takes, marked ([`TrimmedSnapshot`]);
/// `None` if even the bare task does not fit.
pub(super) fn task_body(task: Task, limit: usize) -> Option<Vec<u8>> {
    let whole = StreamResponse::Task(task);
    let size = match serde_json::to_vec(&whole) {
        Ok(body) if body.len() <= limit => return Some(body),
        Ok(body) => body.len(),
        Err(_) => return None,
    };
    let StreamResponse::Task(mut task) = whole else {
        return None;
    };
    let omitted_history = std::mem::take(&mut task.history).len();
    let artifacts = std::mem::take(&mut task.artifacts);
    let sizes: Vec<usize> = artifacts
        .iter()
        .map(|a| serde_json::to_vec(a).map_or(usize::MAX, |v| v.len()))
        .collect();
    // The bare task, marked as if every artifact were left out: the marker only shrinks as
    // artifacts are kept, so this bounds the body from above.
    let mut marker = TrimmedSnapshot {
        omitted_history,
        omitted_artifacts: artifacts.iter().map(|a| a.artifact_id.clone()).collect(),
        size,
        limit,
    };
    let mut bare = task.clone();
    marker.mark(&mut bare);
    let bare_len = serde_json::to_vec(&StreamResponse::Task(bare)).ok()?.len();
    if bare_len > limit {
        return None;
    }
    // Each kept artifact adds its JSON and a comma to `,"artifacts":[]`.
    let list = r#","artifacts":[]"#.len();
    let mut kept_len = sizes
        .iter()
        .fold(0usize, |sum, s| sum.saturating_add(s.saturating_add(1)));
    let mut largest_first: Vec<usize> = (0..artifacts.len()).collect();
    largest_first.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut keep = vec![true; artifacts.len()];
    let mut left_out = Vec::new();
    for i in largest_first {
        if bare_len.saturating_add(list).saturating_add(kept_len) <= limit {
            break;
        }
        keep[i] = false;
        kept_len = kept_len.saturating_sub(sizes[i].saturating_add(1));
    }
    for (keep, artifact) in keep.into_iter().zip(artifacts) {
        if keep {
            task.artifacts.push(artifact);
        } else {
            left_out.push(artifact.artifact_id);
        }
    }
    marker.omitted_artifacts = left_out;
    marker.mark(&mut task);
    serde_json::to_vec(&StreamResponse::Task(task))
        .ok()
        .filter(|body| body.len() <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Artifact, Message, Part, TaskState, TaskStatus};

    fn task(history: usize, artifacts: &[(&str, usize)]) -> Task {
        Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Completed),
            artifacts: artifacts
                .iter()
                .map(|(id, len)| Artifact {
                    artifact_id: id.to_string(),
                    parts: vec![Part::text("x".repeat(*len))],
                    ..Default::default()
                })
                .collect(),
            history: (0..history)
                .map(|i| Message::user_text(format!("message {i} {}", "y".repeat(100))))
                .collect(),
            metadata: None,
        }
    }

    fn parse(body: &[u8]) -> Task {
        match serde_json::from_slice::<StreamResponse>(body).unwrap() {
            StreamResponse::Task(t) => t,
            other => panic!("not a task: {other:?}"),
        }
    }

    #[test]
    fn a_task_that_fits_is_sent_whole_and_unmarked() {
        let t = task(3, &[("a", 100)]);
        let body = task_body(t.clone(), 10_000).unwrap();
        assert_eq!(parse(&body), t);
        assert_eq!(TrimmedSnapshot::of(&parse(&body)), None);
    }

    #[test]
    fn history_goes_first_then_the_largest_artifacts() {
        // Dropping the history is enough.
        let t = task(50, &[("small", 100), ("mid", 1_000)]);
        let whole = serde_json::to_vec(&StreamResponse::Task(t.clone()))
            .unwrap()
            .len();
        let body = task_body(t.clone(), 2_000).unwrap();
        assert!(body.len() <= 2_000);
        let got = parse(&body);
        assert!(got.history.is_empty());
        assert_eq!(got.artifacts, t.artifacts);
        let marker = TrimmedSnapshot::of(&got).unwrap();
        assert_eq!(
            marker,
            TrimmedSnapshot {
                omitted_history: 50,
                omitted_artifacts: vec![],
                size: whole,
                limit: 2_000
            }
        );

        // The huge artifact goes, whole; the others stay whole, in their order.
        let t = task(2, &[("small", 100), ("huge", 50_000), ("mid", 1_000)]);
        let body = task_body(t.clone(), 4_000).unwrap();
        assert!(body.len() <= 4_000, "{}", body.len());
        let got = parse(&body);
        let ids: Vec<&str> = got
            .artifacts
            .iter()
            .map(|a| a.artifact_id.as_str())
            .collect();
        assert_eq!(ids, ["small", "mid"]);
        assert_eq!(got.artifacts[1], t.artifacts[2]);
        let marker = TrimmedSnapshot::of(&got).unwrap();
        assert_eq!(marker.omitted_artifacts, ["huge"]);
        assert_eq!(marker.omitted_history, 2);

        // Tight: every artifact goes.
        let t = task(0, &[("a", 600), ("b", 700)]);
        let body = task_body(t, 500).unwrap();
        assert!(body.len() <= 500, "{}", body.len());
        let got = parse(&body);
        assert!(got.artifacts.is_empty());
        let mut omitted = TrimmedSnapshot::of(&got).unwrap().omitted_artifacts;
        omitted.sort();
        assert_eq!(omitted, ["a", "b"]);
    }

    #[test]
    fn a_task_too_large_even_bare_is_not_a_snapshot() {
        let mut t = task(0, &[("a", 10)]);
        t.status.message = Some(Message::agent_text("z".repeat(5_000)));
        assert_eq!(task_body(t, 1_000), None);
    }

    #[test]
    fn a_marker_survives_the_wire() {
        let t = task(1, &[("huge", 5_000)]);
        let body = task_body(t, 1_000).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let marker = &v["task"]["metadata"]["a2a-kit/push-trimmed"];
        assert_eq!(marker["omittedHistory"], 1, "{v}");
        assert_eq!(
            marker["omittedArtifacts"],
            serde_json::json!(["huge"]),
            "{v}"
        );
        assert_eq!(marker["limit"], 1_000, "{v}");
        assert!(marker["size"].as_u64().unwrap() > 5_000, "{v}");
    }
}
