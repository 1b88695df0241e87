//! Skill return values: anything that implements [`IntoOutcome`] (and, for `#[streaming]`
//! skills, stream items that implement [`IntoParts`]).
//!
//! | returned | task ends |
//! |---|---|
//! | `String`, `&'static str`, `Part`, `Vec<Part>`, `Data<T>`, `Artifact` | COMPLETED, content in an artifact |
//! | `()` | COMPLETED, no artifact |
//! | `Message` | no task: a direct Message reply |
//! | any of these from a `#[skill(message)]` skill | no task: a direct Message reply holding the content ([`Outcome::into_reply`]) |
//! | [`Outcome`] | as built: completed / input_required / auth_required / rejected / failed |
//! | `Result<T, E>` | `Ok` as `T`; `Err` FAILED with the error's text, or REJECTED / CANCELED through [`SkillError`] |
//!
//! ```
//! use a2a_kit::skill::{IntoOutcome, Outcome};
//! let done = "all good".to_string().into_outcome();
//! assert!(done.is_completed());
//! let ask = Outcome::input_required("Which city?");
//! assert!(!ask.is_completed());
//! ```

use serde::Serialize;
use serde_json::Value;

use super::data::{Data, DataOutput};
use crate::error::SkillError;
use crate::protocol::{Artifact, Message, Part, TaskState};
use crate::runtime::Ending;

/// How a skill invocation ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    kind: OutcomeKind,
}

#[derive(Debug, Clone, PartialEq)]
enum OutcomeKind {
    /// COMPLETED; content (if any) becomes an artifact unless one was produced already.
    Completed {
        content: Content,
        status_text: Option<String>,
    },
    /// INPUT_REQUIRED or AUTH_REQUIRED with this agent message.
    Interrupted { state: TaskState, parts: Vec<Part> },
    /// REJECTED / FAILED / CANCELED with a reason.
    Ended {
        state: TaskState,
        reason: Option<String>,
    },
    /// A direct reply: no task.
    Message(Message),
}

#[derive(Debug, Clone, PartialEq)]
enum Content {
    None,
    Parts(Vec<Part>),
    Artifact(Artifact),
}

impl Outcome {
    /// COMPLETED with this content as the task's artifact.
    pub fn completed(content: impl IntoParts) -> Self {
        match content.into_parts() {
            Ok(parts) if parts.is_empty() => Outcome::done(),
            Ok(parts) => Outcome {
                kind: OutcomeKind::Completed {
                    content: Content::Parts(parts),
                    status_text: None,
                },
            },
            Err(e) => e.into(),
        }
    }

    /// COMPLETED with no further content (artifacts already produced through the context).
    pub fn done() -> Self {
        Outcome {
            kind: OutcomeKind::Completed {
                content: Content::None,
                status_text: None,
            },
        }
    }

    /// COMPLETED with this artifact.
    pub fn artifact(artifact: Artifact) -> Self {
        Outcome {
            kind: OutcomeKind::Completed {
                content: Content::Artifact(artifact),
                status_text: None,
            },
        }
    }

    /// INPUT_REQUIRED, asking this question. The next message for the task invokes the skill
    /// again, with the whole history available through the `History` extractor.
    pub fn input_required(question: impl IntoParts) -> Self {
        Self::interrupted(TaskState::InputRequired, question)
    }

    /// AUTH_REQUIRED, explaining what is needed (the spec requires a task and an explanation).
    pub fn auth_required(explanation: impl IntoParts) -> Self {
        Self::interrupted(TaskState::AuthRequired, explanation)
    }

    fn interrupted(state: TaskState, content: impl IntoParts) -> Self {
        match content.into_parts() {
            Ok(parts) => Outcome {
                kind: OutcomeKind::Interrupted { state, parts },
            },
            Err(e) => e.into(),
        }
    }

    /// REJECTED: the agent declines the task.
    pub fn rejected(reason: impl Into<String>) -> Self {
        Outcome {
            kind: OutcomeKind::Ended {
                state: TaskState::Rejected,
                reason: Some(reason.into()),
            },
        }
    }

    /// FAILED with a reason.
    pub fn failed(reason: impl Into<String>) -> Self {
        Outcome {
            kind: OutcomeKind::Ended {
                state: TaskState::Failed,
                reason: Some(reason.into()),
            },
        }
    }

    /// A direct Message reply (no task is created).
    pub fn message(message: Message) -> Self {
        Outcome {
            kind: OutcomeKind::Message(message),
        }
    }

