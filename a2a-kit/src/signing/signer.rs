//! The private half: a key that signs cards and push bodies.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Map, Value, json};

use crate::protocol::{AgentCard, AgentCardSignature};

use super::*;

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
