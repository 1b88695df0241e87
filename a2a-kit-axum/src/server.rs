//! The standalone server's connections: what a reverse proxy would otherwise have to bound.
//!
//! `axum::serve` accepts every connection and never times one out; on the internet that lets
//! one client hold sockets forever (idle connections, headers sent a byte a minute). This
//! accept loop serves HTTP/1.1 and h2c (HTTP/2 with prior knowledge) through hyper-util's
//! `auto` connection builder and graceful shutdown, with the bounds in [`ServerLimits`]; each
//! request's own bounds (the body's size and time) are the edge's
//! ([`HttpConfig`](a2a_kit::binding::HttpConfig)), so they hold when the agent is mounted too.
//!
//! Three pieces are our own, each where the libraries do not do what the README promises:
//! - **The header and idle timeout** is one watchdog per connection: hyper's
//!   `header_read_timeout` covers HTTP/1.1 heads only, and HTTP/2 has no idle timeout at all
//!   (tests/http_server_limits.rs, `idle_h2c_connections_are_closed_busy_ones_are_not`); hyper's
//!   also arms a timer per request (about 3% of a unary request's instructions). The
//!   watchdog wakes four times per timeout and closes a connection that had no request under
//!   way and began none for a whole timeout (silent, idle, or still sending its first headers).
//! - **The first bytes** (HTTP/1.1 or h2c?) are read under that watchdog: hyper-util's
//!   `auto` reads them with no deadline (`trickled_headers_are_closed_at_the_header_timeout`).
//! - **The connection cap** is a semaphore around `accept`: tower's concurrency limit counts
//!   requests, not connections (`connections_over_the_cap_wait_until_one_closes`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;

/// Connection limits of the standalone server ([`serve_service_with`](crate::serve_service_with)).
/// The defaults are meant to be safe on the internet with nothing in front.
///
/// ```
/// use std::time::Duration;
/// let limits = a2a_kit_axum::ServerLimits {
///     max_connections: 512,
///     header_read_timeout: Duration::from_secs(5),
///     ..Default::default()
/// };
/// assert_eq!(limits.http2_max_concurrent_streams, 128);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLimits {
    /// Connections served at once (default 4,096). At the cap the server stops accepting
    /// (new connections wait in the listen backlog) until one closes.
    pub max_connections: usize,
    /// Connections one client address holds at once (default 256, a sixteenth of
    /// `max_connections`'s default; an IPv6 client is its /64). Beyond it a new connection
    /// from that address is closed as soon as it is accepted, so one client re-opening idle
    /// sockets cannot keep the others out. Behind a proxy every connection comes from the
    /// proxy: raise it to `max_connections` there.
    pub max_connections_per_ip: usize,
    /// How long a client gets to send a request's headers (default 10 s). The clock starts
    /// when the connection opens and again whenever it has no request under way, so it is
    /// also the idle keep-alive timeout: a silent, slow or idle connection (HTTP/1.1 or
    /// HTTP/2) is closed after this and at most a quarter of it more.
    pub header_read_timeout: Duration,
    /// The largest request head, HTTP/1.1 (request line and headers; default 64 KiB, at
    /// least 8 KiB), and HTTP/2's header list limit.
    pub max_header_bytes: usize,
    /// Requests in flight on one HTTP/2 connection (default 128).
    pub http2_max_concurrent_streams: u32,
    /// How often an HTTP/2 connection is pinged (default 30 s); a peer that does not answer
    /// within the same time is dropped.
    pub http2_keep_alive_interval: Duration,
    /// Requests one client address may send (default: no limit). Over it a request is
    /// answered 429 with `Retry-After` before the agent reads it, once that wait is over (at
    /// most a second): a client flooding over one connection is slowed to the rate. An IPv6 client is its /64.
    /// Behind a proxy every request comes from the proxy's address: limit there instead.
    pub rate_limit_per_ip: Option<RateLimit>,
    /// How each request is treated once its headers are in: the body's size and time, and
    /// whether a proxy's `Forwarded` headers may name the agent in its card.
    pub http: a2a_kit::binding::HttpConfig,
}

