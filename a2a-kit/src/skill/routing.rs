//! Routing a message to a skill: all seven rules, in the order they apply (first match wins).
//!
//! 1. The message continues an existing task (`taskId`): that task's skill.
//! 2. An explicit skill id: `message.metadata.skillId`, else the request's `metadata.skillId`.
//!    An unknown id is InvalidParams listing the available ids.
//!
//!    A [`SkillRouter`] that [decides first](SkillRouter::decides_first) (a model router)
//!    is asked here, before rules 3 to 5; what it leaves ([`Route::NoMatch`], or a skill that
//!    does not exist, logged) goes on through them, and it is not asked again at rule 6.
//! 3. The agent has exactly one skill.
//! 4. A message that is data (a lone data part, or one text part whose `mediaType` is JSON),
//!    unless the default skill can read it: the one skill that takes data (a `Data<T>`
//!    argument). With several, the [`SkillRouter`] decides, else InvalidParams lists the
//!    skills that take data. With none, routing goes on.
//! 5. The skill marked `#[skill(default)]`.
//! 6. The [`SkillRouter`], if one is installed; it may also answer directly with a Message.
//! 7. Otherwise InvalidParams, listing the available skill ids.

use async_trait::async_trait;

use super::agent::SkillInfo;
use crate::error::A2aError;
use crate::protocol::{Message, Metadata, is_json_media_type};

/// What a [`SkillRouter`] sees.
#[derive(Debug, Clone, Copy)]
pub struct RouteRequest<'a> {
    /// The incoming message.
    pub message: &'a Message,
    /// Request metadata.
    pub metadata: Option<&'a Metadata>,
    /// The agent's skills (its own and its skill sets').
    pub skills: &'a [SkillInfo],
}

/// A routing decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// Run this skill (by id).
    Skill(String),
    /// Answer directly with this message; no task is created.
    Reply(Message),
    /// No decision: the request fails with InvalidParams listing the skills.
    NoMatch,
}

/// Step 6 of routing (and of step 4 when several skills take data): an async hook (keyword
/// rules, an LLM classifier, ...) for messages that
/// name no skill when the agent has several and no default.
///
/// ```
/// use a2a_kit::skill::{Route, RouteRequest, SkillRouter};
/// struct Keywords;
/// #[a2a_kit::async_trait]
/// impl SkillRouter for Keywords {
///     async fn route(&self, req: RouteRequest<'_>) -> Route {
///         if req.message.text().contains("flight") { Route::Skill("book-flight".into()) } else { Route::NoMatch }
///     }
/// }
/// ```
#[async_trait]
pub trait SkillRouter: Send + Sync + 'static {
    /// Decide.
    async fn route(&self, req: RouteRequest<'_>) -> Route;

    /// Whether this router decides before the agent's only or default skill (rules 3 to 5),
    /// which then take what it leaves ([`Route::NoMatch`]). A router that also decides
    /// whether a message deserves a task at all (a model router) does. Default: false.
    fn decides_first(&self) -> bool {
        false
    }
}

/// The skill id named in message or request metadata (`skillId`).
pub(crate) fn explicit_skill_id<'a>(
    message: &'a Message,
    request_metadata: Option<&'a Metadata>,
) -> Option<&'a str> {
    let from = |m: Option<&'a Metadata>| m.and_then(|m| m.get("skillId")).and_then(|v| v.as_str());
    from(message.metadata.as_ref()).or_else(|| from(request_metadata))
}

/// InvalidParams listing the available skills.
pub(crate) fn no_skill_error(skills: &[SkillInfo], why: &str) -> A2aError {
    skill_id_error(skills.iter(), why)
}

fn skill_id_error<'a>(skills: impl Iterator<Item = &'a SkillInfo>, why: &str) -> A2aError {
    let ids: Vec<&str> = skills.map(|s| s.id).collect();
    A2aError::invalid_field(
        "message.metadata.skillId",
        format!("{why}; set metadata.skillId to one of: {}", ids.join(", ")),
    )
}

