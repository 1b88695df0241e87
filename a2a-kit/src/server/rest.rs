//! The HTTP+JSON binding: the spec's routes, relative to the interface URL, each also under a
//! `/{tenant}` prefix.
//!
//! Decisions:
//! - Literal routes are matched first; only a path that matches no route is retried with its
//!   first segment taken as the tenant, so a tenant named `tasks` cannot shadow a route.
//! - Responses are `application/json` (the spec's tables and the SDKs disagree with the 1.0.1
//!   `application/a2a+json`); requests may use either, or any `+json` type.
//! - SubscribeToTask accepts `GET` (the proto) and `POST` (the spec's tables).
//! - A known path with the wrong verb is 405 with an `Allow` header.
//! - Errors are `{"error":{code,status,message,details}}` with the spec's HTTP status.

use bytes::Bytes;
use futures::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{AgentService, BindingResponse, EventStream, is_json_content_type, sse};
use crate::error::A2aError;
use crate::protocol::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Send,
    Stream,
    List,
    Get(String),
    Cancel(String),
    Subscribe(String),
    PushCollection(String),
    PushItem(String, String),
    ExtendedCard,
}

impl Route {
    fn allowed(&self) -> &'static [http::Method] {
        use http::Method;
        match self {
            Route::Send | Route::Stream | Route::Cancel(_) => &[Method::POST],
            Route::List | Route::Get(_) | Route::ExtendedCard => &[Method::GET],
            Route::Subscribe(_) => &[Method::GET, Method::POST],
            Route::PushCollection(_) => &[Method::GET, Method::POST],
            Route::PushItem(..) => &[Method::GET, Method::DELETE],
        }
    }
}

fn match_route(segs: &[String]) -> Option<Route> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    Some(match s.as_slice() {
        ["message:send"] => Route::Send,
        ["message:stream"] => Route::Stream,
        ["tasks"] => Route::List,
        ["extendedAgentCard"] => Route::ExtendedCard,
        ["tasks", id, "pushNotificationConfigs"] => Route::PushCollection(id.to_string()),
        ["tasks", id, "pushNotificationConfigs", cid] => {
            Route::PushItem(id.to_string(), cid.to_string())
        }
        ["tasks", last] => match last.rsplit_once(':') {
            Some((id, "cancel")) if !id.is_empty() => Route::Cancel(id.to_string()),
            Some((id, "subscribe")) if !id.is_empty() => Route::Subscribe(id.to_string()),
            Some((_, _)) => return None,
            None if !last.is_empty() => Route::Get(last.to_string()),
            None => return None,
        },
        _ => return None,
    })
}

/// Split a relative path into decoded segments and find its route and tenant.
fn resolve(path: &str) -> Option<(Route, Option<String>)> {
    let segs: Vec<String> = path
        .trim_start_matches('/')
        .trim_end_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    if let Some(r) = match_route(&segs) {
        return Some((r, None));
    }
    if segs.len() >= 2 && !segs[0].is_empty() {
        return match_route(&segs[1..]).map(|r| (r, Some(segs[0].clone())));
    }
    None
}

fn percent_decode(s: &str) -> String {
    form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

fn error_response(err: &A2aError) -> BindingResponse {
    let status =
        http::StatusCode::from_u16(err.http_status()).unwrap_or(http::StatusCode::BAD_REQUEST);
    BindingResponse::json(
        status,
        Bytes::from(serde_json::to_vec(&err.to_rest_body()).unwrap_or_default()),
    )
}

fn ok<T: Serialize>(value: &T) -> Result<BindingResponse, A2aError> {
    let body = serde_json::to_vec(value)
        .map_err(|e| A2aError::Internal(format!("could not serialize the result: {e}")))?;
    Ok(BindingResponse::json(http::StatusCode::OK, body))
}

fn body_json<T: DeserializeOwned>(
    headers: &http::HeaderMap,
    body: &[u8],
    extra: Map<String, Value>,
) -> Result<T, A2aError> {
    let mut value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        if !is_json_content_type(headers) {
            let got = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none");
            return Err(A2aError::ContentTypeNotSupported(format!(
                "request bodies must be application/json or application/a2a+json, not `{got}`"
            )));
        }
        serde_json::from_slice::<Value>(body)
            .map_err(|e| A2aError::JsonParse(format!("request body is not valid JSON: {e}")))?
    };
    let Value::Object(obj) = &mut value else {
        return Err(A2aError::invalid_params(
            "the request body must be a JSON object",
        ));
    };
    obj.extend(extra);
    from_value(value, "")
}

