//! The client speaking A2A 0.3, to an agent whose card offers only 0.3 (or when asked to,
//! [`ClientBuilder::protocol_version`](super::ClientBuilder::protocol_version)): every
//! operation over 0.3's JSON-RPC (`message/send`, `tasks/get`...) and HTTP+JSON
//! (`POST /v1/message:send`, `GET /v1/tasks/{id}`...), the requests written and the answers
//! read back through [`crate::v03::convert`], so callers get the same 1.0 types and the same
//! [`ClientError`]s as from a 1.0 agent.
//!
//! Decisions:
//! - No `A2A-Version` header (0.3 clients send none, and a server that speaks both versions
//!   reads its absence as 0.3); extensions go in `X-A2A-Extensions`. Interceptors see the 1.0
//!   operation names (`SendMessage`...), as for 1.0.
//! - ListTasks does not exist in 0.3: [`ClientError::Unsupported`]. 0.3 has no tenants: a
//!   request's tenant is not sent; nor pages of push configs: a list is one page.
//! - Errors: JSON-RPC's codes are 1.0's (-32001 to -32007 mean the same); 0.3's free-form
//!   `data` gives the error's `taskId` and `state` as 1.0's `ErrorInfo.metadata` would. Over
//!   HTTP+JSON, a body with an A2A `code` (`{"code", "message", "data"}`, as the JS SDK and
//!   a2a-kit answer) is read as JSON-RPC's; the Python SDK's `{"message"}` by its status:
//!   404 TaskNotFound on a task's routes (ExtendedAgentCardNotConfigured on `/v1/card`,
//!   else MethodNotFound), 405 MethodNotFound, 409 TaskNotCancelable, 415
//!   ContentTypeNotSupported, 422 InvalidParams, 400 InvalidRequest, 501
//!   PushNotificationNotSupported on push config routes (else UnsupportedOperation), 502
//!   InvalidAgentResponse, any other InternalError; a body with neither is an HTTP error.
//! - `:subscribe` is `GET` (the proto's, the Python SDK's); an agent that answers it with a
//!   404 or 405 that is no A2A error gets `POST` (the JS SDK's) from then on.
//! - A push config is created with the proto's `CreateTaskPushNotificationConfigRequest`
//!   (`{parent, configId, config}`), which the official servers and a2a-kit's read; a cancel
//!   sends the proto's `{"name": "tasks/{id}"}`.
//! - gRPC in 0.3 is not spoken (another service, `a2a.v1.A2AService`): such an interface is
//!   never chosen.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::builder::Resolved;
use super::error::{AgentError, ClientError};
use super::stream::{RawEvents, decode_sse_with, snippet};
use super::transport::{self, Binding, Rest};
use super::{A2aClient, card};
use crate::error::A2aError;
use crate::protocol::{
    AgentCard, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsResponse,
    ProtocolVersion, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use crate::v03::convert::{self, client as to};
use crate::v03::{rest, wire};

/// What an operation addresses: how an HTTP+JSON error status without an A2A code reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Message,
    Task,
    PushConfig,
    Card,
}

/// One 0.3 operation, in the binding in use.
struct Op {
    /// The 1.0 operation, what interceptors see.
    operation: &'static str,
    target: Target,
    call: Wire,
}

enum Wire {
    /// A JSON-RPC method and its params (none: no `params` member).
    Rpc(&'static str, Option<Value>),
    /// An HTTP+JSON request below the interface URL (its segments start with `v1`).
    Rest(Rest),
}

impl Op {
    fn new(operation: &'static str, target: Target, call: Wire) -> Self {
        Op {
            operation,
            target,
            call,
        }
    }
}

/// `v1` and `segments`: a path below the interface URL.
fn v1(segments: &[&str]) -> Vec<String> {
    std::iter::once("v1")
        .chain(segments.iter().copied())
        .map(str::to_string)
        .collect()
}

fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|_| json!({}))
}

