//! StableHLO's own test files run through `xlaref` (docs/stablehlo-checks.md):
//! the judge of the `check` dialect on real values, the runner on
//! hand-built test files, and — when `../shared/stablehlo-tests` (or
//! `$XLAREF_STABLEHLO_TESTS`) exists — the whole shared suite on both
//! engines against a pass-rate floor.

use half::{bf16, f16};
use num_complex::Complex;
use serde_json::{json, Value};
use xlaref::harness::compare::Disagreement;
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref::harness::stablehlo_check::{judge, ulp_difference, CheckForm, Miss, Rule, Unjudged};
use xlaref::harness::stablehlo_suite::{run_test_file, FileVerdict, ModuleFailure, ModuleOutcome, SkipReason, SuiteOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal, Stored};
use xlaref_reference::mlir::{Check, CheckExpected, CheckKind, MlirError, TestFile, TestModule};

fn lit<T: Stored>(v: Vec<T>) -> Literal {
    Literal::Array(ArrayLiteral::from_vec(vec![v.len() as i64], v))
}

fn miss(rule: Rule, actual: Literal, expected: Literal) -> Option<Miss> {
    match judge(&rule, &actual, &expected) {
        Ok(()) => None,
        Err(Disagreement::Element(_, m)) => Some(m),
        Err(Disagreement::Shape(m)) => panic!("unexpected shape mismatch {m}"),
    }
}

const ALMOST: Rule = Rule::AlmostEq { tolerance: 1e-4 };
const CLOSE3: Rule = Rule::Close { min_ulp: 0, max_ulp: 3 };

fn next_f32(x: f32, n: u32) -> f32 {
    f32::from_bits(x.to_bits() + n)
}

#[test]
fn eq_is_ieee_equality() {
    // APFloat's `==`: a NaN never equals, the zeros do.
    assert_eq!(miss(Rule::Eq, lit(vec![f32::NAN]), lit(vec![f32::NAN])), Some(Miss::NotEqual));
    assert_eq!(miss(Rule::Eq, lit(vec![0.0f32]), lit(vec![-0.0f32])), None);
    assert_eq!(miss(Rule::Eq, lit(vec![1.0f64]), lit(vec![f64::from_bits(1.0f64.to_bits() + 1)])), Some(Miss::NotEqual));
    assert_eq!(miss(Rule::Eq, lit(vec![-7i32, 3]), lit(vec![-7i32, 3])), None);
    assert_eq!(miss(Rule::Eq, lit(vec![u64::MAX]), lit(vec![u64::MAX - 1])), Some(Miss::NotEqual));
    assert_eq!(miss(Rule::Eq, lit(vec![true, false]), lit(vec![true, true])), Some(Miss::NotEqual));
    let z = |re: f32, im: f32| Complex::new(re, im);
    assert_eq!(miss(Rule::Eq, lit(vec![z(1.0, -0.0)]), lit(vec![z(1.0, 0.0)])), None);
    assert_eq!(miss(Rule::Eq, lit(vec![z(1.0, f32::NAN)]), lit(vec![z(1.0, f32::NAN)])), Some(Miss::NotEqual));
}

