//! Event streams (SendStreamingMessage, SubscribeToTask): SSE decoding with
//! `eventsource-stream`, `Last-Event-ID` resume after a dropped connection, and
//! [`TaskAccumulator`], which folds events into the task they describe.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::{BoxStream, Stream, StreamExt};
use serde_json::Value;

use super::error::{AgentError, ClientError};
use super::{A2aClient, Binding};
use crate::protocol::{
    Artifact, Message, ProtocolVersion, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus,
};

/// How a stream recovers from a dropped connection.
///
/// When a stream breaks (a network error, no bytes for the idle timeout, or the server closing
/// it before the task reached a terminal or interrupted state), the client re-subscribes with
/// `SubscribeToTask`, sending the SSE `id:` of the last event it saw as `Last-Event-ID`, so a
/// server that numbers its events (a2a-kit's do) replays exactly the missed ones. Without an
/// event id it subscribes afresh and gets a new Task snapshot first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Reconnection attempts in a row before giving up (0 disables resuming).
    pub max_attempts: u32,
    /// Delay before the first attempt; doubles on each further one (at most 5 s).
    pub initial_backoff: Duration,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(200),
        }
    }
}

impl ResumePolicy {
    /// Never reconnect.
    pub const NEVER: ResumePolicy = ResumePolicy {
        max_attempts: 0,
        initial_backoff: Duration::ZERO,
    };
}

/// One decoded SSE event: its `id:` (if any) and payload.
pub(crate) type RawEvent = (Option<String>, StreamResponse);
pub(crate) type RawEvents = BoxStream<'static, Result<RawEvent, ClientError>>;

/// Why the byte stream under an SSE stream stopped early.
#[derive(Debug)]
struct Broken(String);
impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decode an SSE response body into stream events.
pub(crate) fn decode_sse(
    resp: reqwest::Response,
    binding: Binding,
    idle: Option<Duration>,
) -> RawEvents {
    decode_sse_with(resp, idle, move |event, data| {
        parse_event(event, data, binding)
    })
}

/// Decode an SSE response body into stream events, each event's `event:` and `data:` read by
/// `parse`.
pub(crate) fn decode_sse_with(
    resp: reqwest::Response,
    idle: Option<Duration>,
    parse: impl Fn(&str, &str) -> Result<StreamResponse, ClientError> + Send + 'static,
) -> RawEvents {
    let mut bytes = resp.bytes_stream();
    // The idle timer runs on raw bytes, so keep-alive comments count as activity.
    let timed = async_stream::stream! {
        loop {
            let next = match idle {
                Some(d) => match tokio::time::timeout(d, bytes.next()).await {
                    Ok(n) => n,
                    Err(_) => {
                        yield Err(Broken(format!("no data (not even a keep-alive) for {d:?}")));
                        return;
                    }
                },
                None => bytes.next().await,
            };
            match next {
                Some(Ok(b)) => yield Ok::<Bytes, Broken>(b),
                Some(Err(e)) => {
                    yield Err(Broken(format!("the connection broke while reading the stream: {e}")));
                    return;
                }
                None => return,
            }
        }
    };
    timed
        .eventsource()
        .filter_map(move |item| {
            let out = match item {
                Err(EventStreamError::Transport(e)) => {
                    Some(Err(ClientError::Connection(e.to_string())))
                }
                Err(EventStreamError::Utf8(e)) => Some(Err(ClientError::InvalidResponse(format!(
                    "stream is not UTF-8: {e}"
                )))),
                Err(EventStreamError::Parser(e)) => Some(Err(ClientError::InvalidResponse(
                    format!("not an SSE stream: {e}"),
                ))),
                Ok(ev) if ev.data.trim().is_empty() => None,
                Ok(ev) => Some(
                    parse(&ev.event, &ev.data).map(|e| ((!ev.id.is_empty()).then_some(ev.id), e)),
                ),
            };
            futures::future::ready(out)
        })
        .boxed()
}

