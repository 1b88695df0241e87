//! A streaming skill: each yielded item is one chunk of the task's artifact.

use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};

/// Counts out loud.
#[derive(Clone, Default)]
pub struct CounterAgent;

/// Counts from 1 to N, streaming one artifact chunk per number.
#[a2a_agent(name = "Counter")]
impl CounterAgent {
    /// Count from 1 to N (default 5, at most 100000), one chunk per number.
    #[skill(examples = ["5", "1000"])]
    #[streaming]
    fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n: u32 = n.trim().parse().unwrap_or(5).min(100_000);
        a2a_kit::stream! {
            for i in 1..=n {
                yield format!("{i}\n");
            }
        }
    }
}

/// The agent, ready to configure or mount.
pub fn a2a() -> AgentServiceBuilder {
    AgentService::builder(CounterAgent)
}

/// A complete axum app serving the agent and its card.
pub fn app() -> axum::Router {
    a2a_kit_axum::app(a2a().build().expect("a valid configuration"))
}
