//! The gRPC binding of A2A v0.3: `a2a.v1.A2AService`, served beside 1.0's
//! `lf.a2a.v1.A2AService` on the same listener, behind the same edge, as a translation: each
//! call's message becomes the 1.0 request ([`FromV03`]), the same [`AgentService`] operation
//! answers it, and the answer goes back in v0.3's shape ([`ToV03`]).
//!
//! [`binding::grpc`](super::grpc) tells the two services apart by the call's path
//! ([`is_v03`]) and does for both what a call needs before its message is read (the
//! content type, HTTP/2, `grpc-timeout`, the edge's refusals as Trailers-Only statuses); for
//! a v0.3 call (one asking for 0.3: no `a2a-version`, or 0.3) it checks the extensions as
//! 0.3's (from `x-a2a-extensions` or `a2a-extensions`, echoed in `x-a2a-extensions`) and marks
//! the context as 0.3 (a push config registered over it gets 0.3 webhook bodies).
//!
//! Where the versions' operations differ:
//! - Errors are statuses with v0.3's codes and messages ([`status_code`](crate::grpc::v03::status_code):
//!   TaskNotFound `NOT_FOUND`, TaskNotCancelable `UNIMPLEMENTED`...; the message starts with
//!   v0.3's error name, `TaskNotFoundError: ...`), with the same `ErrorInfo` and `BadRequest`
//!   details as 1.0's: gRPC clients read details only when asked, and the official v0.3 SDKs
//!   that read them read these. A field an operation refuses is named as v0.3 names it
//!   (`message.content`, not 1.0's `message.parts`).
//! - TaskSubscription to a task that has ended answers with the task and closes (1.0's
//!   SubscribeToTask refuses it).
//! - GetAgentCard is v0.3's `agent/getAuthenticatedExtendedCard` (the specification's table):
//!   the extended card when the agent has one (to its authenticated callers, as 1.0's
//!   GetExtendedAgentCard), else the public card, in v0.3's shape either way.
//! - A status update's `final` says whether the stream ends with it, as the agent's streams
//!   end.

use std::cell::RefCell;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::Full;
use tonic::Status;

use crate::error::A2aError;
use crate::grpc::v03::convert::{
    FromV03, ToV03, create_push_config_from_v03, renamed_fields, stream_response_to_v03,
};
use crate::grpc::v03::pb;
use crate::grpc::v03::pb::a2a_service_server::{A2aService, A2aServiceServer};
use crate::protocol::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    SendMessageRequest, StreamResponse, SubscribeToTaskRequest,
};
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};

/// The path prefix of v0.3's calls: `/a2a.v1.A2AService/{method}`.
const PATH_PREFIX: &str = "/a2a.v1.A2AService/";

/// Whether a gRPC call at `path` is one of v0.3's service.
pub(super) fn is_v03(path: &str) -> bool {
    path.starts_with(PATH_PREFIX)
}

/// An A2A error as a v0.3 client reads it: v0.3's code and message, 1.0's details.
pub(super) fn status_of(err: &A2aError) -> Status {
    crate::grpc::error_status(
        err,
        crate::grpc::v03::status_code(err),
        crate::grpc::v03::status_message(err),
    )
}

/// tonic's generated v0.3 service over the agent's operations.
#[derive(Clone)]
pub(super) struct GrpcV03 {
    server: A2aServiceServer<Operations>,
}

impl GrpcV03 {
    /// The v0.3 service of `service`; a message may be as large as the edge's body limit.
    pub(super) fn new(service: AgentService, body_limit: usize) -> Self {
        GrpcV03 {
            server: A2aServiceServer::new(Operations { service })
                .max_decoding_message_size(body_limit),
        }
    }

    /// Answer one v0.3 call whose body the edge has read, in `cx`.
    pub(super) async fn call(
        &self,
        req: http::Request<Full<Bytes>>,
        cx: RequestContext,
    ) -> http::Response<tonic::body::Body> {
        let mut server = self.server.clone();
        let call = tower_service::Service::call(&mut server, req);
        match CALL_CONTEXT.scope(RefCell::new(Some(cx)), call).await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    }
}

