//! Per-caller and per-tenant task scoping (spec: authorization scoping; issue #19): the leak
//! matrix. Two callers and two tenants × every task operation × every store × both bindings:
//! anyone but a task's owner, in its tenant, gets exactly the answer an id that never existed
//! gets (TaskNotFound), and the task is left as it was; ListTasks lists one's own tasks only.

use std::time::Duration;

use a2a_kit::auth::ApiKeys;
use a2a_kit::server::{AgentService, AgentServiceBuilder, TaskOwnership};
use a2a_kit::store::{InMemoryTaskManager, SqliteTaskManager, TaskManager};
use a2a_tests::{PostgresSchema, TestAgent, TestServer, client, serve, to_skill, uuid};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Binding {
    JsonRpc,
    Rest,
}

const BINDINGS: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];

/// A caller (its API key; `None`: no credentials) in a tenant (`None`: none named).
#[derive(Debug, Clone, Copy)]
struct Who {
    key: Option<&'static str>,
    tenant: Option<&'static str>,
}

const ALICE_ACME: Who = Who {
    key: Some("alice-key"),
    tenant: Some("acme"),
};

/// Everyone who must not see Alice's tasks in tenant `acme`.
const OTHERS: [Who; 4] = [
    Who {
        key: Some("bob-key"),
        tenant: Some("acme"),
    },
    Who {
        key: Some("alice-key"),
        tenant: Some("globex"),
    },
    Who {
        key: Some("alice-key"),
        tenant: None,
    },
    Who {
        key: Some("bob-key"),
        tenant: None,
    },
];

fn keys() -> ApiKeys {
    ApiKeys::header("X-API-Key")
        .key("alice-key", "alice")
        .key("bob-key", "bob")
}

fn builder(store: impl TaskManager) -> AgentServiceBuilder {
    AgentService::builder(TestAgent)
        .push_notifications(true)
        // Configs point at a closed port: creating them is what is tested, not delivery.
        .webhook_validator(|_| Ok(()))
        .task_manager(store)
}

/// One operation over one binding, as `who`: the HTTP status and the body (JSON, or the text
/// of whatever else came, such as an event stream that opened).
async fn call_as(
    base: &str,
    binding: Binding,
    who: Who,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let http = client();
    let mut req = match binding {
        Binding::JsonRpc => {
            let mut params = params;
            if let Some(t) = who.tenant {
                params["tenant"] = json!(t);
            }
            http.post(base).json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params
            }))
        }
        Binding::Rest => {
            let prefix = match who.tenant {
                Some(t) => format!("{base}/{t}"),
                None => base.to_string(),
            };
            let id = params["id"].as_str().unwrap_or_default().to_string();
            let task = params["taskId"].as_str().unwrap_or_default().to_string();
            let configs = format!("{prefix}/tasks/{task}/pushNotificationConfigs");
            match method {
                "GetTask" => http.get(format!("{prefix}/tasks/{id}")),
                "ListTasks" => http.get(format!("{prefix}/tasks")),
                "CancelTask" => http
                    .post(format!("{prefix}/tasks/{id}:cancel"))
                    .json(&json!({})),
                "SubscribeToTask" => http.get(format!("{prefix}/tasks/{id}:subscribe")),
                "SendMessage" => http.post(format!("{prefix}/message:send")).json(&params),
                "SendStreamingMessage" => {
                    http.post(format!("{prefix}/message:stream")).json(&params)
                }
                "CreateTaskPushNotificationConfig" => http.post(configs).json(&params),
                "GetTaskPushNotificationConfig" => http.get(format!("{configs}/{id}")),
                "ListTaskPushNotificationConfigs" => http.get(configs),
                "DeleteTaskPushNotificationConfig" => http.delete(format!("{configs}/{id}")),
                other => panic!("no REST route for {other}"),
            }
        }
    };
    req = req.header("A2A-Version", "1.0");
    if let Some(key) = who.key {
        req = req.header("X-API-Key", key);
    }
    let resp = req.send().await.expect("answered");
    let status = resp.status().as_u16();
    // A stream that opened would not end: what arrives within a second is the answer.
    let body = match tokio::time::timeout(Duration::from_secs(1), resp.text()).await {
        Ok(Ok(text)) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        Ok(Err(e)) => Value::String(format!("body error: {e}")),
        Err(_) => Value::String("a stream opened".into()),
    };
    (status, body)
}

