//! Skill arguments: anything that implements [`FromSkillRequest`].
//!
//! Extraction runs **before** a task is created, so a request whose parts do not fit a skill is
//! answered with InvalidParams (naming the skill, the expected part and the serde path) and
//! leaves nothing behind. Write your own extractor by implementing the trait:
//!
//! ```
//! use a2a_kit::skill::{ExtractError, FromSkillRequest, SkillRequest};
//!
//! /// The caller's locale, from request metadata `locale` (default "en").
//! struct Locale(String);
//!
//! impl FromSkillRequest for Locale {
//!     fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
//!         let locale = req
//!             .metadata()
//!             .and_then(|m| m.get("locale"))
//!             .and_then(|v| v.as_str())
//!             .unwrap_or("en");
//!         Ok(Locale(locale.to_string()))
//!     }
//! }
//! ```

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::TaskContext;
use super::data::{Data, DataInput};
use super::outcome::IntoParts;
use crate::error::SkillError;
use crate::protocol::{Message, Metadata, Part, PartContent, TaskState};

/// What a skill is invoked with: the message, the request metadata, the task history and the
/// task context.
#[derive(Debug, Clone)]
pub struct SkillRequest {
    pub(crate) skill_id: std::borrow::Cow<'static, str>,
    /// `None`: the context's message (the usual case; saves a copy per request).
    pub(crate) message: Option<Message>,
    pub(crate) metadata: Option<Metadata>,
    /// `None`: just the message.
    pub(crate) history: Option<Vec<Message>>,
    pub(crate) context: TaskContext,
    /// Who sent the message, when the agent authenticates its callers.
    pub(crate) caller: Option<std::sync::Arc<crate::auth::Caller>>,
}

impl SkillRequest {
    /// Build a request by hand (tests, custom executors).
    pub fn new(skill_id: impl Into<String>, message: Message, context: TaskContext) -> Self {
        SkillRequest {
            skill_id: std::borrow::Cow::Owned(skill_id.into()),
            history: None,
            message: Some(message),
            metadata: None,
            context,
            caller: None,
        }
    }

    /// The same request from `caller` (as an agent that authenticates callers makes it).
    pub fn with_caller(mut self, caller: crate::auth::Caller) -> Self {
        self.caller = Some(std::sync::Arc::new(caller));
        self
    }

    /// The skill being invoked.
    pub fn skill_id(&self) -> &str {
        &self.skill_id
    }
    /// The message that triggered this invocation.
    pub fn message(&self) -> &Message {
        self.message
            .as_ref()
            .unwrap_or_else(|| self.context.message())
    }
    /// Request-level metadata (`SendMessageRequest.metadata`), else the message's metadata.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref().or(self.message().metadata.as_ref())
    }
    /// The task's history so far, including this message.
    pub fn history(&self) -> &[Message] {
        match &self.history {
            Some(h) => h,
            None => std::slice::from_ref(self.message()),
        }
    }
    /// The task context handed to the skill.
    pub fn context(&self) -> &TaskContext {
        &self.context
    }
}

/// An argument that cannot be extracted. Becomes InvalidParams, naming the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractError {
    /// What the skill expected, e.g. "a text part".
    pub expected: String,
    /// The field path where it went wrong (`message.parts[1].data.passengers[0].age`).
    pub path: String,
    /// Why.
    pub detail: String,
}

impl ExtractError {
    /// An error at `path`.
    pub fn new(
        expected: impl Into<String>,
        path: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        ExtractError {
            expected: expected.into(),
            path: path.into(),
            detail: detail.into(),
        }
    }

    /// The protocol error for `skill`.
    pub fn into_a2a(self, skill: &str) -> crate::error::A2aError {
        let description = format!(
            "skill `{skill}` expected {}: {}",
            self.expected, self.detail
        );
        crate::error::A2aError::InvalidParams {
            message: format!("invalid `{}`: {description}", self.path),
            violations: vec![crate::error::FieldViolation {
                field: self.path,
                description,
            }],
        }
    }
}

/// Turns a [`SkillRequest`] into a skill argument.
///
/// The macros call it once per argument, in order, before any task exists.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a skill argument",
    label = "this argument is not an extractor",
    note = "skill arguments must implement `a2a_kit::skill::FromSkillRequest`: use `Text`, `Data<T>`, `File`, `Parts`, `Message`, `RequestMetadata<T>`, `History`, `TaskContext`, `Caller`, `Option<E>`, or implement the trait"
)]
pub trait FromSkillRequest: Sized + Send + 'static {
    /// Extract the argument.
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError>;

    /// The JSON Schema of the input this extractor reads, published in the agent card.
    fn input_schema() -> Option<Value> {
        None
    }

    /// The media types of the content this extractor reads: the skill's card `inputModes`
    /// unless the skill names its own. Empty: it reads no content (a context, metadata);
    /// [`ANY_MEDIA_TYPE`]: any content (the skill then keeps the agent's defaults).
    const MEDIA_TYPES: &'static [&'static str] = &[];
}

