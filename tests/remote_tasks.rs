//! The calling side's remote tasks (`a2a_kit_axum::webhook::RemoteTasks`, `PushTokens`) on
//! every kit store: updates applied once whatever their order, kept across a restart with
//! their webhook tokens, shared by replicas without lost updates, and a deadline after which
//! the task is polled, then surfaced as timed out, retried or cancelled, against a real agent
//! over HTTP.

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::client::{A2aClient, SendRequest};
use a2a_kit::protocol::{
    Artifact, ListTasksResponse, Message, Part, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use a2a_kit::store::{
    EventRecord, InMemoryTaskManager, ListQuery, Owner, Seq, SqliteTaskManager, StoreError,
    TaskManager, TaskRecord, TaskView,
};
use a2a_kit_axum::webhook::{
    Applied, PollPolicy, PushTokens, RemoteTasks, TokenCheck, WebhookReceiver,
};
use a2a_tests::*;

/// A fresh directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("a2a-remote-{}", uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn at(ms: i64) -> Option<Timestamp> {
    Some(Timestamp(
        chrono::DateTime::from_timestamp_millis(1_790_000_000_000 + ms).unwrap(),
    ))
}

fn status(state: TaskState, ms: i64) -> TaskStatus {
    TaskStatus {
        state,
        message: None,
        timestamp: at(ms),
    }
}

fn task(id: &str, status: TaskStatus) -> Task {
    Task {
        id: id.into(),
        context_id: "ctx".into(),
        status,
        ..Task::default()
    }
}

fn answer() -> Artifact {
    Artifact {
        artifact_id: "answer".into(),
        parts: vec![Part::text("forty-two")],
        ..Artifact::default()
    }
}

/// What a remote agent may send of one task, in the order it happened: the acknowledgement,
/// two status updates, the answer as an artifact update and the final Task.
fn history(id: &str) -> (Vec<StreamResponse>, Task) {
    let update = |state, ms| {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.into(),
            context_id: "ctx".into(),
            status: status(state, ms),
            metadata: None,
        })
    };
    let mut done = task(id, status(TaskState::Completed, 30));
    done.artifacts = vec![answer()];
    let events = vec![
        StreamResponse::Task(task(id, status(TaskState::Submitted, 0))),
        update(TaskState::Working, 10),
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: id.into(),
            context_id: "ctx".into(),
            artifact: answer(),
            append: false,
            last_chunk: true,
            metadata: None,
        }),
        update(TaskState::Completed, 30),
        StreamResponse::Task(done.clone()),
    ];
    (events, done)
}

/// Every order of `n` items (Heap's algorithm).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k == 1 {
            out.push(a.clone());
            return;
        }
        for i in 0..k {
            go(k - 1, a, out);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            a.swap(j, k - 1);
        }
    }
    let mut out = Vec::new();
    go(n, &mut (0..n).collect(), &mut out);
    out
}

/// Each order of the events, each event twice: the same final task every time, with the
/// final Task snapshot among them (a2a-kit's default final notification) and without it (a
/// sender's per-event notifications).
async fn any_order_same_task(store: Arc<dyn TaskManager>) {
    let tasks = RemoteTasks::open(store).unwrap();
    let orders = permutations(5)
        .into_iter()
        .chain(permutations(4))
        .enumerate();
    for (n, order) in orders {
        let id = format!("t-{n}");
        let (events, done) = history(&id);
        for &i in &order {
            tasks.apply(&events[i]).await.unwrap();
            assert_eq!(
                tasks.apply(&events[i]).await.unwrap(),
                Applied::Unchanged,
                "a duplicate changes nothing (order {order:?}, event {i})"
            );
        }
        let got = tasks.get(&id).await.unwrap().unwrap();
        assert_eq!(got.status, done.status, "order {order:?}");
        assert_eq!(got.artifacts, done.artifacts, "order {order:?}");
    }
}

#[tokio::test]
async fn updates_apply_once_in_any_order_in_memory() {
    any_order_same_task(Arc::new(InMemoryTaskManager::default())).await;
}

