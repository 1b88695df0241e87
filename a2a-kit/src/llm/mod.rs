//! Model-driven agents (cargo feature `llm`): a skill that lets a language model write its
//! artifact, a model that routes messages, one that narrates progress, and A2A agents as the
//! model's tools.
//!
//! ```no_run
//! use a2a_kit::llm::Model;
//! use a2a_kit::prelude::*;
//!
//! struct Writer { model: Model }
//!
//! /// Writes short texts on request.
//! #[a2a_agent]
//! impl Writer {
//!     /// Write what the user asks for.
//!     #[skill(default)]
//!     async fn write(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
//!         self.model.run(&ctx).system("You are a concise writer.").await
//!     }
//! }
//! ```
//!
//! The models come from [rig](rig_core) (re-exported as [`rig`]): any OpenAI-compatible
//! server (OpenAI, Ollama, vLLM, llama.cpp's server), Anthropic, or any other rig model
//! ([`Model::from_rig`]). Everything a run produces travels the kit's usual paths: text as
//! artifact chunks, progress as status indicators, token usage as task metadata
//! ([`USAGE_KEY`]), failures as FAILED with a reason. API keys never leave the model: not in
//! logs, errors, tasks or the card.

mod agent_tool;
mod conversation;
mod narrator;
mod router;
mod run;
mod stream_json;
mod tool;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use rig_core::DynModel;
use rig_core::error::ProviderError;
use rig_core::operation::Completion;
use rig_core::providers::anthropic::AnthropicConfig;
use rig_core::providers::openai::OpenAIConfig;
use rig_core::providers::openai::wire::{Auth, BodyRewrite, Dialect, Quirks};

pub use agent_tool::AgentTool;
pub use narrator::ModelNarrator;
pub use router::ModelRouter;
pub use run::{ARTIFACT_TOOL, ModelRun, USAGE_KEY};
pub use tool::{FnTool, ModelTool};

/// The model library, for what a2a-kit does not wrap (its providers and options).
pub use rig_core as rig;

use crate::error::SkillError;

/// A language model: a provider, a model name and its credentials. Cheap to clone; share one
/// between skills, the router and the narrator.
#[derive(Clone)]
pub struct Model {
    inner: DynModel<Completion>,
    name: String,
    /// Removed from every error text a model call produces.
    secret: Option<Arc<str>>,
    max_tokens: Option<u64>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Where a model is, as an example's command line or the environment says it
/// ([`Model::from_settings`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ModelSettings {
    /// The model's name (`--model`).
    pub model: Option<String>,
    /// An OpenAI-compatible server (`--base-url`, else `OPENAI_BASE_URL`).
    pub base_url: Option<String>,
    /// The key (`--api-key`, else `OPENAI_API_KEY`, or `ANTHROPIC_API_KEY` for Anthropic).
    pub api_key: Option<String>,
}

impl ModelSettings {
    /// Settings from explicit values, each missing one taken from the environment.
    pub fn new(model: Option<String>, base_url: Option<String>, api_key: Option<String>) -> Self {
        ModelSettings {
            model,
            base_url,
            api_key,
        }
    }
}

/// What to set when no model is configured: one line, for a log or an error.
pub const HOW_TO_CONFIGURE: &str = "no model configured: give a model name with an \
     OpenAI-compatible server's URL (Ollama, vLLM, llama.cpp: --model NAME --base-url URL, or \
     OPENAI_BASE_URL) or a key (--model-api-key KEY, or OPENAI_API_KEY or ANTHROPIC_API_KEY)";

