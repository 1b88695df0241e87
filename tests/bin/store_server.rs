//! The [`TestAgent`](a2a_tests::TestAgent) served on a durable store, for tests that run real
//! server processes (crash recovery).
//!
//! `store_server --store sqlite:PATH|postgres://… [--schema NAME] [--lease MS] [--bind 127.0.0.1:0] [--push]`
//!
//! `--push` delivers push notifications (private addresses allowed, up to 50 attempts 200 ms
//! apart), for tests of deliveries that outlive a crash.
//!
//! Prints `listening on http://ADDR` on stdout once bound (so `--bind 127.0.0.1:0` works), then
//! serves until SIGINT/SIGTERM. At start-up it ends the tasks a previous process left SUBMITTED
//! or WORKING (`a2a_kit_axum::serve_service` runs `AgentService::recover`).

use std::io::Write;
use std::time::Duration;

use a2a_kit::server::AgentService;
use a2a_kit::store::{PostgresOptions, PostgresTaskManager, SqliteTaskManager, TaskManager};
use a2a_kit_axum::shutdown_signal;
use a2a_tests::TestAgent;

#[tokio::main]
async fn main() {
    let mut store = None;
    let mut schema = String::from("a2a");
    let mut lease_ms: u64 = 30_000;
    let mut bind = String::from("127.0.0.1:0");
    let mut push = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--store" => store = args.next(),
            "--schema" => {
                schema = args
                    .next()
                    .unwrap_or_else(|| usage("--schema needs a name"))
            }
            "--lease" => {
                lease_ms = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage("--lease needs milliseconds"))
            }
            "--push" => push = true,
            "--bind" => {
                bind = args
                    .next()
                    .unwrap_or_else(|| usage("--bind needs an address"))
            }
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    let spec = store.unwrap_or_else(|| usage("--store sqlite:PATH or postgres://… is required"));
    let store: std::sync::Arc<dyn TaskManager> = if spec.starts_with("postgres://") {
        let options = PostgresOptions::default()
            .schema(&schema)
            .lease(Duration::from_millis(lease_ms));
        let store = PostgresTaskManager::connect_with(&spec, options)
            .await
            .unwrap_or_else(|e| {
                eprintln!("store_server: cannot connect to PostgreSQL: {e}");
                std::process::exit(1);
            });
        std::sync::Arc::new(store)
    } else {
        let path = spec
            .strip_prefix("sqlite:")
            .unwrap_or_else(|| usage("the store must be sqlite:PATH or postgres://…"));
        let store = SqliteTaskManager::open(path).await.unwrap_or_else(|e| {
            eprintln!("store_server: cannot open {path}: {e}");
            std::process::exit(1);
        });
        std::sync::Arc::new(store)
    };
    let listener = tokio::net::TcpListener::bind(&bind)
        .await
        .unwrap_or_else(|e| {
            eprintln!("store_server: cannot bind {bind}: {e}");
            std::process::exit(1);
        });
    let addr = listener.local_addr().expect("bound address");
    let mut a2a = AgentService::builder(TestAgent);
    if push {
        a2a = a2a.push_delivery(
            a2a_kit::push::PushConfig::default()
                .allow_private_networks()
                .retry(a2a_kit::push::RetryPolicy {
                    max_attempts: 50,
                    initial_backoff: Duration::from_millis(200),
                    max_backoff: Duration::from_millis(200),
                    jitter: false,
                    ..Default::default()
                }),
        );
    }
    let service = a2a
        .public_url(format!("http://{addr}"))
        .shared_task_manager(store)
        .push_notifications(true)
        .execution(a2a_kit::runtime::ExecutionConfig {
            cancel_grace: Duration::from_millis(300),
            // The tests drive it from one address as many clients would.
            per_caller: a2a_kit::runtime::CallerShare {
                running_skills: 1024,
                waiting_skills: 10_000,
                live_tasks: 100_000,
            },
            ..Default::default()
        })
        .build()
        .expect("a valid configuration");
    println!("listening on http://{addr}");
    let _ = std::io::stdout().flush();
    if let Err(e) = a2a_kit_axum::serve_service(service, listener, shutdown_signal()).await {
        eprintln!("store_server: {e}");
        std::process::exit(1);
    }
}

fn usage(why: &str) -> ! {
    eprintln!(
        "store_server: {why}\nusage: store_server --store sqlite:PATH|postgres://… [--schema NAME] [--lease MS] [--bind HOST:PORT] [--push]"
    );
    std::process::exit(2);
}
