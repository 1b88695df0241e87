//! Authentication at the agent's edge (issue #19): API keys refuse unknown callers with 401
//! and `WWW-Authenticate` in both bindings before the request is read; the card stays public
//! and names the scheme; the client's API key gets through.

use a2a_kit::auth::ApiKeys;
use a2a_kit::client::A2aClient;
use a2a_kit::server::AgentService;
use a2a_tests::{TestAgent, client, send_message, serve, to_skill};
use serde_json::{Value, json};

fn keys() -> ApiKeys {
    ApiKeys::header("X-API-Key")
        .key("alice-key", "alice")
        .key("bob-key", "bob")
}

/// SendMessage of "hi" to `echo` over one binding, with `key` in `X-API-Key` if given.
async fn send_with_api_key(base: &str, key: Option<&str>, rest: bool) -> reqwest::Response {
    let credential = key.map(|k| ("X-API-Key", k));
    send_message(base, rest, to_skill("echo", "hi"), credential).await
}

async fn get_json(url: String, key: Option<&str>) -> Value {
    let mut req = client().get(url).header("A2A-Version", "1.0");
    if let Some(key) = key {
        req = req.header("X-API-Key", key);
    }
    req.send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn api_keys_refuse_unknown_callers_in_both_bindings() {
    let s = serve(AgentService::builder(TestAgent).authenticate(keys())).await;

    // The card is public and says how to authenticate.
    let card = get_json(format!("{}/.well-known/agent-card.json", s.base), None).await;
    assert_eq!(
        card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"],
        json!({"description": "An API key the agent's operator issued.", "location": "header", "name": "X-API-Key"}),
        "{card}"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"apiKey": {}}}])
    );

    for rest in [false, true] {
        let long = "k".repeat(4096);
        for (key, why) in [
            (None, "no key"),
            (Some("carol-key"), "an unknown key"),
            (Some(""), "an empty key"),
            (Some(long.as_str()), "an oversized key"),
        ] {
            let resp = send_with_api_key(&s.base, key, rest).await;
            assert_eq!(resp.status(), 401, "{why}, rest {rest}");
            assert_eq!(
                resp.headers()["www-authenticate"],
                "ApiKey realm=\"a2a\", header=\"X-API-Key\"",
                "{why}"
            );
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["code"], 401, "{why}: {body}");
            assert_eq!(body["error"]["status"], "UNAUTHENTICATED", "{why}: {body}");
        }
        let resp = send_with_api_key(&s.base, Some("bob-key"), rest).await;
        assert_eq!(resp.status(), 200, "rest {rest}");
        let body: Value = resp.json().await.unwrap();
        let task = if rest {
            &body["task"]
        } else {
            &body["result"]["task"]
        };
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{body}");
    }
    // Refused before anything was stored: only Bob's two accepted sends made tasks (his:
    // Alice lists none of them).
    let list = get_json(format!("{}/tasks", s.base), Some("bob-key")).await;
    assert_eq!(list["totalSize"], 2, "{list}");
    let list = get_json(format!("{}/tasks", s.base), Some("alice-key")).await;
    assert_eq!(list["totalSize"], 0, "{list}");
}

#[tokio::test]
async fn the_client_sends_its_key_and_keys_may_come_in_the_query() {
    let s = serve(AgentService::builder(TestAgent).authenticate(keys())).await;
    let client_ok = A2aClient::builder()
        .api_key("X-API-Key", "alice-key")
        .connect(&s.base)
        .await
        .expect("the card needs no key");
    let task = client_ok.get_task("nope").await.expect_err("no such task");
    assert_eq!(
        task.code(),
        Some(-32001),
        "authenticated, then not found: {task}"
    );
    let anonymous = A2aClient::connect(&s.base)
        .await
        .expect("the card is public");
    let err = anonymous.get_task("nope").await.expect_err("refused");
    assert!(err.to_string().contains("401"), "{err}");

    let q = serve(
        AgentService::builder(TestAgent).authenticate(ApiKeys::query("api_key").key("k", "q")),
    )
    .await;
    let list = |key: &'static str| {
        client()
            .get(format!("{}/tasks?api_key={key}", q.base))
            .header("A2A-Version", "1.0")
            .send()
    };
    assert_eq!(list("k").await.unwrap().status(), 200);
    let no = list("x").await.unwrap();
    assert_eq!(no.status(), 401);
    assert_eq!(
        no.headers()["www-authenticate"],
        "ApiKey realm=\"a2a\", query=\"api_key\""
    );
}

/// An agent whose skills ask who is calling.
#[derive(Clone, Default)]
struct WhoAmI;

/// Says who is calling.
#[a2a_kit::a2a_agent(name = "Who Am I")]
impl WhoAmI {
    /// The caller's subject; only for authenticated callers.
    #[skill]
    async fn whoami(&self, caller: a2a_kit::prelude::Caller) -> String {
        caller.subject
    }

    /// The caller's subject, or "anonymous".
    #[skill]
    async fn maybe(&self, caller: Option<a2a_kit::prelude::Caller>) -> String {
        caller.map_or_else(|| "anonymous".into(), |c| c.subject)
    }
}

