//! The cases behind the fuzz targets in `fuzz_targets/`, one per decoder a client reaches.
//!
//! Each case feeds its input through the real code (the agent's tower service in process, or
//! the client's decoders) and checks what must hold for any input: no panic, no 5xx other than
//! 503 for a client's mistake, and an answer in the binding's own format. The server cases
//! share one agent (memory store, a skill per path of the pipeline) for the whole run, as a
//! long-lived agent would be.
//!
//! Inputs of the server cases are scripts of requests separated by a line `---`, and `{task}`
//! / `{context}` in a request stand for the task and context the previous requests created,
//! so the fuzzer reaches the operations on tasks that exist (cancel, subscribe, replies,
//! push configs), not only "task not found".

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use a2a_kit::binding::A2aHttpService;
use a2a_kit::binding::sse::parse_last_event_id;
use a2a_kit::client::{Binding, fuzzing};
use a2a_kit::prelude::*;
use a2a_kit::runtime::ExecutionConfig;
use a2a_kit::server::AgentService;
use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

/// The agent the server cases talk to: one skill per kind of input and run.
#[derive(Clone, Default)]
pub struct FuzzAgent;

/// A flight search, to give `Data<T>` extraction a schema to check.
#[derive(Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct Search {
    /// Where from.
    pub from: String,
    /// Where to.
    pub to: String,
    /// How many seats.
    pub seats: u8,
}

/// An agent with a skill for each path a request can take through the pipeline.
#[a2a_agent(name = "Fuzz Agent")]
impl FuzzAgent {
    /// Echo the text back.
    #[skill(default)]
    async fn echo(&self, Text(t): Text) -> String {
        t
    }

    /// Typed input and output.
    #[skill]
    async fn search(&self, Data(s): Data<Search>) -> Data<Search> {
        Data(s)
    }

    /// Ask a question, then answer with the reply.
    #[skill]
    async fn interview(&self, ctx: TaskContext, Text(t): Text) -> Result<String, SkillError> {
        let Text(answer) = ctx.ask(format!("why {t}?")).await?;
        Ok(answer)
    }

    /// Fail with the input as the reason.
    #[skill]
    async fn fail(&self, Text(t): Text) -> Result<String, SkillError> {
        Err(SkillError::failed(t))
    }

    /// Stream a few chunks.
    #[skill]
    #[streaming]
    fn count(&self, Text(t): Text) -> impl futures::Stream<Item = String> + Send + 'static {
        a2a_kit::stream! {
            for i in 0..3 {
                yield format!("{t} {i}");
            }
        }
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    http: A2aHttpService,
    /// A finished streamed task with several events, for `Last-Event-ID` resumes.
    finished: String,
    /// A task waiting for a reply, for push configs.
    waiting: Mutex<String>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let execution = ExecutionConfig {
            // Questions nobody answers must not pile up over millions of runs.
            reply_timeout: Some(Duration::from_secs(2)),
            skill_timeout: Some(Duration::from_secs(2)),
            ..ExecutionConfig::default()
        };
        let service = runtime.block_on(async {
            AgentService::builder(FuzzAgent)
                .task_manager(InMemoryTaskManager::new(InMemoryConfig {
                    max_tasks: 20_000,
                    terminal_ttl: Some(Duration::from_secs(60)),
                }))
                .execution(execution)
                .push_notifications(true)
                .public_url("http://agent.test")
                .build()
                .expect("a valid configuration")
        });
        let http = A2aHttpService::new(service);
        let mut h = Harness {
            runtime,
            http,
            finished: String::new(),
            waiting: Mutex::new(String::new()),
        };
        h.finished = h.create_task("count", "seed");
        h.new_waiting_task();
        h
    })
}

/// One request's answer.
struct Answer {
    status: u16,
    content_type: String,
    body: Bytes,
}