#[tokio::test]
async fn updates_apply_once_in_any_order_in_sqlite() {
    let dir = TempDir::new();
    let store = SqliteTaskManager::open(dir.0.join("caller.db"))
        .await
        .unwrap();
    any_order_same_task(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_apply_once_in_any_order_in_postgres() {
    let pg = PostgresSchema::new(1).await;
    any_order_same_task(Arc::new(pg.stores[0].clone())).await;
    pg.drop().await;
}

/// A store of the core alone: `remote_tasks()` keeps its default, `None`.
struct CoreOnly(InMemoryTaskManager);

#[async_trait::async_trait]
impl TaskManager for CoreOnly {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        self.0.create_task(task, skill_id, owner).await
    }
    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        self.0.append_event(task_id, event).await
    }
    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        self.0.add_message(task_id, message).await
    }
    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        self.0.get_task(task_id, view).await
    }
    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        self.0.events_after(task_id, after, limit).await
    }
    fn release_log(&self, task_id: &str) {
        self.0.release_log(task_id)
    }
    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        self.0.list_tasks(query).await
    }
    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.0.purge_terminal_before(before).await
    }
    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        self.0.task_ids_in_states(states).await
    }
}

#[tokio::test]
async fn a_store_without_the_capability_is_refused_by_name() {
    let store: Arc<dyn TaskManager> = Arc::new(CoreOnly(InMemoryTaskManager::default()));
    let err = RemoteTasks::open(store.clone()).unwrap_err().to_string();
    assert!(err.contains("TaskManager::remote_tasks"), "{err}");
    let err = PushTokens::open(store).unwrap_err().to_string();
    assert!(err.contains("TaskManager::remote_tasks"), "{err}");
}

/// A token issued and one bound, a tracked task: all there after the store is opened again
/// (a restart), and the token only as its hash in the file.
#[tokio::test]
async fn tasks_and_tokens_survive_a_restart_in_sqlite() {
    let dir = TempDir::new();
    let path = dir.0.join("caller.db");
    let (pending, bound) = {
        let store: Arc<dyn TaskManager> = Arc::new(SqliteTaskManager::open(&path).await.unwrap());
        let tokens = PushTokens::open(store.clone()).unwrap();
        let tasks = RemoteTasks::open(store).unwrap();
        let pending = tokens.issue().await.unwrap();
        let bound = tokens.issue().await.unwrap();
        tokens.bind("t-1", &bound).await.unwrap();
        tasks
            .track(
                task("t-1", status(TaskState::Working, 0)),
                "http://agent.example",
                Some(Duration::from_secs(60)),
            )
            .await
            .unwrap();
        (pending, bound)
    };
    let bytes = std::fs::read(&path).unwrap();
    let wal = std::fs::read(path.with_extension("db-wal")).unwrap_or_default();
    for token in [&pending, &bound] {
        let needle = token.as_bytes();
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle)
                && !wal.windows(needle.len()).any(|w| w == needle),
            "a token is in the database file as it is"
        );
    }

    let store: Arc<dyn TaskManager> = Arc::new(SqliteTaskManager::open(&path).await.unwrap());
    let tokens = PushTokens::open(store.clone()).unwrap();
    let tasks = RemoteTasks::open(store).unwrap();
    let unsettled = tasks.unsettled().await.unwrap();
    assert_eq!(unsettled.len(), 1);
    assert_eq!(unsettled[0].task.id, "t-1");
    assert_eq!(
        unsettled[0].agent_url.as_deref(),
        Some("http://agent.example")
    );
    assert!(unsettled[0].deadline_ms.is_some());
    assert_eq!(
        tokens.check("t-1", &bound).await.unwrap(),
        TokenCheck::Valid
    );
    assert_eq!(
        tokens.check("t-1", &pending).await.unwrap(),
        TokenCheck::Mismatch
    );
    // The pending token opens the first task that presents it, after the restart too.
    assert_eq!(
        tokens.check("t-2", &pending).await.unwrap(),
        TokenCheck::Valid
    );
    assert_eq!(
        tokens.check("t-3", &pending).await.unwrap(),
        TokenCheck::UnknownTask
    );
}

