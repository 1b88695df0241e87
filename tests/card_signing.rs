//! Signed agent cards (feature `jose`): the server signs its card after every edit, serves
//! its keys as a JWKS, and a client that verifies cards accepts only a card whose signature
//! verifies against a key it trusts (PEM, JWK, or a JWKS URL), over real HTTP.

use a2a_kit::auth::ApiKeys;
use a2a_kit::client::{A2aClient, ClientError};
use a2a_kit::protocol::{AgentCard, AgentCardSignature};
use a2a_kit::server::{AgentService, BuildError};
use a2a_kit::signing::{Signer, Verifier, VerifyError, card_json_payload, card_payload};
use a2a_tests::*;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/signing/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn signer() -> Signer {
    Signer::from_pem(fixture("es256.pem"), "card-es256").unwrap()
}

fn rotated() -> Signer {
    Signer::from_jwk(&fixture("es256-rotated.jwk.json")).unwrap()
}

async fn connect(base: &str, verifier: Verifier) -> Result<A2aClient, ClientError> {
    A2aClient::builder()
        .verify_card(verifier)
        .connect(base)
        .await
}

fn refusal(r: Result<A2aClient, ClientError>) -> VerifyError {
    match r {
        Err(ClientError::CardSignature(e)) => e,
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("the card was accepted"),
    }
}

/// Serve `card` (any JSON) as a card document, as a tampering host would.
async fn serve_card_json(card: Value) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || {
            let card = card.clone();
            async move { axum::Json(card) }
        }),
    );
    (
        base,
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() }),
    )
}

#[tokio::test]
async fn signed_card_verifies_against_pem_jwk_and_jwks_url() {
    let s = serve(AgentService::builder(TestAgent).sign_card(signer())).await;
    let card = s.service.card();
    assert_eq!(card.signatures.len(), 1);

    let pem = Verifier::new().trust_pem(fixture("es256.pub.pem")).unwrap();
    let client = connect(&s.base, pem).await.unwrap();
    assert_eq!(client.card_verified_by().as_deref(), Some("card-es256"));

    let jwk = Verifier::new()
        .trust_jwk(&fixture("es256.pub.jwk.json"))
        .unwrap();
    let client = connect(&s.base, jwk).await.unwrap();
    assert_eq!(client.card_verified_by().as_deref(), Some("card-es256"));

    let jwks = Verifier::new()
        .fetch_jwks(&format!("{}/.well-known/jwks.json", s.base))
        .await
        .unwrap();
    let client = connect(&s.base, jwks).await.unwrap();
    assert_eq!(client.card_verified_by().as_deref(), Some("card-es256"));
    assert_eq!(client.card().name, "Test Agent");

    // A client that does not verify cards says so.
    let plain = A2aClient::connect(&s.base).await.unwrap();
    assert_eq!(plain.card_verified_by(), None);
}

#[tokio::test]
async fn two_signatures_for_a_rotation_either_trusted_key_verifies() {
    let s = serve(
        AgentService::builder(TestAgent)
            .sign_card(signer())
            .sign_card(rotated()),
    )
    .await;
    assert_eq!(s.service.card().signatures.len(), 2);
    for (file, kid) in [
        ("es256.pub.jwk.json", "card-es256"),
        ("es256-rotated.pub.jwk.json", "card-es256-2025"),
    ] {
        let v = Verifier::new().trust_jwk(&fixture(file)).unwrap();
        let client = connect(&s.base, v).await.unwrap();
        assert_eq!(client.card_verified_by().as_deref(), Some(kid));
    }
}

