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
//! pushes from other agents shows its receiver's deliveries too: give its [`WebhookReceiver`] a
//! [`DeliveryLog`] ([`record_to`](WebhookReceiver::record_to)) and the console the same log
//! ([`Console::receiver_log`]).
//!
//! **For any agent.** [`Console::remote`] serves the same page for an agent elsewhere (any
//! SDK), proxying the page's calls to it: what `a2a console URL` runs.

mod assets;
mod remote;

use std::sync::Arc;

use a2a_kit::auth::Caller;
use a2a_kit::protocol::GetTaskRequest;
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Redirect, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

use crate::webhook::{DeliveryLog, DeliveryRecord, PushTokens, WebhookReceiver};

pub use remote::{RemoteError, RemoteOptions};

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
    receiver_readers: Option<ReceiverReaders>,
}

/// Who may read an app receiver's deliveries.
type ReceiverReaders = Arc<dyn Fn(&Caller) -> bool + Send + Sync>;

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
        Console::remote_with(url, RemoteOptions::default())
    }

    /// [`remote`](Self::remote), reaching the agent as `options` say (credentials to add,
    /// certificates to trust).
    pub fn remote_with(url: &str, options: RemoteOptions) -> Result<Self, RemoteError> {
        Ok(Console::with_target(Target::Remote(remote::Remote::new(
            url, options,
        )?)))
    }

    fn with_target(target: Target) -> Self {
        Console {
            target: Arc::new(target),
            inbox: Arc::new(Inbox::new()),
            receiver: None,
            receiver_readers: None,
        }
    }

    /// Show the deliveries an app's own receiver answered (the same `log` the receiver
    /// [records to](crate::webhook::WebhookReceiver::record_to)). They are about the app's
    /// remote tasks, which no caller owns: on an agent with authentication only the callers
    /// [`receiver_readers`](Self::receiver_readers) admits see them (none by default).
    pub fn receiver_log(mut self, log: DeliveryLog) -> Self {
        self.receiver = Some(log);
        self
    }

    /// Which authenticated callers may read the [receiver's deliveries](Self::receiver_log)
    /// (an operator, say).
    pub fn receiver_readers(
        mut self,
        may_read: impl Fn(&Caller) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.receiver_readers = Some(Arc::new(may_read));
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
                    move |Query(q): Query<DeliveryQuery>, request: Request| {
                        let me = me.clone();
                        async move { me.inbox_config(q, request).await }
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
        let remote_mode = matches!(&*self.target, Target::Remote(_));
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
        router.layer(axum::middleware::from_fn(
            move |request: Request, next: axum::middleware::Next| async move {
                match own_page_only(&request, remote_mode) {
                    None => next.run(request).await,
                    Some(refused) => refused,
                }
            },
        ))
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

    /// A push config for `task` pointing at the console's inbox, with a fresh token bound to
    /// that task: the caller must be able to read the task (GetTask, as the caller), and the
    /// token admits deliveries about that task only.
    async fn inbox_config(&self, q: DeliveryQuery, request: Request) -> Response {
        let Some(task) = q.task.filter(|t| !t.is_empty()) else {
            return problem(
                StatusCode::BAD_REQUEST,
                "`task`: name the task the push config is for (?task=ID)",
            );
        };
        let cx = match self.authenticate(request).await {
            Ok(cx) => cx,
            Err(refused) => return refused,
        };
        if let Err(refused) = self.readable(&cx, &task).await {
            return refused;
        }
        let tokens = self.inbox.receiver.tokens();
        let issued = match tokens.issue().await {
            Ok(token) => tokens.bind(&task, &token).await.map(|()| token),
            Err(e) => Err(e),
        };
        match issued {
            Ok(token) => json_response(
                StatusCode::OK,
                &json!({ "path": format!("{CONSOLE_PATH}/inbox"), "token": token }),
            ),
            Err(e) => problem(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        }
    }

    /// Whether the caller can read `task` through the API (a remote agent checks its callers
    /// itself: the page read the task through it).
    async fn readable(&self, cx: &RequestContext, task: &str) -> Result<(), Response> {
        let Target::Local(service) = &*self.target else {
            return Ok(());
        };
        let req = GetTaskRequest {
            id: task.to_string(),
            history_length: Some(0),
            ..Default::default()
        };
        match service.get_task(cx, req).await {
            Ok(_) => Ok(()),
            Err(e) => Err(problem(StatusCode::NOT_FOUND, e.to_string())),
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
                if let Err(refused) = self.readable(&cx, task).await {
                    return refused;
                }
                let mut records = self.inbox.log.for_task(task);
                if let Some(log) = &self.receiver {
                    records.extend(log.for_task(task));
                }
                records.sort_by_key(|r| r.at_ms);
                records
            }
            _ => match &self.receiver {
                Some(log) if self.may_read_receiver(&cx) => log.records(),
                Some(_) => {
                    return problem(
                        StatusCode::FORBIDDEN,
                        "the app's receiver's deliveries are not shown to this caller (Console::receiver_readers)",
                    );
                }
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

    /// Whether this caller may read the app's receiver's deliveries: anyone on an agent
    /// without authentication, else whom `receiver_readers` admits.
    fn may_read_receiver(&self, cx: &RequestContext) -> bool {
        let Target::Local(service) = &*self.target else {
            return true;
        };
        if service.authenticator().is_none() {
            return true;
        }
        match (&self.receiver_readers, cx.caller()) {
            (Some(may_read), Some(caller)) => may_read(caller),
            _ => false,
        }
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

/// The console answers its own page, not other sites: a request another site's script makes
/// (`Sec-Fetch-Site`, else an `Origin` that is not this host) is refused, navigations aside.
/// Served for a remote agent (`a2a console`, usually on loopback), it also answers only at
/// `localhost` or an IP address, so a site whose name resolves to it (DNS rebinding) cannot
/// reach the agent through it.
fn own_page_only(request: &Request, remote: bool) -> Option<Response> {
    let headers = request.headers();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let host = header("host").unwrap_or_default();
    if remote {
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if name != "localhost" && name.parse::<std::net::IpAddr>().is_err() {
            return Some(problem(
                StatusCode::FORBIDDEN,
                format!("open the console at localhost or an IP address, not at `{host}`"),
            ));
        }
    }
    let navigation =
        request.method() == http::Method::GET && header("sec-fetch-mode") == Some("navigate");
    let cross = match header("sec-fetch-site") {
        Some(site) => site == "cross-site" || site == "same-site",
        None => header("origin").is_some_and(|origin| {
            let own = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            own != Some(host)
        }),
    };
    if cross && !navigation {
        return Some(problem(
            StatusCode::FORBIDDEN,
            "the console answers its own page only, not other sites' scripts",
        ));
    }
    None
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
    json_response(status, &json!({ "error": message.into() }))
}