/// Parse one SSE `data:` payload.
pub(crate) fn parse_event(
    event: &str,
    data: &str,
    binding: Binding,
) -> Result<StreamResponse, ClientError> {
    let v: Value = serde_json::from_str(data).map_err(|e| {
        ClientError::InvalidResponse(format!("an event is not JSON ({e}): {}", snippet(data)))
    })?;
    if let Some(err) = v.get("error") {
        let rest_status = err
            .get("code")
            .and_then(Value::as_u64)
            .filter(|c| (400..600).contains(c));
        return Err(ClientError::from(match (binding, rest_status) {
            (Binding::HttpJson, Some(status)) => AgentError::from_rest(&v, status as u16)
                .unwrap_or_else(|| AgentError::from_jsonrpc(err, None)),
            _ => AgentError::from_jsonrpc(err, None),
        }));
    }
    if event == "error" {
        return Err(ClientError::InvalidResponse(format!(
            "the agent sent an error event: {}",
            snippet(data)
        )));
    }
    // JSON-RPC wraps each event in an envelope; be lenient about finding either shape.
    let payload = match v.get("result") {
        Some(result) if v.get("jsonrpc").is_some() || binding == Binding::JsonRpc => result.clone(),
        _ => v,
    };
    serde_json::from_value(payload).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "an event is not a StreamResponse ({e}): {}",
            snippet(data)
        ))
    })
}

pub(crate) fn snippet(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s.to_string()
    }
}

/// What a stream has seen so far.
#[derive(Debug, Clone, Default)]
struct Progress {
    task_id: Option<String>,
    last_event_id: Option<String>,
    state: Option<TaskState>,
    message_only: bool,
    reconnects: u32,
}

impl Progress {
    fn observe(&mut self, id: Option<String>, ev: &StreamResponse) {
        if let Some(id) = id {
            self.last_event_id = Some(id);
        }
        match ev {
            StreamResponse::Message(m) if self.task_id.is_none() && m.task_id.is_none() => {
                self.message_only = true
            }
            _ => {}
        }
        if let Some(t) = ev.task_id().filter(|t| !t.is_empty()) {
            self.task_id.get_or_insert_with(|| t.to_string());
        }
        if let Some(s) = ev.state() {
            self.state = Some(s);
        }
    }

    /// Whether the stream has nothing more to say.
    fn finished(&self) -> bool {
        self.message_only
            || self
                .state
                .is_some_and(|s| s.is_terminal() || s.is_interrupted())
    }
}

/// A live stream of task events from `SendStreamingMessage` or `SubscribeToTask`.
///
/// Yields [`StreamResponse`]s in order: a `Task` (or a single `Message`), then status and
/// artifact updates. It resumes by itself after a dropped connection (see [`ResumePolicy`]);
/// a resumed stream without `Last-Event-ID` support starts with a fresh `Task` snapshot.
/// An `Err` item ends the stream.
pub struct TaskStream {
    inner: BoxStream<'static, Result<StreamResponse, ClientError>>,
    progress: Arc<Mutex<Progress>>,
}

impl std::fmt::Debug for TaskStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStream")
            .field("progress", &*self.lock())
            .finish_non_exhaustive()
    }
}

