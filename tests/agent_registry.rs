//! a2a-kit's `inventory` feature: skills spread over several impl blocks
//! (`#[a2a_agent(extend)]`), in the card and dispatched over real HTTP, and the registry of
//! every agent of the binary, including the run-time errors for blocks that conflict.
//!
//! Needs the feature, so it is not part of a plain `cargo test --workspace` (which keeps every
//! other test on the default, inventory-free path):
//! `cargo test -p a2a-tests --features inventory --test agent_registry`.

use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_kit::prelude::*;
use a2a_kit::registry::{self, RegistryError};
use a2a_kit_axum::A2a;
use a2a_tests::*;
use serde_json::{Value, json};

// --- An agent over three blocks in three modules ---------------------------------------------

/// State shared by the skills of every block: the agent is one value.
#[derive(Default)]
pub struct Travel {
    calls: AtomicUsize,
}

impl Travel {
    fn count(&self) -> usize {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }
}

const TRAVEL_LINE: u32 = line!() + 2;
/// Books trips: flights here, hotels and excursions in other blocks.
#[a2a_agent(name = "Registry Travel", version = "2.0.0")]
impl Travel {
    /// Book a flight to the city given as text.
    #[skill(default, tags = ["flight"])]
    async fn flight(&self, Text(to): Text) -> String {
        format!("flight to {} (call {})", to.trim(), self.count())
    }
}

mod hotels {
    use a2a_kit::prelude::*;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    use super::Travel;

    /// A stay to reserve.
    #[derive(Deserialize, JsonSchema)]
    pub struct Stay {
        /// Where.
        pub city: String,
        /// How long.
        pub nights: u32,
    }

    /// A reservation.
    #[derive(Serialize, JsonSchema)]
    pub struct Reservation {
        /// Booking reference.
        pub reference: String,
        /// Price.
        pub total_eur: u32,
        /// Calls to the agent so far, all blocks together.
        pub call: usize,
    }

    pub const LINE: u32 = line!() + 1;
    #[a2a_agent(extend)]
    impl Travel {
        /// Reserve a hotel.
        #[skill(id = "book-hotel", tags = ["hotel"], examples = ["{\"city\": \"Lisbon\", \"nights\": 2}"])]
        async fn hotel(&self, Data(stay): Data<Stay>) -> Result<Data<Reservation>, SkillError> {
            if stay.nights == 0 {
                return Err(SkillError::rejected("a stay is at least one night"));
            }
            Ok(Data(Reservation {
                reference: format!("{}-{}", stay.city.to_uppercase(), stay.nights),
                total_eur: self.price(stay.nights),
                call: self.count(),
            }))
        }

        /// Count the nights down, one chunk each.
        #[streaming]
        #[skill]
        fn countdown(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
            let n: u32 = n.trim().parse().unwrap_or(3);
            a2a_kit::stream! { for i in (1..=n).rev() { yield format!("{i} "); } }
        }

        /// Not a skill: a helper of an extension block, left alone.
        fn price(&self, nights: u32) -> u32 {
            nights * 90
        }
    }
}

mod excursions {
    use a2a_kit::prelude::*;
    use a2a_kit::protocol::Role;

    use super::Travel;

    pub const LINE: u32 = line!() + 1;
    #[a2a_agent(extend)]
    impl Travel {
        /// Plan an excursion: asks for a date (stateless), then confirms.
        #[skill]
        async fn excursion(&self, History(history): History) -> Outcome {
            let said: Vec<String> = history
                .iter()
                .filter(|m| m.role == Role::User)
                .map(|m| m.text())
                .collect();
            match said.as_slice() {
                [_] => Outcome::input_required("Which date?"),
                [place, .., date] => {
                    Outcome::completed(format!("{place} on {date} (call {})", self.count()))
                }
                [] => Outcome::failed("no message"),
            }
        }
    }
}

// --- An agent whose skills all live in extension blocks --------------------------------------

#[derive(Default)]
pub struct Split;

/// Card fields only: the skills are in the blocks below.
#[a2a_agent(name = "Registry Split", push_notifications = true)]
impl Split {}

#[a2a_agent(extend)]
impl Split {
    /// Take free text.
    #[skill(default)]
    async fn alpha(&self, Text(t): Text) -> String {
        format!("alpha: {t}")
    }
}

#[a2a_agent(extend)]
impl Split {
    /// Answer directly, without a task.
    #[skill]
    async fn beta(&self) -> Message {
        Message::agent_text("beta, directly")
    }
}

/// Extension blocks written by a `macro_rules!`: one invocation, one source location for all.
macro_rules! greetings {
    ($($method:ident => $id:tt),*) => {$(
        #[a2a_agent(extend)]
        impl Split {
            #[skill(id = $id, description = "Answer with the skill's id.")]
            async fn $method(&self) -> String {
                $id.to_string()
            }
        }
    )*};
}

