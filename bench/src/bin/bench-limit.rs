//! The limit: a bare axum handler with no A2A logic, on the same axum/hyper/tokio stack and
//! socket options as `a2a_kit_axum::serve_service`.
//!
//! `POST /` parses the JSON-RPC body (all of it, into a `serde_json::Value`) and answers:
//! * `SendMessage`: the bytes of `--unary FILE` (a real a2a-kit response to the same request,
//!   captured by the driver), as `application/json`;
//! * `SendStreamingMessage` with `metadata.skillId` `count` and text N: an SSE stream of the
//!   frames of `--stream-frames FILE` (three JSON lines captured from a2a-kit's stream: the
//!   first event, one artifact chunk, the last event): first, N chunks, last, each with an
//!   `id:` line as a2a-kit sends them;
//! * `SendStreamingMessage` with skill `hold` and text S: the first frame, then nothing for S
//!   seconds (an open stream).
//!
//! `bench-limit [--bind HOST:PORT] --unary FILE --stream-frames FILE`

#![forbid(unsafe_code)]

a2a_bench::server_allocator!();

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use bytes::{BufMut, BytesMut};
use clap::Parser;
use futures::StreamExt;
use serde_json::Value;

#[derive(Parser)]
struct Cli {
    #[arg(long, default_value = "127.0.0.1:3000")]
    bind: std::net::SocketAddr,
    /// The SendMessage response body.
    #[arg(long)]
    unary: std::path::PathBuf,
    /// Three lines: the first, one chunk, and the last event's JSON-RPC envelope.
    #[arg(long)]
    stream_frames: std::path::PathBuf,
}

struct Canned {
    unary: Bytes,
    first: Bytes,
    chunk: Bytes,
    last: Bytes,
}

fn frame(id: u64, json: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(json.len() + 32);
    b.put_slice(b"id: ");
    b.put_slice(id.to_string().as_bytes());
    b.put_u8(b'\n');
    b.put_slice(b"data: ");
    b.put_slice(json);
    b.put_slice(b"\n\n");
    b.freeze()
}

fn sse(body: Body) -> Response {
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

async fn rpc(canned: Arc<Canned>, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return (axum::http::StatusCode::BAD_REQUEST, "bad json").into_response();
    };
    let params = &req["params"];
    match req["method"].as_str() {
        Some("SendMessage") => {
            let mut r = Body::from(canned.unary.clone()).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        }
        Some("SendStreamingMessage") => {
            let n: u64 = params["message"]["parts"][0]["text"]
                .as_str()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(5);
            let skill = params["message"]["metadata"]["skillId"]
                .as_str()
                .unwrap_or("count")
                .to_string();
            let c = canned.clone();
            let frames = async_stream::stream! {
                yield frame(1, &c.first);
                if skill == "hold" {
                    tokio::time::sleep(Duration::from_secs(n)).await;
                    return;
                }
                for i in 0..n {
                    yield frame(i + 2, &c.chunk);
                }
                yield frame(n + 2, &c.last);
            };
            sse(Body::from_stream(frames.map(Ok::<_, Infallible>)))
        }
        _ => (axum::http::StatusCode::NOT_FOUND, "unknown method").into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let unary = Bytes::from(std::fs::read(&cli.unary)?);
    let text = std::fs::read_to_string(&cli.stream_frames)?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let [first, chunk, last] = lines[..] else {
        return Err(format!(
            "{}: expected 3 lines, got {}",
            cli.stream_frames.display(),
            lines.len()
        )
        .into());
    };
    let canned = Arc::new(Canned {
        unary,
        first: Bytes::from(first.to_string()),
        chunk: Bytes::from(chunk.to_string()),
        last: Bytes::from(last.to_string()),
    });
    let app = Router::new()
        .route("/", post(move |body: Bytes| rpc(canned.clone(), body)))
        .route("/.well-known/agent-card.json", get(|| async { "{}" }));
    let listener = tokio::net::TcpListener::bind(cli.bind).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
