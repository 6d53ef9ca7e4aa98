//! Rules of Dot and DotGeneral.

use super::rules::Check;
use crate::ir::DotDims;
use crate::types::{ElementType, Shape};

fn pending(op: &str) -> Check<Shape> {
    Err(format!("{op} is not implemented yet in this version of xlaref"))
}

pub fn dot(_preferred: Option<ElementType>, _operands: &[&Shape]) -> Check<Shape> {
    pending("Dot")
}
pub fn dot_general(_dims: &DotDims, _preferred: Option<ElementType>, _operands: &[&Shape]) -> Check<Shape> {
    pending("DotGeneral")
}
