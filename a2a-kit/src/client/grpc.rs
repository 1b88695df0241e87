//! The gRPC binding on the client side: each operation as a call of the generated
//! `A2AService` stub over a tonic channel (HTTP/2 with prior knowledge, to the interface's
//! `host:port`), with the same service parameters and interceptors as the HTTP bindings
//! (their headers become the call's metadata), and the agent's status read back as the A2A
//! error its `ErrorInfo` names.
//!
//! The rest of the client speaks in [`Call`]s (an operation's ProtoJSON params): here they
//! become the kit's request types, then protobuf ([`ToProto`]); answers come back through
//! [`FromProto`] and leave as JSON values for the caller's type. A client's cost is its
//! round trip, not this.

use std::time::Duration;

use futures::StreamExt;
use reqwest::Url;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;
use tracing::Instrument;

use super::error::{AgentError, ClientError};
use super::stream::RawEvents;
use super::transport::{Call, Http};
use crate::grpc::convert::{FromProto, ToProto};
use crate::grpc::pb::a2a_service_client::A2aServiceClient;
use crate::protocol::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig,
};

/// The URL a gRPC interface is dialled at: its `host:port` (the spec's form) over plain
/// HTTP/2, or an `http://` URL as written. `None` for what this client cannot dial (TLS).
pub(crate) fn endpoint(interface_url: &str) -> Option<Url> {
    let url = interface_url.trim();
    let url = if url.contains("://") {
        Url::parse(url).ok()?
    } else {
        Url::parse(&format!("http://{url}")).ok()?
    };
    (url.scheme() == "http" && url.host().is_some() && url.port_or_known_default().is_some())
        .then_some(url)
}

/// A lazily connected channel to `endpoint`.
pub(crate) fn channel(endpoint: &Url, connect_timeout: Duration) -> Result<Channel, ClientError> {
    let channel = Channel::from_shared(endpoint.as_str().trim_end_matches('/').to_string())
        .map_err(|e| ClientError::InvalidUrl(format!("gRPC endpoint `{endpoint}`: {e}")))?
        .connect_timeout(connect_timeout)
        .connect_lazy();
    Ok(channel)
}

/// A call's service parameters and credentials as gRPC metadata: the headers the HTTP
/// bindings would send (version, extensions, what interceptors add).
async fn request<T>(
    http: &Http,
    card: &AgentCard,
    endpoint: &Url,
    call: &Call,
    message: T,
    timeout: Option<Duration>,
) -> Result<tonic::Request<T>, ClientError> {
    let url = endpoint
        .join(&format!("/lf.a2a.v1.A2AService/{}", call.method))
        .map_err(|e| ClientError::InvalidUrl(e.to_string()))?;
    let head = http
        .prepare_in(
            crate::protocol::ProtocolVersion::V1_0,
            call.method,
            Some(card),
            reqwest::Request::new(reqwest::Method::POST, url),
        )
        .await?;
    let mut request = tonic::Request::new(message);
    let metadata = request.metadata_mut();
    for (name, value) in head.headers() {
        // Names are lowercase already; a value gRPC cannot carry is left out, not an error.
        if let (Ok(name), Ok(value)) = (
            tonic::metadata::AsciiMetadataKey::from_bytes(name.as_str().as_bytes()),
            tonic::metadata::AsciiMetadataValue::try_from(value.as_bytes()),
        ) {
            metadata.append(name, value);
        }
    }
    if let Some(timeout) = timeout {
        request.set_timeout(timeout);
    }
    Ok(request)
}

/// `call.params` as the operation's request type.
fn params<T: DeserializeOwned>(call: &Call) -> Result<T, ClientError> {
    serde_json::from_value(call.params.clone()).map_err(|e| {
        ClientError::Unsupported(format!("{} request cannot be sent: {e}", call.method))
    })
}

/// The kit's type as the JSON the caller's type is read from.
fn answer<K, T>(proto: K::Proto) -> Result<T, ClientError>
where
    K: FromProto + Serialize,
    T: DeserializeOwned,
{
    let value = K::from_proto(proto)
        .map_err(|e| ClientError::InvalidResponse(format!("the agent's answer: {e}")))?;
    let json =
        serde_json::to_value(&value).map_err(|e| ClientError::InvalidResponse(e.to_string()))?;
    serde_json::from_value(json).map_err(|e| ClientError::InvalidResponse(e.to_string()))
}

