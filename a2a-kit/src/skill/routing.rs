//! Routing a message to a skill: all six rules, in the order they apply (first match wins).
//!
//! 1. The message continues an existing task (`taskId`): that task's skill.
//! 2. An explicit skill id: `message.metadata.skillId`, else the request's `metadata.skillId`.
//!    An unknown id is InvalidParams listing the available ids.
//! 3. The agent has exactly one skill.
//! 4. The skill marked `#[skill(default)]`.
//! 5. The [`SkillRouter`], if one is installed; it may also answer directly with a Message.
//! 6. Otherwise InvalidParams, listing the available skill ids.

use async_trait::async_trait;

use super::agent::SkillInfo;
use crate::error::A2aError;
use crate::protocol::{Message, Metadata};

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

/// Step 5 of routing: an async hook (keyword rules, an LLM classifier, ...) for messages that
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
    let ids: Vec<&str> = skills.iter().map(|s| s.id).collect();
    A2aError::invalid_field(
        "message.metadata.skillId",
        format!("{why}; set metadata.skillId to one of: {}", ids.join(", ")),
    )
}

/// Where a message goes.
#[derive(Debug)]
pub(crate) enum Routed<'a> {
    /// To this skill.
    Skill(&'a SkillInfo),
    /// Nowhere: the router answered it directly (rule 5).
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

/// Rules 2 to 6: the skill a message that starts a task goes to.
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
    if let [only] = skills {
        return Ok(Routed::Skill(only));
    }
    if let Some(d) = skills.iter().find(|s| s.default) {
        return Ok(Routed::Skill(d));
    }
    let route = match router {
        Some(r) => {
            r.route(RouteRequest {
                message,
                metadata,
                skills,
            })
            .await
        }
        None => Route::NoMatch,
    };
    match route {
        Route::Skill(id) => find(&id).map(Routed::Skill).ok_or_else(|| {
            A2aError::Internal(format!(
                "the skill router chose `{id}`, which does not exist"
            ))
        }),
        Route::Reply(reply) => Ok(Routed::Reply(reply)),
        Route::NoMatch => Err(no_skill_error(skills, "the message does not name a skill")),
    }
}
