//! Checks of the calling side's capability ([`RemoteTaskStore`]): remote task records saved
//! under a revision compare, and webhook tokens kept as hashes, pending until a task binds or
//! claims them. A token opens one task only; every write is atomic.

use std::sync::Arc;

use a2a_kit::protocol::{Role, Task, TaskState};
use a2a_kit::store::{RemoteTaskRecord, RemoteTaskStore, Revised, TimedOut, TokenHash};
use tokio::sync::Barrier;

use crate::fixtures::*;
use crate::*;

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

async fn issue(r: &dyn RemoteTaskStore, h: TokenHash, expires_ms: u64) {
    r.issue_token(h, expires_ms).await.expect("issue_token");
}

async fn bind(r: &dyn RemoteTaskStore, h: TokenHash, task: &str, expires_ms: Option<u64>) {
    r.bind_token(h, task, expires_ms)
        .await
        .unwrap_or_else(|e| panic!("bind_token(.., {task}, ..): {e}"));
}

async fn claim(
    r: &dyn RemoteTaskStore,
    h: TokenHash,
    task: &str,
    expires_ms: Option<u64>,
    now_ms: u64,
) -> bool {
    r.claim_token(h, task, expires_ms, now_ms)
        .await
        .unwrap_or_else(|e| panic!("claim_token(.., {task}, ..): {e}"))
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

/// Claims: a pending token unexpired at `now_ms` is tied to the first task without a token
/// that claims it, once: a second task cannot claim it, a task with a token (even an expired
/// one) claims no other, and a refused claim leaves the token pending. An expired pending
/// token, an unknown one and a bound one cannot be claimed. The claimed token has the
/// expiry the claim gives.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_token_claims(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_token_claims(s: Store) {
    let r = remote_of(&s);
    let (p, q) = (hash(1), hash(2));
    issue(r, p, NOW + 60_000).await;
    issue(r, q, NOW + 60_000).await;
    assert_eq!(token_of(r, "a", NOW).await, None, "no token before a claim");
    assert!(
        claim(r, p, "a", None, NOW).await,
        "a pending token is claimed"
    );
    assert_eq!(token_of(r, "a", NOW).await, Some(Some(p)));
    assert!(
        !claim(r, p, "b", None, NOW).await,
        "a claimed token is no longer pending: a second task cannot claim it"
    );
    assert_eq!(token_of(r, "b", NOW).await, None);
    assert!(
        !claim(r, p, "a", None, NOW).await,
        "a token is claimed once, also by its own task"
    );
    assert!(
        !claim(r, q, "a", None, NOW).await,
        "a task with a token claims no other"
    );
    assert_eq!(
        token_of(r, "a", NOW).await,
        Some(Some(p)),
        "a refused claim leaves the task's token"
    );
    assert!(
        claim(r, q, "b", None, NOW).await,
        "a refused claim leaves the token pending"
    );
    assert_eq!(token_of(r, "b", NOW).await, Some(Some(q)));

    assert!(
        !claim(r, hash(9), "c", None, NOW).await,
        "a token never issued cannot be claimed"
    );
    let e = hash(3);
    issue(r, e, NOW + 10).await;
    assert!(
        !claim(r, e, "c", None, NOW + 11).await,
        "an expired pending token cannot be claimed"
    );
    assert_eq!(token_of(r, "c", NOW).await, None);
    assert!(
        claim(r, e, "c", None, NOW + 9).await,
        "unexpired at an earlier now, the same token is claimed (the refusal was its expiry)"
    );

    let f = hash(4);
    issue(r, f, NOW + 60_000).await;
    assert!(claim(r, f, "d", Some(NOW + 100), NOW).await);
    assert_eq!(
        token_of(r, "d", NOW + 99).await,
        Some(Some(f)),
        "a claimed token is valid until the expiry the claim gives"
    );
    assert_eq!(
        token_of(r, "d", NOW + 101).await,
        Some(None),
        "past the claim's expiry (not the pending one's), the task's token is expired"
    );
    let g = hash(5);
    issue(r, g, NOW + 60_000).await;
    assert!(
        !claim(r, g, "d", None, NOW + 200).await,
        "a task whose token expired still has a token: it claims no other"
    );
    assert!(claim(r, g, "e", None, NOW + 200).await);
    assert_eq!(
        token_of(r, "e", u64::MAX).await,
        Some(Some(g)),
        "a token claimed without an expiry never expires"
    );

    let k = hash(6);
    bind(r, k, "f", None).await;
    assert!(
        !claim(r, k, "g", None, NOW).await,
        "a bound token is not pending: no other task claims it"
    );
    assert_eq!(token_of(r, "f", NOW).await, Some(Some(k)));
    assert_eq!(token_of(r, "g", NOW).await, None);
}

