//! The agent card and everything in it: interfaces, skills, signatures, security schemes
//! and OAuth flows.

use std::collections::{BTreeMap, HashMap};

use super::{
    A2aError, FromProto, FromProtoAt, Path, ToProto, from_proto_at_root, metadata,
    metadata_to_proto, non_empty, oneof_unset, optional, repeated, required, required_message,
    to_repeated,
};
use crate::grpc::pb;
use crate::protocol::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme,
    PasswordOAuthFlow, SecurityRequirement, SecurityScheme, StringList,
};

/// A map of messages, each converted at its key's path.
fn map_from_proto<T: FromProtoAt>(
    protos: HashMap<String, <T as ToProto>::Proto>,
    at: &Path<'_>,
) -> Result<BTreeMap<String, T>, A2aError> {
    let mut out = BTreeMap::new();
    for (key, proto) in protos {
        let value = T::from_proto_at(proto, &at.key(&key))?;
        out.insert(key, value);
    }
    Ok(out)
}

fn map_to_proto<T: ToProto>(items: BTreeMap<String, T>) -> HashMap<String, <T as ToProto>::Proto> {
    items
        .into_iter()
        .map(|(key, item)| (key, item.to_proto()))
        .collect()
}

/// OAuth scopes: plain strings both sides.
fn scopes(scopes: HashMap<String, String>) -> BTreeMap<String, String> {
    scopes.into_iter().collect()
}

fn scopes_to_proto(scopes: BTreeMap<String, String>) -> HashMap<String, String> {
    scopes.into_iter().collect()
}

impl FromProtoAt for AgentCard {
    fn from_proto_at(p: pb::AgentCard, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentCard {
            name: required(p.name, &at.field("name"))?,
            description: required(p.description, &at.field("description"))?,
            supported_interfaces: repeated(
                p.supported_interfaces,
                &at.field("supportedInterfaces"),
            )?,
            provider: optional(p.provider, &at.field("provider"))?,
            version: required(p.version, &at.field("version"))?,
            documentation_url: p.documentation_url,
            capabilities: required_message(p.capabilities, &at.field("capabilities"))?,
            security_schemes: map_from_proto(p.security_schemes, &at.field("securitySchemes"))?,
            security_requirements: repeated(
                p.security_requirements,
                &at.field("securityRequirements"),
            )?,
            default_input_modes: p.default_input_modes,
            default_output_modes: p.default_output_modes,
            skills: repeated(p.skills, &at.field("skills"))?,
            signatures: repeated(p.signatures, &at.field("signatures"))?,
            icon_url: p.icon_url,
        })
    }
}

impl ToProto for AgentCard {
    type Proto = pb::AgentCard;
    fn to_proto(self) -> pb::AgentCard {
        pb::AgentCard {
            name: self.name,
            description: self.description,
            supported_interfaces: to_repeated(self.supported_interfaces),
            provider: self.provider.map(ToProto::to_proto),
            version: self.version,
            documentation_url: self.documentation_url,
            capabilities: Some(self.capabilities.to_proto()),
            security_schemes: map_to_proto(self.security_schemes),
            security_requirements: to_repeated(self.security_requirements),
            default_input_modes: self.default_input_modes,
            default_output_modes: self.default_output_modes,
            skills: to_repeated(self.skills),
            signatures: to_repeated(self.signatures),
            icon_url: self.icon_url,
        }
    }
}

impl FromProtoAt for AgentInterface {
    fn from_proto_at(p: pb::AgentInterface, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentInterface {
            url: required(p.url, &at.field("url"))?,
            protocol_binding: required(p.protocol_binding, &at.field("protocolBinding"))?,
            tenant: non_empty(p.tenant),
            protocol_version: required(p.protocol_version, &at.field("protocolVersion"))?,
        })
    }
}

impl ToProto for AgentInterface {
    type Proto = pb::AgentInterface;
    fn to_proto(self) -> pb::AgentInterface {
        pb::AgentInterface {
            url: self.url,
            protocol_binding: self.protocol_binding,
            tenant: self.tenant.unwrap_or_default(),
            protocol_version: self.protocol_version,
        }
    }
}

