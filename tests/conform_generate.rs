//! `xlaref conform --generate` and the tolerance-model judgment of other
//! backends: generated programs pass on the fast engine; a backend whose
//! value differs from the reference passes when the difference is a
//! reassociation the model allows, fails when it is not, and is a known
//! deviation under `--ftz` when flushing subnormals explains it.

use std::process::Command;

use serde_json::json;
use xlaref::harness::backend::{Backend, Reply};
use xlaref::harness::case::{read_case, run_case, Case, RunOptions};
use xlaref::harness::conformance::{check_all, Known, LoadedCase, Verdict};
use xlaref::harness::deviation::Class;
use xlaref::harness::engine::Reference;
use xlaref::harness::ftz::flush_subnormals;
use xlaref_reference::json::Path;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};

#[test]
fn generated_programs_conform_on_the_fast_engine() {
    let json = std::env::temp_dir().join(format!("xlaref-conform-generate-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .args(["conform", "--backend", "engine:fast", "--generate", "150", "--seed", "7", "--json"])
        .arg(&json)
        .output()
        .expect("xlaref runs");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default()).unwrap_or_default();
    let _ = std::fs::remove_file(&json);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let totals = &report["totals"];
    // Programs whose Reduce init is not an identity are implementation-defined;
    // the fast engine follows the reference there too, so all pass.
    assert_eq!(totals["passed"], 150, "{totals}");
    assert_eq!(report["cases"].as_array().map(Vec::len), Some(150));
}

#[test]
fn generate_is_deterministic_and_spreads_over_the_selected_ops() {
    let run = |tag: &str| {
        let json = std::env::temp_dir().join(format!("xlaref-conform-ops-{tag}-{}.json", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_xlaref"))
            .args(["conform", "--backend", "engine:reference", "--generate", "6", "--ops", "Gather,Pad", "--seed", "3", "--json"])
            .arg(&json)
            .output()
            .expect("xlaref runs");
        assert!(out.status.success());
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default()).unwrap_or_default();
        let _ = std::fs::remove_file(&json);
        // The wall time is the one field two runs may not share.
        let mut report = report;
        if let Some(fields) = report.as_object_mut() {
            fields.remove("seconds");
        }
        report
    };
    let first = run("a");
    let names: Vec<&str> = first["cases"].as_array().into_iter().flatten().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names.len(), 6);
    for (i, name) in names.iter().enumerate() {
        assert!(name.ends_with(&format!("/seed3_{i}")), "{name}");
        // Dealt round-robin: the two ops alternate.
        assert_ne!(name.split('/').nth(1), names[(i + 1) % 6].split('/').nth(1), "{names:?}");
    }
    assert_eq!(first["ops"]["Gather"]["passed"], 3);
    assert_eq!(first["ops"]["Pad"]["passed"], 3);
    assert_eq!(first, run("b"), "same seed, same campaign");
}

/// A backend that runs the reference and then changes its value (every
/// replica's, for a multi-replica case).
struct Altered<F: Fn(&Literal) -> Literal> {
    alter: F,
}

impl<F: Fn(&Literal) -> Literal> Backend for Altered<F> {
    fn describe(&self) -> String {
        "altered reference".into()
    }
    fn run(&mut self, case: &Case) -> Reply {
        let outcome = run_case(case, &Reference, &RunOptions::default());
        if let Some(values) = outcome.per_replica {
            return Reply::PerReplica(values.iter().map(&self.alter).collect());
        }
        match outcome.result {
            Ok(v) => Reply::Value { result: (self.alter)(&v), outfeed: vec![] },
            Err(e) => Reply::Error(e.to_string()),
        }
    }
}

fn f32_scalar(l: &Literal) -> f32 {
    match l {
        Literal::Array(ArrayLiteral { data: Data::F32(v), .. }) => v[0],
        other => panic!("not an f32 scalar: {other:?}"),
    }
}

fn f32_literal(x: f32) -> Literal {
    Literal::Array(ArrayLiteral::new(vec![], Data::F32(vec![x])))
}

fn verdict_of(case_json: serde_json::Value, backend: &mut (dyn Backend + Send), ftz: bool) -> Verdict {
    let options = RunOptions::default();
    let case = read_case(&case_json, &Path::root(), &options).expect("case reads");
    let loaded = vec![LoadedCase { name: case.name.clone(), file: "test".into(), case: Ok(case) }];
    let mut known = Known::default();
    if ftz {
        known.add_class(Class::FlushesSubnormals);
    }
    check_all(&loaded, backend, &options, &known, |_| {}).results[0].verdict
}

/// Sum of [1e8, 1, -1e8, 1] in f32: the reference's left-to-right order
/// gives 1, a pairwise order 0, the exact sum is 2.
fn reduce_sum_case() -> serde_json::Value {
    json!({
        "name": "sum", "module": {"format": "xla-json/1", "computations": {
            "add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                    "instructions": [{"name": "r", "op": "Add", "operands": ["a", "b"]}]},
            "main": {"params": [{"name": "x", "shape": "f32[4]"}],
                     "instructions": [{"name": "zero", "op": "Constant", "shape": "f32[]", "literal": 0},
                                      {"name": "s", "op": "Reduce", "operands": ["x", "zero"], "computation": "add", "dimensions": [0]}]}}},
        "args": [{"shape": "f32[4]", "value": [1e8, 1, -1e8, 1]}],
        "expected": {"shape": "f32[]", "value": 1}
    })
}

#[test]
fn a_reassociated_sum_passes_and_a_wrong_one_fails() {
    let mut pairwise = Altered { alter: |v: &Literal| if f32_scalar(v) == 1.0 { f32_literal(0.0) } else { v.clone() } };
    assert_eq!(verdict_of(reduce_sum_case(), &mut pairwise, false), Verdict::Passed);
    let mut wrong = Altered { alter: |v: &Literal| f32_literal(f32_scalar(v) + 1000.0) };
    assert_eq!(verdict_of(reduce_sum_case(), &mut wrong, false), Verdict::Failed);
}

#[test]
fn flushing_subnormals_is_a_known_deviation_under_ftz() {
    let case = json!({
        "name": "mul", "module": {"format": "xla-json/1", "computations": {
            "main": {"params": [{"name": "x", "shape": "f32[2]"}, {"name": "y", "shape": "f32[2]"}],
                     "instructions": [{"name": "m", "op": "Mul", "operands": ["x", "y"]}]}}},
        "args": [{"shape": "f32[2]", "value": [1e-40, 2]}, {"shape": "f32[2]", "value": [1, 3]}],
        "expected": {"shape": "f32[2]", "value": [1e-40, 6]}
    });
    let mut flushing = Altered { alter: flush_subnormals };
    assert_eq!(verdict_of(case.clone(), &mut flushing, false), Verdict::Failed);
    assert_eq!(verdict_of(case.clone(), &mut flushing, true), Verdict::KnownDeviation);
    // Flushing does not excuse a wrong normal value.
    let mut wrong = Altered { alter: |_: &Literal| Literal::Array(ArrayLiteral::new(vec![2], Data::F32(vec![0.0, 7.0]))) };
    assert_eq!(verdict_of(case, &mut wrong, true), Verdict::Failed);
}

#[test]
fn flushing_subnormals_explains_multi_replica_programs_under_ftz() {
    // CrossReplicaSum over two replicas: 1e-40 + 0 and 5 + 1.
    let case = json!({
        "name": "crs", "module": {"format": "xla-json/1", "computations": {
            "main": {"params": [{"name": "x", "shape": "f32[2]"}],
                     "instructions": [{"name": "s", "op": "CrossReplicaSum", "operands": ["x"], "replica_groups": []}]}}},
        "replicas": 2,
        "replica_args": [[{"shape": "f32[2]", "value": [1e-40, 5]}], [{"shape": "f32[2]", "value": [0, 1]}]],
        "expected_per_replica": [{"shape": "f32[2]", "value": [1e-40, 6]}, {"shape": "f32[2]", "value": [1e-40, 6]}]
    });
    let mut flushing = Altered { alter: flush_subnormals };
    assert_eq!(verdict_of(case.clone(), &mut flushing, false), Verdict::Failed);
    assert_eq!(verdict_of(case.clone(), &mut flushing, true), Verdict::KnownDeviation);
    let mut wrong = Altered { alter: |_: &Literal| Literal::Array(ArrayLiteral::new(vec![2], Data::F32(vec![0.0, 7.0]))) };
    assert_eq!(verdict_of(case, &mut wrong, true), Verdict::Failed);
}
