//! `xlaref export --to stablehlo MODULE [-o FILE]`: any module xlaref reads
//! (xla-json, HLO text) written as StableHLO MLIR text (docs/stablehlo.md,
//! "Writing"), or as the canonical xla-json/1 module (`--to json`). The
//! module is verified first: only a module the engines run is written.

use clap::{Args, ValueEnum};
use xlaref_reference::json::{self, Path, ReadOptions};
use xlaref_reference::verify::{self, VerifyOptions};

use super::{read_text, EXIT_BAD_INPUT};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Target {
    /// StableHLO MLIR text (generic op form).
    Stablehlo,
    /// The canonical xla-json/1 module (as `xlaref import` writes it).
    Json,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// What to write.
    #[arg(long, value_enum)]
    pub to: Target,
    /// The module: xla-json/1, HLO text or StableHLO MLIR; `-` reads it
    /// from standard input.
    pub module: String,
    /// Where to write (default: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Largest number of elements of any value.
    #[arg(long, default_value_t = 1 << 28)]
    pub max_elements: i64,
}

fn export(a: &ExportArgs) -> Result<String, String> {
    let text = read_text(&a.module)?;
    let value = json::module_value(&text).map_err(|e| format!("{}: {e}", a.module))?;
    let module = json::read_module(&value, &Path::root(), ReadOptions { max_elements: a.max_elements })
        .map_err(|e| format!("{}: read error: {e}", a.module))?;
    let verified = verify::verify(module, &VerifyOptions { max_elements: a.max_elements, ..VerifyOptions::default() })
        .map_err(|e| format!("{}: verify error: {e}", a.module))?;
    match a.to {
        Target::Stablehlo => {
            xlaref_reference::stablehlo::write_stablehlo(&verified).map_err(|e| format!("{}: cannot write StableHLO: {e}", a.module))
        }
        Target::Json => {
            let written = json::write_module(verified.module());
            Ok(serde_json::to_string_pretty(&written).unwrap_or_default() + "\n")
        }
    }
}

pub fn run(a: ExportArgs) -> i32 {
    let text = match export(&a) {
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
