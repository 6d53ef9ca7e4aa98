//! Rules of Call, Conditional, While, OptimizationBarrier and AfterAll.

use super::rules::*;
use super::{Ctx, Signature};
use crate::ir::{ComputationId, ConditionalForm};
use crate::types::{ElementType, Shape};

declare_rules! {
    CALL_ARITY = "call.c1": "\"The arity and types of the `args` must match the parameters of the `computation`\": one argument per parameter.";
    CALL_TYPES = "call.c2": "\"The arity and types of the `args` must match the parameters of the `computation`\": each argument has its parameter's type.";
    CONDITIONAL_SELECTOR = "conditional.c1": "The selector is a \"Scalar of type `PRED`\" (`pred`, with `true_computation` and `false_computation`) or a \"Scalar of type `S32`\" (`branch_index`, with `branch_computations`).";
    CONDITIONAL_ARITY = "conditional.c2": "Each branch computation \"must take in a single argument\".";
    CONDITIONAL_OPERAND_TYPE = "conditional.c3": "Each branch is \"invoked with `branch_operands[b]` which must be of the same type\" as its parameter.";
    CONDITIONAL_RESULTS = "conditional.c4": "\"The type of the returned value of each `branch_computations[b]` must be the same.\"";
    CONDITIONAL_BRANCHES = "conditional.c5": "(XLA) `branch_computations` names at least one computation.";
    WHILE_CONDITION_PARAM = "while.c1": "`condition` is an \"XlaComputation of type `T -> PRED`\": it takes one parameter, of the type of `init`.";
    WHILE_CONDITION_RESULT = "while.c2": "`condition` is an \"XlaComputation of type `T -> PRED`\": it returns a pred scalar.";
    WHILE_BODY_PARAM = "while.c3": "`body` is an \"XlaComputation of type `T -> T`\": it takes one parameter, of the type of `init`.";
    WHILE_BODY_RESULT = "while.c4": "\"The shape of the type `T` is statically determined and must be the same across all iterations\": `body` returns the type of `init`.";
    AFTER_ALL_TOKENS = "after_all.c1": "The operands are a \"variadic number of tokens\".";
}

/// `computation` takes exactly the given argument shapes; `arity` and
/// `types` are the rules of the calling op that say so.
fn check_args(sig: &Signature, args: &[&Shape], name: &str, arity: &'static Rule, types: &'static Rule) -> Check {
    if sig.params.len() != args.len() {
        return Err(broken(
            arity,
            format!("computation `{name}` takes {} parameters, called with {} arguments", sig.params.len(), args.len()),
        ));
    }
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        if !p.compatible(a) {
            return Err(broken(types, format!("argument {i} has shape {a}, computation `{name}` expects {p}")));
        }
    }
    Ok(())
}

/// Call: the arity and types of the args match the computation's parameters.
pub fn call(computation: ComputationId, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    let sig = ctx.signature(computation)?;
    check_args(sig, operands, ctx.computation_name(computation), &CALL_ARITY, &CALL_TYPES)?;
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
        fail!(CONDITIONAL_BRANCHES, "branch_computations must name at least one computation");
    }
    operand_count(operands, branches.len() + 1)?;
    let selector = scalar(&CONDITIONAL_SELECTOR, operands[0], "the branch selector")?;
    let expected = match form {
        ConditionalForm::Predicate { .. } => ElementType::Pred,
        ConditionalForm::Indexed { .. } => ElementType::S32,
    };
    if selector.element_type != expected {
        fail!(CONDITIONAL_SELECTOR, "the branch selector must be a {expected} scalar, got {selector}");
    }
    let mut result: Option<Shape> = None;
    for (b, &id) in branches.iter().enumerate() {
        let sig = ctx.signature(id)?;
        let name = ctx.computation_name(id);
        check_args(sig, &operands[b + 1..b + 2], name, &CONDITIONAL_ARITY, &CONDITIONAL_OPERAND_TYPE)?;
        match &result {
            None => result = Some(sig.result.clone()),
            Some(r) if !r.compatible(&sig.result) => {
                fail!(
                    CONDITIONAL_RESULTS,
                    "branch `{name}` returns {}, an earlier branch returns {r}; all branches must return the same type",
                    sig.result
                )
            }
            Some(_) => {}
        }
    }
    // Unreachable: the branches were found non-empty above.
    result.ok_or_else(|| broken(&CONDITIONAL_BRANCHES, "no branches".to_string()))
}

/// While: `condition` is T -> pred[], `body` is T -> T, `init` is a T.
pub fn while_loop(condition: ComputationId, body: ComputationId, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    operand_count(operands, 1)?;
    let init = operands[0];
    let cond = ctx.signature(condition)?;
    check_args(cond, &[init], ctx.computation_name(condition), &WHILE_CONDITION_PARAM, &WHILE_CONDITION_PARAM)?;
    if !cond.result.compatible(&Shape::scalar(ElementType::Pred)) {
        fail!(WHILE_CONDITION_RESULT, "condition `{}` must return pred[], returns {}", ctx.computation_name(condition), cond.result);
    }
    let b = ctx.signature(body)?;
    check_args(b, &[init], ctx.computation_name(body), &WHILE_BODY_PARAM, &WHILE_BODY_PARAM)?;
    if !b.result.compatible(init) {
        fail!(
            WHILE_BODY_RESULT,
            "body `{}` returns {}, but the loop value has type {init}; the type must be the same across iterations",
            ctx.computation_name(body),
            b.result
        );
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
            fail!(AFTER_ALL_TOKENS, "operand {i} must be a token, got {s}");
        }
    }
    Ok(Shape::Token)
}