const GREETINGS_LINE: u32 = line!() + 1;
greetings!(gamma => "gamma", delta => "delta");

// --- Agents whose blocks conflict -------------------------------------------------------------

pub struct Clash;

const CLASH_MAIN: u32 = line!() + 2;
/// Two blocks, one skill id.
#[a2a_agent(name = "Registry Clash")]
impl Clash {
    /// Greet.
    #[skill]
    async fn greet(&self) -> String {
        "hello".into()
    }
}

const CLASH_EXT: u32 = line!() + 1;
#[a2a_agent(extend)]
impl Clash {
    /// Greet again, under the same id.
    #[skill(id = "greet")]
    async fn greet_again(&self) -> String {
        "hello again".into()
    }
}

pub struct Defaults;

/// Two blocks, two default skills.
#[a2a_agent(name = "Registry Defaults")]
impl Defaults {
    /// The first default.
    #[skill(default)]
    async fn first(&self) -> String {
        "first".into()
    }
}

const DEFAULTS_EXT: u32 = line!() + 1;
#[a2a_agent(extend)]
impl Defaults {
    /// Not a default.
    #[skill]
    async fn plain(&self) -> String {
        "plain".into()
    }

    /// The second default.
    #[skill(default)]
    async fn second(&self) -> String {
        "second".into()
    }
}

pub struct Empty;

const EMPTY_MAIN: u32 = line!() + 2;
/// No skills anywhere.
#[a2a_agent(name = "Registry Empty")]
impl Empty {}

// ---------------------------------------------------------------------------------------------

fn skill_ids(card: &AgentCard) -> Vec<&str> {
    card.skills.iter().map(|s| s.id.as_str()).collect()
}

fn message(skill: Option<&str>, part: Value) -> Value {
    let mut m = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [part]});
    if let Some(skill) = skill {
        m["metadata"] = json!({"skillId": skill});
    }
    m
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a string panic")
}

#[test]
fn extension_skills_are_in_the_card() {
    let card = Travel::agent_card("http://127.0.0.1:3000/");
    // The main block first, then the extension blocks by source position.
    assert_eq!(
        skill_ids(&card),
        ["flight", "book-hotel", "countdown", "excursion"]
    );
    assert_eq!(card.name, "Registry Travel");
    assert_eq!(card.version, "2.0.0");
    assert_eq!(
        card.description,
        "Books trips: flights here, hotels and excursions in other blocks."
    );
    let hotel = &card.skills[1];
    assert_eq!(hotel.name, "Hotel");
    assert_eq!(hotel.description, "Reserve a hotel.");
    assert_eq!(hotel.tags, ["hotel"]);
    assert_eq!(hotel.examples.len(), 1);

    // The extension skill's Data<T> schemas are published like a main-block skill's.
    let ext = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri.as_deref() == Some(a2a_kit::agent::SKILL_SCHEMA_EXTENSION))
        .expect("schema extension");
    let schemas = &ext.params.as_ref().unwrap()["skills"]["book-hotel"];
    assert!(
        schemas["input"]["properties"]["nights"].is_object(),
        "{schemas}"
    );
    assert!(schemas["output"]["properties"]["reference"].is_object());

    // Static metadata: streaming and direct-message flags come from the extension block.
    let info = Travel::agent_info();
    assert!(info.skill("countdown").unwrap().streaming);
    assert!(!info.skill("book-hotel").unwrap().streaming);
    assert!(info.skill("flight").unwrap().default);
    assert!(std::ptr::eq(info, Travel::agent_info()), "merged once");
    assert!(std::ptr::eq(
        info,
        a2a_kit::agent::Agent::info(&Travel::default())
    ));

    // Blocks sharing a location (one macro invocation) are ordered by their first skill id.
    let split = Split::agent_card("http://x");
    assert_eq!(skill_ids(&split), ["alpha", "beta", "delta", "gamma"]);
    let blocks: Vec<_> = registry::agent::<Split>().unwrap().blocks().collect();
    assert_eq!(blocks.len(), 5);
    assert_eq!(blocks[3].location().line(), GREETINGS_LINE);
    assert_eq!(blocks[3].location(), blocks[4].location());
    assert_eq!(split.capabilities.push_notifications, Some(true));
    assert!(Split::agent_info().skill("beta").unwrap().direct_message);
}

