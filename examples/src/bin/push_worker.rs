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

use a2a_examples::push_worker;
use clap::Parser;

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
    let args = Args::parse();
    a2a_examples::observe(&args.common.observe)?;
    let push = push_worker::push_config(args.allow_private_webhooks);
    let a2a = push_worker::a2a(Duration::from_millis(args.work_ms), push);
    let service = args.common.configure(a2a).await?.build()?;
    a2a_examples::print_card_or_serve(&args.common, service).await
}
