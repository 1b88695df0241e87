//! Where the memory of a retained task goes (the W3 analysis): serves the macro hello agent
//! in-process (no HTTP), sends N blocking SendMessage requests (the W1 request), and counts
//! live heap bytes with a counting allocator: in total per task, and the deep size of the
//! stored task and of its event log (measured as the bytes a deep clone allocates).
//!
//! `bench-task-memory [N] [OWNERS]` (default 20,000 tasks, of nobody). With `OWNERS`, task `i`
//! is sent to tenant `i % OWNERS`, so it has an owner and the store indexes it under it (the
//! in-memory store's ListTasks index costs most with one task per owner). Not part of the
//! benchmark run; a diagnostic.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

use a2a_kit::protocol::SendMessageRequest;
use a2a_kit::server::AgentService;
use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager, TaskView};

/// Live bytes as requested, and as glibc malloc would hold them (chunk = size + 8 rounded up
/// to 16, at least 32).
struct Counting;
static REQUESTED: AtomicI64 = AtomicI64::new(0);
static CHUNKS: AtomicI64 = AtomicI64::new(0);
static COUNT: AtomicI64 = AtomicI64::new(0);
/// Allocation calls ever made (not net): the allocation cost of a request.
static CALLS: AtomicI64 = AtomicI64::new(0);

fn chunk(size: usize) -> i64 {
    ((size + 8).div_ceil(16) * 16).max(32) as i64
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        REQUESTED.fetch_add(l.size() as i64, Ordering::Relaxed);
        CHUNKS.fetch_add(chunk(l.size()), Ordering::Relaxed);
        COUNT.fetch_add(1, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        REQUESTED.fetch_sub(l.size() as i64, Ordering::Relaxed);
        CHUNKS.fetch_sub(chunk(l.size()), Ordering::Relaxed);
        COUNT.fetch_sub(1, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        REQUESTED.fetch_add(new as i64 - l.size() as i64, Ordering::Relaxed);
        CHUNKS.fetch_add(chunk(new) - chunk(l.size()), Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn snap() -> (i64, i64, i64) {
    (
        REQUESTED.load(Ordering::Relaxed),
        CHUNKS.load(Ordering::Relaxed),
        COUNT.load(Ordering::Relaxed),
    )
}

/// Heap bytes (requested, chunks, allocations) a closure leaves allocated (e.g. a deep clone).
fn deep<T>(f: impl FnOnce() -> T) -> ((i64, i64, i64), T) {
    let a = snap();
    let v = f();
    let b = snap();
    ((b.0 - a.0, b.1 - a.1, b.2 - a.2), v)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let owners: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let cx_of = |i: usize| match owners {
        0 => a2a_kit::request::RequestContext::new(),
        m => a2a_kit::request::RequestContext::new().with_tenant(format!("tenant-{}", i % m)),
    };
    let store = InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: n * 2 + 10,
        ..InMemoryConfig::default()
    });
    let service = AgentService::builder(a2a_bench::MacroHello)
        .task_manager(store)
        .build()
        .expect("a valid configuration");
    let text = "Alice Pleasance Liddell, who followed a white rabbit down a hole and found a strange world of wonder";
    let params = format!(
        r#"{{"message":{{"messageId":"bench-w1","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}"#
    );
    let req = || serde_json::from_str::<SendMessageRequest>(&params).expect("request");
    // Warm-up.
    for _ in 0..100 {
        let cx = a2a_kit::request::RequestContext::new();
        service.send_message(&cx, req()).await.expect("send");
    }
    tokio::task::yield_now().await;
    let before = snap();
    let calls_before = CALLS.load(Ordering::Relaxed);
    let mut last = String::new();
    for i in 0..n {
        let r = service.send_message(&cx_of(i), req()).await.expect("send");
        if let a2a_kit::protocol::SendMessageResponse::Task(t) = r {
            last = t.id;
        }
    }
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let after = snap();
    let calls = CALLS.load(Ordering::Relaxed) - calls_before;
    let per = |i: usize| -> f64 {
        let (a, b) = (before, after);
        let d = [a.0 - b.0, a.1 - b.1, a.2 - b.2][i];
        -(d as f64) / n as f64
    };
    println!(
        "{n} retained tasks ({}), live heap per task: {:.0} B requested, {:.0} B in malloc chunks, {:.1} allocations",
        match owners {
            0 => String::from("no owner"),
            m => format!("{m} owners"),
        },
        per(0),
        per(1),
        per(2)
    );
    println!(
        "allocation calls per SendMessage (in-process: parsing the params, the task, the response value; no HTTP, no serialization): {:.1}",
        calls as f64 / n as f64
    );

    let store = service.task_manager();
    let a = snap();
    let rec = store
        .get_task(&last, TaskView::FULL)
        .await
        .expect("get")
        .expect("task");
    let b = snap();
    let task_size = (b.0 - a.0, b.1 - a.1, b.2 - a.2);
    let a = snap();
    let log = store.events_after(&last, 0, usize::MAX).await.expect("log");
    let b = snap();
    let log_size = (b.0 - a.0, b.1 - a.1, b.2 - a.2);
    println!(
        "one task: the Task value (deep, without its inline {} B) {} B requested / {} B chunks / {} allocations",
        std::mem::size_of::<a2a_kit::protocol::Task>(),
        task_size.0,
        task_size.1,
        task_size.2
    );
    println!(
        "its event log ({} events, {} B inline each): {} B requested / {} B chunks / {} allocations",
        log.len(),
        std::mem::size_of::<a2a_kit::protocol::StreamResponse>(),
        log_size.0 + (log.len() * std::mem::size_of::<a2a_kit::protocol::StreamResponse>()) as i64,
        log_size.1,
        log_size.2
    );
    for ev in &log {
        let (s, _) = deep(|| ev.event.clone());
        let kind = serde_json::to_value(&ev.event)
            .ok()
            .and_then(|v| v.as_object().and_then(|o| o.keys().next().cloned()))
            .unwrap_or_default();
        println!(
            "  event {} ({kind}): {} B requested / {} B chunks",
            ev.seq, s.0, s.1
        );
    }
    println!(
        "history: {} messages, artifacts: {}, status message: {}",
        rec.task.history.len(),
        rec.task.artifacts.len(),
        rec.task.status.message.is_some()
    );
    println!(
        "sizes: Message {} B, Part {} B, Artifact {} B",
        std::mem::size_of::<a2a_kit::protocol::Message>(),
        std::mem::size_of::<a2a_kit::protocol::Part>(),
        std::mem::size_of::<a2a_kit::protocol::Artifact>()
    );
    println!(
        "JSON of the task: {} B",
        serde_json::to_vec(&rec.task).map(|v| v.len()).unwrap_or(0)
    );
}