impl Harness {
    fn request(&self, req: http::Request<Full<Bytes>>) -> Answer {
        self.runtime.block_on(async {
            let resp = self.http.handle(req).await;
            let status = resp.status().as_u16();
            let content_type = resp
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            // A stream of a task still running ends with the task; a stream that outlives
            // this is not a fault (a subscriber may wait), so read what came within a while.
            let mut body = resp.into_body();
            let mut bytes = Vec::new();
            let deadline = tokio::time::sleep(Duration::from_millis(300));
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    frame = body.frame() => match frame {
                        Some(Ok(f)) => {
                            if let Some(d) = f.data_ref() {
                                bytes.extend_from_slice(d);
                            }
                        }
                        Some(Err(e)) => panic!("the response body failed: {e}"),
                        None => break,
                    },
                    _ = &mut deadline => break,
                }
            }
            if trace() {
                eprintln!(
                    "-> {status} {content_type}\n{}",
                    String::from_utf8_lossy(&bytes)
                );
            }
            Answer {
                status,
                content_type,
                body: bytes.into(),
            }
        })
    }

    /// A task of `skill` run to its end (or to its question), by JSON-RPC.
    fn create_task(&self, skill: &str, text: &str) -> String {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER",
                "parts": [{"text": text}], "metadata": {"skillId": skill}}}});
        let a = self.request(jsonrpc_request(body.to_string().into_bytes()));
        let v: Value = serde_json::from_slice(&a.body).expect("a JSON-RPC answer");
        v["result"]["task"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no task in {v}"))
            .to_string()
    }

    /// Start a new task waiting for a reply (the previous one may have been answered,
    /// canceled or expired).
    fn new_waiting_task(&self) -> String {
        let id = self.create_task("interview", "seed");
        *self.waiting.lock().unwrap() = id.clone();
        id
    }
}

/// `A2A_FUZZ_TRACE=1` prints every answer (to see what an input from a finding does).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("A2A_FUZZ_TRACE").is_some())
}

fn jsonrpc_request(body: Vec<u8>) -> http::Request<Full<Bytes>> {
    http::Request::post("/")
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(Full::new(body.into()))
        .expect("a request")
}

/// The ids a script's earlier answers named.
#[derive(Default)]
struct Ids {
    task: Option<String>,
    context: Option<String>,
}

impl Ids {
    fn fill(&self, part: &[u8]) -> Vec<u8> {
        let mut text = part.to_vec();
        for (key, value) in [(&b"{task}"[..], &self.task), (b"{context}", &self.context)] {
            if let Some(value) = value {
                text = replace(&text, key, value.as_bytes());
            }
        }
        text
    }

    /// Remember the task an answer (JSON-RPC or REST, unary or the first SSE frame) names.
    fn learn(&mut self, answer: &Answer) {
        let text = String::from_utf8_lossy(&answer.body);
        let first = if answer.content_type.starts_with("text/event-stream") {
            text.lines()
                .find_map(|l| l.strip_prefix("data:"))
                .unwrap_or("")
                .to_string()
        } else {
            text.into_owned()
        };
        let Ok(v) = serde_json::from_str::<Value>(&first) else {
            return;
        };
        let v = v.get("result").unwrap_or(&v);
        let task = v.get("task").unwrap_or(v);
        if let (Some(id), Some(ctx)) = (
            task.get("id").and_then(Value::as_str),
            task.get("contextId").and_then(Value::as_str),
        ) {
            self.task = Some(id.to_string());
            self.context = Some(ctx.to_string());
        }
    }
}

