//! Procedural macros of [a2a-kit](https://docs.rs/a2a-kit): [`macro@a2a_agent`],
//! [`macro@skill`] and [`macro@streaming`].
//!
//! Use them through `a2a_kit` (`use a2a_kit::prelude::*;`), never from this crate directly:
//! the generated code refers to `::a2a_kit::__private`. The runtime side (extractors, return
//! types, `TaskContext`, the service) is documented in `a2a_kit`.
//!
//! The examples here are marked `ignore` because a proc-macro crate cannot depend on
//! `a2a_kit`; the same code is compiled by `tests/macros_docs.rs` (the `skill_set` one
//! by the doctests of `a2a_kit::skill`'s skill sets).
//!
//! # Errors
//!
//! Mistakes are reported at the offending token, all at once, and the impl block is still
//! emitted (with the kit's attributes removed) so that one mistake gives one error:
//! unknown or duplicate keys (with the list of valid keys), duplicate skill ids, two default
//! skills, a missing description, a skill that is not `async` (or a `#[streaming]` one that
//! is), generic skills, a receiver other than `&self`, an argument that is not an extractor
//! (at the argument's type), a return type that is not a skill result or not a `Stream`
//! (at the return type), a future that is not `Send` (at the skill's name), and `#[skill]` or
//! `#[streaming]` outside an `#[a2a_agent]` impl block; for `#[a2a_agent(skill_set = ..)]`
//! blocks, card keys next to `skill_set`, a name that is not an identifier, and a type without
//! an `#[a2a_agent]` block (at the type); the old `extend` key, with what replaced it.

#![forbid(unsafe_code)]

mod agent;
mod args;
mod skill;

use proc_macro::TokenStream;
use quote::quote;
use syn::Item;

/// Turns an inherent impl block into an A2A agent: its `#[skill]` methods become the agent's
/// skills.
///
/// ```ignore
/// use a2a_kit::prelude::*;
///
/// #[derive(Clone, Default)]
/// struct HelloAgent;
///
/// /// A friendly agent that greets people.
/// #[a2a_agent(name = "Hello Agent", provider(organization = "Example", url = "https://example.com"))]
/// impl HelloAgent {
///     /// Greet the user by name.
///     #[skill(tags = ["greeting"], examples = ["Alice"])]
///     async fn greet(&self, Text(name): Text) -> String {
///         format!("Hello, {name}!")
///     }
/// }
///
/// let card = HelloAgent::agent_card("http://127.0.0.1:3000");
/// assert_eq!(card.name, "Hello Agent");
/// assert_eq!(card.description, "A friendly agent that greets people.");
/// assert_eq!(card.skills[0].id, "greet");
/// ```
///
/// # Keys (all optional)
///
/// | key | card field | default |
/// |---|---|---|
/// | `name = "..."` | `name` | the type's name (`HelloAgent`) |
/// | `description = "..."` | `description` | the impl block's `///` doc comment; one of the two is required |
/// | `version = "..."` | `version` | `env!("CARGO_PKG_VERSION")` of your crate |
/// | `provider(organization = "...", url = "...")` | `provider` | none |
/// | `documentation_url = "..."` | `documentationUrl` | none |
/// | `icon_url = "..."` | `iconUrl` | none |
/// | `input_modes = ["..."]` | `defaultInputModes` | `["text/plain", "application/json"]` |
/// | `output_modes = ["..."]` | `defaultOutputModes` | `["text/plain", "application/json"]` |
/// | `streaming = bool` | `capabilities.streaming` | `true` |
/// | `push_notifications = bool` | `capabilities.pushNotifications` | `false` |
/// | `skill_set = name` | see [below](#skills-in-several-impl-blocks): this block is a set of skills, `Type::name()` | off |
///
/// String values are literals or macro calls producing a `&'static str` (`env!`, `concat!`,
/// `include_str!`).
///
/// # What it generates
///
/// - the impl block, unchanged except that `#[skill]` and `#[streaming]` are removed;
/// - `pub fn agent_info() -> &'static AgentInfo` (a `static`: card fields and one
///   `SkillInfo` per skill, in declaration order) and `pub fn agent_card(base_url: &str) ->
///   AgentCard`;
/// - `impl a2a_kit::skill::Agent`: `prepare` extracts every argument of the chosen skill, in
///   order, before any task exists (a failure is InvalidParams naming the skill and the field),
///   then returns the skill's future, which owns an `Arc` of the agent;
/// - a hidden trait impl holding that `static`, and, with a2a-kit's `inventory` feature only,
///   the agent's entry in `a2a_kit::registry` (every agent of the binary, with its card).
///   Without the feature nothing is registered.
///
/// The agent is a value shared between tasks: skills take `&self`, and the type must be
/// `Send + Sync + 'static`. Other methods of the impl block are left alone.
///
/// Generic impl blocks and trait impls are not supported.
///
/// # Skills in several impl blocks
///
/// Further inherent impl blocks of the same type, marked `#[a2a_agent(skill_set = name)]`, are
/// sets of skills (in any module of the crate): each generates `pub fn name() ->
/// SkillSet<Self>`, a value the service is built with, and sets compose with `+`. A skill set
/// takes no other key; the `#[a2a_agent]` block keeps the card fields.
///
/// ```ignore
/// use a2a_kit::prelude::*;
/// use a2a_kit::server::AgentService;
///
/// struct Travel;
///
/// /// Books trips.
/// #[a2a_agent(name = "Travel")]
/// impl Travel {
///     /// Book a flight.
///     #[skill(default)]
///     async fn flight(&self, Text(to): Text) -> String { format!("flight to {to}") }
/// }
///
/// #[a2a_agent(skill_set = hotels)]
/// impl Travel {
///     /// Book a hotel.
///     #[skill]
///     async fn hotel(&self, Text(city): Text) -> String { format!("hotel in {city}") }
/// }
///
/// let service = AgentService::builder_with(Travel, Travel::hotels()).build()?;
/// let ids: Vec<_> = service.card().skills.iter().map(|s| s.id.as_str()).collect();
/// assert_eq!(ids, ["flight", "hotel"]);
/// ```
///
/// Each block checks its own skills at compile time (duplicate ids, two defaults). Conflicts
/// *between* blocks are an error from `AgentServiceBuilder::build`, naming both blocks; nothing
/// panics at run time.
#[proc_macro_attribute]
pub fn a2a_agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent::expand(attr.into(), item.into()).into()
}

