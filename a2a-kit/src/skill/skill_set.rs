//! Skill sets: the skills of an `#[a2a_agent(skill_set = name)]` impl block as a value, and
//! the table a service routes and dispatches with (the agent's own skills plus the sets added
//! to it).
//!
//! ```
//! use a2a_kit::prelude::*;
//! use a2a_kit::server::AgentService;
//!
//! /// Books trips.
//! #[a2a_agent(name = "Travel")]
//! impl Travel {
//!     /// Book a flight.
//!     #[skill(default)]
//!     async fn flight(&self, Text(to): Text) -> String {
//!         format!("flight to {to}")
//!     }
//! }
//!
//! // Possibly in another module or file.
//! #[a2a_agent(skill_set = hotels)]
//! impl Travel {
//!     /// Book a hotel.
//!     #[skill]
//!     async fn hotel(&self, Text(city): Text) -> String {
//!         format!("hotel in {city}")
//!     }
//! }
//! # struct Travel;
//!
//! let service = AgentService::builder_with(Travel, Travel::hotels()).build()?;
//! let ids: Vec<&str> = service.card().skills.iter().map(|s| s.id.as_str()).collect();
//! assert_eq!(ids, ["flight", "hotel"]);
//! # Ok::<(), a2a_kit::server::BuildError>(())
//! ```
//!
//! Sets compose with `+` (`Travel::hotels() + Travel::cars()`). Within one impl block a
//! duplicate skill id or a second `default` is a compile error; across blocks,
//! `AgentServiceBuilder::build` returns an error
//! naming both blocks.

use std::sync::Arc;

use super::agent::{AgentInfo, DynAgent, SkillCall, SkillInfo};
use super::extract::SkillRequest;
use crate::error::A2aError;

/// The dispatch of one skill-set block: `Agent::prepare` for its skills.
pub type PrepareFn<A> = fn(Arc<A>, &str, &SkillRequest) -> Result<SkillCall, A2aError>;

/// The skills of one or more `#[a2a_agent(skill_set = name)]` impl blocks of agent type `A`.
/// Add it to a service with
/// `AgentServiceBuilder::skills`.
pub struct SkillSet<A> {
    blocks: Vec<Block<A>>,
}

struct Block<A> {
    name: &'static str,
    skills: &'static [SkillInfo],
    prepare: PrepareFn<A>,
    file: &'static str,
    line: u32,
}

impl<A> SkillSet<A> {
    /// The set of one block. For generated code.
    #[doc(hidden)]
    pub fn from_block(
        name: &'static str,
        skills: &'static [SkillInfo],
        prepare: PrepareFn<A>,
        file: &'static str,
        line: u32,
    ) -> Self {
        SkillSet {
            blocks: vec![Block {
                name,
                skills,
                prepare,
                file,
                line,
            }],
        }
    }

    /// The skills, block by block, in declaration order.
    pub fn skills(&self) -> impl Iterator<Item = &'static SkillInfo> + '_ {
        self.blocks.iter().flat_map(|b| b.skills.iter())
    }

    /// Both sets: this one's blocks, then `other`'s.
    pub fn and(mut self, other: SkillSet<A>) -> Self {
        self.blocks.extend(other.blocks);
        self
    }
}

impl<A> std::ops::Add for SkillSet<A> {
    type Output = SkillSet<A>;
    fn add(self, other: SkillSet<A>) -> SkillSet<A> {
        self.and(other)
    }
}

impl<A> std::fmt::Debug for SkillSet<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        for b in &self.blocks {
            list.entry(&format_args!(
                "{} ({}:{}): {:?}",
                b.name,
                b.file,
                b.line,
                b.skills.iter().map(|s| s.id).collect::<Vec<_>>()
            ));
        }
        list.finish()
    }
}

