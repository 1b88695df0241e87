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
//! # let pem = include_str!("../../../tests/fixtures/signing/es256.pem");
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

use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

use crate::protocol::AgentCard;

mod signer;
mod verifier;

pub use signer::Signer;
pub use verifier::{Verified, Verifier};

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

pub(super) fn alg_name(alg: Algorithm) -> &'static str {
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
pub(super) fn asymmetric_alg(name: &str) -> Option<Algorithm> {
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

pub(super) fn canonical_without_signatures(value: &mut Value) -> Vec<u8> {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("signatures");
    }
    serde_json_canonicalizer::to_vec(value).unwrap_or_default()
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

/// The algorithm of a JWK: its `alg` if it names one that fits the key type's `default`,
/// else the key type's.
pub(super) fn jwk_alg(named: Option<&str>, default: Algorithm) -> Result<Algorithm, KeyError> {
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

pub(super) fn unsupported_jwk(kty: Option<&str>, crv: Option<&str>) -> KeyError {
    KeyError::new(format!(
        "unsupported JWK (kty {kty:?}, crv {crv:?}): EC P-256/P-384, OKP Ed25519 or RSA"
    ))
}

pub(super) fn family_of(alg: Algorithm) -> u8 {
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

#[cfg(test)]
mod tests {
    use super::*;

    const ES256: &str = include_str!("../../../tests/fixtures/signing/es256.pem");
    const ED25519: &str = include_str!("../../../tests/fixtures/signing/ed25519.pem");
    const RS256: &str = include_str!("../../../tests/fixtures/signing/rs256.pem");

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
