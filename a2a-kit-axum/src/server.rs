//! The standalone server's connections: what a reverse proxy would otherwise have to bound.
//!
//! `axum::serve` accepts every connection and never times one out; on the internet that lets
//! one client hold sockets forever (idle connections, headers sent a byte a minute). This
//! accept loop serves HTTP/1.1 and h2c (HTTP/2 with prior knowledge) through hyper-util with
//! the bounds in [`ServerLimits`]; the request body's own bound (size, and time once the
//! headers are in) is the agent service's, so it holds when the agent is mounted too.

use std::sync::Arc;
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
    /// How long a client gets to send a request's headers (default 10 s). The clock starts
    /// when the connection opens and again whenever it waits for its next request, so it is
    /// also the idle keep-alive timeout: a silent or idle HTTP/1.1 connection is closed then.
    pub header_read_timeout: Duration,
    /// The largest request head, HTTP/1.1 (request line and headers; default 64 KiB, at
    /// least 8 KiB), and HTTP/2's header list limit.
    pub max_header_bytes: usize,
    /// Requests in flight on one HTTP/2 connection (default 128).
    pub http2_max_concurrent_streams: u32,
    /// How often an HTTP/2 connection is pinged (default 30 s); a peer that does not answer
    /// within the same time is dropped.
    pub http2_keep_alive_interval: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 64 * 1024,
            http2_max_concurrent_streams: 128,
            http2_keep_alive_interval: Duration::from_secs(30),
        }
    }
}

impl ServerLimits {
    /// What is wrong with these limits, if anything.
    fn check(&self) -> Result<(), String> {
        if self.max_connections == 0 {
            return Err("max_connections must be at least 1".into());
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
        Ok(())
    }

    fn builder(&self) -> auto::Builder<TokioExecutor> {
        let mut b = auto::Builder::new(TokioExecutor::new());
        b.http1()
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout)
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
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let service = TowerToHyperService::new(app);
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.map_err(std::io::Error::other)?,
            () = &mut stop => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors and the like: the listener is fine, the moment is not.
                    tracing::warn!(error = %e, "accept failed; retrying in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // Streams write many small frames: without TCP_NODELAY, Nagle's algorithm stalls them.
        let _ = tcp.set_nodelay(true);
        let (builder, service, watcher) = (builder.clone(), service.clone(), graceful.watcher());
        let first_bytes = limits.header_read_timeout;
        tokio::spawn(async move {
            // hyper-util reads the first bytes to tell HTTP/1.1 from h2c with no deadline:
            // they are read here, within the header timeout, and handed back to it.
            let Ok(Ok(Some(io))) = tokio::time::timeout(first_bytes, Sniffed::read(tcp)).await
            else {
                drop(slot);
                return;
            };
            let conn = builder
                .serve_connection_with_upgrades(TokioIo::new(io), service)
                .into_owned();
            // A connection ends in an error when a timeout or limit closes it: expected.
            if let Err(e) = watcher.watch(conn).await {
                tracing::debug!(error = %e, "connection closed");
            }
            drop(slot);
        });
    }
    drop(listener);
    // Connections are told to close once their requests in flight are answered (spawned, so
    // the signal goes out now), while `drain` lets the agent's tasks end; then a moment for
    // the last responses and streams.
    let closing = tokio::spawn(graceful.shutdown());
    drain.await;
    let _ = tokio::time::timeout(Duration::from_secs(2), closing).await;
    Ok(())
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
