//! [`Data<T>`]: typed structured content, both a skill argument and a skill result.

/// Structured data: the first data part, deserialized into `T`. A text part holding JSON is
/// accepted too, so plain-text clients can call typed skills. `T`'s JSON Schema is published
/// in the card (see [`SKILL_SCHEMA_EXTENSION`](crate::skill::SKILL_SCHEMA_EXTENSION)). As a return value, `Data<T>`
/// becomes a data part. A whole-valued number (`2.0`, as the official SDKs send every number
/// of a data part) fills an integer field; a fraction is an error naming the field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Data<T>(pub T);

/// What `Data<T>` needs of `T` as a skill argument: serde can read it and schemars can
/// describe it (the card publishes its schema). Implemented for every such type.
#[diagnostic::on_unimplemented(
    message = "`Data<{Self}>` cannot be a skill argument: `{Self}` needs `Deserialize` and `JsonSchema`",
    label = "`{Self}` is read from a data part and described in the agent card",
    note = "derive both: `#[derive(serde::Deserialize, schemars::JsonSchema)]` on `{Self}` (schemars 1 in your Cargo.toml)"
)]
pub trait DataInput: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static> DataInput for T {}

/// What `Data<T>` needs of `T` as a skill result: serde can write it and schemars can
/// describe it (the card publishes its schema). Implemented for every such type.
#[diagnostic::on_unimplemented(
    message = "`Data<{Self}>` cannot be a skill result: `{Self}` needs `Serialize` and `JsonSchema`",
    label = "`{Self}` is written as a data part and described in the agent card",
    note = "derive both: `#[derive(serde::Serialize, schemars::JsonSchema)]` on `{Self}` (schemars 1 in your Cargo.toml)"
)]
pub trait DataOutput: serde::Serialize + schemars::JsonSchema + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize + schemars::JsonSchema + Send + 'static> DataOutput for T {}
