//! The webhook receiver (`a2a_kit_axum::webhook`): 204 / 401 / 400 / 404, idempotency, bare
//! Tasks from older senders, tokens issued before the task id is known, the extractor, and the
//! whole loop with a real agent delivering to it over localhost.

use std::time::Duration;

use a2a_kit::protocol::{StreamResponse, TaskState};
use a2a_kit::push::{PushConfig, PushDispatcher};
use a2a_kit::server::AgentService;
use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, VerifiedNotification, WebhookReceiver};
use a2a_tests::*;
use axum::http::StatusCode;
use serde_json::{Value, json};

/// Serve `router` on a random 127.0.0.1 port; returns its base URL.
async fn serve_router(router: axum::Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    (base, task)
}

/// POST of a push `body` to the webhook at `url`, with `auth` as its Authorization if given.
async fn post_to_webhook(url: &str, auth: Option<&str>, body: &str) -> reqwest::Response {
    let mut req = client()
        .post(url)
        .header("content-type", "application/a2a+json")
        .body(body.to_string());
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    req.send().await.unwrap()
}

fn status_update(task: &str, state: &str) -> String {
    json!({"statusUpdate": {"taskId": task, "contextId": "ctx", "status": {"state": state, "timestamp": "2026-01-05T10:00:00.000Z",
        "message": {"messageId": format!("m-{state}"), "role": "ROLE_AGENT", "parts": [{"text": format!("now {state}")}]}}}})
    .to_string()
}

#[tokio::test]
async fn answers_204_401_400_404_and_ignores_duplicates() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(16);
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let token = tokens.issue().await.unwrap();
    tokens.bind("task-1", &token).await.unwrap();
    let bearer = format!("Bearer {token}");
    let ok_body = status_update("task-1", "TASK_STATE_WORKING");

    // 401: no Authorization, another scheme, a wrong token.
    for auth in [
        None,
        Some(format!("Basic {token}")),
        Some("Bearer not-the-token".to_string()),
        Some("Bearer".to_string()),
    ] {
        let r = post_to_webhook(&url, auth.as_deref(), &ok_body).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
    }
    // 400: not JSON, not an object, not a StreamResponse, a bad oneof, no task id.
    for body in [
        "not json",
        "[1,2]",
        r#"{"hello":"world"}"#,
        r#"{"statusUpdate":{"taskId":"task-1"},"task":{"id":"task-1"}}"#,
        r#"{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}"#,
    ] {
        let r = post_to_webhook(&url, Some(&bearer), body).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{body}");
    }
    // 404: a task this app does not know (with a token that is not pending either).
    let r = post_to_webhook(
        &url,
        Some(&bearer),
        &status_update("someone-elses-task", "TASK_STATE_COMPLETED"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    // Nothing so far reached the app.
    assert!(rx.try_recv().is_err());

    // 204, and the update reaches the channel and the store.
    let r = post_to_webhook(&url, Some(&bearer), &ok_body).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let n = rx.recv().await.unwrap();
    assert_eq!(n.task_id, "task-1");
    assert_eq!(n.event.state(), Some(TaskState::Working));
    assert!(!n.bare_task);
    assert_eq!(
        tasks.get("task-1").await.unwrap().unwrap().status.state,
        TaskState::Working
    );

    // The same event again, even formatted differently: 204, nothing new.
    let reformatted =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&ok_body).unwrap()).unwrap();
    for body in [ok_body.as_str(), reformatted.as_str()] {
        let r = post_to_webhook(&url, Some(&bearer), body).await;
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(200), rx.recv())
            .await
            .is_err(),
        "a duplicate reached the app"
    );
    assert_eq!(tasks.get("task-1").await.unwrap().unwrap().history.len(), 1);

    // Completion; after it the local task never changes again.
    let done = status_update("task-1", "TASK_STATE_COMPLETED");
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &done).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        rx.recv().await.unwrap().event.state(),
        Some(TaskState::Completed)
    );
    let stale = status_update("task-1", "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &stale).await.status(),
        StatusCode::NO_CONTENT
    );
    let local = tasks.get("task-1").await.unwrap().unwrap();
    assert_eq!(local.status.state, TaskState::Completed);
    assert_eq!(local.history.len(), 2);
}

#[tokio::test]
async fn bare_tasks_and_artifact_updates_are_accepted() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(16);
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-2", &token).await.unwrap();
    let bearer = format!("Bearer {token}");

    let chunk = |text: &str, append: bool| {
        json!({"artifactUpdate": {"taskId": "t-2", "contextId": "c", "append": append,
            "artifact": {"artifactId": "a-1", "parts": [{"text": text}]}}})
        .to_string()
    };
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &chunk("Hello, ", false))
            .await
            .status(),
        204
    );
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &chunk("world", true))
            .await
            .status(),
        204
    );
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &chunk("world", true))
            .await
            .status(),
        204,
        "duplicate"
    );
    let parts: Vec<String> = tasks.get("t-2").await.unwrap().unwrap().artifacts[0]
        .parts
        .iter()
        .filter_map(|p| p.as_text().map(str::to_string))
        .collect();
    assert_eq!(parts, ["Hello, ", "world"]);

    // An older sender posting the bare Task.
    let bare = json!({"id": "t-2", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": "Hello, world"}]}]});
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), &bare.to_string())
            .await
            .status(),
        204
    );
    let mut last = None;
    while let Ok(Some(n)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
        last = Some(n);
    }
    let last = last.unwrap();
    assert!(last.bare_task);
    assert!(matches!(last.event, StreamResponse::Task(_)));
    let local = tasks.get("t-2").await.unwrap().unwrap();
    assert_eq!(local.status.state, TaskState::Completed);
    assert_eq!(local.artifacts[0].parts[0].as_text(), Some("Hello, world"));
}

