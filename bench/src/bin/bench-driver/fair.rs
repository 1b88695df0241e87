//! Fair share (issue #29): the normal clients of the abuse workload measured alone, then beside
//! one abusive client of each kind, one kind per run, so the report shows which abuse hurts.
//! Every run is a fresh `bench-stream --allow-private-webhooks` with every bound at its
//! default (each caller's share of turns, queue and live tasks; each address's share of
//! connections) and no rate limit: each share must hold on its own. Its store is first filled
//! with completed tasks (`--fair-prefill`), in every run alike, so that a scan is expensive.
//! An abusive client is one address (127.0.3.N); it starts [`HEAD_START`] before the normal
//! clients, after its own setup, and stops when they do.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{oneshot, watch};

use super::*;

/// Connections of each abusive client that sends requests (as many as the abuse workload's
/// flood), each sending its next request as soon as the last is answered.
const ABUSER_CONNECTIONS: usize = 8;
/// How long an abusive client runs (after its setup) before the normal clients start.
const HEAD_START: Duration = Duration::from_secs(2);
/// How long each task of the skill-slot hog sleeps (holding its turn).
const HOG_SLEEP_SECS: u64 = 10;
/// Connections the holder tries to hold: all of the standalone server's (`max_connections`).
const HOLDER_CONNECTIONS: usize = 4096;
/// How long the holder waits before re-opening a connection the server closed.
const HOLDER_REOPEN_PAUSE: Duration = Duration::from_secs(1);
/// The ListTasks spammer's tenant: its tasks are its own, apart from everyone else's.
const LISTS_TENANT: &str = "fair-lists";
/// Tasks the ListTasks spammer makes (and then lists, again and again).
const LISTS_OWN_TASKS: usize = 10;
/// Push configs the fan-out client creates in all...
const PUSH_CONFIGS: usize = 4000;
/// ...and at most on one task (fewer when the agent refuses more).
const PUSH_CONFIGS_PER_TASK: usize = 1000;
/// How long the driver's webhook holds each delivery before answering 200.
const WEBHOOK_HOLD: Duration = Duration::from_secs(1);

/// The kinds of abusive client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Abuse {
    SlotHog,
    TaskFiller,
    ConnectionHolder,
    ListSpammer,
    PushFanOut,
}

impl Abuse {
    pub(super) const ALL: [Abuse; 5] = [
        Abuse::SlotHog,
        Abuse::TaskFiller,
        Abuse::ConnectionHolder,
        Abuse::ListSpammer,
        Abuse::PushFanOut,
    ];

    /// Its name in `--fair-kinds`.
    pub(super) fn key(self) -> &'static str {
        match self {
            Abuse::SlotHog => "hog",
            Abuse::TaskFiller => "filler",
            Abuse::ConnectionHolder => "holder",
            Abuse::ListSpammer => "lists",
            Abuse::PushFanOut => "push",
        }
    }

    /// Its name in the report.
    fn name(self) -> &'static str {
        match self {
            Abuse::SlotHog => "skill-slot hog",
            Abuse::TaskFiller => "live-task filler",
            Abuse::ConnectionHolder => "connection holder",
            Abuse::ListSpammer => "ListTasks spammer",
            Abuse::PushFanOut => "push fan-out",
        }
    }

    /// Its address: one per kind.
    fn ip(self) -> Ipv4Addr {
        let n = Abuse::ALL.iter().position(|k| *k == self).unwrap_or(0) as u8;
        Ipv4Addr::new(127, 0, 3, n + 1)
    }

    /// What it does, for the report.
    fn how(self) -> String {
        match self {
            Abuse::SlotHog => format!(
                "{ABUSER_CONNECTIONS} connections sending SendMessage with `returnImmediately` \
                 to a skill that sleeps {HOG_SLEEP_SECS} s (`sleep`), as fast as they are \
                 answered: without a share it would take every turn (1,024) and every queue slot \
                 (10,000)"
            ),
            Abuse::TaskFiller => format!(
                "{ABUSER_CONNECTIONS} connections sending SendMessage to a skill that asks a \
                 question (`ask`; each task is left waiting for a reply), as fast as they are \
                 answered, without the abuse workload's rate limit"
            ),
            Abuse::ConnectionHolder => format!(
                "{} idle connections opened at once (the server's `max_connections`), each \
                 re-opened {} s after the server closes it",
                fmt_num(HOLDER_CONNECTIONS as f64),
                HOLDER_REOPEN_PAUSE.as_secs_f64()
            ),
            Abuse::ListSpammer => format!(
                "{LISTS_OWN_TASKS} tasks of its own in a tenant of its own, then ListTasks of \
                 them (`GET /{LISTS_TENANT}/tasks`) over {ABUSER_CONNECTIONS} connections as \
                 fast as they are answered, the store holding everyone else's tasks too"
            ),
            Abuse::PushFanOut => format!(
                "tasks of a skill that asks again after every reply (`chat`), with {} push \
                 configs in all ({} a task, or as many as the agent allows) pointing at a webhook \
                 in the driver that holds each request {} s, then follow-up messages over {} \
                 connections as fast as they are answered: each reply makes an INPUT_REQUIRED \
                 event, pushed to every config of its task",
                fmt_num(PUSH_CONFIGS as f64),
                fmt_num(PUSH_CONFIGS_PER_TASK as f64),
                WEBHOOK_HOLD.as_secs_f64(),
                ABUSER_CONNECTIONS
            ),
        }
    }
}

