//! The cluster's hand-off, with real processes on one PostgreSQL schema: a reply to a
//! question whose asking replica died is continued exactly once by a survivor, and a blocking
//! SendMessage carrying it answers; a dead replica's running tasks are all ended in one pass.
//!
//! Each replica is a `store_server` process; "dead" is `kill -9`, "frozen" is `kill -STOP`
//! (its database sessions stay open, so it looks alive until its lease runs out).

use std::time::{Duration, Instant};

use a2a_kit::store::{PostgresOptions, PostgresTaskManager};
use a2a_tests::*;
use futures::StreamExt;
use serde_json::{Value, json};

/// A fresh schema's name; [`drop_schema`] removes it.
fn fresh_schema() -> String {
    format!(
        "handoff_{}_{}",
        std::process::id(),
        uuid().replace('-', "_")
    )
}

async fn drop_schema(schema: &str) {
    if let Ok(store) = PostgresTaskManager::connect_with(
        &postgres_url(),
        PostgresOptions::default().schema(schema),
    )
    .await
    {
        let _ = store.drop_schema().await;
    }
}

/// A replica on `schema` with this lease.
fn replica(schema: &str, lease: Duration) -> StoreServer {
    let args = [
        "--store".to_string(),
        postgres_url(),
        "--schema".into(),
        schema.into(),
        "--lease".into(),
        lease.as_millis().to_string(),
    ];
    StoreServer::start(env!("CARGO_BIN_EXE_store_server"), &args)
}

fn result(r: &Value) -> &Value {
    assert!(r.get("error").is_none(), "JSON-RPC error: {r}");
    &r["result"]
}

fn state(t: &Value) -> &str {
    t["status"]["state"].as_str().unwrap_or("?")
}

/// Start the `ask` skill on `base`: the task waits for the user's name.
async fn ask(base: &str) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": to_skill("ask", "hi")}),
    )
    .await;
    let task = &result(&r)["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{r}");
    task["id"].as_str().unwrap().to_string()
}

/// A blocking SendMessage replying `name` to task `id`.
async fn reply(base: &str, id: &str, name: &str) -> Value {
    let mut m = user_text(name);
    m["taskId"] = json!(id);
    rpc(base, "SendMessage", json!({"message": m})).await
}

/// The task answered `Hello, NAME` once: COMPLETED, one artifact, one question asked.
fn answered_once(task: &Value, name: &str) {
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{task}");
    let artifacts = task["artifacts"].as_array().expect("artifacts");
    assert_eq!(artifacts.len(), 1, "one answer: {task}");
    assert_eq!(
        artifacts[0]["parts"][0]["text"],
        format!("Hello, {name}"),
        "{task}"
    );
    assert_eq!(questions_asked(task), 1, "{task}");
}

/// The task as `base` reads it.
async fn get_task(base: &str, id: &str) -> Value {
    result(&rpc(base, "GetTask", json!({"id": id})).await).clone()
}

/// kill -9 of the asker, then the reply reaches the survivor while the asker's lease (30 s)
/// still runs: the survivor knows the asker is dead (its session ended), takes the question
/// over and continues it there; the blocking SendMessage answers with the finished task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_to_a_killed_askers_question_is_continued_by_the_survivor() {
    let schema = fresh_schema();
    let lease = Duration::from_secs(30);
    let a = replica(&schema, lease);
    let b = replica(&schema, lease);
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(ask(&a.base).await);
    }
    a.kill9();
    let killed = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let name = format!("Ada {i}");
        let r = reply(&b.base, id, &name).await;
        answered_once(&result(&r)["task"], &name);
    }
    assert!(
        killed.elapsed() < lease / 2,
        "the replies waited for the asker's lease: {:?}",
        killed.elapsed()
    );
    // Nothing continues them a second time later.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for (i, id) in ids.iter().enumerate() {
        answered_once(&get_task(&b.base, id).await, &format!("Ada {i}"));
    }
    drop(b);
    drop_schema(&schema).await;
}

