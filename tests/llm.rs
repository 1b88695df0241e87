//! Model-driven skills (`a2a_kit::llm`) against a scripted model server speaking the OpenAI
//! and Anthropic streaming formats (`support_model.rs`): chunks go out once, the artifact is
//! forced when missing, usage lands on the task, model failures end the task FAILED with a
//! reason, a cancel closes the model's connection, and keys never leak.

#[path = "support_model.rs"]
mod support_model;

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::llm::{ARTIFACT_TOOL, Model, ModelTool, USAGE_KEY};
use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_tests::*;
use serde_json::{Value, json};
use support_model::{FakeModel, Reply, Step, text, tool};

const KEY: &str = "sk-test-never-shown-4711";

/// A writer whose one skill is a model run.
#[derive(Clone)]
struct Writer {
    model: Model,
    tools: Vec<Arc<dyn ModelTool>>,
    idle: Duration,
}

/// Writes with a model.
#[a2a_agent(name = "Writer")]
impl Writer {
    /// Write what is asked.
    #[skill(default)]
    async fn write(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        self.model
            .run(&ctx)
            .system("Be brief.")
            .tools(self.tools.clone())
            .idle_timeout(self.idle)
            .await
    }
}

fn writer(model: Model) -> Writer {
    Writer {
        model,
        tools: Vec::new(),
        idle: Duration::from_secs(20),
    }
}

async fn openai() -> (FakeModel, Model) {
    let fake = FakeModel::start().await;
    let model = Model::openai_compatible(fake.openai_url(), KEY, "fake-model");
    (fake, model)
}

fn text_closed(events: &[Value]) -> (String, bool) {
    let (text, _, closed) = artifact_chunks(events);
    (text, closed)
}

async fn get_task(base: &str, id: &str) -> Value {
    rpc(base, "GetTask", json!({"id": id})).await["result"].clone()
}

