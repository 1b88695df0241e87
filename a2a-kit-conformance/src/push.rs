//! Checks of the push capabilities: push configs ([`PushConfigStore`](a2a_kit::store::PushConfigStore)) and the durable push
//! outbox ([`PushOutbox`](a2a_kit::store::PushOutbox)). They run on a store that has the
//! capability; on one without, they panic saying so.

use std::time::Duration;

use a2a_kit::protocol::{AuthenticationInfo, Part, Role, TaskPushNotificationConfig, TaskState};
use a2a_kit::store::{PushLane, StoreError};

use crate::fixtures::*;
use crate::*;

/// The limit the checks other than [`push_config_limit`] put configs with (they stay under it).
const LIMIT: usize = 10;

/// Push configs: put (insert or replace by id, creation order kept), get, list, delete, per-task
/// isolation, missing tasks.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_configs(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_configs(s: Store) {
    let configs = push_store(&s);
    let b = base();
    create(&s, &new_task("p1", "c", TaskState::Working, b)).await;
    create(&s, &new_task("p2", "c", TaskState::Completed, b)).await;
    let a = push("p1", "a", "https://example.com/a");
    let mut bb = push("p1", "b", "https://example.com/b");
    bb.authentication = Some(AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("secret".into()),
    });
    bb.tenant = Some("tenant-1".into());
    let c = push("p2", "a", "https://example.com/other");
    for cfg in [&a, &bb, &c] {
        assert_eq!(configs.put(cfg.clone(), LIMIT).await, Ok(()));
    }
    assert_eq!(
        configs.list("p1").await,
        Ok(vec![a.clone(), bb.clone()]),
        "creation order"
    );
    assert_eq!(
        configs.list("p2").await,
        Ok(vec![c.clone()]),
        "configs are per task (same id, other task)"
    );
    assert_eq!(configs.get("p1", "b").await, Ok(Some(bb.clone())));
    assert_eq!(configs.get("p2", "a").await, Ok(Some(c.clone())));
    assert_eq!(configs.get("p1", "zzz").await, Ok(None));

    let mut a2 = a.clone();
    a2.url = "https://example.com/a-v2".into();
    a2.token = None;
    configs.put(a2.clone(), LIMIT).await.expect("replace");
    assert_eq!(
        configs.list("p1").await,
        Ok(vec![a2.clone(), bb.clone()]),
        "a replaced config keeps its place"
    );
    assert_eq!(configs.get("p1", "a").await, Ok(Some(a2.clone())));

    assert_eq!(configs.delete("p1", "a").await, Ok(true));
    assert_eq!(configs.delete("p1", "a").await, Ok(false), "deleting twice");
    assert_eq!(configs.get("p1", "a").await, Ok(None));
    assert_eq!(
        configs.list("p2").await,
        Ok(vec![c.clone()]),
        "deleting p1/a leaves p2/a"
    );
    configs.put(a.clone(), LIMIT).await.expect("put again");
    assert_eq!(
        configs.list("p1").await,
        Ok(vec![bb.clone(), a.clone()]),
        "a re-created config goes last"
    );

    let mut orphan = push("p1", "o", "https://example.com/o");
    orphan.task_id = None;
    assert!(
        matches!(
            configs.put(orphan, LIMIT).await,
            Err(StoreError::InvalidEvent(_))
        ),
        "a config needs a taskId"
    );
    let missing = || StoreError::TaskNotFound("missing".into());
    assert_eq!(
        configs
            .put(push("missing", "a", "https://example.com"), LIMIT)
            .await,
        Err(missing())
    );
    assert_eq!(configs.get("missing", "a").await, Err(missing()));
    assert_eq!(configs.list("missing").await, Err(missing()));
    assert_eq!(configs.delete("missing", "a").await, Err(missing()));
    assert_eq!(
        full(&s, "p1").await.last_seq,
        1,
        "push configs log no event"
    );
}