    /// This outcome as a direct Message reply, for a skill that answers without a task
    /// (`#[skill(message)]`; a hand-written agent's skill whose [`SkillInfo::direct_message`]
    /// is set): completed content becomes the reply's parts, an artifact's parts included.
    ///
    /// What needs a task cannot be a Message, so it ends FAILED with a reason saying why (the
    /// kit records that one task, so the failure can be read): a question
    /// ([`input_required`](Self::input_required), [`auth_required`](Self::auth_required): a
    /// reply must find the task waiting for it) and an answer with no content (a Message holds
    /// at least one part). A rejection or a failure is kept as it is.
    ///
    /// ```
    /// use a2a_kit::skill::{IntoOutcome, Outcome};
    /// let reply = "Hello, Ada!".into_outcome().into_reply();
    /// assert_eq!(reply.state(), None); // no task
    /// let question = Outcome::input_required("Which city?").into_reply();
    /// assert_eq!(question.state(), Some(a2a_kit::protocol::TaskState::Failed));
    /// ```
    ///
    /// [`SkillInfo::direct_message`]: super::SkillInfo::direct_message
    pub fn into_reply(self) -> Self {
        match self.kind {
            OutcomeKind::Completed {
                content: Content::Parts(parts),
                ..
            } => Outcome::message(Message::agent(parts)),
            OutcomeKind::Completed {
                content: Content::Artifact(artifact),
                ..
            } if !artifact.parts.is_empty() => Outcome::message(Message::agent(artifact.parts)),
            OutcomeKind::Completed { .. } => Outcome::failed(
                "this skill answers with a Message, and it returned no content: a Message \
                 holds at least one part",
            ),
            OutcomeKind::Interrupted { state, .. } => Outcome::failed(format!(
                "this skill answers with a Message, so it cannot end {}: a question needs a \
                 task that waits for the reply",
                state.as_str().trim_start_matches("TASK_STATE_")
            )),
            OutcomeKind::Ended { .. } | OutcomeKind::Message(_) => self,
        }
    }

    /// Put this text in the COMPLETED status message (by default it has none: the answer is
    /// the artifact; see `ExecutionConfig::answer_in_status`).
    pub fn with_status_text(mut self, text: impl Into<String>) -> Self {
        if let OutcomeKind::Completed { status_text, .. } = &mut self.kind {
            *status_text = Some(text.into());
        }
        self
    }

    /// Whether the task ends COMPLETED.
    pub fn is_completed(&self) -> bool {
        matches!(self.kind, OutcomeKind::Completed { .. })
    }

    /// The task state this outcome leads to (`None` for a direct message).
    pub fn state(&self) -> Option<TaskState> {
        match &self.kind {
            OutcomeKind::Completed { .. } => Some(TaskState::Completed),
            OutcomeKind::Interrupted { state, .. } | OutcomeKind::Ended { state, .. } => {
                Some(*state)
            }
            OutcomeKind::Message(_) => None,
        }
    }
}

impl Outcome {
    /// The events the executor writes for this outcome. A text-only result is also offered
    /// as the COMPLETED status message's text, which the executor uses only when configured
    /// to (`ExecutionConfig::answer_in_status`) and no status text was set.
    pub(crate) fn into_ending(self) -> Ending {
        let text = |t: String| Message::agent(vec![Part::text(t)]);
        match self.kind {
            OutcomeKind::Completed {
                content,
                status_text,
            } => {
                let mut answer = None;
                let artifact = match content {
                    Content::None => None,
                    Content::Artifact(a) => Some(a),
                    Content::Parts(parts) => {
                        if parts.iter().all(|p| p.as_text().is_some()) {
                            answer = Some(parts.iter().filter_map(|p| p.as_text()).collect());
                        }
                        Some(Artifact::new(parts).with_name("result"))
                    }
                };
                Ending::Completed {
                    artifact,
                    message: status_text.map(text),
                    answer_text: answer,
                }
            }
            OutcomeKind::Interrupted { state, parts } => Ending::Settled {
                state,
                message: Some(Message::agent(parts)),
            },
            OutcomeKind::Ended { state, reason } => Ending::Settled {
                state,
                message: reason.map(text),
            },
            OutcomeKind::Message(m) => Ending::Reply(m),
        }
    }
}

impl From<SkillError> for Outcome {
    fn from(e: SkillError) -> Self {
        match e {
            SkillError::Failed(r) => Outcome::failed(r),
            SkillError::Rejected(r) => Outcome::rejected(r),
            SkillError::Canceled => Outcome {
                kind: OutcomeKind::Ended {
                    state: TaskState::Canceled,
                    reason: None,
                },
            },
        }
    }
}

