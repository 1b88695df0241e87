//! Shared by the LLM tests (included with `#[path]`): a scripted fake model server speaking
//! OpenAI Chat Completions and Anthropic Messages wire formats, so tests need no network and
//! can script cuts, hangs, malformed chunks and HTTP errors.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Response, StatusCode, Uri, header};
use axum::routing::post;
use serde_json::{Value, json};

/// One step of a scripted reply.
#[derive(Clone, Debug)]
pub enum Step {
    /// One text delta.
    Text(String),
    /// A tool call streamed as these argument pieces (concatenated: the JSON arguments).
    Tool {
        id: String,
        name: String,
        pieces: Vec<String>,
    },
    /// Pause before the next step (for a non-stream request: before the reply).
    Delay(Duration),
    /// An SSE payload sent verbatim as `data: <it>\n\n`; for a non-stream request, the whole body.
    Raw(String),
    /// Abort the body here with an error: the client sees the connection cut.
    Cut,
    /// Send nothing more and keep the connection open until the client goes away.
    Hang,
    /// End the body cleanly here: no finish chunk, no `[DONE]` / `message_stop`.
    EndWithoutDone,
    /// The finish reason to report, in OpenAI's words (`stop`, `tool_calls`, `length`);
    /// mapped for Anthropic (`end_turn`, `tool_use`, `max_tokens`). Sends nothing itself.
    Finish(String),
}

/// What the server answers one request with.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Streamed, or folded into one JSON reply for a non-stream request.
    Steps(Vec<Step>),
    /// A plain HTTP reply, e.g. 429 with `retry-after`.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// 200 with SSE headers and an empty body (llama.cpp's server, streamed auto tool choice).
    Empty,
    /// The reply made from the request's body when it arrives (e.g. to answer with a task id a
    /// tool result carries).
    Dynamic(Responder),
}

/// Makes a reply from a request body.
#[derive(Clone)]
pub struct Responder(pub std::sync::Arc<dyn Fn(&Value) -> Reply + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

/// A reply made from the request body when it arrives.
pub fn dynamic(f: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Reply {
    Reply::Dynamic(Responder(std::sync::Arc::new(f)))
}

/// One text delta.
pub fn text(s: &str) -> Step {
    Step::Text(s.to_string())
}

/// A tool call streamed as `pieces`.
pub fn tool(id: &str, name: &str, pieces: &[&str]) -> Step {
    Step::Tool {
        id: id.to_string(),
        name: name.to_string(),
        pieces: pieces.iter().map(|p| p.to_string()).collect(),
    }
}

struct Inner {
    queue: VecDeque<Reply>,
    default: Reply,
    requests: Vec<Value>,
    headers: Vec<Vec<(String, String)>>,
    usage: (u64, u64),
}

struct Shared {
    inner: Mutex<Inner>,
    disconnects: AtomicUsize,
}

/// The fake model server; stops when dropped.
pub struct FakeModel {
    /// `http://127.0.0.1:PORT` (no `/v1`).
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeModel {
    /// Start on a random port.
    pub async fn start() -> FakeModel {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                default: Reply::Steps(vec![text("ok")]),
                requests: Vec::new(),
                headers: Vec::new(),
                usage: (7, 5),
            }),
            disconnects: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .route(
                "/v1/chat/completions",
                post(|s, h, b| respond(false, (s, h, b))),
            )
            .route("/v1/messages", post(|s, h, b| respond(true, (s, h, b))))
            .fallback(|uri: Uri| async move {
                (StatusCode::NOT_FOUND, format!("fake model: no route {uri}"))
            })
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("fake model");
        });
        FakeModel { base, shared, task }
    }

    /// `base` + `/v1`, what OpenAI-compatible clients take as their base URL.
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.base)
    }

    /// Queue a reply: replies are used in order, one per request (either endpoint).
    pub fn push(&self, reply: Reply) {
        self.inner().queue.push_back(reply);
    }

    /// The reply used when the queue is empty (initially `Steps([Text("ok")])`).
    pub fn set_default(&self, reply: Reply) {
        self.inner().default = reply;
    }

    /// Every request body received, in order (non-JSON bodies as a JSON string).
    pub fn requests(&self) -> Vec<Value> {
        self.inner().requests.clone()
    }

    /// The headers of every request, in order, names lowercase.
    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        self.inner().headers.clone()
    }

    /// Responses whose client went away before the body ended (or, for a non-stream
    /// request, before the reply was sent).
    pub fn disconnects(&self) -> usize {
        self.shared.disconnects.load(Ordering::SeqCst)
    }

    /// True once `disconnects() >= n`, false after `within`.
    pub async fn wait_disconnect(&self, n: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if self.disconnects() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The token counts reported from now on (default 7 and 5).
    pub fn usage(&self, prompt: u64, completion: u64) {
        self.inner().usage = (prompt, completion);
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.shared.inner.lock().unwrap()
    }
}

type Req = (State<Arc<Shared>>, HeaderMap, Bytes);