/// Purging a task deletes its push configs; a live task keeps its own, and an id used again
/// after a purge starts with none.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_configs_go_with_their_task(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_configs_go_with_their_task(s: Store) {
    let configs = push_store(&s);
    let b = base();
    let cut = b - 5_000;
    create(
        &s,
        &new_task("old-done", "c", TaskState::Completed, b - 10_000),
    )
    .await;
    create(
        &s,
        &new_task("old-failed", "c", TaskState::Working, b - 20_000),
    )
    .await;
    append(
        &s,
        "old-failed",
        status_ev(
            "old-failed",
            "c",
            TaskState::Failed,
            b - 9_000,
            Some(msg(Role::Agent, "of", "x")),
        ),
    )
    .await;
    create(
        &s,
        &new_task("old-live", "c", TaskState::Working, b - 50_000),
    )
    .await;
    for id in ["old-done", "old-failed", "old-live"] {
        configs
            .put(push(id, "cfg", "https://example.com/hook"), LIMIT)
            .await
            .expect("push");
    }
    assert_eq!(s.purge_terminal_before(ts(cut)).await, Ok(2));
    for gone in ["old-done", "old-failed"] {
        assert_eq!(
            configs.list(gone).await,
            Err(StoreError::TaskNotFound(gone.into())),
            "{gone}'s push configs are purged"
        );
    }
    assert_eq!(
        configs.list("old-live").await,
        Ok(vec![push("old-live", "cfg", "https://example.com/hook")]),
        "a live task keeps its configs"
    );
    create(&s, &new_task("old-failed", "c2", TaskState::Submitted, b)).await;
    assert_eq!(
        configs.list("old-failed").await,
        Ok(vec![]),
        "a purged id used again has no configs"
    );
}

/// Every field of a push config survives storage unchanged.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_config_fidelity(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_config_fidelity(s: Store) {
    let configs = push_store(&s);
    create(&s, &new_task("rich", "ctx-é", TaskState::Working, base())).await;
    let mut cfg = push("rich", "cfg-✓", "https://example.com/hook?x=1&y=é");
    cfg.authentication = Some(AuthenticationInfo {
        scheme: "Basic".into(),
        credentials: None,
    });
    configs.put(cfg.clone(), LIMIT).await.expect("push");
    assert_eq!(configs.get("rich", "cfg-✓").await, Ok(Some(cfg)));
    let mut full_cfg = push("rich", "cfg-2", "https://example.com/other");
    full_cfg.tenant = Some("tenant-✓".into());
    full_cfg.authentication = Some(AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("s3cr\"et".into()),
    });
    configs.put(full_cfg.clone(), LIMIT).await.expect("push");
    assert_eq!(configs.get("rich", "cfg-2").await, Ok(Some(full_cfg)));
}

