//! A2A 0.3 at the edge: a 0.3 request is translated into the 1.0 operation it is, answered by
//! the same [`AgentService`], and the answer translated back ([`crate::v03`] holds the
//! shapes and the translation). The binding modules decide that a request is 0.3 (a 0.3
//! JSON-RPC method name, a `/v1/` route without a 1.0 `A2A-Version`) and frame the answer.
//!
//! Decisions where 0.3 and 1.0 differ (CONFORMANCE.md lists them):
//! - `tasks/resubscribe` to a task that has ended answers with the task and closes (the 0.3
//!   proto's behaviour), where 1.0 says UnsupportedOperation.
//! - `tasks/pushNotificationConfig/get` without `pushNotificationConfigId` is the task's
//!   config whose id is the task's (as 0.3 servers name a config given without an id), else
//!   its only one; a task with several is InvalidParams naming the field. The id `None`
//!   (what the Python SDK's HTTP+JSON and gRPC clients write for no id) names no config
//!   unless the task has one of that id.
//! - `tasks/pushNotificationConfig/list` answers every config of the task (0.3 has no pages).
//! - `tasks/pushNotificationConfig/delete` answers `null`.
//! - An agent without an extended card answers `agent/getAuthenticatedExtendedCard` with
//!   0.3's AuthenticatedExtendedCardNotConfigured (-32007), where 1.0 says
//!   UnsupportedOperation.
//! - ListTasks does not exist in 0.3: `tasks/list` is MethodNotFound, as for any unknown
//!   method.

use futures::StreamExt;
use serde_json::Value;

use super::dispatch::{A2aMethod, Params};
use crate::error::A2aError;
use crate::protocol::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ProtocolVersion, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream, StreamItem};
use crate::v03::{convert, wire};

/// An A2A 0.3 operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Send,
    Stream,
    GetTask,
    CancelTask,
    Resubscribe,
    SetPushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    ExtendedCard,
}

impl Method {
    /// The operation of a 0.3 JSON-RPC method name.
    pub(super) fn from_jsonrpc(name: &str) -> Option<Self> {
        Some(match name {
            "message/send" => Method::Send,
            "message/stream" => Method::Stream,
            "tasks/get" => Method::GetTask,
            "tasks/cancel" => Method::CancelTask,
            "tasks/resubscribe" => Method::Resubscribe,
            "tasks/pushNotificationConfig/set" => Method::SetPushConfig,
            "tasks/pushNotificationConfig/get" => Method::GetPushConfig,
            "tasks/pushNotificationConfig/list" => Method::ListPushConfigs,
            "tasks/pushNotificationConfig/delete" => Method::DeletePushConfig,
            "agent/getAuthenticatedExtendedCard" => Method::ExtendedCard,
            _ => return None,
        })
    }
}

/// A 0.3 request, translated: the 1.0 operation and its request.
pub(super) enum Request {
    Send(SendMessageRequest),
    Stream(SendMessageRequest),
    GetTask(GetTaskRequest),
    CancelTask(CancelTaskRequest),
    Resubscribe(String),
    SetPushConfig(TaskPushNotificationConfig),
    /// A task's config, by id or (`None`) the one it has.
    GetPushConfig(String, Option<String>),
    ListPushConfigs(String),
    DeletePushConfig(String, String),
    ExtendedCard,
}

/// What a 0.3 operation answered, in 1.0's types: each binding writes it in its 0.3 shape.
pub(super) enum Answer {
    Sent(SendMessageResponse),
    Task(Task),
    /// The events of a stream: [`event`] writes each for JSON-RPC.
    Events(EventStream),
    PushConfig(TaskPushNotificationConfig),
    PushConfigs(Vec<TaskPushNotificationConfig>),
    Deleted,
    Card(Box<AgentCard>),
}

/// A stream item as 0.3's JSON-RPC writes it (`final` on a status update that ends the
/// stream).
pub(super) fn event(service: &AgentService, item: &StreamItem) -> wire::Event {
    convert::event_to_v03(item.event.clone(), ends_stream(service, &item.event))
}

/// Whether the stream ends with `event` (a 0.3 status update's `final`).
pub(super) fn ends_stream(service: &AgentService, event: &StreamResponse) -> bool {
    event.state().is_some_and(|s| service.ends_stream(s))
}

/// The request context of a 0.3 call: a push config it registers gets 0.3 bodies.
pub(super) fn context(cx: &RequestContext) -> RequestContext {
    cx.clone().with_protocol_version(ProtocolVersion::V0_3)
}