impl FromProtoAt for AgentProvider {
    fn from_proto_at(p: pb::AgentProvider, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentProvider {
            url: required(p.url, &at.field("url"))?,
            organization: required(p.organization, &at.field("organization"))?,
        })
    }
}

impl ToProto for AgentProvider {
    type Proto = pb::AgentProvider;
    fn to_proto(self) -> pb::AgentProvider {
        pb::AgentProvider {
            url: self.url,
            organization: self.organization,
        }
    }
}

impl FromProtoAt for AgentCapabilities {
    fn from_proto_at(p: pb::AgentCapabilities, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentCapabilities {
            streaming: p.streaming,
            push_notifications: p.push_notifications,
            extensions: repeated(p.extensions, &at.field("extensions"))?,
            extended_agent_card: p.extended_agent_card,
        })
    }
}

impl ToProto for AgentCapabilities {
    type Proto = pb::AgentCapabilities;
    fn to_proto(self) -> pb::AgentCapabilities {
        pb::AgentCapabilities {
            streaming: self.streaming,
            push_notifications: self.push_notifications,
            extensions: to_repeated(self.extensions),
            extended_agent_card: self.extended_agent_card,
        }
    }
}

impl FromProtoAt for AgentExtension {
    fn from_proto_at(p: pb::AgentExtension, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentExtension {
            uri: non_empty(p.uri),
            description: non_empty(p.description),
            required: p.required,
            params: metadata(p.params, &at.field("params"))?,
        })
    }
}

impl ToProto for AgentExtension {
    type Proto = pb::AgentExtension;
    fn to_proto(self) -> pb::AgentExtension {
        pb::AgentExtension {
            uri: self.uri.unwrap_or_default(),
            description: self.description.unwrap_or_default(),
            required: self.required,
            params: metadata_to_proto(self.params),
        }
    }
}

impl FromProtoAt for AgentSkill {
    fn from_proto_at(p: pb::AgentSkill, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentSkill {
            id: required(p.id, &at.field("id"))?,
            name: required(p.name, &at.field("name"))?,
            description: required(p.description, &at.field("description"))?,
            tags: p.tags,
            examples: p.examples,
            input_modes: p.input_modes,
            output_modes: p.output_modes,
            security_requirements: repeated(
                p.security_requirements,
                &at.field("securityRequirements"),
            )?,
        })
    }
}

impl ToProto for AgentSkill {
    type Proto = pb::AgentSkill;
    fn to_proto(self) -> pb::AgentSkill {
        pb::AgentSkill {
            id: self.id,
            name: self.name,
            description: self.description,
            tags: self.tags,
            examples: self.examples,
            input_modes: self.input_modes,
            output_modes: self.output_modes,
            security_requirements: to_repeated(self.security_requirements),
        }
    }
}

impl FromProtoAt for AgentCardSignature {
    fn from_proto_at(p: pb::AgentCardSignature, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AgentCardSignature {
            protected: required(p.protected, &at.field("protected"))?,
            signature: required(p.signature, &at.field("signature"))?,
            header: metadata(p.header, &at.field("header"))?,
        })
    }
}

impl ToProto for AgentCardSignature {
    type Proto = pb::AgentCardSignature;
    fn to_proto(self) -> pb::AgentCardSignature {
        pb::AgentCardSignature {
            protected: self.protected,
            signature: self.signature,
            header: metadata_to_proto(self.header),
        }
    }
}

impl FromProtoAt for StringList {
    fn from_proto_at(p: pb::StringList, _at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(StringList { list: p.list })
    }
}

impl ToProto for StringList {
    type Proto = pb::StringList;
    fn to_proto(self) -> pb::StringList {
        pb::StringList { list: self.list }
    }
}

impl FromProtoAt for SecurityRequirement {
    fn from_proto_at(p: pb::SecurityRequirement, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SecurityRequirement {
            schemes: map_from_proto(p.schemes, &at.field("schemes"))?,
        })
    }
}

impl ToProto for SecurityRequirement {
    type Proto = pb::SecurityRequirement;
    fn to_proto(self) -> pb::SecurityRequirement {
        pb::SecurityRequirement {
            schemes: map_to_proto(self.schemes),
        }
    }
}

