//! Property tests: any message, task or part of the kit survives the trip through the
//! generated messages and their wire bytes, and its message is its ProtoJSON.

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::Value;

use super::super::{I64_RANGE, MAX_SECONDS, MIN_SECONDS};
use super::oracle::{agree, pool};
use super::*;

fn text() -> impl Strategy<Value = String> {
    ".{0,12}"
}

/// A string that is set: empty strings are "unset" in proto3 (and in the JSON bindings).
fn set_text() -> impl Strategy<Value = String> {
    ".{1,12}"
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    option::of(set_text())
}

/// JSON whose numbers come back as they went: integers within 2^53 (a double's exact
/// range) and doubles that do not read back as integers.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-(1i64 << 53)..=(1i64 << 53)).prop_map(Value::from),
        any::<f64>()
            .prop_filter("a double that stays a double", |f| {
                f.is_finite() && !(f.fract() == 0.0 && I64_RANGE.contains(f))
            })
            .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn metadata() -> impl Strategy<Value = Option<Metadata>> {
    option::of(btree_map(text(), json(), 0..4).prop_map(|m| m.into_iter().collect()))
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (MIN_SECONDS * 1000..=MAX_SECONDS * 1000 + 999).prop_map(ts)
}

fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..24).prop_map(PartContent::Raw),
        text().prop_map(PartContent::Url),
        json().prop_map(PartContent::Data),
    ];
    (content, metadata(), opt_text(), opt_text()).prop_map(
        |(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        },
    )
}

fn message() -> impl Strategy<Value = Message> {
    (
        set_text(),
        opt_text(),
        opt_text(),
        prop_oneof![Just(Role::User), Just(Role::Agent)],
        vec(part(), 0..4),
        metadata(),
        vec(text(), 0..3),
        vec(text(), 0..3),
    )
        .prop_map(
            |(message_id, context_id, task_id, role, parts, metadata, extensions, refs)| Message {
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: refs,
            },
        )
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (
        set_text(),
        opt_text(),
        opt_text(),
        vec(part(), 0..4),
        metadata(),
        vec(text(), 0..3),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions)| Artifact {
                artifact_id,
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
}

fn task() -> impl Strategy<Value = Task> {
    let state = proptest::sample::select(TaskState::ALL[1..].to_vec());
    let status = (state, option::of(message()), option::of(timestamp())).prop_map(
        |(state, message, timestamp)| TaskStatus {
            state,
            message,
            timestamp,
        },
    );
    (
        set_text(),
        text(),
        status,
        vec(artifact(), 0..3),
        vec(message(), 0..3),
        metadata(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
}

proptest! {
    #[test]
    fn any_part_round_trips_and_is_its_protojson(part in part()) {
        round_trip(part.clone());
        agree(&pool(), "Part", part);
    }

    #[test]
    fn any_message_round_trips_and_is_its_protojson(message in message()) {
        round_trip(message.clone());
        agree(&pool(), "Message", message);
    }

    #[test]
    fn any_task_round_trips_and_is_its_protojson(task in task()) {
        round_trip(StreamResponse::Task(task.clone()));
        round_trip(task.clone());
        agree(&pool(), "Task", task);
    }
}
