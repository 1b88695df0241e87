//! The official clients call every skill of every example agent (examples/src: hello, travel,
//! workshop, streaming, worker, planner, push_worker, conformance, llm_agent, llm_orchestrator) over
//! JSON-RPC and over gRPC, and each reply is checked:
//! the Python `a2a-sdk` 1.3.0 (PyPI, with its `grpc` extra) and `@a2a-js/sdk` 1.3.0 (npm, with
//! `@grpc/grpc-js` and `@bufbuild/protobuf`), pinned and installed from the registries on first
//! use under the target directory. Over gRPC each SDK uses its own gRPC transport, picked from
//! the card's `GRPC` interface (`host:port`, the agent's listener speaking h2c); the cards are
//! read over HTTP whatever the binding (A2A has no gRPC method for the public card). Data
//! skills get a data part built the way each SDK's users build one; the streaming skill is
//! called through the streaming API; skills that ask a question get their answer on the same
//! task.
//!
//! The agents run in-process on random ports, the planner delegating to the worker; the
//! model-driven ones on a scripted model server (support_model.rs), the orchestrator asking
//! the `llm_agent` through its tool. Which skills there are comes from the agents' own cards:
//! a skill added to an example without a call here fails the test.
//!
//! A client is skipped, with a printed note, only when its toolchain is missing (`python3 -m
//! venv`, or `node` >= 20 with `npm`), and never in CI (`CI` set: a missing toolchain fails);
//! when present, a failed install from the registries fails the test.

#[path = "support_python_sdk.rs"]
mod python_sdk;

#[path = "support_js_sdk.rs"]
mod js_sdk;

#[path = "support_model.rs"]
mod support_model;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use a2a_examples::{
    conformance, hello, llm_agent, llm_orchestrator, planner, push_worker, streaming, travel,
    worker, workshop,
};
use a2a_kit::server::AgentServiceBuilder;
use a2a_tests::{TestServer, serve};
use serde_json::{Value, json};
use support_model::{FakeModel, Reply, dynamic, text, tool};

/// The bindings every call goes over, as `(script argument, the card's protocolBinding)`.
const BINDINGS: &[(&str, &str)] = &[("jsonrpc", "JSONRPC"), ("grpc", "GRPC")];

