//! Checks of the calling side's capability ([`RemoteTaskStore`]): remote task records saved
//! under a revision compare, and webhook tokens kept as hashes, pending until a task binds or
//! claims them. A token opens one task only; every write is atomic.

use std::sync::Arc;

use a2a_kit::protocol::{Role, Task, TaskState};
use a2a_kit::store::{RemoteTaskRecord, RemoteTaskStore, Revised, TimedOut, TokenHash};
use tokio::sync::Barrier;

use crate::fixtures::*;
use crate::*;

mod tokens;
pub use tokens::*;

/// "Now" for the token checks (Unix milliseconds): stores compare expiries with the `now_ms`
/// they are given, never with their own clock.
const NOW: u64 = 1_800_000_000_000;

/// Writers racing in the concurrency checks.
const RACERS: usize = 16;

/// A token hash, distinct per `n`.
fn hash(n: u8) -> TokenHash {
    let mut h = [n; 32];
    h[0] = 0xA5;
    h
}

/// A record of a plain task in `state`, nothing scheduled.
fn record(id: &str, state: TaskState) -> RemoteTaskRecord {
    RemoteTaskRecord::new(new_task(id, "remote-ctx", state, base()))
}

fn revised(record: &RemoteTaskRecord, revision: u64) -> Revised {
    Revised {
        record: record.clone(),
        revision,
    }
}

/// Records ordered by task id, for comparing the unordered lists.
fn by_id(mut v: Vec<Revised>) -> Vec<Revised> {
    v.sort_by(|a, b| a.record.task.id.cmp(&b.record.task.id));
    v
}

async fn load(r: &dyn RemoteTaskStore, id: &str) -> Option<Revised> {
    r.load(id)
        .await
        .unwrap_or_else(|e| panic!("load({id}): {e}"))
}

async fn unsettled(r: &dyn RemoteTaskStore) -> Vec<Revised> {
    by_id(r.unsettled().await.expect("unsettled"))
}

async fn all_remote(r: &dyn RemoteTaskStore) -> Vec<Revised> {
    by_id(r.all_remote().await.expect("all_remote"))
}

async fn bind(r: &dyn RemoteTaskStore, h: TokenHash, task: &str, expires_ms: Option<u64>) {
    r.bind_token(h, task, expires_ms)
        .await
        .unwrap_or_else(|e| panic!("bind_token(.., {task}, ..): {e}"));
}

async fn token_of(r: &dyn RemoteTaskStore, task: &str, now_ms: u64) -> Option<Option<TokenHash>> {
    r.token_of(task, now_ms)
        .await
        .unwrap_or_else(|e| panic!("token_of({task}): {e}"))
}

