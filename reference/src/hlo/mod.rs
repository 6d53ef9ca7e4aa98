//! The HLO text importer: XLA's `HloModule ...` text (what
//! `jax.jit(f).lower(x).compiler_ir("hlo").as_hlo_text()` returns and what
//! `--xla_dump_to` writes) read into an xla-json/1 module, which the JSON
//! reader, the verifier and both engines then take as any other module.
//!
//! A hand-written recursive-descent reader over one instruction line at a
//! time (XLA prints one instruction per line). Layouts, metadata, frontend
//! attributes, sharding and backend configs are read past and ignored,
//! except where a backend config carries an op's meaning (JAX's LAPACK
//! custom calls). Every error names the line and column; an opcode that is
//! not an op of the document is an error naming it.

mod cursor;
mod literal;
pub(crate) mod ops;
mod ops_custom;
mod parse;

use serde_json::Value;
use thiserror::Error;

pub use parse::parse_hlo;

/// An HLO text that cannot be imported, with where.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("HLO line {line}, column {column}: {}", crate::error::printable(message))]
pub struct HloError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Whether `text` looks like an HLO text module (its first word, after
/// blank lines and `//` comments, is `HloModule`).
pub fn is_hlo_text(text: &str) -> bool {
    text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//")).is_some_and(|l| l.starts_with("HloModule"))
}

/// Reads HLO text into an xla-json/1 module object.
pub fn hlo_to_json(text: &str) -> Result<Value, HloError> {
    parse_hlo(text)
}
