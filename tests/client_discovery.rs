//! Card discovery and caching, interface choice, service parameters, auth, tenants, and the
//! typed errors for hosts that are unreachable or are not (usable) A2A agents.

#[path = "support_proxy.rs"]
mod proxy;

use std::time::Duration;

use a2a_kit::client::{A2aClient, ApiKeyAuth, Binding, CardCache, ClientError, SendRequest};
use a2a_kit::protocol::AgentInterface;
use a2a_kit::server::AgentService;
use a2a_tests::{TestAgent, serve, serve_test_agent};
use axum::Router;
use axum::routing::{get, post};
use proxy::{BINDINGS, Proxy};
use serde_json::{Value, json};

async fn serve_router(app: Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (base, task)
}

async fn serve_card(card: Value) -> (String, tokio::task::JoinHandle<()>) {
    serve_router(Router::new().route(
        "/.well-known/agent-card.json",
        get(move || async move { axum::Json(card) }),
    ))
    .await
}

#[tokio::test]
async fn card_is_cached_and_revalidated_with_etag() {
    let s = serve_test_agent().await;
    let p = Proxy::start(&s.base).await;
    let cache = CardCache::new();
    let c = A2aClient::builder()
        .card_cache(cache.clone())
        .connect(&p.base)
        .await
        .unwrap();
    assert_eq!(
        c.endpoint().as_str().trim_end_matches('/'),
        p.base,
        "the card served through the proxy points at it"
    );
    // Within max-age: no request, for this client or another sharing the cache.
    c.fresh_card().await.unwrap();
    let other = A2aClient::builder()
        .card_cache(cache.clone())
        .connect(&p.base)
        .await
        .unwrap();
    assert_eq!(other.card().name, "Test Agent");
    let cards: Vec<_> = p
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/.well-known"))
        .collect();
    assert_eq!(cards.len(), 1, "{cards:?}");
    // A forced refresh revalidates with the ETag and gets 304 Not Modified.
    let before = c.card();
    let after = c.refresh_card().await.unwrap();
    assert_eq!(before, after);
    let last = p
        .requests()
        .into_iter()
        .rfind(|r| r.path.starts_with("/.well-known"))
        .unwrap();
    assert!(
        last.header("if-none-match")
            .is_some_and(|v| v.starts_with('"')),
        "{last:?}"
    );
    assert_eq!(last.status, 304);
}

#[tokio::test]
async fn every_request_carries_the_version_and_credentials() {
    let s = serve_test_agent().await;
    let p = Proxy::start(&s.base).await;
    for b in BINDINGS {
        p.clear();
        let c = A2aClient::builder()
            .binding(b)
            .bearer_token("s3cret")
            .unwrap()
            .interceptor(ApiKeyAuth::header("X-API-Key", "k1"))
            .header("X-Custom", "yes")
            .unwrap()
            .extensions(["https://example.com/ext/v1"])
            .connect(&p.base)
            .await
            .unwrap();
        c.send(SendRequest::text("x").skill("echo")).await.unwrap();
        let _ = c.get_task("nope").await;
        let reqs = p.requests();
        assert!(reqs.len() >= 3, "{reqs:?}");
        for r in &reqs {
            assert_eq!(
                r.header("a2a-version").as_deref(),
                Some("1.0"),
                "{b} {} {}",
                r.method,
                r.path
            );
            assert_eq!(r.header("authorization").as_deref(), Some("Bearer s3cret"));
            assert_eq!(r.header("x-api-key").as_deref(), Some("k1"));
            assert_eq!(r.header("x-custom").as_deref(), Some("yes"));
            assert_eq!(
                r.header("a2a-extensions").as_deref(),
                Some("https://example.com/ext/v1")
            );
        }
        let send = reqs.iter().find(|r| r.method == "POST").unwrap();
        match b {
            Binding::JsonRpc => assert_eq!(send.rpc_method().as_deref(), Some("SendMessage")),
            Binding::HttpJson => assert_eq!(send.path, "/message:send"),
            Binding::Grpc => unreachable!("the proxy carries HTTP/1.1 only"),
        }
    }
}

