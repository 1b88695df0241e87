//! `cargo run --bin llm_orchestrator -- --model NAME [--agent URL]... [--bind HOST:PORT]`
//!
//! Start the agents it uses first, e.g. `cargo run --bin llm_agent -- --bind 127.0.0.1:3001
//! --model ...` and `cargo run --bin workshop -- --bind 127.0.0.1:3002`.

#![forbid(unsafe_code)]

use clap::Parser;

/// A model agent that uses other A2A agents as its tools.
#[derive(Debug, Parser)]
struct OrchestratorCli {
    #[command(flatten)]
    common: a2a_examples::Cli,
    #[command(flatten)]
    model: a2a_examples::llm_agent::ModelArgs,
    /// An agent to offer the model as a tool (repeatable; default: the writer on :3001 and
    /// the workshop on :3002).
    #[arg(long = "agent", value_name = "URL")]
    agents: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    let cli = OrchestratorCli::parse();
    a2a_examples::observe(&cli.common.observe)?;
    let agents = if cli.agents.is_empty() {
        vec![
            "http://127.0.0.1:3001".to_string(),
            "http://127.0.0.1:3002".to_string(),
        ]
    } else {
        cli.agents
    };
    let a2a =
        a2a_examples::llm_orchestrator::a2a(cli.model.model(), agents, !cli.model.no_stream_tools);
    a2a_examples::run_with(cli.common, a2a).await
}
