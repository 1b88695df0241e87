//! What the checks build tasks, events and queries from.

use a2a_kit::protocol::{
    Artifact, ListTasksResponse, Message, Metadata, Part, Role, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent, Timestamp,
};
use a2a_kit::store::{
    ClusterStore, EventRecord, ListQuery, PushConfigStore, PushOutbox, RemoteTaskStore, Seq,
    TaskRecord, TaskView,
};
use serde_json::json;

use crate::*;

/// A base instant a few minutes before now, at whole seconds (so offsets stay readable).
/// Read it once per check: two readings differ when a second boundary falls between them.
pub(crate) fn base() -> i64 {
    let now = Timestamp::now().0.timestamp_millis();
    now - now % 1000 - 600_000
}

pub(crate) fn ts(ms: i64) -> Timestamp {
    Timestamp::from(chrono::DateTime::from_timestamp_millis(ms).expect("timestamp in range"))
}

pub(crate) fn ms_of(t: &Task) -> i64 {
    t.status
        .timestamp
        .expect("checks always stamp statuses")
        .0
        .timestamp_millis()
}

pub(crate) fn msg(role: Role, id: &str, text: &str) -> Message {
    Message {
        message_id: id.to_string(),
        role,
        parts: vec![Part::text(text)],
        ..Message::default()
    }
}

pub(crate) fn status_msg(id: &str, text: &str) -> Message {
    let mut meta = Metadata::new();
    meta.insert(
        a2a_kit::protocol::STATUS_MESSAGE_KIND_KEY.into(),
        a2a_kit::protocol::STATUS_MESSAGE_KIND.into(),
    );
    msg(Role::Agent, id, text).with_metadata(meta)
}

pub(crate) fn new_task(id: &str, ctx: &str, state: TaskState, at: i64) -> Task {
    Task {
        id: id.to_string(),
        context_id: ctx.to_string(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(ts(at)),
        },
        artifacts: Vec::new(),
        history: vec![msg(Role::User, &format!("{id}-m0"), "start")],
        metadata: None,
    }
}

/// Metadata with nested JSON of every kind, non-ASCII text and an integer beyond 2^53.
pub(crate) fn rich_metadata() -> Metadata {
    let mut meta = Metadata::new();
    meta.insert(
        "nested".into(),
        json!({"a": [1, 2.5, -3, true, null, "é✓"], "big": 9_007_199_254_740_993u64}),
    );
    meta
}

/// A message with every field set and a part of every kind.
pub(crate) fn rich_message(id: &str, task: &str, ctx: &str) -> Message {
    let meta = rich_metadata();
    Message {
        message_id: id.into(),
        context_id: Some(ctx.into()),
        task_id: Some(task.into()),
        role: Role::User,
        parts: vec![
            Part::text("multi\nline \"quoted\" ✓"),
            Part::data(json!({"k": {"deep": [null, 0.1]}})).with_metadata(meta.clone()),
            Part::raw(vec![0u8, 1, 2, 254, 255])
                .with_filename("bytes.bin")
                .with_media_type("application/octet-stream"),
            Part::url("https://example.com/f.pdf")
                .with_media_type("application/pdf")
                .with_filename("f.pdf"),
        ],
        metadata: Some(meta),
        extensions: vec!["https://example.com/ext/v1".into()],
        reference_task_ids: vec!["older-task".into()],
    }
}

/// A task with every field set: a status message, an artifact, history and metadata, all
/// [rich](rich_message).
pub(crate) fn rich_task(id: &str, ctx: &str, state: TaskState, at: i64) -> Task {
    let rich = rich_message(&format!("{id}-1"), id, ctx);
    let meta = rich_metadata();
    Task {
        id: id.into(),
        context_id: ctx.into(),
        status: TaskStatus {
            state,
            message: Some(rich.clone()),
            timestamp: Some(ts(at)),
        },
        artifacts: vec![Artifact {
            artifact_id: "art-✓".into(),
            name: Some("name".into()),
            description: Some("desc".into()),
            parts: rich.parts.clone(),
            metadata: Some(meta.clone()),
            extensions: vec!["https://example.com/ext/v1".into()],
        }],
        history: vec![rich],
        metadata: Some(meta),
    }
}

pub(crate) fn status_ev(
    task: &str,
    ctx: &str,
    state: TaskState,
    at: i64,
    message: Option<Message>,
) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.to_string(),
        context_id: ctx.to_string(),
        status: TaskStatus {
            state,
            message,
            timestamp: Some(ts(at)),
        },
        metadata: None,
    })
}

