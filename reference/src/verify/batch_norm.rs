//! Rules of BatchNormTraining, BatchNormInference and BatchNormGrad.
//!
//! The three share their rules (document §BatchNormTraining and siblings):
//! `feature_index` must be a valid index for the feature dimension of
//! `operand`, the per-feature operands are 1-dimensional arrays with one
//! entry per feature, and everything has the operand's floating-point
//! element type (as XLA; the document does not spell the types out). So
//! their rules form one family, `batch_norm`, rather than one per op.

use super::rules::*;
use crate::types::{ArrayShape, ElementType, Shape};

declare_rules! {
    ONE_DIMENSIONAL = "batch_norm.c1": "The per-feature operands (scale, offset, mean, variance, batch_mean, batch_var) are each a \"1 dimensional array\".";
    FEATURE_INDEX = "batch_norm.c2": "\"The feature_index must be a valid index for the feature dimension in operand\".";
    FLOAT_OPERAND = "batch_norm.c3": "(XLA) The operand has a real floating-point element type.";
    PER_FEATURE_TYPE = "batch_norm.c4": "(XLA) The per-feature operands have the operand's element type.";
    PER_FEATURE_SIZE = "batch_norm.c5": "(XLA) The per-feature operands have one entry per feature (the size of the operand's feature dimension).";
    GRAD_OUTPUT = "batch_norm.c6": "(XLA) BatchNormGrad's grad_output has the operand's shape.";
}

/// The operand: a real floating-point array with a dimension at
/// `feature_index`; returns it and the feature count.
fn operand_and_features(operand: &Shape, feature_index: i64) -> Check<(&ArrayShape, i64)> {
    let a = array(operand, "operand")?;
    element_type_is(&FLOAT_OPERAND, a.element_type, a.element_type.is_float(), "operand", "a floating-point type")?;
    if feature_index < 0 || feature_index >= a.rank() as i64 {
        fail!(FEATURE_INDEX, "feature_index {feature_index} is not a dimension of the operand {a} (rank {})", a.rank());
    }
    Ok((a, a.dims[feature_index as usize]))
}

/// A per-feature operand (`scale`, `offset`, `mean`, `variance`, ...): a
/// 1-dimensional array of the operand's element type with `features` entries.
fn per_feature(shape: &Shape, what: &str, t: ElementType, features: i64) -> Check {
    let a = array(shape, what)?;
    if a.rank() != 1 {
        fail!(ONE_DIMENSIONAL, "{what} must be a 1-dimensional array, got {a}");
    }
    if a.element_type != t {
        fail!(PER_FEATURE_TYPE, "{what} has element type {}; it must have the operand's element type {t}", a.element_type);
    }
    if a.dims[0] != features {
        fail!(PER_FEATURE_SIZE, "{what} has {} entries; it must have one per feature, {features}", a.dims[0]);
    }
    Ok(())
}

/// BatchNormTraining(operand, scale, offset): `(output, batch_mean, batch_var)`.
pub fn training(feature_index: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 3)?;
    let (a, features) = operand_and_features(operands[0], feature_index)?;
    per_feature(operands[1], "scale", a.element_type, features)?;
    per_feature(operands[2], "offset", a.element_type, features)?;
    let moments = Shape::array(a.element_type, vec![features]);
    Ok(Shape::Tuple(vec![Shape::Array(a.clone()), moments.clone(), moments]))
}

/// BatchNormInference(operand, scale, offset, mean, variance): an array of
/// the operand's shape.
pub fn inference(feature_index: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 5)?;
    let (a, features) = operand_and_features(operands[0], feature_index)?;
    for (shape, what) in operands[1..].iter().zip(["scale", "offset", "mean", "variance"]) {
        per_feature(shape, what, a.element_type, features)?;
    }
    Ok(Shape::Array(a.clone()))
}

/// BatchNormGrad(operand, scale, batch_mean, batch_var, grad_output):
/// `(grad_operand, grad_scale, grad_offset)`; `grad_output` has the
/// operand's shape.
pub fn grad(feature_index: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 5)?;
    let (a, features) = operand_and_features(operands[0], feature_index)?;
    for (shape, what) in operands[1..4].iter().zip(["scale", "batch_mean", "batch_var"]) {
        per_feature(shape, what, a.element_type, features)?;
    }
    let grad_output = array(operands[4], "grad_output")?;
    if grad_output.element_type != a.element_type || grad_output.dims != a.dims {
        fail!(GRAD_OUTPUT, "grad_output has shape {grad_output}; it must have the operand's shape {a}");
    }
    let per_feature = Shape::array(a.element_type, vec![features]);
    Ok(Shape::Tuple(vec![Shape::Array(a.clone()), per_feature.clone(), per_feature]))
}
