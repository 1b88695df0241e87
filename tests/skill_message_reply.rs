//! `#[skill(message)]`: a skill that answers with a direct Message (no task) whatever it
//! returns, over real HTTP in both bindings: its reply, its card entry, and what happens when
//! it reaches for something only a task has (a question, an artifact, an interrupted
//! outcome, no content, a follow-up naming a task).

use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_kit::skill::MESSAGE_REPLY_EXTENSION;
use a2a_tests::*;
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Serialize, schemars::JsonSchema)]
struct Summary {
    words: usize,
}

struct Replier;

/// Answers with Messages, and tries what a Message cannot do.
#[a2a_agent]
impl Replier {
    /// Greet by name.
    #[skill(message, default)]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }

    /// Count the words, as data.
    #[skill(message)]
    async fn summary(&self, Text(t): Text) -> Data<Summary> {
        Data(Summary {
            words: t.split_whitespace().count(),
        })
    }

    /// Report progress (no task shows it), then answer.
    #[skill(message)]
    async fn progress(&self, ctx: TaskContext) -> Result<String, SkillError> {
        ctx.status("thinking").await?;
        Ok("done".into())
    }

    /// Ask a question: a Message cannot wait for the reply.
    #[skill(message)]
    async fn asks(&self, ctx: TaskContext) -> Result<String, SkillError> {
        let Text(city) = ctx.ask("Which city?").await?;
        Ok(city)
    }

    /// Write an artifact: a Message has none.
    #[skill(message)]
    async fn writes(&self, ctx: TaskContext) -> Result<String, SkillError> {
        let mut writer = ctx.artifact_writer("notes");
        writer.write("a chunk").await?;
        Ok("written".into())
    }

    /// End INPUT_REQUIRED: a Message cannot.
    #[skill(message)]
    async fn interrupts(&self) -> Outcome {
        Outcome::input_required("Which city?")
    }

    /// Answer with no content.
    #[skill(message)]
    async fn empty(&self) -> Outcome {
        Outcome::done()
    }

    /// Reject: kept as a rejection.
    #[skill(message)]
    async fn refuses(&self) -> Result<String, SkillError> {
        Err(SkillError::rejected("not today"))
    }

    /// An ordinary skill, answering with a task.
    #[skill]
    async fn tracked(&self, Text(t): Text) -> String {
        t
    }
}

/// SendMessage of `message` over one binding; the response's payload (`result` in JSON-RPC).
async fn send_over(base: &str, rest: bool, message: Value) -> Value {
    let v: Value = send_message(base, rest, message, None)
        .await
        .json()
        .await
        .expect("JSON");
    if rest { v } else { v["result"].clone() }
}

/// The error of a SendMessage over one binding: (JSON-RPC code or HTTP+JSON status, message).
async fn send_error_over(base: &str, rest: bool, message: Value) -> (i64, String) {
    let resp = send_message(base, rest, message, None).await;
    let status = resp.status().as_u16();
    let v: Value = resp.json().await.expect("JSON");
    let code = if rest {
        assert_eq!(v["error"]["code"], status, "{v}");
        i64::from(status)
    } else {
        v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {v}"))
    };
    (
        code,
        v["error"]["message"].as_str().unwrap_or("").to_string(),
    )
}

fn failed_reason(task: &Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn replies_are_messages_in_both_bindings() {
    let s = serve(AgentService::builder(Replier)).await;
    for rest in [false, true] {
        let r = send_over(&s.base, rest, user_text("Ada")).await;
        assert_eq!(r["message"]["parts"][0]["text"], "Hello, Ada!", "{r}");
        assert_eq!(r["message"]["role"], "ROLE_AGENT");
        assert!(r["message"]["contextId"].is_string(), "{r}");
        assert!(r["message"].get("taskId").is_none(), "{r}");

        let r = send_over(&s.base, rest, to_skill("summary", "one two three")).await;
        assert_eq!(r["message"]["parts"][0]["data"], json!({"words": 3}), "{r}");

        // Progress has no task to show on: it is dropped, and the answer comes.
        let r = send_over(&s.base, rest, to_skill("progress", "go")).await;
        assert_eq!(r["message"]["parts"][0]["text"], "done", "{r}");
        assert_eq!(r["message"]["parts"].as_array().unwrap().len(), 1, "{r}");
    }
    let list = rpc(&s.base, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 0, "no task: {list}");

    // An ordinary skill of the same agent still answers with a task.
    let r = send_over(&s.base, false, to_skill("tracked", "kept")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
}

#[tokio::test]
async fn streamed_replies_are_one_message() {
    let s = serve(AgentService::builder(Replier)).await;
    let events = stream_message(&s.base, user_text("Ada")).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["message"]["parts"][0]["text"], "Hello, Ada!");

    let resp = client()
        .post(format!("{}/message:stream", s.base))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": to_skill("summary", "a b")}))
        .send()
        .await
        .unwrap();
    let events = read_sse(resp, 10).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].data["message"]["parts"][0]["data"],
        json!({"words": 2})
    );
}