/// What a response body does, in order; the body ends after the last.
enum Action {
    Send(String),
    Sleep(Duration),
    Fail,
    Hang,
}

/// Counts a disconnect when dropped before the response ended on its own.
struct Guard {
    shared: Arc<Shared>,
    done: bool,
}

impl Guard {
    fn new(shared: Arc<Shared>) -> Guard {
        Guard {
            shared,
            done: false,
        }
    }

    /// The response ended on its own: no disconnect to count.
    fn disarm(&mut self) {
        self.done = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.done {
            self.shared.disconnects.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn respond(anthropic: bool, (State(shared), headers, body): Req) -> Response<Body> {
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_string()))
        .collect();
    let (reply, usage) = {
        let mut inner = shared.inner.lock().unwrap();
        inner.requests.push(body.clone());
        inner.headers.push(headers);
        let reply = inner
            .queue
            .pop_front()
            .unwrap_or_else(|| inner.default.clone());
        (reply, inner.usage)
    };
    let reply = match reply {
        Reply::Dynamic(Responder(f)) => f(&body),
        other => other,
    };
    let steps = match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut out = Response::builder().status(status);
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                out = out.header(header::CONTENT_TYPE, "application/json");
            }
            for (k, v) in headers {
                out = out.header(k, v);
            }
            return out.body(Body::from(body)).unwrap();
        }
        Reply::Empty => return sse(Body::empty()),
        Reply::Steps(steps) => steps,
        Reply::Dynamic(_) => {
            return Response::builder()
                .status(500)
                .body(Body::from("a responder made a responder"))
                .unwrap();
        }
    };
    let m = Meta {
        model: body["model"].as_str().unwrap_or("fake-model").to_string(),
        usage,
        finish: finish_reason(&steps),
    };
    if body["stream"].as_bool() == Some(true) {
        let actions = match anthropic {
            false => openai_stream(&steps, &m),
            true => anthropic_stream(&steps, &m),
        };
        return sse(body_of(actions, shared));
    }
    // Non-stream: delays and a hang happen before the reply, like a model thinking.
    let mut guard = Guard::new(shared.clone());
    let mut blocks: Vec<(Option<(String, String)>, String)> = Vec::new();
    let mut tail = None;
    for step in steps {
        match step {
            Step::Text(t) => match blocks.last_mut() {
                Some((None, acc)) => acc.push_str(&t),
                _ => blocks.push((None, t)),
            },
            Step::Tool { id, name, pieces } => blocks.push((Some((id, name)), pieces.concat())),
            Step::Delay(d) => tokio::time::sleep(d).await,
            Step::Hang => futures::future::pending::<()>().await,
            Step::Finish(_) => {}
            end => {
                tail = Some(end);
                break;
            }
        }
    }
    let whole = match anthropic {
        false => openai_whole(&blocks, &m),
        true => anthropic_whole(&blocks, &m),
    }
    .to_string();
    let half: String = whole.chars().take(whole.chars().count() / 2).collect();
    let body = match tail {
        Some(Step::Raw(raw)) => Body::from(raw),
        Some(Step::Cut) => body_of(vec![Action::Send(half), Action::Fail], shared),
        Some(_) => Body::from(half),
        None => Body::from(whole),
    };
    guard.disarm();
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap()
}

fn sse(body: Body) -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap()
}

/// A body playing `actions`; dropped early (the client went away), it counts a disconnect.
fn body_of(actions: Vec<Action>, shared: Arc<Shared>) -> Body {
    let state = (VecDeque::from(actions), Guard::new(shared));
    let stream = futures::stream::unfold(state, |(mut actions, mut guard)| async move {
        loop {
            match actions.pop_front() {
                None => {
                    guard.disarm();
                    return None;
                }
                Some(Action::Send(s)) => return Some((Ok(s), (actions, guard))),
                Some(Action::Sleep(d)) => tokio::time::sleep(d).await,
                Some(Action::Fail) => {
                    // Let hyper flush what came before, so the cut is mid-body, not before it.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    guard.disarm();
                    let err =
                        std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "scripted cut");
                    return Some((Err(err), (VecDeque::new(), guard)));
                }
                Some(Action::Hang) => futures::future::pending::<()>().await,
            }
        }
    });
    Body::from_stream(stream)
}

struct Meta {
    model: String,
    usage: (u64, u64),
    /// In OpenAI's words.
    finish: String,
}

fn finish_reason(steps: &[Step]) -> String {
    let forced = steps.iter().rev().find_map(|s| match s {
        Step::Finish(r) => Some(r.clone()),
        _ => None,
    });
    let tools = steps.iter().any(|s| matches!(s, Step::Tool { .. }));
    forced.unwrap_or_else(|| if tools { "tool_calls" } else { "stop" }.to_string())
}

fn anthropic_reason(openai: &str) -> &str {
    match openai {
        "stop" => "end_turn",
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        other => other,
    }
}

fn data(v: Value) -> Action {
    Action::Send(format!("data: {v}\n\n"))
}

