//! The differential tester finds planted bugs: with a deliberate bug
//! switched on in the fast engine (`xlaref_fast::planted`, test-only), a
//! short `xlaref fuzz`-style campaign over the affected op must report a
//! disagreement within 60 seconds.

use std::time::{Duration, Instant};

use xlaref::gen;
use xlaref::harness::campaign::{run_one, Outcome};
use xlaref::harness::engine::Fast;
use xlaref_fast::planted::{plant, Bug};

/// Runs programs of `op` until one disagrees; the seconds it took.
fn seconds_to_catch(op: &str) -> Option<f64> {
    let start = Instant::now();
    let (name, strategy) = gen::select(&[op.to_string()]).ok()?.into_iter().next()?;
    let mut i = 0;
    while start.elapsed() < Duration::from_secs(60) {
        if let Outcome::Failure(f) = run_one(name, &strategy, 7, i, &Fast) {
            eprintln!("{op}: caught after {} programs, {:.2} s: {}", i + 1, start.elapsed().as_secs_f64(), f.summary);
            return Some(start.elapsed().as_secs_f64());
        }
        i += 1;
    }
    None
}

#[test]
fn planted_bugs_are_caught_within_a_minute() {
    // One test, run in sequence: the switch is global to this process.
    for (bug, op) in [(Bug::PadInteriorOffByOne, "Pad"), (Bug::Bf16Truncates, "ConvertElementType"), (Bug::ScatterSwapsOperands, "Scatter")]
    {
        plant(None);
        assert_clean(op);
        plant(Some(bug));
        let caught = seconds_to_catch(op);
        plant(None);
        assert!(caught.is_some(), "{bug:?} was not caught by a 60-second campaign over {op}");
    }
}

/// Without a planted bug, programs of the op agree.
fn assert_clean(op: &str) {
    let (name, strategy) = gen::select(&[op.to_string()]).expect("a generator").into_iter().next().expect("one generator");
    for i in 0..50 {
        if let Outcome::Failure(f) = run_one(name, &strategy, 7, i, &Fast) {
            panic!("{op} disagrees without a planted bug: {}", f.summary);
        }
    }
}
