//! The model around the skills, against the scripted model server: the router (direct reply
//! or a skill, falling back to the rules), the narrator (cadence, no repeats, read back from
//! the store), and A2A agents as the model's tools (one remote context per conversation, the
//! remote task recorded, INPUT_REQUIRED answered through the model, cancel propagated).

#[path = "support_model.rs"]
mod support_model;

use std::sync::Arc;
use std::time::Duration;

use a2a_kit::client::{DELEGATIONS_KEY, RemoteAgent};
use a2a_kit::llm::{ARTIFACT_TOOL, AgentTool, Model, ModelNarrator, ModelRouter, ModelTool};
use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_tests::*;
use serde_json::{Value, json};
use support_model::{FakeModel, Reply, Step, dynamic, text, tool};

/// Two model skills, told apart by their artifact's name.
#[derive(Clone)]
struct Desk {
    model: Model,
    tools: Vec<Arc<dyn ModelTool>>,
    /// How long `write` works before the model run (so the narrator speaks).
    think: Duration,
}

/// Writes and summarizes.
#[a2a_agent(name = "Desk")]
impl Desk {
    /// Write what is asked.
    #[skill(default)]
    async fn write(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        tokio::select! {
            () = ctx.cancelled() => return Err(SkillError::Canceled),
            () = tokio::time::sleep(self.think) => {}
        }
        self.model
            .run(&ctx)
            .tools(self.tools.clone())
            .artifact("answer")
            .await
    }

    /// Work, ask which one, work again, then write.
    #[skill]
    async fn interview(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        tokio::time::sleep(self.think).await;
        let Text(_which) = ctx.ask("Which one?").await?;
        tokio::time::sleep(self.think).await;
        self.model.run(&ctx).artifact("answer").await
    }

    /// Summarize the text given.
    #[skill]
    async fn summarize(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        self.model.run(&ctx).artifact("summary").await
    }
}

fn desk(model: Model) -> Desk {
    Desk {
        model,
        tools: Vec::new(),
        think: Duration::ZERO,
    }
}

async fn fake() -> (FakeModel, Model) {
    let fake = FakeModel::start().await;
    let model = Model::openai_compatible(fake.openai_url(), "", "fake");
    (fake, model)
}

/// SendMessage of a user `message` over JSON-RPC; the `result` (an `error` fails the test).
async fn send_user_message(base: &str, message: Value) -> Value {
    let r = rpc(base, "SendMessage", json!({"message": message})).await;
    assert!(r.get("error").is_none(), "{r}");
    r["result"].clone()
}

