//! The webhook itself: checks a notification (size, token, signature, replay) and hands it
//! on.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::protocol::{StreamResponse, Task};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::sync::mpsc;

use super::*;

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

impl Notification {
    /// What a task snapshot larger than the sender's `PushConfig::max_task_body` left out
    /// (its history, its largest artifacts), if this is one: read the task with GetTask for
    /// the rest. `None` for a whole snapshot and for status and artifact updates.
    pub fn trimmed(&self) -> Option<a2a_kit::push::TrimmedSnapshot> {
        match &self.event {
            StreamResponse::Task(task) => a2a_kit::push::TrimmedSnapshot::of(task),
            _ => None,
        }
    }
}

/// Why a notification was not taken. Its response is the answer to the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookRejection {
    /// Neither `Authorization: Bearer <token>` nor `X-A2A-Notification-Token` carries a token
    /// (401).
    MissingToken,
    /// No token presented (in either header) is the task's token (401).
    WrongToken,
    /// The body is larger than the receiver's [body limit](WebhookReceiver::body_limit) (413).
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body is not a notification (400).
    MalformedBody(String),
    /// The task is not one of this app's (404).
    UnknownTask(String),
    /// The token was the task's, and its [time to live](PushTokens::token_ttl) is over (401).
    ExpiredToken,
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
            | WebhookRejection::ExpiredToken
            | WebhookRejection::MissingSignature
            | WebhookRejection::BadSignature(_)
            | WebhookRejection::StaleSignature
            | WebhookRejection::Replayed => StatusCode::UNAUTHORIZED,
            WebhookRejection::MalformedBody(_) => StatusCode::BAD_REQUEST,
            WebhookRejection::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            WebhookRejection::UnknownTask(_) => StatusCode::NOT_FOUND,
            WebhookRejection::Duplicate => StatusCode::NO_CONTENT,
            WebhookRejection::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl std::fmt::Display for WebhookRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebhookRejection::MissingToken => f.write_str(
                "missing token: looked for `Authorization: Bearer <token>` and `X-A2A-Notification-Token`",
            ),
            WebhookRejection::WrongToken => f.write_str(
                "invalid token: neither `Authorization: Bearer` nor `X-A2A-Notification-Token` carries the task's token",
            ),
            WebhookRejection::ExpiredToken => f.write_str("the task's token has expired"),
            WebhookRejection::TooLarge { limit } => write!(
                f,
                "the notification is larger than this webhook accepts ({limit} bytes)"
            ),
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
    body_limit: usize,
    log: Option<super::DeliveryLog>,
}

/// The default [`WebhookReceiver::replay_window`]: 5 minutes.
pub const DEFAULT_REPLAY_WINDOW: Duration = Duration::from_secs(300);

/// The most `jti`s remembered (the oldest are forgotten first), so memory stays bounded.
pub(super) const MAX_JTIS: usize = 100_000;

/// The `jti`s of signed deliveries accepted within the replay window, with their `iat`.
#[derive(Default)]
pub(super) struct Jtis {
    pub(super) seen: HashMap<String, i64>,
    pub(super) order: VecDeque<(i64, String)>,
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
            .field("body_limit", &self.body_limit)
            .finish()
    }
}

/// Digests of recently processed events, per task (bounded).
#[derive(Default)]
pub(super) struct Seen {
    pub(super) per_task: HashMap<String, VecDeque<u64>>,
    pub(super) order: VecDeque<String>,
}

