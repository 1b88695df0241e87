//! The JSON-RPC 2.0 binding: `POST` a request envelope, get a response envelope (or an SSE
//! stream of envelopes for the two streaming methods).
//!
//! Decisions:
//! - Errors travel with HTTP 200, as JSON-RPC over HTTP conventionally does; `error.data` is
//!   the spec's array of `google.rpc.ErrorInfo` (plus `BadRequest` for field violations).
//! - A Content-Type other than JSON is ContentTypeNotSupportedError (-32005), checked before
//!   the body is parsed.
//! - **Batch requests** (a JSON array) are InvalidRequest: A2A defines single calls only, and
//!   two of its methods answer with a stream, which a batch cannot carry.
//! - **Notifications** (no `id`) are InvalidRequest: every A2A method has a result the caller
//!   needs (even Delete returns `{}`), so a call that cannot receive it is a client mistake.
//!   `"id": null` is accepted as an id, as JSON-RPC 2.0 allows.
//! - A key named twice in a free-form object of the params (`metadata`, a data part) is
//!   InvalidParams naming the object and the key, as over HTTP+JSON: the protocol types read
//!   those objects refusing a repeat (`protocol::unique_json`), in the same pass.
//! - SSE `id:` lines carry the event's sequence number in its task's log, so a
//!   `SubscribeToTask` with a `Last-Event-ID` header resumes after it.

use bytes::Bytes;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::dispatch::{A2aMethod, Answer, Edge, Params, call};
use super::response::A2aBody;
use super::response::{json, sse as sse_response, with_extensions};
use super::{content_type, is_json_content_type, sse, v03};
use crate::error::A2aError;
use crate::protocol::SendMessageRequest;
use crate::request::RequestContext;
use crate::server::{AgentService, EventStream};

/// A request envelope. The params of the two send methods are parsed in the same pass when
/// `method` comes before `params` (as clients write it): no second scan of the largest part
/// of the body. Otherwise, or when that parse fails, `params` is kept raw and parsed apart
/// (see [`parse_envelope`]), which is also what names the offending field in an error.
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    /// `Some(Value::Null)` for an explicit `"id": null`, `None` when absent.
    id: Option<Value>,
    method: Option<String>,
    params: Option<&'a RawValue>,
    /// The params of SendMessage / SendStreamingMessage, parsed in the envelope's pass.
    /// Boxed: the request travels down several futures, each of which would hold a copy.
    send: Option<Box<SendMessageRequest>>,
}

/// Parse an envelope; with `typed`, the send methods' params are parsed in the same pass.
///
/// A body that is UTF-8 as a whole (checked once, fast) is read as a `str`, so serde_json does
/// not check each string again; any other body is read as bytes, which names the bad byte.
fn parse_envelope(body: &[u8], typed: bool) -> serde_json::Result<Envelope<'_>> {
    fn parse<'de, R: serde_json::de::Read<'de>>(
        mut de: serde_json::Deserializer<R>,
        typed: bool,
    ) -> serde_json::Result<Envelope<'de>> {
        let env = serde::de::DeserializeSeed::deserialize(EnvelopeSeed { typed }, &mut de)?;
        de.end()?;
        Ok(env)
    }
    match std::str::from_utf8(body) {
        Ok(text) => parse(serde_json::Deserializer::from_str(text), typed),
        Err(_) => parse(serde_json::Deserializer::from_slice(body), typed),
    }
}

struct EnvelopeSeed {
    typed: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for EnvelopeSeed {
    type Value = Envelope<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Envelope<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

enum EnvelopeField {
    Jsonrpc,
    Id,
    Method,
    Params,
    Other,
}

impl<'de> Deserialize<'de> for EnvelopeField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Names;
        impl serde::de::Visitor<'_> for Names {
            type Value = EnvelopeField;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EnvelopeField, E> {
                Ok(match v {
                    "jsonrpc" => EnvelopeField::Jsonrpc,
                    "id" => EnvelopeField::Id,
                    "method" => EnvelopeField::Method,
                    "params" => EnvelopeField::Params,
                    _ => EnvelopeField::Other,
                })
            }
        }
        d.deserialize_identifier(Names)
    }
}

