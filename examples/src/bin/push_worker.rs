//! A remote agent that takes a moment and reports back by push notification: the other half
//! of the `orchestrator` example.
//!
//! `cargo run --bin push_worker -- [--bind HOST:PORT] [--work-ms N] [--allow-private-webhooks]`
//!
//! Push delivery refuses loopback and private-network webhooks unless
//! `--allow-private-webhooks` is given (development only: with it, a client could make this
//! agent POST to services on its own network). On start it logs `listening on URL`.

#![forbid(unsafe_code)]

use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::push::PushConfig;
use a2a_kit::server::AgentService;
use clap::Parser;

/// The worker: its skill sleeps, then answers.
#[derive(Clone)]
struct Worker {
    work: Duration,
}

/// Summarises texts, slowly, and reports back by push notification.
#[a2a_agent(name = "Push Worker", push_notifications = true)]
impl Worker {
    /// Count the words of a text and quote its first one (after some "work").
    #[skill(tags = ["demo", "push"], examples = ["The quick brown fox"])]
    async fn summarise(&self, ctx: TaskContext, Text(text): Text) -> Result<String, SkillError> {
        ctx.status("Reading the text").await?;
        tokio::time::sleep(self.work).await;
        let words = text.split_whitespace().count();
        let first = text.split_whitespace().next().unwrap_or("");
        Ok(format!("{words} word(s), starting with \"{first}\""))
    }
}

#[derive(Parser)]
#[command(about = "A slow agent that reports completion by push notification")]
struct Args {
    #[command(flatten)]
    common: a2a_examples::Cli,
    /// Deliver push notifications to loopback and private-network webhooks (development and
    /// tests only).
    #[arg(long)]
    allow_private_webhooks: bool,
    /// How long the skill works, in milliseconds.
    #[arg(long, default_value_t = 800)]
    work_ms: u64,
}

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::init_tracing();
    let args = Args::parse();
    let mut push = PushConfig::default();
    if args.allow_private_webhooks {
        push = push.allow_private_networks();
    }
    let agent = Worker {
        work: Duration::from_millis(args.work_ms),
    };
    let a2a = AgentService::builder(agent).push_delivery(push);
    let service = args.common.configure(a2a).await?.build()?;
    a2a_examples::print_card_or_serve(&args.common, service).await
}
