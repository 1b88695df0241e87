//! Admission control (issue #18): a store that is full of tasks waiting for input refuses new
//! work with the spec's "unavailable" error and `Retry-After` (503 over HTTP+JSON; -32603 in a
//! JSON-RPC envelope), never a 500, and finished tasks make room first.

use a2a_kit::server::AgentService;
use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
use a2a_tests::*;
use serde_json::{Value, json};

const BOUND: usize = 200;

/// SendMessage of `text` to `skill` over JSON-RPC; the raw response (headers included).
async fn rpc_send_to_skill(base: &str, skill: &str, text: &str) -> reqwest::Response {
    client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": to_skill(skill, text)}}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_store_full_of_waiting_tasks_answers_unavailable_with_retry_after() {
    let store = InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: BOUND,
        terminal_ttl: None,
    });
    let s = serve(AgentService::builder(TestAgent).task_manager(store)).await;
    // Finished tasks first: they make room for whatever comes next.
    for _ in 0..10 {
        let v: Value = rpc_send_to_skill(&s.base, "echo", "done")
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{v}"
        );
    }
    // The flood: as many questions as the store holds, all waiting for a reply.
    let asks = futures::future::join_all((0..BOUND).map(|i| {
        let base = s.base.clone();
        async move {
            let v: Value = rpc_send_to_skill(&base, "ask", &format!("q{i}"))
                .await
                .json()
                .await
                .unwrap();
            v["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        }
    }))
    .await;
    assert!(asks.iter().all(|&waiting| waiting), "every question waits");
    // Now nothing can be evicted: refused, with when to come back.
    let resp = rpc_send_to_skill(&s.base, "echo", "one more").await;
    assert_eq!(resp.status(), 200, "JSON-RPC answers in the envelope");
    assert_eq!(resp.headers()["retry-after"], "1");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("full"),
        "{v}"
    );
    let resp = client()
        .post(format!("{}/message:send", s.base))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": to_skill("echo", "one more")}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["status"], "UNAVAILABLE", "{v}");
    // Reads still work.
    let list = client()
        .get(format!("{}/tasks?pageSize=1", s.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
}

/// A question nobody answers expires (`reply_timeout`): its task ends FAILED with a reason
/// that says so, and the room it held goes to new work.
#[tokio::test]
async fn unanswered_questions_expire_and_make_room() {
    let store = InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 20,
        terminal_ttl: None,
    });
    let s = serve(
        AgentService::builder(TestAgent)
            .task_manager(store)
            .execution(a2a_kit::runtime::ExecutionConfig {
                reply_timeout: Some(std::time::Duration::from_millis(300)),
                ..Default::default()
            }),
    )
    .await;
    let mut ids = Vec::new();
    for i in 0..20 {
        let v: Value = rpc_send_to_skill(&s.base, "ask", &format!("q{i}"))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            v["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{v}"
        );
        ids.push(v["result"]["task"]["id"].as_str().unwrap().to_string());
    }
    let expired = async {
        loop {
            let t = s
                .service
                .task_manager()
                .get_task(&ids[0], a2a_kit::store::TaskView::FULL)
                .await
                .unwrap()
                .unwrap()
                .task;
            if t.status.state.is_terminal() {
                return t;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    let t = tokio::time::timeout(std::time::Duration::from_secs(10), expired)
        .await
        .expect("the question expired");
    assert_eq!(t.status.state, a2a_kit::protocol::TaskState::Failed);
    let reason = t
        .status
        .message
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default();
    assert!(reason.contains("no reply came within 0.3 s"), "{reason}");
    // Every one expired: the store has room again.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let v: Value = rpc_send_to_skill(&s.base, "echo", "room")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
}

/// Skills beyond `max_running_skills` wait their turn (their task SUBMITTED), in order; beyond
/// `max_waiting_skills` new work is refused (503 + Retry-After) before anything is stored. A
/// skill waiting for a reply gives its turn up meanwhile.
#[tokio::test]
async fn skills_beyond_the_cap_wait_their_turn_then_are_refused() {
    let s = serve(
        AgentService::builder(TestAgent).execution(a2a_kit::runtime::ExecutionConfig {
            max_running_skills: 2,
            max_waiting_skills: 1,
            cancel_grace: std::time::Duration::from_millis(200),
            ..Default::default()
        }),
    )
    .await;
    // A question waits for a person: it takes no turn.
    let v: Value = rpc_send_to_skill(&s.base, "ask", "q")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{v}"
    );
    let start = |ms: &str| {
        let base = s.base.clone();
        let ms = ms.to_string();
        async move {
            let resp = client()
                .post(&base)
                .header("A2A-Version", "1.0")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                              "params": {"message": to_skill("slow", &ms),
                                         "configuration": {"returnImmediately": true}}}))
                .send()
                .await
                .unwrap();
            (
                resp.headers().get("retry-after").cloned(),
                resp.json::<Value>().await.unwrap(),
            )
        }
    };
    let mut running = Vec::new();
    for _ in 0..2 {
        let (_, v) = start("30000").await;
        running.push(v["result"]["task"]["id"].as_str().unwrap().to_string());
    }
    let (_, queued) = start("10").await;
    let queued_id = queued["result"]["task"]["id"].as_str().unwrap().to_string();
    let get = |id: String| {
        let base = s.base.clone();
        async move {
            let v = a2a_tests::rpc(&base, "GetTask", json!({"id": id})).await;
            v["result"]["status"]["state"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        }
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        get(queued_id.clone()).await,
        "TASK_STATE_SUBMITTED",
        "it waits its turn"
    );
    // The queue is full: refused, nothing stored.
    let (retry, refused) = start("10").await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("retry later"),
        "{refused}"
    );
    assert_eq!(retry.as_ref().map(|v| v.to_str().unwrap()), Some("1"));
    // Freeing a turn lets the queued skill run.
    a2a_tests::rpc(&s.base, "CancelTask", json!({"id": running[0]})).await;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while get(queued_id.clone()).await != "TASK_STATE_COMPLETED" {
        assert!(
            std::time::Instant::now() < until,
            "the queued skill never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let zero = AgentService::builder(TestAgent)
        .execution(a2a_kit::runtime::ExecutionConfig {
            max_running_skills: 0,
            ..Default::default()
        })
        .build()
        .expect_err("refused");
    assert!(zero.to_string().contains("max_running_skills"), "{zero}");
}
