//! `cargo run --bin planner -- [--bind 127.0.0.1:3000] [--worker http://127.0.0.1:3001]`
//!
//! Run the worker first (`cargo run --bin worker`: it listens on 127.0.0.1:3001), then:
//! `a2a send http://127.0.0.1:3000 "launch a newsletter" --skill plan --stream`

#![forbid(unsafe_code)]

use a2a_examples::planner;

use clap::Parser;

/// The planner of the delegation example: hands its work to the worker agent and streams its
/// progress (start the worker first)
#[derive(Debug, Parser)]
struct PlannerCli {
    #[command(flatten)]
    common: a2a_examples::Cli,
    /// The worker agent's URL (where `cargo run --bin worker` listens by default).
    #[arg(long, default_value = planner::DEFAULT_WORKER_URL)]
    worker: String,
    /// Reach the worker over this binding (jsonrpc, rest or grpc) instead of the one its card
    /// prefers.
    #[arg(long, value_name = "BINDING")]
    worker_binding: Option<a2a_kit::client::Binding>,
}

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    let cli = PlannerCli::parse();
    a2a_examples::observe(&cli.common.observe)?;
    let service = cli
        .common
        .configure(match cli.worker_binding {
            Some(binding) => planner::a2a_over(&cli.worker, binding),
            None => planner::a2a(&cli.worker),
        })
        .await?
        .build()?;
    if !cli.common.print_card {
        match cli.worker_binding {
            Some(binding) => tracing::info!("delegating to {} over {binding}", cli.worker),
            None => tracing::info!("delegating to {}", cli.worker),
        }
    }
    a2a_examples::print_card_or_serve(&cli.common, service).await
}