/// A rate: `per_second` requests a second on average, up to `burst` at once.
///
/// ```
/// let limits = a2a_kit_axum::ServerLimits {
///     rate_limit_per_ip: Some(a2a_kit_axum::RateLimit { per_second: 50, burst: 100 }),
///     ..Default::default()
/// };
/// # let _ = limits;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests a second, on average (at least 1).
    pub per_second: u32,
    /// Requests at once before the average applies (at least 1).
    pub burst: u32,
}

impl RateLimit {
    /// `n` requests a second, in bursts of up to `2n` (what `--rate-limit N` means in the
    /// examples).
    ///
    /// ```
    /// assert_eq!(a2a_kit_axum::RateLimit::per_second(50).burst, 100);
    /// ```
    pub fn per_second(n: u32) -> Self {
        RateLimit {
            per_second: n,
            burst: n.saturating_mul(2),
        }
    }
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: 4096,
            max_connections_per_ip: 256,
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 64 * 1024,
            http2_max_concurrent_streams: 128,
            http2_keep_alive_interval: Duration::from_secs(30),
            rate_limit_per_ip: None,
            http: a2a_kit::binding::HttpConfig::default(),
        }
    }
}

impl ServerLimits {
    /// What is wrong with these limits, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.max_connections == 0 || self.max_connections > u32::MAX as usize {
            return Err(format!(
                "max_connections must be between 1 and {}, not {}",
                u32::MAX,
                self.max_connections
            ));
        }
        if self.max_connections_per_ip == 0 {
            return Err("max_connections_per_ip must be at least 1".into());
        }
        if self.header_read_timeout.is_zero() || self.http2_keep_alive_interval.is_zero() {
            return Err(
                "header_read_timeout and http2_keep_alive_interval must be longer than zero".into(),
            );
        }
        if self.max_header_bytes < 8192 {
            return Err(format!(
                "max_header_bytes must be at least 8192 (hyper's minimum), not {}",
                self.max_header_bytes
            ));
        }
        if self.http2_max_concurrent_streams == 0 {
            return Err("http2_max_concurrent_streams must be at least 1".into());
        }
        if let Some(r) = self.rate_limit_per_ip
            && (r.per_second == 0 || r.burst == 0)
        {
            return Err(format!(
                "rate_limit_per_ip needs per_second and burst of at least 1, not {r:?}"
            ));
        }
        Ok(())
    }

    fn builder(&self) -> auto::Builder<TokioExecutor> {
        let mut b = auto::Builder::new(TokioExecutor::new());
        // The header timeout is the connection's watchdog (see the module's doc).
        b.http1()
            .timer(TokioTimer::new())
            .header_read_timeout(None)
            .max_buf_size(self.max_header_bytes);
        b.http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(self.http2_max_concurrent_streams)
            .max_header_list_size(u32::try_from(self.max_header_bytes).unwrap_or(u32::MAX))
            .keep_alive_interval(self.http2_keep_alive_interval)
            .keep_alive_timeout(self.http2_keep_alive_interval);
        b
    }
}

