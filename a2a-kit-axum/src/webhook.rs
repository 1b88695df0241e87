//! Receiving push notifications from remote agents.
//!
//! An app that delegates work to a remote agent with `returnImmediately` and a push config
//! learns of the task's progress here:
//!
//! 1. [`PushTokens::issue_config`] makes a push config for your webhook URL with a fresh random
//!    token (sent back as `Authorization: Bearer <token>`), and remembers the token.
//! 2. Send the message with that config; when the remote agent acknowledges with a Task,
//!    [`bind`](PushTokens::bind) the token to the task id (and, optionally, keep the task in a
//!    [`RemoteTasks`] store).
//! 3. Mount [`WebhookReceiver::router`] (or use the [`VerifiedNotification`] extractor in your
//!    own handler). Each POST is checked and answered:
//!    - **401** when `Authorization: Bearer <token>` is missing or is not the task's token
//!      (compared in constant time), or, with [`verify_signatures`](WebhookReceiver::verify_signatures),
//!      when the `X-A2A-Signature` is missing, does not verify, is stale or replayed;
//!    - **400** when the body is not a `StreamResponse` (a bare `Task`, as older senders post, is
//!      accepted too);
//!    - **404** when the task is not one of yours;
//!    - **204** otherwise. A duplicate delivery (the same event again) is answered 204 and
//!      changes nothing.
//!
//!    Verified updates update the [`RemoteTasks`] store and reach your code through a callback
//!    ([`on_notification`](WebhookReceiver::on_notification)) or a channel
//!    ([`channel`](WebhookReceiver::channel)).
//!
//! A notification can arrive before your app has seen the acknowledgement (the remote task may
//! finish at once). A token issued but not bound yet is therefore accepted for a task id the
//! app does not know, once, and bound to it then; the later [`bind`](PushTokens::bind) agrees.
//!
//! ```no_run
//! use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
//! # async fn demo() {
//! let tokens = PushTokens::new();
//! let tasks = RemoteTasks::new();
//! let (receiver, mut updates) = WebhookReceiver::new(tokens.clone()).store(tasks.clone()).channel(64);
//! let app: axum::Router = axum::Router::new().merge(receiver.router("/a2a/webhook"));
//! let config = tokens.issue_config("https://me.example.com/a2a/webhook");
//! // ... send a message with `configuration.taskPushNotificationConfig = config`, get the Task:
//! # let task_id = "t-1";
//! tokens.bind(task_id, config.token.as_deref().unwrap());
//! while let Some(n) = updates.recv().await {
//!     println!("{} is now {:?}", n.task_id, n.event.state());
//! }
//! # }
//! ```

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use a2a_kit::protocol::{
    AuthenticationInfo, Message, StreamResponse, Task, TaskPushNotificationConfig, TaskStatus,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use subtle::ConstantTimeEq;
use tokio::sync::{Notify, mpsc};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Tokens

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

struct TokenTable {
    bound: HashMap<String, String>,
    /// Issued, not bound yet, with their issue time.
    pending: VecDeque<(String, Instant)>,
    pending_ttl: Duration,
    max_pending: usize,
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

fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// 256 random bits from the OS, base64url without padding.
pub fn random_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

// ---------------------------------------------------------------------------------------------
// Local store of remote tasks

/// What [`RemoteTasks::apply`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The local task changed.
    Changed,
    /// Nothing changed (a repeated or stale update; terminal tasks never change).
    Unchanged,
}

/// The app's local view of tasks running on remote agents, kept up to date by notifications.
/// Cheap to clone (clones share the map).
#[derive(Clone, Default)]
pub struct RemoteTasks {
    inner: Arc<RemoteInner>,
}

#[derive(Default)]
struct RemoteInner {
    tasks: Mutex<HashMap<String, Task>>,
    changed: Notify,
}

impl std::fmt::Debug for RemoteTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTasks")
            .field("tasks", &lock(&self.inner.tasks).len())
            .finish()
    }
}

