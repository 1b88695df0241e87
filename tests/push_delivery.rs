//! Push delivery through `AgentService` against a scripted local webhook (a tiny HTTP/1.1
//! server on 127.0.0.1): headers and body, triggers, retries (5xx, 429 + Retry-After,
//! timeouts, refused connections), no retry on other 4xx, no redirects, suspension, per-task
//! order, isolation of slow webhooks, the bound on requests in flight, and the SSRF guard at
//! creation and at connect time.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_kit::error::A2aError;
use a2a_kit::prelude::*;
use a2a_kit::protocol::Task;
use a2a_kit::protocol::TaskState;
use a2a_kit::protocol::{
    AuthenticationInfo, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    TaskPushNotificationConfig,
};
use a2a_kit::push::{
    DeliveryOutcome, GuardedResolver, PushConfig, PushDispatcher, RetryPolicy, SsrfPolicy,
};
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use serde_json::Value;

// ----- the agent --------------------------------------------------------------------------

#[derive(Clone, Default)]
struct PushAgent;

/// An agent for push tests.
#[a2a_agent(name = "Push Agent")]
impl PushAgent {
    /// Echo the text.
    #[skill(default)]
    async fn echo(&self, Text(t): Text) -> String {
        format!("echo: {t}")
    }

    /// Three status updates, then an artifact.
    #[skill]
    async fn steps(&self, ctx: TaskContext) -> Result<String, SkillError> {
        for i in 1..=3 {
            ctx.status(format!("step {i}")).await?;
        }
        Ok("all steps done".into())
    }

    /// Wait 100 ms, then four status updates.
    #[skill]
    async fn ticks(&self, ctx: TaskContext) -> Result<String, SkillError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        for i in 1..=4 {
            ctx.status(format!("tick {i}")).await?;
        }
        Ok("ticked".into())
    }

    /// Ask for a name.
    #[skill]
    async fn ask(&self, ctx: TaskContext) -> Result<String, SkillError> {
        let Text(name) = ctx.ask("Your name?").await?;
        Ok(format!("Hello, {name}"))
    }

    /// A small `summary` artifact, then an answer of the given number of bytes.
    #[skill]
    async fn big(&self, ctx: TaskContext, Text(n): Text) -> Result<String, SkillError> {
        let n: usize = n.trim().parse().unwrap_or(1000);
        let summary = a2a_kit::protocol::Artifact::new(vec![a2a_kit::protocol::Part::text(
            format!("{n} bytes follow"),
        )])
        .with_name("summary");
        ctx.artifact(summary).await?;
        Ok("x".repeat(n))
    }

    /// Sleep for the given milliseconds.
    #[skill]
    async fn slow(&self, Text(ms): Text) -> String {
        let ms: u64 = ms.trim().parse().unwrap_or(100);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("slept {ms}")
    }
}

fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(80),
        jitter: true,
        max_retry_after: Duration::from_secs(5),
    }
}

fn dev_config() -> PushConfig {
    PushConfig {
        retry: fast_retry(3),
        timeout: Duration::from_secs(2),
        ..PushConfig::default()
    }
    .allow_private_networks()
}

fn service(config: PushConfig) -> (AgentService, PushDispatcher) {
    let push = PushDispatcher::new(config);
    (
        AgentService::builder(PushAgent)
            .push_dispatcher(&push)
            .build()
            .expect("a valid configuration"),
        push,
    )
}

fn push_config(url: &str, token: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        url: url.to_string(),
        token: Some(token.to_string()),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some(format!("cred-{token}")),
        }),
        ..Default::default()
    }
}

fn message(skill: &str, text: &str) -> Message {
    let mut m = Message::user_text(text);
    let mut md = a2a_kit::protocol::Metadata::new();
    md.insert("skillId".into(), skill.into());
    m.metadata = Some(md);
    m
}