#[tokio::test]
async fn api_key_location_comes_from_the_card() {
    let card = a2a_kit::protocol::AgentCard {
        security_schemes: [(
            "key".to_string(),
            a2a_kit::protocol::SecurityScheme::ApiKeySecurityScheme(
                a2a_kit::protocol::ApiKeySecurityScheme {
                    description: None,
                    location: "query".into(),
                    name: "api_key".into(),
                },
            ),
        )]
        .into(),
        ..Default::default()
    };
    let auth = ApiKeyAuth::from_card(&card, "k").unwrap();
    let mut req =
        reqwest::Request::new(reqwest::Method::GET, "http://h/tasks?x=1".parse().unwrap());
    let call = a2a_kit::client::CallInfo {
        operation: "GetTask",
        card: None,
    };
    a2a_kit::client::Interceptor::intercept(&auth, &call, &mut req)
        .await
        .unwrap();
    assert_eq!(req.url().as_str(), "http://h/tasks?x=1&api_key=k");
}

#[tokio::test]
async fn tenant_is_echoed_from_the_interface() {
    let s = serve(AgentService::builder(TestAgent).card(|c| {
        for i in &mut c.supported_interfaces {
            i.tenant = Some("acme".into());
        }
    }))
    .await;
    let p = Proxy::start(&s.base).await;
    for b in BINDINGS {
        p.clear();
        let c = proxy::client(&p.base, b).await;
        assert_eq!(c.interface().tenant.as_deref(), Some("acme"));
        let t = match c.send(SendRequest::text("x").skill("echo")).await.unwrap() {
            a2a_kit::protocol::SendMessageResponse::Task(t) => t,
            other => panic!("{other:?}"),
        };
        c.get_task(&t.id).await.unwrap();
        let reqs: Vec<_> = p
            .requests()
            .into_iter()
            .filter(|r| !r.path.starts_with("/.well-known"))
            .collect();
        assert_eq!(reqs.len(), 2);
        for r in reqs {
            match b {
                Binding::JsonRpc => {
                    let body: Value = serde_json::from_str(&r.body).unwrap();
                    assert_eq!(body["params"]["tenant"], "acme", "{}", r.body);
                }
                Binding::HttpJson => {
                    assert!(r.path.starts_with("/acme/"), "{}", r.path);
                    assert!(
                        !r.body.contains("tenant"),
                        "REST carries the tenant in the path only: {}",
                        r.body
                    );
                }
                Binding::Grpc => unreachable!("the proxy carries HTTP/1.1 only"),
            }
        }
    }
}

#[tokio::test]
async fn unreachable_host() {
    // Bind and drop, so nothing listens on the port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = A2aClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Unreachable { .. }), "{e:?}");
    assert!(e.is_transient());
    let e = A2aClient::connect("not a url").await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidUrl(_)), "{e:?}");
}

#[tokio::test]
async fn not_an_agent() {
    let (base, _t) = serve_router(Router::new().route("/", get(|| async { "hello" }))).await;
    let e = A2aClient::connect(&base).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::NotAnAgent { reason, .. } if reason.contains("404")),
        "{e:?}"
    );

    let (base, _t) = serve_router(Router::new().route(
        "/.well-known/agent-card.json",
        get(|| async { ([("content-type", "text/html")], "<html>nope</html>") }),
    ))
    .await;
    let e = A2aClient::connect(&base).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::NotAnAgent { reason, .. } if reason.contains("text/html")),
        "{e:?}"
    );

    let (base, _t) = serve_card(json!({"hello": "world"})).await;
    assert!(matches!(
        A2aClient::connect(&base).await.unwrap_err(),
        ClientError::NotAnAgent { .. }
    ));

    // An agent mounted below a path: the card is found at the host root too.
    let s = serve_test_agent().await;
    let c = A2aClient::connect(format!("{}/agents/x", s.base))
        .await
        .unwrap();
    assert_eq!(c.card().name, "Test Agent");
}

