//! Reference evaluation of the linalg ops (to be completed).

use crate::error::RunError;
use crate::ir::Op;
use crate::literal::Literal;
use crate::types::Shape;

pub fn eval(op: &Op, _operands: &[&Literal], _shape: &Shape) -> Result<Literal, RunError> {
    Err(RunError::Unsupported(format!("{} is not implemented yet in the reference", op.name())))
}
