//! The two HTTP bindings on the client side: how each operation becomes a request, and how
//! responses and errors are read back.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::auth::{CallInfo, Interceptor};
use super::error::{AgentError, ClientError};
use super::stream::{RawEvents, decode_sse, snippet};
use crate::protocol::AgentInterface;
use crate::protocol::{AgentCard, PROTOCOL_VERSION, ProtocolVersion, StreamResponse};

/// A protocol binding the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP (`JSONRPC`).
    JsonRpc,
    /// HTTP+JSON / REST (`HTTP+JSON`).
    HttpJson,
    /// gRPC (`GRPC`), with feature `grpc`: HTTP/2 with prior knowledge to the interface's
    /// `host:port`.
    Grpc,
}

impl Binding {
    /// The `protocolBinding` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => AgentInterface::JSONRPC,
            Binding::HttpJson => AgentInterface::HTTP_JSON,
            Binding::Grpc => AgentInterface::GRPC,
        }
    }

    /// Parse a `protocolBinding` (case-insensitive; `rest` and `json-rpc` are accepted too).
    pub fn parse(s: &str) -> Option<Binding> {
        match s.trim().to_ascii_uppercase().as_str() {
            "JSONRPC" | "JSON-RPC" => Some(Binding::JsonRpc),
            "HTTP+JSON" | "REST" | "HTTP" | "HTTP_JSON" => Some(Binding::HttpJson),
            "GRPC" => Some(Binding::Grpc),
            _ => None,
        }
    }
}

impl std::fmt::Display for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Binding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Binding::parse(s).ok_or_else(|| {
            format!("`{s}` is not a binding this client speaks (JSONRPC, HTTP+JSON, GRPC)")
        })
    }
}

/// The HTTP layer shared by every call: the reqwest client, interceptors, service parameters.
pub(crate) struct Http {
    pub client: reqwest::Client,
    pub interceptors: Vec<Arc<dyn Interceptor>>,
    pub extensions: Vec<String>,
    /// The origins interceptors (credentials) run for: the agent's, and any the user added.
    pub credential_origins: Vec<reqwest::Url>,
}

/// Whether `a` and `b` have one origin (scheme, host, port).
pub(crate) fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.origin() == b.origin()
}

