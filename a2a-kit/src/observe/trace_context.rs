//! [`TraceContext`]: the W3C trace context of a request (`traceparent`, `tracestate`,
//! `baggage`), read from incoming headers, carried with a task and written into outgoing ones.

use std::future::Future;

use serde::{Deserialize, Serialize};

/// The task metadata key a task's trace context is kept under (a JSON object with the three
/// headers' values), so that work on the task in another process (another replica, the push
/// outbox after a restart) stays in the task's trace.
pub const TRACE_METADATA_KEY: &str = "a2a-kit/trace";

/// The longest `tracestate` and `baggage` values carried on (W3C's limits: 512 characters of
/// `tracestate`, 8192 bytes of `baggage`); longer ones are dropped, the trace kept.
const MAX_TRACESTATE: usize = 512;
const MAX_BAGGAGE: usize = 8192;

/// A W3C trace context: a valid `traceparent` and, with it, `tracestate` and `baggage`.
///
/// A request's is read by the edge from any binding (`traceparent` and the others are HTTP
/// headers and HTTP/2 metadata alike) and goes into its
/// [`RequestContext`](crate::request::RequestContext); a task keeps the context of its run
/// (under [`TRACE_METADATA_KEY`]); the client, delegation, model tools and push deliveries
/// write [`TraceContext::current`] (or the task's) into their requests. A malformed
/// `traceparent` is no context at all: the request starts a new trace, never an error.
///
/// ```
/// use a2a_kit::observe::TraceContext;
/// let mut headers = http::HeaderMap::new();
/// headers.insert("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".parse().unwrap());
/// headers.insert("tracestate", "congo=t61rcWkgMzE".parse().unwrap());
/// let cx = TraceContext::from_headers(&headers).unwrap();
/// assert_eq!(cx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(cx.parent_id(), "00f067aa0ba902b7");
/// assert!(cx.sampled());
///
/// headers.insert("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01".parse().unwrap());
/// assert!(TraceContext::from_headers(&headers).is_none(), "an all-zero trace id is invalid");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceContext {
    traceparent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tracestate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    baggage: Option<String>,
}

tokio::task_local! {
    /// The trace context of the code running now, when no OpenTelemetry span says (a skill's
    /// run, a request's operation).
    static CURRENT: TraceContext;
}

