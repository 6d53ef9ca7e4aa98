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
//! number of times, or not at all). One more corner comes from the values:
//! a SelectAndScatter window whose selection is a tie or meets a NaN, where
//! the selected element depends on the traversal order, which the document
//! does not fix (XLA CPU's is not always lexicographic: seed-12 campaign);
//! and a SetDimensionSize beyond its bound, which the reference clamps.

use serde_json::Value;
use xlaref_reference::eval::{self, Env};
use xlaref_reference::ir::{Computation, Direction, Module, Op, WindowAttrs};
use xlaref_reference::json::Path;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::{ElementType, Indices, Shape};
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

/// The programs `i < n` that `keep` accepts (a shard's share, say) of the
/// generators of `ops` (all when empty), dealt round-robin over the ops.
/// Program `i` depends on `(seed, i)` alone.
pub fn generated_cases(
    indices: std::ops::Range<u64>,
    ops: &[String],
    seed: u64,
    options: &RunOptions,
    keep: &dyn Fn(u64) -> bool,
) -> Result<Vec<GeneratedCase>, String> {
    let generators = gen::select(ops)?;
    if generators.is_empty() {
        return Err("no generators selected".into());
    }
    let mut out = Vec::with_capacity(usize::try_from(indices.end - indices.start).unwrap_or(0).min(1 << 20));
    for i in indices.filter(|&i| keep(i)) {
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
        if let Some(reason) = non_identity_init(&verified, &program.args)
            .or_else(|| ambiguous_selection(&verified, &program.args))
            .or_else(|| size_out_of_bound(&verified, &program.args))
        {
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
            let known = |i: usize| known_value(comp, in_entry, args, i);
            let why = format!("`{}` ({}): its init value may not be an identity of its computation", instr.name, instr.op.name());
            let [operand, init] = instr.operands[..] else { return Some(format!("{why} (variadic: not checked)")) };
            // An empty operand has no values to try the init on, yet its
            // padding does (IREE and StableHLO's interpreter reduce it as init
            // values): then the init must be an identity on every value.
            let values = known(operand).filter(|v| v.as_array().is_some_and(|a| a.element_count() > 0));
            let values = values.or_else(|| (!in_entry || known(operand).is_some()).then(|| probes(module.shape(id, operand))).flatten());
            match (values, known(init)) {
                (Some(x), Some(init)) if is_identity_on(module.module(), computation, &init, &x) => {}
                _ => return Some(why),
            }
        }
    }
    None
}

/// The value of instruction `i` of `comp` when the program fixes it: a
/// constant, or a parameter of the entry computation (`args`).
fn known_value(comp: &Computation, in_entry: bool, args: &[Literal], i: usize) -> Option<Literal> {
    match &comp.instructions.get(i)?.op {
        Op::Parameter { number } if in_entry => args.get(*number).cloned(),
        Op::Constant { literal } => Some(literal.clone()),
        _ => None,
    }
}

