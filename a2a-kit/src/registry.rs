//! Skills over several impl blocks, and every agent of the binary (cargo feature `inventory`).
//!
//! Off by default: an agent's skills all live in its `#[a2a_agent]` impl block, whose card and
//! dispatch are static and need no registration. With `features = ["inventory"]` on the
//! `a2a-kit` dependency, two things become available, both built on the
//! [`inventory`](https://docs.rs/inventory) crate (link-time registration, no central list):
//!
//! - **`#[a2a_agent(extend)]`** on further inherent impl blocks of an agent type adds their
//!   `#[skill]`s to the agent, so the skills can be grouped by topic, across modules. The
//!   agent's main `#[a2a_agent(..)]` block keeps the card fields (name, description, ...) and
//!   may then have no skill of its own.
//! - **[`agents()`]** lists every agent declared with `#[a2a_agent]` in the binary, each with
//!   its name, Rust type name, and its card for any base URL.
//!
//! ```rust,standalone_crate
//! use a2a_kit::prelude::*;
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
//! // Hotels, possibly in another module or file.
//! #[a2a_agent(extend)]
//! impl Travel {
//!     /// Book a hotel.
//!     #[skill]
//!     async fn hotel(&self, Text(city): Text) -> String {
//!         format!("hotel in {city}")
//!     }
//! }
//! # struct Travel;
//!
//! let card = Travel::agent_card("http://127.0.0.1:3000");
//! let ids: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
//! assert_eq!(ids, ["flight", "hotel"]);
//!
//! let listed = a2a_kit::registry::agent::<Travel>().expect("registered");
//! assert_eq!(listed.name(), "Travel");
//! ```
//!
//! # How it works
//!
//! Each main `#[a2a_agent]` block registers an entry (its static [`AgentInfo`], type id and
//! type name, source location); each `#[a2a_agent(extend)]` block registers its static
//! [`SkillInfo`]s and a dispatch function for them, keyed by the agent type. Nothing runs at
//! start-up beyond `inventory`'s constructors linking static nodes into a list. The first call
//! to [`agents()`], [`agent()`] or any agent's `agent_info()` (which `agent_card()` and
//! `AgentService::builder(..).build()` call) collects the list once, into a table of merged
//! descriptions; each agent's `agent_info()` then caches its entry, so an agent with extension
//! blocks costs one atomic load per call, like one without. Extension skills are dispatched
//! through two hash lookups (agent type, skill id); the main block's skills keep their direct
//! `match`. Without the feature none of this exists: `agent_info()` returns the main block's
//! `static` and nothing is registered.
//!
//! The merged skill list is the main block's skills in declaration order, then each extension
//! block's, blocks ordered by source file path and line (blocks that one `macro_rules!`
//! invocation expands share its location, and are ordered by their first skill id), so cards
//! are the same on every run.
//! For an agent with extension blocks, the merged [`AgentInfo`] and its skill slice are
//! allocated once and live for the rest of the process.
//!
//! # Conflicts are found at run time
//!
//! Within one block, a duplicate skill id or a second `default` skill is a compile error as
//! usual. Across blocks the macro cannot see them, so they are reported when the table is
//! built, as a [`RegistryError`] naming the agent, the skill ids and both blocks' locations:
//!
//! - without panicking, by [`check()`] (e.g. in a test or at start-up), [`RegisteredAgent::try_info`]
//!   and [`RegisteredAgent::try_card`];
//! - by a **panic** with that message from the agent's `agent_info()`, `agent_card()`,
//!   `Agent::info` and so from `AgentService::builder(..).build()`, i.e. when the service is
//!   built at start-up, never in the middle of serving requests. These functions return plain
//!   values and have no error to return.
//!
//! An agent left with no skill at all (a main block without skills and no extension block)
//! is reported the same way.
//!
//! # Limits
//!
//! - Only agents declared with `#[a2a_agent]` are listed; a hand-written
//!   [`Agent`] implementation is not.
//! - An extension block must be in the crate of its agent type (it is an inherent impl), and
//!   its type must have a main `#[a2a_agent]` block (else a compile error at the type).
//! - Registration relies on `inventory`'s platform support: Linux, macOS, Windows, the BSDs,
//!   and WebAssembly (which may need `__wasm_call_ctors`, see `inventory`'s documentation).

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::agent::{Agent, AgentInfo, SkillInfo};
use crate::macro_support::{ExtensionPrepare, GeneratedAgent};
use crate::protocol::AgentCard;

