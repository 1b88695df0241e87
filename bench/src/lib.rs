//! The benchmark harness of a2a-kit (issue #9, with #3 and #4). Not a library anyone should use:
//! it holds what the server binaries share.
//!
//! * `bench-hello`: [`MacroHello`], the `hello` agent of `examples/` as written with the macros
//!   when it answered with a task (the example now answers with a Message; W1 measures tasks),
//!   `--store memory|sqlite:PATH|postgres://…` (a PostgreSQL schema is emptied at start).
//! * `bench-hello-manual`: the same agent written by hand against [`Agent`] ([`ManualHello`]).
//! * `bench-hello-otel` (feature `otel`, #33): [`MacroHello`] with its spans and metrics
//!   exported over OTLP (`a2a_kit::observe::otel`) to the driver's sink.
//! * `bench-stream`: [`StreamAgent`], a `count` streaming skill (N chunks), a `hold` skill
//!   that keeps its stream open (for the per-stream memory figure), a `pace` skill whose
//!   chunks carry the time they were sent (for cross-replica latency), and the skills the
//!   abusive clients use (`ask`, `sleep`, `chat`); `--replica` joins a PostgreSQL schema
//!   another server made, `--allow-private-webhooks` delivers push notifications.
//! * `bench-llm` (feature `llm`): an agent whose default skill is a model run
//!   (`a2a_kit::llm::Model::run`) on `--model-url`, the driver's fake OpenAI-compatible model.
//! * `bench-limit`: a bare axum handler with no A2A logic: parses the JSON-RPC body, answers
//!   with canned bytes, or an SSE stream of N canned frames.
//! * `bench-driver`: starts each server pinned to core 0, drives it from core 1 (`oha` for
//!   unary load, an SSE client built on reqwest + eventsource-stream for streams), reads
//!   `/proc/PID/status` for memory, and writes `BENCHMARKS.md`.
//!
//! `bash bench/run.sh` installs the tools and runs everything.
//!
//! Every server binary starts with [`server_allocator!`]: with the `mimalloc` feature (the
//! default) all of them, the limit included, run on mimalloc, otherwise all on the system
//! allocator.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_kit::error::A2aError;
use a2a_kit::prelude::*;
use a2a_kit::server::AgentServiceBuilder;
use a2a_kit::skill::{Agent, AgentInfo, FromSkillRequest, SkillCall, SkillInfo, SkillRequest};
use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
use clap::Parser;

/// The command line of every server binary.
#[derive(Debug, Clone, Parser)]
pub struct ServerCli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    /// Task store: `memory`, `sqlite:PATH` or `postgres://…` (its `a2a` schema is dropped and
    /// made again at start, so every run starts empty).
    #[arg(long, default_value = "memory")]
    pub store: String,
    /// Capacity of the in-memory store (default: the kit's default, 100,000). The memory
    /// workload raises it so that the 100,000 measured tasks are all retained.
    #[arg(long)]
    pub max_tasks: Option<usize>,
    /// With `postgres://…`: join the schema as another replica (keep what is there) instead of
    /// emptying it.
    #[arg(long)]
    pub replica: bool,
    /// Requests a second per client address (bursts of twice as many), as the examples'
    /// `--rate-limit`: the abuse workload's server.
    #[arg(long)]
    pub rate_limit: Option<u32>,
    /// Authenticate every request but the card's with this `X-API-Key` (the W1 row with
    /// authentication).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Deliver push notifications, to loopback and private-network webhooks too, as the
    /// examples' flag of the same name (the fair workload's webhook is the driver's, on
    /// 127.0.0.1). Without it the agent offers no push notifications.
    #[arg(long)]
    pub allow_private_webhooks: bool,
    /// `bench-llm`: the OpenAI-compatible model server, with its `/v1` (the driver's fake
    /// model). The other servers ignore it.
    #[arg(long)]
    pub model_url: Option<String>,
}

