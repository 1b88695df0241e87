//! The console in real browsers (Debian's headless Chromium and Firefox ESR over WebDriver),
//! each flow once in each (the Firefox run's test named `…_in_firefox`): the workshop
//! example run with `--console`, used as a person would. Run a skill from its form, answer its
//! question inline, watch narration and the artifact grow, cancel another run from its task
//! page with a push config to the console's inbox, read the task list, the event timeline
//! and the wire; then a broken data form, a failing skill and the agent going away
//! mid-stream, each a clear message on the page; and an agent behind API keys, whose console
//! shows a caller only their own tasks. Each view is checked for accessibility (axe-core). Screenshots go to `target/console-screenshots/`,
//! Firefox's named `firefox-…` (`A2A_UPDATE_CONSOLE_PICTURE=1` also copies Chromium's chat to
//! `docs/console.png`).

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Example;
use support::browser::{Browser, Engine};

const WORKSHOP: &str = env!("CARGO_BIN_EXE_workshop");

fn workshop(args: &[&str]) -> Example {
    let mut all = vec![
        "--bind",
        "127.0.0.1:0",
        "--console",
        "--push-webhooks",
        "loopback",
    ];
    all.extend_from_slice(args);
    Example::start(WORKSHOP, &all)
}

/// Save a screenshot named `name` (`firefox-NAME` from Firefox); its path.
async fn screenshot(b: &Browser, name: &str) -> PathBuf {
    match b.engine() {
        Engine::Chromium => b.screenshot(name).await,
        Engine::Firefox => b.screenshot(&format!("firefox-{name}")).await,
    }
}

/// No accessibility violation on the page as it is (axe-core, every rule it runs by default).
async fn accessible(b: &Browser, view: &str) {
    let found = support::a11y::violations(b).await;
    assert!(
        found.is_empty(),
        "the {view} view has accessibility violations:\n{}",
        found.join("\n")
    );
}

/// Load the console afresh (a new page, not only a new `#` view) at `view`.
async fn open_console(b: &Browser, agent: &Example, view: &str) {
    b.goto("about:blank").await;
    b.goto(&format!("{}/_console/#/{view}", agent.url)).await;
    b.wait_for_text("#agent-name", "Workshop").await;
}

