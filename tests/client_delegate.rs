//! Delegation end to end: the example `planner` hands work to the example `worker` over A2A.

use a2a_examples::{planner, worker};

use std::time::Duration;

use a2a_kit::client::{A2aClient, Binding, SendRequest, status_text};
use a2a_kit::protocol::{
    ListTasksRequest, Part, SendMessageResponse, StreamResponse, Task, TaskState,
};
use a2a_tests::{TestServer, serve};
use futures::TryStreamExt;

async fn pair(step: Duration, worker_streams: bool) -> (TestServer, TestServer) {
    let w = serve(worker::a2a_with(step).streaming(worker_streams)).await;
    let p = serve(planner::a2a(&w.base)).await;
    (w, p)
}

fn task(r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("expected a task, got {m:?}"),
    }
}

fn texts(t: &Task, name: &str) -> String {
    t.artifacts
        .iter()
        .filter(|a| a.name.as_deref() == Some(name))
        .flat_map(|a| a.parts.iter())
        .filter_map(Part::as_text)
        .collect()
}

async fn wait_for(c: &A2aClient, pred: impl Fn(&[Task]) -> bool) -> Vec<Task> {
    for _ in 0..400 {
        let tasks = c
            .list_tasks(ListTasksRequest::default())
            .await
            .unwrap()
            .tasks;
        if pred(&tasks) {
            return tasks;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("condition never held");
}

#[tokio::test]
async fn planner_streams_the_workers_progress_and_report() {
    let (w, p) = pair(Duration::from_millis(30), true).await;
    for b in [Binding::JsonRpc, Binding::HttpJson] {
        let c = A2aClient::builder()
            .binding(b)
            .connect(&p.base)
            .await
            .unwrap();
        let events: Vec<StreamResponse> = c
            .send_streaming(SendRequest::text("launch a newsletter").skill("plan"))
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let statuses: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Working => {
                    u.status.message.as_ref().and_then(status_text)
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            statuses,
            [
                "Planning: launch a newsletter",
                "worker: step 1/3: research",
                "worker: step 2/3: draft",
                "worker: step 3/3: polish"
            ],
            "{b}"
        );
        // The worker's chunks arrive as the planner's own, with the same chunking.
        let chunks: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(u)
                    if u.artifact.name.as_deref() != Some("summary") =>
                {
                    Some(u)
                }
                _ => None,
            })
            .filter(|u| u.artifact.parts.iter().all(|p| p.as_text() != Some("")) || u.last_chunk)
            .collect();
        let flags: Vec<(bool, bool)> = chunks.iter().map(|u| (u.append, u.last_chunk)).collect();
        assert_eq!(flags, [(false, false), (true, false), (true, true)], "{b}");
        assert!(
            chunks
                .iter()
                .all(|u| u.artifact.artifact_id == chunks[0].artifact.artifact_id)
        );
        assert_eq!(chunks[0].artifact.name.as_deref(), Some("report"));
        assert_eq!(
            events.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}"
        );

        // The planner's stored task has the assembled report and its own summary.
        let id = events[0].task_id().unwrap().to_string();
        let t = c.get_task(&id).await.unwrap();
        assert_eq!(
            texts(&t, "report"),
            "1. research: launch a newsletter\n2. draft: launch a newsletter\n3. polish: launch a newsletter\n"
        );
        assert!(
            texts(&t, "summary").contains("3 report chunks"),
            "{:?}",
            t.artifacts
        );
    }
    // The worker ran one task per delegation.
    let wc = A2aClient::connect(&w.base).await.unwrap();
    let tasks = wc
        .list_tasks(ListTasksRequest::default())
        .await
        .unwrap()
        .tasks;
    assert_eq!(tasks.len(), 2);
    assert!(tasks.iter().all(|t| t.status.state == TaskState::Completed));
}

#[tokio::test]
async fn the_planner_delegates_over_grpc() {
    let w = serve(worker::a2a_with(Duration::from_millis(20))).await;
    let p = serve(planner::a2a_over(&w.base, Binding::Grpc)).await;
    let c = A2aClient::connect(&p.base).await.unwrap();
    let t = task(
        c.send(SendRequest::text("ship the release").skill("plan"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::Completed, "{t:?}");
    assert!(
        !texts(&t, "report").is_empty(),
        "the worker's report: {t:?}"
    );
    // The planner reaches the worker over gRPC only (a card without it fails the task): the
    // worker lists the task it made like any other.
    let wc = A2aClient::builder()
        .binding(Binding::Grpc)
        .connect(&w.base)
        .await
        .unwrap();
    let worker_tasks = wc
        .list_tasks(ListTasksRequest::default())
        .await
        .unwrap()
        .tasks;
    assert_eq!(worker_tasks.len(), 1);
    assert_eq!(worker_tasks[0].status.state, TaskState::Completed);
}

#[tokio::test]
async fn canceling_the_planner_cancels_the_worker() {
    let (w, p) = pair(Duration::from_secs(20), true).await;
    let c = A2aClient::connect(&p.base).await.unwrap();
    let wc = A2aClient::connect(&w.base).await.unwrap();
    let t = task(
        c.send(
            SendRequest::text("a long job")
                .skill("plan")
                .return_immediately(true),
        )
        .await
        .unwrap(),
    );
    wait_for(&wc, |ts| {
        ts.iter().any(|t| t.status.state == TaskState::Working)
    })
    .await;
    let canceled = c.cancel_task(&t.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let tasks = wait_for(&wc, |ts| {
        ts.iter().all(|t| t.status.state == TaskState::Canceled)
    })
    .await;
    assert_eq!(tasks.len(), 1);
}

#[tokio::test]
async fn the_workers_question_is_relayed_to_the_planners_user() {
    let (_w, p) = pair(Duration::from_millis(10), true).await;
    let c = A2aClient::connect(&p.base).await.unwrap();
    let t = task(
        c.send(SendRequest::text("a product launch").skill("brief"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::InputRequired);
    let q = t
        .status
        .message
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default();
    assert_eq!(q, "Who is the audience for a product launch?");
    let t = task(
        c.send(SendRequest::text("engineers").task_id(t.id.clone()))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::Completed, "{t:?}");
    let all: String = t
        .artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(all, "Brief: a product launch for engineers.");
}

#[tokio::test]
async fn a_worker_that_cannot_stream_is_polled() {
    let (_w, p) = pair(Duration::from_millis(30), false).await;
    let c = A2aClient::connect(&p.base).await.unwrap();
    let t = task(
        c.send(SendRequest::text("write docs").skill("plan"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::Completed, "{t:?}");
    assert_eq!(
        texts(&t, "report"),
        "1. research: write docs\n2. draft: write docs\n3. polish: write docs\n"
    );
}

#[tokio::test]
async fn an_unreachable_worker_fails_the_planners_task() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = serve(planner::a2a(&format!("http://127.0.0.1:{port}"))).await;
    let c = A2aClient::connect(&p.base).await.unwrap();
    let t = task(c.send(SendRequest::text("x").skill("plan")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Failed);
    let why = t
        .status
        .message
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default();
    assert!(
        why.contains("unavailable") && why.contains("cannot reach"),
        "{why}"
    );
}
