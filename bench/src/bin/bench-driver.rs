//! The benchmark driver (issue #9): starts every server, loads it, measures, writes
//! `BENCHMARKS.md`. Run it through `bash bench/run.sh`, which installs the tools and pins this
//! driver (and so every client it starts) to CPU 1; the servers are started under
//! `taskset -c 0`.
//!
//! Workloads, each on a fresh server process, servers interleaved within each run:
//! * W1 unary: `oha` (64 keep-alive connections, fixed duration after a warm-up) sends the same
//!   JSON-RPC SendMessage (blocking, ~100-byte text) to each server: requests/s, p50, p99.
//! * W2 streaming: SendStreamingMessage of a `count` skill (1,000 and 10,000 chunks), read by
//!   an SSE client (reqwest + eventsource-stream): artifact events/s and time to first event.
//! * W1, its instructions and W2 over gRPC (`bench-driver/grpc.rs`, tonic's client): the same
//!   messages to `bench-hello`, `bench-stream` and `bench-grpc-limit` (a bare tonic handler).
//! * W3 memory: VmRSS of the server (`/proc/PID/status`) before and after creating 100,000
//!   completed tasks (with `oha -n`), and before and after opening 1,000 SSE streams that stay
//!   open (a `hold` skill): bytes per retained task and per open stream.
//! * Token latency (`llm`): a fake OpenAI-compatible model in this driver streams text
//!   deltas, each carrying the time it was sent, to `bench-llm` (a model run); the time from
//!   a token's send to the client's receipt of the SSE frame carrying it, against the same
//!   client reading the fake model directly.
//! * Abuse (#18): normal clients (each from its own loopback address) alone, then beside
//!   slowloris connections and a flood of tasks waiting for replies.
//! * Fair share (#29, `fair`, in `bench-driver/fair.rs`): the same normal clients alone, then
//!   beside one abusive client of each kind in turn (a skill-slot hog, a live-task filler, a
//!   connection holder, a ListTasks spammer, a push fan-out).

#![forbid(unsafe_code)]

#[path = "bench-driver/fair.rs"]
mod fair;
#[path = "bench-driver/grpc.rs"]
mod grpc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

#[derive(Parser, Debug, Clone)]
#[command(about = "a2a-kit benchmark driver; run it through `bash bench/run.sh`")]
struct Opts {
    /// Runs of every scenario (the report gives the median).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Runs of W1 (at least `--runs`): its ratios are the headline, and this VM's speed drifts
    /// by tens of percent from minute to minute, so W1 takes more runs, one per server order.
    #[arg(long, default_value_t = 5)]
    w1_runs: usize,
    /// W1: measured seconds per run.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// W1: warm-up seconds before each measurement.
    #[arg(long, default_value_t = 3)]
    warmup: u64,
    /// W1: concurrent keep-alive connections (over gRPC: calls in flight).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// W1 over gRPC: HTTP/2 connections (tonic channels) the calls in flight are spread over.
    #[arg(long, default_value_t = 4)]
    grpc_channels: usize,
    /// W2: chunk counts of the streaming skill.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1000usize, 10000])]
    chunks: Vec<usize>,
    /// W2: streams per chunk count per run (the run's figure is their median).
    #[arg(long, default_value_t = 3)]
    streams_per_run: usize,
    /// W3: completed tasks created.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
    /// W3: completed tasks created on the servers that serve fewer than ~2,000 requests/s on
    /// one core (Python, SQLite); the per-task figure is a slope, and 100,000 tasks at 200
    /// req/s would take 8 minutes per run.
    #[arg(long, default_value_t = 20_000)]
    tasks_slow: usize,
    /// W3: SSE streams held open.
    #[arg(long, default_value_t = 1000)]
    open_streams: usize,
    /// Workloads to run (w1, instr, w2, w3, xrep, abuse, fair, llm).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["w1".to_string(), "instr".into(), "w2".into(), "w3".into(), "xrep".into(), "abuse".into(), "fair".into(), "llm".into()])]
    only: Vec<String>,
    /// Token latency: text deltas per model stream.
    #[arg(long, default_value_t = 2000)]
    llm_tokens: usize,
    /// Token latency: milliseconds between two text deltas of the fake model.
    #[arg(long, default_value_t = 2)]
    llm_every_ms: u64,
    /// Abuse: measured seconds of each of its two runs (normal clients alone, then beside the
    /// abusive ones).
    #[arg(long, default_value_t = 60)]
    abuse_seconds: u64,
    /// Fair share: measured seconds of each of its runs (normal clients alone, then beside
    /// each kind of abusive client).
    #[arg(long, default_value_t = 30)]
    fair_seconds: u64,
    /// Fair share: completed tasks put in the store before each of its runs (what a
    /// ListTasks walks past).
    #[arg(long, default_value_t = 100_000)]
    fair_prefill: usize,
    /// Fair share: the abusive clients, one run each (hog, filler, holder, lists, push).
    #[arg(long, value_delimiter = ',', default_values_t = fair::Abuse::ALL.map(|k| k.key().to_string()))]
    fair_kinds: Vec<String>,
    /// Cross-replica latency: paced streams at once, and events per stream.
    #[arg(long, default_value_t = 4)]
    xrep_streams: usize,
    /// Cross-replica latency: events per stream (one every 10 ms).
    #[arg(long, default_value_t = 150)]
    xrep_events: usize,
    /// Servers to run (keys: hello, hello-apikey, hello-llm, hello-sqlite, hello-postgres,
    /// hello-manual, hello-v03 (W1 in A2A 0.3), hello-otel (OTLP export on), limit, python,
    /// python-postgres, stream, stream-sqlite, stream-postgres, llm; over gRPC: hello-grpc,
    /// stream-grpc, grpc-limit). `hello-llm` (`bench-hello-llm`) and `llm` (`bench-llm`) are
    /// built with the `a2a-bench` feature `llm`, `hello-otel` (`bench-hello-otel`) with `otel`
    /// (bench/run.sh does); without their binaries they are skipped.
    #[arg(long, value_delimiter = ',')]
    servers: Option<Vec<String>>,
    /// The PostgreSQL database of `hello-postgres` (its `a2a` schema is emptied at each start).
    #[arg(
        long,
        env = "A2A_KIT_TEST_DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    postgres: String,
    /// The `oha` binary.
    #[arg(long, default_value = "oha")]
    oha: PathBuf,
    /// The Python interpreter of the venv with a2a-sdk.
    #[arg(long)]
    python: PathBuf,
    /// The Python agent.
    #[arg(long, default_value = "bench/python/echo_agent.py")]
    python_agent: PathBuf,
    /// Where server logs, SQLite files and captured responses go.
    #[arg(long, default_value = "target/bench")]
    work: PathBuf,
    /// The report to write.
    #[arg(long, default_value = "BENCHMARKS.md")]
    out: PathBuf,
    /// A Markdown file appended to the report as its analysis section.
    #[arg(long, default_value = "bench/ANALYSIS.md")]
    analysis: PathBuf,
    /// Keep the callgrind dumps of the instruction workload (in `WORK/tmp`, named in the
    /// log) for `callgrind_annotate`, instead of deleting them.
    #[arg(long)]
    keep_callgrind: bool,
    /// CPU list for the servers (taskset -c); empty: no pinning.
    #[arg(long, default_value = "0")]
    server_cpu: String,
    /// The command line that produced the report (printed in it).
    #[arg(long, default_value = "bash bench/run.sh")]
    command: String,
}

// ------------------------------------------------------------------------------------------
// Servers

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ours,
    Limit,
    Python,
}

#[derive(Debug, Clone)]
struct Spec {
    key: &'static str,
    label: &'static str,
    kind: Kind,
    program: PathBuf,
    args: Vec<String>,
    sqlite: bool,
    postgres: bool,
    api_key: Option<&'static str>,
    /// The workloads speak gRPC to it (W1, its instructions and W2).
    grpc: bool,
    /// W1 speaks A2A 0.3 to it (`message/send`, no `A2A-Version`).
    v03: bool,
    /// It exports over OTLP to the driver's sink (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    otlp: bool,
}

struct Server {
    /// W1 speaks A2A 0.3 to it.
    v03: bool,
    child: Child,
    pid: u32,
    url: String,
    db: Option<PathBuf>,
    /// The API key every request carries (`X-API-Key`), for a server started with one.
    api_key: Option<&'static str>,
}

/// The key of the `hello-apikey` server (W1 with authentication).
const BENCH_API_KEY: &str = "bench-api-key-0123456789abcdef";

