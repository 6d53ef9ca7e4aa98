//! CustomCall targets: a registry of named functions over literals.
//!
//! The document's CustomCall hands its operands to a user function named by
//! `target_name` and takes back a value of the declared `shape`. xlaref
//! models the function as a Rust closure `Fn(operands, result_shape,
//! opaque) -> Result<Literal, RunError>`. The registry is part of the world
//! ([`crate::eval::Env`]), not of evaluation: both engines call the same
//! closures. Library users register their own targets with
//! [`Registry::register`]; the CLI runs with [`Registry::default`], which
//! holds the built-in targets below.
//!
//! Built-in targets (all prefixed `xlaref.`):
//!
//! | target | operands | result |
//! |---|---|---|
//! | `xlaref.identity` | one value of any shape | the operand; `shape` must be the operand's shape |
//! | `xlaref.tuple` | any number of values | the tuple of the operands; `shape` must be their tuple shape |
//! | `xlaref.add` | two arrays of the same shape and numeric type | their elementwise sum (integers wrap, floats round to nearest-even, as `Add`); f8 types are not supported |
//! | `xlaref.zeros` | ignored | zeros (false, +0) of `shape`, tuples and tokens included |
//! | `xlaref.constant` | ignored | the literal of `shape` written as JSON in `opaque` (docs/format.md §2) |
//!
//! LAPACK targets (`lapack_?getrf_ffi`, `lapack_?potrf_ffi`,
//! `lapack_?geqrf_ffi`, `lapack_?orgqr_ffi`/`lapack_?ungqr_ffi`,
//! `lapack_?trsm_ffi` for `?` in s, d, c, z), the ones JAX's CPU lowering
//! of `jnp.linalg` emits: see [`lapack_abi`] for their contract and
//! [`lapack`] for the reference's algorithms (docs/semantics-decisions.md,
//! "LAPACK custom-call targets").
//!
//! Which targets exist is a fact of the world the module runs in: the
//! verifier checks a module against [`KnownTargets`] (by default the
//! built-in registry's, [`Registry::known_targets`]), which says the names
//! and the shape rules of the built-in LAPACK targets. A call to a target
//! the registry does not hold (a module verified against other targets)
//! fails at run time with [`RunError::CustomCall`], naming the known ones.

pub mod lapack;
pub mod lapack_abi;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use crate::error::RunError;
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::types::Shape;

/// A custom-call target: operands, the instruction's result shape, and its
/// `opaque` (or `backend_config`) string.
pub type Target = Arc<dyn Fn(&[Literal], &Shape, &str) -> Result<Literal, RunError> + Send + Sync>;

/// A verifier rule of a target: given the operand shapes, the declared
/// result shape and the opaque string, `Err` says which rule is broken.
pub type ShapeRule = fn(&str, &[&Shape], &Shape, &str) -> Result<(), String>;

/// The custom-call targets a run may call, by name.
#[derive(Clone)]
pub struct Registry {
    targets: BTreeMap<String, Target>,
    /// The names still bound to xlaref's built-in target (cleared when a
    /// user registers or unregisters the name): the fast engine runs its
    /// own kernels for these.
    builtin: BTreeSet<String>,
    /// Shape rules of the built-in targets that have one (the LAPACK ones).
    rules: BTreeMap<String, ShapeRule>,
}

/// What the verifier knows about custom-call targets: their names, and
/// the shape rules of those that have one ([`crate::verify::VerifyOptions`]).
#[derive(Clone)]
pub struct KnownTargets {
    /// `None`: any name is accepted (and checked when the module runs).
    names: Option<BTreeMap<String, Option<ShapeRule>>>,
}

impl Default for KnownTargets {
    /// The built-in registry's targets.
    fn default() -> Self {
        Registry::with_builtins().known_targets()
    }
}

impl fmt::Debug for KnownTargets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.names {
            None => f.write_str("KnownTargets(any)"),
            Some(n) => f.debug_set().entries(n.keys()).finish(),
        }
    }
}

impl KnownTargets {
    /// Accepts every target name, with no shape rule: which targets exist
    /// is then checked only when the module runs.
    pub fn any() -> KnownTargets {
        KnownTargets { names: None }
    }

    /// Checks a CustomCall of `name` against the known targets.
    pub fn check(&self, name: &str, operands: &[&Shape], declared: &Shape, opaque: &str) -> Result<(), String> {
        let Some(names) = &self.names else { return Ok(()) };
        match names.get(name) {
            None => {
                let known: Vec<&str> = names.keys().map(String::as_str).collect();
                let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                Err(format!(
                    "unknown custom-call target: no target named `{name}` is registered (known targets: {known}); \
                     a library user registering targets passes Registry::known_targets() in VerifyOptions"
                ))
            }
            Some(Some(rule)) => rule(name, operands, declared, opaque),
            Some(None) => Ok(()),
        }
    }
}

