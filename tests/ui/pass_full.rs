//! Less common but supported forms.
use std::sync::Mutex;

use a2a_kit::skill::{ExtractError, FromSkillRequest, SkillRequest};
use futures::stream::BoxStream;
use futures::StreamExt;

/// A custom extractor.
struct Locale(String);

impl FromSkillRequest for Locale {
    fn from_request(req: &SkillRequest) -> Result<Self, ExtractError> {
        let locale = req.metadata().and_then(|m| m.get("locale")).and_then(|v| v.as_str());
        Ok(Locale(locale.unwrap_or("en").to_string()))
    }
}

trait Errors {
    type Error;
}

struct Notes {
    lines: Mutex<Vec<String>>,
}

impl Errors for Notes {
    type Error = a2a_kit::error::SkillError;
}

#[a2a_kit::a2a_agent(
    description = concat!("Keeps ", "notes."),
    version = env!("CARGO_PKG_VERSION"),
    documentation_url = "https://example.com/docs",
    icon_url = "https://example.com/icon.png",
    input_modes = ["text/plain"],
    output_modes = ["text/plain", "application/json"],
    streaming = true,
    push_notifications = false,
)]
impl Notes {
    pub fn new() -> Self {
        Notes { lines: Mutex::new(Vec::new()) }
    }

    /// Add a note.
    ///
    /// `Self` in a signature is fine.
    #[a2a_kit::skill(id = "add-note", name = "Add a note", default)]
    pub async fn add(&self, a2a_kit::skill::Text(t): a2a_kit::skill::Text, _locale: Locale) -> Result<String, <Self as Errors>::Error> {
        let mut lines = self.lines.lock().unwrap();
        lines.push(t);
        Ok(format!("{} note(s)", lines.len()))
    }

    /// Replay the notes, as a concrete stream type.
    #[a2a_kit::streaming]
    #[a2a_kit::skill]
    fn replay(&self) -> BoxStream<'static, Result<String, a2a_kit::error::SkillError>> {
        let lines = self.lines.lock().unwrap().clone();
        futures::stream::iter(lines.into_iter().map(Ok)).boxed()
    }

    /// Replay the notes, borrowing the agent.
    #[a2a_kit::skill]
    #[a2a_kit::streaming]
    fn replay_borrowed(&self) -> impl futures::Stream<Item = String> + Send + '_ {
        futures::stream::iter(0..1).map(move |_| self.lines.lock().unwrap().join("\n"))
    }

    /// Nothing to return.
    #[a2a_kit::skill]
    async fn clear(&self) {
        self.lines.lock().unwrap().clear();
    }

    /// Ask for more.
    #[a2a_kit::skill]
    async fn ask(&self, _ctx: a2a_kit::skill::TaskContext) -> a2a_kit::skill::Outcome {
        a2a_kit::skill::Outcome::input_required("What else?")
    }
}

fn main() {
    let info = Notes::agent_info();
    assert_eq!(info.description, "Keeps notes.");
    assert_eq!(info.skills.len(), 5);
    assert_eq!(info.skills[0].id, "add-note");
    assert!(info.skills[1].streaming && info.skills[2].streaming);
    let _service = a2a_kit::server::AgentService::builder(Notes::new()).build().expect("a valid configuration");
}