impl TraceContext {
    /// The context of these three header values; `None` unless `traceparent` is valid (then
    /// `tracestate` and `baggage` are not trusted either, as W3C says). An over-long or
    /// non-ASCII `tracestate` or `baggage` is dropped and the trace kept.
    pub fn parse(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Option<Self> {
        let traceparent = traceparent.trim();
        if !valid_traceparent(traceparent) {
            return None;
        }
        let keep = |v: Option<&str>, max: usize| {
            v.map(str::trim)
                .filter(|v| {
                    !v.is_empty() && v.len() <= max && http::HeaderValue::from_str(v).is_ok()
                })
                .map(str::to_string)
        };
        Some(TraceContext {
            traceparent: traceparent.to_string(),
            tracestate: keep(tracestate, MAX_TRACESTATE),
            baggage: keep(baggage, MAX_BAGGAGE),
        })
    }

    /// The context in these headers (see [`parse`](Self::parse)); several `tracestate` or
    /// `baggage` headers are one list, joined with commas.
    pub fn from_headers(headers: &http::HeaderMap) -> Option<Self> {
        // A name made once: looking one up by `&str` parses it on every request.
        static TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
        let traceparent = headers.get(&TRACEPARENT)?.to_str().ok()?;
        let joined = |name: &str| {
            let mut values = headers.get_all(name).iter().filter_map(|v| v.to_str().ok());
            let first = values.next()?;
            Some(values.fold(first.to_string(), |mut all, v| {
                all.push(',');
                all.push_str(v);
                all
            }))
        };
        Self::parse(
            traceparent,
            joined("tracestate").as_deref(),
            joined("baggage").as_deref(),
        )
    }

    /// Write the context into `headers` (replacing any there).
    pub fn inject(&self, headers: &mut http::HeaderMap) {
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = http::HeaderValue::from_str(value) {
                headers.insert(name, v);
            }
        };
        set("traceparent", &self.traceparent);
        if let Some(v) = &self.tracestate {
            set("tracestate", v);
        }
        if let Some(v) = &self.baggage {
            set("baggage", v);
        }
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage` value, if any.
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The id of the span this context names as the parent of the next: 16 hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the caller sampled the trace.
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|f| f & 1 == 1)
    }

    /// The trace context of the code running now: the current OpenTelemetry span's (feature
    /// `otel`, with a tracer installed), else the one the kit runs a skill or an operation
    /// in (the request's, or its task's), else the one [`scope`](Self::scope) set.
    pub fn current() -> Option<Self> {
        #[cfg(feature = "otel")]
        if super::listening()
            && let Some(cx) = super::otel::span_context(&tracing::Span::current())
        {
            return Some(cx);
        }
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Run `fut` with this as the [`current`](Self::current) trace context (for a task a
    /// skill spawns that calls other agents).
    pub fn scope<F: Future>(self, fut: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, fut)
    }

    /// The context kept in a task's metadata (under [`TRACE_METADATA_KEY`]), if valid.
    pub fn from_metadata(metadata: Option<&crate::protocol::Metadata>) -> Option<Self> {
        let stored = metadata?.get(TRACE_METADATA_KEY)?;
        let cx: TraceContext = serde_json::from_value(stored.clone()).ok()?;
        Self::parse(
            &cx.traceparent,
            cx.tracestate.as_deref(),
            cx.baggage.as_deref(),
        )
    }

    /// The context as the JSON value kept under [`TRACE_METADATA_KEY`].
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// W3C Trace Context level 1: `version-traceid-parentid-flags`, lowercase hex, neither id all
/// zeros, version `ff` invalid; a later version may append `-...` fields, read as version 00.
fn valid_traceparent(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() < 55 {
        return false;
    }
    let hex = |s: &[u8]| s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    let zeros = |s: &[u8]| s.iter().all(|&c| c == b'0');
    let (version, trace, parent, flags) = (&b[0..2], &b[3..35], &b[36..52], &b[53..55]);
    let shape = b[2] == b'-' && b[35] == b'-' && b[52] == b'-';
    let rest_ok = match version {
        b"00" => b.len() == 55,
        b"ff" => false,
        _ => b.len() == 55 || b[55] == b'-',
    };
    shape
        && rest_ok
        && hex(version)
        && hex(trace)
        && hex(parent)
        && hex(flags)
        && !zeros(trace)
        && !zeros(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traceparent_rules() {
        assert!(valid_traceparent(OK));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            assert!(!valid_traceparent(bad), "{bad}");
        }
        // A later version's extra fields are allowed.
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes"
        ));
    }

    #[test]
    fn headers_in_and_out() {
        let mut h = http::HeaderMap::new();
        h.insert("traceparent", OK.parse().unwrap());
        h.append("tracestate", "a=1".parse().unwrap());
        h.append("tracestate", "b=2".parse().unwrap());
        h.insert("baggage", "user=alice".parse().unwrap());
        let cx = TraceContext::from_headers(&h).unwrap();
        assert_eq!(cx.tracestate(), Some("a=1,b=2"));
        assert_eq!(cx.baggage(), Some("user=alice"));
        let mut out = http::HeaderMap::new();
        cx.inject(&mut out);
        assert_eq!(out["traceparent"], OK);
        assert_eq!(out["tracestate"], "a=1,b=2");
        assert_eq!(out["baggage"], "user=alice");
        // Too long a tracestate is dropped, the trace kept.
        let long = "k=".to_string() + &"v".repeat(600);
        let cx = TraceContext::parse(OK, Some(&long), None).unwrap();
        assert_eq!(cx.tracestate(), None);
        assert!(
            !TraceContext::parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
                None,
                None
            )
            .unwrap()
            .sampled()
        );
    }

    #[test]
    fn kept_in_metadata() {
        let cx = TraceContext::parse(OK, Some("a=1"), None).unwrap();
        let mut m = crate::protocol::Metadata::new();
        m.insert(TRACE_METADATA_KEY.into(), cx.to_json());
        assert_eq!(TraceContext::from_metadata(Some(&m)), Some(cx));
        m.insert(
            TRACE_METADATA_KEY.into(),
            serde_json::json!({"traceparent": "junk"}),
        );
        assert_eq!(TraceContext::from_metadata(Some(&m)), None);
    }

    #[tokio::test]
    async fn scope_sets_current() {
        assert_eq!(TraceContext::current(), None);
        let cx = TraceContext::parse(OK, None, None).unwrap();
        let seen = cx.clone().scope(async { TraceContext::current() }).await;
        assert_eq!(seen, Some(cx));
    }
}
