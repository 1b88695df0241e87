//! `cargo run --bin workshop -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

use a2a_examples::Example;

const WORKSHOP: Example = Example::new(
    "The workshop example: an A2A agent that asks a question, reports progress and streams a build log",
);

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(WORKSHOP, |_| a2a_examples::workshop::a2a()).await
}