/// Whether a skill can read a data message: it takes data, or an argument reads any content.
fn reads_data(skill: &SkillInfo) -> bool {
    skill.takes_data()
        || (skill.input_modes.is_empty()
            && skill
                .argument_media_types
                .iter()
                .any(|types| types.contains(&super::ANY_MEDIA_TYPE)))
}

/// Whether a message is structured data alone: one data part, or one text part declared
/// JSON by its `mediaType` (how clients without data parts send it).
fn is_data_message(message: &Message) -> bool {
    match message.parts.as_slice() {
        [part] => {
            part.as_data().is_some()
                || (part.as_text().is_some()
                    && part.media_type.as_deref().is_some_and(is_json_media_type))
        }
        _ => false,
    }
}

/// Where a message goes.
#[derive(Debug)]
#[cfg_attr(feature = "llm", allow(clippy::large_enum_variant))]
pub(crate) enum Routed<'a> {
    /// To this skill.
    Skill(&'a SkillInfo),
    /// Nowhere: the router answered it directly (rule 6).
    Reply(Message),
}

/// Rule 1: the skill of the task a message continues.
pub(crate) fn continued_skill<'a>(
    skills: &'a [SkillInfo],
    task_id: &str,
    skill_id: &str,
) -> Result<&'a SkillInfo, A2aError> {
    skills.iter().find(|s| s.id == skill_id).ok_or_else(|| {
        A2aError::Internal(format!(
            "task {task_id} belongs to skill `{skill_id}`, which no longer exists"
        ))
    })
}

/// Rules 2 to 7: the skill a message that starts a task goes to.
pub(crate) async fn route_new<'a>(
    skills: &'a [SkillInfo],
    router: Option<&dyn SkillRouter>,
    message: &Message,
    metadata: Option<&Metadata>,
) -> Result<Routed<'a>, A2aError> {
    let find = |id: &str| skills.iter().find(|s| s.id == id);
    if let Some(id) = explicit_skill_id(message, metadata) {
        return find(id)
            .map(Routed::Skill)
            .ok_or_else(|| no_skill_error(skills, &format!("this agent has no skill `{id}`")));
    }
    let request = RouteRequest {
        message,
        metadata,
        skills,
    };
    let mut asked = false;
    if let Some(r) = router.filter(|r| r.decides_first()) {
        asked = true;
        match r.route(request).await {
            Route::Skill(id) => {
                if let Some(skill) = find(&id) {
                    return Ok(Routed::Skill(skill));
                }
                tracing::warn!(
                    skill = id,
                    "the skill router chose a skill that does not exist; routing by the rules"
                );
            }
            Route::Reply(reply) => return Ok(Routed::Reply(reply)),
            Route::NoMatch => {}
        }
    }
    if let [only] = skills {
        return Ok(Routed::Skill(only));
    }
    let default = skills.iter().find(|s| s.default);
    // Data goes to the skills that take data, unless the default can read it.
    let data_skills = if is_data_message(message) && !default.is_some_and(reads_data) {
        let mut takers = skills.iter().filter(|s| s.takes_data());
        match (takers.next(), takers.next()) {
            (Some(only), None) => return Ok(Routed::Skill(only)),
            (Some(_), Some(_)) => true,
            _ => false,
        }
    } else {
        false
    };
    if let (Some(d), false) = (default, data_skills) {
        return Ok(Routed::Skill(d));
    }
    let route = match router {
        Some(r) if !asked => r.route(request).await,
        _ => Route::NoMatch,
    };
    match route {
        Route::Skill(id) => find(&id).map(Routed::Skill).ok_or_else(|| {
            A2aError::Internal(format!(
                "the skill router chose `{id}`, which does not exist"
            ))
        }),
        Route::Reply(reply) => Ok(Routed::Reply(reply)),
        Route::NoMatch if data_skills => Err(skill_id_error(
            skills.iter().filter(|s| s.takes_data()),
            "the message is data and several skills take data",
        )),
        Route::NoMatch => Err(no_skill_error(skills, "the message does not name a skill")),
    }
}