/// One unary call.
pub(crate) async fn unary<T: DeserializeOwned>(
    http: &Http,
    card: &AgentCard,
    endpoint: &Url,
    channel: Channel,
    call: &Call,
    timeout: Option<Duration>,
) -> Result<T, ClientError> {
    let span = crate::observe::client_span(call.method, endpoint);
    unary_untraced::<T>(http, card, endpoint, channel, call, timeout)
        .instrument(span)
        .await
}

async fn unary_untraced<T: DeserializeOwned>(
    http: &Http,
    card: &AgentCard,
    endpoint: &Url,
    channel: Channel,
    call: &Call,
    timeout: Option<Duration>,
) -> Result<T, ClientError> {
    let mut client = A2aServiceClient::new(channel).max_decoding_message_size(usize::MAX);
    let url = endpoint.as_str();
    let failed = |s: Status| from_status(url, s);
    macro_rules! call {
        ($req:ty, $method:ident, $resp:ty) => {{
            let message = params::<$req>(call)?.to_proto();
            let request = request(http, card, endpoint, call, message, timeout).await?;
            let reply = client.$method(request).await.map_err(failed)?;
            answer::<$resp, T>(reply.into_inner())
        }};
    }
    match call.method {
        "SendMessage" => call!(
            SendMessageRequest,
            send_message,
            crate::protocol::SendMessageResponse
        ),
        "GetTask" => call!(GetTaskRequest, get_task, crate::protocol::Task),
        "ListTasks" => call!(
            ListTasksRequest,
            list_tasks,
            crate::protocol::ListTasksResponse
        ),
        "CancelTask" => call!(CancelTaskRequest, cancel_task, crate::protocol::Task),
        "CreateTaskPushNotificationConfig" => call!(
            TaskPushNotificationConfig,
            create_task_push_notification_config,
            TaskPushNotificationConfig
        ),
        "GetTaskPushNotificationConfig" => call!(
            GetTaskPushNotificationConfigRequest,
            get_task_push_notification_config,
            TaskPushNotificationConfig
        ),
        "ListTaskPushNotificationConfigs" => call!(
            ListTaskPushNotificationConfigsRequest,
            list_task_push_notification_configs,
            crate::protocol::ListTaskPushNotificationConfigsResponse
        ),
        "GetExtendedAgentCard" => call!(
            GetExtendedAgentCardRequest,
            get_extended_agent_card,
            AgentCard
        ),
        "DeleteTaskPushNotificationConfig" => {
            let message = params::<DeleteTaskPushNotificationConfigRequest>(call)?.to_proto();
            let request = request(http, card, endpoint, call, message, timeout).await?;
            client
                .delete_task_push_notification_config(request)
                .await
                .map_err(failed)?;
            serde_json::from_value(json!({}))
                .map_err(|e| ClientError::InvalidResponse(e.to_string()))
        }
        other => Err(ClientError::Unsupported(format!(
            "{other} is not a unary operation of the gRPC binding"
        ))),
    }
}

/// SendStreamingMessage or SubscribeToTask: the events as they come (no event ids over
/// gRPC: a resumed stream starts again from the task as it stands).
pub(crate) async fn stream(
    http: &Http,
    card: &AgentCard,
    endpoint: &Url,
    channel: Channel,
    call: &Call,
    idle: Option<Duration>,
) -> Result<RawEvents, ClientError> {
    let span = crate::observe::client_span(call.method, endpoint);
    stream_untraced(http, card, endpoint, channel, call, idle)
        .instrument(span)
        .await
}

async fn stream_untraced(
    http: &Http,
    card: &AgentCard,
    endpoint: &Url,
    channel: Channel,
    call: &Call,
    idle: Option<Duration>,
) -> Result<RawEvents, ClientError> {
    let mut client = A2aServiceClient::new(channel).max_decoding_message_size(usize::MAX);
    let url = endpoint.to_string();
    let events = match call.method {
        "SendStreamingMessage" => {
            let message = params::<SendMessageRequest>(call)?.to_proto();
            let request = request(http, card, endpoint, call, message, None).await?;
            client.send_streaming_message(request).await
        }
        "SubscribeToTask" => {
            let message = params::<SubscribeToTaskRequest>(call)?.to_proto();
            let request = request(http, card, endpoint, call, message, None).await?;
            client.subscribe_to_task(request).await
        }
        other => {
            return Err(ClientError::Unsupported(format!(
                "{other} is not a streaming operation of the gRPC binding"
            )));
        }
    }
    .map_err(|s| from_status(&url, s))?
    .into_inner();
    let events = async_stream::stream! {
        let mut events = events;
        loop {
            let next = match idle {
                Some(d) => match tokio::time::timeout(d, events.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        yield Err(ClientError::Connection(format!(
                            "no event for {} s", d.as_secs_f64()
                        )));
                        break;
                    }
                },
                None => events.next().await,
            };
            match next {
                None => break,
                Some(Ok(event)) => {
                    match crate::protocol::StreamResponse::from_proto(event) {
                        Ok(event) => yield Ok((None, event)),
                        Err(e) => {
                            yield Err(ClientError::InvalidResponse(format!("a stream event: {e}")));
                            break;
                        }
                    }
                }
                Some(Err(status)) => {
                    yield Err(from_status(&url, status));
                    break;
                }
            }
        }
    };
    Ok(events.boxed())
}

