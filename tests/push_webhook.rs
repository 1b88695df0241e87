//! The webhook receiver (`a2a_kit_axum::webhook`): 204 / 401 / 400 / 404 / 413, idempotency,
//! bare Tasks from older senders, tokens issued before the task id is known, the token in
//! either header, the extractor, and the whole loop with a real agent delivering to it over
//! localhost with every sender option: the final task with its artifacts (the default),
//! per-event bodies, the token in `X-A2A-Notification-Token` only or also as a bearer token,
//! a config's own `authentication`, wrong tokens, and an answer too large to push whole.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::prelude::{Text, a2a_agent};
use a2a_kit::protocol::{
    AuthenticationInfo, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use a2a_kit::push::{DeliveryOutcome, PushConfig, PushDispatcher, TrimmedSnapshot};
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_kit_axum::webhook::{
    Notification, PushTokens, RemoteTasks, VerifiedNotification, WebhookReceiver,
};
use a2a_tests::*;
use axum::http::{HeaderMap, StatusCode};
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
    // The answer is the task's artifact, not in the final status: the final push is the
    // task, so the local copy has the answer without asking the agent.
    let done = tasks
        .all()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.status.state == TaskState::Completed)
        .unwrap();
    assert!(done.status.message.is_none(), "{done:?}");
    assert_eq!(done.artifacts[0].parts[0].as_text(), Some("slept 300"));
    let got = rpc(&agent.base, "GetTask", json!({"id": done.id})).await;
    let remote: Task = serde_json::from_value(got["result"].clone()).unwrap();
    assert_eq!(done.artifacts, remote.artifacts);
}

// ----- the token in either header ---------------------------------------------------------

#[tokio::test]
async fn the_token_is_taken_from_either_header_and_401_names_both() {
    let tokens = PushTokens::new();
    let receiver = WebhookReceiver::new(tokens.clone());
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-h", &token).await.unwrap();
    let post = |auth: Option<String>, header: Option<String>, n: usize| {
        let mut req = client()
            .post(&url)
            .header("content-type", "application/a2a+json")
            // A distinct event each time, so none is a duplicate.
            .body(
                json!({"statusUpdate": {"taskId": "t-h", "contextId": "c", "status": {"state": "TASK_STATE_WORKING",
                    "timestamp": format!("2026-01-05T10:00:{:02}.000Z", n)}}})
                .to_string(),
            );
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        if let Some(h) = header {
            req = req.header("x-a2a-notification-token", h);
        }
        async move {
            let r = req.send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let right = || Some(token.clone());
    let bearer = |t: &str| Some(format!("Bearer {t}"));
    let wrong = || Some("not-the-token".to_string());
    // (Authorization, X-A2A-Notification-Token, expected status)
    let cases = [
        (None, right(), 204),
        (bearer(&token), None, 204),
        (bearer(&token), right(), 204),
        // One header with the task's token is enough, whatever the other holds (a config's
        // `authentication` may be a gateway's credentials).
        (bearer("gateway-credentials"), right(), 204),
        (bearer(&token), wrong(), 204),
        (Some(format!("Basic {token}")), right(), 204),
        (bearer("not-the-token"), None, 401),
        (None, wrong(), 401),
        (bearer("not-the-token"), wrong(), 401),
        (Some(format!("Basic {token}")), None, 401),
        (None, None, 401),
        (None, Some("   ".to_string()), 401),
    ];
    for (n, (auth, header, want)) in cases.into_iter().enumerate() {
        let label = format!("{auth:?} / {header:?}");
        let missing = auth.as_deref().is_none_or(|a| !a.starts_with("Bearer"))
            && header.as_deref().is_none_or(|h| h.trim().is_empty());
        let (status, text) = post(auth, header, n).await;
        assert_eq!(status, want, "{label}: {text}");
        if want == 401 {
            // The answer says where the token was looked for.
            assert!(text.contains("Authorization: Bearer"), "{label}: {text}");
            assert!(text.contains("X-A2A-Notification-Token"), "{label}: {text}");
            let why = if missing {
                "missing token"
            } else {
                "invalid token"
            };
            assert!(text.starts_with(why), "{label}: {text}");
        }
    }
}

#[tokio::test]
async fn an_expired_token_says_so_whichever_header_carries_it() {
    let tokens = PushTokens::new().token_ttl(Duration::from_millis(30));
    let receiver = WebhookReceiver::new(tokens.clone());
    let (base, _srv) = serve_router(receiver.router("/hook")).await;
    let url = format!("{base}/hook");
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-old", &token).await.unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    for (auth, header) in [
        (None, Some(token.as_str())),
        (Some(format!("Bearer {token}")), None),
        // A gateway's credentials beside it do not hide the expiry.
        (
            Some("Bearer gateway-credentials".to_string()),
            Some(token.as_str()),
        ),
    ] {
        let mut req = client()
            .post(&url)
            .body(status_update("t-old", "TASK_STATE_COMPLETED"));
        if let Some(a) = &auth {
            req = req.header("authorization", a);
        }
        if let Some(h) = header {
            req = req.header("x-a2a-notification-token", h);
        }
        let r = req.send().await.unwrap();
        assert_eq!(
            r.status(),
            StatusCode::UNAUTHORIZED,
            "{auth:?} / {header:?}"
        );
        let text = r.text().await.unwrap();
        assert!(text.contains("expired"), "{auth:?} / {header:?}: {text}");
    }
}

// ----- every sender option, over HTTP -----------------------------------------------------

/// `router` behind a layer that keeps the headers of every request it gets.
fn recording(router: axum::Router) -> (axum::Router, Arc<Mutex<Vec<HeaderMap>>>) {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let kept = seen.clone();
    let router = router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push(req.headers().clone());
                next.run(req).await
            }
        },
    ));
    (router, seen)
}

