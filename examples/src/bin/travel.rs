//! `cargo run --bin travel -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

use a2a_examples::Example;

const TRAVEL: Example = Example::new(
    "The travel example: an A2A agent with typed data skills (book a flight, convert money) and a free-text default",
);

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(TRAVEL, |_| a2a_examples::travel::a2a()).await
}
