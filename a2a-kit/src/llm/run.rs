//! One model-driven run of a skill: the model streams with tools inside the task, its text
//! and its artifact tool's argument deltas become the task's artifact chunks exactly once,
//! and an artifact is forced when the model ends without one.

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use rig_core::completion::{CompletionRequest, ToolDefinition, Usage};
use rig_core::error::ProviderError;
use rig_core::message::{
    AssistantContent, Message as ModelMessage, ToolCall, ToolChoice, ToolName, ToolResultContent,
};
use rig_core::streaming::{Item, PartKind, StreamEvent};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::stream_json::StringField;
use super::tool::{ModelTool, definition};
use super::{Model, conversation};
use crate::error::SkillError;
use crate::protocol::Metadata;
use crate::skill::{ArtifactWriter, Outcome, TaskContext};

/// The name of the tool the model writes the artifact with (`{"content": "..."}`).
pub const ARTIFACT_TOOL: &str = "write_artifact";

/// The task metadata key of a run's token usage:
/// `{"model", "calls", "inputTokens", "outputTokens", "totalTokens"}`, summed over the
/// model calls of the task's runs.
pub const USAGE_KEY: &str = "a2a-kit/usage";

/// A model run inside a task, configured with builder calls and started by `.await`
/// ([`Model::run`]).
///
/// The model is given the conversation so far (the context's earlier tasks, this task's
/// history), the system prompt, the tools and the artifact tool. While it streams:
/// - its text and the `content` argument of [`ARTIFACT_TOOL`] become chunks of one artifact,
///   each piece once, coalesced while a chunk is being written (and for at most
///   [`coalesce`](Self::coalesce), 20 ms by default with a durable store, none in memory);
/// - its other tool calls run, and their answers go back to it (up to
///   [`max_turns`](Self::max_turns) model calls);
/// - if it ends with no artifact, it is called once more with its tool choice forced to the
///   artifact tool, through the same path;
/// - a cancel of the task drops the model's stream (closing its connection);
/// - a model failure (a refused call, 429 with its retry hint, 5xx, a malformed chunk, a stream
///   cut off, a silence longer than [`idle_timeout`](Self::idle_timeout)) ends the task FAILED
///   with the reason, its artifact left without `lastChunk`.
///
/// The token usage is recorded on the task ([`USAGE_KEY`]). Resolves to
/// [`Outcome::done`]: the artifact is written already.
#[must_use = "a model run does nothing until awaited"]
pub struct ModelRun<'c> {
    model: Model,
    ctx: &'c TaskContext,
    system: Option<String>,
    tools: Vec<Arc<dyn ModelTool>>,
    artifact: String,
    max_turns: usize,
    coalesce: Option<Duration>,
    idle_timeout: Duration,
    earlier: bool,
    temperature: Option<f64>,
    stream_tool_turns: bool,
    first_tool: Option<String>,
}

