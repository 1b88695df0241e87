//! `#[a2a_agent]` / `#[skill]` / `#[streaming]` end to end: the generated card and skill
//! metadata, and skills invoked through `AgentService` (argument extraction, return types,
//! streaming, direct messages, errors before any task exists).

use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_kit::prelude::*;
use a2a_kit::protocol::Task;
use a2a_kit::protocol::TaskState;
use a2a_kit::protocol::{
    ListTasksRequest, Metadata as MetadataMap, Role, SendMessageRequest, SendMessageResponse,
    StreamResponse,
};
use a2a_kit::request::RequestContext;
use a2a_kit::server::AgentService;
use a2a_kit::skill::SKILL_SCHEMA_EXTENSION;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct BookFlight {
    from: String,
    to: String,
    passengers: Vec<Passenger>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Passenger {
    name: String,
    age: u8,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Booking {
    reference: String,
    seats: usize,
}

#[derive(Debug, Deserialize)]
struct Prefs {
    #[serde(default)]
    language: Option<String>,
}

#[derive(Default)]
struct TestAgent {
    greeted: AtomicUsize,
}

/// An agent exercising every kind of skill.
///
/// Second paragraph of the card description.
#[a2a_agent(
    name = "Test Agent",
    provider(organization = "a2a-kit", url = "https://a2a-kit.dev"),
    documentation_url = "https://docs.rs/a2a-kit",
    output_modes = ["text/plain"],
    push_notifications = true
)]
impl TestAgent {
    /// Not a skill: a plain helper, left alone by the macro.
    fn salutation(&self) -> &'static str {
        "Hello"
    }

    /// Greet the user by name.
    #[skill(tags = ["greeting"], examples = ["Alice"], default)]
    async fn greet(&self, Text(name): Text) -> String {
        self.greeted.fetch_add(1, Ordering::SeqCst);
        format!("{}, {name}!", self.salutation())
    }

    /// Book a flight.
    #[skill(id = "book-flight", name = "Book a flight", input_modes = ["application/json"])]
    async fn book(&self, Data(req): Data<BookFlight>) -> Result<Data<Booking>, SkillError> {
        if req.from == req.to {
            return Err(SkillError::rejected("origin and destination are the same"));
        }
        let names: Vec<&str> = req
            .passengers
            .iter()
            .filter(|p| p.age > 0)
            .map(|p| p.name.as_str())
            .collect();
        Ok(Data(Booking {
            reference: format!("{}-{}", req.from, req.to),
            seats: names.len(),
        }))
    }

    /// Echo the text, if any.
    #[skill]
    async fn maybe_echo(&self, text: Option<Text>) -> String {
        match text {
            Some(Text(t)) => format!("echo: {t}"),
            None => "no text".to_string(),
        }
    }

    /// Report progress, then answer with the task id.
    #[skill]
    async fn progress(&self, ctx: TaskContext, Text(t): Text) -> Result<String, SkillError> {
        ctx.status(format!("working on {t}")).await?;
        Ok(format!("{} done in {}", t, ctx.task_id()))
    }

    /// Count the messages of the task.
    #[skill]
    async fn history(&self, History(h): History) -> String {
        format!("{} message(s)", h.len())
    }

    /// Read the preferred language from metadata.
    #[skill]
    async fn prefs(&self, RequestMetadata(p): RequestMetadata<Prefs>) -> String {
        p.language.unwrap_or_else(|| "en".into())
    }

    /// Count to N, one chunk per number.
    #[streaming]
    #[skill(id = "count")]
    fn count_to(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
        let n: u32 = n.trim().parse().unwrap_or(3);
        a2a_kit::stream! {
            for i in 1..=n {
                yield format!("{i}\n");
            }
        }
    }

    /// Answer directly, without a task.
    #[skill]
    async fn reply(&self, Text(t): Text) -> Message {
        Message::agent_text(format!("direct: {t}"))
    }

    /// Always declines.
    #[skill]
    async fn decline(&self) -> Result<String, SkillError> {
        Err(SkillError::rejected("not today"))
    }
}

fn service() -> AgentService {
    AgentService::builder(TestAgent::default())
        .build()
        .expect("a valid configuration")
}

/// A SendMessageRequest of a user `message`.
fn send_request(message: Message) -> SendMessageRequest {
    assert_eq!(message.role, Role::User);
    assert!(!message.message_id.is_empty());
    SendMessageRequest {
        tenant: None,
        message,
        configuration: None,
        metadata: None,
    }
}

