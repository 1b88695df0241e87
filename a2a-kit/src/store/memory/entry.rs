//! A stored task as the in-memory store keeps it: a live task with a compact event log, or a
//! finished one kept as its ProtoJSON bytes. Private to the store: the rest of the kit sees
//! tasks and events only through the `TaskManager` trait.

use std::sync::Arc;

use super::super::{
    Owner, Seq, StoreError, TaskView, apply_event, check_artifact_update, check_status_update,
    is_closing_part,
};
use crate::protocol::{
    Artifact, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskRef, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) id: Arc<str>,
    pub(super) body: Body,
    /// Interned: an agent has a handful of skills, so their ids are shared.
    pub(super) skill_id: Option<Arc<str>>,
    /// Whose task it is (ListTasks and the server's scoping compare it).
    pub(super) owner: Option<Owner>,
    /// The event log; empty once dropped (`last_seq` still counts it) or once it is `steps`.
    pub(super) events: Vec<Logged>,
    /// A finished task's whole log, when every event can be rebuilt from the final task
    /// (see [`Step`]): kept as long as the task, at a few bytes an event.
    pub(super) steps: Box<[Step]>,
    /// How many [`Logged::ArtifactOf`] entries `events` holds (none: nothing to look for
    /// when an artifact changes).
    pub(super) artifact_refs: u32,
    pub(super) last_seq: Seq,
    /// The runtime said no reader needs the log ([`TaskManager::release_log`]).
    pub(super) log_released: bool,
    /// Finished recently: the log is kept even if released.
    pub(super) hot: bool,
    pub(super) push: Vec<TaskPushNotificationConfig>,
    pub(super) time_key: i64,
}

/// One event of a log, sharing what the task holds anyway. Small (large parts are boxed):
/// a streamed artifact logs one entry per chunk.
#[derive(Debug)]
pub(super) enum Logged {
    /// An event as written.
    Event(Box<StreamResponse>),
    /// A status update of this task. Its ids are the task's and its message, if any, is the
    /// task's `history[at]`: none of them is held twice (nor freed late, when the log goes).
    Status {
        state: TaskState,
        timestamp: Option<Timestamp>,
        at: Option<usize>,
        metadata: Option<crate::protocol::Metadata>,
    },
    /// An artifact update of this task whose artifact is the task's `artifacts[index]`, which
    /// has not changed since (a change first turns this entry into [`Logged::Artifact`]).
    ArtifactOf {
        index: usize,
        append: bool,
        last_chunk: bool,
        metadata: Option<crate::protocol::Metadata>,
    },
    /// An artifact update of this task, its ids left out (they are the task's).
    Artifact {
        artifact: Box<Artifact>,
        append: bool,
        last_chunk: bool,
        metadata: Option<crate::protocol::Metadata>,
    },
    /// The creation snapshot: the task as created was its first `history` messages with this
    /// status and these artifacts; id, context and metadata never change.
    Created {
        state: TaskState,
        timestamp: Option<Timestamp>,
        message: Option<Box<Message>>,
        artifacts: Vec<Artifact>,
        history: usize,
    },
}

impl Logged {
    pub(super) fn needs_task(&self) -> bool {
        matches!(
            self,
            Logged::Status { at: Some(_), .. } | Logged::Created { .. } | Logged::ArtifactOf { .. }
        )
    }

