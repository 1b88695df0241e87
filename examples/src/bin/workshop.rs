//! `cargo run --bin workshop -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(|_| a2a_examples::workshop::a2a()).await
}
