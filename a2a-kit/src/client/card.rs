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
use crate::protocol::{AgentCard, AgentInterface};

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
    pub(crate) async fn resolve(
        &self,
        http: &Http,
        base: &str,
        ttl: Duration,
        force: bool,
    ) -> Result<FetchedCard, ClientError> {
        let cached = self.lock().get(base).cloned();
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
                    base,
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
        base: &str,
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
            .execute("GetAgentCard", None, req, Some(CARD_TIMEOUT))
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
            self.lock().insert(base.to_string(), c);
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
        self.lock().insert(base.to_string(), entry);
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
pub(crate) fn parse_card(value: &Value) -> Result<Result<AgentCard, ClientError>, String> {
    let Some(obj) = value.as_object() else {
        return Err("the document is not a JSON object".into());
    };
    if !obj.contains_key("supportedInterfaces") && !obj.contains_key("supported_interfaces") {
        if let (Some(v), true) = (
            obj.get("protocolVersion").and_then(Value::as_str),
            obj.contains_key("url"),
        ) {
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

/// Whether a `protocolVersion` is one this client speaks: 1.x (an empty version counts as
/// 1.0, as the official SDKs treat it).
pub(crate) fn version_supported(v: &str) -> bool {
    let v = v.trim();
    v.is_empty() || v.split('.').next() == Some("1")
}

/// The interface chosen from a card.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub interface: AgentInterface,
    pub binding: Binding,
    pub endpoint: Url,
}

/// Pick the interface: the card's order (first = the agent's preference) among those with a
/// binding in `prefs` (all supported bindings when empty), or `prefs`' order when
/// `client_order` is set. Relative URLs are resolved against the card's URL.
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

pub(crate) fn select_interface(
    card: &AgentCard,
    card_url: &Url,
    prefs: &[Binding],
    client_order: bool,
) -> Result<Selected, ClientError> {
    let offered: Vec<String> = card
        .supported_interfaces
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
    let usable: Vec<(usize, Binding, &AgentInterface)> = card
        .supported_interfaces
        .iter()
        .enumerate()
        .filter_map(|(i, iface)| Binding::parse(&iface.protocol_binding).map(|b| (i, b, iface)))
        .filter(|(_, b, _)| allowed(*b))
        // gRPC with feature `grpc`, to an interface it can dial (plain HTTP/2, no TLS).
        .filter(|(_, b, i)| *b != Binding::Grpc || grpc_endpoint(&i.url).is_some())
        .collect();
    let versioned: Vec<&(usize, Binding, &AgentInterface)> = usable
        .iter()
        .filter(|(_, _, i)| version_supported(&i.protocol_version))
        .collect();
    let pick = if client_order && !prefs.is_empty() {
        prefs
            .iter()
            .find_map(|p| versioned.iter().find(|(_, b, _)| b == p).copied())
    } else {
        versioned.first().copied()
    };
    let Some((_, binding, iface)) = pick else {
        return Err(if usable.is_empty() {
            ClientError::NoSupportedInterface { offered }
        } else {
            ClientError::UnsupportedVersion { offered }
        });
    };
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
        let s = select_interface(&c, &base, &[], false).unwrap();
        assert_eq!(
            (s.binding, s.endpoint.as_str()),
            (Binding::HttpJson, "http://h/rest")
        );
        // Forcing a binding; relative URLs resolve against the card URL.
        let s = select_interface(&c, &base, &[Binding::JsonRpc], false).unwrap();
        assert_eq!(s.endpoint.as_str(), "http://h/rpc");
        // Client order wins when asked.
        let s = select_interface(&c, &base, &[Binding::JsonRpc, Binding::HttpJson], true).unwrap();
        assert_eq!(s.binding, Binding::JsonRpc);
    }

    #[test]
    fn explains_why_nothing_fits() {
        let base = Url::parse("http://h/").unwrap();
        let old = card(&[("http://h", "JSONRPC", "0.3")]);
        assert!(matches!(
            select_interface(&old, &base, &[], false),
            Err(ClientError::UnsupportedVersion { .. })
        ));
        let grpc = card(&[("https://h:443", "GRPC", "1.0")]);
        let e = select_interface(&grpc, &base, &[], false).unwrap_err();
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
        let first = select_interface(&c, &base, &[], false).unwrap();
        assert_eq!(first.binding, Binding::JsonRpc);
        let asked = select_interface(&c, &base, &[Binding::Grpc], false);
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
    fn recognises_documents() {
        assert!(parse_card(&serde_json::json!([1])).is_err());
        assert!(parse_card(&serde_json::json!({"hello": 1})).is_err());
        let v03 = serde_json::json!({"name": "a", "url": "http://h", "protocolVersion": "0.3.0"});
        assert!(matches!(
            parse_card(&v03),
            Ok(Err(ClientError::UnsupportedVersion { .. }))
        ));
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
