//! The gRPC workloads (oha does not speak gRPC): tonic's generated client on hyper's HTTP/2
//! client connections (h2c with prior knowledge; see [`Client`]).
//!
//! * W1 over gRPC: unary `SendMessage`, the JSON-RPC W1's message (a 100-byte text part,
//!   blocking), [`Opts::connections`] calls in flight spread over [`Opts::grpc_channels`]
//!   connections, each call sent as soon as the one before it on its slot is answered: for a
//!   duration (requests/s, p50, p99), or a count (the instruction workload).
//! * W2 over gRPC: `SendStreamingMessage` to the `count` skill on one channel, as the SSE
//!   client reads one connection.
//! * The capture of the gRPC limit's canned messages from a2a-kit's own answers.

use std::sync::atomic::{AtomicU64, Ordering};

use a2a_kit::grpc::pb;
use a2a_kit::grpc::pb::a2a_service_client::A2aServiceClient;
use prost::Message as _;

use super::*;

/// tonic's generated client on one bare hyper HTTP/2 connection. Not a tonic `Channel`: its
/// buffer (a queue and a task of its own between every call and the connection) and its
/// reconnecting layers cost the one-core load generator about as much as the call costs the
/// server, so the load generator, not the server, would set the pace. Clones share the
/// connection.
type Client = A2aServiceClient<H2>;

/// A hyper HTTP/2 client connection as the tower service tonic's client calls.
#[derive(Clone)]
pub(super) struct H2(hyper::client::conn::http2::SendRequest<tonic::body::Body>);

impl tower_service::Service<axum::http::Request<tonic::body::Body>> for H2 {
    type Response = axum::http::Response<hyper::body::Incoming>;
    type Error = hyper::Error;
    type Future = std::pin::Pin<
        Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send + 'static>,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: axum::http::Request<tonic::body::Body>) -> Self::Future {
        Box::pin(self.0.send_request(req))
    }
}

/// The server's `host:port` (its URL without scheme and path).
fn authority(server: &Server) -> &str {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
}

/// `n` HTTP/2 connections to `server` (h2c with prior knowledge, TCP_NODELAY, as every client),
/// each with its client.
async fn channels(server: &Server, n: usize) -> Result<Vec<Client>, String> {
    let origin: axum::http::Uri = format!("http://{}", authority(server))
        .parse()
        .map_err(|e| format!("{e}"))?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let tcp = tokio::net::TcpStream::connect(authority(server))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let (send, conn) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tcp),
        )
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))?;
        tokio::spawn(conn);
        out.push(A2aServiceClient::with_origin(H2(send), origin.clone()));
    }
    Ok(out)
}

/// The W1 request: the JSON-RPC W1's message as protobuf.
fn unary_message() -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: "bench-w1".into(),
            role: pb::Role::User as i32,
            parts: vec![text_part(TEXT_100)],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn text_part(text: &str) -> pb::Part {
    pb::Part {
        content: Some(pb::part::Content::Text(text.into())),
        ..Default::default()
    }
}

