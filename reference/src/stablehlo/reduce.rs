//! Ops with a scalar computation: Reduce, ReduceWindow, SelectAndScatter,
//! Map, Sort, and TopK (written as a sort).

use super::elementwise::compare_props;
use super::emit::{all_leaves, flat_leaves, rebuild, At, FuncWriter, Val};
use super::types::{i64_array, padding};
use super::{Fail, Res};
use crate::ir::{ComputationId, Direction, WindowAttrs};
use crate::types::{ArrayShape, ElementType, Shape};

/// The shape of operand 0 (all operands of these ops share dimensions).
fn first_dims(operands: &[Val]) -> Res<Vec<i64>> {
    match operands.first().map(Val::shape) {
        Some(Shape::Array(a)) => Ok(a.dims),
        _ => Err(Fail::internal("expected an array operand")),
    }
}

/// Reduce(operands..., init_values..., computation, dimensions).
pub fn reduce(w: &mut FuncWriter, at: &At, computation: ComputationId, dimensions: &[i64], operands: &[Val]) -> Res<Val> {
    let leaves = all_leaves(w, operands)?;
    let region = w.computation_region(computation)?;
    let props = format!("dimensions = {}", i64_array(dimensions));
    let shape = kept_dynamic(at.shape(), &leaves, dimensions);
    let results = w.op("stablehlo.reduce", &leaves, &props, &[region], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

/// Reduce's result shapes with the bounded dynamic dimensions the
/// operands keep (see `elementwise::dynamic_like`).
fn kept_dynamic(result: &Shape, leaves: &[super::emit::Leaf], dimensions: &[i64]) -> Shape {
    let Some(Shape::Array(first)) = leaves.first().map(|l| &l.shape) else { return result.clone() };
    let kept: Vec<bool> =
        first.dynamic.iter().enumerate().filter(|(d, _)| !dimensions.contains(&(*d as i64))).map(|(_, &dynamic)| dynamic).collect();
    let mark = |s: &Shape| match s {
        Shape::Array(a) if a.dims.len() == kept.len() => {
            let mut a = a.clone();
            a.dynamic = kept.clone();
            Shape::Array(a)
        }
        other => other.clone(),
    };
    match result {
        Shape::Tuple(parts) => Shape::Tuple(parts.iter().map(mark).collect()),
        other => mark(other),
    }
}

/// A window's attributes with SAME/VALID resolved over `base` as the
/// reference resolves them ([`crate::ir::Padding::resolve`]).
fn window_props(window: &WindowAttrs, base: &[i64], dilations: bool) -> String {
    let pads = window.padding.resolve(base, &window.window_dimensions, &window.window_dilations, &window.window_strides);
    let mut props = Vec::new();
    if dilations {
        props.push(format!("base_dilations = {}", i64_array(&window.base_dilations)));
    }
    props.push(format!("padding = {}", padding(&pads)));
    if dilations {
        props.push(format!("window_dilations = {}", i64_array(&window.window_dilations)));
    }
    props.push(format!("window_dimensions = {}", i64_array(&window.window_dimensions)));
    props.push(format!("window_strides = {}", i64_array(&window.window_strides)));
    props.join(", ")
}

pub fn reduce_window(w: &mut FuncWriter, at: &At, computation: ComputationId, window: &WindowAttrs, operands: &[Val]) -> Res<Val> {
    let base = first_dims(operands)?;
    let leaves = all_leaves(w, operands)?;
    let region = w.computation_region(computation)?;
    let props = window_props(window, &base, true);
    let shape = at.shape().clone();
    let results = w.op("stablehlo.reduce_window", &leaves, &props, &[region], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

pub fn select_and_scatter(
    w: &mut FuncWriter,
    at: &At,
    select: ComputationId,
    scatter: ComputationId,
    window: &WindowAttrs,
    operands: &[Val],
) -> Res<Val> {
    let base = first_dims(operands)?;
    let leaves = all_leaves(w, operands)?;
    let select_region = w.computation_region(select)?;
    let scatter_region = w.computation_region(scatter)?;
    let props = window_props(window, &base, false);
    Ok(w.op1("stablehlo.select_and_scatter", &leaves, &props, &[select_region, scatter_region], at.shape().clone()).val())
}

/// Map applies across all dimensions (the verifier requires it).
pub fn map(w: &mut FuncWriter, at: &At, computation: ComputationId, operands: &[Val]) -> Res<Val> {
    let rank = first_dims(operands)?.len() as i64;
    let leaves = all_leaves(w, operands)?;
    let region = w.computation_region(computation)?;
    let dims: Vec<i64> = (0..rank).collect();
    let props = format!("dimensions = {}", i64_array(&dims));
    Ok(w.op1("stablehlo.map", &leaves, &props, &[region], at.shape().clone()).val())
}

/// The dimension Sort sorts along (`None` is the last, negative counts from
/// the end), as the verifier resolves it.
fn sort_dimension(dimension: Option<i64>, rank: usize) -> i64 {
    let r = rank as i64;
    let d = dimension.unwrap_or(r - 1);
    if d < 0 {
        d + r
    } else {
        d
    }
}

pub fn sort(w: &mut FuncWriter, at: &At, comparator: ComputationId, dimension: Option<i64>, stable: bool, operands: &[Val]) -> Res<Val> {
    let rank = first_dims(operands)?.len();
    let leaves = all_leaves(w, operands)?;
    let region = w.computation_region(comparator)?;
    let props = format!("dimension = {} : i64, is_stable = {stable}", sort_dimension(dimension, rank));
    let shape = at.shape().clone();
    let results = w.op("stablehlo.sort", &leaves, &props, &[region], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}

/// TopK as XLA defines it (the reference's order): a stable sort of the
/// operand with an s32 iota along the last dimension, by the total order,
/// descending for the largest (ascending for the smallest), then the first
/// `k` of each row. `chlo.top_k` has no `largest = false` and leaves the
/// order of NaNs to the implementation.
pub fn top_k(w: &mut FuncWriter, _at: &At, k: i64, largest: bool, operands: &[Val]) -> Res<Val> {
    let [operand] = operands else { return Err(Fail::internal("TopK takes one operand")) };
    let (x, a) = w.array(operand)?;
    let rank = a.rank();
    let Some(last) = rank.checked_sub(1) else { return Err(Fail::internal("TopK of a scalar")) };
    let index_shape = a.with_element_type(ElementType::S32);
    let iota = w.op1("stablehlo.iota", &[], &format!("iota_dimension = {last} : i64"), &[], Shape::Array(index_shape.clone()));
    let t = a.element_type;
    let direction = if largest { Direction::Gt } else { Direction::Lt };
    let scalar = |t: ElementType| Shape::scalar(t);
    let region = w.region(&[scalar(t), scalar(t), scalar(ElementType::S32), scalar(ElementType::S32)], |w, args| {
        let props = compare_props(direction, t, true);
        Ok(vec![w.op1("stablehlo.compare", &args[..2], &props, &[], scalar(ElementType::Pred))])
    })?;
    let props = format!("dimension = {last} : i64, is_stable = true");
    let sorted = w.op("stablehlo.sort", &[x, iota], &props, &[region], &[Shape::Array(a.clone()), Shape::Array(index_shape.clone())]);
    let mut limit = a.dims.clone();
    if let Some(l) = limit.last_mut() {
        *l = k;
    }
    let start = vec![0; rank];
    let strides = vec![1; rank];
    let props = format!("limit_indices = {}, start_indices = {}, strides = {}", i64_array(&limit), i64_array(&start), i64_array(&strides));
    let mut parts = Vec::with_capacity(2);
    for (leaf, element) in sorted.into_iter().zip([a.element_type, ElementType::S32]) {
        let out = ArrayShape::new(element, limit.clone());
        parts.push(w.op1("stablehlo.slice", &[leaf], &props, &[], Shape::Array(out)).val());
    }
    Ok(Val::Tuple(parts))
}
