//! The engine interface both evaluators (and, through the backend protocol,
//! outside processes) implement.

use xlaref_reference::eval::{self, Env};
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

/// Something that runs verified modules.
pub trait Engine: Sync {
    fn name(&self) -> &'static str;
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError>;
}

/// The reference evaluator of `reference/`.
pub struct Reference;

impl Engine for Reference {
    fn name(&self) -> &'static str {
        "reference"
    }
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
        eval::run(module, args, env)
    }
}

/// The optimized engine of `fast/`.
pub struct Fast;

impl Engine for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }
    fn run(&self, module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
        xlaref_fast::run(module, args, env)
    }
}

/// An engine by its CLI name.
pub fn by_name(name: &str) -> Option<&'static dyn Engine> {
    match name {
        "reference" => Some(&Reference),
        "fast" => Some(&Fast),
        _ => None,
    }
}
