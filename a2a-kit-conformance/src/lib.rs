//! The [`TaskManager`] conformance suite: test support, not part of the SDK.
//!
//! Every store must behave the same: the runtime, the HTTP bindings and `Last-Event-ID` replay
//! rely on exactly the semantics of [`InMemoryTaskManager`](a2a_kit::store::InMemoryTaskManager)
//! and [`apply_event`]. This crate checks them, so a third-party store can run the same suite
//! as the kit's own stores:
//!
//! ```toml
//! [dev-dependencies]
//! a2a-kit-conformance = "0.1"
//! ```
//!
//! ```
//! use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
//! use a2a_kit_conformance as conformance;
//!
//! #[tokio::test(flavor = "multi_thread")]
//! # async fn never() {}
//! async fn my_store_conforms() {
//!     // Replace with your store; each check gets a fresh, empty one.
//!     conformance::run_all(|| async {
//!         InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
//!     })
//!     .await;
//! }
//! # tokio::runtime::Runtime::new().unwrap().block_on(my_store_conforms());
//! ```
//!
//! Rules for the store under test:
//!
//! * each call of the factory returns a **new, empty** store;
//! * the store evicts nothing by itself while a check runs (for the in-memory store:
//!   `terminal_ttl: None`): some checks use status timestamps minutes or hours in the past;
//! * a Tokio runtime is running (the concurrency checks spawn tasks; a multi-thread runtime
//!   exercises them best).
//!
//! A failing check panics with a message naming what differed. [`CHECKS`] lists every check by
//! name; [`run_check`] runs one. [`kit_cursor_format`] is not part of [`run_all`]: it pins the
//! page-token format the kit's own stores share, which other stores need not follow.

#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;

use a2a_kit::protocol::{
    Artifact, AuthenticationInfo, ListTasksResponse, Message, Metadata, Part, Role, StreamResponse,
    Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent, Timestamp,
};
use a2a_kit::store::{
    EventRecord, ListQuery, Owner, Seq, StoreError, TaskManager, TaskRecord, TaskView, apply_event,
};

/// The keyset cursor the kit's stores share: (status timestamp, task id), base64url. Pinned
/// here, apart from the stores, so a change to it is a visible change of the suite.
fn encode_cursor(ts_millis: i64, task_id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts_millis}:{task_id}"))
}

/// The store handed to each check.
pub type Store = Arc<dyn TaskManager>;

