//! Who is calling: authentication at the agent's edge, before any request is read.
//!
//! An [`Authenticator`] looks at a request's head (headers, URI) and names its [`Caller`], or
//! refuses it: no credentials or bad ones are 401 with `WWW-Authenticate`, a known caller
//! without the right is 403, in both bindings, before the body is read or any task exists.
//! The agent card's `securitySchemes` and `securityRequirements` are generated from it
//! ([`AgentServiceBuilder::authenticate`](crate::server::AgentServiceBuilder::authenticate)).
//! [`ApiKeys`] and, with the `jose` feature, [`Jwt`] (bearer JWTs: a shared secret, a PEM
//! key or a JWKS) are built in, and [`AnyOf`] accepts a request any of several accepts;
//! anything else (a fronting proxy's mTLS identity, opaque tokens) is an implementation of
//! the trait.
//!
//! ```
//! use a2a_kit::auth::ApiKeys;
//! # fn demo(agent: impl a2a_kit::skill::Agent) -> Result<(), a2a_kit::server::BuildError> {
//! let keys = ApiKeys::header("X-API-Key").key("s3cret-for-alice", "alice").key("s3cret-for-bob", "bob");
//! let service = a2a_kit::server::AgentService::builder(agent).authenticate(keys).build()?;
//! # let _ = service; Ok(()) }
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use subtle::ConstantTimeEq;

use crate::protocol::{ApiKeySecurityScheme, SecurityScheme};

#[cfg(feature = "jose")]
mod jwks;
#[cfg(all(feature = "jose", any(feature = "client", feature = "push")))]
pub(crate) use jwks::read_jwks;
#[cfg(feature = "jose")]
mod jwt;
#[cfg(feature = "jose")]
pub use jwt::{Jwt, JwtError, MAX_TOKEN_BYTES, MIN_HMAC_SECRET_BYTES};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Caller {
    /// Who it is (a key's name, a token's `sub`).
    pub subject: String,
    /// The tenant it belongs to, if the authenticator knows one.
    pub tenant: Option<String>,
    /// What it may do (a token's scopes).
    pub scopes: Vec<String>,
    /// Every claim of the caller's token (a JWT's payload), for decisions the fields above do
    /// not cover (roles, email, custom claims); empty for callers without a token.
    pub claims: serde_json::Map<String, serde_json::Value>,
}

impl Caller {
    /// A caller known by `subject` alone.
    pub fn new(subject: impl Into<String>) -> Self {
        Caller {
            subject: subject.into(),
            ..Caller::default()
        }
    }
}

/// Why a request was refused. The reason goes to the agent's log, never to the client (a
/// reason such as "unknown key" or "expired" helps an attacker more than a user).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AuthError {
    /// The request carries none of the credentials the agent takes (401).
    #[error("no credentials")]
    Missing,
    /// It carries credentials that are not valid (401).
    #[error("invalid credentials: {0}")]
    Invalid(String),
    /// A known caller without the right to this (403).
    #[error("forbidden: {0}")]
    Forbidden(String),
}

/// Names the caller of a request from its head, or refuses it.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The caller of the request whose head this is. Shared (an `Arc`): the request, its task
    /// and the skill all see the one caller, and an authenticator that knows its callers in
    /// advance (API keys) hands out the same one each time.
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Arc<Caller>, AuthError>;

    /// The caller, when this authenticator decides without waiting (a key it holds); `None`
    /// (the default) sends the edge to [`authenticate`](Self::authenticate). The edge asks
    /// this first: a decision made at once needs no future. Both must agree.
    fn authenticate_now(
        &self,
        request: &http::request::Parts,
    ) -> Option<Result<Arc<Caller>, AuthError>> {
        let _ = request;
        None
    }

    /// The card's security schemes, by name, that this authenticator accepts; a client may
    /// use any one of them.
    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme>;

    /// The `WWW-Authenticate` value of a 401 (RFC 9110 §11.6.1): how to authenticate.
    fn challenge(&self) -> String;

    /// The `WWW-Authenticate` value of a 401 refusing a request with `error`: by default
    /// [`challenge`](Self::challenge); a bearer scheme adds `error="invalid_token"` for a bad
    /// token (RFC 6750 §3.1), never the reason itself.
    fn challenge_for(&self, error: &AuthError) -> String {
        let _ = error;
        self.challenge()
    }
}

