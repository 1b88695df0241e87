//! Bearer JWT authentication (issue #19): `a2a_kit::auth::Jwt` over real HTTP on 127.0.0.1,
//! both bindings. Good HS256, RS256, PS256, ES256, ES384 and EdDSA tokens name their caller
//! (subject, tenant, scopes); every bad token is a 401 with `WWW-Authenticate: Bearer`, never
//! a 500, its reason in the log; a JWKS served by a local server is fetched, refetched for a
//! rotated-in `kid` at most once per cooldown, and kept when a fetch fails; `AnyOf` takes
//! API keys and JWTs; the client's token provider is asked for a fresh token per request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_kit::auth::{AnyOf, ApiKeys, AuthError, Authenticator, Jwt};
use a2a_kit::client::{A2aClient, ClientError};
use a2a_kit::server::AgentService;
use a2a_tests::{CapturedLogs, capture_logs, client, send_message, serve, to_skill};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const SECRET: &str = "an-hs256-secret-of-at-least-32-bytes!";
const ISS: &str = "https://issuer.test/";
const AUD: &str = "a2a-test-agent";
const RSA_PRIVATE: &str = include_str!("fixtures/jwt/rsa_private.pem");
const RSA_PUBLIC: &str = include_str!("fixtures/jwt/rsa_public.pem");
const RSA2_PRIVATE: &str = include_str!("fixtures/jwt/rsa2_private.pem");
const EC_PRIVATE: &str = include_str!("fixtures/jwt/ec_private.pem");
const EC_PUBLIC: &str = include_str!("fixtures/jwt/ec_public.pem");
const EC384_PRIVATE: &str = include_str!("fixtures/jwt/ec384_private.pem");
const EC384_PUBLIC: &str = include_str!("fixtures/jwt/ec384_public.pem");
const ED_PRIVATE: &str = include_str!("fixtures/jwt/ed_private.pem");
const ED_PUBLIC: &str = include_str!("fixtures/jwt/ed_public.pem");

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Good claims for `sub`: this issuer and audience, ten minutes to live, a tenant, scopes.
fn claims(sub: &str) -> Value {
    json!({"sub": sub, "iss": ISS, "aud": AUD, "exp": now() + 600, "iat": now(),
        "tid": "acme", "scope": "tasks:read tasks:write"})
}

fn sign(alg: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(String::from);
    jsonwebtoken::encode(&header, claims, key).expect("signs")
}

fn hs(claims: &Value) -> String {
    sign(
        Algorithm::HS256,
        &EncodingKey::from_secret(SECRET.as_bytes()),
        None,
        claims,
    )
}

fn rsa_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(RSA_PRIVATE.as_bytes()).unwrap()
}

fn b64(bytes: &[u8]) -> String {
    // base64url without padding, by hand (for tokens no library would make).
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// An agent that says who is calling.
#[derive(Clone, Default)]
struct WhoAmI;

/// Says who is calling.
#[a2a_kit::a2a_agent(name = "Who Am I")]
impl WhoAmI {
    /// `subject|tenant|scopes|email claim`.
    #[skill]
    async fn whoami(&self, caller: a2a_kit::prelude::Caller) -> String {
        format!(
            "{}|{}|{}|{}",
            caller.subject,
            caller.tenant.as_deref().unwrap_or("-"),
            caller.scopes.join(" "),
            caller
                .claims
                .get("email")
                .and_then(Value::as_str)
                .unwrap_or("-")
        )
    }
}

/// SendMessage to `whoami` over one binding, with `token` as a bearer token if given.
async fn send_with_token(base: &str, token: Option<&str>, rest: bool) -> reqwest::Response {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let credential = bearer.as_deref().map(|b| ("Authorization", b));
    send_message(base, rest, to_skill("whoami", "x"), credential).await
}

/// The caller the agent saw, through either binding.
async fn whoami(base: &str, token: &str, rest: bool) -> String {
    let resp = send_with_token(base, Some(token), rest).await;
    assert_eq!(resp.status(), 200, "rest {rest}");
    let body: Value = resp.json().await.unwrap();
    let task = if rest {
        &body["task"]
    } else {
        &body["result"]["task"]
    };
    task["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no answer in {body}"))
        .to_string()
}

