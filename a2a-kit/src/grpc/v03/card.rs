//! The agent card in v0.3's proto shape (see [`convert`](super::convert)'s notes on the card).

use std::collections::{BTreeMap, HashMap};

use super::convert::ToV03;
use super::pb;
use crate::grpc::convert::metadata_to_proto;
use crate::protocol::{
    AgentCard, AgentInterface, AgentSkill, OAuthFlows, SecurityRequirement, SecurityScheme,
};

fn security_to_v03(requirements: Vec<SecurityRequirement>) -> Vec<pb::Security> {
    requirements
        .into_iter()
        .map(|r| pb::Security {
            schemes: r
                .schemes
                .into_iter()
                .map(|(name, scopes)| (name, pb::StringList { list: scopes.list }))
                .collect(),
        })
        .collect()
}

fn scopes(scopes: BTreeMap<String, String>) -> HashMap<String, String> {
    scopes.into_iter().collect()
}

/// An OAuth flow v0.3 knows; Device Code is 1.0's only.
fn flows_to_v03(flows: OAuthFlows) -> Option<pb::OAuthFlows> {
    use pb::o_auth_flows::Flow;
    let flow = match flows {
        OAuthFlows::AuthorizationCode(f) => {
            Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
                authorization_url: f.authorization_url,
                token_url: f.token_url,
                refresh_url: f.refresh_url.unwrap_or_default(),
                scopes: scopes(f.scopes),
            })
        }
        OAuthFlows::ClientCredentials(f) => {
            Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
                token_url: f.token_url,
                refresh_url: f.refresh_url.unwrap_or_default(),
                scopes: scopes(f.scopes),
            })
        }
        OAuthFlows::Implicit(f) => Flow::Implicit(pb::ImplicitOAuthFlow {
            authorization_url: f.authorization_url.unwrap_or_default(),
            refresh_url: f.refresh_url.unwrap_or_default(),
            scopes: scopes(f.scopes),
        }),
        OAuthFlows::Password(f) => Flow::Password(pb::PasswordOAuthFlow {
            token_url: f.token_url.unwrap_or_default(),
            refresh_url: f.refresh_url.unwrap_or_default(),
            scopes: scopes(f.scopes),
        }),
        OAuthFlows::DeviceCode(_) => return None,
    };
    Some(pb::OAuthFlows { flow: Some(flow) })
}

fn scheme_to_v03(scheme: SecurityScheme) -> pb::SecurityScheme {
    use pb::security_scheme::Scheme;
    let scheme = match scheme {
        SecurityScheme::ApiKeySecurityScheme(s) => {
            Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme {
                description: s.description.unwrap_or_default(),
                location: s.location,
                name: s.name,
            })
        }
        SecurityScheme::HttpAuthSecurityScheme(s) => {
            Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme {
                description: s.description.unwrap_or_default(),
                scheme: s.scheme,
                bearer_format: s.bearer_format.unwrap_or_default(),
            })
        }
        SecurityScheme::Oauth2SecurityScheme(s) => {
            Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme {
                description: s.description.unwrap_or_default(),
                flows: flows_to_v03(s.flows),
                oauth2_metadata_url: s.oauth2_metadata_url.unwrap_or_default(),
            })
        }
        SecurityScheme::OpenIdConnectSecurityScheme(s) => {
            Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme {
                description: s.description.unwrap_or_default(),
                open_id_connect_url: s.open_id_connect_url,
            })
        }
        SecurityScheme::MtlsSecurityScheme(s) => {
            Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme {
                description: s.description.unwrap_or_default(),
            })
        }
    };
    pb::SecurityScheme {
        scheme: Some(scheme),
    }
}

fn skill_to_v03(s: AgentSkill) -> pb::AgentSkill {
    pb::AgentSkill {
        id: s.id,
        name: s.name,
        description: s.description,
        tags: s.tags,
        examples: s.examples,
        input_modes: s.input_modes,
        output_modes: s.output_modes,
        security: security_to_v03(s.security_requirements),
    }
}

impl ToV03 for AgentCard {
    type Proto = pb::AgentCard;
    /// The card offering a v0.3 client every one of its interfaces (see [`card_to_v03`]).
    fn to_v03(self) -> pb::AgentCard {
        card_offering(self, |_| true)
    }
}

/// `card` in v0.3's shape, offering a v0.3 client its interfaces whose binding is in
/// `bindings` (the ones that serve v0.3 too, as
/// [`hybrid_card`](crate::v03::hybrid_card) offers them), in the card's order: `url` and
/// `preferred_transport` are the first's, `additional_interfaces` all of them.
pub fn card_to_v03(card: AgentCard, bindings: &[&str]) -> pb::AgentCard {
    card_offering(card, |i| bindings.contains(&i.protocol_binding.as_str()))
}

/// `card` in v0.3's shape, offering the interfaces `offered` keeps.
fn card_offering(card: AgentCard, offered: impl Fn(&AgentInterface) -> bool) -> pb::AgentCard {
    let interfaces: Vec<&AgentInterface> = card
        .supported_interfaces
        .iter()
        .filter(|i| offered(i))
        .collect();
    let (url, preferred_transport) = interfaces
        .first()
        .map(|i| (i.url.clone(), i.protocol_binding.clone()))
        .unwrap_or_default();
    let additional_interfaces = interfaces
        .iter()
        .map(|i| pb::AgentInterface {
            url: i.url.clone(),
            transport: i.protocol_binding.clone(),
        })
        .collect();
    let capabilities = card.capabilities;
    pb::AgentCard {
        protocol_version: crate::v03::CARD_PROTOCOL_VERSION.to_owned(),
        name: card.name,
        description: card.description,
        url,
        preferred_transport,
        additional_interfaces,
        provider: card.provider.map(|p| pb::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: card.version,
        documentation_url: card.documentation_url.unwrap_or_default(),
        capabilities: Some(pb::AgentCapabilities {
            streaming: capabilities.streaming.unwrap_or(false),
            push_notifications: capabilities.push_notifications.unwrap_or(false),
            extensions: capabilities
                .extensions
                .into_iter()
                .map(|e| pb::AgentExtension {
                    uri: e.uri.unwrap_or_default(),
                    description: e.description.unwrap_or_default(),
                    required: e.required,
                    params: metadata_to_proto(e.params),
                })
                .collect(),
        }),
        security_schemes: card
            .security_schemes
            .into_iter()
            .map(|(name, scheme)| (name, scheme_to_v03(scheme)))
            .collect(),
        security: security_to_v03(card.security_requirements),
        default_input_modes: card.default_input_modes,
        default_output_modes: card.default_output_modes,
        skills: card.skills.into_iter().map(skill_to_v03).collect(),
        supports_authenticated_extended_card: capabilities.extended_agent_card.unwrap_or(false),
        signatures: card
            .signatures
            .into_iter()
            .map(|s| pb::AgentCardSignature {
                protected: s.protected,
                signature: s.signature,
                header: metadata_to_proto(s.header),
            })
            .collect(),
    }
}
