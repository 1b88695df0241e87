//! The durable push outbox. In PostgreSQL a task's deliveries are claimed by one replica at a
//! time, each config's progress is a lane written only under the claim, and a survivor takes
//! over the deliveries of a replica that died, so each event reaches each webhook once. In
//! any durable store, a lane shows a retry in progress and why deliveries failed, and a
//! settled task is pushed as itself, the same bytes at every attempt.

use std::time::{Duration, Instant};

use a2a_kit::prelude::*;
use a2a_kit::protocol::{Message, Task, TaskPushNotificationConfig, TaskState, TaskStatus};
use a2a_kit::push::{PushConfig, PushDispatcher, RetryPolicy};
use a2a_kit::server::AgentService;
use a2a_kit::store::{PostgresOptions, PostgresTaskManager, PushOutbox, TaskManager};
use a2a_tests::{
    PostgresSchema, RecordingWebhook, TestServer, postgres_url, rpc, serve, wait_task,
};
use serde_json::json;

/// Naps, then answers.
struct Napper;

/// Naps on request and reports by push notification.
#[a2a_agent(name = "Napper", push_notifications = true)]
impl Napper {
    /// Sleep N milliseconds, then say so.
    #[skill(default)]
    async fn nap(&self, Text(ms): Text) -> String {
        let ms: u64 = ms.trim().parse().unwrap_or(100);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("napped {ms}")
    }
}

fn push_config() -> PushConfig {
    PushConfig::default()
        .allow_private_networks()
        .retry(RetryPolicy {
            max_attempts: 20,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_millis(400),
            ..RetryPolicy::default()
        })
}

fn replica(
    store: PostgresTaskManager,
    push: &PushDispatcher,
) -> a2a_kit::server::AgentServiceBuilder {
    AgentService::builder(Napper)
        .task_manager(store)
        .push_dispatcher(push)
}

fn task(id: &str) -> Task {
    Task {
        id: id.into(),
        context_id: "ctx".into(),
        status: TaskStatus::new(TaskState::Working),
        artifacts: vec![],
        history: vec![Message::user_text("hi")],
        metadata: None,
    }
}

fn config(task_id: &str, id: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        task_id: Some(task_id.into()),
        id: Some(id.into()),
        url: "https://example.com/hook".into(),
        ..Default::default()
    }
}