/// Content that becomes message or artifact parts: a skill's answer, a question it asks, a
/// chunk it writes, and each item of a `#[streaming]` skill's stream.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be turned into message parts",
    label = "not content",
    note = "content is `String`, `&str`, `Part`, `Vec<Part>`, `Data<T>`, or `Result<T, E>` of those"
)]
pub trait IntoParts {
    /// The parts (an error when serialization fails).
    fn into_parts(self) -> Result<Vec<Part>, SkillError>;

    /// The media types of the parts: a `#[streaming]` skill's card `outputModes` unless the
    /// skill names its own. Empty: not known from the type.
    const MEDIA_TYPES: &'static [&'static str] = &[];
}

impl IntoParts for String {
    const MEDIA_TYPES: &'static [&'static str] = &["text/plain"];
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        Ok(vec![Part::text(self)])
    }
}
impl IntoParts for &str {
    const MEDIA_TYPES: &'static [&'static str] = &["text/plain"];
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        Ok(vec![Part::text(self)])
    }
}
impl IntoParts for Part {
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        Ok(vec![self])
    }
}
impl IntoParts for Vec<Part> {
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        Ok(self)
    }
}
impl<T: Serialize> IntoParts for Data<T> {
    const MEDIA_TYPES: &'static [&'static str] = &["application/json"];
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        let v = serde_json::to_value(&self.0).map_err(|e| {
            SkillError::failed(format!("could not serialize the skill's result: {e}"))
        })?;
        Ok(vec![Part::data(v)])
    }
}

/// A skill return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a skill",
    label = "not a skill result",
    note = "skills return `String`, `&'static str`, `Data<T>`, `Part`, `Vec<Part>`, `Artifact`, `Message`, `()`, `Outcome`, or `Result<T, E>` of those with `E: Into<SkillError>`"
)]
pub trait IntoOutcome: Send + 'static {
    /// `true` when this type is a direct Message reply: the kit then creates no task.
    const DIRECT_MESSAGE: bool = false;

    /// The outcome.
    fn into_outcome(self) -> Outcome;

    /// The JSON Schema of the output, published in the card (for `Data<T>`).
    fn output_schema() -> Option<Value> {
        None
    }

    /// The media types of the result: the skill's card `outputModes` unless the skill names
    /// its own. Empty: not known from the type (the skill keeps the agent's defaults).
    const MEDIA_TYPES: &'static [&'static str] = &[];
}

impl IntoOutcome for Outcome {
    fn into_outcome(self) -> Outcome {
        self
    }
}
impl IntoOutcome for String {
    const MEDIA_TYPES: &'static [&'static str] = &["text/plain"];
    fn into_outcome(self) -> Outcome {
        Outcome::completed(self)
    }
}
impl IntoOutcome for &'static str {
    const MEDIA_TYPES: &'static [&'static str] = &["text/plain"];
    fn into_outcome(self) -> Outcome {
        Outcome::completed(self)
    }
}
impl IntoOutcome for Part {
    fn into_outcome(self) -> Outcome {
        Outcome::completed(self)
    }
}
impl IntoOutcome for Vec<Part> {
    fn into_outcome(self) -> Outcome {
        Outcome::completed(self)
    }
}
impl IntoOutcome for Artifact {
    fn into_outcome(self) -> Outcome {
        Outcome::artifact(self)
    }
}
impl IntoOutcome for () {
    fn into_outcome(self) -> Outcome {
        Outcome::done()
    }
}
impl IntoOutcome for Message {
    const DIRECT_MESSAGE: bool = true;
    fn into_outcome(self) -> Outcome {
        Outcome::message(self)
    }
}
impl<T: DataOutput> IntoOutcome for Data<T> {
    const MEDIA_TYPES: &'static [&'static str] = &["application/json"];
    fn into_outcome(self) -> Outcome {
        Outcome::completed(self)
    }
    fn output_schema() -> Option<Value> {
        serde_json::to_value(schemars::schema_for!(T)).ok()
    }
}
impl<T: IntoOutcome, E: Into<SkillError> + Send + 'static> IntoOutcome for Result<T, E> {
    const DIRECT_MESSAGE: bool = T::DIRECT_MESSAGE;
    const MEDIA_TYPES: &'static [&'static str] = T::MEDIA_TYPES;
    fn into_outcome(self) -> Outcome {
        match self {
            Ok(v) => v.into_outcome(),
            Err(e) => e.into().into(),
        }
    }
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

impl<T: IntoParts, E: Into<SkillError>> IntoParts for Result<T, E> {
    const MEDIA_TYPES: &'static [&'static str] = T::MEDIA_TYPES;
    fn into_parts(self) -> Result<Vec<Part>, SkillError> {
        self.map_err(Into::into)?.into_parts()
    }
}