/// One named check of the suite.
///
/// ```
/// let names: Vec<&str> = a2a_kit_conformance::CHECKS.iter().map(|c| c.name).collect();
/// assert!(names.contains(&"event_log"));
/// ```
#[derive(Clone, Copy)]
pub struct Check {
    /// The check's name (the name of its function in this module).
    pub name: &'static str,
    /// Run it against a fresh store; panics on a difference.
    pub run: fn(Store) -> BoxFuture<'static, ()>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

macro_rules! checks {
    ($($f:ident),* $(,)?) => {
        &[$(Check { name: stringify!($f), run: |s| Box::pin($f(s)) }),*]
    };
}

/// Every check [`run_all`] runs, in order.
///
/// ```
/// assert!(a2a_kit_conformance::CHECKS.len() > 10);
/// ```
pub const CHECKS: &[Check] = checks![
    create_and_get,
    task_views,
    status_updates,
    artifact_updates,
    history_semantics,
    event_log,
    create_with_events,
    list_empty,
    list_order_and_pagination,
    list_filters,
    list_views,
    list_page_tokens,
    list_pagination_is_stable_under_inserts,
    push_configs,
    retention,
    task_ids_in_states,
    json_fidelity,
    concurrent_appends_across_tasks,
    concurrent_appends_to_one_task,
    concurrent_refusals_stay_their_own,
    model_replay,
    owners,
];

/// Run every check in [`CHECKS`], each on a fresh store from `make`.
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::run_all(|| async {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
/// })
/// .await;
/// # });
/// ```
pub async fn run_all<F, Fut, M>(mut make: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = M>,
    M: TaskManager,
{
    for check in CHECKS {
        let store: Store = Arc::new(make().await);
        eprintln!("conformance: {}", check.name);
        (check.run)(store).await;
    }
}

/// Run the check called `name` on a fresh store from `make`; panics if there is no such check.
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::run_check("push_configs", || async {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None })
/// })
/// .await;
/// # });
/// ```
pub async fn run_check<F, Fut, M>(name: &str, make: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = M>,
    M: TaskManager,
{
    let check = CHECKS
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no conformance check named `{name}`"));
    (check.run)(Arc::new(make().await)).await;
}

// ----- builders ------------------------------------------------------------------------------

/// A base instant a few minutes before now, at whole seconds (so offsets stay readable).
fn base() -> i64 {
    let now = Timestamp::now().0.timestamp_millis();
    now - now % 1000 - 600_000
}

fn ts(ms: i64) -> Timestamp {
    Timestamp::from(chrono::DateTime::from_timestamp_millis(ms).expect("timestamp in range"))
}

fn ms_of(t: &Task) -> i64 {
    t.status
        .timestamp
        .expect("checks always stamp statuses")
        .0
        .timestamp_millis()
}

fn msg(role: Role, id: &str, text: &str) -> Message {
    Message {
        message_id: id.to_string(),
        role,
        parts: vec![Part::text(text)],
        ..Message::default()
    }
}

fn status_msg(id: &str, text: &str) -> Message {
    let mut meta = Metadata::new();
    meta.insert(
        a2a_kit::protocol::STATUS_MESSAGE_KIND_KEY.into(),
        a2a_kit::protocol::STATUS_MESSAGE_KIND.into(),
    );
    msg(Role::Agent, id, text).with_metadata(meta)
}

fn new_task(id: &str, ctx: &str, state: TaskState, at: i64) -> Task {
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

fn status_ev(
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

fn artifact(id: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: id.to_string(),
        parts,
        ..Artifact::default()
    }
}

fn artifact_ev(
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

fn push(task: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: Some(id.to_string()),
        task_id: Some(task.to_string()),
        url: url.to_string(),
        token: Some(format!("tok-{id}")),
        authentication: None,
    }
}

fn query(page_size: usize) -> ListQuery {
    ListQuery {
        page_size,
        view: TaskView {
            history_length: Some(0),
            include_artifacts: false,
        },
        ..ListQuery::default()
    }
}

async fn create(s: &Store, task: &Task) {
    let seq = s
        .create_task(task.clone(), None, None)
        .await
        .unwrap_or_else(|e| panic!("create_task({}): {e}", task.id));
    assert_eq!(
        seq, 1,
        "create_task returns 1 (the creation snapshot is event 1)"
    );
}

async fn append(s: &Store, task: &str, ev: StreamResponse) -> Seq {
    s.append_event(task, ev)
        .await
        .unwrap_or_else(|e| panic!("append_event({task}): {e}"))
}

async fn full(s: &Store, id: &str) -> TaskRecord {
    s.get_task(id, TaskView::FULL)
        .await
        .unwrap_or_else(|e| panic!("get_task({id}): {e}"))
        .unwrap_or_else(|| panic!("task {id} is missing"))
}

async fn all_events(s: &Store, id: &str) -> Vec<EventRecord> {
    s.events_after(id, 0, usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("events_after({id}): {e}"))
}

/// Walk every page of `q`; returns the tasks and checks the per-page invariants.
async fn walk(s: &Store, mut q: ListQuery) -> Vec<Task> {
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

fn ids(tasks: &[Task]) -> Vec<String> {
    tasks.iter().map(|t| t.id.clone()).collect()
}

/// Ids ordered as ListTasks orders them: newest status timestamp first, then id descending.
fn list_order(mut keys: Vec<(i64, String)>) -> Vec<String> {
    keys.sort();
    keys.reverse();
    keys.into_iter().map(|(_, id)| id).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

// ----- checks --------------------------------------------------------------------------------

/// create_task / get_task basics: the snapshot is event 1, duplicates and UNSPECIFIED are
/// refused, a missing task reads as `None`.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::create_and_get(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn create_and_get(s: Store) {
    let b = base();
    let mut t = new_task("t1", "c1", TaskState::Submitted, b);
    t.metadata = Some(
        json!({"k": "v", "n": 1})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    t.artifacts
        .push(artifact("a0", vec![Part::text("preloaded")]));
    assert_eq!(
        s.create_task(t.clone(), Some("skill-a".into()), None).await,
        Ok(1)
    );
    let rec = full(&s, "t1").await;
    assert_eq!(rec.task, t, "get_task returns the task as created");
    assert_eq!(rec.skill_id.as_deref(), Some("skill-a"));
    assert_eq!(rec.last_seq, 1);

    assert_eq!(
        s.get_task("missing", TaskView::FULL).await,
        Ok(None),
        "a missing task reads as None"
    );
    assert_eq!(
        s.create_task(new_task("t1", "c9", TaskState::Working, b), None, None)
            .await,
        Err(StoreError::TaskExists("t1".into())),
        "a second task with the same id is refused"
    );
    assert_eq!(
        full(&s, "t1").await.task,
        t,
        "a refused create changes nothing"
    );
    assert!(
        matches!(
            s.create_task(new_task("t2", "c1", TaskState::Unspecified, b), None, None)
                .await,
            Err(StoreError::IllegalTransition(_))
        ),
        "a task cannot start UNSPECIFIED"
    );
    assert_eq!(
        s.get_task("t2", TaskView::FULL).await,
        Ok(None),
        "a refused create stores nothing"
    );

    // Any other initial state is accepted, with or without a skill.
    for (id, state) in [
        ("w", TaskState::Working),
        ("d", TaskState::Completed),
        ("i", TaskState::InputRequired),
    ] {
        let t = new_task(id, "c2", state, b);
        create(&s, &t).await;
        let rec = full(&s, id).await;
        assert_eq!(rec.task, t);
        assert_eq!(rec.skill_id, None);
    }
    assert_eq!(
        all_events(&s, "t1").await,
        vec![EventRecord {
            seq: 1,
            event: StreamResponse::Task(t)
        }],
        "event 1 is the creation snapshot"
    );
}

/// [`TaskView`] trimming in get_task: history length none / 0 / n / more than stored, artifacts
/// on and off.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::task_views(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn task_views(s: Store) {
    let mut t = new_task("v", "c", TaskState::Working, base());
    for i in 1..5 {
        t.history.push(msg(
            if i % 2 == 0 { Role::User } else { Role::Agent },
            &format!("v-m{i}"),
            &format!("m{i}"),
        ));
    }
    t.artifacts = vec![
        artifact("x", vec![Part::text("1")]),
        artifact("y", vec![Part::text("2")]),
    ];
    create(&s, &t).await;
    check_views(&s, &t, 1).await;
    // Finished, with a status message (which is also the last history message): stores may
    // hold finished tasks differently; every view must still read back the same.
    let done = status_msg("v-done", "done");
    append(
        &s,
        "v",
        status_ev(
            "v",
            "c",
            TaskState::Completed,
            base() + 1,
            Some(done.clone()),
        ),
    )
    .await;
    t.status = TaskStatus {
        state: TaskState::Completed,
        message: Some(done.clone()),
        timestamp: Some(ts(base() + 1)),
    };
    t.history.push(done);
    check_views(&s, &t, 2).await;
}

/// Every view of `t` (5 history messages at creation, 2 artifacts) through `get_task` and
/// `write_task_json`, whose bytes must be exactly the JSON of the typed task.
async fn check_views(s: &Store, t: &Task, last_seq: Seq) {
    let extra = t.history.len() - 5;
    for (view, history, artifacts) in [
        (TaskView::FULL, 5, 2),
        (
            TaskView {
                history_length: None,
                include_artifacts: false,
            },
            5,
            0,
        ),
        (
            TaskView {
                history_length: Some(0),
                include_artifacts: true,
            },
            0,
            2,
        ),
        (
            TaskView {
                history_length: Some(2),
                include_artifacts: true,
            },
            2,
            2,
        ),
        (
            TaskView {
                history_length: Some(5),
                include_artifacts: false,
            },
            5,
            0,
        ),
        (
            TaskView {
                history_length: Some(50),
                include_artifacts: true,
            },
            5,
            2,
        ),
        (TaskView::default(), 5, 0),
    ] {
        let got = s
            .get_task("v", view)
            .await
            .expect("get_task")
            .expect("task");
        let mut want = t.clone();
        view.apply(&mut want);
        assert_eq!(got.task, want, "view {view:?}");
        let history = match view.history_length {
            Some(n) => n.min(5 + extra),
            None => history + extra,
        };
        assert_eq!(
            (got.task.history.len(), got.task.artifacts.len()),
            (history, artifacts),
            "view {view:?}"
        );
        assert_eq!(got.last_seq, last_seq);
        let mut json = b"[prefix]".to_vec();
        assert!(
            s.write_task_json("v", view, &mut json)
                .await
                .expect("write_task_json"),
            "write_task_json found no task"
        );
        assert_eq!(
            String::from_utf8_lossy(&json),
            format!(
                "[prefix]{}",
                serde_json::to_string(&want).expect("serialize")
            ),
            "write_task_json appends the task's JSON, view {view:?}"
        );
    }
}

/// Status updates: state, status and history change together; refused events change nothing.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::status_updates(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn status_updates(s: Store) {
    let b = base();
    let t = new_task("s", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut log = vec![StreamResponse::Task(t.clone())];

    let e2 = status_ev("s", "c", TaskState::Working, b + 1, None);
    assert_eq!(append(&s, "s", e2.clone()).await, 2);
    log.push(e2);
    let rec = full(&s, "s").await;
    assert_eq!(rec.task.status.state, TaskState::Working);
    assert_eq!(rec.task.status.timestamp, Some(ts(b + 1)));
    assert_eq!(
        rec.task.history, t.history,
        "a status without a message adds no history"
    );
    assert_eq!(rec.last_seq, 2);

    let m1 = status_msg("s-m1", "thinking");
    let e3 = status_ev("s", "c", TaskState::Working, b + 2, Some(m1.clone()));
    assert_eq!(append(&s, "s", e3.clone()).await, 3);
    log.push(e3);
    let rec = full(&s, "s").await;
    assert_eq!(
        rec.task.status.message.as_ref(),
        Some(&m1),
        "the status carries its message"
    );
    assert_eq!(
        rec.task.history.last(),
        Some(&m1),
        "a status message is appended to the history"
    );
    assert_eq!(rec.task.history.len(), 2);

    let m3 = msg(Role::Agent, "s-m3", "which city?");
    let e4 = status_ev("s", "c", TaskState::InputRequired, b + 3, Some(m3.clone()));
    assert_eq!(append(&s, "s", e4.clone()).await, 4);
    log.push(e4);

    let before = full(&s, "s").await;
    // Refused events: wrong task, wrong kind, illegal transition, unknown task.
    let wrong_task = status_ev("other", "c", TaskState::Working, b + 4, None);
    assert!(
        matches!(
            s.append_event("s", wrong_task).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "wrong taskId"
    );
    assert!(
        matches!(
            s.append_event("s", StreamResponse::Task(t.clone())).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a Task cannot be appended"
    );
    assert!(
        matches!(
            s.append_event("s", StreamResponse::Message(m3.clone()))
                .await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a Message cannot be appended"
    );
    let back = status_ev(
        "s",
        "c",
        TaskState::Submitted,
        b + 4,
        Some(msg(Role::Agent, "s-x", "x")),
    );
    assert!(
        matches!(
            s.append_event("s", back).await,
            Err(StoreError::IllegalTransition(_))
        ),
        "INPUT_REQUIRED -> SUBMITTED is illegal"
    );
    assert_eq!(
        s.append_event("nope", status_ev("nope", "c", TaskState::Working, b, None))
            .await,
        Err(StoreError::TaskNotFound("nope".into()))
    );
    assert_eq!(full(&s, "s").await, before, "refused events change nothing");
    assert_eq!(
        all_events(&s, "s").await.len(),
        4,
        "refused events are not logged"
    );

    let done = status_ev(
        "s",
        "c",
        TaskState::Completed,
        b + 5,
        Some(msg(Role::Agent, "s-m5", "done")),
    );
    assert_eq!(
        append(&s, "s", done.clone()).await,
        5,
        "refused events do not use up a sequence number"
    );
    log.push(done);
    assert!(
        matches!(
            s.append_event("s", status_ev("s", "c", TaskState::Working, b + 6, None))
                .await,
            Err(StoreError::IllegalTransition(_))
        ),
        "a terminal task cannot change state"
    );
    assert!(
        matches!(
            s.append_event(
                "s",
                artifact_ev(
                    "s",
                    "c",
                    artifact("late", vec![Part::text("x")]),
                    false,
                    true
                )
            )
            .await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a terminal task takes no artifacts"
    );
    let got: Vec<StreamResponse> = all_events(&s, "s")
        .await
        .into_iter()
        .map(|r| r.event)
        .collect();
    assert_eq!(got, log, "the log holds exactly the accepted events");
}

/// Artifact updates: new, appended (closing empty parts dropped), replaced in place, metadata.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::artifact_updates(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn artifact_updates(s: Store) {
    let b = base();
    create(&s, &new_task("a", "c", TaskState::Working, b)).await;
    let text = |t: &str| Part::text(t);
    let closing = Part::text("");
    let ev = |a: Artifact, append: bool| artifact_ev("a", "c", a, append, false);

    assert_eq!(
        append(&s, "a", ev(artifact("x", vec![text("Hel")]), false)).await,
        2
    );
    append(&s, "a", ev(artifact("x", vec![text("lo")]), true)).await;
    let mut meta = Metadata::new();
    meta.insert("chunks".into(), json!(3));
    let mut last = artifact("x", vec![closing.clone()]);
    last.metadata = Some(meta.clone());
    append(&s, "a", artifact_ev("a", "c", last, true, true)).await;
    // A second artifact that starts with append=true and a closing part.
    append(
        &s,
        "a",
        ev(artifact("y", vec![text("y1"), closing.clone()]), true),
    )
    .await;
    let rec = full(&s, "a").await;
    assert_eq!(rec.task.artifacts.len(), 2);
    assert_eq!(
        rec.task.artifacts[0].parts,
        vec![text("Hel"), text("lo")],
        "chunks append; the closing part is dropped"
    );
    assert_eq!(
        rec.task.artifacts[0].metadata.as_ref(),
        Some(&meta),
        "an appended chunk's metadata replaces the old"
    );
    assert_eq!(rec.task.artifacts[1].parts, vec![text("y1")]);
    assert_eq!(rec.last_seq, 5);

    // Replace without append: same position, new content.
    let mut replacement = artifact("x", vec![text("new")]);
    replacement.name = Some("renamed".into());
    append(&s, "a", ev(replacement.clone(), false)).await;
    let rec = full(&s, "a").await;
    assert_eq!(
        rec.task.artifacts[0], replacement,
        "append=false replaces the artifact in place"
    );
    assert_eq!(
        rec.task.artifacts[1].artifact_id, "y",
        "other artifacts keep their order"
    );
    // Appending without metadata keeps the old metadata (none here) and the name.
    append(&s, "a", ev(artifact("x", vec![text("+")]), true)).await;
    let rec = full(&s, "a").await;
    assert_eq!(rec.task.artifacts[0].name.as_deref(), Some("renamed"));
    assert_eq!(rec.task.artifacts[0].parts, vec![text("new"), text("+")]);
    assert_eq!(
        rec.task.status.state,
        TaskState::Working,
        "artifact updates leave the status alone"
    );
    assert_eq!(
        rec.task.history.len(),
        1,
        "artifact updates leave the history alone"
    );

    let wrong = artifact_ev("b", "c", artifact("z", vec![text("z")]), false, true);
    assert!(
        matches!(
            s.append_event("a", wrong).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "wrong taskId"
    );
    assert_eq!(
        full(&s, "a").await,
        rec,
        "a refused artifact changes nothing"
    );
}

/// History: creation messages, status messages and client follow-ups (`add_message`, which logs
/// no event) in one order; `history_length` keeps the most recent.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::history_semantics(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn history_semantics(s: Store) {
    let b = base();
    let t = new_task("h", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut want = t.history.clone();
    let m1 = status_msg("h-1", "working on it");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Working, b + 1, Some(m1.clone())),
    )
    .await;
    want.push(m1);
    let q = msg(Role::Agent, "h-2", "what size?");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::InputRequired, b + 2, Some(q.clone())),
    )
    .await;
    want.push(q);
    let reply = msg(Role::User, "h-3", "large");
    assert_eq!(s.add_message("h", reply.clone()).await, Ok(()));
    want.push(reply);
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Working, b + 3, None),
    )
    .await;
    let follow = msg(Role::User, "h-4", "and blue");
    s.add_message("h", follow.clone())
        .await
        .expect("add_message");
    want.push(follow);
    let end = msg(Role::Agent, "h-5", "done");
    append(
        &s,
        "h",
        status_ev("h", "c", TaskState::Completed, b + 4, Some(end.clone())),
    )
    .await;
    want.push(end);

    let rec = full(&s, "h").await;
    assert_eq!(
        rec.task.history, want,
        "history keeps every message in order"
    );
    assert_eq!(rec.last_seq, 5, "add_message logs no event");
    assert_eq!(all_events(&s, "h").await.len(), 5);
    let recent = s
        .get_task(
            "h",
            TaskView {
                history_length: Some(3),
                include_artifacts: false,
            },
        )
        .await
        .expect("get")
        .expect("task");
    assert_eq!(
        recent.task.history,
        want[want.len() - 3..].to_vec(),
        "history_length keeps the most recent"
    );
    assert_eq!(
        s.add_message("missing", msg(Role::User, "x", "x")).await,
        Err(StoreError::TaskNotFound("missing".into()))
    );
}

/// The event log: contiguous sequence numbers from 1, `events_after` windows, exact events.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::event_log(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn event_log(s: Store) {
    let b = base();
    let t = new_task("e", "c", TaskState::Submitted, b);
    create(&s, &t).await;
    let mut log = vec![StreamResponse::Task(t)];
    for i in 0..9i64 {
        let ev = if i % 3 == 2 {
            artifact_ev(
                "e",
                "c",
                artifact("out", vec![Part::text(format!("chunk {i}"))]),
                i > 2,
                false,
            )
        } else {
            status_ev(
                "e",
                "c",
                TaskState::Working,
                b + i,
                Some(status_msg(&format!("e-{i}"), &format!("step {i}"))),
            )
        };
        assert_eq!(
            append(&s, "e", ev.clone()).await,
            i as Seq + 2,
            "sequence numbers are contiguous"
        );
        log.push(ev);
    }
    let want: Vec<EventRecord> = log
        .iter()
        .enumerate()
        .map(|(i, ev)| EventRecord {
            seq: i as Seq + 1,
            event: ev.clone(),
        })
        .collect();
    assert_eq!(
        s.events_after("e", 0, 100).await.expect("events"),
        want,
        "events_after(0) is the whole log"
    );
    assert_eq!(
        s.events_after("e", 3, 4).await.expect("events"),
        want[3..7].to_vec(),
        "a window"
    );
    assert_eq!(
        s.events_after("e", 8, 100).await.expect("events"),
        want[8..].to_vec(),
        "the tail"
    );
    assert_eq!(
        s.events_after("e", 10, 5).await.expect("events"),
        vec![],
        "nothing after the last"
    );
    assert_eq!(
        s.events_after("e", 500, 5).await.expect("events"),
        vec![],
        "nothing past the end"
    );
    assert_eq!(
        s.events_after("e", 0, 0).await.expect("events"),
        vec![],
        "limit 0"
    );
    assert_eq!(
        s.events_after("e", 0, 1).await.expect("events"),
        want[..1].to_vec(),
        "limit 1"
    );
    assert_eq!(
        s.events_after("missing", 0, 10).await,
        Err(StoreError::TaskNotFound("missing".into()))
    );
    assert_eq!(
        full(&s, "e").await.last_seq,
        10,
        "last_seq is the last event's seq"
    );
}

/// `create_task_with_events` is `create_task` then `append_event` per event, as one write:
/// the same task, log, sequence numbers and list entry; a refused event stores nothing; a
/// duplicate id changes nothing. `create_task_with_released_log` reads back the same, its
/// finished task's log possibly the final snapshot, and takes later messages alike.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::create_with_events(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn create_with_events(s: Store) {
    let b = base();
    let task = |id: &str| {
        let mut t = new_task(id, "c", TaskState::Submitted, b);
        t.history = vec![msg(Role::User, "m0", "start")];
        t
    };
    // Scripts of events (for a task id): a quick skill, a streamed artifact, an interruption,
    // and none at all.
    type Script = fn(&str, i64) -> Vec<StreamResponse>;
    let scripts: [(&str, Script); 4] = [
        ("quick", |id, b| {
            vec![
                status_ev(id, "c", TaskState::Working, b + 1, None),
                artifact_ev(
                    id,
                    "c",
                    artifact("r", vec![Part::text("hello")]),
                    false,
                    true,
                ),
                status_ev(
                    id,
                    "c",
                    TaskState::Completed,
                    b + 2,
                    Some(msg(Role::Agent, "m1", "hello")),
                ),
            ]
        }),
        ("streamed", |id, b| {
            vec![
                status_ev(
                    id,
                    "c",
                    TaskState::Working,
                    b + 1,
                    Some(status_msg("s1", "on it")),
                ),
                artifact_ev(id, "c", artifact("r", vec![Part::text("a")]), false, false),
                artifact_ev(id, "c", artifact("r", vec![Part::text("b")]), true, false),
                artifact_ev(id, "c", artifact("r", vec![Part::text("")]), true, true),
                status_ev(id, "c", TaskState::Completed, b + 3, None),
            ]
        }),
        ("interrupted", |id, b| {
            vec![
                status_ev(id, "c", TaskState::Working, b + 1, None),
                status_ev(
                    id,
                    "c",
                    TaskState::InputRequired,
                    b + 2,
                    Some(msg(Role::Agent, "q", "which one?")),
                ),
            ]
        }),
        ("none", |_, _| Vec::new()),
    ];
    // Ids differ between the twins; everything else must not.
    fn anon_task(mut t: Task) -> Task {
        t.id = "_".into();
        t
    }
    fn anon(records: Vec<EventRecord>) -> Vec<EventRecord> {
        records
            .into_iter()
            .map(|mut r| {
                match &mut r.event {
                    StreamResponse::Task(t) => t.id = "_".into(),
                    StreamResponse::StatusUpdate(u) => u.task_id = "_".into(),
                    StreamResponse::ArtifactUpdate(u) => u.task_id = "_".into(),
                    StreamResponse::Message(_) => {}
                }
                r
            })
            .collect()
    }
    for (name, script) in scripts {
        let (one, batch) = (format!("{name}-one"), format!("{name}-batch"));
        create(&s, &task(&one)).await;
        let mut last = 1;
        for ev in script(&one, b) {
            last = append(&s, &one, ev).await;
        }
        let got = s
            .create_task_with_events(task(&batch), Some("skill".into()), None, script(&batch, b))
            .await
            .unwrap_or_else(|e| panic!("create_task_with_events({batch}): {e}"));
        assert_eq!(got, last, "{name}: the last sequence number");
        let (a, z) = (full(&s, &one).await, full(&s, &batch).await);
        assert_eq!(z.last_seq, last, "{name}: last_seq");
        assert_eq!(z.skill_id.as_deref(), Some("skill"), "{name}: the skill id");
        assert_eq!(anon_task(z.task), anon_task(a.task), "{name}: the task");
        assert_eq!(
            anon(all_events(&s, &batch).await),
            anon(all_events(&s, &one).await),
            "{name}: the event log"
        );
        assert_eq!(
            anon(s.events_after(&batch, 2, 2).await.expect("events")),
            anon(s.events_after(&one, 2, 2).await.expect("events")),
            "{name}: a window of the log"
        );
        // Released logs read back the same too.
        s.release_log(&one);
        s.release_log(&batch);
        assert_eq!(
            anon(all_events(&s, &batch).await),
            anon(all_events(&s, &one).await),
            "{name}: the event log after release_log"
        );

        // A released creation reads back as the creation then release_log: the same task,
        // and the exact log or (a finished task's) final snapshot standing for it.
        let released = format!("{name}-released");
        let got = s
            .create_task_with_released_log(
                task(&released),
                Some("skill".into()),
                None,
                script(&released, b),
            )
            .await
            .unwrap_or_else(|e| panic!("create_task_with_released_log({released}): {e}"));
        assert_eq!(got, last, "{name}: released: the last sequence number");
        let r = full(&s, &released).await;
        assert_eq!(
            (r.last_seq, r.skill_id.as_deref()),
            (last, Some("skill")),
            "{name}: released: bookkeeping"
        );
        assert_eq!(
            anon_task(r.task.clone()),
            anon_task(full(&s, &one).await.task),
            "{name}: released: the task"
        );
        let exact = anon(all_events(&s, &one).await);
        let log = anon(all_events(&s, &released).await);
        let snapshot = vec![EventRecord {
            seq: last,
            event: StreamResponse::Task(anon_task(r.task.clone())),
        }];
        if r.task.status.state.is_terminal() {
            assert!(
                log == exact || log == snapshot,
                "{name}: released: the log is exact or the final snapshot: {log:?}"
            );
        } else {
            assert_eq!(log, exact, "{name}: released: a live task keeps its log");
        }
        assert!(
            s.events_after(&released, last, 10)
                .await
                .expect("events")
                .is_empty(),
            "{name}: released: nothing after the end"
        );
        assert!(
            s.events_after(&released, 0, 0)
                .await
                .expect("events")
                .is_empty(),
            "{name}: released: a limit of 0"
        );
        for view in [
            TaskView {
                history_length: Some(1),
                include_artifacts: false,
            },
            TaskView {
                history_length: Some(0),
                include_artifacts: true,
            },
        ] {
            let (a, z) = (
                s.get_task(&one, view).await.expect("get"),
                s.get_task(&released, view).await.expect("get"),
            );
            assert_eq!(
                z.map(|r| anon_task(r.task)),
                a.map(|r| anon_task(r.task)),
                "{name}: released: {view:?}"
            );
        }
        let mut json = Vec::new();
        assert!(
            s.write_task_json(&released, TaskView::FULL, &mut json)
                .await
                .expect("json")
        );
        let parsed: Task = serde_json::from_slice(&json).expect("write_task_json writes a task");
        assert_eq!(parsed, r.task, "{name}: released: write_task_json");

        // Later changes: a follow-up message lands in both; an event is refused (or taken)
        // alike.
        let m = msg(Role::User, "later", "thanks");
        s.add_message(&one, m.clone()).await.expect("add_message");
        s.add_message(&released, m)
            .await
            .expect("add_message (released)");
        let late = |id: &str| status_ev(id, "c", TaskState::Completed, b + 9, None);
        let (a, z) = (
            s.append_event(&one, late(&one)).await,
            s.append_event(&released, late(&released)).await,
        );
        assert_eq!(
            a.is_ok(),
            z.is_ok(),
            "{name}: released: a later event: {a:?} / {z:?}"
        );
        if let (Err(a), Err(z)) = (&a, &z) {
            assert_eq!(
                std::mem::discriminant(a),
                std::mem::discriminant(z),
                "{name}: the same refusal: {a} / {z}"
            );
        }
        assert_eq!(
            anon_task(full(&s, &released).await.task),
            anon_task(full(&s, &one).await.task),
            "{name}: released: after the changes"
        );
    }
    let listed = walk(&s, query(100)).await;
    assert_eq!(listed.len(), 12, "every task is listed once");

    // Refused events (an artifact after the end, a way out of a terminal state) store
    // nothing, and the id stays free.
    let mut bad = scripts[0].1("bad", b);
    bad.push(artifact_ev(
        "bad",
        "c",
        artifact("late", vec![Part::text("x")]),
        false,
        true,
    ));
    let illegal = vec![
        status_ev("bad", "c", TaskState::Completed, b + 1, None),
        status_ev("bad", "c", TaskState::Working, b + 2, None),
    ];
    type Refusal = fn(&StoreError) -> bool;
    let cases: [(&str, Vec<StreamResponse>, Refusal); 2] = [
        ("an artifact after the end", bad, |e| {
            matches!(e, StoreError::InvalidEvent(_))
        }),
        ("a transition out of a terminal state", illegal, |e| {
            matches!(e, StoreError::IllegalTransition(_))
        }),
    ];
    for (what, events, expected) in cases {
        let refused = s
            .create_task_with_events(task("bad"), None, None, events)
            .await;
        assert!(
            refused.as_ref().is_err_and(expected),
            "{what} is refused: {refused:?}"
        );
        let stored = s.get_task("bad", TaskView::FULL).await.expect("get");
        assert!(stored.is_none(), "{what}: a refused batch leaves no task");
    }
    assert_eq!(
        s.create_task_with_events(task("bad"), None, None, scripts[0].1("bad", b))
            .await
            .expect("the id is still free"),
        4
    );

    // A duplicate id is refused and the stored task is untouched.
    let before = full(&s, "quick-one").await;
    let dup = s
        .create_task_with_events(task("quick-one"), None, None, scripts[2].1("quick-one", b))
        .await;
    assert!(
        matches!(dup, Err(StoreError::TaskExists(_))),
        "a duplicate id is refused: {dup:?}"
    );
    assert_eq!(
        full(&s, "quick-one").await,
        before,
        "the stored task is untouched"
    );
    for id in ["quick-one", "quick-released"] {
        let before = full(&s, id).await;
        let dup = s
            .create_task_with_released_log(task(id), None, None, scripts[0].1(id, b))
            .await;
        assert!(
            matches!(dup, Err(StoreError::TaskExists(_))),
            "a released creation of a duplicate id is refused: {dup:?}"
        );
        assert_eq!(full(&s, id).await, before, "{id} is untouched");
    }
}

/// ListTasks on an empty store.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_empty(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_empty(s: Store) {
    let page = s.list_tasks(&query(10)).await.expect("list_tasks");
    assert_eq!(
        page,
        ListTasksResponse {
            tasks: vec![],
            next_page_token: String::new(),
            page_size: 10,
            total_size: 0
        }
    );
}

/// ListTasks order (newest status timestamp first, ties by id descending) and keyset pages of
/// every size.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_order_and_pagination(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_order_and_pagination(s: Store) {
    let b = base();
    let mut keys = Vec::new();
    // 23 tasks, three per timestamp: ties are broken by id. Created out of order.
    for i in [
        7, 3, 19, 0, 22, 11, 5, 14, 1, 9, 20, 16, 2, 13, 6, 21, 8, 18, 4, 12, 17, 10, 15,
    ] {
        let id = format!("task-{i:02}");
        let at = b + (i / 3) * 1000;
        create(&s, &new_task(&id, "c", TaskState::Working, at)).await;
        keys.push((at, id));
    }
    let want = list_order(keys.clone());
    for size in [1, 2, 5, 22, 23, 24, 100] {
        let got = walk(&s, query(size)).await;
        assert_eq!(ids(&got), want, "page size {size}");
    }
    let first = s.list_tasks(&query(23)).await.expect("list");
    assert!(
        first.next_page_token.is_empty(),
        "no token when the page holds the rest exactly"
    );
    let first = s.list_tasks(&query(22)).await.expect("list");
    assert!(
        !first.next_page_token.is_empty(),
        "a token when more remain"
    );
    assert_eq!(first.total_size, 23);

    // A status change moves a task to the front.
    append(
        &s,
        "task-00",
        status_ev("task-00", "c", TaskState::Completed, b + 60_000, None),
    )
    .await;
    let got = walk(&s, query(4)).await;
    assert_eq!(
        got[0].id, "task-00",
        "ordered by the current status timestamp"
    );
    assert_eq!(got.len(), 23);
}

/// ListTasks filters (context, state, status timestamp at-or-after) alone and combined, with
/// `totalSize` counting the filtered set.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_filters(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_filters(s: Store) {
    let b = base();
    let states = [
        TaskState::Working,
        TaskState::Completed,
        TaskState::InputRequired,
        TaskState::Failed,
    ];
    let mut all = Vec::new();
    for i in 0..20i64 {
        let id = format!("f{i:02}");
        let ctx = if i % 3 == 0 { "ctx-a" } else { "ctx-b" };
        let state = states[(i % 4) as usize];
        let at = b + i * 100;
        create(&s, &new_task(&id, ctx, state, at)).await;
        all.push((id, ctx, state, at));
    }
    let cut = b + 1000; // f10 is exactly at the cut: included.
    type Filter = (Option<&'static str>, Option<TaskState>, Option<i64>);
    let filters: [Filter; 8] = [
        (Some("ctx-a"), None, None),
        (None, Some(TaskState::Completed), None),
        (None, None, Some(cut)),
        (Some("ctx-b"), Some(TaskState::Working), None),
        (Some("ctx-b"), None, Some(cut)),
        (None, Some(TaskState::Failed), Some(cut)),
        (Some("ctx-a"), Some(TaskState::InputRequired), Some(cut)),
        (Some("nowhere"), None, None),
    ];
    for (ctx, state, after) in filters {
        let want = list_order(
            all.iter()
                .filter(|(_, c, st, at)| {
                    ctx.is_none_or(|x| x == *c)
                        && state.is_none_or(|x| x == *st)
                        && after.is_none_or(|a| *at >= a)
                })
                .map(|(id, _, _, at)| (*at, id.clone()))
                .collect(),
        );
        for size in [2, 100] {
            let mut q = query(size);
            q.context_id = ctx.map(str::to_string);
            q.status = state;
            q.status_timestamp_after = after.map(ts);
            let first = s.list_tasks(&q).await.expect("list");
            assert_eq!(
                first.total_size,
                want.len() as i32,
                "totalSize with filter {ctx:?} {state:?} {after:?}"
            );
            let got = walk(&s, q).await;
            assert_eq!(
                ids(&got),
                want,
                "filter {ctx:?} {state:?} {after:?}, page size {size}"
            );
            for t in &got {
                assert_eq!(t.status.state, state.unwrap_or(t.status.state));
            }
        }
    }
    // The state filter follows state changes.
    append(
        &s,
        "f00",
        status_ev("f00", "ctx-a", TaskState::Canceled, b + 5000, None),
    )
    .await;
    let mut q = query(100);
    q.status = Some(TaskState::Canceled);
    assert_eq!(ids(&walk(&s, q.clone()).await), vec!["f00".to_string()]);
    q.status = Some(TaskState::Working);
    assert!(
        !ids(&walk(&s, q).await).contains(&"f00".to_string()),
        "a task is listed under its current state only"
    );
}

/// ListTasks applies the query's [`TaskView`] to every task.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_views(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_views(s: Store) {
    let b = base();
    let mut tasks = Vec::new();
    for i in 0..3i64 {
        let id = format!("lv{i}");
        let mut t = new_task(&id, "c", TaskState::Working, b + i);
        t.history.push(msg(Role::Agent, &format!("{id}-1"), "one"));
        t.history.push(msg(Role::User, &format!("{id}-2"), "two"));
        t.artifacts
            .push(artifact(&format!("{id}-a"), vec![Part::text("art")]));
        create(&s, &t).await;
        tasks.push(t);
    }
    tasks.reverse(); // newest first
    for view in [
        TaskView::FULL,
        TaskView {
            history_length: Some(0),
            include_artifacts: false,
        },
        TaskView {
            history_length: Some(1),
            include_artifacts: true,
        },
        TaskView {
            history_length: Some(2),
            include_artifacts: false,
        },
        TaskView {
            history_length: None,
            include_artifacts: false,
        },
    ] {
        let mut q = query(2);
        q.view = view;
        let got = walk(&s, q).await;
        let want: Vec<Task> = tasks
            .iter()
            .map(|t| {
                let mut t = t.clone();
                view.apply(&mut t);
                t
            })
            .collect();
        assert_eq!(got, want, "list with view {view:?}");
    }
}