impl<'de> serde::de::Visitor<'de> for EnvelopeSeed {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC 2.0 request object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Envelope<'de>, A::Error> {
        use serde::de::Error;
        let mut env = Envelope {
            jsonrpc: None,
            id: None,
            method: None,
            params: None,
            send: None,
        };
        let (mut seen_jsonrpc, mut seen_params) = (false, false);
        while let Some(field) = map.next_key::<EnvelopeField>()? {
            match field {
                EnvelopeField::Jsonrpc if seen_jsonrpc => {
                    return Err(A::Error::duplicate_field("jsonrpc"));
                }
                EnvelopeField::Jsonrpc => {
                    seen_jsonrpc = true;
                    env.jsonrpc = map.next_value()?;
                }
                EnvelopeField::Id if env.id.is_some() => {
                    return Err(A::Error::duplicate_field("id"));
                }
                EnvelopeField::Id => env.id = Some(map.next_value()?),
                EnvelopeField::Method if env.method.is_some() => {
                    return Err(A::Error::duplicate_field("method"));
                }
                EnvelopeField::Method => env.method = map.next_value()?,
                EnvelopeField::Params if seen_params => {
                    return Err(A::Error::duplicate_field("params"));
                }
                EnvelopeField::Params => {
                    seen_params = true;
                    let send = matches!(
                        env.method.as_deref(),
                        Some("SendMessage" | "SendStreamingMessage")
                    );
                    if self.typed && send {
                        env.send = Some(Box::new(
                            map.next_value_seed(ObjectSeed(std::marker::PhantomData))?,
                        ));
                    } else {
                        env.params = map.next_value()?;
                    }
                }
                EnvelopeField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(env)
    }
}

/// A `T` that must be written as a JSON object (by-name parameters), not an array.
struct ObjectSeed<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> serde::de::DeserializeSeed<'de> for ObjectSeed<T> {
    type Value = T;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for ObjectSeed<T> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
    }
}

#[derive(Serialize)]
struct Success<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: &'a T,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    error: Value,
}

/// A success envelope.
pub fn success<T: Serialize>(id: &Value, result: &T) -> Bytes {
    match serde_json::to_vec(&Success {
        jsonrpc: "2.0",
        id,
        result,
    }) {
        Ok(v) => Bytes::from(v),
        Err(e) => failure(
            id,
            &A2aError::Internal(format!("could not serialize the result: {e}")),
        ),
    }
}

/// The start of a success envelope (the field order of [`success`]), up to its result: the
/// caller appends the result's JSON and a closing `}`.
fn success_prefix(id: &Value) -> Result<Vec<u8>, A2aError> {
    // Room for a typical finished task, so the response is written without regrowing.
    let mut out = Vec::with_capacity(2048);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id)
        .map_err(|e| A2aError::Internal(format!("could not serialize the id: {e}")))?;
    out.extend_from_slice(br#","result":"#);
    Ok(out)
}

/// An error envelope.
pub fn failure(id: &Value, err: &A2aError) -> Bytes {
    envelope_of(id, err.to_jsonrpc_error())
}

/// A 0.3 error envelope: 0.3's codes, free-form `data`.
fn failure_v03(id: &Value, err: &A2aError) -> Bytes {
    envelope_of(id, crate::v03::jsonrpc_error(err))
}

fn envelope_of(id: &Value, error: Value) -> Bytes {
    Bytes::from(
        serde_json::to_vec(&Failure {
            jsonrpc: "2.0",
            id,
            error,
        })
        .unwrap_or_default(),
    )
}

fn error_response(id: &Value, err: &A2aError) -> http::Response<A2aBody> {
    error_response_as(id, err, failure)
}

/// The response to `err`, its envelope written by `failure` (1.0's or 0.3's).
fn error_response_as(
    id: &Value,
    err: &A2aError,
    failure: fn(&Value, &A2aError) -> Bytes,
) -> http::Response<A2aBody> {
    if let A2aError::PermissionDenied(why) = err {
        // An authorization failure is HTTP's, as at the edge (no JSON-RPC code for it).
        return super::response::edge_refusal(
            http::StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            why,
            None,
        );
    }
    let mut resp = json(http::StatusCode::OK, failure(id, err));
    // The envelope carries the error (HTTP 200, as JSON-RPC over HTTP does); a busy server
    // still says when to come back, as the HTTP+JSON binding's 503 does.
    super::response::retry_if_unavailable(err, &mut resp);
    resp
}

