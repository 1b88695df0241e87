//! `cargo run --bin worker -- --bind 127.0.0.1:3001`: the agent `planner` delegates to.

#![forbid(unsafe_code)]

use a2a_examples::worker;

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(|_| worker::a2a()).await
}
