//! The four push-config operations and inline `taskPushNotificationConfig`, through both HTTP
//! bindings, with push delivery switched on (`push_delivery`): ids generated when absent,
//! pagination, idempotent delete, TaskNotFound for a missing config or task, InvalidParams with
//! the SSRF guard's reason (a host name resolved when the config is created), the per-task
//! limit on configs, and PushNotificationNotSupported when the capability is off.

use std::net::IpAddr;

use a2a_kit::push::{PushConfig, RetryPolicy, SsrfPolicy};
use a2a_kit::server::{AgentService, AgentServiceBuilder, BuildError};
use a2a_tests::*;
use serde_json::{Value, json};

/// The host of the webhook URLs below. Its name is resolved when a config is created, and it
/// is no name DNS knows: it is pinned to 127.0.0.1 and allowed by name, so creations pass
/// and no delivery leaves the machine (the rest of the policy is strict).
const HOOKS: &str = "hooks.example.com";

fn push_config() -> PushConfig {
    PushConfig::default()
        .retry(RetryPolicy::none())
        .ssrf(SsrfPolicy::allowlist([HOOKS]).unwrap())
        .pin_host(HOOKS, [IpAddr::from([127, 0, 0, 1])])
}

/// The test agent with push delivery (see [`HOOKS`]; no retries).
async fn serve_push() -> TestServer {
    serve(AgentService::builder(TestAgent).push_delivery(push_config())).await
}

/// The test agent with push delivery and `edit` applied to its builder.
async fn serve_push_with(
    edit: impl FnOnce(AgentServiceBuilder) -> AgentServiceBuilder,
) -> TestServer {
    serve(edit(
        AgentService::builder(TestAgent).push_delivery(push_config()),
    ))
    .await
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

fn rest(method: reqwest::Method, url: String) -> reqwest::RequestBuilder {
    client().request(method, url).header("A2A-Version", "1.0")
}

async fn new_task(base: &str) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": to_skill("ask", "x")}),
    )
    .await;
    r["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string()
}

#[tokio::test]
async fn jsonrpc_operations() {
    let s = serve_push().await;
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    let task = new_task(&s.base).await;

    // Create: the id is generated when absent and kept when given.
    let a = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": "https://hooks.example.com/a", "token": "tok-a",
               "authentication": {"scheme": "Bearer", "credentials": "cred-a"}}),
    )
    .await;
    let a_id = a["result"]["id"]
        .as_str()
        .expect("generated id")
        .to_string();
    assert!(!a_id.is_empty());
    assert_eq!(a["result"]["taskId"], task);
    assert_eq!(a["result"]["authentication"]["credentials"], "cred-a");
    let b = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "id": "mine", "url": "https://hooks.example.com/b"}),
    )
    .await;
    assert_eq!(b["result"]["id"], "mine");

    // Get.
    let got = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": a_id}),
    )
    .await;
    assert_eq!(got["result"]["url"], "https://hooks.example.com/a");
    // Credentials are write-only: the scheme reads back, the secrets do not.
    assert!(got["result"].get("token").is_none(), "{got}");
    assert_eq!(got["result"]["authentication"]["scheme"], "Bearer", "{got}");
    assert!(
        got["result"]["authentication"].get("credentials").is_none(),
        "{got}"
    );

    // List, whole and paged.
    let all = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    let ids: Vec<&str> = all["result"]["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [a_id.as_str(), "mine"]);
    let page = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task, "pageSize": 1}),
    )
    .await;
    assert_eq!(page["result"]["configs"].as_array().unwrap().len(), 1);
    let token = page["result"]["nextPageToken"]
        .as_str()
        .unwrap()
        .to_string();
    let page2 = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task, "pageSize": 1, "pageToken": token}),
    )
    .await;
    assert_eq!(page2["result"]["configs"][0]["id"], "mine");

    // Delete is idempotent; Get of a deleted config is TaskNotFound.
    for _ in 0..2 {
        let d = rpc(
            &s.base,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "mine"}),
        )
        .await;
        assert_eq!(d["result"], json!({}), "{d}");
    }
    let gone = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": "mine"}),
    )
    .await;
    assert_eq!(code(&gone), -32001);
    let never = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": "never-existed"}),
    )
    .await;
    assert_eq!(code(&never), -32001);
    // A config for a task that does not exist.
    let orphan = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "no-such-task", "url": "https://hooks.example.com/x"}),
    )
    .await;
    assert_eq!(code(&orphan), -32001);
    // Required fields.
    let no_url = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task}),
    )
    .await;
    assert_eq!(code(&no_url), -32602);
}

