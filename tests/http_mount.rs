//! One service, many hosts: the agent's `A2aHttpService` mounted in plain hyper (no axum)
//! answers both bindings and serves its card exactly as the axum mount does; two agents nest
//! side by side in one axum app, each with its card under its own path; without a public URL
//! a card names the URL the request came in on (proxy headers only when trusted).

use std::convert::Infallible;

use a2a_kit::binding::{A2aHttpService, HttpConfig};
use a2a_kit::server::AgentService;
use a2a_tests::{TestAgent, client, rpc};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use serde_json::json;

/// GET `url`: its status and JSON body.
async fn rest_get(url: &str) -> (u16, serde_json::Value) {
    let resp = client()
        .get(url)
        .header("a2a-version", "1.0")
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// Serve `service` with hyper alone: both bindings and the card from the tower service.
async fn serve_with_hyper(service: AgentService, listener: tokio::net::TcpListener) {
    let http = A2aHttpService::new(service);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let http = http.clone();
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let http = http.clone();
                    async move { Ok::<_, Infallible>(http.handle(req).await) }
                });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), svc)
                .await;
        });
    }
}

#[tokio::test]
async fn plain_hyper_serves_both_bindings_and_the_card() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // No public URL: the card names the address the client used.
    let service = AgentService::builder(TestAgent)
        .build()
        .expect("a valid configuration");
    let server = tokio::spawn(serve_with_hyper(service, listener));

    let card: serde_json::Value = client()
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["supportedInterfaces"][0]["url"], base.as_str());

    let v = rpc(
        &base,
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER",
            "parts": [{"text": "hello"}], "metadata": {"skillId": "echo"}}}),
    )
    .await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    let id = task["id"].as_str().unwrap();

    let (status, got) = rest_get(&format!("{base}/tasks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(got["id"], id);

    // What a POST-only route at `/` answers other verbs, as under axum.
    let resp = client().get(&base).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(resp.headers()["allow"], "POST");
    // With a body that says what is here (issue #30: it was empty).
    let body: serde_json::Value = resp.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("JSON-RPC endpoint")
            && message.contains("/.well-known/agent-card.json below this URL"),
        "{body}"
    );
    server.abort();
}

/// The tower service answers a request built by hand (no server at all).
#[tokio::test]
async fn the_service_is_a_tower_service() {
    use tower::ServiceExt;
    let service = AgentService::builder(TestAgent)
        .build()
        .expect("a valid configuration");
    let req = http::Request::post("/")
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"nope"}}"#,
        )))
        .unwrap();
    let resp = A2aHttpService::new(service).oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], -32001, "{v}");
}

/// GET `url` with extra headers: status, headers and the card's first interface URL.
async fn card_at(url: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = client().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    let body: serde_json::Value = resp.json().await.unwrap_or_default();
    let url = body["supportedInterfaces"][0]["url"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (status, headers, url)
}

/// Two agents nest side by side in one axum app, built without public URLs: each serves its
/// card under its own path, naming that path; the root card names the root.
#[tokio::test]
async fn two_agents_mount_side_by_side_in_axum() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let build = || {
        AgentService::builder(TestAgent)
            .build()
            .expect("a valid configuration")
    };
    let (a, b) = (build(), build());
    let app = axum::Router::new()
        .nest("/agents/a", a2a_kit_axum::router(&a))
        .nest("/agents/b", a2a_kit_axum::router(&b))
        .merge(a2a_kit_axum::well_known_router(&a));
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    for (agent, path) in [(&a, "/agents/a"), (&b, "/agents/b")] {
        for card_path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
            let (status, _, url) = card_at(&format!("{base}{path}{card_path}"), &[]).await;
            assert_eq!(
                (status, url.as_str()),
                (200, format!("{base}{path}").as_str())
            );
        }
        let v = rpc(
            &format!("{base}{path}"),
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "ROLE_USER",
                "parts": [{"text": "hi"}], "metadata": {"skillId": "echo"}}}),
        )
        .await;
        let id = v["result"]["task"]["id"]
            .as_str()
            .expect("a task")
            .to_string();
        // The task lives in that agent's store only.
        assert!(
            agent
                .task_manager()
                .get_task(&id, Default::default())
                .await
                .unwrap()
                .is_some()
        );
        let (status, _) = rest_get(&format!("{base}{path}/tasks/{id}")).await;
        assert_eq!(status, 200);
    }
    let (status, _, url) = card_at(&format!("{base}/.well-known/agent-card.json"), &[]).await;
    assert_eq!((status, url), (200, base.clone()));
    server.abort();
}