#[tokio::test]
async fn extension_skills_dispatch_over_http() {
    let s = serve(A2a::new(Travel::default())).await;

    // The served card has every block's skills.
    let served: Value = client()
        .get(format!("{}/.well-known/agent-card.json", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = served["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["flight", "book-hotel", "countdown", "excursion"]);

    // Free text goes to the default skill of the main block.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": user_text("Lisbon")}),
    )
    .await;
    assert_eq!(
        r["result"]["task"]["artifacts"][0]["parts"][0]["text"], "flight to Lisbon (call 1)",
        "{r}"
    );

    // An extension skill, typed in and out; it shares the agent's state with the main block.
    let stay = message(
        Some("book-hotel"),
        json!({"data": {"city": "Porto", "nights": 3}}),
    );
    let r = rpc(&s.base, "SendMessage", json!({"message": stay})).await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    let data = &task["artifacts"][0]["parts"][0]["data"];
    assert_eq!(data["reference"], "PORTO-3");
    assert_eq!(data["total_eur"], 270);
    assert_eq!(data["call"], 2);

    // Its Result's typed error rejects the task.
    let zero = message(
        Some("book-hotel"),
        json!({"data": {"city": "Porto", "nights": 0}}),
    );
    let r = rpc(&s.base, "SendMessage", json!({"message": zero})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"],
        "TASK_STATE_REJECTED"
    );

    // Its arguments are extracted before any task exists: InvalidParams naming the skill and
    // the serde path.
    let before = rpc(&s.base, "ListTasks", json!({})).await["result"]["totalSize"].clone();
    let bad = message(
        Some("book-hotel"),
        json!({"data": {"city": "Porto", "nights": "three"}}),
    );
    let r = rpc(&s.base, "SendMessage", json!({"message": bad})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("book-hotel") && msg.contains("message.parts[0].data.nights"),
        "{msg}"
    );
    let after = rpc(&s.base, "ListTasks", json!({})).await["result"]["totalSize"].clone();
    assert_eq!(before, after, "no task for a message that does not extract");

    // The HTTP+JSON binding dispatches the same way.
    let rest: Value = client()
        .post(format!("{}/message:send", s.base))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": message(Some("book-hotel"), json!({"data": {"city": "Faro", "nights": 1}}))}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        rest["task"]["artifacts"][0]["parts"][0]["data"]["reference"], "FARO-1",
        "{rest}"
    );

    // A streaming extension skill: chunks of one artifact, then COMPLETED.
    let resp = rpc_stream(
        &s.base,
        "SendStreamingMessage",
        json!({"message": to_skill("countdown", "3")}),
        None,
    )
    .await;
    let evs = read_sse(resp, 100).await;
    let chunks: Vec<&Value> = evs
        .iter()
        .filter(|e| kind(&e.data) == "artifactUpdate")
        .map(|e| &e.data["result"]["artifactUpdate"])
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "3 2 1 ");
    assert_eq!(chunks.last().unwrap()["lastChunk"], true);
    assert_eq!(
        state_of(&evs.last().unwrap().data).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );

    // A task of an extension skill continues in that skill (routing rule 1): the reply is
    // dispatched to it again, with no skill id.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("excursion", "Sintra")}),
    )
    .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{r}");
    let id = task["id"].as_str().unwrap().to_string();
    let mut reply = user_text("May 3");
    reply["taskId"] = json!(id);
    let r = rpc(&s.base, "SendMessage", json!({"message": reply})).await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "Sintra on May 3 (call 4)"
    );

    // An unknown id lists the skills of every block.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("cruise", "x")}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("flight, book-hotel, countdown, excursion"),
        "{msg}"
    );
}