/// `token` is refused in both bindings: 401, a Bearer challenge (with `invalid_token` when a
/// token was sent), the edge's error body, and `reason` in the log.
async fn assert_refused(base: &str, token: Option<&str>, reason: &str, logs: &CapturedLogs) {
    for rest in [false, true] {
        let before = logs.text().len();
        let resp = send_with_token(base, token, rest).await;
        assert_eq!(resp.status(), 401, "{reason}, rest {rest}");
        let challenge = resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        if token.is_some() {
            assert_eq!(
                challenge, "Bearer realm=\"a2a\", error=\"invalid_token\"",
                "{reason}"
            );
        } else {
            assert_eq!(challenge, "Bearer realm=\"a2a\"", "{reason}");
        }
        let body: Value = resp.json().await.unwrap();
        assert_eq!(
            body["error"]["status"], "UNAUTHENTICATED",
            "{reason}: {body}"
        );
        let logged = logs.text()[before..].to_string();
        assert!(
            logged.contains("refused a request") && logged.contains(reason),
            "`{reason}` not in the log: {logged}"
        );
        assert!(
            !body.to_string().contains(reason),
            "the reason stays in the log: {body}"
        );
    }
}

#[tokio::test]
async fn good_tokens_of_every_key_type_name_their_caller() {
    let cases: Vec<(&str, Jwt, String)> = vec![
        ("HS256", Jwt::hmac(SECRET).unwrap(), hs(&claims("alice"))),
        (
            "RS256",
            Jwt::rsa_pem(RSA_PUBLIC).unwrap(),
            sign(Algorithm::RS256, &rsa_key(), None, &claims("alice")),
        ),
        (
            "PS256",
            Jwt::rsa_pem(RSA_PUBLIC).unwrap(),
            sign(Algorithm::PS256, &rsa_key(), None, &claims("alice")),
        ),
        (
            "ES256",
            Jwt::ec_pem(EC_PUBLIC).unwrap(),
            sign(
                Algorithm::ES256,
                &EncodingKey::from_ec_pem(EC_PRIVATE.as_bytes()).unwrap(),
                None,
                &claims("alice"),
            ),
        ),
        (
            "ES384",
            Jwt::ec_pem(EC384_PUBLIC).unwrap(),
            sign(
                Algorithm::ES384,
                &EncodingKey::from_ec_pem(EC384_PRIVATE.as_bytes()).unwrap(),
                None,
                &claims("alice"),
            ),
        ),
        (
            "EdDSA",
            Jwt::ed_pem(ED_PUBLIC).unwrap(),
            sign(
                Algorithm::EdDSA,
                &EncodingKey::from_ed_pem(ED_PRIVATE.as_bytes()).unwrap(),
                None,
                &claims("alice"),
            ),
        ),
    ];
    for (alg, jwt, token) in cases {
        let jwt = jwt.issuer(ISS).audience(AUD).tenant_claim("tid");
        let s = serve(AgentService::builder(WhoAmI).authenticate(jwt)).await;
        for rest in [false, true] {
            assert_eq!(
                whoami(&s.base, &token, rest).await,
                "alice|acme|tasks:read tasks:write|-",
                "{alg}, rest {rest}"
            );
        }
    }

    // `scp` as an array, other claims visible; tasks are the caller's own.
    let s = serve(AgentService::builder(WhoAmI).authenticate(Jwt::hmac(SECRET).unwrap())).await;
    let mut c = claims("bob");
    c.as_object_mut().unwrap().remove("scope");
    c["scp"] = json!(["a", "b"]);
    c["email"] = json!("bob@example.com");
    assert_eq!(
        whoami(&s.base, &hs(&c), false).await,
        "bob|-|a b|bob@example.com"
    );
    let list: Value = client()
        .get(format!("{}/tasks", s.base))
        .header("A2A-Version", "1.0")
        .bearer_auth(hs(&claims("carol")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["totalSize"], 0, "bob's task is not carol's: {list}");

    // The card is public and names the scheme.
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"],
        json!({"description": "A JWT bearer token.", "scheme": "Bearer", "bearerFormat": "JWT"}),
        "{card}"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {}}}])
    );
}

