//! The SSRF guard: which webhook destinations the push dispatcher may dial.
//!
//! A webhook URL is chosen by the client, so without a guard any client could make the agent
//! POST to `http://169.254.169.254/…` or to services on the agent's private network. The
//! guard works at two points:
//!
//! - **When a config is created** ([`SsrfPolicy::check_url`]): the scheme must be http or
//!   https; a literal IP address or a name that is loopback by definition (`localhost`,
//!   `*.localhost`) is refused at once, with the reason, as InvalidParams. Then
//!   ([`GuardedResolver::check_url_host`]) a host name is resolved, and refused the same way
//!   when it does not resolve or when the policy accepts none of its addresses (a name in
//!   `/etc/hosts` or an internal DNS zone that points at a private address): the client
//!   learns at once, rather than each delivery failing where it cannot see.
//! - **When a delivery connects**: the dispatcher's HTTP client resolves names through
//!   [`GuardedResolver`], which drops every refused address and fails when none is left. The
//!   address dialled is one the guard has just approved, so a name that resolved to a public
//!   address at creation time and to `127.0.0.1` now (DNS rebinding) is still refused. IP
//!   literals never reach a resolver; the dispatcher checks them before each attempt.
//!   Redirects are not followed and proxies are not used, so neither can take a request
//!   elsewhere.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Why an address is not a public destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, the shared address space `100.64/10`, and the
    /// deprecated IPv6 site-local `fec0::/10`.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// Reserved, documentation, benchmarking and other special-purpose ranges that are not
    /// routed on the public internet (`240/4`, `192.0.2/24`, `198.18/15`, `2001:db8::/32`,
    /// Teredo `2001::/32`, ...).
    Reserved,
    /// A cloud instance metadata endpoint (`169.254.169.254`, `169.254.170.2`,
    /// `100.100.100.200`, `192.0.0.192`, `fd00:ec2::254`).
    CloudMetadata,
}

impl AddressClass {
    /// A short human name, used in refusal reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::UniqueLocal => "unique-local",
            AddressClass::Multicast => "multicast",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Reserved => "reserved",
            AddressClass::CloudMetadata => "cloud metadata",
        }
    }

    /// Whether [`SsrfPolicy::AllowPrivate`] lets this class through. Metadata endpoints,
    /// multicast, broadcast and the unspecified address never are.
    pub fn is_private_network(self) -> bool {
        matches!(
            self,
            AddressClass::Loopback
                | AddressClass::Private
                | AddressClass::LinkLocal
                | AddressClass::UniqueLocal
                | AddressClass::Reserved
        )
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Classify an address: `None` for an ordinary public (globally routed) address.
///
/// IPv4 addresses embedded in IPv6 ones (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
/// NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are classified by the IPv4 address they carry.
///
/// ```
/// use a2a_kit::push::{classify, AddressClass};
/// assert_eq!(classify("127.0.0.1".parse().unwrap()), Some(AddressClass::Loopback));
/// assert_eq!(classify("::ffff:10.0.0.1".parse().unwrap()), Some(AddressClass::Private));
/// assert_eq!(classify("169.254.169.254".parse().unwrap()), Some(AddressClass::CloudMetadata));
/// assert_eq!(classify("93.184.215.14".parse().unwrap()), None);
/// ```
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    use AddressClass::*;
    const METADATA: [[u8; 4]; 4] = [
        [169, 254, 169, 254],
        [169, 254, 170, 2],
        [100, 100, 100, 200],
        [192, 0, 0, 192],
    ];
    if METADATA.iter().any(|m| ip.octets() == *m) {
        return Some(CloudMetadata);
    }
    let table: &[([u8; 4], u32, AddressClass)] = &[
        ([0, 0, 0, 0], 8, Unspecified),
        ([127, 0, 0, 0], 8, Loopback),
        ([10, 0, 0, 0], 8, Private),
        ([172, 16, 0, 0], 12, Private),
        ([192, 168, 0, 0], 16, Private),
        ([100, 64, 0, 0], 10, Private),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([224, 0, 0, 0], 4, Multicast),
        ([255, 255, 255, 255], 32, Broadcast),
        ([240, 0, 0, 0], 4, Reserved),
        ([192, 0, 0, 0], 24, Reserved),
        ([192, 0, 2, 0], 24, Reserved),
        ([198, 51, 100, 0], 24, Reserved),
        ([203, 0, 113, 0], 24, Reserved),
        ([198, 18, 0, 0], 15, Reserved),
        ([192, 88, 99, 0], 24, Reserved),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, class)| *class)
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(net) & mask)
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    use AddressClass::*;
    let bits = u128::from(ip);
    if ip.is_unspecified() {
        return Some(Unspecified);
    }
    if ip.is_loopback() {
        return Some(Loopback);
    }
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        return Some(CloudMetadata);
    }
    // IPv4 carried inside IPv6: judge the IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if bits >> 32 == 0 {
        // IPv4-compatible (deprecated) ::a.b.c.d
        return classify_v4(Ipv4Addr::from(bits as u32));
    }
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return classify_v4(Ipv4Addr::from(bits as u32));
    }
    if in_v6(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        return classify_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    let table: &[(Ipv6Addr, u32, AddressClass)] = &[
        (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, Multicast),
        (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, LinkLocal),
        (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, Private),
        (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, UniqueLocal),
        (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, Private),
        (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, Reserved),
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, Reserved),
        (Ipv6Addr::new(0x0100, 0, 0, 0, 0, 0, 0, 0), 64, Reserved),
        (
            Ipv6Addr::new(0x2001, 0x0002, 0, 0, 0, 0, 0, 0),
            48,
            Reserved,
        ),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
        .map(|(_, _, class)| *class)
}

