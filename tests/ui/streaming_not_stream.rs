use a2a_kit::prelude::*;

struct Counter;

/// Counts.
#[a2a_agent]
impl Counter {
    /// Count to N.
    #[skill]
    #[streaming]
    fn count(&self, Text(n): Text) -> Vec<String> {
        (1..=n.len()).map(|i| i.to_string()).collect()
    }
}

fn main() {
    let _ = Counter::agent_card("http://localhost");
}