/// `value` without its `null` members (at any depth): ProtoJSON readers take them as unset,
/// but some 0.3 clients' readers are strict, and so may their servers be.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Decode an answer as `T`, naming where it does not fit.
fn decode<T: DeserializeOwned>(value: Value) -> Result<T, ClientError> {
    let text = value.to_string();
    serde_path_to_error::deserialize(value).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "unexpected A2A 0.3 result shape at `{}`: {} in {}",
            e.path(),
            e.inner(),
            snippet(&text)
        ))
    })
}

/// An answer that decoded but does not translate into 1.0.
fn untranslatable(e: A2aError) -> ClientError {
    ClientError::InvalidResponse(format!("an A2A 0.3 answer does not translate: {e}"))
}

/// The error ListTasks is against a 0.3 agent.
pub(super) fn no_list_tasks() -> ClientError {
    ClientError::Unsupported(
        "ListTasks does not exist in A2A 0.3, which this agent speaks (follow tasks by id with \
         GetTask, or subscribe)"
            .into(),
    )
}

/// 0.3's free-form error `data` (`{"taskId", "state"}` on task errors) as 1.0's
/// `ErrorInfo.metadata`, so that [`AgentError::to_a2a_error`] names the task and its state.
fn with_v03_data(e: ClientError) -> ClientError {
    let ClientError::Agent(mut a) = e else {
        return e;
    };
    if let Some(Value::Object(data)) = a.details.first().cloned() {
        if let Some(task_id) = data.get("taskId").and_then(Value::as_str) {
            a.metadata.entry("taskId").or_insert_with(|| task_id.into());
        }
        if let Some(state) = data
            .get("state")
            .and_then(|s| serde_json::from_value::<wire::TaskState>(s.clone()).ok())
        {
            a.metadata
                .entry("state")
                .or_insert_with(|| TaskState::from(state).as_str().into());
        }
    }
    ClientError::Agent(a)
}

/// A 0.3 HTTP+JSON error body as the agent's error (see the module's decisions); `None` when
/// the body is none.
fn rest_error(body: &Value, status: u16, target: Target) -> Option<ClientError> {
    if body
        .get("code")
        .and_then(Value::as_i64)
        .is_some_and(|c| c < 0)
    {
        return Some(with_v03_data(
            AgentError::from_jsonrpc(body, Some(status)).into(),
        ));
    }
    // A server answering in 1.0's shape (`{"error": {code, status, message, details}}`).
    if let Some(e) = AgentError::from_rest(body, status) {
        return Some(e.into());
    }
    let message = body.get("message").and_then(Value::as_str)?;
    let code = match (status, target) {
        (404, Target::Task | Target::PushConfig) => -32001,
        (404, Target::Card) => -32007,
        (404 | 405, _) => -32601,
        (409, _) => -32002,
        (415, _) => -32005,
        (422, _) => -32602,
        (400, _) => -32600,
        (501, Target::PushConfig) => -32003,
        (501, _) => -32004,
        (502, _) => -32006,
        _ => -32603,
    };
    let mut e = AgentError::new(code, message);
    e.http_status = Some(status);
    Some(e.into())
}