#[tokio::test]
async fn bad_tokens_are_refused_with_a_bearer_challenge_and_a_logged_reason() {
    let (logs, _guard) = capture_logs();
    let jwt = Jwt::hmac(SECRET).unwrap().issuer(ISS).audience(AUD);
    let s = serve(AgentService::builder(WhoAmI).authenticate(jwt)).await;
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims("mallory");
        f(&mut c);
        hs(&c)
    };
    let alg_none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(claims("mallory").to_string().as_bytes())
    );
    let alg_none_signed = format!("{alg_none}c2ln");
    let cases: Vec<(Option<String>, &str)> = vec![
        (None, "no credentials"),
        (Some("not-a-jwt".into()), "a malformed token"),
        (Some("a.b.c".into()), "a malformed token"),
        (
            Some("eyJhbGciOiJIUzI1NiJ9.e30.%%%".into()),
            "a malformed token",
        ),
        (
            Some(with(&|c| c["exp"] = json!(now() - 3600))),
            "an expired token",
        ),
        (
            Some(with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            })),
            "without the `exp` claim",
        ),
        (
            Some(with(&|c| c["nbf"] = json!(now() + 3600))),
            "a token not valid yet",
        ),
        (
            Some(with(&|c| c["iss"] = json!("https://evil.test/"))),
            "a token from another issuer",
        ),
        (
            Some(with(&|c| c["aud"] = json!("another-agent"))),
            "a token for another audience",
        ),
        (
            Some(with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
            "without the `sub` claim",
        ),
        (
            Some(sign(
                Algorithm::HS256,
                &EncodingKey::from_secret(b"another-secret-of-at-least-32-bytes"),
                None,
                &claims("mallory"),
            )),
            "a token whose signature does not verify",
        ),
        (Some(alg_none.clone()), "an unsigned token (alg none)"),
        (Some(alg_none_signed), "an unsigned token (alg none)"),
        (
            Some(sign(Algorithm::RS256, &rsa_key(), None, &claims("mallory"))),
            "a RS256 token for a key that takes only [HS256, HS384, HS512]",
        ),
        (Some("e".repeat(9000)), "a bearer token of 9000 bytes"),
    ];
    for (token, reason) in &cases {
        assert_refused(&s.base, token.as_deref(), reason, &logs).await;
    }
    // Other schemes are not a bearer token: as without credentials.
    let resp = client()
        .get(format!("{}/tasks", s.base))
        .header("A2A-Version", "1.0")
        .header("Authorization", "Basic YWxpY2U6cHc=")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(resp.headers()["www-authenticate"], "Bearer realm=\"a2a\"");

    // HS/RS key confusion: an agent with an RSA key refuses an HS256 token whose "secret" is
    // that RSA public key.
    let rsa =
        serve(AgentService::builder(WhoAmI).authenticate(Jwt::rsa_pem(RSA_PUBLIC).unwrap())).await;
    let confused = sign(
        Algorithm::HS256,
        &EncodingKey::from_secret(RSA_PUBLIC.as_bytes()),
        None,
        &claims("mallory"),
    );
    assert_refused(
        &rsa.base,
        Some(&confused),
        "a HS256 token for a key that takes only [RS256",
        &logs,
    )
    .await;
    // A P-256 key takes ES256 only.
    let ec =
        serve(AgentService::builder(WhoAmI).authenticate(Jwt::ec_pem(EC_PUBLIC).unwrap())).await;
    let es384 = sign(
        Algorithm::ES384,
        &EncodingKey::from_ec_pem(EC384_PRIVATE.as_bytes()).unwrap(),
        None,
        &claims("mallory"),
    );
    assert_refused(
        &ec.base,
        Some(&es384),
        "a ES384 token for a key that takes only [ES256]",
        &logs,
    )
    .await;
}