/// One run of the fair workload.
#[derive(Debug, Clone, Default)]
pub(super) struct FairRun {
    normal: NormalResult,
    /// The abusive client's answers by HTTP status (0: no answer).
    abuser: BTreeMap<u16, usize>,
    /// What else it got, in words.
    got: String,
    /// The server's resident memory when the normal clients stopped, MB.
    rss_mb: f64,
    /// CPU time of the server and of the driver (its clients, abusive ones included) while
    /// the normal clients ran, in % of one core.
    server_cpu: f64,
    driver_cpu: f64,
    /// Tasks put in the store before the run.
    prefilled: u64,
}

/// The fair workload: normal clients alone, then beside each kind of abusive client.
#[derive(Debug, Clone, Default)]
pub(super) struct FairResults {
    alone: FairRun,
    beside: Vec<(Abuse, FairRun)>,
}

/// What an abusive client got.
#[derive(Debug, Default)]
struct Abused {
    statuses: BTreeMap<u16, usize>,
    got: String,
}

/// Run the fair workload on the streaming agent.
pub(super) async fn run(env: &Env, spec: &Spec) -> FairResults {
    let kinds: Vec<Abuse> = env
        .opts
        .fair_kinds
        .iter()
        .map(|k| {
            Abuse::ALL
                .into_iter()
                .find(|a| a.key() == k)
                .unwrap_or_else(|| {
                    panic!("--fair-kinds: no kind `{k}` (hog, filler, holder, lists, push)")
                })
        })
        .collect();
    let alone = once(env, spec, None).await;
    eprintln!(
        "[fair] normal clients alone: {}",
        line(&alone)
            .split("; the abuser")
            .next()
            .unwrap_or_default()
    );
    let mut beside = Vec::new();
    for kind in kinds {
        let r = once(env, spec, Some(kind)).await;
        eprintln!("[fair] beside a {}: {}", kind.name(), line(&r));
        beside.push((kind, r));
    }
    FairResults { alone, beside }
}

/// A run on one line, for the log.
fn line(r: &FairRun) -> String {
    format!(
        "{} requests, {} succeeded, p50 {}, p99 {}, RSS {:.0} MB, CPU server {:.0}% driver {:.0}%; \
         the abuser got {}{}",
        r.normal.total,
        pct(r.normal.ok as f64, r.normal.total as f64),
        fmt_ms(r.normal.p50_ms),
        fmt_ms(r.normal.p99_ms),
        r.rss_mb,
        r.server_cpu,
        r.driver_cpu,
        statuses(&r.abuser),
        if r.got.is_empty() {
            String::new()
        } else {
            format!("; {}", r.got)
        }
    )
}

