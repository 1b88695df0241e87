//! An app that delegates work to a remote agent without waiting, learns of its completion by
//! webhook, survives a restart in the middle, and polls when the webhook is late.
//!
//! ```text
//! cargo run --bin push_worker &
//! cargo run --bin orchestrator -- --store sqlite:orchestrator.db "Some text to summarise"
//! ```
//!
//! 1. It serves a webhook (`POST /a2a/webhook`, the kit's [`WebhookReceiver`]) and a view of
//!    its remote tasks (`GET /tasks`), both kept in `--store` ([`RemoteTasks`], [`PushTokens`]:
//!    in memory, or a SQLite file or PostgreSQL that outlive the process).
//! 2. It sends the message with `returnImmediately` and a push config whose per-task token it
//!    generated (random, kept hashed), and tracks the acknowledged Task with a deadline.
//! 3. The remote agent POSTs the finished Task (its artifacts included) to the webhook; the
//!    receiver checks the token, updates the stored task, and the app prints the result.
//!
//! Stopped and started again with the same `--store` and `--bind`, it sends nothing new: it
//! goes on waiting for the task it started (its webhook token still valid). When no webhook
//! settles the task by `--deadline`, it polls the agent (GetTask, with backoff); if the agent
//! still says nothing conclusive, the task is marked timed out with a reason (exit status 2),
//! and cancelled on the agent with `--cancel-on-timeout`.
//!
//! Output lines: `acknowledged: task ID (STATE)` or `resuming: task ID (STATE)`, then
//! `webhook: task ID -> STATE` per notification, then `result: STATE (by webhook|by poll):
//! TEXT` or `timed out: task ID: REASON`.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_examples::StoreSpec;
use a2a_kit::client::{A2aClient, SendRequest};
use a2a_kit::protocol::{SendMessageResponse, Task, TaskState};
use a2a_kit::store::{InMemoryTaskManager, RemoteTaskRecord, TaskManager};
use a2a_kit_axum::webhook::{PollPolicy, PushTokens, RemoteTasks, WebhookReceiver};
use axum::Json;
use axum::http::StatusCode;
use axum::routing::get;
use clap::Parser;

/// Sends work to a remote A2A agent without waiting and follows it by webhook: survives a
/// restart, polls when the webhook is late.
#[derive(Parser)]
struct Args {
    /// The remote agent's base URL (its card is at /.well-known/agent-card.json below it).
    #[arg(long, default_value = "http://127.0.0.1:3000")]
    agent: String,
    /// Where this app listens for webhooks (keep it across restarts: the remote agent posts
    /// to it).
    #[arg(long, default_value = "127.0.0.1:4000")]
    bind: SocketAddr,
    /// The base URL the remote agent reaches this app at (default: http://BIND).
    #[arg(long)]
    public_url: Option<String>,
    /// Where the remote tasks and webhook tokens are kept: `memory`, `sqlite:PATH` or
    /// `postgres://USER@HOST:PORT/DB` (a file or a database survive a restart).
    #[arg(long, default_value = "memory")]
    store: StoreSpec,
    /// A skill id on the remote agent (default: let the agent route).
    #[arg(long)]
    skill: Option<String>,
    /// Seconds to wait for the webhook before polling the agent.
    #[arg(long, default_value_t = 30)]
    deadline: u64,
    /// Polls after the deadline before the task is marked timed out.
    #[arg(long, default_value_t = 5)]
    polls: u32,
    /// Seconds between the first polls (doubling, up to 30).
    #[arg(long, default_value_t = 2)]
    poll_every: u64,
    /// Cancel the remote task when it times out.
    #[arg(long)]
    cancel_on_timeout: bool,
    /// Metrics (`--metrics`: Prometheus text at /metrics) and OTLP export (`--otel`).
    #[command(flatten)]
    observe: a2a_examples::ObserveArgs,
    /// Serve a console at /_console/ on --bind: the remote agent (its card, skills, tasks,
    /// through this process) and the deliveries this webhook received.
    #[arg(long)]
    console: bool,
    /// The text to send.
    #[arg(default_value = "The quick brown fox jumps over the lazy dog")]
    text: String,
}

