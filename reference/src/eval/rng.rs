//! Reference evaluation of the random-number ops (to be completed).

use super::Interpreter;
use crate::error::RunError;
use crate::ir::Op;
use crate::literal::Literal;
use crate::types::Shape;

pub fn eval(_it: &mut Interpreter, op: &Op, _operands: &[&Literal], _shape: &Shape) -> Result<Literal, RunError> {
    Err(RunError::Unsupported(format!("{} is not implemented yet in the reference", op.name())))
}
