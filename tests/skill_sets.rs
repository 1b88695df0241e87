//! Skill sets: skills spread over several impl blocks (`#[a2a_agent(skill_set = name)]`),
//! composed as values into a service, in its card and dispatched over real HTTP; blocks that
//! conflict are an error from `build()` naming both.

use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_kit::prelude::*;
use a2a_kit::protocol::AgentCard;
use a2a_kit::server::{AgentService, BuildError};
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

/// Books trips: flights here, hotels and excursions in other blocks.
#[a2a_agent(name = "Sets Travel", version = "2.0.0")]
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
    #[a2a_agent(skill_set = hotels)]
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

        /// Not a skill: a helper of a skill-set block, left alone.
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
    #[a2a_agent(skill_set = excursions)]
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

// --- An agent whose default and direct-message skills are in skill sets ---------------------

#[derive(Default)]
pub struct Split;

/// Card fields and one skill; the others are in the sets below.
#[a2a_agent(name = "Sets Split", push_notifications = true)]
impl Split {
    /// Say hi.
    #[skill]
    async fn hi(&self) -> String {
        "hi".into()
    }
}

#[a2a_agent(skill_set = alpha_set)]
impl Split {
    /// Take free text.
    #[skill(default)]
    async fn alpha(&self, Text(t): Text) -> String {
        format!("alpha: {t}")
    }
}

#[a2a_agent(skill_set = beta_set)]
impl Split {
    /// Answer directly, without a task.
    #[skill]
    async fn beta(&self) -> Message {
        Message::agent_text("beta, directly")
    }
}

/// Skill sets written by a `macro_rules!`: one invocation, one source location for all.
macro_rules! greetings {
    ($($set:ident: $method:ident => $id:tt),*) => {$(
        #[a2a_agent(skill_set = $set)]
        impl Split {
            #[skill(id = $id, description = "Answer with the skill's id.")]
            async fn $method(&self) -> String {
                $id.to_string()
            }
        }
    )*};
}

greetings!(gamma_set: gamma => "gamma", delta_set: delta => "delta");

// --- Agents whose blocks conflict -------------------------------------------------------------

pub struct Clash;

/// Two blocks, one skill id.
#[a2a_agent(name = "Sets Clash")]
impl Clash {
    /// Greet.
    #[skill]
    async fn greet(&self) -> String {
        "hello".into()
    }
}

const CLASH_SET: u32 = line!() + 1;
#[a2a_agent(skill_set = again)]
impl Clash {
    /// Greet again, under the same id.
    #[skill(id = "greet")]
    async fn greet_again(&self) -> String {
        "hello again".into()
    }
}

pub struct Defaults;

/// Two blocks, two default skills.
#[a2a_agent(name = "Sets Defaults")]
impl Defaults {
    /// The first default.
    #[skill(default)]
    async fn first(&self) -> String {
        "first".into()
    }
}

const DEFAULTS_SET: u32 = line!() + 1;
#[a2a_agent(skill_set = seconds)]
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

/// The Travel service: its own skills and both sets, composed with `+`.
fn travel() -> a2a_kit::server::AgentServiceBuilder {
    AgentService::builder_with(Travel::default(), Travel::hotels() + Travel::excursions())
}

