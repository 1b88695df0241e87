//! The console (a2a-kit-axum feature `console`, as `a2a console URL` serves it) against an
//! agent built on the official Python SDK (a2a-sdk 1.3.0, pinned: tests/interop/python/
//! server.py), in headless Chromium: an agent another SDK built, with its own SSE writer,
//! JSON-RPC path and ProtoJSON. Its card; a streamed artifact growing; narration; a question
//! answered inline; a failure; a direct reply; its tasks listed; one canceled from its page.
//!
//! Skipped, with a printed note, only when `python3 -m venv` is unavailable (never in CI).

#[path = "support_python_sdk.rs"]
mod python;

// Shared with the examples' browser tests; this one uses Chromium alone.
#[allow(dead_code)]
#[path = "../examples/tests/support/browser.rs"]
mod browser;

use browser::Browser;

async fn say(b: &Browser, text: &str) {
    b.click(".tabs a[data-view=chat]").await;
    b.fill("#chat-input", text).await;
    b.click("#chat-send").await;
}

#[tokio::test]
async fn the_console_drives_a_python_sdk_agent() {
    let Some(py) = python::python() else {
        return;
    };
    let (_agent, base) = python::start_python_server(&py).await;
    let console = a2a_kit_axum::console::Console::remote(&base).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = format!("http://{}/_console/", listener.local_addr().unwrap());
    let app: axum::Router = console.router();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let b = Browser::start().await;
    b.goto(&format!("{page}#/card")).await;
    b.wait_for_text("#agent-name", "Python Interop Agent").await;
    b.wait_for_text("#card-signature", "not signed").await;
    b.wait_for_text("#card-rendered", "HTTP+JSON 1.0").await;

    // A streamed artifact, chunk by chunk, then COMPLETED.
    say(&b, "chunks 5").await;
    b.wait_last(".task-block", "completed").await;
    assert_eq!(
        b.last_text(".task-block .artifact-text").await,
        "c0 c1 c2 c3 c4 "
    );
    // Status messages are narration, the artifact the answer.
    say(&b, "status").await;
    b.wait_last(".task-block .artifact-text", "final").await;
    let narration = b.last_text(".task-block .narration").await;
    assert_eq!(narration, "step 1\nstep 2\nstep 3", "{narration}");
    // A question, answered inline.
    say(&b, "ask").await;
    b.wait_last(".task-block .question", "What is your name?")
        .await;
    b.fill(".answer-form input[name=answer]", "Ada").await;
    b.click(".answer-form button").await;
    b.wait_last(".task-block .artifact-text", "Hello, Ada")
        .await;
    // A failure, and a direct reply (no task).
    say(&b, "fail").await;
    b.wait_last(".task-block .error", "The task failed: it broke")
        .await;
    say(&b, "direct hi").await;
    b.wait_last(".task-block .answer", "direct: hi").await;
    b.screenshot("python-agent").await;

    // A slow one, canceled from its page, found in the task list.
    say(&b, "slow 30").await;
    b.wait_last(".task-block", "working").await;
    let slow = b
        .eval("const all = document.querySelectorAll('.task-block'); return all[all.length - 1].dataset.taskId")
        .await;
    let slow = slow.as_str().unwrap().to_string();
    b.click(".tabs a[data-view=tasks]").await;
    b.wait_for(&format!(r#"#task-list tr[data-task-id="{slow}"]"#))
        .await;
    b.wait_for_text("#task-list tbody", "completed").await;
    b.click(&format!(r#"#task-list tr[data-task-id="{slow}"] a"#))
        .await;
    b.wait_for_text("#task-state", "working").await;
    b.click("#task-cancel").await;
    b.wait_for_text("#task-state", "canceled").await;
    b.screenshot("python-agent-task").await;
    b.close().await;
}