fn replace(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// The requests of a script (at most 8: a longer input is a slower one, not a new path).
fn script(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    split(data, b"\n---\n").take(8)
}

fn split<'a>(data: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(sep.len()).position(|w| w == sep) {
            Some(i) => {
                rest = Some(&r[i + sep.len()..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// What every answer must be: no server error but "unavailable" (a full store or queue is not
/// the client's fault, and says when to come back), and a body in the binding's format.
fn check_answer(answer: &Answer, jsonrpc: bool, what: &dyn std::fmt::Display) {
    assert!(
        answer.status < 500 || answer.status == 503,
        "HTTP {} for {what}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    if answer.content_type.starts_with("text/event-stream") {
        check_sse(&answer.body, jsonrpc, what);
        return;
    }
    if answer.body.is_empty() {
        // 204s, HEADs and 405s of the bindings carry nothing.
        return;
    }
    let v: Value = serde_json::from_slice(&answer.body).unwrap_or_else(|e| {
        panic!(
            "HTTP {} for {what} is not JSON ({e}): {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        )
    });
    if jsonrpc {
        check_envelope(&v, what);
    } else if answer.status >= 400 {
        // google.rpc.Status: the HTTP status in `code`, a message, the A2A reason in details.
        assert_eq!(
            v["error"]["code"].as_u64(),
            Some(u64::from(answer.status)),
            "REST error for {what}: {v}"
        );
        assert!(
            v["error"]["message"].is_string(),
            "REST error for {what}: {v}"
        );
    }
}

/// A JSON-RPC 2.0 response: `jsonrpc`, an `id`, and a result or an error with a code.
fn check_envelope(v: &Value, what: &dyn std::fmt::Display) {
    assert_eq!(v["jsonrpc"], "2.0", "envelope for {what}: {v}");
    assert!(v.get("id").is_some(), "no id for {what}: {v}");
    match (v.get("result"), v.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "error code for {what}: {v}");
            assert!(e["message"].is_string(), "error message for {what}: {v}");
        }
        _ => panic!("neither result nor error (or both) for {what}: {v}"),
    }
}

/// Every frame of an SSE answer is one JSON event with an increasing id.
fn check_sse(body: &[u8], jsonrpc: bool, what: &dyn std::fmt::Display) {
    let text = std::str::from_utf8(body).expect("an SSE body is UTF-8");
    let mut last_id = None;
    for frame in text.split("\n\n").filter(|f| !f.trim().is_empty()) {
        let mut data = String::new();
        for line in frame.lines() {
            if let Some(id) = line.strip_prefix("id: ") {
                let id: u64 = id.parse().expect("a numeric event id");
                assert!(
                    last_id.is_none_or(|l| id > l),
                    "ids not increasing for {what}: {text}"
                );
                last_id = Some(id);
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
        if data.is_empty() {
            continue; // a comment (keep-alive)
        }
        let v: Value = serde_json::from_str(&data)
            .unwrap_or_else(|e| panic!("an SSE frame for {what} is not JSON ({e}): {data}"));
        if jsonrpc {
            check_envelope(&v, what);
        }
    }
}

struct Shown<'a>(&'a [u8]);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.0))
    }
}

/// JSON-RPC: each request of the script is a body POSTed to the endpoint (envelope, method,
/// params, message parts, configuration).
pub fn jsonrpc(data: &[u8]) {
    let h = harness();
    let mut ids = Ids::default();
    for part in script(data) {
        let body = ids.fill(part);
        let answer = h.request(jsonrpc_request(body.clone()));
        check_answer(&answer, true, &Shown(&body));
        assert_eq!(
            answer.status,
            200,
            "JSON-RPC over HTTP 200 for {}",
            Shown(&body)
        );
        ids.learn(&answer);
    }
}

/// A request as text: `METHOD PATH` on the first line, then headers up to an empty line, then
/// the body.
fn http_request(text: &[u8]) -> Option<http::Request<Full<Bytes>>> {
    let (head, body) = match text.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&text[..i], &text[i + 2..]),
        None => (text, &b""[..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let (method, target) = lines.next()?.split_once(' ')?;
    let mut req = http::Request::builder()
        .method(http::Method::from_bytes(method.as_bytes()).ok()?)
        .uri(http::Uri::try_from(target).ok()?)
        .header("a2a-version", "1.0");
    let mut typed = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let name = http::HeaderName::from_bytes(name.trim().as_bytes()).ok()?;
        let value = http::HeaderValue::from_str(value.trim()).ok()?;
        typed |= name == http::header::CONTENT_TYPE;
        req = req.header(name, value);
    }
    if !typed && !body.is_empty() {
        req = req.header("content-type", "application/json");
    }
    req.body(Full::new(Bytes::copy_from_slice(body))).ok()
}

