//! Store benchmark (issue #7, item 6): `cargo bench -p a2a-kit --features sqlite --bench store`
//!
//! 1. Unary SendMessage throughput in-process through `AgentService` (an echo skill; each
//!    message creates a task, runs it to COMPLETED and reads it back), with the in-memory store
//!    and with SQLite on a file, one client at a time and 32 at once. Reports the ratio.
//! 2. Time to page through 100,000 stored tasks with pageSize 100 (1,000 ListTasks calls), for
//!    both stores.
//! 3. One ListTasks of a caller with no task, and of one with 100, among 100,000 tasks of
//!    1,000 owners (issue #29: it cost a scan of every task), for both stores.
//!
//! Environment: `BENCH_MESSAGES` (default 5000), `BENCH_TASKS` (default 100000), `BENCH_ONLY`
//! (`send`, `paging` or `owners`: that part alone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_kit::error::A2aError;
use a2a_kit::protocol::{
    ListTasksRequest, Message, SendMessageRequest, SendMessageResponse, Task, TaskState,
    TaskStatus, Timestamp,
};
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use a2a_kit::skill::IntoOutcome;
use a2a_kit::skill::{Agent, AgentInfo, SkillCall, SkillInfo};
use a2a_kit::skill::{FromSkillRequest, SkillRequest, Text};
use a2a_kit::store::{
    InMemoryConfig, InMemoryTaskManager, ListQuery, Owner, SqliteTaskManager, TaskManager,
};

struct Echo;

static SKILLS: [SkillInfo; 1] = [SkillInfo::new("echo", "Echo the text.")];
static INFO: AgentInfo = AgentInfo {
    name: "Echo",
    description: "Echoes.",
    version: "1.0.0",
    provider: None,
    documentation_url: None,
    icon_url: None,
    default_input_modes: &["text/plain"],
    default_output_modes: &["text/plain"],
    streaming: true,
    push_notifications: false,
    skills: &SKILLS,
};

impl Agent for Echo {
    fn info(&self) -> &'static AgentInfo {
        &INFO
    }
    fn prepare(self: Arc<Self>, skill: &str, req: &SkillRequest) -> Result<SkillCall, A2aError> {
        let Text(t) = Text::from_request(req).map_err(|e| e.into_a2a(skill))?;
        Ok(SkillCall::new(async move { t.into_outcome() }))
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("tasks.db")
}

fn memory() -> InMemoryTaskManager {
    InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 1_000_000,
        terminal_ttl: None,
    })
}

