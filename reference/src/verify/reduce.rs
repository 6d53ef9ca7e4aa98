//! Rules of Reduce, ReduceWindow, SelectAndScatter and Map.

use super::rules::Check;
use super::Ctx;
use crate::ir::{ComputationId, WindowAttrs};
use crate::types::Shape;

fn pending(op: &str) -> Check<Shape> {
    Err(format!("{op} is not implemented yet in this version of xlaref"))
}

pub fn reduce(_c: ComputationId, _dimensions: &[i64], _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    pending("Reduce")
}
pub fn reduce_window(_c: ComputationId, _w: &WindowAttrs, _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    pending("ReduceWindow")
}
pub fn select_and_scatter(_s: ComputationId, _t: ComputationId, _w: &WindowAttrs, _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    pending("SelectAndScatter")
}
pub fn map(_c: ComputationId, _dimensions: Option<&[i64]>, _operands: &[&Shape], _ctx: &Ctx) -> Check<Shape> {
    pending("Map")
}
