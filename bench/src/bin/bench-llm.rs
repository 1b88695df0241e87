//! A model-driven agent (the `llm` feature): its default skill is a model run
//! (`model.run(&ctx).await`) on an OpenAI-compatible server, the driver's fake model, whose
//! text deltas it streams as artifact chunks (the token latency workload).
//! `bench-llm --model-url http://127.0.0.1:PORT/v1 [--bind HOST:PORT] [--store …]`

#![forbid(unsafe_code)]

use a2a_kit::llm::Model;
use a2a_kit::prelude::*;
use clap::Parser;

a2a_bench::server_allocator!();

/// Writes what the model writes.
#[derive(Clone)]
struct LlmAgent {
    model: Model,
}

/// A model's text, streamed.
#[a2a_agent(name = "LLM Bench")]
impl LlmAgent {
    /// Stream the model's answer.
    #[skill(default)]
    async fn write(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        self.model.run(&ctx).await
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = a2a_bench::ServerCli::parse();
    let url = cli
        .model_url
        .clone()
        .ok_or("bench-llm needs --model-url (an OpenAI-compatible server, with its /v1)")?;
    let model = Model::openai_compatible(url, "", "fake");
    a2a_bench::serve_cli(
        cli,
        a2a_kit::server::AgentService::builder(LlmAgent { model }),
    )
    .await
}
