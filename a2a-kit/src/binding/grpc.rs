//! The gRPC binding: `lf.a2a.v1.A2AService` on the same listener as JSON-RPC and HTTP+JSON,
//! behind the same edge.
//!
//! A request whose `Content-Type` is `application/grpc` (or `application/grpc+proto`) reaches
//! the [`Codec`](super::edge::Codec) like any other: authenticated, within its caller's quota
//! and the body limit and read timeout (refusals on the way are gRPC statuses, Trailers-Only,
//! see [`refusal_as_grpc`]), its body read whole (A2A has no client-streaming method). Here
//! its service parameters (`a2a-version`, `a2a-extensions` metadata) are checked as the other
//! bindings check their headers, `grpc-timeout` becomes the context's deadline (a blocking
//! SendMessage answers with the task as it stands just before it), and tonic's
//! generated service decodes the message, calls the [`AgentService`] operation and frames
//! the answer: a message then trailers, one message per event for the two streams, or, for
//! an error before any message, the status alone in the headers (Trailers-Only).
//!
//! Errors are `google.rpc.Status` in `grpc-status-details-bin`: the A2A error's status
//! ([`A2aError::grpc_status`], A2A v1.0.0's table), a `google.rpc.ErrorInfo` (reason, domain
//! `a2a-protocol.org`, the ids it is about) and, for invalid parameters, a
//! `google.rpc.BadRequest` naming each field by its ProtoJSON path.
//!
//! A2A v0.3's service, `a2a.v1.A2AService`, is served here too, told apart by the call's path
//! (`/a2a.v1.A2AService/...`): everything above holds for it, and [`grpc_v03`](super::grpc_v03)
//! translates its calls. As for JSON-RPC's 0.3 method names, it is served when the call asks
//! for 0.3 (no `a2a-version`, or 0.3) and the agent serves 0.3; otherwise the call is 1.0's: a
//! version other than 1.0 is VersionNotSupported, and with 1.0 there is no such method
//! (UNIMPLEMENTED, MethodNotFound).

use std::cell::RefCell;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body::Frame;
use http_body_util::{BodyStream, Either, Full, StreamBody};
use tonic::{Code, Status};

use super::A2aBody;
use super::grpc_v03::{self, GrpcV03};
use super::response::with_extensions;
use crate::error::A2aError;
use crate::grpc::SERVICE_NAME;
use crate::grpc::convert::{FromProto, ToProto};
use crate::grpc::pb;
use crate::grpc::pb::a2a_service_server::{A2aService, A2aServiceServer};
use crate::protocol::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, ProtocolVersion, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfig,
};
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};

type Response = http::Response<A2aBody>;

/// Whether a request is a gRPC call: `Content-Type: application/grpc`, `application/grpc+…`
/// or with parameters (gRPC-Web is another protocol, and not served).
pub(crate) fn is_grpc(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let ct = ct.trim();
            ct.get(..16)
                .is_some_and(|p| p.eq_ignore_ascii_case("application/grpc"))
                && matches!(ct.as_bytes().get(16), None | Some(b'+' | b';'))
        })
}

/// The tonic services every gRPC request of an agent goes through: 1.0's, and v0.3's when
/// the agent serves v0.3.
#[derive(Clone)]
pub(crate) struct GrpcBinding {
    server: A2aServiceServer<Operations>,
    v03: Option<GrpcV03>,
}

impl std::fmt::Debug for GrpcBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GrpcBinding")
    }
}

impl GrpcBinding {
    /// The binding of `service`; a message may be as large as the edge's body limit.
    pub(crate) fn new(service: AgentService, body_limit: usize) -> Self {
        GrpcBinding {
            v03: service
                .serves_v03()
                .then(|| GrpcV03::new(service.clone(), body_limit)),
            server: A2aServiceServer::new(Operations { service })
                .max_decoding_message_size(body_limit),
        }
    }