async fn run_build(b: &Browser, what: &str) {
    b.click(".tabs a[data-view=skills]").await;
    b.fill(
        r#"section.skill[data-skill="build"] textarea[name="text"]"#,
        what,
    )
    .await;
    b.click(r#"section.skill[data-skill="build"] button[data-send="stream"]"#)
        .await;
}

#[tokio::test]
async fn run_answer_watch_cancel_and_read_the_wire() {
    run_answer_watch_cancel_and_read_the_wire_in(Engine::Chromium).await;
}

#[tokio::test]
async fn run_answer_watch_cancel_and_read_the_wire_in_firefox() {
    run_answer_watch_cancel_and_read_the_wire_in(Engine::Firefox).await;
}

async fn run_answer_watch_cancel_and_read_the_wire_in(engine: Engine) {
    let agent = workshop(&[]);
    let b = Browser::start_with(engine).await;

    // The card, rendered and raw, with its signature status.
    open_console(&b, &agent, "card").await;
    b.wait_for_text("#card-signature", "not signed").await;
    b.wait_for_text("#card-rendered", "Push notifications")
        .await;
    let raw = b
        .eval("return document.querySelector('#card-raw').textContent")
        .await;
    let card: Value = serde_json::from_str(raw.as_str().unwrap()).unwrap();
    assert_eq!(card["name"], "Workshop");
    screenshot(&b, "card").await;
    accessible(&b, "card").await;

    // Run `build` from its form; the question comes back inline; answer it.
    run_build(&b, "a bookshelf").await;
    b.wait_for_text(".task-block .question", "Which finish for a bookshelf")
        .await;
    screenshot(&b, "question").await;
    accessible(&b, "question").await;
    b.fill(".answer-form input[name=answer]", "oak").await;
    b.click(".answer-form button").await;
    // Narration apart from the answer; the artifact grows chunk by chunk.
    b.wait_for_text(
        ".task-block .narration li",
        "Gathering materials for a bookshelf in oak",
    )
    .await;
    let mut lengths = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        let text = b.last_text(".task-block .artifact-text").await;
        let lines = text.lines().count();
        if lengths.last() != Some(&lines) {
            lengths.push(lines);
        }
        if lines == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    assert!(
        lengths.iter().filter(|n| **n > 0).count() >= 3 && lengths.last() == Some(&4),
        "the artifact grew in steps: {lengths:?}"
    );
    b.wait_last(".task-block .answer", "Done: a bookshelf, finished in oak.")
        .await;
    b.wait_for(r#".task-block[data-state="completed"]"#).await;
    let narration = b.last_text(".task-block .narration").await;
    assert!(
        !narration.contains("Done:"),
        "the answer is not narration: {narration}"
    );
    let answer = b.last_text(".task-block .answer").await;
    assert!(
        !answer.contains("Gathering"),
        "narration is not the answer: {answer}"
    );
    accessible(&b, "chat").await;
    let shot = screenshot(&b, "chat").await;
    if engine == Engine::Chromium && std::env::var_os("A2A_UPDATE_CONSOLE_PICTURE").is_some() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/console.png");
        std::fs::copy(shot, docs).unwrap();
    }

    // Another run, left waiting for its answer: cancel it from its task page.
    run_build(&b, "a table").await;
    b.wait_last(".task-block .question", "Which finish for a table")
        .await;
    b.click(".tabs a[data-view=tasks]").await;
    let row = b
        .wait_for_text("#task-list tbody tr[data-task-id]", "input-required")
        .await;
    let waiting = row.attr("data-task-id").await.unwrap().unwrap();
    b.wait_for_text("#task-list tbody", "completed").await;
    screenshot(&b, "tasks").await;
    accessible(&b, "tasks").await;
    b.click(&format!(r#"tr[data-task-id="{waiting}"] a"#)).await;
    b.wait_for_text("#task-state", "input-required").await;
    b.wait_for("#task-timeline li[data-event-id]").await;
    // A push config to the console's own inbox; the cancel is delivered there.
    b.click("#push-add").await;
    b.wait_for_text("#push-configs li", "/_console/inbox").await;
    b.click("#task-cancel").await;
    b.wait_for_text("#task-state", "canceled").await;
    b.wait_for_text("#delivery-list li", "HTTP 204").await;
    b.wait_for_text("#delivery-list li", "canceled").await;
    screenshot(&b, "task").await;
    accessible(&b, "task").await;

    // The finished bookshelf's page replays its events with their SSE ids; resubscribing
    // after one of them replays what followed it.
    b.click(".tabs a[data-view=tasks]").await;
    let done = b
        .wait_for_text("#task-list tbody tr[data-task-id]", "completed")
        .await;
    let done = done.attr("data-task-id").await.unwrap().unwrap();
    b.click(&format!(r#"tr[data-task-id="{done}"] a"#)).await;
    b.wait_for_text("#task-timeline", "artifact build-log")
        .await;
    b.wait_for_text("#task-timeline", "completed").await;
    let ids: Vec<u64> = serde_json::from_value(
        b.eval("return [...document.querySelectorAll('#task-timeline li[data-event-id]')].map(li => Number(li.dataset.eventId))")
            .await,
    )
    .unwrap();
    assert!(
        ids.len() > 8 && ids.windows(2).all(|w| w[0] < w[1]),
        "{ids:?}"
    );
    let before = ids.len();
    b.click(r#"#task-timeline li[data-event-id="3"] .resume-from"#)
        .await;
    b.wait_for_text("#task-timeline", "resubscribed after event #3")
        .await;
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let n = b
            .eval("return document.querySelectorAll('#task-timeline li[data-event-id]').length")
            .await
            .as_u64()
            .unwrap() as usize;
        if n == before + (before - 3) {
            break;
        }
        assert!(
            Instant::now() < until,
            "replayed {} of {} events",
            n - before,
            before - 3
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The wire: every call, raw, with its curl.
    b.click(".tabs a[data-view=wire]").await;
    b.wait_for_text("#wire-log li.call summary", "SendStreamingMessage")
        .await;
    let call = b
        .eval("return [...document.querySelectorAll('#wire-log li.call')].find(li => li.querySelector('summary').innerText.includes('SendStreamingMessage')).dataset.call")
        .await;
    let call = format!(
        r#"#wire-log li.call[data-call="{}"]"#,
        call.as_str().unwrap()
    );
    b.click(&format!("{call} summary")).await;
    let curl = b
        .wait_for_text(&format!("{call} pre.curl"), "SendStreamingMessage")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        curl.starts_with("curl -sS -N -X POST") && curl.contains("-H 'A2A-Version: 1.0'"),
        "{curl}"
    );
    screenshot(&b, "wire").await;
    accessible(&b, "wire").await;
    b.close().await;
}

#[tokio::test]
async fn broken_input_a_failing_skill_and_the_agent_gone() {
    broken_input_a_failing_skill_and_the_agent_gone_in(Engine::Chromium).await;
}

#[tokio::test]
async fn broken_input_a_failing_skill_and_the_agent_gone_in_firefox() {
    broken_input_a_failing_skill_and_the_agent_gone_in(Engine::Firefox).await;
}

async fn broken_input_a_failing_skill_and_the_agent_gone_in(engine: Engine) {
    let agent = workshop(&[]);
    let b = Browser::start_with(engine).await;
    open_console(&b, &agent, "skills").await;
    let form = r#"form.skill-form[data-skill="quote"]"#;
    let calls = || async { b.text("#wire-count").await };
    let calls_before = calls().await;

    // Broken input: named per field, nothing sent.
    b.fill("#f-quote-thing", "chair").await;
    b.fill("#f-quote-quantity", "lots").await;
    b.click(&format!(r#"{form} button[data-send="stream"]"#))
        .await;
    b.wait_for_text(
        &format!("{form} .form-error"),
        "quantity: `lots` is not a number",
    )
    .await;
    b.wait_for_text(&format!("{form} .field-error"), "finish: required")
        .await;
    let invalid = b
        .eval("return document.querySelector('#f-quote-quantity').getAttribute('aria-invalid')")
        .await;
    assert_eq!(invalid, json!("true"));
    b.fill("#f-quote-quantity", "20").await;
    b.click(&format!(r#"{form} button[data-send="stream"]"#))
        .await;
    b.wait_for_text(
        &format!("{form} .form-error"),
        "quantity: must be at most 12, not 20",
    )
    .await;
    screenshot(&b, "broken-input").await;
    accessible(&b, "broken-input").await;
    assert_eq!(calls().await, calls_before, "no call for a broken form");

    // The agent's own check, past the form: raw JSON with a wrong type names the field.
    b.click(&format!("{form} details.raw summary")).await;
    b.fill(
        &format!("{form} textarea[name=raw-json]"),
        r#"{"thing": "chair", "quantity": "six", "finish": "oak"}"#,
    )
    .await;
    b.click(&format!(r#"{form} button[data-send="blocking"]"#))
        .await;
    b.wait_last(".task-block .error", "message.parts[0].data.quantity")
        .await;

    // A failing skill: its reason, shown as the failure it is.
    open_console(&b, &agent, "skills").await;
    b.fill("#f-quote-thing", "chair").await;
    b.fill("#f-quote-quantity", "6").await;
    b.wait_for("#f-quote-finish")
        .await
        .select_by_value("1")
        .await
        .unwrap();
    b.click(&format!(r#"{form} button[data-send="stream"]"#))
        .await;
    b.wait_last(
        ".task-block .error",
        "The task failed: not enough walnut veneer for 6 × chair: 4 in stock",
    )
    .await;
    b.wait_for(r#".task-block[data-state="failed"]"#).await;
    screenshot(&b, "failed-skill").await;

    // The agent goes away mid-stream.
    run_build(&b, "a cabinet").await;
    b.wait_for_text(".task-block .question", "Which finish for a cabinet")
        .await;
    b.fill(".answer-form input[name=answer]", "paint").await;
    b.click(".answer-form button").await;
    b.wait_last(
        ".task-block .narration",
        "Gathering materials for a cabinet",
    )
    .await;
    drop(agent);
    let shown = b.wait_last(".task-block .error", "broke off").await;
    assert!(shown.contains("resubscribe"), "{shown}");
    screenshot(&b, "agent-gone").await;
    b.close().await;
}

#[tokio::test]
async fn behind_api_keys_each_caller_sees_only_their_tasks() {
    behind_api_keys_each_caller_sees_only_their_tasks_in(Engine::Chromium).await;
}

#[tokio::test]
async fn behind_api_keys_each_caller_sees_only_their_tasks_in_firefox() {
    behind_api_keys_each_caller_sees_only_their_tasks_in(Engine::Firefox).await;
}

async fn behind_api_keys_each_caller_sees_only_their_tasks_in(engine: Engine) {
    let agent = workshop(&["--api-key", "alice-key", "--api-key", "bob-key"]);
    // Alice's task, made through the API.
    let alice_task: Value = reqwest::Client::new()
        .post(&agent.url)
        .header("A2A-Version", "1.0")
        .header("X-API-Key", "alice-key")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "a desk"}]}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let alice_task = alice_task["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let b = Browser::start_with(engine).await;
    // No key: the console says what the agent needs, and shows no task.
    open_console(&b, &agent, "tasks").await;
    b.wait_for_text(
        "#tasks-error",
        "needs authentication: enter your API key (X-API-Key)",
    )
    .await;
    let rows = b
        .eval("return document.querySelectorAll('#task-list tbody tr[data-task-id]').length")
        .await;
    assert_eq!(rows, json!(0));
    screenshot(&b, "auth-needed").await;
    // Bob's key: none of Alice's tasks, and hers is not found by id either.
    b.fill("#credential", "bob-key").await;
    b.click("#credential-save").await;
    b.wait_for_text("#task-list tbody", "No tasks yet").await;
    b.goto(&format!("{}/_console/#/task/{alice_task}", agent.url))
        .await;
    b.wait_for_text("#task-page .error", "not found").await;
    // Alice's key: her task.
    b.fill("#credential", "alice-key").await;
    b.click("#credential-save").await;
    b.wait_for_text("#task-state", "input-required").await;
    b.click(".tabs a[data-view=tasks]").await;
    b.wait_for(&format!(r#"#task-list tr[data-task-id="{alice_task}"]"#))
        .await;
    b.close().await;
}

#[tokio::test]
async fn a_remote_agents_console_through_the_proxy() {
    a_remote_agents_console_through_the_proxy_in(Engine::Chromium).await;
}

#[tokio::test]
async fn a_remote_agents_console_through_the_proxy_in_firefox() {
    a_remote_agents_console_through_the_proxy_in(Engine::Firefox).await;
}

async fn a_remote_agents_console_through_the_proxy_in(engine: Engine) {
    let agent = Example::start(WORKSHOP, &["--bind", "127.0.0.1:0"]);
    let console = a2a_kit_axum::console::Console::remote(&agent.url).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app: axum::Router = console.router();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let b = Browser::start_with(engine).await;
    b.goto(&format!("{base}/_console/#/chat")).await;
    b.wait_for_text("#agent-url", "through this console").await;
    b.fill("#chat-input", "a lamp").await;
    b.click("#chat-send").await;
    b.wait_for_text(".task-block .question", "Which finish for a lamp")
        .await;
    b.fill(".answer-form input[name=answer]", "walnut").await;
    b.click(".answer-form button").await;
    b.wait_last(".task-block .answer", "Done: a lamp, finished in walnut.")
        .await;
    screenshot(&b, "remote").await;
    b.close().await;
}

/// The header name a hostile (or careless) card gives its API key: legal in HTTP, and a
/// command substitution if a shell ever saw it unquoted.
const ODD_HEADER: &str = "X-Key`touch$IFS'pwned-by-card'`";

/// An agent another SDK might have built, served by hand: a tenant on its interface, an API
/// key in a header with an odd name, a skill whose input schema refers to itself, and SSE
/// written with CRLF line ends cut mid-line and between CR and LF. It records each call's
/// `tenant` and key.
async fn foreign_agent() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(Value, String)>>>,
) {
    use axum::body::Body;
    use axum::routing::{get, post};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let node = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object",
        "properties": {"name": {"type": "string"},
            "child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
        "required": ["name"]}}});
    let card = json!({
        "name": "Foreign Agent", "description": "Built elsewhere.", "version": "9",
        "supportedInterfaces": [{"url": base, "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0", "tenant": "acme"}],
        "capabilities": {"streaming": true, "extensions": [{
            "uri": "https://a2a-kit.dev/extensions/skill-schemas/v1",
            "params": {"skills": {"tree": {"input": node}}}}]},
        "securitySchemes": {"odd": {"apiKeySecurityScheme": {"location": "header", "name": ODD_HEADER}}},
        "securityRequirements": [{"schemes": {"odd": {}}}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "tree", "name": "Tree", "description": "Takes a tree.", "tags": []}],
    });
    let recorded = seen.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/",
            post(move |headers: axum::http::HeaderMap, axum::Json(call): axum::Json<Value>| {
                let recorded = recorded.clone();
                async move {
                    let key = headers
                        .get(ODD_HEADER.to_ascii_lowercase().as_str())
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    recorded.lock().unwrap().push((call["params"].clone(), key));
                    let id = call["id"].clone();
                    let event = |result: Value| {
                        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
                    };
                    let status = |state: &str, text: Option<&str>| {
                        let mut s = json!({"state": state});
                        if let Some(text) = text {
                            s["message"] = json!({"messageId": format!("m-{state}"), "role": "ROLE_AGENT", "parts": [{"text": text}]});
                        }
                        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": s}})
                    };
                    let art = |text: &str, append: bool, last: bool| json!({"artifactUpdate": {
                        "taskId": "t-1", "contextId": "c-1", "append": append, "lastChunk": last,
                        "artifact": {"artifactId": "a-1", "name": "greeting", "parts": [{"text": text}]}}});
                    let events = [
                        json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
                        status("TASK_STATE_WORKING", Some("thinking")),
                        art("hello ", false, false),
                        art("world", true, true),
                        status("TASK_STATE_COMPLETED", Some("done")),
                    ];
                    let mut text = String::new();
                    for (i, e) in events.iter().enumerate() {
                        text.push_str(&format!("id: {}\r\ndata: {}\r\n\r\n", i + 1, event(e.clone())));
                    }
                    // Cut after every CR (between CR and LF) and in the middle of lines.
                    let mut chunks: Vec<Result<String, std::io::Error>> = Vec::new();
                    let mut rest = text.as_str();
                    while !rest.is_empty() {
                        let cut = rest.find('\r').map_or(rest.len(), |i| i + 1).clamp(1, 17);
                        chunks.push(Ok(rest[..cut].to_string()));
                        rest = &rest[cut..];
                    }
                    let body = Body::from_stream(futures_stream(chunks));
                    axum::response::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(body)
                        .unwrap()
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

/// The chunks, each sent after a pause (so the browser reads them apart).
fn futures_stream(
    chunks: Vec<Result<String, std::io::Error>>,
) -> impl futures::Stream<Item = Result<String, std::io::Error>> {
    use futures::StreamExt as _;
    futures::stream::iter(chunks).then(|c| async move {
        tokio::time::sleep(Duration::from_millis(3)).await;
        c
    })
}

#[tokio::test]
async fn an_agent_from_elsewhere_with_odd_edges() {
    let (agent, seen) = foreign_agent().await;
    let console = a2a_kit_axum::console::Console::remote(&agent).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app: axum::Router = console.router();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let b = Browser::start().await;
    b.goto(&format!("{base}/_console/#/skills")).await;
    b.wait_for_text("#agent-name", "Foreign Agent").await;
    b.wait_for_text("#credential-label", "API key").await;
    b.fill("#credential", "s3cret").await;
    b.click("#credential-save").await;
    // A schema that refers to itself: a form a few levels deep, then a JSON box.
    b.wait_for(r#"form.skill-form[data-skill="tree"] fieldset"#)
        .await;
    let depth_box = b
        .eval(r#"return document.querySelectorAll('form.skill-form[data-skill="tree"] textarea[placeholder="JSON"]').length"#)
        .await;
    assert_eq!(depth_box, json!(1), "one JSON box where the form stops");

    // SSE with CRLF cut anywhere: every event arrives whole.
    b.click(".tabs a[data-view=chat]").await;
    b.fill("#chat-input", "hi").await;
    b.click("#chat-send").await;
    b.wait_for(r#".task-block[data-state="completed"]"#).await;
    assert_eq!(
        b.last_text(".task-block .artifact-text").await,
        "hello world"
    );
    assert_eq!(b.last_text(".task-block .narration").await, "thinking");
    assert_eq!(b.last_text(".task-block .answer").await, "done");
    {
        let seen = seen.lock().unwrap();
        let (params, key) = seen.last().expect("a call");
        assert_eq!(
            params["tenant"], "acme",
            "the interface's tenant is copied: {params}"
        );
        assert_eq!(key, "s3cret");
    }

    // The curl line quotes the card's header name: a shell runs no part of it.
    b.click(".tabs a[data-view=wire]").await;
    b.wait_for_text("#wire-log li.call summary", "SendStreamingMessage")
        .await;
    let curl = b
        .eval("return [...document.querySelectorAll('#wire-log li.call')].find(li => li.querySelector('summary').innerText.includes('SendStreamingMessage')).querySelector('pre.curl').textContent")
        .await;
    let curl = curl.as_str().unwrap();
    // Each event kept its SSE id, though CR and LF came apart.
    let response = b
        .eval("return [...document.querySelectorAll('#wire-log li.call')].find(li => li.querySelector('summary').innerText.includes('SendStreamingMessage')).querySelectorAll('pre.code')[1].textContent")
        .await;
    let ids: Vec<&str> = response
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"], "{response}");
    let dir = std::env::temp_dir().join(format!("a2a-console-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new("sh")
        .current_dir(&dir)
        .env("A2A_CREDENTIAL", "s3cret")
        .arg("-c")
        .arg(format!(
            "curl() {{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }}; {curl}"
        ))
        .output()
        .unwrap();
    let args = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{curl}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !dir.join("pwned-by-card").exists(),
        "the card's header name ran: {curl}"
    );
    assert!(
        args.lines().any(|l| l == format!("{ODD_HEADER}: s3cret")),
        "{args}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    b.close().await;
}