/// The limit `put` is given: a task at it takes no new config (`PushConfigLimit`, nothing
/// stored, no lane made) but replaces one by id; a deleted config makes room; the limit is
/// the task's own; and concurrent puts to a task one short of it store exactly one.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::push_config_limit(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn push_config_limit(s: Store) {
    const MAX: usize = 3;
    let configs = push_store(&s);
    let b = base();
    create(&s, &new_task("full", "c", TaskState::Working, b)).await;
    create(&s, &new_task("other", "c", TaskState::Working, b)).await;
    let ids = |list: Vec<TaskPushNotificationConfig>| -> Vec<String> {
        list.into_iter().filter_map(|c| c.id).collect()
    };
    for id in ["a", "b", "c"] {
        let cfg = push("full", id, "https://example.com/hook");
        assert_eq!(configs.put(cfg, MAX).await, Ok(()), "{id} fits");
    }
    assert_eq!(
        configs
            .put(push("full", "d", "https://example.com/d"), MAX)
            .await,
        Err(StoreError::PushConfigLimit(MAX)),
        "a fourth config is refused"
    );
    assert_eq!(configs.get("full", "d").await, Ok(None), "nothing stored");
    if let Some(outbox) = s.push_outbox() {
        let lanes = outbox.push_lanes("full").await.expect("lanes");
        assert!(
            lanes.iter().all(|l| l.config_id != "d"),
            "a refused config has no lane: {lanes:?}"
        );
    }
    let replaced = push("full", "b", "https://example.com/b-v2");
    assert_eq!(
        configs.put(replaced.clone(), MAX).await,
        Ok(()),
        "replacing one at the limit works"
    );
    assert_eq!(configs.get("full", "b").await, Ok(Some(replaced)));
    assert_eq!(
        configs
            .put(push("other", "x", "https://example.com/x"), MAX)
            .await,
        Ok(()),
        "the limit is per task"
    );
    assert_eq!(configs.delete("full", "a").await, Ok(true));
    assert_eq!(
        configs
            .put(push("full", "d", "https://example.com/d"), MAX)
            .await,
        Ok(()),
        "a deleted config makes room"
    );
    assert_eq!(
        configs.list("full").await.map(ids),
        Ok(vec!["b".to_string(), "c".into(), "d".into()])
    );

    // One short of the limit, many at once: exactly one fits.
    create(&s, &new_task("race", "c", TaskState::Working, b)).await;
    for id in ["r0", "r1"] {
        configs
            .put(push("race", id, "https://example.com/r"), MAX)
            .await
            .expect("below the limit");
    }
    let puts: Vec<_> = (0..16)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let cfg = push("race", &format!("n{i}"), "https://example.com/n");
                push_store(&s).put(cfg, MAX).await
            })
        })
        .collect();
    let mut stored = 0;
    for put in puts {
        match put.await.expect("put panicked") {
            Ok(()) => stored += 1,
            Err(StoreError::PushConfigLimit(MAX)) => {}
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!(
        stored, 1,
        "concurrent puts one short of the limit store one"
    );
    assert_eq!(configs.list("race").await.map(|l| l.len()), Ok(MAX));
}

/// The push outbox's lanes: a lane per config, starting at the task's last event when the
/// config is stored, written by the claim's holder and read back as written, kept when its
/// config is replaced, dropped with it or with the task; a released claim can be taken again.
/// Needs [`PushConfigStore`](a2a_kit::store::PushConfigStore) too (lanes are made with configs).
pub async fn outbox_lanes(s: Store) {
    let (configs, outbox) = (push_store(&s), outbox_of(&s));
    let b = base();
    create(&s, &new_task("o1", "c", TaskState::Working, b)).await;
    assert_eq!(
        outbox.claim_push("o1").await,
        Ok(Some(vec![])),
        "no config, no lane: nothing to claim"
    );
    let chunk = artifact_ev(
        "o1",
        "c",
        artifact("a", vec![Part::text("x")]),
        false,
        false,
    );
    assert_eq!(append(&s, "o1", chunk).await, 2);
    configs
        .put(push("o1", "h1", "https://example.com/1"), LIMIT)
        .await
        .expect("push");
    let lanes = outbox
        .claim_push("o1")
        .await
        .expect("claim")
        .expect("a claim nobody holds is free to take");
    let fresh = |config_id: &str, cursor| PushLane {
        config_id: config_id.into(),
        cursor,
        ..PushLane::default()
    };
    assert_eq!(
        lanes,
        vec![fresh("h1", 2)],
        "a lane starts at the task's last event: its config gets what comes after"
    );
    assert_eq!(
        outbox.push_lanes("o1").await,
        Ok(lanes.clone()),
        "push_lanes reads the lanes without claiming"
    );

    let seq = append(
        &s,
        "o1",
        status_ev("o1", "c", TaskState::Completed, b + 2, None),
    )
    .await;
    let lane = PushLane {
        config_id: "h1".into(),
        cursor: seq,
        delivered: 1,
        failed: 1,
        consecutive_failures: 1,
        suspended: false,
        last_error: Some("HTTP 503 ✓".into()),
        attempts: 2,
        next_attempt_at: Some(b + 60_000),
    };
    assert_eq!(
        outbox.save_push_lane("o1", &lane).await,
        Ok(true),
        "the claim's holder writes its lanes"
    );
    assert_eq!(
        outbox.push_lanes("o1").await,
        Ok(vec![lane.clone()]),
        "a lane reads back as saved"
    );

    configs
        .put(push("o1", "h1", "https://example.com/1-v2"), LIMIT)
        .await
        .expect("replace");
    configs
        .put(push("o1", "h2", "https://example.com/2"), LIMIT)
        .await
        .expect("push");
    let mut both = outbox.push_lanes("o1").await.expect("lanes");
    both.sort_by(|a, b| a.config_id.cmp(&b.config_id));
    assert_eq!(
        both,
        vec![lane.clone(), fresh("h2", seq)],
        "replacing a config keeps its lane; a new config's lane starts at the last event"
    );
    assert_eq!(configs.delete("o1", "h2").await, Ok(true));
    assert_eq!(
        outbox.push_lanes("o1").await,
        Ok(vec![lane.clone()]),
        "deleting a config drops its lane"
    );

    assert_eq!(outbox.release_push_claim("o1").await, Ok(()));
    assert_eq!(
        outbox.claim_push("o1").await,
        Ok(Some(vec![lane.clone()])),
        "a released claim is taken again, with the lanes as saved"
    );
    assert_eq!(outbox.release_push_claim("o1").await, Ok(()));
    assert!(
        outbox.push_claim_ttl() > Duration::ZERO,
        "a claim lasts a while"
    );

    assert_eq!(s.purge_terminal_before(ts(b + 10)).await, Ok(1));
    assert_eq!(
        outbox.push_lanes("o1").await,
        Ok(vec![]),
        "a purged task's lanes go with it"
    );
}

/// `orphaned_push_work` finds a task whose lane is behind its log, nobody delivering it for
/// longer than a claim lasts; not one whose lanes are caught up or suspended.
pub async fn outbox_orphaned_work(s: Store) {
    let (configs, outbox) = (push_store(&s), outbox_of(&s));
    // Status timestamps ten minutes old: older than any store's claim.
    let b = base();
    for id in ["behind", "caught-up", "suspended"] {
        create(&s, &new_task(id, "c", TaskState::Working, b)).await;
        configs
            .put(push(id, "h", "https://example.com/hook"), LIMIT)
            .await
            .expect("push");
    }
    for id in ["behind", "suspended"] {
        let chunk = artifact_ev(id, "c", artifact("a", vec![Part::text("x")]), false, false);
        append(&s, id, chunk).await;
    }
    let mut lanes = outbox
        .claim_push("suspended")
        .await
        .expect("claim")
        .expect("free");
    lanes[0].suspended = true;
    assert_eq!(
        outbox.save_push_lane("suspended", &lanes[0]).await,
        Ok(true)
    );
    assert_eq!(outbox.release_push_claim("suspended").await, Ok(()));
    assert_eq!(
        outbox.orphaned_push_work(10).await,
        Ok(vec!["behind".to_string()]),
        "only the lane behind its log, with nobody on it, is orphaned work"
    );

    let mut lanes = outbox
        .claim_push("behind")
        .await
        .expect("claim")
        .expect("free");
    lanes[0].cursor = 2;
    lanes[0].delivered = 1;
    assert_eq!(outbox.save_push_lane("behind", &lanes[0]).await, Ok(true));
    assert_eq!(outbox.release_push_claim("behind").await, Ok(()));
    assert_eq!(
        outbox.orphaned_push_work(10).await,
        Ok(vec![]),
        "a caught-up lane leaves no work"
    );
}
