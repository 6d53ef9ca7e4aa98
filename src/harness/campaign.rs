//! Differential campaigns: random valid programs from [`crate::gen`], run
//! on the reference and another engine in lockstep under the tolerance
//! model; each disagreement or crash is shrunk to a minimal program.
//!
//! Program `i` of a campaign is drawn from a random stream seeded by
//! `(seed, i)` alone, so the same seed gives the same programs whatever the
//! number of jobs or the time bound.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{write_module, write_typed_literal, WriteOptions};
use xlaref_reference::verify::VerifyOptions;

use xlaref_reference::literal::Literal;
use xlaref_reference::verify::VerifiedModule;

use super::case::panic_message;
use super::compare::compare;
use super::engine::{run_replicas, Engine, Reference};
use super::lockstep::{lockstep, Verdict};
use crate::gen::Program;

/// The limits every campaign run gets: small, so no program can hang or
/// exhaust memory.
pub fn campaign_limits() -> Limits {
    let time_limit = Duration::from_secs(20);
    Limits {
        max_elements: 1 << 20,
        max_while_trips: 10_000,
        max_call_depth: 64,
        max_bytes: xlaref_reference::watch::default_max_bytes(),
        deadline: Some(Instant::now() + time_limit),
        time_limit: Some(time_limit),
    }
}

/// What one generated program gave.
#[derive(Debug)]
pub enum Outcome {
    Agree,
    /// The generator produced a program the verifier rejects (a generator bug).
    Invalid(String),
    /// A disagreement or a crash, shrunk: a case file to replay.
    Failure(Failure),
}

#[derive(Debug)]
pub struct Failure {
    pub op: &'static str,
    pub summary: String,
    /// An xla-json/1 case file (`xlaref check` replays it).
    pub case: Value,
}

/// The random stream of program `index` of the campaign `seed`.
fn runner(seed: u64, index: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&index.to_le_bytes());
    bytes[16..24].copy_from_slice(b"xlaref!!");
    TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Judges one program: None when it is valid and the engines agree.
fn check(program: &Program, other: &dyn Engine) -> Result<Option<String>, String> {
    let limits = campaign_limits();
    let verified = program.verified(limits.max_elements)?;
    if let Some(lists) = &program.replica_args {
        return Ok(check_replicated(&verified, lists, other));
    }
    let options = VerifyOptions { max_elements: limits.max_elements, ..VerifyOptions::default() };
    let env = || Env::new(campaign_limits());
    let run = catch_unwind(AssertUnwindSafe(|| lockstep(&verified, &program.args, &Reference, other, &options, &env)));
    Ok(match run {
        Ok(Verdict::Agree(_)) => catch_unwind(AssertUnwindSafe(|| other.whole_program_check(&verified, &program.args, &env)))
            .unwrap_or_else(|panic| Some(format!("an engine panicked on the whole program: {}", panic_message(&panic)))),
        Ok(Verdict::Disagree(d)) => Some(format!("instruction `{}` ({}): {}", d.instruction, d.op, d.detail)),
        Err(panic) => Some(format!("an engine panicked: {}", panic_message(&panic))),
    })
}

/// A multi-replica program runs whole on both engines (its collectives
/// talk across replicas, so it cannot run one instruction at a time); each
/// replica's result is compared exactly.
fn check_replicated(verified: &VerifiedModule, lists: &[Vec<Literal>], other: &dyn Engine) -> Option<String> {
    let make_env = || Env::new(campaign_limits());
    let expected = run_replicas(&Reference, verified, lists.to_vec(), &make_env).results;
    let actual = run_replicas(other, verified, lists.to_vec(), &make_env).results;
    if expected.len() != actual.len() {
        return Some(format!("{} replica results from the reference, {} from the {} engine", expected.len(), actual.len(), other.name()));
    }
    expected.iter().zip(&actual).enumerate().find_map(|(r, pair)| match pair {
        (Err(_), Err(_)) => None,
        (Err(e), Ok(_)) => Some(format!("replica {r}: the reference fails ({e}) but the {} engine returns a value", other.name())),
        (Ok(_), Err(e)) => Some(format!("replica {r}: the {} engine fails: {e}", other.name())),
        (Ok(value), Ok(got)) => compare(got, value, None).map(|m| format!("replica {r}: {m}")),
    })
}