#[tokio::test]
async fn a_token_issued_before_the_ack_binds_on_first_use() {
    let tokens = PushTokens::new();
    let receiver = WebhookReceiver::new(tokens.clone());
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let config = tokens.issue_config(&url).await.unwrap();
    let token = config.token.clone().unwrap();
    assert_eq!(config.authentication.as_ref().unwrap().scheme, "Bearer");
    assert_eq!(
        config
            .authentication
            .as_ref()
            .unwrap()
            .credentials
            .as_deref(),
        Some(token.as_str())
    );
    let bearer = format!("Bearer {token}");
    // The remote task finished before our SendMessage returned: the webhook comes first.
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("fast-task", "TASK_STATE_COMPLETED")
        )
        .await
        .status(),
        204
    );
    assert!(tokens.knows("fast-task").await.unwrap());
    // The token now belongs to that task and opens no other.
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("other-task", "TASK_STATE_COMPLETED")
        )
        .await
        .status(),
        404
    );
    // The ack arrives and agrees.
    tokens.bind("fast-task", &token).await.unwrap();
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("fast-task", "TASK_STATE_FAILED")
        )
        .await
        .status(),
        204
    );
}

#[tokio::test]
async fn the_extractor_verifies_before_the_handler_runs() {
    let tokens = PushTokens::new();
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-x", &token).await.unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s2 = seen.clone();
    let app = axum::Router::new()
        .route(
            "/custom",
            axum::routing::post(move |VerifiedNotification(n): VerifiedNotification| {
                let seen = s2.clone();
                async move {
                    seen.lock().unwrap().push(format!("{:?}", n.event.state()));
                    StatusCode::ACCEPTED
                }
            }),
        )
        .with_state(WebhookReceiver::new(tokens.clone()));
    let (base, _srv) = serve_router(app).await;
    let url = format!("{base}/custom");
    let bearer = format!("Bearer {token}");
    assert_eq!(
        post_to_webhook(&url, None, &status_update("t-x", "TASK_STATE_WORKING"))
            .await
            .status(),
        401
    );
    assert_eq!(
        post_to_webhook(&url, Some(&bearer), "{").await.status(),
        400
    );
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("t-y", "TASK_STATE_WORKING")
        )
        .await
        .status(),
        404
    );
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("t-x", "TASK_STATE_WORKING")
        )
        .await
        .status(),
        202
    );
    assert_eq!(
        post_to_webhook(
            &url,
            Some(&bearer),
            &status_update("t-x", "TASK_STATE_WORKING")
        )
        .await
        .status(),
        204,
        "duplicate"
    );
    assert_eq!(*seen.lock().unwrap(), ["Some(Working)"]);
}

#[tokio::test]
async fn an_agent_delivers_to_the_receiver_end_to_end() {
    // The app side: receiver on localhost.
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(64);
    let (app_base, _srv) = serve_router(receiver.router("/a2a/webhook")).await;
    // Through the resolver: `localhost` (the private-network allowance is explicit here).
    let hook_url = app_base.replace("127.0.0.1", "localhost") + "/a2a/webhook";

    // The agent side, with push delivery.
    let push = PushDispatcher::new(PushConfig::default().allow_private_networks());
    let agent = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;

    for (skill, text, want) in [
        ("slow", "300", TaskState::Completed),
        ("ask", "x", TaskState::InputRequired),
        ("fail", "x", TaskState::Failed),
    ] {
        let config = tokens.issue_config(&hook_url).await.unwrap();
        let r = rpc(
            &agent.base,
            "SendMessage",
            json!({"message": to_skill(skill, text), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}}),
        )
        .await;
        let task: a2a_kit::protocol::Task =
            serde_json::from_value(r["result"]["task"].clone()).unwrap();
        tokens
            .bind(&task.id, config.token.as_deref().unwrap())
            .await
            .unwrap();
        tasks.insert(task.clone()).await.unwrap();
        let settled = tokio::time::timeout(
            Duration::from_secs(10),
            tasks.wait_for(&task.id, |t| t.status.state == want),
        )
        .await
        .unwrap_or_else(|_| panic!("{skill}: no {want:?} notification"))
        .unwrap();
        assert_eq!(settled.status.state, want);
        let n = loop {
            let n = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .unwrap()
                .unwrap();
            if n.task_id == task.id && n.event.state() == Some(want) {
                break n;
            }
        };
        assert_eq!(n.task.unwrap().status.state, want);
        // The outcome is recorded once the webhook's answer is back.
        let mut statuses = push.statuses(&task.id);
        for _ in 0..100 {
            if !statuses.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            statuses = push.statuses(&task.id);
        }
        assert_eq!(statuses.len(), 1);
        assert!(statuses[0].last.as_ref().unwrap().outcome.is_delivered());
    }
    // The answer is the task's artifact, which a status-update notification does not carry:
    // the final status has no copy of it (`task_snapshot_on_settle` pushes the whole task).
    let done = tasks
        .all()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.status.state == TaskState::Completed)
        .unwrap();
    assert!(done.status.message.is_none(), "{done:?}");
    let got = rpc(&agent.base, "GetTask", json!({"id": done.id})).await;
    assert_eq!(
        got["result"]["artifacts"][0]["parts"][0]["text"], "slept 300",
        "{got}"
    );
}
