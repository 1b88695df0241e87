use a2a_kit::prelude::*;

struct Adder;

/// Adds.
#[a2a_agent]
impl Adder {
    /// Add one.
    #[skill]
    async fn add_one(&self, Text(n): Text) -> u64 {
        n.trim().parse::<u64>().unwrap_or(0) + 1
    }
}

fn main() {
    let _ = Adder::agent_card("http://localhost");
}
