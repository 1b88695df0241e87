//! Shared by the `client_*` tests (included with `#[path]`): a recording HTTP proxy that can
//! cut streams, and client helpers.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::client::{A2aClient, Binding};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Request, Response};
use futures::StreamExt;

/// One request that went through the proxy.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Request headers.
    pub headers: HeaderMap,
    /// Request body.
    pub body: String,
    /// Response status.
    pub status: u16,
}

impl Recorded {
    /// A request header as a string.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
    /// The JSON-RPC method, if the body is a JSON-RPC request.
    pub fn rpc_method(&self) -> Option<String> {
        serde_json::from_str::<serde_json::Value>(&self.body)
            .ok()?
            .get("method")?
            .as_str()
            .map(str::to_string)
    }
}

/// How to cut the next event stream.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    /// Pass this many events, then break the connection.
    Abort(usize),
    /// Pass this many events, then end the response cleanly.
    Close(usize),
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    base: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    cut: Arc<Mutex<Option<Cut>>>,
    http: reqwest::Client,
}

/// A proxy in front of an agent; the card it serves points at the proxy.
pub struct Proxy {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    cut: Arc<Mutex<Option<Cut>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Start a proxy forwarding to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let cut = Arc::new(Mutex::new(None));
        let state = ProxyState {
            upstream: upstream.trim_end_matches('/').to_string(),
            base: base.clone(),
            log: log.clone(),
            cut: cut.clone(),
            http: reqwest::Client::new(),
        };
        let app = axum::Router::new().fallback(handle).with_state(state);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("proxy");
        });
        Proxy {
            base,
            log,
            cut,
            task,
        }
    }

    /// Cut the next event stream that passes.
    pub fn cut_next_stream(&self, cut: Cut) {
        *self.cut.lock().unwrap() = Some(cut);
    }

    /// Everything recorded so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Forget the recorded requests.
    pub fn clear(&self) {
        self.log.lock().unwrap().clear();
    }
}

async fn handle(State(st): State<ProxyState>, req: Request<Body>) -> Response<Body> {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let headers = req.headers().clone();
    let body = axum::body::to_bytes(req.into_body(), 16 << 20)
        .await
        .unwrap_or_default();
    let mut up = st
        .http
        .request(method.clone(), format!("{}{path}", st.upstream));
    for (k, v) in &headers {
        if k != "host" && k != "content-length" {
            up = up.header(k, v);
        }
    }
    let resp = match up.body(body.clone()).send().await {
        Ok(r) => r,
        Err(e) => {
            return Response::builder()
                .status(502)
                .body(Body::from(e.to_string()))
                .unwrap();
        }
    };
    let status = resp.status();
    st.log.lock().unwrap().push(Recorded {
        method: method.to_string(),
        path: path.clone(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        status: status.as_u16(),
    });
    let mut out = Response::builder().status(status.as_u16());
    for (k, v) in resp.headers() {
        if k != "content-length" && k != "transfer-encoding" {
            out = out.header(k, v);
        }
    }
    let is_sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if path.starts_with("/.well-known/") && status.is_success() {
        let text = resp
            .text()
            .await
            .unwrap_or_default()
            .replace(&st.upstream, &st.base);
        return out.body(Body::from(text)).unwrap();
    }
    if !is_sse {
        return out
            .body(Body::from(resp.bytes().await.unwrap_or_default()))
            .unwrap();
    }
    let cut = st.cut.lock().unwrap().take();
    let Some(cut) = cut else {
        return out.body(Body::from_stream(resp.bytes_stream())).unwrap();
    };
    let (limit, abort) = match cut {
        Cut::Abort(n) => (n, true),
        Cut::Close(n) => (n, false),
    };
    // Pass `limit` whole events, then stop.
    let upstream = resp.bytes_stream().boxed();
    let stream = futures::stream::unfold(
        (upstream, Vec::<u8>::new(), 0usize, false),
        move |(mut up, mut buf, mut passed, done)| async move {
            if done {
                return None;
            }
            loop {
                if passed >= limit {
                    if !abort {
                        return None;
                    }
                    // Let what was passed reach the client before the connection breaks.
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    let item: Result<axum::body::Bytes, std::io::Error> =
                        Err(std::io::Error::other("proxy cut the stream"));
                    return Some((item, (up, buf, passed, true)));
                }
                if let Some(end) = find_event_end(&buf) {
                    let event: Vec<u8> = buf.drain(..end).collect();
                    if !event.starts_with(b":") {
                        passed += 1;
                    }
                    return Some((Ok(axum::body::Bytes::from(event)), (up, buf, passed, false)));
                }
                match up.next().await {
                    Some(Ok(b)) => buf.extend_from_slice(&b),
                    _ => {
                        let rest = std::mem::take(&mut buf);
                        return (!rest.is_empty()).then(|| {
                            (
                                Ok(axum::body::Bytes::from(rest)),
                                (up, Vec::new(), passed, true),
                            )
                        });
                    }
                }
            }
        },
    );
    out.body(Body::from_stream(stream)).unwrap()
}

/// The end (exclusive) of the first complete SSE event in `buf`.
fn find_event_end(buf: &[u8]) -> Option<usize> {
    for (i, w) in buf.windows(2).enumerate() {
        if w == b"\n\n" {
            return Some(i + 2);
        }
    }
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// A client for `url` using `binding`.
pub async fn client(url: &str, binding: Binding) -> A2aClient {
    A2aClient::builder()
        .binding(binding)
        .timeout(Some(Duration::from_secs(30)))
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect {url} over {binding}: {e}"))
}

/// Both HTTP bindings (what the proxy carries).
pub const BINDINGS: [Binding; 2] = [Binding::JsonRpc, Binding::HttpJson];

/// Every binding, gRPC too (for a client talking to the agent directly).
pub const ALL_BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];
