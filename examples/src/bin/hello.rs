//! `cargo run --bin hello -- [--bind HOST:PORT] [--print-card] [--store sqlite:PATH]`

#![forbid(unsafe_code)]

use a2a_examples::Example;

const HELLO: Example =
    Example::new("The hello example: the smallest A2A agent, one skill that greets you by name");

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(HELLO, |_| a2a_examples::hello::a2a()).await
}