/// The media range of an extractor that reads any content (`Parts`, `Message`, `File`).
pub const ANY_MEDIA_TYPE: &str = "*/*";

/// All text parts of the message, joined with `\n`. Fails when the message has no text part.
///
/// ```
/// # use a2a_kit::skill::Text;
/// async fn greet(Text(name): Text) -> String { format!("Hello, {name}!") }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl FromSkillRequest for Text {
    const MEDIA_TYPES: &'static [&'static str] = &["text/plain"];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        let texts: Vec<&str> = req
            .message()
            .parts
            .iter()
            .filter_map(|p| p.as_text())
            .collect();
        if texts.is_empty() {
            return Err(ExtractError::new(
                "a text part",
                "message.parts",
                format!(
                    "the message has no text part (it has {})",
                    describe_parts(&req.message().parts)
                ),
            ));
        }
        Ok(Text(texts.join("\n")))
    }
}

impl<T: DataInput> FromSkillRequest for Data<T> {
    const MEDIA_TYPES: &'static [&'static str] = &["application/json"];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        let expected = format!("a data part holding {}", T::schema_name());
        let parts = &req.message().parts;
        let (index, value) = match parts
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.as_data().map(|d| (i, d.clone())))
        {
            Some(found) => found,
            None => {
                let json_text = parts.iter().enumerate().find_map(|(i, p)| {
                    p.as_text()
                        .and_then(|t| serde_json::from_str::<Value>(t.trim()).ok())
                        .map(|v| (i, v))
                });
                match json_text {
                    Some(found) => found,
                    None => {
                        return Err(ExtractError::new(
                            expected,
                            "message.parts",
                            format!(
                                "the message has no data part (it has {})",
                                describe_parts(parts)
                            ),
                        ));
                    }
                }
            }
        };
        let mut value = value;
        whole_floats_as_integers(&mut value);
        match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(v) => Ok(Data(v)),
            Err(e) => {
                let inner = e.path().to_string();
                let path = if inner == "." {
                    format!("message.parts[{index}].data")
                } else {
                    format!("message.parts[{index}].data.{inner}")
                };
                Err(ExtractError::new(
                    expected,
                    path,
                    e.into_inner().to_string(),
                ))
            }
        }
    }

    fn input_schema() -> Option<Value> {
        serde_json::to_value(schemars::schema_for!(T)).ok()
    }
}

/// Whole-valued floats (`2.0`) as the integers they are, everywhere in `value`: the official
/// clients send a data part through protobuf's `Struct`, whose numbers are all doubles, so a
/// Python caller's `2` arrives as `2.0`, and an integer field would refuse it. A fraction
/// (`2.5`) stays a float, refused by an integer field naming it; floats beyond 2^53 (no longer
/// exact) stay floats too. A float field takes an integer as it is.
fn whole_floats_as_integers(value: &mut Value) {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= EXACT) {
                *n = if f < 0.0 {
                    (f as i64).into()
                } else {
                    (f as u64).into()
                };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_floats_as_integers),
        _ => {}
    }
}

/// A file: the first `raw` or `url` part, with its media type and file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// The bytes or the reference.
    pub content: FileContent,
    /// `mediaType` of the part.
    pub media_type: Option<String>,
    /// `filename` of the part.
    pub filename: Option<String>,
}

/// Inline bytes or a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// `raw`: the decoded bytes.
    Bytes(Vec<u8>),
    /// `url`: where the content lives (the kit does not fetch it).
    Url(String),
}

impl File {
    fn from_part(p: &Part) -> Option<Self> {
        let content = match &p.content {
            PartContent::Raw(b) => FileContent::Bytes(b.clone()),
            PartContent::Url(u) => FileContent::Url(u.clone()),
            _ => return None,
        };
        Some(File {
            content,
            media_type: p.media_type.clone(),
            filename: p.filename.clone(),
        })
    }
}

impl FromSkillRequest for File {
    const MEDIA_TYPES: &'static [&'static str] = &[ANY_MEDIA_TYPE];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        req.message()
            .parts
            .iter()
            .find_map(File::from_part)
            .ok_or_else(|| {
                ExtractError::new(
                    "a file part (raw or url)",
                    "message.parts",
                    format!(
                        "the message has no file part (it has {})",
                        describe_parts(&req.message().parts)
                    ),
                )
            })
    }
}

/// Every file part of the message (possibly none).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Files(pub Vec<File>);

impl FromSkillRequest for Files {
    const MEDIA_TYPES: &'static [&'static str] = &[ANY_MEDIA_TYPE];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(Files(
            req.message()
                .parts
                .iter()
                .filter_map(File::from_part)
                .collect(),
        ))
    }
}

/// All parts of the message, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Parts(pub Vec<Part>);

impl FromSkillRequest for Parts {
    const MEDIA_TYPES: &'static [&'static str] = &[ANY_MEDIA_TYPE];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(Parts(req.message().parts.clone()))
    }
}

impl FromSkillRequest for Message {
    const MEDIA_TYPES: &'static [&'static str] = &[ANY_MEDIA_TYPE];
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(req.message().clone())
    }
}