impl Http {
    /// Add service parameters, run the interceptors, send.
    pub async fn execute(
        &self,
        operation: &str,
        card: Option<&AgentCard>,
        req: reqwest::Request,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, ClientError> {
        self.execute_in(ProtocolVersion::V1_0, operation, card, req, timeout)
            .await
    }

    /// [`execute`](Self::execute) in protocol `version` (its service parameters).
    pub async fn execute_in(
        &self,
        version: ProtocolVersion,
        operation: &str,
        card: Option<&AgentCard>,
        mut req: reqwest::Request,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, ClientError> {
        if timeout.is_some() {
            *req.timeout_mut() = timeout;
        }
        let span = crate::observe::client_span(operation, req.url());
        async move {
            let req = self.prepare_in(version, operation, card, req).await?;
            let url = req.url().to_string();
            let resp = self.client.execute(req).await;
            let span = tracing::Span::current();
            match &resp {
                Ok(r) if !span.is_disabled() => {
                    span.record("http.response.status_code", r.status().as_u16());
                }
                Err(e) => crate::observe::record_failure("transport", e),
                _ => {}
            }
            resp.map_err(|e| ClientError::from_reqwest(&url, &e))
        }
        .instrument(span)
        .await
    }

    /// Add service parameters and run the interceptors (for the agent's origins only): what
    /// every binding sends, as headers or as gRPC metadata. In protocol `version`: 1.0 sends
    /// `A2A-Version: 1.0` and `A2A-Extensions`; 0.3 sends no version (0.3 clients send none,
    /// and a server that speaks both reads its absence as 0.3) and `X-A2A-Extensions`.
    pub async fn prepare_in(
        &self,
        version: ProtocolVersion,
        operation: &str,
        card: Option<&AgentCard>,
        mut req: reqwest::Request,
    ) -> Result<reqwest::Request, ClientError> {
        let headers = req.headers_mut();
        let extensions_header = match version {
            ProtocolVersion::V1_0 => {
                headers.insert("A2A-Version", HeaderValue::from_static(PROTOCOL_VERSION));
                "A2A-Extensions"
            }
            ProtocolVersion::V0_3 => "X-A2A-Extensions",
        };
        if !self.extensions.is_empty()
            && let Ok(v) = HeaderValue::from_str(&self.extensions.join(","))
        {
            headers.insert(extensions_header, v);
        }
        // The trace this call is part of: the call's span (`otel`), else the run's or the
        // request's the code runs in.
        if let Some(trace) = crate::observe::TraceContext::current() {
            trace.inject(req.headers_mut());
        }
        let call = CallInfo { operation, card };
        if self
            .credential_origins
            .iter()
            .any(|o| same_origin(o, req.url()))
        {
            for i in &self.interceptors {
                i.intercept(&call, &mut req).await?;
            }
        } else if !self.interceptors.is_empty() {
            // A card may name any URL: credentials go only where the user sent them.
            tracing::warn!(
                url = %req.url(),
                "not sending credentials to an origin other than the agent's (trust it with ClientBuilder::trust_origin)"
            );
        }
        Ok(req)
    }
}

/// One operation, in both bindings' terms.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// The JSON-RPC method (also the operation name interceptors see).
    pub method: &'static str,
    /// The JSON-RPC params (the request message, with `tenant`).
    pub params: Value,
    /// The HTTP+JSON request.
    pub rest: Rest,
}

/// An HTTP+JSON request, relative to the interface URL (and tenant).
#[derive(Debug, Clone)]
pub(crate) enum Rest {
    Post(Vec<String>, Value),
    Get(Vec<String>, Vec<(String, String)>),
    Delete(Vec<String>),
}

impl Call {
    /// Build a call from a request message: `params` is its JSON; `rest` gets the params
    /// (minus `tenant`, which travels in the path) to build the REST request.
    pub fn new(
        method: &'static str,
        request: &impl serde::Serialize,
        rest: impl FnOnce(Map<String, Value>) -> Rest,
    ) -> Self {
        let params = serde_json::to_value(request).unwrap_or_else(|_| json!({}));
        let mut body = params.as_object().cloned().unwrap_or_default();
        body.remove("tenant");
        Call {
            method,
            params,
            rest: rest(body),
        }
    }

    pub fn tenant(&self) -> Option<&str> {
        self.params
            .get("tenant")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
    }
}

/// The scalar fields of `obj` as query parameters (camelCase names, enums by name, booleans
/// as `true`/`false`), minus `skip`.
pub(crate) fn query(obj: &Map<String, Value>, skip: &[&str]) -> Vec<(String, String)> {
    obj.iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .filter_map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((k.clone(), s))
        })
        .collect()
}

/// `endpoint` + `/{tenant}` + segments.
pub(crate) fn rest_url(
    endpoint: &Url,
    tenant: Option<&str>,
    segments: &[String],
) -> Result<Url, ClientError> {
    let mut url = endpoint.clone();
    {
        let mut segs = url
            .path_segments_mut()
            .map_err(|()| ClientError::InvalidUrl(format!("`{endpoint}` cannot be a base URL")))?;
        segs.pop_if_empty();
        if let Some(t) = tenant {
            segs.push(t);
        }
        for s in segments {
            segs.push(s);
        }
    }
    Ok(url)
}