    /// Answer one gRPC call whose body the edge has read.
    pub(crate) async fn handle(
        &self,
        service: &AgentService,
        parts: http::request::Parts,
        trust_forwarded: bool,
        mut cx: RequestContext,
        body: Bytes,
    ) -> Response {
        let plain = parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|ct| ct.split(';').next().unwrap_or("").trim())
            .unwrap_or("");
        let proto = ["application/grpc", "application/grpc+proto"]
            .iter()
            .any(|ct| plain.eq_ignore_ascii_case(ct));
        if !proto {
            return status_response(Status::unimplemented(format!(
                "this agent speaks gRPC with protobuf messages (application/grpc or \
                 application/grpc+proto), not `{plain}`"
            )));
        }
        if parts.version < http::Version::HTTP_2 {
            return status_response(Status::unimplemented(
                "gRPC needs HTTP/2 (with prior knowledge on a plain connection)",
            ));
        }
        // v0.3's service asked for in 0.3 (no `a2a-version`, or 0.3) by an agent that serves it;
        // anything else is 1.0's, as JSON-RPC's 0.3 method names are.
        let v0_3_path = grpc_v03::is_v03(parts.uri.path());
        let v03 = match &self.v03 {
            Some(v03) if v0_3_path && super::params::asks_for_v03(&parts.headers, None) => {
                Some(v03)
            }
            _ => None,
        };
        let meta = match v03 {
            None => super::params::check_service(service, &parts.headers, None)
                .map_err(|e| status_of(&e)),
            Some(_) => super::params::check_v03(service, &parts.headers, None)
                .map_err(|e| grpc_v03::status_of(&e)),
        };
        let meta = match meta {
            Ok(meta) => meta,
            Err(status) => return status_response(status),
        };
        if v0_3_path && v03.is_none() {
            // `a2a-version: 1.0` on v0.3's service: no 1.0 method is there.
            return status_response(status_of(&A2aError::MethodNotFound(format!(
                "`{}` is A2A 0.3's service; a 1.0 client calls {SERVICE_NAME}",
                parts.uri.path()
            ))));
        }
        static TIMEOUT: http::HeaderName = http::HeaderName::from_static("grpc-timeout");
        match parts.headers.get(&TIMEOUT).map(parse_timeout) {
            None => {}
            // Answered a little before the client gives up (a tenth of its timeout, at most
            // 200 ms), so the answer reaches it in time.
            Some(Ok(timeout)) => {
                cx = cx.with_timeout(timeout - (timeout / 10).min(Duration::from_millis(200)))
            }
            Some(Err(why)) => return status_response(Status::invalid_argument(why)),
        }
        let card_method = match v03 {
            None => "/GetExtendedAgentCard",
            Some(_) => "/GetAgentCard",
        };
        if service.public_url().is_none() && parts.uri.path().ends_with(card_method) {
            // The URL the card names when no public URL is set, as over HTTP.
            if let Ok(url) = super::card::request_base_url(&parts, "", trust_forwarded) {
                cx = cx.with_agent_url(url);
            }
        }
        let req = http::Request::from_parts(parts, Full::new(body));
        let resp = match v03 {
            Some(v03) => {
                v03.call(req, cx.with_protocol_version(ProtocolVersion::V0_3))
                    .await
            }
            None => {
                let mut server = self.server.clone();
                let call = tower_service::Service::call(&mut server, req);
                match CALL_CONTEXT.scope(RefCell::new(Some(cx)), call).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                }
            }
        };
        with_extensions(into_a2a_body(resp), &meta)
    }
}

/// A tonic response as the edge's body type: its frames, trailers last. A Trailers-Only
/// answer (an error before any message: `grpc-status` in the headers, the body empty) keeps an
/// empty body that is over from the start, so the HEADERS frame itself ends the stream:
/// HTTP/2 clients built on gRPC's C core or grpc-js treat an empty DATA frame ending the
/// stream without trailers as a broken call (`UNKNOWN`, "Stream removed"), losing the status.
fn into_a2a_body(resp: http::Response<tonic::body::Body>) -> Response {
    if http_body::Body::is_end_stream(resp.body()) {
        return resp.map(|_| Either::Left(Full::new(Bytes::new())));
    }
    resp.map(|body| {
        let frames = BodyStream::new(body).map(|frame| match frame {
            Ok(frame) => Ok(frame),
            // tonic ends a body with its status; an error here is one it could not frame.
            Err(status) => Ok(Frame::trailers(trailers_of(&status))),
        });
        Either::Right(StreamBody::new(frames.boxed()))
    })
}

/// The answer to a gRPC call when the agent was built with its gRPC binding off.
pub(crate) fn turned_off() -> Response {
    status_response(Status::unimplemented(
        "this agent does not serve gRPC: its card lists the bindings it serves",
    ))
}

/// A status as a Trailers-Only response (the call refused before any message).
fn status_response(status: Status) -> Response {
    status.into_http::<Full<Bytes>>().map(Either::Left)
}

fn trailers_of(status: &Status) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    // Only fails on a header value that cannot be written; the code alone then.
    if status.add_header(&mut headers).is_err() {
        headers.insert("grpc-status", http::HeaderValue::from(status.code() as i32));
    }
    headers
}

/// An edge refusal (authentication, quota, body size or time) of a gRPC call, Trailers-Only:
/// HTTP 200 with `grpc-status` and `grpc-message`, and the refusal's `Retry-After` and
/// `WWW-Authenticate` headers kept.
pub(crate) fn refusal_as_grpc(refusal: &http::HeaderMap, code: &str, message: &str) -> Response {
    let mut resp = status_response(Status::new(code_of(code), message));
    for name in [http::header::RETRY_AFTER, http::header::WWW_AUTHENTICATE] {
        if let Some(v) = refusal.get(&name) {
            resp.headers_mut().insert(name, v.clone());
        }
    }
    resp
}

