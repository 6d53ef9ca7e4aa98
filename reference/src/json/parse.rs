//! JSON text → `serde_json::Value`, refusing duplicate object keys (which
//! serde_json would silently resolve to the last one: a module with two
//! computations named `main` must be an error, not a guess).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::ReadError;

/// serde_json's marker for a number kept as text (`arbitrary_precision`).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

struct Checked(Value);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CheckedVisitor).map(Checked)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Checked(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == NUMBER_TOKEN && out.is_empty() {
                let text: String = map.next_value()?;
                return text.parse::<Number>().map(Value::Number).map_err(de::Error::custom);
            }
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            let Checked(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses JSON text, reporting syntax errors and duplicate keys with line and column.
pub fn parse_json(text: &str) -> Result<Value, ReadError> {
    let mut d = serde_json::Deserializer::from_str(text);
    let result = Checked::deserialize(&mut d).and_then(|Checked(v)| d.end().map(|_| v));
    result.map_err(|e| ReadError::new(format!("line {} column {}", e.line(), e.column()), format!("invalid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_errors_and_numbers_keep_their_text() {
        assert!(parse_json(r#"{"a": 1, "a": 2}"#).unwrap_err().message.contains("duplicate key `a`"));
        assert!(parse_json(r#"{"x": [{"b": 1, "c": {"d": 0, "d": 1}}]}"#).is_err());
        let v = parse_json(r#"{"n": 1.00048828125000000000000000001, "m": -0, "big": 18446744073709551615}"#).unwrap();
        assert_eq!(v["n"].to_string(), "1.00048828125000000000000000001");
        assert_eq!(v["m"].to_string(), "-0");
        assert!(parse_json("[1, 2] x").is_err());
        assert!(parse_json(&"[".repeat(10_000)).is_err());
    }
}
