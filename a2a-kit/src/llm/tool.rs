//! Tools a model may call during a [`ModelRun`](super::ModelRun).

use std::sync::Arc;

use futures::future::BoxFuture;
use rig_core::completion::ToolDefinition;
use rig_core::message::ToolName;
use serde_json::Value;

use crate::error::SkillError;
use crate::skill::TaskContext;

/// A tool the model may call. It runs inside the task (`ctx`): it can report progress, read
/// the conversation, and see the task canceled.
///
/// Its answer (or its error, as text) goes back to the model, which decides what to do next;
/// only [`SkillError::Canceled`] ends the run.
#[async_trait::async_trait]
pub trait ModelTool: Send + Sync + 'static {
    /// The name (`[a-zA-Z0-9_-]{1,64}`), description and JSON Schema of the arguments the
    /// model sees.
    fn definition(&self) -> ToolDefinition;

    /// Carry out one call with the model's `arguments` (a JSON object).
    async fn call(&self, ctx: &TaskContext, arguments: Value) -> Result<String, SkillError>;
}

type Handler =
    Arc<dyn Fn(TaskContext, Value) -> BoxFuture<'static, Result<String, SkillError>> + Send + Sync>;

/// A tool made of a function.
///
/// ```
/// use a2a_kit::llm::FnTool;
/// let clock = FnTool::new(
///     "utc_time",
///     "The current UTC time",
///     serde_json::json!({"type": "object", "properties": {}}),
///     |_ctx, _args| async { Ok(chrono::Utc::now().to_rfc3339()) },
/// );
/// # let _ = clock;
/// ```
#[derive(Clone)]
pub struct FnTool {
    name: String,
    description: String,
    parameters: Value,
    handler: Handler,
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// A tool `name` (made what providers accept), with `parameters` its arguments' schema.
    pub fn new<F, Fut>(
        name: impl AsRef<str>,
        description: impl Into<String>,
        parameters: Value,
        f: F,
    ) -> Self
    where
        F: Fn(TaskContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, SkillError>> + Send + 'static,
    {
        FnTool {
            name: super::tool_name(name.as_ref()),
            description: description.into(),
            parameters,
            handler: Arc::new(move |ctx, args| Box::pin(f(ctx, args))),
        }
    }
}

#[async_trait::async_trait]
impl ModelTool for FnTool {
    fn definition(&self) -> ToolDefinition {
        definition(&self.name, &self.description, self.parameters.clone())
    }

    async fn call(&self, ctx: &TaskContext, arguments: Value) -> Result<String, SkillError> {
        (self.handler)(ctx.clone(), arguments).await
    }
}

/// A tool definition; `name` is already what providers accept.
pub(super) fn definition(name: &str, description: &str, parameters: Value) -> ToolDefinition {
    let name = ToolName::new(super::tool_name(name)).expect("a tool name is never empty");
    ToolDefinition::new(name, description, parameters)
}