/// Page tokens: garbage is InvalidPageToken; a token stays valid whatever else changes.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_page_tokens(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_page_tokens(s: Store) {
    let b = base();
    for i in 0..5i64 {
        create(
            &s,
            &new_task(&format!("p{i}"), "c", TaskState::Working, b + i),
        )
        .await;
    }
    for bad in ["%%%", "bm90LWEtY3Vyc29y", "not a token at all"] {
        let mut q = query(2);
        q.page_token = Some(bad.to_string());
        assert_eq!(
            s.list_tasks(&q).await,
            Err(StoreError::InvalidPageToken),
            "token {bad:?}"
        );
    }
    let first = s.list_tasks(&query(2)).await.expect("list");
    let mut q = query(2);
    q.page_token = Some(first.next_page_token.clone());
    let second = s.list_tasks(&q).await.expect("list");
    assert_eq!(ids(&second.tasks), vec!["p2".to_string(), "p1".to_string()]);
    // The same token gives the same page again (tokens are not single-use).
    assert_eq!(s.list_tasks(&q).await.expect("list"), second);
    // A token issued without filters can be used with filters: the keyset still applies.
    q.context_id = Some("c".into());
    assert_eq!(
        ids(&s.list_tasks(&q).await.expect("list").tasks),
        vec!["p2".to_string(), "p1".to_string()]
    );
}

