//! Rules of RngUniform, RngNormal and RngBitGenerator.

use super::rules::Check;
use super::Ctx;
use crate::ir::Op;
use crate::types::Shape;

pub fn infer(op: &Op, _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    Err(format!("{} is not implemented yet in this version of xlaref", op.name()))
}