/// An IP network in CIDR notation (`10.0.0.0/8`, `fd00::/8`; a bare address is a /32 or
/// /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    /// The network `addr/prefix`; `None` when the prefix is too long for the family.
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(IpNet { addr, prefix })
    }

    /// Whether `ip` is inside this network (IPv4-mapped IPv6 addresses match IPv4 networks).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => in_v4(ip, net.octets(), self.prefix as u32),
            (IpAddr::V4(net), IpAddr::V6(ip)) => ip
                .to_ipv4_mapped()
                .is_some_and(|ip| in_v4(ip, net.octets(), self.prefix as u32)),
            (IpAddr::V6(net), IpAddr::V6(ip)) => in_v6(ip, net, self.prefix as u32),
            (IpAddr::V6(_), IpAddr::V4(_)) => false,
        }
    }
}

impl FromStr for IpNet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .trim_matches(['[', ']'])
            .parse()
            .map_err(|_| format!("`{s}` is not an IP network"))?;
        let prefix = match prefix {
            None => {
                if addr.is_ipv4() {
                    32
                } else {
                    128
                }
            }
            Some(p) => p
                .parse::<u8>()
                .map_err(|_| format!("`{s}` has an invalid prefix length"))?,
        };
        IpNet::new(addr, prefix)
            .ok_or_else(|| format!("`{s}` has a prefix longer than the address"))
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// One exception in an [`SsrfPolicy::Allowlist`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowRule {
    /// A host name (exact, case-insensitive; `*.example.com` matches its subdomains): any
    /// address it resolves to is accepted, except cloud metadata endpoints.
    Host(String),
    /// Addresses in this network are accepted (even metadata endpoints, if it covers them).
    Net(IpNet),
}

impl AllowRule {
    fn allows(&self, host: Option<&str>, ip: IpAddr, class: AddressClass) -> bool {
        match self {
            AllowRule::Net(net) => net.contains(ip),
            AllowRule::Host(pattern) => {
                class != AddressClass::CloudMetadata
                    && host.is_some_and(|h| host_matches(pattern, h))
            }
        }
    }
}

fn host_matches(pattern: &str, host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(suffix) => host.len() > suffix.len() && host.ends_with(&format!(".{suffix}")),
        None => host == pattern,
    }
}

impl FromStr for AllowRule {
    type Err = String;
    /// An IP address or CIDR network becomes [`AllowRule::Net`], anything else a host name.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("an empty allowlist entry".into());
        }
        match s.parse::<IpNet>() {
            Ok(net) => Ok(AllowRule::Net(net)),
            Err(e) if s.contains('/') => Err(e),
            Err(_) => Ok(AllowRule::Host(s.to_string())),
        }
    }
}

