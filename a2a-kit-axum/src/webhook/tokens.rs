//! The tokens a webhook accepts: issued with push configs, bound to remote tasks.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_kit::protocol::{AuthenticationInfo, TaskPushNotificationConfig};
use subtle::ConstantTimeEq;

use super::*;

/// Per-task webhook tokens: generates them and remembers which task each belongs to. Cheap to
/// clone (clones share the table).
#[derive(Clone)]
pub struct PushTokens {
    inner: Arc<Mutex<TokenTable>>,
}

impl std::fmt::Debug for PushTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = lock(&self.inner);
        f.debug_struct("PushTokens")
            .field("bound", &t.bound.len())
            .field("pending", &t.pending.len())
            .finish()
    }
}

pub(super) struct TokenTable {
    pub(super) bound: HashMap<String, String>,
    /// Issued, not bound yet, with their issue time.
    pub(super) pending: VecDeque<(String, Instant)>,
    pub(super) pending_ttl: Duration,
    pub(super) max_pending: usize,
}

/// What a presented token is, for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCheck {
    /// The task's token.
    Valid,
    /// The task is known, the token is not its token.
    Mismatch,
    /// The task is not known (and the token is no pending one).
    UnknownTask,
}

impl Default for PushTokens {
    fn default() -> Self {
        Self::new()
    }
}

impl PushTokens {
    /// An empty table; issued tokens wait 10 minutes to be bound.
    pub fn new() -> Self {
        PushTokens {
            inner: Arc::new(Mutex::new(TokenTable {
                bound: HashMap::new(),
                pending: VecDeque::new(),
                pending_ttl: Duration::from_secs(600),
                max_pending: 10_000,
            })),
        }
    }

    /// How long an issued token waits to be bound (default 10 minutes).
    pub fn pending_ttl(self, ttl: Duration) -> Self {
        lock(&self.inner).pending_ttl = ttl;
        self
    }

    /// A new random token (256 bits, base64url), remembered as pending until
    /// [`bind`](Self::bind) ties it to a task.
    pub fn issue(&self) -> String {
        let token = random_token();
        let mut t = lock(&self.inner);
        t.expire();
        t.pending.push_back((token.clone(), Instant::now()));
        while t.pending.len() > t.max_pending {
            t.pending.pop_front();
        }
        token
    }

    /// A push config for `url` with a fresh token, sent both as the config's `token` and as
    /// `authentication: {scheme: "Bearer", credentials: <token>}`.
    pub fn issue_config(&self, url: impl Into<String>) -> TaskPushNotificationConfig {
        let token = self.issue();
        TaskPushNotificationConfig {
            url: url.into(),
            token: Some(token.clone()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some(token),
            }),
            ..Default::default()
        }
    }

    /// Tie `token` to `task_id` (after the remote agent acknowledged the task). Also works for
    /// tokens this table did not issue.
    pub fn bind(&self, task_id: impl Into<String>, token: &str) {
        let mut t = lock(&self.inner);
        t.pending.retain(|(p, _)| p != token);
        t.bound.insert(task_id.into(), token.to_string());
    }

    /// Forget a task's token (its notifications are then 404).
    pub fn forget(&self, task_id: &str) {
        lock(&self.inner).bound.remove(task_id);
    }

    /// Whether a token is bound to `task_id`.
    pub fn knows(&self, task_id: &str) -> bool {
        lock(&self.inner).bound.contains_key(task_id)
    }

    /// Check `presented` for `task_id`, in constant time. A task not known yet whose token is
    /// a pending one gets that token bound now.
    pub fn check(&self, task_id: &str, presented: &str) -> TokenCheck {
        let mut t = lock(&self.inner);
        if let Some(expected) = t.bound.get(task_id) {
            return if ct_eq(expected, presented) {
                TokenCheck::Valid
            } else {
                TokenCheck::Mismatch
            };
        }
        t.expire();
        // Compare with every pending token, without stopping early.
        let mut found = None;
        for (i, (p, _)) in t.pending.iter().enumerate() {
            if ct_eq(p, presented) {
                found = Some(i);
            }
        }
        match found.and_then(|i| t.pending.remove(i)) {
            Some((token, _)) => {
                t.bound.insert(task_id.to_string(), token);
                TokenCheck::Valid
            }
            None => TokenCheck::UnknownTask,
        }
    }
}

impl TokenTable {
    fn expire(&mut self) {
        let ttl = self.pending_ttl;
        while self
            .pending
            .front()
            .is_some_and(|(_, at)| at.elapsed() > ttl)
        {
            self.pending.pop_front();
        }
    }
}

pub(super) fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// 256 random bits from the OS, base64url without padding.
pub fn random_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
