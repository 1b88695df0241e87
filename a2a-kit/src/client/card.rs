//! Agent card discovery: the well-known URL, an HTTP cache honouring `Cache-Control: max-age`
//! and revalidating with `ETag` / `Last-Modified`, and the choice of interface.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::header::{
    CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use serde_json::Value;

use super::error::ClientError;
use super::stream::snippet;
use super::transport::{Binding, Http};
use crate::protocol::{AgentCard, AgentInterface, ProtocolVersion};

/// The well-known path of the agent card.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// Time limit for fetching a card.
const CARD_TIMEOUT: Duration = Duration::from_secs(30);

/// A shared cache of agent cards, keyed by the URL they were resolved from. Clone it into
/// several builders to share it.
#[derive(Clone, Default)]
pub struct CardCache {
    inner: Arc<Mutex<HashMap<String, CachedCard>>>,
}

impl std::fmt::Debug for CardCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardCache")
            .field("entries", &self.lock().len())
            .finish()
    }
}

#[derive(Clone)]
struct CachedCard {
    card: Arc<AgentCard>,
    /// The document as received: what its signatures cover.
    raw: Arc<Value>,
    url: Url,
    etag: Option<String>,
    last_modified: Option<String>,
    fresh_until: Instant,
}

/// The outcome of a card lookup.
#[derive(Debug, Clone)]
pub(crate) struct FetchedCard {
    pub card: Arc<AgentCard>,
    /// The document as received (for signature checks).
    #[cfg_attr(not(feature = "jose"), allow(dead_code))]
    pub raw: Arc<Value>,
    pub url: Url,
    /// Whether this came from the network (200), rather than the cache or a 304.
    pub changed: bool,
}

