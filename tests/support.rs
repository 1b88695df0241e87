//! The cross-crate tests' shared support (the `a2a_tests` library): a server on a random
//! 127.0.0.1 port, JSON-RPC and REST calls, an SSE reader, and a hand-written test agent
//! covering every pipeline path.

#![forbid(unsafe_code)]

/// The README's Rust examples, compiled (and run, unless marked `no_run`) as this crate's
/// doctests, since it has every crate they use; blocks marked `ignore` are fragments.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::error::{A2aError, SkillError};
use a2a_kit::protocol::{Artifact, Message, Part};
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_kit::skill::{
    Agent, AgentInfo, FromSkillRequest, History, IntoOutcome, Outcome, SkillCall, SkillInfo,
    SkillRequest, TaskContext, Text,
};
use futures::StreamExt;
use serde_json::{Value, json};

/// A running server.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// Shuts the server down when dropped.
    _task: tokio::task::JoinHandle<()>,
    /// The service behind it.
    pub service: a2a_kit::server::AgentService,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self._task.abort();
    }
}

/// Build and serve `a2a` on a random port (its public URL set to that port's).
pub async fn serve(a2a: AgentServiceBuilder) -> TestServer {
    serve_with(a2a, a2a_kit::binding::HttpConfig::default()).await
}

/// [`serve`] with this HTTP edge configuration.
pub async fn serve_with(
    a2a: AgentServiceBuilder,
    http: a2a_kit::binding::HttpConfig,
) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let a2a = a2a.public_url(base.clone());
    let service = a2a.build().expect("a valid configuration");
    let edge = a2a_kit::binding::A2aHttpService::with_config(service.clone(), http)
        .expect("a valid HTTP configuration");
    let app = a2a_kit_axum::app(edge);
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    TestServer {
        base,
        _task: task,
        service,
    }
}

/// Serve the [`TestAgent`] with default settings.
pub async fn serve_test_agent() -> TestServer {
    serve(
        AgentService::builder(TestAgent)
            .push_notifications(true)
            .execution(a2a_kit::runtime::ExecutionConfig {
                cancel_grace: Duration::from_millis(300),
                ..Default::default()
            }),
    )
    .await
}

