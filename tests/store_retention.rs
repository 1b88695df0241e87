//! Retention: `spawn_retention` purges expired terminal tasks in the background, with any store.

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::protocol::*;
use a2a_kit::store::retention::{cutoff, purge_expired, spawn_retention};
use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager, TaskManager, TaskView};

fn at(ms_ago: i64) -> Timestamp {
    let ms = Timestamp::now().0.timestamp_millis() - ms_ago;
    Timestamp::from(chrono::DateTime::from_timestamp_millis(ms).expect("in range"))
}

fn task(id: &str, state: TaskState, ms_ago: i64) -> Task {
    Task {
        id: id.into(),
        context_id: "c".into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(at(ms_ago)),
        },
        history: vec![Message::user_text("hi")],
        ..Default::default()
    }
}

const HOUR: i64 = 3_600_000;

async fn seed(s: &dyn TaskManager) {
    for (id, state, ago) in [
        ("done-2h", TaskState::Completed, 2 * HOUR),
        ("failed-3h", TaskState::Failed, 3 * HOUR),
        ("canceled-1m", TaskState::Canceled, 60_000),
        ("working-5h", TaskState::Working, 5 * HOUR),
        ("input-5h", TaskState::InputRequired, 5 * HOUR),
    ] {
        s.create_task(task(id, state, ago), None, None)
            .await
            .expect("create");
    }
}

async fn ids(s: &dyn TaskManager) -> Vec<String> {
    let q = a2a_kit::store::ListQuery {
        page_size: 100,
        ..Default::default()
    };
    let mut v: Vec<String> = s
        .list_tasks(&q)
        .await
        .expect("list")
        .tasks
        .into_iter()
        .map(|t| t.id)
        .collect();
    v.sort();
    v
}

async fn background_purge(store: Arc<dyn TaskManager>) {
    seed(&*store).await;
    let handle = spawn_retention(
        store.clone(),
        Duration::from_secs(3600),
        Duration::from_millis(20),
    );
    let mut left = Vec::new();
    for _ in 0..200 {
        left = ids(&*store).await;
        if left.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        left,
        ["canceled-1m", "input-5h", "working-5h"],
        "only expired terminal tasks go"
    );
    // It keeps running: a task that ends long ago later is purged on a later round.
    store
        .create_task(task("late", TaskState::Rejected, 4 * HOUR), None, None)
        .await
        .expect("create");
    for _ in 0..200 {
        if store
            .get_task("late", TaskView::FULL)
            .await
            .expect("get")
            .is_none()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        store
            .get_task("late", TaskView::FULL)
            .await
            .expect("get")
            .is_none(),
        "purged on a later round"
    );
    handle.abort();
    assert!(handle.await.expect_err("aborted").is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_retention_with_the_in_memory_store() {
    background_purge(Arc::new(InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 1000,
        terminal_ttl: None,
    })))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_retention_with_the_sqlite_store() {
    background_purge(Arc::new(
        a2a_kit::store::SqliteTaskManager::open_in_memory()
            .await
            .expect("open"),
    ))
    .await;
}

#[tokio::test]
async fn purge_expired_once_and_cutoff() {
    let s = InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 1000,
        terminal_ttl: None,
    });
    seed(&s).await;
    assert_eq!(
        purge_expired(&s, Duration::from_secs(4 * 3600)).await,
        Ok(0),
        "nothing ended 4 h ago"
    );
    assert_eq!(
        purge_expired(&s, Duration::from_secs(150 * 60)).await,
        Ok(1),
        "failed-3h"
    );
    assert_eq!(
        purge_expired(&s, Duration::ZERO).await,
        Ok(2),
        "a zero TTL purges every terminal task"
    );
    assert_eq!(ids(&s).await, ["input-5h", "working-5h"]);
    // Huge TTLs saturate instead of overflowing.
    assert!(cutoff(Duration::MAX) < at(0));
    assert_eq!(purge_expired(&s, Duration::MAX).await, Ok(0));
}
