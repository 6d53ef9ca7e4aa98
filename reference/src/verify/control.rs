//! Rules of Call, Conditional, While, OptimizationBarrier and AfterAll.

use super::rules::*;
use super::{Ctx, Signature};
use crate::ir::{ComputationId, ConditionalForm};
use crate::types::{ElementType, Shape};

declare_rules! {}

/// `computation` takes exactly the given argument shapes.
fn check_args(sig: &Signature, args: &[&Shape], name: &str) -> Check {
    if sig.params.len() != args.len() {
        return Err(unnumbered(format!(
            "computation `{name}` takes {} parameters, called with {} arguments",
            sig.params.len(),
            args.len()
        )));
    }
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        if !p.compatible(a) {
            return Err(unnumbered(format!("argument {i} has shape {a}, computation `{name}` expects {p}")));
        }
    }
    Ok(())
}

/// Call: the arity and types of the args match the computation's parameters.
pub fn call(computation: ComputationId, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    let sig = ctx.signature(computation)?;
    check_args(sig, operands, ctx.computation_name(computation))?;
    Ok(sig.result.clone())
}

/// Conditional, both forms: each branch takes its one operand and all
/// branches return the same type. The selector is a pred or s32 scalar.
pub fn conditional(form: &ConditionalForm, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    let branches: Vec<ComputationId> = match form {
        ConditionalForm::Predicate { true_computation, false_computation } => vec![*true_computation, *false_computation],
        ConditionalForm::Indexed { branch_computations } => branch_computations.clone(),
    };
    if branches.is_empty() {
        return Err(unnumbered("branch_computations must name at least one computation"));
    }
    operand_count(operands, branches.len() + 1)?;
    let selector = scalar(&UNNUMBERED, operands[0], "the branch selector")?;
    let expected = match form {
        ConditionalForm::Predicate { .. } => ElementType::Pred,
        ConditionalForm::Indexed { .. } => ElementType::S32,
    };
    if selector.element_type != expected {
        return Err(unnumbered(format!("the branch selector must be a {expected} scalar, got {selector}")));
    }
    let mut result: Option<Shape> = None;
    for (b, &id) in branches.iter().enumerate() {
        let sig = ctx.signature(id)?;
        let name = ctx.computation_name(id);
        check_args(sig, &operands[b + 1..b + 2], name)?;
        match &result {
            None => result = Some(sig.result.clone()),
            Some(r) if !r.compatible(&sig.result) => {
                return Err(unnumbered(format!(
                    "branch `{name}` returns {}, an earlier branch returns {r}; all branches must return the same type",
                    sig.result
                )))
            }
            Some(_) => {}
        }
    }
    result.ok_or_else(|| unnumbered("no branches".to_string()))
}

/// While: `condition` is T -> pred[], `body` is T -> T, `init` is a T.
pub fn while_loop(condition: ComputationId, body: ComputationId, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    operand_count(operands, 1)?;
    let init = operands[0];
    let cond = ctx.signature(condition)?;
    check_args(cond, &[init], ctx.computation_name(condition))?;
    if !cond.result.compatible(&Shape::scalar(ElementType::Pred)) {
        return Err(unnumbered(format!("condition `{}` must return pred[], returns {}", ctx.computation_name(condition), cond.result)));
    }
    let b = ctx.signature(body)?;
    check_args(b, &[init], ctx.computation_name(body))?;
    if !b.result.compatible(init) {
        return Err(unnumbered(format!(
            "body `{}` returns {}, but the loop value has type {init}; the type must be the same across iterations",
            ctx.computation_name(body),
            b.result
        )));
    }
    Ok(init.clone())
}

/// OptimizationBarrier: one operand, passed through.
pub fn optimization_barrier(operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    Ok(operands[0].clone())
}

/// AfterAll: tokens in, one token out.
pub fn after_all(operands: &[&Shape]) -> Check<Shape> {
    for (i, s) in operands.iter().enumerate() {
        if !s.is_token() {
            return Err(unnumbered(format!("operand {i} must be a token, got {s}")));
        }
    }
    Ok(Shape::Token)
}
