//! Our client against the official Python SDK's server (a2a-sdk 1.3.0, pinned, started on
//! 127.0.0.1 by the test from tests/interop/python/server.py), over JSON-RPC and HTTP+JSON.
//!
//! Skipped, with a printed note, only when `python3 -m venv` is unavailable.

#[path = "support_python_sdk.rs"]
mod python_sdk;

use std::time::Duration;

use a2a_kit::client::{A2aClient, Binding, SendRequest};
use a2a_kit::protocol::{
    ListTasksRequest, Part, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
    TaskState,
};
use futures::TryStreamExt;

fn task(r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("expected a task, got {m:?}"),
    }
}

fn text(t: &Task) -> String {
    t.artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(Part::as_text)
        .collect()
}

async fn wait_until(c: &A2aClient, id: &str, pred: impl Fn(TaskState) -> bool) -> Task {
    for _ in 0..300 {
        let t = c.get_task(id).await.expect("get_task");
        if pred(t.status.state) {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached the expected state");
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_against_the_python_sdk_server() {
    let Some(py) = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
    else {
        return;
    };
    let (_server, base) = python_sdk::start_python_server(&py).await;

    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let b = binding;
        // card: resolved from the well-known path; each binding has its own URL.
        let c = A2aClient::builder()
            .binding(binding)
            .timeout(Some(Duration::from_secs(60)))
            .connect(&base)
            .await
            .unwrap();
        assert_eq!(c.card().name, "Python Interop Agent");
        let path = match binding {
            Binding::JsonRpc => "/a2a/jsonrpc",
            Binding::HttpJson => "/a2a/rest",
            Binding::Grpc => unreachable!("this loop is over the HTTP bindings"),
        };
        assert_eq!(c.endpoint().path(), path, "{b}");
        // The card is revalidated with its (weak) ETag.
        let before = c.card();
        assert_eq!(c.refresh_card().await.unwrap(), before);

        // send, blocking.
        let t = task(c.send("hello python").await.unwrap());
        assert_eq!(t.status.state, TaskState::Completed, "{b}");
        assert_eq!(text(&t), "hello python");
        // A direct message.
        match c.send("direct hi").await.unwrap() {
            SendMessageResponse::Message(m) => assert_eq!(m.text(), "direct: hi", "{b}"),
            other => panic!("{b}: {other:?}"),
        }
        // A failing task.
        assert_eq!(
            task(c.send("fail").await.unwrap()).status.state,
            TaskState::Failed,
            "{b}"
        );

        // stream: Task first, chunks with append/lastChunk, COMPLETED last.
        let mut s = c.send_streaming("chunks 3").await.unwrap();
        let mut events = Vec::new();
        while let Some(ev) = futures::StreamExt::next(&mut s).await {
            events.push(ev.unwrap());
        }
        assert!(
            matches!(events[0], StreamResponse::Task(_)),
            "{b}: {events:?}"
        );
        let chunks: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(u) => Some((u.append, u.last_chunk)),
                _ => None,
            })
            .collect();
        assert_eq!(chunks, [(false, false), (true, false), (true, true)], "{b}");
        assert_eq!(
            events.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}"
        );
        let assembled = task(
            c.send_streaming("chunks 2")
                .await
                .unwrap()
                .into_result()
                .await
                .unwrap(),
        );
        assert_eq!(text(&assembled), "c0 c1 ", "{b}");
        let statuses: Vec<String> = c
            .send_streaming("status")
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
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
        assert_eq!(statuses, ["step 1", "step 2", "step 3"], "{b}");

        // returnImmediately, get, subscribe.
        let t = task(
            c.send(SendRequest::text("slow 1.5").return_immediately(true))
                .await
                .unwrap(),
        );
        assert!(!t.status.state.is_terminal(), "{b}: {:?}", t.status.state);
        let got = c.get_task(&t.id).await.unwrap();
        assert_eq!(got.id, t.id);
        let sub: Vec<_> = c
            .subscribe(&t.id)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert!(
            matches!(&sub[0], StreamResponse::Task(x) if x.id == t.id),
            "{b}: snapshot first: {sub:?}"
        );
        assert_eq!(
            sub.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}"
        );
        let done = wait_until(&c, &t.id, TaskState::is_terminal).await;
        assert_eq!(text(&done), "slept 1.5");
        // Subscribing to a finished task is UnsupportedOperationError on both bindings.
        let e = c.subscribe(&t.id).await.unwrap_err();
        assert_eq!(e.code(), Some(-32004), "{b}: {e}");

        // list (and paginate).
        let page = c
            .list_tasks(ListTasksRequest {
                page_size: Some(2),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(page.tasks.len(), 2, "{b}");
        assert!(page.total_size >= 5, "{b}: {}", page.total_size);
        let all: Vec<Task> = c
            .list_all_tasks(ListTasksRequest {
                page_size: Some(3),
                ..Default::default()
            })
            .try_collect()
            .await
            .unwrap();
        assert_eq!(all.len() as i32, page.total_size, "{b}");

        // cancel.
        let t = task(
            c.send(SendRequest::text("slow 30").return_immediately(true))
                .await
                .unwrap(),
        );
        let canceled = c.cancel_task(&t.id).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{b}");
        let e = c.cancel_task(&done.id).await.unwrap_err();
        assert_eq!(
            (e.code(), e.reason()),
            (Some(-32002), Some("TASK_NOT_CANCELABLE")),
            "{b}: {e}"
        );

        // errors keep code, reason and message.
        let e = c.get_task("no-such-task").await.unwrap_err();
        let a = e.agent_error().unwrap_or_else(|| panic!("{b}: {e:?}"));
        assert_eq!(
            (a.code, a.reason.as_deref()),
            (-32001, Some("TASK_NOT_FOUND")),
            "{b}"
        );
        assert!(!a.message.is_empty());

        // input required, then the reply.
        let t = task(c.send("ask").await.unwrap());
        assert_eq!(t.status.state, TaskState::InputRequired, "{b}");
        let t = task(
            c.send(
                SendRequest::text("Ada")
                    .task_id(t.id.clone())
                    .context_id(t.context_id.clone()),
            )
            .await
            .unwrap(),
        );
        assert_eq!(text(&t), "Hello, Ada", "{b}");

        // push notification configs.
        let cfg = c
            .create_push_config(TaskPushNotificationConfig {
                task_id: Some(t.id.clone()),
                id: Some("cfg1".into()),
                url: "https://example.com/webhook".into(),
                token: Some("tok".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(cfg.id.as_deref(), Some("cfg1"), "{b}");
        assert_eq!(
            c.get_push_config(&t.id, "cfg1").await.unwrap().url,
            "https://example.com/webhook"
        );
        assert_eq!(
            c.list_push_configs(&t.id).await.unwrap().configs.len(),
            1,
            "{b}"
        );
        c.delete_push_config(&t.id, "cfg1").await.unwrap();
        assert!(
            c.list_push_configs(&t.id).await.unwrap().configs.is_empty(),
            "{b}"
        );

        // extended card: adopted by the client.
        let ext = c.extended_card().await.unwrap();
        assert!(ext.skills.iter().any(|s| s.id == "extended"), "{b}");
        assert!(c.card().skills.iter().any(|s| s.id == "extended"), "{b}");
    }
}
