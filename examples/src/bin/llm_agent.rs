//! `cargo run --bin llm_agent -- --model NAME [--base-url URL] [--bind HOST:PORT]`
//!
//! With Ollama: `--base-url http://127.0.0.1:11434/v1 --model llama3.2`; with OpenAI:
//! `OPENAI_API_KEY=... --model gpt-4o-mini`; with Anthropic: `ANTHROPIC_API_KEY=...`.
//! Without a model it starts and says in one line what to set.

#![forbid(unsafe_code)]

use clap::Parser;

/// A model-driven agent: routing, narration and a streamed answer.
#[derive(Debug, Parser)]
struct LlmAgentCli {
    #[command(flatten)]
    common: a2a_examples::Cli,
    #[command(flatten)]
    model: a2a_examples::llm_agent::ModelArgs,
}

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    let cli = LlmAgentCli::parse();
    a2a_examples::observe(&cli.common.observe)?;
    let a2a = a2a_examples::llm_agent::a2a(cli.model.model(), !cli.model.no_stream_tools);
    a2a_examples::run_with(cli.common, a2a).await
}
