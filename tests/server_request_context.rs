//! `RequestContext`: every `AgentService` operation is scoped by the caller and tenant it
//! carries, a tenant the request names must agree with it, and a blocking SendMessage stops
//! waiting at its deadline while the task goes on.

use std::time::Duration;

use a2a_kit::auth::Caller;
use a2a_kit::prelude::*;
use a2a_kit::protocol::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    Task, TaskState,
};
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;

struct Slow;

/// Answers after a while, or at once.
#[a2a_agent(name = "Slow")]
impl Slow {
    /// Waits `ms` milliseconds (the text), then answers.
    #[skill(default)]
    async fn wait(&self, Text(ms): Text) -> String {
        let ms: u64 = ms.trim().parse().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("waited {ms} ms")
    }
}

fn service() -> AgentService {
    AgentService::builder(Slow).build().expect("build")
}

/// A SendMessageRequest of `text`, naming `tenant` if given.
fn send_request(text: &str, tenant: Option<&str>) -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user_text(text),
        tenant: tenant.map(str::to_owned),
        ..Default::default()
    }
}

fn task(resp: SendMessageResponse) -> Task {
    match resp {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// A GetTaskRequest for task `id`.
fn get_task_request(id: &str) -> GetTaskRequest {
    GetTaskRequest {
        id: id.to_owned(),
        ..Default::default()
    }
}

#[tokio::test]
async fn tasks_are_scoped_by_the_contexts_caller() {
    let svc = service();
    let alice = RequestContext::new().with_caller(Caller::new("alice"));
    let bob = RequestContext::new().with_caller(Caller::new("bob"));
    let t = task(
        svc.send_message(&alice, send_request("0", None))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(
        svc.get_task(&alice, get_task_request(&t.id))
            .await
            .unwrap()
            .id,
        t.id
    );
    let err = svc
        .get_task(&bob, get_task_request(&t.id))
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        -32001,
        "another caller's task is not found: {err}"
    );
    let err = svc
        .get_task(&RequestContext::new(), get_task_request(&t.id))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32001, "nor is it an anonymous caller's");
    let listed = svc
        .list_tasks(&bob, ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.total_size, 0);
}

#[tokio::test]
async fn the_contexts_tenant_scopes_and_a_contradicting_one_is_refused() {
    let svc = service();
    let acme = RequestContext::new().with_tenant("acme");
    // The request may name the context's tenant, or none.
    let t = task(
        svc.send_message(&acme, send_request("0", None))
            .await
            .unwrap(),
    );
    let same = GetTaskRequest {
        tenant: Some("acme".into()),
        ..get_task_request(&t.id)
    };
    assert_eq!(svc.get_task(&acme, same).await.unwrap().id, t.id);
    // Another tenant's context does not see it; a request naming acme through it is refused.
    let globex = RequestContext::new().with_tenant("globex");
    assert_eq!(
        svc.get_task(&globex, get_task_request(&t.id))
            .await
            .unwrap_err()
            .code(),
        -32001
    );
    let contradicting = GetTaskRequest {
        tenant: Some("acme".into()),
        ..get_task_request(&t.id)
    };
    let err = svc.get_task(&globex, contradicting).await.unwrap_err();
    assert_eq!(err.code(), -32602, "{err}");
    assert!(err.to_string().contains("tenant"), "names the field: {err}");
    // The same refusal for a send, and nothing is created.
    let err = svc
        .send_message(&globex, send_request("0", Some("acme")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32602, "{err}");
    let all = svc
        .list_tasks(&globex, ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(all.total_size, 0);
    // Without a context tenant, the request's own field scopes as before.
    let by_field = GetTaskRequest {
        tenant: Some("acme".into()),
        ..get_task_request(&t.id)
    };
    assert_eq!(
        svc.get_task(&RequestContext::new(), by_field)
            .await
            .unwrap()
            .id,
        t.id
    );
}

#[tokio::test]
async fn a_blocking_send_answers_at_the_deadline_and_the_task_goes_on() {
    let svc = service();
    let cx = RequestContext::new().with_timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let t = task(
        svc.send_message(&cx, send_request("1500", None))
            .await
            .unwrap(),
    );
    let waited = started.elapsed();
    assert_eq!(
        t.status.state,
        TaskState::Working,
        "answered before the end"
    );
    assert!(
        waited < Duration::from_millis(1400),
        "answered at the deadline, not when the skill ended: {waited:?}"
    );
    // The task went on and ends as usual.
    let done = loop {
        let now = svc
            .get_task(&RequestContext::new(), get_task_request(&t.id))
            .await
            .unwrap();
        if now.status.state.is_terminal() {
            break now;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done.status.state, TaskState::Completed);
    // A deadline that does not pass changes nothing, and cancel takes the same context.
    let cx = RequestContext::new().with_timeout(Duration::from_secs(30));
    let quick = task(
        svc.send_message(&cx, send_request("0", None))
            .await
            .unwrap(),
    );
    assert_eq!(quick.status.state, TaskState::Completed);
    let err = svc
        .cancel_task(
            &cx,
            CancelTaskRequest {
                id: quick.id,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32002, "a finished task is not cancelable");
}