    /// The event as written; `(task_id, context_id)` are the task's, and `task` is the stored
    /// task when [`needs_task`](Self::needs_task).
    pub(super) fn event(
        &self,
        (task_id, context_id): (&str, &str),
        task: Option<&Task>,
    ) -> StreamResponse {
        match (self, task) {
            (Logged::Event(e), _) => (**e).clone(),
            (
                Logged::Artifact {
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                },
                _,
            ) => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: task_id.to_string(),
                context_id: context_id.to_string(),
                artifact: (**artifact).clone(),
                append: *append,
                last_chunk: *last_chunk,
                metadata: metadata.clone(),
            }),
            (
                Logged::ArtifactOf {
                    index,
                    append,
                    last_chunk,
                    metadata,
                },
                Some(t),
            ) => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: task_id.to_string(),
                context_id: context_id.to_string(),
                artifact: t.artifacts.get(*index).cloned().unwrap_or_default(),
                append: *append,
                last_chunk: *last_chunk,
                metadata: metadata.clone(),
            }),
            (
                Logged::Status {
                    state,
                    timestamp,
                    at,
                    metadata,
                },
                t,
            ) => {
                debug_assert!(at.is_none() || t.is_some(), "needs_task");
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task_id.to_string(),
                    context_id: context_id.to_string(),
                    status: TaskStatus {
                        state: *state,
                        message: at.and_then(|at| t?.history.get(at).cloned()),
                        timestamp: *timestamp,
                    },
                    metadata: metadata.clone(),
                })
            }
            (
                Logged::Created {
                    state,
                    timestamp,
                    message,
                    artifacts,
                    history,
                },
                Some(t),
            ) => StreamResponse::Task(Task {
                id: t.id.clone(),
                context_id: t.context_id.clone(),
                status: TaskStatus {
                    state: *state,
                    message: message.as_deref().cloned(),
                    timestamp: *timestamp,
                },
                artifacts: artifacts.clone(),
                history: t.history[..(*history).min(t.history.len())].to_vec(),
                metadata: t.metadata.clone(),
            }),
            (_, None) => unreachable!("the caller passes the task when needs_task"),
        }
    }
}

/// One event of a finished task's log, rebuilt from the final task: what a quick task
/// writes (created, WORKING, its result as one whole artifact, the end) holds no content of
/// its own, so its log costs no allocation per event and is never dropped: a `Last-Event-ID`
/// replay of any retained task is exact, and finishing a task does not reach back to an old
/// one to drop its log.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    /// The creation snapshot: no artifacts, the first `history` messages.
    Created {
        state: TaskState,
        timestamp: Option<Timestamp>,
        history: u32,
    },
    /// A status update with no metadata; its message, if any, is `history[at]`.
    Status {
        state: TaskState,
        timestamp: Option<Timestamp>,
        at: Option<u32>,
    },
    /// An artifact update with no metadata whose artifact is the final task's `artifacts[index]`.
    Artifact {
        index: u32,
        append: bool,
        last_chunk: bool,
    },
}

impl Step {
    /// The steps of `log` if every event can be rebuilt from the finished task. (An artifact
    /// copied into the log is never the final one: it was appended to, or changed since.)
    pub(super) fn derive(log: &[Logged]) -> Option<Box<[Step]>> {
        let small = |n: usize| u32::try_from(n).ok();
        log.iter()
            .map(|logged| match logged {
                Logged::Created {
                    state,
                    timestamp,
                    message: None,
                    artifacts,
                    history,
                } if artifacts.is_empty() => Some(Step::Created {
                    state: *state,
                    timestamp: *timestamp,
                    history: small(*history)?,
                }),
                Logged::Status {
                    state,
                    timestamp,
                    at,
                    metadata: None,
                } => Some(Step::Status {
                    state: *state,
                    timestamp: *timestamp,
                    at: match at {
                        Some(at) => Some(small(*at)?),
                        None => None,
                    },
                }),
                Logged::ArtifactOf {
                    index,
                    append,
                    last_chunk,
                    metadata: None,
                } => Some(Step::Artifact {
                    index: small(*index)?,
                    append: *append,
                    last_chunk: *last_chunk,
                }),
                _ => None,
            })
            .collect()
    }

