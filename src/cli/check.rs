//! `xlaref check [--engine reference|fast|both] PATH...`: runs every case
//! file (`*.json`) and every StableHLO test file (`*.mlir`, or any file
//! whose text is MLIR), prints one line per failing case or module, closes
//! with `N passed, M failed, K skipped`.

use std::path::Path;

use clap::Args;
use xlaref_reference::json;

use super::check_mlir::{MlirRun, Tally};
use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::case::{files_with_extensions, judge_under_model, read_cases, run_case, RunOptions};
use crate::harness::engine::{self, Engine};
use xlaref_reference::mlir::is_mlir_text;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Case files, StableHLO test files, or directories (searched for *.json and *.mlir).
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// Which engine runs the cases: reference, fast, or both.
    #[arg(long, default_value = "reference")]
    pub engine: String,
    /// Also print a line for every passing case.
    #[arg(long, short)]
    pub verbose: bool,
    /// Write the per-family table of the StableHLO test files run (Markdown) to this file.
    #[arg(long, value_name = "FILE")]
    pub table: Option<String>,
    /// Also run StableHLO test files marked RUN-DISABLED (skipped by default).
    #[arg(long)]
    pub run_disabled: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(a: CheckArgs) -> i32 {
    let engines: Vec<&dyn Engine> = match a.engine.as_str() {
        "both" => vec![&engine::Reference, &engine::Fast],
        name => match engine::by_name(name) {
            Some(e) => vec![e],
            None => {
                eprintln!("error: unknown engine `{name}` (expected reference, fast or both)");
                return EXIT_BAD_INPUT;
            }
        },
    };
    let options = a.limits.run_options();
    let mut tally = Tally::default();
    let mut mlir = MlirRun::new(&engines, &a.limits, a.run_disabled, a.verbose);
    for root in &a.paths {
        let files = match files_with_extensions(Path::new(root), &["json", "mlir"]) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: cannot read {root}: {e}");
                return EXIT_BAD_INPUT;
            }
        };
        for file in files {
            let shown = file.display().to_string();
            // As before MLIR: an unreadable file fails, the run goes on.
            let text = match read_text(&shown) {
                Ok(t) => t,
                Err(e) => {
                    out!("FAIL {shown}: {e}");
                    tally.failed += 1;
                    continue;
                }
            };
            // By content, not by name: an MLIR file may have any suffix.
            if is_mlir_text(&text) {
                mlir.run_file(&shown, &text, &mut tally);
            } else {
                check_case_file(&shown, &text, &engines, &options, a.verbose, &mut tally);
            }
        }
    }
    if let Some(path) = &a.table {
        if let Err(e) = std::fs::write(path, mlir.table()) {
            eprintln!("error: cannot write {path}: {e}");
            return EXIT_BAD_INPUT;
        }
    }
    out!("{} passed, {} failed, {} skipped", tally.passed, tally.failed, tally.skipped);
    if tally.passed + tally.failed + tally.skipped == 0 {
        // A mistyped folder would otherwise "pass".
        eprintln!("error: no cases found in {} (case files are *.json, StableHLO test files *.mlir)", a.paths.join(", "));
        return EXIT_BAD_INPUT;
    }
    if tally.failed == 0 {
        0
    } else {
        EXIT_FAILURE
    }
}

/// Runs every case of a JSON case file on every engine.
fn check_case_file(shown: &str, text: &str, engines: &[&dyn Engine], options: &RunOptions, verbose: bool, tally: &mut Tally) {
    let doc = match json::parse_json(text) {
        Ok(d) => d,
        Err(e) => {
            out!("FAIL {shown}: {e}");
            tally.failed += 1;
            return;
        }
    };
    for (name, case) in read_cases(&doc, shown, options) {
        let case = match case {
            Ok(c) => c,
            Err(e) => {
                out!("FAIL {name} ({shown}): malformed case: {e}");
                tally.failed += 1;
                continue;
            }
        };
        for engine in engines {
            let outcome = run_case(&case, *engine, options);
            match judge_under_model(&case, &outcome, *engine, options) {
                Ok(()) => {
                    tally.passed += 1;
                    if verbose {
                        out!("ok   {name} [{}]", engine.name());
                    }
                }
                Err(reason) => {
                    tally.failed += 1;
                    out!("FAIL {name} [{}] ({shown}): {reason}", engine.name());
                }
            }
        }
    }
}