impl RemoteTasks {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store a task as the remote agent returned it (e.g. its acknowledgement). A task already
    /// terminal locally is kept.
    pub fn insert(&self, task: Task) -> Applied {
        self.apply(&StreamResponse::Task(task))
    }

    /// The local copy of a task.
    pub fn get(&self, task_id: &str) -> Option<Task> {
        lock(&self.inner.tasks).get(task_id).cloned()
    }

    /// All tasks (unordered).
    pub fn all(&self) -> Vec<Task> {
        lock(&self.inner.tasks).values().cloned().collect()
    }

    /// Apply an update: a Task snapshot replaces the local copy; a status update sets the
    /// status (and adds its message to the history); an artifact update adds or extends an
    /// artifact. A task already terminal locally never changes, and a snapshot or status
    /// older than the local status (by its timestamp) is ignored, so an acknowledgement that
    /// arrives after a notification does not roll the task back.
    pub fn apply(&self, event: &StreamResponse) -> Applied {
        let applied = {
            let mut tasks = lock(&self.inner.tasks);
            apply_to(&mut tasks, event)
        };
        if applied == Applied::Changed {
            self.inner.changed.notify_waiters();
        }
        applied
    }

    /// Wait until the local copy of `task_id` satisfies `pred`, and return it.
    pub async fn wait_for(&self, task_id: &str, pred: impl Fn(&Task) -> bool) -> Task {
        loop {
            let notified = self.inner.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(t) = self.get(task_id).filter(|t| pred(t)) {
                return t;
            }
            notified.await;
        }
    }
}

/// A webhook this app serves, as the place a delegation sent without waiting hears of its
/// remote task ([`a2a_kit::client::PushInbox`], set with
/// [`DelegateOptions::push`](a2a_kit::client::DelegateOptions::push)): the tokens and remote
/// tasks of a [`WebhookReceiver`] (built with [`WebhookReceiver::store`]) and the URL it is
/// served at.
///
/// ```no_run
/// use a2a_kit::client::{DelegateOptions, RemoteAgent};
/// use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookInbox, WebhookReceiver};
/// # async fn demo() -> Result<(), a2a_kit::client::ClientError> {
/// let (tokens, tasks) = (PushTokens::new(), RemoteTasks::new());
/// let receiver = WebhookReceiver::new(tokens.clone()).store(tasks.clone());
/// let app: axum::Router = receiver.router("/a2a/webhook"); // serve it at the URL below
/// let inbox = WebhookInbox::new(tokens, tasks, "https://me.example.com/a2a/webhook");
/// let worker = RemoteAgent::connect("https://worker.example.com").await?.with_options(
///     DelegateOptions { push: Some(inbox.into()), ..Default::default() },
/// );
/// # let _ = (app, worker); Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct WebhookInbox {
    tokens: PushTokens,
    tasks: RemoteTasks,
    url: String,
}

impl WebhookInbox {
    /// The inbox of a receiver holding `tokens` and storing into `tasks`, served at `url`.
    pub fn new(tokens: PushTokens, tasks: RemoteTasks, url: impl Into<String>) -> Self {
        WebhookInbox {
            tokens,
            tasks,
            url: url.into(),
        }
    }
}

#[async_trait::async_trait]
impl a2a_kit::client::PushInbox for WebhookInbox {
    fn config(&self) -> TaskPushNotificationConfig {
        self.tokens.issue_config(self.url.clone())
    }

    fn expect(&self, task: &Task, token: &str) {
        self.tokens.bind(task.id.clone(), token);
        self.tasks.insert(task.clone());
    }

    async fn changed(&self, task_id: &str, seen: &Task) -> Task {
        self.tasks
            .wait_for(task_id, |t| {
                t.status.state != seen.status.state
                    || t.status.timestamp != seen.status.timestamp
                    || t.artifacts.len() != seen.artifacts.len()
            })
            .await
    }

    fn forget(&self, task_id: &str) {
        self.tokens.forget(task_id);
    }
}