    /// The log entry this step stands for (it holds nothing on the heap): events are built
    /// from it, and the task, by [`Logged::event`] like those of any log.
    pub(super) fn logged(&self) -> Logged {
        match *self {
            Step::Created {
                state,
                timestamp,
                history,
            } => Logged::Created {
                state,
                timestamp,
                message: None,
                artifacts: Vec::new(),
                history: history as usize,
            },
            Step::Status {
                state,
                timestamp,
                at,
            } => Logged::Status {
                state,
                timestamp,
                at: at.map(|at| at as usize),
                metadata: None,
            },
            Step::Artifact {
                index,
                append,
                last_chunk,
            } => Logged::ArtifactOf {
                index: index as usize,
                append,
                last_chunk,
                metadata: None,
            },
        }
    }
}

#[derive(Debug)]
pub(super) enum Body {
    /// A live (or recently finished) task.
    Live(Box<Stored>),
    /// A finished task: its ProtoJSON, exactly as GetTask returns it in full except that a
    /// status message that is also in the history is left out of `status` (see [`Spliced`]).
    Compact {
        state: TaskState,
        context_id: ContextId,
        json: bytes::Bytes,
        status_message: Option<Spliced>,
    },
}

/// A compact task's context id: where `json` holds it as is (no escapes: the usual case), so
/// it costs no allocation of its own; otherwise a copy.
#[derive(Debug)]
pub(super) enum ContextId {
    InJson { at: u32, len: u32 },
    Owned(Box<str>),
}

impl ContextId {
    /// Find `context_id` in `json` (written by `TaskRef::write_json`, right after the id).
    pub(super) fn locate(json: &[u8], id: &str, context_id: &str) -> Self {
        // `{"id":"<id>","contextId":"<context id>"`: an id or context id with escapes does not
        // match at this offset, and is copied.
        let at = id.len() + 22;
        let end = at + context_id.len();
        let as_is = !context_id.is_empty()
            && json.get(at - 1) == Some(&b'"')
            && json.get(at..end) == Some(context_id.as_bytes())
            && json.get(end) == Some(&b'"');
        match (as_is, u32::try_from(at), u32::try_from(context_id.len())) {
            (true, Ok(at), Ok(len)) => ContextId::InJson { at, len },
            _ => ContextId::Owned(context_id.into()),
        }
    }

    pub(super) fn get<'a>(&'a self, json: &'a [u8]) -> &'a str {
        match self {
            ContextId::InJson { at, len } => json
                .get(*at as usize..(*at + *len) as usize)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
            ContextId::Owned(c) => c,
        }
    }
}

/// Where the status message of a compact task is: `history[index]`, whose JSON is
/// `json[offset..offset + len]`; the full JSON puts those bytes back into `status`, at
/// `after_state`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spliced {
    pub(super) index: u32,
    pub(super) offset: u32,
    pub(super) len: u32,
    pub(super) after_state: u32,
}

/// A task as held: `status.message` is `None` when `status_message` points at the same message
/// in the history (every status message goes there too), so it is stored once.
#[derive(Debug)]
pub(super) struct Stored {
    pub(super) task: Task,
    pub(super) status_message: Option<usize>,
}

impl Stored {
    /// Apply a status update of the task's own context. Its message goes to the history,
    /// once: the status and the log entry point at it.
    #[inline]
    fn log_status(&mut self, mut u: TaskStatusUpdateEvent) -> Result<Logged, StoreError> {
        check_status_update(&self.task, &u)?;
        let at = u.status.message.take().map(|m| {
            self.task.history.push(m);
            self.task.history.len() - 1
        });
        let (state, timestamp) = (u.status.state, u.status.timestamp);
        self.task.status = u.status;
        super::super::merge_metadata(&mut self.task.metadata, u.metadata.as_ref());
        self.status_message = at;
        Ok(Logged::Status {
            state,
            timestamp,
            at,
            metadata: u.metadata,
        })
    }

