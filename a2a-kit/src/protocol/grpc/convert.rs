//! Conversions between the generated gRPC messages ([`super::pb`]) and the kit's protocol
//! types: the only place the two meet.
//!
//! Into the kit ([`FromProto`]) a message is checked as the JSON bindings check theirs: a
//! required field that is missing or empty, an enum value the spec does not define, or a
//! `oneof` left unset is `InvalidParams` naming the field by its ProtoJSON path (e.g.
//! `message.parts[0]`). Out of the kit ([`ToProto`]) nothing can fail.

use crate::error::A2aError;

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
