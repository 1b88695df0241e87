//! The streaming agent (`a2a_bench::StreamAgent`: skills `count`, `pace`, `hold`, `ask`,
//! `sleep` and `chat`).
//! `bench-stream [--bind HOST:PORT] [--store memory|sqlite:PATH] [--max-tasks N]
//! [--rate-limit N] [--allow-private-webhooks]`

#![forbid(unsafe_code)]

a2a_bench::server_allocator!();

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    a2a_bench::serve(a2a_kit::server::AgentService::builder(
        a2a_bench::StreamAgent,
    ))
    .await
}
