//! A model agent whose tools are other A2A agents: it decides when to ask the writer
//! (`llm_agent`) or the workshop, and writes the final answer from what they said.

use std::sync::Arc;

use a2a_kit::llm::{AgentTool, HOW_TO_CONFIGURE, Model, ModelTool};
use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use tokio::sync::OnceCell;

/// Coordinates other agents with a language model.
#[derive(Clone)]
pub struct Orchestrator {
    model: Option<Model>,
    agents: Arc<Vec<String>>,
    tools: Arc<OnceCell<Vec<Arc<dyn ModelTool>>>>,
    stream_tools: bool,
}

impl Orchestrator {
    /// An orchestrator on `model` that may ask the agents at `agents` (their base URLs).
    pub fn new(model: Option<Model>, agents: Vec<String>, stream_tools: bool) -> Self {
        Orchestrator {
            model,
            agents: Arc::new(agents),
            tools: Arc::default(),
            stream_tools,
        }
    }

    /// The agents as tools, connected on first use (they may start after this one).
    async fn tools(&self) -> Result<&Vec<Arc<dyn ModelTool>>, SkillError> {
        self.tools
            .get_or_try_init(|| async {
                let mut tools: Vec<Arc<dyn ModelTool>> = Vec::new();
                for url in self.agents.iter() {
                    let tool = AgentTool::connect(url).await.map_err(|e| {
                        SkillError::failed(format!("cannot reach the agent at {url}: {e}"))
                    })?;
                    tools.push(Arc::new(tool));
                }
                Ok(tools)
            })
            .await
    }
}

/// Answers by asking the right agents.
#[a2a_agent(name = "Orchestrator")]
impl Orchestrator {
    /// Work out what the user needs, ask the other agents for the parts they do, and write
    /// the answer.
    #[skill(default, examples = ["Have the workshop build a bookshelf and describe it"])]
    async fn orchestrate(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        let model = self
            .model
            .as_ref()
            .ok_or_else(|| SkillError::failed(HOW_TO_CONFIGURE))?;
        let tools = self.tools().await?.clone();
        model
            .run(&ctx)
            .system(
                "You coordinate other agents, available as tools. Ask them for what they do \
                 (answer their questions with the user's words when you can), then write the \
                 final answer with write_artifact.",
            )
            .tools(tools)
            .artifact("answer")
            .stream_tool_turns(self.stream_tools)
            .await
    }
}

/// The orchestrator's service.
pub fn a2a(model: Option<Model>, agents: Vec<String>, stream_tools: bool) -> AgentServiceBuilder {
    AgentService::builder(Orchestrator::new(model, agents, stream_tools))
}
