//! Narration and progress reach a chat UI as status indicators, never as answer text: the
//! official Python client (a2a-sdk, pinned), accumulating every text part of a streamed
//! answer the way a chat UI does, shows the model's answer once and nothing else.

#[path = "support_python_sdk.rs"]
mod python_sdk;
#[path = "support_model.rs"]
mod support_model;

use std::time::Duration;

use a2a_kit::llm::{Model, ModelNarrator};
use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;
use a2a_tests::serve;
use serde_json::Value;
use support_model::{FakeModel, Reply, Step, text};

#[derive(Clone)]
struct Chatty {
    model: Model,
}

/// Talks while it works.
#[a2a_agent(name = "Chatty")]
impl Chatty {
    /// Reports progress, works a while (the narrator speaks), then lets the model answer.
    #[skill(default)]
    async fn answer(&self, ctx: TaskContext) -> Result<Outcome, SkillError> {
        ctx.status("Looking it up").await?;
        tokio::time::sleep(Duration::from_millis(800)).await;
        self.model.run(&ctx).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_ui_shows_the_answer_once_and_no_progress() {
    let py = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
        .expect("python3 -m venv is needed for the interop tests");
    let (skill_fake, narrator_fake) = (FakeModel::start().await, FakeModel::start().await);
    skill_fake.push(Reply::Steps(vec![
        text("The answer "),
        Step::Delay(Duration::from_millis(50)),
        text("is 42."),
    ]));
    narrator_fake.set_default(Reply::Steps(vec![text("Checking the numbers")]));
    let model = |f: &FakeModel| Model::openai_compatible(f.openai_url(), "", "fake");
    let server = serve(
        AgentService::builder(Chatty {
            model: model(&skill_fake),
        })
        .narrator(ModelNarrator::new(model(&narrator_fake)).every(Duration::from_millis(200))),
    )
    .await;
    let out = tokio::task::spawn_blocking({
        let (py, base) = (py.clone(), server.base.clone());
        move || {
            std::process::Command::new(py)
                .arg(python_sdk::script("chat_ui.py"))
                .args([base.as_str(), "what is six times seven?"])
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run chat_ui.py")
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "chat_ui.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    assert_eq!(summary["final"], "TASK_STATE_COMPLETED", "{summary}");
    assert_eq!(summary["answer"], "The answer is 42.", "{summary}");
    assert_eq!(
        summary["shown"], "The answer is 42.",
        "only the answer, once: {summary}"
    );
    let indicators: Vec<&str> = summary["indicators"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(indicators.contains(&"Looking it up"), "{summary}");
    assert!(indicators.contains(&"Checking the numbers"), "{summary}");
}
