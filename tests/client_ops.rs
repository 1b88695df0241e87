//! Every client operation against a2a-kit's own server, over JSON-RPC, HTTP+JSON and gRPC.

#[path = "support_proxy.rs"]
mod proxy;

use std::time::Duration;

use a2a_kit::client::{A2aClient, Binding, ClientError, SendRequest, TaskAccumulator};
use a2a_kit::protocol::{
    ListTasksRequest, Part, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
    TaskState,
};
use a2a_tests::serve_test_agent;
use futures::{StreamExt, TryStreamExt};
use proxy::{ALL_BINDINGS as BINDINGS, client};

fn task(r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("expected a task, got message {m:?}"),
    }
}

fn artifact_text(t: &Task) -> String {
    t.artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(Part::as_text)
        .collect()
}

async fn wait_state(c: &A2aClient, id: &str, pred: impl Fn(TaskState) -> bool) -> Task {
    for _ in 0..200 {
        let t = c.get_task(id).await.expect("get");
        if pred(t.status.state) {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} never reached the expected state");
}

#[tokio::test]
async fn connects_and_picks_the_requested_binding() {
    let s = serve_test_agent().await;
    let c = A2aClient::connect(&s.base).await.unwrap();
    assert_eq!(c.card().name, "Test Agent");
    // The card lists JSON-RPC first, and the client follows the agent's preference.
    assert_eq!(c.binding(), Binding::JsonRpc);
    assert_eq!(c.card_url().path(), "/.well-known/agent-card.json");
    let r = client(&s.base, Binding::HttpJson).await;
    assert_eq!(r.binding(), Binding::HttpJson);
    assert_eq!(r.endpoint().as_str().trim_end_matches('/'), s.base);
}

#[tokio::test]
async fn send_blocking_direct_and_return_immediately() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let t = task(
            c.send(SendRequest::text("hi there").skill("echo"))
                .await
                .unwrap(),
        );
        assert_eq!(t.status.state, TaskState::Completed, "{b}");
        assert_eq!(artifact_text(&t), "hi there");

        match c
            .send(SendRequest::text("yo").skill("direct"))
            .await
            .unwrap()
        {
            SendMessageResponse::Message(m) => assert_eq!(m.text(), "direct: yo"),
            other => panic!("{b}: expected a message, got {other:?}"),
        }

        let t = task(
            c.send(
                SendRequest::text("400")
                    .skill("slow")
                    .return_immediately(true),
            )
            .await
            .unwrap(),
        );
        assert!(!t.status.state.is_terminal(), "{b}: {:?}", t.status.state);
        let done = wait_state(&c, &t.id, TaskState::is_terminal).await;
        assert_eq!(artifact_text(&done), "slept 400");

        let failed = task(c.send(SendRequest::text("x").skill("fail")).await.unwrap());
        assert_eq!(failed.status.state, TaskState::Failed);
    }
}

#[tokio::test]
async fn streams_chunks_in_order_and_assembles_them() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let mut stream = c
            .send_streaming(SendRequest::text("4").skill("chunks"))
            .await
            .unwrap();
        let mut events = Vec::new();
        while let Some(ev) = stream.next().await {
            events.push(ev.unwrap());
        }
        assert!(
            matches!(events[0], StreamResponse::Task(_)),
            "{b}: a task stream starts with the Task"
        );
        let chunks: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(u) => Some(u),
                _ => None,
            })
            .collect();
        assert_eq!(chunks.len(), 4, "{b}");
        assert!(!chunks[0].append && chunks[1..].iter().all(|u| u.append));
        assert!(chunks[3].last_chunk);
        assert_eq!(stream.state(), Some(TaskState::Completed));
        assert!(stream.task_id().is_some());
        assert_eq!(
            stream.last_event_id().is_some(),
            b != Binding::Grpc,
            "{b}: a2a-kit numbers its events over HTTP (gRPC streams carry no ids)"
        );

        let mut acc = TaskAccumulator::default();
        events.iter().for_each(|e| acc.apply(e));
        assert_eq!(artifact_text(acc.task().unwrap()), "c0 c1 c2 c3 ");

        let t = task(
            c.send_streaming(SendRequest::text("2").skill("chunks"))
                .await
                .unwrap()
                .into_result()
                .await
                .unwrap(),
        );
        assert_eq!(artifact_text(&t), "c0 c1 ");

        let r = c
            .send_streaming(SendRequest::text("hey").skill("direct"))
            .await
            .unwrap()
            .into_result()
            .await
            .unwrap();
        assert!(
            matches!(r, SendMessageResponse::Message(m) if m.text() == "direct: hey"),
            "{b}"
        );
    }
}