#[tokio::test]
async fn the_router_answers_directly_picks_skills_and_falls_back_to_the_rules() {
    let (router_fake, router_model) = fake().await;
    let (skill_fake, skill_model) = fake().await;
    let server = serve(
        AgentService::builder(desk(skill_model)).skill_router(ModelRouter::new(router_model)),
    )
    .await;
    let (logs, _guard) = capture_logs();

    // A direct reply: a Message, no task.
    router_fake.push(Reply::Steps(vec![tool(
        "r1",
        "reply_directly",
        &["{\"text\": \"Hi! I write and summarize.\"}"],
    )]));
    let r = send_user_message(&server.base, user_text("hello")).await;
    assert_eq!(
        r["message"]["parts"][0]["text"], "Hi! I write and summarize.",
        "{r}"
    );
    assert!(r.get("task").is_none());
    let listed = rpc(&server.base, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"].as_array().unwrap().len(), 0);
    let asked = &router_fake.requests()[0];
    assert_eq!(asked["tool_choice"], "required");
    assert_eq!(
        asked["stream"],
        Value::Null,
        "the router's call is not streamed: {asked}"
    );
    let tools = asked["tools"].to_string();
    for name in ["\"write\"", "\"summarize\"", "\"reply_directly\""] {
        assert!(tools.contains(name), "{name} in {tools}");
    }

    // A skill, not the default one.
    router_fake.push(Reply::Steps(vec![tool("r2", "summarize", &["{}"])]));
    skill_fake.push(Reply::Steps(vec![text("Short.")]));
    let r = send_user_message(&server.base, user_text("summarize: a long text")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(r["task"]["artifacts"][0]["name"], "summary");

    // Nonsense (no tool call): the rules decide (the default skill), with a log line.
    router_fake.push(Reply::Steps(vec![text("I think maybe")]));
    skill_fake.push(Reply::Steps(vec![text("Done.")]));
    let r = send_user_message(&server.base, user_text("write a line")).await;
    assert_eq!(r["task"]["artifacts"][0]["name"], "answer", "{r}");
    assert!(logs.text().contains("called no tool"), "{}", logs.text());

    // A server that refuses a required tool choice (llama.cpp's answers 500) is asked again
    // with the choice left to the model, and is not asked "required" again.
    router_fake.push(Reply::Status {
        status: 500,
        headers: vec![],
        body: "{\"error\": {\"message\": \"\"}}".into(),
    });
    router_fake.push(Reply::Steps(vec![tool(
        "r3",
        "reply_directly",
        &["{\"text\": \"ok\"}"],
    )]));
    let r = send_user_message(&server.base, user_text("hi again")).await;
    assert_eq!(r["message"]["parts"][0]["text"], "ok", "{r}");
    router_fake.push(Reply::Steps(vec![tool(
        "r4",
        "reply_directly",
        &["{\"text\": \"ok\"}"],
    )]));
    send_user_message(&server.base, user_text("and again")).await;
    let requests = router_fake.requests();
    let choices: Vec<&Value> = requests.iter().map(|r| &r["tool_choice"]).collect();
    assert_eq!(choices[choices.len() - 2], "auto");
    assert_eq!(choices[choices.len() - 1], "auto");
}

#[tokio::test]
async fn the_narrator_speaks_short_lines_never_twice_and_stops_at_the_artifact() {
    let (narrator_fake, narrator_model) = fake().await;
    let (skill_fake, skill_model) = fake().await;
    narrator_fake.push(Reply::Steps(vec![text("\"Reading the question.\"")]));
    narrator_fake.push(Reply::Steps(vec![text("Reading the question")]));
    narrator_fake.push(Reply::Steps(vec![text(
        "Drafting an outline of the answer with every single detail there is",
    )]));
    narrator_fake.set_default(Reply::Steps(vec![text(
        "Drafting an outline of the answer",
    )]));
    skill_fake.push(Reply::Steps(vec![
        text("The "),
        Step::Delay(Duration::from_millis(400)),
        text("answer."),
    ]));
    let agent = Desk {
        think: Duration::from_millis(1200),
        ..desk(skill_model)
    };
    let server = serve(
        AgentService::builder(agent)
            .narrator(ModelNarrator::new(narrator_model).every(Duration::from_millis(150))),
    )
    .await;
    let events = stream_message(&server.base, user_text("explain tides")).await;
    let lines = narrated(&events);
    assert!(lines.len() >= 2, "{lines:?}");
    assert_eq!(lines[0], "Reading the question");
    for pair in lines.windows(2) {
        assert_ne!(pair[0], pair[1], "{lines:?}");
    }
    for line in &lines {
        assert!(line.chars().count() <= 50, "{line}");
    }
    let mut unique = lines.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), lines.len(), "a line repeated: {lines:?}");
    // Nothing narrated after the first artifact chunk.
    let first_chunk = events
        .iter()
        .position(|e| e.get("artifactUpdate").is_some())
        .expect("an artifact");
    assert!(narrated(&events[first_chunk..]).is_empty());
    // The cadence: asked a few times over 1.2 s, not in a loop.
    let asked = narrator_fake.requests().len();
    assert!((3..=12).contains(&asked), "asked {asked} times");
    // What the narrator was shown: the request and the lines so far.
    let last = narrator_fake.requests().last().unwrap()["messages"].to_string();
    assert!(
        last.contains("explain tides") && last.contains("Reading the question"),
        "{last}"
    );
}