impl FromProtoAt for SecurityScheme {
    fn from_proto_at(p: pb::SecurityScheme, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::security_scheme::Scheme;
        Ok(match p.scheme {
            Some(Scheme::ApiKeySecurityScheme(s)) => SecurityScheme::ApiKeySecurityScheme(
                ApiKeySecurityScheme::from_proto_at(s, &at.field("apiKeySecurityScheme"))?,
            ),
            Some(Scheme::HttpAuthSecurityScheme(s)) => SecurityScheme::HttpAuthSecurityScheme(
                HttpAuthSecurityScheme::from_proto_at(s, &at.field("httpAuthSecurityScheme"))?,
            ),
            Some(Scheme::Oauth2SecurityScheme(s)) => SecurityScheme::Oauth2SecurityScheme(
                OAuth2SecurityScheme::from_proto_at(s, &at.field("oauth2SecurityScheme"))?,
            ),
            Some(Scheme::OpenIdConnectSecurityScheme(s)) => {
                SecurityScheme::OpenIdConnectSecurityScheme(
                    OpenIdConnectSecurityScheme::from_proto_at(
                        s,
                        &at.field("openIdConnectSecurityScheme"),
                    )?,
                )
            }
            Some(Scheme::MtlsSecurityScheme(s)) => SecurityScheme::MtlsSecurityScheme(
                MutualTlsSecurityScheme::from_proto_at(s, &at.field("mtlsSecurityScheme"))?,
            ),
            None => return Err(oneof_unset(at, "scheme", SecurityScheme::MEMBERS)),
        })
    }
}

impl ToProto for SecurityScheme {
    type Proto = pb::SecurityScheme;
    fn to_proto(self) -> pb::SecurityScheme {
        use pb::security_scheme::Scheme;
        let scheme = match self {
            SecurityScheme::ApiKeySecurityScheme(s) => Scheme::ApiKeySecurityScheme(s.to_proto()),
            SecurityScheme::HttpAuthSecurityScheme(s) => {
                Scheme::HttpAuthSecurityScheme(s.to_proto())
            }
            SecurityScheme::Oauth2SecurityScheme(s) => Scheme::Oauth2SecurityScheme(s.to_proto()),
            SecurityScheme::OpenIdConnectSecurityScheme(s) => {
                Scheme::OpenIdConnectSecurityScheme(s.to_proto())
            }
            SecurityScheme::MtlsSecurityScheme(s) => Scheme::MtlsSecurityScheme(s.to_proto()),
        };
        pb::SecurityScheme {
            scheme: Some(scheme),
        }
    }
}

impl FromProtoAt for ApiKeySecurityScheme {
    fn from_proto_at(p: pb::ApiKeySecurityScheme, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(ApiKeySecurityScheme {
            description: non_empty(p.description),
            location: required(p.location, &at.field("location"))?,
            name: required(p.name, &at.field("name"))?,
        })
    }
}

impl ToProto for ApiKeySecurityScheme {
    type Proto = pb::ApiKeySecurityScheme;
    fn to_proto(self) -> pb::ApiKeySecurityScheme {
        pb::ApiKeySecurityScheme {
            description: self.description.unwrap_or_default(),
            location: self.location,
            name: self.name,
        }
    }
}

impl FromProtoAt for HttpAuthSecurityScheme {
    fn from_proto_at(p: pb::HttpAuthSecurityScheme, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(HttpAuthSecurityScheme {
            description: non_empty(p.description),
            scheme: required(p.scheme, &at.field("scheme"))?,
            bearer_format: non_empty(p.bearer_format),
        })
    }
}

impl ToProto for HttpAuthSecurityScheme {
    type Proto = pb::HttpAuthSecurityScheme;
    fn to_proto(self) -> pb::HttpAuthSecurityScheme {
        pb::HttpAuthSecurityScheme {
            description: self.description.unwrap_or_default(),
            scheme: self.scheme,
            bearer_format: self.bearer_format.unwrap_or_default(),
        }
    }
}

impl FromProtoAt for OAuth2SecurityScheme {
    fn from_proto_at(p: pb::OAuth2SecurityScheme, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(OAuth2SecurityScheme {
            description: non_empty(p.description),
            flows: required_message(p.flows, &at.field("flows"))?,
            oauth2_metadata_url: non_empty(p.oauth2_metadata_url),
        })
    }
}