pub(super) const SEEN_PER_TASK: usize = 256;
pub(super) const SEEN_TASKS: usize = 10_000;

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
    /// The default [`body_limit`](Self::body_limit): 2 MiB, twice the largest task snapshot an
    /// a2a-kit agent pushes by default ([`a2a_kit::push::DEFAULT_MAX_TASK_BODY`]).
    pub const DEFAULT_BODY_LIMIT: usize = 2 * 1024 * 1024;

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
            body_limit: Self::DEFAULT_BODY_LIMIT,
            log: None,
        }
    }

    /// The largest body taken, in bytes (default [`DEFAULT_BODY_LIMIT`](Self::DEFAULT_BODY_LIMIT), 2 MiB); a larger one
    /// is answered 413, unread. Applies to [`router`](Self::router) and to the
    /// [`VerifiedNotification`] extractor. Keep it above the sender's largest task snapshot
    /// (a2a-kit's `PushConfig::max_task_body`, 1 MiB by default), or its final notifications
    /// are refused for good.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Accept only deliveries signed by a key `verifier` trusts (what an agent sends with
    /// a2a-kit's `PushConfig::sign`): the `X-A2A-Signature` header must be a detached JWS
    /// over the exact body whose `iat` is within the [replay window](Self::replay_window) and
    /// whose `jti` was not seen within it. Anything else is 401, before the body is applied.
    /// The task's token is checked as before: a signature names the sender, the token the
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

    /// Keep every delivery this receiver's [`router`](Self::router) answers, accepted or
    /// refused, in `log` (what the console's delivery view reads).
    pub fn record_to(mut self, log: &super::DeliveryLog) -> Self {
        self.log = Some(log.clone());
        self
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
    pub async fn verify(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Notification, WebhookRejection> {
        self.verify_inner(headers, body).await.map(|(n, _)| n)
    }

    async fn verify_inner(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(Notification, u64), WebhookRejection> {
        let presented = presented_tokens(headers);
        if presented.is_empty() {
            return Err(WebhookRejection::MissingToken);
        }
        self.check_signature(headers, body)?;
        let (event, bare_task) = parse_body(body)?;
        let task_id = event
            .task_id()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                WebhookRejection::MalformedBody("the notification names no task".into())
            })?
            .to_string();
        // Either header carrying the task's token admits the delivery: a config's
        // `authentication` may fill `Authorization` with credentials of the sender's own.
        // Failing that, an expired token says more than a wrong one.
        let mut verdict = TokenCheck::UnknownTask;
        for token in presented {
            let check = self.tokens.check(&task_id, token).await.map_err(|e| {
                tracing::warn!(target: "a2a_kit_axum::webhook", error = %e, "could not check a webhook token");
                WebhookRejection::Unavailable
            })?;
            match check {
                TokenCheck::Valid => {
                    verdict = TokenCheck::Valid;
                    break;
                }
                TokenCheck::Expired => verdict = TokenCheck::Expired,
                TokenCheck::Mismatch if verdict != TokenCheck::Expired => {
                    verdict = TokenCheck::Mismatch;
                }
                TokenCheck::Mismatch | TokenCheck::UnknownTask => {}
            }
        }
        match verdict {
            TokenCheck::Valid => {}
            TokenCheck::Mismatch => return Err(WebhookRejection::WrongToken),
            TokenCheck::Expired => return Err(WebhookRejection::ExpiredToken),
            TokenCheck::UnknownTask => return Err(WebhookRejection::UnknownTask(task_id)),
        }
        let digest = digest(&event);
        if !lock(&self.seen).insert(&task_id, digest) {
            return Err(WebhookRejection::Duplicate);
        }
        let task = match &self.store {
            None => None,
            Some(s) => {
                let stored = match s.apply(&event).await {
                    Ok(_) => s.get(&task_id).await,
                    Err(e) => Err(e),
                };
                match stored {
                    Ok(task) => task,
                    Err(e) => {
                        // Not kept: the sender's retry must not be taken for a duplicate.
                        lock(&self.seen).remove(&task_id, digest);
                        tracing::warn!(target: "a2a_kit_axum::webhook", %task_id, error = %e, "could not store a push notification");
                        return Err(WebhookRejection::Unavailable);
                    }
                }
            }
        };
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
        let (n, digest) = self.verify_inner(headers, body).await?;
        if let Some(tx) = &self.sender
            && tx.send(n.clone()).await.is_err()
        {
            lock(&self.seen).remove(&n.task_id, digest);
            return Err(WebhookRejection::Unavailable);
        }
        if let Some(cb) = &self.callback {
            cb(n.clone());
        }
        Ok(n)
    }

    /// A router with `POST path` answering as described in the [module docs](super). Merge it
    /// into your app.
    pub fn router<S: Clone + Send + Sync + 'static>(&self, path: &str) -> Router<S> {
        let me = self.clone();
        Router::new().route(
            path,
            post(move |req: Request| {
                let me = me.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let (received, task_hint) = match read_body(&parts.headers, body, me.body_limit).await {
                        Ok(body) => {
                            let received = me.receive(&parts.headers, &body).await;
                            let hint = match (&received, &me.log) {
                                (Err(_), Some(_)) => super::log::task_named_in(&body),
                                _ => None,
                            };
                            (received, hint)
                        }
                        Err(rejection) => (Err(rejection), None),
                    };
                    if let Some(log) = &me.log {
                        log.record(&received, task_hint);
                    }
                    match received {
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

/// The body, if it is within `limit` bytes (a `Content-Length` beyond it is refused unread).
pub(super) async fn read_body(
    headers: &HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> Result<Bytes, WebhookRejection> {
    use http_body::Body as _;
    let too_large = WebhookRejection::TooLarge { limit };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large);
    }
    let mut body = std::pin::pin!(body);
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            WebhookRejection::MalformedBody(format!("the body could not be read: {e}"))
        })?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(too_large);
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

/// The tokens a delivery presents: `Authorization: Bearer <token>`, then
/// `X-A2A-Notification-Token` (once, if both carry the same).
pub(super) fn presented_tokens(headers: &HeaderMap) -> Vec<&str> {
    let mut tokens: Vec<&str> = bearer_token(headers).into_iter().collect();
    if let Some(t) = notification_token(headers).filter(|t| !tokens.contains(t)) {
        tokens.push(t);
    }
    tokens
}

/// The token of `X-A2A-Notification-Token` (what a2a-kit's sender and v0.3 senders send).
pub(super) fn notification_token(headers: &HeaderMap) -> Option<&str> {
    let token = headers
        .get(a2a_kit::push::NOTIFICATION_TOKEN_HEADER)?
        .to_str()
        .ok()?
        .trim();
    (!token.is_empty()).then_some(token)
}

/// The token of `Authorization: Bearer <token>` (scheme case-insensitive).
pub(super) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A `StreamResponse`, a bare `Task` (`{"id", "status", ...}`), or an A2A 0.3 event (a bare
/// Task, status or artifact update with its `kind`, lowercase states).
pub(super) fn parse_body(body: &[u8]) -> Result<(StreamResponse, bool), WebhookRejection> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| WebhookRejection::MalformedBody(format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(WebhookRejection::MalformedBody(
            "the body is not a JSON object".into(),
        ));
    }
    // A2A 0.3: a bare event told apart by its `kind` (a Task, a status or artifact update).
    if let Some(kind) = value.get("kind").and_then(serde_json::Value::as_str) {
        let bare_task = kind == "task";
        let event: a2a_kit::v03::wire::Event = serde_json::from_value(value)
            .map_err(|e| WebhookRejection::MalformedBody(format!("not an A2A 0.3 event: {e}")))?;
        return a2a_kit::v03::convert::event_from_v03(event, "body")
            .map(|e| (e, bare_task))
            .map_err(|e| WebhookRejection::MalformedBody(e.to_string()));
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
pub(super) fn digest(event: &StreamResponse) -> u64 {
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
        let (parts, body) = req.into_parts();
        let headers = parts.headers;
        let body = read_body(&headers, body, receiver.body_limit)
            .await
            .map_err(IntoResponse::into_response)?;
        receiver
            .verify(&headers, &body)
            .await
            .map(VerifiedNotification)
            .map_err(IntoResponse::into_response)
    }
}