/// A 0.3 JSON-RPC call's request: its params read in 0.3's shapes (errors name the field
/// under `params`) and translated.
pub(super) fn jsonrpc_request(method: Method, params: Params<'_>) -> Result<Request, A2aError> {
    Ok(match method {
        Method::Send => Request::Send(convert::send_from_v03(params.parse()?)?),
        Method::Stream => Request::Stream(convert::send_from_v03(params.parse()?)?),
        Method::GetTask => {
            let p: wire::TaskQueryParams = params.parse()?;
            Request::GetTask(GetTaskRequest {
                id: p.id,
                history_length: p.history_length,
                ..Default::default()
            })
        }
        Method::CancelTask => {
            let p: wire::TaskIdParams = params.parse()?;
            Request::CancelTask(CancelTaskRequest {
                id: p.id,
                metadata: p.metadata,
                ..Default::default()
            })
        }
        Method::Resubscribe => Request::Resubscribe(params.parse::<wire::TaskIdParams>()?.id),
        Method::SetPushConfig => {
            let p: wire::TaskPushNotificationConfig = params.parse()?;
            Request::SetPushConfig(convert::push_config_from_v03(
                p.push_notification_config,
                Some(p.task_id),
                "params.pushNotificationConfig",
            )?)
        }
        Method::GetPushConfig => {
            let p: wire::TaskPushConfigParams = params.parse()?;
            Request::GetPushConfig(p.id, p.push_notification_config_id)
        }
        Method::ListPushConfigs => {
            Request::ListPushConfigs(params.parse::<wire::TaskIdParams>()?.id)
        }
        Method::DeletePushConfig => {
            let p: wire::TaskPushConfigParams = params.parse()?;
            let Some(id) = p.push_notification_config_id else {
                return Err(A2aError::invalid_field(
                    "params.pushNotificationConfigId",
                    "is required: the id of the config to delete",
                ));
            };
            Request::DeletePushConfig(p.id, id)
        }
        Method::ExtendedCard => Request::ExtendedCard,
    })
}

/// A 0.3 JSON-RPC answer's `result`, written straight into the envelope.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(super) enum JsonRpcResult {
    Task(wire::Task),
    Message(wire::Message),
    PushConfig(wire::TaskPushNotificationConfig),
    PushConfigs(Vec<wire::TaskPushNotificationConfig>),
    /// `null` (a delete's).
    Null(()),
    Card(Value),
}

/// The `result` a 0.3 JSON-RPC client gets for `answer` (not a stream's).
pub(super) fn jsonrpc_result(
    service: &AgentService,
    answer: Answer,
) -> Result<JsonRpcResult, A2aError> {
    Ok(match answer {
        Answer::Sent(SendMessageResponse::Task(task)) | Answer::Task(task) => {
            JsonRpcResult::Task(task.into())
        }
        Answer::Sent(SendMessageResponse::Message(m)) => JsonRpcResult::Message(m.into()),
        Answer::PushConfig(c) => JsonRpcResult::PushConfig(c.into()),
        Answer::PushConfigs(configs) => {
            JsonRpcResult::PushConfigs(configs.into_iter().map(Into::into).collect())
        }
        Answer::Deleted | Answer::Events(_) => JsonRpcResult::Null(()),
        Answer::Card(card) => JsonRpcResult::Card(
            crate::v03::hybrid_card(&card, service.v03_bindings())
                .map_err(|e| A2aError::Internal(format!("could not serialize the card: {e}")))?,
        ),
    })
}

/// Call the 1.0 operation a 0.3 request is; `cx` is the 0.3 call's ([`context`]).
pub(super) fn call<'a>(
    service: &'a AgentService,
    request: Request,
    cx: &'a RequestContext,
    binding: &'static str,
) -> impl std::future::Future<Output = Result<Answer, A2aError>> + 'a {
    let method = request.method();
    super::dispatch::observed((method, binding, true), cx, operate(service, request, cx))
}

impl Request {
    /// The 1.0 operation the request is.
    pub(super) fn method(&self) -> A2aMethod {
        match self {
            Request::Send(_) => A2aMethod::SendMessage,
            Request::Stream(_) => A2aMethod::SendStreamingMessage,
            Request::GetTask(_) => A2aMethod::GetTask,
            Request::CancelTask(_) => A2aMethod::CancelTask,
            Request::Resubscribe(_) => A2aMethod::SubscribeToTask,
            Request::SetPushConfig(_) => A2aMethod::CreateTaskPushNotificationConfig,
            Request::GetPushConfig(..) => A2aMethod::GetTaskPushNotificationConfig,
            Request::ListPushConfigs(_) => A2aMethod::ListTaskPushNotificationConfigs,
            Request::DeletePushConfig(..) => A2aMethod::DeleteTaskPushNotificationConfig,
            Request::ExtendedCard => A2aMethod::GetExtendedAgentCard,
        }
    }
}

