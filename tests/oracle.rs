//! The golden suite: every case under `oracle-cases/` must pass on the
//! reference engine, like one `.wast` file run by every Wasm engine.

use std::path::Path;

use xlaref::harness::case::{case_files, judge, read_cases, run_case, RunOptions};
use xlaref::harness::engine::{Engine, Reference};
use xlaref_reference::json;

/// Runs every case under `root` on `engine`; returns the failures.
pub fn failures(root: &Path, engine: &dyn Engine) -> (usize, Vec<String>) {
    let options = RunOptions::default();
    let mut passed = 0;
    let mut failed = Vec::new();
    for file in case_files(root).expect("oracle-cases is readable") {
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file).expect("case file is readable");
        let doc = match json::parse_json(&text) {
            Ok(d) => d,
            Err(e) => {
                failed.push(format!("{shown}: {e}"));
                continue;
            }
        };
        for (name, case) in read_cases(&doc, &shown, &options) {
            match case {
                Err(e) => failed.push(format!("{name} ({shown}): malformed case: {e}")),
                Ok(case) => match judge(&case, &run_case(&case, engine, &options)) {
                    Ok(()) => passed += 1,
                    Err(reason) => failed.push(format!("{name} ({shown}): {reason}")),
                },
            }
        }
    }
    (passed, failed)
}

#[test]
fn oracle_cases_pass_on_the_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let (passed, failed) = failures(&root, &Reference);
    for f in &failed {
        eprintln!("FAIL {f}");
    }
    assert!(failed.is_empty(), "{} of {} oracle cases failed on the reference", failed.len(), passed + failed.len());
    assert!(passed > 0, "no oracle cases found");
}