#[test]
fn almost_eq_is_absolute_with_stablehlo_special_cases() {
    assert_eq!(miss(ALMOST, lit(vec![1.0f32]), lit(vec![1.00009f32])), None);
    assert!(matches!(miss(ALMOST, lit(vec![1.0f32]), lit(vec![1.0002f32])), Some(Miss::OutsideTolerance { .. })));
    // Absolute, not relative: large values must agree to 1e-4 too.
    assert!(matches!(miss(ALMOST, lit(vec![1.0e6f32]), lit(vec![next_f32(1.0e6, 1)])), Some(Miss::OutsideTolerance { .. })));
    assert_eq!(miss(ALMOST, lit(vec![f32::NAN]), lit(vec![-f32::NAN])), None);
    assert_eq!(miss(ALMOST, lit(vec![f32::NAN]), lit(vec![1.0f32])), Some(Miss::NonFinite));
    assert_eq!(miss(ALMOST, lit(vec![f32::INFINITY]), lit(vec![f32::INFINITY])), None);
    assert_eq!(miss(ALMOST, lit(vec![f32::INFINITY]), lit(vec![f32::NEG_INFINITY])), Some(Miss::NonFinite));
    assert_eq!(miss(ALMOST, lit(vec![f32::INFINITY]), lit(vec![f32::MAX])), Some(Miss::NonFinite));
    // Both zeros are IEEE-equal; a tiny value of the other sign is not
    // close whatever the tolerance (the sign test comes first).
    assert_eq!(miss(ALMOST, lit(vec![0.0f32]), lit(vec![-0.0f32])), None);
    assert_eq!(miss(ALMOST, lit(vec![1e-9f32]), lit(vec![-1e-9f32])), Some(Miss::OppositeSigns));
    assert_eq!(miss(ALMOST, lit(vec![0.0f32]), lit(vec![-1e-9f32])), Some(Miss::OppositeSigns));
    assert_eq!(miss(ALMOST, lit(vec![-0.0f32]), lit(vec![-1e-9f32])), None);
    // Narrow types compare their exact values in f64.
    assert_eq!(miss(ALMOST, lit(vec![bf16::from_f32(3.140625)]), lit(vec![bf16::from_f32(3.15625)])), Some(miss_of(0.015625)));
    assert_eq!(miss(ALMOST, lit(vec![f16::from_f32(0.1)]), lit(vec![f16::from_f32(0.10004)])), None);
    // Complex: both parts.
    let z = |re: f64, im: f64| Complex::new(re, im);
    assert_eq!(miss(ALMOST, lit(vec![z(1.0, 2.0)]), lit(vec![z(1.00005, 2.00005)])), None);
    assert!(matches!(miss(ALMOST, lit(vec![z(1.0, 2.0)]), lit(vec![z(1.0, 2.001)])), Some(Miss::OutsideTolerance { .. })));
}

fn miss_of(difference: f64) -> Miss {
    Miss::OutsideTolerance { difference, tolerance: 1e-4 }
}

#[test]
fn ulp_difference_as_stablehlo_counts() {
    assert_eq!(ulp_difference(1.0f32, next_f32(1.0, 3)), 3);
    assert_eq!(ulp_difference(next_f32(1.0, 3), 1.0f32), 3);
    // Across zero: |a| + |b| in bit patterns, the two zeros 0 apart.
    let tiny = f32::from_bits(1);
    assert_eq!(ulp_difference(tiny, -tiny), 2);
    assert_eq!(ulp_difference(tiny, -0.0f32), 1);
    assert_eq!(ulp_difference(0.0f32, -0.0f32), 0);
    // NaNs of any sign and payload are 0 apart; a non-finite value is
    // infinitely far from anything else.
    assert_eq!(ulp_difference(f32::NAN, f32::from_bits(0xFFC0_0001)), 0);
    assert_eq!(ulp_difference(f32::INFINITY, f32::MAX), u64::MAX);
    assert_eq!(ulp_difference(f32::INFINITY, f32::INFINITY), 0);
    assert_eq!(ulp_difference(f32::NEG_INFINITY, f32::INFINITY), u64::MAX);
    assert_eq!(ulp_difference(f16::from_bits(0x3C00), f16::from_bits(0x3C03)), 3);
    assert_eq!(ulp_difference(bf16::from_bits(0x3F80), bf16::from_bits(0xBF80)), 2 * 0x3F80);
    assert_eq!(ulp_difference(f64::MAX, -f64::MAX), 2 * f64::MAX.to_bits());
}

