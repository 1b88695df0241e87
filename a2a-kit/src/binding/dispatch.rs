//! The eleven A2A operations as one enum, and the one place that calls them: each binding
//! turns a request into an [`A2aMethod`] and its [`Params`], and writes the [`Answer`].

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::sse;
use crate::error::A2aError;
use crate::protocol::SendMessageRequest;
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};

/// An A2A 1.0 operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum A2aMethod {
    /// `SendMessage`.
    SendMessage,
    /// `SendStreamingMessage`.
    SendStreamingMessage,
    /// `GetTask`.
    GetTask,
    /// `ListTasks`.
    ListTasks,
    /// `CancelTask`.
    CancelTask,
    /// `SubscribeToTask`.
    SubscribeToTask,
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig,
    /// `GetTaskPushNotificationConfig`.
    GetTaskPushNotificationConfig,
    /// `ListTaskPushNotificationConfigs`.
    ListTaskPushNotificationConfigs,
    /// `DeleteTaskPushNotificationConfig`.
    DeleteTaskPushNotificationConfig,
    /// `GetExtendedAgentCard`.
    GetExtendedAgentCard,
}

impl A2aMethod {
    /// Every operation, in the spec's order.
    pub const ALL: [A2aMethod; 11] = [
        A2aMethod::SendMessage,
        A2aMethod::SendStreamingMessage,
        A2aMethod::GetTask,
        A2aMethod::ListTasks,
        A2aMethod::CancelTask,
        A2aMethod::SubscribeToTask,
        A2aMethod::CreateTaskPushNotificationConfig,
        A2aMethod::GetTaskPushNotificationConfig,
        A2aMethod::ListTaskPushNotificationConfigs,
        A2aMethod::DeleteTaskPushNotificationConfig,
        A2aMethod::GetExtendedAgentCard,
    ];

    /// The operation's name (its JSON-RPC method).
    ///
    /// ```
    /// use a2a_kit::binding::A2aMethod;
    /// assert_eq!(A2aMethod::from_name("GetTask"), Some(A2aMethod::GetTask));
    /// assert_eq!(A2aMethod::GetTask.name(), "GetTask");
    /// assert_eq!(A2aMethod::from_name("tasks/get"), None);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            A2aMethod::SendMessage => "SendMessage",
            A2aMethod::SendStreamingMessage => "SendStreamingMessage",
            A2aMethod::GetTask => "GetTask",
            A2aMethod::ListTasks => "ListTasks",
            A2aMethod::CancelTask => "CancelTask",
            A2aMethod::SubscribeToTask => "SubscribeToTask",
            A2aMethod::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            A2aMethod::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            A2aMethod::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            A2aMethod::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            A2aMethod::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// The operation with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// A method's parameters as a binding read them.
pub(super) enum Params<'a> {
    /// JSON-RPC: `params` as written, or a send request parsed in the envelope's own pass.
    JsonRpc {
        raw: Option<&'a RawValue>,
        send: Option<Box<SendMessageRequest>>,
    },
    /// HTTP+JSON: the body, path and query fields merged into one object.
    Rest(Value),
}

impl Params<'_> {
    pub(super) fn parse<T: DeserializeOwned>(self) -> Result<T, A2aError> {
        match self {
            Params::JsonRpc { raw, .. } => jsonrpc_params(raw),
            Params::Rest(value) => rest_params(value),
        }
    }

    /// The send request: boxed, as it travels down several futures that would each hold it.
    fn send(self) -> Result<Box<SendMessageRequest>, A2aError> {
        match self {
            Params::JsonRpc {
                send: Some(req), ..
            } => Ok(req),
            other => other.parse().map(Box::new),
        }
    }
}

/// JSON-RPC's by-name `params` as `T`; errors name the field under `params`.
fn jsonrpc_params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, A2aError> {
    let text = raw.map(RawValue::get).unwrap_or("{}");
    if !text.trim_start().starts_with('{') {
        return Err(A2aError::invalid_field(
            "params",
            "must be a JSON object (by-name parameters)",
        ));
    }
    // The path to the offending field is only needed for the error message: parse plainly
    // and run again through serde_path_to_error only when that fails.
    serde_json::from_str(text).or_else(|_| {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de)
            .map_err(|e| A2aError::from_serde("params", &e.path().to_string(), e.inner()))
    })
}

/// An HTTP+JSON request object as `T`; errors name the field.
pub(super) fn rest_params<T: DeserializeOwned>(value: Value) -> Result<T, A2aError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| A2aError::from_serde("", &e.path().to_string(), e.inner()))
}

/// What an operation answered.
pub(super) enum Answer {
    /// The binding's prefix with the result's JSON appended.
    Json(Vec<u8>),
    /// The events of a stream.
    Events(EventStream),
}

fn append<T: Serialize>(mut out: Vec<u8>, value: &T) -> Result<Answer, A2aError> {
    serde_json::to_writer(&mut out, value)
        .map_err(|e| A2aError::Internal(format!("could not serialize the result: {e}")))?;
    Ok(Answer::Json(out))
}

/// What a codec knows of the HTTP request beside its body: its head, and whether a proxy's
/// `Forwarded` headers may name the agent's URL.
#[derive(Clone, Copy)]
pub(super) struct Edge<'a> {
    pub parts: &'a http::request::Parts,
    pub trust_forwarded: bool,
}

/// The binding names spans and metrics use (`a2a.binding`).
pub(super) const JSONRPC: &str = "jsonrpc";
/// See [`JSONRPC`].
pub(super) const HTTP_JSON: &str = "http+json";
/// See [`JSONRPC`].
#[cfg(feature = "grpc")]
pub(super) const GRPC: &str = "grpc";

