//! A2A service parameters: `A2A-Version` and `A2A-Extensions`.
//!
//! Decisions (the spec leaves room):
//! - The version comes from the `A2A-Version` header, else the `A2A-Version` query parameter.
//!   A missing or empty value means 0.3 (spec §3.4). A request asking for 0.3 (no version,
//!   or 0.3) with a 0.3 method name (JSON-RPC) or a 0.3 route (`/v1/...`) is served in 0.3
//!   (`binding::v03`) when the agent serves it. Anything else is 1.0's: a version other than
//!   1.0 is VersionNotSupportedError (a 1.0 method without a version too: a 1.0 client
//!   always sends it), and a 0.3 method name sent with `A2A-Version: 1.0` is MethodNotFound,
//!   the strict reading of the conflict. A patch part (`1.0.2`) is ignored, as the spec says.
//! - `A2A-Extensions` (and v0.3's `X-A2A-Extensions`) is a comma-separated URI list. Unknown
//!   URIs are ignored; the activated ones the agent supports are echoed back.

use crate::error::A2aError;
use crate::protocol::PROTOCOL_VERSION;

/// Header and query parameter naming the protocol version.
pub const VERSION_HEADER: &str = "A2A-Version";
/// Header listing activated extensions.
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// The service parameters of an accepted request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestMeta {
    /// The negotiated `Major.Minor` version.
    pub version: String,
    /// Activated extensions this agent supports (echo them in `A2A-Extensions`).
    pub extensions: Vec<String>,
}

fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    let q = query?;
    form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.into_owned())
}

/// [`check`] against `service`'s required and supported extensions: what both bindings run
/// before anything else of a request is read.
pub(super) fn check_service(
    service: &crate::server::AgentService,
    headers: &http::HeaderMap,
    query: Option<&str>,
) -> Result<RequestMeta, A2aError> {
    let (required, supported) = service.extensions();
    check(headers, query, required, supported)
}

/// Check the version and the required extensions.
///
/// ```
/// use a2a_kit::binding::params::check;
/// let mut headers = http::HeaderMap::new();
/// assert_eq!(check(&headers, None, &[], &[]).unwrap_err().code(), -32009);
/// headers.insert("a2a-version", "1.0".parse().unwrap());
/// assert_eq!(check(&headers, None, &[], &[]).unwrap().version, "1.0");
/// ```
pub fn check(
    headers: &http::HeaderMap,
    query: Option<&str>,
    required: &[String],
    supported: &[String],
) -> Result<RequestMeta, A2aError> {
    let version = requested_version(headers, query);
    if major_minor(&version) != PROTOCOL_VERSION {
        let version = version.into_owned();
        let message = if version.is_empty() {
            format!(
                "no A2A-Version was sent, which means protocol 0.3; this agent speaks {PROTOCOL_VERSION} (and 0.3 by its 0.3 method names and routes): send the header `A2A-Version: {PROTOCOL_VERSION}`"
            )
        } else {
            format!(
                "A2A-Version `{version}` is not supported; this agent speaks {PROTOCOL_VERSION}"
            )
        };
        return Err(A2aError::VersionNotSupported { version, message });
    }
    extensions(headers, required, supported, PROTOCOL_VERSION)
}

/// [`check`] for a request in A2A 0.3 (a 0.3 method name or route asked for without a 1.0
/// `A2A-Version`, see [`asks_for_v03`]): the extensions, from `X-A2A-Extensions` too.
pub(super) fn check_v03(
    service: &crate::server::AgentService,
    headers: &http::HeaderMap,
    query: Option<&str>,
) -> Result<RequestMeta, A2aError> {
    debug_assert!(asks_for_v03(headers, query));
    let (required, supported) = service.extensions();
    extensions(headers, required, supported, "0.3")
}

