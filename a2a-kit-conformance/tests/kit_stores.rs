//! The conformance suite (`a2a_kit_conformance`) against every store the kit ships, and
//! against wrappers that leave parts out: one test per check and store, so a failure names
//! both (`store_tests!`, from the crate's one list of checks).

use a2a_kit::protocol::{ListTasksResponse, Message, StreamResponse, Task, TaskState, Timestamp};
use a2a_kit::store::{
    EventRecord, InMemoryConfig, InMemoryTaskManager, ListQuery, Owner, PushConfigStore, Seq,
    StoreError, TaskManager, TaskRecord, TaskView,
};
use a2a_kit_conformance::{self as conformance, Capability, Store};

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
    async fn purge_terminal_before(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.0.purge_terminal_before(before).await
    }
    async fn task_ids_in_states(&self, states: &[TaskState]) -> Result<Vec<String>, StoreError> {
        self.0.task_ids_in_states(states).await
    }
    fn push_configs(&self) -> Option<&dyn PushConfigStore> {
        self.0.push_configs()
    }
}

/// The in-memory store through the core alone: the eight required methods, every default
/// (speed-ups and capabilities) the trait's own. What a newcomer's first store is.
struct CoreOnly(InMemoryTaskManager);

#[async_trait::async_trait]
impl TaskManager for CoreOnly {
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
    async fn list_tasks(&self, query: &ListQuery) -> Result<ListTasksResponse, StoreError> {
        self.0.list_tasks(query).await
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

conformance::store_tests! {
    in_memory {
        push_configs: yes,
        push_outbox: no,
        cluster: no,
        remote_tasks: yes,
        also: [kit_cursor_format],
        run(check) { check.run_on(memory()).await }
    }

    /// Finished tasks compacted at once (`hot_finished(0)`): every check then also reads
    /// tasks and logs back from their compact form.
    in_memory_compacting {
        push_configs: yes,
        push_outbox: no,
        cluster: no,
        remote_tasks: yes,
        also: [kit_cursor_format],
        run(check) { check.run_on(memory().hot_finished(0)).await }
    }

    /// The trait's default `create_task_with_events` (create, then append one by one).
    one_by_one {
        push_configs: yes,
        push_outbox: no,
        cluster: no,
        remote_tasks: no,
        also: [kit_cursor_format],
        run(check) { check.run_on(OneByOne(memory())).await }
    }

    /// The core alone: its capabilities' checks are reported ignored.
    core_only {
        push_configs: no,
        push_outbox: no,
        cluster: no,
        remote_tasks: no,
        also: [kit_cursor_format],
        run(check) { check.run_on(CoreOnly(memory())).await }
    }

    sqlite_in_memory {
        push_configs: yes,
        push_outbox: no,
        cluster: no,
        remote_tasks: yes,
        also: [kit_cursor_format],
        run(check) {
            let store = a2a_kit::store::SqliteTaskManager::open_in_memory().await.expect("open");
            check.run_on(store).await
        }
    }

    sqlite_file {
        push_configs: yes,
        push_outbox: yes,
        cluster: no,
        remote_tasks: yes,
        also: [kit_cursor_format],
        run(check) {
            let f = sqlite_support::file().await;
            check.run_on(f.store.clone()).await
        }
    }

    postgres {
        push_configs: yes,
        push_outbox: yes,
        cluster: yes,
        remote_tasks: yes,
        also: [kit_cursor_format],
        run(check) { postgres_support::run(check.run).await }
    }
}

/// `run_all` itself, as a third-party store would call it: the core and the capabilities
/// the store has, the others reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_in_memory() {
    let report = conformance::run_all(|| async { memory() }).await;
    assert_eq!(
        report.skipped,
        [Capability::PushOutbox, Capability::Cluster]
    );
    assert_eq!(
        report.ran.len(),
        conformance::CORE.len() + conformance::PUSH_CONFIGS.len() + conformance::REMOTE_TASKS.len(),
        "the core, push config and remote task checks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_sqlite() {
    let report = conformance::run_all(|| async {
        a2a_kit::store::SqliteTaskManager::open_in_memory()
            .await
            .expect("open")
    })
    .await;
    assert!(report.capabilities.push_configs && report.capabilities.remote_tasks);
    assert_eq!(
        report.skipped,
        [Capability::PushOutbox, Capability::Cluster]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_core_only() {
    let report = conformance::run_all(|| async { CoreOnly(memory()) }).await;
    assert_eq!(
        report.skipped,
        [
            Capability::PushConfigs,
            Capability::PushOutbox,
            Capability::Cluster,
            Capability::RemoteTasks
        ]
    );
    assert_eq!(report.ran.len(), conformance::CORE.len());
}

/// A capability's check on a store without it fails, saying what is missing: never a pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[should_panic(expected = "the store has no PushConfigStore")]
async fn a_capability_check_on_a_store_without_it_fails() {
    conformance::run_check("push_configs", || async { CoreOnly(memory()) }).await;
}
