//! A task store written against the core `TaskManager` alone (its eight required methods,
//! over a `Mutex<HashMap>`) runs a real agent over HTTP: tasks are created, read, streamed
//! and canceled; with no push config capability the agent offers no push notifications, and
//! asking for them anyway is refused when the service is built.

use std::collections::HashMap;
use std::sync::Mutex;

use a2a_kit::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};
use a2a_kit::server::{AgentService, BuildError};
use a2a_kit::store::{
    EventRecord, ListQuery, Owner, Seq, StoreError, TaskManager, TaskRecord, TaskView, apply_event,
};
use a2a_kit::task::TaskStateMachine;
use a2a_tests::{
    TestAgent, kind, public_card, read_sse, rpc, rpc_stream, serve, state_of, to_skill,
};
use serde_json::{Value, json};

/// One task as the store keeps it: the task, and its log (event 1 is the creation snapshot).
struct Stored {
    task: Task,
    skill_id: Option<String>,
    owner: Option<Owner>,
    log: Vec<StreamResponse>,
}

/// The simplest store: every task and its whole log in one map behind one lock.
#[derive(Default)]
struct MinimalStore {
    tasks: Mutex<HashMap<String, Stored>>,
}

fn not_found(task_id: &str) -> StoreError {
    StoreError::TaskNotFound(task_id.to_string())
}

/// Where a task sorts in ListTasks: its status timestamp (milliseconds), then its id.
fn list_key(task: &Task) -> (i64, String) {
    let ms = task.status.timestamp.map_or(0, |t| t.0.timestamp_millis());
    (ms, task.id.clone())
}

