//! Serde helpers shared by the wire types.
//!
//! ProtoJSON differs from "plain serde" in a few places (numeric strings for
//! integers, empty strings meaning "unset", oneofs keyed by member name, enums
//! by proto name or number). Keeping those rules here means every type applies
//! them the same way.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Returned when a string is not one of a proto enum's names (or numbers).
///
/// Kept separate from serde errors so REST query parameters and CLI flags can
/// report the same "expected one of" list without going through JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {type_name} `{value}`, expected one of {}", backticked(.valid))]
pub struct ParseEnumError {
    type_name: &'static str,
    value: String,
    valid: &'static [&'static str],
}

impl ParseEnumError {
    pub(crate) fn new(
        type_name: &'static str,
        value: &str,
        valid: &'static [&'static str],
    ) -> Self {
        Self {
            type_name,
            value: value.to_owned(),
            valid,
        }
    }

    /// The rejected input, so callers can echo it back in their own errors.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The accepted proto names, so callers can list them to the user.
    pub fn valid_values(&self) -> &'static [&'static str] {
        self.valid
    }
}

/// Formats names as "`a`, `b`, `c`" for error messages.
pub(crate) fn backticked(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('`');
        out.push_str(name);
        out.push('`');
    }
    out
}

/// Error for a oneof object with none of its members set.
pub(crate) fn oneof_missing<E: de::Error>(members: &[&str]) -> E {
    E::custom(format_args!("expected one of {}", backticked(members)))
}

/// Error for a oneof object with two members set.
pub(crate) fn oneof_conflict<E: de::Error>(members: &[&str], first: &str, second: &str) -> E {
    E::custom(format_args!(
        "only one of {} may be set, found `{first}` and `{second}`",
        backticked(members)
    ))
}

/// `skip_serializing_if` for implicit-presence bools: ProtoJSON omits `false`.
pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

/// Reads an optional string where `""` counts as unset (ProtoJSON implicit presence).
pub(crate) fn de_opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()))
}

/// Reads an optional int32 given as a JSON number or a numeric string.
pub(crate) fn de_opt_i32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    d.deserialize_any(I32Visitor)
}

/// Reads an int32 given as a JSON number or a numeric string; `null` means 0.
pub(crate) fn de_i32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(de_opt_i32(d)?.unwrap_or(0))
}

/// Like [`de_opt_i32`] but for implicit-presence int32 fields, where 0 is "unset".
pub(crate) fn de_opt_i32_nonzero<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    Ok(de_opt_i32(d)?.filter(|n| *n != 0))
}

/// Reads an implicit-presence enum where the zero value (`*_UNSPECIFIED`) means unset.
pub(crate) fn de_opt_enum_nonzero<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default + PartialEq,
{
    Ok(Option::<T>::deserialize(d)?.filter(|v| *v != T::default()))
}

struct I32Visitor;

impl I32Visitor {
    fn from_i64<E: de::Error>(v: i64) -> Result<Option<i32>, E> {
        i32::try_from(v)
            .map(Some)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &I32Visitor))
    }

    fn from_f64<E: de::Error>(v: f64) -> Result<Option<i32>, E> {
        // ProtoJSON accepts exponent/fraction notation when the value is integral.
        if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
            #[allow(clippy::cast_possible_truncation)] // range and integrality checked above
            Ok(Some(v as i32))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &I32Visitor))
        }
    }
}