/// Which webhook destinations are allowed.
///
/// ```
/// use a2a_kit::push::SsrfPolicy;
/// let strict = SsrfPolicy::default();
/// assert!(strict.check_url("http://127.0.0.1:8080/hook").is_err());
/// assert!(strict.check_url("https://hooks.example.com/a2a").is_ok());
/// let dev = SsrfPolicy::allowlist(["127.0.0.1", "hooks.internal"]).unwrap();
/// assert!(dev.check_url("http://127.0.0.1:8080/hook").is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SsrfPolicy {
    /// Public addresses only (the default).
    #[default]
    Strict,
    /// Also loopback, private, link-local, unique-local and reserved addresses: for
    /// development and tests. Cloud metadata endpoints, multicast, broadcast and the
    /// unspecified address stay refused.
    AllowPrivate,
    /// Public addresses, plus these exceptions.
    Allowlist(Vec<AllowRule>),
}

impl SsrfPolicy {
    /// An allowlist from strings (IP addresses, CIDR networks or host names).
    pub fn allowlist<I, S>(entries: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        entries
            .into_iter()
            .map(|e| e.as_ref().parse())
            .collect::<Result<Vec<_>, _>>()
            .map(SsrfPolicy::Allowlist)
    }

    /// Check one address reached through `host` (`None` for an IP literal); `Err` is the
    /// reason it is refused.
    pub fn check_addr(&self, host: Option<&str>, ip: IpAddr) -> Result<(), String> {
        let Some(class) = classify(ip) else {
            return Ok(());
        };
        let allowed = match self {
            SsrfPolicy::Strict => false,
            SsrfPolicy::AllowPrivate => class.is_private_network(),
            SsrfPolicy::Allowlist(rules) => rules.iter().any(|r| r.allows(host, ip, class)),
        };
        if allowed {
            return Ok(());
        }
        // "an unspecified address", "a loopback address": the article follows the sound.
        let a = if class == AddressClass::Unspecified {
            "an"
        } else {
            "a"
        };
        Err(match host {
            Some(h) => {
                format!("{h} resolves to {ip}, {a} {class} address, which webhooks may not target")
            }
            None => format!("{ip} is {a} {class} address, which webhooks may not target"),
        })
    }

    /// The check made when a push config is created: http or https, a host, and no literal
    /// address or `localhost` name this policy refuses. Names are resolved by
    /// [`GuardedResolver::check_url_host`] next, and checked again at each delivery.
    pub fn check_url(&self, url: &str) -> Result<(), String> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a valid URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "`{url}` must use http or https, not `{}`",
                parsed.scheme()
            ));
        }
        match url_host(&parsed) {
            None => Err(format!("`{url}` has no host")),
            Some(UrlHost::Ip(ip)) => self.check_addr(None, ip),
            Some(UrlHost::Name(name)) => {
                let lower = name.trim_end_matches('.').to_ascii_lowercase();
                if lower == "localhost" || lower.ends_with(".localhost") {
                    self.check_addr(Some(name), IpAddr::V4(Ipv4Addr::LOCALHOST))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Check the host of a URL about to be requested when it is an IP literal (those bypass
    /// the resolver). Host names are checked by [`GuardedResolver`] as they resolve.
    pub(crate) fn check_literal(&self, url: &reqwest::Url) -> Result<(), String> {
        match url_host(url) {
            Some(UrlHost::Ip(ip)) => self.check_addr(None, ip),
            Some(UrlHost::Name(_)) => Ok(()),
            None => Err(format!("`{url}` has no host")),
        }
    }
}

/// A host name as [`PushConfig::pinned_hosts`](super::PushConfig::pinned_hosts) keys it:
/// lowercase, without a trailing dot.
pub(super) fn normal_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

enum UrlHost<'a> {
    Ip(IpAddr),
    Name(&'a str),
}

/// The host of a parsed URL. The URL parser has already normalised IPv4 literals in every
/// form (`2130706433`, `0x7f.1`) to dotted decimal, and brackets IPv6 ones.
fn url_host(url: &reqwest::Url) -> Option<UrlHost<'_>> {
    let host = url.host_str().filter(|h| !h.is_empty())?;
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6
            .parse::<Ipv6Addr>()
            .ok()
            .map(|ip| UrlHost::Ip(IpAddr::V6(ip)));
    }
    match host.parse::<Ipv4Addr>() {
        Ok(ip) => Some(UrlHost::Ip(IpAddr::V4(ip))),
        Err(_) => Some(UrlHost::Name(host)),
    }
}

/// The error a [`GuardedResolver`] fails with when every address of a name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedDestination {
    /// The reason (one refused address, and how many there were).
    pub reason: String,
}

impl fmt::Display for BlockedDestination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "destination refused by the SSRF guard: {}", self.reason)
    }
}

impl std::error::Error for BlockedDestination {}

