//! The TaskManager conformance suite (`a2a_kit_conformance`) against every store the
//! kit ships: one test per check and store, so a failure names both.

use a2a_kit::protocol::{
    ListTasksResponse, Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
    Timestamp,
};
use a2a_kit::store::{
    EventRecord, InMemoryConfig, InMemoryTaskManager, ListQuery, Owner, Seq, StoreError,
    TaskManager, TaskRecord, TaskView,
};
use a2a_kit_conformance::{self as conformance, Store};

fn memory() -> InMemoryTaskManager {
    InMemoryTaskManager::new(InMemoryConfig {
        max_tasks: 100_000,
        terminal_ttl: None,
    })
}

/// The in-memory store with the trait's default `create_task_with_events`.
struct OneByOne(InMemoryTaskManager);

#[async_trait::async_trait]
impl TaskManager for OneByOne {
    async fn create_task(
        &self,
        task: Task,
        skill_id: Option<String>,
        owner: Option<Owner>,
    ) -> Result<Seq, StoreError> {
        self.0.create_task(task, skill_id, owner).await
    }
    async fn append_event(&self, task_id: &str, event: StreamResponse) -> Result<Seq, StoreError> {
        self.0.append_event(task_id, event).await
    }
    async fn add_message(&self, task_id: &str, message: Message) -> Result<(), StoreError> {
        self.0.add_message(task_id, message).await
    }
    async fn get_task(
        &self,
        task_id: &str,
        view: TaskView,
    ) -> Result<Option<TaskRecord>, StoreError> {
        self.0.get_task(task_id, view).await
    }
    async fn events_after(
        &self,
        task_id: &str,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        self.0.events_after(task_id, after, limit).await
    }
    fn release_log(&self, task_id: &str) {
        self.0.release_log(task_id)
    }
    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        self.0.list_tasks(query).await
    }
    async fn put_push_config(&self, config: TaskPushNotificationConfig) -> Result<(), StoreError> {
        self.0.put_push_config(config).await
    }
    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        self.0.get_push_config(task_id, id).await
    }
    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        self.0.list_push_configs(task_id).await
    }
    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        self.0.delete_push_config(task_id, id).await
    }
    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.0.purge_terminal_before(before).await
    }
    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        self.0.task_ids_in_states(states).await
    }
}

mod sqlite_support {
    use a2a_kit::store::SqliteTaskManager;

    /// A store on a fresh file; the directory is removed when the guard drops.
    pub struct FileStore {
        pub store: SqliteTaskManager,
        pub dir: std::path::PathBuf,
    }

    impl Drop for FileStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    pub async fn file() -> FileStore {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "a2a-conformance-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let store = SqliteTaskManager::open(dir.join("tasks.db"))
            .await
            .expect("open sqlite file");
        FileStore { store, dir }
    }
}

mod postgres_support {
    use a2a_kit::store::{PostgresOptions, PostgresTaskManager};

    /// The test server: `A2A_KIT_TEST_DATABASE_URL`, else the local one `.ci/run` starts.
    pub fn url() -> String {
        std::env::var("A2A_KIT_TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres:postgres@127.0.0.1:5432/postgres".into())
    }

    /// Run `check` on a store in a schema of its own, then drop the schema (also when the
    /// check fails).
    pub async fn run(check: impl FnOnce(super::Store) -> futures::future::BoxFuture<'static, ()>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let schema = format!(
            "conformance_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let store = PostgresTaskManager::connect_with(
            &url(),
            PostgresOptions::default().schema(&schema),
        )
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PostgreSQL at {} (set A2A_KIT_TEST_DATABASE_URL; `bash .ci/run` starts one): {e}",
                url()
            )
        });
        let outcome = tokio::spawn(check(std::sync::Arc::new(store.clone()))).await;
        let _ = store.drop_schema().await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}

/// One `#[tokio::test]` per check, for each store.
macro_rules! suite {
    ($($check:ident),* $(,)?) => {
        /// The checks this file tests, in order.
        const SUITE: &[&str] = &[$(stringify!($check)),*];

        mod in_memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let store: super::Store = std::sync::Arc::new(super::memory());
                    super::conformance::$check(store).await;
                }
            )*
        }

        /// Finished tasks compacted at once (`hot_finished(0)`): every check then also reads
        /// tasks and logs back from their compact form.
        mod in_memory_compacting {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let store: super::Store = std::sync::Arc::new(super::memory().hot_finished(0));
                    super::conformance::$check(store).await;
                }
            )*
        }

        /// The trait's default `create_task_with_events` (create, then append one by one).
        mod one_by_one {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let store: super::Store = std::sync::Arc::new(super::OneByOne(super::memory()));
                    super::conformance::$check(store).await;
                }
            )*
        }

        mod sqlite_in_memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let store = a2a_kit::store::SqliteTaskManager::open_in_memory().await.expect("open");
                    super::conformance::$check(std::sync::Arc::new(store)).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    super::postgres_support::run(|s| Box::pin(super::conformance::$check(s))).await;
                }
            )*
        }

        mod sqlite_file {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let f = super::sqlite_support::file().await;
                    super::conformance::$check(std::sync::Arc::new(f.store.clone())).await;
                }
            )*
        }
    };
}

suite!(
    create_and_get,
    task_views,
    status_updates,
    artifact_updates,
    history_semantics,
    event_log,
    create_with_events,
    list_empty,
    list_order_and_pagination,
    list_filters,
    list_views,
    list_page_tokens,
    list_pagination_is_stable_under_inserts,
    push_configs,
    retention,
    task_ids_in_states,
    json_fidelity,
    concurrent_appends_across_tasks,
    concurrent_appends_to_one_task,
    concurrent_refusals_stay_their_own,
    model_replay,
    owners,
    kit_cursor_format,
);

/// The macro above lists every check of `CHECKS`, in order (plus the kit's own cursor check).
#[test]
fn every_check_has_a_test() {
    let listed: Vec<&str> = SUITE
        .iter()
        .copied()
        .filter(|c| *c != "kit_cursor_format")
        .collect();
    let all: Vec<&str> = conformance::CHECKS.iter().map(|c| c.name).collect();
    assert_eq!(all, listed);
}

/// `run_all` itself, as a third-party store would call it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_in_memory() {
    conformance::run_all(|| async { memory() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_sqlite() {
    conformance::run_all(|| async {
        a2a_kit::store::SqliteTaskManager::open_in_memory()
            .await
            .expect("open")
    })
    .await;
}
