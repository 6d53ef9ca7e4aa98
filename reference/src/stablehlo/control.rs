//! Control flow and tuples: GetTupleElement, Call (`func.call` of a private
//! function), Conditional (`stablehlo.if` / `stablehlo.case`), While,
//! OptimizationBarrier, AfterAll. Region ops take and return flat lists of
//! tensors and tokens, so tuple operands and results are written as their
//! leaves.

use super::emit::{all_leaves, flat_leaves, rebuild, At, FuncWriter, Leaf, Val};
use super::{Fail, Res};
use crate::ir::{ComputationId, ConditionalForm};
use crate::types::Shape;

pub fn get_tuple_element(w: &mut FuncWriter, index: i64, operands: &[Val]) -> Res<Val> {
    let [t] = operands else { return Err(Fail::internal("GetTupleElement takes one operand")) };
    let i = usize::try_from(index).map_err(|_| Fail::internal(format!("negative index {index}")))?;
    w.tuple_element(t, i)
}

/// Call: `func.call` of the callee's private function, which takes the
/// leaves of the arguments and returns the leaves of its result.
pub fn call(w: &mut FuncWriter, at: &At, computation: ComputationId, operands: &[Val]) -> Res<Val> {
    let leaves = all_leaves(w, operands)?;
    let shape = at.shape().clone();
    let props = format!("callee = @{}", w.symbol(computation));
    let results = w.op("func.call", &leaves, &props, &[], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

/// A branch region: the branch computation inlined with its parameter bound
/// to the operand (StableHLO branches read enclosing values directly).
fn branch(w: &mut FuncWriter, c: ComputationId, operand: &Val) -> Res<String> {
    let operand = operand.clone();
    w.region(&[], move |w, _| {
        let root = w.inline(c, vec![operand])?;
        w.leaves(&root)
    })
}

pub fn conditional(w: &mut FuncWriter, at: &At, form: &ConditionalForm, operands: &[Val]) -> Res<Val> {
    let Some((selector, branch_operands)) = operands.split_first() else { return Err(Fail::internal("Conditional without operands")) };
    let (selector, _) = w.array(selector)?;
    let branches: Vec<ComputationId> = match form {
        ConditionalForm::Predicate { true_computation, false_computation } => vec![*true_computation, *false_computation],
        ConditionalForm::Indexed { branch_computations } => branch_computations.clone(),
    };
    if branches.len() != branch_operands.len() {
        return Err(Fail::internal("one operand per branch"));
    }
    let mut regions = Vec::with_capacity(branches.len());
    for (&c, operand) in branches.iter().zip(branch_operands) {
        regions.push(branch(w, c, operand)?);
    }
    let name = match form {
        ConditionalForm::Predicate { .. } => "stablehlo.if",
        // Like XLA, stablehlo.case runs the last branch for an index out of
        // range.
        ConditionalForm::Indexed { .. } => "stablehlo.case",
    };
    let shape = at.shape().clone();
    let results = w.op(name, &[selector], "", &regions, &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

/// While: the loop state is the leaves of the operand; condition and body
/// see it rebuilt as the parameter.
pub fn while_loop(w: &mut FuncWriter, at: &At, condition: ComputationId, body: ComputationId, operands: &[Val]) -> Res<Val> {
    let [init] = operands else { return Err(Fail::internal("While takes one operand")) };
    let shape = at.shape().clone();
    let types = flat_leaves(&shape);
    let leaves = w.leaves(init)?;
    let state_shape = shape.clone();
    let cond_region = w.region(&types, |w, args| {
        let state = rebuild(&state_shape, &mut args.into_iter());
        let go = w.inline(condition, vec![state])?;
        Ok(vec![w.whole(&go)?])
    })?;
    let body_region = w.region(&types, |w, args| {
        let state = rebuild(&state_shape, &mut args.into_iter());
        let next = w.inline(body, vec![state])?;
        w.leaves(&next)
    })?;
    let results = w.op("stablehlo.while", &leaves, "", &[cond_region, body_region], &types);
    Ok(rebuild(&shape, &mut results.into_iter()))
}

pub fn optimization_barrier(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    let leaves = all_leaves(w, operands)?;
    let shape = at.shape().clone();
    let results = w.op("stablehlo.optimization_barrier", &leaves, "", &[], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

pub fn after_all(w: &mut FuncWriter, operands: &[Val]) -> Res<Val> {
    let leaves: Vec<Leaf> = all_leaves(w, operands)?;
    Ok(w.op1("stablehlo.after_all", &leaves, "", &[], Shape::Token).val())
}