#[tokio::test]
async fn the_card_names_the_skills_that_answer_with_a_message() {
    let s = serve(AgentService::builder(Replier)).await;
    let card = public_card(&s.base).await;
    let ext = card["capabilities"]["extensions"]
        .as_array()
        .expect("extensions")
        .iter()
        .find(|e| e["uri"] == MESSAGE_REPLY_EXTENSION)
        .unwrap_or_else(|| panic!("the message-reply extension: {card}"));
    assert_eq!(
        ext["params"]["skills"],
        json!([
            "greet",
            "summary",
            "progress",
            "asks",
            "writes",
            "interrupts",
            "empty",
            "refuses"
        ]),
        "every message skill, and not `tracked`"
    );
    assert!(ext.get("required").is_none_or(|r| r == false), "{ext}");
    // The skills' own entries are plain AgentSkills, their modes from their types.
    let summary = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "summary")
        .unwrap();
    assert_eq!(summary["outputModes"], json!(["application/json"]));

    // An agent without one publishes no such extension.
    struct Plain;
    /// Tasks only.
    #[a2a_agent]
    impl Plain {
        /// Echo.
        #[skill]
        async fn echo(&self, Text(t): Text) -> String {
            t
        }
    }
    let card = Plain::agent_card("http://x");
    assert!(
        card.capabilities
            .extensions
            .iter()
            .all(|e| e.uri.as_deref() != Some(MESSAGE_REPLY_EXTENSION))
    );
}

/// What needs a task fails the skill, saying why; the failure is recorded as one task (so it
/// can be read), FAILED, in both bindings.
#[tokio::test]
async fn what_needs_a_task_fails_with_a_reason() {
    let s = serve(AgentService::builder(Replier)).await;
    let cases = [
        (
            "asks",
            "skill `asks` answers with a Message, so it cannot ask for input",
        ),
        (
            "writes",
            "skill `writes` answers with a Message, which has no artifacts",
        ),
        (
            "interrupts",
            "cannot end INPUT_REQUIRED: a question needs a task",
        ),
        (
            "empty",
            "returned no content: a Message holds at least one part",
        ),
    ];
    for rest in [false, true] {
        for (skill, why) in cases {
            let r = send_over(&s.base, rest, to_skill(skill, "x")).await;
            assert_eq!(
                r["task"]["status"]["state"], "TASK_STATE_FAILED",
                "{skill}: {r}"
            );
            let reason = failed_reason(&r["task"]);
            assert!(reason.contains(why), "{skill}: {reason}");
            assert!(r["task"]["artifacts"].is_null(), "nothing written: {r}");
        }
        let r = send_over(&s.base, rest, to_skill("refuses", "x")).await;
        assert_eq!(r["task"]["status"]["state"], "TASK_STATE_REJECTED", "{r}");
        assert_eq!(failed_reason(&r["task"]), "not today");
    }

    // Streamed, such a failure is the task and its FAILED state, then the stream closes.
    let events = stream_message(&s.base, to_skill("asks", "x")).await;
    assert_eq!(final_state(&events), "TASK_STATE_FAILED", "{events:?}");
    assert!(
        events.iter().all(|e| e.get("message").is_none()),
        "{events:?}"
    );
}

/// A follow-up naming a task: a message skill leaves no task to continue (its only tasks are
/// failures, which are terminal), and an id that names none is TaskNotFound.
#[tokio::test]
async fn follow_ups_naming_a_task_are_refused() {
    let s = serve(AgentService::builder(Replier)).await;
    let failed = send_over(&s.base, false, to_skill("asks", "x")).await;
    let task_id = failed["task"]["id"]
        .as_str()
        .expect("a task id")
        .to_string();
    for rest in [false, true] {
        let mut reply = user_text("Lisbon");
        reply["taskId"] = json!(task_id);
        let (code, message) = send_error_over(&s.base, rest, reply).await;
        assert_eq!(code, if rest { 400 } else { -32004 }, "{message}");
        assert!(message.contains("cannot take more messages"), "{message}");

        let mut unknown = user_text("Lisbon");
        unknown["taskId"] = json!("no-such-task");
        let (code, message) = send_error_over(&s.base, rest, unknown).await;
        assert_eq!(code, if rest { 404 } else { -32001 }, "{message}");
    }

    // A Message reply names no task; the next message in its context is a new call.
    let first = send_over(&s.base, false, user_text("Ada")).await;
    let context = first["message"]["contextId"].clone();
    let mut next = user_text("Grace");
    next["contextId"] = context.clone();
    let second = send_over(&s.base, true, next).await;
    assert_eq!(second["message"]["parts"][0]["text"], "Hello, Grace!");
    assert_eq!(second["message"]["contextId"], context);
}