fn from_value<T: DeserializeOwned>(value: Value, prefix: &str) -> Result<T, A2aError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| A2aError::from_serde(prefix, &e.path().to_string(), e.inner()))
}

/// Query parameters as a JSON object; `bools` are converted to JSON booleans.
fn query_object(query: Option<&str>, bools: &[&str]) -> Result<Map<String, Value>, A2aError> {
    let mut m = Map::new();
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if k.eq_ignore_ascii_case(super::params::VERSION_HEADER) {
            continue;
        }
        let value = if bools.contains(&k.as_ref()) {
            match v.as_ref() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => {
                    return Err(A2aError::invalid_field(
                        k.as_ref(),
                        format!("must be true or false, got `{other}`"),
                    ));
                }
            }
        } else {
            Value::String(v.into_owned())
        };
        m.insert(k.into_owned(), value);
    }
    Ok(m)
}

fn with_ids(mut m: Map<String, Value>, ids: &[(&str, &str)]) -> Map<String, Value> {
    for (k, v) in ids {
        m.insert((*k).to_string(), Value::String((*v).to_string()));
    }
    m
}

/// Handle one HTTP+JSON request. `path` is relative to where the agent is mounted.
pub async fn handle(
    service: &AgentService,
    method: &http::Method,
    path: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
    body: &[u8],
) -> BindingResponse {
    let Some((route, tenant)) = resolve(path) else {
        return error_response(&A2aError::MethodNotFound(format!(
            "no A2A operation at `{path}`"
        )));
    };
    if !route.allowed().contains(method) {
        let allowed: Vec<&str> = route.allowed().iter().map(http::Method::as_str).collect();
        let err = A2aError::MethodNotFound(format!(
            "`{method} {path}` is not allowed; use {}",
            allowed.join(" or ")
        ));
        let mut resp = error_response(&err);
        resp.status = http::StatusCode::METHOD_NOT_ALLOWED;
        if let Ok(v) = http::HeaderValue::from_str(&allowed.join(", ")) {
            resp.headers.insert(http::header::ALLOW, v);
        }
        return resp;
    }
    let meta = match service.check_request(headers, query) {
        Ok(m) => m,
        Err(e) => return error_response(&e),
    };
    let tenant_extra = |m: Map<String, Value>| match &tenant {
        Some(t) => with_ids(m, &[("tenant", t)]),
        None => m,
    };
    let result: Result<BindingResponse, A2aError> = async {
        match route {
            Route::Send => {
                let mut out = Vec::with_capacity(2048);
                service
                    .send_message_json(
                        Box::new(body_json(headers, body, tenant_extra(Map::new()))?),
                        &mut out,
                    )
                    .await?;
                Ok(BindingResponse::json(
                    http::StatusCode::OK,
                    bytes::Bytes::from(out),
                ))
            }
            Route::Stream => {
                let stream = service
                    .send_streaming_message(body_json(headers, body, tenant_extra(Map::new()))?)
                    .await?;
                Ok(BindingResponse::sse(sse_events(stream)))
            }
            Route::List => {
                let q = tenant_extra(query_object(
                    query,
                    &["includeArtifacts", "include_artifacts"],
                )?);
                let req: ListTasksRequest = from_value(Value::Object(q), "")?;
                ok(&service.list_tasks(req).await?)
            }
            Route::Get(id) => {
                let q = tenant_extra(with_ids(query_object(query, &[])?, &[("id", &id)]));
                let req: GetTaskRequest = from_value(Value::Object(q), "")?;
                ok(&service.get_task(req).await?)
            }
            Route::Cancel(id) => {
                let req: CancelTaskRequest = body_json(
                    headers,
                    body,
                    tenant_extra(with_ids(Map::new(), &[("id", &id)])),
                )?;
                ok(&service.cancel_task(req).await?)
            }
            Route::Subscribe(id) => {
                let last = headers
                    .get("last-event-id")
                    .and_then(|v| v.to_str().ok())
                    .map(sse::parse_last_event_id)
                    .transpose()?;
                let req = SubscribeToTaskRequest {
                    tenant: tenant.clone(),
                    id,
                };
                let stream = service.subscribe_to_task(req, last).await?;
                Ok(BindingResponse::sse(sse_events(stream)))
            }
            Route::PushCollection(task_id) if method == http::Method::POST => {
                let cfg: TaskPushNotificationConfig = body_json(
                    headers,
                    body,
                    tenant_extra(with_ids(Map::new(), &[("taskId", &task_id)])),
                )?;
                ok(&service.create_push_config(cfg).await?)
            }
            Route::PushCollection(task_id) => {
                let q = tenant_extra(with_ids(query_object(query, &[])?, &[("taskId", &task_id)]));
                let req: ListTaskPushNotificationConfigsRequest = from_value(Value::Object(q), "")?;
                ok(&service.list_push_configs(req).await?)
            }
            Route::PushItem(task_id, id) if method == http::Method::DELETE => {
                let req = DeleteTaskPushNotificationConfigRequest {
                    tenant: tenant.clone(),
                    task_id,
                    id,
                };
                service.delete_push_config(req).await?;
                ok(&serde_json::json!({}))
            }
            Route::PushItem(task_id, id) => {
                let req = GetTaskPushNotificationConfigRequest {
                    tenant: tenant.clone(),
                    task_id,
                    id,
                };
                ok(&service.get_push_config(req).await?)
            }
            Route::ExtendedCard => ok(&service
                .get_extended_agent_card(GetExtendedAgentCardRequest {
                    tenant: tenant.clone(),
                })
                .await?),
        }
    }
    .await;
    match result {
        Ok(resp) => resp.with_extensions(&meta),
        Err(e) => error_response(&e),
    }
}

