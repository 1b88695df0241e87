//! A2A v1.0 wire types, serialized exactly as ProtoJSON.
//!
//! Every message of `specification/a2a.proto` (package `lf.a2a.v1`) has a
//! plain Rust struct here with the proto's snake_case field names, so they
//! can be built with struct literals. Serde does the ProtoJSON mapping:
//!
//! - lowerCamelCase names on output; snake_case names are accepted on input.
//! - Defaults of implicit-presence fields (`""`, `false`, `[]`, `{}`) are
//!   omitted; `optional` fields are `Option`s, so an explicit `0`/`false`
//!   survives. Required strings and required arrays are always written.
//! - Enums are written as their proto names (`"TASK_STATE_WORKING"`) and read
//!   from the name or the number.
//! - `oneof`s are Rust enums written as `{"member": value}`; reading requires
//!   exactly one member. There is no `kind` field in v1.0.
//! - int32 fields accept numbers and numeric strings; timestamps are written
//!   as UTC with milliseconds (`2025-10-28T10:30:00.000Z`); `Part.raw` is
//!   standard base64 on output and any base64 flavour on input.
//! - Unknown fields are ignored.
//!
//! ```
//! use a2a_kit::protocol::{Task, TaskState};
//!
//! let json = r#"{
//!     "id": "task-1",
//!     "context_id": "ctx-1",
//!     "status": { "state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T12:30:00+02:00" },
//!     "artifacts": [{ "artifactId": "a-1", "parts": [{ "text": "sunny" }] }],
//!     "someFutureField": true
//! }"#;
//! let task: Task = serde_json::from_str(json)?;
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert!(task.status.state.is_terminal());
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("sunny"));
//!
//! let out = serde_json::to_value(&task)?;
//! assert_eq!(
//!     out,
//!     serde_json::json!({
//!         "id": "task-1",
//!         "contextId": "ctx-1",
//!         "status": { "state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:30:00.000Z" },
//!         "artifacts": [{ "artifactId": "a-1", "parts": [{ "text": "sunny" }] }]
//!     })
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

mod card;
pub(crate) mod json_write;
mod message;
pub(crate) mod part;
mod push;
mod requests;
pub(crate) mod serde_util;
mod status_message;
mod stream;
mod task;
mod timestamp;
pub(crate) mod unique_json;

pub use card::*;
pub use message::*;
pub use part::*;
pub use push::*;
pub use requests::*;
pub use serde_util::ParseEnumError;
pub use status_message::*;
pub use stream::*;
pub use task::*;
pub use timestamp::*;

/// The protocol version this crate speaks, as written in `A2A-Version` and
/// `AgentInterface.protocolVersion` (`Major.Minor` only, never a patch).
pub const PROTOCOL_VERSION: &str = "1.0";

/// The A2A protocol versions an agent built with this crate speaks: a request's version (its
/// `A2A-Version`, or for JSON-RPC its method name) decides the shapes it is answered in, and
/// a webhook gets its bodies in the version of the request that registered it.
///
/// ```
/// use a2a_kit::protocol::ProtocolVersion;
/// assert_eq!(ProtocolVersion::default(), ProtocolVersion::V1_0);
/// assert_eq!(ProtocolVersion::V0_3.as_str(), "0.3");
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum ProtocolVersion {
    /// A2A 0.3 (`kind` discriminators, lowercase states, `message/send`...).
    #[serde(rename = "0.3")]
    V0_3,
    /// A2A 1.0 (ProtoJSON), this crate's own.
    #[default]
    #[serde(rename = "1.0")]
    V1_0,
}

impl ProtocolVersion {
    /// `Major.Minor`, as written in `A2A-Version`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V0_3 => "0.3",
            Self::V1_0 => PROTOCOL_VERSION,
        }
    }

    /// True for 1.0, the default (what `skip_serializing_if` leaves out).
    pub fn is_v1(&self) -> bool {
        *self == Self::V1_0
    }
}

/// A `google.protobuf.Struct`: the JSON object used for all `metadata`,
/// extension `params` and JWS `header` fields.
///
/// It reads and writes as the [`serde_json::Map`] it derefs to, except that an object naming
/// a key twice, at any depth, is refused (a plain map keeps the last one silently). The map
/// is boxed so that an absent `Option<Metadata>` costs one word in every message, part and
/// task whatever serde_json's features make a map weigh (`preserve_order`, which a
/// dependency may turn on, triples it); a request moves these values many times.
///
/// ```
/// use a2a_kit::protocol::Metadata;
/// let m: Metadata = serde_json::from_str(r#"{"k":{"a":1}}"#).unwrap();
/// assert_eq!(m["k"]["a"], 1);
/// let err = serde_json::from_str::<Metadata>(r#"{"k":1,"k":2}"#).unwrap_err();
/// assert!(err.to_string().contains("duplicate key `k`"));
/// ```
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Metadata(Box<serde_json::Map<String, serde_json::Value>>);

impl<'de> serde::Deserialize<'de> for Metadata {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Metadata;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            // As a plain map reads it (a deserializer other than JSON's may say unit).
            fn visit_unit<E>(self) -> Result<Metadata, E> {
                Ok(Metadata::new())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Metadata, A::Error> {
                unique_json::unique_map(map).map(Metadata::from)
            }
        }
        d.deserialize_map(Object)
    }
}

impl Metadata {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The object as a plain [`serde_json::Map`].
    pub fn into_map(self) -> serde_json::Map<String, serde_json::Value> {
        *self.0
    }
}

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::Deref for Metadata {
    type Target = serde_json::Map<String, serde_json::Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<serde_json::Map<String, serde_json::Value>> for Metadata {
    fn from(map: serde_json::Map<String, serde_json::Value>) -> Self {
        Self(Box::new(map))
    }
}

impl From<Metadata> for serde_json::Map<String, serde_json::Value> {
    fn from(metadata: Metadata) -> Self {
        metadata.into_map()
    }
}

impl From<Metadata> for serde_json::Value {
    fn from(metadata: Metadata) -> Self {
        serde_json::Value::Object(metadata.into_map())
    }
}

impl FromIterator<(String, serde_json::Value)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (String, serde_json::Value)>>(iter: I) -> Self {
        Self(Box::new(iter.into_iter().collect()))
    }
}

impl IntoIterator for Metadata {
    type Item = (String, serde_json::Value);
    type IntoIter = serde_json::map::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a String, &'a serde_json::Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A fresh time-ordered (v7) UUID in its hyphenated lowercase form, the kit's id for tasks,
/// contexts, messages and artifacts: 74 random bits after a millisecond timestamp, so ids made
/// one after another sort together and a durable store's indexes grow at their right edge
/// (random v4 ids put every new task on its own B-tree pages: several page writes per task).
/// Written straight into the string (no `fmt` machinery): a request makes several.
pub(crate) fn new_uuid() -> String {
    let mut buf = uuid::Uuid::encode_buffer();
    uuid::Uuid::now_v7()
        .hyphenated()
        .encode_lower(&mut buf)
        .to_owned()
}
