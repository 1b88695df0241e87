//! Streams that lose their connection resume with `Last-Event-ID`: no event lost, none twice.

#[path = "support_proxy.rs"]
mod proxy;

use a2a_kit::client::{A2aClient, ClientError, ResumePolicy, SendRequest};
use a2a_kit::protocol::{StreamResponse, TaskState};
use a2a_tests::serve_test_agent;
use futures::TryStreamExt;
use proxy::{BINDINGS, Cut, Proxy};

/// A readable trace of a stream: `task`, `status:STATE`, `chunk:TEXT`.
fn trace(events: &[StreamResponse]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(t) => format!("task:{}", t.status.state.as_str()),
            StreamResponse::Message(_) => "message".into(),
            StreamResponse::StatusUpdate(u) => format!("status:{}", u.status.state.as_str()),
            StreamResponse::ArtifactUpdate(u) => {
                format!(
                    "chunk:{}",
                    u.artifact
                        .parts
                        .iter()
                        .filter_map(|p| p.as_text())
                        .collect::<String>()
                )
            }
        })
        .collect()
}

#[tokio::test]
async fn a_broken_stream_resumes_without_gaps_or_duplicates() {
    let s = serve_test_agent().await;
    let p = Proxy::start(&s.base).await;
    for b in BINDINGS {
        for cut in [Cut::Abort(3), Cut::Close(2)] {
            let c = proxy::client(&p.base, b).await;
            // The reference: the same request, uncut.
            let reference: Vec<_> = c
                .send_streaming(SendRequest::text("5").skill("chunks"))
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            p.clear();
            p.cut_next_stream(cut);
            let mut stream = c
                .send_streaming(SendRequest::text("5").skill("chunks"))
                .await
                .unwrap();
            let mut events = Vec::new();
            while let Some(ev) = futures::StreamExt::next(&mut stream).await {
                events.push(ev.unwrap_or_else(|e| panic!("{b} {cut:?}: {e}")));
            }
            assert_eq!(trace(&events), trace(&reference), "{b} {cut:?}");
            assert_eq!(stream.reconnects(), 1, "{b} {cut:?}");
            assert_eq!(stream.state(), Some(TaskState::Completed));
            // The second request re-subscribed from the last event received.
            let reqs: Vec<_> = p
                .requests()
                .into_iter()
                .filter(|r| r.method != "GET" || r.path.contains(":subscribe"))
                .collect();
            assert_eq!(reqs.len(), 2, "{b} {cut:?}: {reqs:?}");
            let resumed = &reqs[1];
            let passed = match cut {
                Cut::Abort(n) | Cut::Close(n) => n,
            };
            assert_eq!(
                resumed.header("last-event-id").as_deref(),
                Some(passed.to_string().as_str()),
                "{b} {cut:?}"
            );
            match b {
                a2a_kit::client::Binding::JsonRpc => {
                    assert_eq!(resumed.rpc_method().as_deref(), Some("SubscribeToTask"))
                }
                a2a_kit::client::Binding::HttpJson => {
                    assert!(resumed.path.ends_with(":subscribe"), "{}", resumed.path)
                }
                a2a_kit::client::Binding::Grpc => unreachable!("the proxy carries HTTP/1.1 only"),
            }
        }
    }
}

#[tokio::test]
async fn subscriptions_resume_too() {
    let s = serve_test_agent().await;
    let p = Proxy::start(&s.base).await;
    for b in BINDINGS {
        let c = proxy::client(&p.base, b).await;
        let t = match c
            .send(
                SendRequest::text("300")
                    .skill("slow")
                    .return_immediately(true),
            )
            .await
            .unwrap()
        {
            a2a_kit::protocol::SendMessageResponse::Task(t) => t,
            other => panic!("{other:?}"),
        };
        p.cut_next_stream(Cut::Abort(1));
        let mut stream = c.subscribe(&t.id).await.unwrap();
        let mut events = Vec::new();
        while let Some(ev) = futures::StreamExt::next(&mut stream).await {
            events.push(ev.unwrap());
        }
        assert!(stream.reconnects() >= 1, "{b}");
        assert_eq!(
            events.last().and_then(StreamResponse::state),
            Some(TaskState::Completed),
            "{b}: {:?}",
            trace(&events)
        );
    }
}

#[tokio::test]
async fn without_resume_a_broken_stream_is_an_error() {
    let s = serve_test_agent().await;
    let p = Proxy::start(&s.base).await;
    let c = A2aClient::builder()
        .resume(ResumePolicy::NEVER)
        .connect(&p.base)
        .await
        .unwrap();
    p.cut_next_stream(Cut::Abort(2));
    let r: Result<Vec<_>, _> = c
        .send_streaming(SendRequest::text("5").skill("chunks"))
        .await
        .unwrap()
        .try_collect()
        .await;
    assert!(matches!(r, Err(ClientError::Connection(_))), "{r:?}");
}