/// Marks a method of an [`macro@a2a_agent`] impl block as a skill.
///
/// ```ignore
/// use a2a_kit::prelude::*;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct BookFlight { from: String, to: String }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Booking { reference: String }
///
/// struct TravelAgent;
///
/// /// Books trips.
/// #[a2a_agent]
/// impl TravelAgent {
///     /// Book a flight.
///     #[skill(id = "book-flight", tags = ["travel"], default)]
///     async fn book(&self, Data(req): Data<BookFlight>) -> Result<Data<Booking>, SkillError> {
///         Ok(Data(Booking { reference: format!("{}-{}", req.from, req.to) }))
///     }
///
///     /// Plan a trip, reporting progress.
///     #[skill]
///     async fn plan_trip(&self, ctx: TaskContext, Text(goal): Text) -> Result<String, SkillError> {
///         ctx.status("Planning").await?;
///         Ok(format!("Plan for {goal}"))
///     }
/// }
///
/// let info = TravelAgent::agent_info();
/// assert_eq!(info.skills[0].id, "book-flight");
/// assert_eq!(info.skills[1].id, "plan_trip");
/// assert_eq!(info.skills[1].name, "Plan trip");
/// ```
///
/// # Keys (all optional)
///
/// | key | meaning | default |
/// |---|---|---|
/// | `id = "..."` | skill id (unique within the agent) | the method name **as written** (`plan_trip`) |
/// | `name = "..."` | human-readable name | the method name in sentence case (`Plan trip`) |
/// | `description = "..."` | what it does | the method's `///` doc comment; one of the two is required |
/// | `tags = ["..."]` | keywords | none |
/// | `examples = ["..."]` | example prompts | none |
/// | `input_modes = ["..."]` | accepted media types | the agent's |
/// | `output_modes = ["..."]` | produced media types | the agent's |
/// | `default` | route messages that name no skill here (at most one per agent) | off |
/// | `message` | answer with a direct Message holding the result, no task (see below) | off: a task |
/// | `scopes = ["..."]` | scopes a caller must all hold (checked before a task exists: 403 otherwise; listed in the card as the skill's `securityRequirements`; needs an authenticator) | none |
/// | `extended_only` | list the skill on the authenticated extended card only | off |
///
/// The id is the method name unchanged (not kebab-cased) so that it is what you grep for and
/// what clients put in `metadata.skillId`; set `id` for another spelling.
///
/// # A Message or a task
///
/// A skill answers with a task by default: it is stored, listed, can be fetched, canceled,
/// streamed and subscribed to, and its result is the task's artifact. Work worth tracking
/// wants one (it takes time, asks questions, streams, or a client may come back for it).
/// `#[skill(message)]` answers with a direct Message instead, whatever the skill returns
/// (its content becomes the Message's parts): nothing is stored, which suits a stateless
/// answer such as a greeting or a lookup. The word is the spec's: a SendMessage answers with
/// a `message` or a `task`.
///
/// ```ignore
/// use a2a_kit::prelude::*;
///
/// struct Greeter;
///
/// /// Greets.
/// #[a2a_agent]
/// impl Greeter {
///     /// Greet the user by name.
///     #[skill(message)]
///     async fn greet(&self, Text(name): Text) -> String {
///         format!("Hello, {name}!")
///     }
/// }
///
/// assert!(Greeter::agent_info().skills[0].direct_message);
/// ```
///
/// A message skill's `TaskContext` has no task behind it: `status` does nothing, and an
/// artifact or a question (`ask`, `require_auth`, an `INPUT_REQUIRED` outcome) fails the
/// skill with an error saying so (recorded as a FAILED task, so the failure can be read), as
/// does an answer with no content. It cannot be `#[streaming]` (a compile error), and it
/// cannot return `()`. The card lists such skills under the extension
/// `a2a_kit::skill::MESSAGE_REPLY_EXTENSION` (`AgentSkill` has no field for it). Returning
/// `Message` does the same without the key.
///
/// # Signature
///
/// `async fn name(&self, arg: Extractor, ...) -> R`:
/// - every argument implements `a2a_kit::skill::FromSkillRequest` (`Text`, `Data<T>`,
///   `File`, `Files`, `Parts`, `Message`, `Metadata<T>`, `History`, `TaskContext`,
///   `Option<E>`, or your own); patterns such as `Text(name): Text` are fine. The first
///   `Data<T>` argument's JSON Schema is published in the card;
/// - `R` implements `a2a_kit::skill::IntoOutcome` (`String`, `Data<T>`, `Message` for a
///   direct reply without a task, `Outcome`, `Result<T, E>`, ...) and must be a named type
///   (`impl Stream` is the return of a [`macro@streaming`] skill);
/// - the future must be `Send` (it runs on a spawned task);
/// - no generics.
///
/// A method returning a `Stream` is a skill when also marked [`macro@streaming`].
///
/// Outside an `#[a2a_agent]` impl block this attribute is an error.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    misplaced("skill", item.into()).into()
}