/// Conditional saves: the first save (expecting `None`) gives revision 1, each save expecting
/// the current revision the next one; a save expecting another revision (stale, ahead, or any
/// for a record never saved), or `None` for a record that exists, writes nothing. Revisions
/// are per record, and a removed record starts again at 1.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_saves_compare_revisions(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_saves_compare_revisions(s: Store) {
    let r = remote_of(&s);
    let v1 = record("r1", TaskState::Submitted);
    assert_eq!(r.load("r1").await, Ok(None), "an empty store has no record");
    assert_eq!(
        r.save(&v1, Some(1)).await,
        Ok(None),
        "a save expecting a revision of a record never saved writes nothing"
    );
    assert_eq!(r.load("r1").await, Ok(None));
    assert_eq!(
        r.save(&v1, None).await,
        Ok(Some(1)),
        "a first save is revision 1"
    );
    assert_eq!(load(r, "r1").await, Some(revised(&v1, 1)));

    let mut v2 = v1.clone();
    v2.task.status.state = TaskState::Working;
    v2.polls = 1;
    assert_eq!(
        r.save(&v2, None).await,
        Ok(None),
        "a save expecting no record writes nothing over one"
    );
    assert_eq!(load(r, "r1").await, Some(revised(&v1, 1)));
    assert_eq!(
        r.save(&v2, Some(1)).await,
        Ok(Some(2)),
        "a save expecting the current revision gives the next"
    );
    assert_eq!(load(r, "r1").await, Some(revised(&v2, 2)));

    let mut v3 = v2.clone();
    v3.polls = 2;
    v3.agent_url = Some("https://agent.example.com".into());
    for stale in [Some(0), Some(1), Some(3), Some(u64::MAX), None] {
        assert_eq!(
            r.save(&v3, stale).await,
            Ok(None),
            "a save expecting {stale:?} while the stored revision is 2 writes nothing"
        );
    }
    assert_eq!(
        load(r, "r1").await,
        Some(revised(&v2, 2)),
        "refused saves leave the record as it was"
    );
    assert_eq!(r.save(&v3, Some(2)).await, Ok(Some(3)));
    assert_eq!(load(r, "r1").await, Some(revised(&v3, 3)));

    let other = record("r2", TaskState::Working);
    assert_eq!(
        r.save(&other, None).await,
        Ok(Some(1)),
        "revisions are per record"
    );
    assert_eq!(
        r.save(&other, Some(3)).await,
        Ok(None),
        "another record's revision is not this one's"
    );
    assert_eq!(load(r, "r1").await, Some(revised(&v3, 3)));
    assert_eq!(load(r, "r2").await, Some(revised(&other, 1)));

    assert_eq!(r.remove("r1").await, Ok(true));
    assert_eq!(
        r.save(&v3, Some(3)).await,
        Ok(None),
        "a removed record has no revision to match"
    );
    assert_eq!(r.load("r1").await, Ok(None));
    assert_eq!(
        r.save(&v1, None).await,
        Ok(Some(1)),
        "a record saved again after its removal starts at revision 1"
    );
    assert_eq!(load(r, "r1").await, Some(revised(&v1, 1)));
}

/// Saves racing: 16 first saves of one record, then 16 saves expecting the same revision,
/// each writer's record a different one: exactly one save of each round wins, the others
/// write nothing, and the stored record is the winner's.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_concurrent_saves(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_concurrent_saves(s: Store) {
    remote_of(&s); // panics on a store without the capability
    for (expected, next) in [(None, 1), (Some(1), 2)] {
        let barrier = Arc::new(Barrier::new(RACERS));
        let mut handles = Vec::new();
        for i in 0..RACERS {
            let (s, barrier) = (s.clone(), barrier.clone());
            let mut rec = record("race", TaskState::Working);
            rec.polls = i as u32;
            rec.agent_url = Some(format!("https://agent-{i}.example.com"));
            handles.push(tokio::spawn(async move {
                barrier.wait().await;
                let saved = remote_of(&s).save(&rec, expected).await;
                (rec, saved)
            }));
        }
        let mut winners = Vec::new();
        for h in handles {
            let (rec, saved) = h.await.expect("saving task panicked");
            match saved {
                Ok(Some(rev)) => {
                    assert_eq!(rev, next, "a winning save expecting {expected:?}");
                    winners.push(rec);
                }
                Ok(None) => {}
                Err(e) => panic!("a save racing others failed instead of losing: {e}"),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "{RACERS} saves expecting {expected:?}: exactly one is written"
        );
        assert_eq!(
            load(remote_of(&s), "race").await,
            Some(revised(&winners[0], next)),
            "the stored record is the winner's"
        );
    }
}

