//! a2a-kit's `inventory` feature: the registry of every agent of the binary, each with its
//! name, type, source location and card.
//!
//! Needs the feature, so it is not part of a plain `cargo test --workspace` (which keeps every
//! other test on the default, inventory-free path):
//! `cargo test -p a2a-tests --features inventory --test agent_registry`.

use a2a_kit::prelude::*;
use a2a_kit::registry;
use a2a_kit::server::AgentService;
use a2a_tests::*;

#[derive(Default)]
pub struct Travel;

const TRAVEL_LINE: u32 = line!() + 2;
/// Books trips.
#[a2a_agent(name = "Registry Travel", version = "2.0.0")]
impl Travel {
    /// Book a flight to the city given as text.
    #[skill(default, tags = ["flight"])]
    async fn flight(&self, Text(to): Text) -> String {
        format!("flight to {}", to.trim())
    }
}

mod hotels {
    use a2a_kit::prelude::*;

    use super::Travel;

    #[a2a_agent(skill_set = hotels)]
    impl Travel {
        /// Reserve a hotel.
        #[skill(id = "book-hotel")]
        async fn hotel(&self, Text(city): Text) -> String {
            format!("hotel in {city}")
        }
    }
}

pub struct Other;

/// Another agent of the binary.
#[a2a_agent(name = "Registry Other")]
impl Other {
    /// Greet.
    #[skill]
    async fn greet(&self) -> String {
        "hello".into()
    }
}

#[test]
fn registry_lists_every_agent() {
    let url = "http://127.0.0.1:3000";
    // Agents of linked crates are listed too.
    let hello_card = a2a_examples::hello::HelloAgent::agent_card(url);

    let all: Vec<&registry::RegisteredAgent> = registry::agents().collect();
    let keys: Vec<(&str, &str)> = all.iter().map(|a| (a.name(), a.type_name())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "ordered by name, then type name");
    for (name, ty) in [
        ("Registry Travel", "agent_registry::Travel"),
        ("Registry Other", "agent_registry::Other"),
        ("Hello Agent", "a2a_examples::hello::HelloAgent"),
    ] {
        assert_eq!(
            keys.iter().filter(|k| **k == (name, ty)).count(),
            1,
            "{name} ({ty}) listed once in {keys:?}"
        );
    }
    // A hand-written `impl Agent` is not listed.
    assert!(registry::agent::<TestAgent>().is_none());

    let hello = all.iter().find(|a| a.name() == "Hello Agent").unwrap();
    assert_eq!(hello.card(url), hello_card);
    assert!(hello.location().file().ends_with("hello.rs"));
    assert!(hello.location().module_path().ends_with("::hello"));

    let travel = registry::agent::<Travel>().expect("Travel is registered");
    assert_eq!(travel.type_id(), std::any::TypeId::of::<Travel>());
    assert_eq!(travel.card(url), Travel::agent_card(url));
    assert!(std::ptr::eq(travel.info(), Travel::agent_info()));
    assert_eq!(travel.location().file(), file!());
    assert_eq!(travel.location().line(), TRAVEL_LINE);
    assert_eq!(
        travel.location().to_string(),
        format!("{}:{TRAVEL_LINE}", file!())
    );
    // A listed card is the agent's own block; a skill set is in the card of a service built
    // with it.
    let ids = |card: &a2a_kit::protocol::AgentCard| -> Vec<String> {
        card.skills.iter().map(|s| s.id.clone()).collect()
    };
    assert_eq!(ids(&travel.card(url)), ["flight"]);
    let service = AgentService::builder_with(Travel, Travel::hotels())
        .build()
        .unwrap();
    assert_eq!(ids(service.card()), ["flight", "book-hotel"]);
}
