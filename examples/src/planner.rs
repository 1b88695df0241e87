//! The planner half of the delegation example: it hands the work to the `worker` agent with
//! one call, [`RemoteAgent::delegate`]. The worker's progress shows up as the planner's own
//! status updates, its report streams into the planner's task chunk by chunk, its questions
//! are relayed to the planner's user, and canceling the planner's task cancels the worker's.
//!
//! This module uses only `a2a_kit`, `a2a_kit_axum` and `tokio`, so tests can include it as is.

use std::sync::Arc;

use a2a_kit::client::{A2aClient, Binding, ClientError, DelegateOptions, RemoteAgent, SendRequest};
use a2a_kit::prelude::*;
use a2a_kit::protocol::TaskState;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use tokio::sync::OnceCell;

/// Where the planner looks for the worker unless told otherwise: where the worker listens by
/// default ([`crate::worker::DEFAULT_BIND`]).
pub const DEFAULT_WORKER_URL: &str = "http://127.0.0.1:3001";

/// Plans, and lets a worker agent do the work.
#[derive(Clone)]
pub struct PlannerAgent {
    worker_url: String,
    /// The binding to reach the worker over (default: the worker card's preferred one).
    binding: Option<Binding>,
    worker: Arc<OnceCell<RemoteAgent>>,
}

impl PlannerAgent {
    /// A planner delegating to the agent at `worker_url` (connected on first use).
    pub fn new(worker_url: impl Into<String>) -> Self {
        PlannerAgent {
            worker_url: worker_url.into(),
            binding: None,
            worker: Arc::new(OnceCell::new()),
        }
    }

    /// Reach the worker over `binding` (JSON-RPC, HTTP+JSON or gRPC) rather than its card's
    /// first choice.
    pub fn over(mut self, binding: Binding) -> Self {
        self.binding = Some(binding);
        self
    }

    async fn worker(&self) -> Result<&RemoteAgent, SkillError> {
        self.worker
            .get_or_try_init(|| async {
                let builder = A2aClient::builder();
                let builder = match self.binding {
                    Some(binding) => builder.binding(binding),
                    None => builder,
                };
                let client = builder.connect(&self.worker_url).await?;
                let options = DelegateOptions {
                    status_prefix: "worker: ".into(),
                    ..DelegateOptions::default()
                };
                Ok::<_, ClientError>(RemoteAgent::new(client).with_options(options))
            })
            .await
            .map_err(|e| {
                SkillError::failed(format!(
                    "the worker agent at {} is unavailable: {e}",
                    self.worker_url
                ))
            })
    }
}

/// Turns goals into work for the worker agent.
#[a2a_agent(name = "Planner")]
impl PlannerAgent {
    /// Plan a goal and have the worker carry it out (what a message naming no skill asks);
    /// the worker's progress and report stream
    /// through this task, followed by a summary.
    #[skill(default, examples = ["launch a newsletter"])]
    async fn plan(&self, ctx: TaskContext, Text(goal): Text) -> Result<Outcome, SkillError> {
        let goal = goal.trim().to_string();
        ctx.status(format!("Planning: {goal}")).await?;
        let worker = self.worker().await?;
        let result = worker
            .delegate(&ctx, SendRequest::text(goal.clone()).skill("work"))
            .await?;
        if result.state() == Some(TaskState::Completed) {
            let summary = format!(
                "Plan for \"{goal}\" carried out by the worker ({} report chunks).",
                result.artifacts_forwarded
            );
            ctx.artifact(Artifact::new(vec![Part::text(summary)]).with_name("summary"))
                .await?;
        }
        Ok(result.into_outcome())
    }

    /// Prepare a brief with the worker, relaying its question about the audience.
    #[skill(examples = ["a product launch"])]
    async fn brief(&self, ctx: TaskContext, Text(topic): Text) -> Result<Outcome, SkillError> {
        let worker = self.worker().await?;
        let result = worker
            .delegate(&ctx, SendRequest::text(topic).skill("clarify"))
            .await?;
        Ok(result.into_outcome())
    }
}

/// The agent delegating to `worker_url`.
pub fn a2a(worker_url: &str) -> AgentServiceBuilder {
    AgentService::builder(PlannerAgent::new(worker_url))
}

/// The agent delegating to `worker_url` over `binding`.
pub fn a2a_over(worker_url: &str, binding: Binding) -> AgentServiceBuilder {
    AgentService::builder(PlannerAgent::new(worker_url).over(binding))
}

/// A complete axum app serving the agent and its card.
pub fn app(worker_url: &str) -> axum::Router {
    a2a_kit_axum::app(a2a(worker_url).build().expect("a valid configuration"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_planner_looks_for_the_worker_where_it_listens() {
        assert_eq!(
            super::DEFAULT_WORKER_URL,
            format!("http://{}", crate::worker::DEFAULT_BIND)
        );
        assert_ne!(crate::worker::DEFAULT_BIND, crate::DEFAULT_BIND);
    }
}