/// Read a unary answer: its result (JSON-RPC's `result`; an envelope without one, as the
/// Python SDK answers `tasks/pushNotificationConfig/delete`, is `null`), or the error it is.
async fn read(
    binding: Binding,
    target: Target,
    resp: reqwest::Response,
) -> Result<Value, ClientError> {
    let status = resp.status();
    let url = resp.url().to_string();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| ClientError::from_reqwest(&url, &e))?;
    let text = String::from_utf8_lossy(&bytes);
    let http_error = || ClientError::Http {
        status: status.as_u16(),
        url: url.clone(),
        body: snippet(&text),
    };
    // Refused at the agent's edge (credentials): an HTTP error, as in 1.0.
    if matches!(status.as_u16(), 401 | 403) {
        return Err(http_error());
    }
    let blank = bytes.iter().all(u8::is_ascii_whitespace);
    let value = serde_json::from_slice::<Value>(&bytes).ok();
    if binding != Binding::HttpJson {
        let Some(value) = value else {
            return Err(if status.is_success() {
                ClientError::InvalidResponse(format!("the body is not JSON: {}", snippet(&text)))
            } else {
                http_error()
            });
        };
        let http_status = (!status.is_success()).then_some(status.as_u16());
        if let Some(err) = value
            .get("error")
            .filter(|e| e.get("code").and_then(Value::as_i64).is_some_and(|c| c < 0))
        {
            return Err(with_v03_data(
                AgentError::from_jsonrpc(err, http_status).into(),
            ));
        }
        if let Some(status) = http_status {
            return Err(rest_error(&value, status, target).unwrap_or_else(http_error));
        }
        return match value.get("result") {
            Some(result) => Ok(result.clone()),
            None if value.get("jsonrpc").is_some() || value.get("id").is_some() => Ok(Value::Null),
            None => Err(ClientError::InvalidResponse(format!(
                "not a JSON-RPC response: {}",
                snippet(&text)
            ))),
        };
    }
    match (status.is_success(), value) {
        (true, Some(v)) => Ok(v),
        (true, None) if blank => Ok(Value::Null),
        (true, None) => Err(ClientError::InvalidResponse(format!(
            "the body is not JSON: {}",
            snippet(&text)
        ))),
        (false, v) => Err(v
            .and_then(|v| rest_error(&v, status.as_u16(), target))
            .unwrap_or_else(http_error)),
    }
}

/// One SSE event of a 0.3 stream: a JSON-RPC envelope whose result has a `kind`, or a
/// ProtoJSON `StreamResponse` (HTTP+JSON); an error either way.
fn parse_event(binding: Binding, event: &str, data: &str) -> Result<StreamResponse, ClientError> {
    let v: Value = serde_json::from_str(data).map_err(|e| {
        ClientError::InvalidResponse(format!("an event is not JSON ({e}): {}", snippet(data)))
    })?;
    let event_error = || {
        ClientError::InvalidResponse(format!("the agent sent an error event: {}", snippet(data)))
    };
    if binding == Binding::HttpJson {
        if v.get("error").is_some_and(Value::is_object) {
            // 1.0's shape of an error event.
            return super::stream::parse_event(event, data, Binding::HttpJson);
        }
        if event == "error" || v.get("code").is_some() {
            return Err(rest_error(&v, 500, Target::Task)
                .map(|e| match e {
                    ClientError::Agent(mut a) => {
                        a.http_status = None;
                        ClientError::Agent(a)
                    }
                    other => other,
                })
                .unwrap_or_else(event_error));
        }
        let item: rest::StreamResponse = serde_json::from_value(v).map_err(|e| {
            ClientError::InvalidResponse(format!(
                "an event is not an A2A 0.3 StreamResponse ({e}): {}",
                snippet(data)
            ))
        })?;
        return to::event_from_rest(item, "").map_err(untranslatable);
    }
    if let Some(err) = v.get("error") {
        return Err(with_v03_data(AgentError::from_jsonrpc(err, None).into()));
    }
    if event == "error" {
        return Err(event_error());
    }
    // Leniently, a bare result as well as an envelope.
    let result = match v.get("result") {
        Some(result) => result.clone(),
        None => v,
    };
    let item: wire::Event = serde_json::from_value(result).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "an event is not an A2A 0.3 task, message or update ({e}): {}",
            snippet(data)
        ))
    })?;
    convert::event_from_v03(item, "result").map_err(untranslatable)
}

/// A streaming answer: an SSE body, or an error (or, leniently, one JSON result).
async fn stream_of(
    binding: Binding,
    resp: reqwest::Response,
    idle: Option<std::time::Duration>,
) -> Result<RawEvents, ClientError> {
    if resp.status().is_success() && transport::is_event_stream(&resp) {
        return Ok(decode_sse_with(resp, idle, move |event, data| {
            parse_event(binding, event, data)
        }));
    }
    let v = read(binding, Target::Task, resp).await?;
    let event = match binding {
        Binding::HttpJson => to::event_from_rest(decode(v)?, "").map_err(untranslatable)?,
        _ => convert::event_from_v03(decode(v)?, "result").map_err(untranslatable)?,
    };
    Ok(futures::stream::iter([Ok((None, event))]).boxed())
}