fn status_text(task: &Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn text_deltas_become_artifact_chunks_once() {
    let (fake, model) = openai().await;
    fake.push(Reply::Steps(vec![
        text("Hel"),
        Step::Delay(Duration::from_millis(30)),
        text("lo, "),
        Step::Delay(Duration::from_millis(30)),
        text("world"),
    ]));
    let server = serve(AgentService::builder(writer(model))).await;
    let events = stream_message(&server.base, user_text("greet me")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    let (text, closed) = text_closed(&events);
    assert_eq!(text, "Hello, world");
    assert!(closed, "the last chunk closes the artifact");
    // Streamed as it came (in memory, each delta its own chunk).
    assert!(
        events
            .iter()
            .filter(|e| e.get("artifactUpdate").is_some())
            .count()
            >= 3
    );
    let task = get_task(&server.base, &stream_task_id(&events)).await;
    assert_eq!(task["artifacts"].as_array().unwrap().len(), 1);
    let stored: String = task["artifacts"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(
        stored, "Hello, world",
        "the stored artifact holds each piece once"
    );
    let usage = &task["metadata"][USAGE_KEY];
    assert_eq!(usage["calls"], 1, "{task}");
    assert_eq!(usage["inputTokens"], 7);
    assert_eq!(usage["outputTokens"], 5);
    assert_eq!(usage["model"], "fake-model");
    // The model was given the system prompt, the message and the artifact tool.
    let body = &fake.requests()[0];
    assert_eq!(body["stream"], true);
    let messages = body["messages"].to_string();
    assert!(
        messages.contains("Be brief.") && messages.contains("greet me"),
        "{body}"
    );
    assert!(body["tools"].to_string().contains(ARTIFACT_TOOL));
}

#[tokio::test]
async fn artifact_tool_deltas_stream_once_and_are_not_repeated_at_the_end() {
    let (fake, model) = openai().await;
    fake.push(Reply::Steps(vec![
        text("Let me write that. "),
        tool(
            "call_1",
            ARTIFACT_TOOL,
            &[
                "{\"con",
                "tent\": \"Paris is ",
                "the \\\"capital\\\"",
                "\\nof France\"}",
            ],
        ),
    ]));
    let server = serve(AgentService::builder(writer(model))).await;
    let events = stream_message(&server.base, user_text("capital of France?")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    let (text, closed) = text_closed(&events);
    assert_eq!(
        text,
        "Let me write that. Paris is the \"capital\"\nof France"
    );
    assert!(closed);
    assert_eq!(fake.requests().len(), 1, "no second model call");
}

#[tokio::test]
async fn a_model_that_ends_without_an_artifact_is_made_to_write_one() {
    let (fake, model) = openai().await;
    fake.push(Reply::Steps(vec![]));
    fake.push(Reply::Steps(vec![tool(
        "call_9",
        ARTIFACT_TOOL,
        &["{\"content\": \"forced ", "answer\"}"],
    )]));
    let server = serve(AgentService::builder(writer(model))).await;
    let events = stream_message(&server.base, user_text("say something")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    assert_eq!(text_closed(&events), ("forced answer".into(), true));
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1]["tool_choice"],
        json!({"type": "function", "function": {"name": ARTIFACT_TOOL}})
    );
    let tools = requests[1]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "only the artifact tool when forced");
    // An empty body (llama.cpp's answer to a streamed automatic tool choice) is "nothing
    // written" too: the artifact is forced, the task does not hang or fail.
    fake.push(Reply::Empty);
    fake.push(Reply::Steps(vec![tool(
        "c",
        ARTIFACT_TOOL,
        &["{\"content\": \"ok\"}"],
    )]));
    let events = stream_message(&server.base, user_text("again")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    assert_eq!(text_closed(&events).0, "ok");
    // A model that will not write even when forced fails the task, clearly.
    fake.push(Reply::Steps(vec![]));
    fake.push(Reply::Steps(vec![]));
    let events = stream_message(&server.base, user_text("nothing")).await;
    assert_eq!(final_state(&events), "TASK_STATE_FAILED");
    let task = get_task(&server.base, &stream_task_id(&events)).await;
    assert!(status_text(&task).contains("no answer"), "{task}");
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_deltas_the_same_way() {
    let fake = FakeModel::start().await;
    let model = Model::anthropic_at(&fake.base, KEY, "claude-test");
    fake.push(Reply::Steps(vec![
        text("Thinking aloud. "),
        tool(
            "toolu_1",
            ARTIFACT_TOOL,
            &["{\"content\"", ": \"Bonjour", " tout le monde\"}"],
        ),
    ]));
    let server = serve(AgentService::builder(writer(model))).await;
    let events = stream_message(&server.base, user_text("hello in French")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    assert_eq!(
        text_closed(&events),
        ("Thinking aloud. Bonjour tout le monde".into(), true)
    );
    let headers = &fake.request_headers()[0];
    assert!(headers.iter().any(|(k, v)| k == "x-api-key" && v == KEY));
    let task = get_task(&server.base, &stream_task_id(&events)).await;
    assert_eq!(task["metadata"][USAGE_KEY]["calls"], 1);
}

/// Each model failure ends the task FAILED with a reason, the artifact never closed.
#[tokio::test]
async fn model_failures_end_the_task_failed_with_a_reason() {
    let (fake, model) = openai().await;
    let agent = Writer {
        idle: Duration::from_millis(400),
        ..writer(model)
    };
    let server = serve(AgentService::builder(agent)).await;
    let cases: Vec<(Reply, &str)> = vec![
        (
            Reply::Status {
                status: 429,
                headers: vec![("retry-after".into(), "7".into())],
                body: "{\"error\": {\"message\": \"slow down\"}}".into(),
            },
            "HTTP 429; retry after 7 s",
        ),
        (
            Reply::Status {
                status: 503,
                headers: vec![],
                body: "{\"error\": {\"message\": \"overloaded\"}}".into(),
            },
            "HTTP 503",
        ),
        (
            Reply::Steps(vec![text("partial "), Step::Raw("{not json".into())]),
            "malformed",
        ),
        (
            Reply::Steps(vec![
                text("partial "),
                tool("c1", ARTIFACT_TOOL, &["{\"content\": \"half"]),
                Step::Cut,
            ]),
            "connection to the model failed",
        ),
        (
            Reply::Steps(vec![text("partial "), Step::EndWithoutDone]),
            "ended before the model finished",
        ),
        (
            Reply::Steps(vec![text("partial "), Step::Hang]),
            "sent nothing for",
        ),
    ];
    for (reply, reason) in cases {
        fake.push(reply);
        let events = stream_message(&server.base, user_text("go")).await;
        assert_eq!(
            final_state(&events),
            "TASK_STATE_FAILED",
            "{reason}: {events:?}"
        );
        let (_, closed) = text_closed(&events);
        assert!(
            !closed,
            "{reason}: a failed run leaves its artifact unfinished"
        );
        let task = get_task(&server.base, &stream_task_id(&events)).await;
        let why = status_text(&task);
        assert!(why.contains(reason), "expected `{reason}` in `{why}`");
        assert!(!task.to_string().contains(KEY), "the key leaked: {task}");
    }
}

#[tokio::test]
async fn a_cancel_closes_the_model_stream_and_stays_canceled() {
    let (fake, model) = openai().await;
    fake.push(Reply::Steps(vec![text("working on it "), Step::Hang]));
    let server = serve(AgentService::builder(writer(model))).await;
    let r = rpc(
        &server.base,
        "SendMessage",
        json!({"message": user_text("long one"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    wait_task(&server.base, &id, |t| {
        !t["artifacts"].as_array().is_none_or(|a| a.is_empty())
    })
    .await;
    let canceled = rpc(&server.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    assert!(
        fake.wait_disconnect(1, Duration::from_secs(1)).await,
        "the model's connection was not closed within a second of the cancel"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        get_task(&server.base, &id).await["status"]["state"],
        "TASK_STATE_CANCELED"
    );
}

/// The model is given the conversation from the store: the context's earlier exchange.
#[tokio::test]
async fn the_model_sees_the_earlier_turns_of_the_context() {
    let (fake, model) = openai().await;
    fake.push(Reply::Steps(vec![text(
        "Ada Lovelace wrote the first program.",
    )]));
    fake.push(Reply::Steps(vec![text("In 1843.")]));
    let server = serve(AgentService::builder(writer(model))).await;
    let first = stream_message(&server.base, user_text("Who wrote the first program?")).await;
    let context = first
        .iter()
        .find_map(|e| e["task"]["contextId"].as_str())
        .unwrap()
        .to_string();
    let mut follow = user_text("When?");
    follow["contextId"] = json!(context);
    let second = stream_message(&server.base, follow).await;
    assert_eq!(final_state(&second), "TASK_STATE_COMPLETED");
    let messages = fake.requests()[1]["messages"].clone();
    let texts: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    let joined = texts.join("|");
    let asked = joined
        .find("Who wrote the first program?")
        .expect("the first question");
    let answered = joined.find("Ada Lovelace wrote").expect("the first answer");
    let now = joined.find("When?").expect("the new question");
    assert!(asked < answered && answered < now, "{joined}");
}

/// A key given to a model never appears in logs, errors, the task or the card.
#[tokio::test]
async fn keys_never_leak() {
    let (fake, model) = openai().await;
    let (logs, _guard) = capture_logs();
    fake.push(Reply::Status {
        status: 401,
        headers: vec![],
        body: format!("{{\"error\": {{\"message\": \"Incorrect API key provided: {KEY}\"}}}}"),
    });
    let server = serve(AgentService::builder(writer(model))).await;
    let events = stream_message(&server.base, user_text("hi")).await;
    assert_eq!(final_state(&events), "TASK_STATE_FAILED");
    let task = get_task(&server.base, &stream_task_id(&events)).await;
    assert!(status_text(&task).contains("***"), "{task}");
    let card = public_card(&server.base).await;
    for (what, text) in [
        ("task", task.to_string()),
        ("events", format!("{events:?}")),
        ("card", card.to_string()),
        ("logs", logs.text()),
    ] {
        assert!(!text.contains(KEY), "the key is in the {what}: {text}");
    }
    // It did go to the model, as a bearer token.
    let headers = &fake.request_headers()[0];
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == &format!("Bearer {KEY}"))
    );
}

/// A tool the model calls runs inside the task, and its answer goes back to the model.
#[tokio::test]
async fn tool_calls_run_and_their_answers_go_back() {
    let (fake, model) = openai().await;
    let clock = a2a_kit::llm::FnTool::new(
        "clock",
        "The time",
        json!({"type": "object", "properties": {"zone": {"type": "string"}}}),
        |ctx, args| async move {
            ctx.status("reading the clock").await?;
            Ok(format!("12:00 in {}", args["zone"].as_str().unwrap_or("?")))
        },
    );
    fake.push(Reply::Steps(vec![tool(
        "c1",
        "clock",
        &["{\"zone\": ", "\"UTC\"}"],
    )]));
    fake.push(Reply::Steps(vec![text("It is noon.")]));
    let agent = Writer {
        tools: vec![Arc::new(clock)],
        ..writer(model)
    };
    let server = serve(AgentService::builder(agent)).await;
    let events = stream_message(&server.base, user_text("what time is it?")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    assert_eq!(text_closed(&events).0, "It is noon.");
    let second = fake.requests()[1]["messages"].to_string();
    assert!(second.contains("12:00 in UTC"), "{second}");
    let task = get_task(&server.base, &stream_task_id(&events)).await;
    assert_eq!(task["metadata"][USAGE_KEY]["calls"], 2);
    assert_eq!(task["metadata"][USAGE_KEY]["inputTokens"], 14);
}

/// With a durable store, tokens arriving close together are written as fewer, larger chunks
/// (each piece still once): the store writes per chunk, not per token.
#[tokio::test]
async fn a_durable_store_gets_coalesced_chunks() {
    let (fake, model) = openai().await;
    let mut steps = Vec::new();
    let mut expected = String::new();
    for i in 0..60 {
        let piece = format!("t{i} ");
        expected.push_str(&piece);
        steps.push(text(&piece));
        steps.push(Step::Delay(Duration::from_millis(2)));
    }
    fake.push(Reply::Steps(steps));
    let dir = std::env::temp_dir().join(format!("a2a-llm-{}", uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = a2a_kit::store::SqliteTaskManager::open(dir.join("tasks.db"))
        .await
        .unwrap();
    let server = serve(AgentService::builder(writer(model)).task_manager(store)).await;
    let events = stream_message(&server.base, user_text("count")).await;
    assert_eq!(final_state(&events), "TASK_STATE_COMPLETED", "{events:?}");
    let (text, closed) = text_closed(&events);
    assert_eq!(text, expected);
    assert!(closed);
    let chunks = events
        .iter()
        .filter(|e| e.get("artifactUpdate").is_some())
        .count();
    assert!(chunks < 30, "60 tokens 2 ms apart in {chunks} chunks");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