/// Every operation on task `task` (whose push config is `config`), as parameters.
fn operations(task: &str, config: &str) -> Vec<(&'static str, Value)> {
    let follow_up = json!({"message": {
        "messageId": uuid(), "role": "ROLE_USER", "taskId": task,
        "parts": [{"text": "Mallory"}]
    }});
    vec![
        ("GetTask", json!({"id": task})),
        ("CancelTask", json!({"id": task})),
        ("SubscribeToTask", json!({"id": task})),
        ("SendMessage", follow_up.clone()),
        ("SendStreamingMessage", follow_up),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "http://127.0.0.1:9/evil", "token": "evil"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": config}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": config}),
        ),
    ]
}

/// The same parameters for an id that never existed.
fn with_id(params: &Value, from: &str, to: &str) -> Value {
    serde_json::from_str(&params.to_string().replace(from, to)).expect("json")
}

fn task_of(body: &Value) -> &Value {
    if body.get("jsonrpc").is_some() {
        &body["result"]["task"]
    } else {
        &body["task"]
    }
}

/// Alice's tasks: one WORKING (a long sleep), one waiting for her reply (INPUT_REQUIRED),
/// one finished; each with a push config.
struct Fixture {
    tasks: Vec<(String, &'static str)>,
    config: String,
}

async fn alice_creates(s: &TestServer, binding: Binding) -> Fixture {
    let mut tasks = Vec::new();
    for (skill, text, immediately, state) in [
        ("slow", "60000", true, "TASK_STATE_WORKING"),
        ("ask", "hi", false, "TASK_STATE_INPUT_REQUIRED"),
        ("echo", "hi", false, "TASK_STATE_COMPLETED"),
    ] {
        let params = json!({
            "message": to_skill(skill, text),
            "configuration": {"returnImmediately": immediately},
        });
        let (status, body) = call_as(&s.base, binding, ALICE_ACME, "SendMessage", params).await;
        assert_eq!(status, 200, "{body}");
        let id = task_of(&body)["id"].as_str().expect("a task").to_string();
        tasks.push((id, state));
    }
    let config = "alice-hook".to_string();
    for (id, _) in &tasks {
        let params = json!({"taskId": id, "id": config, "url": "http://127.0.0.1:9/hook", "token": "alice-secret"});
        let (status, body) = call_as(
            &s.base,
            binding,
            ALICE_ACME,
            "CreateTaskPushNotificationConfig",
            params,
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    // The WORKING one is WORKING before anyone tries it.
    let (working, _) = &tasks[0];
    for _ in 0..200 {
        let (_, body) = call_as(
            &s.base,
            binding,
            ALICE_ACME,
            "GetTask",
            json!({"id": working}),
        )
        .await;
        let state = if binding == Binding::JsonRpc {
            &body["result"]["status"]["state"]
        } else {
            &body["status"]["state"]
        };
        if state == "TASK_STATE_WORKING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Fixture { tasks, config }
}

/// Alice's view of her task: its state and history length.
async fn alice_sees(s: &TestServer, binding: Binding, id: &str) -> (String, usize) {
    let (status, body) = call_as(&s.base, binding, ALICE_ACME, "GetTask", json!({"id": id})).await;
    assert_eq!(status, 200, "Alice reads her own task {id}: {body}");
    let task = if binding == Binding::JsonRpc {
        &body["result"]
    } else {
        &body
    };
    (
        task["status"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        task["history"].as_array().map_or(0, Vec::len),
    )
}

fn listed_ids(body: &Value) -> Vec<String> {
    let result = if body.get("jsonrpc").is_some() {
        &body["result"]
    } else {
        body
    };
    result["tasks"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The matrix on one server: returns every operation that leaked, described.
async fn leak_matrix(s: &TestServer) -> Vec<String> {
    let mut leaks = Vec::new();
    for created_over in BINDINGS {
        let fx = alice_creates(s, created_over).await;
        let before: Vec<_> = futures::future::join_all(
            fx.tasks
                .iter()
                .map(|(id, _)| alice_sees(s, created_over, id)),
        )
        .await;
        for (i, (id, state)) in fx.tasks.iter().enumerate() {
            assert_eq!(before[i].0, *state, "task {id}");
        }
        for binding in BINDINGS {
            for who in OTHERS {
                for (id, _) in &fx.tasks {
                    let never = uuid();
                    for (method, params) in operations(id, &fx.config) {
                        let got = call_as(&s.base, binding, who, method, params.clone()).await;
                        let fresh =
                            call_as(&s.base, binding, who, method, with_id(&params, id, &never))
                                .await;
                        let fresh = (fresh.0, with_id(&fresh.1, &never, id));
                        if got != fresh {
                            leaks.push(format!(
                                "{binding:?} {method} by {who:?} on Alice's task {id}: {got:?}, \
                                 where an unknown id gets {fresh:?}"
                            ));
                        }
                        let not_found = match binding {
                            Binding::JsonRpc => got.1["error"]["code"] == -32001,
                            Binding::Rest => got.0 == 404,
                        };
                        if !not_found {
                            leaks.push(format!(
                                "{binding:?} {method} by {who:?} on {id}: not TaskNotFound: {got:?}"
                            ));
                        }
                    }
                }
                // ListTasks: nobody else lists Alice's tasks.
                let (_, body) = call_as(&s.base, binding, who, "ListTasks", json!({})).await;
                let listed = listed_ids(&body);
                for (id, _) in &fx.tasks {
                    if listed.contains(id) {
                        leaks.push(format!("{binding:?} ListTasks by {who:?} lists {id}"));
                    }
                }
            }
        }
        // Nothing anyone else did changed Alice's tasks.
        for (i, (id, _)) in fx.tasks.iter().enumerate() {
            let after = alice_sees(s, created_over, id).await;
            if after != before[i] {
                leaks.push(format!(
                    "Alice's task {id} changed from {:?} to {after:?}",
                    before[i]
                ));
            }
        }
        // Alice still has her webhook config, with its token unread by anyone.
        let (status, body) = call_as(
            &s.base,
            created_over,
            ALICE_ACME,
            "GetTaskPushNotificationConfig",
            json!({"taskId": fx.tasks[0].0, "id": fx.config}),
        )
        .await;
        assert_eq!(status, 200, "Alice's config survives: {body}");
        // Alice lists her tasks, and cancels her WORKING one.
        let (_, body) = call_as(&s.base, created_over, ALICE_ACME, "ListTasks", json!({})).await;
        let listed = listed_ids(&body);
        for (id, _) in &fx.tasks {
            assert!(listed.contains(id), "Alice lists {id}: {body}");
        }
        let (status, body) = call_as(
            &s.base,
            created_over,
            ALICE_ACME,
            "CancelTask",
            json!({"id": fx.tasks[0].0}),
        )
        .await;
        assert_eq!(status, 200, "Alice cancels her own task: {body}");
    }
    // Bob's own tasks are his: he lists exactly them, in his tenant.
    let bob = OTHERS[0];
    let (_, body) = call_as(
        &s.base,
        Binding::Rest,
        bob,
        "SendMessage",
        json!({"message": to_skill("echo", "bob's")}),
    )
    .await;
    let bobs = task_of(&body)["id"].as_str().expect("a task").to_string();
    for binding in BINDINGS {
        let (_, body) = call_as(&s.base, binding, bob, "ListTasks", json!({})).await;
        if listed_ids(&body) != vec![bobs.clone()] {
            leaks.push(format!("{binding:?} ListTasks by Bob: {body}"));
        }
    }
    leaks
}

async fn assert_no_leak(s: TestServer) {
    let leaks = leak_matrix(&s).await;
    assert!(
        leaks.is_empty(),
        "{} operations leaked:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

#[tokio::test]
async fn no_caller_reaches_another_callers_task_in_memory() {
    let s = serve(builder(InMemoryTaskManager::default()).authenticate(keys())).await;
    assert_no_leak(s).await;
}

#[tokio::test]
async fn no_caller_reaches_another_callers_task_in_sqlite() {
    let dir = std::env::temp_dir().join(format!("a2a-scoping-{}", uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteTaskManager::open(dir.join("tasks.db")).await.unwrap();
    let s = serve(builder(store).authenticate(keys())).await;
    assert_no_leak(s).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn no_caller_reaches_another_callers_task_in_postgres() {
    let schema = PostgresSchema::new(1).await;
    let s = serve(builder(schema.stores[0].clone()).authenticate(keys())).await;
    let leaks = leak_matrix(&s).await;
    drop(s);
    schema.drop().await;
    assert!(
        leaks.is_empty(),
        "{} leaked:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

/// Without authentication, tenants still isolate: a task created under `/acme/` is not read,
/// listed or canceled under `/globex/` or without a tenant.
#[tokio::test]
async fn tenants_isolate_tasks_on_an_open_agent() {
    let s = serve(builder(InMemoryTaskManager::default())).await;
    let acme = Who {
        key: None,
        tenant: Some("acme"),
    };
    for binding in BINDINGS {
        let (status, body) = call_as(
            &s.base,
            binding,
            acme,
            "SendMessage",
            json!({"message": to_skill("echo", "hi")}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let id = task_of(&body)["id"].as_str().unwrap().to_string();
        for other in [
            Who {
                key: None,
                tenant: Some("globex"),
            },
            Who {
                key: None,
                tenant: None,
            },
        ] {
            for reader in BINDINGS {
                let (status, body) =
                    call_as(&s.base, reader, other, "GetTask", json!({"id": id})).await;
                assert!(
                    status == 404 || body["error"]["code"] == -32001,
                    "{reader:?} GetTask under {other:?}: {status} {body}"
                );
                let (_, body) = call_as(&s.base, reader, other, "ListTasks", json!({})).await;
                assert!(!listed_ids(&body).contains(&id), "{body}");
            }
        }
        let (status, _) = call_as(&s.base, binding, acme, "GetTask", json!({"id": id})).await;
        assert_eq!(status, 200, "the tenant reads its own task");
    }
}

/// `TaskOwnership::Shared`: trusted callers share tasks (tenants still isolate);
/// `TenantAndSubject` tells one subject in two organizations apart.
#[tokio::test]
async fn ownership_modes() {
    let shared = serve(
        builder(InMemoryTaskManager::default())
            .authenticate(keys())
            .task_ownership(TaskOwnership::Shared),
    )
    .await;
    let (_, body) = call_as(
        &shared.base,
        Binding::JsonRpc,
        ALICE_ACME,
        "SendMessage",
        json!({"message": to_skill("echo", "hi")}),
    )
    .await;
    let id = task_of(&body)["id"].as_str().unwrap().to_string();
    let (status, _) = call_as(
        &shared.base,
        Binding::Rest,
        OTHERS[0],
        "GetTask",
        json!({"id": id}),
    )
    .await;
    assert_eq!(status, 200, "Bob reads Alice's task when tasks are shared");
    let (status, _) = call_as(
        &shared.base,
        Binding::Rest,
        OTHERS[3],
        "GetTask",
        json!({"id": id}),
    )
    .await;
    assert_eq!(status, 404, "but not outside the tenant");

    let org = |org: &str| {
        let mut c = a2a_kit::auth::Caller::new("sam");
        c.tenant = Some(org.into());
        c
    };
    let two_orgs = ApiKeys::header("X-API-Key")
        .key_for("alice-key", org("initech"))
        .key_for("bob-key", org("hooli"));
    let s = serve(
        builder(InMemoryTaskManager::default())
            .authenticate(two_orgs)
            .task_ownership(TaskOwnership::TenantAndSubject),
    )
    .await;
    let (_, body) = call_as(
        &s.base,
        Binding::Rest,
        ALICE_ACME,
        "SendMessage",
        json!({"message": to_skill("echo", "hi")}),
    )
    .await;
    let id = task_of(&body)["id"].as_str().unwrap().to_string();
    let (status, _) = call_as(
        &s.base,
        Binding::Rest,
        OTHERS[0],
        "GetTask",
        json!({"id": id}),
    )
    .await;
    assert_eq!(status, 404, "sam@hooli is not sam@initech");
    let (status, _) = call_as(
        &s.base,
        Binding::Rest,
        ALICE_ACME,
        "GetTask",
        json!({"id": id}),
    )
    .await;
    assert_eq!(status, 200);

    let err = AgentService::builder(TestAgent)
        .task_ownership(TaskOwnership::Shared)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("authenticator"), "{err}");
}