    /// Apply an artifact update of the task's own context (`existing`: the index of the
    /// artifact it changes). The event's artifact becomes the task's as it is (a new one
    /// without the closing part of a stream, or a replacement): held once, by the task, and
    /// counted in `artifact_refs`. A chunk appended is logged as it came.
    #[inline]
    fn log_artifact(
        &mut self,
        u: TaskArtifactUpdateEvent,
        existing: Option<usize>,
        artifact_refs: &mut u32,
    ) -> Result<Logged, StoreError> {
        let whole = match existing {
            Some(_) => !u.append,
            None => !u.artifact.parts.iter().any(is_closing_part),
        };
        if !whole {
            let u = StreamResponse::ArtifactUpdate(u);
            apply_event(&mut self.task, &u)?;
            let StreamResponse::ArtifactUpdate(u) = u else {
                unreachable!("built above")
            };
            return Ok(Logged::Artifact {
                artifact: Box::new(u.artifact),
                append: u.append,
                last_chunk: u.last_chunk,
                metadata: u.metadata,
            });
        }
        check_artifact_update(&self.task, &u)?;
        let artifacts = &mut self.task.artifacts;
        let index = match existing {
            Some(i) => {
                artifacts[i] = u.artifact;
                i
            }
            None => {
                artifacts.push(u.artifact);
                artifacts.len() - 1
            }
        };
        *artifact_refs += 1;
        Ok(Logged::ArtifactOf {
            index,
            append: u.append,
            last_chunk: u.last_chunk,
            metadata: u.metadata,
        })
    }
}

impl Stored {
    /// The task as clients see it, trimmed to `view`, borrowed from the held parts.
    pub(super) fn view_ref(&self, view: TaskView) -> TaskRef<'_> {
        let t = &self.task;
        let mut task = TaskRef::from(t);
        if let Some(i) = self.status_message {
            task.status.message = t.history.get(i);
        }
        if let Some(n) = view.history_length {
            task.history = &t.history[t.history.len().saturating_sub(n)..];
        }
        if !view.include_artifacts {
            task.artifacts = &[];
        }
        task
    }

    /// [`view_ref`](Self::view_ref), owned (clones only what the view keeps).
    pub(super) fn view(&self, view: TaskView) -> Task {
        self.view_ref(view).to_task()
    }

    /// Append the JSON of [`view_ref`](Self::view_ref) to `out`, cloning nothing.
    pub(super) fn write_view_json(
        &self,
        view: TaskView,
        out: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        self.view_ref(view)
            .write_json(out, None)
            .map(drop)
            .map_err(|e| StoreError::Backend(format!("could not serialize a task: {e}")))
    }
}

impl Body {
    pub(super) fn state(&self) -> TaskState {
        match self {
            Body::Live(s) => s.task.status.state,
            Body::Compact { state, .. } => *state,
        }
    }

    pub(super) fn context_id(&self) -> &str {
        match self {
            Body::Live(s) => &s.task.context_id,
            Body::Compact {
                context_id, json, ..
            } => context_id.get(json),
        }
    }

    /// The held form of a compacted task.
    pub(super) fn inflate(&self) -> Result<Stored, StoreError> {
        match self {
            Body::Live(_) => unreachable!("inflate is only called on compact bodies"),
            Body::Compact {
                json,
                status_message,
                ..
            } => Ok(Stored {
                task: serde_json::from_slice(json).map_err(|e| {
                    StoreError::Backend(format!("a compacted task does not parse: {e}"))
                })?,
                status_message: status_message.map(|s| s.index as usize),
            }),
        }
    }

    pub(super) fn view(&self, view: TaskView) -> Result<Task, StoreError> {
        match self {
            Body::Live(s) => Ok(s.view(view)),
            compact => Ok(compact.inflate()?.view(view)),
        }
    }

