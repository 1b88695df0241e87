//! The agent card: the public one (built once, with the bytes, `ETag` and `Last-Modified` it
//! is served with) and GetExtendedAgentCard.

use bytes::Bytes;

use super::AgentService;
use crate::error::A2aError;
use crate::protocol::{AgentCard, GetExtendedAgentCardRequest};

impl AgentService {
    /// The card as served (JSON bytes), its `ETag` and `Last-Modified` values.
    pub fn card_document(&self) -> (&Bytes, &str, &str) {
        (
            &self.inner.card_json,
            &self.inner.card_etag,
            &self.inner.card_last_modified,
        )
    }

    /// GetExtendedAgentCard. Authentication is the host application's job (axum middleware);
    /// without an extended card the capability is off and this is UnsupportedOperationError.
    pub async fn get_extended_agent_card(
        &self,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        match (
            &self.inner.extended_card,
            self.inner.card.capabilities.extended_agent_card,
        ) {
            (Some(card), _) => Ok(card.clone()),
            (None, Some(true)) => Err(A2aError::ExtendedAgentCardNotConfigured),
            (None, _) => Err(A2aError::unsupported(
                "this agent has no extended agent card",
            )),
        }
    }
}