#[tokio::test]
async fn skills_can_all_live_in_extension_blocks() {
    let s = serve(A2a::new(Split)).await;
    // The default skill of an extension block takes messages that name no skill.
    let r = rpc(&s.base, "SendMessage", json!({"message": user_text("hi")})).await;
    assert_eq!(
        r["result"]["task"]["artifacts"][0]["parts"][0]["text"], "alpha: hi",
        "{r}"
    );
    // A direct-message skill of another extension block answers without a task.
    let r = rpc(
        &s.base,
        "SendMessage",
        json!({"message": to_skill("beta", "")}),
    )
    .await;
    assert_eq!(
        r["result"]["message"]["parts"][0]["text"], "beta, directly",
        "{r}"
    );
    assert!(r["result"].get("task").is_none());
    // Each block of one macro invocation dispatches its own skill.
    for id in ["gamma", "delta"] {
        let r = rpc(&s.base, "SendMessage", json!({"message": to_skill(id, "")})).await;
        assert_eq!(
            r["result"]["task"]["artifacts"][0]["parts"][0]["text"], id,
            "{r}"
        );
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
        ("Registry Split", "agent_registry::Split"),
        ("Registry Clash", "agent_registry::Clash"),
        ("Registry Defaults", "agent_registry::Defaults"),
        ("Registry Empty", "agent_registry::Empty"),
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

    // Every listed agent builds its card, or says why not.
    for agent in &all {
        match agent.try_card(url) {
            Ok(card) => assert_eq!(card.name, agent.name()),
            Err(e) => assert!(agent.name().starts_with("Registry "), "{e}"),
        }
    }

    let travel = registry::agent::<Travel>().expect("Travel is registered");
    assert_eq!(travel.type_id(), std::any::TypeId::of::<Travel>());
    assert_eq!(travel.card(url), Travel::agent_card(url));
    assert!(std::ptr::eq(travel.info(), Travel::agent_info()));
    assert_eq!(travel.location().file(), file!());
    assert_eq!(travel.location().line(), TRAVEL_LINE);
    let blocks: Vec<_> = travel.blocks().collect();
    assert_eq!(blocks.len(), 3);
    assert!(!blocks[0].is_extension());
    assert!(blocks[1..].iter().all(|b| b.is_extension()));
    assert_eq!(blocks[1].location().line(), hotels::LINE);
    assert!(blocks[1].location().module_path().ends_with("::hotels"));
    assert_eq!(blocks[2].location().line(), excursions::LINE);
    assert_eq!(
        blocks[1].to_string(),
        format!("`#[a2a_agent(extend)]` at {}:{}", file!(), hotels::LINE)
    );
    assert_eq!(
        blocks[0].to_string(),
        format!("`#[a2a_agent]` at {}:{}", file!(), TRAVEL_LINE)
    );
}

#[test]
fn conflicts_are_errors_naming_both_blocks() {
    let clash = registry::agent::<Clash>().unwrap();
    let err = clash.try_info().unwrap_err();
    let RegistryError::DuplicateSkillId {
        agent,
        id,
        first,
        second,
    } = err
    else {
        panic!("expected DuplicateSkillId, got {err:?}");
    };
    assert_eq!(agent, "agent_registry::Clash");
    assert_eq!(id, "greet");
    assert!(!first.is_extension() && second.is_extension());
    assert_eq!(
        (first.location().line(), second.location().line()),
        (CLASH_MAIN, CLASH_EXT)
    );
    let text = err.to_string();
    assert_eq!(
        text,
        format!(
            "agent `agent_registry::Clash`: skill id `greet` is declared twice, by \
             `#[a2a_agent]` at {f}:{CLASH_MAIN} and by `#[a2a_agent(extend)]` at {f}:{CLASH_EXT}; \
             give one of them a distinct `#[skill(id = \"...\")]`",
            f = file!()
        )
    );
    assert_eq!(clash.try_card("http://x"), Err(err));

    // The functions that return plain values panic with the same message, every time, and
    // so does building a service (start-up, before any request).
    assert_eq!(
        panic_message(|| {
            let _ = Clash::agent_info();
        }),
        text
    );
    assert_eq!(
        panic_message(|| {
            let _ = Clash::agent_card("http://x");
        }),
        text
    );
    assert_eq!(
        panic_message(|| {
            let _ = AgentService::builder(Clash).build();
        }),
        text
    );
    assert_eq!(
        panic_message(|| {
            let _ = clash.card("http://x");
        }),
        text
    );

    let err = registry::agent::<Defaults>()
        .unwrap()
        .try_info()
        .unwrap_err();
    let RegistryError::TwoDefaultSkills {
        first_id,
        second_id,
        second,
        ..
    } = err
    else {
        panic!("expected TwoDefaultSkills, got {err:?}");
    };
    assert_eq!((first_id, second_id), ("first", "second"));
    assert_eq!(second.location().line(), DEFAULTS_EXT);
    assert!(
        err.to_string()
            .contains("two default skills, `first` (`#[a2a_agent]` at "),
        "{err}"
    );

    let err = registry::agent::<Empty>().unwrap().try_info().unwrap_err();
    assert!(
        matches!(err, RegistryError::NoSkills { agent: "agent_registry::Empty", block } if block.location().line() == EMPTY_MAIN),
        "{err:?}"
    );
    assert!(err.to_string().contains("has no skills"), "{err}");

    // `check` reports every conflict at once, without panicking.
    let errors = registry::check().unwrap_err();
    let agents: Vec<&str> = errors
        .iter()
        .map(|e| match e {
            RegistryError::DuplicateSkillId { agent, .. }
            | RegistryError::TwoDefaultSkills { agent, .. }
            | RegistryError::NoSkills { agent, .. } => *agent,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        agents,
        [
            "agent_registry::Clash",
            "agent_registry::Defaults",
            "agent_registry::Empty"
        ]
    );
}
