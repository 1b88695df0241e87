//! One card both kinds of client read: the 1.0 card with the fields a 0.3 client reads beside
//! them, as the official SDKs serve it.
//!
//! A 1.0 reader ignores what it does not know, and so does a 0.3 one; where the two name the
//! same thing differently both spellings are there: `url`, `preferredTransport` and
//! `additionalInterfaces` beside `supportedInterfaces`; `supportsAuthenticatedExtendedCard`
//! beside `capabilities.extendedAgentCard`; `security` beside `securityRequirements` (the
//! card's and each skill's); and each security scheme carries its 0.3 members (`type`,
//! `in`, `scheme`, `flows`...) beside its 1.0 member (`apiKeySecurityScheme`...).

use serde_json::{Map, Value, json};

use crate::protocol::{AgentCard, AgentInterface, SecurityRequirement, SecurityScheme};

/// The protocol version a 0.3 card states (0.3 wrote the patch too).
pub const CARD_PROTOCOL_VERSION: &str = "0.3.0";

/// The 0.3 name of a 1.0 protocol binding (they are the same: `JSONRPC`, `HTTP+JSON`,
/// `GRPC`).
fn transport(interface: &AgentInterface) -> &str {
    &interface.protocol_binding
}

/// `card` as JSON with the 0.3 fields beside its own. A 0.3 client is offered the card's
/// 1.0 interfaces whose binding is in `bindings` (the same URLs serve both versions), the
/// first the preferred one; `supportedInterfaces` is left as it is, so a 1.0 client choosing
/// by binding is never handed a 0.3 interface.
pub fn hybrid_card(card: &AgentCard, bindings: &[&str]) -> serde_json::Result<Value> {
    let v03_interfaces: Vec<&AgentInterface> = card
        .supported_interfaces
        .iter()
        .filter(|i| bindings.contains(&i.protocol_binding.as_str()))
        .collect();
    let mut value = serde_json::to_value(card)?;
    let Value::Object(out) = &mut value else {
        return Ok(value);
    };
    if let Some(preferred) = v03_interfaces.first() {
        out.insert("protocolVersion".into(), CARD_PROTOCOL_VERSION.into());
        out.insert("url".into(), preferred.url.clone().into());
        out.insert("preferredTransport".into(), transport(preferred).into());
        let additional: Vec<Value> = v03_interfaces
            .iter()
            .map(|i| json!({ "url": i.url, "transport": transport(i) }))
            .collect();
        out.insert("additionalInterfaces".into(), additional.into());
    }
    // As 0.3 agents write it: only when there is one.
    if card.capabilities.extended_agent_card == Some(true) {
        out.insert("supportsAuthenticatedExtendedCard".into(), true.into());
    }
    if !card.security_requirements.is_empty() {
        out.insert("security".into(), security(&card.security_requirements));
    }
    if let Some(Value::Array(skills)) = out.get_mut("skills") {
        for (json, skill) in skills.iter_mut().zip(&card.skills) {
            if let (Value::Object(json), false) = (json, skill.security_requirements.is_empty()) {
                json.insert("security".into(), security(&skill.security_requirements));
            }
        }
    }
    if let Some(Value::Object(schemes)) = out.get_mut("securitySchemes") {
        for (name, scheme) in &card.security_schemes {
            if let Some(Value::Object(json)) = schemes.get_mut(name) {
                json.extend(scheme_v03(scheme));
            }
        }
    }
    Ok(value)
}

/// The 0.3 members [`hybrid_card`] adds at the top of a card.
const CARD_MEMBERS: [&str; 6] = [
    "protocolVersion",
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "supportsAuthenticatedExtendedCard",
    "security",
];

/// The 0.3 members [`hybrid_card`] adds to a security scheme, beside its 1.0 member.
const SCHEME_MEMBERS: [&str; 9] = [
    "type",
    "in",
    "name",
    "scheme",
    "bearerFormat",
    "flows",
    "oauth2MetadataUrl",
    "openIdConnectUrl",
    "description",
];