impl CardCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CachedCard>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forget every card.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Resolve the card for `base`: from the cache while fresh, else revalidated (or fetched).
    ///
    /// The card is asked for as a client of `version` asks for it: by default with
    /// `A2A-Version: 1.0` (an agent that speaks both versions answers with the 1.0 card, a 0.3
    /// agent with its own), for 0.3 without (an agent that speaks both answers with the card
    /// carrying 0.3's fields). Each is cached apart.
    pub(crate) async fn resolve(
        &self,
        http: &Http,
        base: &str,
        ttl: Duration,
        force: bool,
        version: Option<ProtocolVersion>,
    ) -> Result<FetchedCard, ClientError> {
        let version = match version {
            Some(ProtocolVersion::V0_3) => ProtocolVersion::V0_3,
            _ => ProtocolVersion::V1_0,
        };
        let key = match version {
            ProtocolVersion::V0_3 => format!("{base} (A2A 0.3)"),
            ProtocolVersion::V1_0 => base.to_string(),
        };
        let cached = self.lock().get(&key).cloned();
        if let Some(c) = &cached
            && !force
            && Instant::now() < c.fresh_until
        {
            return Ok(FetchedCard {
                card: c.card.clone(),
                raw: c.raw.clone(),
                url: c.url.clone(),
                changed: false,
            });
        }
        let candidates = match &cached {
            Some(c) => vec![c.url.clone()],
            None => card_urls(base)?,
        };
        let mut last_err = None;
        for url in candidates {
            match self
                .fetch(
                    http,
                    (&key, version),
                    &url,
                    cached.as_ref().filter(|c| c.url == url),
                    ttl,
                )
                .await
            {
                Ok(f) => return Ok(f),
                Err(e @ ClientError::NotAnAgent { .. }) => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| ClientError::InvalidUrl(base.to_string())))
    }

    async fn fetch(
        &self,
        http: &Http,
        (key, version): (&str, ProtocolVersion),
        url: &Url,
        cached: Option<&CachedCard>,
        ttl: Duration,
    ) -> Result<FetchedCard, ClientError> {
        let mut req = http
            .client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(c) = cached {
            if let Some(etag) = &c.etag {
                req = req.header(IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &c.last_modified {
                req = req.header(IF_MODIFIED_SINCE, lm);
            }
        }
        let req = req
            .build()
            .map_err(|e| ClientError::InvalidUrl(format!("{url}: {e}")))?;
        let resp = http
            .execute_in(version, "GetAgentCard", None, req, Some(CARD_TIMEOUT))
            .await?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let fresh_until = Instant::now() + freshness(&headers, ttl);
        if status == reqwest::StatusCode::NOT_MODIFIED
            && let Some(c) = cached
        {
            let mut c = c.clone();
            c.fresh_until = fresh_until;
            let out = FetchedCard {
                card: c.card.clone(),
                raw: c.raw.clone(),
                url: c.url.clone(),
                changed: false,
            };
            self.lock().insert(key.to_string(), c);
            return Ok(out);
        }
        let body = resp
            .bytes()
            .await
            .map_err(|e| ClientError::from_reqwest(url.as_str(), &e))?;
        let not_agent = |reason: String| ClientError::NotAnAgent {
            url: url.to_string(),
            reason,
        };
        if status == reqwest::StatusCode::NOT_FOUND
            || status == reqwest::StatusCode::METHOD_NOT_ALLOWED
        {
            return Err(not_agent(format!(
                "no agent card there (HTTP {})",
                status.as_u16()
            )));
        }
        if !status.is_success() {
            return Err(ClientError::Http {
                status: status.as_u16(),
                url: url.to_string(),
                body: snippet(&String::from_utf8_lossy(&body)),
            });
        }
        let ct = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let value: Value = serde_json::from_slice(&body).map_err(|_| {
            not_agent(if ct.is_empty() {
                "the response is not JSON".to_string()
            } else {
                format!("the response is {ct}, not JSON")
            })
        })?;
        let card = parse_card(&value).map_err(not_agent)??;
        let card = Arc::new(card);
        let raw = Arc::new(value);
        let entry = CachedCard {
            card: card.clone(),
            raw: raw.clone(),
            url: url.clone(),
            etag: headers
                .get(ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            last_modified: headers
                .get(LAST_MODIFIED)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            fresh_until,
        };
        self.lock().insert(key.to_string(), entry);
        Ok(FetchedCard {
            card,
            raw,
            url: url.clone(),
            changed: true,
        })
    }
}

/// How long a response stays fresh: `max-age`, 0 for `no-cache`/`no-store`, else `ttl`.
fn freshness(headers: &reqwest::header::HeaderMap, ttl: Duration) -> Duration {
    let Some(cc) = headers.get(CACHE_CONTROL).and_then(|v| v.to_str().ok()) else {
        return ttl;
    };
    let mut out = ttl;
    for directive in cc.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-cache" || directive == "no-store" {
            return Duration::ZERO;
        }
        if let Some(secs) = directive
            .strip_prefix("max-age=")
            .and_then(|s| s.trim_matches('"').parse::<u64>().ok())
        {
            out = Duration::from_secs(secs);
        }
    }
    out
}

/// Check a card document: `Err` when it is not a card at all, `Ok(Err)` when it is a card of
/// an unsupported generation.
///
/// A 1.0 card (`supportedInterfaces`) is read as such, a hybrid one too (its 0.3 fields are
/// read when an interface is chosen, [`select_interface`]). A 0.3 card (`url`, `protocolVersion` 0.3.x, no `supportedInterfaces`) is read through
/// [`crate::v03::convert::client::card_from_v03`]; one of another version is unsupported.
pub(crate) fn parse_card(value: &Value) -> Result<Result<AgentCard, ClientError>, String> {
    use crate::v03::convert::client::card_from_v03;
    let Some(obj) = value.as_object() else {
        return Err("the document is not a JSON object".into());
    };
    let card_version = obj
        .get("protocolVersion")
        .or_else(|| obj.get("protocol_version"))
        .and_then(Value::as_str);
    let v03_fields = card_version
        .is_some_and(|v| interface_version(v) == Some(ProtocolVersion::V0_3))
        && obj.contains_key("url");
    if !obj.contains_key("supportedInterfaces") && !obj.contains_key("supported_interfaces") {
        if v03_fields {
            return card_from_v03(value)
                .map(Ok)
                .map_err(|e| format!("the A2A 0.3 agent card does not parse: {e}"));
        }
        if let (Some(v), true) = (card_version, obj.contains_key("url")) {
            let transport = obj
                .get("preferredTransport")
                .and_then(Value::as_str)
                .unwrap_or("JSONRPC");
            return Ok(Err(ClientError::UnsupportedVersion {
                offered: vec![format!("{transport} {v}")],
            }));
        }
        return Err(if obj.contains_key("name") {
            "the card lists no `supportedInterfaces`".into()
        } else {
            "the document is not an agent card (no `name`, no `supportedInterfaces`)".into()
        });
    }
    serde_json::from_value(value.clone())
        .map(Ok)
        .map_err(|e| format!("the agent card does not parse: {e}"))
}