fn apply_to(tasks: &mut HashMap<String, Task>, event: &StreamResponse) -> Applied {
    let Some(task_id) = event.task_id().map(str::to_string) else {
        return Applied::Unchanged;
    };
    if tasks
        .get(&task_id)
        .is_some_and(|t| t.status.state.is_terminal())
    {
        return Applied::Unchanged;
    }
    match event {
        StreamResponse::Task(t) => {
            if tasks
                .get(&task_id)
                .is_some_and(|local| local == t || is_stale(&t.status, &local.status))
            {
                return Applied::Unchanged;
            }
            tasks.insert(task_id, t.clone());
            Applied::Changed
        }
        StreamResponse::StatusUpdate(u) => {
            let task = tasks.entry(task_id.clone()).or_insert_with(|| Task {
                id: task_id,
                context_id: u.context_id.clone(),
                status: TaskStatus {
                    state: u.status.state,
                    message: None,
                    timestamp: None,
                },
                artifacts: Vec::new(),
                history: Vec::new(),
                metadata: None,
            });
            if task.status == u.status || is_stale(&u.status, &task.status) {
                return Applied::Unchanged;
            }
            if let Some(m) = &u.status.message {
                push_message(&mut task.history, m);
            }
            task.status = u.status.clone();
            Applied::Changed
        }
        StreamResponse::ArtifactUpdate(u) => {
            let Some(task) = tasks.get_mut(&task_id) else {
                let mut task = Task {
                    id: task_id.clone(),
                    context_id: u.context_id.clone(),
                    status: TaskStatus::default(),
                    artifacts: vec![u.artifact.clone()],
                    history: Vec::new(),
                    metadata: None,
                };
                task.status.state = a2a_kit::protocol::TaskState::Working;
                tasks.insert(task_id, task);
                return Applied::Changed;
            };
            match task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == u.artifact.artifact_id)
            {
                Some(a) if u.append => a.parts.extend(u.artifact.parts.iter().cloned()),
                Some(a) => {
                    if *a == u.artifact {
                        return Applied::Unchanged;
                    }
                    *a = u.artifact.clone();
                }
                None => task.artifacts.push(u.artifact.clone()),
            }
            Applied::Changed
        }
        StreamResponse::Message(m) => {
            let Some(task) = tasks.get_mut(&task_id) else {
                return Applied::Unchanged;
            };
            if task.history.iter().any(|h| h.message_id == m.message_id) {
                return Applied::Unchanged;
            }
            task.history.push(m.clone());
            Applied::Changed
        }
    }
}

/// Whether `incoming` is older than `local` (so an acknowledgement that arrives after a
/// notification does not roll the task back): an earlier timestamp, or the same millisecond
/// and an earlier point in the lifecycle.
fn is_stale(incoming: &TaskStatus, local: &TaskStatus) -> bool {
    fn rank(s: a2a_kit::protocol::TaskState) -> u8 {
        if s.is_terminal() {
            3
        } else if s.is_interrupted() {
            2
        } else if s == a2a_kit::protocol::TaskState::Working {
            1
        } else {
            0
        }
    }
    match (incoming.timestamp, local.timestamp) {
        (Some(i), Some(l)) => i < l || (i == l && rank(incoming.state) < rank(local.state)),
        _ => false,
    }
}

fn push_message(history: &mut Vec<Message>, m: &Message) {
    if m.message_id.is_empty() || !history.iter().any(|h| h.message_id == m.message_id) {
        history.push(m.clone());
    }
}

// ---------------------------------------------------------------------------------------------
// Receiver

/// A verified notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The task it is about.
    pub task_id: String,
    /// The update (a bare Task body arrives as [`StreamResponse::Task`]).
    pub event: StreamResponse,
    /// Whether the body was a bare Task rather than a `StreamResponse`.
    pub bare_task: bool,
    /// The local copy of the task after applying the update, when the receiver has a
    /// [`RemoteTasks`] store.
    pub task: Option<Task>,
}

