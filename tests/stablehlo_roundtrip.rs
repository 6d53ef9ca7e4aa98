//! Round trip through StableHLO: for random valid programs of every
//! generator (`src/gen/`), `eval(import(export(m)))` equals `eval(m)` bit
//! for bit, on the reference and on the fast engine. `export` is
//! `xlaref_reference::stablehlo::write_stablehlo`, `import` is the StableHLO
//! reader `xlaref_reference::mlir::mlir_to_json`. Cases per op:
//! `PROPTEST_CASES` (default 8).

use xlaref::gen::{self, Program};
use xlaref::harness::campaign::{campaign_limits, draw};
use xlaref::harness::engine::{run_replicas, Engine, Fast, Reference};
use xlaref_reference::eval::Env;
use xlaref_reference::json::{read_module, Path, ReadOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::stablehlo::{write_stablehlo, ExportErrorKind};
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

fn cases_per_op() -> u64 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(8)
}

/// What a round trip gave.
enum Trip {
    Back(VerifiedModule),
    /// An op listed as not writable (docs/stablehlo.md).
    NotWritten,
    /// An op the StableHLO reader does not read yet (its own list).
    NotRead(String),
}

/// The module exported to StableHLO and read back, verified.
fn round_trip(m: &VerifiedModule) -> Result<Trip, String> {
    let text = match write_stablehlo(m) {
        Ok(t) => t,
        Err(e) if e.kind != ExportErrorKind::Internal => return Ok(Trip::NotWritten),
        Err(e) => return Err(format!("export: {e}")),
    };
    let value = match xlaref_reference::mlir::mlir_to_json(&text) {
        Ok(v) => v,
        Err(e) if e.message.contains("is not read yet") => return Ok(Trip::NotRead(e.message)),
        Err(e) => return Err(format!("import: {e}\n{text}")),
    };
    let max_elements = campaign_limits().max_elements;
    let module = read_module(&value, &Path::root(), ReadOptions { max_elements }).map_err(|e| format!("read: {e}\n{text}"))?;
    verify(module, &VerifyOptions { max_elements, ..VerifyOptions::default() }).map(Trip::Back).map_err(|e| format!("verify: {e}\n{text}"))
}

/// Each replica's result (one for a single-replica program).
fn eval(engine: &dyn Engine, m: &VerifiedModule, p: &Program) -> Vec<Result<Literal, String>> {
    let make_env = || Env::new(campaign_limits());
    match &p.replica_args {
        Some(lists) => {
            run_replicas(engine, m, lists.clone(), &make_env).results.into_iter().map(|r| r.map_err(|e| e.to_string())).collect()
        }
        None => vec![engine.run(m, p.args.clone(), &mut make_env()).map_err(|e| e.to_string())],
    }
}

/// Bitwise equal results (padding beyond dynamic sizes ignored), or both
/// errors.
fn same(a: &[Result<Literal, String>], b: &[Result<Literal, String>]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} results before the round trip, {} after", a.len(), b.len()));
    }
    for (r, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (Err(_), Err(_)) => {}
            (Ok(x), Ok(y)) => {
                let (mut x, mut y) = (x.clone(), y.clone());
                x.clear_padding();
                y.clear_padding();
                if !x.bits_equal(&y) {
                    return Err(format!("replica {r}: {x:?} before the round trip, {y:?} after"));
                }
            }
            (Ok(_), Err(e)) => return Err(format!("replica {r}: fails after the round trip: {e}")),
            (Err(e), Ok(_)) => return Err(format!("replica {r}: failed before the round trip ({e}), succeeds after")),
        }
    }
    Ok(())
}

