//! A model-driven agent: a model routes each message (a direct reply, or a task for one of
//! the skills), narrates while a task runs, and writes the answer as a streamed artifact.

use a2a_kit::llm::{HOW_TO_CONFIGURE, Model, ModelNarrator, ModelRouter, ModelSettings};
use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};

/// Where the model is: `--model`, `--base-url` and `--model-api-key` (or `OPENAI_BASE_URL`,
/// `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). `--api-key` stays what it is in every example:
/// a key callers of this agent present.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// The model's name (e.g. `gpt-4o-mini`, `claude-sonnet-4-5`, `llama3.2` on Ollama).
    #[arg(long)]
    pub model: Option<String>,
    /// An OpenAI-compatible server, with its `/v1` (Ollama: http://127.0.0.1:11434/v1,
    /// llama.cpp: http://127.0.0.1:8080/v1).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The model provider's key (prefer the environment: `OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY`).
    #[arg(long, value_name = "KEY", hide_env_values = true)]
    pub model_api_key: Option<crate::Secret>,
    /// Make the model calls that offer tools whole instead of streamed, for servers that
    /// cannot stream an automatic tool choice (llama.cpp's Python server).
    #[arg(long)]
    pub no_stream_tools: bool,
}

impl ModelArgs {
    /// The model these flags (or the environment) name, or, without one, `None` after one
    /// log line saying what to set.
    pub fn model(&self) -> Option<Model> {
        let settings = ModelSettings::new(
            self.model.clone(),
            self.base_url.clone(),
            self.model_api_key.as_ref().map(|k| k.expose().to_string()),
        );
        match Model::from_settings(&settings) {
            Ok(model) => Some(model),
            Err(how) => {
                tracing::warn!("{how}");
                None
            }
        }
    }
}

/// Answers, explains and writes, with a language model.
#[derive(Clone)]
pub struct LlmAgent {
    model: Option<Model>,
    stream_tools: bool,
}

impl LlmAgent {
    /// The agent on `model` (`None`: every task fails saying what to configure).
    pub fn new(model: Option<Model>) -> Self {
        LlmAgent {
            model,
            stream_tools: true,
        }
    }

    fn model(&self) -> Result<&Model, SkillError> {
        self.model
            .as_ref()
            .ok_or_else(|| SkillError::failed(HOW_TO_CONFIGURE))
    }
}

/// Writes, explains and summarizes with a language model.
#[a2a_agent(name = "Writer")]
impl LlmAgent {
    /// Write what is asked for (an answer, an explanation, a short text), streamed as it is
    /// written.
    #[skill(default, examples = ["Explain what an A2A agent card is"])]
    async fn write(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        self.model()?
            .run(&ctx)
            .system(
                "You are a precise, friendly writer. Answer the user's request in plain text. \
                 When done, put the whole answer in the write_artifact tool.",
            )
            .artifact("answer")
            .stream_tool_turns(self.stream_tools)
            .await
    }

    /// Summarize the text given in three sentences or fewer.
    #[skill(examples = ["Summarize: ..."])]
    async fn summarize(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        self.model()?
            .run(&ctx)
            .system("Summarize the user's text in at most three sentences.")
            .artifact("summary")
            .with_earlier_tasks(false)
            .await
    }
}

/// The agent's service: with a model, the model routes and narrates too. `stream_tools`:
/// see [`ModelArgs::no_stream_tools`].
pub fn a2a(model: Option<Model>, stream_tools: bool) -> AgentServiceBuilder {
    let agent = LlmAgent {
        model: model.clone(),
        stream_tools,
    };
    let builder = AgentService::builder(agent);
    match model {
        Some(model) => builder
            .skill_router(ModelRouter::new(model.clone()).system(
                "You route messages for a writing agent. Use reply_directly only for greetings \
                 and questions about the agent itself; anything to write, explain or summarize \
                 is a task for the `write` or `summarize` skill.",
            ))
            .narrator(ModelNarrator::new(model)),
        None => builder,
    }
}