/// A gRPC status as the client's error: the A2A error its `ErrorInfo` names; without one,
/// what the code means (an edge's refusal: `UNAUTHENTICATED` as HTTP 401, and so on; a
/// transport failure: unreachable, timed out, or the connection lost).
pub(crate) fn from_status(url: &str, status: Status) -> ClientError {
    let details = status.get_error_details();
    if let Some(info) = details.error_info() {
        let mut detail = vec![json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": info.reason,
            "domain": info.domain,
            "metadata": info.metadata,
        })];
        if let Some(bad) = details.bad_request() {
            let violations: Vec<Value> = bad
                .field_violations
                .iter()
                .map(|v| json!({"field": v.field, "description": v.description}))
                .collect();
            detail.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": violations,
            }));
        }
        let error = json!({
            "code": fallback_code(status.code()),
            "message": status.message(),
            "data": detail,
        });
        return ClientError::Agent(Box::new(AgentError::from_jsonrpc(&error, None)));
    }
    let http = |code: u16| ClientError::Http {
        status: code,
        url: url.to_string(),
        body: status.message().to_string(),
    };
    match status.code() {
        Code::Unauthenticated => http(401),
        Code::PermissionDenied => http(403),
        Code::ResourceExhausted => http(429),
        Code::DeadlineExceeded => ClientError::Timeout {
            url: url.to_string(),
        },
        Code::Unavailable if transport_failure(&status) => ClientError::Unreachable {
            url: url.to_string(),
            reason: status.message().to_string(),
        },
        Code::Unavailable | Code::Cancelled | Code::Unknown | Code::Internal
            if transport_failure(&status) =>
        {
            ClientError::Connection(status.message().to_string())
        }
        code => {
            let error = json!({"code": fallback_code(code), "message": status.message()});
            ClientError::Agent(Box::new(AgentError::from_jsonrpc(&error, None)))
        }
    }
}

/// A status tonic made up from a transport error (no agent sent it).
fn transport_failure(status: &Status) -> bool {
    std::error::Error::source(status).is_some()
}

/// The A2A code a status without `ErrorInfo` stands for.
fn fallback_code(code: Code) -> i32 {
    match code {
        Code::InvalidArgument => -32602,
        Code::NotFound | Code::Unimplemented => -32601,
        _ => -32603,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_host_and_port() {
        assert_eq!(
            endpoint("127.0.0.1:50051").unwrap().as_str(),
            "http://127.0.0.1:50051/"
        );
        assert_eq!(
            endpoint("http://agent.example:8080").unwrap().as_str(),
            "http://agent.example:8080/"
        );
        assert_eq!(
            endpoint("agent.example").unwrap().port_or_known_default(),
            Some(80)
        );
        assert!(
            endpoint("https://agent.example:443").is_none(),
            "TLS is not dialled"
        );
        assert!(endpoint("").is_none());
    }

    #[test]
    fn statuses_become_the_errors_they_carry() {
        let details = tonic_types::ErrorDetails::with_error_info(
            "TASK_NOT_FOUND",
            "a2a-protocol.org",
            [("taskId".to_string(), "t".to_string())],
        );
        let status = Status::with_error_details(Code::NotFound, "task t was not found", details);
        let err = from_status("http://x/", status);
        assert_eq!(err.code(), Some(-32001));
        assert_eq!(err.reason(), Some("TASK_NOT_FOUND"));
        let ClientError::Agent(agent) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(agent.metadata["taskId"], "t");
        assert_eq!(
            agent.to_a2a_error(),
            crate::error::A2aError::task_not_found("t")
        );
        let err = from_status("http://x/", Status::unauthenticated("who?"));
        assert!(
            matches!(err, ClientError::Http { status: 401, .. }),
            "{err:?}"
        );
        let err = from_status("http://x/", Status::unimplemented("no"));
        assert_eq!(err.code(), Some(-32601));
        let err = from_status("http://x/", Status::invalid_argument("bad"));
        assert_eq!(err.code(), Some(-32602));
    }
}