impl TaskStream {
    pub(crate) fn new(
        client: A2aClient,
        first: RawEvents,
        known_task: Option<String>,
        last_event_id: Option<String>,
    ) -> Self {
        let progress = Arc::new(Mutex::new(Progress {
            task_id: known_task,
            last_event_id,
            ..Progress::default()
        }));
        let p = progress.clone();
        let policy = client.config().resume;
        let v03 = client.protocol_version() == ProtocolVersion::V0_3;
        let inner = async_stream::stream! {
            let mut events = first;
            let mut attempts = 0u32;
            loop {
                let mut broke: Option<ClientError> = None;
                let mut refused: Option<ClientError> = None;
                let mut said_something = false;
                while let Some(item) = events.next().await {
                    match item {
                        Ok((id, ev)) => {
                            attempts = 0;
                            said_something = true;
                            lock(&p).observe(id, &ev);
                            yield Ok(ev);
                        }
                        Err(e) if matches!(e, ClientError::Connection(_)) => {
                            broke = Some(e);
                            break;
                        }
                        // 0.3 servers refuse to resubscribe to a task that has ended
                        // (InvalidParams, or UnsupportedOperation).
                        Err(ClientError::Agent(a))
                            if v03 && !said_something && matches!(a.code, -32602 | -32004) =>
                        {
                            refused = Some(ClientError::Agent(a));
                            break;
                        }
                        Err(e) => {
                            yield Err(e);
                            return;
                        }
                    }
                }
                // A 0.3 stream of a known task that said nothing (refused, or cut at once, as
                // the Python SDK's HTTP+JSON does for a task that has ended): the task, read
                // once, if it has ended; else it is resumed as any broken stream.
                if v03 && !said_something {
                    let known = lock(&p).task_id.clone();
                    if let Some(task_id) = known {
                        match client.get_task(&task_id).await {
                            Ok(task)
                                if task.status.state.is_terminal()
                                    || task.status.state.is_interrupted() =>
                            {
                                let ev = StreamResponse::Task(task);
                                lock(&p).observe(None, &ev);
                                yield Ok(ev);
                                return;
                            }
                            Ok(_) => {}
                            Err(e) => {
                                yield Err(e);
                                return;
                            }
                        }
                    }
                    if let Some(e) = refused {
                        yield Err(e);
                        return;
                    }
                }
                let (task_id, last_id) = {
                    let g = lock(&p);
                    if g.finished() {
                        return;
                    }
                    (g.task_id.clone(), g.last_event_id.clone())
                };
                let Some(task_id) = task_id else {
                    yield Err(broke.unwrap_or_else(|| ClientError::Connection("the stream closed before its first event".into())));
                    return;
                };
                // Reconnect, with backoff, until it works or the attempts run out.
                loop {
                    if attempts >= policy.max_attempts {
                        yield Err(broke.unwrap_or_else(|| ClientError::Connection(format!(
                            "the stream of task {task_id} closed before the task finished"
                        ))));
                        return;
                    }
                    let backoff = policy.initial_backoff.saturating_mul(1 << attempts.min(5)).min(Duration::from_secs(5));
                    attempts += 1;
                    tokio::time::sleep(backoff).await;
                    lock(&p).reconnects += 1;
                    match client.open_subscription(&task_id, last_id.as_deref()).await {
                        Ok(ev) => {
                            events = ev;
                            break;
                        }
                        Err(e) if e.is_transient() => broke = Some(e),
                        // The task ended meanwhile and the server cannot replay: read it once.
                        // (0.3 servers refuse to resubscribe to a finished task as InvalidParams.)
                        Err(ClientError::Agent(a))
                            if a.code == -32004
                                || (a.code == -32602
                                    && client.protocol_version() == ProtocolVersion::V0_3) =>
                        {
                            match client.get_task(&task_id).await {
                                Ok(task) => {
                                    let ev = StreamResponse::Task(task);
                                    lock(&p).observe(None, &ev);
                                    yield Ok(ev);
                                }
                                Err(e) => yield Err(e),
                            }
                            return;
                        }
                        Err(e) => {
                            yield Err(e);
                            return;
                        }
                    }
                }
            }
        };
        TaskStream {
            inner: inner.boxed(),
            progress,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        lock(&self.progress)
    }

    /// The task's id, once the first event named it.
    pub fn task_id(&self) -> Option<String> {
        self.lock().task_id.clone()
    }

    /// The SSE `id:` of the last event received (what a resume sends as `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<String> {
        self.lock().last_event_id.clone()
    }

    /// The last task state seen.
    pub fn state(&self) -> Option<TaskState> {
        self.lock().state
    }

    /// How many times the stream reconnected.
    pub fn reconnects(&self) -> u32 {
        self.lock().reconnects
    }

