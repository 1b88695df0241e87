//! `cargo run --bin streaming -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(|_| a2a_examples::streaming::a2a()).await
}