/// One run: a fresh server, its store filled, the abusive client (if any) and then the normal
/// clients for `--fair-seconds`.
async fn once(env: &Env, spec: &Spec, kind: Option<Abuse>) -> FairRun {
    let server = env.start(spec, &["--allow-private-webhooks"]).await;
    let prefilled = prefill(env, &server).await;
    let url = server.url.clone();
    let pid = server.pid;
    let (stop_tx, stop_rx) = watch::channel(false);
    let (ready_tx, ready_rx) = oneshot::channel::<()>();
    let abuser = async {
        let Some(kind) = kind else {
            let _ = ready_tx.send(());
            return Abused::default();
        };
        match kind {
            Abuse::SlotHog => flood(env, &url, kind, ready_tx, stop_rx).await,
            Abuse::TaskFiller => flood(env, &url, kind, ready_tx, stop_rx).await,
            Abuse::ConnectionHolder => hold_connections(&url, kind, ready_tx, stop_rx).await,
            Abuse::ListSpammer => spam_lists(env, &url, kind, ready_tx, stop_rx).await,
            Abuse::PushFanOut => fan_out(env, &url, kind, ready_tx, stop_rx).await,
        }
    };
    let normal = async {
        // A client whose setup failed drops its sender: the normal clients start anyway.
        let _ = ready_rx.await;
        let (t0, server0, driver0) = (Instant::now(), cpu_seconds(pid), cpu_seconds("self"));
        let end = t0 + Duration::from_secs(env.opts.fair_seconds);
        let normal = normal_clients(env, &url, end).await;
        let rss_mb = rss(pid) as f64 / 1e6;
        let wall = t0.elapsed().as_secs_f64();
        let server_cpu = 100.0 * (cpu_seconds(pid) - server0) / wall;
        let driver_cpu = 100.0 * (cpu_seconds("self") - driver0) / wall;
        let _ = stop_tx.send(true);
        (normal, rss_mb, server_cpu, driver_cpu)
    };
    let (abused, (normal, rss_mb, server_cpu, driver_cpu)) = tokio::join!(abuser, normal);
    env.stop(server).await;
    FairRun {
        normal,
        abuser: abused.statuses,
        got: abused.got,
        rss_mb,
        server_cpu,
        driver_cpu,
        prefilled,
    }
}

/// CPU time (user and system) a process has used, in seconds: `/proc/PID/stat`.
fn cpu_seconds(pid: impl std::fmt::Display) -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let ticks = *TICKS.get_or_init(|| sh("getconf CLK_TCK").parse().unwrap_or(100.0));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's name (in parentheses, which may hold spaces): fields 3 onwards;
    // utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field(11) + field(12)) / ticks
}

/// Fill the store with `--fair-prefill` completed tasks (`oha -n`, blocking SendMessage of
/// `count` 1 from 127.0.0.1); returns how many were made.
async fn prefill(env: &Env, server: &Server) -> u64 {
    if env.opts.fair_prefill == 0 {
        return 0;
    }
    let body = stream_body("fair-prefill", "count", "1")
        .to_string()
        .replace("SendStreamingMessage", "SendMessage");
    let how = ["-n".to_string(), env.opts.fair_prefill.to_string()];
    let r = oha_body(env, server, &how, &body).await;
    if r.ok < env.opts.fair_prefill as u64 {
        eprintln!(
            "warning: fair: only {} of {} tasks made before the run",
            r.ok, env.opts.fair_prefill
        );
    }
    r.ok
}

// ------------------------------------------------------------------------------------------
// The abusive clients

fn stopped(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow()
}

/// `f`, unless the run stops first.
async fn or_stop<F: std::future::Future>(stop: &watch::Receiver<bool>, f: F) -> Option<F::Output> {
    let mut stop = stop.clone();
    tokio::select! {
        out = f => Some(out),
        _ = stop.wait_for(|s| *s) => None,
    }
}

/// Tell the normal clients to start, [`HEAD_START`] from now.
async fn ready_after_head_start(ready: oneshot::Sender<()>) {
    tokio::time::sleep(HEAD_START).await;
    let _ = ready.send(());
}

/// A client of the abusive kind's address, with `ABUSER_CONNECTIONS` keep-alive connections.
fn abuser_client(kind: Abuse) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(kind.ip()))
        .tcp_nodelay(true)
        .pool_max_idle_per_host(ABUSER_CONNECTIONS)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// An HTTP+JSON request (so that each refusal has its own HTTP status): its status (0 when
/// none came) and body.
async fn rest(client: &reqwest::Client, url: &str, body: Option<&Value>) -> (u16, bytes::Bytes) {
    let req = match body {
        Some(body) => client
            .post(url)
            .header("Content-Type", "application/json")
            .body(body.to_string()),
        None => client.get(url),
    };
    match req.header("A2A-Version", "1.0").send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.bytes().await.unwrap_or_default())
        }
        Err(_) => (0, bytes::Bytes::new()),
    }
}