#[tokio::test]
async fn status_updates_carry_progress_text() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let events: Vec<_> = c
            .send_streaming(SendRequest::text("go").skill("status"))
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let texts: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::StatusUpdate(u) => u
                    .status
                    .message
                    .as_ref()
                    .and_then(a2a_kit::client::status_text),
                _ => None,
            })
            .collect();
        for i in 1..=3 {
            assert!(texts.contains(&format!("step {i}")), "{b}: {texts:?}");
        }
    }
}

#[tokio::test]
async fn subscribe_follows_a_running_task() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let t = task(
            c.send(
                SendRequest::text("300")
                    .skill("slow")
                    .return_immediately(true),
            )
            .await
            .unwrap(),
        );
        let events: Vec<_> = c
            .subscribe(&t.id)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert!(
            matches!(&events[0], StreamResponse::Task(x) if x.id == t.id),
            "{b}: snapshot first"
        );
        assert_eq!(
            events.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}"
        );
        // A finished task cannot be subscribed to.
        let e = c.subscribe(&t.id).await.unwrap_err();
        assert_eq!(e.code(), Some(-32004), "{b}: {e}");
        assert_eq!(e.reason(), Some("UNSUPPORTED_OPERATION"));
        // ... unless resuming from an event id: the server replays what came after it (over
        // HTTP: gRPC has no event ids).
        if b == Binding::Grpc {
            let e = c.subscribe_from(&t.id, Some("1")).await.unwrap_err();
            assert!(matches!(e, ClientError::Unsupported(_)), "{e:?}");
            continue;
        }
        let replay: Vec<_> = c
            .subscribe_from(&t.id, Some("1"))
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            replay.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}"
        );
    }
}

