//! Random programs of the differential generators as conformance cases
//! (`xlaref conform --generate N`).
//!
//! A generated case expects the reference's result. Where the program
//! leans on behaviour the document leaves to the implementation, the case
//! is marked `implementation_defined`, so that a backend that differs there
//! is reported as such and not as failing. The one such precondition the
//! generators break on purpose: Reduce and ReduceWindow init values that are
//! not an identity of the reduction (document §Reduce: "All initial values
//! have to form an identity under `computation`"; XLA may apply them any
//! number of times, or not at all).

use serde_json::Value;
use xlaref_reference::eval::{self, Env};
use xlaref_reference::ir::{Module, Op};
use xlaref_reference::json::Path;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

use super::campaign::{self, campaign_limits};
use super::case::{read_case, Case, RunOptions};
use super::compare::compare;
use crate::gen::{self, Program};

/// A generated case: its name and the case (or why it could not be made).
pub struct GeneratedCase {
    pub name: String,
    pub case: Result<Case, String>,
}

/// `n` random valid programs of the generators of `ops` (all when empty),
/// dealt round-robin over the ops. Program `i` depends on `(seed, i)` alone.
pub fn generated_cases(n: u64, ops: &[String], seed: u64, options: &RunOptions) -> Result<Vec<GeneratedCase>, String> {
    let generators = gen::select(ops)?;
    if generators.is_empty() {
        return Err("no generators selected".into());
    }
    let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(0).min(1 << 20));
    for i in 0..n {
        let (op, strategy) = &generators[(i % generators.len() as u64) as usize];
        let name = format!("gen/{op}/seed{seed}_{i}");
        let case = match campaign::draw(strategy, seed, i) {
            None => Err(format!("the {op} generator gave up")),
            Some(program) => program_case(&program, &name, seed, i, options),
        };
        out.push(GeneratedCase { name, case });
    }
    Ok(out)
}

fn program_case(program: &Program, name: &str, seed: u64, index: u64, options: &RunOptions) -> Result<Case, String> {
    let source = format!("xlaref conform --generate --seed {seed}: program {index} of the {} generator", program.op);
    let mut json = campaign::reference_case(program, name, &source);
    if let Ok(verified) = program.verified(campaign_limits().max_elements) {
        if let Some(reason) = non_identity_init(&verified, &program.args) {
            if let Value::Object(m) = &mut json {
                m.insert("implementation_defined".into(), Value::Bool(true));
                m.insert("comment".into(), Value::from(reason));
            }
        }
    }
    read_case(&json, &Path::root(), options)
}

/// Why the program's result is left to the implementation, if it is: a
/// Reduce or ReduceWindow whose init value is not an identity of its
/// computation on the values it reduces. In the entry computation those
/// values are the arguments; in nested computations (While bodies, branches)
/// they are unknown, so the init must be an identity on probe values of the
/// type (XLA CPU skips a non-identity init of a one-element Reduce in a
/// While body: seed-12 campaign, docs/conformance-xla-cpu.md).
fn non_identity_init(module: &VerifiedModule, args: &[Literal]) -> Option<String> {
    for (id, comp) in module.module().computations.iter().enumerate() {
        let in_entry = id == module.entry();
        for instr in &comp.instructions {
            let computation = match &instr.op {
                Op::Reduce { computation, .. } | Op::ReduceWindow { computation, .. } => *computation,
                _ => continue,
            };
            let known = |i: usize| -> Option<Literal> {
                match &comp.instructions.get(i)?.op {
                    Op::Parameter { number } if in_entry => args.get(*number).cloned(),
                    Op::Constant { literal } => Some(literal.clone()),
                    _ => None,
                }
            };
            let why = format!("`{}` ({}): its init value may not be an identity of its computation", instr.name, instr.op.name());
            let [operand, init] = instr.operands[..] else { return Some(format!("{why} (variadic: not checked)")) };
            let values = known(operand).or_else(|| (!in_entry).then(|| probes(module.shape(id, operand))).flatten());
            match (values, known(init)) {
                (Some(x), Some(init)) if is_identity_on(module.module(), computation, &init, &x) => {}
                _ => return Some(why),
            }
        }
    }
    None
}

/// Values an identity of a reducer of this type must leave alone: both
/// ends of the range, zeros of both signs, ones, infinities and NaN.
fn probes(shape: &Shape) -> Option<Literal> {
    let Shape::Array(a) = shape else { return None };
    let values = [f64::NEG_INFINITY, f64::MIN, -1.5, -1.0, -0.0, 0.0, 1.0, 2.5, f64::MAX, f64::INFINITY, f64::NAN];
    let data = convert(&Data::F64(values.to_vec()), a.element_type);
    Some(Literal::Array(ArrayLiteral::new(vec![values.len() as i64], data)))
}

/// Whether `f(init, x) = x = f(x, init)` for every element `x` of `operand`
/// (bit for bit, NaN matching NaN), `f` run on the reference.
fn is_identity_on(module: &Module, computation: usize, init: &Literal, operand: &Literal) -> bool {
    let single = Module { computations: module.computations.clone(), entry: computation };
    let max_elements = campaign_limits().max_elements;
    let Ok(f) = verify(single, &VerifyOptions { max_elements }) else { return false };
    let Some(operand) = operand.as_array() else { return false };
    let apply = |a: Literal, b: Literal| eval::run(&f, vec![a, b], &mut Env::new(campaign_limits())).ok();
    (0..operand.element_count().min(4096)).all(|p| {
        let x = Literal::Array(ArrayLiteral::new(vec![], operand.data.element(p)));
        let same = |r: Option<Literal>| r.is_some_and(|r| compare(&r, &x, None).is_none());
        same(apply(init.clone(), x.clone())) && same(apply(x.clone(), init.clone()))
    })
}
