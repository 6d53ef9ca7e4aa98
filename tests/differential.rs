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

/// The IR's op names, read from `Op::name` in `reference/src/ir/ops.rs`
/// and the unary and binary op tables: a new op in the IR fails
/// `every_op_of_the_ir_has_a_generator` until it gets a generator.
fn ir_op_names() -> Vec<String> {
    let source = include_str!("../reference/src/ir/ops.rs");
    let Some(start) = source.find("pub fn name(&self)") else { return vec![] };
    let body = &source[start..];
    let body = &body[..body.find("pub fn called_computations").unwrap_or(body.len())];
    let mut names: Vec<String> = body
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("=> \"")?;
            let (name, _) = rest.split_once('"')?;
            Some(name.to_string())
        })
        .collect();
    names.extend(xlaref_reference::ir::UnaryOp::ALL.iter().map(|(n, _)| n.to_string()));
    names.extend(xlaref_reference::ir::BinaryOp::ALL.iter().map(|(n, _)| n.to_string()));
    names.sort();
    names.dedup();
    names
}

/// Ops with no generator, and why.
const NO_GENERATOR: [(&str, &str); 8] = [
    ("Parameter", "every program has parameters"),
    ("Infeed", "needs a case's infeed queue, which generated programs do not carry"),
    ("Outfeed", "its effect is the outfeed queue, which the campaign does not compare"),
    ("Send", "needs a matching Recv on another replica; covered by oracle-cases/collectives"),
    ("SendDone", "see Send"),
    ("Recv", "see Send"),
    ("RecvDone", "see Send"),
    ("CustomCall", "its targets are a fact of the world (custom_call.rs), not random programs"),
];

#[test]
fn every_op_of_the_ir_has_a_generator() {
    let ir = ir_op_names();
    assert!(ir.len() > 90, "could not read the IR's op names ({} found)", ir.len());
    for op in ["Add", "Tan", "ShiftRightArithmetic", "SelectAndScatter", "While", "AllToAll", "GetDimensionSize", "LtTotalOrder"] {
        assert!(ir.iter().any(|n| n == op), "the IR's op list misses {op}");
    }
    let names: Vec<&str> = gen::generators().into_iter().map(|(n, _)| n).collect();
    let missing: Vec<&String> =
        ir.iter().filter(|op| !names.contains(&op.as_str()) && !NO_GENERATOR.iter().any(|(n, _)| n == op)).collect();
    assert!(missing.is_empty(), "ops of the IR with no generator: {missing:?}");
    for (op, _) in NO_GENERATOR {
        assert!(ir.iter().any(|n| n == op), "{op} is listed as having no generator but is not an op of the IR");
    }
    for op in ["Dag", "chain", "ReduceVariadic", "SortMulti", "MapBody"] {
        assert!(names.contains(&op), "no generator for {op}");
    }
}

/// A generator whose programs all fail on the reference tests nothing but
/// error paths: most programs of every generator must produce a value.
#[test]
fn generated_programs_mostly_run() {
    use xlaref::harness::campaign::{draw, reference_case};
    let mut idle = Vec::new();
    for (op, strategy) in gen::generators() {
        let ran = (0..16u64)
            .filter_map(|i| draw(&strategy, 0x5eed, i))
            .filter(|p| {
                let case = reference_case(p, "probe", "probe");
                case.get("expected").or_else(|| case.get("expected_per_replica")).is_some_and(|e| e.get("error").is_none())
            })
            .count();
        if ran < 8 {
            idle.push(format!("{op}: {ran} of 16 programs ran"));
        }
    }
    assert!(idle.is_empty(), "generators whose programs mostly fail: {idle:?}");
}