/// Binding: `bind_token` makes a hash the task's token (valid until the expiry given, or
/// always), replacing the task's previous one, taking a pending token (which no task can
/// claim then) and, a token opening one task only, taking it from the task it was bound to.
/// `token_of` tells no token (`None`) from a live one and an expired one (`Some(None)`);
/// issuing a bound token again leaves it its task's. `forget_token` drops the task's token
/// (and nothing else), after which the task can claim a pending one.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_token_binding(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_token_binding(s: Store) {
    let r = remote_of(&s);
    let (h1, h2, p) = (hash(1), hash(2), hash(3));
    bind(r, h1, "a", None).await;
    assert_eq!(token_of(r, "a", NOW).await, Some(Some(h1)), "bound");
    assert_eq!(
        token_of(r, "a", u64::MAX).await,
        Some(Some(h1)),
        "a token bound without an expiry never expires"
    );
    bind(r, h2, "a", Some(NOW + 500)).await;
    assert_eq!(
        token_of(r, "a", NOW).await,
        Some(Some(h2)),
        "binding replaces the task's token"
    );
    assert_eq!(
        token_of(r, "a", NOW + 499).await,
        Some(Some(h2)),
        "live until its expiry"
    );
    assert_eq!(
        token_of(r, "a", NOW + 501).await,
        Some(None),
        "expired: the task had a token"
    );
    assert_eq!(token_of(r, "never", NOW).await, None, "no token");
    bind(r, h2, "a", None).await;
    assert_eq!(
        token_of(r, "a", NOW + 501).await,
        Some(Some(h2)),
        "binding the same token again sets its new expiry"
    );

    issue(r, p, NOW + 60_000).await;
    bind(r, p, "b", Some(NOW + 1_000)).await;
    assert_eq!(
        token_of(r, "b", NOW).await,
        Some(Some(p)),
        "binding takes a pending token"
    );
    assert!(
        !claim(r, p, "c", None, NOW).await,
        "a pending token once bound is no longer claimable"
    );
    assert_eq!(
        token_of(r, "b", NOW + 1_001).await,
        Some(None),
        "the bound token has the bind's expiry, not the pending one's"
    );

    bind(r, h2, "c", None).await;
    assert_eq!(token_of(r, "c", NOW).await, Some(Some(h2)));
    assert_eq!(
        token_of(r, "a", NOW).await,
        None,
        "a token opens one task only: bound to another task, it is no longer the first's"
    );

    issue(r, h2, NOW + 60_000).await;
    assert!(
        !claim(r, h2, "d", None, NOW).await,
        "issuing a bound token again makes it no pending token for another task"
    );
    assert_eq!(token_of(r, "c", NOW).await, Some(Some(h2)));

    let rec = record("c", TaskState::Working);
    assert_eq!(r.save(&rec, None).await, Ok(Some(1)));
    assert_eq!(r.forget_token("c").await, Ok(()));
    assert_eq!(token_of(r, "c", NOW).await, None, "a forgotten token");
    assert_eq!(
        load(r, "c").await,
        Some(revised(&rec, 1)),
        "forgetting a token keeps the record"
    );
    assert_eq!(
        token_of(r, "b", NOW).await,
        Some(Some(p)),
        "other tokens stay"
    );
    assert_eq!(
        r.forget_token("c").await,
        Ok(()),
        "forgetting twice is no error"
    );
    assert_eq!(
        r.forget_token("never").await,
        Ok(()),
        "forgetting a task without a token is no error"
    );
    let q = hash(4);
    issue(r, q, NOW + 60_000).await;
    assert!(
        claim(r, q, "c", None, NOW).await,
        "a task whose token was forgotten has none: it claims a pending one"
    );
    assert_eq!(token_of(r, "c", NOW).await, Some(Some(q)));
}