impl Default for Registry {
    /// The built-in `xlaref.*` targets.
    fn default() -> Self {
        Registry::with_builtins()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("targets", &self.names().collect::<Vec<_>>()).finish()
    }
}

impl Registry {
    /// A registry with no targets.
    pub fn empty() -> Registry {
        Registry { targets: BTreeMap::new(), builtin: BTreeSet::new(), rules: BTreeMap::new() }
    }

    /// A registry with the built-in `xlaref.*` targets.
    pub fn with_builtins() -> Registry {
        let mut r = Registry::empty();
        r.register("xlaref.identity", identity);
        r.register("xlaref.tuple", tuple);
        r.register("xlaref.add", add);
        r.register("xlaref.zeros", |_: &[Literal], shape: &Shape, _: &str| Ok(zeros(shape)));
        r.register("xlaref.constant", constant);
        for name in lapack_abi::target_names() {
            let call = name.clone();
            r.register(name.clone(), move |operands: &[Literal], shape: &Shape, opaque: &str| lapack::call(&call, operands, shape, opaque));
            r.rules.insert(name, lapack_abi::check);
        }
        r.builtin = r.targets.keys().cloned().collect();
        r
    }

    /// Whether `name` is bound to xlaref's built-in target of that name
    /// (not replaced or removed by a user).
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(name)
    }

    /// The names and shape rules the verifier checks CustomCalls against.
    pub fn known_targets(&self) -> KnownTargets {
        let names = self.targets.keys().map(|n| (n.clone(), self.rules.get(n).copied())).collect();
        KnownTargets { names: Some(names) }
    }

    /// Adds (or replaces) a target; returns the one it replaced.
    pub fn register<F>(&mut self, name: impl Into<String>, f: F) -> Option<Target>
    where
        F: Fn(&[Literal], &Shape, &str) -> Result<Literal, RunError> + Send + Sync + 'static,
    {
        let name = name.into();
        self.builtin.remove(&name);
        self.rules.remove(&name);
        self.targets.insert(name, Arc::new(f))
    }

    /// Removes a target; returns it.
    pub fn unregister(&mut self, name: &str) -> Option<Target> {
        self.builtin.remove(name);
        self.rules.remove(name);
        self.targets.remove(name)
    }

    pub fn get(&self, name: &str) -> Option<&Target> {
        self.targets.get(name)
    }

    /// The names of the registered targets, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.targets.keys().map(String::as_str)
    }

    /// Calls target `name`: an unknown target is an error listing the known
    /// ones, and the target's value must have the declared `shape`.
    pub fn call(&self, name: &str, operands: &[Literal], shape: &Shape, opaque: &str) -> Result<Literal, RunError> {
        let Some(target) = self.get(name) else {
            let known: Vec<&str> = self.names().collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(RunError::CustomCall(format!("no target named `{name}` is registered (known targets: {known})")));
        };
        let value = target(operands, shape, opaque)?;
        let got = value.shape();
        if !got.compatible(shape) {
            return Err(RunError::CustomCall(format!("target `{name}` returned a value of shape {got}, the CustomCall declares {shape}")));
        }
        Ok(value)
    }
}

fn target_error(name: &str, what: String) -> RunError {
    RunError::CustomCall(format!("target `{name}`: {what}"))
}

/// `xlaref.identity`: the single operand, unchanged.
fn identity(operands: &[Literal], shape: &Shape, _: &str) -> Result<Literal, RunError> {
    match operands {
        [x] if x.shape().compatible(shape) => Ok(x.clone()),
        [x] => Err(target_error("xlaref.identity", format!("the operand has shape {}, the result shape is {shape}", x.shape()))),
        _ => Err(target_error("xlaref.identity", format!("takes 1 operand, got {}", operands.len()))),
    }
}

/// `xlaref.tuple`: the tuple of the operands.
fn tuple(operands: &[Literal], _: &Shape, _: &str) -> Result<Literal, RunError> {
    Ok(Literal::Tuple(operands.to_vec()))
}

/// `xlaref.zeros`: zeros of any shape.
fn zeros(shape: &Shape) -> Literal {
    match shape {
        Shape::Array(a) => ArrayLiteral::zeros(a).into(),
        Shape::Tuple(t) => Literal::Tuple(t.iter().map(zeros).collect()),
        Shape::Token => Literal::Token,
    }
}

/// `xlaref.constant`: the JSON literal in `opaque`, read as `shape`.
fn constant(_: &[Literal], shape: &Shape, opaque: &str) -> Result<Literal, RunError> {
    let fail = |e: String| target_error("xlaref.constant", format!("opaque is not a literal of shape {shape}: {e}"));
    let value = crate::json::parse_json(opaque).map_err(|e| fail(e.to_string()))?;
    let max = crate::eval::Limits::default().max_elements;
    crate::json::read_literal(&value, shape, &crate::json::Path::new("opaque"), max).map_err(|e| fail(e.to_string()))
}