/// HTTP+JSON: each request of the script is a method, a path (routes, tenants, ids, query
/// parameters), headers and a body.
pub fn rest(data: &[u8]) {
    let h = harness();
    let mut ids = Ids::default();
    for part in script(data) {
        let text = ids.fill(part);
        let Some(req) = http_request(&text) else {
            continue; // not a request http can even represent
        };
        let jsonrpc = matches!(req.uri().path(), "" | "/");
        let answer = h.request(req);
        check_answer(&answer, jsonrpc, &Shown(&text));
        ids.learn(&answer);
    }
}

/// A2A 0.3: each request of the script is a JSON-RPC body (it starts with `{`) POSTed without
/// `A2A-Version`, as 0.3 clients send it, or an HTTP request (as in [`rest`]) sent with
/// `A2A-Version: 0.3`, mostly on 0.3's `/v1/` routes. Answers are 0.3's: JSON-RPC envelopes,
/// or HTTP+JSON bodies whose errors are `{"code", "message"}` with a 4xx status.
pub fn v03(data: &[u8]) {
    let h = harness();
    let mut ids = Ids::default();
    for part in script(data) {
        let text = ids.fill(part);
        let jsonrpc = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let req = if jsonrpc {
            http::Request::post("/")
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(text.clone())))
                .ok()
        } else {
            http_request(&text).map(|mut req| {
                req.headers_mut()
                    .insert("a2a-version", http::HeaderValue::from_static("0.3"));
                req
            })
        };
        let Some(req) = req else {
            continue;
        };
        let answer = h.request(req);
        if jsonrpc || answer.content_type.starts_with("text/event-stream") {
            check_answer(&answer, jsonrpc, &Shown(&text));
        } else {
            check_v03_rest(&answer, &Shown(&text));
        }
        ids.learn(&answer);
    }
}

/// A 0.3 HTTP+JSON answer: no server error but "unavailable", JSON, an error with its A2A
/// code and a message.
fn check_v03_rest(answer: &Answer, what: &dyn std::fmt::Display) {
    assert!(
        answer.status < 500 || answer.status == 501 || answer.status == 503,
        "HTTP {} for {what}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    if answer.body.is_empty() {
        return;
    }
    let v: Value = serde_json::from_slice(&answer.body).unwrap_or_else(|e| {
        panic!(
            "HTTP {} for {what} is not JSON ({e}): {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        )
    });
    if answer.status >= 400 {
        // A 1.0 route (a tenant named `v1`, or no 0.3 route) answers 1.0's error body.
        let error = v.get("error").unwrap_or(&v);
        assert!(
            error["code"].is_i64() && error["message"].is_string(),
            "0.3 error for {what}: {v}"
        );
    }
}

/// `Last-Event-ID`: the header's value on SubscribeToTask over both bindings, resuming a
/// finished task's stream. A value the parser takes must resume after that event (no event
/// at or before it comes again); one it refuses is a 400-class error, not a stream.
pub fn last_event_id(data: &[u8]) {
    let h = harness();
    let Ok(value) = http::HeaderValue::from_bytes(data) else {
        return;
    };
    let parsed = value.to_str().ok().map(parse_last_event_id);
    let rest = http::Request::get(format!("/tasks/{}:subscribe", h.finished))
        .header("a2a-version", "1.0")
        .header("last-event-id", value.clone())
        .body(Full::default())
        .expect("a request");
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
        "params": {"id": h.finished}});
    let mut rpc = jsonrpc_request(body.to_string().into_bytes());
    rpc.headers_mut().insert("last-event-id", value);
    for (req, jsonrpc) in [(rest, false), (rpc, true)] {
        let answer = h.request(req);
        check_answer(&answer, jsonrpc, &Shown(data));
        let stream = answer.content_type.starts_with("text/event-stream");
        match &parsed {
            Some(Ok(after)) if stream => {
                let text = String::from_utf8_lossy(&answer.body);
                for id in text.lines().filter_map(|l| l.strip_prefix("id: ")) {
                    let id: u64 = id.parse().expect("a numeric event id");
                    assert!(id > *after, "event {id} after Last-Event-ID {after}");
                }
            }
            Some(Ok(_)) => {}
            _ => assert!(
                !stream,
                "a stream for the unparsable Last-Event-ID {}",
                Shown(data)
            ),
        }
    }
}