/// Why a notification was not taken. Its response is the answer to the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookRejection {
    /// No `Authorization: Bearer <token>` header (401).
    MissingToken,
    /// The token is not the task's token (401).
    WrongToken,
    /// The body is not a notification (400).
    MalformedBody(String),
    /// The task is not one of this app's (404).
    UnknownTask(String),
    /// The same event was received before; nothing changed (204).
    Duplicate,
    /// The app could not take the update now (503; the sender retries).
    Unavailable,
    /// The receiver [verifies signatures](WebhookReceiver::verify_signatures) and the
    /// delivery has no `X-A2A-Signature` header (401).
    MissingSignature,
    /// The signature does not verify against a trusted key, or cannot be read (401); the
    /// reason says which.
    BadSignature(String),
    /// The signature's `iat` is missing or outside the [replay
    /// window](WebhookReceiver::replay_window) (401).
    StaleSignature,
    /// The signature's `jti` was seen within the replay window: a replayed delivery (401).
    Replayed,
}

impl WebhookRejection {
    /// The HTTP status it answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            WebhookRejection::MissingToken
            | WebhookRejection::WrongToken
            | WebhookRejection::MissingSignature
            | WebhookRejection::BadSignature(_)
            | WebhookRejection::StaleSignature
            | WebhookRejection::Replayed => StatusCode::UNAUTHORIZED,
            WebhookRejection::MalformedBody(_) => StatusCode::BAD_REQUEST,
            WebhookRejection::UnknownTask(_) => StatusCode::NOT_FOUND,
            WebhookRejection::Duplicate => StatusCode::NO_CONTENT,
            WebhookRejection::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl std::fmt::Display for WebhookRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebhookRejection::MissingToken => f.write_str("missing bearer token"),
            WebhookRejection::WrongToken => f.write_str("invalid token"),
            WebhookRejection::MalformedBody(why) => write!(f, "malformed notification: {why}"),
            WebhookRejection::UnknownTask(id) => write!(f, "unknown task {id}"),
            WebhookRejection::Duplicate => f.write_str("duplicate notification"),
            WebhookRejection::Unavailable => {
                f.write_str("the receiver is not accepting notifications")
            }
            WebhookRejection::MissingSignature => f.write_str("missing X-A2A-Signature"),
            WebhookRejection::BadSignature(why) => write!(f, "invalid signature: {why}"),
            WebhookRejection::StaleSignature => {
                f.write_str("the signature's iat is missing or outside the replay window")
            }
            WebhookRejection::Replayed => f.write_str("replayed delivery (jti already seen)"),
        }
    }
}

impl std::error::Error for WebhookRejection {}

