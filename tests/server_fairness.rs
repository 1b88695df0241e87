//! Fairness by caller (issue #29): skill turns and live tasks are shared per caller (the
//! authenticated one, else the client's address), so one client's flood neither holds up
//! another client's task nor fills the store for everyone. Real HTTP on 127.0.0.1, clients on
//! other loopback addresses.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use a2a_kit::binding::HttpConfig;
use a2a_kit::runtime::{CallerShare, ExecutionConfig};
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_tests::*;
use serde_json::{Value, json};

/// `builder` served by the standalone server on a random port; its base URL.
async fn serve_standalone(builder: AgentServiceBuilder) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let service = builder.build().expect("valid");
    tokio::spawn(a2a_kit_axum::serve_service_with(
        service,
        listener,
        std::future::pending(),
        a2a_kit_axum::ServerLimits::default(),
    ));
    base
}

/// A client whose connections come from the loopback address `127.0.0.n`.
fn client_from(n: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from([127, 0, 0, n]))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

fn sharing(per_caller: CallerShare, running: usize) -> ExecutionConfig {
    ExecutionConfig {
        max_running_skills: running,
        per_caller,
        cancel_grace: Duration::from_millis(200),
        ..Default::default()
    }
}

/// SendMessage of `text` to `skill` over JSON-RPC (returning at once if `now`).
async fn send(client: &reqwest::Client, base: &str, skill: &str, text: &str, now: bool) -> Value {
    client
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": to_skill(skill, text),
                       "configuration": {"returnImmediately": now}}}))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// The message of a JSON-RPC error answer (empty if it is none).
fn refusal(v: &Value) -> &str {
    v["error"]["message"].as_str().unwrap_or("")
}

fn state(v: &Value) -> &str {
    v["result"]["task"]["status"]["state"]
        .as_str()
        .unwrap_or("")
}

/// The finding: one client's 11,200 submissions made another client's 1 s task wait 38.6 s,
/// then everyone got 503. Now the flooding client holds its share of the turns and of the
/// queue; the other client's task runs at once.
#[tokio::test]
async fn one_clients_backlog_does_not_hold_up_another_clients_task() {
    let share = CallerShare {
        running_skills: 2,
        waiting_skills: 5,
        live_tasks: 100,
    };
    let base =
        serve_standalone(AgentService::builder(TestAgent).execution(sharing(share, 4))).await;
    let hog = client_from(2);
    // Two running for a minute, five waiting behind them: the hog's whole share.
    for _ in 0..7 {
        let v = send(&hog, &base, "slow", "60000", true).await;
        assert!(
            matches!(state(&v), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
            "{v}"
        );
    }
    let asked = std::time::Instant::now();
    let refused = send(&hog, &base, "slow", "60000", true).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    // Held until its Retry-After is over: a client asking again at once is paced.
    assert!(
        asked.elapsed() >= Duration::from_millis(900),
        "{:?}",
        asked.elapsed()
    );
    let message = refusal(&refused);
    assert!(
        message.contains("client 127.0.0.2 has 5 runs waiting for a turn, its share"),
        "{message}"
    );
    // Another client's task is not queued behind the hog's backlog.
    let other = client_from(3);
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        send(&other, &base, "echo", "hello", false),
    )
    .await
    .expect("answered without waiting for the hog's runs");
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    // And it may queue runs of its own.
    let v = send(&other, &base, "slow", "60000", true).await;
    assert!(v["result"]["task"]["id"].is_string(), "{v}");
}