#[async_trait::async_trait]
impl TaskManager for MinimalStore {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        TaskStateMachine::check_initial(task.status.state)?;
        let mut tasks = self.tasks.lock().unwrap();
        if tasks.contains_key(&task.id) {
            return Err(StoreError::TaskExists(task.id));
        }
        let log = vec![StreamResponse::Task(task.clone())];
        let stored = Stored {
            task,
            skill_id,
            owner,
            log,
        };
        tasks.insert(stored.task.id.clone(), stored);
        Ok(1)
    }

    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        let mut tasks = self.tasks.lock().unwrap();
        let stored = tasks.get_mut(task_id).ok_or_else(|| not_found(task_id))?;
        // The kit's semantics: the transition checked, the task changed, or nothing at all.
        apply_event(&mut stored.task, &event)?;
        stored.log.push(event);
        Ok(stored.log.len() as Seq)
    }

    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        let mut tasks = self.tasks.lock().unwrap();
        let stored = tasks.get_mut(task_id).ok_or_else(|| not_found(task_id))?;
        stored.task.history.push(message);
        Ok(())
    }

    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let tasks = self.tasks.lock().unwrap();
        Ok(tasks.get(task_id).map(|stored| {
            let mut task = stored.task.clone();
            view.apply(&mut task);
            TaskRecord {
                task,
                skill_id: stored.skill_id.clone(),
                owner: stored.owner.clone(),
                last_seq: stored.log.len() as Seq,
            }
        }))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let tasks = self.tasks.lock().unwrap();
        let stored = tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        Ok(stored
            .log
            .iter()
            .enumerate()
            .skip(after as usize)
            .take(limit)
            .map(|(i, event)| EventRecord {
                seq: i as Seq + 1,
                event: event.clone(),
            })
            .collect())
    }

    async fn list_tasks(&self, q: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        // The page token is the list key of the last task of the previous page.
        let after: Option<(i64, String)> = match &q.page_token {
            None => None,
            Some(token) => {
                let (ms, id) = token.split_once(':').ok_or(StoreError::InvalidPageToken)?;
                let ms = ms.parse().map_err(|_| StoreError::InvalidPageToken)?;
                Some((ms, id.to_string()))
            }
        };
        let since = q.status_timestamp_after.map(|t| t.0.timestamp_millis());
        let tasks = self.tasks.lock().unwrap();
        let mut matching: Vec<&Stored> = tasks
            .values()
            .filter(|s| s.owner == q.owner)
            .filter(|s| {
                q.context_id
                    .as_ref()
                    .is_none_or(|c| *c == s.task.context_id)
            })
            .filter(|s| q.status.is_none_or(|st| st == s.task.status.state))
            .filter(|s| since.is_none_or(|since| list_key(&s.task).0 >= since))
            .collect();
        // Newest status first.
        matching.sort_by_key(|s| std::cmp::Reverse(list_key(&s.task)));
        let total = matching.len();
        let rest: Vec<&Stored> = matching
            .into_iter()
            .filter(|s| after.as_ref().is_none_or(|a| list_key(&s.task) < *a))
            .collect();
        let page: Vec<Task> = rest
            .iter()
            .take(q.page_size)
            .map(|s| {
                let mut task = s.task.clone();
                q.view.apply(&mut task);
                task
            })
            .collect();
        let next_page_token = match page.last() {
            Some(last) if rest.len() > page.len() => {
                let (ms, id) = list_key(last);
                format!("{ms}:{id}")
            }
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: page,
            next_page_token,
            page_size: q.page_size as i32,
            total_size: total as i32,
        })
    }

    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        let cutoff = before.0.timestamp_millis();
        let mut tasks = self.tasks.lock().unwrap();
        let n = tasks.len();
        tasks.retain(|_, s| !(s.task.status.state.is_terminal() && list_key(&s.task).0 < cutoff));
        Ok(n - tasks.len())
    }

    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        let tasks = self.tasks.lock().unwrap();
        Ok(tasks
            .values()
            .filter(|s| states.contains(&s.task.status.state))
            .map(|s| s.task.id.clone())
            .collect())
    }
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_runs_on_a_store_of_the_core_alone() {
    let s = serve(AgentService::builder(TestAgent).task_manager(MinimalStore::default())).await;

    // SendMessage creates a task; GetTask reads it back.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "hello")}),
    )
    .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    let id = task["id"].as_str().expect("a task id").to_string();
    let got = rpc(&s.base, "GetTask", json!({"id": id})).await;
    assert_eq!(
        &got["result"], task,
        "GetTask answers the task SendMessage did"
    );
    assert!(
        got["result"]["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hello")),
        "{got}"
    );

    // A streaming message: every event in order, the stream closed by the final status.
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("chunks", "3")}),
        None,
    )
    .await;
    let events = read_sse(resp, 100).await;
    let kinds: Vec<&str> = events.iter().map(|e| kind(&e.data)).collect();
    assert_eq!(
        kinds,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    assert_eq!(
        state_of(&events[5].data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        ["1", "2", "3", "4", "5", "6"],
        "the log's sequence numbers"
    );
    let streamed = events[0].data["result"]["task"]["id"].as_str().unwrap();
    let got = rpc(&s.base, "GetTask", json!({"id": streamed})).await;
    assert_eq!(got["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        got["result"]["artifacts"][0]["parts"]
            .as_array()
            .map(Vec::len),
        Some(3),
        "the chunks appended to one artifact: {got}"
    );

    // CancelTask ends a running task, once.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "20000"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let slow = r["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    let c = rpc(&s.base, "CancelTask", json!({"id": slow})).await;
    assert_eq!(c["result"]["status"]["state"], "TASK_STATE_CANCELED", "{c}");
    let again = rpc(&s.base, "CancelTask", json!({"id": slow})).await;
    assert_eq!(code(&again), -32002, "a canceled task is final");
    let got = rpc(&s.base, "GetTask", json!({"id": slow})).await;
    assert_eq!(got["result"]["status"]["state"], "TASK_STATE_CANCELED");

    // ListTasks pages through them, newest first.
    let first = rpc(&s.base, "ListTasks", json!({"pageSize": 2})).await;
    assert_eq!(first["result"]["totalSize"], 3, "{first}");
    assert_eq!(first["result"]["tasks"][0]["id"], slow.as_str());
    let token = first["result"]["nextPageToken"].as_str().unwrap();
    let second = rpc(
        &s.base,
        "ListTasks",
        json!({"pageSize": 2, "pageToken": token}),
    )
    .await;
    assert_eq!(second["result"]["tasks"][0]["id"], id.as_str(), "{second}");

    // No push config capability: no push notifications, the spec's answer to each operation.
    let card = public_card(&s.base).await;
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": "https://example.com/hook"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
        (
            "SendMessage",
            json!({"message": to_skill("echo", "x"),
                "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/hook"}}}),
        ),
    ] {
        let v = rpc(&s.base, method, params).await;
        assert_eq!(
            code(&v),
            -32003,
            "{method}: PushNotificationNotSupportedError: {v}"
        );
    }
}

/// Push asked for on a store that keeps no push configs: `build` names what is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_on_a_store_without_push_configs_is_a_build_error() {
    let asked = AgentService::builder(TestAgent)
        .task_manager(MinimalStore::default())
        .push_notifications(true)
        .build();
    let Err(e) = asked else {
        panic!("push_notifications(true) needs a push config store");
    };
    assert_eq!(e, BuildError::PushWithoutConfigStore);
    assert!(e.to_string().contains("PushConfigStore"), "{e}");

    let delivery = AgentService::builder(TestAgent)
        .task_manager(MinimalStore::default())
        .push_delivery(a2a_kit::push::PushConfig::default())
        .build();
    assert_eq!(
        delivery.err(),
        Some(BuildError::PushWithoutConfigStore),
        "push delivery needs configs to deliver to"
    );

    // Turned off, the same store builds; with a store that keeps configs, push builds too.
    assert!(
        AgentService::builder(TestAgent)
            .task_manager(MinimalStore::default())
            .push_notifications(false)
            .build()
            .is_ok()
    );
    assert!(
        AgentService::builder(TestAgent)
            .push_notifications(true)
            .build()
            .is_ok()
    );
}
