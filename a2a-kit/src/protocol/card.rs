//! The Agent Card (discovery document) and everything inside it, including security schemes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Metadata;
use super::serde_util::{de_opt_string, is_false, proto_oneof};

/// An agent's self-description, served at `/.well-known/agent-card.json`.
///
/// Clients read it to find an endpoint they can talk to
/// (`supported_interfaces`, first = preferred), what the agent can do
/// (`capabilities`, `skills`) and how to authenticate (`security_schemes`).
/// Fields are written in proto field-number order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable agent name.
    #[serde(default)]
    pub name: String,
    /// What the agent is for, for users and for other agents choosing it.
    #[serde(default)]
    pub description: String,
    /// Endpoints in order of preference; clients use the first one they support.
    #[serde(alias = "supported_interfaces", default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who operates the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version (not the protocol version).
    #[serde(default)]
    pub version: String,
    /// Where to read more about the agent (`optional`: an explicit `""` is kept).
    #[serde(
        alias = "documentation_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub documentation_url: Option<String>,
    /// Optional protocol features the agent supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Authentication schemes by name, referenced from `security_requirements`.
    #[serde(
        alias = "security_schemes",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Alternatives (OR) of scheme combinations (AND) needed to call the agent.
    #[serde(
        alias = "security_requirements",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default across skills.
    #[serde(alias = "default_input_modes", default)]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default across skills.
    #[serde(alias = "default_output_modes", default)]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the canonicalized card.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon for UIs (`optional`: an explicit `""` is kept).
    #[serde(alias = "icon_url", default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

/// One way to reach the agent: a URL, a protocol binding and a protocol version.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL (`host:port` for gRPC).
    #[serde(default)]
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC`, or a URI for a custom binding.
    #[serde(alias = "protocol_binding", default)]
    pub protocol_binding: String,
    /// Routing value clients must copy into every request's `tenant`.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// `Major.Minor` protocol version served here, e.g. `1.0` or `0.3`.
    #[serde(alias = "protocol_version", default)]
    pub protocol_version: String,
}

impl AgentInterface {
    /// The JSON-RPC 2.0 binding.
    pub const JSONRPC: &'static str = "JSONRPC";
    /// The HTTP+JSON (REST) binding.
    pub const HTTP_JSON: &'static str = "HTTP+JSON";
    /// The gRPC binding.
    pub const GRPC: &'static str = "GRPC";

    /// An interface speaking this crate's protocol version ([`super::PROTOCOL_VERSION`]).
    pub fn new(url: impl Into<String>, protocol_binding: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            protocol_binding: protocol_binding.into(),
            tenant: None,
            protocol_version: super::PROTOCOL_VERSION.to_owned(),
        }
    }

    /// Sets the tenant clients must echo in requests to this interface.
    #[must_use]
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
}

/// The organization behind an agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// The provider's website or docs.
    #[serde(default)]
    pub url: String,
    /// The provider's name.
    #[serde(default)]
    pub organization: String,
}

/// Optional features a client may rely on. `None` means "not stated"; an
/// explicit `false` is kept (these are proto `optional` fields).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push-notification configs are supported.
    #[serde(
        alias = "push_notifications",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub push_notifications: Option<bool>,
    /// Protocol extensions the agent understands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    /// An authenticated client can fetch a richer card via GetExtendedAgentCard.
    #[serde(
        alias = "extended_agent_card",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// Identifies the extension (and its version).
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub uri: Option<String>,
    /// How this agent uses the extension.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// Clients must opt in to this extension to use the agent.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A focused ability of the agent, used by clients (and routers) to pick it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique skill id.
    #[serde(default)]
    pub id: String,
    /// Human-readable name.
    #[serde(default)]
    pub name: String,
    /// What the skill does.
    #[serde(default)]
    pub description: String,
    /// Keywords; required, so always written (even when empty).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Accepted media types, overriding the card's defaults.
    #[serde(alias = "input_modes", default, skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Produced media types, overriding the card's defaults.
    #[serde(alias = "output_modes", default, skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Security needed for this skill specifically.
    #[serde(
        alias = "security_requirements",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JWS (RFC 7515, flattened JSON form) over the canonicalized card.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// Base64url-encoded protected header.
    #[serde(default)]
    pub protected: String,
    /// Base64url-encoded signature.
    #[serde(default)]
    pub signature: String,
    /// Unprotected header parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// A list of strings (proto has no repeated map values); here: OAuth scopes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringList {
    /// The values; a scheme without scopes is written as `{}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// Schemes that must all be satisfied together (AND), with required scopes per scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityRequirement {
    /// Scheme name (a key of `AgentCard::security_schemes`) to scopes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, StringList>,
}

