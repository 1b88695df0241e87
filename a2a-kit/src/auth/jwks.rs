//! JSON Web Key Sets (RFC 7517) for [`Jwt`](super::Jwt): parsing a set into verification keys,
//! each pinned to the algorithms its key type allows, and (with reqwest) a set fetched from a
//! URL, cached, and fetched again on an unknown `kid` or after its TTL, never more often than
//! a cooldown allows.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};

/// A key a token may be verified with, and the only algorithms it is used with.
#[derive(Clone)]
pub(super) struct VerifyKey {
    /// The JWKS `kid`; `None` for a key configured alone (used whatever the token's `kid`).
    pub kid: Option<String>,
    pub key: DecodingKey,
    pub algs: Vec<Algorithm>,
}

impl std::fmt::Debug for VerifyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyKey")
            .field("kid", &self.kid)
            .field("algs", &self.algs)
            .finish_non_exhaustive()
    }
}

/// The algorithms of a key family (HS*, RS*/PS*, ES*, EdDSA).
pub(super) fn family_algs(family: AlgorithmFamily) -> Vec<Algorithm> {
    family.algorithms().to_vec()
}

/// The keys of a JWKS document that can verify signatures; keys of other types, for
/// encryption, on unsupported curves, or whose `alg` contradicts their type are left out
/// (with the reason, for the log). Symmetric (`oct`) keys only when `secrets` is set: a set
/// fetched from a URL is public, so a secret in it is no secret.
pub(super) fn parse_jwks(
    json: &[u8],
    secrets: bool,
) -> Result<(Vec<VerifyKey>, Vec<String>), String> {
    #[derive(serde::Deserialize)]
    struct Set {
        keys: Vec<serde_json::Value>,
    }
    let set: Set = serde_json::from_slice(json)
        .map_err(|e| format!("not a JWKS (a JSON object with `keys`): {e}"))?;
    let mut keys = Vec::new();
    let mut skipped = Vec::new();
    for (i, value) in set.keys.into_iter().enumerate() {
        let kid = value
            .get("kid")
            .and_then(|k| k.as_str())
            .map_or_else(|| format!("#{i}"), |k| format!("`{k}`"));
        match key_of(value, secrets) {
            Ok(key) => keys.push(key),
            Err(why) => skipped.push(format!("key {kid}: {why}")),
        }
    }
    Ok((keys, skipped))
}

fn key_of(value: serde_json::Value, secrets: bool) -> Result<VerifyKey, String> {
    let jwk: Jwk = serde_json::from_value(value).map_err(|e| format!("not a usable JWK: {e}"))?;
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return Err("not a signature key (`use`)".into());
    }
    if let Some(ops) = &jwk.common.key_operations
        && !ops.contains(&KeyOperations::Verify)
    {
        return Err("not a verification key (`key_ops`)".into());
    }
    let algs = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => family_algs(AlgorithmFamily::Rsa),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return Err(format!("an EC key on an unsupported curve ({:?})", p.curve)),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
            _ => {
                return Err(format!(
                    "an OKP key on an unsupported curve ({:?})",
                    p.curve
                ));
            }
        },
        AlgorithmParameters::OctetKey(_) if secrets => family_algs(AlgorithmFamily::Hmac),
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric key in a published set (ignored)".into());
        }
    };
    let algs = match jwk.common.key_algorithm {
        None => algs,
        Some(alg) => {
            let alg: Algorithm = alg
                .to_string()
                .parse()
                .map_err(|_| format!("alg {alg} is not a signature algorithm"))?;
            if !algs.contains(&alg) {
                return Err(format!("alg {alg:?} does not fit the key's type"));
            }
            vec![alg]
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("not a valid key: {e}"))?;
    if key.family() == AlgorithmFamily::Ed && key.as_bytes().len() != 32 {
        return Err("an Ed25519 key that is not 32 bytes".into());
    }
    Ok(VerifyKey {
        kid: jwk.common.key_id,
        key,
        algs,
    })
}

#[cfg(any(feature = "client", feature = "push"))]
pub(super) use remote::RemoteJwks;
#[cfg(any(feature = "client", feature = "push"))]
pub(crate) use remote::read_jwks;

