//! Bearer JWTs (RFC 7519 in `Authorization: Bearer`, RFC 6750): [`Jwt`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::jwks::{VerifyKey, family_algs, parse_jwks};
use super::{AuthError, Authenticator, Caller};
use crate::protocol::{HttpAuthSecurityScheme, SecurityScheme};

/// The longest bearer token looked at: anything longer is refused before it is decoded (a
/// JWT is a few hundred bytes to a few KiB; a larger one is a mistake or an attack).
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Why a [`Jwt`] could not be configured: a key, a JWKS or a URL that cannot be used. Said
/// at start-up, so a bad key never turns into refused requests later.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// A key (PEM or secret) that is not what the constructor takes.
    #[error("unusable JWT key: {0}")]
    Key(String),
    /// A JWKS document without a usable key, or not a JWKS.
    #[error("unusable JWKS: {0}")]
    Jwks(String),
    /// A JWKS URL that is not an http(s) URL.
    #[error("unusable JWKS URL: {0}")]
    Url(String),
}

/// Where the verification keys come from.
#[derive(Clone, Debug)]
enum Keys {
    /// One configured key (no `kid` needed) or a JWKS given as JSON.
    Fixed(Arc<[VerifyKey]>),
    /// A JWKS fetched from a URL, cached.
    #[cfg(any(feature = "client", feature = "push"))]
    Remote(Arc<super::jwks::RemoteJwks>),
}

/// An [`Authenticator`] for `Authorization: Bearer <JWT>`: the token's signature is checked
/// with the configured key(s), then `exp` (required), `nbf`, and the issuer and audience
/// when configured; the [`Caller`] is its `sub`, its tenant claim (if configured) and its
/// scopes (`scope`, space-separated, or `scp`, an array or a string), with every claim in
/// [`Caller::claims`].
///
/// The algorithm is pinned by the key, never taken from the token alone: an HMAC secret
/// verifies only HS256/384/512, an RSA key RS*/PS*, a P-256 key ES256, a P-384 key ES384,
/// an Ed25519 key EdDSA. So `alg: none` and a token "signed" HS256 with an RSA public key as
/// the secret are refused. Tokens over [`MAX_TOKEN_BYTES`] are refused unread. Every refusal
/// is a 401 with `WWW-Authenticate: Bearer` (`error="invalid_token"` for a bad token), its
/// reason in the agent's log.
///
/// Without [`audience`](Self::audience), the `aud` claim is not checked: set it when the
/// issuer also issues tokens for other services.
///
/// ```
/// use a2a_kit::auth::Jwt;
/// # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), Box<dyn std::error::Error>> {
/// let jwt = Jwt::hmac("a-secret-of-at-least-32-bytes-long!")?
///     .issuer("https://login.example.com/")
///     .audience("travel-agent")
///     .tenant_claim("org");
/// let service = a2a_kit::server::AgentService::builder(agent).authenticate(jwt).build()?;
/// # let _ = service; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Jwt {
    keys: Keys,
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Duration,
    tenant_claim: Option<String>,
    jwks_ttl: Duration,
    refetch_cooldown: Duration,
    realm: String,
}

impl std::fmt::Debug for Jwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwt")
            .field("keys", &self.keys)
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences)
            .field("leeway", &self.leeway)
            .field("tenant_claim", &self.tenant_claim)
            .finish_non_exhaustive()
    }
}

/// The shortest HMAC secret taken: RFC 7518 §3.2 wants a key at least as long as the hash
/// (256 bits for HS256).
pub const MIN_HMAC_SECRET_BYTES: usize = 32;

/// The longest clock skew taken by [`Jwt::leeway`].
const MAX_LEEWAY: Duration = Duration::from_secs(24 * 3600);

impl Jwt {
    fn with_keys(keys: Keys) -> Self {
        Jwt {
            keys,
            issuers: Vec::new(),
            audiences: Vec::new(),
            leeway: Duration::from_secs(60),
            tenant_claim: None,
            jwks_ttl: Duration::from_secs(300),
            refetch_cooldown: Duration::from_secs(30),
            realm: "a2a".into(),
        }
    }

