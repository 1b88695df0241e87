//! Signed push deliveries (feature `jose`): an agent whose `PushConfig` has a signer sends
//! `X-A2A-Signature` (a detached JWS over the body, with `iat` and `jti`) with every delivery,
//! and a `WebhookReceiver` that verifies signatures refuses a tampered body, an untrusted key,
//! a missing signature, a stale `iat` and a replayed `jti`, each with 401. The signature
//! covers the body actually sent: the task, whole or trimmed, whichever header carries the
//! token.

use std::time::Duration;

use a2a_kit::protocol::TaskState;
use a2a_kit::push::{PushConfig, PushDispatcher};
use a2a_kit::server::AgentService;
use a2a_kit::signing::{SIGNATURE_HEADER, Signer, Verifier};
use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
use a2a_tests::*;
use serde_json::{Map, Value, json};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/signing/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn push_signer() -> Signer {
    Signer::from_pem(fixture("ed25519.pem"), "push-ed25519").unwrap()
}

fn trusted() -> Verifier {
    Verifier::new().trust_signer(&push_signer())
}

async fn serve_router(router: axum::Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    (
        base,
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() }),
    )
}

#[tokio::test]
async fn a_signed_delivery_is_accepted_and_the_key_is_published() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let receiver = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .verify_signatures(trusted());
    let (app_base, _srv) = serve_router(receiver.router("/hook")).await;
    let hook_url = app_base.replace("127.0.0.1", "localhost") + "/hook";

    let push = PushDispatcher::new(
        PushConfig::default()
            .allow_private_networks()
            .sign(push_signer()),
    );
    let agent = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
    let config = tokens.issue_config(&hook_url).await.unwrap();
    let r = rpc(
        &agent.base,
        "SendMessage",
        json!({"message": to_skill("slow", "200"), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}}),
    )
    .await;
    let task: a2a_kit::protocol::Task =
        serde_json::from_value(r["result"]["task"].clone()).unwrap();
    tokens
        .bind(&task.id, config.token.as_deref().unwrap())
        .await
        .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        tasks.wait_for(&task.id, |t| t.status.state == TaskState::Completed),
    )
    .await
    .expect("the signed delivery was not accepted")
    .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    // The signed body is the task, with its answer.
    assert_eq!(done.artifacts[0].parts[0].as_text(), Some("slept 200"));

    // A `{url, token}` config: the token only in X-A2A-Notification-Token, signed all the
    // same; then a task too large to push whole, trimmed, whose signature covers the trimmed
    // body actually sent.
    let push = PushDispatcher::new(
        PushConfig::default()
            .allow_private_networks()
            .max_task_body(1200)
            .sign(push_signer()),
    );
    let small = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
    let long = "x".repeat(3000);
    for (skill, text, trimmed) in [("slow", "20", false), ("echo", long.as_str(), true)] {
        let token = tokens.issue().await.unwrap();
        let r = rpc(
            &small.base,
            "SendMessage",
            json!({"message": to_skill(skill, text), "configuration": {"returnImmediately": true,
                "taskPushNotificationConfig": {"url": hook_url, "token": token}}}),
        )
        .await;
        let task: a2a_kit::protocol::Task =
            serde_json::from_value(r["result"]["task"].clone()).unwrap();
        tokens.bind(&task.id, &token).await.unwrap();
        let done = tokio::time::timeout(
            Duration::from_secs(10),
            tasks.wait_for(&task.id, |t| t.status.state == TaskState::Completed),
        )
        .await
        .unwrap_or_else(|_| panic!("trimmed {trimmed}: the signed delivery was not accepted"))
        .unwrap();
        assert_eq!(
            a2a_kit::push::TrimmedSnapshot::of(&done).is_some(),
            trimmed,
            "{done:?}"
        );
        if !trimmed {
            assert_eq!(done.artifacts[0].parts[0].as_text(), Some("slept 20"));
        }
    }

    // The push key is in the agent's JWKS, so a receiver can fetch it.
    let jwks = Verifier::new()
        .fetch_jwks(&format!("{}/.well-known/jwks.json", agent.base))
        .await
        .unwrap();
    assert_eq!(jwks.len(), 1);
}

#[tokio::test]
async fn tampered_wrong_key_missing_stale_and_replayed_deliveries_are_refused() {
    let tokens = PushTokens::new();
    let receiver = WebhookReceiver::new(tokens.clone())
        .verify_signatures(trusted())
        .replay_window(Duration::from_secs(60));
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let token = tokens.issue().await.unwrap();
    tokens.bind("task-1", &token).await.unwrap();
    let body = |state: &str| {
        json!({"statusUpdate": {"taskId": "task-1", "contextId": "c", "status": {"state": state}}})
            .to_string()
    };
    let post = |body: String, signature: Option<String>| {
        let mut req = client()
            .post(&url)
            .header("content-type", "application/a2a+json")
            .header("authorization", format!("Bearer {token}"))
            .body(body);
        if let Some(s) = signature {
            req = req.header(SIGNATURE_HEADER, s);
        }
        async move {
            let resp = req.send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        }
    };
    let signer = push_signer();

    // Good: 204.
    let working = body("TASK_STATE_WORKING");
    let good = signer.sign_delivery(working.as_bytes()).unwrap();
    assert_eq!(post(working.clone(), Some(good.clone())).await.0, 204);

    // Replayed: the same signature again (even for the same body).
    let (status, text) = post(working.clone(), Some(good)).await;
    assert_eq!((status, text.contains("replayed")), (401, true), "{text}");

    // Tampered body: signed for one body, sent with another.
    let completed = body("TASK_STATE_COMPLETED");
    let sig = signer.sign_delivery(working.as_bytes()).unwrap();
    let (status, text) = post(completed.clone(), Some(sig)).await;
    assert_eq!(
        (status, text.contains("bad signature")),
        (401, true),
        "{text}"
    );

    // Wrong key: a key the receiver does not trust.
    let stranger = Signer::from_pem(fixture("es256.pem"), "stranger").unwrap();
    let sig = stranger.sign_delivery(completed.as_bytes()).unwrap();
    let (status, text) = post(completed.clone(), Some(sig)).await;
    assert_eq!(
        (status, text.contains("unknown key")),
        (401, true),
        "{text}"
    );
    // The same kid with another key: bad signature.
    let impostor = Signer::from_pem(fixture("es256.pem"), "push-ed25519").unwrap();
    let sig = impostor.sign_delivery(completed.as_bytes()).unwrap();
    assert_eq!(post(completed.clone(), Some(sig)).await.0, 401);

    // Missing signature.
    let (status, text) = post(completed.clone(), None).await;
    assert_eq!(
        (status, text.contains("missing X-A2A-Signature")),
        (401, true),
        "{text}"
    );

    // Stale iat (older than the window), and one from the future.
    for skew in [-3600, 3600] {
        let mut claims = Map::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let iat = now + skew;
        claims.insert("iat".into(), Value::from(iat));
        claims.insert("jti".into(), Value::from(format!("j{skew}")));
        let sig = signer.sign_detached(completed.as_bytes(), claims).unwrap();
        let (status, text) = post(completed.clone(), Some(sig)).await;
        assert_eq!((status, text.contains("iat")), (401, true), "{text}");
    }

    // And a fresh, good one still goes through.
    let sig = signer.sign_delivery(completed.as_bytes()).unwrap();
    assert_eq!(post(completed, Some(sig)).await.0, 204);
}
