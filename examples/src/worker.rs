//! The worker half of the delegation example: does the actual work, reporting progress and
//! streaming a report, and can ask a clarifying question. `planner` delegates to it.
//!
//! This module uses only `a2a_kit`, `a2a_kit_axum` and `tokio`, so tests can include it as is.

use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};

/// Where the worker listens unless told otherwise: where the planner looks for it
/// ([`crate::planner::DEFAULT_WORKER_URL`]), beside the planner's own 127.0.0.1:3000.
pub const DEFAULT_BIND: &str = "127.0.0.1:3001";

/// Carries out jobs step by step.
#[derive(Clone)]
pub struct WorkerAgent {
    step: Duration,
}

impl WorkerAgent {
    /// A worker whose steps take `step` each.
    pub fn new(step: Duration) -> Self {
        WorkerAgent { step }
    }
}

impl Default for WorkerAgent {
    fn default() -> Self {
        WorkerAgent::new(Duration::from_millis(400))
    }
}

/// Does the work a planner hands out.
#[a2a_agent(name = "Worker")]
impl WorkerAgent {
    /// Carry out a job in three steps (research, draft, polish), streaming the report one
    /// line per step. Cancel it at any time.
    #[skill(examples = ["write the launch announcement"])]
    async fn work(&self, ctx: TaskContext, Text(job): Text) -> Result<Outcome, SkillError> {
        let job = job.trim().to_string();
        let steps = ["research", "draft", "polish"];
        let mut report = ctx.artifact_writer("report");
        for (i, step) in steps.iter().enumerate() {
            ctx.status(format!("step {}/{}: {step}", i + 1, steps.len()))
                .await?;
            tokio::select! {
                _ = ctx.cancelled() => return Err(SkillError::Canceled),
                _ = tokio::time::sleep(self.step) => {}
            }
            let line = format!("{}. {step}: {job}\n", i + 1);
            if i + 1 == steps.len() {
                report.write_last(line).await?
            } else {
                report.write(line).await?
            }
        }
        Ok(Outcome::done())
    }

    /// Ask who the audience is, then write a one-line brief for them.
    #[skill(examples = ["a product launch"])]
    async fn clarify(&self, ctx: TaskContext, Text(topic): Text) -> Result<String, SkillError> {
        let Text(audience) = ctx
            .ask(format!("Who is the audience for {}?", topic.trim()))
            .await?;
        Ok(format!("Brief: {} for {}.", topic.trim(), audience.trim()))
    }
}

/// The agent with steps of `step`.
pub fn a2a_with(step: Duration) -> AgentServiceBuilder {
    AgentService::builder(WorkerAgent::new(step))
}

/// The agent, ready to configure or mount.
pub fn a2a() -> AgentServiceBuilder {
    AgentService::builder(WorkerAgent::default())
}

/// A complete axum app serving the agent and its card.
pub fn app() -> axum::Router {
    a2a_kit_axum::app(a2a().build().expect("a valid configuration"))
}
