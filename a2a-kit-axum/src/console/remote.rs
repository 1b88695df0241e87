//! The console of an agent elsewhere: the page's calls, forwarded to that agent's origin.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::{CONSOLE_PATH, problem};

/// The most bytes of a request body forwarded (a message with files inline).
const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Why [`Console::remote`](super::Console::remote) refused a URL or its options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the agent URL `{url}` {reason}")]
pub struct RemoteError {
    url: String,
    reason: String,
}

/// How the console reaches a remote agent ([`Console::remote_with`](super::Console::remote_with)).
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// Headers sent with every forwarded call the page did not set itself: credentials given
    /// on the command line (`a2a console URL --api-key KEY`), a gateway's headers.
    pub headers: http::HeaderMap,
    /// Also trust these certificates (PEM): a private CA, a self-signed agent.
    pub root_certificates_pem: Option<Vec<u8>>,
}

/// The agent the console forwards to.
#[derive(Clone)]
pub(super) struct Remote {
    /// The agent's base URL, without a trailing `/`.
    base: String,
    /// `scheme://host[:port]`: the only origin forwarded to.
    origin: String,
    client: reqwest::Client,
    headers: http::HeaderMap,
}

/// Headers that belong to one connection (RFC 9110 §7.6.1) or to the browser's view of the
/// console, not to the agent.
const NOT_FORWARDED: &[HeaderName] = &[
    header::CONNECTION,
    header::HOST,
    header::TRANSFER_ENCODING,
    header::CONTENT_LENGTH,
    header::TE,
    header::TRAILER,
    header::UPGRADE,
    header::COOKIE,
    header::ORIGIN,
    header::REFERER,
    header::ACCEPT_ENCODING,
    header::PROXY_AUTHORIZATION,
];

impl Remote {
    pub(super) fn new(url: &str, options: RemoteOptions) -> Result<Self, RemoteError> {
        let fail = |reason: &str| RemoteError {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|_| fail("is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(fail("is not http:// or https://"));
        }
        let Some(host) = parsed.host_str() else {
            return Err(fail("names no host"));
        };
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(fail("has a query or fragment: give the agent's base URL"));
        }
        let origin = match parsed.port() {
            Some(port) => format!("{}://{host}:{port}", parsed.scheme()),
            None => format!("{}://{host}", parsed.scheme()),
        };
        let base = format!("{origin}{}", parsed.path().trim_end_matches('/'));
        let mut client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none());
        if let Some(pem) = &options.root_certificates_pem {
            let certificates = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                fail(&format!(
                    "cannot be trusted: the certificates are not PEM ({e})"
                ))
            })?;
            for certificate in certificates {
                client = client.add_root_certificate(certificate);
            }
        }
        let client = client
            .build()
            .map_err(|e| fail(&format!("cannot be reached: no HTTP client ({e})")))?;
        Ok(Remote {
            base,
            origin,
            client,
            headers: options.headers,
        })
    }

    pub(super) fn base(&self) -> &str {
        &self.base
    }

    pub(super) fn origin(&self) -> &str {
        &self.origin
    }

    /// The base URL's path (`""` at the origin's root).
    pub(super) fn base_path(&self) -> &str {
        &self.base[self.origin.len()..]
    }

    /// `CONSOLE_PATH/remote/<path>?<query>` to `<origin>/<path>?<query>`, method, headers
    /// (credentials, `Last-Event-ID`) and body as sent; the answer streams back as it comes
    /// (SSE included).
    pub(super) async fn forward(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let prefix = format!("{CONSOLE_PATH}/remote");
        let path_and_query = parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let rest = path_and_query
            .strip_prefix(&prefix)
            .unwrap_or(path_and_query);
        let url = format!("{}{rest}", self.origin);
        let body = match axum::body::to_bytes(body, BODY_LIMIT).await {
            Ok(b) => b,
            Err(_) => {
                return problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the console forwards bodies of at most {BODY_LIMIT} bytes"),
                );
            }
        };
        let mut outgoing = self.client.request(parts.method.clone(), &url).body(body);
        for (name, value) in &parts.headers {
            if !NOT_FORWARDED.contains(name) {
                outgoing = outgoing.header(name, value);
            }
        }
        for (name, value) in &self.headers {
            if !parts.headers.contains_key(name) {
                outgoing = outgoing.header(name, value);
            }
        }
        let answer = match outgoing.send().await {
            Ok(a) => a,
            Err(e) => {
                let why = if e.is_connect() {
                    "cannot connect"
                } else if e.is_timeout() {
                    "timed out"
                } else {
                    "failed"
                };
                return problem(
                    StatusCode::BAD_GATEWAY,
                    format!("the agent at {} {why}: {e}", self.origin),
                );
            }
        };
        let status = answer.status();
        let headers = answer.headers().clone();
        let mut response = Response::new(Body::from_stream(answer.bytes_stream()));
        *response.status_mut() = status;
        for (name, value) in &headers {
            // No cookies for this origin, and no CORS grants: the agent's answers are for the
            // console's page only.
            if !NOT_FORWARDED.contains(name)
                && name != header::SET_COOKIE
                && !name.as_str().starts_with("access-control-")
            {
                response.headers_mut().append(name.clone(), value.clone());
            }
        }
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// The keys the remote card's signatures can be checked with: the JWKS its first
    /// signature's `jku` names on the agent's origin, else the agent's own
    /// [`JWKS_PATH`](a2a_kit::signing::JWKS_PATH).
    pub(super) async fn verifier(&self, card: &Value) -> Option<a2a_kit::signing::Verifier> {
        let jku = card
            .get("signatures")
            .and_then(Value::as_array)
            .and_then(|s| s.first())
            .and_then(|s| s.get("protected"))
            .and_then(Value::as_str)
            .and_then(|p| {
                use base64::Engine as _;
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(p.trim_end_matches('='))
                    .ok()
            })
            .and_then(|h| serde_json::from_slice::<Value>(&h).ok())
            .and_then(|h| h.get("jku").and_then(Value::as_str).map(str::to_string))
            .filter(|jku| jku.starts_with(&format!("{}/", self.origin)));
        let url = jku.unwrap_or_else(|| format!("{}{}", self.origin, a2a_kit::signing::JWKS_PATH));
        a2a_kit::signing::Verifier::new()
            .fetch_jwks(&url)
            .await
            .ok()
    }
}