/// Where an `#[a2a_agent]` block is in the source: the file and line of its attribute.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Echoes.
/// #[a2a_agent]
/// impl Echo {
///     /// Echo the text.
///     #[skill]
///     async fn echo(&self, Text(t): Text) -> String { t }
/// }
/// # struct Echo;
///
/// let at = a2a_kit::registry::agent::<Echo>().unwrap().location();
/// assert!(at.line() > 0);
/// assert_eq!(at.to_string(), format!("{}:{}", at.file(), at.line()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceLocation {
    file: &'static str,
    line: u32,
    module_path: &'static str,
}

impl SourceLocation {
    /// For generated code: `file!()`, `line!()`, `module_path!()`.
    #[doc(hidden)]
    pub const fn new(file: &'static str, line: u32, module_path: &'static str) -> Self {
        SourceLocation {
            file,
            line,
            module_path,
        }
    }

    /// The source file, as `file!()` gives it (relative to the workspace or package root).
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let at = a2a_kit::registry::agent::<Echo>().unwrap().location();
    /// assert!(at.file().ends_with(".rs"));
    /// ```
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The line of the block's `#[a2a_agent]` attribute.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// /// Echoes.
    /// #[a2a_agent]
    /// impl Echo {
    ///     /// Echo the text.
    ///     #[skill]
    ///     async fn echo(&self, Text(t): Text) -> String { t }
    /// }
    /// # struct Echo;
    /// assert!(a2a_kit::registry::agent::<Echo>().unwrap().location().line() > 0);
    /// ```
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The module holding the block, as `module_path!()` gives it.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// mod agents {
    ///     # use a2a_kit::prelude::*;
    ///     pub struct Echo;
    ///     /// Echoes.
    ///     #[a2a_agent]
    ///     impl Echo {
    ///         /// Echo the text.
    ///         #[skill]
    ///         async fn echo(&self, Text(t): Text) -> String { t }
    ///     }
    /// }
    /// let at = a2a_kit::registry::agent::<agents::Echo>().unwrap().location();
    /// assert!(at.module_path().ends_with("::agents"));
    /// ```
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One impl block of an agent: its main `#[a2a_agent]` block or an `#[a2a_agent(extend)]` one.
///
/// Displays as ``#[a2a_agent]` at src/agent.rs:12`` or ``#[a2a_agent(extend)]` at
/// src/hotels.rs:5``.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Echoes.
/// #[a2a_agent]
/// impl Echo {
///     /// Echo the text.
///     #[skill]
///     async fn echo(&self, Text(t): Text) -> String { t }
/// }
///
/// #[a2a_agent(extend)]
/// impl Echo {
///     /// Shout the text.
///     #[skill]
///     async fn shout(&self, Text(t): Text) -> String { t.to_uppercase() }
/// }
/// # struct Echo;
///
/// let blocks: Vec<_> = a2a_kit::registry::agent::<Echo>().unwrap().blocks().collect();
/// assert_eq!(blocks.len(), 2);
/// assert!(!blocks[0].is_extension());
/// assert!(blocks[1].is_extension());
/// assert!(blocks[1].to_string().starts_with("`#[a2a_agent(extend)]` at "));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImplBlock {
    location: &'static SourceLocation,
    extension: bool,
}

impl ImplBlock {
    /// Where the block is.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let agent = a2a_kit::registry::agent::<Echo>().unwrap();
    /// let main = agent.blocks().next().unwrap();
    /// assert_eq!(main.location(), agent.location());
    /// ```
    pub fn location(&self) -> SourceLocation {
        *self.location
    }