/// Push configs: the input is a config's JSON, created on a waiting task over both bindings,
/// and then read, listed and deleted; also sent inline with a new message. What was accepted
/// must read back with the same URL, and every refusal must be the binding's error.
pub fn push_config(data: &[u8]) {
    let h = harness();
    let mut task = h.waiting.lock().unwrap().clone();
    // Keep a task waiting: the previous one may have expired.
    let probe = h.request(
        http::Request::get(format!("/tasks/{task}"))
            .header("a2a-version", "1.0")
            .body(Full::default())
            .expect("a request"),
    );
    if !String::from_utf8_lossy(&probe.body).contains("TASK_STATE_INPUT_REQUIRED") {
        task = h.new_waiting_task();
    }
    let rest = http::Request::post(format!("/tasks/{task}/pushNotificationConfigs"))
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::copy_from_slice(data)))
        .expect("a request");
    let answer = h.request(rest);
    check_answer(&answer, false, &Shown(data));
    if answer.status == 200 {
        let created: Value = serde_json::from_slice(&answer.body).expect("a config");
        let id = segment(created["id"].as_str().expect("a config id"));
        let get = h.request(
            http::Request::get(format!("/tasks/{task}/pushNotificationConfigs/{id}"))
                .header("a2a-version", "1.0")
                .body(Full::default())
                .expect("a request"),
        );
        check_answer(&get, false, &Shown(data));
        let got: Value = serde_json::from_slice(&get.body).expect("a config");
        assert_eq!(got["url"], created["url"], "read back {}", Shown(data));
        let delete = h.request(
            http::Request::delete(format!("/tasks/{task}/pushNotificationConfigs/{id}"))
                .header("a2a-version", "1.0")
                .body(Full::default())
                .expect("a request"),
        );
        check_answer(&delete, false, &Shown(data));
    }
    // The same config through JSON-RPC, when it is JSON at all.
    if let Ok(config) = serde_json::from_slice::<Value>(data) {
        let mut params = config.clone();
        if let Some(obj) = params.as_object_mut() {
            obj.insert("taskId".into(), Value::String(task.clone()));
        }
        for body in [
            serde_json::json!({"jsonrpc": "2.0", "id": 2,
                "method": "CreateTaskPushNotificationConfig", "params": params}),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "SendMessage",
                "params": {"message": {"messageId": "m", "role": "ROLE_USER",
                    "parts": [{"text": "hi"}]},
                    "configuration": {"taskPushNotificationConfig": config}}}),
        ] {
            let answer = h.request(jsonrpc_request(body.to_string().into_bytes()));
            check_answer(&answer, true, &Shown(data));
            // Deleted again: a task keeps only so many configs.
            let created: Option<Value> = serde_json::from_slice(&answer.body).ok();
            if let Some(id) = created.as_ref().and_then(|v| v["result"]["id"].as_str()) {
                let delete = serde_json::json!({"jsonrpc": "2.0", "id": 4,
                    "method": "DeleteTaskPushNotificationConfig",
                    "params": {"taskId": task, "id": id}});
                let answer = h.request(jsonrpc_request(delete.to_string().into_bytes()));
                check_answer(&answer, true, &Shown(data));
            }
        }
    }
}

/// `s` as one path segment: everything but the unreserved characters percent-encoded.
fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The client's card reader: any document is a card or an error, never a panic.
pub fn client_card(data: &[u8]) {
    if let Ok(card) = fuzzing::card(data) {
        // What parsed serializes back and parses again the same.
        let json = serde_json::to_vec(&card).expect("a card serializes");
        let again = fuzzing::card(&json).expect("a serialized card parses");
        assert_eq!(card, again);
    }
}