impl ServerCli {
    /// Apply the store options to an agent.
    pub async fn configure(
        &self,
        a2a: AgentServiceBuilder,
    ) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
        let mut a2a = a2a.public_url(format!("http://{}", self.bind));
        if let Some(key) = &self.api_key {
            a2a = a2a.authenticate(a2a_kit::auth::ApiKeys::header("X-API-Key").key(key, "bench"));
        }
        if self.allow_private_webhooks {
            a2a = a2a.push_delivery(a2a_kit::push::PushConfig::default().allow_private_networks());
        }
        if self.store == "memory" {
            return Ok(match self.max_tasks {
                None => a2a,
                Some(max_tasks) => a2a.task_manager(InMemoryTaskManager::new(InMemoryConfig {
                    max_tasks,
                    ..InMemoryConfig::default()
                })),
            });
        }
        if self.store.starts_with("postgres://") {
            return open_postgres(a2a, &self.store, !self.replica).await;
        }
        match self.store.strip_prefix("sqlite:") {
            Some(path) if !path.is_empty() => open_sqlite(a2a, path).await,
            _ => Err(format!(
                "`{}` is not a store: use `memory`, `sqlite:PATH` or `postgres://…`",
                self.store
            )
            .into()),
        }
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(
    a2a: AgentServiceBuilder,
    path: &str,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    Ok(a2a.task_manager(a2a_kit::store::SqliteTaskManager::open(path).await?))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(
    _: AgentServiceBuilder,
    _: &str,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    Err("built without the `sqlite` feature of a2a-bench".into())
}

#[cfg(feature = "postgres")]
async fn open_postgres(
    a2a: AgentServiceBuilder,
    url: &str,
    empty: bool,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    use a2a_kit::store::PostgresTaskManager;
    if empty {
        PostgresTaskManager::connect(url)
            .await?
            .drop_schema()
            .await?;
    }
    Ok(a2a.task_manager(PostgresTaskManager::connect(url).await?))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(
    _: AgentServiceBuilder,
    _: &str,
    _: bool,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    Err("built without the `postgres` feature of a2a-bench".into())
}

/// Parse the command line, configure `a2a` and serve it until killed.
pub async fn serve(a2a: AgentServiceBuilder) -> Result<(), Box<dyn std::error::Error>> {
    serve_cli(ServerCli::parse(), a2a).await
}

/// [`serve`] with a command line already parsed (a server that reads its own options first).
pub async fn serve_cli(
    cli: ServerCli,
    a2a: AgentServiceBuilder,
) -> Result<(), Box<dyn std::error::Error>> {
    let service = cli.configure(a2a).await?.build()?;
    let listener = tokio::net::TcpListener::bind(cli.bind).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let limits = a2a_kit_axum::ServerLimits {
        rate_limit_per_ip: cli.rate_limit.map(a2a_kit_axum::RateLimit::per_second),
        ..Default::default()
    };
    a2a_kit_axum::serve_service_with(service, listener, a2a_kit_axum::shutdown_signal(), limits)
        .await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The hello agent with the macros: `a2a_examples::hello::HelloAgent` before it answered with a
// Message (`#[skill(message)]`). The W1 workload is a task per greeting, stored and read back.

/// The macro `hello` agent: one skill greeting by name, answered with a task.
#[derive(Clone, Default)]
pub struct MacroHello;

/// A friendly agent that greets people.
#[a2a_kit::a2a_agent(name = "Hello Agent")]
impl MacroHello {
    /// Greet the user by name.
    #[skill(tags = ["greeting"], examples = ["Alice"])]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {}!", name.trim())
    }
}

// ---------------------------------------------------------------------------------------------
// The hello agent written by hand (issue #3): what `#[a2a_agent]` generates for
// [`MacroHello`], written against the `Agent` trait.

/// `HelloAgent` without the macros.
#[derive(Clone, Default)]
pub struct ManualHello;

static MANUAL_SKILLS: [SkillInfo; 1] = {
    let mut greet = SkillInfo::new("greet", "Greet the user by name.");
    greet.name = "Greet";
    greet.tags = &["greeting"];
    greet.examples = &["Alice"];
    [greet]
};

static MANUAL_INFO: AgentInfo = AgentInfo {
    name: "Hello Agent",
    description: "A friendly agent that greets people.",
    version: env!("CARGO_PKG_VERSION"),
    provider: None,
    documentation_url: None,
    icon_url: None,
    default_input_modes: &["text/plain"],
    default_output_modes: &["text/plain"],
    streaming: true,
    push_notifications: false,
    skills: &MANUAL_SKILLS,
};

impl Agent for ManualHello {
    fn info(&self) -> &'static AgentInfo {
        &MANUAL_INFO
    }

    fn prepare(self: Arc<Self>, skill: &str, req: &SkillRequest) -> Result<SkillCall, A2aError> {
        match skill {
            "greet" => {
                let Text(name) = Text::from_request(req).map_err(|e| e.into_a2a(skill))?;
                Ok(SkillCall::new(async move {
                    format!("Hello, {}!", name.trim()).into_outcome()
                }))
            }
            other => Err(A2aError::invalid_params(format!(
                "this agent has no skill `{other}`"
            ))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The streaming agent (W2, W3).

/// Streams for the benchmarks. Messages name the skill in `metadata.skillId`.
#[derive(Clone, Default)]
pub struct StreamAgent;

/// Streaming skills for the benchmarks.
#[a2a_agent(name = "Stream Bench")]
impl StreamAgent {
    /// Count from 1 to N (at most 100000), one artifact chunk per number (the `count` skill
    /// of `examples/src/streaming.rs`).
    #[skill]
    #[streaming]
    fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n: u32 = n.trim().parse().unwrap_or(5).min(100_000);
        a2a_kit::stream! {
            for i in 1..=n {
                yield format!("{i}\n");
            }
        }
    }

    /// `N MS`: N chunks, one every MS milliseconds, each the time it was sent, in microseconds
    /// since the Unix epoch (the cross-replica latency workload reads them on another replica).
    #[skill]
    #[streaming]
    fn pace(&self, Text(spec): Text) -> impl Stream<Item = String> + Send + 'static {
        let mut it = spec.split_whitespace().map(|x| x.parse::<u64>().ok());
        let n = it.next().flatten().unwrap_or(100).min(100_000);
        let every = Duration::from_millis(it.next().flatten().unwrap_or(10).min(10_000));
        a2a_kit::stream! {
            for _ in 0..n {
                tokio::time::sleep(every).await;
                yield format!("{}\n", unix_micros());
            }
        }
    }

    /// Ask a question and wait for the reply: the abuse workload floods the agent with these.
    #[skill]
    async fn ask(&self, ctx: TaskContext, Text(q): Text) -> Result<String, SkillError> {
        let Text(answer) = ctx.ask(format!("{q}?")).await?;
        Ok(answer)
    }

    /// Sleep N seconds (default 10, at most an hour), then answer: the fair workload's
    /// skill-slot hog starts these, each holding a turn while it sleeps.
    #[skill]
    async fn sleep(&self, Text(secs): Text) -> Result<String, SkillError> {
        let secs: u64 = secs.trim().parse().unwrap_or(10).min(3600);
        tokio::time::sleep(Duration::from_secs(secs)).await;
        Ok(format!("slept {secs} s"))
    }

    /// A conversation that asks again after every reply until the reply is `bye`: each
    /// follow-up message makes one more INPUT_REQUIRED event (the fair workload's push
    /// fan-out sends these, every one to each of the task's push configs).
    #[skill]
    async fn chat(&self, ctx: TaskContext, Text(first): Text) -> Result<String, SkillError> {
        let (mut said, mut turns) = (first, 0u64);
        while said.trim() != "bye" {
            turns += 1;
            let Text(reply) = ctx.ask(format!("turn {turns}: more?")).await?;
            said = reply;
        }
        Ok(format!("bye after {turns} turns"))
    }

    /// Send one chunk, then keep the task (and its stream) open for N seconds.
    #[skill]
    #[streaming]
    fn hold(&self, Text(secs): Text) -> impl Stream<Item = String> + Send + 'static {
        let secs: u64 = secs.trim().parse().unwrap_or(60).min(3600);
        a2a_kit::stream! {
            yield "open\n".to_string();
            tokio::time::sleep(Duration::from_secs(secs)).await;
            yield "closed\n".to_string();
        }
    }
}

/// Microseconds since the Unix epoch (one clock for every process on the machine).
pub fn unix_micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros()
}

/// Declare the benchmark servers' global allocator (see the crate docs): the same for every
/// server binary, so the allocator is never what separates two of them.
#[macro_export]
macro_rules! server_allocator {
    () => {
        #[cfg(feature = "mimalloc")]
        #[global_allocator]
        static GLOBAL: $crate::Allocator = $crate::Allocator;
    };
}

/// The allocator [`server_allocator!`] installs.
#[cfg(feature = "mimalloc")]
pub use mimalloc::MiMalloc as Allocator;
