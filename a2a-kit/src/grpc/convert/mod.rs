//! Conversions between the generated gRPC messages ([`super::pb`]) and the kit's protocol
//! types: the only place the two meet.
//!
//! Into the kit ([`FromProto`]) a message is checked as the JSON bindings check theirs: a
//! required field that is missing or empty, an enum value the spec does not define, or a
//! `oneof` left unset is `InvalidParams` naming the field by its ProtoJSON path (e.g.
//! `message.parts[0]`). Out of the kit ([`ToProto`]) nothing can fail.
//!
//! Where proto3 and the JSON bindings cannot agree, the conversion reads the message as its
//! ProtoJSON form would read:
//! - An empty string is an absent one: a required string that is empty is "is required", an
//!   optional one is `None` (as `""` is in JSON; the card's `optional` `documentationUrl`
//!   and `iconUrl` keep an explicit `""`, as in JSON). A field the spec marks required is
//!   required here even where the kit's JSON reader defaults it (a task's `id`, a status's
//!   `state`, a message's `role`): its proto3 default is what "absent" looks like.
//! - A required *repeated* field (`parts`, `skills`, ...) may be empty: proto3 cannot tell
//!   `[]` from absent, and the JSON bindings accept `[]` (the server refuses a message
//!   without parts itself).
//! - A path names a map entry by its key (`securitySchemes.oauth`), as the JSON bindings'
//!   errors do; an unset `oneof` is named by the message that holds it, or, at the root
//!   (a `StreamResponse` with no payload), by the oneof's own name (`payload`).
//! - `google.protobuf.Value` numbers are doubles: an integral one that fits in an `i64` reads
//!   as a JSON integer (so `{"n": 3}` comes back as `3`, not `3.0`), and integers beyond
//!   2^53 lose precision on the way out (that is protobuf's, not the kit's). NaN and the
//!   infinities, which JSON cannot hold, are refused. A `Value` with no kind reads as
//!   `null`, as its ProtoJSON form does.
//! - `google.protobuf.Timestamp` must be in the proto's range (years 1 to 9999) with nanos in
//!   `0..1e9`; it is kept at milliseconds, as the JSON bindings keep it. A leap second (which
//!   protobuf does not count) goes out as the last nanosecond of its minute.

use crate::error::A2aError;
use crate::protocol::{Metadata, Role, TaskState, Timestamp};

mod card;
mod message;
mod requests;
#[cfg(test)]
mod tests;

/// A generated message into the kit's type.
pub trait FromProto: Sized {
    /// The generated message.
    type Proto;
    /// `proto` as the kit's type; a field that breaks the spec is `InvalidParams` naming it.
    fn from_proto(proto: Self::Proto) -> Result<Self, A2aError>;
}

/// The kit's type as its generated message.
pub trait ToProto {
    /// The generated message.
    type Proto;
    /// `self` as the generated message (moved: no string is copied).
    fn to_proto(self) -> Self::Proto;
}

/// [`FromProto`] at a place in a larger message, so an error can name the field from the
/// request's root. Its message is the one [`ToProto`] makes.
pub(super) trait FromProtoAt: ToProto + Sized {
    fn from_proto_at(proto: <Self as ToProto>::Proto, at: &Path<'_>) -> Result<Self, A2aError>;
}

/// Implements [`FromProto`] as [`FromProtoAt`] at the root (`FromProto`, `FromProtoAt`,
/// `Path` and `A2aError` in scope).
macro_rules! from_proto_at_root {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl FromProto for $ty {
                type Proto = <$ty as ToProto>::Proto;
                fn from_proto(proto: Self::Proto) -> Result<Self, A2aError> {
                    <$ty as FromProtoAt>::from_proto_at(proto, &Path::Root)
                }
            }
        )+
    };
}
use from_proto_at_root;

/// Where a field is, as a chain of borrowed links on the stack: free to extend while
/// converting, and written out as a ProtoJSON path only when a field is refused.
#[derive(Clone, Copy)]
pub(super) enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
    Key(&'a Path<'a>, &'a str),
}

impl<'a> Path<'a> {
    pub(super) fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field(self, name)
    }

    pub(super) fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    pub(super) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    /// The path as the JSON bindings write it: `a.b[2].c`, map keys as members.
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match *self {
            Path::Root => {}
            Path::Field(parent, name) => Self::member(parent, name, out),
            Path::Key(parent, key) => Self::member(parent, key, out),
            Path::Index(parent, i) => {
                parent.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }

    fn member(parent: &Path<'_>, name: &str, out: &mut String) {
        parent.write(out);
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
    }
}

