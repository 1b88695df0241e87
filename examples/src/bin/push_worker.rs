//! A remote agent that takes a moment and reports back by push notification: the other half
//! of the `orchestrator` example.
//!
//! `cargo run --bin push_worker -- [--bind HOST:PORT] [--work-ms N] [--allow-private-webhooks]`
//!
//! Push delivery refuses private-network webhooks (an agent that posted wherever a client
//! asked could be made to reach services on its own network). This demo allows **loopback**
//! webhooks explicitly, so that the orchestrator on the same machine can be called back, and
//! says so in its log; `--allow-private-webhooks` allows every private network too
//! (development only). On start it logs `listening on URL`.

#![forbid(unsafe_code)]

use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::push::{PushConfig, SsrfPolicy};
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

/// A slow agent that reports completion by push notification (the orchestrator example's
/// worker).
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: a2a_examples::Cli,
    /// Deliver push notifications to private-network webhooks too, not only loopback ones
    /// (development and tests only).
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
    let push = if args.allow_private_webhooks {
        tracing::warn!(
            "push notifications may go to loopback and private-network webhooks (--allow-private-webhooks): development only"
        );
        PushConfig::default().allow_private_networks()
    } else {
        tracing::info!(
            "push notifications may go to loopback webhooks (127.0.0.0/8, ::1): this demo allows them so that a caller on this machine hears back; a deployed agent should not"
        );
        PushConfig::default().ssrf(SsrfPolicy::allowlist(["127.0.0.0/8", "::1"])?)
    };
    let agent = Worker {
        work: Duration::from_millis(args.work_ms),
    };
    let a2a = AgentService::builder(agent).push_delivery(push);
    let service = args.common.configure(a2a).await?.build()?;
    a2a_examples::print_card_or_serve(&args.common, service).await
}