/// A card document without the members [`hybrid_card`] adds (only those): the 1.0 card a
/// hybrid one was made from, which its signatures cover. `None` when it has none of them.
pub fn without_v03_members(card: &Value) -> Option<Value> {
    let Value::Object(top) = card else {
        return None;
    };
    if !CARD_MEMBERS.iter().any(|m| top.contains_key(*m)) {
        return None;
    }
    let mut out = top.clone();
    out.retain(|k, _| !CARD_MEMBERS.contains(&k.as_str()));
    if let Some(Value::Array(skills)) = out.get_mut("skills") {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            skill.remove("security");
        }
    }
    if let Some(Value::Object(schemes)) = out.get_mut("securitySchemes") {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            scheme.retain(|k, _| !SCHEME_MEMBERS.contains(&k.as_str()));
        }
    }
    Some(Value::Object(out))
}

/// 0.3's `security`: a list of `{scheme: [scopes]}`.
fn security(requirements: &[SecurityRequirement]) -> Value {
    requirements
        .iter()
        .map(|r| {
            r.schemes
                .iter()
                .map(|(name, scopes)| (name.clone(), json!(scopes.list)))
                .collect::<Map<_, _>>()
        })
        .collect::<Vec<_>>()
        .into()
}

/// A security scheme's 0.3 members (OpenAPI's shape, `type` the discriminator).
fn scheme_v03(scheme: &SecurityScheme) -> Map<String, Value> {
    let (mut out, description) = match scheme {
        SecurityScheme::ApiKeySecurityScheme(s) => (
            json!({ "type": "apiKey", "in": s.location, "name": s.name }),
            &s.description,
        ),
        SecurityScheme::HttpAuthSecurityScheme(s) => {
            let mut v = json!({ "type": "http", "scheme": s.scheme });
            if let Some(format) = &s.bearer_format {
                v["bearerFormat"] = format.clone().into();
            }
            (v, &s.description)
        }
        SecurityScheme::Oauth2SecurityScheme(s) => {
            let mut v = json!({ "type": "oauth2", "flows": s.flows });
            if let Some(url) = &s.oauth2_metadata_url {
                v["oauth2MetadataUrl"] = url.clone().into();
            }
            (v, &s.description)
        }
        SecurityScheme::OpenIdConnectSecurityScheme(s) => (
            json!({ "type": "openIdConnect", "openIdConnectUrl": s.open_id_connect_url }),
            &s.description,
        ),
        SecurityScheme::MtlsSecurityScheme(s) => (json!({ "type": "mutualTLS" }), &s.description),
    };
    if let Some(description) = description {
        out["description"] = description.clone().into();
    }
    match out {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApiKeySecurityScheme, StringList};

    fn card() -> AgentCard {
        let mut card = AgentCard {
            name: "a".into(),
            supported_interfaces: vec![AgentInterface {
                url: "http://h:1".into(),
                protocol_binding: "JSONRPC".into(),
                protocol_version: "1.0".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        card.security_schemes.insert(
            "key".into(),
            SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                location: "header".into(),
                name: "X-API-Key".into(),
                ..Default::default()
            }),
        );
        card.security_requirements = vec![SecurityRequirement {
            schemes: [("key".to_string(), StringList::default())].into(),
        }];
        card
    }

    #[test]
    fn a_hybrid_card_reads_back_as_the_same_1_0_card() {
        let card = card();
        let hybrid = hybrid_card(&card, &["JSONRPC"]).unwrap();
        assert_eq!(hybrid["url"], "http://h:1");
        assert_eq!(hybrid["preferredTransport"], "JSONRPC");
        assert_eq!(hybrid["protocolVersion"], "0.3.0");
        assert_eq!(hybrid["security"], json!([{ "key": [] }]));
        assert_eq!(hybrid["securitySchemes"]["key"]["type"], "apiKey");
        assert_eq!(hybrid["securitySchemes"]["key"]["in"], "header");
        assert_eq!(
            without_v03_members(&hybrid).unwrap(),
            serde_json::to_value(&card).unwrap()
        );
        let back: AgentCard = serde_json::from_value(hybrid).unwrap();
        assert_eq!(back, card);
    }
}
