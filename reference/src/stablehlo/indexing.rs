//! Indexing ops: DynamicSlice, DynamicUpdateSlice, Gather, Scatter.

use super::emit::{all_leaves, flat_leaves, rebuild, At, FuncWriter, Leaf, Val};
use super::types::{bracket, i64_array};
use super::{Fail, Res};
use crate::ir::{ComputationId, GatherDims, ScatterDims};
use crate::types::{ElementType, Shape};

/// The start indices as scalars of one type: StableHLO wants one integer
/// type for all of them, so mixed types are converted to s64 (every index
/// type but u64 converts exactly; a u64 index beyond s64 is clamped the
/// same way either way, to the last valid start).
fn start_indices(w: &mut FuncWriter, indices: &[Val]) -> Res<Vec<Leaf>> {
    let mut leaves = Vec::with_capacity(indices.len());
    let mut types = Vec::with_capacity(indices.len());
    for v in indices {
        let (leaf, a) = w.array(v)?;
        types.push(a.element_type);
        leaves.push(leaf);
    }
    if types.windows(2).all(|t| t[0] == t[1]) {
        return Ok(leaves);
    }
    Ok(leaves
        .into_iter()
        .zip(types)
        .map(|(leaf, t)| {
            if t == ElementType::S64 {
                leaf
            } else if t == ElementType::U64 {
                // Large u64 starts clamp to the last valid start; so do
                // s64::MAX starts.
                let max = super::literal::scalar_constant(w, ElementType::U64, &i64::MAX.to_string());
                let min = super::literal::scalar_constant(w, ElementType::U64, "0");
                let clamped = w.op1("stablehlo.clamp", &[min, leaf, max], "", &[], Shape::scalar(ElementType::U64));
                w.op1("stablehlo.convert", &[clamped], "", &[], Shape::scalar(ElementType::S64))
            } else {
                w.op1("stablehlo.convert", &[leaf], "", &[], Shape::scalar(ElementType::S64))
            }
        })
        .collect())
}

pub fn dynamic_slice(w: &mut FuncWriter, at: &At, slice_sizes: &[i64], operands: &[Val]) -> Res<Val> {
    let Some((operand, indices)) = operands.split_first() else { return Err(Fail::internal("DynamicSlice without operands")) };
    let (x, _) = w.array(operand)?;
    let mut leaves = vec![x];
    leaves.extend(start_indices(w, indices)?);
    let props = format!("slice_sizes = {}", i64_array(slice_sizes));
    Ok(w.op1("stablehlo.dynamic_slice", &leaves, &props, &[], at.shape().clone()).val())
}

pub fn dynamic_update_slice(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    if operands.len() < 2 {
        return Err(Fail::internal("DynamicUpdateSlice takes an operand and an update"));
    }
    let (x, _) = w.array(&operands[0])?;
    let (u, _) = w.array(&operands[1])?;
    let mut leaves = vec![x, u];
    leaves.extend(start_indices(w, &operands[2..])?);
    Ok(w.op1("stablehlo.dynamic_update_slice", &leaves, "", &[], at.shape().clone()).val())
}

/// `name = [..]` for a dimension-numbers field, left out when it is empty
/// and optional.
fn field(out: &mut Vec<String>, name: &str, values: &[i64], optional: bool) {
    if !(optional && values.is_empty()) {
        out.push(format!("{name} = {}", bracket(values)));
    }
}

pub fn gather(w: &mut FuncWriter, at: &At, d: &GatherDims, operands: &[Val]) -> Res<Val> {
    let [operand, indices] = operands else { return Err(Fail::internal("Gather takes two operands")) };
    let (x, _) = w.array(operand)?;
    let (i, _) = w.array(indices)?;
    let mut fields = Vec::new();
    field(&mut fields, "offset_dims", &d.offset_dims, true);
    field(&mut fields, "collapsed_slice_dims", &d.collapsed_slice_dims, true);
    field(&mut fields, "operand_batching_dims", &d.operand_batching_dims, true);
    field(&mut fields, "start_indices_batching_dims", &d.start_indices_batching_dims, true);
    field(&mut fields, "start_index_map", &d.start_index_map, true);
    fields.push(format!("index_vector_dim = {}", d.index_vector_dim));
    let props = format!(
        "dimension_numbers = #stablehlo.gather<{}>, indices_are_sorted = {}, slice_sizes = {}",
        fields.join(", "),
        d.indices_are_sorted,
        i64_array(&d.slice_sizes)
    );
    Ok(w.op1("stablehlo.gather", &[x, i], &props, &[], at.shape().clone()).val())
}

/// Scatter(operands..., scatter_indices, updates...): the update
/// computation becomes the region (accumulators first, then updates, as in
/// XLA); several operands give several results.
pub fn scatter(w: &mut FuncWriter, at: &At, d: &ScatterDims, update: ComputationId, operands: &[Val]) -> Res<Val> {
    if operands.len() < 3 || operands.len().is_multiple_of(2) {
        return Err(Fail::internal(format!("Scatter takes 2N + 1 operands, got {}", operands.len())));
    }
    let leaves = all_leaves(w, operands)?;
    let mut fields = Vec::new();
    field(&mut fields, "update_window_dims", &d.update_window_dims, true);
    field(&mut fields, "inserted_window_dims", &d.inserted_window_dims, true);
    field(&mut fields, "input_batching_dims", &d.input_batching_dims, true);
    field(&mut fields, "scatter_indices_batching_dims", &d.scatter_indices_batching_dims, true);
    field(&mut fields, "scatter_dims_to_operand_dims", &d.scatter_dims_to_operand_dims, true);
    fields.push(format!("index_vector_dim = {}", d.index_vector_dim));
    let props = format!(
        "indices_are_sorted = {}, scatter_dimension_numbers = #stablehlo.scatter<{}>, unique_indices = {}",
        d.indices_are_sorted,
        fields.join(", "),
        d.unique_indices
    );
    let region = w.computation_region(update)?;
    let shape = at.shape().clone();
    let results = w.op("stablehlo.scatter", &leaves, &props, &[region], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}