/// How the kit speaks to "OpenAI-compatible" servers: OpenAI's Chat Completions, with what
/// the servers people run locally need. Text-only contents go as one string (llama.cpp's
/// Python server accepts no part array in a system message), no `Authorization` header without
/// a key, and a stream that ends with `[DONE]` but no finish reason ends the turn.
const COMPATIBLE: Dialect = Dialect::gateway(
    "a2a-kit-openai-compatible",
    "http://127.0.0.1:8080/v1",
    "OPENAI_API_KEY",
)
.with_quirks({
    let mut quirks = Quirks::openai().done_without_finish_reason();
    quirks.rewrite = BodyRewrite::Perplexity;
    quirks.auth = Auth::OptionalBearer;
    quirks
});

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Model {
    /// A model on an OpenAI-compatible server's Chat Completions API: `base_url` includes
    /// the `/v1` (`http://127.0.0.1:11434/v1` for Ollama, `http://127.0.0.1:8080/v1` for
    /// llama.cpp). `api_key` may be empty for a local server.
    pub fn openai_compatible(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Model {
        let (key, model) = (api_key.into(), model.into());
        let inner = OpenAIConfig::with_key(&COMPATIBLE, key.clone())
            .with_base_url(base_url.into().trim_end_matches('/'))
            .connect(transport::Reqwest::new())
            .chat(model.clone())
            .erase();
        Model::wrap(inner, model, key)
    }

    /// A model of OpenAI's own API (its Chat Completions).
    pub fn openai(api_key: impl Into<String>, model: impl Into<String>) -> Model {
        let (key, model) = (api_key.into(), model.into());
        let inner = OpenAIConfig::new(key.clone())
            .connect(transport::Reqwest::new())
            .chat(model.clone())
            .erase();
        Model::wrap(inner, model, key)
    }

    /// A model of Anthropic's Messages API.
    pub fn anthropic(api_key: impl Into<String>, model: impl Into<String>) -> Model {
        Self::anthropic_at("https://api.anthropic.com", api_key, model)
    }

    /// A model of an Anthropic-compatible Messages API at `base_url`.
    pub fn anthropic_at(
        base_url: impl AsRef<str>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Model {
        let (key, model) = (api_key.into(), model.into());
        let mut inner = AnthropicConfig::new(key.clone())
            .with_base_url(base_url)
            .connect(transport::Reqwest::new())
            .completion(model.clone());
        inner.wire = inner.wire.with_default_max_tokens(4096);
        Model::wrap(inner.erase(), model, key)
    }

    /// Any rig model (another provider, or one configured beyond these constructors).
    /// `secret`, if given, is removed from every error text.
    pub fn from_rig(
        model: DynModel<Completion>,
        name: impl Into<String>,
        secret: Option<String>,
    ) -> Model {
        Model::wrap(model, name.into(), secret.unwrap_or_default())
    }

    fn wrap(inner: DynModel<Completion>, name: String, key: String) -> Model {
        Model {
            inner,
            name,
            secret: Some(key).filter(|k| !k.is_empty()).map(Arc::from),
            max_tokens: None,
        }
    }

    /// The model an example's flags or the environment name: `settings.base_url` (or
    /// `OPENAI_BASE_URL`) for an OpenAI-compatible server, else `ANTHROPIC_API_KEY` (or a
    /// `claude-…` model with a key) for Anthropic, else `OPENAI_API_KEY` for OpenAI.
    /// Without enough to go on, the error is [`HOW_TO_CONFIGURE`].
    pub fn from_settings(settings: &ModelSettings) -> Result<Model, String> {
        let base_url = settings.base_url.clone().or_else(|| env("OPENAI_BASE_URL"));
        let name = settings.model.clone();
        let anthropic_key = env("ANTHROPIC_API_KEY");
        if let Some(base_url) = base_url {
            let key = settings
                .api_key
                .clone()
                .or_else(|| env("OPENAI_API_KEY"))
                .unwrap_or_default();
            let name = name.ok_or_else(|| HOW_TO_CONFIGURE.to_string())?;
            return Ok(Model::openai_compatible(base_url, key, name));
        }
        let claude = name.as_deref().is_some_and(|n| n.starts_with("claude"));
        if (claude || (anthropic_key.is_some() && settings.api_key.is_none()))
            && let Some(key) = settings.api_key.clone().or(anthropic_key)
        {
            let name = name.unwrap_or_else(|| "claude-sonnet-4-5".into());
            return Ok(Model::anthropic(key, name));
        }
        match settings.api_key.clone().or_else(|| env("OPENAI_API_KEY")) {
            Some(key) => Ok(Model::openai(
                key,
                name.unwrap_or_else(|| "gpt-4o-mini".into()),
            )),
            None => Err(HOW_TO_CONFIGURE.to_string()),
        }
    }

    /// Cap each reply at `n` tokens.
    #[must_use]
    pub fn max_tokens(mut self, n: u64) -> Model {
        self.max_tokens = Some(n);
        self
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rig model underneath.
    pub fn rig(&self) -> &DynModel<Completion> {
        &self.inner
    }

    /// Run the model inside `ctx`'s task: see [`ModelRun`].
    pub fn run<'c>(&self, ctx: &'c crate::skill::TaskContext) -> ModelRun<'c> {
        ModelRun::new(self.clone(), ctx)
    }

    /// `text` without the API key.
    fn scrub(&self, text: String) -> String {
        match &self.secret {
            Some(secret) if text.contains(&**secret) => text.replace(&**secret, "***"),
            _ => text,
        }
    }

    /// A model call's failure as the reason a task fails with: what happened, the HTTP
    /// status and the server's retry hint when there are, never the key.
    fn failure(&self, e: &ProviderError) -> SkillError {
        SkillError::failed(self.scrub(describe(e)))
    }

    /// A unary call with a deadline: a router's or a narrator's question.
    async fn ask(
        &self,
        request: rig_core::completion::CompletionRequest,
        deadline: Duration,
    ) -> Result<rig_core::completion::CompletionResponse, AskError> {
        let request = match self.max_tokens {
            Some(n) => request.max_tokens(n),
            None => request,
        };
        match tokio::time::timeout(deadline, self.inner.call(request)).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(AskError {
                status: e.provider_response_status().map(|s| s.as_u16()),
                reason: self.scrub(describe(&e)),
            }),
            Err(_) => Err(AskError {
                status: None,
                reason: format!(
                    "the model did not answer within {} s",
                    deadline.as_secs_f64()
                ),
            }),
        }
    }
}

