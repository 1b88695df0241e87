//! The public half: the keys a client or a webhook trusts, and the checks of a signature.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

use crate::protocol::{AgentCard, AgentCardSignature};

use super::*;

#[derive(Clone)]
pub(super) struct TrustedKey {
    /// `None` for a key without an id (a bare PEM): tried for any signature whose `alg` fits.
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

/// The public keys a client or webhook trusts, each pinned to one algorithm. Cheap to clone.
///
/// A key with a `kid` (from a JWK or JWKS) verifies only signatures naming that `kid`; a bare
/// PEM key has none and is tried for every signature whose `alg` fits it. Keys come only from
/// the application (files, JSON, a JWKS URL it names): a signature's own `jku` is never
/// followed.
#[derive(Clone, Default)]
pub struct Verifier {
    keys: Vec<TrustedKey>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| {
                format!(
                    "{} {}",
                    k.kid.as_deref().unwrap_or("(no kid)"),
                    alg_name(k.alg)
                )
            })
            .collect();
        f.debug_struct("Verifier").field("keys", &keys).finish()
    }
}

/// A signature that verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    /// The key id the signature names (empty when it names none and a bare PEM key matched).
    pub kid: String,
    /// The signature's protected header (`alg`, `kid`, and for deliveries `iat`, `jti`).
    pub header: Map<String, Value>,
}

impl Verifier {
    /// A verifier trusting no key yet (it refuses everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// How many keys it trusts.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether it trusts no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Trust a public key in PEM (`-----BEGIN PUBLIC KEY-----`: EC P-256/P-384, Ed25519 or
    /// RSA). A PEM names no key id, so it is tried for every signature its algorithm fits.
    pub fn trust_pem(mut self, pem: impl AsRef<[u8]>) -> Result<Self, KeyError> {
        let pem = pem.as_ref();
        let (alg, key) = if let Ok(key) = DecodingKey::from_ec_pem(pem) {
            match key.as_bytes().len() {
                65 => (Algorithm::ES256, key),
                97 => (Algorithm::ES384, key),
                _ => return Err(KeyError::new("unsupported elliptic curve")),
            }
        } else if let Ok(key) = DecodingKey::from_ed_pem(pem) {
            (Algorithm::EdDSA, key)
        } else if let Ok(key) = DecodingKey::from_rsa_pem(pem) {
            (Algorithm::RS256, key)
        } else {
            return Err(KeyError::new(
                "not a PEM public key (EC P-256/P-384, Ed25519 or RSA)",
            ));
        };
        self.keys.push(TrustedKey {
            kid: None,
            alg,
            key,
        });
        Ok(self)
    }

    /// Trust a public JWK (its `kid` and `alg` are used; without `alg`, the key type's).
    pub fn trust_jwk(mut self, jwk: &str) -> Result<Self, KeyError> {
        let v: Value = serde_json::from_str(jwk).map_err(|e| KeyError::new(format!("JWK: {e}")))?;
        self.keys.push(public_jwk(&v)?);
        Ok(self)
    }