tokio::task_local! {
    /// The call's context while tonic's service runs it (as in `binding::grpc`).
    static CALL_CONTEXT: RefCell<Option<RequestContext>>;
}

/// The operations as tonic's generated v0.3 service calls them.
struct Operations {
    service: AgentService,
}

/// The context the binding lent the call.
fn lent_context() -> RequestContext {
    CALL_CONTEXT
        .try_with(|cx| cx.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The request's context and its message as the kit's 1.0 request.
fn take<K: FromV03>(request: tonic::Request<K::Proto>) -> Result<(RequestContext, K), Status> {
    let cx = lent_context();
    let message = K::from_v03(request.into_inner()).map_err(|e| status_of(&e))?;
    Ok((cx, message))
}

/// The answer in v0.3's shape, or the error naming the fields as v0.3 does (`renames`: 1.0's
/// name of a request field, v0.3's).
fn reply<T: ToV03>(
    result: Result<T, A2aError>,
    renames: &[(&str, &str)],
) -> Result<tonic::Response<T::Proto>, Status> {
    match result {
        Ok(value) => Ok(tonic::Response::new(value.to_v03())),
        Err(e) => Err(status_of(&renamed_fields(e, renames))),
    }
}

/// SendMessage's request fields as 1.0 and v0.3 name them.
const SEND_FIELDS: &[(&str, &str)] = &[
    ("message.parts", "message.content"),
    (
        "configuration.taskPushNotificationConfig",
        "configuration.pushNotification",
    ),
    ("configuration.returnImmediately", "configuration.blocking"),
];
/// A request naming a task by `name`.
const TASK_NAME: &[(&str, &str)] = &[("id", "name")];
/// A request naming a push config by `name`.
const CONFIG_NAME: &[(&str, &str)] = &[("taskId", "name"), ("id", "name")];

/// Events as v0.3 stream messages; an error ends the stream with its status.
type Events = futures::stream::BoxStream<'static, Result<pb::StreamResponse, Status>>;

fn events(service: &AgentService, stream: EventStream) -> Events {
    let service = service.clone();
    stream
        .map(move |item| match item {
            Ok(item) => {
                let is_final = match &item.event {
                    StreamResponse::StatusUpdate(update) => {
                        service.ends_stream(update.status.state)
                    }
                    _ => false,
                };
                Ok(stream_response_to_v03(item.event, is_final))
            }
            Err(e) => Err(status_of(&e)),
        })
        .boxed()
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
                (A2aMethod::SendMessage, GRPC, true),
                &cx,
                self.service.send_message(&cx, req),
            )
            .await,
            SEND_FIELDS,
        )
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> Result<tonic::Response<Events>, Status> {
        let (cx, req) = take::<SendMessageRequest>(request)?;
        match observed(
            (A2aMethod::SendStreamingMessage, GRPC, true),
            &cx,
            self.service.send_streaming_message(&cx, req),
        )
        .await
        {
            Ok(stream) => Ok(tonic::Response::new(events(&self.service, stream))),
            Err(e) => Err(status_of(&renamed_fields(e, SEND_FIELDS))),
        }
    }

    async fn get_task(
        &self,
        request: tonic::Request<pb::GetTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, Status> {
        let (cx, req) = take::<GetTaskRequest>(request)?;
        reply(
            observed(
                (A2aMethod::GetTask, GRPC, true),
                &cx,
                self.service.get_task(&cx, req),
            )
            .await,
            TASK_NAME,
        )
    }

    async fn cancel_task(
        &self,
        request: tonic::Request<pb::CancelTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, Status> {
        let (cx, req) = take::<CancelTaskRequest>(request)?;
        reply(
            observed(
                (A2aMethod::CancelTask, GRPC, true),
                &cx,
                self.service.cancel_task(&cx, req),
            )
            .await,
            TASK_NAME,
        )
    }

    type TaskSubscriptionStream = Events;

    async fn task_subscription(
        &self,
        request: tonic::Request<pb::TaskSubscriptionRequest>,
    ) -> Result<tonic::Response<Events>, Status> {
        let (cx, req) = take::<SubscribeToTaskRequest>(request)?;
        let id = req.id.clone();
        let refused = match observed(
            (A2aMethod::SubscribeToTask, GRPC, true),
            &cx,
            self.service.subscribe_to_task(&cx, req, None),
        )
        .await
        {
            Ok(stream) => return Ok(tonic::Response::new(events(&self.service, stream))),
            Err(e) => e,
        };
        // 1.0 refuses to subscribe to a task that has ended; v0.3 answers with the task.
        if let A2aError::UnsupportedOperation(_) = refused {
            let get = GetTaskRequest {
                id,
                ..Default::default()
            };
            if let Ok(task) = self.service.get_task(&cx, get).await
                && task.status.state.is_terminal()
            {
                let task = StreamResponse::Task(task);
                let once = futures::stream::once(async move { Ok(task.to_v03()) });
                return Ok(tonic::Response::new(once.boxed()));
            }
        }
        Err(status_of(&renamed_fields(refused, TASK_NAME)))
    }

    async fn create_task_push_notification_config(
        &self,
        request: tonic::Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, Status> {
        let cx = lent_context();
        let config =
            create_push_config_from_v03(request.into_inner()).map_err(|e| status_of(&e))?;
        let renames = [
            ("taskId", "parent"),
            ("url", "config.pushNotificationConfig.url"),
        ];
        reply(
            observed(
                (A2aMethod::CreateTaskPushNotificationConfig, GRPC, true),
                &cx,
                self.service.create_push_config(&cx, config),
            )
            .await,
            &renames,
        )
    }

    async fn get_task_push_notification_config(
        &self,
        request: tonic::Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, Status> {
        let (cx, req) = take::<GetTaskPushNotificationConfigRequest>(request)?;
        let config = super::v03::push_config(&self.service, &cx, req.task_id, Some(req.id));
        let config = observed(
            (A2aMethod::GetTaskPushNotificationConfig, GRPC, true),
            &cx,
            config,
        );
        reply(config.await, CONFIG_NAME)
    }

    async fn list_task_push_notification_config(
        &self,
        request: tonic::Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<pb::ListTaskPushNotificationConfigResponse>, Status> {
        let (cx, req) = take::<ListTaskPushNotificationConfigsRequest>(request)?;
        reply(
            observed(
                (A2aMethod::ListTaskPushNotificationConfigs, GRPC, true),
                &cx,
                self.service.list_push_configs(&cx, req),
            )
            .await,
            &[("taskId", "parent")],
        )
    }

    async fn get_agent_card(
        &self,
        request: tonic::Request<pb::GetAgentCardRequest>,
    ) -> Result<tonic::Response<pb::AgentCard>, Status> {
        let (cx, req) = take::<GetExtendedAgentCardRequest>(request)?;
        let service = &self.service;
        let card = if service.card().capabilities.extended_agent_card == Some(true) {
            service.get_extended_agent_card(&cx, req).await
        } else {
            // The public card, with each request's URL where the agent has no public one.
            Ok(match (service.public_url(), cx.agent_url()) {
                (None, Some(url)) => service.card_for_url(url),
                _ => service.card().clone(),
            })
        };
        match card {
            Ok(card) => Ok(tonic::Response::new(crate::grpc::v03::card_to_v03(
                card,
                // Those the JSON card offers a 0.3 client, gRPC among them.
                service.v03_bindings(),
            ))),
            Err(e) => Err(status_of(&e)),
        }
    }

    async fn delete_task_push_notification_config(
        &self,
        request: tonic::Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<()>, Status> {
        let (cx, req) = take::<DeleteTaskPushNotificationConfigRequest>(request)?;
        match observed(
            (A2aMethod::DeleteTaskPushNotificationConfig, GRPC, true),
            &cx,
            self.service.delete_push_config(&cx, req),
        )
        .await
        {
            Ok(()) => Ok(tonic::Response::new(())),
            Err(e) => Err(status_of(&renamed_fields(e, CONFIG_NAME))),
        }
    }
}
