//! Streams that lose their connection resume: with `Last-Event-ID` over HTTP (no event lost,
//! none twice), by subscribing again over gRPC (the task as it stands, then what follows).

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

/// A TCP forwarder to `target` that cuts its first connection once the agent has sent it
/// `cut_after` bytes (both ways, at once, as a dropped network does); later connections pass.
async fn cutting_tcp_proxy(target: String, cut_after: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let target = target.clone();
            let cut = std::mem::take(&mut first).then_some(cut_after);
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let up = tokio::io::copy(&mut cr, &mut sw);
                let down = async {
                    let mut sent = 0usize;
                    let mut buf = vec![0u8; 512];
                    loop {
                        let n = sr.read(&mut buf).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        if cut.is_some_and(|c| sent + n > c) {
                            return; // dropped: both halves close with this task
                        }
                        sent += n;
                        if cw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                };
                tokio::select! {
                    _ = up => {}
                    _ = down => {}
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_broken_grpc_stream_resumes_by_subscribing_again() {
    use a2a_kit::client::{Binding, TaskAccumulator};
    let s = serve_test_agent().await;
    let agent = s.base.trim_start_matches("http://").to_string();
    // Cut a few kilobytes into the first connection: after the task's first events.
    let proxy = cutting_tcp_proxy(agent, 4096).await;
    let mut card = s.service.card().clone();
    for i in &mut card.supported_interfaces {
        if i.protocol_binding == "GRPC" {
            i.url = proxy.clone();
        }
    }
    let c = A2aClient::builder()
        .binding(Binding::Grpc)
        .resume(ResumePolicy {
            max_attempts: 5,
            initial_backoff: std::time::Duration::from_millis(20),
        })
        .from_card(card, &format!("{}/.well-known/agent-card.json", s.base))
        .unwrap();
    let n = 400;
    let mut stream = c
        .send_streaming(SendRequest::text(n.to_string()).skill("chunks"))
        .await
        .unwrap();
    let mut acc = TaskAccumulator::default();
    let mut events = Vec::new();
    while let Some(ev) = stream.try_next().await.unwrap() {
        acc.apply(&ev);
        events.push(ev);
    }
    assert!(
        stream.reconnects() >= 1,
        "the stream was cut: {:?}",
        trace(&events)
    );
    assert_eq!(stream.state(), Some(TaskState::Completed));
    // The snapshot a resubscription starts with carries what the cut lost: the assembled
    // artifact is whole, every chunk once.
    let task = acc.task().expect("a task");
    let text: String = task.artifacts[0]
        .parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect();
    let want: String = (0..n).map(|i| format!("c{i} ")).collect();
    assert_eq!(text, want);
}
