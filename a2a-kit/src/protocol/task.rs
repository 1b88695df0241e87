//! `Task`, its status and artifacts, and the two streaming update events.

use serde::{Deserialize, Serialize};

use super::serde_util::{de_opt_string, is_false, proto_enum};
use super::{Message, Metadata, Part, Timestamp};

proto_enum! {
    /// Where a task is in its lifecycle; drives whether clients keep waiting.
    pub enum TaskState {
        /// Not set; never a valid state for a real task.
        #[default]
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        /// Accepted, not started.
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        /// Being processed.
        Working = 2 => "TASK_STATE_WORKING",
        /// Finished successfully (terminal).
        Completed = 3 => "TASK_STATE_COMPLETED",
        /// Finished with an error (terminal).
        Failed = 4 => "TASK_STATE_FAILED",
        /// Canceled before completion (terminal).
        Canceled = 5 => "TASK_STATE_CANCELED",
        /// Waiting for more input from the user (interrupted).
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        /// The agent declined the task (terminal).
        Rejected = 7 => "TASK_STATE_REJECTED",
        /// Waiting for the client to authenticate (interrupted).
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// True once the task can no longer change: completed, failed, canceled or rejected.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// True when the task is paused waiting on the client (input or auth required).
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// A task's state at a point in time, optionally with an explanatory message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The lifecycle state.
    #[serde(default)]
    pub state: TaskState,
    /// Agent note for this state (a question for INPUT_REQUIRED, a reason for FAILED, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the status was recorded; ListTasks sorts and filters on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped with the current time.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// Attaches an explanatory message.
    #[must_use]
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// The unit of work in A2A: its status, its outputs, and the conversation so far.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated identifier.
    #[serde(default)]
    pub id: String,
    /// The conversation this task belongs to; `""` means unset.
    #[serde(
        alias = "context_id",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Current status; required, so a missing `status` is an error.
    pub status: TaskStatus,
    /// Outputs produced so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Messages exchanged during the task (possibly trimmed by `historyLength`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A borrowed [`Task`] that serializes to exactly the same JSON, so a store can write a task
/// from the parts it holds without cloning them.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskRef<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub context_id: &'a str,
    pub status: TaskStatusRef<'a>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub artifacts: &'a [Artifact],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub history: &'a [Message],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'a Metadata>,
}

/// Where the parts of a task's JSON written by [`TaskRef::write_json`] are (byte offsets into
/// the buffer it wrote to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskJsonMarks {
    /// Right after the status's state value: where `,"message":…` goes in a status.
    pub after_state: usize,
    /// `(offset, len)` of the marked history message.
    pub message: Option<(usize, usize)>,
}

