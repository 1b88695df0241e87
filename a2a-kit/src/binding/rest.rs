//! The HTTP+JSON binding: the spec's routes, relative to the interface URL, each also under a
//! `/{tenant}` prefix.
//!
//! Decisions:
//! - Routes are matched by `matchit` (axum's matcher) on the percent-decoded path. Literal
//!   routes are matched first; only a path that matches no route is retried with its first
//!   segment taken as the tenant, so a tenant named `tasks` cannot shadow a route.
//! - Responses are `application/json` (the spec's tables and the SDKs disagree with the 1.0.1
//!   `application/a2a+json`); requests may use either, or any `+json` type.
//! - SubscribeToTask accepts `GET` (the proto) and `POST` (the spec's tables).
//! - A known path with the wrong verb is 405 with an `Allow` header.
//! - Errors are `{"error":{code,status,message,details}}` with the spec's HTTP status.
//! - A body naming a key twice in one object, at any depth, is InvalidParams naming the
//!   object and the key, as over JSON-RPC (`protocol::unique_json` reads both).

use bytes::Bytes;
use serde_json::{Map, Value};

use super::dispatch::{A2aMethod, Answer, Edge, Params, call};
use super::response::A2aBody;
use super::response::{json, rest_body, rest_body_as, sse as sse_response, with_extensions};
use super::route::{Route, body_object, match_route, percent_decode};
use super::sse;
use crate::error::A2aError;
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};

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

fn error_response(err: &A2aError) -> http::Response<A2aBody> {
    let status =
        http::StatusCode::from_u16(err.http_status()).unwrap_or(http::StatusCode::BAD_REQUEST);
    let mut resp = json(status, rest_body(err));
    super::response::retry_if_unavailable(err, &mut resp);
    resp
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

/// The operation's parameters: path ids, query and body as one object, per route.
fn params(
    route: &Route,
    method: A2aMethod,
    tenant: Option<&str>,
    query: Option<&str>,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Result<Value, A2aError> {
    let tenant = |m: Map<String, Value>| match tenant {
        Some(t) => with_ids(m, &[("tenant", t)]),
        None => m,
    };
    let object = |m: Map<String, Value>| Ok(Value::Object(tenant(m)));
    match route {
        Route::Send | Route::Stream => body_object(headers, body, tenant(Map::new())),
        Route::ExtendedCard => object(Map::new()),
        Route::List => object(query_object(
            query,
            &["includeArtifacts", "include_artifacts"],
        )?),
        Route::Get(id) => object(with_ids(query_object(query, &[])?, &[("id", id)])),
        Route::Cancel(id) => {
            body_object(headers, body, tenant(with_ids(Map::new(), &[("id", id)])))
        }
        Route::Subscribe(id) => object(with_ids(Map::new(), &[("id", id)])),
        Route::PushCollection(task_id) if method == A2aMethod::CreateTaskPushNotificationConfig => {
            body_object(
                headers,
                body,
                tenant(with_ids(Map::new(), &[("taskId", task_id)])),
            )
        }
        Route::PushCollection(task_id) => {
            object(with_ids(query_object(query, &[])?, &[("taskId", task_id)]))
        }
        Route::PushItem(task_id, id) => {
            object(with_ids(Map::new(), &[("taskId", task_id), ("id", id)]))
        }
    }
}

/// Handle one HTTP+JSON request. `path` is relative to where the agent is mounted.
pub(super) async fn handle(
    service: &AgentService,
    edge: Edge<'_>,
    cx: RequestContext,
    body: &[u8],
) -> http::Response<A2aBody> {
    let (verb, path) = (&edge.parts.method, edge.parts.uri.path());
    let (query, headers) = (edge.parts.uri.query(), &edge.parts.headers);
    // A2A 0.3's routes start with `/v1/`; a 1.0 client (which sends `A2A-Version: 1.0`)
    // reaches a tenant named `v1` there instead.
    if path.starts_with("/v1/")
        && service.serves_v03()
        && super::params::asks_for_v03(headers, query)
        && let Some(route) = super::rest_v03::route(path)
    {
        return super::rest_v03::handle(service, edge, &cx, route, body).await;
    }
    let refused = |method: Option<A2aMethod>, err: &A2aError| {
        super::dispatch::refused_before(method, super::dispatch::HTTP_JSON, &cx, err);
    };
    let Some((route, tenant)) = resolve(path) else {
        let err = A2aError::MethodNotFound(format!("no A2A operation at `{path}`"));
        refused(None, &err);
        return error_response(&err);
    };
    let Some(method) = route.method(verb) else {
        let allowed: Vec<&str> = route.allowed().iter().map(http::Method::as_str).collect();
        let err = A2aError::MethodNotFound(format!(
            "`{verb} {path}` is not allowed; use {}",
            allowed.join(" or ")
        ));
        refused(None, &err);
        let status = http::StatusCode::METHOD_NOT_ALLOWED;
        let mut resp = json(status, rest_body_as(&err, status));
        if let Ok(v) = http::HeaderValue::from_str(&allowed.join(", ")) {
            resp.headers_mut().insert(http::header::ALLOW, v);
        }
        return resp;
    };
    let meta = match super::params::check_service(service, headers, query) {
        Ok(m) => m,
        Err(e) => {
            refused(Some(method), &e);
            return error_response(&e);
        }
    };
    let answer = match params(&route, method, tenant.as_deref(), query, headers, body) {
        Ok(p) => {
            let out = if method == A2aMethod::SendMessage {
                Vec::with_capacity(2048)
            } else {
                Vec::new()
            };
            // The path's tenant is the request's: its tasks are that tenant's.
            let cx = match tenant {
                Some(tenant) => cx.with_tenant(tenant),
                None => cx,
            };
            let at = (method, super::dispatch::HTTP_JSON);
            call(service, at, Params::Rest(p), edge, &cx, out).await
        }
        Err(e) => {
            refused(Some(method), &e);
            Err(e)
        }
    };
    match answer {
        Ok(Answer::Json(out)) => with_extensions(json(http::StatusCode::OK, out), &meta),
        Ok(Answer::Events(events)) => with_extensions(sse_response(sse_events(events)), &meta),
        Err(e) => error_response(&e),
    }
}

fn sse_events(events: EventStream) -> futures::stream::BoxStream<'static, Bytes> {
    sse::event_frames(
        events,
        |item| {
            serde_json::to_vec(&item.event)
                .map(Bytes::from)
                .map_err(|e| A2aError::Internal(format!("could not serialize an event: {e}")))
        },
        |e| Bytes::from(rest_body(e)),
    )
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