    /// Read the stream to its end and return the assembled result: the task with every
    /// artifact put together from its chunks, or the agent's direct message.
    pub async fn into_result(mut self) -> Result<SendMessageResponse, ClientError> {
        let mut acc = TaskAccumulator::default();
        while let Some(ev) = self.next().await {
            acc.apply(&ev?);
        }
        acc.into_response().ok_or_else(|| {
            ClientError::InvalidResponse("the stream ended without any event".into())
        })
    }
}

fn lock(p: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

impl Stream for TaskStream {
    type Item = Result<StreamResponse, ClientError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

/// Folds stream events into the task they describe: status updates replace the status,
/// artifact chunks are appended (`append`) or replace the artifact with the same id.
///
/// ```
/// use a2a_kit::client::TaskAccumulator;
/// use a2a_kit::protocol::*;
///
/// let mut acc = TaskAccumulator::default();
/// let chunk = |text: &str, append| StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
///     task_id: "t".into(), context_id: "c".into(),
///     artifact: Artifact { artifact_id: "a".into(), parts: vec![Part::text(text)], ..Default::default() },
///     append, last_chunk: false, metadata: None,
/// });
/// acc.apply(&chunk("Hello, ", false));
/// acc.apply(&chunk("world", true));
/// let task = acc.task().unwrap();
/// assert_eq!(task.artifacts[0].parts.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskAccumulator {
    task: Option<Task>,
    message: Option<Message>,
}

impl TaskAccumulator {
    /// Apply one event.
    pub fn apply(&mut self, event: &StreamResponse) {
        match event {
            StreamResponse::Message(m) => self.message = Some(m.clone()),
            StreamResponse::Task(t) => {
                let mut t = t.clone();
                if let Some(old) = self.task.take() {
                    if t.artifacts.is_empty() {
                        t.artifacts = old.artifacts;
                    }
                    if t.history.is_empty() {
                        t.history = old.history;
                    }
                }
                self.task = Some(t);
            }
            StreamResponse::StatusUpdate(u) => {
                let task = self.task_for(&u.task_id, &u.context_id);
                task.status = u.status.clone();
            }
            StreamResponse::ArtifactUpdate(u) => {
                let task = self.task_for(&u.task_id, &u.context_id);
                merge_artifact(&mut task.artifacts, u);
            }
        }
    }

    fn task_for(&mut self, task_id: &str, context_id: &str) -> &mut Task {
        self.task.get_or_insert_with(|| Task {
            id: task_id.to_string(),
            context_id: context_id.to_string(),
            status: TaskStatus {
                state: TaskState::Unspecified,
                message: None,
                timestamp: None,
            },
            ..Task::default()
        })
    }

    /// The task so far.
    pub fn task(&self) -> Option<&Task> {
        self.task.as_ref()
    }

    /// The direct message, if the agent answered with one.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_ref()
    }

    /// The result: the task if there is one, else the message.
    pub fn into_response(self) -> Option<SendMessageResponse> {
        match (self.task, self.message) {
            (Some(t), _) => Some(SendMessageResponse::Task(t)),
            (None, Some(m)) => Some(SendMessageResponse::Message(m)),
            (None, None) => None,
        }
    }
}

fn merge_artifact(artifacts: &mut Vec<Artifact>, u: &TaskArtifactUpdateEvent) {
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == u.artifact.artifact_id)
    {
        Some(existing) if u.append => {
            existing.parts.extend(u.artifact.parts.iter().cloned());
            if existing.name.is_none() {
                existing.name.clone_from(&u.artifact.name);
            }
            if existing.description.is_none() {
                existing.description.clone_from(&u.artifact.description);
            }
        }
        Some(existing) => *existing = u.artifact.clone(),
        None => artifacts.push(u.artifact.clone()),
    }
}

