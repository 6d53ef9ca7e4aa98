//! Shape ops: Broadcast, BroadcastInDim, Reshape (with the document's
//! transposing form), Collapse, Transpose, Rev, Slice, ConcatInDim, Pad,
//! Iota.

use super::emit::{At, FuncWriter, Val};
use super::types::i64_array;
use super::{Fail, Res};
use crate::ir::{Op, PadDim};
use crate::types::Shape;

fn operand(w: &mut FuncWriter, operands: &[Val]) -> Res<(super::emit::Leaf, crate::types::ArrayShape)> {
    match operands {
        [v] => w.array(v),
        _ => Err(Fail::internal(format!("expected one operand, got {}", operands.len()))),
    }
}

/// The result shape with result dimension `i` bounded dynamic where
/// `flags[i]` (the operand dimension it comes from is; see
/// `elementwise::dynamic_like`).
fn with_dynamic(result: &Shape, flags: &[bool]) -> Shape {
    match result {
        Shape::Array(a) if flags.len() == a.dims.len() => {
            let mut a = a.clone();
            a.dynamic.resize(a.dims.len(), false);
            for (d, &f) in a.dynamic.iter_mut().zip(flags) {
                *d |= f;
            }
            Shape::Array(a)
        }
        other => other.clone(),
    }
}

/// Broadcast (new major dimensions) and BroadcastInDim, both as
/// `broadcast_in_dim`.
pub fn broadcast(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    let (x, a) = operand(w, operands)?;
    let out = at.array()?;
    let map: Vec<i64> = match &at.instr().op {
        Op::BroadcastInDim { broadcast_dimensions, .. } => broadcast_dimensions.clone(),
        // Broadcast puts the operand's dimensions last.
        _ => (0..a.rank() as i64).map(|i| i + (out.rank() - a.rank()) as i64).collect(),
    };
    let props = format!("broadcast_dimensions = {}", i64_array(&map));
    let mut flags = vec![false; out.rank()];
    for (i, &d) in map.iter().enumerate() {
        if let (Some(f), Some(&size), Some(&o)) = (flags.get_mut(d as usize), a.dims.get(i), out.dims.get(d as usize)) {
            *f = a.dynamic.get(i).copied().unwrap_or(false) && size == o;
        }
    }
    let result = with_dynamic(at.shape(), &flags);
    Ok(w.op1("stablehlo.broadcast_in_dim", &[x], &props, &[], result).val())
}

/// Reshape and Collapse as `reshape` to the result's dimensions; the
/// three-argument Reshape(operand, dimensions, new_sizes) transposes by
/// `dimensions` first.
pub fn reshape(w: &mut FuncWriter, at: &At, dimensions: Option<&[i64]>, operands: &[Val]) -> Res<Val> {
    let (mut x, a) = operand(w, operands)?;
    if let Some(order) = dimensions.filter(|o| o.iter().enumerate().any(|(i, &d)| d != i as i64)) {
        let dims: Vec<i64> = order.iter().map(|&d| a.dims.get(d as usize).copied().unwrap_or(0)).collect();
        let props = format!("permutation = {}", i64_array(order));
        x = w.op1("stablehlo.transpose", &[x], &props, &[], Shape::array(a.element_type, dims));
    }
    Ok(w.op1("stablehlo.reshape", &[x], "", &[], at.shape().clone()).val())
}

pub fn transpose(w: &mut FuncWriter, at: &At, permutation: &[i64], operands: &[Val]) -> Res<Val> {
    let (x, a) = operand(w, operands)?;
    let props = format!("permutation = {}", i64_array(permutation));
    let flags: Vec<bool> = permutation.iter().map(|&p| a.dynamic.get(p as usize).copied().unwrap_or(false)).collect();
    Ok(w.op1("stablehlo.transpose", &[x], &props, &[], with_dynamic(at.shape(), &flags)).val())
}

pub fn rev(w: &mut FuncWriter, at: &At, dimensions: &[i64], operands: &[Val]) -> Res<Val> {
    let (x, a) = operand(w, operands)?;
    let props = format!("dimensions = {}", i64_array(dimensions));
    Ok(w.op1("stablehlo.reverse", &[x], &props, &[], with_dynamic(at.shape(), &a.dynamic)).val())
}

pub fn slice(w: &mut FuncWriter, at: &At, start: &[i64], limit: &[i64], strides: &[i64], operands: &[Val]) -> Res<Val> {
    let (x, a) = operand(w, operands)?;
    let props = format!("limit_indices = {}, start_indices = {}, strides = {}", i64_array(limit), i64_array(start), i64_array(strides));
    Ok(w.op1("stablehlo.slice", &[x], &props, &[], with_dynamic(at.shape(), &a.dynamic)).val())
}

pub fn concat(w: &mut FuncWriter, at: &At, dimension: i64, operands: &[Val]) -> Res<Val> {
    let mut leaves = Vec::with_capacity(operands.len());
    for v in operands {
        leaves.push(w.array(v)?.0);
    }
    let props = format!("dimension = {dimension} : i64");
    Ok(w.op1("stablehlo.concatenate", &leaves, &props, &[], at.shape().clone()).val())
}

pub fn pad(w: &mut FuncWriter, at: &At, config: &[PadDim], operands: &[Val]) -> Res<Val> {
    let [operand, value] = operands else { return Err(Fail::internal("Pad takes two operands")) };
    let (x, _) = w.array(operand)?;
    let (v, _) = w.array(value)?;
    let low: Vec<i64> = config.iter().map(|p| p.edge_padding_low).collect();
    let high: Vec<i64> = config.iter().map(|p| p.edge_padding_high).collect();
    let interior: Vec<i64> = config.iter().map(|p| p.interior_padding).collect();
    let props = format!(
        "edge_padding_high = {}, edge_padding_low = {}, interior_padding = {}",
        i64_array(&high),
        i64_array(&low),
        i64_array(&interior)
    );
    Ok(w.op1("stablehlo.pad", &[x, v], &props, &[], at.shape().clone()).val())
}

pub fn iota(w: &mut FuncWriter, at: &At, iota_dimension: i64) -> Res<Val> {
    let props = format!("iota_dimension = {iota_dimension} : i64");
    Ok(w.op1("stablehlo.iota", &[], &props, &[], at.shape().clone()).val())
}