struct Env {
    opts: Opts,
    bin_dir: PathBuf,
    client: reqwest::Client,
    seq: std::sync::atomic::AtomicU64,
    /// The OTLP sink of the servers that export (`hello-otel`), once started.
    otlp: Option<OtlpSink>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Env {
    fn spec(&self, key: &str) -> Spec {
        let bin = |name: &str| self.bin_dir.join(name);
        let (label, kind, program, args, sqlite) = match key {
            "hello" => (
                "ours: macro hello, in-memory store",
                Kind::Ours,
                bin("bench-hello"),
                vec![],
                false,
            ),
            "hello-sqlite" => (
                "ours: macro hello, SQLite store",
                Kind::Ours,
                bin("bench-hello"),
                vec![],
                true,
            ),
            "hello-postgres" => (
                "ours: macro hello, PostgreSQL store",
                Kind::Ours,
                bin("bench-hello"),
                vec!["--store".into(), self.opts.postgres.clone()],
                false,
            ),
            "hello-apikey" => (
                "ours: macro hello, in-memory store, API-key authentication",
                Kind::Ours,
                bin("bench-hello"),
                vec!["--api-key".into(), BENCH_API_KEY.into()],
                false,
            ),
            "hello-llm" => (
                "ours: macro hello, in-memory store, llm feature compiled in",
                Kind::Ours,
                bin("bench-hello-llm"),
                vec![],
                false,
            ),
            "llm" => (
                "ours: model run (`bench-llm`), in-memory store",
                Kind::Ours,
                bin("bench-llm"),
                vec![],
                false,
            ),
            "hello-manual" => (
                "ours: hand-written hello, in-memory store",
                Kind::Ours,
                bin("bench-hello-manual"),
                vec![],
                false,
            ),
            "stream" => (
                "ours: streaming agent, in-memory store",
                Kind::Ours,
                bin("bench-stream"),
                vec![],
                false,
            ),
            "stream-sqlite" => (
                "ours: streaming agent, SQLite store",
                Kind::Ours,
                bin("bench-stream"),
                vec![],
                true,
            ),
            "hello-v03" => (
                "ours: macro hello, in-memory store, A2A 0.3 (JSON-RPC `message/send`)",
                Kind::Ours,
                bin("bench-hello"),
                vec![],
                false,
            ),
            "hello-otel" => (
                "ours: macro hello, in-memory store, OTLP export on (spans and metrics)",
                Kind::Ours,
                bin("bench-hello-otel"),
                vec![],
                false,
            ),
            "hello-grpc" => (
                "ours: macro hello, in-memory store, over gRPC",
                Kind::Ours,
                bin("bench-hello"),
                vec![],
                false,
            ),
            "stream-grpc" => (
                "ours: streaming agent, in-memory store, over gRPC",
                Kind::Ours,
                bin("bench-stream"),
                vec![],
                false,
            ),
            "grpc-limit" => (
                "limit: bare tonic handler (gRPC)",
                Kind::Limit,
                bin("bench-grpc-limit"),
                vec![
                    "--unary".into(),
                    self.opts.work.join("grpc-unary.pb").display().to_string(),
                    "--stream".into(),
                    self.opts.work.join("grpc-stream.pb").display().to_string(),
                ],
                false,
            ),
            "limit" => (
                "limit: bare axum handler",
                Kind::Limit,
                bin("bench-limit"),
                vec![
                    "--unary".into(),
                    self.opts
                        .work
                        .join("unary-response.json")
                        .display()
                        .to_string(),
                    "--stream-frames".into(),
                    self.opts
                        .work
                        .join("stream-frames.txt")
                        .display()
                        .to_string(),
                ],
                false,
            ),
            "python" => (
                "Python a2a-sdk 1.3.0 + uvicorn",
                Kind::Python,
                self.opts.python.clone(),
                vec![self.opts.python_agent.display().to_string()],
                false,
            ),
            "python-postgres" => (
                "Python a2a-sdk 1.3.0 + uvicorn, DatabaseTaskStore on PostgreSQL",
                Kind::Python,
                self.opts.python.clone(),
                vec![
                    self.opts.python_agent.display().to_string(),
                    "--database-url".into(),
                    self.opts.postgres.clone(),
                ],
                false,
            ),
            "stream-postgres" => (
                "ours: streaming agent, PostgreSQL store",
                Kind::Ours,
                bin("bench-stream"),
                vec!["--store".into(), self.opts.postgres.clone()],
                false,
            ),
            other => panic!("unknown server {other}"),
        };
        Spec {
            key: leak(key),
            label,
            kind,
            program,
            args,
            sqlite,
            postgres: key.ends_with("-postgres"),
            api_key: (key == "hello-apikey").then_some(BENCH_API_KEY),
            grpc: matches!(key, "hello-grpc" | "stream-grpc" | "grpc-limit"),
            v03: key == "hello-v03",
            otlp: key == "hello-otel",
        }
    }

    fn wanted(&self, key: &str) -> bool {
        self.opts
            .servers
            .as_ref()
            .is_none_or(|s| s.iter().any(|k| k == key))
    }

    async fn start(&self, spec: &Spec, extra: &[&str]) -> Server {
        self.start_with(spec, extra, None).await
    }

    /// Start a server; with `callgrind`, under `valgrind --tool=callgrind` writing there (and
    /// not pinned: an instruction count does not depend on the core).
    async fn start_with(&self, spec: &Spec, extra: &[&str], callgrind: Option<&Path>) -> Server {
        let port = free_port();
        let mut args = spec.args.clone();
        if spec.kind == Kind::Python {
            args.extend(["--port".into(), port.to_string()]);
        } else {
            args.extend(["--bind".into(), format!("127.0.0.1:{port}")]);
        }
        let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let db = spec
            .sqlite
            .then(|| self.opts.work.join(format!("tmp/{}-{n}.db", spec.key)));
        if let Some(db) = &db {
            args.extend(["--store".into(), format!("sqlite:{}", db.display())]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let log = std::fs::File::create(self.opts.work.join(format!("logs/{}-{n}.log", spec.key)))
            .expect("log file");
        let mut cmd = if let Some(out) = callgrind {
            let mut c = Command::new("valgrind");
            c.arg("--tool=callgrind")
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg(&spec.program);
            c
        } else if self.opts.server_cpu.is_empty() {
            Command::new(&spec.program)
        } else {
            let mut c = Command::new("taskset");
            c.args(["-c", &self.opts.server_cpu]).arg(&spec.program);
            c
        };
        if spec.otlp {
            let sink = self.otlp.as_ref().expect("the OTLP sink is started");
            cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &sink.url)
                .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .env("OTEL_SERVICE_NAME", spec.program.file_name().expect("name"));
        }
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", spec.program.display()));
        let pid = child.id().expect("pid");
        let url = format!("http://127.0.0.1:{port}/");
        let card = format!("http://127.0.0.1:{port}/.well-known/agent-card.json");
        let deadline =
            Instant::now() + Duration::from_secs(if callgrind.is_some() { 300 } else { 60 });
        // The gRPC limit serves no card: it is up once it accepts connections.
        let card_less = spec.grpc && spec.kind == Kind::Limit;
        loop {
            if card_less {
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    break;
                }
            } else if let Ok(r) = self.client.get(&card).send().await
                && r.status().is_success()
            {
                break;
            }
            if Instant::now() > deadline {
                panic!(
                    "{} did not start (see {}/logs)",
                    spec.key,
                    self.opts.work.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Server {
            v03: spec.v03,
            child,
            pid,
            url,
            db,
            api_key: spec.api_key,
        }
    }

    async fn stop(&self, mut s: Server) {
        let _ = s.child.start_kill();
        let _ = s.child.wait().await;
        if let Some(db) = s.db {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
        }
    }

    fn message_id(&self) -> String {
        format!(
            "bench-{}",
            self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )
    }
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// VmRSS of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

// ------------------------------------------------------------------------------------------
// Requests

/// The W1 message text: 100 bytes.
const TEXT_100: &str = "Alice Pleasance Liddell, who followed a white rabbit down a hole and found a strange world of wonder";

fn unary_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "bench-w1", "role": "ROLE_USER", "parts": [{"text": TEXT_100}]}}
    })
    .to_string()
}

/// The W1 request as an A2A 0.3 client writes it.
fn unary_body_v03() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {"kind": "message", "messageId": "bench-w1", "role": "user",
                               "parts": [{"kind": "text", "text": TEXT_100}]}}
    })
    .to_string()
}

fn stream_body(message_id: &str, skill: &str, text: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": "s", "method": "SendStreamingMessage",
        "params": {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}],
                               "metadata": {"skillId": skill}}}
    })
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    body: String,
) -> Result<reqwest::Response, String> {
    client
        .post(url)
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())
}

/// One SendMessage; checks the task completed. Returns the raw body.
async fn check_unary(env: &Env, server: &Server) -> Result<Vec<u8>, String> {
    let mut req = env
        .client
        .post(&server.url)
        .header("Content-Type", "application/json");
    req = if server.v03 {
        req.body(unary_body_v03())
    } else {
        req.header("A2A-Version", "1.0").body(unary_body())
    };
    if let Some(key) = server.api_key {
        req = req.header("X-API-Key", key);
    }
    let r = req.send().await.map_err(|e| e.to_string())?;
    let body = r.bytes().await.map_err(|e| e.to_string())?.to_vec();
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&body)))?;
    let state = if server.v03 {
        &v["result"]["status"]["state"]
    } else {
        &v["result"]["task"]["status"]["state"]
    };
    if state != "TASK_STATE_COMPLETED" && state != "completed" {
        return Err(format!("unexpected SendMessage response: {v}"));
    }
    Ok(body)
}

// ------------------------------------------------------------------------------------------
// W1: oha

#[derive(Debug, Clone, Default)]
struct OhaResult {
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
    ok: u64,
    other: u64,
    /// The server's CPU time over the measured load, in % of one core (W1 only; NaN where not
    /// measured): near 100%, the server is the bottleneck, not the load generator.
    server_cpu: f64,
}

async fn oha(env: &Env, server: &Server, how: &[String]) -> OhaResult {
    let body = if server.v03 {
        unary_body_v03()
    } else {
        unary_body()
    };
    oha_body(env, server, how, &body).await
}

