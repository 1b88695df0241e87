//! The agent of the `push_worker` example: the other half of `orchestrator`. Its one skill
//! takes a moment and answers; a caller sending without waiting hears back by webhook.

use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::push::{PushConfig, SsrfPolicy};
use a2a_kit::server::{AgentService, AgentServiceBuilder};

/// Summarises texts, slowly.
#[derive(Clone)]
pub struct PushWorker {
    work: Duration,
}

impl PushWorker {
    /// A worker whose skill works for `work` before it answers.
    pub fn new(work: Duration) -> Self {
        PushWorker { work }
    }
}

/// Summarises texts, slowly, and reports back by push notification.
#[a2a_agent(name = "Push Worker", push_notifications = true)]
impl PushWorker {
    /// Count the words of a text and quote its first one (after some "work").
    #[skill(tags = ["demo", "push"], examples = ["The quick brown fox"])]
    async fn summarise(&self, ctx: TaskContext, Text(text): Text) -> Result<String, SkillError> {
        ctx.status("Reading the text").await?;
        tokio::time::sleep(self.work).await;
        let words = text.split_whitespace().count();
        let first = text.split_whitespace().next().unwrap_or("");
        Ok(format!("{words} word(s), starting with \"{first}\""))
    }
}

/// Push delivery as the demo has it: loopback webhooks allowed (a caller on the same machine
/// hears back), or every private network with `allow_private`; logged either way, since a
/// deployed agent should allow neither.
pub fn push_config(allow_private: bool) -> PushConfig {
    if allow_private {
        tracing::warn!(
            "push notifications may go to loopback and private-network webhooks (--allow-private-webhooks): development only"
        );
        return PushConfig::default().allow_private_networks();
    }
    tracing::info!(
        "push notifications may go to loopback webhooks (127.0.0.0/8, ::1): this demo allows them so that a caller on this machine hears back; a deployed agent should not"
    );
    let loopback = SsrfPolicy::allowlist(["127.0.0.0/8", "::1"])
        .expect("loopback networks are valid allowlist entries");
    PushConfig::default().ssrf(loopback)
}

/// The agent, working `work` per text, delivering pushes with `push`.
pub fn a2a(work: Duration, push: PushConfig) -> AgentServiceBuilder {
    AgentService::builder(PushWorker::new(work)).push_delivery(push)
}
