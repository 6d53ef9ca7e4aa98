//! Fast kernels for the collectives (to be written).

use xlaref_reference::ir::Op;
use xlaref_reference::literal::Literal;
use xlaref_reference::types::Shape;
use xlaref_reference::RunError;

use crate::exec::Executor;

pub fn eval(_exec: &mut Executor, op: &Op, _operands: &[&Literal], _shape: &Shape) -> Result<Literal, RunError> {
    Err(RunError::Unsupported(format!("{} is not implemented in the fast engine yet", op.name())))
}
