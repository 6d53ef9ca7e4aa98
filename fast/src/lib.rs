//! xlaref's fast engine: an independent optimized evaluator of verified
//! modules. It shares the IR, the reader and the verifier with the
//! reference, never its evaluation code.

use xlaref_reference::eval::Env;
use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

/// Runs the entry computation of `module` on `args`.
pub fn run(_module: &VerifiedModule, _args: Vec<Literal>, _env: &mut Env) -> Result<Literal, RunError> {
    Err(RunError::Unsupported("the fast engine does not evaluate modules yet".into()))
}