/// Handle one JSON-RPC request.
pub(super) async fn handle(
    service: &AgentService,
    edge: Edge<'_>,
    cx: &RequestContext,
    body: &[u8],
) -> http::Response<A2aBody> {
    let (headers, query) = (&edge.parts.headers, edge.parts.uri.query());
    if let Err(e) = check_media(headers, body) {
        return refused(cx, None, &Value::Null, &e);
    }
    // A failed typed pass is parsed again untyped, for the same errors as ever.
    let env = match parse_envelope(body, true).or_else(|_| parse_envelope(body, false)) {
        Ok(env) => env,
        Err(e) => return refused(cx, None, &Value::Null, &envelope_error(&e)),
    };
    let Some(id) = env.id else {
        return refused(cx, None, &Value::Null, &A2aError::InvalidRequest(
            "`id` is required: A2A methods always return a result, so notifications are not supported".into(),
        ));
    };
    if !matches!(id, Value::String(_) | Value::Number(_) | Value::Null) {
        return refused(
            cx,
            None,
            &Value::Null,
            &A2aError::InvalidRequest("`id` must be a string, a number or null".into()),
        );
    }
    let method = match checked_method(env.jsonrpc, env.method.as_deref()) {
        Ok(method) => method,
        // A 0.3 method name (looked for only once no 1.0 one matched: 1.0 calls pay nothing).
        Err(A2aError::MethodNotFound(why)) => {
            let (headers, query) = (&edge.parts.headers, edge.parts.uri.query());
            return match v03_method(service, env.method.as_deref()) {
                Some(method) if super::params::asks_for_v03(headers, query) => {
                    handle_v03(service, edge, cx, id, method, env.params).await
                }
                // A 0.3 method asked for in another version: an unknown one is that.
                Some(_) if let Err(e) = super::params::check_service(service, headers, query) => {
                    refused(cx, None, &id, &e)
                }
                _ => refused(cx, None, &id, &A2aError::MethodNotFound(why)),
            };
        }
        Err(e) => return refused(cx, None, &id, &e),
    };
    let meta = match super::params::check_service(service, headers, query) {
        Ok(m) => m,
        Err(e) => return refused(cx, Some(method), &id, &e),
    };
    let params = Params::JsonRpc {
        raw: env.params,
        send: env.send,
    };
    let out = match success_prefix(&id) {
        Ok(out) => out,
        Err(e) => return refused(cx, Some(method), &id, &e),
    };
    match call(
        service,
        (method, super::dispatch::JSONRPC),
        params,
        edge,
        cx,
        out,
    )
    .await
    {
        Ok(Answer::Json(mut out)) => {
            out.push(b'}');
            with_extensions(json(http::StatusCode::OK, out), &meta)
        }
        Ok(Answer::Events(events)) => {
            with_extensions(sse_response(sse_envelopes(id, events)), &meta)
        }
        Err(e) => error_response(&id, &e),
    }
}

/// The error response of a request refused before its operation ran (recorded as such).
fn refused(
    cx: &RequestContext,
    method: Option<A2aMethod>,
    id: &Value,
    err: &A2aError,
) -> http::Response<A2aBody> {
    super::dispatch::refused_before(method, super::dispatch::JSONRPC, cx, err);
    error_response(id, err)
}

/// The 0.3 operation `name` is, when the service serves 0.3.
fn v03_method(service: &AgentService, name: Option<&str>) -> Option<v03::Method> {
    name.filter(|_| service.serves_v03())
        .and_then(v03::Method::from_jsonrpc)
}