proto_oneof! {
    /// How to authenticate to the agent; modelled on OpenAPI security schemes.
    pub enum SecurityScheme {
        /// An API key in a header, query parameter or cookie.
        ApiKeySecurityScheme(ApiKeySecurityScheme) = "apiKeySecurityScheme" | "api_key_security_scheme",
        /// HTTP authentication (Bearer, Basic, ...).
        HttpAuthSecurityScheme(HttpAuthSecurityScheme) = "httpAuthSecurityScheme" | "http_auth_security_scheme",
        /// OAuth 2.0.
        Oauth2SecurityScheme(OAuth2SecurityScheme) = "oauth2SecurityScheme" | "oauth2_security_scheme",
        /// OpenID Connect.
        OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme) = "openIdConnectSecurityScheme" | "open_id_connect_security_scheme",
        /// Mutual TLS.
        MtlsSecurityScheme(MutualTlsSecurityScheme) = "mtlsSecurityScheme" | "mtls_security_scheme",
    }
}

/// API-key authentication (proto `APIKeySecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Shown to humans choosing a scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// `header`, `query` or `cookie` (OpenAPI's `in`).
    #[serde(default)]
    pub location: String,
    /// Header, query parameter or cookie name.
    #[serde(default)]
    pub name: String,
}

/// HTTP authentication (proto `HTTPAuthSecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Shown to humans choosing a scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// `Authorization` scheme name, e.g. `Bearer`.
    #[serde(default)]
    pub scheme: String,
    /// Hint about the bearer token format, e.g. `JWT`.
    #[serde(
        alias = "bearer_format",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_format: Option<String>,
}

/// OAuth 2.0 authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Shown to humans choosing a scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The flow to use; required, so a missing `flows` is an error.
    pub flows: OAuthFlows,
    /// RFC 8414 authorization-server metadata URL.
    #[serde(
        alias = "oauth2_metadata_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub oauth2_metadata_url: Option<String>,
}

/// OpenID Connect authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Shown to humans choosing a scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// OpenID Connect discovery URL.
    #[serde(alias = "open_id_connect_url", default)]
    pub open_id_connect_url: String,
}

/// Mutual-TLS authentication (the client presents a certificate).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// Shown to humans choosing a scheme.
    #[serde(
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
}

proto_oneof! {
    /// The single OAuth 2.0 flow an `OAuth2SecurityScheme` uses.
    pub enum OAuthFlows {
        /// Authorization Code (with PKCE for public clients).
        AuthorizationCode(AuthorizationCodeOAuthFlow) = "authorizationCode" | "authorization_code",
        /// Client Credentials, for machine-to-machine calls.
        ClientCredentials(ClientCredentialsOAuthFlow) = "clientCredentials" | "client_credentials",
        /// Deprecated in the proto: use Authorization Code with PKCE. Kept to read older cards.
        Implicit(ImplicitOAuthFlow) = "implicit",
        /// Deprecated in the proto: use Authorization Code with PKCE, or Device Code. Kept to read older cards.
        Password(PasswordOAuthFlow) = "password",
        /// Device Code (RFC 8628), for input-constrained clients.
        DeviceCode(DeviceCodeOAuthFlow) = "deviceCode" | "device_code",
    }
}

/// OAuth 2.0 Authorization Code flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization endpoint.
    #[serde(alias = "authorization_url", default)]
    pub authorization_url: String,
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description; required, so always written (even when empty).
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// PKCE (RFC 7636) is required.
    #[serde(alias = "pkce_required", default, skip_serializing_if = "is_false")]
    pub pkce_required: bool,
}

/// OAuth 2.0 Client Credentials flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description; required, so always written (even when empty).
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// OAuth 2.0 Implicit flow. Deprecated in the proto (use Authorization Code with PKCE).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization endpoint.
    #[serde(
        alias = "authorization_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub authorization_url: Option<String>,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

/// OAuth 2.0 Resource Owner Password flow. Deprecated in the proto.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token endpoint.
    #[serde(
        alias = "token_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub token_url: Option<String>,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

/// OAuth 2.0 Device Authorization flow (RFC 8628).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// Device authorization endpoint.
    #[serde(alias = "device_authorization_url", default)]
    pub device_authorization_url: String,
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        deserialize_with = "de_opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description; required, so always written (even when empty).
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}