/// The text of a status message: its text parts, else the `text` of data parts (a2a-kit's
/// status indicators are `{"type": "status-indicator", "text": ...}` data parts).
pub fn status_text(message: &Message) -> Option<String> {
    let text: String = message
        .parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect::<Vec<_>>()
        .join("");
    if !text.is_empty() {
        return Some(text);
    }
    let data: Vec<&str> = message
        .parts
        .iter()
        .filter_map(|p| {
            p.as_data()
                .and_then(|d| d.get("text"))
                .and_then(Value::as_str)
        })
        .collect();
    (!data.is_empty()).then(|| data.join(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Part, TaskStatusUpdateEvent};

    fn response(body: &'static str) -> reqwest::Response {
        reqwest::Response::from(
            http::Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap(),
        )
    }

    #[tokio::test]
    async fn decodes_jsonrpc_envelopes_with_ids_comments_and_crlf() {
        let body = ": keep-alive\r\n\r\nid: 1\r\ndata: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"task\": {\"id\": \"t\", \"contextId\": \"c\", \"status\": {\"state\": \"TASK_STATE_SUBMITTED\"}}}}\r\n\r\n\
id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n";
        let evs: Vec<_> = decode_sse(response(body), Binding::JsonRpc, None)
            .collect()
            .await;
        assert_eq!(evs.len(), 2);
        let (id, ev) = evs[0].as_ref().unwrap();
        assert_eq!(id.as_deref(), Some("1"));
        assert!(matches!(ev, StreamResponse::Task(_)));
        assert_eq!(
            evs[1].as_ref().unwrap().1.state(),
            Some(TaskState::Completed)
        );
    }

    #[tokio::test]
    async fn decodes_errors_in_both_bindings() {
        let rpc = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"Task not found\"}}\n\n";
        let evs: Vec<_> = decode_sse(response(rpc), Binding::JsonRpc, None)
            .collect()
            .await;
        assert_eq!(evs[0].as_ref().unwrap_err().code(), Some(-32001));
        let rest = "event: error\ndata: {\"error\":{\"code\":400,\"status\":\"FAILED_PRECONDITION\",\"message\":\"no\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"UNSUPPORTED_OPERATION\"}]}}\n\n";
        let evs: Vec<_> = decode_sse(response(rest), Binding::HttpJson, None)
            .collect()
            .await;
        let err = evs[0].as_ref().unwrap_err();
        assert_eq!(err.code(), Some(-32004));
        assert_eq!(err.reason(), Some("UNSUPPORTED_OPERATION"));
    }

    #[test]
    fn accumulator_assembles_chunks_and_status() {
        let mut acc = TaskAccumulator::default();
        acc.apply(&StreamResponse::Task(Task {
            id: "t".into(),
            context_id: "c".into(),
            ..Task::default()
        }));
        let chunk = |text: &str, append: bool| {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                artifact: Artifact {
                    artifact_id: "a".into(),
                    parts: vec![Part::text(text)],
                    ..Artifact::default()
                },
                append,
                last_chunk: false,
                metadata: None,
            })
        };
        acc.apply(&chunk("x", false));
        acc.apply(&chunk("y", true));
        acc.apply(&chunk("z", false)); // a repeated id without append replaces
        acc.apply(&StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Completed),
            metadata: None,
        }));
        let Some(SendMessageResponse::Task(t)) = acc.into_response() else {
            panic!()
        };
        assert_eq!(t.status.state, TaskState::Completed);
        assert_eq!(t.artifacts.len(), 1);
        assert_eq!(t.artifacts[0].parts, vec![Part::text("z")]);
    }

    #[test]
    fn status_text_reads_text_and_indicators() {
        assert_eq!(
            status_text(&Message::agent_text("hi")).as_deref(),
            Some("hi")
        );
        let m = Message::agent(vec![Part::data(
            serde_json::json!({"type": "status-indicator", "text": "step 1"}),
        )]);
        assert_eq!(status_text(&m).as_deref(), Some("step 1"));
        assert_eq!(
            status_text(&Message::agent(vec![Part::url("http://x")])),
            None
        );
    }
}
