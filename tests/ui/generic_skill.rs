use a2a_kit::prelude::*;

struct Hello;

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet<T: Send>(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