/// `grpc-timeout`: at most 8 digits and a unit (`H`, `M`, `S`, `m`, `u`, `n`).
fn parse_timeout(value: &http::HeaderValue) -> Result<Duration, String> {
    let bad = || format!("`grpc-timeout: {value:?}` is not a gRPC timeout (e.g. `500m`)");
    let text = value.to_str().map_err(|_| bad())?;
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    Ok(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return Err(bad()),
    })
}

/// A gRPC code by its name (the names [`A2aError::grpc_status`] and the edge use).
fn code_of(name: &str) -> Code {
    match name {
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "UNIMPLEMENTED" => Code::Unimplemented,
        "NOT_FOUND" => Code::NotFound,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "PERMISSION_DENIED" => Code::PermissionDenied,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        "UNAVAILABLE" => Code::Unavailable,
        "DEADLINE_EXCEEDED" => Code::DeadlineExceeded,
        _ => Code::Internal,
    }
}

/// An A2A error as its gRPC status, with its `ErrorInfo` and, for invalid parameters, a
/// `BadRequest`.
pub(crate) fn status_of(err: &A2aError) -> Status {
    crate::grpc::error_status(err, code_of(err.grpc_status()), err.to_string())
}

tokio::task_local! {
    /// The call's context while tonic's service runs it: the operation takes it as it starts
    /// (cheaper than the request's extensions, a map allocated per call).
    static CALL_CONTEXT: RefCell<Option<RequestContext>>;
}

/// The eleven operations as tonic's generated service calls them.
struct Operations {
    service: AgentService,
}