pub(crate) fn artifact(id: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: id.to_string(),
        parts,
        ..Artifact::default()
    }
}

pub(crate) fn artifact_ev(
    task: &str,
    ctx: &str,
    a: Artifact,
    append: bool,
    last_chunk: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.to_string(),
        context_id: ctx.to_string(),
        artifact: a,
        append,
        last_chunk,
        metadata: None,
    })
}

pub(crate) fn push(task: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: Some(id.to_string()),
        task_id: Some(task.to_string()),
        url: url.to_string(),
        token: Some(format!("tok-{id}")),
        authentication: None,
        ..Default::default()
    }
}

pub(crate) fn query(page_size: usize) -> ListQuery {
    ListQuery {
        page_size,
        view: TaskView {
            history_length: Some(0),
            include_artifacts: false,
        },
        ..ListQuery::default()
    }
}

pub(crate) async fn create(s: &Store, task: &Task) {
    let seq = s
        .create_task(task.clone(), None, None)
        .await
        .unwrap_or_else(|e| panic!("create_task({}): {e}", task.id));
    assert_eq!(
        seq, 1,
        "create_task returns 1 (the creation snapshot is event 1)"
    );
}

pub(crate) async fn append(s: &Store, task: &str, ev: StreamResponse) -> Seq {
    s.append_event(task, ev)
        .await
        .unwrap_or_else(|e| panic!("append_event({task}): {e}"))
}

pub(crate) async fn full(s: &Store, id: &str) -> TaskRecord {
    s.get_task(id, TaskView::FULL)
        .await
        .unwrap_or_else(|e| panic!("get_task({id}): {e}"))
        .unwrap_or_else(|| panic!("task {id} is missing"))
}

pub(crate) async fn all_events(s: &Store, id: &str) -> Vec<EventRecord> {
    s.events_after(id, 0, usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("events_after({id}): {e}"))
}

/// Walk every page of `q`; returns the tasks and checks the per-page invariants.
pub(crate) async fn walk(s: &Store, mut q: ListQuery) -> Vec<Task> {
    let mut out = Vec::new();
    let mut total = None;
    for _ in 0..10_000 {
        let page: ListTasksResponse = s
            .list_tasks(&q)
            .await
            .unwrap_or_else(|e| panic!("list_tasks: {e}"));
        assert_eq!(
            page.page_size, q.page_size as i32,
            "pageSize echoes the query"
        );
        assert!(
            page.tasks.len() <= q.page_size,
            "a page holds at most pageSize tasks"
        );
        match total {
            None => total = Some(page.total_size),
            Some(t) => assert_eq!(page.total_size, t, "totalSize is the same on every page"),
        }
        out.extend(page.tasks);
        if page.next_page_token.is_empty() {
            assert_eq!(
                Some(out.len() as i32),
                total,
                "the pages add up to totalSize"
            );
            return out;
        }
        assert!(!out.is_empty(), "a page with a nextPageToken is not empty");
        q.page_token = Some(page.next_page_token);
    }
    panic!("ListTasks pagination never ended");
}

pub(crate) fn ids(tasks: &[Task]) -> Vec<String> {
    tasks.iter().map(|t| t.id.clone()).collect()
}

/// Ids ordered as ListTasks orders them: newest status timestamp first, then id descending.
pub(crate) fn list_order(mut keys: Vec<(i64, String)>) -> Vec<String> {
    keys.sort();
    keys.reverse();
    keys.into_iter().map(|(_, id)| id).collect()
}

pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The store's push configs; a check of them panics on a store without.
pub(crate) fn push_store(s: &Store) -> &dyn PushConfigStore {
    s.push_configs()
        .unwrap_or_else(|| panic!("{}", Capability::PushConfigs.missing()))
}

/// The store's push outbox; a check of it panics on a store without.
pub(crate) fn outbox_of(s: &Store) -> &dyn PushOutbox {
    s.push_outbox()
        .unwrap_or_else(|| panic!("{}", Capability::PushOutbox.missing()))
}

/// The store's cluster capability; a check of it panics on a store without.
pub(crate) fn cluster_of(s: &Store) -> &dyn ClusterStore {
    s.cluster()
        .unwrap_or_else(|| panic!("{}", Capability::Cluster.missing()))
}

/// The store's remote tasks; a check of them panics on a store without.
pub(crate) fn remote_of(s: &Store) -> &dyn RemoteTaskStore {
    s.remote_tasks()
        .unwrap_or_else(|| panic!("{}", Capability::RemoteTasks.missing()))
}