/// The 0.3 interfaces a hybrid card names only in its 0.3 fields (`url`,
/// `preferredTransport`, `additionalInterfaces`, as a2a-kit and the official 1.x SDKs serve
/// it): none when `raw` has no such fields or `card` lists a 0.3 interface of its own.
fn hybrid_v03_interfaces(card: &AgentCard, raw: Option<&Value>) -> Vec<AgentInterface> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let v03_fields = raw
        .get("protocolVersion")
        .or_else(|| raw.get("protocol_version"))
        .and_then(Value::as_str)
        .is_some_and(|v| interface_version(v) == Some(ProtocolVersion::V0_3));
    let lists_v03 = card
        .supported_interfaces
        .iter()
        .any(|i| interface_version(&i.protocol_version) == Some(ProtocolVersion::V0_3));
    if !v03_fields || lists_v03 {
        return Vec::new();
    }
    crate::v03::convert::client::interfaces_from_v03(raw)
}

/// The URLs to try for `base`: a card URL as is; otherwise the well-known path below `base`,
/// then at the root of its host.
pub(crate) fn card_urls(base: &str) -> Result<Vec<Url>, ClientError> {
    let url =
        Url::parse(base.trim()).map_err(|e| ClientError::InvalidUrl(format!("`{base}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ClientError::InvalidUrl(format!(
            "`{base}`: only http and https URLs are supported"
        )));
    }
    if url.path().ends_with(".json") {
        return Ok(vec![url]);
    }
    let mut below = url.clone();
    below.set_query(None);
    below.set_fragment(None);
    let path = below.path().trim_end_matches('/').to_string();
    below.set_path(&format!("{path}{AGENT_CARD_PATH}"));
    let mut urls = vec![below];
    if !path.is_empty() {
        let mut root = url.clone();
        root.set_query(None);
        root.set_fragment(None);
        root.set_path(AGENT_CARD_PATH);
        urls.push(root);
    }
    Ok(urls)
}

/// The protocol version of an interface's `protocolVersion`, when this client speaks it: 1.x
/// (an empty version counts as 1.0, as the official SDKs treat it) or 0.3 (`0.3`, `0.3.x`).
pub(crate) fn interface_version(v: &str) -> Option<ProtocolVersion> {
    let v = v.trim();
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        _ if v.is_empty() => Some(ProtocolVersion::V1_0),
        (Some("1"), _) => Some(ProtocolVersion::V1_0),
        (Some("0"), Some("3")) => Some(ProtocolVersion::V0_3),
        _ => None,
    }
}

/// The interface chosen from a card.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub interface: AgentInterface,
    pub binding: Binding,
    pub endpoint: Url,
    /// The protocol version spoken there.
    pub version: ProtocolVersion,
}

/// Where a gRPC interface is dialled (`None`: not by this client, or not built with `grpc`).
fn grpc_endpoint(url: &str) -> Option<Url> {
    #[cfg(feature = "grpc")]
    return super::grpc::endpoint(url);
    #[cfg(not(feature = "grpc"))]
    {
        let _ = url;
        None
    }
}