/// The lines already said are read back from the store: after a restart (another service on
/// the same store) the same task's narrator does not say them again.
#[tokio::test]
async fn narration_is_not_repeated_after_a_restart() {
    let store: Arc<dyn a2a_kit::store::TaskManager> =
        Arc::new(a2a_kit::store::InMemoryTaskManager::default());
    let (narrator_fake, narrator_model) = fake().await;
    narrator_fake.set_default(Reply::Steps(vec![text("Looking things up")]));
    let (_skill_fake, skill_model) = fake().await;
    let build = |model: &Model, narrator: &Model| {
        AgentService::builder(Desk {
            think: Duration::from_millis(700),
            ..desk(model.clone())
        })
        .shared_task_manager(store.clone())
        .narrator(ModelNarrator::new(narrator.clone()).every(Duration::from_millis(100)))
    };
    let first = serve(build(&skill_model, &narrator_model)).await;
    let events = stream_message(&first.base, to_skill("interview", "find it")).await;
    assert_eq!(
        narrated(&events),
        vec!["Looking things up".to_string()],
        "{events:?}"
    );
    let id = events
        .iter()
        .find_map(|e| e["task"]["id"].as_str())
        .unwrap()
        .to_string();
    drop(first);
    // The next process runs the skill again for the reply; its narrator is shown the lines
    // stored with the task, and the line said before is not said again.
    let second = serve(build(&skill_model, &narrator_model)).await;
    narrator_fake.push(Reply::Steps(vec![text("Looking things up")]));
    narrator_fake.set_default(Reply::Steps(vec![text("Checking a second source")]));
    let mut reply = user_text("the blue one");
    reply["taskId"] = json!(id);
    let events = stream_message(&second.base, reply).await;
    let lines = narrated(&events);
    assert!(
        !lines.contains(&"Looking things up".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"Checking a second source".to_string()),
        "{lines:?}"
    );
}

/// A desk on a scripted model whose tools are `agent`'s skills.
async fn desk_using(agent: &RemoteAgent) -> (FakeModel, TestServer) {
    let tools: Vec<Arc<dyn ModelTool>> = AgentTool::for_skills(agent)
        .into_iter()
        .map(|t| Arc::new(t) as Arc<dyn ModelTool>)
        .collect();
    let (fake, model) = fake().await;
    let server = serve(AgentService::builder(Desk {
        tools,
        ..desk(model)
    }))
    .await;
    (fake, server)
}

/// The answer a tool call of the model produced, read from the next model request.
fn tool_answer(request: &Value) -> Value {
    let messages = request["messages"].as_array().expect("messages");
    let content = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].clone())
        .expect("a tool result");
    let text = match &content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<String>(),
        other => other.to_string(),
    };
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