#[cfg(any(feature = "client", feature = "push"))]
mod remote {
    use std::sync::{Arc, RwLock};
    use std::time::{Duration, Instant};

    use super::{VerifyKey, parse_jwks};

    /// The largest JWKS document read.
    const MAX_JWKS_BYTES: usize = 1024 * 1024;

    /// GET a JWKS document at `url`: a success status, at most [`MAX_JWKS_BYTES`] read.
    pub(crate) async fn read_jwks(
        http: &reqwest::Client,
        url: reqwest::Url,
    ) -> Result<Vec<u8>, String> {
        let mut resp = http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !resp.status().is_success() {
            return Err(format!("HTTP {}", resp.status()));
        }
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err(format!("a JWKS over {MAX_JWKS_BYTES} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!("a JWKS over {MAX_JWKS_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// A JWKS fetched from a URL: the last good set, and when it was fetched (tried).
    pub(in crate::auth) struct RemoteJwks {
        pub url: reqwest::Url,
        http: reqwest::Client,
        keys: RwLock<Arc<[VerifyKey]>>,
        state: tokio::sync::Mutex<FetchState>,
    }

    #[derive(Default)]
    struct FetchState {
        /// The last fetch started (successful or not): the cooldown counts from it.
        last_attempt: Option<Instant>,
        /// The last successful fetch: the TTL counts from it.
        fetched_at: Option<Instant>,
    }

    impl std::fmt::Debug for RemoteJwks {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("RemoteJwks")
                .field("url", &self.url.as_str())
                .field("keys", &self.keys().len())
                .finish_non_exhaustive()
        }
    }

    impl RemoteJwks {
        pub fn new(url: reqwest::Url) -> Result<Self, String> {
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .connect_timeout(Duration::from_secs(5))
                .redirect(reqwest::redirect::Policy::limited(3))
                .build()
                .map_err(|e| format!("no HTTP client for the JWKS: {e}"))?;
            Ok(RemoteJwks {
                url,
                http,
                keys: RwLock::new(Arc::from(Vec::new())),
                state: tokio::sync::Mutex::new(FetchState::default()),
            })
        }

        /// The cached keys (empty before the first successful fetch).
        pub fn keys(&self) -> Arc<[VerifyKey]> {
            self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
        }

        /// Whether the cached set is older than `ttl` (or was never fetched); not while a
        /// fetch is under way.
        pub fn stale(&self, ttl: Duration) -> bool {
            self.state
                .try_lock()
                .is_ok_and(|state| state.fetched_at.is_none_or(|at| at.elapsed() >= ttl))
        }

        /// Fetch the set again unless a fetch started less than `cooldown` ago (then the
        /// keys that fetch left are the answer). A failure keeps the cached keys, and is
        /// logged.
        pub async fn refresh(&self, cooldown: Duration, why: &str) -> Arc<[VerifyKey]> {
            let mut state = self.state.lock().await;
            if state.last_attempt.is_some_and(|at| at.elapsed() < cooldown) {
                return self.keys();
            }
            state.last_attempt = Some(Instant::now());
            match self.fetch().await {
                Ok(keys) => {
                    tracing::info!(url = %self.url, keys = keys.len(), why, "fetched the JWKS");
                    *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::from(keys);
                    state.fetched_at = Some(Instant::now());
                }
                Err(error) => {
                    tracing::warn!(url = %self.url, %error, why, "could not fetch the JWKS; keeping the keys cached before");
                }
            }
            self.keys()
        }

        async fn fetch(&self) -> Result<Vec<VerifyKey>, String> {
            let body = read_jwks(&self.http, self.url.clone()).await?;
            let (keys, skipped) = parse_jwks(&body, false)?;
            for why in &skipped {
                tracing::debug!(url = %self.url, "JWKS {why}");
            }
            if keys.is_empty() {
                return Err(format!(
                    "a JWKS without a usable signature key ({})",
                    skipped.join("; ")
                ));
            }
            Ok(keys)
        }
    }
}