/// Keyset pagination: tasks created between two pages do not shift or repeat later pages.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_pagination_is_stable_under_inserts(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_pagination_is_stable_under_inserts(s: Store) {
    let b = base();
    for i in 0..6i64 {
        create(
            &s,
            &new_task(&format!("k{i}"), "c", TaskState::Working, b + i * 10),
        )
        .await;
    }
    let first = s.list_tasks(&query(3)).await.expect("list");
    assert_eq!(ids(&first.tasks), ["k5", "k4", "k3"]);
    // Newer tasks, and one that sorts in the middle of the first page.
    create(&s, &new_task("k9", "c", TaskState::Working, b + 1000)).await;
    create(&s, &new_task("k45", "c", TaskState::Working, b + 45)).await;
    let mut q = query(3);
    q.page_token = Some(first.next_page_token);
    let second = s.list_tasks(&q).await.expect("list");
    assert_eq!(
        ids(&second.tasks),
        ["k2", "k1", "k0"],
        "the next page starts after the last task seen"
    );
    assert_eq!(second.total_size, 8, "totalSize counts the new tasks");
    assert!(second.next_page_token.is_empty());
}

/// Push configs: put (insert or replace by id, creation order kept), get, list, delete, per-task
/// isolation, missing tasks.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_configs(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_configs(s: Store) {
    let b = base();
    create(&s, &new_task("p1", "c", TaskState::Working, b)).await;
    create(&s, &new_task("p2", "c", TaskState::Completed, b)).await;
    let a = push("p1", "a", "https://example.com/a");
    let mut bb = push("p1", "b", "https://example.com/b");
    bb.authentication = Some(AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("secret".into()),
    });
    bb.tenant = Some("tenant-1".into());
    let c = push("p2", "a", "https://example.com/other");
    for cfg in [&a, &bb, &c] {
        assert_eq!(s.put_push_config(cfg.clone()).await, Ok(()));
    }
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![a.clone(), bb.clone()]),
        "creation order"
    );
    assert_eq!(
        s.list_push_configs("p2").await,
        Ok(vec![c.clone()]),
        "configs are per task (same id, other task)"
    );
    assert_eq!(s.get_push_config("p1", "b").await, Ok(Some(bb.clone())));
    assert_eq!(s.get_push_config("p2", "a").await, Ok(Some(c.clone())));
    assert_eq!(s.get_push_config("p1", "zzz").await, Ok(None));

    let mut a2 = a.clone();
    a2.url = "https://example.com/a-v2".into();
    a2.token = None;
    s.put_push_config(a2.clone()).await.expect("replace");
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![a2.clone(), bb.clone()]),
        "a replaced config keeps its place"
    );
    assert_eq!(s.get_push_config("p1", "a").await, Ok(Some(a2.clone())));

    assert_eq!(s.delete_push_config("p1", "a").await, Ok(true));
    assert_eq!(
        s.delete_push_config("p1", "a").await,
        Ok(false),
        "deleting twice"
    );
    assert_eq!(s.get_push_config("p1", "a").await, Ok(None));
    assert_eq!(
        s.list_push_configs("p2").await,
        Ok(vec![c.clone()]),
        "deleting p1/a leaves p2/a"
    );
    s.put_push_config(a.clone()).await.expect("put again");
    assert_eq!(
        s.list_push_configs("p1").await,
        Ok(vec![bb.clone(), a.clone()]),
        "a re-created config goes last"
    );

    let mut orphan = push("p1", "o", "https://example.com/o");
    orphan.task_id = None;
    assert!(
        matches!(
            s.put_push_config(orphan).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a config needs a taskId"
    );
    let missing = || StoreError::TaskNotFound("missing".into());
    assert_eq!(
        s.put_push_config(push("missing", "a", "https://example.com"))
            .await,
        Err(missing())
    );
    assert_eq!(s.get_push_config("missing", "a").await, Err(missing()));
    assert_eq!(s.list_push_configs("missing").await, Err(missing()));
    assert_eq!(s.delete_push_config("missing", "a").await, Err(missing()));
    assert_eq!(
        full(&s, "p1").await.last_seq,
        1,
        "push configs log no event"
    );
}

