//! The whole task pipeline in one agent: progress statuses, a chunked artifact, a question to
//! the user (INPUT_REQUIRED), cancellation-aware work, and periodic status narration; and a
//! typed skill (`Data<Order>` in, `Data<Quote>` out) that fails when the wood runs short.

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::runtime::{ExecutionConfig, NarrationContext, StatusNarrator};
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A finish the workshop offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    /// Oiled oak.
    Oak,
    /// Walnut veneer: scarce.
    Walnut,
    /// Two coats of paint.
    Paint,
}

/// What to quote for.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Order {
    /// What to build, e.g. "bookshelf".
    pub thing: String,
    /// How many (1-12).
    #[schemars(range(min = 1, max = 12))]
    pub quantity: u8,
    /// The finish.
    pub finish: Finish,
}

/// A price and a lead time.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Quote {
    /// What was quoted.
    pub thing: String,
    /// How many.
    pub quantity: u8,
    /// The finish.
    pub finish: Finish,
    /// The total, in euros.
    pub price_eur: u32,
    /// Working days until delivery.
    pub days: u32,
}

/// Walnut veneer in stock: enough for this many pieces.
const WALNUT_IN_STOCK: u8 = 4;

/// Builds things, slowly, and talks about it.
#[derive(Clone)]
pub struct WorkshopAgent {
    step: Duration,
}

impl WorkshopAgent {
    /// A workshop whose build steps take `step` each.
    pub fn new(step: Duration) -> Self {
        WorkshopAgent { step }
    }
}

impl Default for WorkshopAgent {
    fn default() -> Self {
        WorkshopAgent::new(Duration::from_millis(400))
    }
}

/// A workshop that plans a build, asks for the finish, then builds it piece by piece.
#[a2a_agent(name = "Workshop")]
impl WorkshopAgent {
    /// Build the named thing: reports progress, asks which finish you want, then writes the
    /// build log as one artifact in chunks. Cancel it at any time.
    #[skill(default, examples = ["a bookshelf"])]
    async fn build(&self, ctx: TaskContext, Text(thing): Text) -> Result<Outcome, SkillError> {
        let thing = thing.trim().to_string();
        ctx.status(format!("Planning {thing}")).await?;
        let mut question = format!("Which finish for {thing}: oak, walnut or paint?");
        let finish = loop {
            let Text(answer) = ctx.ask(question).await?;
            let answer = answer.trim().to_lowercase();
            if ["oak", "walnut", "paint"].contains(&answer.as_str()) {
                break answer;
            }
            question = format!("`{answer}` is not a finish I have: oak, walnut or paint?");
        };
        // Gathering the materials takes a while before anything is built: the narrator speaks
        // meanwhile (it stops at the first artifact).
        ctx.status(format!("Gathering materials for {thing} in {finish}"))
            .await?;
        tokio::select! {
            _ = ctx.cancelled() => return Err(SkillError::Canceled),
            _ = tokio::time::sleep(self.step * 3) => {}
        }
        let steps = [
            "cut the parts",
            "sand them",
            "assemble",
            &format!("apply the {finish} finish"),
        ];
        let mut log = ctx.artifact_writer("build-log");
        for (i, step) in steps.iter().enumerate() {
            ctx.status(format!("Step {}/{}: {step}", i + 1, steps.len()))
                .await?;
            tokio::select! {
                _ = ctx.cancelled() => return Err(SkillError::Canceled),
                _ = tokio::time::sleep(self.step) => {}
            }
            let line = format!("{}. {step}\n", i + 1);
            if i + 1 == steps.len() {
                log.write_last(line).await?
            } else {
                log.write(line).await?
            }
        }
        Ok(Outcome::done().with_status_text(format!("Done: {thing}, finished in {finish}.")))
    }

    /// Quote a price and lead time for an order. Fails when the workshop cannot source the
    /// finish (walnut is scarce).
    #[skill]
    async fn quote(&self, Data(order): Data<Order>) -> Result<Data<Quote>, SkillError> {
        let thing = order.thing.trim();
        if thing.is_empty() {
            return Err(SkillError::rejected("thing: name what to build"));
        }
        if !(1..=12).contains(&order.quantity) {
            return Err(SkillError::rejected(format!(
                "quantity: the workshop quotes 1 to 12 pieces, not {}",
                order.quantity
            )));
        }
        if order.finish == Finish::Walnut && order.quantity > WALNUT_IN_STOCK {
            return Err(SkillError::Failed(format!(
                "not enough walnut veneer for {} × {thing}: {WALNUT_IN_STOCK} in stock",
                order.quantity
            )));
        }
        let per_piece = match order.finish {
            Finish::Oak => 180,
            Finish::Walnut => 260,
            Finish::Paint => 120,
        };
        Ok(Data(Quote {
            thing: thing.to_string(),
            quantity: order.quantity,
            finish: order.finish,
            price_eur: per_piece * u32::from(order.quantity),
            days: 3 + 2 * u32::from(order.quantity),
        }))
    }
}

/// Narrates long builds: elapsed time and the steps reported so far, never repeating itself.
pub struct ElapsedNarrator;

#[a2a_kit::async_trait]
impl StatusNarrator for ElapsedNarrator {
    async fn narrate(&self, n: &NarrationContext) -> Option<String> {
        let text = format!(
            "Still working on it: {}s elapsed, {} update(s) so far",
            n.elapsed.as_secs(),
            n.recent_statuses.len()
        );
        (!n.recent_statuses.contains(&text)).then_some(text)
    }
}

/// The agent with narration every `every`.
pub fn a2a_with(agent: WorkshopAgent, every: Duration) -> AgentServiceBuilder {
    AgentService::builder(agent).execution(ExecutionConfig {
        narrator: Some(Arc::new(ElapsedNarrator)),
        narration_interval: every,
        ..Default::default()
    })
}

/// The agent, ready to configure or mount (narration every second: the materials take 1.2 s).
pub fn a2a() -> AgentServiceBuilder {
    a2a_with(WorkshopAgent::default(), Duration::from_secs(1))
}

/// A complete axum app serving the agent and its card.
pub fn app() -> axum::Router {
    a2a_kit_axum::app(a2a().build().expect("a valid configuration"))
}
