//! Checks of ListTasks: order, pages, filters, views, tokens.

use a2a_kit::protocol::{ListTasksResponse, Part, Role, Task, TaskState};
use a2a_kit::store::{StoreError, TaskView};

use crate::fixtures::*;
use crate::*;

/// ListTasks on an empty store.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_empty(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_empty(s: Store) {
    let page = s.list_tasks(&query(10)).await.expect("list_tasks");
    assert_eq!(
        page,
        ListTasksResponse {
            tasks: vec![],
            next_page_token: String::new(),
            page_size: 10,
            total_size: 0
        }
    );
}

/// ListTasks order (newest status timestamp first, ties by id descending) and keyset pages of
/// every size.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_order_and_pagination(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_order_and_pagination(s: Store) {
    let b = base();
    let mut keys = Vec::new();
    // 23 tasks, three per timestamp: ties are broken by id. Created out of order.
    for i in [
        7, 3, 19, 0, 22, 11, 5, 14, 1, 9, 20, 16, 2, 13, 6, 21, 8, 18, 4, 12, 17, 10, 15,
    ] {
        let id = format!("task-{i:02}");
        let at = b + (i / 3) * 1000;
        create(&s, &new_task(&id, "c", TaskState::Working, at)).await;
        keys.push((at, id));
    }
    let want = list_order(keys.clone());
    for size in [1, 2, 5, 22, 23, 24, 100] {
        let got = walk(&s, query(size)).await;
        assert_eq!(ids(&got), want, "page size {size}");
    }
    let first = s.list_tasks(&query(23)).await.expect("list");
    assert!(
        first.next_page_token.is_empty(),
        "no token when the page holds the rest exactly"
    );
    let first = s.list_tasks(&query(22)).await.expect("list");
    assert!(
        !first.next_page_token.is_empty(),
        "a token when more remain"
    );
    assert_eq!(first.total_size, 23);

    // A status change moves a task to the front.
    append(
        &s,
        "task-00",
        status_ev("task-00", "c", TaskState::Completed, b + 60_000, None),
    )
    .await;
    let got = walk(&s, query(4)).await;
    assert_eq!(
        got[0].id, "task-00",
        "ordered by the current status timestamp"
    );
    assert_eq!(got.len(), 23);
}

/// ListTasks filters (context, state, status timestamp at-or-after) alone and combined, with
/// `totalSize` counting the filtered set.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_filters(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_filters(s: Store) {
    let b = base();
    let states = [
        TaskState::Working,
        TaskState::Completed,
        TaskState::InputRequired,
        TaskState::Failed,
    ];
    let mut all = Vec::new();
    for i in 0..20i64 {
        let id = format!("f{i:02}");
        let ctx = if i % 3 == 0 { "ctx-a" } else { "ctx-b" };
        let state = states[(i % 4) as usize];
        let at = b + i * 100;
        create(&s, &new_task(&id, ctx, state, at)).await;
        all.push((id, ctx, state, at));
    }
    let cut = b + 1000; // f10 is exactly at the cut: included.
    type Filter = (Option<&'static str>, Option<TaskState>, Option<i64>);
    let filters: [Filter; 8] = [
        (Some("ctx-a"), None, None),
        (None, Some(TaskState::Completed), None),
        (None, None, Some(cut)),
        (Some("ctx-b"), Some(TaskState::Working), None),
        (Some("ctx-b"), None, Some(cut)),
        (None, Some(TaskState::Failed), Some(cut)),
        (Some("ctx-a"), Some(TaskState::InputRequired), Some(cut)),
        (Some("nowhere"), None, None),
    ];
    for (ctx, state, after) in filters {
        let want = list_order(
            all.iter()
                .filter(|(_, c, st, at)| {
                    ctx.is_none_or(|x| x == *c)
                        && state.is_none_or(|x| x == *st)
                        && after.is_none_or(|a| *at >= a)
                })
                .map(|(id, _, _, at)| (*at, id.clone()))
                .collect(),
        );
        for size in [2, 100] {
            let mut q = query(size);
            q.context_id = ctx.map(str::to_string);
            q.status = state;
            q.status_timestamp_after = after.map(ts);
            let first = s.list_tasks(&q).await.expect("list");
            assert_eq!(
                first.total_size,
                want.len() as i32,
                "totalSize with filter {ctx:?} {state:?} {after:?}"
            );
            let got = walk(&s, q).await;
            assert_eq!(
                ids(&got),
                want,
                "filter {ctx:?} {state:?} {after:?}, page size {size}"
            );
            for t in &got {
                assert_eq!(t.status.state, state.unwrap_or(t.status.state));
            }
        }
    }
    // The state filter follows state changes.
    append(
        &s,
        "f00",
        status_ev("f00", "ctx-a", TaskState::Canceled, b + 5000, None),
    )
    .await;
    let mut q = query(100);
    q.status = Some(TaskState::Canceled);
    assert_eq!(ids(&walk(&s, q.clone()).await), vec!["f00".to_string()]);
    q.status = Some(TaskState::Working);
    assert!(
        !ids(&walk(&s, q).await).contains(&"f00".to_string()),
        "a task is listed under its current state only"
    );
}