/// [`oha`] sending `body` (a JSON-RPC request) instead of the W1 one.
async fn oha_body(env: &Env, server: &Server, how: &[String], body: &str) -> OhaResult {
    let c = env.opts.connections.to_string();
    let mut cmd = Command::new(&env.opts.oha);
    cmd.args(how);
    if let Some(key) = server.api_key {
        cmd.args(["-H".to_string(), format!("X-API-Key: {key}")]);
    }
    if !server.v03 {
        cmd.args(["-H", "A2A-Version: 1.0"]);
    }
    cmd.args(["-c", &c, "-m", "POST", "-T", "application/json", "-d", body])
        .args(["--no-tui", "--output-format", "json", &server.url])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let out = cmd.output().await.expect("oha runs");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "oha output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let codes = v["statusCodeDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let ok = codes.get("200").and_then(Value::as_u64).unwrap_or(0);
    let all: u64 = codes.values().filter_map(Value::as_u64).sum();
    OhaResult {
        rps: v["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        p50_ms: v["latencyPercentiles"]["p50"].as_f64().unwrap_or(f64::NAN) * 1e3,
        p99_ms: v["latencyPercentiles"]["p99"].as_f64().unwrap_or(f64::NAN) * 1e3,
        ok,
        other: all - ok,
        server_cpu: f64::NAN,
    }
}

/// One W1 call in the server's protocol; checks the task completed.
async fn check_w1(env: &Env, spec: &Spec, server: &Server) {
    let checked = if spec.grpc {
        grpc::check_unary(server).await.map(|_| ())
    } else {
        check_unary(env, server).await.map(|_| ())
    };
    if let Err(e) = checked {
        panic!("{}: {e}", spec.key);
    }
}

/// W1 for `secs` seconds in the server's protocol (`oha -z`, or the gRPC load).
async fn w1_load_for(env: &Env, spec: &Spec, server: &Server, secs: u64) -> OhaResult {
    if spec.grpc {
        grpc::load(env, server, grpc::Until::Elapsed(Duration::from_secs(secs))).await
    } else {
        oha(env, server, &["-z".to_string(), format!("{secs}s")]).await
    }
}

/// `n` W1 requests in the server's protocol (`oha -n`, or the gRPC load).
async fn w1_load_n(env: &Env, spec: &Spec, server: &Server, n: u64) -> OhaResult {
    if spec.grpc {
        grpc::load(env, server, grpc::Until::Calls(n)).await
    } else {
        oha(env, server, &["-n".to_string(), n.to_string()]).await
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

async fn w1_once(env: &Env, spec: &Spec) -> OhaResult {
    let sent = spec
        .otlp
        .then(|| env.otlp.as_ref().map(|o| o.counts.snapshot()))
        .flatten();
    let server = env.start(spec, &[]).await;
    check_w1(env, spec, &server).await;
    let warm = w1_load_for(env, spec, &server, env.opts.warmup).await;
    let (cpu0, t0) = (cpu_ticks(server.pid), Instant::now());
    let mut r = w1_load_for(env, spec, &server, env.opts.duration).await;
    if let (Some(a), Some(b)) = (cpu0, cpu_ticks(server.pid)) {
        let hz: f64 = sh("getconf CLK_TCK").parse().unwrap_or(100.0);
        r.server_cpu = 100.0 * (b - a) as f64 / hz / t0.elapsed().as_secs_f64();
    }
    env.stop(server).await;
    if let (Some(sink), Some(before)) = (&env.otlp, sent) {
        eprintln!(
            "W1 {}: {} (of {} requests answered)",
            spec.key,
            sink.since(before),
            fmt_num((warm.ok + r.ok + 1) as f64)
        );
    }
    r
}

/// Requests measured under callgrind (after as many for warm-up).
const INSTR_REQUESTS: u64 = 5_000;

/// Instructions the server executes per W1 request, counted by callgrind: the same workload as
/// W1 (same connections), after a warm-up, counters zeroed before and dumped after the measured
/// requests. Unlike requests/s, the count hardly moves with other load on the machine, so small
/// differences (macro vs hand-written) show. `None` if valgrind is missing or fails.
async fn instr_once(env: &Env, spec: &Spec) -> Option<f64> {
    let out = std::path::absolute(env.opts.work.join(format!(
        "tmp/callgrind-{}-{}.out",
        spec.key,
        env.message_id()
    )))
    .ok()?;
    let sent = spec
        .otlp
        .then(|| env.otlp.as_ref().map(|o| o.counts.snapshot()))
        .flatten();
    let server = env.start_with(spec, &[], Some(&out)).await;
    check_w1(env, spec, &server).await;
    let control = |arg: &str| {
        let pid = server.pid.to_string();
        let arg = arg.to_string();
        async move {
            Command::new("callgrind_control")
                .args([arg.as_str(), pid.as_str()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await
                .is_ok_and(|s| s.success())
        }
    };
    w1_load_n(env, spec, &server, INSTR_REQUESTS).await;
    let zeroed = control("-z").await;
    let r = w1_load_n(env, spec, &server, INSTR_REQUESTS).await;
    let dumped = control("-d").await;
    env.stop(server).await;
    if let (Some(sink), Some(before)) = (&env.otlp, sent) {
        eprintln!(
            "instructions {}: {} (of {} requests)",
            spec.key,
            sink.since(before),
            2 * INSTR_REQUESTS + 1
        );
    }
    let dump = std::path::PathBuf::from(format!("{}.1", out.display()));
    let text = std::fs::read_to_string(&dump).unwrap_or_default();
    if env.opts.keep_callgrind {
        eprintln!("callgrind dump of {} kept: {}", spec.key, dump.display());
    } else {
        let _ = std::fs::remove_file(&dump);
    }
    let _ = std::fs::remove_file(&out);
    let total: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .and_then(|v| v.trim().parse().ok())?;
    (zeroed && dumped && r.ok == INSTR_REQUESTS).then_some(total / INSTR_REQUESTS as f64)
}

// ------------------------------------------------------------------------------------------
// W2: SSE client

#[derive(Debug, Clone, Default)]
struct StreamResult {
    events_per_s: f64,
    ttfe_ms: f64,
    first_chunk_ms: f64,
}

/// The events of an SSE response; an error naming what came instead when it is not one.
async fn sse_events(
    resp: reqwest::Response,
) -> Result<impl futures::Stream<Item = Result<eventsource_stream::Event, String>>, String> {
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    if !ct.starts_with("text/event-stream") {
        return Err(format!(
            "not an SSE response ({ct}): {}",
            resp.text().await.unwrap_or_default()
        ));
    }
    Ok(resp
        .bytes_stream()
        .eventsource()
        .map(|ev| ev.map_err(|e| e.to_string())))
}

async fn one_stream(env: &Env, url: &str, skill: &str, n: usize) -> Result<StreamResult, String> {
    let body = stream_body(&env.message_id(), skill, &n.to_string()).to_string();
    let t0 = Instant::now();
    let resp = post(&env.client, url, body).await?;
    let mut events = sse_events(resp).await?;
    let (mut first, mut first_chunk, mut chunks) = (None, None, 0usize);
    while let Some(ev) = events.next().await {
        let ev = ev?;
        first.get_or_insert_with(|| t0.elapsed());
        if ev.data.contains("\"artifactUpdate\"") {
            chunks += 1;
            first_chunk.get_or_insert_with(|| t0.elapsed());
        } else if ev.data.contains("\"error\"") {
            return Err(format!("error event: {}", ev.data));
        }
    }
    let total = t0.elapsed();
    // a2a-kit closes a streamed artifact with one more, empty `lastChunk` event (a stream
    // cannot tell its last item in advance); only the N chunks with content are counted.
    if chunks != n && chunks != n + 1 {
        return Err(format!("{chunks} chunks instead of {n}"));
    }
    Ok(StreamResult {
        events_per_s: n as f64 / total.as_secs_f64(),
        ttfe_ms: first.unwrap_or_default().as_secs_f64() * 1e3,
        first_chunk_ms: first_chunk.unwrap_or_default().as_secs_f64() * 1e3,
    })
}

async fn w2_once(env: &Env, spec: &Spec) -> BTreeMap<usize, StreamResult> {
    let server = env.start(spec, &[]).await;
    let on = &server;
    let count = |n: usize| async move {
        if spec.grpc {
            grpc::one_stream(env, on, n).await
        } else {
            one_stream(env, &on.url, "count", n).await
        }
    };
    // Warm-up: one stream of the smallest size.
    let warm = *env.opts.chunks.iter().min().unwrap_or(&1000);
    if let Err(e) = count(warm).await {
        panic!("{}: {e}", spec.key);
    }
    let mut out = BTreeMap::new();
    for &n in &env.opts.chunks {
        let mut rs = Vec::new();
        for _ in 0..env.opts.streams_per_run {
            match tokio::time::timeout(Duration::from_secs(600), count(n)).await {
                Ok(Ok(r)) => rs.push(r),
                Ok(Err(e)) => panic!("{} {n} chunks: {e}", spec.key),
                Err(_) => panic!("{} {n} chunks: no end after 600 s", spec.key),
            }
        }
        out.insert(
            n,
            StreamResult {
                events_per_s: median(rs.iter().map(|r| r.events_per_s).collect()),
                ttfe_ms: median(rs.iter().map(|r| r.ttfe_ms).collect()),
                first_chunk_ms: median(rs.iter().map(|r| r.first_chunk_ms).collect()),
            },
        );
    }
    env.stop(server).await;
    out
}

// ------------------------------------------------------------------------------------------
// W3: memory

/// Bytes per retained completed task.
async fn w3_tasks_once(env: &Env, spec: &Spec) -> (f64, usize) {
    let tasks = if spec.kind == Kind::Python || spec.sqlite || spec.postgres {
        env.opts.tasks_slow.min(env.opts.tasks)
    } else {
        env.opts.tasks
    };
    let cap = (tasks * 2 + 10_000).to_string();
    let extra: Vec<&str> = if spec.kind == Kind::Ours && !spec.sqlite && !spec.postgres {
        vec!["--max-tasks", &cap]
    } else {
        vec![]
    };
    let server = env.start(spec, &extra).await;
    check_unary(env, &server)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", spec.key));
    // Warm-up: allocator arenas, buffers, connection state for 64 connections.
    let warm = (tasks / 50).max(1000).to_string();
    oha(env, &server, &["-n".into(), warm]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = rss(server.pid);
    let r = oha(env, &server, &["-n".into(), tasks.to_string()]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = rss(server.pid);
    if r.ok < tasks as u64 {
        eprintln!(
            "warning: {}: only {} of {} requests succeeded",
            spec.key, r.ok, tasks
        );
    }
    env.stop(server).await;
    (
        (after as f64 - before as f64) / r.ok.max(1) as f64,
        r.ok as usize,
    )
}

/// Bytes per open SSE stream.
async fn w3_streams_once(env: &Env, spec: &Spec) -> f64 {
    let server = env.start(spec, &[]).await;
    // The limit's first frame is its only one; the agents are ready once the skill's first
    // chunk arrived (the task is WORKING and its skill running).
    let marker = if spec.kind == Kind::Limit {
        None
    } else {
        Some("\"artifactUpdate\"")
    };
    // Warm-up: a few short streams, held and closed.
    let warm = hold_streams(env, &server.url, 20, 1, marker).await;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let before = rss(server.pid);
    let held = hold_streams(env, &server.url, env.opts.open_streams, 600, marker).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = rss(server.pid);
    let n = held.len();
    drop(held);
    env.stop(server).await;
    (after as f64 - before as f64) / n.max(1) as f64
}

type Held = Vec<Box<dyn futures::Stream<Item = ()> + Send + Unpin>>;

/// Open `n` streams of the `hold` skill (`secs` seconds), each read until `marker` (or its
/// first event); returns them, still open.
async fn hold_streams(
    env: &Env,
    url: &str,
    n: usize,
    secs: u64,
    marker: Option<&'static str>,
) -> Held {
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let body = stream_body(&env.message_id(), "hold", &secs.to_string()).to_string();
        let (client, url, gate) = (env.client.clone(), url.to_string(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await.expect("semaphore");
            let resp = post(&client, &url, body).await?;
            let mut events = resp.bytes_stream().eventsource();
            loop {
                match events.next().await {
                    Some(Ok(ev)) if marker.is_none_or(|m| ev.data.contains(m)) => break,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(e.to_string()),
                    None => return Err("the stream closed early".to_string()),
                }
            }
            Ok::<_, String>(
                Box::new(events.map(|_| ())) as Box<dyn futures::Stream<Item = ()> + Send + Unpin>
            )
        }));
    }
    let mut held = Vec::with_capacity(n);
    for t in tasks {
        match t.await.expect("join") {
            Ok(s) => held.push(s),
            Err(e) => eprintln!("warning: a held stream failed: {e}"),
        }
    }
    held
}

// ------------------------------------------------------------------------------------------
// Capture of the limit's canned bytes

/// Cross-replica latency: two replicas of the streaming agent on one PostgreSQL schema; paced
/// streams run on A (each chunk the time it was sent) and are followed on B with
/// SubscribeToTask; every chunk B's reader gets after it subscribed gives one latency (sent on
/// A to read on B, the append, the commit, the notification and B's read of the log included).
async fn xrep_once(env: &Env, spec: &Spec) -> Vec<f64> {
    let a = env.start(spec, &[]).await;
    let b = env.start(spec, &["--replica"]).await;
    let follow = |n: usize| {
        let (a, b) = (a.url.clone(), b.url.clone());
        async move {
            match follow_on_other_replica(env, &a, &b, n).await {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("cross-replica stream failed: {e}");
                    Vec::new()
                }
            }
        }
    };
    follow(20).await;
    let runs = (0..env.opts.xrep_streams).map(|_| follow(env.opts.xrep_events));
    let samples: Vec<f64> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    env.stop(a).await;
    env.stop(b).await;
    samples
}

async fn follow_on_other_replica(
    env: &Env,
    a: &str,
    b: &str,
    n: usize,
) -> Result<Vec<f64>, String> {
    let body = stream_body(&env.message_id(), "pace", &format!("{n} 10")).to_string();
    let mut on_a = post(&env.client, a, body)
        .await?
        .bytes_stream()
        .eventsource();
    let first = on_a
        .next()
        .await
        .ok_or("A's stream ended at once")?
        .map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&first.data).map_err(|e| e.to_string())?;
    let id = v["result"]["task"]["id"]
        .as_str()
        .ok_or_else(|| format!("no task first on A's stream: {}", first.data))?
        .to_string();
    let drain = tokio::spawn(async move { while on_a.next().await.is_some() {} });
    let sub =
        json!({"jsonrpc": "2.0", "id": "x", "method": "SubscribeToTask", "params": {"id": id}});
    let resp = post(&env.client, b, sub.to_string()).await?;
    let since = a2a_bench::unix_micros();
    let mut on_b = resp.bytes_stream().eventsource();
    let mut out = Vec::new();
    while let Some(ev) = on_b.next().await {
        let ev = ev.map_err(|e| e.to_string())?;
        let now = a2a_bench::unix_micros();
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| e.to_string())?;
        let Some(text) = v["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str()
        else {
            continue;
        };
        if let Ok(sent) = text.trim().parse::<u128>()
            && sent > since
        {
            out.push(now.saturating_sub(sent) as f64 / 1e3);
        }
    }
    let _ = drain.await;
    if out.len() < n / 2 {
        return Err(format!("only {} of {n} chunks seen on B", out.len()));
    }
    Ok(out)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

/// The limits' canned answers, from a2a-kit's: JSON-RPC, and gRPC when `grpc` (the gRPC
/// limit is measured).
async fn capture(env: &Env, grpc: bool) {
    let hello = env.start(&env.spec("hello"), &[]).await;
    let body = check_unary(env, &hello).await.expect("hello answers");
    std::fs::write(env.opts.work.join("unary-response.json"), &body).expect("write");

    let stream = env.start(&env.spec("stream"), &[]).await;
    if grpc {
        grpc::capture(env, &hello, &stream).await;
    }
    env.stop(hello).await;
    let resp = post(
        &env.client,
        &stream.url,
        stream_body("capture", "count", "3").to_string(),
    )
    .await
    .expect("stream");
    let mut events = resp.bytes_stream().eventsource();
    let mut data = Vec::new();
    while let Some(Ok(ev)) = events.next().await {
        data.push(ev.data);
    }
    env.stop(stream).await;
    // The second chunk: an appending one, as all but the first of N are.
    let chunk = data
        .iter()
        .filter(|d| d.contains("\"artifactUpdate\""))
        .nth(1)
        .expect("artifact chunks")
        .clone();
    let frames = format!("{}\n{}\n{}\n", data[0], chunk, data[data.len() - 1]);
    std::fs::write(env.opts.work.join("stream-frames.txt"), frames).expect("write");
}

// ------------------------------------------------------------------------------------------
// The OTLP sink (#33): where `hello-otel` exports its spans and metrics

/// What the OTLP sink received.
#[derive(Debug, Default)]
struct OtlpCounts {
    /// `POST /v1/traces` requests and their bytes.
    trace_exports: std::sync::atomic::AtomicU64,
    trace_bytes: std::sync::atomic::AtomicU64,
    /// The request spans (one per A2A request) in them: the protobuf strings `rpc.system.name`
    /// (an attribute only the request span has; the exports are not compressed).
    request_spans: std::sync::atomic::AtomicU64,
    /// `POST /v1/metrics` requests and their bytes.
    metric_exports: std::sync::atomic::AtomicU64,
    metric_bytes: std::sync::atomic::AtomicU64,
}

impl OtlpCounts {
    fn snapshot(&self) -> [u64; 5] {
        use std::sync::atomic::Ordering::Relaxed;
        [
            self.trace_exports.load(Relaxed),
            self.trace_bytes.load(Relaxed),
            self.request_spans.load(Relaxed),
            self.metric_exports.load(Relaxed),
            self.metric_bytes.load(Relaxed),
        ]
    }
}

/// An OTLP/HTTP receiver that keeps nothing: every export is answered 200 with an empty body
/// (an empty `Export{Trace,Metrics}ServiceResponse`, full success), after it is counted.
struct OtlpSink {
    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporters add
    /// `/v1/traces` and `/v1/metrics`).
    url: String,
    counts: Arc<OtlpCounts>,
}

impl OtlpSink {
    /// What arrived since `before` (a [`OtlpCounts::snapshot`]), for the log.
    fn since(&self, before: [u64; 5]) -> String {
        let now = self.counts.snapshot();
        let d: Vec<u64> = now.iter().zip(before).map(|(a, b)| a - b).collect();
        format!(
            "OTLP sink: {} trace exports ({} bytes, {} request spans), {} metric exports ({} bytes)",
            d[0],
            fmt_num(d[1] as f64),
            fmt_num(d[2] as f64),
            d[3],
            fmt_num(d[4] as f64)
        )
    }
}

async fn start_otlp_sink() -> OtlpSink {
    use axum::extract::{DefaultBodyLimit, State};
    use axum::serve::ListenerExt;
    use std::sync::atomic::Ordering::Relaxed;
    async fn traces(State(c): State<Arc<OtlpCounts>>, body: bytes::Bytes) {
        let needle = b"rpc.system.name";
        let spans = body.windows(needle.len()).filter(|w| w == needle).count();
        c.trace_exports.fetch_add(1, Relaxed);
        c.trace_bytes.fetch_add(body.len() as u64, Relaxed);
        c.request_spans.fetch_add(spans as u64, Relaxed);
    }
    async fn metrics(State(c): State<Arc<OtlpCounts>>, body: bytes::Bytes) {
        c.metric_exports.fetch_add(1, Relaxed);
        c.metric_bytes.fetch_add(body.len() as u64, Relaxed);
    }
    let counts = Arc::new(OtlpCounts::default());
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(traces))
        .route("/v1/metrics", axum::routing::post(metrics))
        .layer(DefaultBodyLimit::disable())
        .with_state(counts.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the OTLP sink");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    OtlpSink { url, counts }
}

// ------------------------------------------------------------------------------------------
// Token latency (`llm`): a fake OpenAI-compatible model in the driver, read through
// `bench-llm` and directly

/// The driver's clock for the token latency: every token the fake model sends is the number
/// of microseconds since this instant at which it was sent. One process, one clock: the fake
/// model and the client both run in this driver.
static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn epoch_micros() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// The text of an OpenAI message's `content`: a string, or an array of text parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// `POST /v1/chat/completions` of the fake model: the last user message says `N MS`; a
/// streamed request is answered with N text deltas one every MS milliseconds, each the time it
/// was sent ([`epoch_micros`]) and a space, framed as OpenAI's Chat Completions stream them
/// (a role chunk first; a finish chunk, a usage chunk and `[DONE]` last).
async fn fake_completion(body: bytes::Bytes) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or_default();
    let ask = req["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| content_text(&m["content"]))
        .unwrap_or_default();
    let mut it = ask.split_whitespace().map(|x| x.parse::<u64>().ok());
    let n = it.next().flatten().unwrap_or(10).min(100_000);
    let every = Duration::from_millis(it.next().flatten().unwrap_or(2).clamp(1, 1000));
    let base = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
                      "model": req["model"].as_str().unwrap_or("fake")});
    let frame = move |choices: Value, usage: Option<Value>| {
        let mut chunk = base.clone();
        chunk["choices"] = choices;
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        Ok::<_, std::convert::Infallible>(format!("data: {chunk}\n\n"))
    };
    let delta = |delta: Value| json!([{"index": 0, "delta": delta, "finish_reason": null}]);
    let stream = async_stream::stream! {
        yield frame(delta(json!({"role": "assistant", "content": ""})), None);
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        for _ in 0..n {
            tick.tick().await;
            let sent = epoch_micros();
            yield frame(delta(json!({"content": format!("{sent} ")})), None);
        }
        yield frame(json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]), None);
        let usage = json!({"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1});
        yield frame(json!([]), Some(usage));
        yield Ok("data: [DONE]\n\n".to_string());
    };
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(axum::body::Body::from_stream(stream))
        .expect("a response")
}

/// Start the fake model on 127.0.0.1 (TCP_NODELAY, as the servers): its base URL, with `/v1`.
async fn start_fake_model() -> (String, tokio::task::JoinHandle<()>) {
    use axum::serve::ListenerExt;
    let app =
        axum::Router::new().route("/v1/chat/completions", axum::routing::post(fake_completion));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fake model");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

/// One stream of the token latency workload.
#[derive(Debug, Clone, Default)]
struct TokenRun {
    /// One per token: the latency (ms) of the SSE frame that carried it, from the send of the
    /// frame's earliest token to its receipt.
    samples: Vec<f64>,
    /// Frames that carried tokens.
    frames: usize,
}

/// Read an SSE stream of tokens: `text_of` gives an event's token text (none for the events
/// that carry no token). Every frame's tokens count once each, with the frame's latency from
/// its earliest token: the user sees them when the frame arrives.
async fn read_tokens(
    resp: reqwest::Response,
    text_of: fn(&Value) -> Option<String>,
    n: usize,
) -> Result<TokenRun, String> {
    let mut events = sse_events(resp).await?;
    let mut run = TokenRun::default();
    while let Some(ev) = events.next().await {
        let ev = ev?;
        let now = epoch_micros();
        if ev.data == "[DONE]" {
            break;
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| format!("{e}: {}", ev.data))?;
        if v.get("error").is_some() {
            return Err(format!("error event: {}", ev.data));
        }
        let Some(text) = text_of(&v) else { continue };
        let sent: Vec<u64> = text
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        let Some(earliest) = sent.iter().min() else {
            continue;
        };
        let ms = now.saturating_sub(*earliest) as f64 / 1e3;
        run.frames += 1;
        run.samples.extend(std::iter::repeat_n(ms, sent.len()));
    }
    if run.samples.len() != n {
        return Err(format!("{} tokens instead of {n}", run.samples.len()));
    }
    Ok(run)
}

/// The tokens of an A2A stream event: an artifact update's text parts.
fn a2a_tokens(v: &Value) -> Option<String> {
    let parts = v["result"]["artifactUpdate"]["artifact"]["parts"].as_array()?;
    Some(parts.iter().filter_map(|p| p["text"].as_str()).collect())
}

/// The tokens of an OpenAI chunk: its text delta.
fn openai_tokens(v: &Value) -> Option<String> {
    v["choices"][0]["delta"]["content"]
        .as_str()
        .map(str::to_string)
}

/// `n` tokens, `every` ms apart, through the agent (`SendStreamingMessage`) or, with no
/// agent, from the fake model itself; the same client either way.
async fn token_stream(
    env: &Env,
    model: &str,
    agent: Option<&str>,
    n: usize,
    every: u64,
) -> Result<TokenRun, String> {
    let ask = format!("{n} {every}");
    let resp = match agent {
        Some(url) => {
            post(
                &env.client,
                url,
                stream_body(&env.message_id(), "write", &ask).to_string(),
            )
            .await?
        }
        None => {
            let body = json!({"model": "fake", "stream": true,
                              "messages": [{"role": "user", "content": ask}]});
            post(
                &env.client,
                &format!("{model}/chat/completions"),
                body.to_string(),
            )
            .await?
        }
    };
    let text_of = if agent.is_some() {
        a2a_tokens
    } else {
        openai_tokens
    };
    match tokio::time::timeout(
        Duration::from_secs(60) + Duration::from_millis(every * n as u64 * 3),
        read_tokens(resp, text_of, n),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => Err("the stream did not end in time".into()),
    }
}

/// One run of the token latency workload: a fresh `bench-llm` on the fake model; one
/// warm-up stream each way, then one measured stream through the agent and one direct.
async fn llm_once(env: &Env, spec: &Spec, model: &str) -> (TokenRun, TokenRun) {
    let server = env.start(spec, &["--model-url", model]).await;
    let (n, every) = (env.opts.llm_tokens, env.opts.llm_every_ms);
    let fail = |what: &str, e: String| -> ! { panic!("{} {what}: {e}", spec.key) };
    let warm = (n / 20).max(20);
    if let Err(e) = token_stream(env, model, Some(&server.url), warm, every).await {
        fail("warm-up", e);
    }
    if let Err(e) = token_stream(env, model, None, warm, every).await {
        fail("direct warm-up", e);
    }
    let ours = token_stream(env, model, Some(&server.url), n, every)
        .await
        .unwrap_or_else(|e| fail("stream", e));
    let direct = token_stream(env, model, None, n, every)
        .await
        .unwrap_or_else(|e| fail("direct stream", e));
    env.stop(server).await;
    (ours, direct)
}

// ------------------------------------------------------------------------------------------
// Statistics and report

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn sh(cmd: &str) -> String {
    std::process::Command::new("sh")
        .args(["-c", cmd])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn fmt_num(x: f64) -> String {
    if x.is_nan() {
        return "n/a".into();
    }
    let s = format!("{:.0}", x);
    let (neg, digits) = s
        .strip_prefix('-')
        .map_or((false, s.as_str()), |d| (true, d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if neg { format!("-{out}") } else { out }
}

fn fmt_ms(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x < 10.0 {
        format!("{x:.2} ms")
    } else {
        format!("{x:.1} ms")
    }
}

/// Milliseconds to the microsecond, for sub-millisecond latencies.
fn fmt_fine_ms(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x.abs() < 10.0 {
        format!("{x:.3} ms")
    } else {
        fmt_ms(x)
    }
}

/// `a` against `b`, as a signed percentage to a tenth.
fn signed_pct(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        "n/a".into()
    } else {
        format!("{:+.1}%", 100.0 * (a / b - 1.0))
    }
}

fn ratio(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        "n/a".into()
    } else if a / b >= 10.0 {
        format!("{:.0}x", a / b)
    } else {
        format!("{:.2}x", a / b)
    }
}

fn pct(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        "n/a".into()
    } else {
        format!("{:.0}%", 100.0 * a / b)
    }
}

fn bytes(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x.abs() >= 1024.0 {
        format!("{} B ({:.2} KiB)", fmt_num(x), x / 1024.0)
    } else {
        format!("{} B", fmt_num(x))
    }
}

#[derive(Default)]
struct Results {
    w1: BTreeMap<&'static str, Vec<OhaResult>>,
    /// Cross-replica latencies (ms), every sample of a run.
    xrep: Vec<Vec<f64>>,
    w2: BTreeMap<&'static str, Vec<BTreeMap<usize, StreamResult>>>,
    w3_tasks: BTreeMap<&'static str, Vec<f64>>,
    w3_task_counts: BTreeMap<&'static str, usize>,
    w3_streams: BTreeMap<&'static str, Vec<f64>>,
    instr: BTreeMap<&'static str, Vec<f64>>,
    /// The abuse workload: normal clients alone, then beside the abusive ones.
    abuse: Option<(AbuseResult, AbuseResult)>,
    /// The fair share workload.
    fair: Option<fair::FairResults>,
    /// Token latency, per run: through the agent, and direct.
    llm: Vec<(TokenRun, TokenRun)>,
}

struct Machine {
    date: String,
    cpus: String,
    model: String,
    memory: String,
    kernel: String,
    rustc: String,
    oha: String,
    python: String,
    load_start: String,
}

fn machine(opts: &Opts) -> Machine {
    let mem_kb: f64 = sh("awk '/MemTotal/ {print $2}' /proc/meminfo")
        .parse()
        .unwrap_or(0.0);
    Machine {
        date: sh("date -u '+%Y-%m-%d %H:%M UTC'"),
        cpus: sh("nproc --all"),
        model: sh("lscpu | sed -n 's/^Model name: *//p' | head -1"),
        memory: format!("{:.1} GiB", mem_kb / 1024.0 / 1024.0),
        kernel: sh("uname -sr"),
        rustc: sh("rustc -V"),
        oha: sh(&format!("'{}' --version", opts.oha.display())),
        python: sh(&format!(
            "'{}' -c 'import sys, importlib.metadata as m; print(sys.version.split()[0], \"| a2a-sdk\", m.version(\"a2a-sdk\"), \"| uvicorn\", m.version(\"uvicorn\"), \"| uvloop\", m.version(\"uvloop\"), \"| httptools\", m.version(\"httptools\"))'",
            opts.python.display()
        )),
        load_start: sh("cut -d' ' -f1-3 /proc/loadavg"),
    }
}

fn report(
    env: &Env,
    m: &Machine,
    res: &Results,
    specs: &BTreeMap<&'static str, Spec>,
    elapsed: Duration,
) -> String {
    use std::fmt::Write;
    let o = &env.opts;
    let mut s = String::new();
    let label = |k: &str| specs.get(k).map(|s| s.label).unwrap_or("?");
    let w1 = |k: &str, f: fn(&OhaResult) -> f64| {
        res.w1
            .get(k)
            .map(|v| median(v.iter().map(f).collect()))
            .unwrap_or(f64::NAN)
    };
    let w2 = |k: &str, n: usize, f: fn(&StreamResult) -> f64| {
        res.w2
            .get(k)
            .map(|v| median(v.iter().filter_map(|r| r.get(&n)).map(f).collect()))
            .unwrap_or(f64::NAN)
    };
    let med = |map: &BTreeMap<&'static str, Vec<f64>>, k: &str| {
        map.get(k).map(|v| median(v.clone())).unwrap_or(f64::NAN)
    };

    let _ = writeln!(s, "# Benchmarks\n");
    let _ = writeln!(
        s,
        "Generated by `{}` on {} ({} runs of W1 and {} of every other scenario, medians; {:.0} \
         minutes). Do not edit by hand: rerun the command.\n",
        o.command,
        m.date,
        o.w1_runs.max(o.runs),
        o.runs,
        elapsed.as_secs_f64() / 60.0
    );
    let _ = writeln!(s, "## The command\n");
    let _ = writeln!(
        s,
        "```sh\nbash bench/run.sh            # full run (about 20-30 minutes), writes BENCHMARKS.md\n\
         bash bench/run.sh --quick    # a short smoke run (1 run, short durations) to check the harness\n\
         ```\n\n\
         It installs its own tools (`oha` with `cargo install --locked` into `target/bench-tools/`, a \
         virtualenv `target/bench-venv/` with the pinned `a2a-sdk[http-server]==1.3.0`, `uvicorn`, \
         `uvloop` and `httptools`), builds every Rust server, the limit included, with the \
         workspace's `production` profile (release, fat LTO, one codegen unit: how an agent is \
         deployed), runs every workload on 127.0.0.1, and rewrites this file. Extra arguments go \
         to the driver (`target/production/bench-driver --help`). It is not part of `cargo test` \
         or `.ci/run`.\n"
    );

    let _ = writeln!(s, "## Machine\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| date | {} |", m.date);
    let _ = writeln!(s, "| CPU | {} x {} |", m.cpus, m.model);
    let _ = writeln!(s, "| memory | {} |", m.memory);
    let _ = writeln!(s, "| kernel | {} |", m.kernel);
    let _ = writeln!(s, "| rustc | {} |", m.rustc);
    let _ = writeln!(s, "| load generator | {} |", m.oha);
    let _ = writeln!(s, "| Python | {} |", m.python);
    let _ = writeln!(
        s,
        "| load average (1, 5, 15 min) | {} at the start, {} at the end |\n",
        m.load_start,
        sh("cut -d' ' -f1-3 /proc/loadavg")
    );

    let _ = writeln!(s, "## Method\n");
    let pin = if o.server_cpu.is_empty() {
        "Nothing was pinned (fewer than 2 CPUs): server and client shared the CPU.".to_string()
    } else {
        format!(
            "On this {}-CPU machine every server runs under `taskset -c {}` and every client (the \
             driver, `oha`, the SSE client) under `taskset -c 1`, so the load generator never takes \
             CPU time from the server it measures. Tokio sizes its worker pool from the CPUs a \
             process may use, so each Rust server runs one worker thread (SQLite's blocking \
             threads share that CPU too), and uvicorn runs one process with one event loop, so \
             every server gets exactly one core. The kernel's loopback TCP work runs on the CPU \
             of whichever side sends, so it is split between the two.",
            m.cpus, o.server_cpu
        )
    };
    let _ = writeln!(s, "{pin}\n");
    let _ = writeln!(
        s,
        "{}\n",
        if cfg!(feature = "mimalloc") {
            "Every Rust server (ours, the hand-written agent and the limit) is built with mimalloc \
             as its global allocator (the `a2a-bench` feature `mimalloc`, on by default), so the \
             allocator is the same on both sides of every ratio."
        } else {
            "Every Rust server (ours, the hand-written agent and the limit) runs on the system \
             allocator (built without the `a2a-bench` feature `mimalloc`)."
        }
    );
    let _ = writeln!(
        s,
        "Servers (each started fresh for every measurement; the servers of one run are interleaved, \
         so slow drift of the machine hits all of them alike):\n\n\
         * **ours**: `bench-hello`, the macro `hello` agent of `examples/src/hello.rs` behind \
           `a2a_kit_axum::serve_service`, with the default in-memory store (bounded at 100,000 \
           tasks) or `--store sqlite:PATH` (`a2a_kit::store::SqliteTaskManager`); \
           or `--store postgres://…` (`PostgresTaskManager`, the database on the same machine, \
           unpinned); \
           `bench-hello-manual`, the same agent written by hand against the `Agent` trait; \
           `bench-stream`, a `count` skill streaming N chunks (the one of `examples/src/streaming.rs`) \
           and a `hold` skill that keeps its stream open (and `ask`, `sleep` and `chat` for the \
           abusive clients);\n\
         * **limit**: `bench-limit`, a bare axum handler on the same axum/hyper/tokio stack and \
           socket options, with no A2A logic: it parses the JSON-RPC body into a `serde_json::Value` \
           and answers with the bytes a2a-kit answered the same request with (captured at the start \
           of the run), or an SSE stream of N copies of a captured a2a-kit chunk frame;\n\
         * **gRPC** (the `a2a-bench` feature `grpc`, a2a-kit's gRPC binding): `bench-hello` and \
           `bench-stream` serve `lf.a2a.v1.A2AService` on the same port (h2c, the kit's accept \
           loop, dispatched by `Content-Type: application/grpc`); **gRPC limit**: \
           `bench-grpc-limit`, a bare tonic handler of the same proto (the generated \
           `A2aService` trait) served by tonic's own `transport::Server` (the same hyper/h2 \
           stack, TCP_NODELAY, one worker), with no A2A logic: tonic decodes each request and \
           encodes a clone of a message a2a-kit sent (the W1 answer, or the first event, N \
           copies of an artifact chunk and the last event of a `count` stream, captured over \
           gRPC at the start of the run);\n\
         * **python**: `bench/python/echo_agent.py`, the same agent on the official Python SDK \
           (`DefaultRequestHandler`, `InMemoryTaskStore`, or `DatabaseTaskStore` on the same \
           PostgreSQL database for the `python-postgres` row) under uvicorn with uvloop and \
           httptools, one process.\n"
    );
    let _ = writeln!(
        s,
        "Workloads:\n\n\
         * **W1 unary**: `oha` with {c} concurrent keep-alive connections sends JSON-RPC \
           `SendMessage` (blocking, a {t}-byte text part, {b} bytes of body) for {w} s of warm-up, then \
           {d} s measured: requests/s, p50 and p99 latency. The servers take turns in an order \
           that rotates from run to run, so none is always measured first, and one unmeasured \
           pass of the limit comes before the first (the first pass after the build is slower, \
           whichever server it measures).\n\
         * **W2 streaming**: `SendStreamingMessage` to the `count` skill, read by an SSE client \
           (reqwest + eventsource-stream, one connection): artifact events/s = chunks / (request sent \
           to stream end), time to first event (request sent to the first SSE event, the Task), for \
           {ch} chunks; {sp} streams per run after one warm-up stream, their median.\n\
         * **W1 and W2 over gRPC**: the driver's own load generator, tonic's generated client \
           on hyper's HTTP/2 client connections (oha does not speak gRPC; a tonic `Channel` \
           adds a queue and a task per call that made the one-core client the bottleneck): the \
           same `SendMessage` as protobuf, {c} calls in flight spread over {gc} HTTP/2 \
           connections (as a client with a few channels, or a few clients, would), each slot \
           sending its next call when the last is answered, with the same warm-up and measured seconds and the same rotation; W2's \
           `SendStreamingMessage` on one connection, counted as over SSE. A call counts when \
           it is answered with the task COMPLETED.\n\
         * **W3 memory**: VmRSS of the server process from `/proc/PID/status` before and after \
           creating {tasks} completed tasks ({slow} on the Python and SQLite servers, which serve a \
           few hundred requests/s: the figure is a slope, the same at any count) (blocking `SendMessage`, the W1 request, sent by `oha -n`, \
           after a warm-up of 2% of that; the in-memory store's capacity is raised so every one is \
           retained), and before and after opening {st} SSE streams to the `hold` skill (each read \
           until its first chunk, so every task is WORKING and its skill running); the difference \
           divided by the count. Python's `InMemoryTaskStore` is unbounded.\n",
        c = o.connections,
        t = TEXT_100.len(),
        b = unary_body().len(),
        w = o.warmup,
        d = o.duration,
        gc = o.grpc_channels,
        ch = o
            .chunks
            .iter()
            .map(|n| fmt_num(*n as f64))
            .collect::<Vec<_>>()
            .join(" and "),
        sp = o.streams_per_run,
        tasks = fmt_num(o.tasks as f64),
        slow = fmt_num(o.tasks_slow.min(o.tasks) as f64),
        st = fmt_num(o.open_streams as f64),
    );

    let lim_rps = w1("limit", |r| r.rps);
    let py_rps = w1("python", |r| r.rps);
    if !res.w1.is_empty() {
        let _ = writeln!(s, "## W1: unary SendMessage\n");
        let _ = writeln!(
            s,
            "| server | requests/s | p50 | p99 | ours/limit | ours/python |\n|---|---:|---:|---:|---:|---:|"
        );
        for k in [
            "hello",
            "hello-manual",
            "hello-sqlite",
            "hello-postgres",
            "limit",
            "python",
            "python-postgres",
            "hello-v03",
            "hello-otel",
            "hello-grpc",
            "grpc-limit",
        ] {
            if !res.w1.contains_key(k) {
                continue;
            }
            let rps = w1(k, |r| r.rps);
            let ours = specs[k].kind == Kind::Ours;
            // Over gRPC: against the gRPC limit; the Python SDK is not served over gRPC here.
            let (lim_rps, py_rps) = if specs[k].grpc {
                (w1("grpc-limit", |r| r.rps), f64::NAN)
            } else {
                (lim_rps, py_rps)
            };
            // A durable store is compared with the Python SDK on the same database.
            let py_rps = if k == "hello-postgres" && res.w1.contains_key("python-postgres") {
                w1("python-postgres", |r| r.rps)
            } else {
                py_rps
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                label(k),
                fmt_num(rps),
                fmt_ms(w1(k, |r| r.p50_ms)),
                fmt_ms(w1(k, |r| r.p99_ms)),
                if ours { pct(rps, lim_rps) } else { "".into() },
                if ours && !py_rps.is_nan() {
                    ratio(rps, py_rps)
                } else {
                    "".into()
                },
            );
        }
        if res.w1.contains_key("hello-grpc") || res.w1.contains_key("grpc-limit") {
            let _ = writeln!(
                s,
                "\nOver gRPC, ours/limit is against the gRPC limit (`bench-grpc-limit`). The \
                 server's CPU over the measured seconds (median, % of its one core): {}.",
                ["hello", "limit", "hello-grpc", "grpc-limit"]
                    .iter()
                    .filter(|k| res.w1.contains_key(**k))
                    .map(|k| format!("{k} {:.0}%", w1(k, |r| r.server_cpu)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if res.w1.contains_key("hello") && res.w1.contains_key("hello-otel") {
            let _ = writeln!(
                s,
                "\nOTLP export on (#33, `bench-hello-otel`, below): {} of the macro hello's requests/s.",
                pct(w1("hello-otel", |r| r.rps), w1("hello", |r| r.rps))
            );
        }
        if res.w1.contains_key("hello") && res.w1.contains_key("hello-manual") {
            let _ = writeln!(
                s,
                "\nMacro-generated vs hand-written hello (#3): {} of the hand-written agent's requests/s.",
                pct(w1("hello", |r| r.rps), w1("hello-manual", |r| r.rps))
            );
        }
        let errors: Vec<String> = res
            .w1
            .iter()
            .filter(|(_, v)| v.iter().any(|r| r.other > 0))
            .map(|(k, v)| format!("{k}: {}", v.iter().map(|r| r.other).sum::<u64>()))
            .collect();
        if !errors.is_empty() {
            let _ = writeln!(s, "\nNon-200 responses: {}.", errors.join(", "));
        }
        let _ = writeln!(s);
    }

    if !res.instr.is_empty() {
        let _ = writeln!(s, "## W1 in instructions (callgrind)\n");
        let _ = writeln!(
            s,
            "Instructions the server executes per W1 request ({} requests on the W1 \
             connections after as many for warm-up, counted by `valgrind --tool=callgrind`, user space only). \
             Nearly independent of other load on the machine, so this is the figure that \
             compares the macro agent with the hand-written one.\n",
            fmt_num(INSTR_REQUESTS as f64)
        );
        let _ = writeln!(
            s,
            "| server | instructions/request | limit/ours |\n|---|---:|---:|"
        );
        for k in [
            "hello",
            "hello-manual",
            "hello-apikey",
            "hello-llm",
            "hello-v03",
            "hello-otel",
            "limit",
            "hello-grpc",
            "grpc-limit",
        ] {
            if !res.instr.contains_key(k) {
                continue;
            }
            let lim = med(
                &res.instr,
                if specs[k].grpc { "grpc-limit" } else { "limit" },
            );
            let i = med(&res.instr, k);
            let _ = writeln!(s, "| {} | {} | {} |", label(k), fmt_num(i), pct(lim, i));
        }
        if res.instr.contains_key("hello-llm") {
            let _ = writeln!(
                s,
                "\nllm feature compiled in: `bench-hello-llm` is `bench-hello` built with the \
                 `a2a-bench` feature `llm` (a2a-kit's `llm`: rig-core, which turns on serde_json's \
                 `preserve_order` for the whole binary), the same agent, no model used: {} \
                 instructions/request against the macro hello built without it.",
                signed_pct(med(&res.instr, "hello-llm"), med(&res.instr, "hello"))
            );
        }
        if res.instr.contains_key("hello-otel") {
            let _ = writeln!(
                s,
                "\nOTLP export on (#33): `bench-hello-otel` is the macro hello built with the \
                 `a2a-bench` feature `otel`, which at start-up builds \
                 `a2a_kit::observe::otel::Otel::from_env()` and installs its `tracing` layer (the \
                 subscriber's only one: every span at `info`, the kit's events at `debug`) and its \
                 `metrics` recorder before the agent is built; it exports over OTLP/HTTP \
                 (`http/protobuf`, the SDK's defaults: spans in batches of up to 512, at least \
                 every 5 s; metrics every 60 s) to a sink in the driver that answers every export \
                 200: {} instructions/request against the macro hello with no subscriber.",
                signed_pct(med(&res.instr, "hello-otel"), med(&res.instr, "hello"))
            );
        }
        if res.instr.contains_key("hello-grpc") || res.instr.contains_key("grpc-limit") {
            let _ = writeln!(
                s,
                "\nOver gRPC: the W1 call with {c} in flight on {ch} HTTP/2 connections, the \
                 same counts; limit/ours against the gRPC limit.",
                c = o.connections,
                ch = o.grpc_channels,
            );
        }
        let _ = writeln!(s);
    }

    if !res.w2.is_empty() {
        let _ = writeln!(
            s,
            "## W2: streaming (SendStreamingMessage of the `count` skill)\n"
        );
        let mut head = String::from("| server |");
        let mut line = String::from("|---|");
        for n in &o.chunks {
            let _ = write!(
                head,
                " {} chunks: events/s | first event | ours/limit | ours/python |",
                fmt_num(*n as f64)
            );
            line.push_str("---:|---:|---:|---:|");
        }
        let _ = writeln!(s, "{head}\n{line}");
        for k in [
            "stream",
            "stream-sqlite",
            "limit",
            "python",
            "stream-grpc",
            "grpc-limit",
        ] {
            if !res.w2.contains_key(k) {
                continue;
            }
            let ours = specs[k].kind == Kind::Ours;
            let grpc = specs[k].grpc;
            let mut row = format!("| {} |", label(k));
            for &n in &o.chunks {
                let eps = w2(k, n, |r| r.events_per_s);
                let lim = if grpc { "grpc-limit" } else { "limit" };
                let _ = write!(
                    row,
                    " {} | {} | {} | {} |",
                    fmt_num(eps),
                    fmt_ms(w2(k, n, |r| r.ttfe_ms)),
                    if ours {
                        pct(eps, w2(lim, n, |r| r.events_per_s))
                    } else {
                        "".into()
                    },
                    if ours && !grpc {
                        ratio(eps, w2("python", n, |r| r.events_per_s))
                    } else {
                        "".into()
                    },
                );
            }
            let _ = writeln!(s, "{row}");
        }
        let _ = writeln!(s, "\nTime to the first artifact chunk (median): {}.\n", {
            let mut parts = Vec::new();
            for k in [
                "stream",
                "stream-sqlite",
                "limit",
                "python",
                "stream-grpc",
                "grpc-limit",
            ] {
                if res.w2.contains_key(k) {
                    let n = o.chunks[0];
                    parts.push(format!("{k} {}", fmt_ms(w2(k, n, |r| r.first_chunk_ms))));
                }
            }
            parts.join(", ")
        });
        if res.w2.contains_key("stream-grpc") || res.w2.contains_key("grpc-limit") {
            let _ = writeln!(
                s,
                "Over gRPC (tonic's client, one HTTP/2 connection): events/s and the first event \
                 (the first message, the Task) as over SSE; ours/limit against the gRPC limit.\n"
            );
        }
    }

    if !res.w3_tasks.is_empty() || !res.w3_streams.is_empty() {
        let _ = writeln!(s, "## W3: memory (VmRSS growth)\n");
        let _ = writeln!(
            s,
            "| server | per retained completed task | ours/python | per open SSE stream | ours/python |\n|---|---:|---:|---:|---:|"
        );
        let rows: [(&str, Option<&str>); 5] = [
            ("hello", Some("stream")),
            ("hello-sqlite", None),
            ("stream", None),
            ("limit", Some("limit")),
            ("python", Some("python")),
        ];
        let py_t = med(&res.w3_tasks, "python");
        let py_s = med(&res.w3_streams, "python");
        for (tk, sk) in rows {
            if tk == "stream" {
                continue;
            }
            let t = med(&res.w3_tasks, tk);
            let st = sk.map(|k| med(&res.w3_streams, k)).unwrap_or(f64::NAN);
            if t.is_nan() && st.is_nan() {
                continue;
            }
            let name = match tk {
                "hello" => {
                    "ours: in-memory store (hello tasks; `hold` streams of the streaming agent)"
                }
                other => label(other),
            };
            let ours = specs.get(tk).is_some_and(|s| s.kind == Kind::Ours);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                name,
                bytes(t),
                if ours { ratio(t, py_t) } else { "".into() },
                bytes(st),
                if ours && sk.is_some() {
                    ratio(st, py_s)
                } else {
                    "".into()
                },
            );
        }
        let _ = writeln!(
            s,
            "\nThe SQLite store keeps tasks in its file, not in the process: its row shows what stays \
             in memory (SQLite's page cache is bounded). The limit retains nothing; its figure is \
             the noise floor.\n"
        );
    }

    let xrep: Vec<f64> = res.xrep.iter().flatten().copied().collect();
    if !xrep.is_empty() {
        let _ = writeln!(s, "## Cross-replica latency (PostgreSQL)\n");
        let _ = writeln!(
            s,
            "Two replicas of `bench-stream` on one PostgreSQL schema (both on CPU {cpu}, the \
             database unpinned). {streams} streams at once on replica A, each {events} chunks of the \
             `pace` skill 10 ms apart, each chunk carrying the time A's skill sent it; each is \
             followed on replica B with `SubscribeToTask`, and every chunk B's reader receives after \
             it subscribed gives one latency: sent on A, appended and committed, announced by \
             `NOTIFY`, read from the log by B, framed as SSE, received by the client.\n",
            cpu = if o.server_cpu.is_empty() {
                "any"
            } else {
                &o.server_cpu
            },
            streams = o.xrep_streams,
            events = o.xrep_events,
        );
        let _ = writeln!(
            s,
            "| events | p50 | p90 | p99 | max |\n|---:|---:|---:|---:|---:|"
        );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |\n",
            fmt_num(xrep.len() as f64),
            fmt_ms(percentile(xrep.clone(), 0.5)),
            fmt_ms(percentile(xrep.clone(), 0.9)),
            fmt_ms(percentile(xrep.clone(), 0.99)),
            fmt_ms(percentile(xrep.clone(), 1.0)),
        );
    }

    let pooled = |ours: bool| -> Vec<f64> {
        res.llm
            .iter()
            .flat_map(|(o, d)| if ours { o } else { d }.samples.iter().copied())
            .collect()
    };
    let (tok_ours, tok_direct) = (pooled(true), pooled(false));
    if !res.llm.is_empty() {
        let _ = writeln!(
            s,
            "## Model token → client SSE frame (llm feature, in memory)\n"
        );
        let _ = writeln!(
            s,
            "`bench-llm` (on CPU {cpu}; built with the `a2a-bench` feature `llm`): an agent whose \
             default skill is `model.run(&ctx).await` with `Model::openai_compatible`, the \
             in-memory store. Its model is a fake OpenAI-compatible server inside the driver (on \
             CPU 1, 127.0.0.1) that streams {n} text deltas, one every {every} ms, each the time it \
             was sent on the driver's clock. The driver sends `SendStreamingMessage` and reads the \
             SSE stream with the W2 client; every token counts once, with the latency of the \
             `artifactUpdate` frame that carried it: received minus the send time of the frame's \
             earliest token (a frame may carry several tokens: the user sees them when it \
             arrives). **Direct**: the same client reads the fake model's own stream, no agent \
             between. **Added by the kit**: ours minus direct, percentile by percentile (the \
             agent's second loopback hop, rig's SSE parse, the task's event path and SSE framing). \
             {runs} runs, each on a fresh server after one short warm-up stream each way; the \
             tokens of all runs pooled.\n",
            cpu = if o.server_cpu.is_empty() {
                "any"
            } else {
                &o.server_cpu
            },
            n = fmt_num(o.llm_tokens as f64),
            every = o.llm_every_ms,
            runs = res.llm.len(),
        );
        let _ = writeln!(
            s,
            "| path | tokens | frames | p50 | p99 | max |\n|---|---:|---:|---:|---:|---:|"
        );
        let frames = |ours: bool| -> usize {
            res.llm
                .iter()
                .map(|(o, d)| if ours { o } else { d }.frames)
                .sum()
        };
        for (name, ours, v) in [
            (label("llm"), true, &tok_ours),
            (
                "direct: the fake model's stream, the same client",
                false,
                &tok_direct,
            ),
        ] {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} |",
                fmt_num(v.len() as f64),
                fmt_num(frames(ours) as f64),
                fmt_fine_ms(percentile(v.clone(), 0.5)),
                fmt_fine_ms(percentile(v.clone(), 0.99)),
                fmt_fine_ms(percentile(v.clone(), 1.0)),
            );
        }
        let added = |p: f64| percentile(tok_ours.clone(), p) - percentile(tok_direct.clone(), p);
        let _ = writeln!(
            s,
            "| added by the kit (ours − direct) | | | {} | {} | {} |\n",
            fmt_fine_ms(added(0.5)),
            fmt_fine_ms(added(0.99)),
            fmt_fine_ms(added(1.0)),
        );
    }

    if let Some((alone, beside)) = &res.abuse {
        let _ = writeln!(s, "## Abusive clients (#18)\n");
        let _ = writeln!(
            s,
            "`bench-stream` (on CPU {cpu}, `--rate-limit {limit}`: requests a second per client \
             address) for {secs} s, twice: {normal} normal clients alone, each from its own \
             loopback address and sending {rate} blocking SendMessage a second (`count` of one \
             chunk), then the same beside {slow} slowloris connections (headers trickled a line a \
             second from 127.0.0.3, reconnecting when closed) and {flood} connections flooding \
             the agent from 127.0.0.2 with SendMessage to a skill that asks a question (each a \
             task left waiting for a reply), as fast as they are answered: 64 connections. \
             A normal request succeeds when it is answered 200 with its task COMPLETED.\n",
            cpu = if o.server_cpu.is_empty() {
                "any"
            } else {
                &o.server_cpu
            },
            limit = ABUSE_RATE_LIMIT,
            secs = o.abuse_seconds,
            normal = ABUSE_NORMAL_CLIENTS,
            rate = ABUSE_NORMAL_RATE,
            slow = ABUSE_SLOW_CLIENTS,
            flood = ABUSE_FLOOD_CLIENTS,
        );
        let _ = writeln!(
            s,
            "| run | normal requests | succeeded | p50 | p99 | server RSS at the end |\n|---|---:|---:|---:|---:|---:|"
        );
        for (name, r) in [
            ("normal clients alone", alone),
            ("beside the abusive ones", beside),
        ] {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {:.0} MB |",
                fmt_num(r.normal_total as f64),
                pct(r.normal_ok as f64, r.normal_total as f64),
                fmt_ms(r.p50_ms),
                fmt_ms(r.p99_ms),
                r.rss_mb
            );
        }
        let flood: Vec<String> = beside
            .flood
            .iter()
            .map(|(status, n)| {
                let what = if *status == 0 {
                    "no answer".to_string()
                } else {
                    format!("HTTP {status}")
                };
                format!("{} {what}", fmt_num(*n as f64))
            })
            .collect();
        let _ = writeln!(
            s,
            "\nThe flood got {}; {} of its tasks were left waiting for a reply. The server closed \
             {} slowloris connections (each at the header timeout).\n",
            flood.join(", "),
            fmt_num(beside.flood_waiting as f64),
            fmt_num(beside.slow_closed as f64),
        );
    }

    if let Some(fair) = &res.fair {
        fair::section(&mut s, o, fair);
    }

    // Targets.
    let _ = writeln!(
        s,
        "## Targets (#9, #3, #17, #18, #19, #29, #31, #32, #33)\n"
    );
    let _ = writeln!(s, "| target | measured | met |\n|---|---:|:---:|");
    let yes = |b: bool| if b { "yes" } else { "**no**" };
    let hello = w1("hello", |r| r.rps);
    if !hello.is_nan() {
        let r_lim = hello / lim_rps;
        let r_py = hello / py_rps;
        let _ = writeln!(
            s,
            "| W1 ours >= 60% of the limit | {} | {} |",
            pct(hello, lim_rps),
            yes(r_lim >= 0.6)
        );
        if !py_rps.is_nan() {
            let _ = writeln!(
                s,
                "| W1 ours >= 20x the Python SDK | {} | {} |",
                ratio(hello, py_rps),
                yes(r_py >= 20.0)
            );
        }
        let manual = w1("hello-manual", |r| r.rps);
        if !manual.is_nan() {
            let d = hello / manual - 1.0;
            let _ = writeln!(
                s,
                "| macro hello within 3% of the hand-written one | {:+.1}% | {} |",
                100.0 * d,
                yes(d.abs() <= 0.03)
            );
        }
    }
    let ki = med(&res.instr, "hello-apikey");
    let (mi, hi) = (med(&res.instr, "hello"), med(&res.instr, "hello-manual"));
    if !mi.is_nan() && !ki.is_nan() {
        let d = ki / mi - 1.0;
        let _ = writeln!(
            s,
            "| W1 with API-key authentication within 5% of W1 without, in instructions/request | {:+.1}% | {} |",
            100.0 * d,
            yes(d <= 0.05)
        );
    }
    let li = med(&res.instr, "hello-llm");
    if !mi.is_nan() && !li.is_nan() {
        let d = li / mi - 1.0;
        let _ = writeln!(
            s,
            "| W1 with the llm feature compiled in (unused) within 1% of W1 without, in instructions/request | {:+.1}% | {} |",
            100.0 * d,
            yes(d.abs() <= 0.01)
        );
    }
    let oi = med(&res.instr, "hello-otel");
    if !mi.is_nan() && !oi.is_nan() {
        let (o_rps, rps) = (w1("hello-otel", |r| r.rps), w1("hello", |r| r.rps));
        let _ = writeln!(
            s,
            "| W1 with OTLP export on (spans and metrics), cost stated (#33) | {} instructions/request{} | yes |",
            signed_pct(oi, mi),
            if o_rps.is_nan() || rps.is_nan() {
                String::new()
            } else {
                format!("; {} requests/s", signed_pct(o_rps, rps))
            }
        );
    }
    if !mi.is_nan() && !hi.is_nan() {
        let d = mi / hi - 1.0;
        let _ = writeln!(
            s,
            "| macro hello within 3% of the hand-written one, in instructions/request | {:+.1}% | {} |",
            100.0 * d,
            yes(d.abs() <= 0.03)
        );
    }
    let (g_rps, g_lim) = (w1("hello-grpc", |r| r.rps), w1("grpc-limit", |r| r.rps));
    if !g_rps.is_nan() && !g_lim.is_nan() {
        let _ = writeln!(
            s,
            "| W1 over gRPC ours >= 60% of the gRPC limit, requests/s | {} | {} |",
            pct(g_rps, g_lim),
            yes(g_rps / g_lim >= 0.6)
        );
    }
    let (g_i, g_lim_i) = (med(&res.instr, "hello-grpc"), med(&res.instr, "grpc-limit"));
    if !g_i.is_nan() && !g_lim_i.is_nan() {
        let _ = writeln!(
            s,
            "| W1 over gRPC ours >= 60% of the gRPC limit, in instructions/request (limit/ours) | {} | {} |",
            pct(g_lim_i, g_i),
            yes(g_lim_i / g_i >= 0.6)
        );
    }
    let t = med(&res.w3_tasks, "hello");
    if !t.is_nan() {
        let _ = writeln!(
            s,
            "| W3 < 2 KiB per retained small task | {} | {} |",
            bytes(t),
            yes(t < 2048.0)
        );
    }
    let sqlite = w1("hello-sqlite", |r| r.rps);
    if !sqlite.is_nan() {
        let _ = writeln!(
            s,
            "| W1 SQLite store >= 25% of the limit | {} | {} |",
            pct(sqlite, lim_rps),
            yes(sqlite / lim_rps >= 0.25)
        );
    }
    let pg = w1("hello-postgres", |r| r.rps);
    if !pg.is_nan() {
        let _ = writeln!(
            s,
            "| W1 PostgreSQL store >= 15% of the limit | {} | {} |",
            pct(pg, lim_rps),
            yes(pg / lim_rps >= 0.15)
        );
        let py_pg = w1("python-postgres", |r| r.rps);
        if !py_pg.is_nan() {
            let _ = writeln!(
                s,
                "| W1 PostgreSQL store >= 20x the Python SDK's DatabaseTaskStore | {} | {} |",
                ratio(pg, py_pg),
                yes(pg / py_pg >= 20.0)
            );
        }
    }
    if !xrep.is_empty() {
        let (p50, p99) = (
            percentile(xrep.clone(), 0.5),
            percentile(xrep.clone(), 0.99),
        );
        let _ = writeln!(
            s,
            "| cross-replica latency p50 <= 5 ms, p99 <= 50 ms | {} / {} | {} |",
            fmt_ms(p50),
            fmt_ms(p99),
            yes(p50 <= 5.0 && p99 <= 50.0)
        );
    }
    if !tok_ours.is_empty() {
        let p99 = |v: &Vec<f64>| percentile(v.clone(), 0.99);
        let added = p99(&tok_ours) - p99(&tok_direct);
        let _ = writeln!(
            s,
            "| model token → client SSE frame, in memory: added by the kit p99 <= 1 ms | {} (ours {}, direct {}) | {} |",
            fmt_fine_ms(added),
            fmt_fine_ms(p99(&tok_ours)),
            fmt_fine_ms(p99(&tok_direct)),
            yes(added <= 1.0)
        );
    }
    if let Some((alone, beside)) = &res.abuse {
        let rate = |r: &AbuseResult| r.normal_ok as f64 / r.normal_total.max(1) as f64;
        let (ok_alone, ok_beside) = (rate(alone), rate(beside));
        let _ = writeln!(
            s,
            "| normal clients beside abusive ones: success and p99 within 10% of alone | {} / {} (alone {} / {}) | {} |",
            pct(beside.normal_ok as f64, beside.normal_total as f64),
            fmt_ms(beside.p99_ms),
            pct(alone.normal_ok as f64, alone.normal_total as f64),
            fmt_ms(alone.p99_ms),
            yes(ok_beside >= 0.9 * ok_alone && beside.p99_ms <= 1.1 * alone.p99_ms)
        );
    }
    if let Some(fair) = &res.fair {
        fair::targets(&mut s, fair);
    }
    let _ = writeln!(s);

    if let Ok(analysis) = std::fs::read_to_string(&o.analysis) {
        let _ = writeln!(s, "{}\n", analysis.trim_end());
    }

    // Raw.
    let _ = writeln!(s, "## Every run\n");
    let _ = writeln!(s, "<details><summary>per-run figures</summary>\n");
    for (k, v) in &res.w1 {
        let runs: Vec<String> = v
            .iter()
            .map(|r| {
                format!(
                    "{} req/s, p50 {}, p99 {}, server CPU {:.0}%",
                    fmt_num(r.rps),
                    fmt_ms(r.p50_ms),
                    fmt_ms(r.p99_ms),
                    r.server_cpu
                )
            })
            .collect();
        let _ = writeln!(s, "* W1 {k}: {}", runs.join("; "));
    }
    for (k, v) in &res.w2 {
        for &n in &o.chunks {
            let runs: Vec<String> = v
                .iter()
                .filter_map(|r| r.get(&n))
                .map(|r| {
                    format!(
                        "{} ev/s, first {}",
                        fmt_num(r.events_per_s),
                        fmt_ms(r.ttfe_ms)
                    )
                })
                .collect();
            let _ = writeln!(s, "* W2 {k} {n}: {}", runs.join("; "));
        }
    }
    for (k, v) in &res.w3_tasks {
        let _ = writeln!(
            s,
            "* W3 tasks {k}: {}",
            v.iter().map(|x| fmt_num(*x)).collect::<Vec<_>>().join(", ")
        );
    }
    for (k, v) in &res.w3_streams {
        let _ = writeln!(
            s,
            "* W3 streams {k}: {}",
            v.iter().map(|x| fmt_num(*x)).collect::<Vec<_>>().join(", ")
        );
    }
    for (i, v) in res.xrep.iter().enumerate() {
        let _ = writeln!(
            s,
            "* cross-replica run {}: {} events, p50 {}, p99 {}",
            i + 1,
            v.len(),
            fmt_ms(percentile(v.clone(), 0.5)),
            fmt_ms(percentile(v.clone(), 0.99))
        );
    }
    for (i, (ours, direct)) in res.llm.iter().enumerate() {
        let line = |r: &TokenRun| {
            format!(
                "{} tokens in {} frames, p50 {}, p99 {}, max {}",
                fmt_num(r.samples.len() as f64),
                fmt_num(r.frames as f64),
                fmt_fine_ms(percentile(r.samples.clone(), 0.5)),
                fmt_fine_ms(percentile(r.samples.clone(), 0.99)),
                fmt_fine_ms(percentile(r.samples.clone(), 1.0))
            )
        };
        let _ = writeln!(
            s,
            "* token latency run {}: ours {}; direct {}",
            i + 1,
            line(ours),
            line(direct)
        );
    }
    for (k, v) in &res.instr {
        let _ = writeln!(
            s,
            "* instructions/request {k}: {}",
            v.iter().map(|x| fmt_num(*x)).collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(s, "\n</details>");
    s
}

// ------------------------------------------------------------------------------------------

#[tokio::main]
async fn main() {
    let opts = Opts::parse();
    for d in ["logs", "tmp"] {
        std::fs::create_dir_all(opts.work.join(d)).expect("work dir");
    }
    let bin_dir = std::env::current_exe()
        .expect("exe")
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(4)
        .build()
        .expect("client");
    let mut env = Env {
        opts,
        bin_dir,
        client,
        seq: Default::default(),
        otlp: None,
    };
    if env.wanted("hello-otel") {
        env.otlp = Some(start_otlp_sink().await);
    }
    let env = env;
    let started = Instant::now();
    let m = machine(&env.opts);
    eprintln!("machine: {} x {}, load {}", m.cpus, m.model, m.load_start);

    let keys = [
        "hello",
        "hello-v03",
        "hello-otel",
        "hello-grpc",
        "stream-grpc",
        "grpc-limit",
        "hello-manual",
        "hello-apikey",
        "hello-llm",
        "llm",
        "hello-sqlite",
        "hello-postgres",
        "limit",
        "python",
        "python-postgres",
        "stream",
        "stream-sqlite",
        "stream-postgres",
    ];
    let specs: BTreeMap<&'static str, Spec> = keys.iter().map(|k| (*k, env.spec(k))).collect();
    // The servers built with the `llm` or `otel` feature run only where their binaries are
    // (bench/run.sh builds them; a plain `cargo build -p a2a-bench` does not).
    for (k, feature) in [("hello-llm", "llm"), ("llm", "llm"), ("hello-otel", "otel")] {
        if env.wanted(k) && !specs[k].program.exists() {
            eprintln!(
                "{k}: {} not built (the a2a-bench feature `{feature}`; bench/run.sh builds it): skipped",
                specs[k].program.display()
            );
        }
    }
    let wanted = |k: &str| env.wanted(k) && specs[k].program.exists();
    capture(&env, wanted("grpc-limit")).await;
    let on = |w: &str| env.opts.only.iter().any(|x| x == w);
    let mut res = Results::default();
    let fake_model = if on("llm") && wanted("llm") {
        Some(start_fake_model().await)
    } else {
        None
    };

    if on("w1") {
        // One unmeasured W1 pass before the first measured one: right after the build the
        // first server measured came out slower, whichever it was (in the fourth session the
        // macro agent, always first, 5-12% below the hand-written one; in the fifth, the first
        // pass of each of two reports gave the lowest of its five ratios).
        for k in ["limit", "grpc-limit"].into_iter().filter(|k| wanted(k)) {
            let r = w1_once(&env, &specs[k]).await;
            eprintln!("[warm-up] W1 {k}: {:.0} req/s (not counted)", r.rps);
        }
    }
    let w1_runs = env.opts.w1_runs.max(env.opts.runs);
    for run in 1..=w1_runs {
        if on("w1") {
            // The order rotates from run to run: measured always first, the macro agent came out
            // 5-12% below the hand-written one in 5 of 6 runs although both execute the same
            // instructions (within 0.3%), so position alone moves a figure.
            let mut order = [
                "hello",
                "hello-manual",
                "hello-sqlite",
                "hello-postgres",
                "limit",
                "python",
                "python-postgres",
                "hello-v03",
                "hello-otel",
                "hello-grpc",
                "grpc-limit",
            ];
            let n = order.len();
            order.rotate_left((run - 1) % n);
            for k in order.into_iter().filter(|k| wanted(k)) {
                let r = w1_once(&env, &specs[k]).await;
                eprintln!(
                    "[run {run}] W1 {k}: {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms ({} failed), \
                     server CPU {:.0}%",
                    r.rps, r.p50_ms, r.p99_ms, r.other, r.server_cpu
                );
                res.w1.entry(k).or_default().push(r);
            }
        }
        if run > env.opts.runs {
            continue;
        }
        if on("instr") {
            for k in [
                "hello",
                "hello-manual",
                "hello-apikey",
                "hello-llm",
                "hello-v03",
                "hello-otel",
                "limit",
                "hello-grpc",
                "grpc-limit",
            ]
            .into_iter()
            .filter(|k| wanted(k))
            {
                match instr_once(&env, &specs[k]).await {
                    Some(i) => {
                        eprintln!("[run {run}] instructions {k}: {i:.0} per request");
                        res.instr.entry(k).or_default().push(i);
                    }
                    None => eprintln!("[run {run}] instructions {k}: not measured (valgrind?)"),
                }
            }
        }
        if on("w2") {
            for k in [
                "stream",
                "stream-sqlite",
                "limit",
                "python",
                "stream-grpc",
                "grpc-limit",
            ]
            .into_iter()
            .filter(|k| wanted(k))
            {
                let r = w2_once(&env, &specs[k]).await;
                for (n, x) in &r {
                    eprintln!(
                        "[run {run}] W2 {k} {n}: {:.0} events/s, first event {:.2} ms",
                        x.events_per_s, x.ttfe_ms
                    );
                }
                res.w2.entry(k).or_default().push(r);
            }
        }
        if let Some((model, _)) = &fake_model {
            let (ours, direct) = llm_once(&env, &specs["llm"], model).await;
            let show = |r: &TokenRun| {
                format!(
                    "{} tokens in {} frames, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                    r.samples.len(),
                    r.frames,
                    percentile(r.samples.clone(), 0.5),
                    percentile(r.samples.clone(), 0.99),
                    percentile(r.samples.clone(), 1.0)
                )
            };
            eprintln!(
                "[run {run}] token latency: ours {}; direct {}",
                show(&ours),
                show(&direct)
            );
            res.llm.push((ours, direct));
        }
        if on("xrep") && wanted("stream-postgres") {
            let v = xrep_once(&env, &specs["stream-postgres"]).await;
            eprintln!(
                "[run {run}] cross-replica latency: {} events, p50 {:.2} ms, p99 {:.2} ms",
                v.len(),
                percentile(v.clone(), 0.5),
                percentile(v.clone(), 0.99)
            );
            res.xrep.push(v);
        }
        if on("w3") {
            for k in ["hello", "hello-sqlite", "limit", "python"]
                .into_iter()
                .filter(|k| wanted(k))
            {
                let (b, n) = w3_tasks_once(&env, &specs[k]).await;
                eprintln!("[run {run}] W3 {k}: {b:.0} bytes per retained task ({n} tasks)");
                res.w3_tasks.entry(k).or_default().push(b);
                res.w3_task_counts.insert(k, n);
            }
            for k in ["stream", "limit", "python"]
                .into_iter()
                .filter(|k| wanted(k))
            {
                let b = w3_streams_once(&env, &specs[k]).await;
                eprintln!("[run {run}] W3 {k}: {b:.0} bytes per open stream");
                res.w3_streams.entry(k).or_default().push(b);
            }
        }
    }

    if on("abuse") && wanted("stream") {
        let alone = abuse_once(&env, &specs["stream"], false).await;
        eprintln!("[abuse] normal clients alone: {alone:?}");
        let beside = abuse_once(&env, &specs["stream"], true).await;
        eprintln!("[abuse] beside the abusive ones: {beside:?}");
        res.abuse = Some((alone, beside));
    }
    if on("fair") && wanted("stream") {
        res.fair = Some(fair::run(&env, &specs["stream"]).await);
    }

    let text = report(&env, &m, &res, &specs, started.elapsed());
    std::fs::write(&env.opts.out, &text).expect("write the report");
    eprintln!("wrote {}", env.opts.out.display());
    print!("{text}");
}

// ------------------------------------------------------------------------------------------
// Abuse (issue #18): normal clients beside slowloris and a flood of waiting tasks

/// Normal clients, each from its own loopback address (127.0.1.N), as distinct users are.
const ABUSE_NORMAL_CLIENTS: u8 = 48;
/// Requests a second of each normal client (2,400 together, well under the agent's capacity:
/// the workload measures service beside abuse, not throughput).
const ABUSE_NORMAL_RATE: u64 = 50;
/// Slowloris connections (from 127.0.0.3): headers trickled a line a second, never finished.
const ABUSE_SLOW_CLIENTS: usize = 8;
/// Flood connections (from 127.0.0.2): SendMessage to a skill that asks a question, as fast
/// as they are answered, each leaving a task waiting for a reply.
const ABUSE_FLOOD_CLIENTS: usize = 8;
/// The server's per-address rate (`--rate-limit`), in both runs: above each normal client's.
const ABUSE_RATE_LIMIT: u32 = 100;

#[derive(Debug, Clone, Default)]
struct AbuseResult {
    normal_ok: usize,
    normal_total: usize,
    p50_ms: f64,
    p99_ms: f64,
    /// The flood's answers by HTTP status.
    flood: BTreeMap<u16, usize>,
    /// Tasks the flood left waiting for a reply.
    flood_waiting: usize,
    /// Slowloris connections the server closed.
    slow_closed: usize,
    /// The server's resident memory at the end, MB.
    rss_mb: f64,
}

/// One abuse run on the streaming agent (its `count` skill for the normal clients, `ask` for
/// the flood): 64 connections with the abusers, 48 without.
async fn abuse_once(env: &Env, spec: &Spec, abusive: bool) -> AbuseResult {
    let rate = ABUSE_RATE_LIMIT.to_string();
    let server = env.start(spec, &["--rate-limit", &rate]).await;
    let url = server.url.clone();
    let end = Instant::now() + Duration::from_secs(env.opts.abuse_seconds);
    let bound = |ip: std::net::Ipv4Addr, pool: usize| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::V4(ip))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(pool)
            .build()
            .expect("client")
    };
    let normal = normal_clients(env, &url, end);
    let flood = (0..if abusive { ABUSE_FLOOD_CLIENTS } else { 0 }).map(|_| {
        let client = bound(std::net::Ipv4Addr::new(127, 0, 0, 2), ABUSE_FLOOD_CLIENTS);
        let url = url.clone();
        async move {
            let (mut statuses, mut waiting) = (BTreeMap::<u16, usize>::new(), 0usize);
            while Instant::now() < end {
                let body = stream_body(&env.message_id(), "ask", "why")
                    .to_string()
                    .replace("SendStreamingMessage", "SendMessage");
                match post(&client, &url, body).await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        *statuses.entry(status).or_default() += 1;
                        if r.bytes()
                            .await
                            .is_ok_and(|b| memchr_contains(&b, b"TASK_STATE_INPUT_REQUIRED"))
                        {
                            waiting += 1;
                        }
                    }
                    Err(_) => *statuses.entry(0).or_default() += 1,
                }
            }
            (statuses, waiting)
        }
    });
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .expect("server address");
    let slow = (0..if abusive { ABUSE_SLOW_CLIENTS } else { 0 }).map(|_| async move {
        use tokio::io::AsyncWriteExt;
        let mut closed = 0usize;
        while Instant::now() < end {
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            if socket.bind("127.0.0.3:0".parse().expect("addr")).is_err() {
                break;
            }
            let Ok(mut tcp) = socket.connect(addr).await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let mut line: &[u8] = b"POST / HTTP/1.1\r\nHost: x\r\n";
            loop {
                if tcp.write_all(line).await.is_err() {
                    closed += 1;
                    break;
                }
                if Instant::now() >= end {
                    break;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                line = b"X-Slow: still coming\r\n";
            }
        }
        closed
    });
    let (normal, flood, slow) = tokio::join!(
        normal,
        futures::future::join_all(flood),
        futures::future::join_all(slow)
    );
    let rss_mb = rss(server.pid) as f64 / 1e6;
    env.stop(server).await;
    let mut out = AbuseResult {
        rss_mb,
        slow_closed: slow.into_iter().sum(),
        ..AbuseResult::default()
    };
    out.normal_ok = normal.ok;
    out.normal_total = normal.total;
    out.p50_ms = normal.p50_ms;
    out.p99_ms = normal.p99_ms;
    for (statuses, waiting) in flood {
        out.flood_waiting += waiting;
        for (k, v) in statuses {
            *out.flood.entry(k).or_default() += v;
        }
    }
    out
}

