//! `xlaref import FILE [-o FILE.json]`: an HLO text module (an XLA dump,
//! `jax.jit(f).lower(x).compiler_ir("hlo").as_hlo_text()`) or a StableHLO
//! MLIR module (`jax.jit(f).lower(x).as_text()`) written as the equivalent
//! xla-json/1 module. The module is verified first, so what is
//! written is a module the engines run.

use clap::Args;
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::verify::{self, VerifyOptions};

use super::{read_text, EXIT_BAD_INPUT};

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The module: XLA HLO text or StableHLO MLIR, told apart by content;
    /// `-` reads it from standard input.
    pub module: String,
    /// Where to write the xla-json/1 module (default: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Largest number of elements of any value.
    #[arg(long, default_value_t = 1 << 28)]
    pub max_elements: i64,
}

fn import(a: &ImportArgs) -> Result<String, String> {
    let text = read_text(&a.module)?;
    let value = if xlaref_reference::mlir::is_mlir_text(&text) {
        xlaref_reference::mlir::mlir_to_json(&text).map_err(|e| format!("{}: {e}", a.module))?
    } else if xlaref_reference::hlo::is_hlo_text(&text) {
        xlaref_reference::hlo::hlo_to_json(&text).map_err(|e| format!("{}: {e}", a.module))?
    } else {
        return Err(format!(
            "{}: neither an HLO text module (`HloModule ...`) nor StableHLO MLIR (`module ...` or `func.func ...`)",
            a.module
        ));
    };
    let module = json::read_module(&value, &Path::root(), ReadOptions { max_elements: a.max_elements })
        .map_err(|e| format!("{}: read error: {e}", a.module))?;
    let verified = verify::verify(module, &VerifyOptions { max_elements: a.max_elements, ..VerifyOptions::default() })
        .map_err(|e| format!("{}: verify error: {e}", a.module))?;
    // Written through the module writer: the canonical form `xlaref eval` reads.
    let written = json::write_module(verified.module());
    Ok(serde_json::to_string_pretty(&written).unwrap_or_default() + "\n")
}

pub fn run(a: ImportArgs) -> i32 {
    let text = match import(&a) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}", xlaref_reference::error::printable(&e.to_string()));
            return EXIT_BAD_INPUT;
        }
    };
    match &a.output {
        None => {
            print!("{text}");
            0
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: cannot write {path}: {e}");
                EXIT_BAD_INPUT
            }
        },
    }
}
