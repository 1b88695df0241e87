//! Free-form JSON read with each key once: every `metadata` object, a data part's value, and
//! the HTTP+JSON binding's body. RFC 8259 leaves the meaning of a repeated name open, and a
//! plain [`serde_json::Value`] keeps the last one silently, hiding the client's bug; here a
//! repeated key is an error naming it, whichever binding the JSON came through. The check is
//! the map's own insertion (one lookup per key, as a plain map makes), so it costs nothing
//! on the request path.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

/// A JSON value whose objects, at every depth, name each key once.
pub(crate) struct UniqueValue(pub(crate) Value);

impl<'de> Deserialize<'de> for UniqueValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor).map(UniqueValue)
    }
}

/// The object of a map being read, refusing a key it already has.
pub(crate) fn unique_map<'de, A: MapAccess<'de>>(
    mut map: A,
) -> Result<Map<String, Value>, A::Error> {
    let mut out = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        match out.entry(key) {
            Entry::Vacant(slot) => {
                let UniqueValue(value) = map.next_value()?;
                slot.insert(value);
            }
            Entry::Occupied(seen) => {
                return Err(de::Error::custom(format_args!(
                    "duplicate key `{}`",
                    seen.key()
                )));
            }
        }
    }
    Ok(out)
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        UniqueValue::deserialize(d).map(|v| v.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(UniqueValue(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        unique_map(map).map(Value::Object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Value, String> {
        serde_json::from_str::<UniqueValue>(text)
            .map(|v| v.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_what_a_value_reads() {
        let text =
            r#"{"a":[1,-2,2.5,"s",null,true,{"b":{}}],"c":{"d":[]},"e":18446744073709551615}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn refuses_a_repeated_key_at_any_depth() {
        for (text, key) in [
            (r#"{"k":1,"k":2}"#, "k"),
            (r#"{"a":{"x":1,"y":2,"x":3}}"#, "x"),
            (r#"[{"z":{"q":[{"w":1,"w":1}]}}]"#, "w"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(
                err.contains(&format!("duplicate key `{key}`")),
                "{text}: {err}"
            );
        }
        assert!(
            parse(r#"{"k":1,"K":2,"a":{"k":1}}"#).is_ok(),
            "other names and depths"
        );
    }
}