/// The borrowed [`TaskStatus`] of a [`TaskRef`].
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskStatusRef<'a> {
    pub state: TaskState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskRef<'_> {
    /// Append this task's JSON to `out`, byte for byte what serde writes, and say where its
    /// parts are (see [`TaskJsonMarks`]), so a store can splice a message into a task's bytes
    /// without serializing or searching anything.
    pub(crate) fn write_json(
        &self,
        out: &mut Vec<u8>,
        mark: Option<usize>,
    ) -> serde_json::Result<TaskJsonMarks> {
        use super::json_write::{write_artifacts, write_message, write_str, write_timestamp};
        out.extend_from_slice(br#"{"id":"#);
        write_str(out, self.id);
        if !self.context_id.is_empty() {
            out.extend_from_slice(br#","contextId":"#);
            write_str(out, self.context_id);
        }
        out.extend_from_slice(br#","status":{"state":""#);
        out.extend_from_slice(self.status.state.as_str().as_bytes());
        out.push(b'"');
        let after_state = out.len();
        if let Some(m) = self.status.message {
            out.extend_from_slice(br#","message":"#);
            write_message(out, m)?;
        }
        if let Some(ts) = &self.status.timestamp {
            out.extend_from_slice(br#","timestamp":"#);
            write_timestamp(out, ts)?;
        }
        out.push(b'}');
        if !self.artifacts.is_empty() {
            out.extend_from_slice(br#","artifacts":"#);
            write_artifacts(out, self.artifacts)?;
        }
        let mut marked = None;
        if !self.history.is_empty() {
            out.extend_from_slice(br#","history":["#);
            for (i, m) in self.history.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let start = out.len();
                write_message(out, m)?;
                if mark == Some(i) {
                    marked = Some((start, out.len() - start));
                }
            }
            out.push(b']');
        }
        if let Some(md) = self.metadata {
            out.extend_from_slice(br#","metadata":"#);
            serde_json::to_writer(&mut *out, md)?;
        }
        out.push(b'}');
        Ok(TaskJsonMarks {
            after_state,
            message: marked,
        })
    }

    /// The owned task (clones what the reference shows).
    pub(crate) fn to_task(self) -> Task {
        Task {
            id: self.id.to_string(),
            context_id: self.context_id.to_string(),
            status: TaskStatus {
                state: self.status.state,
                message: self.status.message.cloned(),
                timestamp: self.status.timestamp,
            },
            artifacts: self.artifacts.to_vec(),
            history: self.history.to_vec(),
            metadata: self.metadata.cloned(),
        }
    }
}

impl<'a> From<&'a Task> for TaskRef<'a> {
    fn from(t: &'a Task) -> Self {
        TaskRef {
            id: &t.id,
            context_id: &t.context_id,
            status: TaskStatusRef {
                state: t.status.state,
                message: t.status.message.as_ref(),
                timestamp: t.status.timestamp,
            },
            artifacts: &t.artifacts,
            history: &t.history,
            metadata: t.metadata.as_ref(),
        }
    }
}

/// An output of a task (a document, an image, structured data), built from parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task; streaming chunks of one artifact share it.
    #[serde(alias = "artifact_id", default)]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    /// Human-readable description.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The content; required on the wire, so a missing `parts` is an error.
    pub parts: Vec<Part>,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions that contributed to this artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with a fresh UUID v4 id.
    pub fn new(parts: Vec<Part>) -> Self {
        Self {
            artifact_id: crate::protocol::new_uuid(),
            parts,
            ..Self::default()
        }
    }

    /// Sets the human-readable name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the human-readable description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Streamed when a task's status changes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task that changed.
    #[serde(alias = "task_id", default)]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id", default)]
    pub context_id: String,
    /// The new status; required, so a missing `status` is an error.
    pub status: TaskStatus,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Streamed when an artifact is produced, or a chunk of it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task that produced the artifact.
    #[serde(alias = "task_id", default)]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id", default)]
    pub context_id: String,
    /// The artifact or chunk; required, so a missing `artifact` is an error.
    pub artifact: Artifact,
    /// Add these parts to the artifact already sent under the same id.
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    /// This is the artifact's final chunk.
    #[serde(alias = "last_chunk", default, skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    /// Free-form data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[cfg(test)]
mod task_ref_tests {
    use super::*;

    #[test]
    fn a_task_ref_serializes_exactly_as_the_task() {
        let mut full = Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Completed),
            artifacts: vec![Artifact::new(vec![Part::text("a")]).with_name("result")],
            history: vec![
                Message::user_text("hi \"there\""),
                Message::agent(vec![Part::text("line\nbreak")]),
            ],
            metadata: Some(serde_json::from_str(r#"{"k":[1,{"x":null}]}"#).unwrap()),
        };
        full.status.message = Some(Message::agent(vec![Part::text("done")]));
        let empty = Task {
            id: String::new(),
            context_id: String::new(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: None,
            },
            artifacts: vec![],
            history: vec![],
            metadata: None,
        };
        for task in [full, empty] {
            assert_eq!(
                serde_json::to_string(&TaskRef::from(&task)).unwrap(),
                serde_json::to_string(&task).unwrap()
            );
            let mut out = b"prefix".to_vec();
            let mark = task.history.len().checked_sub(1);
            let marks = TaskRef::from(&task).write_json(&mut out, mark).unwrap();
            assert_eq!(&out[6..], serde_json::to_vec(&task).unwrap().as_slice());
            let state = serde_json::to_vec(&task.status.state).unwrap();
            assert!(out[..marks.after_state].ends_with(&state));
            assert!(out[..marks.after_state - state.len()].ends_with(br#""status":{"state":"#));
            let marked = marks.message;
            if let (Some(i), Some((at, len))) = (mark, marked) {
                assert_eq!(
                    &out[at..at + len],
                    serde_json::to_vec(&task.history[i]).unwrap().as_slice()
                );
            }
            assert_eq!(mark.is_some(), marked.is_some());
        }
    }
}
