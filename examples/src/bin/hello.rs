//! `cargo run --bin hello -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(|_| a2a_examples::hello::a2a()).await
}
