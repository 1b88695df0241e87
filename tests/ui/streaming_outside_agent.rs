use a2a_kit::prelude::*;

/// Count to N.
#[streaming]
fn count(n: u32) -> impl Stream<Item = String> + Send + 'static {
    futures::stream::iter((1..=n).map(|i| i.to_string()))
}

fn main() {
    let _ = count(3);
}