    /// Whether this is an `#[a2a_agent(extend)]` block (else the main `#[a2a_agent]` one).
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let agent = a2a_kit::registry::agent::<Echo>().unwrap();
    /// assert!(!agent.blocks().next().unwrap().is_extension());
    /// ```
    pub fn is_extension(&self) -> bool {
        self.extension
    }
}

impl fmt::Display for ImplBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attr = if self.extension {
            "#[a2a_agent(extend)]"
        } else {
            "#[a2a_agent]"
        };
        write!(f, "`{attr}` at {}", self.location)
    }
}

/// Why an agent's impl blocks do not make one agent. See the [module docs](self) for when it
/// is reported.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
/// use a2a_kit::registry::RegistryError;
///
/// /// Greets, twice over.
/// #[a2a_agent]
/// impl Greeter {
///     /// Greet.
///     #[skill]
///     async fn greet(&self) -> String { "hello".into() }
/// }
///
/// #[a2a_agent(extend)]
/// impl Greeter {
///     /// Greet, again.
///     #[skill(id = "greet")]
///     async fn greet_again(&self) -> String { "hello again".into() }
/// }
/// # struct Greeter;
///
/// let err = a2a_kit::registry::agent::<Greeter>().unwrap().try_info().unwrap_err();
/// assert!(matches!(err, RegistryError::DuplicateSkillId { id: "greet", .. }));
/// assert!(err.to_string().contains("skill id `greet` is declared twice"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two blocks of one agent declare a skill with the same id.
    #[error(
        "agent `{agent}`: skill id `{id}` is declared twice, by {first} and by {second}; \
         give one of them a distinct `#[skill(id = \"...\")]`"
    )]
    DuplicateSkillId {
        /// The agent's Rust type name.
        agent: &'static str,
        /// The skill id.
        id: &'static str,
        /// The block declaring it first (in merge order).
        first: ImplBlock,
        /// The block declaring it again.
        second: ImplBlock,
    },
    /// Two blocks of one agent each mark a skill `#[skill(default)]`.
    #[error(
        "agent `{agent}`: two default skills, `{first_id}` ({first}) and `{second_id}` \
         ({second}); at most one skill of an agent can be `#[skill(default)]`"
    )]
    TwoDefaultSkills {
        /// The agent's Rust type name.
        agent: &'static str,
        /// The first default skill's id (in merge order).
        first_id: &'static str,
        /// Its block.
        first: ImplBlock,
        /// The other default skill's id.
        second_id: &'static str,
        /// Its block.
        second: ImplBlock,
    },
    /// The agent has no skill in any block.
    #[error(
        "agent `{agent}` ({block}) has no skills: mark at least one method `#[skill]` in that \
         block or in an `#[a2a_agent(extend)]` block of the same type"
    )]
    NoSkills {
        /// The agent's Rust type name.
        agent: &'static str,
        /// Its main block.
        block: ImplBlock,
    },
}

/// What a main `#[a2a_agent]` block registers. Built by generated code only.
#[doc(hidden)]
pub struct AgentEntry {
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
    base_info: fn() -> &'static AgentInfo,
    location: SourceLocation,
}

impl AgentEntry {
    /// The entry of agent type `T`, declared at `location`.
    pub const fn new<T: GeneratedAgent>(location: SourceLocation) -> Self {
        AgentEntry {
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
            base_info: T::base_info,
            location,
        }
    }
}

/// What an `#[a2a_agent(extend)]` block registers. Built by generated code only.
#[doc(hidden)]
pub struct SkillBlock {
    type_id: fn() -> TypeId,
    skills: &'static [SkillInfo],
    prepare: ExtensionPrepare,
    location: SourceLocation,
}

impl SkillBlock {
    /// The skills `skills` of agent type `T`, dispatched by `prepare`, declared at `location`.
    pub const fn new<T: GeneratedAgent>(
        skills: &'static [SkillInfo],
        prepare: ExtensionPrepare,
        location: SourceLocation,
    ) -> Self {
        SkillBlock {
            type_id: TypeId::of::<T>,
            skills,
            prepare,
            location,
        }
    }