fn delegations(task: &Value) -> Vec<Value> {
    task["metadata"][DELEGATIONS_KEY]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn a2a_agents_are_tools_with_one_remote_context_per_conversation() {
    let remote = serve_test_agent().await;
    let agent = RemoteAgent::connect(&remote.base).await.unwrap();
    let names: Vec<String> = AgentTool::for_skills(&agent)
        .iter()
        .map(|t| t.definition().name.as_str().to_string())
        .collect();
    assert!(names.contains(&"test_agent_echo".to_string()), "{names:?}");
    let (fake, server) = desk_using(&agent).await;

    // First conversation turn: the model asks the remote echo skill, then answers.
    fake.push(Reply::Steps(vec![tool(
        "t1",
        "test_agent_echo",
        &["{\"message\": \"ping\"}"],
    )]));
    fake.push(Reply::Steps(vec![text("It said ping.")]));
    let first = send_user_message(&server.base, user_text("ask the echo")).await["task"].clone();
    assert_eq!(first["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    let answer = tool_answer(&fake.requests()[1]);
    assert_eq!(answer["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert!(answer["artifacts"].to_string().contains("ping"), "{answer}");
    let d1 = delegations(&first);
    assert_eq!(d1.len(), 1, "{first}");
    assert_eq!(d1[0]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(d1[0]["agent"], "Test Agent");
    let remote_first = rpc(&remote.base, "GetTask", json!({"id": d1[0]["taskId"]})).await;
    assert_eq!(
        remote_first["result"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // Second turn of the same conversation: the same remote context.
    fake.push(Reply::Steps(vec![tool(
        "t2",
        "test_agent_echo",
        &["{\"message\": \"pong\"}"],
    )]));
    fake.push(Reply::Steps(vec![text("It said pong.")]));
    let mut follow = user_text("again");
    follow["contextId"] = first["contextId"].clone();
    let second = send_user_message(&server.base, follow).await["task"].clone();
    let d2 = delegations(&second);
    assert_eq!(d2.len(), 1, "{second}");
    assert_ne!(d2[0]["taskId"], d1[0]["taskId"]);
    assert_eq!(
        d2[0]["contextId"], d1[0]["contextId"],
        "one remote context per conversation"
    );

    // Another conversation: another remote context.
    fake.push(Reply::Steps(vec![tool(
        "t3",
        "test_agent_echo",
        &["{\"message\": \"x\"}"],
    )]));
    fake.push(Reply::Steps(vec![text("x")]));
    let other = send_user_message(&server.base, user_text("new chat")).await["task"].clone();
    assert_ne!(delegations(&other)[0]["contextId"], d1[0]["contextId"]);
}

#[tokio::test]
async fn a_remote_question_is_answered_through_the_model_on_the_same_task() {
    let remote = serve_test_agent().await;
    let agent = RemoteAgent::connect(&remote.base).await.unwrap();
    let (fake, server) = desk_using(&agent).await;
    fake.push(Reply::Steps(vec![tool(
        "t1",
        "test_agent_ask",
        &["{\"message\": \"hi\"}"],
    )]));
    // The model reads the question and the remote task id, and answers on that task.
    fake.push(dynamic(|request| {
        let answer = tool_answer(request);
        assert_eq!(answer["state"], "TASK_STATE_INPUT_REQUIRED", "{answer}");
        assert!(
            answer["question"]
                .as_str()
                .unwrap_or_default()
                .contains("name")
        );
        let args = json!({"message": "Ada", "taskId": answer["taskId"]}).to_string();
        Reply::Steps(vec![tool("t2", "test_agent_ask", &[&args])])
    }));
    fake.push(dynamic(|request| {
        let answer = tool_answer(request);
        assert_eq!(answer["state"], "TASK_STATE_COMPLETED", "{answer}");
        let said = answer["artifacts"][0]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Reply::Steps(vec![tool(
            "t3",
            ARTIFACT_TOOL,
            &[&json!({"content": said}).to_string()],
        )])
    }));
    let task =
        send_user_message(&server.base, user_text("greet Ada through the agent")).await["task"]
            .clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(stored_artifact_text(&task), "Hello, Ada");
    let d = delegations(&task);
    assert_eq!(
        d.len(),
        1,
        "the answer continued the same remote task: {task}"
    );
    assert_eq!(d[0]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn canceling_the_task_cancels_the_remote_one() {
    let remote = serve_test_agent().await;
    let agent = RemoteAgent::connect(&remote.base).await.unwrap();
    let (fake, server) = desk_using(&agent).await;
    fake.push(Reply::Steps(vec![tool(
        "t1",
        "test_agent_slow",
        &["{\"message\": \"600000\"}"],
    )]));
    let r = rpc(
        &server.base,
        "SendMessage",
        json!({"message": user_text("take your time"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let running = wait_task(&server.base, &id, |t| !delegations(t).is_empty()).await;
    let remote_id = delegations(&running)[0]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    wait_task(&remote.base, &remote_id, |t| {
        t["status"]["state"] == "TASK_STATE_WORKING"
    })
    .await;
    let canceled = rpc(&server.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    wait_task(&remote.base, &remote_id, |t| {
        t["status"]["state"] == "TASK_STATE_CANCELED"
    })
    .await;
}

/// The delegation helper itself keeps one remote context per conversation and records the
/// remote task on the delegating task.
#[tokio::test]
async fn delegation_keeps_the_remote_context_and_records_the_remote_task() {
    #[derive(Clone)]
    struct Planner {
        worker: RemoteAgent,
    }
    /// Delegates.
    #[a2a_agent(name = "Planner")]
    impl Planner {
        /// Hand the text to the worker's echo skill.
        #[skill(default)]
        async fn plan(&self, ctx: TaskContext, Text(t): Text) -> Result<Outcome, SkillError> {
            let request = a2a_kit::client::SendRequest::text(t).skill("echo");
            let result = self
                .worker
                .delegate(&ctx, request)
                .await
                .map_err(|e| SkillError::failed(e.to_string()))?;
            Ok(result.into_outcome())
        }
    }
    let remote = serve_test_agent().await;
    let worker = RemoteAgent::connect(&remote.base).await.unwrap();
    let server = serve(AgentService::builder(Planner { worker })).await;
    let first = send_user_message(&server.base, user_text("one")).await["task"].clone();
    let mut follow = user_text("two");
    follow["contextId"] = first["contextId"].clone();
    let second = send_user_message(&server.base, follow).await["task"].clone();
    let (d1, d2) = (delegations(&first), delegations(&second));
    assert_eq!(d1.len(), 1, "{first}");
    assert_eq!(d2.len(), 1, "{second}");
    assert_eq!(d1[0]["contextId"], d2[0]["contextId"]);
    assert_ne!(d1[0]["taskId"], d2[0]["taskId"]);
    assert_eq!(d2[0]["state"], "TASK_STATE_COMPLETED");
    assert!(d2[0]["url"].as_str().unwrap().starts_with(&remote.base));
}

/// A remote agent used as a tool without a stream: the message goes without waiting, with a
/// push config of this app's webhook, and the tool's answer comes from the notifications.
#[tokio::test]
async fn a_remote_agent_tool_answers_through_a_push_webhook() {
    use a2a_kit::client::DelegateOptions;
    use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookInbox, WebhookReceiver};
    let remote = serve(
        AgentService::builder(TestAgent)
            .push_notifications(true)
            .push_delivery(a2a_kit::push::PushConfig::default().allow_private_networks()),
    )
    .await;
    // This app's webhook.
    let (tokens, tasks) = (PushTokens::new(), RemoteTasks::new());
    let receiver = WebhookReceiver::new(tokens.clone()).store(tasks.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver.router::<()>("/hook")).await });
    let inbox = WebhookInbox::new(tokens, tasks.clone(), hook.clone());
    let agent = RemoteAgent::connect(&remote.base)
        .await
        .unwrap()
        .with_options(DelegateOptions {
            push: Some(inbox.into()),
            // Far longer than the test: the answer can only come through the webhook.
            push_fallback: Duration::from_secs(120),
            ..Default::default()
        });
    let (fake, server) = desk_using(&agent).await;
    fake.push(Reply::Steps(vec![tool(
        "t1",
        "test_agent_slow",
        &["{\"message\": \"300\"}"],
    )]));
    fake.push(Reply::Steps(vec![text("It slept.")]));
    let task = send_user_message(&server.base, user_text("nap")).await["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let answer = tool_answer(&fake.requests()[1]);
    assert_eq!(answer["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert!(
        answer["artifacts"].to_string().contains("slept 300"),
        "{answer}"
    );
    // The remote task was sent with this app's webhook, and the webhook heard it end.
    let remote_id = delegations(&task)[0]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let configs = rpc(
        &remote.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": remote_id}),
    )
    .await;
    assert_eq!(
        configs["result"]["configs"][0]["url"],
        hook.as_str(),
        "{configs}"
    );
    assert_eq!(
        tasks.get(&remote_id).await.unwrap().map(|t| t.status.state),
        Some(a2a_kit::protocol::TaskState::Completed)
    );
}

/// The same agent tool in a rig loop of one's own, outside any task.
#[tokio::test]
async fn an_agent_tool_is_also_a_rig_tool() {
    let remote = serve_test_agent().await;
    let agent = RemoteAgent::connect(&remote.base).await.unwrap();
    let echo = AgentTool::for_skills(&agent)
        .into_iter()
        .find(|t| t.definition().name.as_str() == "test_agent_echo")
        .expect("the echo skill's tool");
    let tool = echo.rig_tool();
    assert_eq!(tool.name().as_str(), "test_agent_echo");
    let out = tool
        .execute(json!({"message": "from rig"}))
        .await
        .expect("the call succeeds");
    let text = out.render();
    assert!(
        text.contains("from rig") && text.contains("TASK_STATE_COMPLETED"),
        "{text}"
    );
}