/// A `reqwest` resolver that resolves with the system resolver, then keeps only the
/// addresses the policy accepts; it fails with [`BlockedDestination`] when none is left.
/// Since the connector dials only what the resolver returns, the check applies to the
/// address actually dialled.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    policy: Arc<SsrfPolicy>,
    /// Names answered without DNS ([`PushConfig::pinned_hosts`](super::PushConfig::pinned_hosts)).
    pinned: Arc<HashMap<String, Vec<IpAddr>>>,
}

impl GuardedResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: SsrfPolicy) -> Self {
        Self::with_pinned_hosts(policy, HashMap::new())
    }

    /// A resolver enforcing `policy` that answers the names of `pinned` (any case, trailing
    /// dot or not) with their addresses instead of asking DNS. (Not reqwest's own overrides,
    /// which would bypass the guard.)
    pub fn with_pinned_hosts(policy: SsrfPolicy, pinned: HashMap<String, Vec<IpAddr>>) -> Self {
        let pinned = pinned
            .into_iter()
            .map(|(host, addrs)| (normal_host(&host), addrs))
            .collect();
        GuardedResolver {
            policy: Arc::new(policy),
            pinned: Arc::new(pinned),
        }
    }

    /// Resolve `host` and filter its addresses (the port is left 0 for the connector to
    /// fill in).
    pub async fn resolve_checked(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        let addrs = self.lookup(host).await?;
        filter_addrs(&self.policy, host, addrs).map_err(|b| Box::new(b) as _)
    }

    /// The check made when a push config is created, after [`SsrfPolicy::check_url`]: the
    /// URL's host name, resolved now (within `timeout`), must have an address the policy
    /// accepts. A name that does not resolve is refused too: nothing could be delivered to
    /// it, and it is most likely a mistake. IP literals are `check_url`'s. Deliveries check
    /// again as they connect (DNS can change). `Err` is the reason.
    ///
    /// ```
    /// use a2a_kit::push::{GuardedResolver, SsrfPolicy};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pinned = [("hooks.internal".to_string(), vec!["10.0.0.5".parse().unwrap()])];
    /// let strict = GuardedResolver::with_pinned_hosts(SsrfPolicy::Strict, pinned.clone().into());
    /// let wait = std::time::Duration::from_secs(5);
    /// let err = strict.check_url_host("https://hooks.internal/a2a", wait).await.unwrap_err();
    /// assert!(err.contains("resolves to 10.0.0.5, a private address"), "{err}");
    /// let dev = GuardedResolver::with_pinned_hosts(SsrfPolicy::AllowPrivate, pinned.into());
    /// assert!(dev.check_url_host("https://hooks.internal/a2a", wait).await.is_ok());
    /// # });
    /// ```
    pub async fn check_url_host(&self, url: &str, timeout: Duration) -> Result<(), String> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a valid URL: {e}"))?;
        let Some(UrlHost::Name(host)) = url_host(&parsed) else {
            return Ok(());
        };
        let addrs = match tokio::time::timeout(timeout, self.lookup(host)).await {
            Ok(Ok(addrs)) => addrs,
            Ok(Err(e)) => {
                return Err(format!(
                    "{host} does not resolve ({e}): a webhook's host must resolve to a public address"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "{host} did not resolve within {timeout:?}: a webhook's host must resolve to a public address"
                ));
            }
        };
        match filter_addrs(&self.policy, host, addrs) {
            Ok(_) => Ok(()),
            Err(blocked) => Err(format!(
                "{}; to allow it, the agent's operator lists it in the push SSRF policy's allowlist (SsrfPolicy::Allowlist), or allows private networks for development (PushConfig::allow_private_networks)",
                blocked.reason
            )),
        }
    }

    /// `host`'s addresses: pinned, else from the system resolver.
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        if !self.pinned.is_empty()
            && let Some(addrs) = self.pinned.get(&normal_host(host))
        {
            return Ok(addrs.iter().map(|ip| SocketAddr::new(*ip, 0)).collect());
        }
        Ok(tokio::net::lookup_host((host, 0)).await?.collect())
    }
}