    /// Trust the signing keys of a JWKS (`{"keys": [...]}`); keys that are not for signing
    /// (`use: enc`, symmetric ones) are skipped. A JWKS without one usable key is an error.
    pub fn trust_jwks(mut self, jwks: &str) -> Result<Self, KeyError> {
        let v: Value =
            serde_json::from_str(jwks).map_err(|e| KeyError::new(format!("JWKS: {e}")))?;
        let keys = v
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| KeyError::new("the JWKS has no `keys` array"))?;
        let before = self.keys.len();
        for k in keys {
            if k.get("use")
                .and_then(Value::as_str)
                .is_some_and(|u| u != "sig")
            {
                continue;
            }
            if let Ok(key) = public_jwk(k) {
                self.keys.push(key);
            }
        }
        if self.keys.len() == before {
            return Err(KeyError::new("the JWKS has no usable signing key"));
        }
        Ok(self)
    }

    /// Trust a key document of any of the three kinds: PEM, a JWK, or a JWKS (the file a
    /// command line names).
    pub fn trust(self, document: &[u8]) -> Result<Self, KeyError> {
        let text = std::str::from_utf8(document)
            .map_err(|_| KeyError::new("the key document is not text"))?
            .trim();
        if text.starts_with("-----BEGIN") {
            return self.trust_pem(text);
        }
        let v: Value = serde_json::from_str(text)
            .map_err(|e| KeyError::new(format!("neither PEM nor JSON: {e}")))?;
        if v.get("keys").is_some() {
            self.trust_jwks(text)
        } else {
            self.trust_jwk(text)
        }
    }

    /// Trust a signer's public key (same process: tests, an agent that calls itself).
    pub fn trust_signer(mut self, signer: &Signer) -> Self {
        if let Ok(key) = public_jwk(&signer.public_jwk()) {
            self.keys.push(key);
        }
        self
    }

    /// Fetch a JWKS the application names (`https://...`, e.g. an agent's [`JWKS_PATH`]) and
    /// trust its signing keys (a document of at most 1 MiB, read as the JWT authenticator
    /// reads one). Fetched once, here: keep the verifier, or fetch again to
    /// follow a rotation.
    #[cfg(feature = "client")]
    pub async fn fetch_jwks(self, url: &str) -> Result<Self, KeyError> {
        let fail = |e: String| KeyError::new(format!("JWKS at {url}: {e}"));
        let url_parsed = reqwest::Url::parse(url).map_err(|e| fail(e.to_string()))?;
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let body = crate::auth::read_jwks(&http, url_parsed)
            .await
            .map_err(fail)?;
        let body = String::from_utf8(body).map_err(|_| fail("not UTF-8".into()))?;
        self.trust_jwks(&body).map_err(|e| fail(e.0))
    }

    /// Verify a detached compact JWS (`<protected>..<signature>`, or with the payload
    /// embedded, which must then be `payload`) over `payload`.
    pub fn verify_detached(&self, jws: &str, payload: &[u8]) -> Result<Verified, VerifyError> {
        let mut parts = jws.trim().split('.');
        let (Some(protected), Some(embedded), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(VerifyError::Malformed(
                "a compact JWS has three parts separated by dots".into(),
            ));
        };
        if !embedded.is_empty() && embedded != B64.encode(payload) {
            return Err(VerifyError::Malformed(
                "the embedded payload is not the delivered one".into(),
            ));
        }
        self.verify_parts(protected, signature, payload)
    }

    /// Verify a card: at least one of its signatures must verify against a trusted key over
    /// [`card_payload`]. Returns the `kid` of the key that verified it.
    pub fn verify_card(&self, card: &AgentCard) -> Result<String, VerifyError> {
        let payload = card_payload(card);
        self.verify_signatures(&card.signatures, &[payload])
    }

    /// Verify a card document as received (JSON): its signatures cover the document without
    /// `signatures`, unknown fields included, or, for a card that also carries the fields an
    /// A2A 0.3 client reads ([`hybrid_card`](crate::v03::hybrid_card)), the document without
    /// those. A document that also carries fields at their
    /// default values (which the spec's payload preparation drops) verifies against its
    /// typed form too. Returns the `kid` of the key that verified it.
    pub fn verify_card_json(&self, card: &Value) -> Result<String, VerifyError> {
        let signatures: Vec<AgentCardSignature> = match card.get("signatures") {
            None | Some(Value::Null) => Vec::new(),
            Some(s) => serde_json::from_value(s.clone())
                .map_err(|e| VerifyError::Malformed(format!("`signatures`: {e}")))?,
        };
        let mut payloads = vec![card_json_payload(card)];
        // A card served to both A2A 1.0 and 0.3 clients carries 0.3's fields beside its own;
        // its signatures cover the 1.0 card (what a 1.0 reader acts on).
        if let Some(v1) = crate::v03::without_v03_members(card) {
            payloads.push(card_json_payload(&v1));
        }
        if let Ok(typed) = serde_json::from_value::<AgentCard>(card.clone()) {
            // Only when the typed form drops nothing but defaults: an unknown field is
            // always covered.
            let typed_value = serde_json::to_value(&typed).unwrap_or(Value::Null);
            if only_defaults_dropped(card, &typed_value) {
                let p = card_payload(&typed);
                if p != payloads[0] {
                    payloads.push(p);
                }
            }
        }
        self.verify_signatures(&signatures, &payloads)
    }

    fn verify_signatures(
        &self,
        signatures: &[AgentCardSignature],
        payloads: &[Vec<u8>],
    ) -> Result<String, VerifyError> {
        let mut worst = VerifyError::NoSignature;
        for s in signatures {
            for payload in payloads {
                match self.verify_parts(&s.protected, &s.signature, payload) {
                    Ok(v) => return Ok(v.kid),
                    Err(e) if e.rank() >= worst.rank() => worst = e,
                    Err(_) => {}
                }
            }
        }
        Err(worst)
    }

    fn verify_parts(
        &self,
        protected: &str,
        signature: &str,
        payload: &[u8],
    ) -> Result<Verified, VerifyError> {
        let header_bytes = B64
            .decode(protected.trim_end_matches('='))
            .map_err(|_| VerifyError::Malformed("the protected header is not base64url".into()))?;
        let header: Map<String, Value> = serde_json::from_slice(&header_bytes).map_err(|_| {
            VerifyError::Malformed("the protected header is not a JSON object".into())
        })?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .ok_or_else(|| VerifyError::Malformed("the protected header has no `alg`".into()))?;
        let kid = header
            .get("kid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if header.contains_key("crit") {
            return Err(VerifyError::Malformed(
                "the protected header has `crit` extensions this verifier does not know".into(),
            ));
        }
        if alg.eq_ignore_ascii_case("none") {
            return Err(VerifyError::AlgNotAllowed {
                alg: alg.to_string(),
                kid,
                expected: None,
            });
        }
        let candidates: Vec<&TrustedKey> = self
            .keys
            .iter()
            .filter(|k| k.kid.as_deref().is_none_or(|id| id == kid))
            .collect();
        let named: Vec<&&TrustedKey> = candidates.iter().filter(|k| k.kid.is_some()).collect();
        if candidates.is_empty() {
            return Err(VerifyError::UnknownKid(kid));
        }
        let fitting: Vec<&&TrustedKey> = candidates
            .iter()
            .filter(|k| alg_name(k.alg) == alg)
            .collect();
        if fitting.is_empty() {
            return Err(match named.first() {
                Some(k) => VerifyError::AlgNotAllowed {
                    alg: alg.to_string(),
                    kid,
                    expected: Some(alg_name(k.alg).to_string()),
                },
                // Only kid-less keys, none for this alg: nothing trusted signs like that.
                None if !kid.is_empty() => VerifyError::UnknownKid(kid),
                None => VerifyError::AlgNotAllowed {
                    alg: alg.to_string(),
                    kid,
                    expected: None,
                },
            });
        }
        let input = format!(
            "{}.{}",
            protected.trim_end_matches('='),
            B64.encode(payload)
        );
        let signature = signature.trim_end_matches('=');
        for k in fitting {
            if let Ok(true) =
                jsonwebtoken::crypto::verify(signature, input.as_bytes(), &k.key, k.alg)
            {
                return Ok(Verified { kid, header });
            }
        }
        Err(VerifyError::BadSignature { kid })
    }
}

