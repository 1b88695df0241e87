use a2a_kit::prelude::*;

struct Hello;

struct Name(String);

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet(&self, ctx: TaskContext, name: Name) -> String {
        let _ = ctx;
        format!("Hello, {}!", name.0)
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