    fn block(&'static self) -> ImplBlock {
        ImplBlock {
            location: &self.location,
            extension: true,
        }
    }
}

inventory::collect!(AgentEntry);
inventory::collect!(SkillBlock);

/// One agent of the binary, declared with `#[a2a_agent]`, as listed by [`agents()`].
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Echoes.
/// #[a2a_agent(name = "Echo Agent")]
/// impl Echo {
///     /// Echo the text.
///     #[skill]
///     async fn echo(&self, Text(t): Text) -> String { t }
/// }
/// # struct Echo;
///
/// let echo = a2a_kit::registry::agent::<Echo>().unwrap();
/// assert_eq!(echo.name(), "Echo Agent");
/// assert!(echo.type_name().ends_with("::Echo"));
/// assert_eq!(echo.card("http://127.0.0.1:3000").skills[0].id, "echo");
/// ```
pub struct RegisteredAgent {
    type_id: TypeId,
    type_name: &'static str,
    base: &'static AgentInfo,
    location: &'static SourceLocation,
    extensions: Vec<ImplBlock>,
    info: Result<&'static AgentInfo, RegistryError>,
    /// Extension skills by id: the block's dispatch.
    routes: HashMap<&'static str, ExtensionPrepare>,
}

impl RegisteredAgent {
    /// The card `name`.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// /// Echoes.
    /// #[a2a_agent(name = "Echo Agent")]
    /// impl Echo {
    ///     /// Echo the text.
    ///     #[skill]
    ///     async fn echo(&self, Text(t): Text) -> String { t }
    /// }
    /// # struct Echo;
    /// assert_eq!(a2a_kit::registry::agent::<Echo>().unwrap().name(), "Echo Agent");
    /// ```
    pub fn name(&self) -> &'static str {
        self.base.name
    }

    /// The Rust type's full path (`std::any::type_name`), e.g. `my_crate::agents::Travel`.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let echo = a2a_kit::registry::agent::<Echo>().unwrap();
    /// assert_eq!(echo.type_name(), std::any::type_name::<Echo>());
    /// ```
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The Rust type's `TypeId`.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let echo = a2a_kit::registry::agent::<Echo>().unwrap();
    /// assert_eq!(echo.type_id(), std::any::TypeId::of::<Echo>());
    /// ```
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// Where the main `#[a2a_agent]` block is.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// /// Echoes.
    /// #[a2a_agent]
    /// impl Echo {
    ///     /// Echo the text.
    ///     #[skill]
    ///     async fn echo(&self, Text(t): Text) -> String { t }
    /// }
    /// # struct Echo;
    /// let at = a2a_kit::registry::agent::<Echo>().unwrap().location();
    /// assert!(at.file().ends_with(".rs"));
    /// ```
    pub fn location(&self) -> SourceLocation {
        *self.location
    }

    /// The agent's impl blocks: the main one, then the `#[a2a_agent(extend)]` ones in merge
    /// order (source file path, then line).
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let echo = a2a_kit::registry::agent::<Echo>().unwrap();
    /// assert_eq!(echo.blocks().count(), 1);
    /// ```
    pub fn blocks(&self) -> impl Iterator<Item = ImplBlock> + '_ {
        std::iter::once(ImplBlock {
            location: self.location,
            extension: false,
        })
        .chain(self.extensions.iter().copied())
    }

    /// The agent's description with the skills of all its blocks, or why its blocks conflict.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let info = a2a_kit::registry::agent::<Echo>().unwrap().try_info().unwrap();
    /// assert!(std::ptr::eq(info, Echo::agent_info()));
    /// ```
    pub fn try_info(&self) -> Result<&'static AgentInfo, RegistryError> {
        self.info
    }

    /// [`try_info`](Self::try_info), panicking with the [`RegistryError`]'s message on a
    /// conflict; the agent's own `agent_info()` is this.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let info = a2a_kit::registry::agent::<Echo>().unwrap().info();
    /// assert_eq!(info.skills.len(), 1);
    /// ```
    #[track_caller]
    pub fn info(&self) -> &'static AgentInfo {
        match self.info {
            Ok(info) => info,
            Err(e) => panic!("{e}"),
        }
    }

    /// The agent card served at `base_url`: what the agent's `agent_card(base_url)` returns,
    /// or why its blocks conflict.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// let echo = a2a_kit::registry::agent::<Echo>().unwrap();
    /// let card = echo.try_card("https://agents.example.com/echo").unwrap();
    /// assert_eq!(card, Echo::agent_card("https://agents.example.com/echo"));
    /// ```
    pub fn try_card(&self, base_url: &str) -> Result<AgentCard, RegistryError> {
        self.info.map(|info| info.card(base_url))
    }

    /// [`try_card`](Self::try_card), panicking with the [`RegistryError`]'s message on a
    /// conflict.
    ///
    /// ```rust,standalone_crate
    /// # use a2a_kit::prelude::*;
    /// # /// Echoes.
    /// # #[a2a_agent]
    /// # impl Echo {
    /// #     /// Echo the text.
    /// #     #[skill]
    /// #     async fn echo(&self, Text(t): Text) -> String { t }
    /// # }
    /// # struct Echo;
    /// for agent in a2a_kit::registry::agents() {
    ///     let card = agent.card("http://127.0.0.1:3000");
    ///     println!("{}", serde_json::to_string(&card).unwrap());
    /// }
    /// ```
    #[track_caller]
    pub fn card(&self, base_url: &str) -> AgentCard {
        self.info().card(base_url)
    }
}

