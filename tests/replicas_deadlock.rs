//! Replicas never hang: every mismatch/deadlock case of
//! `oracle-cases/collectives` ends with its expected error within a second,
//! on both engines; and the collectives cases pass on both engines.

use std::path::Path;
use std::time::{Duration, Instant};

use xlaref::harness::case::{judge, read_cases, run_case, Expected, RunOptions};
use xlaref::harness::engine::{run_replicas, Engine, Fast, Reference};
use xlaref_reference::eval::Env;
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::verify::{self, VerifyOptions};

fn cases(file: &str) -> Vec<xlaref::harness::case::Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases/collectives").join(file);
    let text = std::fs::read_to_string(&path).expect("case file");
    let doc = json::parse_json(&text).expect("json");
    read_cases(&doc, file, &RunOptions::default()).into_iter().map(|(name, c)| c.unwrap_or_else(|e| panic!("{name}: {e}"))).collect()
}

#[test]
fn mismatches_end_with_an_error_within_a_second() {
    let options = RunOptions::default();
    for file in ["mismatch.json", "send_recv_errors.json"] {
        for case in cases(file) {
            if !matches!(case.expected, Expected::Error(_)) {
                continue;
            }
            for engine in [&Reference as &dyn Engine, &Fast] {
                let start = Instant::now();
                let outcome = run_case(&case, engine, &options);
                let took = start.elapsed();
                assert!(took < Duration::from_secs(1), "{} [{}] took {took:?}", case.name, engine.name());
                judge(&case, &outcome).unwrap_or_else(|e| panic!("{} [{}]: {e}", case.name, engine.name()));
            }
        }
    }
}

#[test]
fn many_replicas_all_reduce_agree() {
    // 16 replicas summing their ids, on both engines, through the library API.
    let module = r#"{"format": "xla-json/1", "computations": {
        "add": {"params": [{"name": "a", "shape": "u32[]"}, {"name": "b", "shape": "u32[]"}],
                "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]},
        "main": {"params": [], "instructions": [
            {"name": "id", "op": "ReplicaId"},
            {"name": "r", "op": "AllReduce", "operands": ["id"], "computation": "add"}]}}}"#;
    let m = json::parse_module(module, ReadOptions::default()).expect("module");
    let verified = verify::verify(m, &VerifyOptions::default()).expect("verified");
    for engine in [&Reference as &dyn Engine, &Fast] {
        let run = run_replicas(engine, &verified, vec![vec![]; 16], &|| Env::new(Default::default()));
        for result in run.results {
            let value = result.expect("ok");
            assert_eq!(value, Literal::from(ArrayLiteral::scalar(120u32)), "[{}]", engine.name());
        }
    }
}

#[test]
fn a_failing_replica_releases_its_group() {
    // Replica 1 gets an argument of the wrong shape and fails at once;
    // replica 0 must not wait for it at the AllReduce.
    let module = r#"{"format": "xla-json/1", "computations": {
        "add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]},
        "main": {"params": [{"name": "x", "shape": "f32[2]"}], "instructions": [
            {"name": "r", "op": "AllReduce", "operands": ["x"], "computation": "add"}]}}}"#;
    let m = json::parse_module(module, ReadOptions::default()).expect("module");
    let verified = verify::verify(m, &VerifyOptions::default()).expect("verified");
    let good: Literal = ArrayLiteral::from_vec(vec![2], vec![1.0f32, 2.0]).into();
    let bad: Literal = ArrayLiteral::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).into();
    for engine in [&Reference as &dyn Engine, &Fast] {
        let start = Instant::now();
        let run = run_replicas(engine, &verified, vec![vec![good.clone()], vec![bad.clone()]], &|| Env::new(Default::default()));
        assert!(start.elapsed() < Duration::from_secs(1));
        let e0 = run.results[0].as_ref().expect_err("replica 0 fails too");
        assert!(e0.to_string().contains("replica 1 of its group failed"), "{e0}");
        assert!(run.results[1].is_err());
    }
}