/// The steps every format treats alike; true when the body ends here.
fn common(step: &Step, out: &mut Vec<Action>) -> bool {
    match step {
        Step::Delay(d) => out.push(Action::Sleep(*d)),
        Step::Raw(raw) => out.push(Action::Send(format!("data: {raw}\n\n"))),
        Step::Cut => out.push(Action::Fail),
        Step::Hang => out.push(Action::Hang),
        Step::EndWithoutDone => {}
        Step::Text(_) | Step::Tool { .. } | Step::Finish(_) => return false,
    }
    matches!(step, Step::Cut | Step::Hang | Step::EndWithoutDone)
}

fn openai_stream(steps: &[Step], m: &Meta) -> Vec<Action> {
    let frame = |choices: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
               "model": m.model, "choices": choices})
    };
    let chunk = |delta: Value| {
        data(frame(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        ))
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}))];
    let mut calls = 0;
    for step in steps {
        match step {
            Step::Text(t) => out.push(chunk(json!({"content": t}))),
            Step::Tool { id, name, pieces } => {
                out.push(chunk(
                    json!({"tool_calls": [{"index": calls, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                ));
                for piece in pieces {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]}),
                    ));
                }
                calls += 1;
            }
            other if common(other, &mut out) => return out,
            _ => {}
        }
    }
    out.push(data(frame(
        json!([{"index": 0, "delta": {}, "finish_reason": m.finish}]),
    )));
    let (p, c) = m.usage;
    let mut usage = frame(json!([]));
    usage["usage"] = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    out.push(data(usage));
    out.push(Action::Send("data: [DONE]\n\n".into()));
    out
}

fn anthropic_stream(steps: &[Step], m: &Meta) -> Vec<Action> {
    let ev = |v: Value| {
        Action::Send(format!(
            "event: {}\ndata: {v}\n\n",
            v["type"].as_str().unwrap()
        ))
    };
    let mut out = vec![ev(
        json!({"type": "message_start", "message": {"id": "msg_1",
        "type": "message", "role": "assistant", "model": m.model, "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": m.usage.0, "output_tokens": 1}}}),
    )];
    // The open block: its index, and whether it is text.
    let mut open: Option<(usize, bool)> = None;
    let mut next = 0;
    let close = |open: &mut Option<(usize, bool)>, out: &mut Vec<Action>| {
        if let Some((k, _)) = open.take() {
            out.push(ev(json!({"type": "content_block_stop", "index": k})));
        }
    };
    for step in steps {
        match step {
            Step::Text(t) => {
                if !matches!(open, Some((_, true))) {
                    close(&mut open, &mut out);
                    out.push(ev(json!({"type": "content_block_start", "index": next,
                        "content_block": {"type": "text", "text": ""}})));
                    open = Some((next, true));
                    next += 1;
                }
                out.push(ev(json!({"type": "content_block_delta", "index": next - 1,
                    "delta": {"type": "text_delta", "text": t}})));
            }
            Step::Tool { id, name, pieces } => {
                close(&mut open, &mut out);
                out.push(ev(json!({"type": "content_block_start", "index": next,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                for piece in pieces {
                    out.push(ev(json!({"type": "content_block_delta", "index": next,
                        "delta": {"type": "input_json_delta", "partial_json": piece}})));
                }
                open = Some((next, false));
                next += 1;
            }
            other if common(other, &mut out) => return out,
            _ => {}
        }
    }
    close(&mut open, &mut out);
    out.push(ev(json!({"type": "message_delta",
        "delta": {"stop_reason": anthropic_reason(&m.finish), "stop_sequence": null},
        "usage": {"output_tokens": m.usage.1}})));
    out.push(ev(json!({"type": "message_stop"})));
    out
}

/// Blocks: `(None, text)` or `(Some((id, name)), arguments)`.
type Blocks = [(Option<(String, String)>, String)];

fn openai_whole(blocks: &Blocks, m: &Meta) -> Value {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.0.is_none())
        .map(|b| b.1.as_str())
        .collect();
    let calls: Vec<Value> = blocks
        .iter()
        .filter_map(|(call, args)| {
            let (id, name) = call.as_ref()?;
            Some(json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        })
        .collect();
    let mut message = json!({"role": "assistant",
        "content": if texts.is_empty() { Value::Null } else { texts.concat().into() }});
    if !calls.is_empty() {
        message["tool_calls"] = calls.into();
    }
    let (p, c) = m.usage;
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": m.model,
        "choices": [{"index": 0, "message": message, "finish_reason": m.finish}],
        "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})
}

fn anthropic_whole(blocks: &Blocks, m: &Meta) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .map(|(call, body)| match call {
            None => json!({"type": "text", "text": body}),
            Some((id, name)) => {
                // Unparseable arguments stay a string, so a test sees them arrive as sent.
                let input =
                    serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.clone()));
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        })
        .collect();
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": m.model,
        "content": content, "stop_reason": anthropic_reason(&m.finish), "stop_sequence": null,
        "usage": {"input_tokens": m.usage.0, "output_tokens": m.usage.1}})
}
