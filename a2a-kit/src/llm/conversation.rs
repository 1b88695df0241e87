//! The conversation a model is given: the context's earlier tasks (their messages and
//! artifacts) and this task's history, read from the store, so a model run sees the same
//! conversation after a restart and on any replica.

use rig_core::message::Message as ModelMessage;

use crate::protocol::{Message, Part, PartContent, Role, Task, is_status_message};
use crate::skill::TaskContext;

/// A part as the model reads it: text as it is, data as JSON, files by name.
pub(super) fn part_text(part: &Part) -> String {
    match &part.content {
        PartContent::Text(t) => t.clone(),
        PartContent::Data(v) => v.to_string(),
        PartContent::Raw(bytes) => format!(
            "[file {} ({}, {} bytes)]",
            part.filename.as_deref().unwrap_or("unnamed"),
            part.media_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
            bytes.len()
        ),
        PartContent::Url(url) => format!(
            "[file {} at {url}]",
            part.filename.as_deref().unwrap_or("unnamed")
        ),
    }
}

fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .map(part_text)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Turns of a conversation, same-role neighbours merged (providers want them alternating).
#[derive(Default)]
struct Turns(Vec<(Role, String)>);

impl Turns {
    fn push(&mut self, role: Role, text: String) {
        if text.trim().is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some((last, t)) if *last == role => {
                t.push_str("\n\n");
                t.push_str(&text);
            }
            _ => self.0.push((role, text)),
        }
    }

    fn messages(&mut self, history: &[Message]) {
        for m in history.iter().filter(|m| !is_status_message(m)) {
            let role = if m.role == Role::User {
                Role::User
            } else {
                Role::Agent
            };
            self.push(role, parts_text(&m.parts));
        }
    }

    fn task(&mut self, task: &Task) {
        self.messages(&task.history);
        for a in &task.artifacts {
            let text = parts_text(&a.parts);
            let named = match &a.name {
                Some(name) => format!("[{name}]\n{text}"),
                None => text,
            };
            self.push(Role::Agent, named);
        }
    }
}

/// The conversation so far, ending with this task's latest user message: the earlier tasks
/// of the context (if `earlier`), then this task's history (status texts left out).
pub(super) async fn conversation(ctx: &TaskContext, earlier: bool) -> Vec<ModelMessage> {
    let mut turns = Turns::default();
    if earlier {
        for task in ctx.earlier_tasks().await {
            turns.task(&task);
        }
    }
    let history = ctx.history().await;
    if history.is_empty() {
        turns.messages(std::slice::from_ref(ctx.message()));
    } else {
        turns.messages(&history);
    }
    // A conversation ends with the user's turn.
    if turns.0.last().is_none_or(|(role, _)| *role != Role::User) {
        turns.push(Role::User, parts_text(&ctx.message().parts));
    }
    turns
        .0
        .into_iter()
        .map(|(role, text)| match role {
            Role::User => ModelMessage::user(text),
            _ => ModelMessage::assistant(text),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_role_turns_merge_and_status_texts_stay_out() {
        let mut turns = Turns::default();
        let status = Message::agent(vec![crate::protocol::status_indicator("thinking".into())])
            .with_metadata(crate::protocol::status_message_metadata());
        turns.messages(&[
            Message::user_text("a"),
            Message::user_text("b"),
            status,
            Message::agent_text("c"),
        ]);
        assert_eq!(
            turns.0,
            vec![(Role::User, "a\n\nb".into()), (Role::Agent, "c".into())]
        );
    }
}