    fn single(key: DecodingKey, algs: Vec<Algorithm>) -> Self {
        Jwt::with_keys(Keys::Fixed(Arc::from(vec![VerifyKey {
            kid: None,
            key,
            algs,
        }])))
    }

    /// Tokens signed with a shared secret (HS256, HS384, HS512): for an agent and issuer
    /// that share one. The secret must be at least [`MIN_HMAC_SECRET_BYTES`] long.
    pub fn hmac(secret: impl AsRef<[u8]>) -> Result<Self, JwtError> {
        let secret = secret.as_ref();
        if secret.len() < MIN_HMAC_SECRET_BYTES {
            return Err(JwtError::Key(format!(
                "an HMAC secret of {} bytes (at least {MIN_HMAC_SECRET_BYTES})",
                secret.len()
            )));
        }
        Ok(Jwt::single(
            DecodingKey::from_secret(secret),
            family_algs(AlgorithmFamily::Hmac),
        ))
    }

    /// Tokens signed with an RSA key (RS256/384/512, PS256/384/512), given its public key
    /// PEM (`-----BEGIN PUBLIC KEY-----` or `BEGIN RSA PUBLIC KEY`).
    pub fn rsa_pem(pem: impl AsRef<[u8]>) -> Result<Self, JwtError> {
        let key = DecodingKey::from_rsa_pem(pem.as_ref())
            .map_err(|e| JwtError::Key(format!("not an RSA public key PEM: {e}")))?;
        Ok(Jwt::single(key, family_algs(AlgorithmFamily::Rsa)))
    }

    /// Tokens signed with an EC key, given its public key PEM: a P-256 key takes ES256, a
    /// P-384 key ES384.
    pub fn ec_pem(pem: impl AsRef<[u8]>) -> Result<Self, JwtError> {
        let key = DecodingKey::from_ec_pem(pem.as_ref())
            .map_err(|e| JwtError::Key(format!("not an EC public key PEM: {e}")))?;
        // The SEC1 point's length names the curve (uncompressed or compressed).
        let alg = match key.as_bytes().len() {
            65 | 33 => Algorithm::ES256,
            97 | 49 => Algorithm::ES384,
            n => {
                return Err(JwtError::Key(format!(
                    "an EC key of {n} bytes: only P-256 and P-384 are supported"
                )));
            }
        };
        Ok(Jwt::single(key, vec![alg]))
    }

    /// Tokens signed with an Ed25519 key (EdDSA), given its public key PEM.
    pub fn ed_pem(pem: impl AsRef<[u8]>) -> Result<Self, JwtError> {
        let key = DecodingKey::from_ed_pem(pem.as_ref())
            .map_err(|e| JwtError::Key(format!("not an Ed25519 public key PEM: {e}")))?;
        if key.as_bytes().len() != 32 {
            return Err(JwtError::Key("not an Ed25519 public key".into()));
        }
        Ok(Jwt::single(key, vec![Algorithm::EdDSA]))
    }

    /// Tokens signed with any signature key of a JWKS document (RFC 7517), chosen by the
    /// token's `kid`: for keys the issuer published, kept in configuration. Symmetric (`oct`)
    /// keys are taken here (the document is the operator's own); keys for encryption or on
    /// unsupported curves are left out. An error when no key is usable.
    pub fn jwks_json(json: &str) -> Result<Self, JwtError> {
        let (keys, skipped) = parse_jwks(json.as_bytes(), true).map_err(JwtError::Jwks)?;
        if keys.is_empty() {
            return Err(JwtError::Jwks(format!(
                "no usable signature key ({})",
                skipped.join("; ")
            )));
        }
        for why in skipped {
            tracing::debug!("JWKS {why}");
        }
        Ok(Jwt::with_keys(Keys::Fixed(Arc::from(keys))))
    }

