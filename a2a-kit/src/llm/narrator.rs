//! A model that narrates: a short status line every few seconds while a task runs.

use std::time::Duration;

use rig_core::completion::CompletionRequest;

use super::Model;
use crate::runtime::{NarrationContext, StatusNarrator};

/// A [`StatusNarrator`] that asks a model for one short status line (at most
/// [`max_chars`](Self::max_chars), 50 by default) every [`every`](Self::every) (default
/// 5 s) while a task runs, until its first artifact chunk. The model is shown the request and
/// the task's last status lines (read from the store, so also after a restart) and told not
/// to repeat them; a line equal to one of the last five is dropped all the same. The lines go
/// out as status indicators, never as answer text. A failed or slow model call says nothing.
#[derive(Debug, Clone)]
pub struct ModelNarrator {
    model: Model,
    every: Duration,
    max_chars: usize,
    timeout: Duration,
}

impl ModelNarrator {
    /// A narrator on `model`.
    pub fn new(model: Model) -> Self {
        ModelNarrator {
            model,
            every: Duration::from_secs(5),
            max_chars: 50,
            timeout: Duration::from_secs(10),
        }
    }

    /// How often to narrate (default 5 s).
    pub fn every(mut self, interval: Duration) -> Self {
        self.every = interval;
        self
    }

    /// The longest line, in characters (default 50).
    pub fn max_chars(mut self, n: usize) -> Self {
        self.max_chars = n.max(8);
        self
    }

    /// How long one line may take (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn request(&self, n: &NarrationContext) -> CompletionRequest {
        let recent = if n.recent_statuses.is_empty() {
            "(none yet)".to_string()
        } else {
            n.recent_statuses
                .iter()
                .map(|s| format!("- {s}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let prompt = format!(
            "The user asked:\n{}\n\nThe work has run for {} s. Status lines shown so far:\n{recent}\n\n\
             Write the next status line: what is being done now, at most {} characters, \
             different from every line above. Only the line.",
            n.request.chars().take(2000).collect::<String>(),
            n.elapsed.as_secs(),
            self.max_chars,
        );
        CompletionRequest::new(prompt).preamble(
            "You write the short status lines a user sees while an assistant works: present \
             tense, specific, no quotes, no final period.",
        )
    }
}

/// The first line of `text`, cleaned of quotes and list marks, cut at a word within `max`
/// characters.
fn one_line(text: &str, max: usize) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line
        .trim_start_matches(['-', '*', '•', ' '])
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c.is_whitespace())
        .trim_end_matches('.');
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= max {
        return Some(line.to_string());
    }
    let cut: String = line.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => cut[..i].to_string(),
        _ => cut,
    };
    Some(cut.trim_end_matches([',', ';', ':', ' ']).to_string())
}

#[async_trait::async_trait]
impl StatusNarrator for ModelNarrator {
    async fn narrate(&self, n: &NarrationContext) -> Option<String> {
        let response = match self.model.ask(self.request(n), self.timeout).await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(task_id = n.task_id, error = %e, "the narrator said nothing");
                return None;
            }
        };
        let line = one_line(&response.text(), self.max_chars)?;
        let repeated = n
            .recent_statuses
            .iter()
            .any(|s| s.trim().eq_ignore_ascii_case(&line));
        (!repeated).then_some(line)
    }

    fn interval(&self) -> Option<Duration> {
        Some(self.every)
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn lines_are_short_single_and_clean() {
        assert_eq!(
            one_line("\n \"Reading the sources.\"\nmore", 50).as_deref(),
            Some("Reading the sources")
        );
        assert_eq!(
            one_line("- Comparing fares", 50).as_deref(),
            Some("Comparing fares")
        );
        let long = "Checking every single flight between Paris and Tokyo for next week";
        let line = one_line(long, 50).unwrap();
        assert!(line.chars().count() <= 50, "{line}");
        assert!(long.starts_with(&line));
        assert_eq!(one_line("  \n ", 50), None);
    }
}