impl ToProto for OAuth2SecurityScheme {
    type Proto = pb::OAuth2SecurityScheme;
    fn to_proto(self) -> pb::OAuth2SecurityScheme {
        pb::OAuth2SecurityScheme {
            description: self.description.unwrap_or_default(),
            flows: Some(self.flows.to_proto()),
            oauth2_metadata_url: self.oauth2_metadata_url.unwrap_or_default(),
        }
    }
}

impl FromProtoAt for OpenIdConnectSecurityScheme {
    fn from_proto_at(p: pb::OpenIdConnectSecurityScheme, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(OpenIdConnectSecurityScheme {
            description: non_empty(p.description),
            open_id_connect_url: required(p.open_id_connect_url, &at.field("openIdConnectUrl"))?,
        })
    }
}

impl ToProto for OpenIdConnectSecurityScheme {
    type Proto = pb::OpenIdConnectSecurityScheme;
    fn to_proto(self) -> pb::OpenIdConnectSecurityScheme {
        pb::OpenIdConnectSecurityScheme {
            description: self.description.unwrap_or_default(),
            open_id_connect_url: self.open_id_connect_url,
        }
    }
}

impl FromProtoAt for MutualTlsSecurityScheme {
    fn from_proto_at(p: pb::MutualTlsSecurityScheme, _at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(MutualTlsSecurityScheme {
            description: non_empty(p.description),
        })
    }
}

impl ToProto for MutualTlsSecurityScheme {
    type Proto = pb::MutualTlsSecurityScheme;
    fn to_proto(self) -> pb::MutualTlsSecurityScheme {
        pb::MutualTlsSecurityScheme {
            description: self.description.unwrap_or_default(),
        }
    }
}

// The implicit and password flows are deprecated in the proto; old cards still carry them.
#[allow(deprecated)]
impl FromProtoAt for OAuthFlows {
    fn from_proto_at(p: pb::OAuthFlows, at: &Path<'_>) -> Result<Self, A2aError> {
        use pb::o_auth_flows::Flow;
        Ok(match p.flow {
            Some(Flow::AuthorizationCode(f)) => OAuthFlows::AuthorizationCode(
                AuthorizationCodeOAuthFlow::from_proto_at(f, &at.field("authorizationCode"))?,
            ),
            Some(Flow::ClientCredentials(f)) => OAuthFlows::ClientCredentials(
                ClientCredentialsOAuthFlow::from_proto_at(f, &at.field("clientCredentials"))?,
            ),
            Some(Flow::Implicit(f)) => {
                OAuthFlows::Implicit(ImplicitOAuthFlow::from_proto_at(f, &at.field("implicit"))?)
            }
            Some(Flow::Password(f)) => {
                OAuthFlows::Password(PasswordOAuthFlow::from_proto_at(f, &at.field("password"))?)
            }
            Some(Flow::DeviceCode(f)) => OAuthFlows::DeviceCode(
                DeviceCodeOAuthFlow::from_proto_at(f, &at.field("deviceCode"))?,
            ),
            None => return Err(oneof_unset(at, "flow", OAuthFlows::MEMBERS)),
        })
    }
}

#[allow(deprecated)]
impl ToProto for OAuthFlows {
    type Proto = pb::OAuthFlows;
    fn to_proto(self) -> pb::OAuthFlows {
        use pb::o_auth_flows::Flow;
        let flow = match self {
            OAuthFlows::AuthorizationCode(f) => Flow::AuthorizationCode(f.to_proto()),
            OAuthFlows::ClientCredentials(f) => Flow::ClientCredentials(f.to_proto()),
            OAuthFlows::Implicit(f) => Flow::Implicit(f.to_proto()),
            OAuthFlows::Password(f) => Flow::Password(f.to_proto()),
            OAuthFlows::DeviceCode(f) => Flow::DeviceCode(f.to_proto()),
        };
        pb::OAuthFlows { flow: Some(flow) }
    }
}