impl IntoResponse for WebhookRejection {
    fn into_response(self) -> Response {
        let status = self.status();
        if status == StatusCode::NO_CONTENT {
            return status.into_response();
        }
        let mut resp = (status, self.to_string()).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

type Callback = Arc<dyn Fn(Notification) + Send + Sync>;

/// Checks, de-duplicates and applies incoming push notifications. Cheap to clone.
#[derive(Clone)]
pub struct WebhookReceiver {
    tokens: PushTokens,
    store: Option<RemoteTasks>,
    callback: Option<Callback>,
    sender: Option<mpsc::Sender<Notification>>,
    seen: Arc<Mutex<Seen>>,
    verifier: Option<a2a_kit::signing::Verifier>,
    replay_window: Duration,
    jtis: Arc<Mutex<Jtis>>,
}

/// The default [`WebhookReceiver::replay_window`]: 5 minutes.
pub const DEFAULT_REPLAY_WINDOW: Duration = Duration::from_secs(300);

/// The most `jti`s remembered (the oldest are forgotten first), so memory stays bounded.
const MAX_JTIS: usize = 100_000;

/// The `jti`s of signed deliveries accepted within the replay window, with their `iat`.
#[derive(Default)]
struct Jtis {
    seen: HashMap<String, i64>,
    order: VecDeque<(i64, String)>,
}

impl Jtis {
    /// Record `jti`; false if it was seen within the window.
    fn insert(&mut self, jti: &str, iat: i64, now: i64, window: i64) -> bool {
        while let Some((at, _)) = self.order.front() {
            if *at >= now - window && self.order.len() < MAX_JTIS {
                break;
            }
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        if self.seen.contains_key(jti) {
            return false;
        }
        self.seen.insert(jti.to_string(), iat);
        // Forgotten when its `iat` leaves the window (kept in arrival order; an early `iat`
        // is forgotten a little late, never early).
        self.order.push_back((iat.max(now), jti.to_string()));
        true
    }
}

impl std::fmt::Debug for WebhookReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookReceiver")
            .field("tokens", &self.tokens)
            .field("store", &self.store.is_some())
            .field("callback", &self.callback.is_some())
            .field("channel", &self.sender.is_some())
            .field("verifier", &self.verifier)
            .field("replay_window", &self.replay_window)
            .finish()
    }
}

/// Digests of recently processed events, per task (bounded).
#[derive(Default)]
struct Seen {
    per_task: HashMap<String, VecDeque<u64>>,
    order: VecDeque<String>,
}

const SEEN_PER_TASK: usize = 256;
const SEEN_TASKS: usize = 10_000;

impl Seen {
    /// Record `digest` for `task_id`; false if it was there already.
    fn insert(&mut self, task_id: &str, digest: u64) -> bool {
        if !self.per_task.contains_key(task_id) {
            self.order.push_back(task_id.to_string());
            while self.order.len() > SEEN_TASKS {
                if let Some(old) = self.order.pop_front() {
                    self.per_task.remove(&old);
                }
            }
        }
        let list = self.per_task.entry(task_id.to_string()).or_default();
        if list.contains(&digest) {
            return false;
        }
        list.push_back(digest);
        if list.len() > SEEN_PER_TASK {
            list.pop_front();
        }
        true
    }

    fn remove(&mut self, task_id: &str, digest: u64) {
        if let Some(list) = self.per_task.get_mut(task_id) {
            list.retain(|d| *d != digest);
        }
    }
}

impl WebhookReceiver {
    /// A receiver checking tokens against `tokens`.
    pub fn new(tokens: PushTokens) -> Self {
        WebhookReceiver {
            tokens,
            store: None,
            callback: None,
            sender: None,
            seen: Arc::default(),
            verifier: None,
            replay_window: DEFAULT_REPLAY_WINDOW,
            jtis: Arc::default(),
        }
    }

    /// Accept only deliveries signed by a key `verifier` trusts (what an agent sends with
    /// a2a-kit's `PushConfig::sign`): the `X-A2A-Signature` header must be a detached JWS
    /// over the exact body whose `iat` is within the [replay window](Self::replay_window) and
    /// whose `jti` was not seen within it. Anything else is 401, before the body is applied.
    /// The bearer token is checked as before: a signature names the sender, the token the
    /// task.
    pub fn verify_signatures(mut self, verifier: a2a_kit::signing::Verifier) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// How old (or how far in the future, for clock skew) a signature's `iat` may be, and how
    /// long its `jti` is remembered against replays (default [`DEFAULT_REPLAY_WINDOW`], 5
    /// minutes). At most 100 000 `jti`s are remembered.
    pub fn replay_window(mut self, window: Duration) -> Self {
        self.replay_window = window;
        self
    }

