use a2a_kit::prelude::*;

struct Counter;

/// Counts.
#[a2a_agent]
impl Counter {
    /// Count to N.
    #[skill]
    #[streaming]
    fn count(&self, Text(n): Text) -> impl Stream<Item = u32> + Send + 'static {
        let n = n.len() as u32;
        a2a_kit::stream! { for i in 1..=n { yield i; } }
    }
}

fn main() {
    let _ = Counter::agent_card("http://localhost");
}
