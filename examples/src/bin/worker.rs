//! `cargo run --bin worker`: the agent `planner` delegates to, on 127.0.0.1:3001 (where the
//! planner looks for it) unless `--bind` says otherwise.

#![forbid(unsafe_code)]

use a2a_examples::{Example, worker};

const WORKER: Example = Example::new(
    "The worker of the delegation example: carries out the jobs the planner hands it (start it first)",
)
.bind(worker::DEFAULT_BIND);

#[tokio::main]
async fn main() -> Result<(), a2a_examples::Error> {
    a2a_examples::run(WORKER, |_| worker::a2a()).await
}
