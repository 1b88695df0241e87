use a2a_kit::prelude::*;

struct Hello;

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill(default)]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    /// Say goodbye.
    #[skill(default)]
    async fn bye(&self, Text(name): Text) -> String {
        format!("Bye, {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
