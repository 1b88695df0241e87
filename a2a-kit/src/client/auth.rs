//! Request interceptors: how credentials and custom headers get onto every request.
//!
//! An [`Interceptor`] sees each outgoing request (card fetches included) just before it is
//! sent, and may change its headers or URL. The built-in ones cover A2A's security schemes
//! that a client fills in with a static secret: [`BearerAuth`] (`httpAuthSecurityScheme`
//! Bearer, or an OAuth2 / OIDC access token obtained elsewhere), [`ApiKeyAuth`]
//! (`apiKeySecurityScheme` in a header, query parameter or cookie) and [`StaticHeaders`].
//! A token that expires comes from a [`TokenProvider`] instead, asked before every request
//! ([`BearerTokenProvider`]). Anything else (request signing) is a custom implementation:
//!
//! ```
//! use a2a_kit::client::{CallInfo, ClientError, Interceptor};
//!
//! struct TraceId;
//!
//! #[a2a_kit::async_trait]
//! impl Interceptor for TraceId {
//!     async fn intercept(&self, call: &CallInfo<'_>, req: &mut reqwest::Request) -> Result<(), ClientError> {
//!         let value = format!("trace-{}", call.operation);
//!         req.headers_mut().insert("x-trace", value.parse().map_err(|_| ClientError::Interceptor("bad header".into()))?);
//!         Ok(())
//!     }
//! }
//! ```

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::ClientError;
use crate::protocol::{AgentCard, SecurityScheme};

/// What is being called, for interceptors.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The A2A operation (`SendMessage`, `GetTask`, …, the JSON-RPC method name), or
    /// `GetAgentCard` for the card fetch.
    pub operation: &'a str,
    /// The agent card, once known (`None` while fetching it).
    pub card: Option<&'a AgentCard>,
}

/// Sees (and may change) every request before it is sent.
#[async_trait]
pub trait Interceptor: Send + Sync + 'static {
    /// Add credentials or headers to `req`; an `Err` aborts the call.
    async fn intercept(
        &self,
        call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError>;
}

/// A closure as an interceptor (synchronous; implement [`Interceptor`] for async work).
///
/// ```
/// use a2a_kit::client::{A2aClient, CallInfo, ClientError, FnInterceptor};
///
/// fn tenant_hint(_call: &CallInfo<'_>, req: &mut reqwest::Request) -> Result<(), ClientError> {
///     req.headers_mut().insert("x-tenant-hint", reqwest::header::HeaderValue::from_static("acme"));
///     Ok(())
/// }
/// let builder = A2aClient::builder().interceptor(FnInterceptor(tenant_hint));
/// ```
pub struct FnInterceptor<F>(pub F);

#[async_trait]
impl<F> Interceptor for FnInterceptor<F>
where
    F: Fn(&CallInfo<'_>, &mut reqwest::Request) -> Result<(), ClientError> + Send + Sync + 'static,
{
    async fn intercept(
        &self,
        call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        (self.0)(call, req)
    }
}

fn header_value(value: &str) -> Result<HeaderValue, ClientError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        ClientError::Interceptor("a credential contains characters not allowed in a header".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerAuth {
    value: HeaderValue,
}

impl BearerAuth {
    /// A bearer token.
    pub fn new(token: impl AsRef<str>) -> Result<Self, ClientError> {
        Ok(BearerAuth {
            value: header_value(&format!("Bearer {}", token.as_ref()))?,
        })
    }
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerAuth(***)")
    }
}

#[async_trait]
impl Interceptor for BearerAuth {
    async fn intercept(
        &self,
        _call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        req.headers_mut()
            .insert(reqwest::header::AUTHORIZATION, self.value.clone());
        Ok(())
    }
}

/// Where fresh bearer tokens come from: asked before every request to the agent (so a
/// provider that caches its token and renews it before it expires, e.g. an OAuth2 client
/// credentials flow, keeps the client authenticated however long it lives). An `Err` aborts
/// the call.
///
/// An async closure returning `Result<String, ClientError>` is a provider:
///
/// ```
/// use a2a_kit::client::{A2aClient, ClientError};
///
/// async fn current_token() -> Result<String, ClientError> {
///     Ok("eyJhbGciOi...".to_string()) // e.g. from a token cache that refreshes itself
/// }
/// let builder = A2aClient::builder().bearer_token_provider(current_token);
/// ```
#[async_trait]
pub trait TokenProvider: Send + Sync + 'static {
    /// A token valid for the next request (without the `Bearer ` prefix).
    async fn token(&self) -> Result<String, ClientError>;
}

#[async_trait]
impl<F, Fut> TokenProvider for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<String, ClientError>> + Send + 'static,
{
    async fn token(&self) -> Result<String, ClientError> {
        (self)().await
    }
}

/// `Authorization: Bearer <token>` with a token asked from a [`TokenProvider`] for each
/// request (the interceptor behind
/// [`ClientBuilder::bearer_token_provider`](super::ClientBuilder::bearer_token_provider)).
#[derive(Clone)]
pub struct BearerTokenProvider {
    provider: std::sync::Arc<dyn TokenProvider>,
}