#[test]
fn skill_sets_are_in_the_card() {
    let service = travel()
        .public_url("http://127.0.0.1:3000/")
        .build()
        .expect("no conflict");
    let card = service.card();
    // The agent's own skills first, then each set's, in the order they were added.
    assert_eq!(
        skill_ids(card),
        ["flight", "book-hotel", "countdown", "excursion"]
    );
    assert_eq!(card.name, "Sets Travel");
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

    // A set's Data<T> schemas are published like the agent's own skills'.
    let ext = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri.as_deref() == Some(a2a_kit::skill::SKILL_SCHEMA_EXTENSION))
        .expect("schema extension");
    let schemas = &ext.params.as_ref().unwrap()["skills"]["book-hotel"];
    assert!(
        schemas["input"]["properties"]["nights"].is_object(),
        "{schemas}"
    );
    assert!(schemas["output"]["properties"]["reference"].is_object());

    // Static metadata of a set: streaming and direct-message flags come from its block.
    let hotels = Travel::hotels();
    let streaming: Vec<(&str, bool)> = hotels.skills().map(|s| (s.id, s.streaming)).collect();
    assert_eq!(streaming, [("book-hotel", false), ("countdown", true)]);
    assert!(Split::beta_set().skills().all(|s| s.direct_message));
    // The agent's own card (no service) has its own block's skills.
    assert_eq!(
        skill_ids(&Travel::agent_card("http://x")),
        ["flight"],
        "sets are added when a service is built"
    );

    // Sets composed in any order, one `+` at a time or `and`.
    let split = AgentService::builder_with(
        Split,
        Split::alpha_set().and(Split::beta_set()) + Split::delta_set() + Split::gamma_set(),
    )
    .build()
    .unwrap();
    assert_eq!(
        skill_ids(split.card()),
        ["hi", "alpha", "beta", "delta", "gamma"]
    );
    assert_eq!(split.card().capabilities.push_notifications, Some(true));
    // A set says where its blocks are.
    let debug = format!("{:?}", Travel::hotels() + Travel::excursions());
    for line in [hotels::LINE, excursions::LINE] {
        assert!(debug.contains(&format!("{}:{line}", file!())), "{debug}");
    }
    let debug = format!("{:?}", Split::alpha_set() + Split::beta_set());
    assert!(
        debug.contains("alpha_set") && debug.contains("beta"),
        "{debug}"
    );
}

#[tokio::test]
async fn skill_sets_dispatch_over_http() {
    let s = serve(travel()).await;

    // The served card has every block's skills.
    let served: Value = a2a_tests::public_card(&s.base).await;
    let ids: Vec<&str> = served["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["flight", "book-hotel", "countdown", "excursion"]);

    // Free text goes to the agent's own default skill.
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

    // A skill of a set, typed in and out; it shares the agent's state with its own skills.
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

    // A streaming skill of a set: chunks of one artifact, then COMPLETED.
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

    // A task of a set's skill continues in that skill (routing rule 1): the reply is
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
async fn a_sets_default_and_direct_message_skills() {
    let s = serve(AgentService::builder_with(
        Split,
        Split::alpha_set() + Split::beta_set() + Split::gamma_set() + Split::delta_set(),
    ))
    .await;
    // The default skill of a set takes messages that name no skill.
    let r = rpc(&s.base, "SendMessage", json!({"message": user_text("hi")})).await;
    assert_eq!(
        r["result"]["task"]["artifacts"][0]["parts"][0]["text"], "alpha: hi",
        "{r}"
    );
    // A direct-message skill of another set answers without a task.
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
    // Each set of one macro invocation dispatches its own skill.
    for id in ["gamma", "delta"] {
        let r = rpc(&s.base, "SendMessage", json!({"message": to_skill(id, "")})).await;
        assert_eq!(
            r["result"]["task"]["artifacts"][0]["parts"][0]["text"], id,
            "{r}"
        );
    }
}

#[test]
fn conflicts_are_build_errors_naming_both_blocks() {
    let err = AgentService::builder_with(Clash, Clash::again())
        .build()
        .unwrap_err();
    let BuildError::Skills(text) = &err else {
        panic!("expected BuildError::Skills, got {err:?}");
    };
    assert_eq!(
        text,
        &format!(
            "agent `skill_sets::Clash`: skill id `greet` is declared twice, by the \
             `#[a2a_agent]` block of `skill_sets::Clash` and by `#[a2a_agent(skill_set = again)]` \
             at {f}:{CLASH_SET}; give one of them another `#[skill(id = \"...\")]`",
            f = file!()
        )
    );
    // Nothing panics: the agent's own description and card stand alone.
    assert_eq!(skill_ids(&Clash::agent_card("http://x")), ["greet"]);

    let err = AgentService::builder_with(Defaults, Defaults::seconds())
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("two default skills, `first` in the `#[a2a_agent]` block of `skill_sets::Defaults` and `second` in `#[a2a_agent(skill_set = seconds)]`"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}:{DEFAULTS_SET}", file!())),
        "{text}"
    );

    // One set added twice clashes with itself, naming the same block twice.
    let err = AgentService::builder_with(Split, Split::alpha_set() + Split::alpha_set())
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("skill id `alpha` is declared twice"),
        "{err}"
    );

    // A set of another agent type does not compile: tests/ui/skill_set_of_another_type.rs.
}
