//! [`RequestContext`]: who is calling and where, the one value every
//! [`AgentService`](crate::server::AgentService) operation takes beside its request.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::auth::Caller;
use crate::error::A2aError;
use crate::observe::TraceContext;
use crate::protocol::ProtocolVersion;

/// Who is calling and where: the caller the edge authenticated, the tenant the request was
/// sent to, when the caller stops waiting, and whatever else the edge attaches (a trace
/// context). Each binding builds one per request; a program calling an
/// [`AgentService`](crate::server::AgentService) directly builds its own.
///
/// Tasks are scoped by it exactly as over HTTP: the caller and tenant make the task's owner
/// (see [`TaskOwnership`](crate::server::TaskOwnership)).
///
/// ```
/// use std::time::Duration;
/// use a2a_kit::auth::Caller;
/// use a2a_kit::request::RequestContext;
///
/// let anonymous = RequestContext::new();
/// assert!(anonymous.caller().is_none());
///
/// let cx = RequestContext::new()
///     .with_caller(Caller::new("alice"))
///     .with_tenant("acme")
///     .with_timeout(Duration::from_secs(30));
/// assert_eq!(cx.caller().unwrap().subject, "alice");
/// assert_eq!(cx.tenant(), Some("acme"));
/// assert!(cx.deadline().is_some());
/// ```
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    caller: Option<Arc<Caller>>,
    tenant: Option<String>,
    deadline: Option<Instant>,
    agent_url: Option<String>,
    client_addr: Option<IpAddr>,
    version: ProtocolVersion,
    extensions: http::Extensions,
}

/// The address of the client a request came from, as a server may put it in the request's
/// extensions. The edge copies it into the [`RequestContext`]: anonymous callers' shares are
/// counted by it. (a2a-kit-axum needs none: its server tells the agent each request's client,
/// and its router reads axum's `ConnectInfo`; see [`A2aHttpService::client_addr_from`](crate::binding::A2aHttpService::client_addr_from).)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

/// The key of a client at `ip` for per-client bounds: an IPv4 address as it is, an IPv6
/// address by its /64 (what one host usually has), an IPv4-mapped one as IPv4.
///
/// ```
/// use std::net::IpAddr;
/// let ip: IpAddr = "2001:db8::1:2:3:4".parse().unwrap();
/// assert_eq!(a2a_kit::request::client_key(ip), "2001:db8::".parse::<IpAddr>().unwrap());
/// ```
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.into(),
            None => std::net::Ipv6Addr::from(v6.to_bits() & !u128::from(u64::MAX)).into(),
        },
        v4 => v4,
    }
}

impl RequestContext {
    /// An anonymous request with no tenant and no deadline.
    pub fn new() -> Self {
        Self::default()
    }

    /// The request of an authenticated caller.
    pub fn with_caller(mut self, caller: impl Into<Arc<Caller>>) -> Self {
        self.caller = Some(caller.into());
        self
    }

    /// The request was sent to `tenant` (an HTTP+JSON path prefix, a host name): its tasks
    /// are that tenant's. A request that names another tenant in its own `tenant` field is
    /// refused (InvalidParams).
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// The caller stops waiting at `deadline`: a blocking SendMessage then answers with the
    /// task as it stands (as if it had asked to return at once); the task goes on.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// [`with_deadline`](Self::with_deadline) `timeout` from now.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.with_deadline(Instant::now() + timeout)
    }

    /// The URL the request reached the agent at (scheme, host and the path it is mounted
    /// at): names the agent in an extended card built without a public URL.
    pub fn with_agent_url(mut self, url: impl Into<String>) -> Self {
        self.agent_url = Some(url.into());
        self
    }

    /// The request came from a client at `addr`: an anonymous caller's share of the agent
    /// ([`CallerShare`](crate::runtime::CallerShare)) is counted by it.
    pub fn with_client_addr(mut self, addr: IpAddr) -> Self {
        self.client_addr = Some(addr);
        self
    }

    /// The request was made in protocol `version` (the edge's translation of an A2A 0.3
    /// request says 0.3): a push config it registers gets its bodies in that version.
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// The request came in the W3C trace context `trace` (the edge reads it from the
    /// `traceparent`, `tracestate` and `baggage` headers or metadata): the task it starts
    /// keeps it, and the calls its skill makes carry it on.
    pub fn with_trace_context(mut self, trace: TraceContext) -> Self {
        self.extensions.insert(trace);
        self
    }

    /// The trace context the request came in, if it carried a valid one.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.extensions.get()
    }

    /// The protocol version the request was made in (1.0 unless the edge said otherwise).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The authenticated caller; `None` for an anonymous request.
    pub fn caller(&self) -> Option<&Arc<Caller>> {
        self.caller.as_ref()
    }

    /// The tenant the request was sent to, if the edge knows one.
    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// When the caller stops waiting, if it said.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The client's address, if the edge knows it.
    pub fn client_addr(&self) -> Option<IpAddr> {
        self.client_addr
    }

    /// The URL the request reached the agent at, if the edge said.
    pub fn agent_url(&self) -> Option<&str> {
        self.agent_url.as_deref()
    }

    /// What the edge attached to the request beyond the above (a trace context, a
    /// connection's peer address), by type, as `http::Request::extensions`.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// Attach values for the operations downstream.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// The tenant of a request whose own `tenant` field says `named`: the two must agree when
    /// both are given.
    pub(crate) fn tenant_for<'a>(
        &'a self,
        named: Option<&'a str>,
    ) -> Result<Option<&'a str>, A2aError> {
        let edge = self.tenant.as_deref().filter(|t| !t.is_empty());
        match (edge, named.filter(|t| !t.is_empty())) {
            (Some(edge), Some(named)) if edge != named => Err(A2aError::invalid_field(
                "tenant",
                format!("the request names tenant `{named}` but was sent to tenant `{edge}`"),
            )),
            (Some(edge), _) => Ok(Some(edge)),
            (None, named) => Ok(named),
        }
    }
}