/// Why a SetDimensionSize of the program is left to the implementation, if
/// one is: a size outside `[0, bound]` (or not known), which the reference
/// clamps and XLA CPU runs with unchecked (docs/semantics-decisions.md,
/// GetDimensionSize / SetDimensionSize).
fn size_out_of_bound(module: &VerifiedModule, args: &[Literal]) -> Option<String> {
    for (id, comp) in module.module().computations.iter().enumerate() {
        for instr in &comp.instructions {
            let Op::SetDimensionSize { dimension } = instr.op else { continue };
            let bound =
                instr.operands.first().and_then(|&o| module.shape(id, o).as_array()).and_then(|a| a.dims.get(dimension as usize).copied());
            let size = instr.operands.get(1).and_then(|&s| known_value(comp, id == module.entry(), args, s));
            let size = size.as_ref().and_then(Literal::as_array).map(|a| convert(&a.data, ElementType::S64));
            match (bound, size) {
                (Some(bound), Some(Data::S64(v))) if v.len() == 1 && (0..=bound).contains(&v[0]) => {}
                _ => return Some(format!("`{}` (SetDimensionSize): its size may lie outside [0, bound]", instr.name)),
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
    let Ok(f) = verify(single, &VerifyOptions { max_elements, ..VerifyOptions::default() }) else { return false };
    let Some(operand) = operand.as_array() else { return false };
    let apply = |a: Literal, b: Literal| eval::run(&f, vec![a, b], &mut Env::new(campaign_limits())).ok();
    (0..operand.element_count().min(4096)).all(|p| {
        let x = Literal::Array(ArrayLiteral::new(vec![], operand.data.element(p)));
        let same = |r: Option<Literal>| r.is_some_and(|r| compare(&r, &x, None).is_none());
        same(apply(init.clone(), x.clone())) && same(apply(x.clone(), init.clone()))
    })
}

/// Why a SelectAndScatter of the program selects by traversal order, if one
/// does: a window (its elements inside the operand; padding is never
/// selected) holding a NaN, or whose greatest or least value occurs twice.
/// Only a `select` that is one IEEE comparison of its two parameters, on an
/// operand given as an entry argument, is checked; any other is reported.
fn ambiguous_selection(module: &VerifiedModule, args: &[Literal]) -> Option<String> {
    for (id, comp) in module.module().computations.iter().enumerate() {
        for instr in &comp.instructions {
            let Op::SelectAndScatter { select, window, .. } = &instr.op else { continue };
            let why = |what: &str| {
                Some(format!("`{}` (SelectAndScatter): {what}, so the selected element depends on the traversal order", instr.name))
            };
            let operand = match instr.operands.first().and_then(|&o| comp.instructions.get(o)).map(|o| &o.op) {
                Some(Op::Parameter { number }) if id == module.entry() => args.get(*number).and_then(Literal::as_array),
                _ => None,
            };
            let (Some(operand), true) = (operand, is_comparison(module.module(), *select)) else {
                return why("its operand or select is not checked");
            };
            if windows_with_ties(operand, window) {
                return why("a window holds a NaN or a tie for its extreme value");
            }
        }
    }
    None
}

/// Whether computation `id` is `Compare(p0, p1)` with an IEEE (not total
/// order) direction other than Eq/Ne: transitive on values without NaN.
fn is_comparison(module: &Module, id: usize) -> bool {
    let Some(comp) = module.computations.get(id) else { return false };
    let [p0, p1, root] = &comp.instructions[..] else { return false };
    let param = |i: &xlaref_reference::ir::Instruction, n| matches!(i.op, Op::Parameter { number } if number == n);
    let ordering =
        matches!(root.op, Op::Compare { direction: Direction::Ge | Direction::Gt | Direction::Le | Direction::Lt, total_order: false, .. });
    param(p0, 0) && param(p1, 1) && ordering && root.operands == [0, 1]
}

/// Whether some window of `operand` (values compared as f64: distinct
/// 64-bit integers that round together count as a tie, which errs on the
/// safe side) holds a NaN or its greatest or least value twice.
fn windows_with_ties(operand: &ArrayLiteral, window: &WindowAttrs) -> bool {
    let Data::F64(values) = convert(&operand.data, ElementType::F64) else { return true };
    let dims = operand.dims();
    let padding = window.padding.resolve(dims, &window.window_dimensions, &window.window_dilations, &window.window_strides);
    let sources: Vec<i64> = (0..dims.len())
        .map(|d| {
            let padded = dims[d] + padding[d].0 + padding[d].1 - window.window_dimensions[d];
            if padded < 0 {
                0
            } else {
                padded / window.window_strides[d].max(1) + 1
            }
        })
        .collect();
    let strides = operand.shape.strides();
    let mut members = Vec::new();
    Indices::new(&sources).any(|s| {
        members.clear();
        for w in Indices::new(&window.window_dimensions) {
            let at: Option<usize> = (0..dims.len()).try_fold(0usize, |acc, d| {
                let i = s[d] * window.window_strides[d] - padding[d].0 + w[d];
                (0..dims[d]).contains(&i).then(|| acc + i as usize * strides[d])
            });
            members.extend(at.and_then(|p| values.get(p)).copied());
        }
        let extreme_twice = |pick: fn(f64, f64) -> f64| {
            let Some(e) = members.iter().copied().reduce(pick) else { return false };
            members.iter().filter(|&&v| v == e).count() > 1
        };
        members.iter().any(|v| v.is_nan()) || extreme_twice(f64::max) || extreme_twice(f64::min)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xlaref_reference::json::{read_module, ReadOptions};

    /// `SelectAndScatter` of an f32[n] operand with `select` (`Ge`, `Gt`,
    /// ...) over windows of 2, stride 2 and the given padding.
    fn selection(select: &str, x: &[f32], padding: [i64; 2]) -> Option<String> {
        let n = x.len() as i64;
        let source = (n + padding[0] + padding[1] - 2) / 2 + 1;
        let module = json!({"format": "xla-json/1", "computations": {
            "sel": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                    "instructions": [{"name": "r", "op": select, "operands": ["a", "b"]}]},
            "add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                    "instructions": [{"name": "r", "op": "Add", "operands": ["a", "b"]}]},
            "main": {"params": [{"name": "x", "shape": format!("f32[{n}]")}, {"name": "s", "shape": format!("f32[{source}]")},
                                {"name": "i", "shape": "f32[]"}],
                     "instructions": [{"name": "r", "op": "SelectAndScatter", "operands": ["x", "s", "i"], "select": "sel",
                                       "scatter": "add", "window_dimensions": [2], "window_strides": [2], "padding": [padding]}]}}});
        let options = ReadOptions { max_elements: 1 << 20 };
        let verified = verify(
            read_module(&module, &Path::new("module"), options).ok()?,
            &VerifyOptions { max_elements: 1 << 20, ..VerifyOptions::default() },
        )
        .ok()?;
        let x = Literal::Array(ArrayLiteral::new(vec![n], Data::F32(x.to_vec())));
        ambiguous_selection(&verified, &[x])
    }

    #[test]
    fn ties_and_nans_in_a_window_leave_the_selection_to_the_implementation() {
        assert_eq!(selection("Ge", &[1.0, 3.0, 2.0, 5.0], [0, 0]), None);
        assert_eq!(selection("Gt", &[3.0, 1.0, 5.0, 5.5], [0, 0]), None);
        // Equal values in different windows do not meet.
        assert_eq!(selection("Ge", &[3.0, 1.0, 3.0, 1.0], [0, 0]), None);
        // Padding is never selected: [pad, 5], [5, pad].
        assert_eq!(selection("Ge", &[5.0, 5.0], [1, 1]), None);
        for (select, x) in [("Ge", [3.0, 3.0, 2.0, 5.0]), ("Gt", [1.0, 2.0, 0.0, -0.0]), ("Ge", [1.0, f32::NAN, 2.0, 5.0])] {
            let why = selection(select, &x, [0, 0]);
            assert!(why.as_deref().is_some_and(|w| w.contains("a window holds a NaN or a tie")), "{select} {x:?}: {why:?}");
        }
        // A select that is not one ordering comparison is not analysed.
        let why = selection("Eq", &[1.0, 2.0], [0, 0]);
        assert!(why.as_deref().is_some_and(|w| w.contains("is not checked")), "{why:?}");
    }

    /// `SetDimensionSize(f32[3], size)` on dimension 0.
    fn set_size(size: i32) -> Option<String> {
        let module = json!({"format": "xla-json/1", "computations": {"main": {
            "params": [{"name": "x", "shape": "f32[3]"}, {"name": "n", "shape": "s32[]"}],
            "instructions": [{"name": "r", "op": "SetDimensionSize", "operands": ["x", "n"], "dimension": 0}]}}});
        let options = ReadOptions { max_elements: 1 << 20 };
        let verified = verify(
            read_module(&module, &Path::new("module"), options).ok()?,
            &VerifyOptions { max_elements: 1 << 20, ..VerifyOptions::default() },
        )
        .ok()?;
        let args = [
            Literal::Array(ArrayLiteral::new(vec![3], Data::F32(vec![1.0, 2.0, 3.0]))),
            Literal::Array(ArrayLiteral::new(vec![], Data::S32(vec![size]))),
        ];
        size_out_of_bound(&verified, &args)
    }

    #[test]
    fn a_dimension_size_beyond_its_bound_is_left_to_the_implementation() {
        for size in [0, 2, 3] {
            assert_eq!(set_size(size), None, "size {size}");
        }
        for size in [-1, 4, i32::MAX] {
            assert!(set_size(size).is_some_and(|w| w.contains("outside [0, bound]")), "size {size}");
        }
    }
}