/// Whether `typed` (a document re-serialized through the card type) lacks only members of
/// `raw` that hold a default value (`null`, `false`, `0`, `""`, `[]`, `{}`).
pub(super) fn only_defaults_dropped(raw: &Value, typed: &Value) -> bool {
    fn is_default(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
        }
    }
    match (raw, typed) {
        (Value::Object(r), Value::Object(t)) => r.iter().all(|(k, v)| match t.get(k) {
            Some(tv) => only_defaults_dropped(v, tv),
            None => k == "signatures" || is_default(v),
        }),
        (Value::Array(r), Value::Array(t)) => {
            r.len() == t.len() && r.iter().zip(t).all(|(a, b)| only_defaults_dropped(a, b))
        }
        _ => true,
    }
}

/// A trusted key from a public JWK.
pub(super) fn public_jwk(v: &Value) -> Result<TrustedKey, KeyError> {
    let str_of = |name: &str| v.get(name).and_then(Value::as_str);
    let need =
        |name: &str| str_of(name).ok_or_else(|| KeyError::new(format!("the JWK has no `{name}`")));
    let kid = str_of("kid").filter(|k| !k.is_empty()).map(str::to_string);
    let bad = |e: jsonwebtoken::errors::Error| KeyError::new(format!("JWK: {e}"));
    let (alg, key) = match (str_of("kty"), str_of("crv")) {
        (Some("EC"), Some("P-256")) => (
            Algorithm::ES256,
            DecodingKey::from_ec_components(need("x")?, need("y")?).map_err(bad)?,
        ),
        (Some("EC"), Some("P-384")) => (
            Algorithm::ES384,
            DecodingKey::from_ec_components(need("x")?, need("y")?).map_err(bad)?,
        ),
        (Some("OKP"), Some("Ed25519")) => (
            Algorithm::EdDSA,
            DecodingKey::from_ed_components(need("x")?).map_err(bad)?,
        ),
        (Some("RSA"), _) => (
            Algorithm::RS256,
            DecodingKey::from_rsa_components(need("n")?, need("e")?).map_err(bad)?,
        ),
        (kty, crv) => return Err(unsupported_jwk(kty, crv)),
    };
    let alg = jwk_alg(str_of("alg"), alg)?;
    Ok(TrustedKey { kid, alg, key })
}