/// The client's stream and response decoders: the first byte picks the binding, the status
/// and the content type; the rest is the body.
pub fn client_stream(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let binding = if selector & 1 == 0 {
        Binding::JsonRpc
    } else {
        Binding::HttpJson
    };
    let status = [200, 400, 404, 500][usize::from(selector >> 1 & 3)];
    let content_type = if selector & 8 == 0 {
        "text/event-stream"
    } else {
        "application/json"
    };
    let runtime = client_runtime();
    runtime.block_on(async {
        let events = fuzzing::stream(binding, status, content_type, body.to_vec()).await;
        for (id, _) in events.into_iter().flatten() {
            if let Some(id) = id {
                assert!(!id.is_empty(), "an empty id is no id");
            }
        }
        let _ = fuzzing::unary(binding, status, content_type, body.to_vec()).await;
    });
}

fn client_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// The keys the signature cases sign and verify with (the tests' fixtures).
fn card_keys() -> &'static (a2a_kit::signing::Signer, a2a_kit::signing::Verifier) {
    static KEYS: OnceLock<(a2a_kit::signing::Signer, a2a_kit::signing::Verifier)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let signer = a2a_kit::signing::Signer::from_pem(
            include_str!("../../tests/fixtures/signing/es256.pem"),
            "fuzz",
        )
        .expect("the fixture key");
        let verifier = a2a_kit::signing::Verifier::new()
            .trust_jwk(&signer.public_jwk().to_string())
            .expect("its public JWK");
        (signer, verifier)
    })
}

/// A client verifying a card's signatures: any document is verified or refused, never a
/// panic; and any card that parses, once signed, verifies, both typed and as the JSON a
/// client receives (the signature covers what goes over the wire).
pub fn card_signature(data: &[u8]) {
    let (signer, verifier) = card_keys();
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let _ = verifier.verify_card_json(&value);
    }
    if let Ok(mut card) = fuzzing::card(data) {
        let _ = verifier.verify_card(&card);
        card.signatures.clear();
        signer.sign_card(&mut card).expect("a card signs");
        assert_eq!(verifier.verify_card(&card).as_deref(), Ok("fuzz"));
        let json = serde_json::to_value(&card).expect("a card serializes");
        assert_eq!(verifier.verify_card_json(&json).as_deref(), Ok("fuzz"));
    }
}

/// A webhook receiver checking `X-A2A-Signature`: the input is the header, a newline, the
/// body. Any header is verified or refused; a signature the key made verifies only its body.
pub fn webhook_signature(data: &[u8]) {
    let (signer, verifier) = card_keys();
    let (header, body) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    if let Ok(header) = std::str::from_utf8(header) {
        let _ = verifier.verify_detached(header, body);
    }
    let signed = signer.sign_delivery(body).expect("a body signs");
    assert!(verifier.verify_detached(&signed, body).is_ok());
    let mut other = body.to_vec();
    other.push(b'!');
    assert!(verifier.verify_detached(&signed, &other).is_err());
}

/// An agent reading `Authorization: Bearer <token>`: any header value is a caller or a
/// refusal (never a panic), and only a token the configured secret signed names a caller.
pub fn bearer_jwt(data: &[u8]) {
    use a2a_kit::auth::{AuthError, Authenticator, Jwt};
    static JWT: OnceLock<Jwt> = OnceLock::new();
    let jwt = JWT.get_or_init(|| {
        Jwt::hmac("a fuzzing secret of at least thirty-two bytes").expect("a secret")
    });
    let Ok(value) = http::HeaderValue::from_bytes(data) else {
        return;
    };
    let (parts, ()) = http::Request::post("/")
        .header(http::header::AUTHORIZATION, value)
        .body(())
        .expect("a request")
        .into_parts();
    let runtime = client_runtime();
    match runtime.block_on(jwt.authenticate(&parts)) {
        Ok(caller) => panic!("a token nobody signed named a caller: {caller:?}"),
        Err(AuthError::Missing | AuthError::Invalid(_)) => {}
        Err(other) => panic!("a bad token is 401, not {other:?}"),
    }
}

