//! Signed agent cards and signed webhooks: detached JWS (RFC 7515 appendix F) over the
//! RFC 8785 (JCS) canonical JSON of a card, or over the exact bytes of a push delivery.
//!
//! A [`Signer`] holds a private key (ES256, ES384, EdDSA or RS256, from PEM or JWK) and the
//! key id (`kid`) its signatures name; a [`Verifier`] holds the public keys a client or webhook
//! trusts (PEM, JWK, JWKS JSON, or a JWKS URL the application chooses). The algorithm is
//! pinned by each trusted key: a signature whose `alg` is not its key's (`none` above all) is
//! refused, never tried.
//!
//! ```
//! use a2a_kit::protocol::AgentCard;
//! use a2a_kit::signing::{Signer, Verifier};
//! # let pem = include_str!("../../tests/fixtures/signing/es256.pem");
//! let signer = Signer::from_pem(pem, "card-2025")?;
//! let mut card = AgentCard { name: "Travel".into(), ..Default::default() };
//! signer.sign_card(&mut card)?;
//! let verifier = Verifier::new().trust_jwk(&signer.public_jwk().to_string())?;
//! assert_eq!(verifier.verify_card(&card)?, "card-2025");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A card's signature covers the card as served, minus `signatures`: the server signs after
//! every card edit, and a verifier checks the JSON it received (unknown fields included), so
//! nothing on the card can change without breaking the signature.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Map, Value, json};

use crate::protocol::{AgentCard, AgentCardSignature};

/// The header a signed push delivery carries: a detached compact JWS
/// (`<protected>..<signature>`) over the exact body bytes, its protected header naming `alg`,
/// `kid`, `iat` (seconds since the epoch) and `jti` (a unique id).
pub const SIGNATURE_HEADER: &str = "X-A2A-Signature";

/// The well-known path the public signing keys are served at, as a JWKS (RFC 7517), so a
/// signature's `jku` can point there.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// A key could not be loaded or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("signing key: {0}")]
pub struct KeyError(pub String);

impl KeyError {
    fn new(msg: impl Into<String>) -> Self {
        KeyError(msg.into())
    }
}

/// Why a signature was not accepted. Each names what to fix (or what was wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The card (or delivery) carries no signature at all.
    #[error("no signature: the document is not signed")]
    NoSignature,
    /// No trusted key has the signature's `kid`.
    #[error("unknown key: no trusted key has kid `{0}`")]
    UnknownKid(String),
    /// A trusted key matched, and the signature does not verify with it: the document was
    /// changed after signing, or signed by another key with the same id.
    #[error("bad signature (kid `{kid}`): the document was changed or signed by another key")]
    BadSignature {
        /// The signature's key id.
        kid: String,
    },
    /// The signature's `alg` is not the one its key is pinned to (or is `none`, which is
    /// never accepted).
    #[error("alg `{alg}` is not allowed for key `{kid}`{}", expected.as_ref().map(|e| format!(" (it takes {e})")).unwrap_or_default())]
    AlgNotAllowed {
        /// The algorithm the signature names.
        alg: String,
        /// The signature's key id.
        kid: String,
        /// The algorithm the key is pinned to, when a key matched.
        expected: Option<String>,
    },
    /// The signature or its header cannot be read.
    #[error("malformed signature: {0}")]
    Malformed(String),
}

impl VerifyError {
    /// How telling an error is: with several signatures, the most telling is reported.
    fn rank(&self) -> u8 {
        match self {
            VerifyError::NoSignature => 0,
            VerifyError::Malformed(_) => 1,
            VerifyError::UnknownKid(_) => 2,
            VerifyError::AlgNotAllowed { .. } => 3,
            VerifyError::BadSignature { .. } => 4,
        }
    }
}

fn alg_name(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::EdDSA => "EdDSA",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
    }
}

/// The asymmetric algorithms a key may be pinned to (no HMAC: a shared secret published in a
/// JWKS would let anyone sign).
fn asymmetric_alg(name: &str) -> Option<Algorithm> {
    Some(match name {
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        _ => return None,
    })
}

/// The bytes a card's signatures cover: the RFC 8785 (JCS) canonical JSON of the card as it
/// serializes (defaults left out as the wire format leaves them out), without `signatures`.
pub fn card_payload(card: &AgentCard) -> Vec<u8> {
    let mut value = serde_json::to_value(card).unwrap_or(Value::Null);
    canonical_without_signatures(&mut value)
}

/// JCS of a card document received as JSON, without `signatures`; unknown fields are kept.
pub fn card_json_payload(card: &Value) -> Vec<u8> {
    canonical_without_signatures(&mut card.clone())
}

fn canonical_without_signatures(value: &mut Value) -> Vec<u8> {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("signatures");
    }
    serde_json_canonicalizer::to_vec(value).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Signer

