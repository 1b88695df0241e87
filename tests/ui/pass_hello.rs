//! The design notes' first example.
use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;

#[derive(Clone, Default)]
struct HelloAgent;

/// A friendly agent that greets people.
#[a2a_agent(name = "Hello Agent")]
impl HelloAgent {
    /// Greet the user by name.
    #[skill(tags = ["greeting"], examples = ["Alice"])]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    /// Count to N.
    #[skill]
    #[streaming]
    fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n: u32 = n.trim().parse().unwrap_or(5);
        a2a_kit::stream! { for i in 1..=n { yield format!("{i}\n"); } }
    }
}

fn main() {
    let card = HelloAgent::agent_card("http://127.0.0.1:3000");
    assert_eq!(card.skills[0].id, "greet");
    let _service = AgentService::builder(HelloAgent).build().expect("a valid configuration");
}
