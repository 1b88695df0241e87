//! Every agent of the binary (cargo feature `inventory`).
//!
//! Off by default. With `features = ["inventory"]` on the `a2a-kit` dependency, each
//! `#[a2a_agent]` impl block registers its agent through the
//! [`inventory`](https://docs.rs/inventory) crate (link-time registration, no central list),
//! and [`agents()`] lists them all, each with its name, Rust type name, source location and
//! card for any base URL: a binary can print every card it serves, or a test can check them.
//!
//! ```rust,standalone_crate
//! use a2a_kit::prelude::*;
//!
//! /// Books trips.
//! #[a2a_agent(name = "Travel")]
//! impl Travel {
//!     /// Book a flight.
//!     #[skill]
//!     async fn flight(&self, Text(to): Text) -> String {
//!         format!("flight to {to}")
//!     }
//! }
//! # struct Travel;
//!
//! for agent in a2a_kit::registry::agents() {
//!     println!("{} ({}): {}", agent.name(), agent.type_name(), agent.location());
//! }
//! let listed = a2a_kit::registry::agent::<Travel>().expect("registered");
//! assert_eq!(listed.card("http://127.0.0.1:3000").skills[0].id, "flight");
//! ```
//!
//! A listed card holds the skills of the agent's `#[a2a_agent]` block. Skill sets
//! (`#[a2a_agent(skill_set = name)]` blocks) are values the application adds when it builds a
//! service (`AgentServiceBuilder::skills`), so their skills are in the service's card, not here.
//!
//! Nothing runs at start-up beyond `inventory`'s constructors linking static nodes into a list;
//! the first call to [`agents()`] or [`agent()`] collects it once. Without the feature nothing
//! is registered and the `inventory` crate is not a dependency.
//!
//! # Limits
//!
//! - Only agents declared with `#[a2a_agent]` are listed; a hand-written
//!   [`Agent`] implementation is not.
//! - Registration relies on `inventory`'s platform support: Linux, macOS, Windows, the BSDs,
//!   and WebAssembly (which may need `__wasm_call_ctors`, see `inventory`'s documentation).

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use super::agent::{Agent, AgentInfo};
use super::macro_support::GeneratedAgent;
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

    /// The source file, as `file!()` names it (relative to the package's workspace).
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The line of the `#[a2a_agent]` attribute.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The module the block is in, as `module_path!()` names it.
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What an `#[a2a_agent]` block registers. Built by generated code only.
#[doc(hidden)]
pub struct AgentEntry {
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
    info: fn() -> &'static AgentInfo,
    location: SourceLocation,
}

impl AgentEntry {
    /// The entry of agent type `T`, declared at `location`.
    pub const fn new<T: GeneratedAgent>(location: SourceLocation) -> Self {
        AgentEntry {
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
            info: T::base_info,
            location,
        }
    }
}

inventory::collect!(AgentEntry);

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
#[derive(Debug, Clone, Copy)]
pub struct RegisteredAgent {
    type_id: TypeId,
    type_name: &'static str,
    info: &'static AgentInfo,
    location: SourceLocation,
}

impl RegisteredAgent {
    /// The card `name`.
    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// The Rust type's full path (`std::any::type_name`), e.g. `my_crate::agents::Travel`.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The Rust type's id.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// Where its `#[a2a_agent]` block is.
    pub fn location(&self) -> SourceLocation {
        self.location
    }

    /// Its static description: the agent's `agent_info()`.
    pub fn info(&self) -> &'static AgentInfo {
        self.info
    }

    /// Its card served at `base_url`: the agent's `agent_card(base_url)`.
    pub fn card(&self, base_url: &str) -> AgentCard {
        self.info.card(base_url)
    }
}

/// Every agent declared with `#[a2a_agent]` in the binary, ordered by name, then type name.
///
/// ```rust,standalone_crate
/// use a2a_kit::prelude::*;
///
/// /// Greets.
/// #[a2a_agent(name = "Hello")]
/// impl Hello {
///     /// Say hello.
///     #[skill]
///     async fn hello(&self) -> String { "hello".into() }
/// }
/// # struct Hello;
///
/// /// Says goodbye.
/// #[a2a_agent(name = "Bye")]
/// impl Bye {
///     /// Say goodbye.
///     #[skill]
///     async fn bye(&self) -> String { "bye".into() }
/// }
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
    let mut agents: Vec<RegisteredAgent> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in inventory::iter::<AgentEntry> {
        let type_id = (entry.type_id)();
        // One `impl Agent` per type makes this impossible; a platform running constructors
        // twice must not list an agent twice.
        if seen.insert(type_id) {
            agents.push(RegisteredAgent {
                type_id,
                type_name: (entry.type_name)(),
                info: (entry.info)(),
                location: entry.location,
            });
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
