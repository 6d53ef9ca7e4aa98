//! xla-json/1 reading and writing (docs/format.md), nothing else.

mod attrs;
pub mod literal;
pub(crate) mod literal_text;
mod module;
pub mod ops;
mod parse;
pub mod path;
pub mod stream;
mod suggest;
mod write;

pub use literal::{read_literal, read_typed_literal, write_literal, write_typed_literal, WriteOptions};
pub use literal_text::{read_literal_text, read_typed_literals, Layout};
pub use module::{read_module, ReadOptions};
pub use parse::parse_json;
pub use path::Path;
pub use stream::{write_literal_to, write_typed_literal_to};
pub use write::write_module;

use crate::error::ReadError;
use crate::ir::Module;

/// Parses a module from JSON text.
///
/// HLO text (`HloModule ...`) is read through the HLO importer
/// ([`crate::hlo`]) and StableHLO MLIR (`module ...`, `func.func ...`)
/// through the StableHLO importer ([`crate::mlir`]), so every command
/// that takes a module file takes all three.
pub fn parse_module(text: &str, options: ReadOptions) -> Result<Module, ReadError> {
    read_module(&module_value(text)?, &Path::root(), options)
}

/// A module file's text as an xla-json/1 module object: JSON as it is, HLO
/// and StableHLO text imported.
pub fn module_value(text: &str) -> Result<serde_json::Value, ReadError> {
    if crate::hlo::is_hlo_text(text) {
        return crate::hlo::hlo_to_json(text).map_err(|e| ReadError::new(format!("line {} column {}", e.line, e.column), e.message));
    }
    if crate::mlir::is_mlir_text(text) {
        return crate::mlir::mlir_to_json(text).map_err(|e| ReadError::new(format!("line {} column {}", e.line, e.column), e.message));
    }
    parse_json(text)
}