fn completed(task_id: &str) -> a2a_kit::protocol::StreamResponse {
    a2a_kit::protocol::StreamResponse::StatusUpdate(a2a_kit::protocol::TaskStatusUpdateEvent {
        task_id: task_id.into(),
        context_id: "ctx".into(),
        status: TaskStatus::new(TaskState::Completed),
        metadata: None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_are_exclusive_and_lanes_are_fenced() {
    let schema = PostgresSchema::new(2).await;
    let (a, b) = (&schema.stores[0], &schema.stores[1]);
    a.create_task(task("t1"), None, None).await.unwrap();
    // No config, no lane: nothing to claim.
    assert_eq!(a.claim_push("t1").await.unwrap(), Some(vec![]));
    a.push_configs()
        .unwrap()
        .put(config("t1", "c1"), 10)
        .await
        .unwrap();

    // A lane starts at the task's last event: the config gets what comes after it.
    let lanes = a.claim_push("t1").await.unwrap().expect("free to claim");
    assert_eq!(lanes.len(), 1);
    assert_eq!((lanes[0].config_id.as_str(), lanes[0].cursor), ("c1", 1));
    assert_eq!(b.claim_push("t1").await.unwrap(), None, "A holds the claim");
    let seq = a.append_event("t1", completed("t1")).await.unwrap();

    let mut lane = lanes[0].clone();
    lane.cursor = seq;
    lane.delivered = 1;
    assert!(a.save_push_lane("t1", &lane).await.unwrap());
    let mut stale = lane.clone();
    stale.cursor = 1;
    assert!(
        !b.save_push_lane("t1", &stale).await.unwrap(),
        "a lane is written only under the claim"
    );

    a.release_push_claim("t1").await.unwrap();
    let taken = b.claim_push("t1").await.unwrap().expect("released");
    assert_eq!(taken[0], lane, "B starts where A recorded it stopped");
    assert!(
        !a.save_push_lane("t1", &stale).await.unwrap(),
        "A lost the claim: its writes are refused"
    );
    assert_eq!(a.claim_push("t1").await.unwrap(), None);

    // Deleting the config drops its lane; replacing one keeps it.
    b.push_configs()
        .unwrap()
        .put(config("t1", "c1"), 10)
        .await
        .unwrap();
    assert_eq!(b.claim_push("t1").await.unwrap().unwrap()[0], lane);
    assert!(b.push_configs().unwrap().delete("t1", "c1").await.unwrap());
    assert_eq!(b.claim_push("t1").await.unwrap(), Some(vec![]));
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_left_by_a_silent_replica_is_found_once_its_claim_runs_out() {
    let lease = Duration::from_millis(600);
    let mut schema = PostgresSchema::with_lease(2, lease).await;
    let b = schema.stores.pop().unwrap();
    let a = schema.stores.pop().unwrap();
    a.create_task(task("t2"), None, None).await.unwrap();
    a.push_configs()
        .unwrap()
        .put(config("t2", "c1"), 10)
        .await
        .unwrap();
    a.claim_push("t2").await.unwrap().expect("free");
    a.append_event("t2", completed("t2")).await.unwrap();
    // A lives: its claim is renewed past the lease.
    tokio::time::sleep(lease * 2).await;
    assert!(b.orphaned_push_work(10).await.unwrap().is_empty());
    // A goes silent: once its claim ran out, the work is B's to find.
    drop(a);
    let silent = Instant::now();
    loop {
        if b.orphaned_push_work(10).await.unwrap() == vec!["t2".to_string()] {
            break;
        }
        assert!(
            silent.elapsed() < lease * 5,
            "the orphaned work was not found"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(b.claim_push("t2").await.unwrap().is_some());
    assert!(
        b.orphaned_push_work(10).await.unwrap().is_empty(),
        "B holds it now"
    );
    b.drop_schema().await.unwrap();
}

/// Send `nap N` to `base` with a push config to `hook`; the task's id.
async fn nap_with_push(base: &str, ms: u64, hook: &str) -> String {
    let v = rpc(
        base,
        "SendMessage",
        json!({"message": {"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": [{"text": ms.to_string()}]},
               "configuration": {"returnImmediately": true, "taskPushNotificationConfig": {"url": hook, "id": "hook"}}}),
    )
    .await;
    v["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_is_pushed_once_across_replicas() {
    let schema = PostgresSchema::with_lease(2, Duration::from_millis(800)).await;
    let hook = RecordingWebhook::default();
    let hook_url = hook.serve().await;
    let (push_a, push_b) = (
        PushDispatcher::new(push_config()),
        PushDispatcher::new(push_config()),
    );
    let a = serve(replica(schema.stores[0].clone(), &push_a)).await;
    let b = serve(replica(schema.stores[1].clone(), &push_b)).await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        ids.push(nap_with_push(base, 300, &hook_url).await);
    }
    for id in &ids {
        wait_task(&a.base, id, |t| {
            t["status"]["state"] == "TASK_STATE_COMPLETED"
        })
        .await;
    }
    let until = Instant::now() + Duration::from_secs(10);
    while ids
        .iter()
        .any(|id| hook.count(id, "TASK_STATE_COMPLETED", true) == 0)
    {
        assert!(Instant::now() < until, "not every COMPLETED was pushed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Long enough for both sweepers to look several times.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for id in &ids {
        assert_eq!(hook.count(id, "TASK_STATE_COMPLETED", true), 1, "{id}");
    }
    drop((a, b));
    schema.drop().await;
}

/// A replica on a runtime of its own, so that it can die all at once (its server, its
/// dispatcher, its store's lease keeper) as a killed process would.
struct Doomed {
    base: String,
    die: std::sync::mpsc::Sender<()>,
}

fn doomed_replica(schema: &str, lease: Duration) -> Doomed {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (die, die_rx) = std::sync::mpsc::channel::<()>();
    let schema = schema.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server: TestServer = rt.block_on(async {
            let store = PostgresTaskManager::connect_with(
                &postgres_url(),
                PostgresOptions::default().schema(&schema).lease(lease),
            )
            .await
            .unwrap();
            serve(replica(store, &PushDispatcher::new(push_config()))).await
        });
        ready_tx.send(server.base.clone()).unwrap();
        let _ = die_rx.recv();
        std::mem::forget(server);
        rt.shutdown_background();
    });
    Doomed {
        base: ready_rx.recv().unwrap(),
        die,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_survivor_delivers_what_a_dead_replica_was_retrying() {
    let lease = Duration::from_millis(1000);
    let schema = PostgresSchema::with_lease(1, lease).await;
    let hook = RecordingWebhook::default();
    hook.set_failing(true);
    let hook_url = hook.serve().await;
    let push_b = PushDispatcher::new(push_config());
    let b = serve(replica(schema.stores[0].clone(), &push_b)).await;
    let a = doomed_replica(schema.name(), lease);

    let id = nap_with_push(&a.base, 100, &hook_url).await;
    // A claims the COMPLETED and retries it against a failing webhook...
    let until = Instant::now() + Duration::from_secs(10);
    while hook.hits().iter().all(|(t, _, _)| *t != id) {
        assert!(Instant::now() < until, "A never tried to deliver");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...and dies. The webhook recovers; B takes over once A's claim ran out.
    a.die.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    hook.set_failing(false);
    let died = Instant::now();
    while hook.count(&id, "TASK_STATE_COMPLETED", true) == 0 {
        assert!(
            died.elapsed() < lease * 8,
            "the survivor did not deliver: {:?}",
            hook.hits()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(lease * 2).await;
    assert_eq!(hook.count(&id, "TASK_STATE_COMPLETED", true), 1);
    let status = push_b.status(&id, "hook").expect("B delivered it");
    assert_eq!(status.delivered, 1, "{status:?}");
    // The stored lane says so too, from any replica.
    let lanes = push_b
        .stored_statuses(&id)
        .await
        .unwrap()
        .expect("a durable outbox");
    assert_eq!(lanes.len(), 1, "{lanes:?}");
    assert_eq!(
        (lanes[0].config_id.as_str(), lanes[0].delivered),
        ("hook", 1)
    );
    assert_eq!(lanes[0].failed, 0, "{lanes:?}");
    drop(b);
    schema.drop().await;
}

/// A retry in progress is in the lane while it waits (attempts, last error, when the next
/// attempt is due) and cleared once delivered; a webhook host that resolves to a loopback
/// address is refused when dialled (the default, strict SSRF policy), and the lane says why.
/// On a SQLite file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_show_retries_in_progress_and_refused_hosts() {
    let dir = std::env::temp_dir().join(format!("a2a-lanes-{}", a2a_tests::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = a2a_kit::store::SqliteTaskManager::open(dir.join("tasks.db"))
        .await
        .unwrap();
    let hook = RecordingWebhook::default();
    hook.set_failing(true);
    let hook_url = hook.serve().await;
    let push = PushDispatcher::new(PushConfig::default().allow_private_networks().retry(
        RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(1500),
            max_backoff: Duration::from_millis(1500),
            jitter: false,
            ..RetryPolicy::default()
        },
    ));
    let s = serve(
        AgentService::builder(Napper)
            .task_manager(store.clone())
            .push_dispatcher(&push),
    )
    .await;
    let id = nap_with_push(&s.base, 50, &hook_url).await;
    let lane = async |id: &str| {
        push.stored_statuses(id)
            .await
            .unwrap()
            .expect("a durable outbox")
            .remove(0)
    };
    let until = Instant::now() + Duration::from_secs(10);
    let retrying = loop {
        let l = lane(&id).await;
        if l.attempts > 0 {
            break l;
        }
        assert!(Instant::now() < until, "no retry recorded: {l:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let now = a2a_kit::protocol::Timestamp::now().0.timestamp_millis();
    assert!(
        retrying.next_attempt_at.is_some_and(|at| at > now),
        "the next attempt is ahead: {retrying:?}"
    );
    assert!(
        retrying
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("503")),
        "{retrying:?}"
    );
    assert_eq!(
        (retrying.delivered, retrying.failed),
        (0, 0),
        "{retrying:?}"
    );
    hook.set_failing(false);
    while hook.count(&id, "TASK_STATE_COMPLETED", true) == 0 {
        assert!(Instant::now() < until, "never delivered: {:?}", hook.hits());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    push.wait_idle().await;
    let done = lane(&id).await;
    assert_eq!(
        (done.attempts, done.next_attempt_at, done.delivered),
        (0, None, 1),
        "{done:?}"
    );

    // A config whose host resolves to loopback: accepted where it was stored (here straight
    // into the store, as a name that resolved elsewhere then would be), refused when dialled.
    drop(s);
    let strict = PushDispatcher::new(PushConfig::default());
    let s = serve(
        AgentService::builder(Napper)
            .task_manager(store.clone())
            .push_dispatcher(&strict),
    )
    .await;
    let v = rpc(
        &s.base,
        "SendMessage",
        json!({"message": {"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": [{"text": "300"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    let port = hook_url.split(':').nth(2).unwrap_or_default();
    store
        .push_configs()
        .expect("a SQLite store keeps push configs")
        .put(
            TaskPushNotificationConfig {
                task_id: Some(id.clone()),
                id: Some("local".into()),
                url: format!("http://localhost:{port}"),
                ..Default::default()
            },
            10,
        )
        .await
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let l = strict
            .stored_statuses(&id)
            .await
            .unwrap()
            .expect("a durable outbox")
            .remove(0);
        if l.failed > 0 {
            break l;
        }
        assert!(Instant::now() < until, "never refused: {l:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let why = refused.last_error.unwrap_or_default();
    assert!(why.contains("localhost resolves to"), "{why}");
    assert!(why.contains("loopback address"), "{why}");
    assert_eq!(
        hook.count(&id, "TASK_STATE_COMPLETED", true),
        0,
        "nothing was sent"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Deliveries waiting for a turn ([`PushConfig::max_concurrent_deliveries`]) hold their
/// task's claim without letting it run out (the store renews it with the replica's lease),
/// so a waiting delivery is not taken over and sent twice by another replica, however long
/// the wait: here one turn, a webhook taking 250 ms, eight tasks, and a lease of 400 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_waiting_for_a_turn_keep_their_claim() {
    let schema = PostgresSchema::with_lease(2, Duration::from_millis(400)).await;
    let hits: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let recorded = hits.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: String| {
            let hits = recorded.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let task = &v["task"];
                if task["status"]["state"] == "TASK_STATE_COMPLETED" {
                    let id = task["id"].as_str().unwrap_or_default().to_string();
                    hits.lock().unwrap().push(id);
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let push_a = PushDispatcher::new(push_config().max_concurrent_deliveries(1));
    let push_b = PushDispatcher::new(push_config());
    let a = serve(replica(schema.stores[0].clone(), &push_a)).await;
    let _b = serve(replica(schema.stores[1].clone(), &push_b)).await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(nap_with_push(&a.base, 20, &hook_url).await);
    }
    let until = Instant::now() + Duration::from_secs(20);
    while hits.lock().unwrap().len() < ids.len() {
        assert!(Instant::now() < until, "not every COMPLETED was pushed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Long enough for B's sweeper to look several times.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let hits = hits.lock().unwrap().clone();
    for id in &ids {
        let n = hits.iter().filter(|h| *h == id).count();
        assert_eq!(n, 1, "{id} was pushed {n} times: {hits:?}");
    }
    drop(a);
    schema.drop().await;
}

/// A webhook answering 503 to the first `fails` deliveries of each body, then 204; it keeps
/// every body it was sent, raw.
async fn failing_first(fails: usize) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let bodies: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let recorded = bodies.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: String| {
            let bodies = recorded.clone();
            async move {
                let mut bodies = bodies.lock().unwrap();
                let seen = bodies.iter().filter(|b| **b == body).count();
                bodies.push(body);
                if seen < fails {
                    axum::http::StatusCode::SERVICE_UNAVAILABLE
                } else {
                    axum::http::StatusCode::NO_CONTENT
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, bodies)
}

/// Through a durable outbox (a SQLite file, then PostgreSQL), the final push is the task with
/// its answer, for a task that settled before its inline config was stored too (the late
/// config window), and every retry of it sends the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_outbox_pushes_the_task_and_retries_the_same_bytes() {
    let dir = std::env::temp_dir().join(format!("a2a-task-body-{}", a2a_tests::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = a2a_kit::store::SqliteTaskManager::open(dir.join("tasks.db"))
        .await
        .unwrap();
    let schema = PostgresSchema::new(1).await;
    let stores: Vec<(&str, std::sync::Arc<dyn TaskManager>)> = vec![
        ("sqlite", std::sync::Arc::new(sqlite)),
        ("postgres", std::sync::Arc::new(schema.stores[0].clone())),
    ];
    for (name, store) in stores {
        let (hook_url, bodies) = failing_first(2).await;
        let push = PushDispatcher::new(PushConfig::default().allow_private_networks().retry(
            RetryPolicy {
                max_attempts: 5,
                initial_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_millis(100),
                ..RetryPolicy::default()
            },
        ));
        let s = serve(
            AgentService::builder(Napper)
                .shared_task_manager(store)
                .push_dispatcher(&push),
        )
        .await;
        for ms in [0, 100] {
            let id = nap_with_push(&s.base, ms, &hook_url).await;
            let until = Instant::now() + Duration::from_secs(10);
            let mine = || -> Vec<String> {
                bodies
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|b| b.contains(&id))
                    .cloned()
                    .collect()
            };
            while mine().len() < 3 {
                assert!(Instant::now() < until, "{name}: {:?}", mine());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::timeout(Duration::from_secs(10), push.wait_idle())
                .await
                .unwrap();
            let sent = mine();
            assert_eq!(sent.len(), 3, "{name}: two refusals, then accepted once");
            assert!(sent.iter().all(|b| *b == sent[0]), "{name}: {sent:?}");
            let v: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
            assert_eq!(v["task"]["id"], id.as_str(), "{name}: {v}");
            assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
            assert_eq!(
                v["task"]["artifacts"][0]["parts"][0]["text"],
                format!("napped {ms}"),
                "{name}: {v}"
            );
            let lane = push
                .stored_statuses(&id)
                .await
                .unwrap()
                .expect("a durable outbox")
                .remove(0);
            assert_eq!((lane.delivered, lane.failed), (1, 0), "{name}: {lane:?}");
        }
        drop(s);
    }
    schema.drop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