/// A SendMessageRequest of `message`, addressed to `skill` (metadata `skillId`).
fn send_request_to_skill(skill: &str, message: Message) -> SendMessageRequest {
    let mut meta = MetadataMap::new();
    meta.insert("skillId".into(), json!(skill));
    send_request(message.with_metadata(meta))
}

fn completed_task(resp: SendMessageResponse) -> Task {
    match resp {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn artifact_text(task: &Task) -> String {
    task.artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| p.as_text())
        .collect()
}

async fn task_count(svc: &AgentService) -> i32 {
    svc.list_tasks(&RequestContext::new(), ListTasksRequest::default())
        .await
        .expect("list tasks")
        .total_size
}

// ------------------------------------------------------------------ metadata

#[test]
fn agent_info_and_card() {
    let info = TestAgent::agent_info();
    let ids: Vec<&str> = info.skills.iter().map(|s| s.id).collect();
    assert_eq!(
        ids,
        [
            "greet",
            "book-flight",
            "maybe_echo",
            "progress",
            "history",
            "prefs",
            "count",
            "reply",
            "decline"
        ]
    );
    assert_eq!(info.name, "Test Agent");
    assert_eq!(
        info.description,
        "An agent exercising every kind of skill.\n\nSecond paragraph of the card description."
    );
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.provider, Some(("a2a-kit", "https://a2a-kit.dev")));
    assert_eq!(info.documentation_url, Some("https://docs.rs/a2a-kit"));
    assert_eq!(info.icon_url, None);
    assert_eq!(info.default_input_modes, ["text/plain", "application/json"]);
    assert_eq!(info.default_output_modes, ["text/plain"]);
    assert!(info.streaming);
    assert!(info.push_notifications);

    let greet = info.skill("greet").unwrap();
    assert_eq!(greet.name, "Greet");
    assert_eq!(greet.description, "Greet the user by name.");
    assert_eq!(greet.tags, ["greeting"]);
    assert_eq!(greet.examples, ["Alice"]);
    assert!(greet.default && !greet.streaming && !greet.direct_message);
    assert_eq!((greet.input_schema)(), None);

    let book = info.skill("book-flight").unwrap();
    assert_eq!(book.name, "Book a flight");
    assert_eq!(book.input_modes, ["application/json"]);
    assert!(!book.default);

    assert_eq!(info.skill("maybe_echo").unwrap().name, "Maybe echo");
    let count = info.skill("count").unwrap();
    assert!(count.streaming && !count.direct_message);
    assert!(info.skill("reply").unwrap().direct_message);
    assert_eq!(info.skills.iter().filter(|s| s.default).count(), 1);

    // The trait impl hands out the same static.
    let agent = TestAgent::default();
    assert!(std::ptr::eq(a2a_kit::skill::Agent::info(&agent), info));
}

/// A `#[streaming]` skill's card `outputModes` follow its items as written: text for
/// `String` and `&str` (and a `Result` of them), JSON for `Data<T>`; unknown otherwise (the
/// agent's defaults), and the skill's own `output_modes` win.
#[test]
fn streaming_output_modes_follow_the_items() {
    #[derive(Serialize, schemars::JsonSchema)]
    struct Chunk {
        n: u32,
    }
    struct Streams;
    /// Streams of every kind.
    #[a2a_agent]
    impl Streams {
        /// Text.
        #[skill]
        #[streaming]
        fn text(&self) -> impl Stream<Item = String> + Send + 'static {
            a2a_kit::stream! { yield "a".to_string(); }
        }
        /// Static text, or an error.
        #[skill]
        #[streaming]
        fn fallible(
            &self,
        ) -> impl Stream<Item = Result<&'static str, SkillError>> + Send + 'static {
            a2a_kit::stream! { yield Ok("a"); }
        }
        /// Data.
        #[skill]
        #[streaming]
        fn data(&self) -> impl Stream<Item = Data<Chunk>> + Send + 'static {
            a2a_kit::stream! { yield Data(Chunk { n: 1 }); }
        }
        /// Parts: any media type.
        #[skill]
        #[streaming]
        fn parts(&self) -> impl Stream<Item = Part> + Send + 'static {
            a2a_kit::stream! { yield Part::text("a"); }
        }
        /// A named stream type.
        #[skill]
        #[streaming]
        fn boxed(&self) -> futures::stream::BoxStream<'static, String> {
            futures::stream::iter(["a".to_string()]).boxed()
        }
        /// Its own modes.
        #[skill(output_modes = ["text/markdown"])]
        #[streaming]
        fn markdown(&self) -> impl Stream<Item = String> + Send + 'static {
            a2a_kit::stream! { yield "*a*".to_string(); }
        }
    }
    let card = Streams::agent_card("http://x");
    let modes = |id: &str| {
        card.skills
            .iter()
            .find(|s| s.id == id)
            .unwrap()
            .output_modes
            .clone()
    };
    assert_eq!(modes("text"), ["text/plain"]);
    assert_eq!(modes("fallible"), ["text/plain"]);
    assert_eq!(modes("data"), ["application/json"]);
    assert!(modes("parts").is_empty());
    assert!(modes("boxed").is_empty());
    assert_eq!(modes("markdown"), ["text/markdown"]);
}