/// Proxy headers name the card's URL only when the agent trusts them; the card then varies
/// by them, and each URL has its own `ETag`. A configured public URL beats both.
#[tokio::test]
async fn forwarded_headers_count_only_when_trusted() {
    let proxied: &[(&str, &str)] = &[
        (
            "forwarded",
            "for=192.0.2.1;proto=https;host=\"agents.example.com\", for=10.0.0.1",
        ),
        ("x-forwarded-prefix", "/edge/"),
    ];
    let legacy: &[(&str, &str)] = &[
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "legacy.example.com:8443"),
    ];
    let bogus: &[(&str, &str)] = &[
        ("x-forwarded-proto", "gopher"),
        ("x-forwarded-host", "user@evil.example.com"),
        ("x-forwarded-prefix", "no-slash"),
    ];
    for trust in [false, true] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let agent = AgentService::builder(TestAgent).build().unwrap();
        let config = HttpConfig::default().trust_forwarded_headers(trust);
        let edge = A2aHttpService::with_config(agent, config).unwrap();
        let app = axum::Router::new().nest("/agents/a", a2a_kit_axum::router(&edge));
        let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let card = format!("{base}/agents/a/.well-known/agent-card.json");

        let (_, plain_headers, plain) = card_at(&card, &[]).await;
        assert_eq!(plain, format!("{base}/agents/a"));
        let (_, headers, url) = card_at(&card, proxied).await;
        let (_, _, legacy_url) = card_at(&card, legacy).await;
        let (_, _, bogus_url) = card_at(&card, bogus).await;
        assert_eq!(
            bogus_url, plain,
            "values that are not a scheme, host or path are ignored"
        );
        if trust {
            assert_eq!(url, "https://agents.example.com/edge/agents/a");
            assert_eq!(legacy_url, "https://legacy.example.com:8443/agents/a");
            assert!(
                headers["vary"]
                    .to_str()
                    .unwrap()
                    .contains("X-Forwarded-Host")
            );
            assert_ne!(headers["etag"], plain_headers["etag"]);
        } else {
            assert_eq!(
                (url.as_str(), legacy_url.as_str()),
                (plain.as_str(), plain.as_str())
            );
            // (The card varies by `A2A-Version` alone: a 1.0 request gets 1.0's card.)
            assert_eq!(
                headers.get("vary").map(|v| v.to_str().unwrap()),
                Some("A2A-Version")
            );
        }
        // Revalidation still works on a per-request card.
        let etag = plain_headers["etag"].to_str().unwrap().to_string();
        let (status, _, _) = card_at(&card, &[("if-none-match", etag.as_str())]).await;
        assert_eq!(status, 304);
        server.abort();
    }

    let fixed = AgentService::builder(TestAgent)
        .public_url("https://fixed.example.com/a")
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let trusting = HttpConfig::default().trust_forwarded_headers(true);
    let app = a2a_kit_axum::app(A2aHttpService::with_config(fixed, trusting).unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (_, _, url) = card_at(&format!("{base}/.well-known/agent-card.json"), proxied).await;
    assert_eq!(url, "https://fixed.example.com/a");
    server.abort();
}

/// A request that says nothing of its host cannot be told the agent's URL: 400 naming the
/// fix, not a card with a made-up URL.
#[tokio::test]
async fn a_card_request_without_a_host_is_refused() {
    use tower::ServiceExt;
    let service = AgentService::builder(TestAgent).build().unwrap();
    let req = http::Request::get("/.well-known/agent-card.json")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let resp = A2aHttpService::new(service.clone())
        .oneshot(req)
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains("no Host header") && text.contains("public URL"),
        "{text}"
    );

    // With a host (here the URI's authority, as HTTP/2 sends it) the card names it.
    let req = http::Request::get("https://h2.example.com/.well-known/agent-card.json")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let resp = A2aHttpService::new(service).oneshot(req).await.unwrap();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let card: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        card["supportedInterfaces"][1]["url"],
        "https://h2.example.com"
    );
}

