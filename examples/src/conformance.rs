//! The conformance agent: fixed behaviours keyed on the **prefix of the incoming messageId**, as
//! the A2A conformance kit (TCK) expects. Longer prefixes are matched first; the rest of the id
//! is a random suffix.
//!
//! | messageId prefix | behaviour |
//! |---|---|
//! | `tck-complete-task` | complete; final status message "Hello from TCK" (also as a follow-up to a task waiting for input) |
//! | `tck-input-required` | INPUT_REQUIRED; follow-ups with this prefix keep it there |
//! | `tck-artifact-text` | artifact "Generated text content", then complete |
//! | `tck-artifact-file` | artifact with a raw file part `output.txt` (`text/plain`), then complete |
//! | `tck-artifact-file-url` | artifact with url `https://example.com/output.txt`, then complete |
//! | `tck-artifact-data` | artifact with data `{"key": "value", "count": 42}`, then complete |
//! | `tck-message-response` | a direct Message "Direct message response" (no task) |
//! | `tck-reject-task` | REJECTED |
//! | `tck-stream-001`, `-003`, `tck-stream-ordering-001`, `tck-stream-artifact-text` | WORKING, a text artifact, COMPLETED |
//! | `tck-stream-artifact-file` | WORKING, a file artifact, COMPLETED |
//! | `tck-stream-artifact-chunked` | WORKING, "chunk-1 ", then `append` + `lastChunk` "chunk-2", COMPLETED |
//! | `tck-stream-002` | COMPLETED with no artifact (the kit always reports WORKING first) |
//! | `test-resubscribe-message-id` | WORKING for 4 seconds, then COMPLETED |
//! | anything else | complete, echoing the text |
//!
//! Routing: the agent has two skills, `tck` (every task behaviour) and `respond` (the direct
//! message), and a [`SkillRouter`] that picks one by prefix, as a user would write it.

use std::time::Duration;

use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use a2a_kit::skill::{Route, RouteRequest, SkillRouter};
use serde_json::json;

/// What the agent does for one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// `tck-complete-task`
    Complete,
    /// `tck-input-required`
    InputRequired,
    /// `tck-artifact-text`
    ArtifactText,
    /// `tck-artifact-file`
    ArtifactFile,
    /// `tck-artifact-file-url`
    ArtifactFileUrl,
    /// `tck-artifact-data`
    ArtifactData,
    /// `tck-message-response`
    MessageResponse,
    /// `tck-reject-task`
    Reject,
    /// `tck-stream-001`, `tck-stream-003`, `tck-stream-ordering-001`, `tck-stream-artifact-text`
    StreamText,
    /// `tck-stream-artifact-file`
    StreamFile,
    /// `tck-stream-artifact-chunked`
    StreamChunked,
    /// `tck-stream-002`
    StreamComplete,
    /// `test-resubscribe-message-id`
    SlowComplete,
    /// anything else
    Echo,
}

const PREFIXES: &[(&str, Behaviour)] = &[
    ("tck-complete-task", Behaviour::Complete),
    ("tck-input-required", Behaviour::InputRequired),
    ("tck-artifact-text", Behaviour::ArtifactText),
    ("tck-artifact-file-url", Behaviour::ArtifactFileUrl),
    ("tck-artifact-file", Behaviour::ArtifactFile),
    ("tck-artifact-data", Behaviour::ArtifactData),
    ("tck-message-response", Behaviour::MessageResponse),
    ("tck-reject-task", Behaviour::Reject),
    ("tck-stream-001", Behaviour::StreamText),
    ("tck-stream-003", Behaviour::StreamText),
    ("tck-stream-ordering-001", Behaviour::StreamText),
    ("tck-stream-artifact-text", Behaviour::StreamText),
    ("tck-stream-artifact-file", Behaviour::StreamFile),
    ("tck-stream-artifact-chunked", Behaviour::StreamChunked),
    ("tck-stream-002", Behaviour::StreamComplete),
    ("test-resubscribe-message-id", Behaviour::SlowComplete),
];

/// The behaviour for a messageId: the longest matching prefix wins.
pub fn behaviour(message_id: &str) -> Behaviour {
    PREFIXES
        .iter()
        .filter(|(p, _)| message_id.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, b)| *b)
        .unwrap_or(Behaviour::Echo)
}

/// The conformance agent.
#[derive(Clone, Debug)]
pub struct ConformanceAgent {
    /// How long `test-resubscribe-message-id` stays WORKING.
    pub slow: Duration,
}

impl Default for ConformanceAgent {
    fn default() -> Self {
        ConformanceAgent {
            slow: Duration::from_secs(4),
        }
    }
}

fn file_part() -> Part {
    Part::raw(b"Generated file content".to_vec())
        .with_filename("output.txt")
        .with_media_type("text/plain")
}

