//! The standalone server's bounds on slow, idle and oversized clients (issue #18), over raw
//! TCP on 127.0.0.1: partial headers, idle connections, a half-sent body, a declared body
//! over the limit, and the connection cap.

use std::time::{Duration, Instant};

use a2a_kit::binding::{A2aHttpService, HttpConfig};
use a2a_kit::server::AgentService;
use a2a_kit_axum::ServerLimits;
use a2a_tests::TestAgent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server with short timeouts; its address.
async fn serve(limits: ServerLimits, body_timeout: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let service = AgentService::builder(TestAgent).build().expect("valid");
    let limits = ServerLimits {
        http: HttpConfig::default()
            .body_limit(64 * 1024)
            .body_read_timeout(body_timeout),
        ..limits
    };
    tokio::spawn(a2a_kit_axum::serve_service_with(
        service,
        listener,
        std::future::pending(),
        limits,
    ));
    addr
}

fn short() -> ServerLimits {
    ServerLimits {
        header_read_timeout: Duration::from_millis(800),
        ..Default::default()
    }
}

/// Everything the server sends until it closes the connection (or 10 s pass: a failure),
/// and how long that took.
async fn until_closed(conn: &mut TcpStream, name: &str) -> (String, Duration) {
    let started = Instant::now();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut out)).await;
    // A reset counts as closed too.
    assert!(
        read.is_ok(),
        "{name}: the server left the connection open: {:?}",
        String::from_utf8_lossy(&out)
    );
    (
        String::from_utf8_lossy(&out).into_owned(),
        started.elapsed(),
    )
}

const GET_CARD: &str = "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n";

#[tokio::test]
async fn partial_headers_and_idle_connections_are_closed_after_the_header_timeout() {
    let addr = serve(short(), Duration::from_secs(30)).await;
    // Silent from the start.
    let mut silent = TcpStream::connect(&addr).await.expect("connect");
    // Headers begun, never finished.
    let mut partial = TcpStream::connect(&addr).await.expect("connect");
    partial
        .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: appl")
        .await
        .expect("write");
    // The start of the h2c preface, never finished.
    let mut preface = TcpStream::connect(&addr).await.expect("connect");
    preface.write_all(b"PRI * HTTP/2").await.expect("write");
    // One request answered, then idle.
    let mut idle = TcpStream::connect(&addr).await.expect("connect");
    idle.write_all(GET_CARD.as_bytes()).await.expect("write");
    for (name, conn) in [
        ("silent", &mut silent),
        ("partial headers", &mut partial),
        ("a partial h2c preface", &mut preface),
        ("idle after a request", &mut idle),
    ] {
        let (got, took) = until_closed(conn, name).await;
        assert!(
            took < Duration::from_secs(5),
            "{name}: closed after {took:?}"
        );
        if name == "idle after a request" {
            assert!(
                got.starts_with("HTTP/1.1 200"),
                "{name}: served first: {got}"
            );
        }
    }
}

#[tokio::test]
async fn a_half_sent_body_gets_408_within_the_body_timeout() {
    let addr = serve(ServerLimits::default(), Duration::from_millis(700)).await;
    let mut conn = TcpStream::connect(&addr).await.expect("connect");
    conn.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .expect("write");
    let (got, took) = until_closed(&mut conn, "").await;
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("did not arrive within"), "{got}");
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused_at_once_unread() {
    let addr = serve(ServerLimits::default(), Duration::from_secs(30)).await;
    for (path, code) in [("/", "-32600"), ("/message:send", "413")] {
        let mut conn = TcpStream::connect(&addr).await.expect("connect");
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 67108864\r\n\r\n"
        );
        conn.write_all(head.as_bytes()).await.expect("write");
        conn.write_all(&[b' '; 4096]).await.expect("write");
        // Well before the 30 s body timeout: refused from the header alone.
        let (got, took) = until_closed(&mut conn, "").await;
        assert!(got.starts_with("HTTP/1.1 413"), "{path}: {got}");
        assert!(got.contains(&format!("\"code\":{code}")), "{path}: {got}");
        assert!(
            got.to_ascii_lowercase().contains("connection: close"),
            "{path}: {got}"
        );
        assert!(
            took < Duration::from_secs(5),
            "{path}: answered after {took:?}"
        );
    }
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    let limits = ServerLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let addr = serve(limits, Duration::from_secs(30)).await;
    let first = TcpStream::connect(&addr).await.expect("connect");
    let _second = TcpStream::connect(&addr).await.expect("connect");
    // Give the server the moment it takes to accept both.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The third is queued by the kernel, not served.
    let mut third = TcpStream::connect(&addr).await.expect("connect");
    third.write_all(GET_CARD.as_bytes()).await.expect("write");
    let mut buf = [0u8; 64];
    let early = tokio::time::timeout(Duration::from_millis(500), third.read(&mut buf)).await;
    assert!(early.is_err(), "a connection over the cap was served");
    drop(first);
    let n = tokio::time::timeout(Duration::from_secs(5), third.read(&mut buf))
        .await
        .expect("served once a slot is free")
        .expect("read");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
}