#[test]
fn close_takes_an_ulp_range() {
    assert_eq!(miss(CLOSE3, lit(vec![next_f32(1.0, 3)]), lit(vec![1.0f32])), None);
    assert_eq!(miss(CLOSE3, lit(vec![next_f32(1.0, 4)]), lit(vec![1.0f32])), Some(Miss::UlpDistance { ulps: 4, min: 0, max: 3 }));
    assert_eq!(miss(CLOSE3, lit(vec![f32::NAN]), lit(vec![f32::NAN])), None);
    assert_eq!(miss(CLOSE3, lit(vec![f32::INFINITY]), lit(vec![f32::MAX])), Some(Miss::UlpDistance { ulps: u64::MAX, min: 0, max: 3 }));
    // A lower bound: the values must differ by at least that much.
    let exactly_one = Rule::Close { min_ulp: 1, max_ulp: 1 };
    assert_eq!(miss(exactly_one, lit(vec![2.0f64]), lit(vec![2.0f64])), Some(Miss::UlpDistance { ulps: 0, min: 1, max: 1 }));
    assert_eq!(miss(exactly_one, lit(vec![f64::from_bits(2.0f64.to_bits() - 1)]), lit(vec![2.0f64])), None);
    // Complex: the larger of the parts' distances.
    let z = Complex::new(next_f32(1.0, 1), next_f32(-2.0, 4));
    assert_eq!(miss(CLOSE3, lit(vec![z]), lit(vec![Complex::new(1.0f32, -2.0)])), Some(Miss::UlpDistance { ulps: 4, min: 0, max: 3 }));
    // Integers have no ULPs: StableHLO's verifier refuses the check.
    assert_eq!(miss(CLOSE3, lit(vec![1i32]), lit(vec![1i32])), Some(Miss::NotFloat));
    assert_eq!(miss(ALMOST, lit(vec![1u8]), lit(vec![1u8])), Some(Miss::NotFloat));
}

#[test]
fn shapes_and_types_must_match() {
    assert!(matches!(judge(&Rule::Eq, &lit(vec![1.0f32]), &lit(vec![1.0f32, 2.0])), Err(Disagreement::Shape(_))));
    assert!(matches!(judge(&CLOSE3, &lit(vec![1.0f32]), &lit(vec![1.0f64])), Err(Disagreement::Shape(_))));
}

#[test]
fn defaults_follow_the_spelling() {
    let close = CheckKind::Close { max_ulp_difference: None, min_ulp_difference: None };
    assert_eq!(Rule::for_check(&close, CheckForm::CustomCall), Ok(Rule::Close { min_ulp: 0, max_ulp: 3 }));
    assert_eq!(Rule::for_check(&close, CheckForm::Op), Ok(Rule::Close { min_ulp: 0, max_ulp: 1 }));
    let almost = CheckKind::AlmostEq { tolerance: None };
    assert_eq!(Rule::for_check(&almost, CheckForm::CustomCall), Ok(Rule::AlmostEq { tolerance: 1e-3 }));
    assert_eq!(Rule::for_check(&almost, CheckForm::Op), Ok(Rule::AlmostEq { tolerance: 1e-4 }));
    let given = CheckKind::AlmostEq { tolerance: Some(0.5) };
    assert_eq!(Rule::for_check(&given, CheckForm::Op), Ok(Rule::AlmostEq { tolerance: 0.5 }));
    let other = CheckKind::Other("expect_serialized_eq".into());
    assert_eq!(Rule::for_check(&other, CheckForm::Op), Err(Unjudged("expect_serialized_eq".into())));
}

// ---- the runner, on hand-built test files ----

/// A module returning `(f32[2] {1, 2}, f32[2] {1, 2+2ulp})`.
fn two_values() -> Value {
    json!({"format": "xla-json/1", "computations": {"main": {"params": [], "instructions": [
        {"name": "a", "op": "Constant", "shape": "f32[2]", "literal": [1, 2]},
        {"name": "b", "op": "Constant", "shape": "f32[2]", "literal": [1, 2.0000004]},
        {"name": "t", "op": "Tuple", "operands": ["a", "b"]}
    ]}}})
}

