//! One service, many hosts: the agent's `A2aHttpService` mounted in plain hyper (no axum)
//! answers both bindings exactly as the axum mount does, and two agents nest side by side
//! in one axum app.

use std::convert::Infallible;

use a2a_kit::binding::{A2aHttpService, card_response};
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

/// Serve `service` with hyper alone: JSON-RPC and HTTP+JSON from the tower service, the card
/// from `card_response`.
async fn serve_with_hyper(service: AgentService, listener: tokio::net::TcpListener) {
    let http = A2aHttpService::new(service.clone());
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let (http, service) = (http.clone(), service.clone());
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (http, service) = (http.clone(), service.clone());
                    async move {
                        if req.uri().path() == "/.well-known/agent-card.json" {
                            return Ok::<_, Infallible>(card_response(&service, req.headers()));
                        }
                        Ok(http.handle(req).await)
                    }
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
    let service = AgentService::builder(TestAgent)
        .public_url(base.clone())
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

/// Two agents nest side by side in one axum app, each with its own card URL.
#[tokio::test]
async fn two_agents_mount_side_by_side_in_axum() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let build = |path: &str| {
        AgentService::builder(TestAgent)
            .public_url(format!("{base}{path}"))
            .build()
            .expect("a valid configuration")
    };
    let (a, b) = (build("/agents/a"), build("/agents/b"));
    let app = axum::Router::new()
        .nest("/agents/a", a2a_kit_axum::router(&a))
        .nest("/agents/b", a2a_kit_axum::router(&b));
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    for (agent, path) in [(&a, "/agents/a"), (&b, "/agents/b")] {
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
    server.abort();
}