/// A reqwest client.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// SendMessage of `message` over one binding (HTTP+JSON when `rest`, else JSON-RPC), with a
/// credential header if given.
pub async fn send_message(
    base: &str,
    rest: bool,
    message: Value,
    credential: Option<(&str, &str)>,
) -> reqwest::Response {
    let (url, body) = if rest {
        (format!("{base}/message:send"), json!({"message": message}))
    } else {
        (
            base.to_string(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": message}}),
        )
    };
    let mut req = client().post(url).header("A2A-Version", "1.0").json(&body);
    if let Some((name, value)) = credential {
        req = req.header(name, value);
    }
    req.send().await.expect("answered")
}

/// What the library logged while the guard lives, captured by a `tracing` subscriber on the
/// test's (single-threaded) runtime, where the server's tasks run too.
#[derive(Clone, Default)]
pub struct CapturedLogs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CapturedLogs {
    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Capture this thread's `info` log (and above) until the guard drops.
pub fn capture_logs() -> (CapturedLogs, tracing::subscriber::DefaultGuard) {
    let logs = CapturedLogs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

/// The public agent card an agent at `base` serves, as JSON.
pub async fn public_card(base: &str) -> Value {
    client()
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .expect("the card answers")
        .json()
        .await
        .expect("the card is JSON")
}

/// The card of the agent at `base` (`http://host:port`) lists one `GRPC` interface, on that
/// same listener (`host:port`), so a client's gRPC run reaches this agent and not another.
/// `what` names the agent in the failure.
pub async fn assert_card_lists_grpc(base: &str, what: &str) {
    let card = public_card(base).await;
    let grpc: Vec<&Value> = card["supportedInterfaces"]
        .as_array()
        .expect("supportedInterfaces")
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .map(|i| &i["url"])
        .collect();
    assert_eq!(
        grpc,
        [base.trim_start_matches("http://")],
        "{what}'s card lists its gRPC interface: {card}"
    );
}

/// POST a JSON-RPC request; returns the whole response envelope.
pub async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    client()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// A user message with one text part and a fresh id.
pub fn user_text(text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A user text message sent to skill `skill`.
pub fn to_skill(skill: &str, text: &str) -> Value {
    let mut m = user_text(text);
    m["metadata"] = json!({"skillId": skill});
    m
}

/// The questions a task's history holds (agent messages `ctx.ask` marked `kind: "question"`).
pub fn questions_asked(task: &Value) -> usize {
    task["history"].as_array().map_or(0, |h| {
        h.iter()
            .filter(|m| m["metadata"]["kind"] == "question")
            .count()
    })
}

/// A fresh id.
pub fn uuid() -> String {
    format!(
        "m-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    )
}

/// One SSE event: its `id:` and its parsed `data:`.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `id:`
    pub id: String,
    /// `data:` as JSON.
    pub data: Value,
}

/// Read SSE events from a response until the server closes it or `max` events arrived.
pub async fn read_sse(resp: reqwest::Response, max: usize) -> Vec<SseEvent> {
    use eventsource_stream::Eventsource;
    let mut stream = resp.bytes_stream().eventsource();
    let mut out = Vec::new();
    while out.len() < max {
        match tokio::time::timeout(Duration::from_secs(20), stream.next()).await {
            Ok(Some(Ok(ev))) => out.push(SseEvent {
                id: ev.id,
                data: serde_json::from_str(&ev.data).expect("SSE data is JSON"),
            }),
            Ok(Some(Err(e))) => panic!("SSE error: {e}"),
            Ok(None) => break,
            Err(_) => panic!("SSE stream stalled"),
        }
    }
    out
}

/// POST a streaming JSON-RPC request; returns the raw response.
pub async fn rpc_stream(
    base: &str,
    method: &str,
    params: Value,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params});
    let mut req = client().post(base).header("A2A-Version", "1.0").json(&body);
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id);
    }
    req.send().await.expect("send")
}

/// The StreamResponse key of a JSON-RPC SSE event (`task`, `statusUpdate`, ...).
pub fn kind(ev: &Value) -> &str {
    let r = &ev["result"];
    ["task", "message", "statusUpdate", "artifactUpdate"]
        .into_iter()
        .find(|k| r.get(*k).is_some())
        .unwrap_or("?")
}

/// The state carried by a JSON-RPC SSE event, if any.
pub fn state_of(ev: &Value) -> Option<String> {
    let r = &ev["result"];
    r["task"]["status"]["state"]
        .as_str()
        .or_else(|| r["statusUpdate"]["status"]["state"].as_str())
        .map(str::to_string)
}

