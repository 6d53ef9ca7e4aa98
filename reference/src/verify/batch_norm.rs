//! Rules of BatchNormTraining, BatchNormInference and BatchNormGrad.

use super::rules::Check;
use crate::types::Shape;

fn pending(op: &str) -> Check<Shape> {
    Err(format!("{op} is not implemented yet in this version of xlaref"))
}

pub fn training(_feature_index: i64, _operands: &[&Shape]) -> Check<Shape> {
    pending("BatchNormTraining")
}
pub fn inference(_feature_index: i64, _operands: &[&Shape]) -> Check<Shape> {
    pending("BatchNormInference")
}
pub fn grad(_feature_index: i64, _operands: &[&Shape]) -> Check<Shape> {
    pending("BatchNormGrad")
}