/// Run one operation as `method` over `binding`: named on the request's span, its outcome
/// recorded there and in the request metrics. A future of its own (not an `async fn`), so
/// that the operation's future is held once, not beside a moved-from copy.
pub(super) fn observed<T, F>(
    (method, binding, v03): (A2aMethod, &'static str, bool),
    cx: &RequestContext,
    operation: F,
) -> Observed<F>
where
    F: std::future::Future<Output = Result<T, A2aError>>,
{
    use tracing::Instrument;
    let span = crate::observe::request_span(method.name(), binding, v03, cx.trace_context());
    Observed {
        operation: operation.instrument(span),
        started: crate::observe::metrics::start(),
        method: method.name(),
        binding,
    }
}

pin_project_lite::pin_project! {
    /// The future of [`observed`].
    pub(super) struct Observed<F> {
        #[pin]
        operation: tracing::instrument::Instrumented<F>,
        started: Option<std::time::Instant>,
        method: &'static str,
        binding: &'static str,
    }
}

impl<T, F> std::future::Future for Observed<F>
where
    F: std::future::Future<Output = Result<T, A2aError>>,
{
    type Output = Result<T, A2aError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let mut this = self.project();
        let result = std::task::ready!(this.operation.as_mut().poll(cx));
        if let Err(e) = &result {
            crate::observe::record_error(this.operation.span(), e);
        }
        let error = result.as_ref().err();
        crate::observe::metrics::request(*this.started, this.method, this.binding, error);
        std::task::Poll::Ready(result)
    }
}

/// A request refused before any operation ran (not JSON, no such method, a bad version, bad
/// params): recorded as `method` (`unknown` when it names none) with its error, on the
/// request's span and in the request metrics.
pub(super) fn refused_before(
    method: Option<A2aMethod>,
    binding: &'static str,
    cx: &RequestContext,
    err: &A2aError,
) {
    let name = method.map_or("unknown", A2aMethod::name);
    let span = crate::observe::request_span(name, binding, false, cx.trace_context());
    crate::observe::record_error(&span, err);
    crate::observe::metrics::request(crate::observe::metrics::start(), name, binding, Some(err));
}

/// Call `method` with `params` over `binding`; a JSON result is appended to `out` (which holds
/// the start of the binding's envelope, if it has one).
pub(super) async fn call(
    service: &AgentService,
    (method, binding): (A2aMethod, &'static str),
    params: Params<'_>,
    edge: Edge<'_>,
    cx: &RequestContext,
    out: Vec<u8>,
) -> Result<Answer, A2aError> {
    // Nobody listening (the usual case on the hot path): the operation awaited as it is, its
    // future built in place, no span to enter on each poll.
    if !crate::observe::listening() {
        let started = crate::observe::metrics::start();
        let result = operate(service, method, params, edge, cx, out).await;
        let error = result.as_ref().err();
        crate::observe::metrics::request(started, method.name(), binding, error);
        return result;
    }
    let operation = operate(service, method, params, edge, cx, out);
    Box::pin(observed((method, binding, false), cx, operation)).await
}

async fn operate(
    service: &AgentService,
    method: A2aMethod,
    params: Params<'_>,
    edge: Edge<'_>,
    cx: &RequestContext,
    mut out: Vec<u8>,
) -> Result<Answer, A2aError> {
    match method {
        A2aMethod::SendMessage => {
            service
                .send_message_json(cx, params.send()?, &mut out)
                .await?;
            Ok(Answer::Json(out))
        }
        A2aMethod::SendStreamingMessage => {
            let req = params.send()?;
            Ok(Answer::Events(
                service.send_streaming_message(cx, *req).await?,
            ))
        }
        A2aMethod::SubscribeToTask => {
            let last = edge
                .parts
                .headers
                .get("last-event-id")
                .and_then(|v| v.to_str().ok())
                .map(sse::parse_last_event_id)
                .transpose()?;
            let stream = service.subscribe_to_task(cx, params.parse()?, last).await?;
            Ok(Answer::Events(stream))
        }
        A2aMethod::GetTask => append(out, &service.get_task(cx, params.parse()?).await?),
        A2aMethod::ListTasks => append(out, &service.list_tasks(cx, params.parse()?).await?),
        A2aMethod::CancelTask => append(out, &service.cancel_task(cx, params.parse()?).await?),
        A2aMethod::CreateTaskPushNotificationConfig => {
            append(out, &service.create_push_config(cx, params.parse()?).await?)
        }
        A2aMethod::GetTaskPushNotificationConfig => {
            append(out, &service.get_push_config(cx, params.parse()?).await?)
        }
        A2aMethod::ListTaskPushNotificationConfigs => {
            append(out, &service.list_push_configs(cx, params.parse()?).await?)
        }
        A2aMethod::DeleteTaskPushNotificationConfig => {
            service.delete_push_config(cx, params.parse()?).await?;
            append(out, &serde_json::json!({}))
        }
        A2aMethod::GetExtendedAgentCard => {
            // The request's origin, for a card built without a public URL (rare: built here).
            let base_url = service
                .public_url()
                .is_none()
                .then(|| super::card::request_base_url(edge.parts, "", edge.trust_forwarded).ok());
            let card = match base_url.flatten() {
                Some(url) => {
                    let cx = cx.clone().with_agent_url(url);
                    service
                        .get_extended_agent_card(&cx, params.parse()?)
                        .await?
                }
                None => service.get_extended_agent_card(cx, params.parse()?).await?,
            };
            append(out, &card)
        }
    }
}