fn filter_addrs(
    policy: &SsrfPolicy,
    host: &str,
    addrs: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, BlockedDestination> {
    let total = addrs.len();
    let mut first_refusal = None;
    let allowed: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| match policy.check_addr(Some(host), a.ip()) {
            Ok(()) => true,
            Err(why) => {
                first_refusal.get_or_insert(why);
                false
            }
        })
        .collect();
    if allowed.is_empty() {
        let reason = match first_refusal {
            Some(why) if total > 1 => format!("{why} (all {total} addresses refused)"),
            Some(why) => why,
            None => format!("{host} did not resolve to any address"),
        };
        return Err(BlockedDestination { reason });
    }
    if allowed.len() < total {
        tracing::debug!(
            host,
            kept = allowed.len(),
            total,
            "SSRF guard dropped some resolved addresses"
        );
    }
    Ok(allowed)
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let me = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = me.resolve_checked(&host).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn classes() {
        use AddressClass::*;
        let cases = [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("169.254.1.1", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456::1", Some(UniqueLocal)),
            ("224.0.0.1", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("0.0.0.0", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("255.255.255.255", Some(Broadcast)),
            ("240.0.0.1", Some(Reserved)),
            ("169.254.169.254", Some(CloudMetadata)),
            ("100.100.100.200", Some(CloudMetadata)),
            ("fd00:ec2::254", Some(CloudMetadata)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(CloudMetadata)),
            ("::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a00:1", Some(Private)),
            ("2002:7f00:1::", Some(Loopback)),
            ("8.8.8.8", None),
            ("2606:4700:4700::1111", None),
        ];
        for (addr, want) in cases {
            assert_eq!(classify(ip(addr)), want, "{addr}");
        }
    }

    #[test]
    fn policies() {
        let strict = SsrfPolicy::Strict;
        assert!(strict.check_addr(None, ip("10.0.0.1")).is_err());
        assert!(strict.check_addr(None, ip("8.8.8.8")).is_ok());
        let dev = SsrfPolicy::AllowPrivate;
        assert!(dev.check_addr(None, ip("127.0.0.1")).is_ok());
        assert!(dev.check_addr(None, ip("169.254.169.254")).is_err());
        assert_eq!(
            dev.check_addr(None, ip("0.0.0.0")),
            Err("0.0.0.0 is an unspecified address, which webhooks may not target".into())
        );
        assert_eq!(
            strict.check_addr(Some("hook.example"), ip("10.0.0.1")),
            Err(
                "hook.example resolves to 10.0.0.1, a private address, which webhooks may not target"
                    .into()
            )
        );
        let list = SsrfPolicy::allowlist(["10.0.0.0/8", "*.corp.example", "hooks.local"]).unwrap();
        assert!(list.check_addr(None, ip("10.2.3.4")).is_ok());
        assert!(list.check_addr(None, ip("192.168.0.1")).is_err());
        assert!(
            list.check_addr(Some("a.corp.example"), ip("192.168.0.1"))
                .is_ok()
        );
        assert!(
            list.check_addr(Some("corp.example"), ip("192.168.0.1"))
                .is_err()
        );
        assert!(
            list.check_addr(Some("HOOKS.local."), ip("127.0.0.1"))
                .is_ok()
        );
        assert!(
            list.check_addr(Some("hooks.local"), ip("169.254.169.254"))
                .is_err()
        );
        assert!(SsrfPolicy::allowlist(["10.0.0.0/99"]).is_err());
    }

    #[test]
    fn urls() {
        let strict = SsrfPolicy::Strict;
        for bad in [
            "ftp://example.com/x",
            "file:///etc/passwd",
            "http://127.0.0.1/x",
            "http://[::1]:80/x",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://localhost:9/x",
            "http://api.localhost/x",
            "http://169.254.169.254/latest/meta-data",
            "not a url",
        ] {
            assert!(strict.check_url(bad).is_err(), "{bad}");
        }
        assert!(strict.check_url("https://example.com/hook").is_ok());
        assert!(
            SsrfPolicy::AllowPrivate
                .check_url("http://localhost:9/x")
                .is_ok()
        );
    }

    #[test]
    fn filtering() {
        let addrs = vec![
            "127.0.0.1:0".parse().unwrap(),
            "93.184.215.14:0".parse().unwrap(),
        ];
        let kept = filter_addrs(&SsrfPolicy::Strict, "mixed.example", addrs).unwrap();
        assert_eq!(kept, vec!["93.184.215.14:0".parse::<SocketAddr>().unwrap()]);
        let err = filter_addrs(
            &SsrfPolicy::Strict,
            "evil.example",
            vec!["10.0.0.1:0".parse().unwrap()],
        )
        .unwrap_err();
        assert!(err.reason.contains("private"), "{}", err.reason);
    }
}
