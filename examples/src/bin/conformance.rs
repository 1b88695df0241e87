//! `cargo run --bin conformance -- [--bind HOST:PORT] [--print-card] [--no-streaming] [--push]
//! [--extended-card] [--require-extension URI]...`

#![forbid(unsafe_code)]

use a2a_examples::conformance::{ConformanceAgent, ConformanceFlags, a2a_with};
use clap::Parser;

/// The conformance example: the agent the A2A TCK runs against, its behaviour chosen by each
/// message's id (see CONFORMANCE.md)
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: a2a_examples::Cli,
    #[command(flatten)]
    flags: ConformanceFlags,
}

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    let args = Args::parse();
    a2a_examples::run_with(
        args.common,
        a2a_with(ConformanceAgent::default(), &args.flags),
    )
    .await
}