/// The window between the hand-over and the asker's death: the asker is frozen (it looks
/// alive), so the reply is handed to it and the blocking SendMessage on the survivor waits;
/// then the asker is killed, and the survivor takes the handed reply over and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_handed_to_an_asker_that_then_dies_is_continued_once() {
    let schema = fresh_schema();
    let lease = Duration::from_secs(30);
    let a = replica(&schema, lease);
    let b = replica(&schema, lease);
    let id = ask(&a.base).await;
    a.pause();
    let pending = tokio::spawn({
        let (base, id) = (b.base.clone(), id.clone());
        async move { reply(&base, &id, "Grace").await }
    });
    // The reply is recorded and handed over: the task still waits, on the frozen asker.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        !pending.is_finished(),
        "the frozen asker cannot have answered"
    );
    let t = get_task(&b.base, &id).await;
    assert_eq!(state(&t), "TASK_STATE_INPUT_REQUIRED", "{t}");
    a.kill9();
    let r = tokio::time::timeout(Duration::from_secs(20), pending)
        .await
        .expect("the blocking SendMessage answers once the asker is known dead")
        .expect("join");
    answered_once(&result(&r)["task"], "Grace");
    drop(b);
    drop_schema(&schema).await;
}

/// Without knowing the asker dead (it is frozen, its session open), its lease decides: once
/// it runs out, the survivor takes the handed reply over. The asker, thawed, finds the reply
/// taken and does not continue it a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_reply_is_taken_over_when_the_askers_lease_runs_out() {
    let schema = fresh_schema();
    let lease = Duration::from_secs(2);
    let a = replica(&schema, lease);
    let b = replica(&schema, lease);
    let id = ask(&a.base).await;
    a.pause();
    let r = tokio::time::timeout(Duration::from_secs(25), reply(&b.base, &id, "Hopper"))
        .await
        .expect("the survivor continues the reply once the asker's lease ran out");
    answered_once(&result(&r)["task"], "Hopper");
    a.resume();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    answered_once(&get_task(&b.base, &id).await, "Hopper");
    answered_once(&get_task(&a.base, &id).await, "Hopper");
    drop(a);
    drop(b);
    drop_schema(&schema).await;
}

/// A dead replica's 1,000 running tasks are all ended FAILED in one pass of a survivor (not a
/// fixed number per round), long before the lease runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_thousand_tasks_end_in_one_pass() {
    let schema = fresh_schema();
    let lease = Duration::from_secs(30);
    let a = replica(&schema, lease);
    let b = replica(&schema, lease);
    let base = a.base.clone();
    let started: Vec<String> = futures::stream::iter(0..1000)
        .map(|_| {
            let base = base.clone();
            async move {
                let r = rpc(
                    &base,
                    "SendMessage",
                    json!({"message": to_skill("slow", "600000"),
                           "configuration": {"returnImmediately": true}}),
                )
                .await;
                result(&r)["task"]["id"].as_str().unwrap().to_string()
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert_eq!(started.len(), 1000);
    // Every task runs on A before it dies.
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&b.base, "TASK_STATE_WORKING").await < 1000 {
        assert!(Instant::now() < deadline, "the tasks never all ran");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    a.kill9();
    let killed = Instant::now();
    while count(&b.base, "TASK_STATE_FAILED").await < 1000 {
        assert!(
            killed.elapsed() < lease / 2,
            "the dead replica's tasks are still running {:?} after the kill",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(count(&b.base, "TASK_STATE_WORKING").await, 0);
    // One pass: every task's FAILED status carries (nearly) the same time, not a spread of
    // rounds.
    let mut times = Vec::new();
    let mut token = String::new();
    loop {
        let page = rpc(
            &b.base,
            "ListTasks",
            json!({"status": "TASK_STATE_FAILED", "pageSize": 100, "pageToken": token,
                   "historyLength": 0}),
        )
        .await;
        let page = result(&page);
        for t in page["tasks"].as_array().unwrap() {
            let ts = t["status"]["timestamp"].as_str().unwrap();
            let message = t["status"]["message"]["parts"][0]["text"].as_str();
            assert!(
                message.is_some_and(|m| m.contains("stopped answering")),
                "{t}"
            );
            let ts: a2a_kit::protocol::Timestamp =
                serde_json::from_value(json!(ts)).expect("an RFC 3339 timestamp");
            times.push(ts.0.timestamp_millis());
        }
        token = page["nextPageToken"].as_str().unwrap_or("").to_string();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(times.len(), 1000);
    let spread = times.iter().max().unwrap() - times.iter().min().unwrap();
    assert!(spread < 2_000, "ended over {spread} ms: more than one pass");
    drop(b);
    drop_schema(&schema).await;
}

/// How many tasks are in `state`, as ListTasks on `base` counts them.
async fn count(base: &str, state: &str) -> u64 {
    let r = rpc(
        base,
        "ListTasks",
        json!({"status": state, "pageSize": 1, "historyLength": 0}),
    )
    .await;
    result(&r)["totalSize"].as_u64().unwrap_or(0)
}