/// The error of a server started with `limits` that it refuses (an invalid-input one).
async fn refused_at_start(limits: ServerLimits) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let service = AgentService::builder(TestAgent).build().expect("valid");
    let err = a2a_kit_axum::serve_service_with(service, listener, std::future::pending(), limits)
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    err.to_string()
}

#[tokio::test]
async fn nonsensical_limits_are_refused_with_a_clear_error() {
    let err = refused_at_start(ServerLimits {
        max_connections: 0,
        ..Default::default()
    })
    .await;
    assert!(err.contains("max_connections"), "{err}");
    let err = refused_at_start(ServerLimits {
        max_connections: usize::MAX,
        ..Default::default()
    })
    .await;
    assert!(err.contains("max_connections"), "{err}");
    let err = refused_at_start(ServerLimits {
        http: HttpConfig::default().body_read_timeout(Duration::ZERO),
        ..Default::default()
    })
    .await;
    assert!(err.contains("body_read_timeout"), "{err}");
    let zero = A2aHttpService::with_config(
        AgentService::builder(TestAgent).build().expect("valid"),
        HttpConfig::default().body_read_timeout(Duration::ZERO),
    )
    .expect_err("refused when made");
    assert!(zero.to_string().contains("body_read_timeout"), "{zero}");
}

/// HTTP/2 with prior knowledge (h2c) is served too.
#[tokio::test]
async fn h2c_is_served() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let addr = serve(ServerLimits::default(), Duration::from_secs(30)).await;
    let tcp = TcpStream::connect(&addr).await.expect("connect");
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    let request = http::Request::get(format!("http://{addr}/.well-known/agent-card.json"))
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .expect("request");
    let resp = send.send_request(request).await.expect("h2c request");
    assert_eq!(resp.version(), http::Version::HTTP_2);
    assert_eq!(resp.status(), 200);
}

/// Headers trickled a byte at a time (slowloris) are cut off at the header timeout, however
/// steady the trickle.
#[tokio::test]
async fn trickled_headers_are_closed_at_the_header_timeout() {
    let addr = serve(short(), Duration::from_secs(30)).await;
    let mut conn = TcpStream::connect(&addr).await.expect("connect");
    let started = Instant::now();
    let head =
        b"POST / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    for byte in head {
        if conn.write_all(&[*byte]).await.is_err() {
            break; // closed under us: what should happen
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, _) = until_closed(&mut conn, "trickled headers").await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "closed after {took:?}"
    );
}

/// An idle HTTP/2 connection is closed like an idle HTTP/1.1 one; one with a request under
/// way (a slow skill, no bytes moving) is not.
#[tokio::test]
async fn idle_h2c_connections_are_closed_busy_ones_are_not() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let addr = serve(short(), Duration::from_secs(30)).await;
    let tcp = TcpStream::connect(&addr).await.expect("connect");
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    let conn = tokio::spawn(conn);
    // A request that takes three header timeouts to answer.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"2400"}],"metadata":{"skillId":"slow"}}}}"#;
    let request = http::Request::post(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .expect("request");
    let resp = send.send_request(request).await.expect("answered");
    assert_eq!(resp.status(), 200);
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(5), conn)
        .await
        .expect("the idle connection closes");
    let took = started.elapsed();
    let _ = closed;
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(3),
        "closed after {took:?}"
    );
}