/// Request metadata deserialized into `T` (request-level metadata, else the message's; an
/// absent map deserializes from `{}` so all-optional structs always extract).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestMetadata<T>(pub T);

impl<T: DeserializeOwned + Send + 'static> FromSkillRequest for RequestMetadata<T> {
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        let value = Value::Object(req.metadata().cloned().map(Into::into).unwrap_or_default());
        serde_path_to_error::deserialize::<_, T>(value)
            .map(RequestMetadata)
            .map_err(|e| {
                let inner = e.path().to_string();
                let path = if inner == "." {
                    "metadata".to_string()
                } else {
                    format!("metadata.{inner}")
                };
                ExtractError::new(
                    format!("metadata matching {}", std::any::type_name::<T>()),
                    path,
                    e.into_inner().to_string(),
                )
            })
    }
}

/// The task's history so far, oldest first, including the current message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct History(pub Vec<Message>);

impl FromSkillRequest for History {
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(History(req.history().to_vec()))
    }
}

/// Who sent the message ([`crate::auth`]): a skill taking a `Caller` runs only for an
/// authenticated one (an agent without an authenticator has none: InvalidParams naming the
/// skill); `Option<Caller>` takes the message from anyone.
impl FromSkillRequest for crate::auth::Caller {
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        req.caller.as_deref().cloned().ok_or_else(|| {
            ExtractError::new(
                "an authenticated caller",
                "caller",
                "this agent does not authenticate its callers (AgentServiceBuilder::authenticate)",
            )
        })
    }
}

impl FromSkillRequest for TaskContext {
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(req.context.clone())
    }
}

/// An optional argument: `None` when the inner extractor fails.
impl<T: FromSkillRequest> FromSkillRequest for Option<T> {
    const MEDIA_TYPES: &'static [&'static str] = T::MEDIA_TYPES;
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        Ok(T::from_request(req).ok())
    }
    fn input_schema() -> Option<Value> {
        T::input_schema()
    }
}

fn describe_parts(parts: &[Part]) -> String {
    if parts.is_empty() {
        return "no parts".into();
    }
    let kinds: Vec<&str> = parts
        .iter()
        .map(|p| match p.content {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) => "raw",
            PartContent::Url(_) => "url",
            PartContent::Data(_) => "data",
        })
        .collect();
    format!("parts: {}", kinds.join(", "))
}

/// Multi-turn: a running skill asks, and the reply is extracted like an argument.
impl TaskContext {
    /// Ask the user: the task goes INPUT_REQUIRED with `question` as its status message, and
    /// this call resumes when the next message for the task arrives, extracted as `T`. A reply
    /// that does not extract is answered by asking again, with the reason.
    ///
    /// `T` is any extractor, so say which one: destructure it (`let Text(city) = ..`) or
    /// name it (`let city: Text = ..`, `ctx.ask::<Data<Dates>>(..)`); a bare
    /// `let answer = ctx.ask(..).await?` leaves `T` unknown (error E0282). A skill that
    /// answers with a Message has no task to ask in: the call fails, saying so.
    ///
    /// ```no_run
    /// use a2a_kit::prelude::*;
    ///
    /// async fn book(ctx: TaskContext) -> Result<String, SkillError> {
    ///     let Text(city) = ctx.ask("Which city?").await?;
    ///     let nights: Text = ctx.ask(format!("How many nights in {city}?")).await?;
    ///     Ok(format!("{} nights in {city}", nights.0))
    /// }
    /// ```
    ///
    /// and not
    ///
    /// ```compile_fail,E0282
    /// # use a2a_kit::prelude::*;
    /// async fn book(ctx: TaskContext) -> Result<String, SkillError> {
    ///     let city = ctx.ask("Which city?").await?; // which extractor?
    ///     Ok(String::new())
    /// }
    /// ```
    pub async fn ask<T: FromSkillRequest>(
        &self,
        question: impl IntoParts,
    ) -> Result<T, SkillError> {
        self.interrupt(TaskState::InputRequired, question).await
    }

    /// Ask for authorization: AUTH_REQUIRED with `explanation`, resuming on the next message.
    pub async fn require_auth<T: FromSkillRequest>(
        &self,
        explanation: impl IntoParts,
    ) -> Result<T, SkillError> {
        self.interrupt(TaskState::AuthRequired, explanation).await
    }

    async fn interrupt<T: FromSkillRequest>(
        &self,
        state: TaskState,
        question: impl IntoParts,
    ) -> Result<T, SkillError> {
        let mut parts = question.into_parts()?;
        loop {
            let reply = self.wait_for_reply(state, parts).await?;
            let history = self.history().await;
            let req = SkillRequest {
                skill_id: std::borrow::Cow::Owned(self.skill_id().to_string()),
                message: Some(reply),
                metadata: None,
                history: Some(history),
                context: self.clone(),
                caller: None,
            };
            match T::from_request(&req) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    parts = vec![Part::text(format!(
                        "I could not use that reply: expected {} ({}). Please try again.",
                        e.expected, e.detail
                    ))];
                }
            }
        }
    }
}
