//! Data in, as users send it: a lone data part, or JSON text declared `application/json`,
//! reaches the one skill that takes `Data<T>` when nothing else decides; with several such
//! skills the router decides or the error lists them; and each skill's card `inputModes` /
//! `outputModes` follow from its argument and return types.

use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_kit::skill::{Route, RouteRequest, SkillRouter};
use a2a_tests::{rpc, serve};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Trip {
    from: String,
    to: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Booking {
    reference: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Refund {
    reference: String,
}

struct Travel;

/// Books trips.
#[a2a_agent]
impl Travel {
    /// Greet.
    #[skill]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    /// Book a trip.
    #[skill]
    async fn book(&self, Data(trip): Data<Trip>) -> Data<Booking> {
        Data(Booking {
            reference: format!("{}-{}", trip.from, trip.to),
        })
    }

    /// Note something; reads no content.
    #[skill]
    async fn note(&self, ctx: TaskContext) {
        let _ = ctx;
    }

    /// Summarize anything.
    #[skill]
    async fn summarize(&self, Parts(parts): Parts) -> Result<String, SkillError> {
        Ok(format!("{} parts", parts.len()))
    }

    /// Read a PDF.
    #[skill(input_modes = ["application/pdf"], output_modes = ["text/markdown"])]
    async fn read_pdf(&self, file: File) -> String {
        file.filename.unwrap_or_default()
    }
}

struct Desk;

/// Two skills take data.
#[a2a_agent]
impl Desk {
    /// Book a trip.
    #[skill]
    async fn book(&self, Data(trip): Data<Trip>) -> String {
        format!("{} to {}", trip.from, trip.to)
    }

    /// Refund a booking.
    #[skill]
    async fn refund(&self, Data(r): Data<Refund>) -> String {
        format!("refunded {}", r.reference)
    }

    /// Chat.
    #[skill]
    async fn chat(&self, Text(t): Text) -> String {
        t
    }
}

struct Concierge;

/// A text default and one data skill.
#[a2a_agent]
impl Concierge {
    /// Chat.
    #[skill(default)]
    async fn chat(&self, Text(t): Text) -> String {
        format!("chat: {t}")
    }

    /// Book a trip.
    #[skill]
    async fn book(&self, Data(trip): Data<Trip>) -> String {
        format!("booked {} to {}", trip.from, trip.to)
    }
}

struct Inbox;

/// A default that reads anything, and one data skill.
#[a2a_agent]
impl Inbox {
    /// File anything.
    #[skill(default)]
    async fn file(&self, Parts(parts): Parts) -> String {
        format!("filed {} part(s)", parts.len())
    }

    /// Book a trip.
    #[skill]
    async fn book(&self, Data(trip): Data<Trip>) -> String {
        format!("booked {} to {}", trip.from, trip.to)
    }
}

/// SendMessage params: a user message of these `parts`.
fn send_message_params(parts: Value) -> Value {
    json!({"message": {"messageId": a2a_tests::uuid(), "role": "ROLE_USER", "parts": parts}})
}

#[test]
fn card_modes_follow_the_types() {
    let service = AgentService::builder(Travel).build().unwrap();
    let card = service.card();
    let modes = |id: &str| {
        let s = card.skills.iter().find(|s| s.id == id).unwrap();
        (s.input_modes.clone(), s.output_modes.clone())
    };
    let text = vec!["text/plain".to_string()];
    let json = vec!["application/json".to_string()];
    assert_eq!(modes("greet"), (text.clone(), text.clone()));
    assert_eq!(modes("book"), (json.clone(), json.clone()));
    // No content read, no result: the agent's defaults (the fields are absent).
    assert_eq!(modes("note"), (vec![], vec![]));
    // Any content: the agent's defaults for input; the Result's inner type for output.
    assert_eq!(modes("summarize"), (vec![], text.clone()));
    // Named modes win over the types.
    assert_eq!(
        modes("read_pdf"),
        (
            vec!["application/pdf".to_string()],
            vec!["text/markdown".to_string()]
        )
    );
    let wire = serde_json::to_value(card).unwrap();
    let note = wire["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "note")
        .unwrap();
    assert!(note.get("inputModes").is_none(), "{note}");
}

#[tokio::test]
async fn a_lone_data_part_reaches_the_one_data_skill() {
    let s = serve(AgentService::builder(Travel)).await;
    let trip = json!({"from": "LIS", "to": "AMS"});
    for parts in [
        json!([{"data": trip}]),
        json!([{"text": trip.to_string(), "mediaType": "application/json"}]),
        json!([{"text": trip.to_string(), "mediaType": "Application/JSON; charset=utf-8"}]),
    ] {
        let v = rpc(&s.base, "SendMessage", send_message_params(parts.clone())).await;
        let task = &v["result"]["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{parts}: {v}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["data"]["reference"], "LIS-AMS",
            "{parts}: {v}"
        );
    }
    // Text that is not declared JSON, and data beside other parts, still need a skill id.
    for parts in [
        json!([{"text": trip.to_string()}]),
        json!([{"data": trip}, {"text": "and this"}]),
    ] {
        let v = rpc(&s.base, "SendMessage", send_message_params(parts.clone())).await;
        assert_eq!(v["error"]["code"], -32602, "{parts}: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("does not name a skill") && msg.contains("greet"),
            "{msg}"
        );
    }
}

#[tokio::test]
async fn several_data_skills_are_listed_or_left_to_the_router() {
    let s = serve(AgentService::builder(Desk)).await;
    let v = rpc(
        &s.base,
        "SendMessage",
        send_message_params(json!([{"data": {"reference": "R1"}}])),
    )
    .await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("several skills take data"), "{msg}");
    assert!(
        msg.contains("book, refund") && !msg.contains("chat"),
        "{msg}"
    );
    assert_eq!(
        v["error"]["data"][1]["fieldViolations"][0]["field"], "message.metadata.skillId",
        "{v}"
    );

    struct ByShape;
    #[a2a_kit::async_trait]
    impl SkillRouter for ByShape {
        async fn route(&self, req: RouteRequest<'_>) -> Route {
            match req.message.parts[0].as_data() {
                Some(d) if d.get("reference").is_some() => Route::Skill("refund".into()),
                _ => Route::NoMatch,
            }
        }
    }
    let s = serve(AgentService::builder(Desk).skill_router(ByShape)).await;
    let v = rpc(
        &s.base,
        "SendMessage",
        send_message_params(json!([{"data": {"reference": "R1"}}])),
    )
    .await;
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"], "refunded R1",
        "{v}"
    );
}

/// A default skill that reads only text does not swallow data; one that reads anything does.
#[tokio::test]
async fn the_default_skill_gets_data_only_if_it_reads_data() {
    let text = |v: &Value| v["result"]["task"]["artifacts"][0]["parts"][0]["text"].clone();
    let trip = json!([{"data": {"from": "LIS", "to": "AMS"}}]);

    let s = serve(AgentService::builder(Concierge)).await;
    let v = rpc(&s.base, "SendMessage", send_message_params(trip.clone())).await;
    assert_eq!(text(&v), "booked LIS to AMS", "{v}");
    let v = rpc(
        &s.base,
        "SendMessage",
        send_message_params(json!([{"text": "hi"}])),
    )
    .await;
    assert_eq!(text(&v), "chat: hi", "{v}");

    let s = serve(AgentService::builder(Inbox)).await;
    let v = rpc(&s.base, "SendMessage", send_message_params(trip)).await;
    assert_eq!(text(&v), "filed 1 part(s)", "{v}");
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Seats {
    passengers: u8,
    legs: Vec<i32>,
    price: f64,
}

struct Airline;

/// Seats people.
#[a2a_agent]
impl Airline {
    /// Seat passengers.
    #[skill]
    async fn seat(&self, Data(s): Data<Seats>) -> String {
        format!("{} on {:?} for {}", s.passengers, s.legs, s.price)
    }
}

/// Issue #30: the official clients send a data part as protobuf's `Struct`, every number a
/// double (`"passengers": 2.0` for Python's `2`): an integer field takes a whole-valued one;
/// a fraction is still an error naming the field.
#[tokio::test]
async fn whole_valued_floats_fill_integer_fields() {
    let s = serve(AgentService::builder(Airline)).await;
    let send = |data: Value| {
        let base = s.base.clone();
        async move {
            rpc(
                &base,
                "SendMessage",
                send_message_params(json!([{"data": data}])),
            )
            .await
        }
    };
    let v = send(json!({"passengers": 2.0, "legs": [1.0, -3.0], "price": 120})).await;
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"], "2 on [1, -3] for 120",
        "{v}"
    );
    let v = send(json!({"passengers": 2.5, "legs": [], "price": 1.5})).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("message.parts[0].data.passengers") && msg.contains("2.5"),
        "{msg}"
    );
    let v = send(json!({"passengers": 300.0, "legs": [], "price": 1})).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("passengers"),
        "{v}"
    );
}
