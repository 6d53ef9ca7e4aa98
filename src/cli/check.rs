//! `xlaref check [--engine reference|fast|both] PATH...`: runs every case,
//! prints one line per failing case, closes with `N passed, M failed`.

use std::path::Path;

use clap::Args;
use xlaref_reference::json;

use super::{read_text, LimitArgs, EXIT_BAD_INPUT, EXIT_FAILURE};
use crate::harness::case::{case_files, judge_under_model, read_cases, run_case};
use crate::harness::engine::{self, Engine};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Case files or directories (searched for *.json).
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// Which engine runs the cases: reference, fast, or both.
    #[arg(long, default_value = "reference")]
    pub engine: String,
    /// Also print a line for every passing case.
    #[arg(long, short)]
    pub verbose: bool,
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
    let (mut passed, mut failed) = (0usize, 0usize);
    for root in &a.paths {
        let files = match case_files(Path::new(root)) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: cannot read {root}: {e}");
                return EXIT_BAD_INPUT;
            }
        };
        for file in files {
            let shown = file.display().to_string();
            let doc = match read_text(&shown).and_then(|t| json::parse_json(&t).map_err(|e| e.to_string())) {
                Ok(d) => d,
                Err(e) => {
                    println!("FAIL {shown}: {e}");
                    failed += 1;
                    continue;
                }
            };
            for (name, case) in read_cases(&doc, &shown, &options) {
                let case = match case {
                    Ok(c) => c,
                    Err(e) => {
                        println!("FAIL {name} ({shown}): malformed case: {e}");
                        failed += 1;
                        continue;
                    }
                };
                for engine in &engines {
                    let outcome = run_case(&case, *engine, &options);
                    match judge_under_model(&case, &outcome, *engine, &options) {
                        Ok(()) => {
                            passed += 1;
                            if a.verbose {
                                println!("ok   {name} [{}]", engine.name());
                            }
                        }
                        Err(reason) => {
                            failed += 1;
                            println!("FAIL {name} [{}] ({shown}): {reason}", engine.name());
                        }
                    }
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        0
    } else {
        EXIT_FAILURE
    }
}
