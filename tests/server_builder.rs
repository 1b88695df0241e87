//! `AgentServiceBuilder::build` checks the configuration: each mistake is an error naming
//! what is wrong, never a warning or a silently ignored call.

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::binding::{A2aHttpService, HttpConfig};
use a2a_kit::runtime::{ExecutionConfig, NarrationContext, StatusNarrator};
use a2a_kit::server::{AgentService, BuildError, PER_REQUEST_URL};
use a2a_tests::{TestAgent, client, serve_with};

struct Quiet;

#[a2a_kit::async_trait]
impl StatusNarrator for Quiet {
    async fn narrate(&self, _: &NarrationContext) -> Option<String> {
        None
    }
}

#[test]
fn each_mistake_is_an_error_naming_it() {
    for (url, why) in [
        ("127.0.0.1:3000", "needs an http:// or https:// scheme"),
        (
            "ftp://example.com/agent",
            "needs an http:// or https:// scheme",
        ),
        ("not a url", "not an absolute http or https URL"),
    ] {
        let err = AgentService::builder(TestAgent)
            .public_url(url)
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, BuildError::PublicUrl { url: u, .. } if u == url),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains(url) && text.contains(why), "{text}");
    }

    let err = AgentService::builder(TestAgent)
        .require_extension("  ")
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::EmptyExtensionUri);
    assert!(err.to_string().contains("require_extension"), "{err}");

    let err = AgentService::builder(TestAgent)
        .execution(ExecutionConfig {
            narrator: Some(Arc::new(Quiet)),
            narration_interval: Duration::ZERO,
            ..Default::default()
        })
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::ZeroNarrationInterval);
    assert!(err.to_string().contains("narration_interval"), "{err}");
    // A zero interval without a narrator is never used, so it is no mistake.
    AgentService::builder(TestAgent)
        .execution(ExecutionConfig {
            narration_interval: Duration::ZERO,
            ..Default::default()
        })
        .build()
        .expect("no narrator, nothing to check");

    // The HTTP edge's own configuration is checked when the edge is made.
    let err = A2aHttpService::with_config(
        AgentService::builder(TestAgent).build().expect("valid"),
        HttpConfig::default().body_limit(0),
    )
    .unwrap_err();
    assert!(err.to_string().contains("body_limit"), "{err}");
}

#[test]
fn defaults_build() {
    let service = AgentService::builder(TestAgent).build().expect("defaults");
    // No public URL: no guess either. Each request is served the card with its own URL.
    assert_eq!(service.card().supported_interfaces[0].url, PER_REQUEST_URL);
    assert_eq!(service.public_url(), None);
    let card = service.card_for_url("http://10.0.0.7:8080/agents/x/");
    for interface in &card.supported_interfaces {
        // gRPC dials the request's host and port (feature `grpc`, on in these tests).
        let want = match interface.protocol_binding.as_str() {
            "GRPC" => "10.0.0.7:8080",
            _ => "http://10.0.0.7:8080/agents/x",
        };
        assert_eq!(interface.url, want);
    }
    assert_eq!(card.supported_interfaces.len(), 3);
    let edge = A2aHttpService::new(service.clone());
    assert_eq!(
        edge.config().body_limit,
        a2a_kit::binding::DEFAULT_BODY_LIMIT
    );
    assert!(!AgentService::builder(TestAgent).has_public_url());
    assert!(
        AgentService::builder(TestAgent)
            .public_url("https://agents.example.com/a")
            .has_public_url()
    );
}

/// The body limit of the edge's configuration is the one both bindings enforce.
#[tokio::test]
async fn the_body_limit_is_enforced_by_both_bindings() {
    let s = serve_with(
        AgentService::builder(TestAgent),
        HttpConfig::default().body_limit(64),
    )
    .await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{{"id":"{}"}}}}"#,
        "x".repeat(100)
    );
    for (path, code) in [("", -32600), ("/tasks/x:cancel", 413)] {
        let resp = client()
            .post(format!("{}{path}", s.base))
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(big.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 413, "{path}");
        let body: serde_json::Value = resp.json().await.unwrap();
        // Each binding's error format: a JSON-RPC envelope, or an HTTP+JSON error whose
        // `code` is the HTTP status.
        assert_eq!(body["error"]["code"], code, "{path}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("64-byte limit"),
            "{body}"
        );
    }
    // Under the limit, the same request is served.
    let small = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#;
    let resp = client()
        .post(&s.base)
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(small)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}