impl<'de> Visitor<'de> for I32Visitor {
    type Value = Option<i32>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 32-bit integer (JSON number or numeric string)")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Self::from_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i32::try_from(v)
            .map(Some)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Self::from_f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        if let Ok(n) = v.parse::<i64>() {
            return Self::from_i64(n);
        }
        match v.parse::<f64>() {
            Ok(f) if f.is_finite() && !v.is_empty() => Self::from_f64(f),
            _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// Generates a proto enum: a plain Rust enum that is written as its proto
/// name and read from the proto name or its number, with `as_str`,
/// `from_proto_name`, `from_i32`, `ALL`, `Display` and `FromStr`.
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $num:literal => $proto:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $num, )+
        }

        impl $name {
            /// Every value in proto number order, for iteration and validation messages.
            pub const ALL: [Self; [$($num),+].len()] = [$(Self::$variant),+];

            const NAMES: &'static [&'static str] = &[$($proto),+];

            /// The proto name, which is the ProtoJSON wire form.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $proto,)+
                }
            }

            /// Looks up a value by its exact proto name (case-sensitive, as on the wire).
            pub fn from_proto_name(name: &str) -> Option<Self> {
                match name {
                    $($proto => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Looks up a value by its proto number, which ProtoJSON readers must accept.
            pub const fn from_i32(value: i32) -> Option<Self> {
                match value {
                    $($num => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// The proto number, for binary encodings and storage.
            pub const fn as_i32(self) -> i32 {
                self as i32
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::protocol::ParseEnumError;

            /// Accepts the proto name or its number, like the JSON reader.
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_proto_name(s)
                    .or_else(|| s.parse::<i32>().ok().and_then(Self::from_i32))
                    .ok_or_else(|| {
                        $crate::protocol::ParseEnumError::new(stringify!($name), s, Self::NAMES)
                    })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct EnumVisitor;

                impl ::serde::de::Visitor<'_> for EnumVisitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(
                            f,
                            "one of {} or its number",
                            $crate::protocol::serde_util::backticked($name::NAMES)
                        )
                    }

                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_proto_name(v)
                            .ok_or_else(|| E::unknown_variant(v, $name::NAMES))
                    }

                    fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        i32::try_from(v)
                            .ok()
                            .and_then($name::from_i32)
                            .ok_or_else(|| E::invalid_value(::serde::de::Unexpected::Signed(v), &self))
                    }

                    fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        i32::try_from(v)
                            .ok()
                            .and_then($name::from_i32)
                            .ok_or_else(|| E::invalid_value(::serde::de::Unexpected::Unsigned(v), &self))
                    }
                }

                d.deserialize_any(EnumVisitor)
            }
        }
    };
}

pub(crate) use proto_enum;

/// Generates a proto `oneof` as a Rust enum of single-field tuple variants.
///
/// On the wire it is `{"member": value}`. Reading requires exactly one known
/// member (a `null` member counts as unset, as in ProtoJSON); unknown keys
/// are ignored and the snake_case alias of each member is accepted.
///
/// ```text
/// proto_oneof! {
///     /// docs
///     pub enum Name {
///         /// docs
///         Variant(Type) = "camelKey" | "snake_key",
///     }
/// }
/// ```
macro_rules! proto_oneof {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident($ty:ty) = $key:literal $(| $alias:literal)?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant($ty), )+
        }

        impl $name {
            /// The JSON member names of this oneof in proto field order.
            pub const MEMBERS: &'static [&'static str] = &[$($key),+];

            /// The JSON member name of the variant that is set, for logging and dispatch.
            pub fn member_name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $key,)+
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(value: $ty) -> Self {
                    Self::$variant(value)
                }
            }
        )+

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                match self {
                    $(Self::$variant(v) => map.serialize_entry($key, v)?,)+
                }
                map.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct OneofVisitor;

                impl<'de> ::serde::de::Visitor<'de> for OneofVisitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(
                            f,
                            "an object with exactly one of {}",
                            $crate::protocol::serde_util::backticked($name::MEMBERS)
                        )
                    }

                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$name, A::Error> {
                        let mut found: Option<(&'static str, $name)> = None;
                        while let Some(key) = map.next_key::<String>()? {
                            $(
                                if key == $key $(|| key == $alias)? {
                                    if let Some(value) = map.next_value::<Option<$ty>>()? {
                                        if let Some((first, _)) = &found {
                                            return Err(if *first == $key {
                                                <A::Error as ::serde::de::Error>::duplicate_field($key)
                                            } else {
                                                $crate::protocol::serde_util::oneof_conflict(
                                                    $name::MEMBERS,
                                                    first,
                                                    $key,
                                                )
                                            });
                                        }
                                        found = Some(($key, $name::$variant(value)));
                                    }
                                    continue;
                                }
                            )+
                            map.next_value::<::serde::de::IgnoredAny>()?;
                        }
                        found
                            .map(|(_, value)| value)
                            .ok_or_else(|| $crate::protocol::serde_util::oneof_missing($name::MEMBERS))
                    }
                }

                d.deserialize_map(OneofVisitor)
            }
        }
    };
}

pub(crate) use proto_oneof;