/// Build the request for `call` on `binding`.
pub(crate) fn build(
    http: &reqwest::Client,
    binding: Binding,
    endpoint: &Url,
    call: &Call,
    id: u64,
    stream: bool,
    rest_post_subscribe: bool,
) -> Result<reqwest::Request, ClientError> {
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    let req = match binding {
        Binding::Grpc => {
            return Err(ClientError::InvalidUrl(
                "gRPC calls are not HTTP requests (client::grpc makes them)".into(),
            ));
        }
        Binding::JsonRpc => {
            let body =
                json!({"jsonrpc": "2.0", "id": id, "method": call.method, "params": call.params});
            http.post(endpoint.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, accept)
                .body(body.to_string())
        }
        Binding::HttpJson => {
            let accept = if stream {
                accept
            } else {
                "application/a2a+json, application/json"
            };
            match &call.rest {
                Rest::Post(segs, body) => {
                    let url = rest_url(endpoint, call.tenant(), segs)?;
                    http.post(url)
                        .header(CONTENT_TYPE, "application/json")
                        .header(ACCEPT, accept)
                        .body(body.to_string())
                }
                Rest::Get(segs, q) if stream && rest_post_subscribe => {
                    let url = rest_url(endpoint, call.tenant(), segs)?;
                    let _ = q;
                    http.post(url)
                        .header(CONTENT_TYPE, "application/json")
                        .header(ACCEPT, accept)
                        .body("{}")
                }
                Rest::Get(segs, q) => {
                    let mut url = rest_url(endpoint, call.tenant(), segs)?;
                    if !q.is_empty() {
                        url.query_pairs_mut()
                            .extend_pairs(q.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                    }
                    http.get(url).header(ACCEPT, accept)
                }
                Rest::Delete(segs) => http
                    .delete(rest_url(endpoint, call.tenant(), segs)?)
                    .header(ACCEPT, accept),
            }
        }
    };
    req.build()
        .map_err(|e| ClientError::InvalidUrl(e.to_string()))
}

pub(crate) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// What a non-stream body turned out to hold.
enum Body {
    Result(Value),
    Error(ClientError),
}

async fn read_body(binding: Binding, resp: reqwest::Response) -> Result<Body, ClientError> {
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
    // Refused at the agent's edge (credentials): an HTTP error, not an A2A one, in both
    // bindings (the JSON-RPC request was never read).
    if matches!(status.as_u16(), 401 | 403) {
        return Err(http_error());
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return if status.is_success() {
            Ok(Body::Result(Value::Null))
        } else {
            Err(http_error())
        };
    }
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return if status.is_success() {
            Err(ClientError::InvalidResponse(format!(
                "the body is not JSON: {}",
                snippet(&text)
            )))
        } else {
            Err(http_error())
        };
    };
    let http_status = (!status.is_success()).then_some(status.as_u16());
    match binding {
        Binding::JsonRpc => {
            if let Some(err) = value
                .get("error")
                .filter(|e| e.get("code").and_then(Value::as_i64).is_some_and(|c| c < 0))
            {
                return Ok(Body::Error(ClientError::from(AgentError::from_jsonrpc(
                    err,
                    http_status,
                ))));
            }
            if let Some(status) = http_status {
                return Ok(Body::Error(
                    AgentError::from_rest(&value, status)
                        .map_or_else(http_error, ClientError::from),
                ));
            }
            match value.get("result") {
                Some(r) if value.get("jsonrpc").is_some() || value.get("id").is_some() => {
                    Ok(Body::Result(r.clone()))
                }
                _ => Err(ClientError::InvalidResponse(format!(
                    "not a JSON-RPC response: {}",
                    snippet(&text)
                ))),
            }
        }
        // (gRPC answers never reach here: `client::grpc` reads them.)
        Binding::HttpJson | Binding::Grpc => match http_status {
            Some(status) => Ok(Body::Error(
                AgentError::from_rest(&value, status).map_or_else(http_error, ClientError::from),
            )),
            None => Ok(Body::Result(value)),
        },
    }
}