/// What the normal clients of a run got.
#[derive(Debug, Clone, Default)]
struct NormalResult {
    /// Requests answered 200 with their task COMPLETED.
    ok: usize,
    total: usize,
    p50_ms: f64,
    p99_ms: f64,
}

/// The normal clients of the abuse and fair workloads until `end`: [`ABUSE_NORMAL_CLIENTS`],
/// each from its own loopback address (127.0.1.N) on one keep-alive connection, each sending
/// [`ABUSE_NORMAL_RATE`] blocking SendMessage a second (`count` of one chunk) over JSON-RPC.
/// A request not answered within 10 s fails (it counts with that latency).
async fn normal_clients(env: &Env, url: &str, end: Instant) -> NormalResult {
    let clients = (1..=ABUSE_NORMAL_CLIENTS).map(|i| {
        let client = reqwest::Client::builder()
            .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 1, i)))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        async move {
            let mut tick =
                tokio::time::interval(Duration::from_micros(1_000_000 / ABUSE_NORMAL_RATE));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let (mut ok, mut lat) = (0usize, Vec::new());
            while Instant::now() < end {
                tick.tick().await;
                let body = stream_body(&env.message_id(), "count", "1");
                let body = body
                    .to_string()
                    .replace("SendStreamingMessage", "SendMessage");
                let t0 = Instant::now();
                let done = match post(&client, url, body).await {
                    Ok(r) if r.status() == 200 => r
                        .bytes()
                        .await
                        .is_ok_and(|b| memchr_contains(&b, b"TASK_STATE_COMPLETED")),
                    _ => false,
                };
                lat.push(t0.elapsed().as_secs_f64() * 1e3);
                ok += usize::from(done);
            }
            (ok, lat)
        }
    });
    let mut out = NormalResult::default();
    let mut lat = Vec::new();
    for (ok, l) in futures::future::join_all(clients).await {
        out.ok += ok;
        out.total += l.len();
        lat.extend(l);
    }
    out.p50_ms = percentile(lat.clone(), 0.5);
    out.p99_ms = percentile(lat, 0.99);
    out
}

fn memchr_contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