/// A second agent for README's mount snippet.
mod hotel {
    use a2a_kit::prelude::*;

    /// The hotel agent, with its rooms.
    #[derive(Clone, Default)]
    pub struct HotelAgent {
        rooms_booked: u32,
    }

    /// Finds hotels.
    #[a2a_agent(name = "Hotel Agent")]
    impl HotelAgent {
        /// Find a hotel in a city.
        #[skill]
        async fn find(&self, Text(city): Text) -> String {
            format!("A room in {city} ({} booked before)", self.rooms_booked)
        }
    }
}

/// The app state README's snippet hands `with_state`.
#[derive(Clone)]
struct AppState;

/// README's "Mount it in an existing axum app" snippet: the lines between the markers are
/// README's as written (`the_readme_mount_snippet_is_this_code` compares them).
async fn readme_mount_app(
    public_url: &str,
    app_state: AppState,
) -> Result<axum::Router, Box<dyn std::error::Error>> {
    use a2a_examples::travel::TravelAgent;
    use axum::{Router, routing::get};
    use hotel::HotelAgent;
    // README mount snippet: begin
    use a2a_kit::server::AgentService;

    // `public_url`: where clients reach this app, e.g. "https://api.example.com".
    let travel = AgentService::builder(TravelAgent::default())
        .public_url(format!("{public_url}/agents/travel")) // what its cards name, the root's too
        .build()?;
    let hotels = AgentService::builder(HotelAgent::default()).build()?;
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .nest("/agents/travel", a2a_kit_axum::router(&travel)) // JSON-RPC at /, HTTP+JSON below
        .nest("/agents/hotels", a2a_kit_axum::router(&hotels)) // side by side
        .merge(a2a_kit_axum::well_known_router(&travel)) // optional: its card at the root too
        .with_state(app_state);
    // README mount snippet: end
    Ok(app)
}

/// The lines of `text` between the line containing `begin` and the next containing `end`,
/// each with its runs of whitespace made one space (rustfmt does not keep README's aligned
/// comments) and no indentation.
fn lines_between(text: &str, begin: &str, end: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.contains(begin))
        .skip(1)
        .take_while(|l| !l.contains(end))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn the_readme_mount_snippet_is_this_code() {
    let readme = include_str!("../README.md");
    let section = readme
        .split("## Mount it in an existing axum app")
        .nth(1)
        .expect("README has the mount section");
    let snippet = lines_between(section, "```rust", "```");
    let here = lines_between(
        include_str!("http_mount.rs"),
        "// README mount snippet: begin",
        "// README mount snippet: end",
    );
    assert!(!snippet.is_empty());
    assert_eq!(
        snippet, here,
        "README's mount snippet and readme_mount_app differ: change both"
    );
}

/// README's mount snippet as written: a client given only the app's root reads the root card
/// and reaches the travel agent where that card says, over both bindings.
#[tokio::test]
async fn the_readme_mount_snippet_answers_where_its_root_card_says() {
    use a2a_kit::client::{A2aClient, Binding, SendRequest};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = readme_mount_app(&base, AppState)
        .await
        .expect("the snippet builds");
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let (status, _, url) = card_at(&format!("{base}/.well-known/agent-card.json"), &[]).await;
    assert_eq!((status, url), (200, format!("{base}/agents/travel")));
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let client = A2aClient::builder()
            .binding(binding)
            .connect(&base)
            .await
            .expect("the root card");
        assert_eq!(client.card().name, "Travel Agent");
        let reply = client
            .send(SendRequest::text("somewhere warm"))
            .await
            .unwrap_or_else(|e| panic!("{binding}: the travel agent answers: {e}"));
        let a2a_kit::protocol::SendMessageResponse::Task(task) = reply else {
            panic!("{binding}: a task");
        };
        let text: String = task
            .artifacts
            .iter()
            .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
            .collect();
        assert!(text.contains("Lisbon"), "{binding}: {text}");
    }
    // The other agent and the app's own route still answer beside it.
    let (status, card) =
        rest_get(&format!("{base}/agents/hotels/.well-known/agent-card.json")).await;
    assert_eq!((status, card["name"].as_str()), (200, Some("Hotel Agent")));
    let health = client().get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    server.abort();
}