/// A private signing key with the key id (`kid`) its signatures name, and optionally a `jku`
/// (the URL of the JWKS publishing its public key). Cheap to clone. Its `Debug` shows no key
/// material.
#[derive(Clone)]
pub struct Signer {
    kid: String,
    jku: Option<String>,
    alg: Algorithm,
    key: EncodingKey,
    public: Value,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("kid", &self.kid)
            .field("alg", &alg_name(self.alg))
            .field("jku", &self.jku)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// A signer from a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`, what
    /// `openssl genpkey` writes) or a PKCS#1 RSA one: P-256 signs ES256, P-384 ES384, Ed25519
    /// EdDSA, RSA RS256. Its signatures name `kid`.
    pub fn from_pem(pem: impl AsRef<[u8]>, kid: impl Into<String>) -> Result<Self, KeyError> {
        let pem = pem.as_ref();
        let kid = kid.into();
        if let Ok(key) = EncodingKey::from_ec_pem(pem) {
            for alg in [Algorithm::ES256, Algorithm::ES384] {
                if let Ok(jwk) = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, alg) {
                    let public = serde_json::to_value(&jwk).unwrap_or(Value::Null);
                    return Self::checked(kid, alg, key, public);
                }
            }
            return Err(KeyError::new(
                "unsupported elliptic curve (P-256 or P-384 only)",
            ));
        }
        if let Ok(key) = EncodingKey::from_ed_pem(pem) {
            use ed25519_dalek::pkcs8::DecodePrivateKey;
            let secret = ed25519_dalek::SigningKey::from_pkcs8_der(key.inner())
                .map_err(|e| KeyError::new(format!("Ed25519 key: {e}")))?;
            let x = B64.encode(secret.verifying_key().to_bytes());
            let public = json!({"kty": "OKP", "crv": "Ed25519", "x": x});
            return Self::checked(kid, Algorithm::EdDSA, key, public);
        }
        if let Ok(key) = EncodingKey::from_rsa_pem(pem) {
            let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, Algorithm::RS256)
                .map_err(|e| KeyError::new(format!("RSA key: {e}")))?;
            let public = serde_json::to_value(&jwk).unwrap_or(Value::Null);
            return Self::checked(kid, Algorithm::RS256, key, public);
        }
        Err(KeyError::new(
            "not a PEM private key (PKCS#8 EC P-256/P-384, Ed25519 or RSA)",
        ))
    }

    /// A signer from a private JWK (`EC` P-256/P-384, `OKP` Ed25519 or `RSA` with its CRT
    /// parameters); its `kid` is the JWK's (required), its algorithm the JWK's `alg` or the
    /// key type's.
    pub fn from_jwk(jwk: &str) -> Result<Self, KeyError> {
        let v: Value = serde_json::from_str(jwk).map_err(|e| KeyError::new(format!("JWK: {e}")))?;
        let str_of = |name: &str| v.get(name).and_then(Value::as_str);
        let bytes_of = |name: &str| -> Result<Vec<u8>, KeyError> {
            let s =
                str_of(name).ok_or_else(|| KeyError::new(format!("the JWK has no `{name}`")))?;
            B64.decode(s.trim_end_matches('='))
                .map_err(|_| KeyError::new(format!("the JWK's `{name}` is not base64url")))
        };
        let kid = str_of("kid")
            .filter(|k| !k.is_empty())
            .ok_or_else(|| KeyError::new("the JWK has no `kid`"))?
            .to_string();
        let der_err = |e: &dyn std::fmt::Display| KeyError::new(format!("the JWK's key: {e}"));
        let (alg, key) = match (str_of("kty"), str_of("crv")) {
            (Some("EC"), Some("P-256")) => {
                use p256::pkcs8::EncodePrivateKey;
                let der = p256::SecretKey::from_slice(&bytes_of("d")?)
                    .map_err(|e| der_err(&e))?
                    .to_pkcs8_der()
                    .map_err(|e| der_err(&e))?;
                (Algorithm::ES256, EncodingKey::from_ec_der(der.as_bytes()))
            }
            (Some("EC"), Some("P-384")) => {
                use p384::pkcs8::EncodePrivateKey;
                let der = p384::SecretKey::from_slice(&bytes_of("d")?)
                    .map_err(|e| der_err(&e))?
                    .to_pkcs8_der()
                    .map_err(|e| der_err(&e))?;
                (Algorithm::ES384, EncodingKey::from_ec_der(der.as_bytes()))
            }
            (Some("OKP"), Some("Ed25519")) => {
                use ed25519_dalek::pkcs8::EncodePrivateKey;
                let d: [u8; 32] = bytes_of("d")?
                    .try_into()
                    .map_err(|_| KeyError::new("an Ed25519 `d` is 32 bytes"))?;
                let der = ed25519_dalek::SigningKey::from_bytes(&d)
                    .to_pkcs8_der()
                    .map_err(|e| der_err(&e))?;
                (Algorithm::EdDSA, EncodingKey::from_ed_der(der.as_bytes()))
            }
            (Some("RSA"), _) => {
                use rsa::pkcs1::EncodeRsaPrivateKey;
                let big = |name: &str| bytes_of(name).map(|b| rsa::BigUint::from_bytes_be(&b));
                let key = rsa::RsaPrivateKey::from_components(
                    big("n")?,
                    big("e")?,
                    big("d")?,
                    vec![big("p")?, big("q")?],
                )
                .map_err(|e| der_err(&e))?;
                let der = key.to_pkcs1_der().map_err(|e| der_err(&e))?;
                (Algorithm::RS256, EncodingKey::from_rsa_der(der.as_bytes()))
            }
            (kty, crv) => return Err(unsupported_jwk(kty, crv)),
        };
        let alg = jwk_alg(str_of("alg"), alg)?;
        let mut public = v.clone();
        if let Some(obj) = public.as_object_mut() {
            for private in ["d", "p", "q", "dp", "dq", "qi", "oth"] {
                obj.remove(private);
            }
        }
        Self::checked(kid, alg, key, public)
    }

    /// Check the key signs at all, and complete its public JWK.
    fn checked(
        kid: String,
        alg: Algorithm,
        key: EncodingKey,
        mut public: Value,
    ) -> Result<Self, KeyError> {
        jsonwebtoken::crypto::sign(b"probe", &key, alg)
            .map_err(|e| KeyError::new(format!("the key cannot sign {}: {e}", alg_name(alg))))?;
        if let Some(obj) = public.as_object_mut() {
            obj.insert("kid".into(), kid.clone().into());
            obj.insert("alg".into(), alg_name(alg).into());
            obj.insert("use".into(), "sig".into());
        }
        Ok(Signer {
            kid,
            jku: None,
            alg,
            key,
            public,
        })
    }

    /// Name `url` (a JWKS with this key's public half, e.g. the agent's
    /// [`JWKS_PATH`]) as the signatures' `jku`. Verifiers never fetch it on their own: a
    /// client chooses the keys it trusts.
    pub fn jku(mut self, url: impl Into<String>) -> Self {
        self.jku = Some(url.into());
        self
    }

    /// The key id its signatures name.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Its algorithm (`ES256`, `ES384`, `EdDSA`, `RS256`, ...).
    pub fn algorithm(&self) -> &'static str {
        alg_name(self.alg)
    }

    /// Its public key as a JWK (with `kid`, `alg` and `use: sig`), for a JWKS.
    pub fn public_jwk(&self) -> Value {
        self.public.clone()
    }

    /// The protected header: `alg`, `kid`, `jku` if set, then `extra`.
    fn protected(&self, extra: Map<String, Value>) -> String {
        let mut header = Map::new();
        header.insert("alg".into(), alg_name(self.alg).into());
        header.insert("kid".into(), self.kid.clone().into());
        if let Some(jku) = &self.jku {
            header.insert("jku".into(), jku.clone().into());
        }
        header.extend(extra);
        B64.encode(Value::Object(header).to_string())
    }

    /// `(protected, signature)` over `payload`, detached.
    fn sign_parts(
        &self,
        payload: &[u8],
        extra: Map<String, Value>,
    ) -> Result<(String, String), KeyError> {
        let protected = self.protected(extra);
        let input = format!("{protected}.{}", B64.encode(payload));
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &self.key, self.alg)
            .map_err(|e| KeyError::new(format!("signing failed: {e}")))?;
        Ok((protected, signature))
    }

    /// A detached compact JWS (`<protected>..<signature>`) over `payload`, its protected
    /// header naming `alg`, `kid` (and `jku`) plus `extra` (e.g. `iat`, `jti`).
    pub fn sign_detached(
        &self,
        payload: &[u8],
        extra: Map<String, Value>,
    ) -> Result<String, KeyError> {
        let (protected, signature) = self.sign_parts(payload, extra)?;
        Ok(format!("{protected}..{signature}"))
    }

    /// Add this key's signature to `card`'s `signatures` (others are kept: several keys sign
    /// during a rotation). Sign last: any later change to the card breaks it.
    pub fn sign_card(&self, card: &mut AgentCard) -> Result<(), KeyError> {
        let payload = card_payload(card);
        let mut extra = Map::new();
        extra.insert("typ".into(), "JOSE".into());
        let (protected, signature) = self.sign_parts(&payload, extra)?;
        card.signatures.push(AgentCardSignature {
            protected,
            signature,
            header: None,
        });
        Ok(())
    }

    /// The signature header of a push delivery of `body`: a detached JWS whose protected
    /// header names `iat` (now) and `jti` (a fresh random id).
    pub fn sign_delivery(&self, body: &[u8]) -> Result<String, KeyError> {
        let mut extra = Map::new();
        extra.insert("iat".into(), chrono::Utc::now().timestamp().into());
        extra.insert("jti".into(), uuid::Uuid::new_v4().to_string().into());
        self.sign_detached(body, extra)
    }
}