async fn operate(
    service: &AgentService,
    request: Request,
    cx: &RequestContext,
) -> Result<Answer, A2aError> {
    Ok(match request {
        Request::Send(req) => Answer::Sent(service.send_message(cx, req).await?),
        Request::Stream(req) => Answer::Events(service.send_streaming_message(cx, req).await?),
        Request::GetTask(req) => Answer::Task(service.get_task(cx, req).await?),
        Request::CancelTask(req) => Answer::Task(service.cancel_task(cx, req).await?),
        Request::Resubscribe(id) => Answer::Events(resubscribe(service, cx, id).await?),
        Request::SetPushConfig(config) => {
            Answer::PushConfig(service.create_push_config(cx, config).await?)
        }
        Request::GetPushConfig(task_id, id) => {
            Answer::PushConfig(push_config(service, cx, task_id, id).await?)
        }
        Request::ListPushConfigs(task_id) => {
            Answer::PushConfigs(all_push_configs(service, cx, &task_id).await?)
        }
        Request::DeletePushConfig(task_id, id) => {
            let req = DeleteTaskPushNotificationConfigRequest {
                task_id,
                id,
                ..Default::default()
            };
            service.delete_push_config(cx, req).await?;
            Answer::Deleted
        }
        Request::ExtendedCard => Answer::Card(Box::new(
            service
                .get_extended_agent_card(cx, GetExtendedAgentCardRequest::default())
                .await
                // 0.3 has one error for an agent without an extended card.
                .map_err(|e| match e {
                    A2aError::UnsupportedOperation(_) => A2aError::ExtendedAgentCardNotConfigured,
                    e => e,
                })?,
        )),
    })
}

/// A 0.3 `get` of a push config: by its id, else the task's one config. The Python SDK's
/// HTTP+JSON and gRPC clients write a config asked for without an id as `None`: that name,
/// when the task has no config of it, is read as no id.
pub(super) async fn push_config(
    service: &AgentService,
    cx: &RequestContext,
    task_id: String,
    id: Option<String>,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let Some(id) = id.filter(|id| !id.is_empty()) else {
        return the_config(all_push_configs(service, cx, &task_id).await?, &task_id);
    };
    let unnamed = id == "None";
    let req = GetTaskPushNotificationConfigRequest {
        task_id: task_id.clone(),
        id,
        ..Default::default()
    };
    match service.get_push_config(cx, req).await {
        Err(A2aError::TaskNotFound { .. }) if unnamed => {
            the_config(all_push_configs(service, cx, &task_id).await?, &task_id)
        }
        other => other,
    }
}

/// Every push config of a task, page after page.
async fn all_push_configs(
    service: &AgentService,
    cx: &RequestContext,
    task_id: &str,
) -> Result<Vec<TaskPushNotificationConfig>, A2aError> {
    let mut configs = Vec::new();
    let mut page_token = None;
    loop {
        let req = ListTaskPushNotificationConfigsRequest {
            task_id: task_id.to_string(),
            page_token: page_token.take(),
            ..Default::default()
        };
        let page = service.list_push_configs(cx, req).await?;
        configs.extend(page.configs);
        match page.next_page_token.filter(|t| !t.is_empty()) {
            Some(token) => page_token = Some(token),
            None => return Ok(configs),
        }
    }
}

/// The config a 0.3 `get` without an id means: the one named as the task, else the only one.
fn the_config(
    configs: Vec<TaskPushNotificationConfig>,
    task_id: &str,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let count = configs.len();
    let mut only = None;
    for config in configs {
        if config.id.as_deref() == Some(task_id) {
            return Ok(config);
        }
        only = Some(config);
    }
    match (count, only) {
        (1, Some(config)) => Ok(config),
        (0, _) => Err(A2aError::TaskNotFound {
            task_id: task_id.to_string(),
        }),
        _ => Err(A2aError::invalid_field(
            "params.pushNotificationConfigId",
            format!("task {task_id} has {count} push notification configs: name one"),
        )),
    }
}

/// `tasks/resubscribe`: 1.0's SubscribeToTask, except that a task that has ended is sent
/// once and the stream closes.
async fn resubscribe(
    service: &AgentService,
    cx: &RequestContext,
    id: String,
) -> Result<EventStream, A2aError> {
    let req = SubscribeToTaskRequest {
        id: id.clone(),
        ..Default::default()
    };
    match service.subscribe_to_task(cx, req, None).await {
        // (An agent without streaming refuses every subscription: that refusal stands.)
        Err(A2aError::UnsupportedOperation(why))
            if service.card().capabilities.streaming != Some(false) =>
        {
            let req = GetTaskRequest {
                id,
                ..Default::default()
            };
            let task = service.get_task(cx, req).await?;
            if !task.status.state.is_terminal() {
                return Err(A2aError::UnsupportedOperation(why));
            }
            let item = StreamItem {
                seq: None,
                event: StreamResponse::Task(task),
            };
            Ok(futures::stream::once(async move { Ok(item) }).boxed())
        }
        other => other,
    }
}
