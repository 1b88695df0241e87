//! A console for an agent, in the browser (feature `console`): its card (with the signature's
//! status), a form for each skill (from its JSON Schema, else a text box), a chat that shows
//! narration apart from the answer and artifacts as they grow, a live task list, a task page
//! (history, artifacts, the event timeline with SSE ids, cancel, resubscribe from an event,
//! push configs and the deliveries they made), and every call's raw request and response,
//! copyable as curl.
//!
//! One call mounts it at [`CONSOLE_PATH`]:
//!
//! ```
//! # fn demo(service: a2a_kit::server::AgentService) {
//! let app: axum::Router = a2a_kit_axum::router(&service)
//!     .merge(a2a_kit_axum::console::Console::new(&service).router());
//! # }
//! ```
//!
//! **What it can see.** The page is static (HTML, CSS and a script embedded in the binary: it
//! works offline) and holds no agent data. Everything it shows it reads through the agent's
//! own API, JSON-RPC, with the credentials entered on the page (the card's security schemes
//! say which: an API key header or a bearer token). So the agent's authentication and
//! per-caller scoping apply to the console exactly as to any client: it never shows a task
//! its user could not read through the API. Its own endpoints ([`CONSOLE_PATH`]`/api/...`)
//! authenticate the same way with the agent's [`Authenticator`](a2a_kit::auth::Authenticator).
//!
//! **Push deliveries.** The console has an inbox of its own at [`CONSOLE_PATH`]`/inbox`: a
//! push config made on the task page points there with a fresh token, and each delivery the
//! agent makes to it (accepted or refused) is listed under the task. An app that receives
//! pushes from other agents shows its receiver's deliveries too: give its
//! [`WebhookReceiver`](crate::webhook::WebhookReceiver) a
//! [`DeliveryLog`] ([`record_to`](crate::webhook::WebhookReceiver::record_to)) and the console
//! the same log ([`Console::receiver_log`]).
//!
//! **For any agent.** [`Console::remote`] serves the same page for an agent elsewhere (any
//! SDK), proxying the page's calls to it: what `a2a console URL` runs.

mod assets;
mod remote;

use std::sync::Arc;

use a2a_kit::protocol::GetTaskRequest;
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

use crate::webhook::{DeliveryLog, DeliveryRecord, PushTokens, WebhookReceiver};

pub use remote::RemoteError;

/// Where the console is mounted.
pub const CONSOLE_PATH: &str = "/_console";

/// The most bytes of a card the signature check reads.
const CARD_LIMIT: usize = 512 * 1024;

/// The console for one agent: [`router`](Self::router) serves it. Cheap to clone.
#[derive(Clone)]
pub struct Console {
    target: Arc<Target>,
    inbox: Arc<Inbox>,
    receiver: Option<DeliveryLog>,
}

enum Target {
    /// The agent in this process: the page calls it on this origin.
    Local(AgentService),
    /// An agent elsewhere, reached through [`CONSOLE_PATH`]`/remote`.
    Remote(remote::Remote),
}

/// The console's own webhook: push configs made on the page point here.
struct Inbox {
    receiver: WebhookReceiver,
    log: DeliveryLog,
}

impl Inbox {
    fn new() -> Self {
        let log = DeliveryLog::default();
        let receiver = WebhookReceiver::new(PushTokens::new()).record_to(&log);
        Inbox { receiver, log }
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = match &*self.target {
            Target::Local(service) => service.card().name.clone(),
            Target::Remote(remote) => remote.base().to_string(),
        };
        f.debug_struct("Console")
            .field("agent", &target)
            .field("receiver", &self.receiver.is_some())
            .finish()
    }
}

impl Console {
    /// The console of an agent this app serves (on the same origin: mount the console beside
    /// the agent's router).
    pub fn new(service: &AgentService) -> Self {
        Console::with_target(Target::Local(service.clone()))
    }

    /// The console of the agent at `url` (its base URL, where its card is found at
    /// `/.well-known/agent-card.json`), whatever built it: the page's calls go through
    /// [`CONSOLE_PATH`]`/remote/...`, which forwards them, credentials included, to that
    /// origin only. A URL that is not `http(s)://` is an error naming it.
    pub fn remote(url: &str) -> Result<Self, RemoteError> {
        Ok(Console::with_target(Target::Remote(remote::Remote::new(
            url,
        )?)))
    }