    /// Tokens signed with a key of the JWKS at `url` (an identity provider's `jwks_uri`),
    /// fetched on first use and cached: fetched again when a token names a `kid` the cache
    /// lacks (key rotation) and after [`jwks_ttl`](Self::jwks_ttl), but at most once per
    /// [`refetch_cooldown`](Self::refetch_cooldown), so unknown `kid`s cannot make the agent
    /// hammer the provider. A failed fetch keeps the cached keys and is logged. Published
    /// symmetric keys are ignored. Needs the `client` or `push` feature (reqwest).
    #[cfg(any(feature = "client", feature = "push"))]
    pub fn jwks_url(url: &str) -> Result<Self, JwtError> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| JwtError::Url(format!("`{url}`: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(JwtError::Url(format!("`{url}` is not an http(s) URL")));
        }
        let remote = super::jwks::RemoteJwks::new(parsed).map_err(JwtError::Url)?;
        Ok(Jwt::with_keys(Keys::Remote(Arc::new(remote))))
    }

    /// Accept tokens whose `iss` is `issuer` (repeatable: any of them). Once set, a token
    /// without `iss` is refused.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Accept tokens whose `aud` names `audience` (repeatable: any of them). Once set, a
    /// token without `aud` is refused; unset, `aud` is not checked.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 60 s, whole seconds, at most a
    /// day).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// The claim naming the caller's tenant ([`Caller::tenant`]), e.g. `"tid"` or `"org"`;
    /// a string claim (a token without it has no tenant).
    pub fn tenant_claim(mut self, name: impl Into<String>) -> Self {
        self.tenant_claim = Some(name.into());
        self
    }

    /// How long a fetched JWKS is used before it is fetched again (default 5 minutes; the
    /// old keys serve meanwhile, and if the fetch fails).
    pub fn jwks_ttl(mut self, ttl: Duration) -> Self {
        self.jwks_ttl = ttl;
        self
    }

    /// The least time between two fetches of the JWKS (default 30 s): how soon a rotated-in
    /// key can be seen, and how often tokens with unknown `kid`s can make the agent fetch.
    pub fn refetch_cooldown(mut self, cooldown: Duration) -> Self {
        self.refetch_cooldown = cooldown;
        self
    }

    /// The realm in `WWW-Authenticate` (default `a2a`).
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = realm.into().replace(['"', '\\'], "");
        self
    }

    /// A short description for logs: the key source, issuers and audiences (no secrets).
    pub fn describe(&self) -> String {
        let source = match &self.keys {
            Keys::Fixed(keys) => match keys.first() {
                Some(k) if keys.len() == 1 && k.kid.is_none() => match k.key.family() {
                    AlgorithmFamily::Hmac => "an HMAC secret".to_string(),
                    AlgorithmFamily::Rsa => "an RSA key".to_string(),
                    AlgorithmFamily::Ec => format!("an EC key ({:?})", k.algs[0]),
                    AlgorithmFamily::Ed => "an Ed25519 key".to_string(),
                },
                _ => format!("a JWKS of {} keys", keys.len()),
            },
            #[cfg(any(feature = "client", feature = "push"))]
            Keys::Remote(r) => format!("the JWKS at {}", r.url),
        };
        let mut out = format!("bearer JWT signed with {source}");
        if !self.issuers.is_empty() {
            out.push_str(&format!(", issuer {}", self.issuers.join(" or ")));
        }
        if !self.audiences.is_empty() {
            out.push_str(&format!(", audience {}", self.audiences.join(" or ")));
        }
        out
    }

    /// The key to verify a token of `alg` and `kid` with.
    async fn key_for(&self, alg: Algorithm, kid: Option<&str>) -> Result<VerifyKey, AuthError> {
        match &self.keys {
            Keys::Fixed(keys) => select(keys, alg, kid),
            #[cfg(any(feature = "client", feature = "push"))]
            Keys::Remote(remote) => {
                let mut keys = remote.keys();
                if keys.is_empty() {
                    keys = remote.refresh(self.refetch_cooldown, "first use").await;
                } else if remote.stale(self.jwks_ttl) {
                    // The cached keys answer this request; the set is renewed beside it.
                    let (remote, cooldown) = (remote.clone(), self.refetch_cooldown);
                    tokio::spawn(async move { remote.refresh(cooldown, "TTL").await });
                }
                if keys.is_empty() {
                    return Err(invalid("no JWKS keys yet (the JWKS could not be fetched)"));
                }
                let known = |keys: &[VerifyKey]| {
                    kid.is_none_or(|kid| keys.iter().any(|k| k.kid.as_deref() == Some(kid)))
                };
                if !known(&keys) {
                    // Perhaps a key rotated in since the set was fetched.
                    keys = remote.refresh(self.refetch_cooldown, "unknown kid").await;
                }
                select(&keys, alg, kid)
            }
        }
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut v = Validation::new(alg);
        v.leeway = self.leeway.as_secs();
        v.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        if !self.issuers.is_empty() {
            v.set_issuer(&self.issuers);
            required.push("iss");
        }
        if self.audiences.is_empty() {
            v.validate_aud = false;
        } else {
            v.set_audience(&self.audiences);
            required.push("aud");
        }
        v.set_required_spec_claims(&required);
        v
    }

    fn caller(&self, claims: Map<String, Value>) -> Result<Caller, AuthError> {
        let subject = match claims.get("sub") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(invalid("a token without a subject (`sub`)")),
        };
        let tenant = match &self.tenant_claim {
            None => None,
            Some(name) => match claims.get(name) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => {
                    return Err(AuthError::Invalid(format!(
                        "a token whose tenant claim `{name}` is not a string"
                    )));
                }
            },
        };
        let scopes = scopes(&claims);
        Ok(Caller {
            subject,
            tenant,
            scopes,
            claims,
        })
    }
}