/// A SendMessage body of HTTP+JSON: a text to a skill, or to an existing task.
fn send(
    env: &Env,
    skill: Option<&str>,
    task: Option<(&str, &str)>,
    text: &str,
    now: bool,
) -> Value {
    let mut message = json!({
        "messageId": env.message_id(), "role": "ROLE_USER", "parts": [{"text": text}],
    });
    if let Some(skill) = skill {
        message["metadata"] = json!({ "skillId": skill });
    }
    if let Some((task, context)) = task {
        message["taskId"] = json!(task);
        message["contextId"] = json!(context);
    }
    let mut body = json!({ "message": message });
    if now {
        body["configuration"] = json!({ "returnImmediately": true });
    }
    body
}

fn merge(into: &mut BTreeMap<u16, usize>, from: BTreeMap<u16, usize>) {
    for (k, v) in from {
        *into.entry(k).or_default() += v;
    }
}

/// The skill-slot hog and the live-task filler: SendMessage to `sleep` (returning at once) or
/// to `ask` (answered once the task waits for a reply), as fast as answered.
async fn flood(
    env: &Env,
    url: &str,
    kind: Abuse,
    ready: oneshot::Sender<()>,
    stop: watch::Receiver<bool>,
) -> Abused {
    let client = abuser_client(kind);
    let target = format!("{url}message:send");
    let hog = kind == Abuse::SlotHog;
    let loops = (0..ABUSER_CONNECTIONS).map(|_| {
        let (client, target, stop) = (client.clone(), target.clone(), stop.clone());
        async move {
            let (mut statuses, mut hits) = (BTreeMap::<u16, usize>::new(), 0usize);
            while !stopped(&stop) {
                let body = if hog {
                    send(env, Some("sleep"), None, &HOG_SLEEP_SECS.to_string(), true)
                } else {
                    send(env, Some("ask"), None, "why", false)
                };
                let Some((status, body)) =
                    or_stop(&stop, rest(&client, &target, Some(&body))).await
                else {
                    break;
                };
                *statuses.entry(status).or_default() += 1;
                let marker: &[u8] = if hog {
                    b"\"task\""
                } else {
                    b"TASK_STATE_INPUT_REQUIRED"
                };
                hits += usize::from(status == 200 && memchr_contains(&body, marker));
            }
            (statuses, hits)
        }
    });
    let (results, ()) = tokio::join!(
        futures::future::join_all(loops),
        ready_after_head_start(ready)
    );
    let mut out = Abused::default();
    let mut hits = 0;
    for (statuses, n) in results {
        merge(&mut out.statuses, statuses);
        hits += n;
    }
    out.got = if hog {
        format!(
            "{} tasks started, each sleeping {HOG_SLEEP_SECS} s",
            fmt_num(hits as f64)
        )
    } else {
        format!("{} tasks left waiting for a reply", fmt_num(hits as f64))
    };
    out
}

