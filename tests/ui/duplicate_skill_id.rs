use a2a_kit::prelude::*;

struct Hello;

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    /// Greet warmly.
    #[skill(id = "greet")]
    async fn greet_warmly(&self, Text(name): Text) -> String {
        format!("Hello, dear {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
