//! The status-message convention: how a2a-kit marks working-state progress messages so that
//! clients never mix them into the answer.
//!
//! A progress text travels as an agent message whose metadata has
//! `"kind": "status-message"` ([`STATUS_MESSAGE_KIND_KEY`] / [`STATUS_MESSAGE_KIND`]), by
//! default with one data part `{"type": "status-indicator", "text": ...}`
//! ([`status_indicator`]); clients that accumulate text parts then skip it. Stores read the
//! marker to list a task's recent status texts; the client reads it to tell progress from
//! content. It lives here, with the wire types, because both sides of the wire rely on it.

use serde_json::json;

use super::{Message, Metadata, Part};

/// Message metadata key marking working-state status messages.
pub const STATUS_MESSAGE_KIND_KEY: &str = "kind";
/// Its value.
pub const STATUS_MESSAGE_KIND: &str = "status-message";

/// The metadata that marks a status message.
pub fn status_message_metadata() -> Metadata {
    let mut meta = Metadata::new();
    meta.insert(STATUS_MESSAGE_KIND_KEY.into(), STATUS_MESSAGE_KIND.into());
    meta
}

/// The default part of a status message: a data part `{"type":"status-indicator","text":..}`.
pub fn status_indicator(text: String) -> Part {
    Part::data(json!({"type": "status-indicator", "text": text}))
}

/// Whether `m` carries the status-message marker.
pub fn is_status_message(m: &Message) -> bool {
    m.metadata
        .as_ref()
        .and_then(|md| md.get(STATUS_MESSAGE_KIND_KEY))
        .is_some_and(|k| k == STATUS_MESSAGE_KIND)
}

/// The text of a marked status message (its first text part, else an indicator's `text`);
/// `None` for any other message.
///
/// ```
/// use a2a_kit::protocol::{Message, status_indicator, status_message_metadata, status_message_text};
/// let m = Message::agent(vec![status_indicator("step 1".into())])
///     .with_metadata(status_message_metadata());
/// assert_eq!(status_message_text(&m).as_deref(), Some("step 1"));
/// assert_eq!(status_message_text(&Message::agent_text("an answer")), None);
/// ```
pub fn status_message_text(m: &Message) -> Option<String> {
    if !is_status_message(m) {
        return None;
    }
    m.parts.iter().find_map(|p| {
        p.as_text().map(str::to_string).or_else(|| {
            p.as_data()
                .and_then(|d| d.get("text"))
                .and_then(|t| t.as_str())
                .map(str::to_string)
        })
    })
}