#[test]
fn bad_keys_are_refused_at_configuration() {
    let err = Jwt::hmac("short").unwrap_err();
    assert!(err.to_string().contains("at least 32"), "{err}");
    for (what, result) in [
        ("rsa", Jwt::rsa_pem("not a pem").map(|_| ())),
        ("rsa private", Jwt::rsa_pem(EC_PUBLIC).map(|_| ())),
        ("ec", Jwt::ec_pem(RSA_PUBLIC).map(|_| ())),
        ("ec private", Jwt::ec_pem(EC_PRIVATE).map(|_| ())),
        ("ed", Jwt::ed_pem(EC_PUBLIC).map(|_| ())),
        ("jwks", Jwt::jwks_json("{}").map(|_| ())),
        ("jwks empty", Jwt::jwks_json(r#"{"keys": []}"#).map(|_| ())),
        ("url", Jwt::jwks_url("ftp://x/jwks").map(|_| ())),
        ("url", Jwt::jwks_url("not a url").map(|_| ())),
    ] {
        let err = result.expect_err(what);
        assert!(
            err.to_string().starts_with("unusable JWT")
                || err.to_string().starts_with("unusable JWKS"),
            "{what}: {err}"
        );
    }
}

/// The unit level: the refusals as `AuthError`s, straight from the authenticator.
#[tokio::test]
async fn refusals_are_auth_errors() {
    let jwt = Jwt::hmac(SECRET).unwrap();
    let head = |auth: Option<String>| {
        let mut b = http::Request::get("/");
        if let Some(a) = auth {
            b = b.header("authorization", a);
        }
        b.body(()).unwrap().into_parts().0
    };
    assert_eq!(jwt.authenticate(&head(None)).await, Err(AuthError::Missing));
    let ok = jwt
        .authenticate(&head(Some(format!("bearer {}", hs(&claims("dave"))))))
        .await
        .unwrap();
    assert_eq!(ok.subject, "dave");
    assert_eq!(ok.claims["iss"], ISS);
    let mut c = claims("dave");
    c["exp"] = json!(now() - 30);
    let within_leeway = jwt
        .authenticate(&head(Some(format!("Bearer {}", hs(&c)))))
        .await;
    assert!(within_leeway.is_ok(), "60 s of leeway by default");
    let strict = Jwt::hmac(SECRET).unwrap().leeway(Duration::ZERO);
    assert_eq!(
        strict
            .authenticate(&head(Some(format!("Bearer {}", hs(&c)))))
            .await,
        Err(AuthError::Invalid("an expired token (exp)".into()))
    );
    assert_eq!(
        jwt.challenge_for(&AuthError::Invalid("x".into())),
        "Bearer realm=\"a2a\", error=\"invalid_token\""
    );
}

/// A JWKS server whose set can change (and fail), counting fetches.
#[derive(Clone)]
struct JwksServer {
    set: Arc<Mutex<Value>>,
    failing: Arc<std::sync::atomic::AtomicBool>,
    hits: Arc<AtomicUsize>,
    url: String,
}

impl JwksServer {
    async fn start(set: Value) -> JwksServer {
        let set = Arc::new(Mutex::new(set));
        let failing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hits = Arc::new(AtomicUsize::new(0));
        let (s, f, h) = (set.clone(), failing.clone(), hits.clone());
        let app = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let (s, f, h) = (s.clone(), f.clone(), h.clone());
                async move {
                    h.fetch_add(1, Ordering::SeqCst);
                    if f.load(Ordering::SeqCst) {
                        return Err(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                    }
                    Ok(axum::Json(s.lock().unwrap().clone()))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        JwksServer {
            set,
            failing,
            hits,
            url,
        }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The public JWK of a private key PEM, with `kid`.
fn jwk(alg: Algorithm, key: &EncodingKey, kid: &str) -> Value {
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(key, alg).unwrap();
    jwk.common.key_id = Some(kid.into());
    serde_json::to_value(jwk).unwrap()
}

#[tokio::test]
async fn a_jwks_url_is_cached_refetched_for_new_kids_at_most_once_per_cooldown() {
    let (logs, _guard) = capture_logs();
    let rsa2 = EncodingKey::from_rsa_pem(RSA2_PRIVATE.as_bytes()).unwrap();
    let ec = EncodingKey::from_ec_pem(EC_PRIVATE.as_bytes()).unwrap();
    let jwks = JwksServer::start(json!({"keys": [
        jwk(Algorithm::RS256, &rsa_key(), "k1"),
        jwk(Algorithm::ES256, &ec, "e1"),
    ]}))
    .await;
    let cooldown = Duration::from_secs(2);
    let jwt = Jwt::jwks_url(&jwks.url)
        .unwrap()
        .issuer(ISS)
        .refetch_cooldown(cooldown)
        .jwks_ttl(Duration::from_secs(3600));
    let s = serve(AgentService::builder(WhoAmI).authenticate(jwt)).await;
    let k1 = sign(Algorithm::RS256, &rsa_key(), Some("k1"), &claims("erin"));
    let e1 = sign(Algorithm::ES256, &ec, Some("e1"), &claims("erin"));
    let k2 = sign(Algorithm::RS256, &rsa2, Some("k2"), &claims("erin"));
    for rest in [false, true] {
        assert!(whoami(&s.base, &k1, rest).await.starts_with("erin|"));
        assert!(whoami(&s.base, &e1, rest).await.starts_with("erin|"));
    }
    assert_eq!(jwks.hits(), 1, "fetched once, then cached");

    // A kid the set lacks: refused; within the cooldown, no refetch.
    assert_refused(
        &s.base,
        Some(&k2),
        "a token whose `kid` is not in the JWKS",
        &logs,
    )
    .await;
    assert_eq!(jwks.hits(), 1, "no refetch within the cooldown");
    // After it, one refetch however many unknown kids arrive.
    tokio::time::sleep(cooldown + Duration::from_millis(100)).await;
    assert_refused(
        &s.base,
        Some(&k2),
        "a token whose `kid` is not in the JWKS",
        &logs,
    )
    .await;
    assert_eq!(jwks.hits(), 2, "one refetch for both bindings' requests");

    // A key rotated in: seen at the first refetch the cooldown allows.
    jwks.set
        .lock()
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert("keys".into(), json!([jwk(Algorithm::RS256, &rsa2, "k2")]));
    tokio::time::sleep(cooldown + Duration::from_millis(100)).await;
    assert!(whoami(&s.base, &k2, false).await.starts_with("erin|"));
    assert_eq!(jwks.hits(), 3);
    assert!(logs.text().contains("fetched the JWKS"), "{}", logs.text());
    // k1 rotated out: refused (the refetch it asks for is within the cooldown).
    assert_refused(
        &s.base,
        Some(&k1),
        "a token whose `kid` is not in the JWKS",
        &logs,
    )
    .await;

    // A failing JWKS server: the cached keys keep serving, the failure is logged.
    jwks.failing.store(true, Ordering::SeqCst);
    tokio::time::sleep(cooldown + Duration::from_millis(100)).await;
    assert_refused(
        &s.base,
        Some(&e1),
        "a token whose `kid` is not in the JWKS",
        &logs,
    )
    .await;
    assert!(
        logs.text().contains("could not fetch the JWKS"),
        "{}",
        logs.text()
    );
    assert!(
        whoami(&s.base, &k2, true).await.starts_with("erin|"),
        "cached keys still serve"
    );
}

#[tokio::test]
async fn a_jwks_refreshes_after_its_ttl_and_a_down_provider_refuses_without_500() {
    let (logs, _guard) = capture_logs();
    let jwks = JwksServer::start(json!({"keys": [jwk(Algorithm::RS256, &rsa_key(), "k1")]})).await;
    jwks.failing.store(true, Ordering::SeqCst);
    let jwt = Jwt::jwks_url(&jwks.url)
        .unwrap()
        .refetch_cooldown(Duration::from_millis(200))
        .jwks_ttl(Duration::from_millis(300));
    let s = serve(AgentService::builder(WhoAmI).authenticate(jwt)).await;
    let k1 = sign(Algorithm::RS256, &rsa_key(), Some("k1"), &claims("frank"));
    // Never fetched: refused (401, not 500).
    assert_refused(&s.base, Some(&k1), "no JWKS keys yet", &logs).await;
    assert!(logs.text().contains("could not fetch the JWKS"));
    jwks.failing.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(whoami(&s.base, &k1, false).await.starts_with("frank|"));
    let hits = jwks.hits();
    // After the TTL, a request renews the set beside it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(whoami(&s.base, &k1, true).await.starts_with("frank|"));
    for _ in 0..50 {
        if jwks.hits() > hits {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(jwks.hits(), hits + 1, "renewed after the TTL");
}

#[tokio::test]
async fn a_jwks_document_in_configuration_picks_keys_by_kid() {
    let ec = EncodingKey::from_ec_pem(EC_PRIVATE.as_bytes()).unwrap();
    let doc = json!({"keys": [
        jwk(Algorithm::RS256, &rsa_key(), "r"),
        jwk(Algorithm::ES256, &ec, "e"),
        // Skipped: an encryption key, a curve we do not verify.
        {"kty": "RSA", "use": "enc", "kid": "x", "n": "AQAB", "e": "AQAB"},
        {"kty": "EC", "crv": "P-521", "kid": "y", "x": "AA", "y": "AA"},
    ]});
    let jwt = Jwt::jwks_json(&doc.to_string()).unwrap();
    let s = serve(AgentService::builder(WhoAmI).authenticate(jwt)).await;
    let (logs, _guard) = capture_logs();
    assert!(
        whoami(
            &s.base,
            &sign(Algorithm::RS256, &rsa_key(), Some("r"), &claims("gil")),
            false
        )
        .await
        .starts_with("gil|")
    );
    assert!(
        whoami(
            &s.base,
            &sign(Algorithm::ES256, &ec, Some("e"), &claims("gil")),
            true
        )
        .await
        .starts_with("gil|")
    );
    // The key named "e" is an EC key: an RS256 token naming it is refused.
    let wrong = sign(Algorithm::RS256, &rsa_key(), Some("e"), &claims("gil"));
    assert_refused(
        &s.base,
        Some(&wrong),
        "a RS256 token for a key that takes only [ES256]",
        &logs,
    )
    .await;
    let unknown = sign(Algorithm::RS256, &rsa_key(), Some("zzz"), &claims("gil"));
    assert_refused(&s.base, Some(&unknown), "`kid` is not in the JWKS", &logs).await;
}

#[tokio::test]
async fn any_of_takes_api_keys_and_jwts() {
    let (logs, _guard) = capture_logs();
    let auth = AnyOf::new(ApiKeys::header("X-API-Key").key("ops-key", "ops"))
        .or(Jwt::hmac(SECRET).unwrap().issuer(ISS));
    let s = serve(AgentService::builder(WhoAmI).authenticate(auth)).await;
    for rest in [false, true] {
        assert!(
            whoami(&s.base, &hs(&claims("alice")), rest)
                .await
                .starts_with("alice|")
        );
        let url = if rest {
            format!("{}/tasks", s.base)
        } else {
            s.base.clone()
        };
        let req = if rest {
            client().get(url)
        } else {
            client()
                .post(url)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        };
        let resp = req
            .header("A2A-Version", "1.0")
            .header("X-API-Key", "ops-key")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "rest {rest}");
        // Nothing: both challenges, no error code.
        let resp = send_with_token(&s.base, None, rest).await;
        assert_eq!(resp.status(), 401);
        assert_eq!(
            resp.headers()["www-authenticate"],
            "ApiKey realm=\"a2a\", header=\"X-API-Key\", Bearer realm=\"a2a\""
        );
        // A bad token: its reason.
        let mut c = claims("alice");
        c["iss"] = json!("https://evil.test/");
        let resp = send_with_token(&s.base, Some(&hs(&c)), rest).await;
        assert_eq!(resp.status(), 401);
        assert_eq!(
            resp.headers()["www-authenticate"],
            "ApiKey realm=\"a2a\", header=\"X-API-Key\", Bearer realm=\"a2a\", error=\"invalid_token\""
        );
        assert!(logs.text().contains("a token from another issuer"));
    }
    let card: Value = a2a_tests::public_card(&s.base).await;
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"apiKey": {}}}, {"schemes": {"bearer": {}}}]),
        "{card}"
    );
}

#[tokio::test]
async fn the_client_asks_its_token_provider_before_every_request() {
    let s = serve(AgentService::builder(WhoAmI).authenticate(Jwt::hmac(SECRET).unwrap())).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let provider = move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            // Each token differs (a refreshed one): its subject says which it was.
            Ok::<_, ClientError>(hs(&claims(&format!("user-{n}"))))
        }
    };
    let client = A2aClient::builder()
        .bearer_token_provider(provider)
        .connect(&s.base)
        .await
        .expect("connects");
    let before = asked.load(Ordering::SeqCst);
    for _ in 0..2 {
        let err = client.get_task("nope").await.expect_err("no such task");
        assert_eq!(
            err.code(),
            Some(-32001),
            "authenticated, then not found: {err}"
        );
    }
    let after = asked.load(Ordering::SeqCst);
    assert_eq!(after - before, 2, "one token per request");

    // A provider that fails aborts the call before anything is sent.
    let failing = A2aClient::builder()
        .bearer_token_provider(|| async {
            Err::<String, _>(ClientError::Interceptor("token endpoint down".into()))
        })
        .connect(&s.base)
        .await;
    let err = failing.expect_err("the card fetch carries credentials too");
    assert!(err.to_string().contains("token endpoint down"), "{err}");
}