/// SendMessage of `text` to `skill`, with an inline push config if given (returning at once
/// when `immediate`); the task.
async fn send_to_skill_with_push(
    svc: &AgentService,
    skill: &str,
    text: &str,
    push: Option<TaskPushNotificationConfig>,
    immediate: bool,
) -> Task {
    let req = SendMessageRequest {
        tenant: None,
        message: message(skill, text),
        configuration: Some(SendMessageConfiguration {
            task_push_notification_config: push,
            return_immediately: immediate,
            ..Default::default()
        }),
        metadata: None,
    };
    match svc
        .send_message(&RequestContext::new(), req)
        .await
        .expect("send")
    {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn idle(push: &PushDispatcher) {
    tokio::time::timeout(Duration::from_secs(20), push.wait_idle())
        .await
        .expect("the outbox never drained");
}

// ----- a scripted webhook -----------------------------------------------------------------

#[derive(Debug, Clone)]
enum Reply {
    Status(u16),
    StatusWith(u16, Vec<(String, String)>),
    /// Never answer (until the client gives up).
    Hang,
    /// Answer 204 after a delay.
    Delay(Duration),
}

#[derive(Debug, Clone)]
struct Hit {
    headers: HashMap<String, String>,
    body: Value,
    /// The body's size in bytes, as sent.
    len: usize,
    status: u16,
    at: Instant,
}

type Script = Arc<dyn Fn(usize, &Value) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Hook {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    /// Requests read and not answered yet, and the most there were at once.
    in_flight: Arc<(AtomicUsize, AtomicUsize)>,
    _task: Arc<AbortOnDrop>,
}

/// Counts a request as answered (or dropped) when it goes.
struct Answered<'a>(&'a AtomicUsize);
impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Hook {
    async fn start(script: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static) -> Hook {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let script: Script = Arc::new(script);
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let in_flight: Arc<(AtomicUsize, AtomicUsize)> = Arc::default();
        let (h2, f2) = (hits.clone(), in_flight.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let (hits, script, counter) = (h2.clone(), script.clone(), counter.clone());
                let in_flight = f2.clone();
                tokio::spawn(async move {
                    let Some((headers, body, len)) = read_request(&mut sock).await else {
                        return;
                    };
                    let now = in_flight.0.fetch_add(1, Ordering::SeqCst) + 1;
                    in_flight.1.fetch_max(now, Ordering::SeqCst);
                    let answered = Answered(&in_flight.0);
                    let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let reply = script(n, &body);
                    let (status, extra) = match reply {
                        Reply::Status(s) => (s, vec![]),
                        Reply::StatusWith(s, h) => (s, h),
                        Reply::Hang => {
                            hits.lock().unwrap().push(Hit {
                                headers,
                                body,
                                len,
                                status: 0,
                                at: Instant::now(),
                            });
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                        Reply::Delay(d) => {
                            tokio::time::sleep(d).await;
                            (204, vec![])
                        }
                    };
                    hits.lock().unwrap().push(Hit {
                        headers,
                        body,
                        len,
                        status,
                        at: Instant::now(),
                    });
                    let mut resp = format!(
                        "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n"
                    );
                    for (k, v) in extra {
                        resp.push_str(&format!("{k}: {v}\r\n"));
                    }
                    resp.push_str("\r\n");
                    // Counted out before the client can have the answer.
                    drop(answered);
                    let _ = write_all(&sock, resp.as_bytes()).await;
                });
            }
        });
        Hook {
            addr,
            hits,
            in_flight,
            _task: Arc::new(AbortOnDrop(task)),
        }
    }

    /// The most requests that were in flight at once (read, not yet answered).
    fn most_in_flight(&self) -> usize {
        self.in_flight.1.load(Ordering::SeqCst)
    }

    /// Through the resolver (`localhost` resolves to 127.0.0.1).
    fn url(&self) -> String {
        format!("http://localhost:{}/hook", self.addr.port())
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    fn accepted(&self) -> Vec<Hit> {
        self.hits()
            .into_iter()
            .filter(|h| (200..300).contains(&h.status))
            .collect()
    }
}

// (tokio's io-util feature is off in this workspace: plain readiness loops.)
async fn read_some(sock: &tokio::net::TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        sock.readable().await?;
        match sock.try_read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            r => return r,
        }
    }
}

