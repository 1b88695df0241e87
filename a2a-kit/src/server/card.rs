//! The agent card: the public one (serialized once) and GetExtendedAgentCard. How it is
//! served over HTTP (`ETag`, `Last-Modified`, revalidation) is the edge's: `binding::card`.
//!
//! An agent built without a public URL does not guess one: the card it serves names the URL
//! each request reached it at ([`AgentService::card_document`]). The card is then kept as
//! JSON split at [`PER_REQUEST_URL`], so serving it is a concatenation, not a serialization.

use bytes::{Bytes, BytesMut};

use super::AgentService;
use crate::error::A2aError;
use crate::protocol::{AgentCard, GetExtendedAgentCardRequest, ProtocolVersion};
use crate::request::RequestContext;

/// The base URL of an agent built without a public URL, as its [`card`](AgentService::card)
/// shows it. Served cards name the URL of each request instead; every occurrence of this
/// prefix in the card (a URL derived from it in a `card` edit too) is replaced.
pub const PER_REQUEST_URL: &str = "http://per-request-url.invalid";

/// The `host:port` of an agent built without a public URL, where its card names the gRPC
/// interface (gRPC dials an authority, not a URL); served cards name each request's.
pub const PER_REQUEST_AUTHORITY: &str = "per-request-url.invalid:0";

/// The public card as JSON: as 1.0 writes it, and, when the agent serves A2A 0.3, with the
/// fields a 0.3 client reads beside its own (what a request that does not ask for 1.0 gets).
pub(super) struct CardJson {
    v1: CardDocument,
    hybrid: Option<CardDocument>,
}

/// One card document: fixed, or split where the request's URL or authority goes.
enum CardDocument {
    Fixed {
        json: Bytes,
    },
    /// Each piece but the last is followed by the request's URL (`false`) or authority.
    PerRequest {
        pieces: Vec<(Bytes, bool)>,
    },
}

impl CardJson {
    /// The card's documents; the hybrid one when `v03`.
    /// The card's documents; the hybrid one when the agent serves 0.3 over `v03` (none: 1.0
    /// only).
    pub(super) fn new(
        card: &AgentCard,
        per_request: bool,
        v03: Option<&[&str]>,
    ) -> Result<Self, serde_json::Error> {
        let v1 = CardDocument::new(serde_json::to_vec(card)?, per_request);
        let hybrid = match v03 {
            Some(bindings) => {
                let json = serde_json::to_vec(&crate::v03::hybrid_card(card, bindings)?)?;
                Some(CardDocument::new(json, per_request))
            }
            None => None,
        };
        Ok(CardJson { v1, hybrid })
    }
}

impl CardDocument {
    fn new(json: Vec<u8>, per_request: bool) -> Self {
        if !per_request {
            return CardDocument::Fixed {
                json: Bytes::from(json),
            };
        }
        let text = String::from_utf8(json).unwrap_or_default();
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        loop {
            let url = rest.find(PER_REQUEST_URL);
            let authority = rest.find(PER_REQUEST_AUTHORITY);
            let (at, len, is_authority) = match (url, authority) {
                (Some(u), Some(a)) if a < u => (a, PER_REQUEST_AUTHORITY.len(), true),
                (Some(u), _) => (u, PER_REQUEST_URL.len(), false),
                (None, Some(a)) => (a, PER_REQUEST_AUTHORITY.len(), true),
                (None, None) => {
                    pieces.push((Bytes::copy_from_slice(rest.as_bytes()), false));
                    break;
                }
            };
            pieces.push((Bytes::copy_from_slice(&rest.as_bytes()[..at]), is_authority));
            rest = &rest[at + len..];
        }
        CardDocument::PerRequest { pieces }
    }

    fn for_url(&self, base_url: &str) -> Bytes {
        match self {
            CardDocument::Fixed { json } => json.clone(),
            CardDocument::PerRequest { pieces } => {
                let base = base_url.trim_end_matches('/');
                // The URL goes inside JSON strings: escaped as JSON would escape it.
                let escape = |s: &str| {
                    let quoted = serde_json::to_string(s).unwrap_or_default();
                    quoted[1..quoted.len().max(2) - 1].to_string()
                };
                let url = escape(base);
                let mut authority = None;
                let mut out = BytesMut::new();
                let last = pieces.len().saturating_sub(1);
                for (i, (piece, is_authority)) in pieces.iter().enumerate() {
                    out.extend_from_slice(piece);
                    if i == last {
                        break;
                    }
                    if *is_authority {
                        let authority =
                            authority.get_or_insert_with(|| escape(&authority_of(base)));
                        out.extend_from_slice(authority.as_bytes());
                    } else {
                        out.extend_from_slice(url.as_bytes());
                    }
                }
                out.freeze()
            }
        }
    }
}