#[tokio::test]
async fn get_list_and_paginate() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let mut ids = Vec::new();
        for i in 0..5 {
            ids.push(
                task(
                    c.send(SendRequest::text(format!("n{i}")).skill("echo"))
                        .await
                        .unwrap(),
                )
                .id,
            );
        }
        let got = c
            .get_task_with(a2a_kit::protocol::GetTaskRequest {
                id: ids[0].clone(),
                history_length: Some(0),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(got.history.is_empty(), "{b}");
        let page = c
            .list_tasks(ListTasksRequest {
                page_size: Some(2),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(page.tasks.len(), 2);
        assert!(!page.next_page_token.is_empty());
        assert!(page.total_size >= 5);
        let page = c
            .list_tasks(ListTasksRequest {
                status: Some(TaskState::Completed),
                include_artifacts: Some(true),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(
            page.tasks
                .iter()
                .all(|t| t.status.state == TaskState::Completed && !t.artifacts.is_empty()),
            "{b}"
        );
        let all: Vec<Task> = c
            .list_all_tasks(ListTasksRequest {
                page_size: Some(2),
                ..Default::default()
            })
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            all.len() as i32,
            page.total_size.max(all.len() as i32),
            "{b}"
        );
        for id in &ids {
            assert!(
                all.iter().any(|t| &t.id == id),
                "{b}: {id} missing from the paginated list"
            );
        }
    }
}

#[tokio::test]
async fn cancel_and_errors_keep_code_reason_and_message() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let t = task(
            c.send(
                SendRequest::text("10000")
                    .skill("slow")
                    .return_immediately(true),
            )
            .await
            .unwrap(),
        );
        let canceled = c.cancel_task(&t.id).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{b}");

        let e = c.cancel_task(&t.id).await.unwrap_err();
        let a = e.agent_error().unwrap_or_else(|| panic!("{b}: {e}"));
        assert_eq!(
            (a.code, a.reason.as_deref(), a.name()),
            (
                -32002,
                Some("TASK_NOT_CANCELABLE"),
                Some("TaskNotCancelableError")
            )
        );
        assert!(
            a.message.contains("cannot be canceled"),
            "{b}: {}",
            a.message
        );

        let e = c.get_task("no-such-task").await.unwrap_err();
        assert_eq!(e.code(), Some(-32001), "{b}");
        assert_eq!(e.reason(), Some("TASK_NOT_FOUND"));
        assert!(e.to_string().contains("no-such-task"), "{e}");
        if b == Binding::HttpJson {
            assert_eq!(e.agent_error().unwrap().http_status, Some(404));
        }

        let e = c
            .send(SendRequest::text("x").skill("nope"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some(-32602), "{b}: {e}");
        assert!(matches!(
            e.agent_error().unwrap().to_a2a_error(),
            a2a_kit::error::A2aError::InvalidParams { .. }
        ));

        let e = c.extended_card().await.unwrap_err();
        assert_eq!(
            e.code(),
            Some(-32004),
            "{b}: the test agent has no extended card: {e}"
        );
    }
}

#[tokio::test]
async fn input_required_then_reply() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let t = task(c.send(SendRequest::text("hi").skill("ask")).await.unwrap());
        assert_eq!(t.status.state, TaskState::InputRequired, "{b}");
        let t = task(
            c.send(SendRequest::text("Bob").task_id(t.id.clone()))
                .await
                .unwrap(),
        );
        assert_eq!(t.status.state, TaskState::Completed, "{b}");
        assert_eq!(artifact_text(&t), "Hello, Bob");
    }
}

#[tokio::test]
async fn push_config_crud() {
    let s = serve_test_agent().await;
    for b in BINDINGS {
        let c = client(&s.base, b).await;
        let t = task(
            c.send(
                SendRequest::text("5000")
                    .skill("slow")
                    .return_immediately(true),
            )
            .await
            .unwrap(),
        );
        let created = c
            .create_push_config(TaskPushNotificationConfig {
                task_id: Some(t.id.clone()),
                id: Some("cfg-1".into()),
                url: "https://example.com/hook".into(),
                token: Some("tok".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(created.id.as_deref(), Some("cfg-1"), "{b}");
        let auto = c
            .create_push_config(TaskPushNotificationConfig {
                task_id: Some(t.id.clone()),
                url: "https://example.com/2".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(auto.id.is_some(), "{b}: the agent assigns an id");
        assert_eq!(
            c.get_push_config(&t.id, "cfg-1").await.unwrap().url,
            "https://example.com/hook"
        );
        assert_eq!(
            c.list_push_configs(&t.id).await.unwrap().configs.len(),
            2,
            "{b}"
        );
        c.delete_push_config(&t.id, "cfg-1").await.unwrap();
        let e = c.get_push_config(&t.id, "cfg-1").await.unwrap_err();
        assert!(e.code().is_some(), "{b}: {e}");
        assert_eq!(c.list_push_configs(&t.id).await.unwrap().configs.len(), 1);
        c.cancel_task(&t.id).await.unwrap();
    }
}

#[tokio::test]
async fn unary_timeout_is_a_typed_error() {
    let s = serve_test_agent().await;
    let c = client(&s.base, Binding::JsonRpc)
        .await
        .with_timeout(Some(Duration::from_millis(200)));
    let e = c
        .send(SendRequest::text("3000").skill("slow"))
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
    assert!(e.is_transient());
}
