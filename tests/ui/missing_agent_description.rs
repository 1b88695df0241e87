use a2a_kit::prelude::*;

struct Hello;

#[a2a_agent(name = "Hello")]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
