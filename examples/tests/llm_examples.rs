//! The model-driven examples without a model: they start, serve their card, and say in one
//! line what to set; a task then fails with that same hint, never a panic or a hang.

mod support;

use support::Example;

#[tokio::test]
async fn without_a_model_the_examples_start_and_say_what_to_set() {
    for bin in [
        env!("CARGO_BIN_EXE_llm_agent"),
        env!("CARGO_BIN_EXE_llm_orchestrator"),
    ] {
        let example = Example::start(bin, &["--bind", "127.0.0.1:0"]);
        let hints: Vec<&String> = example
            .before
            .iter()
            .filter(|l| l.contains("no model configured"))
            .collect();
        assert_eq!(
            hints.len(),
            1,
            "one line says what to set: {:?}",
            example.before
        );
        assert!(hints[0].contains("--model") && hints[0].contains("OPENAI_API_KEY"));
        // A task fails with the same hint.
        let r = a2a_tests::rpc(
            &example.url,
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
    }
}