    /// The signature check: the delivery's header verifies over `body`, its `iat` is recent
    /// and its `jti` new.
    fn check_signature(&self, headers: &HeaderMap, body: &[u8]) -> Result<(), WebhookRejection> {
        let Some(verifier) = &self.verifier else {
            return Ok(());
        };
        let jws = headers
            .get(a2a_kit::signing::SIGNATURE_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or(WebhookRejection::MissingSignature)?;
        let verified = verifier
            .verify_detached(jws, body)
            .map_err(|e| WebhookRejection::BadSignature(e.to_string()))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let window = self.replay_window.as_secs() as i64;
        let iat = verified
            .header
            .get("iat")
            .and_then(serde_json::Value::as_i64)
            .filter(|iat| (now - iat).abs() <= window)
            .ok_or(WebhookRejection::StaleSignature)?;
        let jti = verified
            .header
            .get("jti")
            .and_then(serde_json::Value::as_str)
            .filter(|j| !j.is_empty())
            .ok_or_else(|| WebhookRejection::BadSignature("the signature has no `jti`".into()))?;
        if !lock(&self.jtis).insert(jti, iat, now, window) {
            return Err(WebhookRejection::Replayed);
        }
        Ok(())
    }

    /// Keep `store` up to date with every verified notification.
    pub fn store(mut self, store: RemoteTasks) -> Self {
        self.store = Some(store);
        self
    }

    /// Call `f` with every verified, new notification (from the request handler: keep it
    /// short, or hand the work to a task).
    pub fn on_notification(mut self, f: impl Fn(Notification) + Send + Sync + 'static) -> Self {
        self.callback = Some(Arc::new(f));
        self
    }

    /// Send every verified, new notification to a channel of `capacity`. When the channel is
    /// full the webhook waits (the sender's timeout and retries then apply); when its receiver
    /// is dropped, notifications are answered 503.
    pub fn channel(mut self, capacity: usize) -> (Self, mpsc::Receiver<Notification>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        self.sender = Some(tx);
        (self, rx)
    }

    /// The token table.
    pub fn tokens(&self) -> &PushTokens {
        &self.tokens
    }

    /// The remote-task store, if any.
    pub fn remote_tasks(&self) -> Option<&RemoteTasks> {
        self.store.as_ref()
    }

    /// Verify a notification and apply it to the store, without calling the callback or the
    /// channel (what the [`VerifiedNotification`] extractor does).
    pub fn verify(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Notification, WebhookRejection> {
        self.verify_inner(headers, body).map(|(n, _)| n)
    }

    fn verify_inner(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(Notification, u64), WebhookRejection> {
        let presented = bearer_token(headers).ok_or(WebhookRejection::MissingToken)?;
        self.check_signature(headers, body)?;
        let (event, bare_task) = parse_body(body)?;
        let task_id = event
            .task_id()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                WebhookRejection::MalformedBody("the notification names no task".into())
            })?
            .to_string();
        match self.tokens.check(&task_id, presented) {
            TokenCheck::Valid => {}
            TokenCheck::Mismatch => return Err(WebhookRejection::WrongToken),
            TokenCheck::UnknownTask => return Err(WebhookRejection::UnknownTask(task_id)),
        }
        let digest = digest(&event);
        if !lock(&self.seen).insert(&task_id, digest) {
            return Err(WebhookRejection::Duplicate);
        }
        let task = self.store.as_ref().and_then(|s| {
            s.apply(&event);
            s.get(&task_id)
        });
        Ok((
            Notification {
                task_id,
                event,
                bare_task,
                task,
            },
            digest,
        ))
    }

    /// Verify, apply, and hand a notification to the callback and the channel.
    pub async fn receive(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Notification, WebhookRejection> {
        let (n, digest) = self.verify_inner(headers, body)?;
        if let Some(tx) = &self.sender {
            if tx.send(n.clone()).await.is_err() {
                lock(&self.seen).remove(&n.task_id, digest);
                return Err(WebhookRejection::Unavailable);
            }
        }
        if let Some(cb) = &self.callback {
            cb(n.clone());
        }
        Ok(n)
    }

    /// A router with `POST path` answering as described in the [module docs](self). Merge it
    /// into your app.
    pub fn router<S: Clone + Send + Sync + 'static>(&self, path: &str) -> Router<S> {
        let me = self.clone();
        Router::new().route(
            path,
            post(move |headers: HeaderMap, body: Bytes| {
                let me = me.clone();
                async move {
                    match me.receive(&headers, &body).await {
                        Ok(n) => {
                            tracing::debug!(task_id = %n.task_id, state = ?n.event.state(), "push notification received");
                            StatusCode::NO_CONTENT.into_response()
                        }
                        Err(rejection) => {
                            if rejection != WebhookRejection::Duplicate {
                                tracing::warn!(%rejection, "push notification refused");
                            }
                            rejection.into_response()
                        }
                    }
                }
            }),
        )
    }
}

/// The token of `Authorization: Bearer <token>` (scheme case-insensitive).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A `StreamResponse`, or a bare `Task` (`{"id", "status", ...}`).
fn parse_body(body: &[u8]) -> Result<(StreamResponse, bool), WebhookRejection> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| WebhookRejection::MalformedBody(format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(WebhookRejection::MalformedBody(
            "the body is not a JSON object".into(),
        ));
    }
    let wrapped = [
        "task",
        "message",
        "statusUpdate",
        "artifactUpdate",
        "status_update",
        "artifact_update",
    ]
    .iter()
    .any(|k| value.get(k).is_some());
    if wrapped {
        return serde_json::from_value::<StreamResponse>(value)
            .map(|e| (e, false))
            .map_err(|e| WebhookRejection::MalformedBody(e.to_string()));
    }
    if value.get("id").is_some() && value.get("status").is_some() {
        return serde_json::from_value::<Task>(value)
            .map(|t| (StreamResponse::Task(t), true))
            .map_err(|e| WebhookRejection::MalformedBody(format!("not a Task: {e}")));
    }
    Err(WebhookRejection::MalformedBody(
        "expected a StreamResponse (task, message, statusUpdate or artifactUpdate)".into(),
    ))
}

/// A digest of the event's canonical JSON (the same event re-sent digests the same, whatever
/// its formatting).
fn digest(event: &StreamResponse) -> u64 {
    let canonical = serde_json::to_vec(event).unwrap_or_default();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut h);
    h.finish()
}

