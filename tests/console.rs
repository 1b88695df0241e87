//! The console (a2a-kit-axum feature `console`) over real HTTP: its embedded page and the
//! headers that lock it down, the card's signature status, its own endpoints behind the
//! agent's authentication and scoping, the inbox that records the agent's push deliveries,
//! and the remote console forwarding to an agent elsewhere (SSE and `Last-Event-ID`
//! included). The page itself is driven in a browser by `examples/tests/console.rs`.

use std::time::Duration;

use a2a_examples::workshop::{WorkshopAgent, a2a_with};
use a2a_kit::auth::ApiKeys;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_kit::signing::Signer;
use a2a_kit_axum::console::Console;
use serde_json::{Value, json};

struct Served {
    base: String,
    service: AgentService,
}

/// The agent with its console, on a random port.
async fn serve_with_console(builder: AgentServiceBuilder) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let service = builder.public_url(&base).build().unwrap();
    let app: axum::Router = a2a_kit_axum::router(&service).merge(Console::new(&service).router());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Served { base, service }
}

async fn spawn(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn workshop() -> AgentServiceBuilder {
    a2a_with(
        WorkshopAgent::new(Duration::from_millis(50)),
        Duration::from_secs(60),
    )
}

/// GET `url`; its JSON body.
async fn get_json(url: impl reqwest::IntoUrl) -> Value {
    http().get(url).send().await.unwrap().json().await.unwrap()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A JSON-RPC call; the whole answer.
async fn rpc(url: &str, key: Option<&str>, method: &str, params: Value) -> (u16, Value) {
    let mut req = http()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(key) = key {
        req = req.header("X-API-Key", key);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn build_message(text: &str) -> Value {
    json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
        "parts": [{"text": text}], "metadata": {"skillId": "build"}},
        "configuration": {"returnImmediately": true}})
}

/// Send `build` and wait until the workshop asks its question: the task id.
async fn task_waiting_for_input(base: &str, key: Option<&str>) -> String {
    let (_, answer) = rpc(base, key, "SendMessage", build_message("a stool")).await;
    let id = answer["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string();
    for _ in 0..200 {
        let (_, t) = rpc(base, key, "GetTask", json!({"id": id})).await;
        if t["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the task never asked its question");
}

#[tokio::test]
async fn the_page_is_embedded_revalidated_and_locked_down() {
    let s = serve_with_console(workshop()).await;
    let c = http();
    let r = c.get(format!("{}/_console", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 308);
    assert_eq!(r.headers()["location"], "/_console/");

    let r = c.get(format!("{}/_console/", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'")
            && csp.contains("connect-src 'self'")
            && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(h["x-content-type-options"], "nosniff");
    let page = r.text().await.unwrap();
    assert!(
        page.contains("<script type=\"module\" src=\"app.js\">"),
        "{page}"
    );
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing is loaded from elsewhere"
    );

    let r = c
        .get(format!("{}/_console/app.js", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let etag = r.headers()["etag"].clone();
    let again = c
        .get(format!("{}/_console/app.js", s.base))
        .header("If-None-Match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // Every module the page imports is served (one missing would leave the page blank).
    let mut modules = vec!["app.js".to_string()];
    let mut read = 0;
    while read < modules.len() {
        let js = c
            .get(format!("{}/_console/{}", s.base, modules[read]))
            .send()
            .await
            .unwrap();
        assert_eq!(js.status(), 200, "{}", modules[read]);
        assert_eq!(
            js.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
        let text = js.text().await.unwrap();
        for import in text.lines().filter_map(|l| l.split(" from \"./").nth(1)) {
            let name = import.trim_end_matches(['"', ';']).to_string();
            if !modules.contains(&name) {
                modules.push(name);
            }
        }
        read += 1;
    }
    assert!(modules.len() >= 5, "{modules:?}");

    let r = c
        .get(format!("{}/_console/nope.js", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(r.text().await.unwrap().contains("nope.js"));

    let config: Value = get_json(format!("{}/_console/config.json", s.base)).await;
    assert_eq!(config["mode"], "local");
    assert_eq!(config["cardPath"], "/.well-known/agent-card.json");
}

#[tokio::test]
async fn without_the_console_nothing_is_served_there() {
    let service = workshop().build().unwrap();
    let base = spawn(a2a_kit_axum::router(&service)).await;
    let r = http()
        .get(format!("{base}/_console/"))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    let body = r.text().await.unwrap();
    assert!(!body.contains("<html"), "{body}");
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/signing/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[tokio::test]
async fn the_cards_signature_status_is_checked_against_the_agents_keys() {
    let signer = Signer::from_pem(fixture("es256.pem"), "card-es256").unwrap();
    let s = serve_with_console(workshop().sign_card(signer)).await;
    let c = http();
    let card: Value = get_json(format!("{}/.well-known/agent-card.json", s.base)).await;
    let verify = |card: Value| {
        let c = c.clone();
        let url = format!("{}/_console/api/verify-card", s.base);
        async move {
            let r = c.post(url).json(&card).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (status, v) = verify(card.clone()).await;
    assert_eq!(
        (status, &v["status"], &v["kid"]),
        (200, &json!("verified"), &json!("card-es256"))
    );

    let mut tampered = card.clone();
    tampered["name"] = json!("Not the workshop");
    let (_, v) = verify(tampered).await;
    assert_eq!(v["status"], "invalid", "{v}");
    assert!(
        v["detail"].as_str().unwrap().contains("bad signature"),
        "{v}"
    );

    let mut unsigned = card;
    unsigned.as_object_mut().unwrap().remove("signatures");
    assert_eq!(verify(unsigned).await.1["status"], "unsigned");

    let r = c
        .post(format!("{}/_console/api/verify-card", s.base))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("not a JSON card"));
    let _ = s.service;
}

#[tokio::test]
async fn the_consoles_endpoints_authenticate_and_never_show_anothers_task() {
    let keys = ApiKeys::header("X-API-Key")
        .key("alice-key", "alice")
        .key("bob-key", "bob");
    let s = serve_with_console(workshop().authenticate(keys)).await;
    let task = task_waiting_for_input(&s.base, Some("alice-key")).await;
    let c = http();
    let deliveries = |key: Option<&'static str>| {
        let mut req = c.get(format!("{}/_console/api/deliveries?task={task}", s.base));
        if let Some(key) = key {
            req = req.header("X-API-Key", key);
        }
        async move {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let challenge = r.headers().get("www-authenticate").cloned();
            (status, challenge, r.json::<Value>().await.unwrap())
        }
    };
    let (status, challenge, body) = deliveries(None).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.is_some());
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    let (status, _, body) = deliveries(Some("wrong-key")).await;
    assert_eq!(status, 401, "{body}");
    // Bob cannot learn that Alice's task exists.
    let (status, _, body) = deliveries(Some("bob-key")).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("not found"),
        "{body}"
    );
    let (status, _, body) = deliveries(Some("alice-key")).await;
    assert_eq!((status, body), (200, json!({"deliveries": []})));

    let inbox_config = |key: Option<&'static str>, query: &str| {
        let mut req = c.post(format!("{}/_console/api/inbox-config{query}", s.base));
        if let Some(key) = key {
            req = req.header("X-API-Key", key);
        }
        req.send()
    };
    let task_query = format!("?task={task}");
    assert_eq!(inbox_config(None, &task_query).await.unwrap().status(), 401);
    // Bob cannot have a token for Alice's task (it would bind her deliveries to him).
    assert_eq!(
        inbox_config(Some("bob-key"), &task_query)
            .await
            .unwrap()
            .status(),
        404
    );
    let missing = inbox_config(Some("alice-key"), "").await.unwrap();
    assert_eq!(missing.status(), 400);
    assert!(missing.text().await.unwrap().contains("`task`"));
    assert_eq!(
        inbox_config(Some("alice-key"), &task_query)
            .await
            .unwrap()
            .status(),
        200
    );
    // The page's own calls go through the API: Bob's list has none of Alice's tasks.
    let (_, listed) = rpc(&s.base, Some("bob-key"), "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    let _ = s.service;
}

#[tokio::test]
async fn the_inbox_records_the_agents_deliveries_under_their_task() {
    let s =
        serve_with_console(workshop().push_delivery(a2a_examples::push_worker::push_config(false)))
            .await;
    let task = task_waiting_for_input(&s.base, None).await;
    let c = http();
    let inbox: Value = c
        .post(format!("{}/_console/api/inbox-config?task={task}", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = format!("{}{}", s.base, inbox["path"].as_str().unwrap());
    let (_, created) = rpc(
        &s.base,
        None,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": url, "token": inbox["token"]}),
    )
    .await;
    assert!(created["result"]["id"].is_string(), "{created}");
    let (_, canceled) = rpc(&s.base, None, "CancelTask", json!({"id": task})).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED");
    for _ in 0..250 {
        let seen: Value = get_json(format!("{}/_console/api/deliveries?task={task}", s.base)).await;
        if seen["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["status"] == 204)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Then a delivery with a wrong token: refused, and listed under its task too.
    let refused = c
        .post(&url)
        .header("X-A2A-Notification-Token", "forged")
        .json(&json!({"statusUpdate": {"taskId": task, "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let seen: Value = get_json(format!("{}/_console/api/deliveries?task={task}", s.base)).await;
    let list = seen["deliveries"].as_array().unwrap();
    let refused = list
        .iter()
        .find(|d| d["status"] == 401)
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        refused["refused"].as_str().unwrap().contains("token"),
        "{refused}"
    );
    let accepted = list
        .iter()
        .find(|d| d["status"] == 204)
        .unwrap_or_else(|| panic!("{seen}"));
    assert_eq!(accepted["taskId"], json!(task));
    assert_eq!(accepted["refused"], Value::Null);
    assert_eq!(
        accepted["event"]["task"]["status"]["state"], "TASK_STATE_CANCELED",
        "{accepted}"
    );
    let _ = s.service;
}

/// The SSE events of a streamed answer: `(id, data)`.
async fn sse(res: reqwest::Response) -> Vec<(String, Value)> {
    let text = res.text().await.unwrap();
    text.split("\n\n")
        .filter_map(|block| {
            let id = block.lines().find_map(|l| l.strip_prefix("id: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((id.to_string(), serde_json::from_str(data).unwrap()))
        })
        .collect()
}

#[tokio::test]
async fn a_remote_console_forwards_calls_credentials_and_event_ids() {
    let keys = ApiKeys::header("X-API-Key").key("alice-key", "alice");
    let agent = workshop().authenticate(keys).build().unwrap();
    let agent_base = spawn(a2a_kit_axum::router(&agent)).await;
    let console = Console::remote(&agent_base).unwrap();
    let base = spawn(console.router()).await;
    let c = http();

    let config: Value = get_json(format!("{base}/_console/config.json")).await;
    assert_eq!(config["mode"], "remote");
    assert_eq!(config["remoteOrigin"], json!(agent_base));
    let card: Value = get_json(format!("{base}{}", config["cardPath"].as_str().unwrap())).await;
    assert_eq!(card["name"], "Workshop");

    let proxied = format!("{base}/_console/remote/");
    // The agent's refusal comes back as it is, with its challenge.
    let r = c
        .post(&proxied)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.headers().contains_key("www-authenticate"));

    let task = task_waiting_for_input(&proxied, Some("alice-key")).await;
    let stream = |last: Option<&str>| {
        let mut req = c
            .post(&proxied)
            .header("A2A-Version", "1.0")
            .header("X-API-Key", "alice-key")
            .header("Accept", "text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task}}));
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last);
        }
        req
    };
    // Answer the question through the console; the stream through it ends with the task.
    let (_, answered) = rpc(
        &proxied,
        Some("alice-key"),
        "SendMessage",
        json!({"message": {"messageId": "m-answer", "role": "ROLE_USER", "taskId": task,
            "parts": [{"text": "oak"}]}}),
    )
    .await;
    assert_eq!(
        answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    // The log replays after any event id: up to the question (a stream ends where the task
    // waits for input), then, after it, the rest to the end.
    let first = sse(stream(Some("0")).send().await.unwrap()).await;
    let state = |e: &Value| e["result"]["statusUpdate"]["status"]["state"].clone();
    assert_eq!(
        state(&first.last().unwrap().1),
        "TASK_STATE_INPUT_REQUIRED",
        "{first:?}"
    );
    let later = sse(stream(Some(&first[0].0)).send().await.unwrap()).await;
    assert_eq!(later.len(), first.len() - 1, "{later:?}");
    let rest = sse(stream(Some(&first.last().unwrap().0)).send().await.unwrap()).await;
    assert_eq!(
        state(&rest.last().unwrap().1),
        "TASK_STATE_COMPLETED",
        "{rest:?}"
    );
    assert!(
        rest.iter()
            .any(|(_, e)| e["result"]["artifactUpdate"].is_object()),
        "{rest:?}"
    );

    assert!(
        Console::remote("ftp://example.com")
            .unwrap_err()
            .to_string()
            .contains("http")
    );
    assert!(Console::remote("not a url").is_err());
    // The agent gone: a clear 502 naming it.
    let dead = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let base = spawn(Console::remote(&dead).unwrap().router()).await;
    let r = c
        .get(format!(
            "{base}/_console/remote/.well-known/agent-card.json"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains(&dead), "{body}");
    let _ = agent;
}

#[tokio::test]
async fn an_apps_own_receiver_shows_its_deliveries_to_an_authenticated_caller() {
    use a2a_kit_axum::webhook::{DeliveryLog, PushTokens, WebhookReceiver};
    let log = DeliveryLog::new(10);
    let tokens = PushTokens::new();
    let receiver = WebhookReceiver::new(tokens.clone()).record_to(&log);
    let keys = ApiKeys::header("X-API-Key")
        .key("alice-key", "alice")
        .key("bob-key", "bob");
    let service = workshop().authenticate(keys).build().unwrap();
    let console = Console::new(&service)
        .receiver_log(log)
        .receiver_readers(|caller| caller.subject == "alice");
    let app: axum::Router = a2a_kit_axum::router(&service)
        .merge(console.router())
        .merge(receiver.router("/hook"));
    let base = spawn(app).await;
    let token = tokens.issue().await.unwrap();
    tokens.bind("remote-1", &token).await.unwrap();
    let c = http();
    let update = json!({"statusUpdate": {"taskId": "remote-1", "contextId": "c",
        "status": {"state": "TASK_STATE_WORKING"}}});
    let post = |token: &str| {
        c.post(format!("{base}/hook"))
            .header("X-A2A-Notification-Token", token)
            .json(&update)
            .send()
    };
    assert_eq!(post(&token).await.unwrap().status(), 204);
    assert_eq!(post("forged").await.unwrap().status(), 401);

    let listed = |key: Option<&'static str>| {
        let mut req = c.get(format!("{base}/_console/api/deliveries"));
        if let Some(key) = key {
            req = req.header("X-API-Key", key);
        }
        req.send()
    };
    assert_eq!(listed(None).await.unwrap().status(), 401);
    // The app's remote tasks are no caller's: only the readers it names see them.
    let bob = listed(Some("bob-key")).await.unwrap();
    assert_eq!(bob.status(), 403);
    assert!(bob.text().await.unwrap().contains("receiver_readers"));
    let body: Value = listed(Some("alice-key"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let list = body["deliveries"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{body}");
    assert_eq!(
        (
            &list[0]["status"],
            &list[0]["taskId"],
            &list[0]["event"]["statusUpdate"]["taskId"]
        ),
        (&json!(204), &json!("remote-1"), &json!("remote-1"))
    );
    assert_eq!(
        (&list[1]["status"], &list[1]["taskId"]),
        (&json!(401), &json!("remote-1"))
    );
    assert!(
        list[1]["refused"].as_str().unwrap().contains("token"),
        "{body}"
    );
}

#[tokio::test]
async fn other_sites_scripts_are_refused_and_a_remote_console_answers_only_at_an_address() {
    let s = serve_with_console(workshop()).await;
    let c = http();
    let config = format!("{}/_console/config.json", s.base);
    let status =
        |req: reqwest::RequestBuilder| async move { req.send().await.unwrap().status().as_u16() };
    assert_eq!(
        status(c.get(&config).header("Sec-Fetch-Site", "cross-site")).await,
        403
    );
    assert_eq!(
        status(c.get(&config).header("Origin", "https://evil.example")).await,
        403
    );
    assert_eq!(
        status(c.get(&config).header("Sec-Fetch-Site", "same-origin")).await,
        200
    );
    let own_origin = s.base.clone();
    assert_eq!(
        status(c.get(&config).header("Origin", own_origin)).await,
        200
    );
    // A link from elsewhere to the page still opens it.
    let page = c
        .get(format!("{}/_console/", s.base))
        .header("Sec-Fetch-Site", "cross-site")
        .header("Sec-Fetch-Mode", "navigate");
    assert_eq!(status(page).await, 200);

    // The remote console: an agent that grants any origin CORS, behind it.
    let agent = workshop().build().unwrap();
    let cors = axum::middleware::map_response(|mut r: axum::response::Response| async move {
        r.headers_mut()
            .insert("access-control-allow-origin", "*".parse().unwrap());
        r
    });
    let agent_base = spawn(a2a_kit_axum::router(&agent).layer(cors)).await;
    let base = spawn(Console::remote(&agent_base).unwrap().router()).await;
    let card = format!("{base}/_console/remote/.well-known/agent-card.json");
    let r = c.get(&card).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        !r.headers().contains_key("access-control-allow-origin"),
        "{:?}",
        r.headers()
    );
    let port = base.rsplit(':').next().unwrap();
    let by_name = c
        .get(&card)
        .header("Host", format!("rebound.example:{port}"));
    let r = by_name.send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("localhost or an IP address")
    );
    let by_localhost = c.get(&card).header("Host", format!("localhost:{port}"));
    assert_eq!(status(by_localhost).await, 200);
    let _ = (s.service, agent);
}