/// Over the per-address rate a request gets 429 with `Retry-After` before the agent reads it;
/// another address has its own allowance.
#[tokio::test]
async fn requests_over_the_per_address_rate_get_429() {
    let limits = ServerLimits {
        rate_limit_per_ip: Some(a2a_kit_axum::RateLimit {
            per_second: 1,
            burst: 3,
        }),
        ..Default::default()
    };
    let addr = serve(limits, Duration::from_secs(30)).await;
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .expect("client")
    };
    let card = format!("http://{addr}/.well-known/agent-card.json");
    let one = from([127, 0, 0, 1]);
    let mut statuses = Vec::new();
    let mut refused = None;
    for _ in 0..4 {
        let started = Instant::now();
        let resp = one.get(&card).send().await.expect("answered");
        statuses.push(resp.status().as_u16());
        if resp.status() == 429 {
            refused = Some((resp, started.elapsed()));
        }
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
    let (refused, took) = refused.expect("a refusal");
    // The refusal comes once the wait is over: a client asking again when answered is paced.
    assert!(took >= Duration::from_millis(500), "refused after {took:?}");
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: serde_json::Value = refused.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], 429, "{body}");
    // Another address (127.0.0.2 is loopback too) is not held back by the first one.
    let other = from([127, 0, 0, 2]);
    let resp = other.get(&card).send().await.expect("answered");
    assert_eq!(resp.status(), 200);
    // A zero rate is refused when the server starts.
    let err = refused_at_start(ServerLimits {
        rate_limit_per_ip: Some(a2a_kit_axum::RateLimit {
            per_second: 0,
            burst: 1,
        }),
        ..Default::default()
    })
    .await;
    assert!(err.contains("rate_limit_per_ip"), "{err}");
}

/// Shutting down: a request in flight is answered (and its keep-alive connection then
/// closed), an idle connection is closed, and the server returns.
#[tokio::test]
async fn shutdown_answers_requests_in_flight_then_closes_connections() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let service = AgentService::builder(TestAgent).build().expect("valid");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(a2a_kit_axum::serve_service_with(
        service,
        listener,
        async move {
            let _ = stopped.await;
        },
        ServerLimits::default(),
    ));
    let mut idle = TcpStream::connect(&addr).await.expect("connect");
    idle.write_all(GET_CARD.as_bytes()).await.expect("write");
    let mut busy = TcpStream::connect(&addr).await.expect("connect");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"600"}],"metadata":{"skillId":"slow"}}}}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    busy.write_all(request.as_bytes()).await.expect("write");
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).expect("the server waits");
    let (answered, _) = until_closed(&mut busy, "busy").await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(answered.contains("TASK_STATE_COMPLETED"), "{answered}");
    let (served, took) = until_closed(&mut idle, "idle").await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
    assert!(took < Duration::from_secs(3), "closed after {took:?}");
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server returns")
        .expect("no panic")
        .expect("no error");
}

/// A TCP connection to `addr` from the loopback address `from` (127.0.0.0/8 is all ours).
async fn connect_from(from: [u8; 4], addr: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::from((from, 0)))
        .expect("bind a loopback address");
    socket
        .connect(addr.parse().expect("addr"))
        .await
        .expect("connect")
}

/// Issue #29: one client re-opening idle sockets kept the global cap full and the others out.
/// Now it holds at most its share; a connection over it is closed at once, and another client
/// is served at once.
#[tokio::test]
async fn one_address_holds_at_most_its_share_of_the_connections() {
    let limits = ServerLimits {
        max_connections: 6,
        max_connections_per_ip: 3,
        header_read_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let addr = serve(limits, Duration::from_secs(30)).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from([127, 0, 0, 2], &addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = connect_from([127, 0, 0, 2], &addr).await;
    let _ = over.write_all(GET_CARD.as_bytes()).await;
    let (answer, took) = until_closed(&mut over, "over the share").await;
    assert!(answer.is_empty(), "served over its share: {answer}");
    assert!(
        took < Duration::from_secs(5),
        "closed at once, not after {took:?}"
    );
    // Another client is served while the first holds its share.
    let mut other = connect_from([127, 0, 0, 3], &addr).await;
    other.write_all(GET_CARD.as_bytes()).await.expect("write");
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), other.read(&mut buf))
        .await
        .expect("served at once")
        .expect("read");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // A connection closed gives its address's slot back.
    held.pop();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect_from([127, 0, 0, 2], &addr).await;
    again.write_all(GET_CARD.as_bytes()).await.expect("write");
    let n = tokio::time::timeout(Duration::from_secs(5), again.read(&mut buf))
        .await
        .expect("served once a slot of its own is free")
        .expect("read");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let err = refused_at_start(ServerLimits {
        max_connections_per_ip: 0,
        ..Default::default()
    })
    .await;
    assert!(err.contains("max_connections_per_ip"), "{err}");
}