#[tokio::test]
async fn tampered_card_unknown_kid_and_unsigned_card_are_refused() {
    let s = serve(AgentService::builder(TestAgent).sign_card(signer())).await;
    let trusted = || {
        Verifier::new()
            .trust_jwk(&fixture("es256.pub.jwk.json"))
            .unwrap()
    };
    // Tampered: the served card with one field changed, signature kept.
    let mut doc: Value = a2a_tests::public_card(&s.base).await;
    assert!(trusted().verify_card_json(&doc).is_ok());
    doc["description"] = json!("a friendlier agent");
    let (tampered, _t) = serve_card_json(doc.clone()).await;
    let e = refusal(connect(&tampered, trusted()).await);
    assert_eq!(
        e,
        VerifyError::BadSignature {
            kid: "card-es256".into()
        }
    );
    assert!(
        ClientError::CardSignature(e)
            .to_string()
            .contains("bad signature")
    );
    // An unknown field added is covered too.
    doc["description"] = s.service.card().description.clone().into();
    doc["x-extra"] = json!(1);
    assert!(matches!(
        trusted().verify_card_json(&doc),
        Err(VerifyError::BadSignature { .. })
    ));

    // Unknown kid: the only trusted key is another one.
    let other = Verifier::new()
        .trust_jwk(&fixture("ed25519.pub.jwk.json"))
        .unwrap();
    let e = refusal(connect(&s.base, other).await);
    assert_eq!(e, VerifyError::UnknownKid("card-es256".into()));
    assert!(e.to_string().contains("card-es256"), "{e}");

    // No signature at all.
    let unsigned = serve_test_agent().await;
    assert_eq!(
        refusal(connect(&unsigned.base, trusted()).await),
        VerifyError::NoSignature
    );
}

#[test]
fn alg_none_and_an_alg_the_key_does_not_take_are_refused() {
    use base64::Engine;
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let verifier = Verifier::new()
        .trust_jwk(&fixture("es256.pub.jwk.json"))
        .unwrap();
    let mut card = AgentCard {
        name: "Forged".into(),
        ..Default::default()
    };
    card.signatures.push(AgentCardSignature {
        protected: b64(json!({"alg": "none", "kid": "card-es256"})),
        signature: String::new(),
        header: None,
    });
    let e = verifier.verify_card(&card).unwrap_err();
    assert!(
        matches!(&e, VerifyError::AlgNotAllowed { alg, .. } if alg == "none"),
        "{e:?}"
    );
    // HS256 with the public key as the secret (the classic confusion): refused unheard.
    card.signatures[0].protected = b64(json!({"alg": "HS256", "kid": "card-es256"}));
    card.signatures[0].signature = "AAAA".into();
    let e = verifier.verify_card(&card).unwrap_err();
    assert_eq!(
        e,
        VerifyError::AlgNotAllowed {
            alg: "HS256".into(),
            kid: "card-es256".into(),
            expected: Some("ES256".into())
        }
    );
    assert!(e.to_string().contains("it takes ES256"), "{e}");
    // A bare PEM key (no kid) refuses `none` as well.
    let pem = Verifier::new().trust_pem(fixture("es256.pub.pem")).unwrap();
    card.signatures[0].protected = b64(json!({"alg": "none"}));
    assert!(matches!(
        pem.verify_card(&card),
        Err(VerifyError::AlgNotAllowed { .. })
    ));
    // Garbage is malformed.
    card.signatures[0].protected = "!!".into();
    assert!(matches!(
        verifier.verify_card(&card),
        Err(VerifyError::Malformed(_))
    ));
}

#[test]
fn a_signed_card_needs_a_public_url() {
    let err = AgentService::builder(TestAgent)
        .sign_card(signer())
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::SignedCardNeedsPublicUrl);
    assert!(err.to_string().contains("public_url"));
}

