//! The client's credentials reach the agent's origin only (issue #19): not an interface URL a
//! card names on another host, not the target of a redirect to another host; an origin the
//! user trusts gets them too.

use std::sync::{Arc, Mutex};

use a2a_kit::client::A2aClient;
use axum::Router;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use serde_json::{Value, json};

/// Every request a server saw: its path and whether it carried each credential.
type Seen = Arc<Mutex<Vec<(String, bool, bool)>>>;

fn record(seen: &Seen, path: &str, headers: &HeaderMap) {
    seen.lock().unwrap().push((
        path.to_string(),
        headers.contains_key("authorization"),
        headers.contains_key("x-api-key"),
    ));
}

async fn listen(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn card(interface: &str) -> Value {
    json!({"name": "Elsewhere", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": interface, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []})
}

/// A server that answers every JSON-RPC call "task not found" and records what it saw.
async fn agent_endpoint(seen: Seen) -> String {
    let app = Router::new().route(
        "/",
        post(move |headers: HeaderMap| {
            let seen = seen.clone();
            async move {
                record(&seen, "/", &headers);
                axum::Json(json!({"jsonrpc": "2.0", "id": 1,
                    "error": {"code": -32001, "message": "task not found"}}))
            }
        }),
    );
    listen(app).await
}

/// A server with a card naming `interface`, whose `/` redirects to `redirect` when given.
async fn card_server(seen: Seen, interface: String, redirect: Option<String>) -> String {
    let card_seen = seen.clone();
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move |headers: HeaderMap| {
                let (seen, card) = (card_seen.clone(), card(&interface));
                async move {
                    record(&seen, "card", &headers);
                    axum::Json(card)
                }
            }),
        )
        .route(
            "/",
            post(move |headers: HeaderMap| {
                let (seen, redirect) = (seen.clone(), redirect.clone());
                async move {
                    record(&seen, "/", &headers);
                    (
                        axum::http::StatusCode::TEMPORARY_REDIRECT,
                        [("location", redirect.unwrap_or_default())],
                    )
                }
            }),
        );
    listen(app).await
}

#[tokio::test]
async fn credentials_stay_with_the_agents_origin() {
    let (a_seen, b_seen): (Seen, Seen) = Default::default();
    let b = agent_endpoint(b_seen.clone()).await;
    let a = card_server(a_seen.clone(), format!("{b}/"), None).await;

    // The card on A names B: A gets the credentials (the card fetch), B does not.
    let client = A2aClient::builder()
        .bearer_token("secret")
        .unwrap()
        .api_key("X-API-Key", "key")
        .connect(&a)
        .await
        .expect("connects");
    let err = client.get_task("t1").await.expect_err("B has no task");
    assert_eq!(err.code(), Some(-32001), "{err}");
    assert_eq!(a_seen.lock().unwrap()[0], ("card".to_string(), true, true));
    assert_eq!(b_seen.lock().unwrap()[0], ("/".to_string(), false, false));

    // Trusted, B gets them.
    let client = A2aClient::builder()
        .bearer_token("secret")
        .unwrap()
        .api_key("X-API-Key", "key")
        .trust_origin(&b)
        .unwrap()
        .connect(&a)
        .await
        .expect("connects");
    let _ = client.get_task("t1").await;
    assert_eq!(b_seen.lock().unwrap()[1], ("/".to_string(), true, true));
    assert!(
        A2aClient::builder().trust_origin("not a url").is_err(),
        "a bad URL is refused"
    );

    // A token provider's tokens follow the same rule.
    let client = A2aClient::builder()
        .bearer_token_provider(|| async { Ok::<_, a2a_kit::client::ClientError>("fresh".into()) })
        .connect(&a)
        .await
        .expect("connects");
    let _ = client.get_task("t1").await;
    assert_eq!(a_seen.lock().unwrap()[2], ("card".to_string(), true, false));
    assert_eq!(b_seen.lock().unwrap()[2], ("/".to_string(), false, false));
}

#[tokio::test]
async fn no_redirect_to_another_origin_is_followed() {
    let (a_seen, b_seen): (Seen, Seen) = Default::default();
    let b = agent_endpoint(b_seen.clone()).await;
    // A's endpoint redirects to B; the client is built from a card naming A.
    let a = card_server(a_seen.clone(), String::new(), Some(format!("{b}/"))).await;
    let client = A2aClient::builder()
        .bearer_token("secret")
        .unwrap()
        .api_key("X-API-Key", "key")
        .binding(a2a_kit::client::Binding::JsonRpc)
        .from_card(
            serde_json::from_value(card(&format!("{a}/"))).unwrap(),
            &format!("{a}/.well-known/agent-card.json"),
        )
        .expect("a client");
    let err = client.get_task("t1").await.expect_err("a redirect");
    assert!(err.to_string().contains("307"), "{err}");
    assert_eq!(a_seen.lock().unwrap()[0], ("/".to_string(), true, true));
    assert!(
        b_seen.lock().unwrap().is_empty(),
        "B was never reached: {:?}",
        b_seen.lock().unwrap()
    );
}