fn check(kind: CheckKind, line: usize, expected: CheckExpected) -> Check {
    Check { kind, line, actual: 0, expected }
}

fn module(name: &str, line: usize, module: Result<Value, MlirError>, checks: Vec<Check>) -> TestModule {
    TestModule { name: name.into(), line, module, checks }
}

const TEXT: &str = "line 1\n  stablehlo.custom_call @check.expect_close(%0, %1)\n  check.expect_close %0, %1\n";

fn run(file: &TestFile) -> Vec<ModuleOutcome> {
    let engines: [&dyn Engine; 2] = [&Reference, &Fast];
    let report = run_test_file("testdata/dot_x.mlir", TEXT, file, &engines, &SuiteOptions::default());
    assert_eq!(report.family, "dot");
    report.modules.into_iter().flat_map(|m| m.outcomes.into_iter().map(|(_, o)| o)).collect()
}

#[test]
fn runner_judges_each_check_with_its_spelling() {
    let close = || CheckKind::Close { max_ulp_difference: None, min_ulp_difference: None };
    // Line 2 is a custom call (3 ULPs): 2 apart passes; line 3 is an op
    // (1 ULP): fails.
    let file = TestFile {
        disabled: None,
        modules: vec![
            module("ok", 1, Ok(two_values()), vec![check(close(), 2, CheckExpected::Output(1))]),
            module("tight", 1, Ok(two_values()), vec![check(close(), 3, CheckExpected::Output(1))]),
        ],
    };
    let outcomes = run(&file);
    assert_eq!(outcomes[0], ModuleOutcome::Passed);
    assert_eq!(outcomes[1], ModuleOutcome::Passed);
    assert!(matches!(&outcomes[2], ModuleOutcome::Failed(ModuleFailure::Check { line: 3, .. })), "{outcomes:?}");
}

#[test]
fn runner_reads_constants_and_reports_what_is_missing() {
    let constant = json!({"shape": "f32[2]", "value": [1, 2]});
    let file = TestFile {
        disabled: None,
        modules: vec![
            module("const", 1, Ok(two_values()), vec![check(CheckKind::Eq, 1, CheckExpected::Const(constant))]),
            module("missing", 1, Ok(two_values()), vec![check(CheckKind::Eq, 1, CheckExpected::Output(5))]),
            module("bad", 1, Ok(two_values()), vec![check(CheckKind::Eq, 1, CheckExpected::Const(json!({"shape": "f32[3]"})))]),
        ],
    };
    let outcomes = run(&file);
    assert_eq!(outcomes[0], ModuleOutcome::Passed);
    assert_eq!(outcomes[2], ModuleOutcome::Failed(ModuleFailure::MissingValue { line: 1, index: 5 }));
    assert!(matches!(outcomes[4], ModuleOutcome::Failed(ModuleFailure::BadConstant { line: 1, .. })));
}

#[test]
fn runner_skips_and_rejects() {
    let error = MlirError { line: 4, column: 2, message: "quantized types have no meaning in the document".into() };
    let eq = || vec![check(CheckKind::Eq, 1, CheckExpected::Output(1))];
    let bad_module = json!({"format": "xla-json/1", "computations": {"main": {"params": [], "instructions": [
        {"name": "a", "op": "Add", "operands": []}]}}});
    let file = TestFile {
        disabled: None,
        modules: vec![
            module("nochecks", 1, Ok(two_values()), vec![]),
            module("mlir", 1, Err(error.clone()), eq()),
            module("unverifiable", 1, Ok(bad_module), eq()),
            module(
                "unjudged",
                1,
                Ok(two_values()),
                vec![check(CheckKind::Other("expect_serialized_eq".into()), 7, CheckExpected::Output(1))],
            ),
        ],
    };
    let outcomes = run(&file);
    assert_eq!(outcomes[0], ModuleOutcome::Skipped(SkipReason::NoChecks));
    assert!(matches!(&outcomes[2], ModuleOutcome::Rejected(r) if r.to_string().contains("quantized")));
    assert!(matches!(&outcomes[4], ModuleOutcome::Rejected(_)), "{:?}", outcomes[4]);
    assert_eq!(outcomes[6], ModuleOutcome::Skipped(SkipReason::Unjudged { line: 7, check: "expect_serialized_eq".into() }));
}