/// The key for a token: a single configured key whatever its `kid`; else the key named by
/// `kid`; without a `kid`, the one key that takes `alg`. The key must take `alg`.
fn select(keys: &[VerifyKey], alg: Algorithm, kid: Option<&str>) -> Result<VerifyKey, AuthError> {
    let key = match (keys, kid) {
        ([only], _) if only.kid.is_none() => only,
        (_, Some(kid)) => match keys.iter().find(|k| k.kid.as_deref() == Some(kid)) {
            Some(k) => k,
            None => return Err(invalid("a token whose `kid` is not in the JWKS")),
        },
        (_, None) => {
            let mut fits = keys.iter().filter(|k| k.algs.contains(&alg));
            match (fits.next(), fits.next()) {
                (Some(k), None) => k,
                (None, _) => {
                    return Err(AuthError::Invalid(format!(
                        "a {alg:?} token without `kid` and no key for {alg:?}"
                    )));
                }
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        "a token without `kid` and several keys it could be",
                    ));
                }
            }
        }
    };
    if !key.algs.contains(&alg) {
        return Err(AuthError::Invalid(format!(
            "a {alg:?} token for a key that takes only {:?}",
            key.algs
        )));
    }
    Ok(key.clone())
}

fn invalid(reason: &str) -> AuthError {
    AuthError::Invalid(reason.to_string())
}

/// The scopes of a token: `scope` (RFC 8693, space-separated) and `scp` (an array, or a
/// space-separated string), without duplicates, in order.
fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => s.split_whitespace().for_each(&mut add),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    out
}

/// The bearer token of a request: `Missing` without an `Authorization: Bearer` header.
fn bearer(request: &http::request::Parts) -> Result<&str, AuthError> {
    let mut found = None;
    for value in request.headers.get_all(http::header::AUTHORIZATION) {
        let bytes = value.as_bytes();
        let is_bearer = bytes.len() >= 7
            && bytes[..6].eq_ignore_ascii_case(b"bearer")
            && matches!(bytes[6], b' ' | b'\t');
        if !is_bearer {
            continue;
        }
        if found.is_some() {
            return Err(invalid("several bearer tokens"));
        }
        found = Some(value);
    }
    let Some(value) = found else {
        return Err(AuthError::Missing);
    };
    if value.len() > MAX_TOKEN_BYTES + 7 {
        return Err(AuthError::Invalid(format!(
            "a bearer token of {} bytes (at most {MAX_TOKEN_BYTES})",
            value.len() - 7
        )));
    }
    let token = value
        .to_str()
        .map_err(|_| invalid("a bearer token with bytes a JWT cannot hold"))?[7..]
        .trim();
    if token.is_empty() {
        return Err(invalid("an empty bearer token"));
    }
    Ok(token)
}