#[test]
fn eval_of_import_of_export_equals_eval_on_both_engines() {
    let n = cases_per_op();
    let (mut problems, mut not_read) = (Vec::new(), Vec::new());
    let mut checked = 0;
    for (op, strategy) in gen::generators() {
        for i in 0..n {
            let Some(p) = draw(&strategy, 0x5ab1e, i) else { continue };
            let Ok(m) = p.verified(campaign_limits().max_elements) else { continue };
            let back = match round_trip(&m) {
                Ok(Trip::Back(back)) => back,
                Ok(Trip::NotWritten) => continue,
                Ok(Trip::NotRead(why)) => {
                    not_read.push(format!("{op} program {i}: {why}"));
                    continue;
                }
                Err(e) => {
                    problems.push(format!("{op} program {i}: {e}"));
                    break;
                }
            };
            for engine in [&Reference as &dyn Engine, &Fast] {
                if let Err(e) = same(&eval(engine, &m, &p), &eval(engine, &back, &p)) {
                    problems.push(format!("{op} program {i} on the {} engine: {e}", engine.name()));
                }
            }
            checked += 1;
        }
    }
    eprintln!("{checked} programs round-tripped, {} with ops the reader does not read yet", not_read.len());
    for n in &not_read {
        eprintln!("NOT READ {n}");
    }
    for p in &problems {
        eprintln!("{p}\n");
    }
    assert!(problems.is_empty(), "{} programs do not survive the round trip", problems.len());
}

/// Every oracle-case module that verifies and can be written: run on its
/// case's arguments (replicas, infeed and seed included) before and after
/// the round trip, on the reference and the fast engine.
#[test]
fn oracle_case_modules_survive_the_round_trip() {
    use xlaref::harness::case::{case_files, read_cases, RunOptions};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle-cases");
    let max_elements = 1 << 28;
    let (mut checked, mut problems, mut not_read) = (0, Vec::new(), Vec::new());
    for file in case_files(&root).expect("oracle-cases is readable") {
        let text = std::fs::read_to_string(&file).expect("case file is readable");
        let Ok(doc) = xlaref_reference::json::parse_json(&text) else { continue };
        for (name, case) in read_cases(&doc, &file.display().to_string(), &RunOptions::default()) {
            let Ok(case) = case else { continue };
            let Ok(module) = read_module(&case.module, &Path::root(), ReadOptions { max_elements }) else { continue };
            let Ok(m) = verify(module, &VerifyOptions { max_elements, ..VerifyOptions::default() }) else { continue };
            let back = match round_trip(&m) {
                Ok(Trip::Back(back)) => back,
                Ok(Trip::NotWritten) => continue,
                Ok(Trip::NotRead(why)) => {
                    not_read.push(format!("{name}: {why}"));
                    continue;
                }
                Err(e) => {
                    problems.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let make_env = || {
                let mut env = Env::new(campaign_limits());
                env.seed = case.seed.unwrap_or(0);
                env.infeed = case.infeed.iter().cloned().collect();
                env
            };
            for engine in [&Reference as &dyn Engine, &Fast] {
                let eval = |vm: &VerifiedModule| -> Vec<Result<Literal, String>> {
                    match &case.replica_args {
                        Some(lists) => run_replicas(engine, vm, lists.clone(), &make_env)
                            .results
                            .into_iter()
                            .map(|r| r.map_err(|e| e.to_string()))
                            .collect(),
                        None if case.replicas > 1 => {
                            let lists = vec![case.args.clone(); case.replicas];
                            run_replicas(engine, vm, lists, &make_env).results.into_iter().map(|r| r.map_err(|e| e.to_string())).collect()
                        }
                        None => vec![engine.run(vm, case.args.clone(), &mut make_env()).map_err(|e| e.to_string())],
                    }
                };
                if let Err(e) = same(&eval(&m), &eval(&back)) {
                    problems.push(format!("{name} on the {} engine: {e}", engine.name()));
                }
            }
            checked += 1;
        }
    }
    eprintln!("{checked} oracle-case modules round-tripped, {} with ops the reader does not read yet", not_read.len());
    for n in &not_read {
        eprintln!("NOT READ {n}");
    }
    for p in &problems {
        eprintln!("{p}\n");
    }
    assert!(problems.is_empty(), "{} oracle-case modules do not survive the round trip", problems.len());
}