/// A record with every field set (a task with a status message, artifacts, history and
/// metadata; agent URL, deadline, polls, next poll, timed out) reads back equal, through
/// `load`, `unsettled` and `all_remote`; a save replaces the whole record, clearing the
/// fields the new one leaves unset.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_record_fidelity(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_record_fidelity(s: Store) {
    let r = remote_of(&s);
    let full_record = RemoteTaskRecord {
        task: rich_task("remote-✓", "ctx-é", TaskState::Working, base()),
        agent_url: Some("https://agent.example.com/a2a/v1?tenant=é".into()),
        deadline_ms: Some(NOW + 3_600_000),
        polls: 4_000_000_000,
        next_poll_ms: Some(NOW + 3_600_500),
        timed_out: Some(TimedOut {
            at_ms: NOW + 7_200_000,
            reason: "no webhook by the deadline; 3 polls found \"WORKING\" ✓".into(),
        }),
    };
    assert_eq!(r.save(&full_record, None).await, Ok(Some(1)));
    let want = vec![revised(&full_record, 1)];
    assert_eq!(load(r, "remote-✓").await.as_slice(), want, "load");
    assert_eq!(
        unsettled(r).await,
        want,
        "unsettled (a timed-out task is unsettled while it is working)"
    );
    assert_eq!(all_remote(r).await, want, "all_remote");

    let bare = RemoteTaskRecord::new(Task {
        id: "remote-✓".into(),
        ..Task::default()
    });
    assert_eq!(r.save(&bare, Some(1)).await, Ok(Some(2)));
    assert_eq!(
        load(r, "remote-✓").await,
        Some(revised(&bare, 2)),
        "a save replaces the record: what the new one leaves unset is unset"
    );

    let mut history = record("remote-2", TaskState::InputRequired);
    history
        .task
        .history
        .push(msg(Role::Agent, "remote-2-a1", "which one?"));
    history.polls = 1;
    assert_eq!(r.save(&history, None).await, Ok(Some(1)));
    assert_eq!(load(r, "remote-2").await, Some(revised(&history, 1)));
}

/// Purging finished records: `purge_finished_before` drops the records whose task is terminal,
/// with their tokens, and counts them; it keeps those not finished (working, waiting for
/// input, timed out), those finished after the cutoff, and a record that finished and then
/// was saved unfinished again is no longer a finished one. The time that counts is when the
/// store first saw the record terminal (its own clock), so the check brackets "now".
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_finished_purge(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_finished_purge(s: Store) {
    let r = remote_of(&s);
    let clock = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_millis() as u64
    };
    let before = clock();
    for (id, state) in [
        ("done", TaskState::Completed),
        ("failed", TaskState::Failed),
        ("working", TaskState::Working),
        ("asking", TaskState::InputRequired),
    ] {
        assert_eq!(r.save(&record(id, state), None).await, Ok(Some(1)), "{id}");
    }
    bind(r, hash(1), "done", None).await;
    bind(r, hash(2), "working", None).await;
    // Finished, then (a stale view replaced by a fuller one) not finished any more.
    let mut back = record("back", TaskState::Completed);
    assert_eq!(r.save(&back, None).await, Ok(Some(1)));
    back.task.status.state = TaskState::Working;
    assert_eq!(r.save(&back, Some(1)).await, Ok(Some(2)));

    assert_eq!(
        r.purge_finished_before(before.saturating_sub(60_000)).await,
        Ok(0),
        "nothing finished before the check began"
    );
    assert_eq!(all_remote(r).await.len(), 5, "nothing purged");
    let after = clock() + 60_000;
    assert_eq!(
        r.purge_finished_before(after).await,
        Ok(2),
        "the two finished records"
    );
    let left: Vec<String> = all_remote(r)
        .await
        .into_iter()
        .map(|x| x.record.task.id)
        .collect();
    assert_eq!(left, ["asking", "back", "working"]);
    assert_eq!(
        token_of(r, "done", NOW).await,
        None,
        "its token went with it"
    );
    assert_eq!(
        token_of(r, "working", NOW).await,
        Some(Some(hash(2))),
        "another task's token stays"
    );
    assert_eq!(r.purge_finished_before(after).await, Ok(0), "once");
}

