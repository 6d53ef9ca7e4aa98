//! A convolution's bias and ReLU as its epilogue: the group
//! `Add(conv, broadcast(bias))`, optionally under `Max(·, broadcast(+0))`
//! (JAX's `relu(conv(x, k) + b)`), where the bias varies only along the
//! output feature dimension and nothing else reads the convolution. The
//! direct convolution adds the bias and applies the ReLU to its sums in
//! registers before it stores them, so the convolution's value never goes
//! to memory and back (a conv net 8×64×64×64: two passes of 0.6–0.8 ms
//! each).
//!
//! Bit for bit the unfused values: the sums are the Conv's, each one
//! rounded to the type, then one rounded addition of the bias, then the
//! Max's `maximum(x, +0)` (x where x > 0 or NaN, else +0). When the direct
//! path does not take the convolution (a weight not finite, few output
//! features, no vector unit), the same two steps run over its result.

use xlaref_reference::ir::{BinaryOp, Computation, InstrId, Op};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::types::{ElementType, Shape};

use super::{array, scalar_constant, R};
use crate::elem::float::{maximum, FFloat};
use crate::internal;
use crate::kernels::conv::{conv_with_bias, Bias};

/// The parts of a convolution epilogue group.
pub(super) struct Epilogue {
    pub conv: InstrId,
    /// The Add of the bias, the broadcast of the bias, and the Max of the
    /// ReLU (if there is one).
    pub add: InstrId,
    pub bias: InstrId,
    pub relu: Option<InstrId>,
}

/// The epilogue that group `members` (without the Conv) is, if it is one.
pub(super) fn find(c: &Computation, shapes: &[&Shape], members: &[InstrId]) -> Option<Epilogue> {
    let root = *members.iter().max()?;
    let binary = |i: InstrId, want: BinaryOp| match &c.instructions[i].op {
        Op::Binary { op, .. } if *op == want => match c.instructions[i].operands[..] {
            [x, y] => Some((x, y)),
            _ => None,
        },
        _ => None,
    };
    let positive_zero = |z: InstrId| scalar_constant(c, z).is_some_and(|v| v == 0.0 && v.is_sign_positive());
    let (add, relu, zero) = match binary(root, BinaryOp::Max) {
        Some((x, z)) if positive_zero(z) => (x, Some(root), Some(z)),
        Some((z, x)) if positive_zero(z) => (x, Some(root), Some(z)),
        Some(_) => return None,
        None => (root, None, None),
    };
    let is_conv = |i: InstrId| matches!(c.instructions[i].op, Op::Conv(_));
    let (conv, bias) = match binary(add, BinaryOp::Add)? {
        (d, b) if is_conv(d) => (d, b),
        (b, d) if is_conv(d) => (d, b),
        _ => return None,
    };
    let expected: Vec<InstrId> = [Some(add), Some(bias), relu, zero.filter(|z| members.contains(z))].into_iter().flatten().collect();
    if members.len() != expected.len() || !expected.iter().all(|m| members.contains(m)) {
        return None;
    }
    let out = shapes[conv].as_array().filter(|a| !a.is_dynamic())?;
    let typed = |i: InstrId| shapes[i].as_array().map(|a| a.element_type);
    if !matches!(out.element_type, ElementType::F32 | ElementType::F64)
        || c.instructions[conv].operands.iter().any(|&o| typed(o) != Some(out.element_type))
    {
        return None;
    }
    let Op::Conv(attrs) = &c.instructions[conv].op else { return None };
    let feature = attrs.dims(out.rank()).output_feature_dimension;
    along_features(c, shapes, bias, feature).then_some(Epilogue { conv, add, bias, relu })
}

/// Whether `b` is a Broadcast or BroadcastInDim whose operand's dimensions
/// of more than one element all go to output dimension `feature`.
fn along_features(c: &Computation, shapes: &[&Shape], b: InstrId, feature: i64) -> bool {
    let instr = &c.instructions[b];
    let (Some(&o), Some(out)) = (instr.operands.first(), shapes[b].as_array()) else { return false };
    let Some(operand) = shapes[o].as_array() else { return false };
    let mapping: Vec<i64> = match &instr.op {
        Op::BroadcastInDim { broadcast_dimensions, .. } => broadcast_dimensions.clone(),
        Op::Broadcast { .. } => (out.rank() - operand.rank()..out.rank()).map(|d| d as i64).collect(),
        _ => return false,
    };
    mapping.len() == operand.rank() && operand.dims.iter().zip(&mapping).all(|(&size, &d)| size == 1 || d == feature)
}

/// Runs the group: the Conv with its bias and ReLU.
pub(super) fn run<'a>(c: &'a Computation, shapes: &[&Shape], e: &Epilogue, value: impl Fn(InstrId) -> R<&'a Literal>) -> R<Literal> {
    let Op::Conv(attrs) = &c.instructions[e.conv].op else { return Err(internal("not a convolution")) };
    let operand =
        |i: InstrId, k: usize| c.instructions[i].operands.get(k).ok_or_else(|| internal("operand")).and_then(|&o| array(value(o)?));
    let (lhs, rhs, bias) = (operand(e.conv, 0)?, operand(e.conv, 1)?, operand(e.bias, 0)?);
    let out = shapes[e.conv].as_array().ok_or_else(|| internal("conv result"))?;
    // The bias operand's elements in order are the features' biases (its
    // other dimensions have one element).
    let values: Vec<f64> = match &bias.data {
        Data::F32(v) => v.iter().map(|&x| x as f64).collect(),
        Data::F64(v) => v.clone(),
        _ => return Err(internal("a bias of another type")),
    };
    let relu = e.relu.is_some();
    let (result, applied) = conv_with_bias(attrs, lhs, rhs, out, Bias { values: values.clone(), relu })?;
    if applied {
        return Ok(result.into());
    }
    let feature = attrs.dims(out.rank()).output_feature_dimension as usize;
    Ok(apply(result, feature, &values, relu)?.into())
}

/// The Add and the Max over a convolution's result, as the unfused ops.
fn apply(mut result: ArrayLiteral, feature: usize, bias: &[f64], relu: bool) -> R<ArrayLiteral> {
    let dims = result.dims().to_vec();
    let size = dims.get(feature).map_or(1, |&d| d.max(1) as usize);
    let stride: usize = dims.iter().skip(feature + 1).map(|&d| d.max(0) as usize).product();
    fn each<T: FFloat>(
        v: &mut [T],
        bias: &[f64],
        size: usize,
        stride: usize,
        relu: bool,
        from: impl Fn(f64) -> T,
        add: impl Fn(T, T) -> T,
    ) {
        for (p, x) in v.iter_mut().enumerate() {
            let b = bias.get(p / stride.max(1) % size).map_or(from(0.0), |&b| from(b));
            let sum = add(*x, b);
            *x = if relu { T::down(maximum(sum.up(), from(0.0).up())) } else { sum };
        }
    }
    match &mut result.data {
        Data::F32(v) => each(v, bias, size, stride, relu, |b| b as f32, |x, b| x + b),
        Data::F64(v) => each(v, bias, size, stride, relu, |b| b, |x, b| x + b),
        _ => return Err(internal("a convolution epilogue of another type")),
    }
    Ok(result)
}