impl A2aClient {
    /// The HTTP request for `op` at `r`'s interface.
    fn v03_request(
        &self,
        r: &Resolved,
        op: &Op,
        stream: bool,
    ) -> Result<reqwest::Request, ClientError> {
        let http = &self.inner.http.client;
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let json_body = |req: reqwest::RequestBuilder, body: String| {
            req.header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, accept)
                .body(body)
        };
        let req = match &op.call {
            Wire::Rpc(method, params) => {
                let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
                let mut envelope = json!({"jsonrpc": "2.0", "id": id, "method": method});
                if let Some(params) = params {
                    envelope["params"] = params.clone();
                }
                json_body(http.post(r.endpoint.clone()), envelope.to_string())
            }
            Wire::Rest(Rest::Post(segments, body)) => json_body(
                http.post(transport::rest_url(&r.endpoint, None, segments)?),
                body.to_string(),
            ),
            Wire::Rest(Rest::Get(segments, _))
                if stream && self.inner.rest_subscribe_post.load(Ordering::Relaxed) =>
            {
                json_body(
                    http.post(transport::rest_url(&r.endpoint, None, segments)?),
                    "{}".into(),
                )
            }
            Wire::Rest(Rest::Get(segments, query)) => {
                let mut url = transport::rest_url(&r.endpoint, None, segments)?;
                if !query.is_empty() {
                    url.query_pairs_mut()
                        .extend_pairs(query.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                }
                http.get(url).header(ACCEPT, accept)
            }
            Wire::Rest(Rest::Delete(segments)) => http
                .delete(transport::rest_url(&r.endpoint, None, segments)?)
                .header(ACCEPT, accept),
        };
        req.build()
            .map_err(|e| ClientError::InvalidUrl(e.to_string()))
    }

    async fn v03_execute(
        &self,
        r: &Resolved,
        op: &Op,
        stream: bool,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut req = self.v03_request(r, op, stream)?;
        if let Some(last) = last_event_id
            && let Ok(v) = HeaderValue::from_str(last)
        {
            req.headers_mut().insert("Last-Event-ID", v);
        }
        let timeout = if stream { None } else { self.timeout };
        self.inner
            .http
            .execute_in(
                ProtocolVersion::V0_3,
                op.operation,
                Some(&r.card),
                req,
                timeout,
            )
            .await
    }

    async fn v03_unary(&self, r: &Resolved, op: &Op) -> Result<Value, ClientError> {
        let resp = self.v03_execute(r, op, false, None).await?;
        read(r.binding, op.target, resp).await
    }

    async fn v03_open(
        &self,
        r: &Resolved,
        op: &Op,
        last_event_id: Option<&str>,
    ) -> Result<RawEvents, ClientError> {
        let idle = self.config().stream_idle_timeout;
        let resp = self.v03_execute(r, op, true, last_event_id).await?;
        let get = matches!(op.call, Wire::Rest(Rest::Get(..)));
        let refused = matches!(resp.status().as_u16(), 404 | 405);
        if get && refused && !self.inner.rest_subscribe_post.load(Ordering::Relaxed) {
            // A 404 that is an A2A error (TaskNotFound) is the answer; one that is not means
            // no such route: the agent wants POST.
            match read(r.binding, op.target, resp).await {
                Err(ClientError::Http { .. }) => {
                    self.inner
                        .rest_subscribe_post
                        .store(true, Ordering::Relaxed);
                    let resp = self.v03_execute(r, op, true, last_event_id).await?;
                    return stream_of(r.binding, resp, idle).await;
                }
                Err(e) => return Err(e),
                Ok(_) => {
                    return Err(ClientError::InvalidResponse(
                        "a refused subscription came with a result".into(),
                    ));
                }
            }
        }
        stream_of(r.binding, resp, idle).await
    }

