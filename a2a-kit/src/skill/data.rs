//! [`Data<T>`]: typed structured content, both a skill argument and a skill result.

/// Structured data: the first data part, deserialized into `T`. A text part holding JSON is
/// accepted too, so plain-text clients can call typed skills. `T`'s JSON Schema is published
/// in the card (see [`SKILL_SCHEMA_EXTENSION`](crate::skill::SKILL_SCHEMA_EXTENSION)). As a return value, `Data<T>`
/// becomes a data part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Data<T>(pub T);