/// Retention: `purge_terminal_before` deletes terminal tasks that ended strictly before the
/// cutoff, with their log and push configs, and never a live task.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::retention(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn retention(s: Store) {
    let b = base();
    let cut = b - 5_000;
    create(
        &s,
        &new_task("old-done", "c", TaskState::Completed, b - 10_000),
    )
    .await;
    create(
        &s,
        &new_task("old-failed", "c", TaskState::Working, b - 20_000),
    )
    .await;
    append(
        &s,
        "old-failed",
        artifact_ev(
            "old-failed",
            "c",
            artifact("r", vec![Part::text("r")]),
            false,
            true,
        ),
    )
    .await;
    append(
        &s,
        "old-failed",
        status_ev(
            "old-failed",
            "c",
            TaskState::Failed,
            b - 9_000,
            Some(msg(Role::Agent, "of", "x")),
        ),
    )
    .await;
    s.put_push_config(push("old-failed", "cfg", "https://example.com/hook"))
        .await
        .expect("push");
    create(&s, &new_task("at-cut", "c", TaskState::Rejected, cut)).await;
    create(
        &s,
        &new_task("old-live", "c", TaskState::Working, b - 50_000),
    )
    .await;
    create(
        &s,
        &new_task("old-input", "c", TaskState::InputRequired, b - 50_000),
    )
    .await;
    create(
        &s,
        &new_task("old-submitted", "c", TaskState::Submitted, b - 50_000),
    )
    .await;
    create(&s, &new_task("new-done", "c", TaskState::Canceled, b)).await;

    assert_eq!(
        s.purge_terminal_before(ts(cut)).await,
        Ok(2),
        "two terminal tasks ended before the cutoff"
    );
    for gone in ["old-done", "old-failed"] {
        assert_eq!(
            s.get_task(gone, TaskView::FULL).await,
            Ok(None),
            "{gone} is purged"
        );
        let missing = StoreError::TaskNotFound(gone.into());
        assert_eq!(
            s.events_after(gone, 0, 10).await,
            Err(missing.clone()),
            "{gone}'s log is purged"
        );
        assert_eq!(
            s.list_push_configs(gone).await,
            Err(missing),
            "{gone}'s push configs are purged"
        );
    }
    for kept in [
        "at-cut",
        "old-live",
        "old-input",
        "old-submitted",
        "new-done",
    ] {
        assert!(
            s.get_task(kept, TaskView::FULL)
                .await
                .expect("get")
                .is_some(),
            "{kept} is kept"
        );
    }
    assert_eq!(s.list_tasks(&query(100)).await.expect("list").total_size, 5);
    assert_eq!(
        s.purge_terminal_before(ts(cut)).await,
        Ok(0),
        "purging again deletes nothing"
    );
    assert_eq!(
        s.purge_terminal_before(ts(b + 1)).await,
        Ok(2),
        "the cutoff is exclusive; later cutoffs take more"
    );
    assert_eq!(
        sorted(ids(&walk(&s, query(100)).await)),
        ["old-input", "old-live", "old-submitted"],
        "live tasks are never purged"
    );

    // A purged id can be used again, with a fresh log and no configs.
    let again = new_task("old-failed", "c2", TaskState::Submitted, b);
    create(&s, &again).await;
    assert_eq!(
        all_events(&s, "old-failed").await,
        vec![EventRecord {
            seq: 1,
            event: StreamResponse::Task(again.clone())
        }]
    );
    assert_eq!(s.list_push_configs("old-failed").await, Ok(vec![]));
    assert_eq!(full(&s, "old-failed").await.task, again);
}

