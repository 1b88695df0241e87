//! Cluster mode: two replicas of one agent on one PostgreSQL schema, each its own process's
//! view (own pool, own listener), serving HTTP on its own port. Every operation answers the
//! same on both; a stream started on one is followed from the other with identical events;
//! `Last-Event-ID` resumes on either; a cancel on one stops the skill running on the other.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_tests::{PostgresSchema, TestServer, read_sse, rpc, rpc_stream, serve};
use futures::Stream;
use serde_json::{Value, json};

/// A skill that waits to be canceled (and says when it saw it), and one that streams slowly.
#[derive(Default)]
struct Replica {
    name: &'static str,
    saw_cancel: Arc<AtomicBool>,
}

/// One replica of the cluster test agent.
#[a2a_agent(name = "Cluster Agent", push_notifications = true)]
impl Replica {
    /// Wait until canceled.
    #[skill]
    async fn wait(&self, ctx: TaskContext) -> Result<String, SkillError> {
        ctx.cancelled().await;
        self.saw_cancel.store(true, Ordering::SeqCst);
        Err(SkillError::Canceled)
    }

    /// Stream N chunks, one every 100 ms.
    #[skill]
    #[streaming]
    fn tick(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n: usize = n.trim().parse().unwrap_or(5);
        a2a_kit::stream! {
            for i in 0..n {
                tokio::time::sleep(Duration::from_millis(100)).await;
                yield format!("t{i} ");
            }
        }
    }

    /// Ask which finish, then say which replica asked.
    #[skill]
    async fn finish(&self, ctx: TaskContext) -> Result<String, SkillError> {
        let Text(finish) = ctx.ask(format!("[{}] Which finish?", self.name)).await?;
        Ok(format!("{finish}, asked on {}", self.name))
    }

    /// Ask for a second message the stateless way (ending INPUT_REQUIRED), then count them.
    #[skill]
    async fn twice(&self, History(history): History) -> Outcome {
        let said = history
            .iter()
            .filter(|m| m.role == a2a_kit::protocol::Role::User)
            .count();
        if said < 2 {
            Outcome::input_required(format!("[{}] once more, please", self.name))
        } else {
            Outcome::completed(format!("{said} messages, continued on {}", self.name))
        }
    }

    /// Sleep N milliseconds, then say so.
    #[skill]
    async fn nap(&self, Text(ms): Text) -> String {
        let ms: u64 = ms.trim().parse().unwrap_or(100);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("napped {ms}")
    }

    /// Echo.
    #[skill(default)]
    async fn echo(&self, Text(t): Text) -> String {
        t
    }
}

struct Cluster {
    schema: PostgresSchema,
    a: TestServer,
    b: TestServer,
    a_saw_cancel: Arc<AtomicBool>,
}

async fn cluster() -> Cluster {
    cluster_with_lease(Duration::from_secs(30)).await
}

async fn cluster_with_lease(lease: Duration) -> Cluster {
    let schema = PostgresSchema::with_lease(2, lease).await;
    let a_agent = Replica {
        name: "a",
        ..Default::default()
    };
    let a_saw_cancel = a_agent.saw_cancel.clone();
    let a = serve(AgentService::builder(a_agent).task_manager(schema.stores[0].clone())).await;
    let b_agent = Replica {
        name: "b",
        ..Default::default()
    };
    let b = serve(AgentService::builder(b_agent).task_manager(schema.stores[1].clone())).await;
    Cluster {
        schema,
        a,
        b,
        a_saw_cancel,
    }
}