#[tokio::test]
async fn unsupported_versions_and_bindings() {
    // A v0.2 card (a v0.3 one is spoken: client_v03.rs).
    let (base, _t) = serve_card(json!({"name": "Old", "description": "", "url": "http://127.0.0.1:1", "protocolVersion": "0.2.5",
        "preferredTransport": "JSONRPC", "version": "1", "capabilities": {}, "skills": [],
        "defaultInputModes": [], "defaultOutputModes": []}))
    .await;
    let e = A2aClient::connect(&base).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::UnsupportedVersion { offered } if offered == &["JSONRPC 0.2.5"]),
        "{e:?}"
    );
    // A v1 card listing only interfaces of a version this client does not speak.
    let (base, _t) = serve_card(json!({"name": "Mixed", "supportedInterfaces": [
        {"url": "http://127.0.0.1:1", "protocolBinding": "JSONRPC", "protocolVersion": "2.0"}]}))
    .await;
    assert!(matches!(
        A2aClient::connect(&base).await.unwrap_err(),
        ClientError::UnsupportedVersion { .. }
    ));
    // gRPC only: spoken (feature `grpc`), unless over TLS, which this client does not dial.
    let (base, _t) = serve_card(json!({"name": "G", "supportedInterfaces": [
        {"url": "127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}))
    .await;
    let c = A2aClient::connect(&base).await.unwrap();
    assert_eq!(c.binding(), Binding::Grpc);
    assert_eq!(c.endpoint().as_str(), "http://127.0.0.1:1/");
    let (base, _t) = serve_card(json!({"name": "G", "supportedInterfaces": [
        {"url": "https://127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}))
    .await;
    assert!(matches!(
        A2aClient::connect(&base).await.unwrap_err(),
        ClientError::NoSupportedInterface { .. }
    ));
    // Forcing a binding the agent does not offer.
    let (base, _t) = serve_card(json!({"name": "R", "supportedInterfaces": [
        {"url": "http://127.0.0.1:1/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}))
    .await;
    let e = A2aClient::builder()
        .binding(Binding::HttpJson)
        .connect(&base)
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClientError::NoSupportedInterface { .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn agent_refusing_the_version_is_a_typed_error() {
    let app = Router::new().route(
        "/rpc",
        post(|body: axum::Json<Value>| async move {
            axum::Json(json!({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32009,
                "message": "A2A version '1.0' is not supported by this handler. Expected version '2.0'.",
                "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org"}]}}))
        }),
    );
    let (base, _t) = serve_router(app).await;
    let card = a2a_kit::protocol::AgentCard {
        name: "Future".into(),
        supported_interfaces: vec![AgentInterface::new(format!("{base}/rpc"), "JSONRPC")],
        ..Default::default()
    };
    let c = A2aClient::builder()
        .from_card(card, &format!("{base}/.well-known/agent-card.json"))
        .unwrap();
    let e = c.get_task("t").await.unwrap_err();
    assert_eq!(e.code(), Some(-32009));
    assert_eq!(e.reason(), Some("VERSION_NOT_SUPPORTED"));
    assert!(matches!(
        e.agent_error().unwrap().to_a2a_error(),
        a2a_kit::error::A2aError::VersionNotSupported { .. }
    ));
}

#[tokio::test]
async fn http_errors_without_a2a_bodies() {
    let app = Router::new()
        .route(
            "/rpc",
            post(|| async { (axum::http::StatusCode::UNAUTHORIZED, "login first") }),
        )
        .route(
            "/rest/tasks/{id}",
            get(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy") }),
        );
    let (base, _t) = serve_router(app).await;
    let card = a2a_kit::protocol::AgentCard {
        name: "Locked".into(),
        supported_interfaces: vec![
            AgentInterface::new(format!("{base}/rpc"), "JSONRPC"),
            AgentInterface::new(format!("{base}/rest"), "HTTP+JSON"),
        ],
        ..Default::default()
    };
    let url = format!("{base}/.well-known/agent-card.json");
    let c = A2aClient::builder().from_card(card.clone(), &url).unwrap();
    let e = c.get_task("t").await.unwrap_err();
    assert!(
        matches!(&e, ClientError::Http { status: 401, body, .. } if body == "login first"),
        "{e:?}"
    );
    let c = A2aClient::builder()
        .binding(Binding::HttpJson)
        .timeout(Some(Duration::from_secs(5)))
        .from_card(card, &url)
        .unwrap();
    let e = c.get_task("t").await.unwrap_err();
    assert!(matches!(e, ClientError::Http { status: 503, .. }), "{e:?}");
    assert!(e.is_transient());
}