impl<'c> ModelRun<'c> {
    pub(super) fn new(model: Model, ctx: &'c TaskContext) -> Self {
        ModelRun {
            model,
            ctx,
            system: None,
            tools: Vec::new(),
            artifact: "answer".into(),
            max_turns: 8,
            coalesce: None,
            idle_timeout: Duration::from_secs(120),
            earlier: true,
            temperature: None,
            stream_tool_turns: true,
            first_tool: None,
        }
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// Offer the model a tool.
    pub fn tool(mut self, tool: impl ModelTool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Offer the model these tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn ModelTool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// The artifact's name (default `answer`).
    pub fn artifact(mut self, name: impl Into<String>) -> Self {
        self.artifact = name.into();
        self
    }

    /// Model calls at most, tool rounds included (default 8); the forced artifact call comes
    /// on top.
    pub fn max_turns(mut self, n: usize) -> Self {
        self.max_turns = n.max(1);
        self
    }

    /// How long text is gathered into one chunk at most (default 20 ms with a durable store,
    /// none in memory; text arriving while a chunk is written joins the next one anyway).
    pub fn coalesce(mut self, window: Duration) -> Self {
        self.coalesce = Some(window);
        self
    }

    /// How long the model may stay silent within a reply (default 120 s).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Whether the model sees the context's earlier tasks (default true), or this task's
    /// history alone.
    pub fn with_earlier_tasks(mut self, yes: bool) -> Self {
        self.earlier = yes;
        self
    }

    /// Whether the model calls that offer tools other than the artifact tool stream (default
    /// true). Off for servers that cannot stream an automatic tool choice (llama.cpp's Python
    /// server answers such a request with an empty body): those calls are then made whole,
    /// and only the artifact streams (forced, once the model has what it needs).
    pub fn stream_tool_turns(mut self, yes: bool) -> Self {
        self.stream_tool_turns = yes;
        self
    }

    /// Make the model's first call call this tool (by its name): for a skill that always
    /// starts by asking a tool (and for servers whose automatic tool choice is weak). The
    /// call streams; the turns after it choose freely.
    pub fn force_first_tool(mut self, name: impl Into<String>) -> Self {
        self.first_tool = Some(name.into());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }
}

impl<'c> IntoFuture for ModelRun<'c> {
    type Output = Result<Outcome, SkillError>;
    type IntoFuture = BoxFuture<'c, Result<Outcome, SkillError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}

/// What the run sums over its model calls.
#[derive(Debug, Default)]
struct Spent {
    calls: u64,
    input: u64,
    output: u64,
}

impl Spent {
    fn add(&mut self, usage: &Usage) {
        self.calls += 1;
        self.input += usage.input_tokens.unwrap_or(0);
        self.output += usage.output_tokens.unwrap_or(0);
    }
}

/// How one model call ended.
#[derive(Default)]
struct Turn {
    /// The artifact tool's call completed: the artifact is whole.
    artifact: bool,
    /// The other tools the model called.
    calls: Vec<ToolCall>,
    /// Whether it wrote text (artifact chunks).
    wrote: bool,
}

impl ModelRun<'_> {
    async fn execute(self) -> Result<Outcome, SkillError> {
        let window = self.coalesce.unwrap_or(if self.ctx.durable_store() {
            Duration::from_millis(20)
        } else {
            Duration::ZERO
        });
        let (chunks, rx) = mpsc::unbounded_channel();
        let writer = write_chunks(self.ctx.artifact_writer(self.artifact.clone()), rx, window);
        let mut spent = Spent::default();
        let (ended, written) = futures::join!(self.drive(chunks, &mut spent), writer);
        // The usage is recorded whatever happened (a failed run cost tokens too).
        if spent.calls > 0 {
            let usage = self.usage_metadata(&spent).await;
            let _ = self.ctx.record(usage).await;
        }
        let mut writer = written?;
        ended?;
        // Complete: close the artifact (a run that wrote nothing has no artifact to close).
        writer.finish().await?;
        Ok(Outcome::done())
    }

    /// The usage on the task so far plus this run's.
    async fn usage_metadata(&self, spent: &Spent) -> Metadata {
        let before = self.ctx.task_metadata().await;
        let prior = |k: &str| {
            before
                .get(USAGE_KEY)
                .and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (input, output) = (
            prior("inputTokens") + spent.input,
            prior("outputTokens") + spent.output,
        );
        let mut m = Metadata::new();
        m.insert(
            USAGE_KEY.into(),
            json!({
                "model": self.model.name(),
                "calls": prior("calls") + spent.calls,
                "inputTokens": input,
                "outputTokens": output,
                "totalTokens": input + output,
            }),
        );
        m
    }

    fn artifact_tool(&self) -> ToolDefinition {
        definition(
            ARTIFACT_TOOL,
            &format!(
                "Write the final answer for the user (the artifact `{}`). Call it once, with \
                 the whole answer in `content`.",
                self.artifact
            ),
            json!({
                "type": "object",
                "properties": {"content": {"type": "string", "description": "The whole answer."}},
                "required": ["content"],
            }),
        )
    }

    fn request(
        &self,
        messages: &[ModelMessage],
        forced: bool,
        first: Option<&str>,
    ) -> CompletionRequest {
        let mut request = CompletionRequest::from(messages.to_vec());
        if let Some(system) = &self.system {
            request = request.preamble(system.clone());
        }
        request = if forced {
            // Only the artifact tool, and the model must call it.
            request
                .tool(self.artifact_tool())
                .tool_choice(ToolChoice::Specific {
                    function_names: vec![
                        ToolName::new(ARTIFACT_TOOL).expect("a tool name is never empty"),
                    ],
                })
        } else {
            let mut tools: Vec<ToolDefinition> =
                self.tools.iter().map(|t| t.definition()).collect();
            tools.push(self.artifact_tool());
            let request = request.tools(tools);
            match first.and_then(|name| ToolName::new(super::tool_name(name)).ok()) {
                Some(name) => request.tool_choice(ToolChoice::Specific {
                    function_names: vec![name],
                }),
                None => request,
            }
        };
        if let Some(n) = self.model.max_tokens {
            request = request.max_tokens(n);
        }
        if let Some(t) = self.temperature {
            request = request.temperature(t);
        }
        request
    }

    /// The model calls, the tool rounds and the forced artifact; text goes to `chunks`.
    async fn drive(
        &self,
        chunks: mpsc::UnboundedSender<String>,
        spent: &mut Spent,
    ) -> Result<(), SkillError> {
        let mut messages = conversation::conversation(self.ctx, self.earlier).await;
        let mut wrote = false;
        let mut forced = false;
        let mut turns = 0;
        loop {
            let force = turns >= self.max_turns;
            forced |= force;
            turns += 1;
            let first = self.first_tool.as_deref().filter(|_| turns == 1);
            let request = self.request(&messages, force, first);
            let span = crate::observe::chat_span(self.model.name());
            let before = (spent.input, spent.output);
            let turn =
                if !force && first.is_none() && !self.stream_tool_turns && !self.tools.is_empty() {
                    self.unary_turn(request, &chunks, &mut messages, spent)
                        .instrument(span.clone())
                        .await
                } else {
                    self.turn(request, &chunks, &mut messages, spent)
                        .instrument(span.clone())
                        .await
                };
            if !span.is_disabled() {
                span.record("gen_ai.usage.input_tokens", spent.input - before.0);
                span.record("gen_ai.usage.output_tokens", spent.output - before.1);
                if let Err(e) = &turn {
                    span.record("error.type", "MODEL_FAILED");
                    span.record("otel.status_code", "ERROR");
                    tracing::info!(parent: &span, error = %e, "the model call failed");
                }
            }
            let turn = turn?;
            wrote |= turn.wrote;
            if turn.artifact {
                return Ok(());
            }
            if !turn.calls.is_empty() && !force {
                let mut results = Vec::new();
                for call in &turn.calls {
                    results.push(self.call_tool(call).await?);
                }
                messages.push(ModelMessage::tool_results(results));
                continue;
            }
            if wrote {
                return Ok(());
            }
            if forced {
                return Err(SkillError::failed(
                    "the model wrote no answer, even when told to call the artifact tool",
                ));
            }
            tracing::info!(
                task_id = self.ctx.task_id(),
                "the model ended without an answer; asking it for the artifact"
            );
            turns = self.max_turns;
        }
    }

    /// Run one tool call; its answer (or error) as the result the model reads.
    async fn call_tool(
        &self,
        call: &ToolCall,
    ) -> Result<rig_core::message::ToolResult, SkillError> {
        let name = call.function.name.as_str();
        let Some(tool) = self
            .tools
            .iter()
            .find(|t| t.definition().name.as_str() == name)
        else {
            let text = format!("there is no tool `{name}`");
            return Ok(call.error_result(vec![ToolResultContent::text(text)]));
        };
        let arguments = Value::Object(call.function.arguments.clone());
        // The tool sees the cancel itself (an A2A agent's tool cancels its remote task);
        // one that ignores it is aborted with the skill after the cancel grace.
        let span = crate::observe::tool_span(name);
        let answer = tool
            .call(self.ctx, arguments)
            .instrument(span.clone())
            .await;
        if let Err(e) = &answer
            && !span.is_disabled()
        {
            span.record("error.type", "TOOL_FAILED");
            span.record("otel.status_code", "ERROR");
            tracing::info!(parent: &span, error = %e, "the tool failed");
        }
        if self.ctx.is_cancelled() {
            return Err(SkillError::Canceled);
        }
        match answer {
            Ok(text) => Ok(call.result(vec![ToolResultContent::text(text)])),
            Err(SkillError::Canceled) => Err(SkillError::Canceled),
            Err(e) => {
                tracing::info!(task_id = self.ctx.task_id(), tool = name, error = %e, "a tool failed; the model is told");
                Ok(call.error_result(vec![ToolResultContent::text(format!(
                    "the tool failed: {e}"
                ))]))
            }
        }
    }

    /// One streamed model call.
    async fn turn(
        &self,
        request: CompletionRequest,
        chunks: &mpsc::UnboundedSender<String>,
        messages: &mut Vec<ModelMessage>,
        spent: &mut Spent,
    ) -> Result<Turn, SkillError> {
        let mut stream = self
            .model
            .inner
            .stream(request)
            .map_err(|e| self.model.failure(&e))?;
        let send = |text: String| -> Result<(), SkillError> {
            if text.is_empty() {
                return Ok(());
            }
            chunks.send(text).map_err(|_| SkillError::Canceled)
        };
        let mut seen = TurnSeen::new();
        let mut heard = false;
        loop {
            let next = tokio::select! {
                biased;
                () = self.ctx.cancelled() => return Err(SkillError::Canceled),
                next = tokio::time::timeout(self.idle_timeout, stream.next()) => next,
            };
            let item = match next {
                Err(_) => {
                    return Err(SkillError::failed(format!(
                        "the model sent nothing for {} s",
                        self.idle_timeout.as_secs_f64()
                    )));
                }
                Ok(None) => break,
                Ok(Some(Err(ProviderError::Truncated))) if !heard => return Ok(self.empty_turn()),
                Ok(Some(Err(e))) => return Err(self.model.failure(&e)),
                Ok(Some(Ok(item))) => item,
            };
            heard = true;
            if let Item::Event(event) = item {
                seen.event(event, &send)?;
            }
        }
        let response = match stream.finish().await {
            Ok(r) => r,
            Err(ProviderError::Truncated) if !heard => return Ok(self.empty_turn()),
            Err(e) => return Err(self.model.failure(&e)),
        };
        spent.add(&response.usage);
        if let Some(m) = response.message() {
            messages.push(m);
        }
        Ok(Turn {
            artifact: seen.artifact_done,
            calls: seen.calls,
            wrote: seen.wrote,
        })
    }

    /// Some servers answer an unsupported request with an empty 200 (llama.cpp's Python
    /// server for a streamed automatic tool choice): nothing was said.
    fn empty_turn(&self) -> Turn {
        tracing::warn!(
            task_id = self.ctx.task_id(),
            "the model's stream ended empty"
        );
        Turn::default()
    }

    /// One model call made whole ([`stream_tool_turns`](Self::stream_tool_turns) off): its
    /// text and artifact go out as one chunk each.
    async fn unary_turn(
        &self,
        request: CompletionRequest,
        chunks: &mpsc::UnboundedSender<String>,
        messages: &mut Vec<ModelMessage>,
        spent: &mut Spent,
    ) -> Result<Turn, SkillError> {
        let call = tokio::time::timeout(self.idle_timeout, self.model.inner.call(request));
        let response = tokio::select! {
            biased;
            () = self.ctx.cancelled() => return Err(SkillError::Canceled),
            r = call => match r {
                Ok(r) => r.map_err(|e| self.model.failure(&e))?,
                Err(_) => return Err(SkillError::failed(format!(
                    "the model did not answer within {} s",
                    self.idle_timeout.as_secs_f64()
                ))),
            },
        };
        spent.add(&response.usage);
        let mut turn = Turn::default();
        let send = |text: String| chunks.send(text).map_err(|_| SkillError::Canceled);
        for content in &response.choice {
            match content {
                AssistantContent::Text(t) if !t.text().trim().is_empty() => {
                    turn.wrote = true;
                    send(t.text().to_string())?;
                }
                AssistantContent::ToolCall(call)
                    if call.function.name.as_str() == ARTIFACT_TOOL =>
                {
                    if let Some(text) = call
                        .function
                        .arguments
                        .get("content")
                        .and_then(Value::as_str)
                    {
                        send(text.to_string())?;
                    }
                    turn.artifact = true;
                }
                AssistantContent::ToolCall(call) => turn.calls.push(call.clone()),
                _ => {}
            }
        }
        if let Some(m) = response.message() {
            messages.push(m);
        }
        Ok(turn)
    }
}

/// Write the text the model loop sends as chunks of one artifact: what arrives while a chunk
/// is written (and within `window` of the first piece) goes out together. Returns the writer
/// once the loop stopped sending, for the caller to close the artifact (or leave it open).
async fn write_chunks(
    mut writer: ArtifactWriter,
    mut rx: mpsc::UnboundedReceiver<String>,
    window: Duration,
) -> Result<ArtifactWriter, SkillError> {
    while let Some(mut chunk) = rx.recv().await {
        if !window.is_zero() {
            let deadline = tokio::time::Instant::now() + window;
            while let Ok(Some(more)) = tokio::time::timeout_at(deadline, rx.recv()).await {
                chunk.push_str(&more);
            }
        }
        while let Ok(more) = rx.try_recv() {
            chunk.push_str(&more);
        }
        writer.write(chunk).await?;
    }
    Ok(writer)
}

/// What one streamed turn has seen: text and the artifact tool's argument went out as chunks
/// (each once), the other tool calls are kept for the next step.
struct TurnSeen {
    /// The stream part carrying the artifact tool's call, while it streams.
    artifact_part: Option<usize>,
    /// Decodes the artifact tool's `content` argument as its JSON streams in.
    field: StringField,
    /// What the argument's deltas carried so far.
    streamed: String,
    artifact_done: bool,
    wrote: bool,
    calls: Vec<ToolCall>,
}

impl TurnSeen {
    fn new() -> Self {
        TurnSeen {
            artifact_part: None,
            field: StringField::new("content"),
            streamed: String::new(),
            artifact_done: false,
            wrote: false,
            calls: Vec::new(),
        }
    }

    /// One event of the model's stream.
    fn event(
        &mut self,
        event: StreamEvent,
        send: &impl Fn(String) -> Result<(), SkillError>,
    ) -> Result<(), SkillError> {
        match event {
            StreamEvent::Text { text, .. } if self.artifact_part.is_none() => {
                self.wrote |= !text.is_empty();
                send(text)?;
            }
            StreamEvent::Start {
                part,
                kind: PartKind::ToolCall,
                name,
            } if name.as_ref().is_some_and(|n| n.as_str() == ARTIFACT_TOOL) => {
                self.artifact_part = Some(part.index());
            }
            StreamEvent::Arguments { part, json } if Some(part.index()) == self.artifact_part => {
                let text = self.field.feed(&json);
                self.streamed.push_str(&text);
                send(text)?;
            }
            StreamEvent::End {
                content: AssistantContent::ToolCall(call),
                ..
            } if call.function.name.as_str() == ARTIFACT_TOOL => {
                // What the deltas did not carry (a server that sends arguments whole), never
                // what they did.
                let whole = call
                    .function
                    .arguments
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(rest) = whole.strip_prefix(self.streamed.as_str()) {
                    send(rest.to_string())?;
                }
                self.artifact_done = true;
                self.artifact_part = None;
            }
            StreamEvent::End {
                content: AssistantContent::ToolCall(call),
                ..
            } => self.calls.push(call),
            _ => {}
        }
        Ok(())
    }
}
