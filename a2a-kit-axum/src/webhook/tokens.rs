//! The tokens a webhook accepts: issued with push configs, bound to remote tasks, kept hashed
//! in a store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_kit::protocol::{AuthenticationInfo, TaskPushNotificationConfig};
use a2a_kit::store::{InMemoryTaskManager, StoreError, TaskManager, TokenHash};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Per-task webhook tokens: generates them and remembers which task each belongs to, as their
/// SHA-256 in a store (in memory by default; [`open`](Self::open) a SQLite file or PostgreSQL
/// for tokens that outlive the process, so a webhook posted after a restart is still
/// accepted). Cheap to clone (clones share the table).
#[derive(Clone)]
pub struct PushTokens {
    inner: Arc<TokensInner>,
}

struct TokensInner {
    store: Arc<dyn TaskManager>,
    pending_ttl: Duration,
    token_ttl: Option<Duration>,
    /// When `issue` last purged expired tokens (Unix millis).
    purged_at: AtomicU64,
}

impl Clone for TokensInner {
    fn clone(&self) -> Self {
        TokensInner {
            store: self.store.clone(),
            pending_ttl: self.pending_ttl,
            token_ttl: self.token_ttl,
            purged_at: AtomicU64::new(self.purged_at.load(Ordering::Relaxed)),
        }
    }
}

/// How often `issue` purges expired tokens.
const PURGE_EVERY_MS: u64 = 60_000;

impl std::fmt::Debug for PushTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushTokens")
            .field("durable", &self.inner.store.is_durable())
            .field("pending_ttl", &self.inner.pending_ttl)
            .field("token_ttl", &self.inner.token_ttl)
            .finish()
    }
}

/// What a presented token is, for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCheck {
    /// The task's token.
    Valid,
    /// The task is known, the token is not its token.
    Mismatch,
    /// The task's token outlived its [time to live](PushTokens::token_ttl).
    Expired,
    /// The task is not known (and the token is no pending one).
    UnknownTask,
}

impl Default for PushTokens {
    fn default() -> Self {
        Self::new()
    }
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// The store's remote-task capability, or an error saying the store has none.
pub(super) fn capable(store: &Arc<dyn TaskManager>) -> Result<(), StoreError> {
    match store.remote_tasks() {
        Some(_) => Ok(()),
        None => Err(StoreError::Backend(
            "this store keeps no remote tasks (TaskManager::remote_tasks is None)".into(),
        )),
    }
}

impl PushTokens {
    /// A table in memory (lost with the process); issued tokens wait 10 minutes to be bound,
    /// bound ones never expire.
    pub fn new() -> Self {
        Self::on(Arc::new(InMemoryTaskManager::default()))
    }

    /// A table kept in `store` (one of the kit's: in memory, SQLite, PostgreSQL): tokens
    /// issued or bound before a restart are accepted after it. Errors when the store does not
    /// keep remote tasks ([`TaskManager::remote_tasks`]).
    pub fn open(store: Arc<dyn TaskManager>) -> Result<Self, StoreError> {
        capable(&store)?;
        Ok(Self::on(store))
    }

    fn on(store: Arc<dyn TaskManager>) -> Self {
        PushTokens {
            inner: Arc::new(TokensInner {
                store,
                pending_ttl: Duration::from_secs(600),
                token_ttl: None,
                purged_at: AtomicU64::new(0),
            }),
        }
    }

    fn store(&self) -> &dyn a2a_kit::store::RemoteTaskStore {
        self.inner
            .store
            .remote_tasks()
            .expect("checked when the table was made")
    }

    /// How long an issued token waits to be bound (default 10 minutes). Set before cloning.
    pub fn pending_ttl(mut self, ttl: Duration) -> Self {
        Arc::make_mut(&mut self.inner).pending_ttl = ttl;
        self
    }

    /// How long a token stays valid once bound to its task (default: for as long as the task
    /// is tracked). After it, the task's webhooks are refused (401) and the token is purged.
    /// Set before cloning.
    pub fn token_ttl(mut self, ttl: Duration) -> Self {
        Arc::make_mut(&mut self.inner).token_ttl = Some(ttl);
        self
    }

    fn bound_expiry(&self) -> Option<u64> {
        self.inner
            .token_ttl
            .map(|ttl| now_ms().saturating_add(ttl.as_millis() as u64))
    }

    /// A new random token (256 bits, base64url), remembered (hashed) as pending until
    /// [`bind`](Self::bind) ties it to a task. Expired tokens are purged on the way, at most
    /// once a minute (an expired token is refused whether purged or not).
    pub async fn issue(&self) -> Result<String, StoreError> {
        let token = random_token();
        let now = now_ms();
        let last = self.inner.purged_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= PURGE_EVERY_MS
            && self
                .inner
                .purged_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.store().purge_expired_tokens(now).await?;
        }
        let expires = now.saturating_add(self.inner.pending_ttl.as_millis() as u64);
        self.store().issue_token(hash(&token), expires).await?;
        Ok(token)
    }

    /// A push config for `url` with a fresh token, sent both as the config's `token` and as
    /// `authentication: {scheme: "Bearer", credentials: <token>}`.
    pub async fn issue_config(
        &self,
        url: impl Into<String>,
    ) -> Result<TaskPushNotificationConfig, StoreError> {
        let token = self.issue().await?;
        Ok(TaskPushNotificationConfig {
            url: url.into(),
            token: Some(token.clone()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some(token),
            }),
            ..Default::default()
        })
    }

    /// Tie `token` to `task_id` (after the remote agent acknowledged the task), replacing the
    /// task's previous token. Also works for tokens this table did not issue. A token opens
    /// one task: bound to another, it moves there.
    pub async fn bind(&self, task_id: &str, token: &str) -> Result<(), StoreError> {
        self.store()
            .bind_token(hash(token), task_id, self.bound_expiry())
            .await
    }

    /// Forget a task's token (its notifications are then refused).
    pub async fn forget(&self, task_id: &str) -> Result<(), StoreError> {
        self.store().forget_token(task_id).await
    }

    /// Whether a valid token is bound to `task_id`.
    pub async fn knows(&self, task_id: &str) -> Result<bool, StoreError> {
        Ok(matches!(
            self.store().token_of(task_id, now_ms()).await?,
            Some(Some(_))
        ))
    }

    /// Check `presented` for `task_id` (hashes compared in constant time). A task not known
    /// yet whose token is a pending one gets that token bound now.
    pub async fn check(&self, task_id: &str, presented: &str) -> Result<TokenCheck, StoreError> {
        let presented = hash(presented);
        let now = now_ms();
        match self.store().token_of(task_id, now).await? {
            Some(Some(expected)) => {
                return Ok(if bool::from(expected.ct_eq(&presented)) {
                    TokenCheck::Valid
                } else {
                    TokenCheck::Mismatch
                });
            }
            Some(None) => return Ok(TokenCheck::Expired),
            None => {}
        }
        let claimed = self
            .store()
            .claim_token(presented, task_id, self.bound_expiry(), now)
            .await?;
        Ok(if claimed {
            TokenCheck::Valid
        } else {
            TokenCheck::UnknownTask
        })
    }
}

/// 256 random bits from the OS, base64url without padding.
pub fn random_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