#[test]
fn card_publishes_schemas() {
    let card = TestAgent::agent_card("https://agents.example.com/test/");
    assert_eq!(card.name, "Test Agent");
    assert_eq!(card.skills.len(), 9);
    assert_eq!(card.skills[1].id, "book-flight");
    assert_eq!(card.skills[1].description, "Book a flight.");
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.capabilities.push_notifications, Some(true));

    let ext = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri.as_deref() == Some(SKILL_SCHEMA_EXTENSION))
        .expect("schema extension");
    assert!(!ext.required);
    let skills = &ext.params.as_ref().unwrap()["skills"];
    let book = &skills["book-flight"];
    assert_eq!(book["input"]["title"], "BookFlight");
    assert!(book["input"]["properties"]["passengers"].is_object());
    assert_eq!(book["output"]["title"], "Booking");
    // Skills without data parts publish nothing.
    let skills = skills.as_object().unwrap();
    assert_eq!(skills.keys().collect::<Vec<_>>(), ["book-flight"]);

    // The service serves the same card.
    let svc = service();
    assert_eq!(
        svc.card().skills,
        TestAgent::agent_card("http://127.0.0.1:3000").skills
    );
}

// ------------------------------------------------------------------ invocation

#[tokio::test]
async fn default_skill_runs_without_skill_id() {
    let svc = service();
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request(Message::user_text("Ada")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(artifact_text(&task), "Hello, Ada!");
}

#[tokio::test]
async fn data_in_data_out() {
    let svc = service();
    let payload = json!({"from": "CDG", "to": "JFK", "passengers": [{"name": "Ada", "age": 36}]});
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("book-flight", Message::user(vec![Part::data(payload)])),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    let data: Vec<&Value> = task
        .artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| p.as_data())
        .collect();
    assert_eq!(data, [&json!({"reference": "CDG-JFK", "seats": 1})]);
}

#[tokio::test]
async fn bad_data_is_invalid_params_and_creates_no_task() {
    let svc = service();
    let payload =
        json!({"from": "CDG", "to": "JFK", "passengers": [{"name": "Ada", "age": "old"}]});
    let err = svc
        .send_message(
            &RequestContext::new(),
            send_request_to_skill(
                "book-flight",
                Message::user(vec![Part::text("hi"), Part::data(payload)]),
            ),
        )
        .await
        .expect_err("bad payload");
    let A2aError::InvalidParams {
        message,
        violations,
    } = &err
    else {
        panic!("expected InvalidParams, got {err:?}")
    };
    assert!(message.contains("`book-flight`"), "{message}");
    assert_eq!(violations.len(), 1);
    assert_eq!(
        violations[0].field,
        "message.parts[1].data.passengers[0].age"
    );
    assert!(
        violations[0].description.contains("book-flight"),
        "{:?}",
        violations[0]
    );

    // A missing data part: also before any task.
    let err = svc
        .send_message(
            &RequestContext::new(),
            send_request_to_skill("book-flight", Message::user_text("no json here")),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, A2aError::InvalidParams { message, .. } if message.contains("book-flight")),
        "{err:?}"
    );

    assert_eq!(task_count(&svc).await, 0);
}

#[tokio::test]
async fn skill_error_ends_the_task() {
    let svc = service();
    let payload = json!({"from": "CDG", "to": "CDG", "passengers": []});
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("book-flight", Message::user(vec![Part::data(payload)])),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Rejected);

    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("decline", Message::user_text("x")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Rejected);
    assert_eq!(task_count(&svc).await, 2);
}