/// Runs program `index` of op `strategy` and shrinks it if it fails.
pub fn run_one(op: &'static str, strategy: &BoxedStrategy<Program>, seed: u64, index: u64, other: &dyn Engine) -> Outcome {
    let mut runner = runner(seed, index);
    let Ok(mut tree) = strategy.new_tree(&mut runner) else { return Outcome::Invalid(format!("{op}: the generator gave up")) };
    let first = tree.current();
    let mut summary = match check(&first, other) {
        Err(e) => return Outcome::Invalid(format!("{op}: {e}")),
        Ok(None) => return Outcome::Agree,
        Ok(Some(s)) => s,
    };
    // Shrink: simplify while the failure persists, step back when it goes.
    let mut smallest = first;
    let mut steps = 0;
    while steps < 2000 && tree.simplify() {
        steps += 1;
        loop {
            let candidate = tree.current();
            match check(&candidate, other) {
                Ok(Some(s)) => {
                    summary = s;
                    smallest = candidate;
                    break;
                }
                _ => {
                    if !tree.complicate() {
                        break;
                    }
                }
            }
        }
    }
    Outcome::Failure(Failure { op, summary: summary.clone(), case: failure_case(&smallest, seed, index, &summary) })
}

/// Program `index` of the campaign `seed` for one generator, unshrunk
/// (what `run_one` starts from).
pub fn draw(strategy: &BoxedStrategy<Program>, seed: u64, index: u64) -> Option<Program> {
    strategy.new_tree(&mut runner(seed, index)).ok().map(|tree| tree.current())
}

/// The failing program as a case whose expectation is the reference's
/// result: `xlaref check --engine fast` replays it.
fn failure_case(program: &Program, seed: u64, index: u64, summary: &str) -> Value {
    let name = format!("fuzz/{}/seed{seed}_{index}", program.op);
    let source = format!("xlaref fuzz --seed {seed} (program {index}), shrunk; found: {summary}");
    reference_case(program, &name, &source)
}

/// The program as a case whose expectation is the reference's result (or
/// the error the reference reports).
pub fn reference_case(program: &Program, name: &str, source: &str) -> Value {
    let expected = match program.verified(campaign_limits().max_elements) {
        Ok(verified) if program.replica_args.is_some() => {
            let lists = program.replica_args.clone().unwrap_or_default();
            let make_env = || Env::new(campaign_limits());
            let results = run_replicas(&Reference, &verified, lists, &make_env).results;
            let mut values = Vec::with_capacity(results.len());
            let mut errors = Vec::new();
            for (r, result) in results.iter().enumerate() {
                match result {
                    Ok(v) => values.push(write_typed_literal(v, WriteOptions { exact_bits: true })),
                    Err(e) => errors.push(format!("replica {r}: {e}")),
                }
            }
            if errors.is_empty() {
                Value::Array(values)
            } else {
                json!({"error": errors.join("; ")})
            }
        }
        Ok(verified) => {
            let mut env = Env::new(campaign_limits());
            match catch_unwind(AssertUnwindSafe(|| Reference.run(&verified, program.args.clone(), &mut env))) {
                Ok(Ok(v)) => write_typed_literal(&v, WriteOptions { exact_bits: true }),
                Ok(Err(e)) => json!({"error": e.to_string()}),
                Err(p) => json!({"error": format!("reference panicked: {}", panic_message(&p))}),
            }
        }
        Err(e) => json!({"error": e}),
    };
    program.case(name, source, expected)
}

/// The module of a program, re-written by the JSON writer (canonical form).
pub fn canonical_module(program: &Program) -> Option<Value> {
    program.verified(campaign_limits().max_elements).ok().map(|v| write_module(v.module()))
}
