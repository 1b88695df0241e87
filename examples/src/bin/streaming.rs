//! `cargo run --bin streaming -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

use a2a_examples::Example;

const STREAMING: Example = Example::new(
    "The streaming example: an A2A agent that counts to N, one artifact chunk per number",
);

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(STREAMING, |_| a2a_examples::streaming::a2a()).await
}