/// `unsettled` returns exactly the records whose task is neither terminal nor interrupted
/// (timed-out ones included), following each save; `all_remote` returns every record; each
/// with its current revision. `remove` drops a record and its token (`true`), and reports a
/// record it did not find (`false`), dropping the token all the same.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_unsettled_all_and_remove(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_unsettled_all_and_remove(s: Store) {
    let r = remote_of(&s);
    assert_eq!(
        unsettled(r).await,
        [],
        "an empty store has nothing unsettled"
    );
    assert_eq!(all_remote(r).await, [], "an empty store has no records");

    let states = [
        ("auth-required", TaskState::AuthRequired),
        ("canceled", TaskState::Canceled),
        ("completed", TaskState::Completed),
        ("failed", TaskState::Failed),
        ("input-required", TaskState::InputRequired),
        ("rejected", TaskState::Rejected),
        ("submitted", TaskState::Submitted),
        ("working", TaskState::Working),
    ];
    let mut records: Vec<RemoteTaskRecord> = states
        .iter()
        .map(|(id, state)| record(id, *state))
        .collect();
    let timed_out = TimedOut {
        at_ms: NOW,
        reason: "no webhook by the deadline".into(),
    };
    let mut late_working = record("working-timed-out", TaskState::Working);
    late_working.timed_out = Some(timed_out.clone());
    let mut late_input = record("input-timed-out", TaskState::InputRequired);
    late_input.timed_out = Some(timed_out);
    records.extend([late_working, late_input]);
    for rec in &records {
        assert_eq!(
            r.save(rec, None).await,
            Ok(Some(1)),
            "{}: first save",
            rec.task.id
        );
    }
    let at = |id: &str, revision: u64| {
        let rec = records
            .iter()
            .find(|r| r.task.id == id)
            .expect("a record of the check");
        revised(rec, revision)
    };
    assert_eq!(
        unsettled(r).await,
        [
            at("submitted", 1),
            at("working", 1),
            at("working-timed-out", 1)
        ],
        "unsettled: neither terminal nor interrupted, timed out or not"
    );
    assert_eq!(
        all_remote(r).await,
        by_id(records.iter().map(|rec| revised(rec, 1)).collect()),
        "all_remote: every record"
    );

    // A task that finishes leaves `unsettled`; one that resumes comes back to it.
    let mut finished = record("working", TaskState::Completed);
    finished.polls = 3;
    assert_eq!(r.save(&finished, Some(1)).await, Ok(Some(2)));
    let mut resumed = record("input-required", TaskState::Working);
    resumed.deadline_ms = Some(NOW);
    assert_eq!(r.save(&resumed, Some(1)).await, Ok(Some(2)));
    assert_eq!(
        unsettled(r).await,
        [
            revised(&resumed, 2),
            at("submitted", 1),
            at("working-timed-out", 1)
        ],
        "unsettled follows each save's state"
    );
    let all = all_remote(r).await;
    assert_eq!(all.len(), records.len(), "saves add no record");
    assert!(all.contains(&revised(&finished, 2)) && all.contains(&revised(&resumed, 2)));

    bind(r, hash(1), "submitted", None).await;
    bind(r, hash(2), "completed", None).await;
    assert_eq!(r.remove("submitted").await, Ok(true), "remove a record");
    assert_eq!(r.load("submitted").await, Ok(None));
    assert_eq!(
        token_of(r, "submitted", NOW).await,
        None,
        "a removed record's token goes with it"
    );
    assert!(
        !all_remote(r)
            .await
            .iter()
            .any(|x| x.record.task.id == "submitted")
    );
    assert!(
        !unsettled(r)
            .await
            .iter()
            .any(|x| x.record.task.id == "submitted")
    );
    assert_eq!(r.remove("submitted").await, Ok(false), "removing twice");
    assert_eq!(
        token_of(r, "completed", NOW).await,
        Some(Some(hash(2))),
        "another record's token stays"
    );
    assert_eq!(all_remote(r).await.len(), records.len() - 1);

    bind(r, hash(3), "token-only", None).await;
    assert_eq!(
        r.remove("token-only").await,
        Ok(false),
        "no record to remove"
    );
    assert_eq!(
        token_of(r, "token-only", NOW).await,
        None,
        "remove drops the task's token even without a record"
    );
}