/// ListTasks applies the query's [`TaskView`] to every task.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_views(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_views(s: Store) {
    let b = base();
    let mut tasks = Vec::new();
    for i in 0..3i64 {
        let id = format!("lv{i}");
        let mut t = new_task(&id, "c", TaskState::Working, b + i);
        t.history.push(msg(Role::Agent, &format!("{id}-1"), "one"));
        t.history.push(msg(Role::User, &format!("{id}-2"), "two"));
        t.artifacts
            .push(artifact(&format!("{id}-a"), vec![Part::text("art")]));
        create(&s, &t).await;
        tasks.push(t);
    }
    tasks.reverse(); // newest first
    for view in [
        TaskView::FULL,
        TaskView {
            history_length: Some(0),
            include_artifacts: false,
        },
        TaskView {
            history_length: Some(1),
            include_artifacts: true,
        },
        TaskView {
            history_length: Some(2),
            include_artifacts: false,
        },
        TaskView {
            history_length: None,
            include_artifacts: false,
        },
    ] {
        let mut q = query(2);
        q.view = view;
        let got = walk(&s, q).await;
        let want: Vec<Task> = tasks
            .iter()
            .map(|t| {
                let mut t = t.clone();
                view.apply(&mut t);
                t
            })
            .collect();
        assert_eq!(got, want, "list with view {view:?}");
    }
}

/// Page tokens: garbage is InvalidPageToken; a token stays valid whatever else changes.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_page_tokens(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_page_tokens(s: Store) {
    let b = base();
    for i in 0..5i64 {
        create(
            &s,
            &new_task(&format!("p{i}"), "c", TaskState::Working, b + i),
        )
        .await;
    }
    for bad in ["%%%", "bm90LWEtY3Vyc29y", "not a token at all"] {
        let mut q = query(2);
        q.page_token = Some(bad.to_string());
        assert_eq!(
            s.list_tasks(&q).await,
            Err(StoreError::InvalidPageToken),
            "token {bad:?}"
        );
    }
    let first = s.list_tasks(&query(2)).await.expect("list");
    let mut q = query(2);
    q.page_token = Some(first.next_page_token.clone());
    let second = s.list_tasks(&q).await.expect("list");
    assert_eq!(ids(&second.tasks), vec!["p2".to_string(), "p1".to_string()]);
    // The same token gives the same page again (tokens are not single-use).
    assert_eq!(s.list_tasks(&q).await.expect("list"), second);
    // A token issued without filters can be used with filters: the keyset still applies.
    q.context_id = Some("c".into());
    assert_eq!(
        ids(&s.list_tasks(&q).await.expect("list").tasks),
        vec!["p2".to_string(), "p1".to_string()]
    );
}

/// Keyset pagination: tasks created between two pages do not shift or repeat later pages.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::list_pagination_is_stable_under_inserts(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn list_pagination_is_stable_under_inserts(s: Store) {
    let b = base();
    for i in 0..6i64 {
        create(
            &s,
            &new_task(&format!("k{i}"), "c", TaskState::Working, b + i * 10),
        )
        .await;
    }
    let first = s.list_tasks(&query(3)).await.expect("list");
    assert_eq!(ids(&first.tasks), ["k5", "k4", "k3"]);
    // Newer tasks, and one that sorts in the middle of the first page.
    create(&s, &new_task("k9", "c", TaskState::Working, b + 1000)).await;
    create(&s, &new_task("k45", "c", TaskState::Working, b + 45)).await;
    let mut q = query(3);
    q.page_token = Some(first.next_page_token);
    let second = s.list_tasks(&q).await.expect("list");
    assert_eq!(
        ids(&second.tasks),
        ["k2", "k1", "k0"],
        "the next page starts after the last task seen"
    );
    assert_eq!(second.total_size, 8, "totalSize counts the new tasks");
    assert!(second.next_page_token.is_empty());
}
