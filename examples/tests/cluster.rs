//! Three replica processes of the `workshop` example on random ports, sharing one fresh
//! PostgreSQL database: create on A, get on B, list on C; a question asked on A answered on C
//! (streamed there) and followed from B with `Last-Event-ID`; a cancel on B of a build running
//! on A; and `kill -9` of A with a build in flight, ended FAILED by a survivor within the
//! (shortened) lease. Three replicas of `push_worker`: a push delivery whose claimer is
//! killed while it retries is delivered once, by another.

mod support;

use std::time::{Duration, Instant};

use support::{Database, Example};

use a2a_tests::{read_sse, rpc, rpc_stream, state_of, wait_task};
use serde_json::{Value, json};

const WORKSHOP: &str = env!("CARGO_BIN_EXE_workshop");
const PUSH_WORKER: &str = env!("CARGO_BIN_EXE_push_worker");

fn start(store: &str) -> Example {
    Example::start(
        WORKSHOP,
        &["--bind", "127.0.0.1:0", "--store", store, "--lease", "2"],
    )
}

fn text(t: &str) -> Value {
    json!({"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": [{"text": t}]})
}

fn answer(task_id: &str, t: &str) -> Value {
    let mut m = text(t);
    m["taskId"] = json!(task_id);
    m
}

/// Start a build on `base` and return its id once it asks for the finish.
async fn ask_on(base: &str, thing: &str) -> String {
    let v = rpc(base, "SendMessage", json!({"message": text(thing)})).await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{v}");
    task["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_serve_one_agent() {
    let db = Database::fresh("workshop").await;
    let (a, b, c) = (start(&db.url), start(&db.url), start(&db.url));

    // Create on A, get on B, list on C.
    let stool = ask_on(&a.url, "a stool").await;
    let on_a = rpc(&a.url, "GetTask", json!({"id": stool})).await;
    let on_b = rpc(&b.url, "GetTask", json!({"id": stool})).await;
    assert_eq!(on_a["result"], on_b["result"]);
    let listed = rpc(&c.url, "ListTasks", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"][0]["id"],
        stool.as_str(),
        "{listed}"
    );

    // The question asked on A, answered on C with a stream; B follows with Last-Event-ID.
    let stream = rpc_stream(
        &c.url,
        "SendStreamingMessage",
        json!({"message": answer(&stool, "oak")}),
        None,
    )
    .await;
    let on_c = read_sse(stream, 200).await;
    assert_eq!(
        state_of(&on_c.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED"),
        "{on_c:?}"
    );
    let from = &on_c[1].id;
    let resumed = rpc_stream(&b.url, "SubscribeToTask", json!({"id": stool}), Some(from)).await;
    let on_b = read_sse(resumed, 200).await;
    let expected: Vec<(&str, &Value)> = on_c[2..]
        .iter()
        .map(|e| (e.id.as_str(), &e.data["result"]))
        .collect();
    let got: Vec<(&str, &Value)> = on_b
        .iter()
        .map(|e| (e.id.as_str(), &e.data["result"]))
        .collect();
    assert_eq!(got, expected);
    let done = rpc(&a.url, "GetTask", json!({"id": stool})).await;
    let log: String = done["result"]["artifacts"][0]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert!(log.contains("apply the oak finish"), "{done}");

    // A cancel on B of a build running on A.
    let chair = ask_on(&a.url, "a chair").await;
    let v = rpc(
        &a.url,
        "SendMessage",
        json!({"message": answer(&chair, "walnut"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert!(v.get("result").is_some(), "{v}");
    wait_task(&c.url, &chair, |t| {
        t["status"]["state"] == "TASK_STATE_WORKING"
    })
    .await;
    let canceled = rpc(&b.url, "CancelTask", json!({"id": chair})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    // A stops building: nothing more is written after the cancel.
    let seen = rpc(&a.url, "GetTask", json!({"id": chair})).await["result"].clone();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = rpc(&c.url, "GetTask", json!({"id": chair})).await["result"].clone();
    assert_eq!(later["status"]["state"], "TASK_STATE_CANCELED");
    assert_eq!(
        later["artifacts"], seen["artifacts"],
        "A kept building after the cancel"
    );

    // kill -9 of A with a build in flight: a survivor ends it FAILED once the lease runs out.
    let desk = ask_on(&a.url, "a desk").await;
    rpc(
        &a.url,
        "SendMessage",
        json!({"message": answer(&desk, "paint"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    wait_task(&b.url, &desk, |t| {
        t["status"]["state"] == "TASK_STATE_WORKING"
    })
    .await;
    drop(a);
    let killed = Instant::now();
    let ended = loop {
        let t = rpc(&c.url, "GetTask", json!({"id": desk})).await["result"].clone();
        if t["status"]["state"] != "TASK_STATE_WORKING" {
            break t;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "the build of the killed replica is still WORKING"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ended["status"]["state"], "TASK_STATE_FAILED", "{ended}");
    let reason = ended["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("stopped answering"), "{ended}");

    drop((b, c));
    db.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_whose_claimer_dies_is_delivered_once_by_another() {
    let db = Database::fresh("push").await;
    let hook = a2a_tests::RecordingWebhook::default();
    hook.set_failing(true);
    let hook_url = hook.serve().await;
    let replica = || {
        Example::start(
            PUSH_WORKER,
            &[
                "--bind",
                "127.0.0.1:0",
                "--store",
                &db.url,
                "--lease",
                "2",
                "--work-ms",
                "200",
                "--allow-private-webhooks",
            ],
        )
    };
    let (a, b, c) = (replica(), replica(), replica());

    let v = rpc(
        &a.url,
        "SendMessage",
        json!({"message": text("to be pushed"),
               "configuration": {"returnImmediately": true,
                                 "taskPushNotificationConfig": {"url": hook_url, "id": "hook"}}}),
    )
    .await;
    let id = v["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    // A runs the task, claims its COMPLETED and retries it against the failing webhook...
    let until = Instant::now() + Duration::from_secs(20);
    while hook.count(&id, "TASK_STATE_COMPLETED", false) == 0 {
        assert!(Instant::now() < until, "A never tried to deliver");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...and is killed. The webhook recovers; B or C takes over once A's claim ran out.
    drop(a);
    hook.set_failing(false);
    let killed = Instant::now();
    while hook.count(&id, "TASK_STATE_COMPLETED", true) == 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "no survivor delivered: {:?}",
            hook.hits()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Both survivors sweep several times meanwhile: still exactly one delivery.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        hook.count(&id, "TASK_STATE_COMPLETED", true),
        1,
        "{:?}",
        hook.hits()
    );
    let t = rpc(&b.url, "GetTask", json!({"id": id})).await;
    assert_eq!(
        t["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{t}"
    );

    drop((b, c));
    db.drop().await;
}
