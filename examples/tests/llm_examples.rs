//! The model-driven examples without a model: they start, serve their card, and say in one
//! line what to set; a task then fails with that same hint, never a panic or a hang.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Start `bin` on a free port with no model configured; its stderr lines up to the one that
/// says where it listens, and its base URL.
fn start(bin: &str) -> (std::process::Child, Vec<String>, String) {
    let mut child = Command::new(bin)
        .args(["--bind", "127.0.0.1:0"])
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            let url = line
                .split("listening on ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_string);
            lines.push(line);
            if let Some(url) = url {
                return (child, lines, url);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{bin} did not start: {lines:?}");
}

#[tokio::test]
async fn without_a_model_the_examples_start_and_say_what_to_set() {
    for bin in [
        env!("CARGO_BIN_EXE_llm_agent"),
        env!("CARGO_BIN_EXE_llm_orchestrator"),
    ] {
        let (mut child, lines, base) = start(bin);
        let hints: Vec<&String> = lines
            .iter()
            .filter(|l| l.contains("no model configured"))
            .collect();
        assert_eq!(hints.len(), 1, "one line says what to set: {lines:?}");
        assert!(hints[0].contains("--model") && hints[0].contains("OPENAI_API_KEY"));
        // A task fails with the same hint.
        let r = a2a_tests::rpc(
            &base,
            "SendMessage",
            serde_json::json!({"message": a2a_tests::user_text("hello")}),
        )
        .await;
        let task = &r["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{r}");
        let why = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert!(why.contains("no model configured"), "{r}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