/// Decode a unary response.
pub(crate) async fn unary<T: DeserializeOwned>(
    binding: Binding,
    resp: reqwest::Response,
) -> Result<T, ClientError> {
    match read_body(binding, resp).await? {
        Body::Error(e) => Err(e),
        Body::Result(v) => {
            let text = v.to_string();
            serde_path_to_error::deserialize(v).map_err(|e| {
                ClientError::InvalidResponse(format!(
                    "unexpected result shape at `{}`: {} in {}",
                    e.path(),
                    e.inner(),
                    snippet(&text)
                ))
            })
        }
    }
}

/// Decode a streaming response: an SSE body, or an error (or, leniently, one JSON result).
pub(crate) async fn stream(
    binding: Binding,
    resp: reqwest::Response,
    idle: Option<Duration>,
) -> Result<RawEvents, ClientError> {
    if resp.status().is_success() && is_event_stream(&resp) {
        return Ok(decode_sse(resp, binding, idle));
    }
    match read_body(binding, resp).await? {
        Body::Error(e) => Err(e),
        Body::Result(v) => {
            let ev: StreamResponse = serde_json::from_value(v.clone()).map_err(|_| {
                ClientError::InvalidResponse(format!(
                    "expected an event stream, got {}",
                    snippet(&v.to_string())
                ))
            })?;
            Ok(Box::pin(futures::stream::iter([Ok((None, ev))])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_urls_encode_segments_and_tenant() {
        let e = Url::parse("http://h/a2a/").unwrap();
        let u = rest_url(
            &e,
            Some("acme corp"),
            &["tasks".into(), "a/b:cancel".into()],
        )
        .unwrap();
        assert_eq!(u.as_str(), "http://h/a2a/acme%20corp/tasks/a%2Fb:cancel");
        let e = Url::parse("http://h").unwrap();
        assert_eq!(
            rest_url(&e, None, &["message:send".into()])
                .unwrap()
                .as_str(),
            "http://h/message:send"
        );
    }

    #[test]
    fn query_params_are_scalars() {
        let req = crate::protocol::ListTasksRequest {
            tenant: Some("t".into()),
            status: Some(crate::protocol::TaskState::Working),
            page_size: Some(2),
            include_artifacts: Some(true),
            ..Default::default()
        };
        let v = serde_json::to_value(&req).unwrap();
        let mut q = query(v.as_object().unwrap(), &["tenant"]);
        q.sort();
        assert_eq!(
            q,
            [
                ("includeArtifacts".to_string(), "true".to_string()),
                ("pageSize".into(), "2".into()),
                ("status".into(), "TASK_STATE_WORKING".into())
            ]
        );
    }

    #[tokio::test]
    async fn unary_reads_results_and_errors() {
        let resp = |status: u16, body: &'static str| {
            reqwest::Response::from(http::Response::builder().status(status).body(body).unwrap())
        };
        let v: Value = unary(
            Binding::JsonRpc,
            resp(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        )
        .await
        .unwrap();
        assert_eq!(v, json!({}));
        // Python answers Delete with `"result": null`.
        let v: Value = unary(
            Binding::JsonRpc,
            resp(200, r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
        )
        .await
        .unwrap();
        assert_eq!(v, Value::Null);
        let e = unary::<Value>(
            Binding::JsonRpc,
            resp(
                200,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"v"}}"#,
            ),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), Some(-32009));
        let e = unary::<Value>(Binding::HttpJson, resp(401, ""))
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Http { status: 401, .. }));
        let e = unary::<Value>(Binding::HttpJson, resp(502, "<html>bad gateway</html>"))
            .await
            .unwrap_err();
        assert!(e.is_transient());
        let e = unary::<crate::protocol::Task>(Binding::HttpJson, resp(200, r#"{"id": 5}"#))
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::InvalidResponse(_)), "{e}");
        // An empty 200 body is fine for Delete.
        let v: Value = unary(Binding::HttpJson, resp(200, "")).await.unwrap();
        assert_eq!(v, Value::Null);
    }
}
