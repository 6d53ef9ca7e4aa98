//! Typed access to an instruction's attributes, remembering which ones were
//! read so that an attribute no op understands is an error, not ignored.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::path::Path;
use crate::error::ReadError;
use crate::ir::{ComputationId, Padding};
use crate::types::{ElementType, Shape};

pub struct Attrs<'a> {
    obj: &'a Map<String, Value>,
    path: Path,
    op: &'a str,
    computations: &'a HashMap<String, ComputationId>,
    used: RefCell<Vec<String>>,
}

type R<T> = Result<T, ReadError>;

impl<'a> Attrs<'a> {
    pub fn new(
        obj: &'a Map<String, Value>,
        path: Path,
        op: &'a str,
        computations: &'a HashMap<String, ComputationId>,
        preused: &[&str],
    ) -> Attrs<'a> {
        Attrs { obj, path, op, computations, used: RefCell::new(preused.iter().map(|s| s.to_string()).collect()) }
    }

    pub fn path(&self, key: &str) -> Path {
        self.path.key(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// The raw value of an attribute, marking it as understood.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        let v = self.obj.get(key);
        if v.is_some() {
            self.used.borrow_mut().push(key.to_string());
        }
        v
    }

    /// The first of several accepted spellings that is present.
    pub fn get_any(&self, keys: &[&str]) -> Option<(&'a Value, Path)> {
        keys.iter().find_map(|k| self.get(k).map(|v| (v, self.path(k))))
    }

    fn missing(&self, key: &str) -> ReadError {
        self.path.error(format!("{} needs the attribute `{key}`", self.op))
    }

    pub fn i64_value(v: &Value, path: &Path) -> R<i64> {
        match v {
            Value::Number(n) => n.as_i64().ok_or_else(|| path.error(format!("expected an integer, found {n}"))),
            Value::String(s) => s.parse().map_err(|_| path.error(format!("expected an integer, found \"{s}\""))),
            other => Err(path.error(format!("expected an integer, found {other}"))),
        }
    }

    pub fn i64s_value(v: &Value, path: &Path) -> R<Vec<i64>> {
        let list = v.as_array().ok_or_else(|| path.error("expected a list of integers"))?;
        list.iter().enumerate().map(|(i, x)| Self::i64_value(x, &path.index(i))).collect()
    }

    pub fn i64(&self, key: &str) -> R<i64> {
        self.opt_i64(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_i64(&self, key: &str) -> R<Option<i64>> {
        self.get(key).filter(|v| !v.is_null()).map(|v| Self::i64_value(v, &self.path(key))).transpose()
    }

    pub fn i64s(&self, key: &str) -> R<Vec<i64>> {
        self.opt_i64s(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_i64s(&self, key: &str) -> R<Option<Vec<i64>>> {
        self.get(key).filter(|v| !v.is_null()).map(|v| Self::i64s_value(v, &self.path(key))).transpose()
    }

    /// A list of integers under any of several spellings.
    pub fn i64s_any(&self, keys: &[&str]) -> R<Vec<i64>> {
        let (v, p) = self.get_any(keys).ok_or_else(|| self.missing(keys[0]))?;
        Self::i64s_value(v, &p)
    }

    pub fn bool_or(&self, key: &str, default: bool) -> R<bool> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.path(key).error(format!("expected true or false, found {other}"))),
        }
    }

    pub fn string(&self, key: &str) -> R<String> {
        self.opt_string(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_string(&self, key: &str) -> R<Option<String>> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.path(key).error(format!("expected a string, found {other}"))),
        }
    }

    pub fn f32(&self, key: &str) -> R<f32> {
        match self.get(key) {
            None => Err(self.missing(key)),
            Some(Value::Number(n)) => n.to_string().parse::<f32>().map_err(|_| self.path(key).error("expected a number")),
            Some(other) => Err(self.path(key).error(format!("expected a number, found {other}"))),
        }
    }

    pub fn element_type(&self, key: &str) -> R<ElementType> {
        self.opt_element_type(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_element_type(&self, key: &str) -> R<Option<ElementType>> {
        match self.opt_string(key)? {
            None => Ok(None),
            Some(name) => ElementType::from_name(&name.to_ascii_lowercase())
                .map(Some)
                .ok_or_else(|| self.path(key).error(format!("unknown element type `{name}`"))),
        }
    }

    pub fn shape(&self, key: &str) -> R<Shape> {
        let text = self.string(key)?;
        Shape::parse(&text).map_err(|e| self.path(key).error(e))
    }

    pub fn computation(&self, key: &str) -> R<ComputationId> {
        let name = self.string(key)?;
        self.resolve_computation(&name, &self.path(key))
    }

    pub fn computation_any(&self, keys: &[&str]) -> R<ComputationId> {
        let (v, p) = self.get_any(keys).ok_or_else(|| self.missing(keys[0]))?;
        let name = v.as_str().ok_or_else(|| p.error("expected a computation name"))?;
        self.resolve_computation(name, &p)
    }

    pub fn computations(&self, key: &str) -> R<Vec<ComputationId>> {
        let v = self.get(key).ok_or_else(|| self.missing(key))?;
        let p = self.path(key);
        let list = v.as_array().ok_or_else(|| p.error("expected a list of computation names"))?;
        list.iter()
            .enumerate()
            .map(|(i, x)| {
                let name = x.as_str().ok_or_else(|| p.index(i).error("expected a computation name"))?;
                self.resolve_computation(name, &p.index(i))
            })
            .collect()
    }

    fn resolve_computation(&self, name: &str, path: &Path) -> R<ComputationId> {
        self.computations.get(name).copied().ok_or_else(|| path.error(format!("calls undefined computation `{name}`")))
    }

    /// `"SAME"`, `"VALID"`, or a list of `[low, high]` pairs.
    pub fn padding_value(v: &Value, path: &Path) -> R<Padding> {
        match v {
            Value::String(s) => match s.to_ascii_uppercase().as_str() {
                "SAME" => Ok(Padding::Same),
                "VALID" => Ok(Padding::Valid),
                _ => Err(path.error(format!("padding must be \"SAME\", \"VALID\" or a list of [low, high] pairs, found \"{s}\""))),
            },
            Value::Array(list) => {
                let mut pairs = Vec::with_capacity(list.len());
                for (i, pair) in list.iter().enumerate() {
                    let p = path.index(i);
                    let values = Self::i64s_value(pair, &p)?;
                    match values.as_slice() {
                        [lo, hi] => pairs.push((*lo, *hi)),
                        _ => return Err(p.error("each padding entry is a [low, high] pair")),
                    }
                }
                Ok(Padding::Explicit(pairs))
            }
            other => Err(path.error(format!("padding must be \"SAME\", \"VALID\" or a list of pairs, found {other}"))),
        }
    }

    pub fn padding_or(&self, key: &str, default: Padding) -> R<Padding> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => Self::padding_value(v, &self.path(key)),
        }
    }

    /// Fails on any attribute that was never read.
    pub fn finish(self) -> R<()> {
        let used = self.used.borrow();
        for key in self.obj.keys() {
            if !used.iter().any(|u| u == key) {
                // The op asked for every attribute it knows: the nearest is the hint.
                let hint = super::suggest::hint(key, used.iter().map(String::as_str));
                return Err(self.path(key).error(format!("unknown attribute `{key}` for op {}{hint}", self.op)));
            }
        }
        Ok(())
    }
}