/// The connection holder: [`HOLDER_CONNECTIONS`] idle connections, each re-opened after the
/// server closes it; how many it held is sampled every 100 ms while the normal clients run.
async fn hold_connections(
    url: &str,
    kind: Abuse,
    ready: oneshot::Sender<()>,
    stop: watch::Receiver<bool>,
) -> Abused {
    use tokio::io::AsyncReadExt;
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .expect("server address");
    let held = AtomicUsize::new(0);
    let held = &held;
    let loops = (0..HOLDER_CONNECTIONS).map(|_| {
        let stop = stop.clone();
        async move {
            let (mut opened, mut closed, mut failed) = (0usize, 0usize, 0usize);
            while !stopped(&stop) {
                let Ok(socket) = tokio::net::TcpSocket::new_v4() else {
                    failed += 1;
                    break;
                };
                if socket
                    .bind(SocketAddr::new(IpAddr::V4(kind.ip()), 0))
                    .is_err()
                {
                    failed += 1;
                    break;
                }
                let mut tcp = match or_stop(&stop, socket.connect(addr)).await {
                    None => break,
                    Some(Ok(tcp)) => tcp,
                    Some(Err(_)) => {
                        failed += 1;
                        or_stop(&stop, tokio::time::sleep(HOLDER_REOPEN_PAUSE)).await;
                        continue;
                    }
                };
                opened += 1;
                held.fetch_add(1, Ordering::Relaxed);
                // Idle until the server closes it (a read of 0 bytes, or an error).
                let mut buf = [0u8; 64];
                let read = or_stop(&stop, tcp.read(&mut buf)).await;
                held.fetch_sub(1, Ordering::Relaxed);
                if read.is_none() {
                    break;
                }
                closed += 1;
                drop(tcp);
                or_stop(&stop, tokio::time::sleep(HOLDER_REOPEN_PAUSE)).await;
            }
            (opened, closed, failed)
        }
    });
    let sample = async {
        ready_after_head_start(ready).await;
        let mut samples = Vec::new();
        while or_stop(&stop, tokio::time::sleep(Duration::from_millis(100)))
            .await
            .is_some()
        {
            samples.push(held.load(Ordering::Relaxed) as f64);
        }
        samples
    };
    let (results, samples) = tokio::join!(futures::future::join_all(loops), sample);
    let (mut opened, mut closed, mut failed) = (0, 0, 0);
    for (o, c, f) in results {
        opened += o;
        closed += c;
        failed += f;
    }
    Abused {
        statuses: BTreeMap::new(),
        got: format!(
            "{} connections opened ({} failed to open), {} closed by the server; it held {} at \
             once (median of the run, sampled every 100 ms; {} at most)",
            fmt_num(opened as f64),
            fmt_num(failed as f64),
            fmt_num(closed as f64),
            fmt_num(median(samples.clone())),
            fmt_num(percentile(samples, 1.0)),
        ),
    }
}

/// The ListTasks spammer: a few tasks of its own in its own tenant, then ListTasks of them.
async fn spam_lists(
    env: &Env,
    url: &str,
    kind: Abuse,
    ready: oneshot::Sender<()>,
    stop: watch::Receiver<bool>,
) -> Abused {
    let client = abuser_client(kind);
    let mut out = Abused::default();
    let send_to = format!("{url}{LISTS_TENANT}/message:send");
    for _ in 0..LISTS_OWN_TASKS {
        let (status, _) = rest(
            &client,
            &send_to,
            Some(&send(env, Some("count"), None, "1", false)),
        )
        .await;
        *out.statuses.entry(status).or_default() += 1;
    }
    let list = format!("{url}{LISTS_TENANT}/tasks");
    let loops = (0..ABUSER_CONNECTIONS).map(|_| {
        let (client, list, stop) = (client.clone(), list.clone(), stop.clone());
        async move {
            let (mut statuses, mut lat) = (BTreeMap::<u16, usize>::new(), Vec::new());
            while !stopped(&stop) {
                let t0 = Instant::now();
                let Some((status, _)) = or_stop(&stop, rest(&client, &list, None)).await else {
                    break;
                };
                *statuses.entry(status).or_default() += 1;
                if status == 200 {
                    lat.push(t0.elapsed().as_secs_f64() * 1e3);
                }
            }
            (statuses, lat)
        }
    });
    let (results, ()) = tokio::join!(
        futures::future::join_all(loops),
        ready_after_head_start(ready)
    );
    let mut lat = Vec::new();
    for (statuses, l) in results {
        merge(&mut out.statuses, statuses);
        lat.extend(l);
    }
    out.got = format!(
        "{} lists of its {LISTS_OWN_TASKS} tasks answered, p50 {} and p99 {} each",
        fmt_num(lat.len() as f64),
        fmt_ms(percentile(lat.clone(), 0.5)),
        fmt_ms(percentile(lat, 0.99)),
    );
    out
}

/// The webhook of the push fan-out: holds each request [`WEBHOOK_HOLD`], then answers 200.
/// Returns its URL, the count of requests it received, and its task.
async fn start_webhook() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(WEBHOOK_HOLD).await;
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the webhook");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, received, task)
}