/// The request's context (the binding lent it for the call) and its message in the kit's
/// type.
fn take<K: FromProto>(request: tonic::Request<K::Proto>) -> Result<(RequestContext, K), Status> {
    let cx = CALL_CONTEXT
        .try_with(|cx| cx.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_default();
    let message = K::from_proto(request.into_inner()).map_err(|e| status_of(&e))?;
    Ok((cx, message))
}

fn reply<T: ToProto>(result: Result<T, A2aError>) -> Result<tonic::Response<T::Proto>, Status> {
    match result {
        Ok(value) => Ok(tonic::Response::new(value.to_proto())),
        Err(e) => Err(status_of(&e)),
    }
}

/// Events as stream messages; an error ends the stream with its status.
type Events = futures::stream::BoxStream<'static, Result<pb::StreamResponse, Status>>;

fn events(stream: Result<EventStream, A2aError>) -> Result<tonic::Response<Events>, Status> {
    let stream = stream.map_err(|e| status_of(&e))?;
    Ok(tonic::Response::new(
        stream
            .map(|item| match item {
                Ok(item) => Ok(item.event.to_proto()),
                Err(e) => Err(status_of(&e)),
            })
            .boxed(),
    ))
}

use super::dispatch::{A2aMethod, GRPC, observed};

#[async_trait::async_trait]
impl A2aService for Operations {
    async fn send_message(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> Result<tonic::Response<pb::SendMessageResponse>, Status> {
        let (cx, req) = take::<SendMessageRequest>(request)?;
        reply(
            observed(
                (A2aMethod::SendMessage, GRPC, false),
                &cx,
                self.service.send_message(&cx, req),
            )
            .await,
        )
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> Result<tonic::Response<Events>, Status> {
        let (cx, req) = take::<SendMessageRequest>(request)?;
        events(
            observed(
                (A2aMethod::SendStreamingMessage, GRPC, false),
                &cx,
                self.service.send_streaming_message(&cx, req),
            )
            .await,
        )
    }

    async fn get_task(
        &self,
        request: tonic::Request<pb::GetTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, Status> {
        let (cx, req) = take::<GetTaskRequest>(request)?;
        reply(
            observed(
                (A2aMethod::GetTask, GRPC, false),
                &cx,
                self.service.get_task(&cx, req),
            )
            .await,
        )
    }

    async fn list_tasks(
        &self,
        request: tonic::Request<pb::ListTasksRequest>,
    ) -> Result<tonic::Response<pb::ListTasksResponse>, Status> {
        let (cx, req) = take::<ListTasksRequest>(request)?;
        reply(
            observed(
                (A2aMethod::ListTasks, GRPC, false),
                &cx,
                self.service.list_tasks(&cx, req),
            )
            .await,
        )
    }

    async fn cancel_task(
        &self,
        request: tonic::Request<pb::CancelTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, Status> {
        let (cx, req) = take::<CancelTaskRequest>(request)?;
        reply(
            observed(
                (A2aMethod::CancelTask, GRPC, false),
                &cx,
                self.service.cancel_task(&cx, req),
            )
            .await,
        )
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        request: tonic::Request<pb::SubscribeToTaskRequest>,
    ) -> Result<tonic::Response<Events>, Status> {
        let (cx, req) = take::<SubscribeToTaskRequest>(request)?;
        // No Last-Event-ID over gRPC: a resubscription starts from the task as it stands.
        events(
            observed(
                (A2aMethod::SubscribeToTask, GRPC, false),
                &cx,
                self.service.subscribe_to_task(&cx, req, None),
            )
            .await,
        )
    }

    async fn create_task_push_notification_config(
        &self,
        request: tonic::Request<pb::TaskPushNotificationConfig>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, Status> {
        let (cx, req) = take::<TaskPushNotificationConfig>(request)?;
        reply(
            observed(
                (A2aMethod::CreateTaskPushNotificationConfig, GRPC, false),
                &cx,
                self.service.create_push_config(&cx, req),
            )
            .await,
        )
    }

    async fn get_task_push_notification_config(
        &self,
        request: tonic::Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, Status> {
        let (cx, req) = take::<GetTaskPushNotificationConfigRequest>(request)?;
        reply(
            observed(
                (A2aMethod::GetTaskPushNotificationConfig, GRPC, false),
                &cx,
                self.service.get_push_config(&cx, req),
            )
            .await,
        )
    }

    async fn list_task_push_notification_configs(
        &self,
        request: tonic::Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<tonic::Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let (cx, req) = take::<ListTaskPushNotificationConfigsRequest>(request)?;
        reply(
            observed(
                (A2aMethod::ListTaskPushNotificationConfigs, GRPC, false),
                &cx,
                self.service.list_push_configs(&cx, req),
            )
            .await,
        )
    }

    async fn get_extended_agent_card(
        &self,
        request: tonic::Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<tonic::Response<pb::AgentCard>, Status> {
        let (cx, req) = take::<GetExtendedAgentCardRequest>(request)?;
        reply(
            observed(
                (A2aMethod::GetExtendedAgentCard, GRPC, false),
                &cx,
                self.service.get_extended_agent_card(&cx, req),
            )
            .await,
        )
    }

    async fn delete_task_push_notification_config(
        &self,
        request: tonic::Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<()>, Status> {
        let (cx, req) = take::<DeleteTaskPushNotificationConfigRequest>(request)?;
        match observed(
            (A2aMethod::DeleteTaskPushNotificationConfig, GRPC, false),
            &cx,
            self.service.delete_push_config(&cx, req),
        )
        .await
        {
            Ok(()) => Ok(tonic::Response::new(())),
            Err(e) => Err(status_of(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use tonic_types::StatusExt;

    use super::*;
    use crate::error::ERROR_DOMAIN;

    fn ct(value: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::CONTENT_TYPE, value.parse().unwrap());
        h
    }

    #[test]
    fn grpc_requests_by_content_type() {
        assert!(is_grpc(&ct("application/grpc")));
        assert!(is_grpc(&ct("application/grpc+proto")));
        assert!(is_grpc(&ct("Application/GRPC; charset=x")));
        assert!(!is_grpc(&ct("application/grpc-web")));
        assert!(!is_grpc(&ct("application/grpcx")));
        assert!(!is_grpc(&ct("application/json")));
        assert!(!is_grpc(&http::HeaderMap::new()));
    }

    #[test]
    fn timeouts() {
        let t = |s: &str| parse_timeout(&http::HeaderValue::from_str(s).unwrap());
        assert_eq!(t("500m"), Ok(Duration::from_millis(500)));
        assert_eq!(t("2S"), Ok(Duration::from_secs(2)));
        assert_eq!(t("1H"), Ok(Duration::from_secs(3600)));
        assert_eq!(t("99999999n"), Ok(Duration::from_nanos(99_999_999)));
        for bad in ["", "m", "123456789m", "5x", "-1S", "1.5S"] {
            assert!(t(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_carry_error_info_and_bad_request() {
        let status = status_of(&A2aError::invalid_field("message.role", "is required"));
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        let info = details.error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "INVALID_PARAMS");
        assert_eq!(info.domain, ERROR_DOMAIN);
        let bad = details.bad_request().expect("BadRequest");
        assert_eq!(bad.field_violations[0].field, "message.role");
        let status = status_of(&A2aError::task_not_found("t-1"));
        assert_eq!(status.code(), Code::NotFound);
        let details = status.get_error_details();
        let info = details.error_info().expect("ErrorInfo");
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t-1"));
        assert_eq!(
            status_of(&A2aError::PushNotificationNotSupported).code(),
            Code::Unimplemented
        );
    }
}
