//! The oracle: a message made by `to_proto`, encoded, decoded by a protobuf runtime from the
//! proto's descriptors (prost-reflect) and written as ProtoJSON, is the JSON the kit's own
//! serde writes for the same value. So the conversion follows the spec's JSON mapping
//! field by field, not just the kit's idea of it.

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde::Serialize;
use serde_json::Value;

use super::*;

/// The pool of `lf.a2a.v1` and the well-known types it imports, decoded once.
pub(super) fn pool() -> DescriptorPool {
    static POOL: std::sync::OnceLock<DescriptorPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(include_bytes!("../../gen/a2a.bin").as_ref()).unwrap()
    })
    .clone()
}

/// `value`'s message as the protobuf runtime writes it in ProtoJSON.
fn protojson<T: ToProto>(pool: &DescriptorPool, name: &str, value: T) -> Value
where
    T::Proto: prost::Message,
{
    let bytes = value.to_proto().encode_to_vec();
    let desc = pool
        .get_message_by_name(&format!("lf.a2a.v1.{name}"))
        .unwrap();
    let message = DynamicMessage::decode(desc, bytes.as_slice()).unwrap();
    serde_json::to_value(&message).unwrap()
}

/// Brings a ProtoJSON document to the form in which two correct writers agree. The JSON
/// mapping lets them differ in exactly these ways, and nothing else is touched:
/// - a field holding its default (`""`, `0`, `false`, `[]`, `{}`) may be written or left
///   out (the kit writes required fields even when empty; the runtime leaves them out);
/// - a number is a number: `3`, `3.0` and `3e0` are one value (a `Value`'s number is a
///   double, the kit keeps JSON integers);
/// - a timestamp may have 0, 3, 6 or 9 fraction digits.
///
/// Inside a `google.protobuf.Struct` or `Value` (`metadata`, `params`, `header`, a part's
/// `data`), defaults are content, not absence: only numbers are brought together there.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, v| is_struct_field(key) || !is_default(v));
            for (key, v) in map.iter_mut() {
                match key.as_str() {
                    k if is_struct_field(k) => numbers_as_doubles(v),
                    "timestamp" | "statusTimestampAfter" => canonical_timestamp(v),
                    _ => normalize(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        Value::Number(_) => numbers_as_doubles(value),
        _ => {}
    }
}

fn is_struct_field(key: &str) -> bool {
    matches!(key, "metadata" | "params" | "header" | "data")
}

fn is_default(value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Null => true,
    }
}

fn numbers_as_doubles(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                *value = Value::from(f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(numbers_as_doubles),
        Value::Object(map) => map.values_mut().for_each(numbers_as_doubles),
        _ => {}
    }
}

fn canonical_timestamp(value: &mut Value) {
    if let Some(ts) = value.as_str().and_then(|s| s.parse::<Timestamp>().ok()) {
        *value = Value::String(ts.to_string());
    }
}

/// The runtime's ProtoJSON of `value` equals the kit's serde JSON, up to [`normalize`].
pub(super) fn agree<T: ToProto + Serialize + Clone>(pool: &DescriptorPool, name: &str, value: T)
where
    T::Proto: prost::Message,
{
    let mut kit = serde_json::to_value(&value).unwrap();
    let mut runtime = protojson(pool, name, value);
    normalize(&mut kit);
    normalize(&mut runtime);
    assert_eq!(
        runtime, kit,
        "{name}: the runtime's ProtoJSON (left) differs from the kit's JSON (right)"
    );
}

#[test]
fn tasks_and_messages_are_their_protojson() {
    let pool = pool();
    agree(&pool, "Task", task());
    agree(&pool, "Task", bare_task());
    agree(&pool, "Message", message(Role::User));
    agree(&pool, "Message", message(Role::Agent));
    for part in parts() {
        agree(&pool, "Part", part);
    }
    agree(&pool, "Artifact", artifact());
}

#[test]
fn every_stream_item_is_its_protojson() {
    let pool = pool();
    agree(&pool, "StreamResponse", StreamResponse::Task(task()));
    agree(
        &pool,
        "StreamResponse",
        StreamResponse::Message(message(Role::Agent)),
    );
    agree(
        &pool,
        "StreamResponse",
        StreamResponse::StatusUpdate(status_update()),
    );
    agree(
        &pool,
        "StreamResponse",
        StreamResponse::ArtifactUpdate(artifact_update()),
    );
    agree(
        &pool,
        "SendMessageResponse",
        SendMessageResponse::Task(task()),
    );
    agree(
        &pool,
        "SendMessageResponse",
        SendMessageResponse::Message(message(Role::Agent)),
    );
}

#[test]
fn the_agent_card_is_its_protojson() {
    let pool = pool();
    agree(&pool, "AgentCard", card());
    for (_, scheme) in security_schemes() {
        agree(&pool, "SecurityScheme", scheme);
    }
}

#[test]
fn lists_push_configs_and_requests_are_their_protojson() {
    let pool = pool();
    agree(&pool, "ListTasksResponse", list_tasks_response());
    agree(&pool, "TaskPushNotificationConfig", push_config());
    agree(
        &pool,
        "ListTaskPushNotificationConfigsResponse",
        list_push_configs_response(),
    );
    agree(&pool, "SendMessageRequest", send_request());
    agree(&pool, "ListTasksRequest", list_tasks_request());
}

/// The normalization is not so loose that it hides a real difference.
#[test]
fn the_oracle_sees_a_wrong_field() {
    let pool = pool();
    let mut kit = serde_json::to_value(task()).unwrap();
    let mut wrong = task();
    wrong.status.state = TaskState::Completed;
    let mut runtime = protojson(&pool, "Task", wrong);
    normalize(&mut kit);
    normalize(&mut runtime);
    assert_ne!(kit, runtime);
}
