use a2a_kit::prelude::*;

struct Counter;

/// Counts.
#[a2a_agent]
impl Counter {
    /// Count to N.
    #[skill]
    async fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n = n.len();
        a2a_kit::stream! { for i in 1..=n { yield i.to_string(); } }
    }
}

fn main() {
    let _ = Counter::agent_card("http://localhost");
}