async fn write_all(sock: &tokio::net::TcpStream, mut data: &[u8]) -> std::io::Result<()> {
    while !data.is_empty() {
        sock.writable().await?;
        match sock.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn read_request(
    sock: &mut tokio::net::TcpStream,
) -> Option<(HashMap<String, String>, Value, usize)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = read_some(sock, &mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut headers = HashMap::new();
    for line in head.lines().skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = read_some(sock, &mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    Some((headers, body, buf.len() - head_end))
}

/// The task a pushed body is about: a status or artifact update, or the task itself.
fn task_of(body: &Value) -> Option<&str> {
    body["statusUpdate"]["taskId"]
        .as_str()
        .or_else(|| body["artifactUpdate"]["taskId"].as_str())
        .or_else(|| body["task"]["id"].as_str())
}

fn state_of(body: &Value) -> Option<&str> {
    body["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| body["task"]["status"]["state"].as_str())
}

// ----- what is sent -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn terminal_state_is_pushed_with_credentials_even_for_instant_tasks() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let (svc, push) = service(dev_config());
    // An instant skill with an inline config: the task often ends before the config is
    // stored; the final event must arrive anyway, exactly once.
    let mut ids = Vec::new();
    for i in 0..10 {
        let t = send_to_skill_with_push(
            &svc,
            "echo",
            &format!("n{i}"),
            Some(push_config(&hook.url(), &format!("tok{i}"))),
            false,
        )
        .await;
        ids.push(t.id);
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    idle(&push).await;
    let hits = hook.accepted();
    assert_eq!(hits.len(), 10, "{hits:#?}");
    for (i, id) in ids.iter().enumerate() {
        let mine: Vec<&Hit> = hits
            .iter()
            .filter(|h| task_of(&h.body) == Some(id.as_str()))
            .collect();
        assert_eq!(mine.len(), 1, "task {i}");
        let h = mine[0];
        // A late config gets the body the others would have: the task, with its answer.
        assert_eq!(state_of(&h.body), Some("TASK_STATE_COMPLETED"));
        assert_eq!(
            h.body["task"]["artifacts"][0]["parts"][0]["text"],
            format!("echo: n{i}")
        );
        assert_eq!(h.headers["authorization"], format!("Bearer cred-tok{i}"));
        assert_eq!(h.headers["x-a2a-notification-token"], format!("tok{i}"));
        assert_eq!(h.headers["content-type"], "application/a2a+json");
        let status = push.statuses(id);
        assert_eq!(status.len(), 1);
        assert_eq!(status[0].delivered, 1);
        assert!(status[0].last.as_ref().unwrap().outcome.is_delivered());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_event_in_log_order_and_interrupted_states() {
    let hook = Hook::start(|_, _| Reply::Status(200)).await;
    let (svc, push) = service(dev_config().every_event());
    let t = send_to_skill_with_push(&svc, "steps", "go", None, true).await;
    svc.create_push_config(
        &RequestContext::new(),
        TaskPushNotificationConfig {
            task_id: Some(t.id.clone()),
            ..push_config(&hook.url(), "a")
        },
    )
    .await
    .unwrap();
    // The config may come after some events: it gets the rest, in order, and always the end.
    let t2 = send_to_skill_with_push(
        &svc,
        "steps",
        "go",
        Some(push_config(&hook.url(), "b")),
        false,
    )
    .await;
    idle(&push).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let of = |id: &str| -> Vec<Value> {
        hook.accepted()
            .into_iter()
            .map(|h| h.body)
            .filter(|b| task_of(b) == Some(id))
            .collect()
    };
    let b = of(&t2.id);
    assert!(b.len() >= 2, "{b:#?}");
    assert_eq!(state_of(b.last().unwrap()), Some("TASK_STATE_COMPLETED"));
    let texts: Vec<String> = b
        .iter()
        .filter_map(|e| {
            e["statusUpdate"]["status"]["message"]["parts"][0]["data"]["text"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    let mut sorted = texts.clone();
    sorted.sort();
    assert_eq!(texts, sorted, "status updates out of order");
    assert_eq!(
        state_of(of(&t.id).last().unwrap()),
        Some("TASK_STATE_COMPLETED")
    );

    // Interrupted states are pushed with the default triggers.
    let hook2 = Hook::start(|_, _| Reply::Status(204)).await;
    let (svc, push) = service(dev_config());
    let t = send_to_skill_with_push(
        &svc,
        "ask",
        "hi",
        Some(push_config(&hook2.url(), "c")),
        false,
    )
    .await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    idle(&push).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let states: Vec<String> = hook2
        .accepted()
        .iter()
        .filter_map(|h| state_of(&h.body).map(str::to_string))
        .collect();
    assert_eq!(states, ["TASK_STATE_INPUT_REQUIRED"]);
    let mut reply = Message::user_text("Ada");
    reply.task_id = Some(t.id.clone());
    svc.send_message(
        &RequestContext::new(),
        SendMessageRequest {
            tenant: None,
            message: reply,
            configuration: None,
            metadata: None,
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    idle(&push).await;
    let states: Vec<String> = hook2
        .accepted()
        .iter()
        .filter_map(|h| state_of(&h.body).map(str::to_string))
        .collect();
    assert_eq!(
        states,
        ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"],
        "WORKING is not pushed by default"
    );
}

/// The accepted deliveries about task `id`.
fn hits_of(hook: &Hook, id: &str) -> Vec<Hit> {
    hook.accepted()
        .into_iter()
        .filter(|h| task_of(&h.body) == Some(id))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn settled_states_are_pushed_as_the_task_unless_per_event_bodies() {
    // By default: the task, with its artifacts.
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let (svc, push) = service(dev_config());
    let t = send_to_skill_with_push(&svc, "slow", "50", None, true).await;
    svc.create_push_config(
        &RequestContext::new(),
        TaskPushNotificationConfig {
            task_id: Some(t.id.clone()),
            ..push_config(&hook.url(), "a")
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert_eq!(hits.len(), 1, "{hits:#?}");
    let task = &hits[0].body["task"];
    assert_eq!(task["id"], t.id.as_str());
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "slept 50");
    assert_eq!(task["history"][0]["parts"][0]["text"], "50");
    assert!(
        task["metadata"].get(a2a_kit::push::TRIMMED_KEY).is_none(),
        "{task}"
    );
    assert_eq!(hits[0].headers["content-type"], "application/a2a+json");

    // An interrupted state too: the task, asking its question.
    let t = send_to_skill_with_push(
        &svc,
        "ask",
        "hi",
        Some(push_config(&hook.url(), "b")),
        false,
    )
    .await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert_eq!(hits.len(), 1, "{hits:#?}");
    let task = &hits[0].body["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert!(
        task["status"]["message"].is_object(),
        "the question is in the status: {task}"
    );

    // Per-event bodies: the status update, as before.
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let (svc, push) = service(dev_config().per_event_bodies());
    let t = send_to_skill_with_push(
        &svc,
        "slow",
        "50",
        Some(push_config(&hook.url(), "c")),
        false,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(
        hits[0].body["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(hits[0].body.get("task").is_none(), "{:?}", hits[0].body);

    // Per-event bodies with every event: the answer arrives as its artifact update.
    let (svc, push) = service(dev_config().per_event_bodies().every_event());
    let t = send_to_skill_with_push(
        &svc,
        "slow",
        "50",
        Some(push_config(&hook.url(), "d")),
        true,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert!(
        hits.iter().all(|h| h.body.get("task").is_none()),
        "{hits:#?}"
    );
    assert!(
        hits.iter()
            .any(|h| h.body["artifactUpdate"]["artifact"]["parts"][0]["text"] == "slept 50"),
        "{hits:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_goes_as_a_bearer_token_only_when_asked() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let plain = |token: &str| TaskPushNotificationConfig {
        url: hook.url(),
        token: Some(token.to_string()),
        ..Default::default()
    };
    // (token as bearer, the config, the Authorization expected)
    let cases = [
        (false, plain("t1"), None),
        (true, plain("t2"), Some("Bearer t2".to_string())),
        // A config's `authentication` keeps `Authorization`.
        (
            true,
            push_config(&hook.url(), "t3"),
            Some("Bearer cred-t3".to_string()),
        ),
        (
            false,
            push_config(&hook.url(), "t4"),
            Some("Bearer cred-t4".to_string()),
        ),
    ];
    for (as_bearer, config, want) in cases {
        let token = config.token.clone().unwrap();
        let cfg = if as_bearer {
            dev_config().token_as_bearer()
        } else {
            dev_config()
        };
        let (svc, push) = service(cfg);
        let t = send_to_skill_with_push(&svc, "slow", "20", Some(config), false).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        idle(&push).await;
        let hits = hits_of(&hook, &t.id);
        assert_eq!(hits.len(), 1, "{token}: {hits:#?}");
        let h = &hits[0].headers;
        assert_eq!(h.get("authorization"), want.as_ref(), "{token}");
        assert_eq!(h["x-a2a-notification-token"], token);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_task_is_trimmed_to_the_bound_and_says_so() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    // The default bound: 1 MiB. A 1.5 MB answer goes; the summary stays, whole.
    let (svc, push) = service(dev_config());
    let t = send_to_skill_with_push(
        &svc,
        "big",
        "1500000",
        Some(push_config(&hook.url(), "a")),
        false,
    )
    .await;
    assert_eq!(t.status.state, TaskState::Completed);
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert_eq!(hits.len(), 1);
    assert!(
        hits[0].len <= a2a_kit::push::DEFAULT_MAX_TASK_BODY,
        "{} bytes",
        hits[0].len
    );
    let task: Task = serde_json::from_value(hits[0].body["task"].clone()).unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].name.as_deref(), Some("summary"));
    assert_eq!(
        task.artifacts[0].parts[0].as_text(),
        Some("1500000 bytes follow")
    );
    let marker = a2a_kit::push::TrimmedSnapshot::of(&task).expect("marked as trimmed");
    let answer = t
        .artifacts
        .iter()
        .find(|a| a.name.as_deref() != Some("summary"))
        .unwrap();
    assert_eq!(marker.omitted_artifacts, [answer.artifact_id.as_str()]);
    assert_eq!(marker.omitted_history, 1);
    assert_eq!(marker.limit, a2a_kit::push::DEFAULT_MAX_TASK_BODY);
    assert!(marker.size > 1_500_000, "{marker:?}");

    // A bound no task fits even bare: the status update.
    let (svc, push) = service(dev_config().max_task_body(64));
    let t = send_to_skill_with_push(
        &svc,
        "big",
        "100",
        Some(push_config(&hook.url(), "b")),
        false,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&push).await;
    let hits = hits_of(&hook, &t.id);
    assert_eq!(hits.len(), 1);
    assert_eq!(
        hits[0].body["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

// ----- retries ----------------------------------------------------------------------------

/// Fails the first `n` deliveries of each distinct body with `status`, then accepts.
fn flaky(n: usize, status: u16) -> impl Fn(usize, &Value) -> Reply + Send + Sync + 'static {
    let seen: Mutex<HashMap<String, usize>> = Mutex::default();
    move |_, body| {
        let mut seen = seen.lock().unwrap();
        let count = seen.entry(body.to_string()).or_default();
        *count += 1;
        if *count <= n {
            Reply::Status(status)
        } else {
            Reply::Status(204)
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn flaky_webhook_gets_exactly_one_accepted_delivery_per_event() {
    let hook = Hook::start(flaky(2, 503)).await;
    let (svc, push) = service(dev_config().every_event());
    let t = send_to_skill_with_push(&svc, "slow", "200", None, true).await;
    let cfg = svc
        .create_push_config(
            &RequestContext::new(),
            TaskPushNotificationConfig {
                task_id: Some(t.id.clone()),
                ..push_config(&hook.url(), "a")
            },
        )
        .await
        .unwrap();
    svc.get_task(
        &RequestContext::new(),
        a2a_kit::protocol::GetTaskRequest {
            id: t.id.clone(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    idle(&push).await;
    let hits = hook.hits();
    let accepted = hook.accepted();
    assert!(!accepted.is_empty());
    // Every event: two 503s, then one accepted delivery; never a second acceptance.
    let mut per_body: HashMap<String, (usize, usize)> = HashMap::new();
    for h in &hits {
        let e = per_body.entry(h.body.to_string()).or_default();
        e.0 += 1;
        if h.status == 204 {
            e.1 += 1;
        }
    }
    for (body, (total, ok)) in &per_body {
        assert_eq!((*total, *ok), (3, 1), "{body}");
    }
    assert_eq!(
        state_of(&accepted.last().unwrap().body),
        Some("TASK_STATE_COMPLETED")
    );
    let status = push.status(&t.id, cfg.id.as_deref().unwrap()).unwrap();
    assert_eq!(status.delivered as usize, accepted.len());
    assert_eq!(status.failed, 0);
    assert_eq!(status.last.as_ref().unwrap().attempts, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_honoured_on_429() {
    let first = Mutex::new(true);
    let hook = Hook::start(move |_, _| {
        let mut f = first.lock().unwrap();
        if std::mem::take(&mut *f) {
            Reply::StatusWith(429, vec![("retry-after".into(), "1".into())])
        } else {
            Reply::Status(204)
        }
    })
    .await;
    let (svc, push) = service(dev_config());
    send_to_skill_with_push(
        &svc,
        "echo",
        "x",
        Some(push_config(&hook.url(), "a")),
        false,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    idle(&push).await;
    let hits = hook.hits();
    assert_eq!(
        hits.iter().map(|h| h.status).collect::<Vec<_>>(),
        [429, 204]
    );
    let gap = hits[1].at - hits[0].at;
    assert!(
        gap >= Duration::from_millis(950),
        "retried after {gap:?}, before Retry-After"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn client_errors_and_redirects_are_final() {
    let elsewhere = Hook::start(|_, _| Reply::Status(204)).await;
    let target = elsewhere.url();
    let hook = Hook::start(move |n, _| match n % 3 {
        0 => Reply::Status(400),
        1 => Reply::Status(404),
        _ => Reply::StatusWith(307, vec![("location".into(), target.clone())]),
    })
    .await;
    let (svc, push) = service(dev_config());
    let mut ids = Vec::new();
    for i in 0..3 {
        // One at a time, so the script's answers map to tasks in order.
        let t = send_to_skill_with_push(
            &svc,
            "echo",
            "x",
            Some(push_config(&hook.url(), &i.to_string())),
            false,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        idle(&push).await;
        ids.push(t.id);
    }
    assert_eq!(
        hook.hits().iter().map(|h| h.status).collect::<Vec<_>>(),
        [400, 404, 307],
        "no retries"
    );
    assert!(elsewhere.hits().is_empty(), "the redirect was followed");
    let outcomes: Vec<DeliveryOutcome> = ids
        .iter()
        .map(|id| push.statuses(id)[0].last.clone().unwrap().outcome)
        .collect();
    assert_eq!(
        outcomes,
        [
            DeliveryOutcome::Rejected { status: 400 },
            DeliveryOutcome::Rejected { status: 404 },
            DeliveryOutcome::Rejected { status: 307 }
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_and_refused_connections_are_retried_then_given_up() {
    let hook = Hook::start(|_, _| Reply::Hang).await;
    let config = PushConfig {
        timeout: Duration::from_millis(200),
        ..dev_config()
    };
    let (svc, push) = service(config);
    let t = send_to_skill_with_push(
        &svc,
        "echo",
        "x",
        Some(push_config(&hook.url(), "a")),
        false,
    )
    .await;
    // A free port with nobody listening.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t2 = send_to_skill_with_push(
        &svc,
        "echo",
        "y",
        Some(push_config(&format!("http://localhost:{dead}/"), "b")),
        false,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    idle(&push).await;
    assert_eq!(hook.hits().len(), 3, "one attempt and two retries");
    for id in [&t.id, &t2.id] {
        let s = &push.statuses(id)[0];
        let last = s.last.as_ref().unwrap();
        assert_eq!(last.attempts, 3);
        assert!(
            matches!(last.outcome, DeliveryOutcome::GaveUp { .. }),
            "{:?}",
            last.outcome
        );
        assert_eq!((s.delivered, s.failed), (0, 1));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configs_are_suspended_after_consecutive_failures() {
    let hook = Hook::start(|_, _| Reply::Status(410)).await;
    let (svc, push) = service(PushConfig {
        suspend_after: Some(2),
        ..dev_config().every_event()
    });
    let t = send_to_skill_with_push(
        &svc,
        "ticks",
        "go",
        Some(push_config(&hook.url(), "a")),
        false,
    )
    .await;
    assert_eq!(t.status.state, TaskState::Completed);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    idle(&push).await;
    let s = &push.statuses(&t.id)[0];
    assert_eq!(hook.hits().len(), 2, "nothing is sent once suspended");
    assert_eq!((s.failed, s.delivered, s.suspended), (2, 0, true));
    assert_eq!(
        s.last.as_ref().unwrap().outcome,
        DeliveryOutcome::Rejected { status: 410 }
    );
}

// ----- isolation ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_webhook_slows_neither_its_task_nor_other_tasks() {
    let slow = Hook::start(|_, _| Reply::Delay(Duration::from_secs(3))).await;
    let fast = Hook::start(|_, _| Reply::Status(204)).await;
    let config = PushConfig {
        timeout: Duration::from_secs(10),
        ..dev_config().every_event()
    };
    let (svc, push) = service(config);
    let start = Instant::now();
    let a = send_to_skill_with_push(
        &svc,
        "steps",
        "go",
        Some(push_config(&slow.url(), "slow")),
        false,
    )
    .await;
    assert_eq!(a.status.state, TaskState::Completed);
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "the task waited for its webhook"
    );
    let b = send_to_skill_with_push(
        &svc,
        "echo",
        "b",
        Some(push_config(&fast.url(), "fast")),
        false,
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(1));
    // B's notification arrives while A's webhook is still on its first event.
    let deadline = Instant::now() + Duration::from_secs(2);
    while fast.accepted().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    while fast
        .accepted()
        .last()
        .and_then(|h| state_of(&h.body).map(str::to_string))
        .as_deref()
        != Some("TASK_STATE_COMPLETED")
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let fast_hits = fast.accepted();
    assert_eq!(
        state_of(&fast_hits.last().unwrap().body),
        Some("TASK_STATE_COMPLETED"),
        "{fast_hits:#?}"
    );
    assert_eq!(
        task_of(&fast_hits.last().unwrap().body).unwrap(),
        b.id.as_str()
    );
    assert!(
        slow.hits().is_empty(),
        "A's first delivery should still be in flight"
    );
    assert!(!push.is_idle());
}

// ----- bounded fan-out ----------------------------------------------------------------------

/// However many configs and tasks there are, at most `max_concurrent_deliveries` webhook
/// requests are in flight at once, across all tasks; the others wait their turn and every
/// one arrives (none is dropped).
#[tokio::test(flavor = "multi_thread")]
async fn deliveries_in_flight_never_exceed_the_bound() {
    const TASKS: usize = 12;
    const CONFIGS: usize = 5;
    let hook = Hook::start(|_, _| Reply::Delay(Duration::from_millis(60))).await;
    let (svc, push) = service(dev_config().max_concurrent_deliveries(4));
    let mut tasks = Vec::new();
    for i in 0..TASKS {
        tasks.push(send_to_skill_with_push(&svc, "slow", "400", None, true).await);
        for c in 0..CONFIGS {
            svc.create_push_config(
                &RequestContext::new(),
                TaskPushNotificationConfig {
                    task_id: Some(tasks[i].id.clone()),
                    ..push_config(&hook.url(), &format!("t{i}c{c}"))
                },
            )
            .await
            .unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while hook.accepted().len() < TASKS * CONFIGS && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    idle(&push).await;
    let accepted = hook.accepted();
    assert_eq!(accepted.len(), TASKS * CONFIGS, "every delivery arrives");
    for t in &tasks {
        let done = accepted
            .iter()
            .filter(|h| task_of(&h.body) == Some(t.id.as_str()))
            .filter(|h| state_of(&h.body) == Some("TASK_STATE_COMPLETED"))
            .count();
        assert_eq!(done, CONFIGS, "task {}", t.id);
    }
    let most = hook.most_in_flight();
    assert!(most <= 4, "{most} requests were in flight at once");
    assert!(most >= 2, "deliveries ran one at a time ({most})");
}

// ----- SSRF ---------------------------------------------------------------------------------

const REFUSED: &[(&str, &str)] = &[
    ("http://127.0.0.1:9/h", "loopback"),
    ("http://[::1]:9/h", "loopback"),
    ("http://localhost:9/h", "loopback"),
    ("http://10.0.0.1/h", "private"),
    ("http://172.16.5.4/h", "private"),
    ("http://192.168.1.1/h", "private"),
    ("http://100.64.0.1/h", "private"),
    ("http://169.254.1.1/h", "link-local"),
    ("http://[fe80::1]/h", "link-local"),
    ("http://[fd12::1]/h", "unique-local"),
    ("http://224.0.0.1/h", "multicast"),
    ("http://[ff02::1]/h", "multicast"),
    ("http://0.0.0.0:9/h", "unspecified"),
    ("http://[::]:9/h", "unspecified"),
    ("http://255.255.255.255/h", "broadcast"),
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
    ("http://[fd00:ec2::254]/", "cloud metadata"),
    ("http://100.100.100.200/", "cloud metadata"),
    ("http://[::ffff:127.0.0.1]/h", "loopback"),
    ("http://2130706433/h", "loopback"),
    ("ftp://example.com/h", "http or https"),
];

#[tokio::test]
async fn creation_refuses_every_blocked_address_class_with_the_reason() {
    let (svc, _push) = service(PushConfig::default());
    let t = send_to_skill_with_push(&svc, "slow", "5000", None, true).await;
    for (url, why) in REFUSED {
        let err = svc
            .create_push_config(
                &RequestContext::new(),
                TaskPushNotificationConfig {
                    task_id: Some(t.id.clone()),
                    ..push_config(url, "a")
                },
            )
            .await
            .expect_err(url);
        assert!(
            matches!(err, A2aError::InvalidParams { .. }),
            "{url}: {err:?}"
        );
        let text = format!("{err:?}");
        assert!(text.contains(why), "{url}: {text}");
    }
    // Inline configs too.
    let req = SendMessageRequest {
        tenant: None,
        message: message("echo", "x"),
        configuration: Some(SendMessageConfiguration {
            task_push_notification_config: Some(push_config("http://10.1.2.3/h", "a")),
            ..Default::default()
        }),
        metadata: None,
    };
    let err = svc
        .send_message(&RequestContext::new(), req)
        .await
        .expect_err("inline config");
    assert!(format!("{err:?}").contains("private"), "{err:?}");
    // Public destinations are fine (a name pinned to a public address: DNS is not asked).
    let (svc, _push) = service(
        PushConfig::default().pin_host("hooks.example.com", ["93.184.215.14".parse().unwrap()]),
    );
    let t = send_to_skill_with_push(&svc, "slow", "5000", None, true).await;
    svc.create_push_config(
        &RequestContext::new(),
        TaskPushNotificationConfig {
            task_id: Some(t.id.clone()),
            ..push_config("https://hooks.example.com/a2a", "a")
        },
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_time_guard_checks_the_address_actually_dialled() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let port = hook.addr.port();
    let (svc, push) = service(PushConfig {
        retry: fast_retry(3),
        ..PushConfig::default()
    });
    let t = send_to_skill_with_push(&svc, "slow", "150", None, true).await;
    // Configs that passed creation, as a name that later resolves to 127.0.0.1 would (DNS
    // rebinding): written to the store directly, bypassing the creation check.
    let urls = [
        format!("http://localhost:{port}/hook"),
        format!("http://LocalHost:{port}/hook"),
        format!("http://127.0.0.1:{port}/hook"),
        format!("http://0.0.0.0:{port}/hook"),
        format!("http://[::ffff:127.0.0.1]:{port}/hook"),
        format!("http://2130706433:{port}/hook"),
    ];
    for (i, url) in urls.iter().enumerate() {
        svc.task_manager()
            .push_configs()
            .expect("the default store keeps push configs")
            .put(
                TaskPushNotificationConfig {
                    id: Some(format!("c{i}")),
                    task_id: Some(t.id.clone()),
                    ..push_config(url, "a")
                },
                10,
            )
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    idle(&push).await;
    assert!(
        hook.hits().is_empty(),
        "a refused destination was dialled: {:?}",
        hook.hits()
    );
    for (i, url) in urls.iter().enumerate() {
        let s = push
            .status(&t.id, &format!("c{i}"))
            .unwrap_or_else(|| panic!("no status for {url}"));
        let last = s.last.unwrap();
        match &last.outcome {
            DeliveryOutcome::Blocked { reason } => assert!(
                reason.contains("loopback") || reason.contains("unspecified"),
                "{reason}"
            ),
            other => panic!("{url}: {other:?}"),
        }
        assert_eq!(last.attempts, 0, "{url}: a refusal is not retried");
    }

    // The resolver itself.
    let err = GuardedResolver::new(SsrfPolicy::Strict)
        .resolve_checked("localhost")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("loopback"), "{err}");
    assert!(
        GuardedResolver::new(SsrfPolicy::AllowPrivate)
            .resolve_checked("localhost")
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn allowlists_open_named_hosts_and_networks() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let port = hook.addr.port();
    for (policy, url) in [
        (
            SsrfPolicy::allowlist(["127.0.0.0/8"]).unwrap(),
            format!("http://127.0.0.1:{port}/a"),
        ),
        (
            SsrfPolicy::allowlist(["localhost"]).unwrap(),
            format!("http://localhost:{port}/b"),
        ),
    ] {
        let (svc, push) = service(
            PushConfig {
                retry: fast_retry(2),
                ..PushConfig::default()
            }
            .ssrf(policy),
        );
        send_to_skill_with_push(&svc, "echo", "x", Some(push_config(&url, "a")), false).await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        idle(&push).await;
    }
    assert_eq!(hook.accepted().len(), 2);
    // An allowlist does not open anything else.
    let (svc, _push) =
        service(PushConfig::default().ssrf(SsrfPolicy::allowlist(["localhost"]).unwrap()));
    let t = send_to_skill_with_push(&svc, "slow", "10", None, true).await;
    let err = svc
        .create_push_config(
            &RequestContext::new(),
            TaskPushNotificationConfig {
                task_id: Some(t.id),
                ..push_config("http://10.0.0.1/", "a")
            },
        )
        .await
        .unwrap_err();
    assert!(format!("{err:?}").contains("private"));
}

#[tokio::test(flavor = "multi_thread")]
async fn https_without_a_tls_backend_is_not_retried() {
    let hook = Hook::start(|_, _| Reply::Status(204)).await;
    let (svc, push) = service(dev_config());
    let t = send_to_skill_with_push(
        &svc,
        "echo",
        "x",
        Some(push_config(
            &format!("https://localhost:{}/hook", hook.addr.port()),
            "a",
        )),
        false,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    idle(&push).await;
    let last = push.statuses(&t.id)[0].last.clone().unwrap();
    assert!(!last.outcome.is_delivered());
    // With a TLS backend compiled in (a2a-kit's `rustls` feature), the handshake with this
    // plain-HTTP server fails and is retried instead.
    if let DeliveryOutcome::Invalid { reason } = &last.outcome {
        assert!(reason.contains("rustls"), "{reason}");
        assert_eq!(last.attempts, 1);
    }
}

#[test]
fn message_helper_is_a_user_message() {
    assert_eq!(message("echo", "x").role, Role::User);
}