/// Handle an A2A 0.3 request: its version and extensions checked as 0.3's, the operation
/// translated (`binding::v03`), the answer and errors in 0.3's shapes.
async fn handle_v03(
    service: &AgentService,
    edge: Edge<'_>,
    cx: &RequestContext,
    id: Value,
    method: v03::Method,
    params: Option<&RawValue>,
) -> http::Response<A2aBody> {
    let meta = match super::params::check_v03(service, &edge.parts.headers, edge.parts.uri.query())
    {
        Ok(meta) => meta,
        Err(e) => {
            super::dispatch::refused_before(None, super::dispatch::JSONRPC, cx, &e);
            return error_response_as(&id, &e, failure_v03);
        }
    };
    let cx = v03::context(cx);
    let params = Params::JsonRpc {
        raw: params,
        send: None,
    };
    let answer = match v03::jsonrpc_request(method, params) {
        Ok(request) => v03::call(service, request, &cx, super::dispatch::JSONRPC).await,
        Err(e) => {
            super::dispatch::refused_before(None, super::dispatch::JSONRPC, &cx, &e);
            Err(e)
        }
    };
    match answer {
        Ok(v03::Answer::Events(events)) => {
            let err_id = id.clone();
            let service = service.clone();
            let frames = sse::event_frames(
                events,
                move |item| Ok(success(&id, &v03::event(&service, item))),
                move |e| failure_v03(&err_id, e),
            );
            with_extensions(sse_response(frames), &meta)
        }
        Ok(answer) => match v03::jsonrpc_result(service, answer) {
            Ok(result) => with_extensions(json(http::StatusCode::OK, success(&id, &result)), &meta),
            Err(e) => error_response_as(&id, &e, failure_v03),
        },
        Err(e) => error_response_as(&id, &e, failure_v03),
    }
}

/// Refuse, before the body is parsed, a request that is not JSON or is a batch.
#[inline]
fn check_media(headers: &http::HeaderMap, body: &[u8]) -> Result<(), A2aError> {
    if !is_json_content_type(headers) {
        let got = content_type(headers);
        return Err(A2aError::ContentTypeNotSupported(format!(
            "JSON-RPC requests must be sent as application/json, not `{got}`"
        )));
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(A2aError::InvalidRequest(
            "batch requests are not supported by A2A; send one request per call".into(),
        ));
    }
    Ok(())
}

/// Why a body is no request: JsonParse if it is no JSON, InvalidRequest if it is no JSON-RPC
/// request object.
fn envelope_error(e: &serde_json::Error) -> A2aError {
    if e.is_syntax() || e.is_eof() {
        A2aError::JsonParse(format!("request body is not valid JSON: {e}"))
    } else {
        A2aError::InvalidRequest(format!("not a JSON-RPC 2.0 request: {e}"))
    }
}

/// The A2A method an envelope calls (`jsonrpc` must be "2.0"); MethodNotFound names the
/// methods there are.
#[inline]
fn checked_method(jsonrpc: Option<&str>, method: Option<&str>) -> Result<A2aMethod, A2aError> {
    if jsonrpc != Some("2.0") {
        return Err(A2aError::InvalidRequest("`jsonrpc` must be \"2.0\"".into()));
    }
    let Some(name) = method else {
        return Err(A2aError::InvalidRequest("`method` is required".into()));
    };
    A2aMethod::from_name(name).ok_or_else(|| {
        let hint = if name.contains('/') {
            " (that is an A2A 0.3 method name: it is served to requests without `A2A-Version: 1.0`, if the agent serves 0.3)"
        } else {
            ""
        };
        let names: Vec<&str> = A2aMethod::ALL.iter().map(|m| m.name()).collect();
        A2aError::MethodNotFound(format!(
            "method `{name}` does not exist{hint}; A2A 1.0 methods are {}",
            names.join(", ")
        ))
    })
}

fn sse_envelopes(id: Value, events: EventStream) -> futures::stream::BoxStream<'static, Bytes> {
    let err_id = id.clone();
    sse::event_frames(
        events,
        move |item| Ok(success(&id, &item.event)),
        move |e| failure(&err_id, e),
    )
}

#[cfg(test)]
mod envelope_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_raw_success_envelope_is_byte_for_byte_the_typed_one() {
        let result =
            serde_json::json!({"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}});
        for id in [json!(1), json!("a\"b"), Value::Null, json!(-2.5)] {
            let mut raw = success_prefix(&id).unwrap();
            serde_json::to_writer(&mut raw, &result).unwrap();
            raw.push(b'}');
            assert_eq!(Bytes::from(raw), success(&id, &result), "id {id}");
        }
    }

    #[test]
    fn send_params_parse_in_the_envelope_pass_when_method_comes_first() {
        let body = br#"{"id":1,"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"text":"hi"}],"role":"ROLE_USER"}}}"#;
        let env = parse_envelope(body, true).unwrap();
        assert!(env.send.is_some() && env.params.is_none());
        let env = parse_envelope(body, false).unwrap();
        assert!(env.send.is_none() && env.params.is_some());
    }
}
