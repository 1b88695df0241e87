use a2a_kit::prelude::*;

struct Hello {
    count: usize,
}

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet(&mut self, Text(name): Text) -> String {
        self.count += 1;
        format!("Hello, {name}!")
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