/// Whether a request with these service parameters asks for 0.3: `A2A-Version` absent,
/// empty or 0.3. (A 1.0 client always sends 1.0.)
pub(super) fn asks_for_v03(headers: &http::HeaderMap, query: Option<&str>) -> bool {
    matches!(major_minor(&requested_version(headers, query)), "" | "0.3")
}

/// Whether a request asks for 1.0 (`A2A-Version: 1.0`, any patch).
pub(super) fn asks_for_v1(headers: &http::HeaderMap, query: Option<&str>) -> bool {
    major_minor(&requested_version(headers, query)) == PROTOCOL_VERSION
}

/// The `A2A-Version` header, else the query parameter, trimmed; empty when neither is sent.
fn requested_version<'a>(
    headers: &'a http::HeaderMap,
    query: Option<&str>,
) -> std::borrow::Cow<'a, str> {
    // Header names as constants: looking one up by `&str` parses and hashes the name first.
    static VERSION: http::HeaderName = http::HeaderName::from_static("a2a-version");
    match headers.get(&VERSION) {
        Some(v) => std::borrow::Cow::Borrowed(v.to_str().unwrap_or("<not ASCII>").trim()),
        None => std::borrow::Cow::Owned(
            query_param(query, VERSION_HEADER)
                .unwrap_or_default()
                .trim()
                .to_string(),
        ),
    }
}

/// `Major.Minor` of `Major.Minor.Patch`.
fn major_minor(version: &str) -> &str {
    match version.match_indices('.').nth(1) {
        Some((end, _)) => &version[..end],
        None => version,
    }
}

/// The activated extensions (`A2A-Extensions` or 0.3's `X-A2A-Extensions`): the required
/// ones must be there; the supported ones are echoed.
fn extensions(
    headers: &http::HeaderMap,
    required: &[String],
    supported: &[String],
    version: &str,
) -> Result<RequestMeta, A2aError> {
    let mut activated: Vec<String> = Vec::new();
    static EXTENSIONS: [http::HeaderName; 2] = [
        http::HeaderName::from_static("a2a-extensions"),
        http::HeaderName::from_static("x-a2a-extensions"),
    ];
    for name in &EXTENSIONS {
        for value in headers.get_all(name) {
            if let Ok(v) = value.to_str() {
                activated.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
            }
        }
    }
    if let Some(missing) = required.iter().find(|r| !activated.contains(r)) {
        return Err(A2aError::ExtensionSupportRequired {
            uri: missing.clone(),
        });
    }
    activated.retain(|a| supported.contains(a));
    activated.dedup();
    Ok(RequestMeta {
        version: version.to_string(),
        extensions: activated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut m = http::HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        m
    }

    #[test]
    fn version_rules() {
        assert!(check(&h(&[("A2A-Version", "1.0")]), None, &[], &[]).is_ok());
        assert!(check(&h(&[("a2a-version", "1.0.3")]), None, &[], &[]).is_ok());
        assert!(check(&h(&[]), Some("A2A-Version=1.0"), &[], &[]).is_ok());
        let e = check(&h(&[("A2A-Version", "")]), None, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("0.3"));
        assert_eq!(
            check(&h(&[("A2A-Version", "2.0")]), None, &[], &[])
                .unwrap_err()
                .code(),
            -32009
        );
        assert_eq!(
            check(&h(&[("A2A-Version", "0.3")]), None, &[], &[])
                .unwrap_err()
                .code(),
            -32009
        );
    }

    #[test]
    fn extensions_required_and_echoed() {
        let req = vec!["urn:x".to_string()];
        let e = check(&h(&[("A2A-Version", "1.0")]), None, &req, &req).unwrap_err();
        assert_eq!(e.code(), -32008);
        let ok = check(
            &h(&[("A2A-Version", "1.0"), ("A2A-Extensions", "urn:y, urn:x")]),
            None,
            &req,
            &req,
        )
        .unwrap();
        assert_eq!(ok.extensions, vec!["urn:x".to_string()]);
    }
}