/// Accept and serve connections to `app` within `limits` until `stop` resolves; then stop
/// accepting, let open connections finish their requests in flight while `drain` runs and
/// for two seconds after, and return.
pub(crate) async fn run(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: &ServerLimits,
    stop: impl Future<Output = ()>,
    drain: impl Future<Output = ()>,
) -> std::io::Result<()> {
    limits
        .check()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let builder = Arc::new(limits.builder());
    let limiter = limits.rate_limit_per_ip.map(|r| Arc::new(PerIp::new(r)));
    let sweeper = limiter.clone().map(sweep);
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_ip = Arc::new(PerIpConnections::new(limits.max_connections_per_ip));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.map_err(std::io::Error::other)?,
            () = &mut stop => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: the listener is fine, the moment is not.
                    tracing::warn!(error = %e, "accept failed; retrying in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let client = a2a_kit::request::client_key(peer.ip());
        let Some(held) = per_ip.open(client) else {
            a2a_kit::observe::metrics::refused("connections");
            tracing::debug!(%client, "connection closed: the address holds its share");
            drop((tcp, slot));
            continue;
        };
        let activity = Arc::new(Activity::default());
        let service = TowerToHyperService::new(Watched {
            inner: app.clone(),
            activity: activity.clone(),
            peer: a2a_kit::request::ClientAddr(peer),
            limit: limiter.clone().map(|l| (l, client)),
        });
        let conn = tokio::spawn(serve_connection(
            tcp,
            service,
            builder.clone(),
            graceful.watcher(),
            (slot, held),
        ));
        // A task of its own: the connection's task polls nothing but the connection.
        tokio::spawn(watchdog(
            activity,
            limits.header_read_timeout,
            conn.abort_handle(),
        ));
    }
    drop(listener);
    if let Some(sweeper) = sweeper {
        sweeper.abort();
    }
    // Connections are told to close once their requests in flight are answered, while
    // `drain` lets the agent's tasks end; then a moment for the last responses and streams
    // (every connection gives its slot back when it closes).
    let told = tokio::spawn(graceful.shutdown());
    drain.await;
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(2), slots.acquire_many(all)).await;
    told.abort();
    Ok(())
}

/// The limiter keeps a bucket per address it saw: forget those full again now and then.
fn sweep(limiter: Arc<PerIp>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(60));
        loop {
            every.tick().await;
            limiter.limiter.retain_recent();
            limiter.limiter.shrink_to_fit();
        }
    })
}

thread_local! {
    /// The client's address of the request being polled on this thread, if this server's.
    static POLLED_FOR: std::cell::Cell<Option<std::net::SocketAddr>> =
        const { std::cell::Cell::new(None) };
}

/// The client's address of the request this server is polling on this thread: set around
/// each poll of the request's future (the agent admits a new task inside one), so no
/// `ClientAddr` is inserted in every request's extensions (about 150 instructions, 300 more
/// on a request whose map it grows). HTTP/2 streams, polled in tasks of their own, are
/// covered the same way.
pub(crate) fn polled_for() -> Option<std::net::SocketAddr> {
    POLLED_FOR.with(std::cell::Cell::get)
}

/// Sets [`POLLED_FOR`] for one poll, and puts back what was there.
struct PollingFor(Option<std::net::SocketAddr>);

impl PollingFor {
    fn enter(peer: std::net::SocketAddr) -> Self {
        PollingFor(POLLED_FOR.with(|p| p.replace(Some(peer))))
    }
}

impl Drop for PollingFor {
    fn drop(&mut self) {
        POLLED_FOR.with(|p| p.set(self.0));
    }
}

/// Each address's open connections, for [`ServerLimits::max_connections_per_ip`].
struct PerIpConnections {
    max: usize,
    open: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>,
}

impl PerIpConnections {
    fn new(max: usize) -> Self {
        PerIpConnections {
            max,
            open: Default::default(),
        }
    }

    /// One more connection of `client`, held until the guard drops; `None` at its share.
    fn open(self: &Arc<Self>, client: std::net::IpAddr) -> Option<HeldConnection> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(client).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(HeldConnection {
            table: self.clone(),
            client,
        })
    }
}

/// An open connection of a client address.
struct HeldConnection {
    table: Arc<PerIpConnections>,
    client: std::net::IpAddr,
}