/// Dag programs are multi-instruction, reuse values, and nest
/// computations (While, Conditional, Map, Sort) in a fair share of draws.
#[test]
fn dag_programs_are_dags_with_nested_computations() {
    use xlaref::harness::campaign::draw;
    let dag = gen::select(&["Dag".to_string()]).expect("a Dag generator").remove(0).1;
    let (mut nested, mut reused, mut sizes) = (0, 0, Vec::new());
    for i in 0..64u64 {
        let Some(p) = draw(&dag, 0xda9, i) else { continue };
        let main = &p.module["computations"]["main"]["instructions"];
        let instructions = main.as_array().map_or(0, Vec::len);
        sizes.push(instructions);
        let ops: Vec<&str> = main.as_array().into_iter().flatten().filter_map(|i| i["op"].as_str()).collect();
        if ops.iter().any(|o| ["While", "Conditional", "Map", "Sort"].contains(o)) {
            nested += 1;
        }
        let mut uses = std::collections::HashMap::new();
        for operand in main.as_array().into_iter().flatten().flat_map(|i| i["operands"].as_array().cloned().unwrap_or_default()) {
            *uses.entry(operand.to_string()).or_insert(0) += 1;
        }
        if uses.values().any(|&n| n > 1) {
            reused += 1;
        }
    }
    assert_eq!(sizes.len(), 64);
    assert!(sizes.iter().all(|&n| n >= 2), "every Dag program has at least two instructions: {sizes:?}");
    assert!(sizes.iter().any(|&n| n >= 20), "some Dag programs are long: {sizes:?}");
    assert!(nested >= 16, "only {nested} of 64 Dag programs nest a computation");
    assert!(reused >= 32, "only {reused} of 64 Dag programs use a value twice");
}

/// A multi-replica program becomes a case with `replicas`, `replica_args`
/// and `expected_per_replica` that `xlaref check` replays on both engines.
#[test]
fn replicated_programs_replay_as_cases() {
    use xlaref::harness::campaign::{draw, reference_case};
    let generators = gen::select(&["CollectiveLoop".to_string(), "AllToAll".to_string()]).expect("collective generators");
    let dir = std::env::temp_dir().join(format!("xlaref-replicated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let mut several = 0;
    for (op, strategy) in &generators {
        for i in 0..8u64 {
            let Some(p) = draw(strategy, 0x7e91, i) else { continue };
            let case = reference_case(&p, &format!("replicated/{op}/{i}"), "tests/differential.rs");
            if p.replicas > 1 {
                several += 1;
                assert_eq!(case["replicas"], p.replicas as u64);
                assert_eq!(case["expected_per_replica"].as_array().map(Vec::len), Some(p.replicas), "{case}");
            }
            std::fs::write(dir.join(format!("{op}_{i}.json")), case.to_string()).expect("the case is written");
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xlaref"))
        .args(["check", "--engine", "both"])
        .arg(&dir)
        .output()
        .expect("xlaref runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("32 passed, 0 failed"), "{stdout}");
    assert!(several >= 4, "only {several} of 16 programs ran on several replicas");
}

/// The benchmark's path, `run_borrowed`, gives bit for bit what `run` gives
/// on programs of every generator and on a module whose result is its
/// parameter (the one value the engine must copy).
#[test]
fn borrowed_arguments_give_the_same_results() {
    use xlaref::gen::Program;
    use xlaref::harness::campaign::{campaign_limits, draw};
    use xlaref::harness::engine::Engine;
    use xlaref_reference::eval::Env;
    use xlaref_reference::json::{write_typed_literal, WriteOptions};
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    use xlaref_reference::RunError;

    let bits =
        |r: Result<Literal, RunError>| r.map(|v| write_typed_literal(&v, WriteOptions { exact_bits: true })).map_err(|e| e.to_string());
    let identity = Program {
        op: "Parameter",
        module: serde_json::json!({"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "p", "shape": "f32[3]"}], "instructions": [], "root": "p"}}}),
        args: vec![ArrayLiteral::from_vec(vec![3], vec![1.0f32, f32::NAN, -0.0]).into()],
        replicas: 1,
        replica_args: None,
    };
    let mut programs = vec![identity];
    for (_, strategy) in gen::generators() {
        programs.extend((0..8).filter_map(|i| draw(&strategy, 0xb0, i)).filter(|p| p.replicas == 1));
    }
    let mut compared = 0;
    for p in &programs {
        let Ok(module) = p.verified(campaign_limits().max_elements) else { continue };
        let owned = Fast.run(&module, p.args.clone(), &mut Env::new(campaign_limits()));
        let borrowed = Fast.run_borrowed(&module, &p.args, &mut Env::new(campaign_limits()));
        let borrowed = borrowed.expect("the fast engine runs on borrowed arguments");
        assert_eq!(bits(owned), bits(borrowed), "{}: {}", p.op, p.module);
        compared += 1;
    }
    assert!(compared > programs.len() / 2, "only {compared} of {} programs verified", programs.len());
}