/// The push fan-out: tasks of `chat` with [`PUSH_CONFIGS`] push configs in all (at most
/// [`PUSH_CONFIGS_PER_TASK`] a task, fewer once the agent refuses one), then follow-ups to
/// them, each loop going round its share of the tasks.
async fn fan_out(
    env: &Env,
    url: &str,
    kind: Abuse,
    ready: oneshot::Sender<()>,
    stop: watch::Receiver<bool>,
) -> Abused {
    let (hook, received, webhook) = start_webhook().await;
    let client = abuser_client(kind);
    let mut out = Abused::default();
    let send_to = format!("{url}message:send");
    let (mut tasks, mut configs, mut most) = (Vec::<(String, String)>::new(), 0usize, 0usize);
    let mut refused = false;
    while configs < PUSH_CONFIGS && !stopped(&stop) {
        let (status, body) = rest(
            &client,
            &send_to,
            Some(&send(env, Some("chat"), None, "hello", false)),
        )
        .await;
        *out.statuses.entry(status).or_default() += 1;
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        let (Some(id), Some(context)) = (v["task"]["id"].as_str(), v["task"]["contextId"].as_str())
        else {
            break;
        };
        let create = format!("{url}tasks/{id}/pushNotificationConfigs");
        let config = json!({ "url": hook });
        let mut on_task = 0;
        while on_task < PUSH_CONFIGS_PER_TASK && configs < PUSH_CONFIGS {
            let n = ABUSER_CONNECTIONS
                .min(PUSH_CONFIGS_PER_TASK - on_task)
                .min(PUSH_CONFIGS - configs);
            let answers =
                futures::future::join_all((0..n).map(|_| rest(&client, &create, Some(&config))))
                    .await;
            let ok = answers.iter().filter(|(s, _)| *s == 200).count();
            for (status, _) in answers {
                *out.statuses.entry(status).or_default() += 1;
            }
            on_task += ok;
            configs += ok;
            if ok < n {
                refused = true;
                break;
            }
        }
        most = most.max(on_task);
        tasks.push((id.to_string(), context.to_string()));
        if on_task == 0 {
            break;
        }
    }
    let delivered_before = received.load(Ordering::Relaxed);
    let tasks = &tasks;
    let loops = (0..ABUSER_CONNECTIONS).map(|j| {
        let (client, send_to, stop) = (client.clone(), send_to.clone(), stop.clone());
        async move {
            let mut statuses = BTreeMap::<u16, usize>::new();
            let mine: Vec<&(String, String)> =
                tasks.iter().skip(j).step_by(ABUSER_CONNECTIONS).collect();
            'run: while !mine.is_empty() {
                for (id, context) in &mine {
                    let body = send(env, None, Some((id, context)), "more", false);
                    let Some((status, _)) =
                        or_stop(&stop, rest(&client, &send_to, Some(&body))).await
                    else {
                        break 'run;
                    };
                    *statuses.entry(status).or_default() += 1;
                }
            }
            statuses
        }
    });
    let (results, ()) = tokio::join!(
        futures::future::join_all(loops),
        ready_after_head_start(ready)
    );
    let delivered = received.load(Ordering::Relaxed);
    webhook.abort();
    for statuses in results {
        merge(&mut out.statuses, statuses);
    }
    out.got = format!(
        "{} tasks with {} push configs (at most {} on one{}); its webhook received {} \
         deliveries ({} of them during the setup)",
        fmt_num(tasks.len() as f64),
        fmt_num(configs as f64),
        fmt_num(most as f64),
        if refused {
            ", the agent refusing more"
        } else {
            ""
        },
        fmt_num(delivered as f64),
        fmt_num(delivered_before as f64),
    );
    out
}

// ------------------------------------------------------------------------------------------
// Report

