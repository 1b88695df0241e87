//! A2A agents as a model's tools: the model decides when to ask another agent; the call is
//! an A2A message to it, and the remote task's artifacts and final state are the answer.

use serde_json::{Map, Value, json};

use super::conversation::part_text;
use super::tool::{ModelTool, definition};
use super::tool_name;
use crate::client::{ClientError, DelegateOptions, DelegationResult, RemoteAgent, SendRequest};
use crate::error::SkillError;
use crate::protocol::{Message, Part, Role, TaskState};
use crate::skill::{SKILL_SCHEMA_EXTENSION, TaskContext};

/// An A2A agent (or one of its skills) as a tool of a [`ModelRun`](super::ModelRun).
///
/// A call sends the model's `message` to the agent, streaming when its card says it can (else
/// polling), as part of the calling task: the remote status texts show as this task's
/// progress, a cancel of this task cancels the remote task, and the remote task is recorded
/// on this task ([`DELEGATIONS_KEY`](crate::client::DELEGATIONS_KEY)). All calls of one
/// conversation (this task's context) go to one remote context. The answer the model reads
/// is JSON: the remote `state`, `taskId`, the artifacts' text, and for INPUT_REQUIRED the
/// `question`, which the model answers by calling the tool again with that `taskId`.
#[derive(Debug, Clone)]
pub struct AgentTool {
    remote: RemoteAgent,
    name: String,
    description: String,
    skill: Option<String>,
    /// The skill's published input schema (its arguments go as a data part).
    data_schema: Option<Value>,
}

/// How a remote agent used as a tool behaves: its progress forwarded, its artifacts kept for
/// the answer, its questions returned to the model.
fn tool_options(base: &DelegateOptions) -> DelegateOptions {
    DelegateOptions {
        forward_artifacts: false,
        relay_input_required: false,
        ..base.clone()
    }
}

impl AgentTool {
    /// The whole agent as one tool, `ask_<agent name>`, described by its card.
    pub fn new(remote: RemoteAgent) -> Self {
        let card = remote.client().card();
        let skills: Vec<String> = card
            .skills
            .iter()
            .map(|s| format!("{} ({})", s.name, s.description))
            .collect();
        let description = if skills.is_empty() {
            format!("Ask the agent \"{}\": {}", card.name, card.description)
        } else {
            format!(
                "Ask the agent \"{}\": {} It can: {}.",
                card.name,
                card.description,
                skills.join("; ")
            )
        };
        AgentTool {
            name: tool_name(&format!("ask_{}", card.name.to_lowercase())),
            description,
            skill: None,
            data_schema: None,
            remote,
        }
    }

    /// Connect to the agent at `url` and make it a tool.
    pub async fn connect(url: impl AsRef<str>) -> Result<Self, ClientError> {
        Ok(Self::new(RemoteAgent::connect(url).await?))
    }

    /// One tool per skill of the agent (`<agent>_<skill>`), each with the input schema the
    /// card publishes for it (a2a-kit agents publish theirs), else a `message` argument.
    pub fn for_skills(remote: &RemoteAgent) -> Vec<AgentTool> {
        let card = remote.client().card();
        let schemas = card
            .capabilities
            .extensions
            .iter()
            .find(|e| e.uri.as_deref() == Some(SKILL_SCHEMA_EXTENSION))
            .and_then(|e| e.params.as_ref()?.get("skills").cloned());
        card.skills
            .iter()
            .map(|s| AgentTool {
                remote: remote.clone(),
                name: tool_name(&format!("{}_{}", card.name.to_lowercase(), s.id)),
                description: format!("{} (agent \"{}\"): {}", s.name, card.name, s.description),
                skill: Some(s.id.clone()),
                data_schema: schemas
                    .as_ref()
                    .and_then(|m| m.get(&s.id)?.get("input").cloned())
                    .filter(|v| v.get("type") == Some(&json!("object"))),
            })
            .collect()
    }