/// The algorithm of a JWK: its `alg` if it names one that fits the key type's `default`,
/// else the key type's.
fn jwk_alg(named: Option<&str>, default: Algorithm) -> Result<Algorithm, KeyError> {
    let Some(name) = named else {
        return Ok(default);
    };
    let alg = asymmetric_alg(name)
        .ok_or_else(|| KeyError::new(format!("alg `{name}` is not allowed")))?;
    if family_of(alg) != family_of(default) {
        return Err(KeyError::new(format!(
            "alg `{name}` does not fit the key type"
        )));
    }
    Ok(alg)
}

fn unsupported_jwk(kty: Option<&str>, crv: Option<&str>) -> KeyError {
    KeyError::new(format!(
        "unsupported JWK (kty {kty:?}, crv {crv:?}): EC P-256/P-384, OKP Ed25519 or RSA"
    ))
}

fn family_of(alg: Algorithm) -> u8 {
    match alg {
        Algorithm::ES256 | Algorithm::ES384 => 1,
        Algorithm::EdDSA => 2,
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => 3,
        _ => 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Verifier

#[derive(Clone)]
struct TrustedKey {
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
    /// `signatures`, unknown fields included. A document that also carries fields at their
    /// default values (which the spec's payload preparation drops) verifies against its
    /// typed form too. Returns the `kid` of the key that verified it.
    pub fn verify_card_json(&self, card: &Value) -> Result<String, VerifyError> {
        let signatures: Vec<AgentCardSignature> = match card.get("signatures") {
            None | Some(Value::Null) => Vec::new(),
            Some(s) => serde_json::from_value(s.clone())
                .map_err(|e| VerifyError::Malformed(format!("`signatures`: {e}")))?,
        };
        let mut payloads = vec![card_json_payload(card)];
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
fn only_defaults_dropped(raw: &Value, typed: &Value) -> bool {
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
fn public_jwk(v: &Value) -> Result<TrustedKey, KeyError> {
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

/// A JWKS (`{"keys": [...]}`) of `signers`' public keys.
pub fn jwks<'a>(signers: impl IntoIterator<Item = &'a Signer>) -> Value {
    let mut keys: Vec<Value> = Vec::new();
    for s in signers {
        let jwk = s.public_jwk();
        if !keys.contains(&jwk) {
            keys.push(jwk);
        }
    }
    json!({ "keys": keys })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ES256: &str = include_str!("../../tests/fixtures/signing/es256.pem");
    const ED25519: &str = include_str!("../../tests/fixtures/signing/ed25519.pem");
    const RS256: &str = include_str!("../../tests/fixtures/signing/rs256.pem");

    fn round_trip(signer: &Signer) {
        let mut card = AgentCard {
            name: "x".into(),
            ..Default::default()
        };
        signer.sign_card(&mut card).unwrap();
        let v = Verifier::new().trust_signer(signer);
        assert_eq!(v.verify_card(&card).unwrap(), signer.kid());
        card.name = "y".into();
        assert!(matches!(
            v.verify_card(&card),
            Err(VerifyError::BadSignature { .. })
        ));
    }

    #[test]
    fn pem_signers_round_trip() {
        for (pem, alg) in [(ES256, "ES256"), (ED25519, "EdDSA"), (RS256, "RS256")] {
            let s = Signer::from_pem(pem, "k").unwrap();
            assert_eq!(s.algorithm(), alg);
            round_trip(&s);
        }
    }

    #[test]
    fn jwk_signers_round_trip_and_match_the_pem_keys() {
        for (name, pem) in [("es256", ES256), ("ed25519", ED25519), ("rs256", RS256)] {
            let path = format!(
                "{}/../tests/fixtures/signing/{name}.jwk.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let jwk = std::fs::read_to_string(path).unwrap();
            let from_jwk = Signer::from_jwk(&jwk).unwrap();
            round_trip(&from_jwk);
            // The JWK's private key is the PEM's: a PEM-loaded verifier accepts its signature.
            let pub_pem = std::fs::read_to_string(format!(
                "{}/../tests/fixtures/signing/{name}.pub.pem",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let detached = from_jwk.sign_delivery(b"body").unwrap();
            let v = Verifier::new().trust_pem(&pub_pem).unwrap();
            v.verify_detached(&detached, b"body").unwrap();
            let _ = pem;
        }
    }
}