    /// Turn a finished task into its bytes (a no-op if it is compact already or cannot be
    /// serialized, which the protocol types never fail to). A status message that is also in
    /// the history is written once, in the history; the full JSON splices a copy of those
    /// bytes into `status` (see [`write_full_json`](Self::write_full_json)).
    pub(super) fn compact(&mut self) {
        thread_local! {
            /// Where a task is written before it is copied out at its exact length: one
            /// allocation per task, none to grow or shrink a buffer.
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        /// A scratch buffer grown past this by a large task is not kept.
        const KEEP: usize = 64 * 1024;
        let Body::Live(s) = self else { return };
        let t = &s.task;
        let written = SCRATCH.with_borrow_mut(|json| {
            json.clear();
            // The status is written without its message; history[i] is where the message is.
            let marks = TaskRef::from(t).write_json(json, s.status_message).ok()?;
            let spliced = s
                .status_message
                .zip(marks.message)
                .and_then(|(i, (offset, len))| {
                    Some(Spliced {
                        index: u32::try_from(i).ok()?,
                        offset: u32::try_from(offset).ok()?,
                        len: u32::try_from(len).ok()?,
                        after_state: u32::try_from(marks.after_state).ok()?,
                    })
                });
            if s.status_message.is_some() && spliced.is_none() {
                // Not found (cannot happen): keep the message in the status as well.
                json.clear();
                s.view_ref(TaskView::FULL).write_json(json, None).ok()?;
            }
            let bytes = bytes::Bytes::copy_from_slice(json);
            if json.capacity() > KEEP {
                *json = Vec::new();
            }
            Some((bytes, spliced))
        });
        let Some((json, status_message)) = written else {
            return;
        };
        *self = Body::Compact {
            state: t.status.state,
            context_id: ContextId::locate(&json, &t.id, &t.context_id),
            json,
            status_message,
        };
    }

    /// Append the full JSON of a compact task to `out` (GetTask with no history limit and
    /// artifacts); `false` if this is not a compact task.
    pub(super) fn write_full_json(&self, out: &mut Vec<u8>) -> bool {
        let Body::Compact {
            json,
            status_message,
            ..
        } = self
        else {
            return false;
        };
        let Some(sp) = status_message else {
            out.extend_from_slice(json);
            return true;
        };
        let (offset, len, after_state) =
            (sp.offset as usize, sp.len as usize, sp.after_state as usize);
        let (Some(message), true) = (json.get(offset..offset + len), after_state <= json.len())
        else {
            return false;
        };
        out.reserve(json.len() + len + 11);
        out.extend_from_slice(&json[..after_state]);
        out.extend_from_slice(br#","message":"#);
        out.extend_from_slice(message);
        out.extend_from_slice(&json[after_state..]);
        true
    }
}

impl Entry {
    /// A new task's entry: its log holds the creation snapshot, with room for `more` events
    /// (at least a quick task's: working, a result, the end). Not yet indexed; the skill id is
    /// interned by the caller, under the lock.
    pub(super) fn new(id: Arc<str>, task: Task, more: usize) -> Entry {
        let mut events = Vec::with_capacity(1 + more.max(3));
        events.push(Logged::Created {
            state: task.status.state,
            timestamp: task.status.timestamp,
            message: task.status.message.clone().map(Box::new),
            artifacts: task.artifacts.clone(),
            history: task.history.len(),
        });
        Entry {
            id,
            time_key: millis(task.status.timestamp),
            events,
            steps: Box::default(),
            artifact_refs: 0,
            last_seq: 1,
            log_released: false,
            hot: false,
            body: Body::Live(Box::new(Stored {
                task,
                status_message: None,
            })),
            skill_id: None,
            owner: None,
            push: Vec::new(),
        }
    }

    /// Apply `event` to the task and log it; `Ok(true)` if it ended the task (which is then
    /// compacted). On `Err` nothing changed. The caller updates the indexes (`time_key` may
    /// have moved).
    pub(super) fn append(
        &mut self,
        event: StreamResponse,
        window: usize,
    ) -> Result<bool, StoreError> {
        if let Body::Compact { .. } = self.body {
            // A compacted task is finished: find the exact refusal on a copy, change nothing.
            let mut copy = self.body.inflate()?.task;
            apply_event(&mut copy, &event)?;
            return Err(StoreError::InvalidEvent(format!(
                "task {} is finished",
                self.id
            )));
        }
        // `apply_event` checks everything before it mutates, so applying in place is atomic
        // (and avoids cloning a task whose artifact grows with every chunk).
        let Entry {
            body: Body::Live(stored),
            events,
            artifact_refs,
            ..
        } = self
        else {
            unreachable!("compact bodies returned above")
        };
        let was_terminal = stored.task.status.state.is_terminal();
        // The artifact an update changes: log entries pointing at it get their copy first.
        let existing = match &event {
            StreamResponse::ArtifactUpdate(u) => stored
                .task
                .artifacts
                .iter()
                .position(|a| a.artifact_id == u.artifact.artifact_id),
            _ => None,
        };
        if let Some(i) = existing {
            materialize(events, artifact_refs, i, &stored.task.artifacts[i]);
        }
        let logged = match event {
            StreamResponse::StatusUpdate(u) if u.context_id == stored.task.context_id => {
                stored.log_status(u)?
            }
            StreamResponse::ArtifactUpdate(u) if u.context_id == stored.task.context_id => {
                stored.log_artifact(u, existing, artifact_refs)?
            }
            // An event naming another context (a writer's mistake the store keeps as written).
            other => {
                apply_event(&mut stored.task, &other)?;
                if let StreamResponse::StatusUpdate(_) = other {
                    // Its message is in the status itself (and in the history).
                    stored.status_message = None;
                }
                Logged::Event(Box::new(other))
            }
        };
        self.time_key = millis(stored.task.status.timestamp);
        let became_terminal = stored.task.status.state.is_terminal() && !was_terminal;
        self.events.push(logged);
        self.last_seq += 1;
        if became_terminal {
            if let Some(steps) = Step::derive(&self.events) {
                self.steps = steps;
                self.events = Vec::new();
            }
            self.finished(window);
        }
        Ok(became_terminal)
    }

    /// The entry half of [`Inner::finished`]: compact, and keep the log if it is hot.
    pub(super) fn finished(&mut self, window: usize) {
        self.body.compact();
        // A log kept as steps never joins the window.
        self.hot = window > 0 && self.steps.is_empty();
        if !self.hot && self.log_released {
            self.events = Vec::new();
        }
    }

    pub(super) fn view(&self, view: TaskView) -> Result<Task, StoreError> {
        self.body.view(view)
    }

    /// The task, made live again if it was compacted (for the rare change to an old task).
    pub(super) fn live(&mut self) -> Result<&mut Stored, StoreError> {
        if let Body::Compact { .. } = self.body {
            self.body = Body::Live(Box::new(self.body.inflate()?));
        }
        match &mut self.body {
            Body::Live(s) => Ok(s),
            Body::Compact { .. } => unreachable!("made live above"),
        }
    }
}

/// `artifacts[index]` is about to change: the log entries that point at it get a copy of it as
/// it is (what they were written with).
pub(super) fn materialize(events: &mut [Logged], refs: &mut u32, index: usize, current: &Artifact) {
    if *refs == 0 {
        return;
    }
    for logged in events.iter_mut() {
        if let Logged::ArtifactOf {
            index: at,
            append,
            last_chunk,
            metadata,
        } = logged
            && *at == index
        {
            *logged = Logged::Artifact {
                artifact: Box::new(current.clone()),
                append: *append,
                last_chunk: *last_chunk,
                metadata: metadata.take(),
            };
            *refs -= 1;
        }
    }
}

/// The time key of a status timestamp (now, if it has none).
pub(super) fn millis(ts: Option<Timestamp>) -> i64 {
    ts.unwrap_or_else(Timestamp::now).0.timestamp_millis()
}
