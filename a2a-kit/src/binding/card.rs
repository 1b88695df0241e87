//! The agent card over HTTP: conditional requests, and the URL it names when the agent has no
//! public URL (the one the request came in on).

use http_body_util::Full;

use super::A2aBody;
use super::response::{json, response};
use crate::error::A2aError;
use crate::server::AgentService;

/// The well-known path of the agent card, relative to where the agent is mounted (and at the
/// root of the host).
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// Where A2A before v0.3 looked for the card; served the same.
pub const LEGACY_AGENT_CARD_PATH: &str = "/.well-known/agent.json";

/// The agent card, with `ETag`, `Last-Modified` and a five-minute `Cache-Control`; 304 when
/// the client's copy is current: its `If-None-Match` names the `ETag` (or `*`), or, without
/// `If-None-Match` (which takes precedence, RFC 9110 §13.2.2), its `If-Modified-Since` is not
/// before `Last-Modified`. A date that does not parse is ignored, as RFC 9110 says.
///
/// `mount_path` is the path the agent's endpoints are mounted at (`""` at the root): without
/// a public URL, the card names [`request_base_url`] of this request and mount path (a
/// proxy's view of it with `trust_forwarded`, see
/// [`HttpConfig::trust_forwarded_headers`](super::HttpConfig::trust_forwarded_headers)). A
/// request that says nothing of its host (no `Host`, no authority) then gets 400.
pub fn card_response(
    service: &AgentService,
    request: &http::request::Parts,
    mount_path: &str,
    trust_forwarded: bool,
) -> http::Response<A2aBody> {
    let base_url = match service.public_url() {
        Some(url) => url.to_string(),
        None => match request_base_url(request, mount_path, trust_forwarded) {
            Ok(url) => url,
            Err(reason) => {
                let err = A2aError::InvalidRequest(format!(
                    "cannot name this agent's URL in its card: {reason}; configure a public URL"
                ));
                let body = serde_json::to_vec(&err.to_rest_body()).unwrap_or_default();
                return json(http::StatusCode::BAD_REQUEST, body);
            }
        },
    };
    // A 1.0 client (it sends `A2A-Version: 1.0`) gets the card as 1.0 writes it; any other
    // request the card both kinds of client read.
    let version = match super::params::asks_for_v1(&request.headers, request.uri.query()) {
        true => crate::protocol::ProtocolVersion::V1_0,
        false => crate::protocol::ProtocolVersion::V0_3,
    };
    let json_bytes = service.card_document_for(&base_url, version);
    let mut resp = cacheable_json(request, json_bytes, service.built_at());
    // A cache in front must not serve one version's card to the other (a 0.3-serving agent),
    // nor one proxy's view of the URL to another.
    let vary = match (
        service.serves_v03(),
        service.public_url().is_none() && trust_forwarded,
    ) {
        (true, true) => {
            "A2A-Version, Forwarded, X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Prefix"
        }
        (false, true) => "Forwarded, X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Prefix",
        (true, false) => "A2A-Version",
        (false, false) => "",
    };
    if !vary.is_empty() {
        resp.headers_mut()
            .insert(http::header::VARY, http::HeaderValue::from_static(vary));
    }
    resp
}

/// The agent's public signing keys as a JWKS (feature `jose`; see
/// [`AgentService::jwks_document`]), cached and revalidated like the card; 404 when the agent
/// publishes no key.
#[cfg(feature = "jose")]
pub fn jwks_response(
    service: &AgentService,
    request: &http::request::Parts,
) -> http::Response<A2aBody> {
    match service.jwks_document() {
        Some(json) => cacheable_json(request, json, service.built_at()),
        None => response(http::StatusCode::NOT_FOUND, Full::default()),
    }
}

/// `json` with `ETag` (a fingerprint of the bytes), `Last-Modified` (when the agent was
/// built) and a five-minute `Cache-Control`, or 304 when the client's copy is current.
fn cacheable_json(
    request: &http::request::Parts,
    json_bytes: bytes::Bytes,
    modified: std::time::SystemTime,
) -> http::Response<A2aBody> {
    let etag = &etag(&json_bytes);
    let last_modified = &chrono::DateTime::<chrono::Utc>::from(modified)
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let header = |name| {
        request
            .headers
            .get(name)
            .and_then(|v: &http::HeaderValue| v.to_str().ok())
    };
    let not_modified = match header(http::header::IF_NONE_MATCH) {
        Some(v) => v.split(',').any(|t| t.trim() == etag || t.trim() == "*"),
        None => header(http::header::IF_MODIFIED_SINCE)
            .and_then(http_date)
            .zip(http_date(last_modified))
            .is_some_and(|(since, modified)| since >= modified),
    };
    let mut resp = if not_modified {
        response(http::StatusCode::NOT_MODIFIED, Full::default())
    } else {
        json(http::StatusCode::OK, json_bytes)
    };
    let h = resp.headers_mut();
    h.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=300"),
    );
    if let Ok(v) = http::HeaderValue::from_str(etag) {
        h.insert(http::header::ETAG, v);
    }
    if let Ok(v) = http::HeaderValue::from_str(last_modified) {
        h.insert(http::header::LAST_MODIFIED, v);
    }
    resp
}