fn message(skill: &str, text: &str) -> Value {
    json!({"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": [{"text": text}],
        "metadata": {"skillId": skill}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replica_answers_the_same() {
    let c = cluster().await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("echo", "hi")}),
    )
    .await;
    let id = v["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    let on_a = rpc(&c.a.base, "GetTask", json!({"id": id})).await;
    let on_b = rpc(&c.b.base, "GetTask", json!({"id": id})).await;
    assert_eq!(on_a["result"], on_b["result"]);
    assert_eq!(on_b["result"]["status"]["state"], "TASK_STATE_COMPLETED");

    let list_a = rpc(&c.a.base, "ListTasks", json!({})).await;
    let list_b = rpc(&c.b.base, "ListTasks", json!({})).await;
    assert_eq!(list_a["result"], list_b["result"]);
    assert_eq!(list_b["result"]["totalSize"], 1);

    let config = json!({"taskId": id, "id": "hook", "url": "https://example.com/hook"});
    let created = rpc(&c.a.base, "CreateTaskPushNotificationConfig", config).await;
    assert!(created.get("result").is_some(), "{created}");
    let got = rpc(
        &c.b.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "hook"}),
    )
    .await;
    assert_eq!(got["result"], created["result"]);
    let deleted = rpc(
        &c.b.base,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": id, "id": "hook"}),
    )
    .await;
    assert!(deleted.get("error").is_none(), "{deleted}");
    let listed = rpc(
        &c.a.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    // None left (an empty list is left out of the JSON, as ProtoJSON does).
    assert!(
        listed["result"]["configs"]
            .as_array()
            .is_none_or(|c| c.is_empty()),
        "{listed}"
    );
    c.schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_replica_is_followed_from_the_other() {
    let c = cluster().await;
    let send = rpc_stream(
        &c.a.base,
        "SendStreamingMessage",
        json!({"message": message("tick", "8")}),
        None,
    )
    .await;
    let on_a = tokio::spawn(read_sse(send, 100));
    // Join from B once the task exists and has started writing.
    let id = loop {
        let list = rpc(&c.b.base, "ListTasks", json!({"includeArtifacts": true})).await;
        let task = &list["result"]["tasks"][0];
        if task["artifacts"][0]["parts"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
        {
            break task["id"].as_str().unwrap().to_string();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let sub = rpc_stream(&c.b.base, "SubscribeToTask", json!({"id": id}), None).await;
    let on_b = read_sse(sub, 100).await;
    let on_a = on_a.await.unwrap();

    // B's stream: the task as it was, then every later event exactly as A's stream had it.
    assert_eq!(a2a_tests::kind(&on_b[0].data), "task");
    let joined_at: u64 = on_b[0].id.parse().unwrap();
    let tail_a: Vec<(&str, &Value)> = on_a
        .iter()
        .filter(|e| e.id.parse::<u64>().unwrap() > joined_at)
        .map(|e| (e.id.as_str(), &e.data["result"]))
        .collect();
    let tail_b: Vec<(&str, &Value)> = on_b[1..]
        .iter()
        .map(|e| (e.id.as_str(), &e.data["result"]))
        .collect();
    assert!(!tail_b.is_empty(), "B saw no live event: {on_b:?}");
    assert_eq!(tail_a, tail_b);
    assert_eq!(
        a2a_tests::state_of(&on_b.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );

    // After the end, Last-Event-ID resumes on either replica with no gap and no duplicate.
    let from = &on_a[2].id;
    for base in [&c.a.base, &c.b.base] {
        let resumed = rpc_stream(base, "SubscribeToTask", json!({"id": id}), Some(from)).await;
        let resumed = read_sse(resumed, 100).await;
        let expected: Vec<&str> = on_a[3..].iter().map(|e| e.id.as_str()).collect();
        let got: Vec<&str> = resumed.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(got, expected, "resumed on {base}");
    }
    c.schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_one_replica_stops_the_skill_on_the_other() {
    let c = cluster().await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("wait", "x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    // The skill runs on A (WORKING) before B cancels: a cancel that lands first ends the task
    // before any skill starts, and there is then no token to see fire.
    let started = Instant::now();
    loop {
        let t = rpc(&c.a.base, "GetTask", json!({"id": id})).await;
        if t["result"]["status"]["state"] == "TASK_STATE_WORKING" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never WORKING: {t}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A follower on A, to see the end arrive there too.
    let follow = rpc_stream(&c.a.base, "SubscribeToTask", json!({"id": id}), None).await;
    let follow = tokio::spawn(read_sse(follow, 100));

    let canceled = rpc(&c.b.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let asked = Instant::now();
    while !c.a_saw_cancel.load(Ordering::SeqCst) {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "replica A's skill never saw the cancel made on B"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let events = follow.await.unwrap();
    assert_eq!(
        a2a_tests::state_of(&events.last().unwrap().data).as_deref(),
        Some("TASK_STATE_CANCELED")
    );
    // The skill's own ending (it returned Canceled) never overwrote the cancel, and a
    // second cancel on A is refused as for any finished task.
    let on_a = rpc(&c.a.base, "GetTask", json!({"id": id})).await;
    assert_eq!(on_a["result"]["status"]["state"], "TASK_STATE_CANCELED");
    let again = rpc(&c.a.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002, "{again}");
    c.schema.drop().await;
}

/// A replica killed (`kill -9`) mid-task: a survivor notices its lease ran out and ends the
/// task FAILED with a reason that says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_task_ends_failed_on_a_survivor() {
    use std::io::{BufRead, BufReader};
    let schema = PostgresSchema::with_lease(1, Duration::from_millis(1000)).await;
    let b = serve(AgentService::builder(Replica::default()).task_manager(schema.stores[0].clone()))
        .await;
    let mut a = std::process::Command::new(env!("CARGO_BIN_EXE_store_server"))
        .args([
            "--store",
            &a2a_tests::postgres_url(),
            "--schema",
            schema.name(),
        ])
        .args(["--lease", "1000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start replica A");
    let mut line = String::new();
    BufReader::new(a.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("replica A's address");
    let a_base = line
        .trim()
        .strip_prefix("listening on ")
        .expect("an address")
        .to_string();

    let v = rpc(
        &a_base,
        "SendMessage",
        json!({"message": message("slow", "60000"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    a2a_tests::wait_task(&b.base, &id, |t| {
        t["status"]["state"] == "TASK_STATE_WORKING"
    })
    .await;
    a.kill().expect("kill -9 replica A");
    let _ = a.wait();

    let died = Instant::now();
    let task = loop {
        let t = rpc(&b.base, "GetTask", json!({"id": id})).await["result"].clone();
        if t["status"]["state"] != "TASK_STATE_WORKING" {
            break t;
        }
        assert!(
            died.elapsed() < Duration::from_secs(20),
            "the dead replica's task is still WORKING"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let reason = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("lease ran out"), "{task}");
    schema.drop().await;
}

/// A live replica keeps its tasks however long they run: its lease is renewed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_replica_keeps_its_tasks_past_the_lease() {
    let c = cluster_with_lease(Duration::from_millis(300)).await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("nap", "1500")}),
    )
    .await;
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
    c.schema.drop().await;
}

fn reply(task_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "taskId": task_id,
        "parts": [{"text": text}]}})
}

/// A question asked on A and answered on B resumes the `ask` waiting on A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_on_one_replica_resumes_the_question_on_the_other() {
    let c = cluster().await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("finish", "start")}),
    )
    .await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{v}");
    let id = task["id"].as_str().unwrap().to_string();

    let answered = rpc(&c.b.base, "SendMessage", reply(&id, "oak")).await;
    let task = &answered["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "oak, asked on a",
        "{answered}"
    );
    // One answer in the history, once.
    let history = task["history"].as_array().unwrap();
    let oaks = history
        .iter()
        .filter(|m| m["parts"][0]["text"] == "oak")
        .count();
    assert_eq!(oaks, 1, "{answered}");
    c.schema.drop().await;
}

/// When the asking replica lets go (it stops), the answer continues the task where it
/// arrives: the skill runs again there from the task's first message, and its `ask` returns
/// the answer (recorded, not asked again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_continues_on_its_replica_once_the_asker_is_gone() {
    let c = cluster().await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("finish", "start")}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    // A stops: the question stays (durable store) and A lets go of it.
    c.a.service.shutdown(Duration::ZERO).await;
    let answered = rpc(&c.b.base, "SendMessage", reply(&id, "walnut")).await;
    let task = &answered["result"]["task"];
    // The skill ran again on B, and its question got the answer given to A's.
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "walnut, asked on b",
        "{answered}"
    );
    assert_eq!(
        a2a_tests::questions_asked(task),
        1,
        "asked once: {answered}"
    );
    c.schema.drop().await;
}

/// A skill that asked by ending INPUT_REQUIRED holds nothing: the answer continues the task on
/// the replica it reaches (here B), at once, the stateless way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_to_a_stateless_question_continues_where_it_arrives() {
    let c = cluster().await;
    let v = rpc(
        &c.a.base,
        "SendMessage",
        json!({"message": message("twice", "one")}),
    )
    .await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{v}");
    let id = task["id"].as_str().unwrap().to_string();
    let answered = tokio::time::timeout(
        Duration::from_secs(20),
        rpc(&c.b.base, "SendMessage", reply(&id, "two")),
    )
    .await
    .expect("the answer was not left waiting for a replica that holds nothing");
    let task = &answered["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "2 messages, continued on b",
        "{answered}"
    );
    c.schema.drop().await;
}

/// Every write another replica commits is announced, creations (written several at a time
/// by the group-commit writer) as well as appends, and a refused creation is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creations_and_appends_are_announced_to_the_other_replica() {
    use a2a_kit::protocol::{Message, Task, TaskState, TaskStatus};
    use a2a_kit::store::{StoreChange, TaskManager};
    use futures::StreamExt;
    let schema = PostgresSchema::new(2).await;
    let (a, b) = (&schema.stores[0], &schema.stores[1]);
    let mut changes = b
        .cluster()
        .expect("a shared store has the cluster capability and its change feed")
        .changes();
    // The feed listens once its first item is asked for: give it a moment.
    let _ = tokio::time::timeout(Duration::from_millis(300), changes.next()).await;
    let task = |id: &str| Task {
        id: id.into(),
        context_id: "ctx".into(),
        status: TaskStatus::new(TaskState::Working),
        artifacts: vec![],
        history: vec![Message::user_text("hi")],
        metadata: None,
    };
    let writes = (0..8).map(|i| a.create_task(task(&format!("n{i}")), None, None));
    for r in futures::future::join_all(writes).await {
        r.expect("created");
    }
    assert!(
        a.create_task(task("n0"), None, None).await.is_err(),
        "n0 exists"
    );
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 8 {
        match tokio::time::timeout(Duration::from_secs(5), changes.next()).await {
            Ok(Some(StoreChange::Appended {
                task_id,
                seq,
                state,
            })) => {
                assert_eq!((seq, state), (1, Some(TaskState::Working)), "{task_id}");
                assert!(seen.insert(task_id.clone()), "{task_id} announced twice");
            }
            Ok(Some(StoreChange::Resync)) => {}
            other => panic!("expected the creations, got {other:?} after {seen:?}"),
        }
    }
    // No announcement for the refused creation: the next one is an append.
    let done =
        a2a_kit::protocol::StreamResponse::StatusUpdate(a2a_kit::protocol::TaskStatusUpdateEvent {
            task_id: "n3".into(),
            context_id: "ctx".into(),
            status: TaskStatus::new(TaskState::Completed),
            metadata: None,
        });
    a.append_event("n3", done).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), changes.next()).await {
        Ok(Some(StoreChange::Appended {
            task_id,
            seq,
            state,
        })) => {
            assert_eq!(
                (task_id.as_str(), seq, state),
                ("n3", 2, Some(TaskState::Completed))
            );
        }
        other => panic!("expected n3's completion, got {other:?}"),
    }
    schema.drop().await;
}
