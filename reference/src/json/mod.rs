//! xla-json/1 reading and writing (FORMAT.md), nothing else.

mod attrs;
pub mod literal;
mod module;
pub mod ops;
pub mod path;
mod write;

pub use literal::{read_literal, read_typed_literal, write_literal, write_typed_literal, WriteOptions};
pub use module::{read_module, ReadOptions};
pub use path::Path;
pub use write::write_module;

use crate::error::ReadError;
use crate::ir::Module;

/// Parses JSON text, reporting syntax errors with line and column.
pub fn parse_json(text: &str) -> Result<serde_json::Value, ReadError> {
    serde_json::from_str(text).map_err(|e| ReadError::new(format!("line {} column {}", e.line(), e.column()), format!("invalid JSON: {e}")))
}

/// Parses a module from JSON text.
pub fn parse_module(text: &str, options: ReadOptions) -> Result<Module, ReadError> {
    read_module(&parse_json(text)?, &Path::root(), options)
}
