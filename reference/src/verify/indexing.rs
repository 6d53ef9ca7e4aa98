//! Rules of DynamicSlice, DynamicUpdateSlice, Gather and Scatter.

use super::rules::Check;
use super::Ctx;
use crate::ir::{ComputationId, GatherDims, ScatterDims};
use crate::types::Shape;

fn pending(op: &str) -> Check<Shape> {
    Err(format!("{op} is not implemented yet in this version of xlaref"))
}

pub fn dynamic_slice(_slice_sizes: &[i64], _operands: &[&Shape]) -> Check<Shape> {
    pending("DynamicSlice")
}
pub fn dynamic_update_slice(_operands: &[&Shape]) -> Check<Shape> {
    pending("DynamicUpdateSlice")
}
pub fn gather(_dims: &GatherDims, _operands: &[&Shape]) -> Check<Shape> {
    pending("Gather")
}
pub fn scatter(_dims: &ScatterDims, _update: ComputationId, _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    pending("Scatter")
}