/// `InvalidParams` naming the field at `at`.
pub(super) fn invalid(at: &Path<'_>, description: impl Into<String>) -> A2aError {
    A2aError::invalid_field(at.render(), description)
}

/// A `oneof` with no member set where the spec needs one.
pub(super) fn oneof_unset(at: &Path<'_>, oneof: &'static str, members: &[&str]) -> A2aError {
    let field = match at {
        Path::Root => oneof.to_owned(),
        _ => at.render(),
    };
    let description = format!(
        "expected one of {}",
        crate::protocol::serde_util::backticked(members)
    );
    A2aError::invalid_field(field, description)
}

/// A string the spec requires: empty is missing.
pub(super) fn required(s: String, at: &Path<'_>) -> Result<String, A2aError> {
    if s.is_empty() {
        Err(invalid(at, "is required"))
    } else {
        Ok(s)
    }
}

/// An implicit-presence string: empty is unset, as `""` is in ProtoJSON.
pub(super) fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// A message field the spec requires.
fn required_message<T: FromProtoAt>(
    proto: Option<<T as ToProto>::Proto>,
    at: &Path<'_>,
) -> Result<T, A2aError> {
    match proto {
        Some(proto) => T::from_proto_at(proto, at),
        None => Err(invalid(at, "is required")),
    }
}

fn optional<T: FromProtoAt>(
    proto: Option<<T as ToProto>::Proto>,
    at: &Path<'_>,
) -> Result<Option<T>, A2aError> {
    proto.map(|proto| T::from_proto_at(proto, at)).transpose()
}

fn repeated<T: FromProtoAt>(
    protos: Vec<<T as ToProto>::Proto>,
    at: &Path<'_>,
) -> Result<Vec<T>, A2aError> {
    let mut out = Vec::with_capacity(protos.len());
    for (i, proto) in protos.into_iter().enumerate() {
        out.push(T::from_proto_at(proto, &at.index(i))?);
    }
    Ok(out)
}

fn to_repeated<T: ToProto>(items: Vec<T>) -> Vec<<T as ToProto>::Proto> {
    items.into_iter().map(T::to_proto).collect()
}

// ----- Enums -----

/// An enum number the spec does not define.
pub(super) fn unknown_enum(at: &Path<'_>, name: &str, n: i32) -> A2aError {
    invalid(at, format!("{n} is not a {name} value"))
}

/// A `TaskState` number, `UNSPECIFIED` included.
fn task_state(n: i32, at: &Path<'_>) -> Result<TaskState, A2aError> {
    TaskState::from_i32(n).ok_or_else(|| unknown_enum(at, "TaskState", n))
}

/// A `TaskState` the spec requires: `UNSPECIFIED` is missing.
fn required_task_state(n: i32, at: &Path<'_>) -> Result<TaskState, A2aError> {
    match task_state(n, at)? {
        TaskState::Unspecified => Err(invalid(at, "is required")),
        state => Ok(state),
    }
}

/// A `Role` the spec requires: `UNSPECIFIED` is missing.
fn required_role(n: i32, at: &Path<'_>) -> Result<Role, A2aError> {
    match Role::from_i32(n) {
        Some(Role::Unspecified) => Err(invalid(at, "is required")),
        Some(role) => Ok(role),
        None => Err(unknown_enum(at, "Role", n)),
    }
}

// ----- Well-known types -----

impl FromProtoAt for Metadata {
    fn from_proto_at(proto: prost_types::Struct, at: &Path<'_>) -> Result<Self, A2aError> {
        object_from_proto(proto, at).map(Metadata::from)
    }
}

impl ToProto for Metadata {
    type Proto = prost_types::Struct;
    fn to_proto(self) -> prost_types::Struct {
        object_to_proto(self.into_map())
    }
}

pub(super) fn metadata(
    proto: Option<prost_types::Struct>,
    at: &Path<'_>,
) -> Result<Option<Metadata>, A2aError> {
    optional(proto, at)
}

pub(super) fn metadata_to_proto(metadata: Option<Metadata>) -> Option<prost_types::Struct> {
    metadata.map(Metadata::to_proto)
}

