//! `cargo run --bin worker -- --bind 127.0.0.1:3001`: the agent `planner` delegates to.

#![forbid(unsafe_code)]

use a2a_examples::worker;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    a2a_examples::run(|_| worker::a2a()).await
}