/// A webhook posted to a receiver whose process restarted (a new receiver on the same
/// database) with the token issued before: accepted and stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_after_a_restart_is_accepted_in_postgres() {
    let pg = PostgresSchema::new(2).await;
    let before: Arc<dyn TaskManager> = Arc::new(pg.stores[0].clone());
    let token = PushTokens::open(before.clone())
        .unwrap()
        .issue()
        .await
        .unwrap();
    RemoteTasks::open(before)
        .unwrap()
        .track(
            task("t-pg", status(TaskState::Submitted, 0)),
            "http://agent.example",
            None,
        )
        .await
        .unwrap();

    let after: Arc<dyn TaskManager> = Arc::new(pg.stores[1].clone());
    let tasks = RemoteTasks::open(after.clone()).unwrap();
    let receiver = WebhookReceiver::new(PushTokens::open(after).unwrap()).store(tasks.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app: axum::Router = receiver.router("/hook");
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let (_, done) = history("t-pg");
    let post = |token: &str| {
        client()
            .post(&url)
            .bearer_auth(token)
            .json(&StreamResponse::Task(done.clone()))
            .send()
    };
    assert_eq!(post("not-the-token").await.unwrap().status(), 404);
    assert_eq!(post(&token).await.unwrap().status(), 204);
    let got = tasks.get("t-pg").await.unwrap().unwrap();
    assert_eq!(got.status.state, TaskState::Completed);
    assert_eq!(got.artifacts, vec![answer()]);
    assert!(tasks.unsettled().await.unwrap().is_empty());
    pg.drop().await;
}

/// Two replicas applying different updates to one task at once: none is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_never_lose_each_others_updates_in_postgres() {
    let pg = PostgresSchema::new(2).await;
    let a = RemoteTasks::open(Arc::new(pg.stores[0].clone())).unwrap();
    let b = RemoteTasks::open(Arc::new(pg.stores[1].clone())).unwrap();
    a.insert(task("shared", status(TaskState::Working, 0)))
        .await
        .unwrap();
    let mut writes = Vec::new();
    for i in 0..24 {
        let tasks = if i % 2 == 0 { a.clone() } else { b.clone() };
        writes.push(tokio::spawn(async move {
            let artifact = Artifact {
                artifact_id: format!("part-{i}"),
                parts: vec![Part::text(i.to_string())],
                ..Artifact::default()
            };
            tasks
                .apply(&StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: "shared".into(),
                    context_id: "ctx".into(),
                    artifact,
                    append: false,
                    last_chunk: true,
                    metadata: None,
                }))
                .await
                .unwrap()
        }));
    }
    for w in writes {
        assert_eq!(w.await.unwrap(), Applied::Changed);
    }
    let got = b.get("shared").await.unwrap().unwrap();
    assert_eq!(got.artifacts.len(), 24, "every replica's artifact is kept");
    pg.drop().await;
}

/// Start `skill` on the test agent without waiting; the acknowledged task.
async fn start(client: &A2aClient, skill: &str, text: &str) -> Task {
    match client
        .send(
            SendRequest::text(text)
                .skill(skill)
                .return_immediately(true),
        )
        .await
        .unwrap()
    {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("a message: {m:?}"),
    }
}

fn quick_polls(attempts: u32) -> PollPolicy {
    PollPolicy {
        attempts,
        first: Duration::from_millis(200),
        max_interval: Duration::from_millis(400),
    }
}

/// No webhook by the deadline: the watch asks the agent, and finds the task done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_deadline_a_task_is_polled_until_it_is_done() {
    let agent = serve_test_agent().await;
    let client = A2aClient::connect(&agent.base).await.unwrap();
    let tasks = RemoteTasks::new();
    let t = start(&client, "slow", "700").await;
    let id = t.id.clone();
    tasks
        .track(t, &agent.base, Some(Duration::from_millis(100)))
        .await
        .unwrap();
    let _watch = tasks.watch(quick_polls(20));
    let record = tokio::time::timeout(Duration::from_secs(20), tasks.wait_settled(&id))
        .await
        .expect("settled by polls")
        .unwrap();
    assert_eq!(record.task.status.state, TaskState::Completed);
    assert!(record.timed_out.is_none());
    assert!(
        record.polls >= 1,
        "the first polls found it working: {record:?}"
    );
    assert_eq!(
        record.task.artifacts[0].parts[0].as_text(),
        Some("slept 700")
    );
}