/// A strong `ETag` over the served bytes (FNV-1a: a fingerprint, not a security measure).
fn etag(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    });
    format!("\"{hash:016x}\"")
}

/// The URL `request` reached an agent mounted at `mount_path` at: `scheme://host` + prefix +
/// mount path. The scheme and host are the request's own (its URI's authority, else its
/// `Host` header; `http` unless the URI says otherwise). With `trust_forwarded`, a proxy's
/// view wins: `Forwarded` (RFC 7239: the first element's `proto` and `host`), else
/// `X-Forwarded-Proto` / `X-Forwarded-Host`, and an `X-Forwarded-Prefix` path in front of the
/// mount path. Values that are not a valid scheme, authority or path are ignored.
///
/// ```
/// use a2a_kit::binding::request_base_url;
/// let (parts, ()) = http::Request::get("/agents/travel/.well-known/agent-card.json")
///     .header("host", "agents.example.com:8080")
///     .header("x-forwarded-proto", "https")
///     .body(())
///     .unwrap()
///     .into_parts();
/// assert_eq!(
///     request_base_url(&parts, "/agents/travel", false).unwrap(),
///     "http://agents.example.com:8080/agents/travel"
/// );
/// assert_eq!(
///     request_base_url(&parts, "/agents/travel", true).unwrap(),
///     "https://agents.example.com:8080/agents/travel"
/// );
/// ```
pub fn request_base_url(
    request: &http::request::Parts,
    mount_path: &str,
    trust_forwarded: bool,
) -> Result<String, &'static str> {
    let headers = &request.headers;
    let mut scheme = request.uri.scheme_str().unwrap_or("http").to_string();
    let mut host = request.uri.authority().map(|a| a.to_string()).or_else(|| {
        headers
            .get(http::header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(valid_authority)
    });
    let mut prefix = String::new();
    if trust_forwarded {
        let first = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .map(str::trim)
        };
        let forwarded = first("forwarded").map(forwarded_pairs).unwrap_or_default();
        let find = |key: &str| {
            forwarded
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        let proto = find("proto").or_else(|| first("x-forwarded-proto"));
        if let Some(p) =
            proto.filter(|p| p.eq_ignore_ascii_case("http") || p.eq_ignore_ascii_case("https"))
        {
            scheme = p.to_ascii_lowercase();
        }
        if let Some(h) = find("host")
            .or_else(|| first("x-forwarded-host"))
            .and_then(valid_authority)
        {
            host = Some(h);
        }
        if let Some(p) = first("x-forwarded-prefix").filter(|p| valid_path(p)) {
            prefix = p.trim_end_matches('/').to_string();
        }
    }
    let host = host.ok_or("the request has no Host header")?;
    Ok(format!(
        "{scheme}://{host}{prefix}{}",
        mount_path.trim_end_matches('/')
    ))
}

/// A host and optional port, as a URL authority without user info.
fn valid_authority(value: &str) -> Option<String> {
    let authority: http::uri::Authority = value.trim().parse().ok()?;
    (!authority.as_str().contains('@') && !authority.host().is_empty())
        .then(|| authority.as_str().to_string())
}

/// An absolute path with nothing a URL would read as a query, fragment or escape from it.
fn valid_path(value: &str) -> bool {
    value.starts_with('/')
        && !value.starts_with("//")
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'?' | b'#' | b'"' | b'\\'))
}

/// The client a trusted proxy says it forwards: the `for` of the last `Forwarded` element,
/// else the last `X-Forwarded-For` address. The last, not the first: it is the one the proxy
/// next to the agent added; anything before it is whatever the client sent.
pub(crate) fn forwarded_client(headers: &http::HeaderMap) -> Option<std::net::IpAddr> {
    let last = |name: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .next_back()
            .map(str::trim)
    };
    if let Some(element) = last("forwarded") {
        let node = forwarded_pairs(element)
            .into_iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("for"))
            .map(|(_, v)| v);
        return node.as_deref().and_then(node_ip);
    }
    last("x-forwarded-for").and_then(node_ip)
}

/// The address of a forwarded node: `192.0.2.1`, `192.0.2.1:80`, `[2001:db8::1]:80`,
/// `2001:db8::1`; `None` for `unknown`, obfuscated names and anything else.
fn node_ip(node: &str) -> Option<std::net::IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    node.parse().ok().or_else(|| {
        let (host, port) = node.rsplit_once(':')?;
        port.parse::<u16>().ok()?;
        host.parse::<std::net::Ipv4Addr>().ok().map(Into::into)
    })
}

/// The `key=value` pairs of one `Forwarded` element; quoted values unquoted.
fn forwarded_pairs(element: &str) -> Vec<(String, String)> {
    element
        .split(';')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            Some((k.trim().to_string(), v.replace("\\\"", "\"")))
        })
        .collect()
}

/// An HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) as a Unix timestamp.
fn http_date(value: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc2822(value.trim())
        .ok()
        .map(|d| d.timestamp())
}

/// Whether `path` (relative to the agent's mount) is one the card is served at.
pub(super) fn is_card_path(path: &str) -> bool {
    path == AGENT_CARD_PATH || path == LEGACY_AGENT_CARD_PATH
}