/// `task_ids_in_states` (start-up recovery) finds exactly the tasks in the given states.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::task_ids_in_states(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn task_ids_in_states(s: Store) {
    let b = base();
    for (id, state) in [
        ("s1", TaskState::Submitted),
        ("s2", TaskState::Submitted),
        ("w1", TaskState::Working),
        ("i1", TaskState::InputRequired),
        ("d1", TaskState::Completed),
        ("x1", TaskState::Submitted),
    ] {
        create(&s, &new_task(id, "c", state, b)).await;
    }
    append(
        &s,
        "x1",
        status_ev("x1", "c", TaskState::Failed, b + 1, None),
    )
    .await;
    let q = |states: &'static [TaskState]| {
        let s = s.clone();
        async move {
            sorted(
                s.task_ids_in_states(states)
                    .await
                    .expect("task_ids_in_states"),
            )
        }
    };
    assert_eq!(
        q(&[TaskState::Submitted, TaskState::Working]).await,
        ["s1", "s2", "w1"]
    );
    assert_eq!(
        q(&[TaskState::Working, TaskState::Working]).await,
        ["w1"],
        "each task once"
    );
    assert_eq!(
        q(&[TaskState::Failed]).await,
        ["x1"],
        "the current state counts"
    );
    assert_eq!(q(&[TaskState::AuthRequired]).await, Vec::<String>::new());
    assert_eq!(q(&[]).await, Vec::<String>::new());
}