/// Several authenticators, one request accepted if any accepts it (e.g. API keys for scripts
/// and JWTs for users). Without credentials for any, the request is
/// [`AuthError::Missing`]; with bad ones, the first member's refusal (a `Forbidden` first).
/// The card lists every member's schemes (any one will do) and a 401's `WWW-Authenticate`
/// carries every member's challenge.
///
/// Callers of all members share one namespace of subjects, so tasks are scoped by subject
/// whichever way the caller came in: give callers of different members distinct subjects
/// (an API key's subject and a token's `sub` should never coincide by accident).
///
/// ```
/// use a2a_kit::auth::{AnyOf, ApiKeys};
/// # fn demo(agent: impl a2a_kit::skill::Agent, jwt: impl a2a_kit::auth::Authenticator) -> Result<(), a2a_kit::server::BuildError> {
/// let auth = AnyOf::new(ApiKeys::header("X-API-Key").key("s3cret", "ops-script")).or(jwt);
/// let service = a2a_kit::server::AgentService::builder(agent).authenticate(auth).build()?;
/// # let _ = service; Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct AnyOf {
    members: Vec<Arc<dyn Authenticator>>,
}

impl std::fmt::Debug for AnyOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnyOf")
            .field("members", &self.members.len())
            .finish()
    }
}

impl AnyOf {
    /// Start with `first` (more with [`or`](Self::or)).
    pub fn new(first: impl Authenticator) -> Self {
        AnyOf::default().or(first)
    }

    /// Accept what `other` accepts too (tried after the ones before it).
    pub fn or(mut self, other: impl Authenticator) -> Self {
        self.members.push(Arc::new(other));
        self
    }

    /// How many authenticators it tries.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether it has none (then every request is refused as without credentials).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn challenges(&self, each: impl Fn(&dyn Authenticator) -> String) -> String {
        self.members
            .iter()
            .map(|m| each(m.as_ref()))
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[async_trait]
impl Authenticator for AnyOf {
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Arc<Caller>, AuthError> {
        let (mut invalid, mut forbidden) = (None, None);
        for member in &self.members {
            match member.authenticate(request).await {
                Ok(caller) => return Ok(caller),
                Err(AuthError::Missing) => {}
                Err(e @ AuthError::Invalid(_)) => {
                    invalid.get_or_insert(e);
                }
                Err(e @ AuthError::Forbidden(_)) => {
                    forbidden.get_or_insert(e);
                }
            }
        }
        Err(forbidden.or(invalid).unwrap_or(AuthError::Missing))
    }

    /// Every member's schemes; a name two members use for different schemes gets a suffix
    /// (`bearer-2`).
    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let mut all = BTreeMap::new();
        for member in &self.members {
            for (name, scheme) in member.security_schemes() {
                match all.get(&name) {
                    None => {
                        all.insert(name, scheme);
                    }
                    Some(same) if *same == scheme => {}
                    Some(_) => {
                        let free = (2..)
                            .map(|n| format!("{name}-{n}"))
                            .find(|n| !all.contains_key(n))
                            .unwrap_or_default();
                        all.insert(free, scheme);
                    }
                }
            }
        }
        all
    }

    fn challenge(&self) -> String {
        self.challenges(|m| m.challenge())
    }

    fn challenge_for(&self, error: &AuthError) -> String {
        self.challenges(|m| m.challenge_for(error))
    }
}

/// Where an API key is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum KeyIn {
    /// The header's name parsed once (`None`: not a header name, so no request carries it).
    Header(Option<http::HeaderName>),
    Query,
}

/// API keys from configuration, each one caller: in a header (`ApiKeys::header("X-API-Key")`)
/// or a query parameter. Keys are compared in constant time, all of them every time.
#[derive(Clone)]
pub struct ApiKeys {
    location: KeyIn,
    name: String,
    keys: Vec<(Vec<u8>, Arc<Caller>)>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field("location", &self.location)
            .field("name", &self.name)
            .field("keys", &self.keys.len())
            .finish()
    }
}

/// The longest key looked at: anything longer is refused unread.
const MAX_KEY_BYTES: usize = 1024;

impl ApiKeys {
    /// Keys in request header `name` (e.g. `X-API-Key`).
    pub fn header(name: impl Into<String>) -> Self {
        let name = name.into();
        ApiKeys {
            location: KeyIn::Header(http::HeaderName::try_from(name.as_str()).ok()),
            name,
            keys: Vec::new(),
        }
    }

