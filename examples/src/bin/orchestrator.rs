//! An app that delegates work to a remote agent and learns of its completion by webhook.
//!
//! ```text
//! cargo run --bin push_worker -- --bind 127.0.0.1:3000 --allow-private-webhooks &
//! cargo run --bin orchestrator -- --agent http://127.0.0.1:3000 --bind 127.0.0.1:4000 "Some text to summarise"
//! ```
//!
//! 1. It serves a webhook (`POST /a2a/webhook`, the kit's [`WebhookReceiver`]) and a view of
//!    its remote tasks (`GET /tasks`).
//! 2. It sends the message with `returnImmediately` and a push config whose per-task token it
//!    generated ([`PushTokens::issue_config`]), and stores the acknowledged Task.
//! 3. The remote agent POSTs the final state to the webhook with `Authorization: Bearer
//!    <token>`; the receiver checks the token (constant time), updates the stored task and
//!    hands the notification over; the app prints the result and exits (status 0 when the
//!    task completed).
//!
//! Output lines: `acknowledged: task ID (STATE)`, `webhook: task ID -> STATE`, then
//! `result: STATE: TEXT`.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::time::Duration;

use a2a_kit::client::{A2aClient, SendRequest};
use a2a_kit::protocol::{SendMessageResponse, Task};
use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
use axum::Json;
use axum::routing::get;
use clap::Parser;

#[derive(Parser)]
#[command(about = "Send work to a remote A2A agent and wait for its completion webhook")]
struct Args {
    /// The remote agent's base URL (its card is at /.well-known/agent-card.json below it).
    #[arg(long, default_value = "http://127.0.0.1:3000")]
    agent: String,
    /// Where this app listens for webhooks.
    #[arg(long, default_value = "127.0.0.1:4000")]
    bind: SocketAddr,
    /// The base URL the remote agent reaches this app at (default: http://BIND).
    #[arg(long)]
    public_url: Option<String>,
    /// A skill id on the remote agent (default: let the agent route).
    #[arg(long)]
    skill: Option<String>,
    /// Seconds to wait for the final webhook.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// The text to send.
    #[arg(default_value = "The quick brown fox jumps over the lazy dog")]
    text: String,
}

const WEBHOOK_PATH: &str = "/a2a/webhook";

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::init_tracing();
    let args = Args::parse();

    // 1. The webhook and a view of the remote tasks.
    let tokens = PushTokens::new();
    let tasks = RemoteTasks::new();
    let (receiver, mut updates) = WebhookReceiver::new(tokens.clone())
        .store(tasks.clone())
        .channel(64);
    let listener = a2a_examples::listen(args.bind).await?;
    let base = args
        .public_url
        .clone()
        .unwrap_or(format!("http://{}", listener.local_addr()?));
    let view = tasks.clone();
    let app = axum::Router::new()
        .merge(receiver.router(WEBHOOK_PATH))
        .route("/tasks", get(move || async move { Json(view.all()) }));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("webhook server stopped: {e}");
        }
    });
    eprintln!("webhook at {base}{WEBHOOK_PATH}");

    // 2. Delegate, without waiting.
    let client = A2aClient::connect(&args.agent).await?;
    eprintln!(
        "remote agent: {} ({})",
        client.card().name,
        client.binding()
    );
    let config = tokens.issue_config(format!("{base}{WEBHOOK_PATH}"));
    let token = config.token.clone().unwrap_or_default();
    let mut request = SendRequest::text(args.text.clone())
        .return_immediately(true)
        .push_config(config);
    if let Some(skill) = &args.skill {
        request = request.skill(skill.clone());
    }
    let task = match client.send(request).await? {
        SendMessageResponse::Task(task) => task,
        SendMessageResponse::Message(m) => {
            println!("result: direct reply: {}", m.text());
            return Ok(());
        }
    };
    tokens.bind(&task.id, &token);
    println!(
        "acknowledged: task {} ({})",
        task.id,
        task.status.state.as_str()
    );
    let task_id = task.id.clone();
    tasks.insert(task);

    // 3. Wait for the webhook.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.timeout);
    let done = loop {
        if let Some(t) = tasks.get(&task_id).filter(|t| t.status.state.is_terminal()) {
            break t;
        }
        match tokio::time::timeout_at(deadline, updates.recv()).await {
            Ok(Some(n)) => {
                if let Some(state) = n.event.state() {
                    println!("webhook: task {} -> {}", n.task_id, state.as_str());
                }
            }
            Ok(None) => return Err("the webhook receiver stopped".into()),
            Err(_) => {
                let state = tasks
                    .get(&task_id)
                    .map(|t| t.status.state.as_str())
                    .unwrap_or("unknown");
                eprintln!(
                    "no final webhook within {}s (task is {state})",
                    args.timeout
                );
                std::process::exit(2);
            }
        }
    };
    // The notification says the task is done; the answer is in the task's artifact, which
    // status-update notifications do not carry: read the task once.
    let done = match client.get_task(&task_id).await {
        Ok(task) => task,
        Err(e) => {
            eprintln!("could not read the finished task: {e}");
            done
        }
    };
    println!(
        "result: {}: {}",
        done.status.state.as_str(),
        result_text(&done)
    );
    if !matches!(done.status.state, a2a_kit::protocol::TaskState::Completed) {
        std::process::exit(1);
    }
    Ok(())
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