/// Every field of tasks, messages, parts, artifacts and events survives storage unchanged.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::json_fidelity(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn json_fidelity(s: Store) {
    let b = base();
    let mut meta = Metadata::new();
    meta.insert(
        "nested".into(),
        json!({"a": [1, 2.5, -3, true, null, "é✓"], "big": 9_007_199_254_740_993u64}),
    );
    let rich = Message {
        message_id: "rich-1".into(),
        context_id: Some("ctx-é".into()),
        task_id: Some("rich".into()),
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
        metadata: Some(meta.clone()),
        extensions: vec!["https://example.com/ext/v1".into()],
        reference_task_ids: vec!["older-task".into()],
    };
    let t = Task {
        id: "rich".into(),
        context_id: "ctx-é".into(),
        status: TaskStatus {
            state: TaskState::Submitted,
            message: Some(rich.clone()),
            timestamp: Some(ts(b)),
        },
        artifacts: vec![Artifact {
            artifact_id: "art-✓".into(),
            name: Some("name".into()),
            description: Some("desc".into()),
            parts: rich.parts.clone(),
            metadata: Some(meta.clone()),
            extensions: vec!["https://example.com/ext/v1".into()],
        }],
        history: vec![rich.clone()],
        metadata: Some(meta.clone()),
    };
    create(&s, &t).await;
    let mut ev = TaskStatusUpdateEvent {
        task_id: "rich".into(),
        context_id: "ctx-é".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(rich.clone()),
            timestamp: Some(ts(b + 1)),
        },
        metadata: Some(meta.clone()),
    };
    append(&s, "rich", StreamResponse::StatusUpdate(ev.clone())).await;
    ev.status.state = TaskState::AuthRequired;
    append(&s, "rich", StreamResponse::StatusUpdate(ev.clone())).await;
    let mut model = t.clone();
    for e in all_events(&s, "rich").await.iter().skip(1) {
        apply_event(&mut model, &e.event).expect("apply");
    }
    assert_eq!(full(&s, "rich").await.task, model);
    assert_eq!(
        all_events(&s, "rich").await[0].event,
        StreamResponse::Task(t),
        "the snapshot is stored as given"
    );
    assert_eq!(
        all_events(&s, "rich").await[2].event,
        StreamResponse::StatusUpdate(ev)
    );
    let mut cfg = push("rich", "cfg-✓", "https://example.com/hook?x=1&y=é");
    cfg.authentication = Some(AuthenticationInfo {
        scheme: "Basic".into(),
        credentials: None,
    });
    s.put_push_config(cfg.clone()).await.expect("push");
    assert_eq!(s.get_push_config("rich", "cfg-✓").await, Ok(Some(cfg)));
}

/// Many tokio tasks appending to many tasks at once: every append succeeds, every log is
/// contiguous.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_appends_across_tasks(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_appends_across_tasks(s: Store) {
    const TASKS: usize = 16;
    const EVENTS: usize = 25;
    let b = base();
    let mut handles = Vec::new();
    for t in 0..TASKS {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let id = format!("ct{t:02}");
            create(&s, &new_task(&id, "c", TaskState::Submitted, b)).await;
            let mut seqs = Vec::new();
            for i in 0..EVENTS {
                let ev = if i % 2 == 0 {
                    status_ev(
                        &id,
                        "c",
                        TaskState::Working,
                        b + i as i64,
                        Some(status_msg(&format!("{id}-{i}"), "tick")),
                    )
                } else {
                    artifact_ev(
                        &id,
                        "c",
                        artifact("out", vec![Part::text(format!("{i}"))]),
                        true,
                        false,
                    )
                };
                seqs.push(append(&s, &id, ev).await);
                if i % 5 == 0 {
                    s.add_message(&id, msg(Role::User, &format!("{id}-u{i}"), "more"))
                        .await
                        .expect("add_message");
                }
            }
            (id, seqs)
        }));
    }
    for h in handles {
        let (id, seqs) = h.await.expect("append task panicked");
        assert_eq!(
            seqs,
            (2..=EVENTS as Seq + 1).collect::<Vec<_>>(),
            "{id}: sequence numbers"
        );
        let log = all_events(&s, &id).await;
        assert_eq!(
            log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=EVENTS as Seq + 1).collect::<Vec<_>>()
        );
        let rec = full(&s, &id).await;
        assert_eq!(rec.last_seq, EVENTS as Seq + 1);
        assert_eq!(
            rec.task.history.len(),
            1 + EVENTS.div_ceil(2) + EVENTS.div_ceil(5)
        );
        assert_eq!(rec.task.artifacts[0].parts.len(), EVENTS / 2);
    }
    assert_eq!(
        s.list_tasks(&query(100)).await.expect("list").total_size,
        TASKS as i32
    );
}

/// Many concurrent appends to one task are atomic: distinct, contiguous sequence numbers and
/// no lost update.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_appends_to_one_task(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_appends_to_one_task(s: Store) {
    const N: usize = 40;
    create(&s, &new_task("one", "c", TaskState::Working, base())).await;
    let handles: Vec<_> = (0..N)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let ev = artifact_ev(
                    "one",
                    "c",
                    artifact("shared", vec![Part::text(format!("p{i}"))]),
                    true,
                    false,
                );
                append(&s, "one", ev).await
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for h in handles {
        seqs.push(h.await.expect("append task panicked"));
    }
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (2..=N as Seq + 1).collect::<Vec<_>>(),
        "each append gets its own sequence number"
    );
    let rec = full(&s, "one").await;
    assert_eq!(rec.task.artifacts.len(), 1);
    assert_eq!(rec.task.artifacts[0].parts.len(), N, "no append is lost");
    // The artifact's parts are in log order.
    let log = all_events(&s, "one").await;
    let from_log: Vec<Part> = log
        .iter()
        .filter_map(|r| match &r.event {
            StreamResponse::ArtifactUpdate(u) => Some(u.artifact.parts[0].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rec.task.artifacts[0].parts, from_log);
}

/// A burst of concurrent writes where some must be refused (a duplicate task id, an event
/// after a terminal state, an event for a task that does not exist): each refused write gets
/// its own error and every other write of the burst lands, as it would alone. A store that
/// commits concurrent writes together (group commit) must keep them apart.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_refusals_stay_their_own(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_refusals_stay_their_own(s: Store) {
    const TASKS: usize = 60;
    let b = base();
    // Each task is created twice at once: exactly one creation wins.
    let creates: Vec<_> = (0..TASKS * 2)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let id = format!("burst-{}", i % TASKS);
                let task = new_task(&id, "c", TaskState::Working, b + i as i64);
                (id, s.create_task(task, None, None).await)
            })
        })
        .collect();
    let mut won: std::collections::HashMap<String, usize> = Default::default();
    for h in creates {
        let (id, r) = h.await.expect("create panicked");
        match r {
            Ok(seq) => {
                assert_eq!(seq, 1, "{id}");
                *won.entry(id).or_default() += 1;
            }
            Err(StoreError::TaskExists(t)) => assert_eq!(t, id),
            Err(e) => panic!("{id}: a second creation must be TaskExists, got {e:?}"),
        }
    }
    assert_eq!(won.len(), TASKS);
    assert!(won.values().all(|n| *n == 1), "{won:?}");

    // Half the tasks complete.
    for i in (0..TASKS).step_by(2) {
        let id = format!("burst-{i}");
        append(
            &s,
            &id,
            status_ev(&id, "c", TaskState::Completed, b + 1000, None),
        )
        .await;
    }
    // Then, at once: the finished ones get a late WORKING (refused), the others complete, and
    // events go to tasks that do not exist.
    let appends: Vec<_> = (0..TASKS)
        .flat_map(|i| {
            let id = format!("burst-{i}");
            let state = if i % 2 == 0 {
                TaskState::Working
            } else {
                TaskState::Completed
            };
            let ghost = format!("ghost-{i}");
            let lost = status_ev(&ghost, "c", TaskState::Completed, b + 1000, None);
            [
                (id.clone(), status_ev(&id, "c", state, b + 2000, None)),
                (ghost, lost),
            ]
        })
        .map(|(id, ev)| {
            let s = s.clone();
            tokio::spawn(async move {
                let state = ev.state();
                (id.clone(), state, s.append_event(&id, ev).await)
            })
        })
        .collect();
    for h in appends {
        let (id, state, r) = h.await.expect("append panicked");
        if id.starts_with("ghost-") {
            assert!(
                matches!(&r, Err(StoreError::TaskNotFound(t)) if *t == id),
                "{id}: {r:?}"
            );
        } else if state == Some(TaskState::Completed) {
            assert_eq!(
                r,
                Ok(2),
                "{id}: the completion lands whatever else is refused"
            );
        } else {
            assert!(
                matches!(r, Err(StoreError::IllegalTransition(_))),
                "{id}: an event after a terminal state must be refused, got {r:?}"
            );
        }
    }
    for i in 0..TASKS {
        let id = format!("burst-{i}");
        let log = all_events(&s, &id).await;
        assert_eq!(
            log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![1, 2],
            "{id}: only the creation and the completion are logged"
        );
        assert_eq!(full(&s, &id).await.task.status.state, TaskState::Completed);
    }
}