/// The finding: one address filled the in-memory store with 100,000 tasks waiting for replies
/// in about 10 s, and every new task of anyone was refused for an hour. Now one client holds
/// at most its share of live tasks; others go on, and an ended task makes room.
#[tokio::test]
async fn one_client_cannot_fill_the_agent_with_waiting_tasks() {
    let share = CallerShare {
        live_tasks: 3,
        ..Default::default()
    };
    let base =
        serve_standalone(AgentService::builder(TestAgent).execution(sharing(share, 64))).await;
    let hog = client_from(2);
    let mut asked = Vec::new();
    for i in 0..3 {
        let v = send(&hog, &base, "ask", &format!("q{i}"), false).await;
        assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
        asked.push(v["result"]["task"]["id"].as_str().unwrap().to_string());
    }
    let resp = hog
        .post(format!("{base}/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": to_skill("ask", "one more")}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let v: Value = resp.json().await.unwrap();
    assert!(
        refusal(&v).contains("client 127.0.0.2 has 3 live tasks, its share"),
        "{v}"
    );
    let other = client_from(3);
    let v = send(&other, &base, "ask", "mine", false).await;
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    // One of the hog's tasks is cancelled: its share has room again.
    let v: Value = hog
        .post(&base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "CancelTask",
                      "params": {"id": asked[0]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["status"]["state"], "TASK_STATE_CANCELED", "{v}");
    let mut again = Value::Null;
    for _ in 0..50 {
        again = send(&hog, &base, "ask", "again", false).await;
        if state(&again) == "TASK_STATE_INPUT_REQUIRED" {
            break;
        }
        // The cancelled run lets go of its live task as it ends, just after the answer.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state(&again), "TASK_STATE_INPUT_REQUIRED", "{again}");
}

/// Mounted in an app, the client's address comes from axum's `ConnectInfo`, or behind a
/// trusted proxy from `X-Forwarded-For` / `Forwarded`; untrusted, those headers name nobody.
#[tokio::test]
async fn mounted_agents_count_shares_by_connect_info_or_a_trusted_proxy() {
    let share = CallerShare {
        live_tasks: 1,
        ..Default::default()
    };
    let builder = || AgentService::builder(TestAgent).execution(sharing(share, 64));
    // With ConnectInfo: each address its own share.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = a2a_kit_axum::app(builder().build().unwrap());
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap()
    });
    let first = send(&client_from(2), &base, "ask", "q", false).await;
    assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
    let over = send(&client_from(2), &base, "ask", "q", false).await;
    assert!(
        refusal(&over).contains("client 127.0.0.2 has 1 live tasks"),
        "{over}"
    );
    let other = send(&client_from(3), &base, "ask", "q", false).await;
    assert_eq!(state(&other), "TASK_STATE_INPUT_REQUIRED", "{other}");

    // Behind a trusted proxy: the address the proxy added (the last one).
    let proxied = serve_with(
        builder(),
        HttpConfig::default().trust_forwarded_headers(true),
    )
    .await;
    let via = |forwarded: (&'static str, &'static str)| {
        let base = proxied.base.clone();
        async move {
            client()
                .post(&base)
                .header("A2A-Version", "1.0")
                .header(forwarded.0, forwarded.1)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                              "params": {"message": to_skill("ask", "q")}}))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let v = via(("x-forwarded-for", "192.0.2.9, 198.51.100.7")).await;
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    // The same client by the other header, a forged first hop in front.
    let v = via(("forwarded", "for=192.0.2.9, for=\"198.51.100.7:4711\"")).await;
    assert!(
        refusal(&v).contains("client 198.51.100.7 has 1 live tasks"),
        "{v}"
    );
    let v = via(("forwarded", "for=\"[2001:db8::7]:80\"")).await;
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    // The same /64.
    let v = via(("x-forwarded-for", "2001:db8::1234")).await;
    assert!(
        refusal(&v).contains("client 2001:db8:: has 1 live tasks"),
        "{v}"
    );

    // Not trusted, and no ConnectInfo: nobody's share (the global bounds still hold).
    let untrusted = serve(builder()).await;
    for _ in 0..3 {
        let v: Value = client()
            .post(&untrusted.base)
            .header("A2A-Version", "1.0")
            .header("x-forwarded-for", "192.0.2.9")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                          "params": {"message": to_skill("ask", "q")}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    }
}

/// A task its skill left INPUT_REQUIRED by returning (no run waits for the reply) holds its
/// place in the store all the same: it stays counted against its client's share until the
/// reply's run ends or the task is cancelled.
#[tokio::test]
async fn tasks_left_waiting_without_a_run_count_against_the_share() {
    let share = CallerShare {
        live_tasks: 2,
        ..Default::default()
    };
    let base =
        serve_standalone(AgentService::builder(TestAgent).execution(sharing(share, 64))).await;
    let hog = client_from(2);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let v = send(&hog, &base, "stateless", "one", false).await;
        assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
        ids.push(v["result"]["task"]["id"].as_str().unwrap().to_string());
    }
    let over = send(&hog, &base, "stateless", "one", false).await;
    assert!(
        refusal(&over).contains("client 127.0.0.2 has 2 live tasks"),
        "{over}"
    );
    // A reply continues the task (it asks again): still one live task, not two.
    let reply = |id: &str| {
        let mut m = user_text("two");
        m["taskId"] = json!(id);
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": m}})
    };
    let v: Value = hog
        .post(&base)
        .header("A2A-Version", "1.0")
        .json(&reply(&ids[0]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    let over = send(&hog, &base, "stateless", "one", false).await;
    assert!(over["error"].is_object(), "{over}");
    // Cancelled, it makes room at once.
    let v: Value = hog
        .post(&base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "CancelTask",
                      "params": {"id": ids[1]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["status"]["state"], "TASK_STATE_CANCELED", "{v}");
    let v = send(&hog, &base, "stateless", "one", false).await;
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
    // Its third message completes the first task: room again.
    let v: Value = hog
        .post(&base)
        .header("A2A-Version", "1.0")
        .json(&reply(&ids[0]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state(&v), "TASK_STATE_COMPLETED", "{v}");
    let v = send(&hog, &base, "stateless", "one", false).await;
    assert_eq!(state(&v), "TASK_STATE_INPUT_REQUIRED", "{v}");
}

/// Over h2c (each stream in a task of its own) the client is known all the same.
#[tokio::test]
async fn h2c_clients_are_counted_by_address_too() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let share = CallerShare {
        live_tasks: 1,
        ..Default::default()
    };
    let base =
        serve_standalone(AgentService::builder(TestAgent).execution(sharing(share, 64))).await;
    let addr = base.trim_start_matches("http://").to_string();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from(([127, 0, 0, 4], 0))).unwrap();
    let tcp = socket.connect(addr.parse().unwrap()).await.unwrap();
    let (mut h2, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    let mut ask = async || {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                          "params": {"message": to_skill("ask", "q")}});
        let request = http::Request::post(&base)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_string(),
            )))
            .unwrap();
        let resp = h2.send_request(request).await.expect("h2c request");
        assert_eq!(resp.version(), http::Version::HTTP_2);
        let bytes = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .unwrap()
            .to_bytes();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    let first = ask().await;
    assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
    let over = ask().await;
    assert!(
        refusal(&over).contains("client 127.0.0.4 has 1 live tasks"),
        "{over}"
    );
}