impl Drop for HeldConnection {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// Serve one accepted connection until it closes (or its server shuts down), holding its
/// slots of the connection caps until then.
async fn serve_connection(
    tcp: tokio::net::TcpStream,
    service: TowerToHyperService<Watched<Router>>,
    builder: Arc<auto::Builder<TokioExecutor>>,
    watcher: hyper_util::server::graceful::Watcher,
    slot: (tokio::sync::OwnedSemaphorePermit, HeldConnection),
) {
    let _slot = slot;
    // Streams write many small frames: without TCP_NODELAY, Nagle's algorithm stalls them.
    let _ = tcp.set_nodelay(true);
    // hyper-util reads the first bytes to tell HTTP/1.1 from h2c with no deadline of its own:
    // they are read here, under the watchdog, and handed back to it.
    let Ok(Some(io)) = Sniffed::read(tcp).await else {
        return;
    };
    let conn = builder
        .serve_connection_with_upgrades(TokioIo::new(io), service)
        .into_owned();
    // A connection ends in an error when a limit closes it: expected.
    if let Err(e) = watcher.watch(conn).await {
        tracing::debug!(error = %e, "connection closed");
    }
}

/// What a connection's watchdog sees: requests begun, and requests whose response is not done.
#[derive(Default)]
struct Activity {
    begun: AtomicU64,
    open: AtomicUsize,
}

/// Close the connection (abort its task) once it has had no request under way, and begun
/// none, for `limit` (checked every quarter of it); end with the connection.
async fn watchdog(activity: Arc<Activity>, limit: Duration, conn: tokio::task::AbortHandle) {
    let tick = limit / 4;
    let mut seen = activity.begun.load(Ordering::Relaxed);
    let mut quiet = Duration::ZERO;
    loop {
        tokio::time::sleep(tick).await;
        if conn.is_finished() {
            return;
        }
        let begun = activity.begun.load(Ordering::Relaxed);
        if begun != seen || activity.open.load(Ordering::Relaxed) > 0 {
            seen = begun;
            quiet = Duration::ZERO;
            continue;
        }
        quiet += tick;
        if quiet >= limit {
            tracing::debug!(
                ?limit,
                "connection closed: no request within the header timeout"
            );
            conn.abort();
            return;
        }
    }
}

/// The app, counting the connection's requests for its watchdog, telling each request its
/// client's address and, with a rate limit, refusing those over it.
#[derive(Clone)]
struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
    peer: a2a_kit::request::ClientAddr,
    limit: Option<(Arc<PerIp>, std::net::IpAddr)>,
}

/// The per-address limiter (`governor`'s keyed GCRA).
struct PerIp {
    limiter: governor::DefaultKeyedRateLimiter<std::net::IpAddr>,
}

impl PerIp {
    fn new(rate: RateLimit) -> Self {
        let nonzero = |n: u32| std::num::NonZeroU32::new(n).unwrap_or(std::num::NonZeroU32::MIN);
        let quota =
            governor::Quota::per_second(nonzero(rate.per_second)).allow_burst(nonzero(rate.burst));
        PerIp {
            limiter: governor::RateLimiter::keyed(quota),
        }
    }

    /// `None` if `ip` may send a request now, else how long until it may.
    fn wait(&self, ip: &std::net::IpAddr) -> Option<Duration> {
        use governor::clock::Clock;
        self.limiter.check_key(ip).err().map(|not_until| {
            not_until.wait_time_from(governor::clock::DefaultClock::default().now())
        })
    }
}

/// 429 with `Retry-After`, as the agent's own edge refusals (a JSON-RPC client shows it as an
/// HTTP error; a gRPC call gets `RESOURCE_EXHAUSTED`).
fn too_many_requests(
    request: &http::HeaderMap,
    wait: Duration,
) -> http::Response<axum::body::Body> {
    a2a_kit::observe::metrics::refused("rate_limit");
    tracing::info!(
        refused = "rate_limit",
        retry_after_s = wait.as_secs(),
        "refused a request: over the address's rate limit"
    );
    a2a_kit::binding::edge_refusal_for(
        request,
        http::StatusCode::TOO_MANY_REQUESTS,
        "RESOURCE_EXHAUSTED",
        "too many requests from this address",
        Some(wait),
    )
    .map(axum::body::Body::new)
}

/// A request under way: from its head until its response body is done or dropped.
struct UnderWay(Arc<Activity>);