#[test]
fn disabled_files_are_skipped_with_their_reason() {
    let file = TestFile { disabled: Some("RUN-DISABLED(inaccurate)".into()), modules: vec![module("m", 1, Ok(two_values()), vec![])] };
    let engines: [&dyn Engine; 1] = [&Reference];
    let report = run_test_file("x/interpret/add.mlir", TEXT, &file, &engines, &SuiteOptions::default());
    assert_eq!(report.family, "interpret/add");
    assert_eq!(report.verdict("reference"), FileVerdict::Skipped);
    assert_eq!(report.modules[0].outcomes[0].1, ModuleOutcome::Skipped(SkipReason::Disabled("RUN-DISABLED(inaccurate)".into())));
}

// ---- the shared suite ----

/// Files that pass on each engine, at the last merge of the reader (see
/// docs/stablehlo-triage.md); a drop below is a regression.
const FLOOR_REFERENCE: usize = 1162;
const FLOOR_FAST: usize = 1164;

#[test]
fn shared_stablehlo_suite() {
    use rayon::prelude::*;
    use std::fmt::Write;
    use xlaref::harness::stablehlo_suite::{run_file, shared_tests_dir, FileReport};
    use xlaref::harness::stablehlo_table::{markdown, rows};

    let Some(dir) = shared_tests_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))) else {
        println!("skipped: no StableHLO test files at ../shared/stablehlo-tests (set XLAREF_STABLEHLO_TESTS to point elsewhere)");
        return;
    };
    let mut files = Vec::new();
    for sub in ["testdata", "interpret"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        files.extend(entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "mlir")));
    }
    files.sort();
    let engines: [&dyn Engine; 2] = [&Reference, &Fast];
    let names = ["reference", "fast"];
    let options = SuiteOptions::default();
    let reports: Vec<FileReport> = files
        .par_iter()
        .map(|path| {
            let shown = format!(
                "{}/{}",
                path.parent().and_then(|p| p.file_name()).and_then(|d| d.to_str()).unwrap_or(""),
                path.file_name().and_then(|f| f.to_str()).unwrap_or("")
            );
            let text = std::fs::read_to_string(path).unwrap_or_default();
            run_file(&shown, &text, &engines, &options)
        })
        .collect();
    let table = markdown(&reports, &names);
    println!("{table}");
    // Every module that did not pass, for the triage (docs/stablehlo-triage.md).
    if let Some(out) = std::env::var_os("XLAREF_STABLEHLO_REPORT") {
        let mut text = String::new();
        for report in &reports {
            for module in &report.modules {
                for (engine, outcome) in &module.outcomes {
                    let said = match outcome {
                        ModuleOutcome::Passed => continue,
                        ModuleOutcome::Failed(f) => format!("FAILED {f}"),
                        ModuleOutcome::Rejected(r) => format!("REJECTED {r}"),
                        ModuleOutcome::Skipped(s) => format!("SKIPPED {s}"),
                    };
                    let _ = writeln!(text, "{}:{} @{} [{engine}] {said}", report.path, module.line, module.name);
                }
            }
        }
        std::fs::write(out, text).expect("write the report");
    }
    let (_, total) = rows(&reports, &names);
    let (reference, fast) = (total.passed_reference.unwrap_or(0), total.passed_fast.unwrap_or(0));
    assert!(reference >= FLOOR_REFERENCE, "{reference} files pass on the reference, below the floor {FLOOR_REFERENCE}");
    assert!(fast >= FLOOR_FAST, "{fast} files pass on the fast engine, below the floor {FLOOR_FAST}");
}
