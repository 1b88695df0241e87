//! What a skill author uses: the [`Agent`] trait and its static description, the extractors
//! a skill takes its arguments through, the outcomes it returns, the [`TaskContext`] it
//! reports through, and the routing of a message to a skill.
//!
//! `#[a2a_agent]` and `#[skill]` generate the [`Agent`] implementation; everything here can
//! also be written by hand. The skill layer sits on the runtime: a [`TaskContext`] reaches
//! the executor through a small trait this layer owns, so the runtime never sees a context,
//! an extractor or an outcome.

mod agent;
mod context;
mod data;
mod extract;
pub(crate) mod macro_support;
mod outcome;
#[cfg(feature = "inventory")]
pub mod registry;
mod routing;
mod skill_set;

pub use agent::{
    Agent, AgentInfo, MESSAGE_REPLY_EXTENSION, SKILL_SCHEMA_EXTENSION, SkillCall, SkillInfo,
};
pub use context::{ArtifactWriter, TaskContext};
pub use data::{Data, DataInput, DataOutput};
pub use extract::{
    ANY_MEDIA_TYPE, ExtractError, File, FileContent, Files, FromSkillRequest, History, Parts,
    RequestMetadata, SkillRequest, Text,
};
pub use outcome::{IntoOutcome, IntoParts, Outcome};
pub use routing::{Route, RouteRequest, SkillRouter};
pub use skill_set::{PrepareFn, SkillSet};

pub(crate) use agent::DynAgent;
pub(crate) use routing::{Routed, continued_skill, route_new};
pub(crate) use skill_set::{BoundBlock, SkillTable};