/// A task the agent never finishes: after the polls, timed out with a reason; `retry` gives it
/// another round; `cancel` cancels it on the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_never_settles_is_timed_out_then_retried_or_cancelled() {
    let agent = serve_test_agent().await;
    let client = A2aClient::connect(&agent.base).await.unwrap();
    let tasks = RemoteTasks::new();
    let t = start(&client, "slow", "60000").await;
    let id = t.id.clone();
    tasks
        .track(t, &agent.base, Some(Duration::ZERO))
        .await
        .unwrap();
    let watch = tasks.watch(quick_polls(3));
    let record = tokio::time::timeout(Duration::from_secs(20), tasks.wait_settled(&id))
        .await
        .expect("timed out in time")
        .unwrap();
    let timed_out = record.timed_out.clone().expect("marked timed out");
    assert_eq!(record.polls, 3);
    assert_eq!(
        timed_out.reason,
        "no webhook by the deadline, and after 3 polls the agent still says TASK_STATE_WORKING"
    );
    assert_eq!(record.task.status.state, TaskState::Working);

    // Another round: polled again, timed out again.
    let again = tasks.retry(&id).await.unwrap().unwrap();
    assert!(again.timed_out.is_none() && again.polls == 0, "{again:?}");
    let record = tokio::time::timeout(Duration::from_secs(20), tasks.wait_settled(&id))
        .await
        .expect("timed out again")
        .unwrap();
    assert!(record.timed_out.is_some());
    drop(watch);

    let canceled = tasks.cancel(&id, &client).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let record = tasks.record(&id).await.unwrap().unwrap();
    assert_eq!(record.task.status.state, TaskState::Canceled);
    assert!(record.timed_out.is_none(), "settled: no longer timed out");
    assert!(tasks.unsettled().await.unwrap().is_empty());
}

/// An agent that cannot be reached counts as an inconclusive poll, and the reason says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_agent_times_out_with_the_error_as_its_reason() {
    let tasks = RemoteTasks::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    tasks
        .track(
            task("gone", status(TaskState::Working, 0)),
            &format!("http://127.0.0.1:{port}"),
            Some(Duration::ZERO),
        )
        .await
        .unwrap();
    let _watch = tasks.watch(quick_polls(2));
    let record = tokio::time::timeout(Duration::from_secs(20), tasks.wait_settled("gone"))
        .await
        .expect("timed out in time")
        .unwrap();
    let reason = record.timed_out.expect("timed out").reason;
    assert!(
        reason.starts_with("no webhook by the deadline, and the last of 2 polls failed: "),
        "{reason}"
    );
    assert!(reason.contains(&port.to_string()), "{reason}");
}

/// A message that names the task joins its history once.
#[tokio::test]
async fn a_message_joins_the_history_once() {
    let tasks = RemoteTasks::new();
    tasks
        .insert(task("m", status(TaskState::InputRequired, 0)))
        .await
        .unwrap();
    let mut m = Message::agent_text("which one?");
    m.task_id = Some("m".into());
    assert_eq!(
        tasks
            .apply(&StreamResponse::Message(m.clone()))
            .await
            .unwrap(),
        Applied::Changed
    );
    assert_eq!(
        tasks.apply(&StreamResponse::Message(m)).await.unwrap(),
        Applied::Unchanged
    );
    assert_eq!(tasks.get("m").await.unwrap().unwrap().history.len(), 1);
}

/// Finished tasks older than the age given are forgotten with their tokens; the others stay.
#[tokio::test]
async fn finished_tasks_are_purged_by_age_in_sqlite() {
    let dir = TempDir::new();
    let store: Arc<dyn TaskManager> = Arc::new(
        SqliteTaskManager::open(dir.0.join("caller.db"))
            .await
            .unwrap(),
    );
    let tasks = RemoteTasks::open(store.clone()).unwrap();
    let tokens = PushTokens::open(store).unwrap();
    let (_, done) = history("done");
    tasks.insert(done).await.unwrap();
    tasks
        .insert(task("working", status(TaskState::Working, 0)))
        .await
        .unwrap();
    let token = tokens.issue().await.unwrap();
    tokens.bind("done", &token).await.unwrap();
    assert_eq!(
        tasks
            .purge_finished(Duration::from_secs(3600))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        tasks
            .purge_finished(Duration::from_millis(10))
            .await
            .unwrap(),
        1
    );
    assert_eq!(tasks.get("done").await.unwrap(), None);
    assert!(tasks.get("working").await.unwrap().is_some());
    assert_eq!(
        tokens.check("done", &token).await.unwrap(),
        TokenCheck::UnknownTask,
        "its token went with it"
    );
}