fn sse_events(events: EventStream) -> futures::stream::BoxStream<'static, Bytes> {
    let frames = events.scan(false, |done, item| {
        if *done {
            return futures::future::ready(None);
        }
        let frame = match item {
            Ok(item) => match serde_json::to_vec(&item.event) {
                Ok(json) => sse::frame(item.seq, &json),
                Err(e) => {
                    *done = true;
                    let err = A2aError::Internal(format!("could not serialize an event: {e}"));
                    sse::frame(
                        None,
                        &serde_json::to_vec(&err.to_rest_body()).unwrap_or_default(),
                    )
                }
            },
            Err(e) => {
                *done = true;
                sse::frame(
                    None,
                    &serde_json::to_vec(&e.to_rest_body()).unwrap_or_default(),
                )
            }
        };
        futures::future::ready(Some(frame))
    });
    sse::with_keep_alive(frames, sse::KEEP_ALIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_tenants() {
        assert_eq!(resolve("/message:send"), Some((Route::Send, None)));
        assert_eq!(
            resolve("/acme/message:send"),
            Some((Route::Send, Some("acme".into())))
        );
        assert_eq!(
            resolve("/tasks/abc:cancel"),
            Some((Route::Cancel("abc".into()), None))
        );
        assert_eq!(
            resolve("/tasks/abc"),
            Some((Route::Get("abc".into()), None))
        );
        assert_eq!(
            resolve("/t1/tasks/abc:subscribe"),
            Some((Route::Subscribe("abc".into()), Some("t1".into())))
        );
        assert_eq!(
            resolve("/tasks/a/pushNotificationConfigs/c"),
            Some((Route::PushItem("a".into(), "c".into()), None))
        );
        // A tenant literally named `tasks` does not shadow GET /tasks/{id}.
        assert_eq!(
            resolve("/tasks/tasks"),
            Some((Route::Get("tasks".into()), None))
        );
        assert_eq!(resolve("/tasks/abc:explode"), None);
        assert_eq!(resolve("/nothing"), None);
    }
}