    fn v03_send_op(r: &Resolved, req: SendMessageRequest, stream: bool) -> Op {
        let (operation, method, path) = if stream {
            ("SendStreamingMessage", "message/stream", "message:stream")
        } else {
            ("SendMessage", "message/send", "message:send")
        };
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Post(
                v1(&[path]),
                without_nulls(to_json(to::send_to_rest(req))),
            )),
            _ => Wire::Rpc(method, Some(to_json(to::send_to_v03(req)))),
        };
        Op::new(operation, Target::Message, call)
    }

    /// SendMessage in 0.3.
    pub(super) async fn v03_send(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        let r = self.resolved();
        let v = self
            .v03_unary(&r, &Self::v03_send_op(&r, req, false))
            .await?;
        match r.binding {
            Binding::HttpJson => to::send_response_from_rest(decode(v)?, ""),
            _ => to::send_response_from_v03(decode(v)?, "result"),
        }
        .map_err(untranslatable)
    }

    /// SendStreamingMessage in 0.3: its events.
    pub(super) async fn v03_send_streaming(
        &self,
        req: SendMessageRequest,
    ) -> Result<RawEvents, ClientError> {
        let r = self.resolved();
        self.v03_open(&r, &Self::v03_send_op(&r, req, true), None)
            .await
    }

    async fn v03_task(&self, r: &Resolved, op: Op) -> Result<Task, ClientError> {
        let v = self.v03_unary(r, &op).await?;
        match r.binding {
            Binding::HttpJson => to::task_from_rest(decode(v)?, ""),
            _ => convert::task_from_v03(decode(v)?, "result"),
        }
        .map_err(untranslatable)
    }

    /// GetTask in 0.3.
    pub(super) async fn v03_get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => {
                let query = req
                    .history_length
                    .map(|n| ("historyLength".to_string(), n.to_string()))
                    .into_iter()
                    .collect();
                Wire::Rest(Rest::Get(v1(&["tasks", &req.id]), query))
            }
            _ => Wire::Rpc(
                "tasks/get",
                Some(to_json(wire::TaskQueryParams {
                    id: req.id,
                    history_length: req.history_length,
                    metadata: None,
                })),
            ),
        };
        self.v03_task(&r, Op::new("GetTask", Target::Task, call))
            .await
    }

    /// CancelTask in 0.3.
    pub(super) async fn v03_cancel_task(
        &self,
        req: CancelTaskRequest,
    ) -> Result<Task, ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Post(
                v1(&["tasks", &format!("{}:cancel", req.id)]),
                json!({ "name": format!("tasks/{}", req.id) }),
            )),
            _ => Wire::Rpc(
                "tasks/cancel",
                Some(to_json(wire::TaskIdParams {
                    id: req.id,
                    metadata: req.metadata,
                })),
            ),
        };
        self.v03_task(&r, Op::new("CancelTask", Target::Task, call))
            .await
    }

    /// SubscribeToTask in 0.3 (`tasks/resubscribe`): its events.
    pub(super) async fn v03_subscribe(
        &self,
        task_id: &str,
        last_event_id: Option<&str>,
    ) -> Result<RawEvents, ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Get(
                v1(&["tasks", &format!("{task_id}:subscribe")]),
                Vec::new(),
            )),
            _ => Wire::Rpc(
                "tasks/resubscribe",
                Some(to_json(wire::TaskIdParams {
                    id: task_id.to_string(),
                    metadata: None,
                })),
            ),
        };
        let op = Op::new("SubscribeToTask", Target::Task, call);
        self.v03_open(&r, &op, last_event_id).await
    }

    async fn v03_push_config(
        &self,
        r: &Resolved,
        op: Op,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let v = self.v03_unary(r, &op).await?;
        match r.binding {
            Binding::HttpJson => to::push_config_from_rest(decode(v)?, ""),
            _ => to::push_config_from_v03_task(decode(v)?, "result"),
        }
        .map_err(untranslatable)
    }

    /// CreateTaskPushNotificationConfig in 0.3 (`tasks/pushNotificationConfig/set`).
    pub(super) async fn v03_create_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let r = self.resolved();
        let task_id = config.task_id.clone().unwrap_or_default();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Post(
                v1(&["tasks", &task_id, "pushNotificationConfigs"]),
                to::create_push_config_to_rest(config),
            )),
            _ => Wire::Rpc(
                "tasks/pushNotificationConfig/set",
                Some(to_json(wire::TaskPushNotificationConfig::from(config))),
            ),
        };
        let op = Op::new("CreateTaskPushNotificationConfig", Target::PushConfig, call);
        self.v03_push_config(&r, op).await
    }

    /// GetTaskPushNotificationConfig in 0.3.
    pub(super) async fn v03_get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Get(
                v1(&["tasks", task_id, "pushNotificationConfigs", id]),
                Vec::new(),
            )),
            _ => Wire::Rpc(
                "tasks/pushNotificationConfig/get",
                Some(to_json(wire::TaskPushConfigParams {
                    id: task_id.to_string(),
                    push_notification_config_id: Some(id.to_string()),
                    metadata: None,
                })),
            ),
        };
        let op = Op::new("GetTaskPushNotificationConfig", Target::PushConfig, call);
        self.v03_push_config(&r, op).await
    }

    /// ListTaskPushNotificationConfigs in 0.3: every config, one page.
    pub(super) async fn v03_list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Get(
                v1(&["tasks", task_id, "pushNotificationConfigs"]),
                Vec::new(),
            )),
            _ => Wire::Rpc(
                "tasks/pushNotificationConfig/list",
                Some(to_json(wire::TaskIdParams {
                    id: task_id.to_string(),
                    metadata: None,
                })),
            ),
        };
        let op = Op::new("ListTaskPushNotificationConfigs", Target::PushConfig, call);
        let v = self.v03_unary(&r, &op).await?;
        let configs = match r.binding {
            Binding::HttpJson => {
                // The proto's `{configs: [...]}`; leniently, a bare list.
                let list: Vec<rest::TaskPushNotificationConfig> = match v {
                    Value::Array(_) => decode(v)?,
                    Value::Null => Vec::new(),
                    v => decode::<rest::ListTaskPushNotificationConfigResponse>(v)?.configs,
                };
                list.into_iter()
                    .enumerate()
                    .map(|(i, c)| to::push_config_from_rest(c, &format!("configs[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
            }
            _ => {
                let list: Vec<wire::TaskPushNotificationConfig> = match v {
                    Value::Null => Vec::new(),
                    v => decode(v)?,
                };
                list.into_iter()
                    .enumerate()
                    .map(|(i, c)| to::push_config_from_v03_task(c, &format!("result[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
            }
        }
        .map_err(untranslatable)?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token: None,
        })
    }

    /// DeleteTaskPushNotificationConfig in 0.3.
    pub(super) async fn v03_delete_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<(), ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Delete(v1(&[
                "tasks",
                task_id,
                "pushNotificationConfigs",
                id,
            ]))),
            _ => Wire::Rpc(
                "tasks/pushNotificationConfig/delete",
                Some(to_json(wire::TaskPushConfigParams {
                    id: task_id.to_string(),
                    push_notification_config_id: Some(id.to_string()),
                    metadata: None,
                })),
            ),
        };
        let op = Op::new("DeleteTaskPushNotificationConfig", Target::PushConfig, call);
        self.v03_unary(&r, &op).await.map(drop)
    }

    /// GetExtendedAgentCard in 0.3 (`agent/getAuthenticatedExtendedCard`, `GET /v1/card`):
    /// the card, and the document as received (what its signatures cover).
    pub(super) async fn v03_extended_card(&self) -> Result<(AgentCard, Value), ClientError> {
        let r = self.resolved();
        let call = match r.binding {
            Binding::HttpJson => Wire::Rest(Rest::Get(v1(&["card"]), Vec::new())),
            _ => Wire::Rpc("agent/getAuthenticatedExtendedCard", None),
        };
        let op = Op::new("GetExtendedAgentCard", Target::Card, call);
        let raw = self.v03_unary(&r, &op).await?;
        let card = card::parse_card(&raw)
            .map_err(|e| ClientError::InvalidResponse(format!("the extended card: {e}")))??;
        Ok((card, raw))
    }
}

#[cfg(test)]
mod tests;