/// An extractor for your own webhook handler: the request is verified (token, body, task) and
/// applied to the receiver's store; a duplicate is answered 204 before your handler runs. The
/// receiver comes from the router state (`WebhookReceiver: FromRef<S>`). The callback and the
/// channel are not used: your handler is the consumer.
///
/// ```no_run
/// use a2a_kit_axum::webhook::{PushTokens, VerifiedNotification, WebhookReceiver};
/// use axum::{Router, http::StatusCode, routing::post};
///
/// async fn hook(VerifiedNotification(n): VerifiedNotification) -> StatusCode {
///     println!("{} -> {:?}", n.task_id, n.event.state());
///     StatusCode::NO_CONTENT
/// }
/// let app: Router = Router::new()
///     .route("/hook", post(hook))
///     .with_state(WebhookReceiver::new(PushTokens::new()));
/// ```
#[derive(Debug, Clone)]
pub struct VerifiedNotification(pub Notification);

impl<S> FromRequest<S> for VerifiedNotification
where
    S: Send + Sync,
    WebhookReceiver: FromRef<S>,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let receiver = WebhookReceiver::from_ref(state);
        let headers = req.headers().clone();
        let body = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        receiver
            .verify(&headers, &body)
            .map(VerifiedNotification)
            .map_err(IntoResponse::into_response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_long() {
        let a = random_token();
        let b = random_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
    }

    #[test]
    fn pending_tokens_bind_once() {
        let tokens = PushTokens::new();
        let t = tokens.issue();
        assert_eq!(tokens.check("task-1", "nope"), TokenCheck::UnknownTask);
        assert_eq!(tokens.check("task-1", &t), TokenCheck::Valid);
        assert!(tokens.knows("task-1"));
        // The token is now task-1's: it does not open another task.
        assert_eq!(tokens.check("task-2", &t), TokenCheck::UnknownTask);
        assert_eq!(tokens.check("task-1", "nope"), TokenCheck::Mismatch);
        tokens.bind("task-1", &t);
        assert_eq!(tokens.check("task-1", &t), TokenCheck::Valid);
    }

    #[test]
    fn pending_tokens_expire() {
        let tokens = PushTokens::new().pending_ttl(Duration::ZERO);
        let t = tokens.issue();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(tokens.check("task-1", &t), TokenCheck::UnknownTask);
    }

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer_token(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&h), None);
    }
}
