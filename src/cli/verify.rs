//! `xlaref verify MODULE.json`: each instruction's inferred shape, or the
//! first error.

use clap::Args;
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::verify::{self, VerifyOptions};

use super::{read_text, EXIT_BAD_INPUT};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The module: xla-json/1, XLA HLO text (`HloModule ...`) or StableHLO
    /// MLIR (`module ...`, `func.func ...`), told apart by content; `-`
    /// reads it from standard input.
    pub module: String,
    /// Largest number of elements of any value.
    #[arg(long, default_value_t = 1 << 28)]
    pub max_elements: i64,
    /// Also reject the forms the document forbids that xlaref accepts as
    /// extensions because real programs use them (rank-2 Cholesky and
    /// TriangularSolve, a u64[2] PHILOX state; docs/semantics-decisions.md).
    #[arg(long)]
    pub strict: bool,
}

pub fn run(a: VerifyArgs) -> i32 {
    let text = match read_text(&a.module) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    let module = match json::parse_module(&text, ReadOptions { max_elements: a.max_elements }) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("read error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    match verify::verify(module, &VerifyOptions { max_elements: a.max_elements, strict: a.strict, ..VerifyOptions::default() }) {
        Ok(vm) => {
            for (id, c) in vm.module().computations.iter().enumerate() {
                let entry = if id == vm.entry() { " (entry)" } else { "" };
                out!("computation {}{entry}:", c.name);
                for (i, instr) in c.instructions.iter().enumerate() {
                    let root = if i == c.root { "ROOT " } else { "" };
                    out!("  {root}{} = {} : {}", instr.name, instr.op.name(), vm.shape(id, i));
                }
            }
            0
        }
        Err(e) => {
            eprintln!("verify error: {e}");
            EXIT_BAD_INPUT
        }
    }
}
