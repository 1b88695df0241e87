//! The execution pipeline's settings and hooks: how status texts travel, cancellation and
//! timeouts, periodic narration, and observers of stored events.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::protocol::StreamResponse;
use crate::store::Seq;

/// How a skill's status texts (`TaskContext::status`) travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusStyle {
    /// A data part `{"type":"status-indicator","text":...}`, message metadata
    /// `kind: "status-message"`. Clients that accumulate text parts never mix progress into
    /// the answer.
    #[default]
    Indicator,
    /// A text part, with the same metadata.
    Text,
    /// No message: a bare WORKING status update.
    None,
}

/// What a [`StatusNarrator`] is told each time it is asked.
#[derive(Debug, Clone)]
pub struct NarrationContext {
    /// The task.
    pub task_id: String,
    /// The skill running it.
    pub skill_id: String,
    /// Time since the skill started.
    pub elapsed: Duration,
    /// How many times the narrator has been asked for this task (from 1).
    pub tick: u32,
    /// The task's most recent status texts, read from the store (oldest first), so a narrator
    /// can avoid repeating itself, even after a restart.
    pub recent_statuses: Vec<String>,
    /// The text of the message that started the task: what the work is about.
    pub request: String,
}

/// Periodic progress narration: asked every [`ExecutionConfig::narration_interval`] while a
/// skill runs, until it produces its first artifact or the task ends. `None` says nothing.
///
/// ```
/// use a2a_kit::runtime::{NarrationContext, StatusNarrator};
/// struct Elapsed;
/// #[a2a_kit::async_trait]
/// impl StatusNarrator for Elapsed {
///     async fn narrate(&self, n: &NarrationContext) -> Option<String> {
///         Some(format!("Still working ({}s)", n.elapsed.as_secs()))
///     }
/// }
/// ```
#[async_trait]
pub trait StatusNarrator: Send + Sync + 'static {
    /// The next status text, or `None`.
    async fn narrate(&self, n: &NarrationContext) -> Option<String>;

    /// How often this narrator wants to be asked; `None` (the default):
    /// [`ExecutionConfig::narration_interval`].
    fn interval(&self) -> Option<Duration> {
        None
    }
}

/// Sees every event right after it is stored, in log order per task. Implementations must not
/// block: they hand the event to their own task (the push outbox does this).
///
/// ```
/// use a2a_kit::runtime::EventObserver;
/// use a2a_kit::protocol::StreamResponse;
/// struct Log;
/// impl EventObserver for Log {
///     fn on_event(&self, task_id: &str, seq: u64, event: &StreamResponse) {
///         println!("{task_id}#{seq}: {:?}", event.state());
///     }
/// }
/// ```
pub trait EventObserver: Send + Sync + 'static {
    /// Called after event `seq` of `task_id` was stored.
    fn on_event(&self, task_id: &str, seq: Seq, event: &StreamResponse);
}

/// Knobs of the execution pipeline.
#[derive(Clone)]
pub struct ExecutionConfig {
    /// How working-state status texts are sent.
    pub status_style: StatusStyle,
    /// How long a canceled skill may keep running before it is aborted.
    pub cancel_grace: Duration,
    /// Fail a skill that runs longer than this (default 10 minutes; `None`: no limit): a
    /// skill stuck on a call that never returns does not hold its turn, its task and its
    /// clients' streams forever. Time spent waiting for a reply (`ctx.ask`) does not count;
    /// waiting for a turn does not either. A timed-out task ends FAILED, "the skill timed out
    /// after ...". Set it above the longest run you expect (or `None` for skills that stream
    /// for hours).
    pub skill_timeout: Option<Duration>,
    /// How long a question (`ctx.ask`, `ctx.require_auth`) waits for the user's reply before
    /// it expires (default 1 hour; `None`: forever). An expired question is an error in the
    /// skill (`SkillError::Failed`, "no reply came within ..."), which ends the task FAILED
    /// with that reason unless the skill handles it: a task waiting for input never holds
    /// its place in the store forever.
    pub reply_timeout: Option<Duration>,
    /// Skills running at once (default 1,024). Beyond it a new run waits for its turn, its
    /// task SUBMITTED: callers are served in turn, each caller's runs in arrival order. A skill waiting for a reply (`ctx.ask`) gives its
    /// turn up meanwhile.
    pub max_running_skills: usize,
    /// Runs waiting for a turn (default 10,000). Beyond it new tasks are refused with the
    /// "unavailable" error (503 with `Retry-After` over HTTP+JSON), before anything is
    /// stored.
    pub max_waiting_skills: usize,
    /// What one caller may hold of the above and of live tasks (see [`CallerShare`](super::CallerShare)).
    pub per_caller: super::CallerShare,
    /// Whether streams also close on AUTH_REQUIRED (they always close on INPUT_REQUIRED and on
    /// terminal states). The spec contradicts itself here; closing is the default.
    pub close_streams_on_auth_required: bool,
    /// Where a client finds a skill's answer: always in the task's artifact. With this on, a
    /// text-only answer is also the COMPLETED status message (unless the skill set one), for
    /// clients that read only the final status. Off by default, so UIs that show both do not
    /// show the answer twice.
    pub answer_in_status: bool,
    /// The narrator, if any.
    pub narrator: Option<Arc<dyn StatusNarrator>>,
    /// How often the narrator is asked.
    pub narration_interval: Duration,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        ExecutionConfig {
            status_style: StatusStyle::Indicator,
            cancel_grace: Duration::from_secs(5),
            skill_timeout: Some(Duration::from_secs(600)),
            reply_timeout: Some(Duration::from_secs(3600)),
            max_running_skills: 1024,
            max_waiting_skills: 10_000,
            per_caller: super::CallerShare::default(),
            close_streams_on_auth_required: true,
            answer_in_status: false,
            narrator: None,
            narration_interval: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Debug for ExecutionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionConfig")
            .field("status_style", &self.status_style)
            .field("cancel_grace", &self.cancel_grace)
            .field("skill_timeout", &self.skill_timeout)
            .field("reply_timeout", &self.reply_timeout)
            .field("max_running_skills", &self.max_running_skills)
            .field("max_waiting_skills", &self.max_waiting_skills)
            .field("per_caller", &self.per_caller)
            .field("answer_in_status", &self.answer_in_status)
            .field("narrator", &self.narrator.is_some())
            .field("narration_interval", &self.narration_interval)
            .finish()
    }
}