impl<A: Send + Sync + 'static> SkillSet<A> {
    /// The blocks bound to `agent`, for a service's table.
    pub(crate) fn bind(self, agent: Arc<A>) -> Vec<BoundBlock> {
        self.blocks
            .into_iter()
            .map(|b| {
                let (agent, prepare) = (agent.clone(), b.prepare);
                BoundBlock {
                    origin: format!(
                        "`#[a2a_agent(skill_set = {})]` at {}:{}",
                        b.name, b.file, b.line
                    ),
                    skills: b.skills,
                    prepare: Box::new(move |id, req| prepare(agent.clone(), id, req)),
                }
            })
            .collect()
    }
}

type BoundPrepare = Box<dyn Fn(&str, &SkillRequest) -> Result<SkillCall, A2aError> + Send + Sync>;

/// A skill-set block bound to the service's agent.
pub(crate) struct BoundBlock {
    origin: String,
    skills: &'static [SkillInfo],
    prepare: BoundPrepare,
}

/// Who dispatches a skill of the table.
#[derive(Clone, Copy)]
enum Owner {
    /// The agent's own `prepare` (its `#[a2a_agent]` block).
    Agent,
    /// A skill-set block.
    Block(usize),
}

/// The skills a service routes to, and who prepares each: the agent's own skills, then each
/// skill set's, in the order they were added.
pub(crate) struct SkillTable {
    agent: DynAgent,
    skills: Vec<SkillInfo>,
    owners: Vec<Owner>,
    blocks: Vec<BoundBlock>,
}

impl SkillTable {
    /// The table of `agent` (a `type_name` type) with `blocks` added; `Err` names the two
    /// blocks that declare one skill id, or two default skills.
    pub(crate) fn new(
        agent: DynAgent,
        info: &'static AgentInfo,
        type_name: &str,
        blocks: Vec<BoundBlock>,
    ) -> Result<Self, String> {
        let own = format!("the `#[a2a_agent]` block of `{type_name}`");
        let mut skills: Vec<SkillInfo> = info.skills.to_vec();
        let mut owners = vec![Owner::Agent; skills.len()];
        let origin = |owner: Owner, blocks: &[BoundBlock]| match owner {
            Owner::Agent => own.clone(),
            Owner::Block(i) => blocks[i].origin.clone(),
        };
        for (i, block) in blocks.iter().enumerate() {
            for skill in block.skills {
                if let Some(at) = skills.iter().position(|s| s.id == skill.id) {
                    return Err(format!(
                        "agent `{type_name}`: skill id `{}` is declared twice, by {} and by {}; \
                         give one of them another `#[skill(id = \"...\")]`",
                        skill.id,
                        origin(owners[at], &blocks),
                        block.origin
                    ));
                }
                if skill.default
                    && let Some(at) = skills.iter().position(|s| s.default)
                {
                    return Err(format!(
                        "agent `{type_name}`: two default skills, `{}` in {} and `{}` in {}; \
                             an agent has at most one: remove one `default`",
                        skills[at].id,
                        origin(owners[at], &blocks),
                        skill.id,
                        block.origin
                    ));
                }
                skills.push(*skill);
                owners.push(Owner::Block(i));
            }
        }
        Ok(SkillTable {
            agent,
            skills,
            owners,
            blocks,
        })
    }

    /// Every skill, the agent's own first.
    pub(crate) fn skills(&self) -> &[SkillInfo] {
        &self.skills
    }

    /// Extract the arguments of skill `skill_id` from `req` and build its call.
    pub(crate) fn prepare(
        &self,
        skill_id: &str,
        req: &SkillRequest,
    ) -> Result<SkillCall, A2aError> {
        if !self.blocks.is_empty()
            && let Some(Owner::Block(i)) = self
                .skills
                .iter()
                .position(|s| s.id == skill_id)
                .map(|at| self.owners[at])
        {
            return (self.blocks[i].prepare)(skill_id, req);
        }
        self.agent.clone().prepare(skill_id, req)
    }
}
