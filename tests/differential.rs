//! Reference and fast engine agree under the tolerance model on random
//! valid programs of every generated op. Cases per op: `PROPTEST_CASES`
//! (default 32, CI-sized), programs drawn as `xlaref fuzz` draws them.

use xlaref::gen;
use xlaref::harness::campaign::{run_one, Outcome};
use xlaref::harness::engine::Fast;

fn cases_per_op() -> u64 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32)
}

#[test]
fn reference_and_fast_agree_on_every_generated_op() {
    let n = cases_per_op();
    let mut problems = Vec::new();
    for (op, strategy) in gen::generators() {
        for i in 0..n {
            match run_one(op, &strategy, 0xd1ff, i, &Fast) {
                Outcome::Agree => {}
                Outcome::Invalid(e) => problems.push(format!("generator bug: {e}")),
                Outcome::Failure(f) => {
                    problems.push(format!("{op} program {i}: {}\n{}", f.summary, serde_json::to_string(&f.case).unwrap_or_default()));
                    break; // one shrunk failure per op is enough to act on
                }
            }
        }
    }
    for p in &problems {
        eprintln!("{p}\n");
    }
    assert!(problems.is_empty(), "{} ops disagree or generate invalid programs", problems.len());
}

#[test]
fn generators_cover_the_documents_data_ops() {
    let names: Vec<&str> = gen::generators().into_iter().map(|(n, _)| n).collect();
    for op in
        ["Add", "Exp", "ConvertElementType", "Pad", "Gather", "Scatter", "Reduce", "ReduceWindow", "DotGeneral", "Conv", "Sort", "Fft"]
    {
        assert!(names.contains(&op), "no generator for {op}");
    }
}
