//! Crash recovery with real processes: a server on a SQLite file (or a PostgreSQL schema) is
//! killed with SIGKILL while tasks run, then restarted on the same store.
//!
//! After the restart: every acknowledged task is there; the tasks that were running are
//! FAILED with a "server restarted" status message and none is left WORKING; push configs and
//! event logs are intact; `Last-Event-ID` replay continues the logs written before the crash;
//! a push delivery being retried at the kill is made after the restart, once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use a2a_tests::*;
use serde_json::{Value, json};

/// A `store_server` process.
struct Server;

impl Server {
    /// Start the server on `db` and wait until it prints its address.
    fn start(db: &Path) -> StoreServer {
        Self::start_with(&["--store".into(), format!("sqlite:{}", db.display())])
    }

    /// Start the server with these store arguments.
    fn start_with(store: &[String]) -> StoreServer {
        StoreServer::start(env!("CARGO_BIN_EXE_store_server"), store)
    }
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> TempDir {
    let dir = std::env::temp_dir().join(format!("a2a-crash-{}-{}", std::process::id(), uuid()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

fn result(r: &Value) -> &Value {
    assert!(r.get("error").is_none(), "JSON-RPC error: {r}");
    &r["result"]
}

fn state(t: &Value) -> &str {
    t["status"]["state"].as_str().unwrap_or("?")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_restart_on_the_same_file() {
    let dir = temp_dir();
    let db = dir.0.join("tasks.db");
    let server = Server::start(&db);
    let base = server.base.clone();

    // 1. A completed task with a push config registered in the same request.
    let hook = json!({"id": "cfg-1", "url": "https://example.com/hook", "token": "tok-1"});
    let r = rpc(
        &base,
        "SendMessage",
        json!({
            "message": to_skill("echo", "hello"),
            "configuration": {"taskPushNotificationConfig": hook},
        }),
    )
    .await;
    let done = result(&r)["task"].clone();
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{r}");
    let done_id = done["id"].as_str().unwrap().to_string();
    // And one with status messages in its history.
    let r = rpc(
        &base,
        "SendMessage",
        json!({"message": to_skill("status", "go")}),
    )
    .await;
    let narrated_id = result(&r)["task"]["id"].as_str().unwrap().to_string();
    let narrated_before = result(&rpc(&base, "GetTask", json!({"id": narrated_id})).await).clone();
    assert_eq!(state(&narrated_before), "TASK_STATE_COMPLETED");
    let done_before = result(&rpc(&base, "GetTask", json!({"id": done_id})).await).clone();

    // 2. A long task, streamed: we see events 1 (the task) and 2 (WORKING) before the crash.
    let resp = rpc_stream(
        &base,
        "SendStreamingMessage",
        json!({"message": to_skill("slow", "600000")}),
        None,
    )
    .await;
    let seen = read_sse(resp, 2).await;
    assert_eq!(
        seen.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["1", "2"]
    );
    assert_eq!(
        state_of(&seen[1].data).as_deref(),
        Some("TASK_STATE_WORKING")
    );
    let slow_id = seen[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let cfg = json!({"taskId": slow_id, "id": "cfg-slow", "url": "https://example.com/slow"});
    result(&rpc(&base, "CreateTaskPushNotificationConfig", cfg).await);

    // 3. More tasks in flight, each acknowledged (returnImmediately) before the crash.
    let mut in_flight = Vec::new();
    let sends: Vec<_> = (0..10)
        .map(|_| {
            let base = base.clone();
            tokio::spawn(async move {
                rpc(
                    &base,
                    "SendMessage",
                    json!({
                        "message": to_skill("slow", "600000"),
                        "configuration": {"returnImmediately": true},
                    }),
                )
                .await
            })
        })
        .collect();
    for s in sends {
        let r = s.await.expect("send");
        in_flight.push(result(&r)["task"]["id"].as_str().unwrap().to_string());
    }
    for id in &in_flight {
        wait_task(&base, id, |t| state(t) == "TASK_STATE_WORKING").await;
    }

    // 4. kill -9, restart on the same file.
    server.kill9();
    let server = Server::start(&db);
    let base = server.base.clone();

    // Every acknowledged task is there.
    let listed = result(&rpc(&base, "ListTasks", json!({"pageSize": 100})).await).clone();
    assert_eq!(listed["totalSize"], 13, "{listed}");
    // Completed tasks are unchanged, history (with status messages) and artifacts included.
    assert_eq!(
        result(&rpc(&base, "GetTask", json!({"id": done_id})).await),
        &done_before
    );
    assert_eq!(
        result(&rpc(&base, "GetTask", json!({"id": narrated_id})).await),
        &narrated_before
    );

    // The running ones ended FAILED, saying why; none is left WORKING or SUBMITTED.
    for id in in_flight.iter().chain([&slow_id]) {
        let t = result(&rpc(&base, "GetTask", json!({"id": id})).await).clone();
        assert_eq!(state(&t), "TASK_STATE_FAILED", "{t}");
        let why = t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(why.contains("server restarted"), "status message: {t}");
        let last = t["history"]
            .as_array()
            .and_then(|h| h.last())
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            last, t["status"]["message"],
            "the status message is in the history too"
        );
    }
    for s in ["TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"] {
        let r = rpc(&base, "ListTasks", json!({"status": s})).await;
        assert_eq!(result(&r)["totalSize"], 0, "no task stays {s}");
    }

    // Push configs are intact.
    let got = result(
        &rpc(
            &base,
            "GetTaskPushNotificationConfig",
            json!({"taskId": done_id, "id": "cfg-1"}),
        )
        .await,
    )
    .clone();
    assert_eq!(got["url"], "https://example.com/hook");
    assert!(
        got.get("token").is_none(),
        "credentials are write-only: {got}"
    );
    let list = result(
        &rpc(
            &base,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": slow_id}),
        )
        .await,
    )
    .clone();
    assert_eq!(list["configs"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list["configs"][0]["id"], "cfg-slow");

    // Last-Event-ID replay across the restart: the stream we had read up to event 2 resumes
    // with event 3, the FAILED status written at start-up, and closes.
    let resp = rpc_stream(&base, "SubscribeToTask", json!({"id": slow_id}), Some("2")).await;
    let rest = read_sse(resp, 100).await;
    assert_eq!(
        rest.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["3"],
        "{rest:?}"
    );
    assert_eq!(kind(&rest[0].data), "statusUpdate");
    assert_eq!(
        state_of(&rest[0].data).as_deref(),
        Some("TASK_STATE_FAILED")
    );
    let text = rest[0].data["result"]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("server restarted"), "{text}");

    // The completed task's log replays whole from before the crash.
    let resp = rpc_stream(&base, "SubscribeToTask", json!({"id": done_id}), Some("1")).await;
    let log = read_sse(resp, 100).await;
    let ids: Vec<u64> = log
        .iter()
        .map(|e| e.id.parse().expect("numeric id"))
        .collect();
    assert_eq!(
        ids,
        (2..2 + ids.len() as u64).collect::<Vec<_>>(),
        "contiguous from 2"
    );
    assert_eq!(
        state_of(&log.last().expect("events").data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    assert!(
        log.iter().any(|e| kind(&e.data) == "artifactUpdate"),
        "the artifact event survived"
    );

    // A second crash and restart finds the same state: recovery wrote it durably, once.
    let before = result(&rpc(&base, "GetTask", json!({"id": slow_id})).await).clone();
    server.kill9();
    let server = Server::start(&db);
    let after = result(&rpc(&server.base, "GetTask", json!({"id": slow_id})).await).clone();
    assert_eq!(before, after, "no second recovery event");
    let resp = rpc_stream(
        &server.base,
        "SubscribeToTask",
        json!({"id": slow_id}),
        Some("3"),
    )
    .await;
    assert!(
        read_sse(resp, 100).await.is_empty(),
        "caught up: nothing after event 3"
    );
    drop(server);

    // The webhook's token survived both crashes (the API never reads it back: the store).
    use a2a_kit::store::TaskManager;
    let store = a2a_kit::store::SqliteTaskManager::open(&db)
        .await
        .expect("the file is free once the server is gone");
    let config = store
        .push_configs()
        .expect("a SQLite store keeps push configs")
        .get(&done_id, "cfg-1")
        .await
        .expect("readable")
        .expect("kept");
    assert_eq!(config.token.as_deref(), Some("tok-1"));
}

/// One SQLite file serves one process: a second process is refused at open with a message
/// that says why (its start-up recovery would otherwise fail the first one's running tasks),
/// and the file is free again once the first process is gone, even killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_the_file_is_refused() {
    let dir = temp_dir();
    let db = dir.0.join("tasks.db");
    let first = Server::start(&db);

    // Another process: this test's.
    let err = a2a_kit::store::SqliteTaskManager::open(&db)
        .await
        .expect_err("the file is in use");
    let text = err.to_string();
    assert!(
        text.contains("in use by another process") && text.contains("tasks.db"),
        "{text}"
    );

    // Another server: it exits with the same reason instead of recovering the first's tasks.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_store_server"))
        .arg("--store")
        .arg(format!("sqlite:{}", db.display()))
        .args(["--bind", "127.0.0.1:0"])
        .output()
        .expect("run store_server");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("in use by another process"), "{stderr}");
    // The first server is unharmed.
    let r = rpc(&first.base, "ListTasks", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");

    // Killed, it leaves the file free.
    first.kill9();
    let second = Server::start(&db);
    let r = rpc(&second.base, "ListTasks", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
}

/// Start `skill` with `text`, which asks a question; the task's id.
async fn asked(base: &str, skill: &str, text: &str) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": to_skill(skill, text)}),
    )
    .await;
    let task = &result(&r)["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{r}");
    task["id"].as_str().unwrap().to_string()
}

/// SendMessage params replying `text` to task `id`.
fn reply(id: &str, text: &str) -> Value {
    let mut m = user_text(text);
    m["taskId"] = json!(id);
    json!({"message": m})
}

/// A graceful stop leaves a task waiting for the user's reply as it is, with a durable store:
/// after the restart it is still INPUT_REQUIRED, not FAILED, and the reply continues it (its
/// skill runs again, and its `ask` returns the reply).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_survives_a_graceful_stop() {
    let dir = temp_dir();
    let db = dir.0.join("tasks.db");
    let server = Server::start(&db);
    let id = asked(&server.base, "ask", "x").await;
    let status = server.stop();
    assert!(status.success(), "a graceful stop exits 0: {status:?}");

    let server = Server::start(&db);
    let t = rpc(&server.base, "GetTask", json!({"id": id})).await;
    assert_eq!(state(result(&t)), "TASK_STATE_INPUT_REQUIRED", "{t}");
    let r = rpc(&server.base, "SendMessage", reply(&id, "the answer")).await;
    let task = &result(&r)["task"];
    // The reply answers the question the skill asked (its `ask` returns it), not a new input.
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "Hello, the answer",
        "{r}"
    );
    let users = task["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .count();
    assert_eq!(users, 2, "the reply joined the task's history: {r}");
}

/// A process killed while its skill waits in `ctx.ask` (the second of two questions): after
/// the restart, the reply reaches the skill as the answer to that question. The skill runs
/// again from the task's first message, its first `ask` returns the reply recorded before the
/// kill, and the second the new one; nothing is asked twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_survives_a_kill_9() {
    let dir = temp_dir();
    let db = dir.0.join("tasks.db");
    let server = Server::start(&db);
    let id = asked(&server.base, "interview", "walnut table").await;
    let r = rpc(&server.base, "SendMessage", reply(&id, "Ann")).await;
    let task = &result(&r)["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{r}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], "Where do you live, Ann?",
        "{r}"
    );
    server.kill9();

    let server = Server::start(&db);
    let r = rpc(&server.base, "SendMessage", reply(&id, "Oslo")).await;
    let task = &result(&r)["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "walnut table: Ann from Oslo",
        "{r}"
    );
    assert_eq!(
        questions_asked(task),
        2,
        "each question was asked once: {r}"
    );
}

/// The same on PostgreSQL, with one replica: after `kill -9` and a restart on the same schema,
/// every acknowledged task is there, completed ones unchanged, and the ones that were running
/// end FAILED once the dead process's lease runs out (the restarted process is a new holder:
/// leases, not a start-up sweep, end a shared store's orphans). None is left WORKING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_restart_on_the_same_postgres_schema() {
    let schema = PostgresSchema::new(1).await;
    let args: Vec<String> = ["--store", &postgres_url(), "--schema", schema.name()]
        .iter()
        .map(|s| s.to_string())
        .chain(["--lease".to_string(), "1000".to_string()])
        .collect();
    let server = Server::start_with(&args);
    let base = server.base.clone();
    let r = rpc(
        &base,
        "SendMessage",
        json!({"message": to_skill("echo", "kept")}),
    )
    .await;
    let done = result(&r)["task"].clone();
    let done_id = done["id"].as_str().unwrap().to_string();
    let mut in_flight = Vec::new();
    for _ in 0..5 {
        let r = rpc(
            &base,
            "SendMessage",
            json!({"message": to_skill("slow", "600000"), "configuration": {"returnImmediately": true}}),
        )
        .await;
        in_flight.push(result(&r)["task"]["id"].as_str().unwrap().to_string());
    }
    for id in &in_flight {
        wait_task(&base, id, |t| state(t) == "TASK_STATE_WORKING").await;
    }
    let done_before = result(&rpc(&base, "GetTask", json!({"id": done_id})).await).clone();

    server.kill9();
    let server = Server::start_with(&args);
    let base = server.base.clone();
    let listed = result(&rpc(&base, "ListTasks", json!({"pageSize": 100})).await).clone();
    assert_eq!(listed["totalSize"], 6, "{listed}");
    assert_eq!(
        result(&rpc(&base, "GetTask", json!({"id": done_id})).await),
        &done_before
    );
    for id in &in_flight {
        let t = wait_task(&base, id, |t| state(t) != "TASK_STATE_WORKING").await;
        assert_eq!(state(&t), "TASK_STATE_FAILED", "{t}");
        let reason = t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains("stopped answering"), "{t}");
    }
    drop(server);
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_being_retried_at_a_kill_9_is_delivered_after_the_restart() {
    let dir = temp_dir();
    let db = dir.0.join("tasks.db");
    let store = [
        "--store".to_string(),
        format!("sqlite:{}", db.display()),
        "--push".into(),
    ];
    let hook = RecordingWebhook::default();
    hook.set_failing(true);
    let url = hook.serve().await;
    let server = Server::start_with(&store);
    let r = rpc(
        &server.base,
        "SendMessage",
        json!({
            "message": to_skill("echo", "hello"),
            "configuration": {"taskPushNotificationConfig": {"id": "cfg", "url": url}},
        }),
    )
    .await;
    let id = result(&r)["task"]["id"].as_str().unwrap().to_string();
    // The COMPLETED is being retried against the failing webhook when the process dies.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while hook.count(&id, "TASK_STATE_COMPLETED", false) < 2 {
        assert!(std::time::Instant::now() < until, "no delivery was tried");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill9();
    hook.set_failing(false);
    let restarted = Server::start_with(&store);
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while hook.count(&id, "TASK_STATE_COMPLETED", true) == 0 {
        assert!(
            std::time::Instant::now() < until,
            "the pending delivery was not made after the restart: {:?}",
            hook.hits()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Once accepted, never again: not by this process, not by the next one.
    tokio::time::sleep(Duration::from_secs(1)).await;
    restarted.stop();
    let again = Server::start_with(&store);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        hook.count(&id, "TASK_STATE_COMPLETED", true),
        1,
        "{:?}",
        hook.hits()
    );
    drop(again);
}
