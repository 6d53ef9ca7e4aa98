//! The golden suite: every case under `oracle-cases/` must pass on both
//! engines, like one `.wast` file run by every Wasm engine. (CI runs the
//! fast engine's half again under each `XLAREF_FAST_ISA` cap.)

use std::path::Path;

use xlaref::harness::case::{case_files, judge_under_model, read_cases, run_case, RunOptions};
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::json;

/// Runs every case under `root` on `engine`; returns the failures. As in
/// `xlaref check`, the fast engine passes a case whose expected value it
/// misses when it agrees with the reference under the tolerance model.
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
                Ok(case) => match judge_under_model(&case, &run_case(&case, engine, &options), engine, &options) {
                    Ok(()) => passed += 1,
                    Err(reason) => failed.push(format!("{name} ({shown}): {reason}")),
                },
            }
        }
    }
    (passed, failed)
}

fn assert_all_pass(engine: &dyn Engine) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let (passed, failed) = failures(&root, engine);
    for f in &failed {
        eprintln!("FAIL {f}");
    }
    let name = engine.name();
    assert!(failed.is_empty(), "{} of {} oracle cases failed on the {name} engine", failed.len(), passed + failed.len());
    assert!(passed > 3000, "only {passed} oracle cases found");
}

#[test]
fn oracle_cases_pass_on_the_reference() {
    assert_all_pass(&Reference);
}

#[test]
fn oracle_cases_pass_on_the_fast_engine() {
    assert_all_pass(&Fast);
}
