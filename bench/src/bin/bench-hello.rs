//! The macro `hello` agent (`a2a_bench::MacroHello`: `examples/`' hello answering with a task).
//! `bench-hello [--bind HOST:PORT] [--store memory|sqlite:PATH] [--max-tasks N]`

#![forbid(unsafe_code)]

a2a_bench::server_allocator!();

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    a2a_bench::serve(a2a_kit::server::AgentService::builder(
        a2a_bench::MacroHello,
    ))
    .await
}
