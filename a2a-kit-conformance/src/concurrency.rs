//! Checks of concurrent writers.

use a2a_kit::protocol::{Part, Role, StreamResponse, TaskState};
use a2a_kit::store::{Seq, StoreError};

use crate::fixtures::*;
use crate::*;

/// Many tokio tasks appending to many tasks at once: every append succeeds, every log is
/// contiguous.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_appends_across_tasks(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_appends_across_tasks(s: Store) {
    const TASKS: usize = 16;
    const EVENTS: usize = 25;
    let b = base();
    let mut handles = Vec::new();
    for t in 0..TASKS {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let id = format!("ct{t:02}");
            create(&s, &new_task(&id, "c", TaskState::Submitted, b)).await;
            let mut seqs = Vec::new();
            for i in 0..EVENTS {
                let ev = if i % 2 == 0 {
                    status_ev(
                        &id,
                        "c",
                        TaskState::Working,
                        b + i as i64,
                        Some(status_msg(&format!("{id}-{i}"), "tick")),
                    )
                } else {
                    artifact_ev(
                        &id,
                        "c",
                        artifact("out", vec![Part::text(format!("{i}"))]),
                        true,
                        false,
                    )
                };
                seqs.push(append(&s, &id, ev).await);
                if i % 5 == 0 {
                    s.add_message(&id, msg(Role::User, &format!("{id}-u{i}"), "more"))
                        .await
                        .expect("add_message");
                }
            }
            (id, seqs)
        }));
    }
    for h in handles {
        let (id, seqs) = h.await.expect("append task panicked");
        assert_eq!(
            seqs,
            (2..=EVENTS as Seq + 1).collect::<Vec<_>>(),
            "{id}: sequence numbers"
        );
        let log = all_events(&s, &id).await;
        assert_eq!(
            log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=EVENTS as Seq + 1).collect::<Vec<_>>()
        );
        let rec = full(&s, &id).await;
        assert_eq!(rec.last_seq, EVENTS as Seq + 1);
        assert_eq!(
            rec.task.history.len(),
            1 + EVENTS.div_ceil(2) + EVENTS.div_ceil(5)
        );
        assert_eq!(rec.task.artifacts[0].parts.len(), EVENTS / 2);
    }
    assert_eq!(
        s.list_tasks(&query(100)).await.expect("list").total_size,
        TASKS as i32
    );
}

/// Many concurrent appends to one task are atomic: distinct, contiguous sequence numbers and
/// no lost update.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_appends_to_one_task(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_appends_to_one_task(s: Store) {
    const N: usize = 40;
    create(&s, &new_task("one", "c", TaskState::Working, base())).await;
    let handles: Vec<_> = (0..N)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let ev = artifact_ev(
                    "one",
                    "c",
                    artifact("shared", vec![Part::text(format!("p{i}"))]),
                    true,
                    false,
                );
                append(&s, "one", ev).await
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for h in handles {
        seqs.push(h.await.expect("append task panicked"));
    }
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (2..=N as Seq + 1).collect::<Vec<_>>(),
        "each append gets its own sequence number"
    );
    let rec = full(&s, "one").await;
    assert_eq!(rec.task.artifacts.len(), 1);
    assert_eq!(rec.task.artifacts[0].parts.len(), N, "no append is lost");
    // The artifact's parts are in log order.
    let log = all_events(&s, "one").await;
    let from_log: Vec<Part> = log
        .iter()
        .filter_map(|r| match &r.event {
            StreamResponse::ArtifactUpdate(u) => Some(u.artifact.parts[0].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rec.task.artifacts[0].parts, from_log);
}

/// A burst of concurrent writes where some must be refused (a duplicate task id, an event
/// after a terminal state, an event for a task that does not exist): each refused write gets
/// its own error and every other write of the burst lands, as it would alone. A store that
/// commits concurrent writes together (group commit) must keep them apart.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::concurrent_refusals_stay_their_own(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn concurrent_refusals_stay_their_own(s: Store) {
    const TASKS: usize = 60;
    let b = base();
    // Each task is created twice at once: exactly one creation wins.
    let creates: Vec<_> = (0..TASKS * 2)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let id = format!("burst-{}", i % TASKS);
                let task = new_task(&id, "c", TaskState::Working, b + i as i64);
                (id, s.create_task(task, None, None).await)
            })
        })
        .collect();
    let mut won: std::collections::HashMap<String, usize> = Default::default();
    for h in creates {
        let (id, r) = h.await.expect("create panicked");
        match r {
            Ok(seq) => {
                assert_eq!(seq, 1, "{id}");
                *won.entry(id).or_default() += 1;
            }
            Err(StoreError::TaskExists(t)) => assert_eq!(t, id),
            Err(e) => panic!("{id}: a second creation must be TaskExists, got {e:?}"),
        }
    }
    assert_eq!(won.len(), TASKS);
    assert!(won.values().all(|n| *n == 1), "{won:?}");

    // Half the tasks complete.
    for i in (0..TASKS).step_by(2) {
        let id = format!("burst-{i}");
        append(
            &s,
            &id,
            status_ev(&id, "c", TaskState::Completed, b + 1000, None),
        )
        .await;
    }
    // Then, at once: the finished ones get a late WORKING (refused), the others complete, and
    // events go to tasks that do not exist.
    let appends: Vec<_> = (0..TASKS)
        .flat_map(|i| {
            let id = format!("burst-{i}");
            let state = if i % 2 == 0 {
                TaskState::Working
            } else {
                TaskState::Completed
            };
            let ghost = format!("ghost-{i}");
            let lost = status_ev(&ghost, "c", TaskState::Completed, b + 1000, None);
            [
                (id.clone(), status_ev(&id, "c", state, b + 2000, None)),
                (ghost, lost),
            ]
        })
        .map(|(id, ev)| {
            let s = s.clone();
            tokio::spawn(async move {
                let state = ev.state();
                (id.clone(), state, s.append_event(&id, ev).await)
            })
        })
        .collect();
    for h in appends {
        let (id, state, r) = h.await.expect("append panicked");
        if id.starts_with("ghost-") {
            assert!(
                matches!(&r, Err(StoreError::TaskNotFound(t)) if *t == id),
                "{id}: {r:?}"
            );
        } else if state == Some(TaskState::Completed) {
            assert_eq!(
                r,
                Ok(2),
                "{id}: the completion lands whatever else is refused"
            );
        } else {
            assert!(
                matches!(r, Err(StoreError::IllegalTransition(_))),
                "{id}: an event after a terminal state must be refused, got {r:?}"
            );
        }
    }
    for i in 0..TASKS {
        let id = format!("burst-{i}");
        let log = all_events(&s, &id).await;
        assert_eq!(
            log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![1, 2],
            "{id}: only the creation and the completion are logged"
        );
        assert_eq!(full(&s, &id).await.task.status.state, TaskState::Completed);
    }
}
