//! The token checks of the `remote_tasks` group: webhook tokens kept as hashes, claimed once,
//! bound, expired, forgotten and purged, alone and racing.

use super::*;

async fn issue(r: &dyn RemoteTaskStore, h: TokenHash, expires_ms: u64) {
    r.issue_token(h, expires_ms).await.expect("issue_token");
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