    /// Keys in query parameter `name` (for clients that cannot set headers; a URL ends up in
    /// logs, so prefer a header).
    pub fn query(name: impl Into<String>) -> Self {
        ApiKeys {
            location: KeyIn::Query,
            ..ApiKeys::header(name)
        }
    }

    /// Accept `key` as caller `subject`.
    pub fn key(self, key: impl Into<String>, subject: impl Into<String>) -> Self {
        self.key_for(key, Caller::new(subject))
    }

    /// Accept `key` as `caller`.
    pub fn key_for(mut self, key: impl Into<String>, caller: Caller) -> Self {
        self.keys.push((key.into().into_bytes(), Arc::new(caller)));
        self
    }

    /// How many keys are accepted.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is accepted (every request is refused).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The card's name for where the key goes.
    fn location(&self) -> &'static str {
        match &self.location {
            KeyIn::Header(_) => "header",
            KeyIn::Query => "query",
        }
    }

    fn presented<'r>(&self, request: &'r http::request::Parts) -> Option<Cow<'r, [u8]>> {
        match &self.location {
            KeyIn::Header(name) => request
                .headers
                .get(name.as_ref()?)
                .map(|v| Cow::Borrowed(v.as_bytes())),
            KeyIn::Query => request.uri.query().and_then(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .find(|(k, _)| k == self.name.as_str())
                    .map(|(_, v)| match v {
                        Cow::Borrowed(v) => Cow::Borrowed(v.as_bytes()),
                        Cow::Owned(v) => Cow::Owned(v.into_bytes()),
                    })
            }),
        }
    }
}

impl ApiKeys {
    /// The caller whose key the request presents.
    fn check(&self, request: &http::request::Parts) -> Result<Arc<Caller>, AuthError> {
        let Some(presented) = self.presented(request) else {
            return Err(AuthError::Missing);
        };
        if presented.len() > MAX_KEY_BYTES {
            return Err(AuthError::Invalid(format!(
                "an API key of {} bytes (at most {MAX_KEY_BYTES})",
                presented.len()
            )));
        }
        let mut found = None;
        for (key, caller) in &self.keys {
            if bool::from(key.as_slice().ct_eq(&presented)) {
                found = Some(caller);
            }
        }
        found
            .cloned()
            .ok_or_else(|| AuthError::Invalid("an unknown API key".into()))
    }
}

#[async_trait]
impl Authenticator for ApiKeys {
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Arc<Caller>, AuthError> {
        self.check(request)
    }

    fn authenticate_now(
        &self,
        request: &http::request::Parts,
    ) -> Option<Result<Arc<Caller>, AuthError>> {
        Some(self.check(request))
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        BTreeMap::from([(
            "apiKey".to_string(),
            SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                description: Some("An API key the agent's operator issued.".into()),
                location: self.location().into(),
                name: self.name.clone(),
            }),
        )])
    }

    fn challenge(&self) -> String {
        format!(
            "ApiKey realm=\"a2a\", {}=\"{}\"",
            self.location(),
            self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(uri: &str, header: Option<(&str, &str)>) -> http::request::Parts {
        let mut b = http::Request::get(uri);
        if let Some((k, v)) = header {
            b = b.header(k, v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[tokio::test]
    async fn api_keys_name_their_callers_and_refuse_the_rest() {
        let keys = ApiKeys::header("X-API-Key")
            .key("k1", "alice")
            .key("k2", "bob");
        let ok = keys
            .authenticate(&head("/", Some(("x-api-key", "k2"))))
            .await;
        assert_eq!(ok.unwrap().subject, "bob");
        assert_eq!(
            keys.authenticate(&head("/", None)).await,
            Err(AuthError::Missing)
        );
        assert!(matches!(
            keys.authenticate(&head("/", Some(("x-api-key", "k3"))))
                .await,
            Err(AuthError::Invalid(_))
        ));
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        assert!(matches!(
            keys.authenticate(&head("/", Some(("x-api-key", &long))))
                .await,
            Err(AuthError::Invalid(_))
        ));
        let q = ApiKeys::query("key").key("a b", "carol");
        assert_eq!(
            q.authenticate(&head("/tasks?key=a%20b", None))
                .await
                .unwrap()
                .subject,
            "carol"
        );
        assert_eq!(
            keys.challenge(),
            "ApiKey realm=\"a2a\", header=\"X-API-Key\""
        );
    }
}