impl BearerTokenProvider {
    /// Bearer tokens from `provider`.
    pub fn new(provider: impl TokenProvider) -> Self {
        BearerTokenProvider {
            provider: std::sync::Arc::new(provider),
        }
    }
}

impl std::fmt::Debug for BearerTokenProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerTokenProvider(..)")
    }
}

#[async_trait]
impl Interceptor for BearerTokenProvider {
    async fn intercept(
        &self,
        _call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        let token = self.provider.token().await?;
        let token = token.trim();
        if token.is_empty() {
            return Err(ClientError::Interceptor(
                "the token provider gave an empty token".into(),
            ));
        }
        req.headers_mut().insert(
            reqwest::header::AUTHORIZATION,
            header_value(&format!("Bearer {token}"))?,
        );
        Ok(())
    }
}

/// Where an API key goes (`apiKeySecurityScheme.location`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyLocation {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

/// An API key, in a header (default `X-API-Key`), a query parameter or a cookie.
#[derive(Clone)]
pub struct ApiKeyAuth {
    location: ApiKeyLocation,
    name: String,
    key: String,
}

impl std::fmt::Debug for ApiKeyAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyAuth")
            .field("location", &self.location)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ApiKeyAuth {
    /// A key sent as header `name`.
    pub fn header(name: impl Into<String>, key: impl Into<String>) -> Self {
        ApiKeyAuth {
            location: ApiKeyLocation::Header,
            name: name.into(),
            key: key.into(),
        }
    }
    /// A key sent as query parameter `name`.
    pub fn query(name: impl Into<String>, key: impl Into<String>) -> Self {
        ApiKeyAuth {
            location: ApiKeyLocation::Query,
            name: name.into(),
            key: key.into(),
        }
    }
    /// A key sent as cookie `name`.
    pub fn cookie(name: impl Into<String>, key: impl Into<String>) -> Self {
        ApiKeyAuth {
            location: ApiKeyLocation::Cookie,
            name: name.into(),
            key: key.into(),
        }
    }
    /// Place `key` where the card's first `apiKeySecurityScheme` says; `None` when the card
    /// declares none.
    pub fn from_card(card: &AgentCard, key: impl Into<String>) -> Option<Self> {
        card.security_schemes
            .values()
            .find_map(|s| match s {
                SecurityScheme::ApiKeySecurityScheme(k) => {
                    let location = match k.location.to_ascii_lowercase().as_str() {
                        "query" => ApiKeyLocation::Query,
                        "cookie" => ApiKeyLocation::Cookie,
                        _ => ApiKeyLocation::Header,
                    };
                    Some(ApiKeyAuth {
                        location,
                        name: k.name.clone(),
                        key: String::new(),
                    })
                }
                _ => None,
            })
            .map(|mut a| {
                a.key = key.into();
                a
            })
    }
}

#[async_trait]
impl Interceptor for ApiKeyAuth {
    async fn intercept(
        &self,
        _call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        match self.location {
            ApiKeyLocation::Header => {
                let name = HeaderName::from_bytes(self.name.as_bytes()).map_err(|_| {
                    ClientError::Interceptor(format!("`{}` is not a header name", self.name))
                })?;
                req.headers_mut().insert(name, header_value(&self.key)?);
            }
            ApiKeyLocation::Query => {
                req.url_mut()
                    .query_pairs_mut()
                    .append_pair(&self.name, &self.key);
            }
            ApiKeyLocation::Cookie => {
                let cookie = format!("{}={}", self.name, self.key);
                let value = match req
                    .headers()
                    .get(reqwest::header::COOKIE)
                    .and_then(|v| v.to_str().ok())
                {
                    Some(existing) => format!("{existing}; {cookie}"),
                    None => cookie,
                };
                req.headers_mut()
                    .insert(reqwest::header::COOKIE, header_value(&value)?);
            }
        }
        Ok(())
    }
}

/// Fixed headers added to every request.
#[derive(Debug, Clone, Default)]
pub struct StaticHeaders(pub HeaderMap);

impl StaticHeaders {
    /// Parse `Name: value` pairs.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, ClientError> {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            let name = HeaderName::from_bytes(k.trim().as_bytes())
                .map_err(|_| ClientError::Interceptor(format!("`{k}` is not a header name")))?;
            let value = HeaderValue::from_str(v.trim()).map_err(|_| {
                ClientError::Interceptor(format!("the value of header `{k}` is not valid"))
            })?;
            map.append(name, value);
        }
        Ok(StaticHeaders(map))
    }
}

#[async_trait]
impl Interceptor for StaticHeaders {
    async fn intercept(
        &self,
        _call: &CallInfo<'_>,
        req: &mut reqwest::Request,
    ) -> Result<(), ClientError> {
        for (k, v) in &self.0 {
            req.headers_mut().insert(k.clone(), v.clone());
        }
        Ok(())
    }
}