pub(super) fn object_from_proto(
    proto: prost_types::Struct,
    at: &Path<'_>,
) -> Result<serde_json::Map<String, serde_json::Value>, A2aError> {
    let mut map = serde_json::Map::with_capacity(proto.fields.len());
    for (key, value) in proto.fields {
        let value = value_from_proto(value, &at.key(&key))?;
        map.insert(key, value);
    }
    Ok(map)
}

pub(super) fn object_to_proto(
    map: serde_json::Map<String, serde_json::Value>,
) -> prost_types::Struct {
    prost_types::Struct {
        fields: map
            .into_iter()
            .map(|(key, value)| (key, value_to_proto(value)))
            .collect(),
    }
}

/// A `google.protobuf.Value` as JSON (see the module's notes on numbers).
pub(super) fn value_from_proto(
    proto: prost_types::Value,
    at: &Path<'_>,
) -> Result<serde_json::Value, A2aError> {
    use prost_types::value::Kind;
    use serde_json::Value;
    Ok(match proto.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::NumberValue(n)) => number_from_proto(n, at)?,
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::StructValue(s)) => Value::Object(object_from_proto(s, at)?),
        Some(Kind::ListValue(list)) => {
            let mut out = Vec::with_capacity(list.values.len());
            for (i, value) in list.values.into_iter().enumerate() {
                out.push(value_from_proto(value, &at.index(i))?);
            }
            Value::Array(out)
        }
    })
}

/// `i64`'s range as doubles: `[-2^63, 2^63)`.
const I64_RANGE: std::ops::Range<f64> = -9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0;

fn number_from_proto(n: f64, at: &Path<'_>) -> Result<serde_json::Value, A2aError> {
    if n.fract() == 0.0 && I64_RANGE.contains(&n) {
        // Integral and in range (checked above): exact.
        #[allow(clippy::cast_possible_truncation)]
        return Ok(serde_json::Value::from(n as i64));
    }
    serde_json::Number::from_f64(n)
        .map(serde_json::Value::Number)
        .ok_or_else(|| invalid(at, format!("{n} is not a JSON number")))
}

pub(super) fn value_to_proto(value: serde_json::Value) -> prost_types::Value {
    use prost_types::value::Kind;
    use serde_json::Value;
    let kind = match value {
        Value::Null => Kind::NullValue(prost_types::NullValue::NullValue.into()),
        Value::Bool(b) => Kind::BoolValue(b),
        // Always a double without serde_json's `arbitrary_precision`; were it not one, NaN
        // makes the receiver refuse it rather than read a wrong number.
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(values) => Kind::ListValue(prost_types::ListValue {
            values: values.into_iter().map(value_to_proto).collect(),
        }),
        Value::Object(map) => Kind::StructValue(object_to_proto(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// 0001-01-01T00:00:00Z, the first second of `google.protobuf.Timestamp`.
const MIN_SECONDS: i64 = -62_135_596_800;
/// 9999-12-31T23:59:59Z, its last.
const MAX_SECONDS: i64 = 253_402_300_799;

impl FromProtoAt for Timestamp {
    fn from_proto_at(proto: prost_types::Timestamp, at: &Path<'_>) -> Result<Self, A2aError> {
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&proto.seconds) {
            return Err(invalid(
                at,
                format!(
                    "seconds {} is outside the range of google.protobuf.Timestamp (years 1 to 9999)",
                    proto.seconds
                ),
            ));
        }
        let nanos = u32::try_from(proto.nanos)
            .ok()
            .filter(|n| *n < 1_000_000_000)
            .ok_or_else(|| {
                invalid(
                    at,
                    format!("nanos {} is outside 0 to 999999999", proto.nanos),
                )
            })?;
        chrono::DateTime::from_timestamp(proto.seconds, nanos)
            .map(Timestamp::from)
            .ok_or_else(|| invalid(at, "is not a valid timestamp"))
    }
}

impl ToProto for Timestamp {
    type Proto = prost_types::Timestamp;
    fn to_proto(self) -> prost_types::Timestamp {
        // A leap second's nanoseconds run past 1e9: protobuf has no such second.
        let nanos = self.0.timestamp_subsec_nanos().min(999_999_999);
        prost_types::Timestamp {
            seconds: self.0.timestamp(),
            nanos: i32::try_from(nanos).unwrap_or(999_999_999),
        }
    }
}

from_proto_at_root!(Metadata, Timestamp);
