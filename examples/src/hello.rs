//! The smallest useful agent: one skill that greets by name.
//!
//! A greeting has nothing to track, so the skill answers with a direct Message
//! (`#[skill(message)]`): no task is created, stored or listed. Drop `message` and the same
//! skill answers with a task whose artifact holds the greeting.

use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};

/// The hello agent (it holds no state, but could: clients, pools, config).
#[derive(Clone, Default)]
pub struct HelloAgent;

/// A friendly agent that greets people.
#[a2a_agent(name = "Hello Agent")]
impl HelloAgent {
    /// Greet the user by name.
    #[skill(message, tags = ["greeting"], examples = ["Alice"])]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {}!", name.trim())
    }
}

/// The agent, ready to configure or mount.
pub fn a2a() -> AgentServiceBuilder {
    AgentService::builder(HelloAgent)
}

/// A complete axum app serving the agent at `/` (JSON-RPC and HTTP+JSON) and its card.
pub fn app() -> axum::Router {
    a2a_kit_axum::app(a2a().build().expect("a valid configuration"))
}