    fn with_target(target: Target) -> Self {
        Console {
            target: Arc::new(target),
            inbox: Arc::new(Inbox::new()),
            receiver: None,
        }
    }

    /// Show the deliveries an app's own receiver answered (the same `log` the receiver
    /// [records to](crate::webhook::WebhookReceiver::record_to)).
    pub fn receiver_log(mut self, log: DeliveryLog) -> Self {
        self.receiver = Some(log);
        self
    }

    /// The console's routes, all under [`CONSOLE_PATH`]: merge them into the app that serves
    /// the agent (at its root: the page finds the agent through its card's URLs).
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        let me = self.clone();
        let page = |path: &'static str| format!("{CONSOLE_PATH}{path}");
        let mut router = Router::new()
            .route(
                CONSOLE_PATH,
                get(|| async { Redirect::permanent(&format!("{CONSOLE_PATH}/")) }),
            )
            .route(
                &page("/"),
                get(|headers: HeaderMap| async move {
                    assets::serve("index.html", headers.get(header::IF_NONE_MATCH))
                }),
            )
            .route(
                &page("/{asset}"),
                get(|Path(asset): Path<String>, headers: HeaderMap| async move {
                    assets::serve(&asset, headers.get(header::IF_NONE_MATCH))
                }),
            )
            .route(
                &page("/config.json"),
                get({
                    let me = me.clone();
                    move || std::future::ready(me.config())
                }),
            )
            .route(
                &page("/api/verify-card"),
                post({
                    let me = me.clone();
                    move |request: Request| {
                        let me = me.clone();
                        async move { me.verify_card(request).await }
                    }
                }),
            )
            .route(
                &page("/api/inbox-config"),
                post({
                    let me = me.clone();
                    move |request: Request| {
                        let me = me.clone();
                        async move { me.inbox_config(request).await }
                    }
                }),
            )
            .route(
                &page("/api/deliveries"),
                get({
                    let me = me.clone();
                    move |Query(q): Query<DeliveryQuery>, request: Request| {
                        let me = me.clone();
                        async move { me.deliveries(q, request).await }
                    }
                }),
            )
            .merge(self.inbox.receiver.router(&page("/inbox")));
        if let Target::Remote(remote) = &*self.target {
            let remote = remote.clone();
            let forward = any(move |request: Request| {
                let remote = remote.clone();
                async move { remote.forward(request).await }
            });
            router = router
                .route(&page("/remote"), forward.clone())
                .route(&page("/remote/"), forward.clone())
                .route(&page("/remote/{*path}"), forward);
        }
        router
    }

    /// What the page needs to know of where it is: how it reaches the agent.
    fn config(&self) -> Response {
        let body = match &*self.target {
            Target::Local(_) => json!({
                "mode": "local",
                "cardPath": a2a_kit::binding::AGENT_CARD_PATH,
                "agentBase": "",
                "inbox": format!("{CONSOLE_PATH}/inbox"),
                "receiver": self.receiver.is_some(),
            }),
            Target::Remote(remote) => json!({
                "mode": "remote",
                "remote": remote.base(),
                "remoteOrigin": remote.origin(),
                "cardPath": format!("{CONSOLE_PATH}/remote{}{}", remote.base_path(), a2a_kit::binding::AGENT_CARD_PATH),
                "agentBase": format!("{CONSOLE_PATH}/remote"),
                "inbox": format!("{CONSOLE_PATH}/inbox"),
                "receiver": self.receiver.is_some(),
            }),
        };
        json_response(StatusCode::OK, &body)
    }

    /// The signature status of the card the page was served: `unsigned`, `verified` (by
    /// which key), `invalid` (why), or `unverifiable` (no key to check it with).
    async fn verify_card(&self, request: Request) -> Response {
        let body = match axum::body::to_bytes(request.into_body(), CARD_LIMIT).await {
            Ok(b) => b,
            Err(_) => {
                return problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the card is larger than {CARD_LIMIT} bytes"),
                );
            }
        };
        let card: Value = match serde_json::from_slice(&body) {
            Ok(v @ Value::Object(_)) => v,
            _ => return problem(StatusCode::BAD_REQUEST, "the body is not a JSON card"),
        };
        let has_signatures = card
            .get("signatures")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        if !has_signatures {
            return json_response(StatusCode::OK, &json!({ "status": "unsigned" }));
        }
        let verifier = match &*self.target {
            Target::Local(service) => service
                .jwks_document()
                .and_then(|doc| a2a_kit::signing::Verifier::new().trust(&doc).ok()),
            Target::Remote(remote) => remote.verifier(&card).await,
        };
        let status = match verifier {
            None => json!({
                "status": "unverifiable",
                "detail": "signed, but no public key was found to check the signature with (no JWKS at the signature's jku or the agent's /.well-known/jwks.json)",
            }),
            Some(verifier) => match verifier.verify_card_json(&card) {
                Ok(kid) => json!({ "status": "verified", "kid": kid }),
                Err(e) => json!({ "status": "invalid", "detail": e.to_string() }),
            },
        };
        json_response(StatusCode::OK, &status)
    }

    /// A push config pointing at the console's inbox, with a fresh token: the caller must be
    /// one the agent admits.
    async fn inbox_config(&self, request: Request) -> Response {
        if let Err(refused) = self.authenticate(request).await {
            return refused;
        }
        match self.inbox.receiver.tokens().issue().await {
            Ok(token) => json_response(
                StatusCode::OK,
                &json!({ "path": format!("{CONSOLE_PATH}/inbox"), "token": token }),
            ),
            Err(e) => problem(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        }
    }

    /// The deliveries about a task the caller can read (through GetTask, as the caller), or,
    /// without a task, those the app's receiver answered.
    async fn deliveries(&self, q: DeliveryQuery, request: Request) -> Response {
        let cx = match self.authenticate(request).await {
            Ok(cx) => cx,
            Err(refused) => return refused,
        };
        let records: Vec<DeliveryRecord> = match q.task.as_deref() {
            Some(task) if !task.is_empty() => {
                if let Target::Local(service) = &*self.target {
                    let req = GetTaskRequest {
                        id: task.to_string(),
                        history_length: Some(0),
                        ..Default::default()
                    };
                    if let Err(e) = service.get_task(&cx, req).await {
                        return problem(StatusCode::NOT_FOUND, e.to_string());
                    }
                }
                // A remote agent checks the caller itself: the page read the task through it.
                let mut records = self.inbox.log.for_task(task);
                if let Some(log) = &self.receiver {
                    records.extend(log.for_task(task));
                }
                records.sort_by_key(|r| r.at_ms);
                records
            }
            _ => match &self.receiver {
                Some(log) => log.records(),
                None => Vec::new(),
            },
        };
        let records: Vec<Value> = records
            .into_iter()
            .map(|r| {
                json!({
                    "at": r.at_ms,
                    "taskId": r.task_id,
                    "status": r.status,
                    "refused": r.refused,
                    "event": r.event,
                })
            })
            .collect();
        json_response(StatusCode::OK, &json!({ "deliveries": records }))
    }

    /// The request's caller, as the agent's authenticator sees it (a remote agent's console
    /// has no authenticator of its own: the remote agent checks each call).
    async fn authenticate(&self, request: Request) -> Result<RequestContext, Response> {
        let Target::Local(service) = &*self.target else {
            return Ok(RequestContext::new());
        };
        let Some(auth) = service.authenticator() else {
            return Ok(RequestContext::new());
        };
        let (parts, _) = request.into_parts();
        match auth.authenticate(&parts).await {
            Ok(caller) => Ok(RequestContext::new().with_caller(caller)),
            Err(e) => {
                let mut response = problem(StatusCode::UNAUTHORIZED, e.to_string());
                if let Ok(v) = HeaderValue::from_str(&auth.challenge()) {
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
                }
                Err(response)
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct DeliveryQuery {
    task: Option<String>,
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An error the page shows as it is: `{"error": message}`.
fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, &json!({ "error": message.into() })).into_response()
}
