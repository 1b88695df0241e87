//! A2A 0.3's HTTP+JSON binding: its routes under `/v1/`, bodies and answers in ProtoJSON of
//! the 0.3 proto ([`crate::v03::rest`]), translated into the 1.0 operations (`binding::v03`).
//!
//! Decisions:
//! - A request reaches these routes when its path starts with `/v1/`, it asks for 0.3 (no
//!   `A2A-Version`, or 0.3) and the path is one of them; anything else under `/v1/` goes on
//!   to the 1.0 binding (a tenant named `v1`).
//! - Errors have the status 0.3 servers give (TaskNotFound 404, TaskNotCancelable 409,
//!   InvalidParams 422, not supported 501...) and the body `{"code", "message", "data"}`:
//!   the A2A code a 0.3 client maps to its error type, the message naming the field.
//! - `GET /v1/tasks` (ListTasks, a 1.0 operation) is UnsupportedOperation (501), as 0.3
//!   servers answer it.
//! - A push config is created from the config itself or from the proto's create request
//!   around it (`{parent, configId, config}`): the two official SDKs send one each.
//! - `:subscribe` takes `GET` (the proto) and `POST` (what the JS SDK sends).
//! - Delete answers `{}`; the extended card is `GET /v1/card`, the same hybrid card as the
//!   JSON-RPC one (the Python SDK reads it as its 0.3 JSON model, the JS SDK as ProtoJSON,
//!   both leniently).

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::dispatch::{A2aMethod, Edge, rest_params};
use super::response::{A2aBody, json, sse as sse_response, with_extensions};
use super::route::{Route, body_object, match_route, percent_decode};
use super::{sse, v03};
use crate::error::A2aError;
use crate::protocol::{CancelTaskRequest, GetTaskRequest, SendMessageResponse};
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};
use crate::v03::convert::rest as convert;
use crate::v03::rest;

/// A 0.3 route: 1.0's route of the same path, or the card.
pub(super) enum V03Route {
    Operation(Route),
    Card,
}

/// The 0.3 route of a path starting with `/v1/`, if it is one.
pub(super) fn route(path: &str) -> Option<V03Route> {
    let rest = path.strip_prefix("/v1")?.trim_end_matches('/');
    if rest == "/card" {
        return Some(V03Route::Card);
    }
    let segments: Vec<String> = rest
        .trim_start_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    match match_route(&segments)? {
        // 1.0's own path for the extended card is no 0.3 route.
        Route::ExtendedCard => None,
        route => Some(V03Route::Operation(route)),
    }
}

/// Handle a 0.3 HTTP+JSON request on `route`.
pub(super) async fn handle(
    service: &AgentService,
    edge: Edge<'_>,
    cx: &RequestContext,
    route: V03Route,
    body: &[u8],
) -> http::Response<A2aBody> {
    let (headers, query) = (&edge.parts.headers, edge.parts.uri.query());
    let meta = match super::params::check_v03(service, headers, query) {
        Ok(meta) => meta,
        Err(e) => {
            super::dispatch::refused_before(None, super::dispatch::HTTP_JSON, cx, &e);
            return error_response(&e);
        }
    };
    let request = match &route {
        V03Route::Card if edge.parts.method == http::Method::GET => Ok(v03::Request::ExtendedCard),
        V03Route::Card => Err(not_allowed(&edge.parts.method, "GET")),
        V03Route::Operation(route) => match route.method(&edge.parts.method) {
            Some(method) => request(method, route, headers, query, body),
            None => {
                let allowed: Vec<&str> = route.allowed().iter().map(http::Method::as_str).collect();
                Err(not_allowed(&edge.parts.method, &allowed.join(" or ")))
            }
        },
    };
    let cx = v03::context(cx);
    let answer = match request {
        Ok(request) => v03::call(service, request, &cx, super::dispatch::HTTP_JSON).await,
        Err(e) => {
            super::dispatch::refused_before(None, super::dispatch::HTTP_JSON, &cx, &e);
            Err(e)
        }
    };
    let body = match answer {
        Ok(v03::Answer::Events(events)) => {
            return with_extensions(sse_response(events_v03(service, events)), &meta);
        }
        Ok(v03::Answer::Sent(SendMessageResponse::Task(task))) => {
            to_json(&rest::StreamResponse::Task(convert::task_to_rest(task)))
        }
        Ok(v03::Answer::Sent(SendMessageResponse::Message(m))) => {
            to_json(&rest::StreamResponse::Message(convert::message_to_rest(m)))
        }
        Ok(v03::Answer::Task(task)) => to_json(&convert::task_to_rest(task)),
        Ok(v03::Answer::PushConfig(c)) => to_json(&convert::push_config_to_rest(c)),
        Ok(v03::Answer::PushConfigs(configs)) => {
            to_json(&rest::ListTaskPushNotificationConfigResponse {
                configs: configs
                    .into_iter()
                    .map(convert::push_config_to_rest)
                    .collect(),
                next_page_token: String::new(),
            })
        }
        Ok(v03::Answer::Deleted) => Ok(b"{}".to_vec()),
        Ok(v03::Answer::Card(card)) => crate::v03::hybrid_card(&card, service.v03_bindings())
            .and_then(|card| serde_json::to_vec(&card))
            .map_err(|e| A2aError::Internal(format!("could not serialize the card: {e}"))),
        Err(e) => Err(e),
    };
    match body {
        Ok(body) => with_extensions(json(http::StatusCode::OK, body), &meta),
        Err(e) => error_response(&e),
    }
}

fn not_allowed(verb: &http::Method, allowed: &str) -> A2aError {
    A2aError::MethodNotFound(format!("`{verb}` is not allowed here; use {allowed}"))
}

fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, A2aError> {
    serde_json::to_vec(value)
        .map_err(|e| A2aError::Internal(format!("could not serialize the result: {e}")))
}

/// The 0.3 request a route and verb make, its body read in 0.3's HTTP+JSON shapes.
fn request(
    method: A2aMethod,
    route: &Route,
    headers: &http::HeaderMap,
    query: Option<&str>,
    body: &[u8],
) -> Result<v03::Request, A2aError> {
    let id = |id: &String| id.clone();
    Ok(match (method, route) {
        (A2aMethod::SendMessage, _) => {
            v03::Request::Send(convert::send_from_rest(read_body(headers, body)?)?)
        }
        (A2aMethod::SendStreamingMessage, _) => {
            v03::Request::Stream(convert::send_from_rest(read_body(headers, body)?)?)
        }
        (A2aMethod::ListTasks, _) => {
            return Err(A2aError::unsupported(
                "ListTasks is an A2A 1.0 operation: send `A2A-Version: 1.0` and use 1.0's shapes",
            ));
        }
        (A2aMethod::GetTask, Route::Get(task)) => v03::Request::GetTask(GetTaskRequest {
            id: id(task),
            history_length: history_length(query)?,
            ..Default::default()
        }),
        (A2aMethod::CancelTask, Route::Cancel(task)) => {
            v03::Request::CancelTask(CancelTaskRequest {
                id: id(task),
                ..Default::default()
            })
        }
        (A2aMethod::SubscribeToTask, Route::Subscribe(task)) => v03::Request::Resubscribe(id(task)),
        (A2aMethod::CreateTaskPushNotificationConfig, Route::PushCollection(task)) => {
            v03::Request::SetPushConfig(convert::push_config_from_rest(
                read_body(headers, body)?,
                task,
            )?)
        }
        (A2aMethod::ListTaskPushNotificationConfigs, Route::PushCollection(task)) => {
            v03::Request::ListPushConfigs(id(task))
        }
        (A2aMethod::GetTaskPushNotificationConfig, Route::PushItem(task, config)) => {
            v03::Request::GetPushConfig(id(task), Some(config.clone()))
        }
        (A2aMethod::DeleteTaskPushNotificationConfig, Route::PushItem(task, config)) => {
            v03::Request::DeletePushConfig(id(task), config.clone())
        }
        _ => return Err(A2aError::MethodNotFound("no A2A 0.3 operation here".into())),
    })
}

/// The body as `T`, refusing what is not a JSON object and naming the field of an error.
fn read_body<T: DeserializeOwned>(headers: &http::HeaderMap, body: &[u8]) -> Result<T, A2aError> {
    rest_params(body_object(headers, body, Default::default())?)
}

/// `historyLength` of the query, a number.
fn history_length(query: Option<&str>) -> Result<Option<i32>, A2aError> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "historyLength" || k == "history_length")
        .map(|(_, v)| {
            v.parse().map_err(|_| {
                A2aError::invalid_field("historyLength", format!("must be a number, got `{v}`"))
            })
        })
        .transpose()
}

/// The HTTP status a 0.3 server answers an error with.
fn status(err: &A2aError) -> http::StatusCode {
    use http::StatusCode as S;
    match err {
        A2aError::JsonParse(_) | A2aError::InvalidRequest(_) => S::BAD_REQUEST,
        A2aError::ExtensionSupportRequired { .. } | A2aError::VersionNotSupported { .. } => {
            S::BAD_REQUEST
        }
        A2aError::MethodNotFound(_) | A2aError::TaskNotFound { .. } => S::NOT_FOUND,
        A2aError::ExtendedAgentCardNotConfigured => S::NOT_FOUND,
        A2aError::InvalidParams { .. } => S::UNPROCESSABLE_ENTITY,
        A2aError::TaskNotCancelable { .. } => S::CONFLICT,
        A2aError::PushNotificationNotSupported | A2aError::UnsupportedOperation(_) => {
            S::NOT_IMPLEMENTED
        }
        A2aError::ContentTypeNotSupported(_) => S::UNSUPPORTED_MEDIA_TYPE,
        A2aError::InvalidAgentResponse(_) => S::BAD_GATEWAY,
        A2aError::PermissionDenied(_) => S::FORBIDDEN,
        A2aError::Unavailable(_) => S::SERVICE_UNAVAILABLE,
        A2aError::Internal(_) => S::INTERNAL_SERVER_ERROR,
    }
}

/// A 0.3 error body: the A2A code, the message, 0.3's free-form data.
fn error_body(err: &A2aError) -> Vec<u8> {
    serde_json::to_vec(&crate::v03::jsonrpc_error(err)).unwrap_or_default()
}

fn error_response(err: &A2aError) -> http::Response<A2aBody> {
    let mut resp = json(status(err), error_body(err));
    super::response::retry_if_unavailable(err, &mut resp);
    resp
}

fn events_v03(
    service: &AgentService,
    events: EventStream,
) -> futures::stream::BoxStream<'static, Bytes> {
    let service = service.clone();
    sse::event_frames(
        events,
        move |item| {
            let ends = v03::ends_stream(&service, &item.event);
            to_json(&convert::event_to_rest(item.event.clone(), ends)).map(Bytes::from)
        },
        |e| Bytes::from(error_body(e)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v03_routes() {
        assert!(matches!(route("/v1/card"), Some(V03Route::Card)));
        assert!(matches!(
            route("/v1/message:send"),
            Some(V03Route::Operation(Route::Send))
        ));
        assert!(matches!(
            route("/v1/tasks/a%2Fb:cancel"),
            Some(V03Route::Operation(Route::Cancel(id))) if id == "a/b"
        ));
        assert!(route("/v1/extendedAgentCard").is_none());
        assert!(route("/v1/acme/message:send").is_none());
    }
}