/// One script run must finish within this.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// The model behind the model-driven examples: each of their prompts gets its scripted
/// answer; the orchestrator first asks the writer (`llm_agent`, through its `ask_writer`
/// tool), then says what it wrote.
fn scripted_model(request: &Value) -> Reply {
    let body = request.to_string();
    let has = |s: &str| body.contains(s);
    let tool_result = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    if has("You coordinate other agents") {
        if !tool_result {
            return Reply::Steps(vec![tool(
                "call-1",
                "ask_writer",
                &[r#"{"message": "Write a line about the sea"}"#],
            )]);
        }
        let wrote = if has(WRITTEN) { WRITTEN } else { "nothing" };
        return Reply::Steps(vec![text(&format!("The writer wrote: {wrote}"))]);
    }
    if has("Summarize the user's text") {
        return Reply::Steps(vec![text(SUMMARY)]);
    }
    if has("You are a precise, friendly writer") {
        return Reply::Steps(vec![text(WRITTEN)]);
    }
    // The writer's router (a message without a skill, as the orchestrator's tool sends):
    // no route, so the routing rules pick the default skill; the narrator: a status line.
    Reply::Steps(vec![text("Working on it")])
}

/// What the scripted model writes for `llm_agent`'s `write` and `summarize`.
const WRITTEN: &str = "A written answer.";
const SUMMARY: &str = "A short summary.";

/// The example agents, each on its own port: `(name, server, the skill ids its card lists)`,
/// and the model server the model-driven ones use.
async fn example_agents() -> (Vec<(&'static str, TestServer, Vec<String>)>, FakeModel) {
    let fake = FakeModel::start().await;
    fake.set_default(dynamic(scripted_model));
    let model = a2a_kit::llm::Model::openai_compatible(fake.openai_url(), "", "scripted");
    let step = Duration::from_millis(50);
    let worker = serve(worker::a2a_with(step)).await;
    let writer = serve(llm_agent::a2a(Some(model.clone()), true)).await;
    let builders: Vec<(&'static str, AgentServiceBuilder)> = vec![
        ("hello", hello::a2a()),
        ("travel", travel::a2a()),
        (
            "workshop",
            workshop::a2a_with(workshop::WorkshopAgent::new(step), Duration::from_secs(60)),
        ),
        ("streaming", streaming::a2a()),
        ("planner", planner::a2a(&worker.base)),
        (
            "push_worker",
            push_worker::a2a(step, push_worker::push_config(false)),
        ),
        (
            "conformance",
            conformance::a2a_with(
                conformance::ConformanceAgent::default(),
                &conformance::ConformanceFlags::default(),
            ),
        ),
        (
            "llm_orchestrator",
            llm_orchestrator::a2a(Some(model), vec![writer.base.clone()], true),
        ),
    ];
    let mut servers = vec![("worker", worker), ("llm_agent", writer)];
    for (name, builder) in builders {
        servers.push((name, serve(builder).await));
    }
    let mut agents = Vec::new();
    for (name, server) in servers {
        let card: Value = a2a_tests::client()
            .get(format!("{}/.well-known/agent-card.json", server.base))
            .send()
            .await
            .expect("the card")
            .json()
            .await
            .expect("a JSON card");
        let skills = card["skills"]
            .as_array()
            .expect("skills")
            .iter()
            .map(|s| s["id"].as_str().expect("a skill id").to_string())
            .collect();
        agents.push((name, server, skills));
    }
    (agents, fake)
}

/// Every call the clients make: one or more per skill.
fn calls() -> Value {
    json!([
        {"agent": "hello", "skill": "greet", "text": "Alice"},
        {"agent": "travel", "skill": "book-flight",
         "data": {"from": "LIS", "to": "AMS", "date": "2026-12-01", "passengers": 2}},
        {"agent": "travel", "skill": "convert", "data": {"amount": 100, "from": "EUR", "to": "USD"}},
        {"agent": "travel", "skill": "suggest", "text": "somewhere warm in winter"},
        {"agent": "workshop", "skill": "build", "text": "a stool", "reply": "oak"},
        {"agent": "workshop", "skill": "quote", "data": {"thing": "stool", "quantity": 2, "finish": "oak"}},
        {"agent": "streaming", "skill": "count", "text": "4", "stream": true},
        {"agent": "worker", "skill": "work", "text": "write the launch announcement"},
        {"agent": "worker", "skill": "clarify", "text": "a product launch", "reply": "engineers"},
        {"agent": "planner", "skill": "plan", "text": "launch a newsletter"},
        {"agent": "planner", "skill": "brief", "text": "a product launch", "reply": "engineers"},
        {"agent": "push_worker", "skill": "summarise", "text": "The quick brown fox"},
        {"agent": "conformance", "skill": "tck", "text": "hi", "message_id": "tck-complete-task"},
        {"agent": "conformance", "skill": "respond", "text": "hi", "message_id": "tck-message-response"},
        {"agent": "llm_agent", "skill": "write", "text": "Write a line about the sea"},
        {"agent": "llm_agent", "skill": "summarize", "text": "Summarize: the sea is large and deep."},
        {"agent": "llm_orchestrator", "skill": "orchestrate", "text": "Ask the writer for a line about the sea"},
    ])
}

/// Why a call's reply is wrong, if it is.
fn check(agent: &str, skill: &str, r: &Value) -> Result<(), String> {
    if let Some(e) = r.get("error") {
        return Err(format!("the client raised {e}"));
    }
    let text = r["text"].as_str().unwrap_or_default();
    let status = r["status"].as_str().unwrap_or_default();
    let state = r["state"].as_str().unwrap_or_default();
    let completed = r["kind"] == "task" && state == "TASK_STATE_COMPLETED";
    let data = &r["data"][0];
    let ok = match (agent, skill) {
        // A direct message, no task (`#[skill(message)]`).
        ("hello", "greet") => r["kind"] == "message" && text == "Hello, Alice!",
        ("push_worker", "summarise") => completed && text == "4 word(s), starting with \"The\"",
        // The SDKs send a dict's numbers as doubles (`2.0`): the u8 field still books.
        ("travel", "book-flight") => {
            completed
                && data["route"] == "LIS-AMS"
                && data["price_eur"].as_f64() == Some(178.0)
                && data["passengers"].as_f64() == Some(2.0)
                && data["confirmation"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("A2A"))
        }
        ("travel", "convert") => {
            completed && data["amount"].as_f64() == Some(108.0) && data["currency"] == "USD"
        }
        ("travel", "suggest") => completed && text.contains("Lisbon"),
        ("workshop", "build") => {
            r["asked_state"] == "TASK_STATE_INPUT_REQUIRED"
                && r["asked"]
                    .as_str()
                    .is_some_and(|q| q.contains("Which finish for a stool"))
                && completed
                && text == "1. cut the parts\n2. sand them\n3. assemble\n4. apply the oak finish\n"
                && status == "Done: a stool, finished in oak."
        }
        // The SDKs send numbers as doubles (`2.0`): the u8 quantity still quotes.
        ("workshop", "quote") => {
            completed
                && data["thing"] == "stool"
                && data["finish"] == "oak"
                && data["price_eur"].as_f64() == Some(360.0)
                && data["days"].as_f64() == Some(7.0)
        }
        // Streamed: one chunk a number, then the closing chunk.
        ("streaming", "count") => {
            completed && text == "1\n2\n3\n4\n" && r["chunks"].as_u64().is_some_and(|n| n >= 4)
        }
        ("worker", "work") => {
            completed
                && text
                    == "1. research: write the launch announcement\n2. draft: write the launch announcement\n3. polish: write the launch announcement\n"
        }
        ("worker", "clarify") | ("planner", "brief") => {
            r["asked_state"] == "TASK_STATE_INPUT_REQUIRED"
                && r["asked"]
                    .as_str()
                    .is_some_and(|q| q.contains("Who is the audience for a product launch?"))
                && completed
                && (text == "Brief: a product launch for engineers."
                    || status == "Brief: a product launch for engineers.")
        }
        // The worker's report, forwarded, and the planner's summary.
        ("planner", "plan") => {
            completed
                && text.contains("3. polish: launch a newsletter")
                && text.contains("Plan for \"launch a newsletter\" carried out by the worker")
        }
        ("conformance", "tck") => {
            completed && (text == "Hello from TCK" || status == "Hello from TCK")
        }
        ("conformance", "respond") => r["kind"] == "message" && text == "Direct message response",
        // The model's answer, streamed into the skill's artifact.
        ("llm_agent", "write") => completed && text == WRITTEN,
        ("llm_agent", "summarize") => completed && text == SUMMARY,
        // The orchestrator asked the writer through its tool and wrote what it answered.
        ("llm_orchestrator", "orchestrate") => {
            completed && text == format!("The writer wrote: {WRITTEN}")
        }
        _ => return Err("no check for this skill: add one".into()),
    };
    if ok {
        Ok(())
    } else {
        Err("unexpected reply".into())
    }
}

/// Run a client script; its JSON summary (last stdout line), or what went wrong.
async fn run_script(mut cmd: Command, label: &str) -> Result<Value, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("interop-examples")
        .join(format!("{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the run directory");
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    // Output goes to files, so a chatty child can never block on a full pipe.
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("start the {label} client: {e}"));
    let mut child = python_sdk::ChildGuard(child);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("poll the script") {
            break Some(status);
        }
        if start.elapsed() > RUN_TIMEOUT {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(child);
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let output = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    match status {
        None => Err(format!("took more than {RUN_TIMEOUT:?}\n{output}")),
        Some(s) if !s.success() => Err(format!("exited with {s}\n{output}")),
        Some(_) => serde_json::from_str(stdout.lines().last().unwrap_or(""))
            .map_err(|e| format!("printed no JSON summary ({e})\n{output}")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn official_clients_call_every_example_skill() {
    let (py, js) = tokio::join!(
        tokio::task::spawn_blocking(python_sdk::python),
        tokio::task::spawn_blocking(js_sdk::js_dir)
    );
    let (py, js) = (py.expect("python setup"), js.expect("npm setup"));
    if py.is_none() && js.is_none() {
        return;
    }
    let (agents, _model) = example_agents().await;
    let urls: serde_json::Map<String, Value> = agents
        .iter()
        .map(|(name, server, _)| (name.to_string(), json!(server.base)))
        .collect();
    let urls = Value::Object(urls).to_string();
    let calls = calls();

    // Every skill of every agent has a call.
    let called: Vec<(String, String)> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["agent"].as_str().unwrap().to_string(),
                c["skill"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (name, _, skills) in &agents {
        for skill in skills {
            assert!(
                called.contains(&(name.to_string(), skill.clone())),
                "the {name} example's skill `{skill}` is not called: add it to calls()"
            );
        }
    }

    // Every agent's card lists its gRPC interface on its own listener.
    for (name, server, _) in &agents {
        a2a_tests::assert_card_lists_grpc(&server.base, &format!("the {name} example")).await;
    }

    let calls_arg = calls.to_string();
    let mut runs = Vec::new();
    for &(binding, protocol) in BINDINGS {
        if let Some(py) = &py {
            let mut cmd = Command::new(py);
            cmd.arg(python_sdk::script("examples_client.py"))
                .args([&urls, &calls_arg, binding])
                .env("PYTHONDONTWRITEBYTECODE", "1");
            runs.push((format!("python-{binding}"), protocol, cmd));
        }
        if let Some(js) = &js {
            let mut cmd = Command::new("node");
            cmd.arg(js.join("js_examples_client.mjs"))
                .current_dir(js)
                .args([&urls, &calls_arg, binding]);
            runs.push((format!("js-{binding}"), protocol, cmd));
        }
    }
    let labels: Vec<(String, &str)> = runs.iter().map(|(l, p, _)| (l.clone(), *p)).collect();
    let outcomes = futures::future::join_all(
        runs.into_iter()
            .map(|(label, _, cmd)| async move { run_script(cmd, &label).await }),
    )
    .await;

    let mut failures = Vec::new();
    let mut passed = Vec::new();
    for ((label, protocol), outcome) in labels.iter().zip(outcomes) {
        let summary = match outcome {
            Ok(summary) => summary,
            Err(e) => {
                failures.push(format!("{label}: the client script failed: {e}"));
                continue;
            }
        };
        // The SDK picked the binding's transport for every agent.
        let want = if label.starts_with("python") {
            match *protocol {
                "GRPC" => "GrpcTransport",
                _ => "JsonRpcTransport",
            }
        } else {
            protocol
        };
        let transports = summary["transports"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if transports.len() != agents.len() || transports.values().any(|t| t != want) {
            failures.push(format!(
                "{label}: the client did not use {want} for every agent: {}",
                summary["transports"]
            ));
        }
        let results = summary["calls"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            results.len(),
            called.len(),
            "{label}: one result per call: {summary}"
        );
        let mut ok = 0;
        for ((agent, skill), r) in called.iter().zip(&results) {
            match check(agent, skill, r) {
                Ok(()) => {
                    ok += 1;
                    println!("{label}: {agent} {skill}: ok");
                }
                Err(why) => failures.push(format!(
                    "{label}: {agent} {skill}: {why}:\n{}",
                    serde_json::to_string_pretty(r).unwrap()
                )),
            }
        }
        if label.starts_with("python") {
            let parsed = &summary["strict"]["parsed"];
            assert!(
                parsed["SendMessageResponse"].as_i64().unwrap_or(0) > 0
                    && parsed["AgentCard"].as_i64().unwrap_or(0) > 0,
                "the Python run parsed every response strictly: {parsed}"
            );
        }
        if let Some(violations) = summary["strict"]["violations"].as_array()
            && !violations.is_empty()
        {
            failures.push(format!(
                "{label}: wire deviations found by strict checking (ProtoJSON over HTTP, \
                 unknown fields and error statuses over gRPC):\n{}",
                serde_json::to_string_pretty(violations).unwrap()
            ));
        }
        passed.push(format!("{label}: {ok}/{} calls ok", called.len()));
    }
    for line in &passed {
        println!("{line}");
    }
    assert!(
        failures.is_empty(),
        "{} official-client call(s) to the examples failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
