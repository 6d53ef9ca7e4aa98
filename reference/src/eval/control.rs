//! Conditional and While (Call, OptimizationBarrier and AfterAll are one
//! line each in the interpreter).

use super::{internal, Interpreter};
use crate::error::RunError;
use crate::ir::{ComputationId, ConditionalForm};
use crate::literal::Literal;

/// Conditional: runs exactly one branch on its operand. In the indexed form
/// an index < 0 or >= N runs the last branch (the document's default).
pub fn conditional(it: &mut Interpreter, form: &ConditionalForm, operands: &[&Literal]) -> Result<Literal, RunError> {
    let selector = super::array(operands[0])?;
    let (branch, operand) = match form {
        ConditionalForm::Predicate { true_computation, false_computation } => {
            let p = selector.scalar_pred().ok_or_else(|| internal("predicate"))?;
            if p {
                (*true_computation, operands[1])
            } else {
                (*false_computation, operands[2])
            }
        }
        ConditionalForm::Indexed { branch_computations } => {
            let n = branch_computations.len();
            let index = selector.scalar_i64().ok_or_else(|| internal("branch index"))?;
            let b = if index < 0 || index >= n as i64 { n - 1 } else { index as usize };
            (branch_computations[b], operands[b + 1])
        }
    };
    it.call(branch, vec![operand.clone()])
}

/// While: `value = init; while condition(value) { value = body(value) }`.
/// More than `max_while_trips` iterations is a limit error, never a hang.
pub fn while_loop(it: &mut Interpreter, condition: ComputationId, body: ComputationId, init: &Literal) -> Result<Literal, RunError> {
    let mut value = init.clone();
    let mut trips: u64 = 0;
    loop {
        let go = it.call(condition, vec![value.clone()])?;
        if !super::array(&go)?.scalar_pred().ok_or_else(|| internal("condition result"))? {
            return Ok(value);
        }
        trips += 1;
        if trips > it.env.limits.max_while_trips {
            return Err(RunError::Limit(format!(
                "a While loop ran more than {} iterations (raise it with --max-while-trips)",
                it.env.limits.max_while_trips
            )));
        }
        value = it.call(body, vec![value])?;
    }
}