async fn answer(base: &str, key: Option<&str>, skill: &str, stream: bool) -> Value {
    let method = if stream {
        "SendStreamingMessage"
    } else {
        "SendMessage"
    };
    let mut req = client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method,
            "params": {"message": to_skill(skill, "x")}}));
    if let Some(key) = key {
        req = req.header("X-API-Key", key);
    }
    let text = req.send().await.unwrap().text().await.unwrap();
    if !stream {
        return serde_json::from_str(&text).unwrap();
    }
    // The artifact event of the stream.
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .find(|v| v["result"].get("artifactUpdate").is_some())
        .unwrap_or_else(|| panic!("no artifact in {text}"))
}

#[tokio::test]
async fn skills_see_who_is_calling() {
    let s = serve(AgentService::builder(WhoAmI).authenticate(keys())).await;
    let v = answer(&s.base, Some("bob-key"), "whoami", false).await;
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"], "bob",
        "{v}"
    );
    let v = answer(&s.base, Some("alice-key"), "whoami", true).await;
    assert_eq!(
        v["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"], "alice",
        "{v}"
    );

    // Without an authenticator there is no caller: a skill that needs one is refused with
    // a reason, one that takes `Option<Caller>` runs for anyone.
    let open = serve(AgentService::builder(WhoAmI)).await;
    let v = answer(&open.base, None, "whoami", false).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("authenticated caller"),
        "{v}"
    );
    let v = answer(&open.base, None, "maybe", false).await;
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"], "anonymous",
        "{v}"
    );
}

async fn rpc_as(base: &str, key: &str, method: &str, params: Value) -> reqwest::Response {
    client()
        .post(base)
        .header("A2A-Version", "1.0")
        .header("X-API-Key", key)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
}

/// Each caller gets its share: live tasks (tasks whose skill runs or waits) and requests a
/// second, counted per caller, refused with when to come back.
#[tokio::test]
async fn caller_quotas_hold_each_caller_to_its_share() {
    use a2a_kit::runtime::{CallerQuota, CallerShare, ExecutionConfig};
    let quota = CallerQuota {
        requests_per_second: 1000,
        burst: 1000,
    };
    let share = |live_tasks| ExecutionConfig {
        per_caller: CallerShare {
            live_tasks,
            ..Default::default()
        },
        ..Default::default()
    };
    let s = serve(
        AgentService::builder(TestAgent)
            .authenticate(keys())
            .caller_quota(quota)
            .execution(share(2)),
    )
    .await;
    let ask = |key: &'static str| {
        let base = s.base.clone();
        async move {
            let resp = rpc_as(
                &base,
                key,
                "SendMessage",
                json!({"message": to_skill("ask", "q")}),
            )
            .await;
            let retry = resp.headers().get("retry-after").cloned();
            (resp.json::<Value>().await.unwrap(), retry)
        }
    };
    let (first, _) = ask("bob-key").await;
    let (second, _) = ask("bob-key").await;
    for v in [&first, &second] {
        assert_eq!(
            v["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{v}"
        );
    }
    let (third, retry) = ask("bob-key").await;
    assert_eq!(third["error"]["code"], -32603, "{third}");
    assert!(
        third["error"]["message"]
            .as_str()
            .unwrap()
            .contains("caller `bob` has 2 live tasks, its share"),
        "{third}"
    );
    assert_eq!(retry.expect("Retry-After"), "1");
    // Another caller is not held back by bob's tasks.
    let (alice, _) = ask("alice-key").await;
    assert_eq!(
        alice["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{alice}"
    );
    // One of bob's tasks ends: there is room for another.
    let mut reply = a2a_tests::user_text("done");
    reply["taskId"] = first["result"]["task"]["id"].clone();
    let v: Value = rpc_as(&s.base, "bob-key", "SendMessage", json!({"message": reply}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
    let (again, _) = ask("bob-key").await;
    assert_eq!(
        again["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{again}"
    );

    // Requests a second: over the burst, 429 with Retry-After before the request is read.
    let rate = serve(
        AgentService::builder(TestAgent)
            .authenticate(keys())
            .caller_quota(CallerQuota {
                requests_per_second: 1,
                burst: 2,
            }),
    )
    .await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let resp = rpc_as(&rate.base, "bob-key", "GetTask", json!({"id": "t"})).await;
        statuses.push(resp.status().as_u16());
        if resp.status() == 429 {
            assert_eq!(resp.headers()["retry-after"], "1");
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
        }
    }
    assert_eq!(statuses, [200, 200, 429]);
    let alice = rpc_as(&rate.base, "alice-key", "GetTask", json!({"id": "t"})).await;
    assert_eq!(alice.status(), 200);

    // A quota needs callers, and room; a share, room.
    let err = AgentService::builder(TestAgent)
        .caller_quota(quota)
        .build()
        .expect_err("no authenticator");
    assert!(err.to_string().contains("authenticator"), "{err}");
    let err = AgentService::builder(TestAgent)
        .authenticate(keys())
        .caller_quota(CallerQuota { burst: 0, ..quota })
        .build()
        .expect_err("zero");
    assert!(err.to_string().contains("burst"), "{err}");
    let err = AgentService::builder(TestAgent)
        .execution(share(0))
        .build()
        .expect_err("zero");
    assert!(
        err.to_string().contains("per_caller: ") && err.to_string().contains("live_tasks"),
        "{err}"
    );
}