/// Poll GetTask until `pred` holds (bounded).
pub async fn wait_task(base: &str, id: &str, pred: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..400 {
        let r = rpc(base, "GetTask", json!({"id": id})).await;
        if pred(&r["result"]) {
            return r["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} never reached the expected state");
}

// ---------------------------------------------------------------------------------------------

/// A hand-written agent with one skill per pipeline path.
pub struct TestAgent;

macro_rules! skills {
    ($($id:literal => $desc:literal),* $(,)?) => {
        &[$(SkillInfo::new($id, $desc)),*]
    };
}

static TEST_SKILLS: [SkillInfo; 14] = {
    let s: &[SkillInfo] = skills![
        "echo" => "Echo the text.",
        "slow" => "Sleep for the number of milliseconds given, honouring cancellation.",
        "stubborn" => "Sleep 30 s, ignoring cancellation.",
        "chunks" => "Stream N chunks of one artifact.",
        "ask" => "Ask a question with ctx.ask, then echo the reply.",
        "stateless" => "Return input_required until the history has 3 messages.",
        "panic" => "Panic.",
        "fail" => "Return an error.",
        "reject" => "Reject the task.",
        "direct" => "Answer with a direct message.",
        "status" => "Send three status updates, then complete.",
        "auth" => "Require auth, then complete.",
        "recall" => "Send a status update, then answer with the history it reads back.",
        "interview" => "Ask two questions with ctx.ask, then answer with the input and both replies.",
    ];
    let mut out = [SkillInfo::new("", ""); 14];
    let mut i = 0;
    while i < 14 {
        out[i] = s[i];
        i += 1;
    }
    out[9].direct_message = true;
    out
};

static TEST_INFO: AgentInfo = AgentInfo {
    name: "Test Agent",
    description: "Exercises every pipeline path.",
    version: "0.0.1",
    provider: None,
    documentation_url: None,
    icon_url: None,
    default_input_modes: &["text/plain"],
    default_output_modes: &["text/plain"],
    streaming: true,
    push_notifications: false,
    skills: &TEST_SKILLS,
};

fn arg<T: FromSkillRequest>(skill: &str, req: &SkillRequest) -> Result<T, A2aError> {
    T::from_request(req).map_err(|e| e.into_a2a(skill))
}

impl Agent for TestAgent {
    fn info(&self) -> &'static AgentInfo {
        &TEST_INFO
    }

    fn prepare(self: Arc<Self>, skill: &str, req: &SkillRequest) -> Result<SkillCall, A2aError> {
        let ctx: TaskContext = req.context().clone();
        Ok(match skill {
            "echo" => {
                let Text(t) = arg(skill, req)?;
                SkillCall::new(async move { t.into_outcome() })
            }
            "slow" => {
                let Text(t) = arg(skill, req)?;
                let ms: u64 = t.trim().parse().map_err(|_| {
                    A2aError::invalid_field("message.parts[0].text", "a number of milliseconds")
                })?;
                SkillCall::new(async move {
                    tokio::select! {
                        _ = ctx.cancelled() => SkillError::Canceled.into(),
                        _ = tokio::time::sleep(Duration::from_millis(ms)) => Outcome::completed(format!("slept {ms}")),
                    }
                })
            }
            "stubborn" => SkillCall::new(async move {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Outcome::completed("done anyway")
            }),
            "chunks" => {
                let Text(t) = arg(skill, req)?;
                let n: usize = t.trim().parse().unwrap_or(3);
                SkillCall::new(async move {
                    let mut w = ctx.artifact_writer("chunks");
                    for i in 0..n {
                        let r = if i + 1 == n {
                            w.write_last(format!("c{i} ")).await
                        } else {
                            w.write(format!("c{i} ")).await
                        };
                        if let Err(e) = r {
                            return e.into();
                        }
                    }
                    Outcome::done()
                })
            }
            "ask" => SkillCall::new(async move {
                match ctx.ask::<Text>("What is your name?").await {
                    Ok(Text(name)) => Outcome::completed(format!("Hello, {name}")),
                    Err(e) => e.into(),
                }
            }),
            "interview" => {
                let Text(topic) = arg(skill, req)?;
                SkillCall::new(async move {
                    let name = match ctx.ask::<Text>("What is your name?").await {
                        Ok(Text(name)) => name,
                        Err(e) => return e.into(),
                    };
                    let city = match ctx.ask::<Text>(format!("Where do you live, {name}?")).await {
                        Ok(Text(city)) => city,
                        Err(e) => return e.into(),
                    };
                    Outcome::completed(format!("{topic}: {name} from {city}"))
                })
            }
            "stateless" => {
                let History(h) = arg(skill, req)?;
                let users = h
                    .iter()
                    .filter(|m| m.role == a2a_kit::protocol::Role::User)
                    .count();
                SkillCall::new(async move {
                    if users < 3 {
                        Outcome::input_required(format!("need more ({users}/3)"))
                    } else {
                        Outcome::completed(format!("got {users}"))
                    }
                })
            }
            "panic" => SkillCall::new(async move {
                if ctx.task_id() != "never" {
                    panic!("boom");
                }
                Outcome::done()
            }),
            "fail" => SkillCall::new(async move {
                Err::<String, _>(SkillError::failed("it broke")).into_outcome()
            }),
            "reject" => SkillCall::new(async move { Outcome::rejected("not today") }),
            "direct" => {
                let Text(t) = arg(skill, req)?;
                SkillCall::new(
                    async move { Message::agent_text(format!("direct: {t}")).into_outcome() },
                )
            }
            "recall" => SkillCall::new(async move {
                if let Err(e) = ctx.status("recalling").await {
                    return e.into();
                }
                let history = ctx.history().await;
                let roles: Vec<&str> = history.iter().map(|m| m.role.as_str()).collect();
                Outcome::completed(format!("{} messages: {}", history.len(), roles.join(" ")))
            }),
            "status" => SkillCall::new(async move {
                for i in 1..=3 {
                    if let Err(e) = ctx.status(format!("step {i}")).await {
                        return e.into();
                    }
                }
                Outcome::artifact(Artifact::new(vec![Part::text("final")]).with_name("answer"))
            }),
            "auth" => SkillCall::new(async move {
                match ctx.require_auth::<Message>("please sign in").await {
                    Ok(_) => Outcome::completed("authorized"),
                    Err(e) => e.into(),
                }
            }),
            other => return Err(A2aError::invalid_params(format!("unknown skill {other}"))),
        })
    }
}

// ---------------------------------------------------------------------------------------------

/// The PostgreSQL server of the tests: `A2A_KIT_TEST_DATABASE_URL`, else the local one `.ci/run`
/// makes sure of.
pub fn postgres_url() -> String {
    std::env::var("A2A_KIT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres:postgres@127.0.0.1:5432/postgres".into())
}

/// A fresh schema on the test server, and `n` stores on it: `n` replicas' views of one
/// database (each with its own pool and notification listener). Drop the schema with
/// [`PostgresSchema::drop`] at the end.
pub struct PostgresSchema {
    /// One store per replica.
    pub stores: Vec<a2a_kit::store::PostgresTaskManager>,
}

impl PostgresSchema {
    /// `n` stores on a new schema.
    pub async fn new(n: usize) -> PostgresSchema {
        Self::with_lease(n, Duration::from_secs(30)).await
    }

    /// `n` stores on a new schema, with this lease.
    pub async fn with_lease(n: usize, lease: Duration) -> PostgresSchema {
        use a2a_kit::store::{PostgresOptions, PostgresTaskManager};
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let schema = format!(
            "test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut stores = Vec::new();
        for _ in 0..n {
            let store = PostgresTaskManager::connect_with(
                &postgres_url(),
                PostgresOptions::default()
                    .schema(&schema)
                    .max_connections(8)
                    .lease(lease),
            )
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "PostgreSQL at {} (set A2A_KIT_TEST_DATABASE_URL; `bash .ci/run` starts one): {e}",
                    postgres_url()
                )
            });
            stores.push(store);
        }
        PostgresSchema { stores }
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        self.stores[0].schema()
    }

    /// Drop the schema and everything in it.
    pub async fn drop(self) {
        let _ = self.stores[0].drop_schema().await;
    }
}