impl FromProtoAt for AuthorizationCodeOAuthFlow {
    fn from_proto_at(p: pb::AuthorizationCodeOAuthFlow, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AuthorizationCodeOAuthFlow {
            authorization_url: required(p.authorization_url, &at.field("authorizationUrl"))?,
            token_url: required(p.token_url, &at.field("tokenUrl"))?,
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes(p.scopes),
            pkce_required: p.pkce_required,
        })
    }
}

impl ToProto for AuthorizationCodeOAuthFlow {
    type Proto = pb::AuthorizationCodeOAuthFlow;
    fn to_proto(self) -> pb::AuthorizationCodeOAuthFlow {
        pb::AuthorizationCodeOAuthFlow {
            authorization_url: self.authorization_url,
            token_url: self.token_url,
            refresh_url: self.refresh_url.unwrap_or_default(),
            scopes: scopes_to_proto(self.scopes),
            pkce_required: self.pkce_required,
        }
    }
}

impl FromProtoAt for ClientCredentialsOAuthFlow {
    fn from_proto_at(p: pb::ClientCredentialsOAuthFlow, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(ClientCredentialsOAuthFlow {
            token_url: required(p.token_url, &at.field("tokenUrl"))?,
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes(p.scopes),
        })
    }
}

impl ToProto for ClientCredentialsOAuthFlow {
    type Proto = pb::ClientCredentialsOAuthFlow;
    fn to_proto(self) -> pb::ClientCredentialsOAuthFlow {
        pb::ClientCredentialsOAuthFlow {
            token_url: self.token_url,
            refresh_url: self.refresh_url.unwrap_or_default(),
            scopes: scopes_to_proto(self.scopes),
        }
    }
}

impl FromProtoAt for ImplicitOAuthFlow {
    fn from_proto_at(p: pb::ImplicitOAuthFlow, _at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(ImplicitOAuthFlow {
            authorization_url: non_empty(p.authorization_url),
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes(p.scopes),
        })
    }
}

impl ToProto for ImplicitOAuthFlow {
    type Proto = pb::ImplicitOAuthFlow;
    fn to_proto(self) -> pb::ImplicitOAuthFlow {
        pb::ImplicitOAuthFlow {
            authorization_url: self.authorization_url.unwrap_or_default(),
            refresh_url: self.refresh_url.unwrap_or_default(),
            scopes: scopes_to_proto(self.scopes),
        }
    }
}

impl FromProtoAt for PasswordOAuthFlow {
    fn from_proto_at(p: pb::PasswordOAuthFlow, _at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(PasswordOAuthFlow {
            token_url: non_empty(p.token_url),
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes(p.scopes),
        })
    }
}

impl ToProto for PasswordOAuthFlow {
    type Proto = pb::PasswordOAuthFlow;
    fn to_proto(self) -> pb::PasswordOAuthFlow {
        pb::PasswordOAuthFlow {
            token_url: self.token_url.unwrap_or_default(),
            refresh_url: self.refresh_url.unwrap_or_default(),
            scopes: scopes_to_proto(self.scopes),
        }
    }
}

impl FromProtoAt for DeviceCodeOAuthFlow {
    fn from_proto_at(p: pb::DeviceCodeOAuthFlow, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(DeviceCodeOAuthFlow {
            device_authorization_url: required(
                p.device_authorization_url,
                &at.field("deviceAuthorizationUrl"),
            )?,
            token_url: required(p.token_url, &at.field("tokenUrl"))?,
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes(p.scopes),
        })
    }
}

impl ToProto for DeviceCodeOAuthFlow {
    type Proto = pb::DeviceCodeOAuthFlow;
    fn to_proto(self) -> pb::DeviceCodeOAuthFlow {
        pb::DeviceCodeOAuthFlow {
            device_authorization_url: self.device_authorization_url,
            token_url: self.token_url,
            refresh_url: self.refresh_url.unwrap_or_default(),
            scopes: scopes_to_proto(self.scopes),
        }
    }
}

from_proto_at_root!(
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentCapabilities,
    AgentExtension,
    AgentSkill,
    AgentCardSignature,
    StringList,
    SecurityRequirement,
    SecurityScheme,
    ApiKeySecurityScheme,
    HttpAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
    OAuthFlows,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
    DeviceCodeOAuthFlow,
);
