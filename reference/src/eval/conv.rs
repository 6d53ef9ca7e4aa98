//! Reference evaluation of the convolutions (to be completed).

use crate::error::RunError;
use crate::ir::ConvAttrs;
use crate::literal::Literal;
use crate::types::Shape;

pub fn eval(_attrs: &ConvAttrs, _operands: &[&Literal], _shape: &Shape) -> Result<Literal, RunError> {
    Err(RunError::Unsupported("Conv is not implemented yet in the reference".into()))
}