/// `xlaref.add`: elementwise sum of two arrays of one shape and type.
fn add(operands: &[Literal], _: &Shape, _: &str) -> Result<Literal, RunError> {
    let name = "xlaref.add";
    let [Literal::Array(a), Literal::Array(b)] = operands else {
        return Err(target_error(name, "takes 2 array operands".into()));
    };
    if a.shape.element_type != b.shape.element_type || a.dims() != b.dims() {
        return Err(target_error(name, format!("operands have different shapes ({} and {})", a.shape, b.shape)));
    }
    fn wrapping<T: Copy>(x: &[T], y: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
        x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect()
    }
    let data = match (&a.data, &b.data) {
        (Data::S8(x), Data::S8(y)) => Data::S8(wrapping(x, y, i8::wrapping_add)),
        (Data::S16(x), Data::S16(y)) => Data::S16(wrapping(x, y, i16::wrapping_add)),
        (Data::S32(x), Data::S32(y)) => Data::S32(wrapping(x, y, i32::wrapping_add)),
        (Data::S64(x), Data::S64(y)) => Data::S64(wrapping(x, y, i64::wrapping_add)),
        (Data::U8(x), Data::U8(y)) => Data::U8(wrapping(x, y, u8::wrapping_add)),
        (Data::U16(x), Data::U16(y)) => Data::U16(wrapping(x, y, u16::wrapping_add)),
        (Data::U32(x), Data::U32(y)) => Data::U32(wrapping(x, y, u32::wrapping_add)),
        (Data::U64(x), Data::U64(y)) => Data::U64(wrapping(x, y, u64::wrapping_add)),
        // half's arithmetic rounds the exact f32 sum once: correctly rounded.
        (Data::F16(x), Data::F16(y)) => Data::F16(wrapping(x, y, |p, q| p + q)),
        (Data::BF16(x), Data::BF16(y)) => Data::BF16(wrapping(x, y, |p, q| p + q)),
        (Data::F32(x), Data::F32(y)) => Data::F32(wrapping(x, y, |p, q| p + q)),
        (Data::F64(x), Data::F64(y)) => Data::F64(wrapping(x, y, |p, q| p + q)),
        (Data::C64(x), Data::C64(y)) => Data::C64(wrapping(x, y, |p, q| p + q)),
        (Data::C128(x), Data::C128(y)) => Data::C128(wrapping(x, y, |p, q| p + q)),
        _ => return Err(target_error(name, format!("element type {} is not supported", a.element_type()))),
    };
    Ok(ArrayLiteral::with_shape(a.shape.clone(), data).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ElementType;

    #[test]
    fn unknown_target_lists_known_ones() {
        let r = Registry::default();
        let e = r.call("nope", &[], &Shape::Tuple(vec![]), "").unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("xlaref.identity") && e.contains("xlaref.add"), "{e}");
    }

    #[test]
    fn user_targets_and_shape_check() {
        let mut r = Registry::empty();
        r.register("two", |_: &[Literal], _: &Shape, _: &str| Ok(ArrayLiteral::scalar(2i32).into()));
        let s32 = Shape::scalar(ElementType::S32);
        assert_eq!(r.call("two", &[], &s32, "").unwrap(), Literal::from(ArrayLiteral::scalar(2i32)));
        let f32 = Shape::scalar(ElementType::F32);
        assert!(r.call("two", &[], &f32, "").unwrap_err().to_string().contains("returned a value of shape s32[]"));
    }

    #[test]
    fn builtin_names_and_known_targets() {
        let mut r = Registry::default();
        assert!(r.is_builtin("lapack_sgetrf_ffi") && r.is_builtin("xlaref.add"));
        let known = r.known_targets();
        let a = Shape::parse("f32[3,3]").unwrap();
        assert!(known.check("nope", &[], &a, "").unwrap_err().contains("no target named `nope`"));
        assert!(known.check("lapack_sgetrf_ffi", &[&a], &a, "").unwrap_err().contains("returns (f32[3,3], s32[3], s32[])"));
        assert!(known.check("xlaref.identity", &[&a], &a, "").is_ok());
        r.register("lapack_sgetrf_ffi", identity);
        assert!(!r.is_builtin("lapack_sgetrf_ffi"));
        assert!(r.known_targets().check("lapack_sgetrf_ffi", &[&a], &a, "").is_ok());
        assert!(KnownTargets::any().check("nope", &[], &a, "").is_ok());
    }

    #[test]
    fn builtin_add_and_constant() {
        let r = Registry::default();
        let a: Literal = ArrayLiteral::from_vec(vec![2], vec![i8::MAX, 1]).into();
        let sum = r.call("xlaref.add", &[a.clone(), a.clone()], &a.shape(), "").unwrap();
        assert_eq!(sum, ArrayLiteral::from_vec(vec![2], vec![-2i8, 2]).into());
        let c = r.call("xlaref.constant", &[], &a.shape(), "[3, 4]").unwrap();
        assert_eq!(c, ArrayLiteral::from_vec(vec![2], vec![3i8, 4]).into());
    }
}