/// A unary call's failure: the HTTP status, if the server answered, and why.
#[derive(Debug)]
struct AskError {
    status: Option<u16>,
    reason: String,
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl Model {}

/// What went wrong in a model call, for people: the kind, the status, the retry hint.
fn describe(e: &ProviderError) -> String {
    if let Some(status) = e.provider_response_status() {
        let retry = e
            .provider_response_headers()
            .and_then(|h| h.get(http::header::RETRY_AFTER))
            .and_then(|v| v.to_str().ok())
            .map(|v| format!("; retry after {v} s"))
            .unwrap_or_default();
        let body: String = e
            .provider_response_body()
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect();
        let what = match status.as_u16() {
            429 => "the model is rate limited",
            401 | 403 => "the model refused the credentials",
            s if s >= 500 => "the model server failed",
            _ => "the model refused the request",
        };
        return format!("{what} (HTTP {}{retry}): {}", status.as_u16(), body.trim());
    }
    match e {
        ProviderError::Truncated => {
            "the model's stream ended before the model finished (cut off)".to_string()
        }
        ProviderError::Json(j) => format!("the model sent a malformed chunk: {j}"),
        ProviderError::Http(h) => format!("the connection to the model failed: {h}"),
        ProviderError::ProviderResponse(r) => {
            let body: String = r.body.chars().take(300).collect();
            format!("the model reported an error: {}", body.trim())
        }
        other => format!("the model call failed: {other}"),
    }
}

/// A tool name providers accept (`[a-zA-Z0-9_-]{1,64}`) made from `raw`.
fn tool_name(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        name.push('_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_what_providers_accept() {
        assert_eq!(tool_name("book-flight"), "book-flight");
        assert_eq!(tool_name("Travel Agent: book"), "Travel_Agent__book");
        assert_eq!(tool_name(""), "_");
        assert_eq!(tool_name(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn keys_never_reach_error_texts() {
        let model = Model::openai_compatible("http://127.0.0.1:9/v1", "sk-secret-1", "m");
        assert_eq!(
            model.scrub("bad key sk-secret-1 given".into()),
            "bad key *** given"
        );
        assert!(!format!("{model:?}").contains("sk-secret"));
    }
}