    /// The same tool for a model loop of your own on rig, outside any task: each call sends
    /// its message from a context no task backs (no progress forwarded, nothing recorded).
    pub fn rig_tool(&self) -> rig_core::tool::DynamicTool {
        let this = self.clone();
        let definition = ModelTool::definition(self);
        rig_core::tool::DynamicTool::new(
            definition.name,
            definition.description,
            definition.parameters,
            move |arguments| {
                let this = this.clone();
                Box::pin(async move {
                    let ctx = TaskContext::detached("tool", Message::user_text(""));
                    ModelTool::call(&this, &ctx, arguments)
                        .await
                        .map(rig_core::tool::ToolOutput::text)
                        .map_err(|e| rig_core::tool::ToolExecutionError::provider(e.to_string()))
                })
            },
        )
    }

    /// Name the tool.
    pub fn named(mut self, name: impl AsRef<str>) -> Self {
        self.name = tool_name(name.as_ref());
        self
    }

    /// The arguments' schema: the skill's own (a data part), or a `message`; `taskId`
    /// continues a remote task that asked a question.
    fn parameters(&self) -> Value {
        let task_id = json!({
            "type": "string",
            "description": "Only to answer a question the agent asked: the taskId it came with.",
        });
        match &self.data_schema {
            Some(schema) => {
                let mut schema = schema.clone();
                if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                    props.insert("taskId".into(), task_id);
                }
                schema
            }
            None => json!({
                "type": "object",
                "properties": {
                    "message": {"type": "string", "description": "What to ask or tell the agent."},
                    "taskId": task_id,
                },
                "required": ["message"],
            }),
        }
    }

    /// The message a call sends.
    fn message(&self, mut arguments: Map<String, Value>) -> Result<Message, String> {
        let task_id = arguments
            .remove("taskId")
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|t| !t.is_empty());
        let part = match (&self.data_schema, arguments.remove("message")) {
            (_, Some(Value::String(text))) if !text.trim().is_empty() => Part::text(text),
            (Some(_), _) => Part::data(Value::Object(arguments)),
            _ => return Err("the `message` argument is missing: say what to ask the agent".into()),
        };
        let mut message = Message::new(Role::User, vec![part]);
        message.task_id = task_id;
        Ok(message)
    }
}

/// What the model reads of a remote result.
fn answer(result: &DelegationResult) -> String {
    if let Some(m) = &result.message {
        return json!({"state": "replied", "reply": m.parts.iter().map(part_text).collect::<Vec<_>>().join("\n")})
            .to_string();
    }
    let Some(task) = &result.task else {
        return json!({"state": "unknown", "error": "the agent answered nothing"}).to_string();
    };
    let status = task
        .status
        .message
        .as_ref()
        .map(|m| m.parts.iter().map(part_text).collect::<Vec<_>>().join("\n"))
        .filter(|t| !t.is_empty());
    let artifacts: Vec<String> = task
        .artifacts
        .iter()
        .map(|a| a.parts.iter().map(part_text).collect::<String>())
        .collect();
    let state = task.status.state;
    let mut out = json!({
        "state": state.as_str(),
        "taskId": task.id,
        "artifacts": artifacts,
    });
    if let Some(status) = status {
        let key = if state == TaskState::InputRequired || state == TaskState::AuthRequired {
            "question"
        } else {
            "message"
        };
        out[key] = json!(status);
    }
    if state == TaskState::InputRequired {
        out["howToAnswer"] =
            json!("call this tool again with this taskId and the answer as the message");
    }
    out.to_string()
}

#[async_trait::async_trait]
impl ModelTool for AgentTool {
    fn definition(&self) -> rig_core::completion::ToolDefinition {
        definition(&self.name, &self.description, self.parameters())
    }

    async fn call(&self, ctx: &TaskContext, arguments: Value) -> Result<String, SkillError> {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let message = self.message(arguments).map_err(SkillError::failed)?;
        let mut request = SendRequest::new(message);
        if let Some(skill) = &self.skill {
            request = request.skill(skill.clone());
        }
        let remote = self
            .remote
            .clone()
            .with_options(tool_options(self.remote.options()));
        let result = remote
            .delegate(ctx, request)
            .await
            .map_err(|e| SkillError::failed(format!("the agent could not be reached: {e}")))?;
        if result.canceled {
            return Err(SkillError::Canceled);
        }
        Ok(answer(&result))
    }
}