impl UnderWay {
    fn begin(activity: &Arc<Activity>) -> Self {
        activity.begun.fetch_add(1, Ordering::Relaxed);
        activity.open.fetch_add(1, Ordering::Relaxed);
        UnderWay(activity.clone())
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<S, B> tower::Service<http::Request<B>> for Watched<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<axum::body::Body>>,
{
    type Response = http::Response<Counted<axum::body::Body>>;
    type Error = S::Error;
    type Future = WatchedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let under_way = Some(UnderWay::begin(&self.activity));
        if let Some(wait) = self.limit.as_ref().and_then(|(l, ip)| l.wait(ip)) {
            // The refusal itself comes after the wait (at most a second): a client that sends
            // its next request when answered is paced to the rate, not answered 429 as fast
            // as it can ask.
            return WatchedFuture {
                inner: None,
                refused: Some((
                    Box::pin(tokio::time::sleep(wait.min(Duration::from_secs(1)))),
                    too_many_requests(req.headers(), wait),
                )),
                under_way,
                peer: self.peer.0,
            };
        }
        WatchedFuture {
            inner: Some(self.inner.call(req)),
            refused: None,
            under_way,
            peer: self.peer.0,
        }
    }
}

pin_project_lite::pin_project! {
    /// The app's response future (or the refusal), holding the request's [`UnderWay`] for
    /// its body.
    struct WatchedFuture<F> {
        #[pin]
        inner: Option<F>,
        refused: Option<(Pin<Box<tokio::time::Sleep>>, http::Response<axum::body::Body>)>,
        under_way: Option<UnderWay>,
        peer: std::net::SocketAddr,
    }
}

impl<F, E> Future for WatchedFuture<F>
where
    F: Future<Output = Result<http::Response<axum::body::Body>, E>>,
{
    type Output = Result<http::Response<Counted<axum::body::Body>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some((delay, _)) = this.refused.as_mut() {
            std::task::ready!(delay.as_mut().poll(cx));
        }
        let resp = match (this.refused.take(), this.inner.as_pin_mut()) {
            (Some((_, refused)), _) => refused,
            (None, Some(inner)) => {
                let _peer = PollingFor::enter(*this.peer);
                std::task::ready!(inner.poll(cx))?
            }
            (None, None) => panic!("WatchedFuture polled after it completed"),
        };
        let under_way = this.under_way.take();
        Poll::Ready(Ok(resp.map(|body| Counted {
            body,
            _under_way: under_way,
        })))
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request under way until it is done or dropped.
    struct Counted<B> {
        #[pin]
        body: B,
        _under_way: Option<UnderWay>,
    }
}

impl<B: http_body::Body> http_body::Body for Counted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The HTTP/2 connection preface, which an h2c client sends first.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A connection whose first bytes were read to tell its protocol: they are read again first.
struct Sniffed {
    read: Vec<u8>,
    at: usize,
    tcp: tokio::net::TcpStream,
}

impl Sniffed {
    /// Read until the bytes are the whole h2c preface or cannot be; `None` if the client
    /// closed first.
    async fn read(mut tcp: tokio::net::TcpStream) -> std::io::Result<Option<Sniffed>> {
        use tokio::io::AsyncReadExt;
        let mut read = Vec::with_capacity(1024);
        loop {
            if tcp.read_buf(&mut read).await? == 0 {
                return Ok(None);
            }
            if read.len() >= H2_PREFACE.len() || !H2_PREFACE.starts_with(&read) {
                return Ok(Some(Sniffed { read, at: 0, tcp }));
            }
        }
    }
}

impl tokio::io::AsyncRead for Sniffed {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at < this.read.len() {
            let n = buf.remaining().min(this.read.len() - this.at);
            buf.put_slice(&this.read[this.at..this.at + n]);
            this.at += n;
            if this.at == this.read.len() {
                this.read = Vec::new();
                this.at = 0;
            }
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut this.tcp).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Sniffed {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.tcp).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