#[tokio::test]
async fn the_jwks_endpoint_serves_the_public_keys_with_cache_headers() {
    let s = serve(
        AgentService::builder(TestAgent)
            .sign_card(signer().jku("https://agent.example/.well-known/jwks.json"))
            .sign_card(rotated()),
    )
    .await;
    let url = format!("{}/.well-known/jwks.json", s.base);
    let resp = client().get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "public, max-age=300");
    let etag = resp.headers()["etag"].to_str().unwrap().to_string();
    assert!(resp.headers().contains_key("last-modified"));
    let jwks: Value = resp.json().await.unwrap();
    let keys = jwks["keys"].as_array().unwrap();
    let kids: Vec<&str> = keys.iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert_eq!(kids, ["card-es256", "card-es256-2025"]);
    for k in keys {
        assert_eq!(k["kty"], "EC");
        assert_eq!(k["alg"], "ES256");
        assert!(k.get("d").is_none(), "a private key leaked: {k}");
    }
    let again = client()
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    // The signature names the jku it was given.
    let header = &s.service.card().signatures[0].protected;
    use base64::Engine;
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        header,
        json!({"alg": "ES256", "kid": "card-es256", "typ": "JOSE",
               "jku": "https://agent.example/.well-known/jwks.json"})
    );
    // An agent that signs nothing serves no JWKS.
    let plain = serve_test_agent().await;
    let resp = client()
        .get(format!("{}/.well-known/jwks.json", plain.base))
        .send()
        .await
        .unwrap();
    assert_ne!(resp.status(), 200);
}

#[test]
fn the_payload_is_the_jcs_canonical_form_without_signatures() {
    // The spec's example (keys sorted, no whitespace, `signatures` dropped).
    let card = json!({"name": "Example Agent", "description": "",
        "capabilities": {"streaming": false, "pushNotifications": false}, "skills": [],
        "signatures": [{"protected": "x", "signature": "y"}]});
    assert_eq!(
        String::from_utf8(card_json_payload(&card)).unwrap(),
        r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
    );
    // RFC 8785 section 3.2.2's example: numbers in ECMAScript form, minimal string escapes.
    let rfc: Value = serde_json::from_str(
        r#"{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],
            "string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals":[null,true,false]}"#,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(card_json_payload(&rfc)).unwrap(),
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
    );
    // A typed card: what it serializes to, canonical, whatever order its fields are in.
    let mut typed = AgentCard {
        name: "Example Agent".into(),
        version: "1.0".into(),
        ..Default::default()
    };
    let before = card_payload(&typed);
    signer().sign_card(&mut typed).unwrap();
    assert_eq!(card_payload(&typed), before, "signatures are not covered");
    // Hand-computed: the fields the wire format always writes, sorted, no whitespace.
    assert_eq!(
        String::from_utf8(before).unwrap(),
        r#"{"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"","name":"Example Agent","skills":[],"supportedInterfaces":[],"version":"1.0"}"#
    );
    // A document that spells out a default the wire format leaves out still verifies (the
    // spec drops such fields before canonicalizing); one with an unknown field does not.
    let verifier = Verifier::new().trust_signer(&signer());
    let mut doc = serde_json::to_value(&typed).unwrap();
    doc["iconUrl"] = Value::Null;
    assert_eq!(verifier.verify_card_json(&doc).unwrap(), "card-es256");
}

#[tokio::test]
async fn the_extended_card_is_signed_after_the_per_caller_hook() {
    let s = serve(
        AgentService::builder(TestAgent)
            .authenticate(ApiKeys::header("X-API-Key").key("k-alice", "alice"))
            .extended_card_for(|caller, _, card| {
                card.description = format!("for {}", caller.map_or("?", |c| &c.subject));
            })
            .sign_card(signer()),
    )
    .await;
    let verifier = Verifier::new()
        .trust_jwk(&fixture("es256.pub.jwk.json"))
        .unwrap();
    let client = A2aClient::builder()
        .api_key("X-API-Key", "k-alice")
        .verify_card(verifier.clone())
        .connect(&s.base)
        .await
        .unwrap();
    let extended = client.extended_card().await.unwrap();
    assert_eq!(extended.description, "for alice");
    assert_eq!(extended.signatures.len(), 1);
    assert_eq!(verifier.verify_card(&extended).unwrap(), "card-es256");
}
