//! A database that goes away while the agent serves: requests get the spec's error
//! (-32603 over JSON-RPC; 503 with `Retry-After` over HTTP+JSON), never a hang or a panic, and
//! the agent serves again as soon as the database is back. A TCP relay in front of
//! PostgreSQL plays the outage.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a_kit::server::AgentService;
use a2a_kit::store::{PostgresOptions, PostgresTaskManager};
use a2a_tests::{TestAgent, client, rpc, serve, to_skill};
use serde_json::json;
use tokio::sync::watch;

/// A TCP relay to PostgreSQL that can go down (every connection cut, new ones closed at once).
struct Relay {
    port: u16,
    up: Arc<AtomicBool>,
    cut: watch::Sender<u64>,
}

impl Relay {
    async fn start(upstream: String) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let (cut, _) = watch::channel(0u64);
        let (up2, cut2) = (up.clone(), cut.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let upstream = upstream.clone();
                let mut cut = cut2.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Relay { port, up, cut }
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// The test server's URL split at its host and port: (`scheme://user@`, `host:port`, `/db…`).
fn url_parts() -> (String, String, String) {
    let url = a2a_tests::postgres_url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, rest) = rest.rsplit_once('@').map_or(("", rest), |(u, r)| (u, r));
    let (host_port, path) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let at = if user.is_empty() {
        String::new()
    } else {
        format!("{user}@")
    };
    (
        format!("{scheme}://{at}"),
        host_port.to_string(),
        format!("/{path}"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_a_spec_error_and_the_agent_recovers() {
    let (head, upstream, path) = url_parts();
    let relay = Relay::start(upstream).await;
    let url = format!("{head}127.0.0.1:{}{path}", relay.port);
    let schema = format!("outage_{}", std::process::id());
    let store = PostgresTaskManager::connect_with(
        &url,
        PostgresOptions::default()
            .schema(&schema)
            .acquire_timeout(Duration::from_millis(800)),
    )
    .await
    .expect("connect through the relay");
    let s = serve(AgentService::builder(TestAgent).task_manager(store.clone())).await;
    let send = json!({"message": to_skill("echo", "before")});
    let ok = rpc(&s.base, "SendMessage", send.clone()).await;
    assert_eq!(
        ok["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{ok}"
    );

    relay.down();
    let failed = tokio::time::timeout(
        Duration::from_secs(20),
        rpc(&s.base, "SendMessage", send.clone()),
    )
    .await
    .expect("an answer, not a hang");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("unreachable"), "{failed}");
    let rest = client()
        .get(format!("{}/tasks?pageSize=1", s.base))
        .header("a2a-version", "1.0")
        .send()
        .await
        .unwrap();
    let status = rest.status();
    let retry_after = rest.headers().get("retry-after").cloned();
    let body: serde_json::Value = rest.json().await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry_after.unwrap(), "1");
    assert_eq!(body["error"]["status"], "UNAVAILABLE", "{body}");

    relay.up();
    let mut back = serde_json::Value::Null;
    for _ in 0..100 {
        back = rpc(&s.base, "SendMessage", send.clone()).await;
        if back.get("result").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        back["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the agent did not serve again once the database came back: {back}"
    );
    store.drop_schema().await.unwrap();
}

#[tokio::test]
async fn a_bad_database_url_fails_at_once_with_one_clear_line() {
    for (url, says) in [
        (
            "postgres://nobody:hunter2@127.0.0.1:1/x",
            "Connection refused",
        ),
        (
            "postgres://a2a:hunter2@127.0.0.1:5432/x?sslmode=bogus",
            "not a PostgreSQL URL",
        ),
    ] {
        let err = tokio::time::timeout(Duration::from_secs(20), PostgresTaskManager::connect(url))
            .await
            .expect("no hang")
            .expect_err("a bad URL");
        let text = err.to_string();
        assert!(text.contains(says), "{text}");
        assert!(
            !text.contains("hunter2") && text.contains(":***@"),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }
}