/// Purging: `purge_expired_tokens(now)` drops the pending and bound tokens expired at `now`,
/// counts them, and keeps the others (tokens without an expiry always). A purged token is
/// gone: no task has it, nobody claims it, whatever the `now` asked later.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_token_purge(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_token_purge(s: Store) {
    let r = remote_of(&s);
    assert_eq!(r.purge_expired_tokens(NOW).await, Ok(0), "nothing to purge");
    let (pending_old, pending_live) = (hash(1), hash(2));
    issue(r, pending_old, NOW + 10).await;
    issue(r, pending_live, NOW + 1_000).await;
    bind(r, hash(3), "bound-old", Some(NOW + 10)).await;
    bind(r, hash(4), "bound-live", Some(NOW + 1_000)).await;
    bind(r, hash(5), "bound-forever", None).await;
    let claimed = hash(6);
    issue(r, claimed, NOW + 1_000).await;
    assert!(claim(r, claimed, "claimed-old", Some(NOW + 10), NOW).await);

    assert_eq!(
        r.purge_expired_tokens(NOW + 5).await,
        Ok(0),
        "nothing expired yet"
    );
    assert_eq!(token_of(r, "bound-old", NOW + 5).await, Some(Some(hash(3))));
    assert_eq!(
        r.purge_expired_tokens(NOW + 500).await,
        Ok(3),
        "the pending token, the bound one and the claimed one expired by then"
    );
    for task in ["bound-old", "claimed-old"] {
        assert_eq!(
            token_of(r, task, NOW).await,
            None,
            "{task}: a purged token is gone (not merely expired)"
        );
    }
    assert!(
        !claim(r, pending_old, "x", None, NOW).await,
        "a purged pending token cannot be claimed, even at a now before its expiry"
    );
    assert_eq!(
        token_of(r, "bound-live", NOW + 500).await,
        Some(Some(hash(4)))
    );
    assert_eq!(
        token_of(r, "bound-forever", NOW + 500).await,
        Some(Some(hash(5)))
    );
    assert!(
        claim(r, pending_live, "y", None, NOW + 500).await,
        "an unexpired pending token is kept"
    );
    assert_eq!(
        r.purge_expired_tokens(NOW + 500).await,
        Ok(0),
        "purging again finds nothing"
    );
    assert_eq!(
        r.purge_expired_tokens(NOW + 10_000).await,
        Ok(1),
        "later, the bound token that lived longer"
    );
    assert_eq!(token_of(r, "bound-live", NOW).await, None);
    assert_eq!(
        token_of(r, "bound-forever", NOW + 10_000).await,
        Some(Some(hash(5))),
        "a token without an expiry is never purged"
    );
    assert_eq!(
        token_of(r, "y", NOW + 10_000).await,
        Some(Some(pending_live)),
        "a token claimed without an expiry is never purged"
    );
}

/// Claims racing: 16 tasks claiming one pending token at once, exactly one gets it; one task
/// claiming 16 pending tokens at once gets exactly one, and the 15 others stay pending.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::remote_concurrent_claims(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn remote_concurrent_claims(s: Store) {
    let r = remote_of(&s);
    let shared = hash(0);
    issue(r, shared, NOW + 60_000).await;
    let outcomes = race(&s, (0..RACERS).map(|i| (shared, format!("claimer-{i:02}")))).await;
    let winners: Vec<&String> = outcomes
        .iter()
        .filter(|(_, _, won)| *won)
        .map(|(_, task, _)| task)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "{RACERS} tasks claiming one pending token: exactly one gets it ({winners:?})"
    );
    for (_, task, won) in &outcomes {
        let want = won.then_some(Some(shared));
        assert_eq!(token_of(r, task, NOW).await, want, "{task}'s token");
    }

    let tokens: Vec<TokenHash> = (1..=RACERS as u8).map(hash).collect();
    for t in &tokens {
        issue(r, *t, NOW + 60_000).await;
    }
    let outcomes = race(&s, tokens.iter().map(|t| (*t, "greedy".to_string()))).await;
    let won: Vec<TokenHash> = outcomes
        .iter()
        .filter(|(_, _, won)| *won)
        .map(|(t, _, _)| *t)
        .collect();
    assert_eq!(
        won.len(),
        1,
        "one task claiming {RACERS} pending tokens at once gets exactly one"
    );
    assert_eq!(token_of(r, "greedy", NOW).await, Some(Some(won[0])));
    for (i, t) in tokens.iter().filter(|t| **t != won[0]).enumerate() {
        assert!(
            claim(r, *t, &format!("later-{i:02}"), None, NOW).await,
            "a token that lost the race is still pending"
        );
    }
}

/// Run the claims at once (released together); each with whether it won.
async fn race(
    s: &Store,
    claims: impl Iterator<Item = (TokenHash, String)>,
) -> Vec<(TokenHash, String, bool)> {
    let claims: Vec<_> = claims.collect();
    let barrier = Arc::new(Barrier::new(claims.len()));
    let handles: Vec<_> = claims
        .into_iter()
        .map(|(token, task)| {
            let (s, barrier) = (s.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let won = remote_of(&s)
                    .claim_token(token, &task, None, NOW)
                    .await
                    .unwrap_or_else(|e| {
                        panic!("a claim racing others failed instead of losing: {e}")
                    });
                (token, task, won)
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("claiming task panicked"));
    }
    out
}