/// Behaves according to the prefix of each message's messageId, for conformance testing.
#[a2a_agent(name = "a2a-kit conformance agent", push_notifications = true)]
impl ConformanceAgent {
    /// Runs the task behaviour selected by the messageId prefix.
    #[skill(tags = ["conformance"])]
    async fn tck(&self, ctx: TaskContext, message: Message) -> Result<Outcome, SkillError> {
        Ok(match behaviour(&message.message_id) {
            Behaviour::Complete => Outcome::completed("Hello from TCK"),
            Behaviour::InputRequired => Outcome::input_required("Please provide more input"),
            Behaviour::ArtifactText | Behaviour::StreamText => {
                Outcome::completed("Generated text content")
            }
            Behaviour::ArtifactFile | Behaviour::StreamFile => {
                Outcome::artifact(Artifact::new(vec![file_part()]).with_name("output.txt"))
            }
            Behaviour::ArtifactFileUrl => Outcome::artifact(
                Artifact::new(vec![
                    Part::url("https://example.com/output.txt")
                        .with_filename("output.txt")
                        .with_media_type("text/plain"),
                ])
                .with_name("output.txt"),
            ),
            Behaviour::ArtifactData => {
                Outcome::completed(Part::data(json!({"key": "value", "count": 42})))
            }
            Behaviour::Reject => Outcome::rejected("Task rejected by the conformance agent"),
            Behaviour::StreamChunked => {
                let mut w = ctx.artifact_writer("chunked");
                w.write("chunk-1 ").await?;
                w.write_last("chunk-2").await?;
                Outcome::done()
            }
            Behaviour::StreamComplete => Outcome::done(),
            Behaviour::SlowComplete => {
                tokio::select! {
                    _ = ctx.cancelled() => return Err(SkillError::Canceled),
                    _ = tokio::time::sleep(self.slow) => Outcome::completed("Resubscribe test complete"),
                }
            }
            Behaviour::MessageResponse | Behaviour::Echo => Outcome::completed(message.text()),
        })
    }

    /// Answers with a direct message (no task).
    #[skill(tags = ["conformance"])]
    async fn respond(&self, message: Message) -> Message {
        let _ = message;
        Message::agent_text("Direct message response")
    }
}

/// Routes `tck-message-response` to the direct-message skill and everything else to `tck`.
pub struct PrefixRouter;

#[a2a_kit::async_trait]
impl SkillRouter for PrefixRouter {
    async fn route(&self, req: RouteRequest<'_>) -> Route {
        match behaviour(&req.message.message_id) {
            Behaviour::MessageResponse => Route::Skill("respond".into()),
            _ => Route::Skill("tck".into()),
        }
    }
}

/// Capability switches.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConformanceFlags {
    /// Turn streaming off (SendStreamingMessage and SubscribeToTask answer UnsupportedOperation).
    #[arg(long)]
    pub no_streaming: bool,
    /// Turn push notifications on, allowing private-network webhooks (for local receivers).
    #[arg(long)]
    pub push: bool,
    /// Serve an extended agent card.
    #[arg(long)]
    pub extended_card: bool,
    /// Declare this extension as required.
    #[arg(long, value_name = "URI")]
    pub require_extension: Vec<String>,
}

/// The agent configured by `flags`.
pub fn a2a_with(agent: ConformanceAgent, flags: &ConformanceFlags) -> AgentServiceBuilder {
    let flags = flags.clone();
    // The suite reads a task's answer from its final status message: text answers go there
    // too (the kit's default keeps them in the artifact only).
    let mut a2a = AgentService::builder(agent)
        .execution(a2a_kit::runtime::ExecutionConfig {
            answer_in_status: true,
            ..Default::default()
        })
        .skill_router(PrefixRouter)
        .streaming(!flags.no_streaming)
        .push_notifications(flags.push);
    for uri in &flags.require_extension {
        a2a = a2a.require_extension(uri.clone());
    }
    if flags.extended_card {
        let mut card = ConformanceAgent::agent_card("http://placeholder");
        card.name = "a2a-kit conformance agent (extended)".into();
        card.description = "The extended card: visible to authenticated clients.".into();
        // The suite calls GetExtendedAgentCard without credentials: a test agent, standing in
        // for one behind an authenticating gateway.
        a2a = a2a
            .extended_card(card)
            .extended_card_authenticated_upstream();
    }
    if flags.push {
        a2a = enable_push(a2a);
    }
    a2a
}

/// Push delivery that may reach webhooks on private networks (local receivers in tests).
fn enable_push(a2a: AgentServiceBuilder) -> AgentServiceBuilder {
    a2a.push_delivery(a2a_kit::push::PushConfig::default().allow_private_networks())
}

/// The agent with default flags.
pub fn a2a() -> AgentServiceBuilder {
    a2a_with(ConformanceAgent::default(), &ConformanceFlags::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(
            behaviour("tck-artifact-file-url-123"),
            Behaviour::ArtifactFileUrl
        );
        assert_eq!(behaviour("tck-artifact-file-9"), Behaviour::ArtifactFile);
        assert_eq!(
            behaviour("tck-stream-artifact-chunked-x"),
            Behaviour::StreamChunked
        );
        assert_eq!(behaviour("tck-stream-002-x"), Behaviour::StreamComplete);
        assert_eq!(behaviour("hello"), Behaviour::Echo);
    }
}