#[tokio::test]
async fn inline_configs_on_send_and_stream() {
    let s = serve_push().await;
    let inline = json!({"url": "https://hooks.example.com/inline", "token": "t", "authentication": {"scheme": "Bearer", "credentials": "c"}});
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("slow", "300"), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": inline}}),
    )
    .await;
    let task = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let list = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    let cfg = &list["result"]["configs"][0];
    assert_eq!(cfg["url"], "https://hooks.example.com/inline");
    assert_eq!(cfg["taskId"], task.as_str());
    assert!(cfg["id"].as_str().is_some_and(|id| !id.is_empty()));

    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("echo", "hi"), "configuration": {"taskPushNotificationConfig": inline}}),
        None,
    )
    .await;
    let events = read_sse(resp, 20).await;
    let task = events[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let list = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    assert_eq!(
        list["result"]["configs"][0]["url"],
        "https://hooks.example.com/inline"
    );

    // REST SendMessage with an inline config.
    let v: Value = rest(reqwest::Method::POST, format!("{}/message:send", s.base))
        .json(&json!({"message": to_skill("slow", "200"), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": inline}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = v["task"]["id"].as_str().unwrap();
    let list: Value = rest(
        reqwest::Method::GET,
        format!("{}/tasks/{task}/pushNotificationConfigs", s.base),
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(list["configs"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn rest_operations() {
    let s = serve_push().await;
    let task = new_task(&s.base).await;
    let base = format!("{}/tasks/{task}/pushNotificationConfigs", s.base);
    let created = rest(reqwest::Method::POST, base.clone())
        .json(&json!({"url": "https://hooks.example.com/r", "token": "tok"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    let created: Value = created.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(
        created["taskId"],
        task.as_str(),
        "taskId comes from the path"
    );
    let with_id: Value = rest(reqwest::Method::POST, base.clone())
        .json(&json!({"id": "fixed", "url": "https://hooks.example.com/f"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(with_id["id"], "fixed");

    let one: Value = rest(reqwest::Method::GET, format!("{base}/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(one.get("token").is_none(), "write-only: {one}");
    assert_eq!(one["url"], "https://hooks.example.com/r");
    let list: Value = rest(reqwest::Method::GET, format!("{base}?pageSize=1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["configs"].as_array().unwrap().len(), 1);
    assert!(
        list["nextPageToken"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );

    for _ in 0..2 {
        let d = rest(reqwest::Method::DELETE, format!("{base}/fixed"))
            .send()
            .await
            .unwrap();
        assert_eq!(d.status(), 200);
        assert_eq!(d.json::<Value>().await.unwrap(), json!({}));
    }
    let gone = rest(reqwest::Method::GET, format!("{base}/fixed"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let e: Value = gone.json().await.unwrap();
    assert_eq!(e["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let orphan = rest(
        reqwest::Method::POST,
        format!("{}/tasks/nope/pushNotificationConfigs", s.base),
    )
    .json(&json!({"url": "https://hooks.example.com/x"}))
    .send()
    .await
    .unwrap();
    assert_eq!(orphan.status(), 404);
}

#[tokio::test]
async fn ssrf_refusals_are_invalid_params_with_the_reason_on_both_bindings() {
    let s = serve_push().await;
    let task = new_task(&s.base).await;
    let cases = [
        ("http://127.0.0.1:8080/hook", "loopback"),
        ("http://localhost:8080/hook", "loopback"),
        ("http://10.0.0.7/hook", "private"),
        ("http://[fd00::1]/hook", "unique-local"),
        ("http://169.254.169.254/latest", "cloud metadata"),
        ("http://[fe80::1]/hook", "link-local"),
        ("http://239.1.1.1/hook", "multicast"),
        ("http://0.0.0.0/hook", "unspecified"),
        ("gopher://hooks.example.com/", "http or https"),
    ];
    for (url, why) in cases {
        let v = rpc(
            &s.base,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": url}),
        )
        .await;
        assert_eq!(code(&v), -32602, "{url}: {v}");
        assert!(v["error"].to_string().contains(why), "{url}: {v}");

        let r = rest(
            reqwest::Method::POST,
            format!("{}/tasks/{task}/pushNotificationConfigs", s.base),
        )
        .json(&json!({"url": url}))
        .send()
        .await
        .unwrap();
        assert_eq!(r.status(), 400, "{url}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["status"], "INVALID_ARGUMENT");
        assert!(e["error"].to_string().contains(why), "{url}: {e}");

        let inline = rpc(
            &s.base,
            "SendMessage",
            json!({"message": to_skill("echo", "x"), "configuration": {"taskPushNotificationConfig": {"url": url}}}),
        )
        .await;
        assert_eq!(code(&inline), -32602, "{url}: {inline}");
    }
    // Nothing was stored.
    let list = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    assert!(
        list["result"]["configs"]
            .as_array()
            .is_none_or(|c| c.is_empty()),
        "{list}"
    );
}

#[tokio::test]
async fn capability_off_is_push_notification_not_supported() {
    let s = serve(AgentService::builder(TestAgent)).await;
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    let task = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("ask", "x")}),
    )
    .await["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://hooks.example.com/a"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"}),
        ),
        (
            "SendMessage",
            json!({"message": to_skill("echo", "x"), "configuration": {"taskPushNotificationConfig": {"url": "https://hooks.example.com/a"}}}),
        ),
    ] {
        let v = rpc(&s.base, method, params).await;
        assert_eq!(code(&v), -32003, "{method}: {v}");
    }
    let base = format!("{}/tasks/{task}/pushNotificationConfigs", s.base);
    for (method, url) in [
        (reqwest::Method::POST, base.clone()),
        (reqwest::Method::GET, base.clone()),
        (reqwest::Method::GET, format!("{base}/x")),
        (reqwest::Method::DELETE, format!("{base}/x")),
    ] {
        let r = rest(method.clone(), url)
            .json(&json!({"url": "https://hooks.example.com/a"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{method}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(
            e["error"]["details"][0]["reason"], "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "{method}: {e}"
        );
    }
}

// ----- the per-task limit -------------------------------------------------------------------

/// The ids of a task's configs, as List answers them.
async fn config_ids(base: &str, task: &str) -> Vec<String> {
    let list = rpc(
        base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    assert!(list["result"].is_object(), "{list}");
    // An empty list is left out.
    list["result"]["configs"]
        .as_array()
        .map(|configs| {
            configs
                .iter()
                .map(|c| c["id"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

async fn create_config(base: &str, task: &str, id: &str) -> Value {
    rpc(
        base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "id": id, "url": format!("https://{HOOKS}/{id}")}),
    )
    .await
}

/// Every event goes to each of a task's configs, so a task takes at most 10 (the default):
/// the 11th is InvalidParams naming `taskId` and the limit over both bindings, and nothing
/// is stored; replacing one of the ten by its id still works, and deleting one makes room.
#[tokio::test]
async fn a_task_takes_at_most_ten_configs() {
    let s = serve_push().await;
    let task = new_task(&s.base).await;
    for i in 0..10 {
        let v = create_config(&s.base, &task, &format!("c{i}")).await;
        assert_eq!(v["result"]["id"], format!("c{i}"), "{v}");
    }
    let v = create_config(&s.base, &task, "c10").await;
    assert_eq!(code(&v), -32602, "{v}");
    let text = v["error"].to_string();
    assert!(
        text.contains("already has 10 push notification configs"),
        "{v}"
    );
    assert!(text.contains(r#""field":"taskId""#), "{v}");
    let r = rest(
        reqwest::Method::POST,
        format!("{}/tasks/{task}/pushNotificationConfigs", s.base),
    )
    .json(&json!({"id": "c11", "url": format!("https://{HOOKS}/c11")}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["status"], "INVALID_ARGUMENT", "{e}");
    assert!(e["error"]["message"].to_string().contains("10"), "{e}");
    let ten: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
    assert_eq!(config_ids(&s.base, &task).await, ten, "nothing was stored");

    // Replacing at the limit works, in place.
    let v = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c3", "url": format!("https://{HOOKS}/c3-v2")}),
    )
    .await;
    assert_eq!(v["result"]["url"], format!("https://{HOOKS}/c3-v2"), "{v}");
    assert_eq!(config_ids(&s.base, &task).await, ten);
    // A deleted config makes room.
    rpc(
        &s.base,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c0"}),
    )
    .await;
    let v = create_config(&s.base, &task, "c10").await;
    assert_eq!(v["result"]["id"], "c10", "{v}");
}

/// A SendMessage continuing a task at the limit with a config of its own is refused before
/// anything changes: the message is not added, and the skill waiting in `ask` still waits
/// (the next reply, without a config, reaches it).
#[tokio::test]
async fn a_follow_up_carrying_a_config_beyond_the_limit_changes_nothing() {
    let s = serve_push_with(|b| b.push_configs_per_task(2)).await;
    let task = new_task(&s.base).await;
    for id in ["a", "b"] {
        assert!(create_config(&s.base, &task, id).await["result"].is_object());
    }
    let mut reply = user_text("Ada");
    reply["taskId"] = json!(task);
    let v = rpc(
        &s.base,
        "SendMessage",
        json!({"message": reply, "configuration": {"taskPushNotificationConfig": {"url": format!("https://{HOOKS}/c")}}}),
    )
    .await;
    assert_eq!(code(&v), -32602, "{v}");
    let text = v["error"].to_string();
    assert!(
        text.contains("configuration.taskPushNotificationConfig"),
        "{v}"
    );
    assert!(
        text.contains("already has 2 push notification configs"),
        "{v}"
    );
    let got = rpc(&s.base, "GetTask", json!({"id": task})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{got}"
    );
    let history = got["result"]["history"].as_array().unwrap();
    assert!(
        history.iter().all(|m| m["parts"][0]["text"] != "Ada"),
        "the refused message was kept: {got}"
    );
    assert_eq!(config_ids(&s.base, &task).await, ["a", "b"]);

    let mut reply = user_text("Ada");
    reply["taskId"] = json!(task);
    let v = rpc(&s.base, "SendMessage", json!({"message": reply})).await;
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
}

/// The count and the insert are one step: creations racing at one short of the limit store
/// one config between them.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_creations_at_the_limit_store_one() {
    let s = serve_push().await;
    let task = new_task(&s.base).await;
    for i in 0..9 {
        create_config(&s.base, &task, &format!("c{i}")).await;
    }
    let racing: Vec<_> = (0..8)
        .map(|i| {
            let (base, task) = (s.base.clone(), task.clone());
            tokio::spawn(async move { create_config(&base, &task, &format!("r{i}")).await })
        })
        .collect();
    let mut stored = 0;
    for r in racing {
        let v = r.await.unwrap();
        if v["result"].is_object() {
            stored += 1;
        } else {
            assert_eq!(code(&v), -32602, "{v}");
        }
    }
    assert_eq!(stored, 1);
    assert_eq!(config_ids(&s.base, &task).await.len(), 10);
}

#[test]
fn a_limit_of_zero_does_not_build() {
    let err = AgentService::builder(TestAgent)
        .push_delivery(push_config())
        .push_configs_per_task(0)
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::ZeroPushConfigsPerTask);
}

// ----- host names resolved at creation --------------------------------------------------------

/// A webhook host name that resolves to a private address (here pinned, as a line in
/// `/etc/hosts` or an internal DNS zone would make it) is refused when the config is
/// created, over both bindings and inline in SendMessage: InvalidParams naming the url field,
/// saying where it resolves and how an operator allows it. Nothing is stored. Allowed by
/// name, it is accepted.
#[tokio::test]
async fn a_host_resolving_to_a_private_address_is_refused_at_creation() {
    let internal = "hooks.internal.example";
    let private = PushConfig::default().pin_host(internal, [IpAddr::from([10, 0, 0, 5])]);
    let s = serve(AgentService::builder(TestAgent).push_delivery(private.clone())).await;
    let task = new_task(&s.base).await;
    let url = format!("https://{internal}/hook");
    let v = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": url}),
    )
    .await;
    assert_eq!(code(&v), -32602, "{v}");
    let text = v["error"].to_string();
    assert!(text.contains(r#""field":"url""#), "{v}");
    assert!(
        text.contains("hooks.internal.example resolves to 10.0.0.5, a private address"),
        "{v}"
    );
    assert!(text.contains("allowlist"), "{v}");

    let r = rest(
        reqwest::Method::POST,
        format!("{}/tasks/{task}/pushNotificationConfigs", s.base),
    )
    .json(&json!({"url": url}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert!(e["error"].to_string().contains("a private address"), "{e}");

    let inline = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("echo", "x"), "configuration": {"taskPushNotificationConfig": {"url": url}}}),
    )
    .await;
    assert_eq!(code(&inline), -32602, "{inline}");
    assert!(
        inline["error"]
            .to_string()
            .contains("configuration.taskPushNotificationConfig.url"),
        "{inline}"
    );
    assert!(
        config_ids(&s.base, &task).await.is_empty(),
        "nothing stored"
    );
    let tasks = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(
        tasks["result"]["totalSize"], 1,
        "no task for the inline config: {tasks}"
    );

    let allowed = private.ssrf(SsrfPolicy::allowlist([internal]).unwrap());
    let s = serve(AgentService::builder(TestAgent).push_delivery(allowed)).await;
    let task = new_task(&s.base).await;
    let v = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": url}),
    )
    .await;
    assert_eq!(v["result"]["url"], url.as_str(), "{v}");
}

/// The system resolver is asked: `localhost` resolves to loopback whatever the URL check
/// said (here one that accepts any URL). A name that does not resolve is refused too.
#[tokio::test]
async fn names_are_resolved_when_a_config_is_created() {
    let s = serve_push_with(|b| b.webhook_validator(|_| Ok(()))).await;
    let task = new_task(&s.base).await;
    for (url, why) in [
        ("http://localhost:9/hook", "localhost resolves to"),
        (
            "https://no-such-host.invalid/hook",
            "no-such-host.invalid does not resolve",
        ),
    ] {
        let v = rpc(
            &s.base,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": url}),
        )
        .await;
        assert_eq!(code(&v), -32602, "{url}: {v}");
        assert!(v["error"].to_string().contains(why), "{url}: {v}");
    }
    assert!(config_ids(&s.base, &task).await.is_empty());
}
