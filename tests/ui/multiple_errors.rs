use a2a_kit::prelude::*;

struct Hello;

/// Says hello.
#[a2a_agent(streming = false)]
impl Hello {
    /// Greet.
    #[skill(id = "greet")]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    #[skill(id = "greet")]
    async fn hello(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