impl fmt::Debug for RegisteredAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredAgent")
            .field("name", &self.base.name)
            .field("type_name", &self.type_name)
            .field("location", &self.location)
            .field("extensions", &self.extensions)
            .field(
                "skills",
                &self
                    .info
                    .map(|i| i.skills.iter().map(|s| s.id).collect::<Vec<_>>()),
            )
            .finish()
    }
}

/// Every agent declared with `#[a2a_agent]` in the binary (its crate and its dependencies),
/// ordered by card name, then type name.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Says hello.
/// #[a2a_agent(name = "Hello")]
/// impl Hello {
///     /// Greet.
///     #[skill]
///     async fn greet(&self, Text(name): Text) -> String { format!("Hello, {name}!") }
/// }
///
/// /// Says goodbye.
/// #[a2a_agent(name = "Bye")]
/// impl Bye {
///     /// Part.
///     #[skill]
///     async fn part(&self) -> String { "Goodbye!".into() }
/// }
/// # struct Hello;
/// # struct Bye;
///
/// let names: Vec<&str> = a2a_kit::registry::agents().map(|a| a.name()).collect();
/// assert_eq!(names, ["Bye", "Hello"]);
/// ```
pub fn agents() -> impl ExactSizeIterator<Item = &'static RegisteredAgent> {
    table().agents.iter()
}

/// The registered agent of type `T`, if `T` was declared with `#[a2a_agent]`.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Echoes.
/// #[a2a_agent]
/// impl Echo {
///     /// Echo the text.
///     #[skill]
///     async fn echo(&self, Text(t): Text) -> String { t }
/// }
/// # struct Echo;
///
/// assert_eq!(a2a_kit::registry::agent::<Echo>().unwrap().name(), "Echo");
/// ```
pub fn agent<T: Agent>() -> Option<&'static RegisteredAgent> {
    let t = table();
    t.by_type.get(&TypeId::of::<T>()).map(|&i| &t.agents[i])
}