/// A long pseudo-random run of every mutating operation against a model built with
/// [`apply_event`]: after each step the store holds the model's task, the
/// model's log and the same error for refused events.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::model_replay(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn model_replay(s: Store) {
    struct Model {
        task: Task,
        log: Vec<StreamResponse>,
    }
    let b = base();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut models: Vec<Model> = Vec::new();
    for i in 0..5 {
        let t = new_task(
            &format!("r{i}"),
            &format!("rc{}", i % 2),
            TaskState::Submitted,
            b + i,
        );
        create(&s, &t).await;
        models.push(Model {
            log: vec![StreamResponse::Task(t.clone())],
            task: t,
        });
    }
    for step in 0..300i64 {
        let i = next(models.len() as u64) as usize;
        let m = &mut models[i];
        let (id, ctx) = (m.task.id.clone(), m.task.context_id.clone());
        let at = b + 100 + step;
        let op = next(20);
        if op < 3 {
            let message = msg(Role::User, &format!("{id}-u{step}"), "follow-up");
            assert_eq!(
                s.add_message(&id, message.clone()).await,
                Ok(()),
                "step {step}"
            );
            m.task.history.push(message);
        } else {
            let ev = match op {
                3..=6 => {
                    let message =
                        (op % 2 == 0).then(|| status_msg(&format!("{id}-s{step}"), "working"));
                    status_ev(&id, &ctx, TaskState::Working, at, message)
                }
                7 => status_ev(
                    &id,
                    &ctx,
                    TaskState::InputRequired,
                    at,
                    Some(msg(Role::Agent, &format!("{id}-q{step}"), "?")),
                ),
                8 => status_ev(&id, &ctx, TaskState::AuthRequired, at, None),
                9 => {
                    let end = [
                        TaskState::Completed,
                        TaskState::Failed,
                        TaskState::Canceled,
                        TaskState::Rejected,
                    ];
                    status_ev(
                        &id,
                        &ctx,
                        end[next(4) as usize],
                        at,
                        Some(msg(Role::Agent, &format!("{id}-e{step}"), "end")),
                    )
                }
                10 => status_ev(&id, &ctx, TaskState::Submitted, at, None),
                11 => status_ev("someone-else", &ctx, TaskState::Working, at, None),
                _ => {
                    let aid = format!("art{}", next(3));
                    let parts = match next(4) {
                        0 => vec![Part::text("")],
                        1 => vec![Part::text(format!("t{step}")), Part::text("")],
                        2 => vec![Part::data(json!({"step": step}))],
                        _ => vec![Part::text(format!("t{step}"))],
                    };
                    let mut a = artifact(&aid, parts);
                    if next(5) == 0 {
                        a.name = Some(format!("n{step}"));
                        a.metadata =
                            Some(json!({"s": step}).as_object().cloned().unwrap_or_default());
                    }
                    artifact_ev(&id, &ctx, a, next(3) > 0, false)
                }
            };
            let mut after = m.task.clone();
            let want = apply_event(&mut after, &ev).map(|()| m.log.len() as Seq + 1);
            let got = s.append_event(&id, ev.clone()).await;
            assert_eq!(got, want, "step {step}: append_event result on {id}");
            if want.is_ok() {
                m.task = after;
                m.log.push(ev);
            }
        }
        let rec = full(&s, &id).await;
        assert_eq!(rec.task, m.task, "step {step}: task {id}");
        assert_eq!(
            rec.last_seq,
            m.log.len() as Seq,
            "step {step}: last_seq of {id}"
        );
    }
    for m in &models {
        let got: Vec<StreamResponse> = all_events(&s, &m.task.id)
            .await
            .into_iter()
            .map(|r| r.event)
            .collect();
        assert_eq!(got, m.log, "log of {}", m.task.id);
    }
    let mut q = query(3);
    q.view = TaskView::FULL;
    let listed = walk(&s, q).await;
    let want = list_order(
        models
            .iter()
            .map(|m| (ms_of(&m.task), m.task.id.clone()))
            .collect(),
    );
    assert_eq!(ids(&listed), want, "ListTasks order after the run");
    for t in &listed {
        let m = models
            .iter()
            .find(|m| m.task.id == t.id)
            .expect("listed task exists");
        assert_eq!(t, &m.task, "listed task {}", t.id);
    }
}

/// The page-token format shared by the kit's own stores (`base64url("{millis}:{id}")` of the
/// last task on the page), so a token from one kit store pages another. Not part of
/// [`run_all`]: other stores may use any opaque token.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::kit_cursor_format(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn kit_cursor_format(s: Store) {
    let b = base();
    for i in 0..5i64 {
        create(
            &s,
            &new_task(&format!("cf{i}"), "c", TaskState::Working, b + i / 2),
        )
        .await;
    }
    let page = s.list_tasks(&query(3)).await.expect("list");
    let last = page.tasks.last().expect("a full page");
    assert_eq!(page.next_page_token, encode_cursor(ms_of(last), &last.id));
    let mut q = query(3);
    q.page_token = Some(encode_cursor(b + 1, "cf3"));
    assert_eq!(
        ids(&s.list_tasks(&q).await.expect("list").tasks),
        ["cf2", "cf1", "cf0"]
    );
}

/// Task owners: every way of creating a task keeps its owner, reads return it, events leave
/// it alone, and ListTasks lists exactly one owner's tasks (`None`: the tasks created without
/// one), with filters, `totalSize` and pages counting that owner's tasks only.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::owners(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn owners(s: Store) {
    let b = base();
    let alice = Owner::new(Some("acme"), Some("alice"));
    let bob = Owner::new(Some("acme"), Some("bob"));
    // Odd characters are kept exactly: `a/b` under no tenant is not tenant `a`, subject `b`.
    let odd = Owner::new(None, Some("a/b ü%"));
    let tenant_only = Owner::new(Some("a"), Some("b"));
    let owners = [
        alice.clone(),
        bob.clone(),
        None,
        odd.clone(),
        tenant_only.clone(),
    ];
    let mut want: Vec<Vec<(i64, String)>> = vec![Vec::new(); owners.len()];
    for i in 0..20usize {
        let o = i % owners.len();
        let id = format!("own-{i:02}");
        let at = b + i as i64 * 1000;
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        let task = new_task(&id, ctx, TaskState::Submitted, at);
        let owner = owners[o].clone();
        // Every creation path, in turn.
        match i % 3 {
            0 => {
                s.create_task(task, Some("skill".into()), owner)
                    .await
                    .expect("create_task");
            }
            1 => {
                let ev = status_ev(&id, ctx, TaskState::Working, at, None);
                s.create_task_with_events(task, None, owner, vec![ev])
                    .await
                    .expect("create_task_with_events");
            }
            _ => {
                let ev = status_ev(&id, ctx, TaskState::Completed, at, None);
                s.create_task_with_released_log(task, None, owner, vec![ev])
                    .await
                    .expect("create_task_with_released_log");
            }
        }
        want[o].push((at, id));
    }
    // An event does not change the owner.
    append(
        &s,
        "own-00",
        status_ev("own-00", "even", TaskState::Working, b + 100_000, None),
    )
    .await;
    let moved = want[0]
        .iter()
        .position(|(_, id)| id == "own-00")
        .expect("own-00");
    want[0][moved].0 = b + 100_000;
    for (o, owner) in owners.iter().enumerate() {
        for (_, id) in &want[o] {
            assert_eq!(
                &full(&s, id).await.owner,
                owner,
                "get_task({id}) returns its owner"
            );
        }
        let q = ListQuery {
            owner: owner.clone(),
            ..query(1)
        };
        assert_eq!(
            ids(&walk(&s, q.clone()).await),
            list_order(want[o].clone()),
            "ListTasks of {owner:?} lists its tasks, and only them"
        );
        let page = s.list_tasks(&q).await.expect("list");
        assert_eq!(
            page.total_size as usize,
            want[o].len(),
            "totalSize of {owner:?}"
        );
        let even = ListQuery {
            context_id: Some("even".into()),
            ..q.clone()
        };
        let want_even: Vec<_> = want[o]
            .iter()
            .filter(|(_, id)| id[4..].parse::<usize>().is_ok_and(|n| n % 2 == 0))
            .cloned()
            .collect();
        assert_eq!(
            ids(&walk(&s, even).await),
            list_order(want_even),
            "ListTasks of {owner:?} in one context"
        );
    }
    let nobody = ListQuery {
        owner: Owner::new(Some("globex"), Some("alice")),
        ..query(10)
    };
    let page = s.list_tasks(&nobody).await.expect("list");
    assert!(
        page.tasks.is_empty() && page.total_size == 0,
        "another tenant sees nothing: {page:?}"
    );
}