/// `SendStreamingMessage` to `skill` (`metadata.skillId`) with `text`.
fn stream_message(message_id: &str, skill: &str, text: &str) -> pb::SendMessageRequest {
    let skill = prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(skill.into())),
    };
    pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: message_id.into(),
            role: pb::Role::User as i32,
            parts: vec![text_part(text)],
            metadata: Some(prost_types::Struct {
                fields: [("skillId".to_string(), skill)].into_iter().collect(),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A call with the service parameter every A2A call carries (`A2A-Version` over HTTP).
fn call<T>(message: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut().insert(
        "a2a-version",
        tonic::metadata::MetadataValue::from_static("1.0"),
    );
    r
}

/// Whether a SendMessage answer is the W1 task, completed.
fn completed(resp: &pb::SendMessageResponse) -> bool {
    matches!(
        &resp.payload,
        Some(pb::send_message_response::Payload::Task(t))
            if t.status.as_ref().is_some_and(|s| s.state == pb::TaskState::Completed as i32)
    )
}

/// One W1 call; checks the task completed. Returns the answer.
pub(super) async fn check_unary(server: &Server) -> Result<pb::SendMessageResponse, String> {
    let mut client = channels(server, 1).await?.remove(0);
    let resp = client
        .send_message(call(unary_message()))
        .await
        .map_err(|s| format!("SendMessage over gRPC: {s}"))?
        .into_inner();
    if !completed(&resp) {
        return Err(format!("unexpected SendMessage answer over gRPC: {resp:?}"));
    }
    Ok(resp)
}

/// How long a load runs.
#[derive(Clone, Copy)]
pub(super) enum Until {
    /// Calls begun within this time (the ones in flight at the end are waited for).
    Elapsed(Duration),
    /// This many calls in all.
    Calls(u64),
}

/// W1 over gRPC: [`Opts::connections`] calls in flight on [`Opts::grpc_channels`] connections
/// until `until`; requests/s over the whole load, latency percentiles of every call. A call
/// counts as ok when it is answered with the task COMPLETED (a status or another answer is
/// counted in `other`).
pub(super) async fn load(env: &Env, server: &Server, until: Until) -> OhaResult {
    let clients = match channels(server, env.opts.grpc_channels).await {
        Ok(c) => c,
        Err(e) => panic!("gRPC load: {e}"),
    };
    let begun = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let slots = (0..env.opts.connections).map(|i| {
        let mut client = clients[i % clients.len()].clone();
        let begun = begun.clone();
        tokio::spawn(async move {
            let message = unary_message();
            let (mut ok, mut other, mut lat) = (0u64, 0u64, Vec::<f64>::new());
            loop {
                let more = match until {
                    Until::Elapsed(d) => t0.elapsed() < d,
                    Until::Calls(n) => begun.fetch_add(1, Ordering::Relaxed) < n,
                };
                if !more {
                    break;
                }
                let t = Instant::now();
                let answer = client.send_message(call(message.clone())).await;
                lat.push(t.elapsed().as_secs_f64() * 1e3);
                match answer {
                    Ok(resp) if completed(resp.get_ref()) => ok += 1,
                    _ => other += 1,
                }
            }
            (ok, other, lat)
        })
    });
    let slots: Vec<_> = slots.collect();
    let (mut ok, mut other, mut lat) = (0u64, 0u64, Vec::new());
    for slot in slots {
        let (o, x, l) = slot.await.expect("a load slot");
        ok += o;
        other += x;
        lat.extend(l);
    }
    let elapsed = t0.elapsed().as_secs_f64();
    OhaResult {
        rps: (ok + other) as f64 / elapsed,
        p50_ms: percentile(lat.clone(), 0.5),
        p99_ms: percentile(lat, 0.99),
        ok,
        other,
        server_cpu: f64::NAN,
    }
}

/// One W2 stream over gRPC on a connection of its own: events/s of the `n` artifact chunks (the
/// call sent to the stream's end) and the time to the first message (the Task) and to the
/// first chunk.
pub(super) async fn one_stream(
    env: &Env,
    server: &Server,
    n: usize,
) -> Result<StreamResult, String> {
    let mut client = channels(server, 1).await?.remove(0);
    let message = stream_message(&env.message_id(), "count", &n.to_string());
    let t0 = Instant::now();
    let mut stream = client
        .send_streaming_message(call(message))
        .await
        .map_err(|s| format!("SendStreamingMessage over gRPC: {s}"))?
        .into_inner();
    let (mut first, mut first_chunk, mut chunks) = (None, None, 0usize);
    while let Some(event) = stream
        .message()
        .await
        .map_err(|s| format!("the stream ended with {s}"))?
    {
        first.get_or_insert_with(|| t0.elapsed());
        if let Some(pb::stream_response::Payload::ArtifactUpdate(_)) = event.payload {
            chunks += 1;
            first_chunk.get_or_insert_with(|| t0.elapsed());
        }
    }
    let total = t0.elapsed();
    // As over SSE: a2a-kit closes a streamed artifact with one more, empty `lastChunk` event.
    if chunks != n && chunks != n + 1 {
        return Err(format!("{chunks} chunks instead of {n}"));
    }
    Ok(StreamResult {
        events_per_s: n as f64 / total.as_secs_f64(),
        ttfe_ms: first.unwrap_or_default().as_secs_f64() * 1e3,
        first_chunk_ms: first_chunk.unwrap_or_default().as_secs_f64() * 1e3,
    })
}

/// The gRPC limit's canned messages, from a2a-kit's answers over gRPC: `hello`'s answer to
/// the W1 call (`grpc-unary.pb`), and the first event, the second artifact chunk (an appending
/// one, as all but the first of N are) and the last event of a `count` stream of 3 from
/// `stream` (`grpc-stream.pb`, length-delimited).
pub(super) async fn capture(env: &Env, hello: &Server, stream: &Server) {
    let unary = check_unary(hello)
        .await
        .unwrap_or_else(|e| panic!("hello over gRPC: {e}"));
    std::fs::write(env.opts.work.join("grpc-unary.pb"), unary.encode_to_vec()).expect("write");

    let mut client = channels(stream, 1)
        .await
        .unwrap_or_else(|e| panic!("stream over gRPC: {e}"))
        .remove(0);
    let mut events = client
        .send_streaming_message(call(stream_message("capture-grpc", "count", "3")))
        .await
        .unwrap_or_else(|s| panic!("stream over gRPC: {s}"))
        .into_inner();
    let mut all = Vec::new();
    while let Some(event) = events
        .message()
        .await
        .unwrap_or_else(|s| panic!("stream over gRPC ended with {s}"))
    {
        all.push(event);
    }
    let chunk = all
        .iter()
        .filter(|e| {
            matches!(
                e.payload,
                Some(pb::stream_response::Payload::ArtifactUpdate(_))
            )
        })
        .nth(1)
        .expect("artifact chunks over gRPC")
        .clone();
    let (Some(first), Some(last)) = (all.first(), all.last()) else {
        panic!("an empty stream over gRPC");
    };
    let mut frames = Vec::new();
    for m in [first, &chunk, last] {
        m.encode_length_delimited(&mut frames).expect("encode");
    }
    std::fs::write(env.opts.work.join("grpc-stream.pb"), frames).expect("write");
}