#[tokio::test]
async fn optional_argument() {
    let svc = service();
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("maybe_echo", Message::user_text("hi")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(artifact_text(&task), "echo: hi");
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("maybe_echo", Message::user(vec![Part::data(json!({}))])),
        )
        .await
        .unwrap(),
    );
    assert_eq!(artifact_text(&task), "no text");
}

#[tokio::test]
async fn task_context_history_and_metadata() {
    let svc = service();
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("progress", Message::user_text("step")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(artifact_text(&task), format!("step done in {}", task.id));

    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("history", Message::user_text("one")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(artifact_text(&task), "1 message(s)");

    let mut meta = MetadataMap::new();
    meta.insert("skillId".into(), json!("prefs"));
    meta.insert("language".into(), json!("fr"));
    let mut req = send_request(Message::user_text("?"));
    req.metadata = Some(meta);
    let task = completed_task(svc.send_message(&RequestContext::new(), req).await.unwrap());
    assert_eq!(artifact_text(&task), "fr");

    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("prefs", Message::user_text("?")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(artifact_text(&task), "en");
}

#[tokio::test]
async fn direct_message_skill_creates_no_task() {
    let svc = service();
    let resp = svc
        .send_message(
            &RequestContext::new(),
            send_request_to_skill("reply", Message::user_text("ping")),
        )
        .await
        .unwrap();
    let SendMessageResponse::Message(m) = resp else {
        panic!("expected a message, got {resp:?}")
    };
    assert_eq!(m.text(), "direct: ping");
    assert_eq!(task_count(&svc).await, 0);
}

#[tokio::test]
async fn streaming_skill_streams_chunks() {
    let svc = service();
    let events: Vec<StreamResponse> = svc
        .send_streaming_message(
            &RequestContext::new(),
            send_request_to_skill("count", Message::user_text("3")),
        )
        .await
        .unwrap()
        .map(|item| item.expect("stream item").event)
        .collect()
        .await;
    assert!(
        matches!(events.first(), Some(StreamResponse::Task(_))),
        "{events:?}"
    );
    let chunks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(u) => Some(u),
            _ => None,
        })
        .collect();
    let texts: String = chunks
        .iter()
        .flat_map(|u| u.artifact.parts.iter())
        .filter_map(|p| p.as_text())
        .collect();
    assert_eq!(texts, "1\n2\n3\n");
    assert!(
        chunks
            .iter()
            .all(|u| u.artifact.artifact_id == chunks[0].artifact.artifact_id)
    );
    assert!(!chunks[0].append);
    assert!(chunks[1..].iter().all(|u| u.append));
    assert!(chunks.last().unwrap().last_chunk);
    match events.last() {
        Some(StreamResponse::StatusUpdate(s)) => assert_eq!(s.status.state, TaskState::Completed),
        other => panic!("expected a final status update, got {other:?}"),
    }

    // A plain SendMessage gets the assembled artifact.
    let task = completed_task(
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("count", Message::user_text("2")),
        )
        .await
        .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(artifact_text(&task), "1\n2\n");
}

#[tokio::test]
async fn unknown_skill_is_invalid_params() {
    let svc = service();
    let err = svc
        .send_message(
            &RequestContext::new(),
            send_request_to_skill("nope", Message::user_text("x")),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, A2aError::InvalidParams { message, .. } if message.contains("greet")),
        "{err:?}"
    );

    // `prepare` itself rejects an unknown id the same way.
    let agent = std::sync::Arc::new(TestAgent::default());
    let req = a2a_kit::skill::SkillRequest::new(
        "nope",
        Message::user_text("x"),
        TaskContext::detached("nope", Message::user_text("x")),
    );
    let err = a2a_kit::skill::Agent::prepare(agent, "nope", &req).unwrap_err();
    assert!(
        matches!(&err, A2aError::InvalidParams { message, .. } if message.contains("nope")),
        "{err:?}"
    );
}

#[tokio::test]
async fn agent_state_is_shared() {
    let agent = std::sync::Arc::new(TestAgent::default());
    let svc = AgentService::builder_arc(agent.clone())
        .build()
        .expect("a valid configuration");
    for name in ["a", "b"] {
        svc.send_message(
            &RequestContext::new(),
            send_request_to_skill("greet", Message::user_text(name)),
        )
        .await
        .unwrap();
    }
    assert_eq!(agent.greeted.load(Ordering::SeqCst), 2);
}
