//! The StableHLO importer: MLIR text in StableHLO (and the CHLO ops JAX
//! emits), as `jax.jit(f).lower(x).as_text()` and `stablehlo-opt` print it,
//! read into an xla-json/1 module, which the JSON reader, the verifier and
//! both engines then take as any other module (docs/stablehlo.md).
//!
//! A hand-written recursive-descent reader over the whole text: `module`,
//! `func.func` (several, with `func.call`), ops in the pretty and the
//! generic form, `tensor<...>` types and `dense<...>` literals. Attributes
//! that carry no meaning for the result (`loc(...)`, `jax.*`, `mhlo.*`,
//! `sdy.*`, layouts, shardings) are read past. Every error names the line
//! and column; a construct the document has no meaning for (quantized
//! types, unbounded `?` dimensions, ops with no document counterpart) is an
//! error naming it.
//!
//! StableHLO's test programs carry their expected values as ops of the
//! `check` dialect; [`read_test_file`] reads those into [`Check`]s.

mod attr;
mod checks;
mod cursor;
mod custom;
mod dense;
mod func;
mod ops;
mod ops_region;
mod pretty;
mod syntax;
mod types;

use serde_json::Value;
use thiserror::Error;

/// An MLIR text that cannot be imported, with where.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("MLIR line {line}, column {column}: {}", crate::error::printable(message))]
pub struct MlirError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// `s` in backquotes for a message: control characters escaped (names
/// come from the input and must not drive the user's terminal) and cut
/// short.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("`");
    for (i, ch) in s.chars().enumerate() {
        if i == 60 {
            out.push('…');
            break;
        }
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out.push('`');
    out
}

/// Whether `text` looks like MLIR (its first significant word, after blank
/// lines, `//` comments and `#alias = ...` lines, is `module`, `func.func`
/// or `func`).
pub fn is_mlir_text(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("module") || l.starts_with("func.func") || l.starts_with("func ") || l.starts_with("\"func.func\""))
}

/// Reads a StableHLO module into an xla-json/1 module object. The entry is
/// `@main` (or the only public function, or the last function). Check ops
/// (`check.*`, `custom_call @check.*`) are read past: they have no result.
pub fn mlir_to_json(text: &str) -> Result<Value, MlirError> {
    func::read_module(text, func::Mode::Program).map(|m| m.module)
}

/// How a [`Check`] compares (StableHLO's `check` dialect).
#[derive(Debug, Clone, PartialEq)]
pub enum CheckKind {
    /// `check.expect_eq`, `expect_eq_const`, `custom_call @check.expect_eq`:
    /// bitwise equal, element by element.
    Eq,
    /// `check.expect_almost_eq`, `expect_almost_eq_const`,
    /// `custom_call @check.expect_almost_eq`: within `tolerance`.
    AlmostEq { tolerance: Option<f64> },
    /// `check.expect_close` / `custom_call @check.expect_close`: ULP
    /// distance within `[min_ulp_difference, max_ulp_difference]`.
    Close { max_ulp_difference: Option<u64>, min_ulp_difference: Option<u64> },
    /// `check.expect_serialized_eq` and other checks xlaref does not judge.
    Other(String),
}

/// What a check compares its actual value with.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckExpected {
    /// Element `i` of the test module's result tuple.
    Output(usize),
    /// A constant, as an xla-json/1 typed literal (`{"shape", "value"}`).
    Const(Value),
}

/// One check of a test module: element `actual` of the module's result
/// tuple against `expected`.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub kind: CheckKind,
    /// The check's line in the file.
    pub line: usize,
    pub actual: usize,
    pub expected: CheckExpected,
}

/// One module of a test file (files of `stablehlo/tests/interpret` hold
/// several, split by `// -----`).
#[derive(Debug, Clone)]
pub struct TestModule {
    /// The entry function's name (`@main`, `@add_op_test_si4`).
    pub name: String,
    /// The line where the module starts.
    pub line: usize,
    /// The module, whose entry returns a tuple of every value a check
    /// reads, in check order; or why it could not be read.
    pub module: Result<Value, MlirError>,
    pub checks: Vec<Check>,
}

/// A StableHLO test file: its modules, or the reason it is skipped.
#[derive(Debug, Clone)]
pub struct TestFile {
    /// `Some(reason)` for a file whose first line says `RUN-DISABLED`.
    pub disabled: Option<String>,
    pub modules: Vec<TestModule>,
}

/// Reads a StableHLO test file (testdata programs with
/// `custom_call @check.expect_*`, interpret tests with `check.*` ops and
/// `// -----` separators).
pub fn read_test_file(text: &str) -> TestFile {
    func::read_test_file(text)
}