/// The `host:port` of a URL (its scheme's port when it names none): what a gRPC client
/// dials for an agent at `url`.
///
/// ```
/// use a2a_kit::server::authority_of;
/// assert_eq!(authority_of("http://127.0.0.1:3000/a2a"), "127.0.0.1:3000");
/// assert_eq!(authority_of("https://agent.example"), "agent.example:443");
/// assert_eq!(authority_of("http://[::1]/"), "[::1]:80");
/// ```
pub fn authority_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let has_port = match authority.rfind(']') {
        Some(end) => authority[end..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port {
        authority.to_string()
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        format!("{authority}:{port}")
    }
}

impl AgentService {
    /// The card's JSON as served to a request that reached the agent at `base_url` (scheme,
    /// host and the path the agent is mounted at). With a public URL configured, `base_url`
    /// is ignored and the bytes are the same for everyone. An agent that serves A2A 0.3
    /// serves the card with the fields a 0.3 client reads beside its own (see
    /// [`card_document_for`](Self::card_document_for)).
    pub fn card_document(&self, base_url: &str) -> Bytes {
        self.card_document_for(base_url, ProtocolVersion::V0_3)
    }

    /// The card's JSON for a request in `version`: a 1.0 request (one that sends
    /// `A2A-Version: 1.0`) gets the card as 1.0 writes it, and so does any request to an
    /// agent that does not serve 0.3; any other request gets the card both kinds of client
    /// read ([`hybrid_card`](crate::v03::hybrid_card)).
    pub fn card_document_for(&self, base_url: &str, version: ProtocolVersion) -> Bytes {
        let json = &self.inner.card_json;
        match (&json.hybrid, version) {
            (Some(hybrid), ProtocolVersion::V0_3) => hybrid.for_url(base_url),
            _ => json.v1.for_url(base_url),
        }
    }

    /// When the service, and so its card, was built: the card's last modification.
    pub fn built_at(&self) -> std::time::SystemTime {
        self.inner.built_at
    }

    /// The card as served to a request that reached the agent at `base_url` (see
    /// [`card_document`](Self::card_document)): what `--print-card` shows.
    pub fn card_for_url(&self, base_url: &str) -> AgentCard {
        match &self.inner.card_json.v1 {
            CardDocument::Fixed { .. } => self.inner.card.clone(),
            CardDocument::PerRequest { .. } => {
                serde_json::from_slice(&self.card_document_for(base_url, ProtocolVersion::V1_0))
                    .unwrap_or_else(|_| self.inner.card.clone())
            }
        }
    }

    /// The JWKS of the keys this agent publishes (its card signers' and those given to
    /// [`publish_key`](super::AgentServiceBuilder::publish_key)), served at
    /// [`JWKS_PATH`](crate::signing::JWKS_PATH); `None` when it publishes none.
    #[cfg(feature = "jose")]
    pub fn jwks_document(&self) -> Option<Bytes> {
        self.inner.jwks.clone()
    }

    /// Whether the gRPC binding is served (feature `grpc`, unless the builder turned it off).
    #[cfg(feature = "grpc")]
    pub fn serves_grpc(&self) -> bool {
        self.inner.grpc
    }

    /// Whether A2A 0.3 is served beside 1.0 ([`v03`](super::AgentServiceBuilder::v03)).
    pub fn serves_v03(&self) -> bool {
        self.inner.v03
    }

    /// The bindings the card offers a 0.3 client: JSON-RPC, HTTP+JSON, and gRPC when it is
    /// served.
    pub fn v03_bindings(&self) -> &'static [&'static str] {
        #[cfg(feature = "grpc")]
        let grpc = self.inner.grpc;
        #[cfg(not(feature = "grpc"))]
        let grpc = false;
        super::v03_bindings(grpc)
    }

    /// Whether a stream ends with an event in `state` (a 0.3 status update's `final`):
    /// terminal and input-required states, auth-required as configured.
    pub(crate) fn ends_stream(&self, state: crate::protocol::TaskState) -> bool {
        self.rt().closes_stream(state)
    }

    /// The configured public URL; `None` when each request's own URL is served instead.
    pub fn public_url(&self) -> Option<&str> {
        self.inner.public_url.as_deref()
    }

    /// GetExtendedAgentCard for the context's caller: the extended card (configured, or this agent's card
    /// with every skill, `extended_only` ones too), through the
    /// [`extended_card_for`](super::AgentServiceBuilder::extended_card_for) hook if there is
    /// one. The service is built with an authenticator (or says the host authenticates), so
    /// only authenticated callers get here. Without an extended card the capability is off
    /// and this is UnsupportedOperationError. The context's
    /// [`agent_url`](RequestContext::agent_url) names the agent in a card built without a
    /// public URL (the request's origin, as the public card does).
    pub async fn get_extended_agent_card(
        &self,
        cx: &RequestContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        let tenant = cx.tenant_for(req.tenant.as_deref())?;
        let mut card = match (
            &self.inner.extended_card,
            self.inner.card.capabilities.extended_agent_card,
        ) {
            (Some(card), _) => card.clone(),
            (None, Some(true)) => return Err(A2aError::ExtendedAgentCardNotConfigured),
            (None, _) => {
                return Err(A2aError::unsupported(
                    "this agent has no extended agent card",
                ));
            }
        };
        if let (None, Some(base)) = (&self.inner.public_url, cx.agent_url()) {
            let base = base.trim_end_matches('/');
            for iface in &mut card.supported_interfaces {
                iface.url = iface.url.replace(PER_REQUEST_URL, base);
            }
        }
        if let Some(hook) = &self.inner.extended_card_for {
            hook(cx.caller().map(|c| &**c), tenant, &mut card);
            // The hook may have changed anything: only a signature made now covers it.
            #[cfg(feature = "jose")]
            if !self.inner.extended_card_signers.is_empty() {
                card.signatures.clear();
            }
            #[cfg(feature = "jose")]
            for signer in &self.inner.extended_card_signers {
                signer
                    .sign_card(&mut card)
                    .map_err(|e| A2aError::Internal(format!("signing the extended card: {e}")))?;
            }
        }
        Ok(card)
    }
}