/// Pick the interface: among those of the newest version this client speaks and the card
/// offers (1.0, else 0.3; only `version` when given; a hybrid card's 0.3 fields, in `raw`,
/// the document as received, offer 0.3 after its own interfaces), the card's order (first = the agent's
/// preference) among those with a binding in `prefs` (all supported bindings when empty), or
/// `prefs`' order when `client_order` is set. Relative URLs are resolved against the card's
/// URL. 0.3 over gRPC is not spoken: a card that offers nothing else is refused as
/// [`ClientError::Unsupported`].
pub(crate) fn select_interface(
    card: &AgentCard,
    raw: Option<&Value>,
    card_url: &Url,
    prefs: &[Binding],
    client_order: bool,
    version: Option<ProtocolVersion>,
) -> Result<Selected, ClientError> {
    let hybrid = hybrid_v03_interfaces(card, raw);
    let interfaces: Vec<&AgentInterface> =
        card.supported_interfaces.iter().chain(&hybrid).collect();
    let offered: Vec<String> = interfaces
        .iter()
        .map(|i| {
            format!(
                "{} {}",
                i.protocol_binding,
                if i.protocol_version.is_empty() {
                    "(no version)"
                } else {
                    &i.protocol_version
                }
            )
        })
        .collect();
    let allowed = |b: Binding| prefs.is_empty() || prefs.contains(&b);
    let usable: Vec<(usize, Binding, &AgentInterface)> = interfaces
        .iter()
        .copied()
        .enumerate()
        .filter_map(|(i, iface)| Binding::parse(&iface.protocol_binding).map(|b| (i, b, iface)))
        .filter(|(_, b, _)| allowed(*b))
        // gRPC with feature `grpc`, to an interface it can dial (plain HTTP/2, no TLS).
        .filter(|(_, b, i)| *b != Binding::Grpc || grpc_endpoint(&i.url).is_some())
        .collect();
    let spoken = |wanted: ProtocolVersion| -> Vec<&(usize, Binding, &AgentInterface)> {
        usable
            .iter()
            .filter(|(_, _, i)| interface_version(&i.protocol_version) == Some(wanted))
            .filter(|(_, b, _)| wanted == ProtocolVersion::V1_0 || *b != Binding::Grpc)
            .collect()
    };
    let versioned = match version {
        Some(v) => spoken(v),
        None => Some(spoken(ProtocolVersion::V1_0))
            .filter(|v1| !v1.is_empty())
            .unwrap_or_else(|| spoken(ProtocolVersion::V0_3)),
    };
    let pick = if client_order && !prefs.is_empty() {
        prefs
            .iter()
            .find_map(|p| versioned.iter().find(|(_, b, _)| b == p).copied())
    } else {
        versioned.first().copied()
    };
    let Some((_, binding, iface)) = pick else {
        let grpc_v03 = allowed(Binding::Grpc)
            && version != Some(ProtocolVersion::V1_0)
            && interfaces.iter().any(|i| {
                Binding::parse(&i.protocol_binding) == Some(Binding::Grpc)
                    && interface_version(&i.protocol_version) == Some(ProtocolVersion::V0_3)
            });
        return Err(if grpc_v03 {
            ClientError::Unsupported(format!(
                "A2A 0.3 over gRPC is not spoken by this client (it speaks 0.3 over JSON-RPC \
                 and HTTP+JSON, and 1.0 over all three); the agent offers {}",
                offered.join(", ")
            ))
        } else if usable.is_empty() {
            ClientError::NoSupportedInterface { offered }
        } else {
            ClientError::UnsupportedVersion { offered }
        });
    };
    let version = interface_version(&iface.protocol_version).unwrap_or_default();
    let endpoint = match binding {
        // `host:port`, not a URL the card's could resolve.
        Binding::Grpc => grpc_endpoint(&iface.url)
            .ok_or_else(|| ClientError::InvalidUrl(format!("gRPC interface `{}`", iface.url)))?,
        _ => card_url
            .join(iface.url.trim())
            .map_err(|e| ClientError::InvalidUrl(format!("interface URL `{}`: {e}", iface.url)))?,
    };
    Ok(Selected {
        interface: (*iface).clone(),
        binding: *binding,
        endpoint,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(ifaces: &[(&str, &str, &str)]) -> AgentCard {
        AgentCard {
            name: "x".into(),
            supported_interfaces: ifaces
                .iter()
                .map(|(u, b, v)| AgentInterface {
                    url: (*u).into(),
                    protocol_binding: (*b).into(),
                    tenant: None,
                    protocol_version: (*v).into(),
                })
                .collect(),
            ..AgentCard::default()
        }
    }

    #[test]
    fn well_known_urls() {
        let u = |s: &str| {
            card_urls(s)
                .unwrap()
                .iter()
                .map(Url::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(u("http://h:1"), ["http://h:1/.well-known/agent-card.json"]);
        assert_eq!(
            u("http://h/agents/a/"),
            [
                "http://h/agents/a/.well-known/agent-card.json",
                "http://h/.well-known/agent-card.json"
            ]
        );
        assert_eq!(u("http://h/card.json"), ["http://h/card.json"]);
        assert!(matches!(
            card_urls("ftp://h"),
            Err(ClientError::InvalidUrl(_))
        ));
        assert!(matches!(
            card_urls("not a url"),
            Err(ClientError::InvalidUrl(_))
        ));
    }

    #[test]
    fn picks_first_supported_interface_in_card_order() {
        let base = Url::parse("http://h/.well-known/agent-card.json").unwrap();
        let c = card(&[
            // gRPC over TLS: not one this client dials.
            ("https://h:443", "GRPC", "1.0"),
            ("http://h/rpc", "JSONRPC", "0.3"),
            ("http://h/rest", "HTTP+JSON", "1.0"),
            ("/rpc", "JSONRPC", "1.0"),
        ]);
        let s = select_interface(&c, None, &base, &[], false, None).unwrap();
        assert_eq!(
            (s.binding, s.endpoint.as_str()),
            (Binding::HttpJson, "http://h/rest")
        );
        // Forcing a binding; relative URLs resolve against the card URL.
        let s = select_interface(&c, None, &base, &[Binding::JsonRpc], false, None).unwrap();
        assert_eq!(s.endpoint.as_str(), "http://h/rpc");
        // Client order wins when asked.
        let s = select_interface(
            &c,
            None,
            &base,
            &[Binding::JsonRpc, Binding::HttpJson],
            true,
            None,
        )
        .unwrap();
        assert_eq!(s.binding, Binding::JsonRpc);
    }

    #[test]
    fn explains_why_nothing_fits() {
        let base = Url::parse("http://h/").unwrap();
        let future = card(&[
            ("http://h", "JSONRPC", "2.0"),
            ("http://h", "JSONRPC", "0.2"),
        ]);
        assert!(matches!(
            select_interface(&future, None, &base, &[], false, None),
            Err(ClientError::UnsupportedVersion { .. })
        ));
        let v1 = card(&[("http://h", "JSONRPC", "1.0")]);
        assert!(matches!(
            select_interface(&v1, None, &base, &[], false, Some(ProtocolVersion::V0_3)),
            Err(ClientError::UnsupportedVersion { .. })
        ));
        let grpc03 = card(&[("h:50051", "GRPC", "0.3")]);
        let e = select_interface(&grpc03, None, &base, &[], false, None).unwrap_err();
        assert!(
            matches!(&e, ClientError::Unsupported(m) if m.contains("0.3 over gRPC")),
            "{e}"
        );
        let grpc = card(&[("https://h:443", "GRPC", "1.0")]);
        let e = select_interface(&grpc, None, &base, &[], false, None).unwrap_err();
        assert!(matches!(e, ClientError::NoSupportedInterface { .. }));
        assert!(e.to_string().contains("GRPC 1.0"), "{e}");
    }

    #[test]
    fn grpc_is_picked_in_card_order_or_when_asked() {
        let base = Url::parse("http://h/.well-known/agent-card.json").unwrap();
        let c = card(&[
            ("http://h/rpc", "JSONRPC", "1.0"),
            ("h:50051", "GRPC", "1.0"),
        ]);
        let first = select_interface(&c, None, &base, &[], false, None).unwrap();
        assert_eq!(first.binding, Binding::JsonRpc);
        let asked = select_interface(&c, None, &base, &[Binding::Grpc], false, None);
        if cfg!(feature = "grpc") {
            let s = asked.unwrap();
            assert_eq!(
                (s.binding, s.endpoint.as_str()),
                (Binding::Grpc, "http://h:50051/")
            );
        } else {
            assert!(matches!(
                asked,
                Err(ClientError::NoSupportedInterface { .. })
            ));
        }
    }

    #[test]
    fn versions_of_interfaces() {
        let v = |s| interface_version(s);
        assert_eq!(v(""), Some(ProtocolVersion::V1_0));
        assert_eq!(v("1.0"), Some(ProtocolVersion::V1_0));
        assert_eq!(v("1.2.3"), Some(ProtocolVersion::V1_0));
        assert_eq!(v("0.3"), Some(ProtocolVersion::V0_3));
        assert_eq!(v(" 0.3.0 "), Some(ProtocolVersion::V0_3));
        assert_eq!(v("0.2.5"), None);
        assert_eq!(v("2.0"), None);
    }

    #[test]
    fn prefers_1_0_then_0_3_or_the_version_asked_for() {
        let base = Url::parse("http://h/.well-known/agent-card.json").unwrap();
        let c = card(&[
            ("http://h/v03", "JSONRPC", "0.3"),
            ("http://h/v1", "HTTP+JSON", "1.0"),
        ]);
        let s = select_interface(&c, None, &base, &[], false, None).unwrap();
        assert_eq!(
            (s.version, s.endpoint.as_str()),
            (ProtocolVersion::V1_0, "http://h/v1")
        );
        let s = select_interface(&c, None, &base, &[], false, Some(ProtocolVersion::V0_3)).unwrap();
        assert_eq!(
            (s.version, s.endpoint.as_str()),
            (ProtocolVersion::V0_3, "http://h/v03")
        );
        // The binding asked for exists only in 0.3: 0.3 it is.
        let s = select_interface(&c, None, &base, &[Binding::JsonRpc], false, None).unwrap();
        assert_eq!(s.version, ProtocolVersion::V0_3);
        // 0.3 over gRPC is skipped for 0.3 over JSON-RPC.
        let c = card(&[
            ("h:50051", "GRPC", "0.3"),
            ("http://h/rpc", "JSONRPC", "0.3.0"),
        ]);
        let s = select_interface(&c, None, &base, &[], false, None).unwrap();
        assert_eq!(
            (s.binding, s.version),
            (Binding::JsonRpc, ProtocolVersion::V0_3)
        );
    }

    #[test]
    fn recognises_documents() {
        assert!(parse_card(&serde_json::json!([1])).is_err());
        assert!(parse_card(&serde_json::json!({"hello": 1})).is_err());
        let v03 = serde_json::json!({"name": "a", "url": "http://h", "protocolVersion": "0.3.0"});
        let card = parse_card(&v03).unwrap().unwrap();
        assert_eq!(card.supported_interfaces[0].protocol_version, "0.3");
        assert_eq!(card.supported_interfaces[0].protocol_binding, "JSONRPC");
        let v02 = serde_json::json!({"name": "a", "url": "http://h", "protocolVersion": "0.2.5"});
        assert!(matches!(
            parse_card(&v02),
            Ok(Err(ClientError::UnsupportedVersion { .. }))
        ));
        // A hybrid card: read as the 1.0 card it is; its 0.3 fields offer 0.3 when asked for.
        let hybrid = serde_json::json!({"name": "h", "protocolVersion": "0.3.0",
            "url": "http://h/", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": "http://h/", "transport": "JSONRPC"},
                                     {"url": "http://h/rest", "transport": "HTTP+JSON"}],
            "supportedInterfaces": [{"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
        let card = parse_card(&hybrid).unwrap().unwrap();
        assert_eq!(card.supported_interfaces.len(), 1);
        let base = Url::parse("http://h/").unwrap();
        let pick = |binding: &[Binding], version| {
            select_interface(&card, Some(&hybrid), &base, binding, false, version)
                .map(|s| (s.binding, s.version, s.endpoint.to_string()))
        };
        assert_eq!(
            pick(&[], None).unwrap(),
            (Binding::JsonRpc, ProtocolVersion::V1_0, "http://h/".into())
        );
        assert_eq!(
            pick(&[], Some(ProtocolVersion::V0_3)).unwrap(),
            (Binding::JsonRpc, ProtocolVersion::V0_3, "http://h/".into())
        );
        assert_eq!(
            pick(&[Binding::HttpJson], None).unwrap(),
            (
                Binding::HttpJson,
                ProtocolVersion::V0_3,
                "http://h/rest".into()
            )
        );
        assert!(matches!(
            parse_card(&serde_json::json!({"name": "a", "supportedInterfaces": []})),
            Ok(Ok(_))
        ));
    }

    #[test]
    fn cache_control() {
        let mut h = reqwest::header::HeaderMap::new();
        let ttl = Duration::from_secs(7);
        assert_eq!(freshness(&h, ttl), ttl);
        h.insert(CACHE_CONTROL, "public, max-age=300".parse().unwrap());
        assert_eq!(freshness(&h, ttl), Duration::from_secs(300));
        h.insert(CACHE_CONTROL, "no-cache".parse().unwrap());
        assert_eq!(freshness(&h, ttl), Duration::ZERO);
    }
}