const WEBHOOK_PATH: &str = "/a2a/webhook";

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    let args = Args::parse();
    a2a_examples::observe(&args.observe)?;

    // 1. The store, the webhook and a view of the remote tasks.
    let store = open_store(&args.store).await?;
    let tokens = PushTokens::open(store.clone())?;
    let tasks = RemoteTasks::open(store)?;
    // A week is long enough to read a finished task back at /tasks.
    let purged = tasks
        .purge_finished(Duration::from_secs(7 * 24 * 3600))
        .await?;
    if purged > 0 {
        eprintln!("forgot {purged} remote task(s) finished over a week ago");
    }
    let deliveries = a2a_kit_axum::webhook::DeliveryLog::default();
    let (receiver, mut updates) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .record_to(&deliveries)
        .channel(64);
    let listener = a2a_examples::listen(args.bind).await?;
    let base = args
        .public_url
        .clone()
        .unwrap_or(format!("http://{}", listener.local_addr()?));
    let view = tasks.clone();
    let mut app = a2a_examples::observed_routes();
    if args.console {
        let console = a2a_kit_axum::console::Console::remote(&args.agent)
            .map_err(|e| a2a_examples::Error::from(e.to_string()))?
            .receiver_log(deliveries);
        app = app.merge(console.router());
        eprintln!("console at {base}/_console/");
    }
    let app = app.merge(receiver.router(WEBHOOK_PATH)).route(
        "/tasks",
        get(move || async move {
            view.all()
                .await
                .map(Json)
                .map_err(|e| (StatusCode::SERVICE_UNAVAILABLE, e.to_string()))
        }),
    );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("webhook server stopped: {e}");
        }
    });
    eprintln!("webhook at {base}{WEBHOOK_PATH}");

    // 2. Go on with the task a previous run started, or delegate a new one.
    let client = A2aClient::connect(&args.agent).await?;
    eprintln!(
        "remote agent: {} ({})",
        client.card().name,
        client.binding()
    );
    let deadline = Duration::from_secs(args.deadline);
    let resumed = tasks
        .unsettled()
        .await?
        .into_iter()
        .find(|r| r.agent_url.as_deref() == Some(args.agent.as_str()));
    let task_id = match resumed {
        Some(record) => {
            println!(
                "resuming: task {} ({})",
                record.task.id,
                record.task.status.state.as_str()
            );
            if record.timed_out.is_some() {
                tasks.retry(&record.task.id).await?;
            }
            record.task.id
        }
        None => match delegate(&args, &client, &tokens, &tasks, &base, deadline).await? {
            Some(id) => id,
            None => return Ok(()),
        },
    };

    // 3. Wait for the webhook; past the deadline the watch polls the agent.
    let policy = PollPolicy {
        attempts: args.polls.max(1),
        first: Duration::from_secs(args.poll_every.max(1)),
        max_interval: Duration::from_secs(30),
    };
    let watch = tasks.watch(policy);
    let settled = tasks.wait_settled(&task_id);
    tokio::pin!(settled);
    let mut by_webhook = false;
    let mut heard = |n: a2a_kit_axum::webhook::Notification| {
        if let Some(state) = n.event.state() {
            println!("webhook: task {} -> {}", n.task_id, state.as_str());
            by_webhook |= n.task_id == task_id && (state.is_terminal() || state.is_interrupted());
        }
    };
    let record = loop {
        tokio::select! {
            biased;
            Some(n) = updates.recv() => heard(n),
            record = &mut settled => break record?,
        }
    };
    // The receiver stores a notification, then hands it over: one that settled the task is
    // on its way to the channel.
    while let Ok(Some(n)) = tokio::time::timeout(Duration::from_millis(200), updates.recv()).await {
        heard(n);
    }
    drop(watch);
    finish(&args, &client, &tasks, record, by_webhook).await
}

