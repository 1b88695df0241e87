//! The edge as tower layers (`a2a_kit::binding::edge`): composed by hand with a layer of the
//! application's own between authentication and the codec, served over real HTTP; the card
//! stays public, refusals come before the inner layers, the caller reaches them in the
//! request's extensions, and a codec left without its `AuthLayer` fails closed.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use a2a_kit::auth::{ApiKeys, Caller};
use a2a_kit::binding::HttpConfig;
use a2a_kit::binding::edge::{AuthLayer, BodyLayer, CardLayer, Codec};
use a2a_kit::protocol::ListTasksRequest;
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use a2a_tests::{TestAgent, client, send_message, to_skill};
use tower::ServiceBuilder;

/// Records the subject of each request that reaches it.
#[derive(Clone)]
struct Seen<S> {
    inner: S,
    subjects: Arc<Mutex<Vec<String>>>,
}

impl<S, B> tower::Service<http::Request<B>> for Seen<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> S::Future {
        let subject = req
            .extensions()
            .get::<Arc<Caller>>()
            .map_or("(none)".to_string(), |c| c.subject.clone());
        self.subjects.lock().unwrap().push(subject);
        self.inner.call(req)
    }
}

fn keys() -> ApiKeys {
    ApiKeys::header("X-API-Key").key("alice-key", "alice")
}

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn a_hand_composed_edge_runs_the_applications_layer_after_authentication() {
    let service = AgentService::builder(TestAgent)
        .authenticate(keys())
        .build()
        .unwrap();
    let config = HttpConfig::default().body_limit(4096);
    let subjects = Arc::new(Mutex::new(Vec::new()));
    let seen = subjects.clone();
    let stack = ServiceBuilder::new()
        .layer(CardLayer::new(service.clone(), &config))
        .layer(AuthLayer::new(service.clone()))
        .layer(tower::layer::layer_fn(move |inner| Seen {
            inner,
            subjects: seen.clone(),
        }))
        .layer(BodyLayer::new(&config))
        .service(Codec::new(service.clone(), &config));
    let base = serve(axum::Router::new().fallback_service(stack)).await;

    // The card is public: served before authentication, never reaching the inner layers.
    let card = client()
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    // An unknown caller is refused before the application's layer.
    for rest in [false, true] {
        let refused = send_message(&base, rest, to_skill("echo", "hi"), None).await;
        assert_eq!(refused.status(), 401);
    }
    assert!(subjects.lock().unwrap().is_empty(), "refused before it");
    // A known caller passes, and the layer sees who it is.
    for rest in [false, true] {
        let ok = send_message(
            &base,
            rest,
            to_skill("echo", "hi"),
            Some(("X-API-Key", "alice-key")),
        )
        .await;
        assert_eq!(ok.status(), 200, "{}", ok.text().await.unwrap());
    }
    assert_eq!(*subjects.lock().unwrap(), ["alice", "alice"]);
    // The body layer's limit holds under it: 413 in the binding's format.
    let big = client()
        .post(&base)
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .header("X-API-Key", "alice-key")
        .body(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{{"id":"{}"}}}}"#,
            "x".repeat(5000)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(big.status(), 413);
    let body: serde_json::Value = big.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600, "{body}");
    // Alice's two tasks are hers.
    let alice = RequestContext::new().with_caller(Caller::new("alice"));
    let listed = service
        .list_tasks(&alice, ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.total_size, 2);
}

#[tokio::test]
async fn a_codec_without_its_auth_layer_fails_closed() {
    let service = AgentService::builder(TestAgent)
        .authenticate(keys())
        .build()
        .unwrap();
    let config = HttpConfig::default();
    // The mistake: the authenticating agent's codec mounted without an AuthLayer.
    let stack = ServiceBuilder::new()
        .layer(BodyLayer::new(&config))
        .service(Codec::new(service.clone(), &config));
    let base = serve(axum::Router::new().fallback_service(stack)).await;
    for rest in [false, true] {
        let resp = send_message(
            &base,
            rest,
            to_skill("echo", "hi"),
            Some(("X-API-Key", "alice-key")),
        )
        .await;
        assert_eq!(resp.status(), 500, "never served unauthenticated");
    }
    // Nothing was created, for anyone.
    let anyone = RequestContext::new().with_caller(Caller::new("alice"));
    let listed = service
        .list_tasks(&anyone, ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.total_size, 0);
}