/// Every agent's conflict, if any, without panicking: call it at start-up or in a test to
/// fail with all the problems at once.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Echoes.
/// #[a2a_agent]
/// impl Echo {
///     /// Echo the text.
///     #[skill]
///     async fn echo(&self, Text(t): Text) -> String { t }
/// }
/// # struct Echo;
///
/// a2a_kit::registry::check().expect("the agents' impl blocks agree");
/// ```
pub fn check() -> Result<(), Vec<RegistryError>> {
    let errors: Vec<RegistryError> = agents().filter_map(|a| a.info.err()).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The dispatch of `T`'s extension skill `id`, if an `#[a2a_agent(extend)]` block has it.
pub(crate) fn extension_skill<T: Agent>(id: &str) -> Option<ExtensionPrepare> {
    agent::<T>()?.routes.get(id).copied()
}

/// The collected registrations.
struct Table {
    agents: Vec<RegisteredAgent>,
    by_type: HashMap<TypeId, usize>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(collect)
}

fn collect() -> Table {
    let mut blocks: HashMap<TypeId, Vec<&'static SkillBlock>> = HashMap::new();
    for block in inventory::iter::<SkillBlock> {
        blocks.entry((block.type_id)()).or_default().push(block);
    }
    let mut agents: Vec<RegisteredAgent> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in inventory::iter::<AgentEntry> {
        let type_id = (entry.type_id)();
        // One `impl Agent` per type makes this impossible; a platform running constructors
        // twice must not list an agent twice.
        if seen.insert(type_id) {
            agents.push(resolve(
                entry,
                type_id,
                blocks.remove(&type_id).unwrap_or_default(),
            ));
        }
    }
    agents.sort_by(|a, b| {
        (a.name(), a.type_name, a.location).cmp(&(b.name(), b.type_name, b.location))
    });
    let by_type = agents
        .iter()
        .enumerate()
        .map(|(i, a)| (a.type_id, i))
        .collect();
    Table { agents, by_type }
}

/// Merge an agent's main block with its extension blocks.
fn resolve(
    entry: &'static AgentEntry,
    type_id: TypeId,
    mut blocks: Vec<&'static SkillBlock>,
) -> RegisteredAgent {
    // Blocks a `macro_rules!` expands share its invocation's location: their first skill ids
    // (unique unless they clash) keep the order deterministic.
    blocks.sort_by_key(|b| (b.location, b.skills.first().map(|s| s.id)));
    let base = (entry.base_info)();
    let agent = (entry.type_name)();
    let main = ImplBlock {
        location: &entry.location,
        extension: false,
    };
    let mut routes = HashMap::new();
    let info = if blocks.is_empty() {
        Ok(base)
    } else {
        let mut skills: Vec<(SkillInfo, ImplBlock)> =
            base.skills.iter().map(|s| (*s, main)).collect();
        let mut error = None;
        'blocks: for block in &blocks {
            for skill in block.skills {
                let here = block.block();
                if let Some((_, first)) = skills.iter().find(|(s, _)| s.id == skill.id) {
                    error = Some(RegistryError::DuplicateSkillId {
                        agent,
                        id: skill.id,
                        first: *first,
                        second: here,
                    });
                    break 'blocks;
                }
                if skill.default {
                    if let Some((d, first)) = skills.iter().find(|(s, _)| s.default) {
                        error = Some(RegistryError::TwoDefaultSkills {
                            agent,
                            first_id: d.id,
                            first: *first,
                            second_id: skill.id,
                            second: here,
                        });
                        break 'blocks;
                    }
                }
                skills.push((*skill, here));
                routes.insert(skill.id, block.prepare);
            }
        }
        match error {
            Some(e) => Err(e),
            None => {
                let skills: Vec<SkillInfo> = skills.into_iter().map(|(s, _)| s).collect();
                let merged = AgentInfo {
                    skills: Box::leak(skills.into_boxed_slice()),
                    ..*base
                };
                Ok(&*Box::leak(Box::new(merged)))
            }
        }
    };
    let info = match info {
        Ok(i) if i.skills.is_empty() => Err(RegistryError::NoSkills { agent, block: main }),
        other => other,
    };
    RegisteredAgent {
        type_id,
        type_name: agent,
        base,
        location: &entry.location,
        extensions: blocks.iter().map(|b| b.block()).collect(),
        info,
        routes,
    }
}