/// The algorithm and `kid` of a compact JWS, read without trusting it: a token that is not
/// three base64url parts, has no JSON header, says `alg: none` or an algorithm this crate
/// does not verify, or names critical extensions is refused here.
fn header(token: &str) -> Result<(Algorithm, Option<String>), AuthError> {
    let well_formed = token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let parts: Vec<&str> = token.split('.').collect();
    if !well_formed || parts.len() != 3 || parts[0].is_empty() {
        return Err(invalid(
            "a malformed token (not three base64url parts: not a signed JWT)",
        ));
    }
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[0])
        .map_err(|_| invalid("a malformed token (its header is not base64url)"))?;
    let head: Map<String, Value> = serde_json::from_slice(&json)
        .map_err(|_| invalid("a malformed token (its header is not a JSON object)"))?;
    let alg = match head.get("alg") {
        Some(Value::String(alg)) => alg.as_str(),
        _ => return Err(invalid("a token without `alg`")),
    };
    if alg.eq_ignore_ascii_case("none") {
        return Err(invalid("an unsigned token (alg none)"));
    }
    let alg: Algorithm = alg.parse().map_err(|_| {
        AuthError::Invalid(format!(
            "a token signed with unsupported alg `{}`",
            alg.chars().take(16).collect::<String>()
        ))
    })?;
    if parts[1].is_empty() || parts[2].is_empty() {
        return Err(invalid("a malformed token (no payload or no signature)"));
    }
    if head.contains_key("crit") {
        return Err(invalid("a token with critical header extensions (crit)"));
    }
    let kid = match head.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(invalid("a token whose `kid` is not a string")),
    };
    Ok((alg, kid))
}

/// The log's reason for a token jsonwebtoken refused.
fn reason(e: &jsonwebtoken::errors::Error) -> AuthError {
    use jsonwebtoken::errors::ErrorKind as K;
    AuthError::Invalid(match e.kind() {
        K::ExpiredSignature => "an expired token (exp)".into(),
        K::ImmatureSignature => "a token not valid yet (nbf)".into(),
        K::InvalidIssuer => "a token from another issuer (iss)".into(),
        K::InvalidAudience => "a token for another audience (aud)".into(),
        K::InvalidSignature => "a token whose signature does not verify".into(),
        K::MissingRequiredClaim(c) => format!("a token without the `{c}` claim"),
        K::InvalidClaimFormat(c) => format!("a token whose `{c}` claim is malformed"),
        K::InvalidAlgorithm => "a token whose alg does not fit the key".into(),
        K::InvalidEcdsaKey | K::InvalidEddsaKey | K::InvalidRsaKey(_) | K::InvalidKeyFormat => {
            format!("a token the configured key cannot verify ({e})")
        }
        _ => format!("a malformed token ({e})"),
    })
}