/// SendMessage of `text` to `skill` without waiting, with `config`: the acknowledged task.
async fn send_with(
    base: &str,
    skill: &str,
    text: &str,
    config: &TaskPushNotificationConfig,
) -> Task {
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": to_skill(skill, text), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}}),
    )
    .await;
    serde_json::from_value(r["result"]["task"].clone()).unwrap_or_else(|e| panic!("{e}: {r}"))
}

/// The first notification about `task_id` in state `want`.
async fn notification(
    rx: &mut tokio::sync::mpsc::Receiver<Notification>,
    task_id: &str,
    want: TaskState,
) -> Notification {
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no {want:?} notification for {task_id}"))
            .unwrap();
        if n.task_id == task_id && n.event.state() == Some(want) {
            return n;
        }
    }
}

/// The outcome of the last delivery to the task's only config, once there is one.
async fn last_outcome(push: &PushDispatcher, task_id: &str) -> DeliveryOutcome {
    for _ in 0..500 {
        if let Some(last) = push.statuses(task_id).first().and_then(|s| s.last.clone()) {
            return last.outcome;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no delivery to {task_id} was recorded");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_sender_option_is_accepted_by_the_receiver() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(64);
    let (router, seen) = recording(receiver.router("/a2a/webhook"));
    let (app_base, _srv) = serve_router(router).await;
    let hook_url = app_base.replace("127.0.0.1", "localhost") + "/a2a/webhook";
    let plain = |token: &str| TaskPushNotificationConfig {
        url: hook_url.clone(),
        token: Some(token.to_string()),
        ..Default::default()
    };
    let dev = || PushConfig::default().allow_private_networks();

    struct Case {
        name: &'static str,
        push: PushConfig,
        config: TaskPushNotificationConfig,
        authorization: Option<String>,
        task_body: bool,
    }
    let t = [
        tokens.issue().await.unwrap(),
        tokens.issue().await.unwrap(),
        tokens.issue().await.unwrap(),
        tokens.issue().await.unwrap(),
    ];
    let issued = tokens.issue_config(&hook_url).await.unwrap();
    let issued_token = issued.token.clone().unwrap();
    let cases = [
        Case {
            name: "{url, token}: the token only in X-A2A-Notification-Token",
            push: dev(),
            config: plain(&t[0]),
            authorization: None,
            task_body: true,
        },
        Case {
            name: "{url, token} with token_as_bearer",
            push: dev().token_as_bearer(),
            config: plain(&t[1]),
            authorization: Some(format!("Bearer {}", t[1])),
            task_body: true,
        },
        Case {
            name: "PushTokens::issue_config: the token as the config's authentication",
            push: dev(),
            config: issued,
            authorization: Some(format!("Bearer {issued_token}")),
            task_body: true,
        },
        Case {
            name: "a gateway's credentials in authentication keep Authorization",
            push: dev().token_as_bearer(),
            config: TaskPushNotificationConfig {
                authentication: Some(AuthenticationInfo {
                    scheme: "Bearer".into(),
                    credentials: Some("gateway-secret".into()),
                }),
                ..plain(&t[2])
            },
            authorization: Some("Bearer gateway-secret".into()),
            task_body: true,
        },
        Case {
            name: "per-event bodies",
            push: dev().per_event_bodies(),
            config: plain(&t[3]),
            authorization: None,
            task_body: false,
        },
    ];
    for case in cases {
        let name = case.name;
        let token = case.config.token.clone().unwrap();
        let push = PushDispatcher::new(case.push);
        let agent = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
        let task = send_with(&agent.base, "slow", "200", &case.config).await;
        tokens.bind(&task.id, &token).await.unwrap();
        tasks.insert(task.clone()).await.unwrap();
        let n = notification(&mut rx, &task.id, TaskState::Completed).await;
        assert!(last_outcome(&push, &task.id).await.is_delivered(), "{name}");
        let local = tasks.get(&task.id).await.unwrap().unwrap();
        assert_eq!(local.status.state, TaskState::Completed, "{name}");
        match (&n.event, case.task_body) {
            (StreamResponse::Task(t), true) => {
                assert!(!n.bare_task, "{name}");
                assert_eq!(
                    t.artifacts[0].parts[0].as_text(),
                    Some("slept 200"),
                    "{name}"
                );
                assert_eq!(local.artifacts, t.artifacts, "{name}: the answer is kept");
                assert_eq!(n.trimmed(), None, "{name}");
            }
            (StreamResponse::StatusUpdate(_), false) => {
                assert!(local.artifacts.is_empty(), "{name}: {local:?}");
            }
            (other, _) => panic!("{name}: {other:?}"),
        }
        let headers = seen.lock().unwrap().last().cloned().unwrap();
        assert_eq!(
            headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_string()),
            case.authorization,
            "{name}"
        );
        assert_eq!(
            headers["x-a2a-notification-token"],
            token.as_str(),
            "{name}"
        );
        assert_eq!(headers["content-type"], "application/a2a+json", "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sender_with_the_wrong_token_is_refused_in_either_header() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let receiver = WebhookReceiver::new(tokens.clone()).store(tasks.clone());
    let (app_base, _srv) = serve_router(receiver.router("/hook")).await;
    let hook_url = app_base.replace("127.0.0.1", "localhost") + "/hook";
    for push in [
        // X-A2A-Notification-Token only, then also as a bearer token.
        PushConfig::default().allow_private_networks(),
        PushConfig::default()
            .allow_private_networks()
            .token_as_bearer(),
    ] {
        let push = PushDispatcher::new(push);
        let agent = serve(AgentService::builder(TestAgent).push_dispatcher(&push)).await;
        let config = TaskPushNotificationConfig {
            url: hook_url.clone(),
            token: Some("not-the-token".into()),
            ..Default::default()
        };
        // Slow enough for the task to be bound before its notification comes.
        let task = send_with(&agent.base, "slow", "300", &config).await;
        // The task is ours, with another token.
        tokens
            .bind(&task.id, &tokens.issue().await.unwrap())
            .await
            .unwrap();
        tasks.insert(task.clone()).await.unwrap();
        assert_eq!(
            last_outcome(&push, &task.id).await,
            DeliveryOutcome::Rejected { status: 401 }
        );
        assert_eq!(
            tasks.get(&task.id).await.unwrap().unwrap().status.state,
            task.status.state,
            "a refused notification changes nothing"
        );
    }
}

// ----- size ---------------------------------------------------------------------------------

/// Answers with as many bytes as asked.
struct Bulky;

/// An agent with answers of any size.
#[a2a_agent(name = "Bulky", push_notifications = true)]
impl Bulky {
    /// Answer with N bytes.
    #[skill(default)]
    async fn big(&self, Text(n): Text) -> String {
        "x".repeat(n.trim().parse().unwrap_or(10))
    }
}

fn bulky(push: &PushDispatcher) -> AgentServiceBuilder {
    AgentService::builder(Bulky).push_dispatcher(push)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_answer_arrives_trimmed_and_marked_within_the_default_limits() {
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut rx) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(16);
    let (app_base, _srv) = serve_router(receiver.router("/hook")).await;
    let hook_url = app_base.replace("127.0.0.1", "localhost") + "/hook";
    // Both sides at their defaults: a 1.5 MB answer.
    let push = PushDispatcher::new(PushConfig::default().allow_private_networks());
    let agent = serve(bulky(&push)).await;
    let config = tokens.issue_config(&hook_url).await.unwrap();
    let task = send_with(&agent.base, "big", "1500000", &config).await;
    tokens
        .bind(&task.id, config.token.as_deref().unwrap())
        .await
        .unwrap();
    tasks.insert(task.clone()).await.unwrap();
    let n = notification(&mut rx, &task.id, TaskState::Completed).await;
    let trimmed = n.trimmed().expect("the notification says it is trimmed");
    assert!(trimmed.size > 1_500_000, "{trimmed:?}");
    assert_eq!(trimmed.limit, a2a_kit::push::DEFAULT_MAX_TASK_BODY);
    assert_eq!(trimmed.omitted_artifacts.len(), 1, "{trimmed:?}");
    // The local copy is marked too; GetTask has the answer.
    let local = tasks.get(&task.id).await.unwrap().unwrap();
    assert_eq!(local.status.state, TaskState::Completed);
    assert_eq!(TrimmedSnapshot::of(&local), Some(trimmed.clone()));
    let got = rpc(&agent.base, "GetTask", json!({"id": task.id})).await;
    let remote: Task = serde_json::from_value(got["result"].clone()).unwrap();
    assert_eq!(
        remote.artifacts[0].artifact_id,
        trimmed.omitted_artifacts[0]
    );
    assert_eq!(
        remote.artifacts[0].parts[0].as_text().map(str::len),
        Some(1_500_000)
    );

    // A sender allowed 3 MiB snapshots: a 2.5 MB task is refused by the default receiver
    // (413, final), taken by one whose limit was raised with it.
    let push = PushDispatcher::new(
        PushConfig::default()
            .allow_private_networks()
            .max_task_body(3 * 1024 * 1024),
    );
    let agent = serve(bulky(&push)).await;
    let config = tokens.issue_config(&hook_url).await.unwrap();
    let task = send_with(&agent.base, "big", "2500000", &config).await;
    tokens
        .bind(&task.id, config.token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(
        last_outcome(&push, &task.id).await,
        DeliveryOutcome::Rejected { status: 413 }
    );
    let roomy = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .body_limit(4 * 1024 * 1024);
    let (roomy_base, _srv2) = serve_router(roomy.router("/hook")).await;
    let config = tokens
        .issue_config(roomy_base.replace("127.0.0.1", "localhost") + "/hook")
        .await
        .unwrap();
    let task = send_with(&agent.base, "big", "2500000", &config).await;
    tokens
        .bind(&task.id, config.token.as_deref().unwrap())
        .await
        .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        tasks.wait_for(&task.id, |t| t.status.state == TaskState::Completed),
    )
    .await
    .expect("the raised limit takes the whole task")
    .unwrap();
    assert_eq!(TrimmedSnapshot::of(&done), None);
    assert_eq!(
        done.artifacts[0].parts[0].as_text().map(str::len),
        Some(2_500_000)
    );
}

#[tokio::test]
async fn bodies_beyond_the_limit_are_413_unread() {
    let tokens = PushTokens::new();
    let token = tokens.issue().await.unwrap();
    tokens.bind("t-big", &token).await.unwrap();
    let receiver = WebhookReceiver::new(tokens.clone()).body_limit(1000);
    let custom = axum::Router::new()
        .route(
            "/custom",
            axum::routing::post(|VerifiedNotification(_): VerifiedNotification| async {
                StatusCode::NO_CONTENT
            }),
        )
        .with_state(receiver.clone());
    let (base, _srv) = serve_router(receiver.router("/hook").merge(custom)).await;
    let big = json!({"statusUpdate": {"taskId": "t-big", "contextId": "c", "status": {"state": "TASK_STATE_WORKING",
        "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "y".repeat(2000)}]}}}})
    .to_string();
    for path in ["/hook", "/custom"] {
        let url = format!("{base}{path}");
        let r = post_to_webhook(&url, Some(&format!("Bearer {token}")), &big).await;
        assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        let text = r.text().await.unwrap();
        assert!(text.contains("1000 bytes"), "{path}: {text}");
        let small = status_update("t-big", "TASK_STATE_WORKING");
        let r = post_to_webhook(&url, Some(&format!("Bearer {token}")), &small).await;
        assert_eq!(r.status(), StatusCode::NO_CONTENT, "{path}");
    }
}