/// `1,234 HTTP 200, 5 HTTP 503, 2 no answer`.
fn statuses(by: &BTreeMap<u16, usize>) -> String {
    if by.is_empty() {
        return "–".into();
    }
    by.iter()
        .map(|(status, n)| {
            let what = if *status == 0 {
                "no answer".to_string()
            } else {
                format!("HTTP {status}")
            };
            format!("{} {what}", fmt_num(*n as f64))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the normal clients beside an abusive one did within 10% of alone: success rate
/// and p99.
fn within(alone: &FairRun, beside: &FairRun) -> bool {
    let rate = |r: &FairRun| r.normal.ok as f64 / r.normal.total.max(1) as f64;
    rate(beside) >= 0.9 * rate(alone) && beside.normal.p99_ms <= 1.1 * alone.normal.p99_ms
}

/// The report's section "Fair share (#29)".
pub(super) fn section(s: &mut String, o: &Opts, r: &FairResults) {
    use std::fmt::Write;
    let _ = writeln!(s, "## Fair share (#29)\n");
    let _ = writeln!(
        s,
        "`bench-stream --allow-private-webhooks` (on CPU {cpu}; every bound at its default: each \
         caller (here, each client address) runs at most 256 skills, queues 1,000 runs and holds \
         1,000 live tasks, each address holds 256 connections; no rate limit), {runs} runs of \
         {secs} s, each on a fresh server whose store is first filled with {prefill} completed \
         tasks (`oha -n`, from 127.0.0.1: the store is full, so each new task evicts the oldest \
         finished one): the {normal} normal clients of the abuse workload (each from its own \
         loopback address, {rate} blocking SendMessage a second, `count` of one chunk) alone, \
         then beside one abusive client per run, from one address of its own, starting {head} s \
         before them (after its setup):\n",
        cpu = if o.server_cpu.is_empty() {
            "any"
        } else {
            &o.server_cpu
        },
        runs = 1 + r.beside.len(),
        secs = o.fair_seconds,
        prefill = fmt_num(o.fair_prefill as f64),
        normal = ABUSE_NORMAL_CLIENTS,
        rate = ABUSE_NORMAL_RATE,
        head = HEAD_START.as_secs(),
    );
    for (kind, _) in &r.beside {
        let _ = writeln!(s, "* **{}**: {}.", kind.name(), kind.how());
    }
    let _ = writeln!(
        s,
        "\nA normal request succeeds when it is answered 200 with its task COMPLETED within 10 s. \
         The abusive clients speak HTTP+JSON, so that each refusal has its status (a share \
         refused is 503). CPU is the time the server and the driver (every client, the \
         abusive one included) used while the normal clients ran, in % of one core: a core \
         at 100% is what the others wait for. `bash bench/run.sh --only fair --servers stream --out \
         target/bench/fair.md` runs this section alone (`--fair-seconds`, `--fair-prefill`, \
         `--fair-kinds`).\n"
    );
    let _ = writeln!(
        s,
        "| run | normal requests | succeeded | p50 | p99 | server RSS at the end | CPU: server / driver | the abusive client got |\n\
         |---|---:|---:|---:|---:|---:|---:|---|"
    );
    let row = |s: &mut String, name: &str, run: &FairRun, abuser: String| {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {:.0} MB | {:.0}% / {:.0}% | {abuser} |",
            fmt_num(run.normal.total as f64),
            pct(run.normal.ok as f64, run.normal.total as f64),
            fmt_ms(run.normal.p50_ms),
            fmt_ms(run.normal.p99_ms),
            run.rss_mb,
            run.server_cpu,
            run.driver_cpu,
        );
    };
    row(s, "normal clients alone", &r.alone, "–".into());
    for (kind, run) in &r.beside {
        row(
            s,
            &format!("beside a {}", kind.name()),
            run,
            statuses(&run.abuser),
        );
    }
    let _ = writeln!(s);
    for (kind, run) in &r.beside {
        if !run.got.is_empty() {
            let _ = writeln!(s, "* The {}: {}.", kind.name(), run.got);
        }
    }
    let short: Vec<String> = std::iter::once(&r.alone)
        .chain(r.beside.iter().map(|(_, run)| run))
        .filter(|run| run.prefilled < o.fair_prefill as u64)
        .map(|run| fmt_num(run.prefilled as f64))
        .collect();
    if !short.is_empty() {
        let _ = writeln!(
            s,
            "* Warning: some stores were filled short of {}: {}.",
            fmt_num(o.fair_prefill as f64),
            short.join(", ")
        );
    }
    let _ = writeln!(s);
}

/// The targets' rows: one per abusive client.
pub(super) fn targets(s: &mut String, r: &FairResults) {
    use std::fmt::Write;
    let alone = &r.alone;
    for (kind, run) in &r.beside {
        let _ = writeln!(
            s,
            "| normal clients beside a {}: success and p99 within 10% of alone | {} / {} (alone {} / {}) | {} |",
            kind.name(),
            pct(run.normal.ok as f64, run.normal.total as f64),
            fmt_ms(run.normal.p99_ms),
            pct(alone.normal.ok as f64, alone.normal.total as f64),
            fmt_ms(alone.normal.p99_ms),
            if within(alone, run) { "yes" } else { "**no**" }
        );
    }
}