#[async_trait]
impl Authenticator for Jwt {
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Arc<Caller>, AuthError> {
        let token = bearer(request)?;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError::Invalid(format!(
                "a bearer token of {} bytes (at most {MAX_TOKEN_BYTES})",
                token.len()
            )));
        }
        let (alg, kid) = header(token)?;
        let key = self.key_for(alg, kid.as_deref()).await?;
        let validation = self.validation(alg);
        // A panic in a crypto backend (a key it did not expect) is a refusal, not a dropped
        // connection.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation)
        }))
        .map_err(|_| invalid("a token the key could not verify (the verifier panicked)"))?;
        let claims = decoded.map_err(|e| reason(&e))?.claims;
        self.caller(claims).map(Arc::new)
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let mut description = String::from("A JWT bearer token");
        if !self.issuers.is_empty() {
            description.push_str(&format!(" issued by {}", self.issuers.join(" or ")));
        }
        if !self.audiences.is_empty() {
            description.push_str(&format!(" for {}", self.audiences.join(" or ")));
        }
        description.push('.');
        BTreeMap::from([(
            "bearer".to_string(),
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description: Some(description),
                scheme: "Bearer".into(),
                bearer_format: Some("JWT".into()),
            }),
        )])
    }

    fn challenge(&self) -> String {
        format!("Bearer realm=\"{}\"", self.realm)
    }

    fn challenge_for(&self, error: &AuthError) -> String {
        match error {
            // RFC 6750 §3.1: no error code when the request carried no token.
            AuthError::Missing => self.challenge(),
            AuthError::Invalid(_) => format!("{}, error=\"invalid_token\"", self.challenge()),
            AuthError::Forbidden(_) => {
                format!("{}, error=\"insufficient_scope\"", self.challenge())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(auth: &[&str]) -> http::request::Parts {
        let mut b = http::Request::get("/");
        for a in auth {
            b = b.header("authorization", *a);
        }
        b.body(()).unwrap().into_parts().0
    }

    fn b64(json: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    #[test]
    fn bearer_tokens_are_found_once_or_refused() {
        assert_eq!(bearer(&head(&[])), Err(AuthError::Missing));
        assert_eq!(bearer(&head(&["Basic eDp5"])), Err(AuthError::Missing));
        assert_eq!(bearer(&head(&["bearer  a.b.c "])), Ok("a.b.c"));
        assert_eq!(bearer(&head(&["Basic eDp5", "Bearer t"])), Ok("t"));
        assert!(matches!(
            bearer(&head(&["Bearer a", "Bearer b"])),
            Err(AuthError::Invalid(_))
        ));
        assert!(matches!(
            bearer(&head(&["Bearer "])),
            Err(AuthError::Invalid(_))
        ));
    }

    #[test]
    fn headers_are_read_without_trust() {
        let token = |h: &str| format!("{}.e30.c2ln", b64(h));
        assert_eq!(
            header(&token(r#"{"alg":"ES256","kid":"k"}"#)).unwrap(),
            (Algorithm::ES256, Some("k".to_string()))
        );
        for (h, why) in [
            (r#"{"alg":"NONE"}"#, "alg none"),
            (r#"{"alg":"HS1"}"#, "unsupported alg"),
            (r#"{"typ":"JWT"}"#, "without `alg`"),
            (r#"{"alg":"HS256","crit":["b64"]}"#, "crit"),
            (r#"{"alg":"HS256","kid":7}"#, "`kid` is not a string"),
            ("[]", "not a JSON object"),
        ] {
            match header(&token(h)) {
                Err(AuthError::Invalid(r)) => assert!(r.contains(why), "{h}: {r}"),
                other => panic!("{h}: {other:?}"),
            }
        }
        assert!(header("a.b").is_err());
        assert!(header(&format!("{}.e30.", b64(r#"{"alg":"HS256"}"#))).is_err());
    }

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let claims = serde_json::json!({"scope": "a b  a", "scp": ["b", "c", 3]});
        assert_eq!(scopes(claims.as_object().unwrap()), ["a", "b", "c"]);
        let claims = serde_json::json!({"scp": "x y"});
        assert_eq!(scopes(claims.as_object().unwrap()), ["x", "y"]);
    }

    #[tokio::test]
    async fn any_of_prefers_an_acceptance_then_a_refusal_then_missing() {
        use crate::auth::{AnyOf, ApiKeys};
        let jwt = Jwt::hmac([7u8; 32]).unwrap();
        let auth = AnyOf::new(ApiKeys::header("X-Key").key("k", "key-user")).or(jwt);
        assert_eq!(auth.authenticate(&head(&[])).await, Err(AuthError::Missing));
        assert!(matches!(
            auth.authenticate(&head(&["Bearer x.y.z"])).await,
            Err(AuthError::Invalid(_))
        ));
        let mut parts = head(&["Bearer x.y.z"]);
        parts.headers.insert("x-key", "k".parse().unwrap());
        assert_eq!(auth.authenticate(&parts).await.unwrap().subject, "key-user");
        assert_eq!(
            auth.security_schemes().keys().collect::<Vec<_>>(),
            ["apiKey", "bearer"]
        );
        let twice = AnyOf::new(Jwt::hmac([1u8; 32]).unwrap().issuer("a"))
            .or(Jwt::hmac([2u8; 32]).unwrap().issuer("b"));
        assert_eq!(
            twice.security_schemes().keys().collect::<Vec<_>>(),
            ["bearer", "bearer-2"]
        );
    }
}