/// Send the text without waiting, with a push config for our webhook; track the task. `None`
/// when the agent answered at once with a message.
async fn delegate(
    args: &Args,
    client: &A2aClient,
    tokens: &PushTokens,
    tasks: &RemoteTasks,
    base: &str,
    deadline: Duration,
) -> Result<Option<String>, a2a_examples::Error> {
    let config = tokens.issue_config(format!("{base}{WEBHOOK_PATH}")).await?;
    let token = config.token.clone().unwrap_or_default();
    let mut request = SendRequest::text(args.text.clone())
        .return_immediately(true)
        .push_config(config);
    if let Some(skill) = &args.skill {
        request = request.skill(skill.clone());
    }
    let sent = client.send(request).await.map_err(|e| {
        let refused_webhook = e.code() == Some(-32602) && e.to_string().contains("private");
        if refused_webhook {
            // The agent's SSRF guard refused our webhook's address.
            format!(
                "{e}\nhint: the agent refuses webhooks on private networks; give a URL it may \
                 call with --public-url, or run the agent allowing them (push_worker: \
                 --allow-private-webhooks)"
            )
            .into()
        } else {
            a2a_examples::Error::from(e)
        }
    })?;
    let task = match sent {
        SendMessageResponse::Task(task) => task,
        SendMessageResponse::Message(m) => {
            println!("result: direct reply: {}", m.text());
            return Ok(None);
        }
    };
    tokens.bind(&task.id, &token).await?;
    let (id, state) = (task.id.clone(), task.status.state);
    tasks.track(task, &args.agent, Some(deadline)).await?;
    println!("acknowledged: task {id} ({})", state.as_str());
    Ok(Some(id))
}

/// Print how the task ended; exit 0 when it completed, 1 when it ended otherwise, 2 when it
/// timed out.
async fn finish(
    args: &Args,
    client: &A2aClient,
    tasks: &RemoteTasks,
    record: RemoteTaskRecord,
    by_webhook: bool,
) -> Result<(), a2a_examples::Error> {
    let id = record.task.id.clone();
    if let Some(timed_out) = &record.timed_out {
        println!("timed out: task {id}: {}", timed_out.reason);
        if args.cancel_on_timeout {
            match tasks.cancel(&id, client).await {
                Ok(t) => println!("canceled: task {id} ({})", t.status.state.as_str()),
                Err(e) => eprintln!("could not cancel task {id}: {e}"),
            }
        }
        a2a_examples::flush_telemetry();
        std::process::exit(2);
    }
    let mut done = record.task;
    if result_text(&done).is_empty() {
        // A sender that posts only the status leaves the answer on the agent: read it once.
        if let Ok(task) = client.get_task(&id).await {
            tasks.insert(task.clone()).await?;
            done = task;
        }
    }
    println!(
        "result: {} (by {}): {}",
        done.status.state.as_str(),
        if by_webhook { "webhook" } else { "poll" },
        result_text(&done)
    );
    if done.status.state != TaskState::Completed {
        a2a_examples::flush_telemetry();
        std::process::exit(1);
    }
    Ok(())
}

/// Open `--store` for the remote tasks.
async fn open_store(spec: &StoreSpec) -> Result<Arc<dyn TaskManager>, a2a_examples::Error> {
    Ok(match spec {
        StoreSpec::Memory => Arc::new(InMemoryTaskManager::default()),
        StoreSpec::Sqlite(path) => Arc::new(a2a_kit::store::SqliteTaskManager::open(path).await?),
        StoreSpec::Postgres(url) => {
            Arc::new(a2a_kit::store::PostgresTaskManager::connect(url).await?)
        }
    })
}

/// The artifacts' text (where an agent puts its answer), else the final status message's.
fn result_text(task: &Task) -> String {
    let text: String = task
        .artifacts
        .iter()
        .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
        .collect();
    if !text.is_empty() {
        return text;
    }
    task.status
        .message
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default()
}
