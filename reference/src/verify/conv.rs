//! Rules of the convolutions.

use super::rules::Check;
use crate::ir::ConvAttrs;
use crate::types::Shape;

pub fn conv(_attrs: &ConvAttrs, _operands: &[&Shape]) -> Check<Shape> {
    Err("Conv is not implemented yet in this version of xlaref".into())
}