/// A webhook for push tests, served on a random 127.0.0.1 port: it records every request
/// (task id, state, whether it was accepted) and answers `503` while failing, else `204`.
/// Clones share one record.
#[derive(Clone, Default)]
pub struct RecordingWebhook {
    hits: Arc<std::sync::Mutex<Vec<(String, String, bool)>>>,
    failing: Arc<std::sync::atomic::AtomicBool>,
    /// Each request's `traceparent`, in order.
    traces: Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

impl RecordingWebhook {
    /// Serve it (until the runtime ends); its URL.
    pub async fn serve(&self) -> String {
        let hook = self.clone();
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
                let hook = hook.clone();
                async move {
                    let trace = headers
                        .get("traceparent")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    hook.traces
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(trace);
                    let v: Value = serde_json::from_str(&body).unwrap_or_default();
                    let failing = hook.failing.load(std::sync::atomic::Ordering::SeqCst);
                    // A status update, or the task a settled state is pushed as.
                    let (task_id, status) = match v.get("task") {
                        Some(task) => (&task["id"], &task["status"]),
                        None => (&v["statusUpdate"]["taskId"], &v["statusUpdate"]["status"]),
                    };
                    hook.hits.lock().unwrap_or_else(|p| p.into_inner()).push((
                        task_id.as_str().unwrap_or_default().into(),
                        status["state"].as_str().unwrap_or_default().into(),
                        !failing,
                    ));
                    if failing {
                        axum::http::StatusCode::SERVICE_UNAVAILABLE
                    } else {
                        axum::http::StatusCode::NO_CONTENT
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        url
    }

    /// Each request's `traceparent` header, in the order they came.
    pub fn traceparents(&self) -> Vec<Option<String>> {
        self.traces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Answer `503` (true) or `204` from now on.
    pub fn set_failing(&self, failing: bool) {
        self.failing
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }

    /// Requests for `task_id` reporting `state` that were accepted (or, `false`, refused).
    pub fn count(&self, task_id: &str, state: &str, accepted: bool) -> usize {
        self.hits()
            .iter()
            .filter(|(t, s, a)| t == task_id && s == state && *a == accepted)
            .count()
    }

    /// Every request so far.
    pub fn hits(&self) -> Vec<(String, String, bool)> {
        self.hits.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

// ---------------------------------------------------------------------------------------------

/// A server process (`tests/bin/store_server`), for tests that kill, pause or restart one.
pub struct StoreServer {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
}

impl StoreServer {
    /// Start `bin` (the test's `env!("CARGO_BIN_EXE_store_server")`) with `args` on a random
    /// port and wait until it prints its address.
    pub fn start(bin: &str, args: &[String]) -> StoreServer {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(bin)
            .args(args)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("spawn store_server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        // Keep draining stdout for the life of the process, so it never writes to a closed pipe.
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(e) => {
                let _ = child.kill();
                panic!("store_server did not report its address: {e}");
            }
        };
        let base = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        StoreServer { child, base }
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill")
            .args([signal, &pid])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill {signal} {pid}");
    }

    /// SIGTERM: a graceful stop; waits for the process to exit and returns its status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        self.signal("-TERM");
        self.child.wait().expect("wait")
    }

    /// SIGSTOP: the process is frozen, its connections stay open (it looks alive, but answers
    /// nothing and renews nothing).
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`pause`](Self::pause).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    /// SIGKILL: no shutdown hook runs; the kernel closes its sockets.
    pub fn kill9(mut self) {
        self.child.kill().expect("SIGKILL");
        let status = self.child.wait().expect("wait");
        assert!(
            !status.success(),
            "the server was killed, not stopped: {status:?}"
        );
    }
}

impl Drop for StoreServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// Reading a streamed task's events (the `result` of each JSON-RPC SSE event)

/// Every event result of a SendStreamingMessage of `message` to `base`, to the end.
pub async fn stream_message(base: &str, message: Value) -> Vec<Value> {
    let resp = rpc_stream(
        base,
        "SendStreamingMessage",
        json!({"message": message}),
        None,
    )
    .await;
    read_sse(resp, 10_000)
        .await
        .into_iter()
        .map(|e| e.data["result"].clone())
        .collect()
}

/// The last state the events set.
pub fn final_state(events: &[Value]) -> String {
    events
        .iter()
        .rev()
        .find_map(|e| {
            e["statusUpdate"]["status"]["state"]
                .as_str()
                .or(e["task"]["status"]["state"].as_str())
        })
        .unwrap_or("?")
        .to_string()
}

/// The task the events are of.
pub fn stream_task_id(events: &[Value]) -> String {
    events
        .iter()
        .find_map(|e| {
            e["task"]["id"]
                .as_str()
                .or(e["statusUpdate"]["taskId"].as_str())
        })
        .expect("a task")
        .to_string()
}

/// The artifact updates: their text joined, how many, and whether the last one closed it.
pub fn artifact_chunks(events: &[Value]) -> (String, usize, bool) {
    let updates: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("artifactUpdate"))
        .collect();
    let text = updates
        .iter()
        .flat_map(|u| {
            u["artifact"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect();
    let closed = updates.last().is_some_and(|u| u["lastChunk"] == true);
    (text, updates.len(), closed)
}

/// A stored task's first artifact, its parts' text joined.
pub fn stored_artifact_text(task: &Value) -> String {
    task["artifacts"][0]["parts"]
        .as_array()
        .map(|p| p.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// The narrated status lines of WORKING updates, in order, checking each is a status
/// indicator (a data part, marked as a status message), never answer text.
pub fn narrated(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e.get("statusUpdate"))
        .filter(|u| {
            u["status"]["state"] == "TASK_STATE_WORKING" && u["status"]["message"].is_object()
        })
        .map(|u| {
            let m = &u["status"]["message"];
            assert_eq!(m["metadata"]["kind"], "status-message", "{m}");
            let part = &m["parts"][0];
            assert!(
                part.get("text").is_none(),
                "narration is never answer text: {m}"
            );
            assert_eq!(part["data"]["type"], "status-indicator", "{m}");
            part["data"]["text"]
                .as_str()
                .expect("an indicator's text")
                .to_string()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Processes and installs of the interop and real-model tests

/// A child process killed (by its pid) when dropped.
pub struct ChildGuard(pub std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free port on 127.0.0.1 (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A directory lock (mkdir is atomic), so parallel test binaries install a virtualenv once.
/// A holder gone for longer than `stale` (it died) is taken over.
pub struct DirLock(std::path::PathBuf);

impl DirLock {
    /// Wait for the lock at `path`.
    pub fn acquire(path: std::path::PathBuf, stale: Duration) -> DirLock {
        let start = std::time::Instant::now();
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return DirLock(path),
                Err(_) if start.elapsed() > stale => {
                    let _ = std::fs::remove_dir(&path);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Print past the test harness's output capture, so the note shows in every run.
pub fn note(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// A test that cannot run here for want of a tool (`python3 -m venv`, `node`): a printed
/// note on a developer's machine, a failure in CI (`CI` set, as CI services do), where a
/// skipped interop test would pass unseen.
pub fn skip_unless_ci(reason: &str) {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "{reason}; CI is set, so this fails instead of skipping: install it"
    );
    note(&format!("NOTE: skipping: {reason}"));
}

// ---------------------------------------------------------------------------------------------

/// A Python virtualenv at `dir` with `requirements` installed from PyPI (pinned), created on
/// first use and reused while its marker names the same pins; its python. `None` (with a
/// printed note) only when `python3 -m venv` is unavailable, and never in CI (`CI` set: it
/// panics then, as a failing `pip install` does). `what` names the tests in notes.
pub fn python_venv(
    dir: &std::path::Path,
    requirements: &[&str],
    what: &str,
) -> Option<std::path::PathBuf> {
    use std::process::{Command, Stdio};
    fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({}):\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
    let py = dir.join("bin").join("python");
    let marker = dir.join(".a2a-kit-installed");
    let wanted = requirements.join("\n");
    std::fs::create_dir_all(dir.parent().expect("parent")).expect("create the interop directory");
    let _lock = DirLock::acquire(dir.with_extension("lock"), Duration::from_secs(900));
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) && py.exists() {
        return Some(py);
    }
    let _ = std::fs::remove_dir_all(dir);
    let venv_ok = Command::new("python3")
        .args(["-m", "venv", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !venv_ok {
        skip_unless_ci(&format!(
            "{what} need `python3 -m venv`, which is not available on this machine"
        ));
        return None;
    }
    if let Err(e) = run(
        Command::new("python3").arg("-m").arg("venv").arg(dir),
        "python3 -m venv",
    ) {
        // `venv` exists but cannot create environments (e.g. Debian without python3-venv).
        let _ = std::fs::remove_dir_all(dir);
        skip_unless_ci(&format!(
            "{what} need `python3 -m venv`, which is unusable here: {e}"
        ));
        return None;
    }
    let mut pip = Command::new(&py);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "-q",
    ])
    .args(requirements);
    let start = std::time::Instant::now();
    if let Err(e) = run(&mut pip, "pip install (PyPI)") {
        panic!(
            "could not install {} into {}: {e}",
            requirements[0],
            dir.display()
        );
    }
    note(&format!(
        "installed {} and its pins (pip) in {:.1} s",
        requirements[0],
        start.elapsed().as_secs_f64()
    ));
    std::fs::write(&marker, wanted).expect("write the venv marker");
    Some(py)
}
