//! xla-json/1 reading and writing (FORMAT.md), nothing else.

mod attrs;
pub mod literal;
mod module;
pub mod ops;
mod parse;
pub mod path;
mod write;

pub use literal::{read_literal, read_typed_literal, write_literal, write_typed_literal, WriteOptions};
pub use module::{read_module, ReadOptions};
pub use parse::parse_json;
pub use path::Path;
pub use write::write_module;

use crate::error::ReadError;
use crate::ir::Module;

/// Parses a module from JSON text.
pub fn parse_module(text: &str, options: ReadOptions) -> Result<Module, ReadError> {
    read_module(&parse_json(text)?, &Path::root(), options)
}
