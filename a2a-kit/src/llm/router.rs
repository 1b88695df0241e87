//! A model that routes: one tool call decides whether a message gets a direct reply (a
//! Message, no task) or a task, and with which skill.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rig_core::completion::CompletionRequest;
use rig_core::message::{AssistantContent, ToolChoice};
use serde_json::{Value, json};

use super::conversation::part_text;
use super::tool::definition;
use super::{Model, tool_name};
use crate::protocol::Message;
use crate::skill::{Route, RouteRequest, SkillInfo, SkillRouter};

/// The tool the router's model answers directly with.
const REPLY_TOOL: &str = "reply_directly";

/// A [`SkillRouter`] that asks a model, before the agent's default skill
/// ([`decides_first`](SkillRouter::decides_first)): the model sees the message and one tool
/// per skill (its id, description and input schema, as the card publishes them) plus
/// `reply_directly`, and must call one. `reply_directly` answers with a Message and creates
/// no task; a skill's tool creates a task for that skill. An answer that is neither (text,
/// an unknown tool, an error, no answer within [`timeout`](Self::timeout)) is logged and the
/// routing rules decide.
#[derive(Debug, Clone)]
pub struct ModelRouter {
    model: Model,
    system: String,
    direct_replies: bool,
    timeout: Duration,
    /// Set once the server refused a required tool choice (llama.cpp's Python server
    /// answers 500): from then on the choice is left to the model.
    auto_choice: Arc<AtomicBool>,
}

impl ModelRouter {
    /// A router on `model`.
    pub fn new(model: Model) -> Self {
        ModelRouter {
            model,
            system: "You route a user's message for an agent. Call exactly one tool: the skill \
                     that should handle the message as a task, or reply_directly for a short \
                     answer that needs no work (greetings, questions about what the agent can \
                     do, small talk)."
                .into(),
            direct_replies: true,
            timeout: Duration::from_secs(30),
            auto_choice: Arc::default(),
        }
    }

    /// The router's instructions (what the agent is for helps).
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = prompt.into();
        self
    }

    /// Whether the model may answer directly (default true); without, it only picks skills.
    pub fn direct_replies(mut self, yes: bool) -> Self {
        self.direct_replies = yes;
        self
    }

    /// How long the model may take to decide (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn request(&self, message: &Message, skills: &[SkillInfo], auto: bool) -> CompletionRequest {
        let mut tools: Vec<_> = skills
            .iter()
            .map(|s| {
                let schema = (s.input_schema)()
                    .filter(|v| v.get("type") == Some(&json!("object")))
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                definition(
                    &tool_name(s.id),
                    &format!("{}: {}", s.name, s.description),
                    schema,
                )
            })
            .collect();
        if self.direct_replies {
            tools.push(definition(
                REPLY_TOOL,
                "Answer the user directly, without starting a task.",
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The answer."}},
                    "required": ["text"],
                }),
            ));
        }
        let text: Vec<String> = message.parts.iter().map(part_text).collect();
        CompletionRequest::new(text.join("\n"))
            .preamble(self.system.clone())
            .tools(tools)
            .tool_choice(if auto {
                ToolChoice::Auto
            } else {
                ToolChoice::Required
            })
    }
}

#[async_trait::async_trait]
impl SkillRouter for ModelRouter {
    async fn route(&self, req: RouteRequest<'_>) -> Route {
        let auto = self.auto_choice.load(Ordering::Relaxed);
        let request = self.request(req.message, req.skills, auto);
        let mut answer = self.model.ask(request, self.timeout).await;
        if let Err(e) = &answer
            && !auto
            && e.status.is_some_and(|s| s == 400 || s == 422 || s >= 500)
        {
            tracing::info!(error = %e, "the model server refused a required tool choice; leaving the choice to the model");
            self.auto_choice.store(true, Ordering::Relaxed);
            let request = self.request(req.message, req.skills, true);
            answer = self.model.ask(request, self.timeout).await;
        }
        let response = match answer {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "the model router failed; routing by the rules");
                return Route::NoMatch;
            }
        };
        let call = response.choice.iter().find_map(|c| match c {
            AssistantContent::ToolCall(call) => Some(call.clone()),
            _ => None,
        });
        let Some(call) = call else {
            tracing::warn!(
                answer = %response.text().chars().take(200).collect::<String>(),
                "the model router called no tool; routing by the rules"
            );
            return Route::NoMatch;
        };
        let name = call.function.name.as_str();
        if name == REPLY_TOOL && self.direct_replies {
            let text = call
                .function
                .arguments
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_string();
            if text.is_empty() {
                tracing::warn!("the model router replied with nothing; routing by the rules");
                return Route::NoMatch;
            }
            return Route::Reply(Message::agent_text(text));
        }
        match req.skills.iter().find(|s| tool_name(s.id) == name) {
            Some(skill) => Route::Skill(skill.id.to_string()),
            None => {
                tracing::warn!(
                    tool = name,
                    "the model router chose no skill of this agent; routing by the rules"
                );
                Route::NoMatch
            }
        }
    }

    fn decides_first(&self) -> bool {
        true
    }
}