/// The gRPC methods the `grpc` case calls, the first input byte picking one.
const GRPC_METHODS: [&str; 11] = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "GetExtendedAgentCard",
    "DeleteTaskPushNotificationConfig",
];

/// The field number of the task id in each method's request (`None`: it has none).
const GRPC_TASK_FIELD: [Option<u8>; 11] = [
    None,
    None,
    Some(2),
    None,
    Some(2),
    Some(2),
    Some(3),
    Some(2),
    Some(1),
    None,
    Some(2),
];

/// gRPC: the first byte picks the method (its low six bits), whether the request names a task
/// that exists (bit 6: the harness's task waiting for a reply, appended as the task id field,
/// which protobuf's "last one wins" makes the id), and whether the rest is the whole body,
/// framing and all (bit 7; else it is one message, framed here); the rest is protobuf as a
/// client could send it. Every answer is a gRPC answer (HTTP 200, `application/grpc`, a
/// `grpc-status`), never INTERNAL or UNKNOWN (a client's bytes are its mistake).
pub fn grpc(data: &[u8]) {
    let Some((&pick, message)) = data.split_first() else {
        return;
    };
    let which = usize::from(pick & 0x3f) % GRPC_METHODS.len();
    let method = GRPC_METHODS[which];
    let h = harness();
    let mut message = message.to_vec();
    if pick & 0x40 != 0
        && let Some(field) = GRPC_TASK_FIELD[which]
    {
        let id = h.waiting.lock().unwrap().clone();
        message.push(field << 3 | 2);
        message.push(id.len() as u8);
        message.extend_from_slice(id.as_bytes());
    }
    let body = if pick & 0x80 != 0 {
        Bytes::from(message.clone())
    } else {
        let mut framed = Vec::with_capacity(message.len() + 5);
        framed.push(0);
        framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
        framed.extend_from_slice(&message);
        Bytes::from(framed)
    };
    let mut req = http::Request::post(format!("/lf.a2a.v1.A2AService/{method}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(Full::new(body))
        .expect("a request");
    *req.version_mut() = http::Version::HTTP_2;
    let (status, headers, trailers) = h.runtime.block_on(async {
        let resp = h.http.handle(req).await;
        let (parts, mut body) = resp.into_parts();
        let mut trailers = None;
        let deadline = tokio::time::sleep(Duration::from_millis(300));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                frame = body.frame() => match frame {
                    Some(Ok(f)) => {
                        if let Ok(t) = f.into_trailers() {
                            trailers = Some(t);
                        }
                    }
                    Some(Err(e)) => panic!("the response body failed: {e}"),
                    None => break,
                },
                // A stream of a task still running: what came so far is enough.
                _ = &mut deadline => break,
            }
        }
        (parts.status, parts.headers, trailers)
    });
    assert_eq!(
        status,
        http::StatusCode::OK,
        "{method}: gRPC answers are HTTP 200"
    );
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(
        content_type.starts_with("application/grpc"),
        "{method}: {content_type}"
    );
    // Trailers-Only answers carry the status in the headers.
    let code = trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| headers.get("grpc-status"))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.parse::<i32>().expect("a numeric grpc-status"));
    if trace() {
        eprintln!("-> {method}: grpc-status {code:?}");
    }
    if let Some(code) = code {
        // 2 UNKNOWN, 13 INTERNAL: a fault of the agent's, never the answer to bytes.
        assert!(
            !matches!(code, 2 | 13),
            "{method}: grpc-status {code} for {message:?}: {:?}",
            trailers
                .as_ref()
                .or(Some(&headers))
                .and_then(|t| t.get("grpc-message"))
        );
    }
}
