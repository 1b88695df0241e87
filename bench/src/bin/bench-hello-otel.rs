//! The macro `hello` agent (`a2a_bench::MacroHello`, as `bench-hello`) with its spans and
//! metrics exported over OTLP (feature `otel`, #33): `a2a_kit::observe::otel::Otel::from_env()`
//! as the `OTEL_*` variables say (the driver points `OTEL_EXPORTER_OTLP_ENDPOINT` at a sink of
//! its own that answers every export with an empty 200), its `tracing` layer the only one of
//! the subscriber, and its `metrics` recorder the process's, both installed before the agent is
//! built. The W1 row "OTLP export on".
//! `bench-hello-otel [--bind HOST:PORT] [--store memory|sqlite:PATH] [--max-tasks N]`

#![forbid(unsafe_code)]

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

a2a_bench::server_allocator!();

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Inside the runtime: the exports run on it. Kept to the end of the program: the last
    // handle of a provider shuts it down when dropped.
    let otel = a2a_kit::observe::otel::Otel::from_env()?;
    tracing_subscriber::registry()
        .with(otel.tracing_layer())
        .try_init()?;
    a2a_kit::observe::metrics::install(vec![Box::new(otel.metrics_recorder())])?;
    let served = a2a_bench::serve(a2a_kit::server::AgentService::builder(
        a2a_bench::MacroHello,
    ))
    .await;
    otel.shutdown();
    served
}