/// Send `n` messages from `clients` concurrent clients; returns messages per second.
async fn send_throughput(service: &AgentService, n: usize, clients: usize) -> f64 {
    let start = Instant::now();
    let per = n / clients;
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let service = service.clone();
            tokio::spawn(async move {
                for i in 0..per {
                    let req = SendMessageRequest {
                        message: Message::user_text(format!("hello {c}-{i}")),
                        ..Default::default()
                    };
                    match service
                        .send_message(&RequestContext::new(), req)
                        .await
                        .expect("send")
                    {
                        SendMessageResponse::Task(t) => {
                            assert_eq!(t.status.state, TaskState::Completed)
                        }
                        SendMessageResponse::Message(_) => panic!("expected a task"),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("client");
    }
    (per * clients) as f64 / start.elapsed().as_secs_f64()
}

async fn bench_send(n: usize) {
    println!("== unary SendMessage through AgentService ({n} messages per run) ==");
    for clients in [1usize, 32] {
        let mem = AgentService::builder(Echo)
            .task_manager(memory())
            .build()
            .expect("a valid configuration");
        // Warm up both paths.
        send_throughput(&mem, 200.min(n), 1).await;
        let mem_rate = send_throughput(&mem, n, clients).await;

        let path = temp_db(&format!("send-{clients}"));
        let store = SqliteTaskManager::open(&path).await.expect("open sqlite");
        let sql = AgentService::builder(Echo)
            .task_manager(store)
            .build()
            .expect("a valid configuration");
        send_throughput(&sql, 200.min(n), 1).await;
        let sql_rate = send_throughput(&sql, n, clients).await;
        drop(sql);
        let _ = std::fs::remove_dir_all(path.parent().expect("dir"));

        println!(
            "clients={clients:>2}  in-memory {mem_rate:>9.0} msg/s   sqlite {sql_rate:>9.0} msg/s   sqlite/in-memory = {:.2}",
            sql_rate / mem_rate
        );
    }
}

async fn fill(store: Arc<dyn TaskManager>, n: usize) -> Duration {
    fill_owned(store, n, |_| None).await
}

/// Store `n` tasks (a third WORKING, the rest COMPLETED, a millisecond apart, in 100
/// contexts), task `i` owned by `owner(i)`.
async fn fill_owned(
    store: Arc<dyn TaskManager>,
    n: usize,
    owner: fn(usize) -> Option<Owner>,
) -> Duration {
    let start = Instant::now();
    let base = Timestamp::now().0.timestamp_millis() - n as i64;
    let writers = 4;
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (w..n).step_by(writers) {
                    let ts = chrono::DateTime::from_timestamp_millis(base + i as i64).expect("ts");
                    let task = Task {
                        id: format!("task-{i:06}"),
                        context_id: format!("ctx-{}", i % 100),
                        status: TaskStatus {
                            state: if i % 3 == 0 {
                                TaskState::Working
                            } else {
                                TaskState::Completed
                            },
                            message: None,
                            timestamp: Some(Timestamp::from(ts)),
                        },
                        history: vec![Message::user_text(format!("message {i}"))],
                        ..Default::default()
                    };
                    store
                        .create_task(task, Some("echo".into()), owner(i))
                        .await
                        .expect("create");
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("writer");
    }
    start.elapsed()
}

/// Page through everything through `AgentService::list_tasks` (the ListTasks operation);
/// returns the elapsed time and the number of pages.
async fn walk(service: &AgentService, context: Option<&str>) -> (Duration, usize, usize) {
    let start = Instant::now();
    let mut token = None;
    let mut pages = 0;
    let mut seen = 0;
    loop {
        let req = ListTasksRequest {
            page_size: Some(100),
            page_token: token.take(),
            context_id: context.map(str::to_string),
            ..Default::default()
        };
        let page = service
            .list_tasks(&RequestContext::new(), req)
            .await
            .expect("list");
        pages += 1;
        seen += page.tasks.len();
        if page.next_page_token.is_empty() {
            break;
        }
        token = Some(page.next_page_token);
    }
    (start.elapsed(), pages, seen)
}

async fn bench_paging(n: usize) {
    println!("== paging through {n} stored tasks, pageSize 100 ==");
    let path = temp_db("paging");
    let sqlite: Arc<dyn TaskManager> =
        Arc::new(SqliteTaskManager::open(&path).await.expect("open sqlite"));
    let mem: Arc<dyn TaskManager> = Arc::new(memory());
    for (name, store) in [("in-memory", mem), ("sqlite", sqlite)] {
        let filled = fill(store.clone(), n).await;
        let service = AgentService::builder(Echo)
            .shared_task_manager(store)
            .build()
            .expect("a valid configuration");
        let (all, pages, seen) = walk(&service, None).await;
        assert_eq!(seen, n);
        let (ctx, ctx_pages, ctx_seen) = walk(&service, Some("ctx-7")).await;
        println!(
            "{name:>9}: insert {n} tasks {:>7.2} s ({:>6.0} tasks/s) | all {pages} pages {:>7.3} s ({:.2} ms/page) | \
             one context ({ctx_seen} tasks, {ctx_pages} pages) {:.3} s",
            filled.as_secs_f64(),
            n as f64 / filled.as_secs_f64(),
            all.as_secs_f64(),
            all.as_secs_f64() * 1000.0 / pages as f64,
            ctx.as_secs_f64(),
        );
    }
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

/// The mean time of one ListTasks (pageSize 100) of `owner`'s tasks in `state` (any, if
/// `None`), over `calls` calls, and what the last one returned (tasks on the page, total).
async fn list_of(
    store: &dyn TaskManager,
    owner: &str,
    state: Option<TaskState>,
    calls: usize,
) -> (Duration, usize, i32) {
    let query = ListQuery {
        owner: Owner::new(Some("acme"), Some(owner)),
        status: state,
        page_size: 100,
        ..Default::default()
    };
    let start = Instant::now();
    let mut last = None;
    for _ in 0..calls {
        last = Some(store.list_tasks(&query).await.expect("list"));
    }
    let last = last.expect("calls > 0");
    (
        start.elapsed() / calls as u32,
        last.tasks.len(),
        last.total_size,
    )
}

async fn bench_owners(n: usize) {
    println!("== one caller's ListTasks among {n} tasks of 1000 owners, pageSize 100 ==");
    let path = temp_db("owners");
    let sqlite: Arc<dyn TaskManager> =
        Arc::new(SqliteTaskManager::open(&path).await.expect("open sqlite"));
    let mem: Arc<dyn TaskManager> = Arc::new(memory());
    for (name, store) in [("in-memory", mem), ("sqlite", sqlite)] {
        // Owner `user-k` holds tasks k, k + 1000, ... (100 of them at the default n).
        fill_owned(store.clone(), n, |i| {
            Owner::new(Some("acme"), Some(&format!("user-{}", i % 1000)))
        })
        .await;
        let (none, listed, total) = list_of(&*store, "nobody", None, 200).await;
        assert_eq!((listed, total), (0, 0));
        let working = Some(TaskState::Working);
        let (none_working, listed, total) = list_of(&*store, "nobody", working, 200).await;
        assert_eq!((listed, total), (0, 0));
        let (some, listed, total) = list_of(&*store, "user-7", None, 200).await;
        assert_eq!(listed, total.min(100) as usize);
        println!(
            "{name:>9}: a caller with no task {:>9.1} µs ({:>9.1} µs asking for WORKING ones) | \
             one with {total} tasks (a page of {listed}) {:>9.1} µs",
            none.as_secs_f64() * 1e6,
            none_working.as_secs_f64() * 1e6,
            some.as_secs_f64() * 1e6,
        );
    }
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let messages = if quick {
        100
    } else {
        env_usize("BENCH_MESSAGES", 5000)
    };
    let tasks = if quick {
        1000
    } else {
        env_usize("BENCH_TASKS", 100_000)
    };
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let run = |part: &str| only.is_empty() || only == part;
    rt.block_on(async {
        if run("send") {
            bench_send(messages).await;
        }
        if run("paging") {
            bench_paging(tasks).await;
        }
        if run("owners") {
            bench_owners(tasks).await;
        }
    });
}