/// Marks a `#[skill]` whose result is a stream: each item is one chunk of the task's artifact,
/// sent as soon as it is produced (same `artifactId`, `append` after the first, `lastChunk` on
/// the last), then the task completes. A plain SendMessage gets the assembled artifact.
///
/// ```ignore
/// use a2a_kit::prelude::*;
///
/// struct Counter;
///
/// /// Counts.
/// #[a2a_agent]
/// impl Counter {
///     /// Count to N.
///     #[skill]
///     #[streaming]
///     fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
///         let n: u32 = n.trim().parse().unwrap_or(5);
///         a2a_kit::stream! { for i in 1..=n { yield format!("{i}\n"); } }
///     }
/// }
///
/// assert!(Counter::agent_info().skills[0].streaming);
/// ```
///
/// The method is a plain `fn` (not `async`) taking `&self` and extractors, returning any
/// `Stream + Send` whose items implement `a2a_kit::skill::IntoParts` (`String`, `Data<T>`,
/// `Part`, `Result<T, E>` where `Err` fails the task, ...). Build one with
/// `a2a_kit::stream!` (`yield` each item), or return any stream type. Items written as
/// `String` or `&str` (or a `Result` of them) give the skill's card `outputModes`
/// `text/plain`, `Data<T>` `application/json`. The order of `#[skill]` and `#[streaming]`
/// does not matter. Takes no arguments.
///
/// Outside an `#[a2a_agent]` impl block this attribute is an error.
#[proc_macro_attribute]
pub fn streaming(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    misplaced("streaming", item.into()).into()
}

/// `#[skill]` / `#[streaming]` running on their own: they were not consumed by `#[a2a_agent]`.
/// Report it at the attribute and emit the item without the kit's attributes (so the other
/// one does not report the same mistake again).
fn misplaced(name: &str, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let msg = format!(
        "`#[{name}]` only works on a method inside an `#[a2a_agent]` impl block: put `#[a2a_agent]` \
         on the `impl` block that holds this method"
    );
    let err = syn::Error::new(proc_macro2::Span::call_site(), msg).to_compile_error();
    let item = match syn::parse2::<Item>(item.clone()) {
        Ok(mut parsed) => {
            strip_kit_attrs(&mut parsed);
            quote!(#parsed)
        }
        // A method outside of its impl block does not parse as an item: emit it as is.
        Err(_) => match syn::parse2::<syn::ImplItemFn>(item.clone()) {
            Ok(mut f) => {
                f.attrs
                    .retain(|a| !skill::is_skill_attr(a) && !skill::is_streaming_attr(a));
                quote!(#f)
            }
            Err(_) => item,
        },
    };
    quote!(#err #item)
}

fn strip_kit_attrs(item: &mut Item) {
    let keep = |a: &syn::Attribute| !skill::is_skill_attr(a) && !skill::is_streaming_attr(a);
    match item {
        Item::Fn(f) => f.attrs.retain(keep),
        Item::Impl(i) => {
            i.attrs.retain(keep);
        }
        _ => {}
    }
}
