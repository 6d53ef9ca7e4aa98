//! Rules of Gather (document §Gather, "General Semantics").

use super::super::rules::*;
use super::{batching_dims, index_array, index_batch_bounds, index_map, IndexRules};
use crate::ir::GatherDims;
use crate::types::Shape;

declare_rules! {
    COLLAPSED_SIZE_ONE = "gather.c1": "`collapsed_slice_dims`: \"These dimensions must have size 1\" (their slice size).";
    RANK_SUM = "gather.c2": "\"The `operand.rank` must equal the sum of `offset_dims.size` and `collapsed_slice_dims.size`\" (plus `operand_batching_dims.size`).";
    SLICE_SIZES_COUNT = "gather.c3": "\"`slice_sizes.size` has to be equal to `operand.rank`\".";
    INTEGER_INDICES = "gather.c4": "(XLA) `start_indices` has an integer element type.";
    INDEX_VECTOR_DIM = "gather.c5": "(XLA) `index_vector_dim` is in [0, start_indices.rank] (equal to the rank: an implicit trailing 1 dimension).";
    SLICE_SIZES_FIT = "gather.c6": "(XLA) Each `slice_sizes[i]` is in [0, operand dimension i].";
    COLLAPSED_DIMS = "gather.c7": "(XLA) `collapsed_slice_dims` is sorted, without repeats, and in [0, operand.rank).";
    MAP_SIZE = "gather.c8": "(XLA) `start_index_map` has one entry per element of the index vector.";
    MAP_ENTRIES = "gather.c9": "(XLA) `start_index_map` holds distinct operand dimensions, in [0, operand.rank).";
    OFFSET_DIMS = "gather.c10": "(XLA) `offset_dims` is sorted, without repeats, and in [0, output rank).";
    BATCHING_SIZE_ONE = "gather.c11": "(XLA) Every `operand_batching_dims` entry has slice size 1.";
    OUTPUT_DIMS = "gather.c12": "(invariant) The output's batch and offset dimensions add up to its rank (the rules above ensure it).";
}

/// Gather's rules for the checks it shares with Scatter.
static INDEX_RULES: IndexRules = IndexRules {
    integer_indices: &INTEGER_INDICES,
    index_vector_dim: &INDEX_VECTOR_DIM,
    map_size: &MAP_SIZE,
    map_in_range: &MAP_ENTRIES,
    map_unique: &MAP_ENTRIES,
};

/// Gather(operand, start_indices) with its dimension numbers.
///
/// The document's rules, in its order, then XLA's for what it leaves
/// implicit (uniqueness of `start_index_map`, ranges) and for the newer
/// batching dimensions. The output has `batch_dims.size + offset_dims.size`
/// dimensions: dimension `i` in `offset_dims` (at position `k`) has bound
/// `adjusted_slice_sizes[k]` (`slice_sizes` without the collapsed and
/// batching dimensions); every other dimension is a batch dimension whose
/// bound comes from `start_indices`, skipping `index_vector_dim`.
pub fn gather(d: &GatherDims, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let operand = array(operands[0], "operand")?;
    let start_indices = array(operands[1], "start_indices")?;
    let index_vector_size = index_array(&INDEX_RULES, start_indices, "start_indices", d.index_vector_dim)?;
    let rank = operand.rank();

    // "`slice_sizes.size` has to be equal to `operand.rank`"; each slice fits.
    length(&SLICE_SIZES_COUNT, &d.slice_sizes, rank, "slice_sizes", "the operand")?;
    for (i, (&size, &bound)) in d.slice_sizes.iter().zip(&operand.dims).enumerate() {
        if size < 0 || size > bound {
            fail!(SLICE_SIZES_FIT, "slice_sizes[{i}] = {size} is out of range [0, {bound}] (operand dimension {i})");
        }
    }

    // `collapsed_slice_dims`: sorted, unique, operand dimensions whose slice
    // size is 1 ("These dimensions must have size 1").
    strictly_increasing(&COLLAPSED_DIMS, &d.collapsed_slice_dims, "collapsed_slice_dims")?;
    dims_in_range(&COLLAPSED_DIMS, &d.collapsed_slice_dims, rank, "collapsed_slice_dims")?;
    for &c in &d.collapsed_slice_dims {
        let size = d.slice_sizes[c as usize];
        if size != 1 {
            fail!(COLLAPSED_SIZE_ONE, "collapsed_slice_dims entry {c} has slice size {size}; collapsed dimensions must have slice size 1");
        }
    }

    // Batching dimensions (newer XLA): also collapsed, with slice size 1.
    batching_dims(
        &d.operand_batching_dims,
        &d.start_indices_batching_dims,
        ["operand_batching_dims", "start_indices_batching_dims"],
        operand,
        start_indices,
        d.index_vector_dim,
        (&d.collapsed_slice_dims, "collapsed_slice_dims"),
    )?;
    for &b in &d.operand_batching_dims {
        let size = d.slice_sizes[b as usize];
        if size != 1 {
            fail!(BATCHING_SIZE_ONE, "operand_batching_dims entry {b} has slice size {size}; batching dimensions must have slice size 1");
        }
    }

    // `start_index_map`: one operand dimension per element of the index vector.
    index_map(
        &INDEX_RULES,
        &d.start_index_map,
        "start_index_map",
        index_vector_size,
        rank,
        (&d.operand_batching_dims, "operand_batching_dims"),
    )?;

    // "The `operand.rank` must equal the sum of `offset_dims.size` and
    // `collapsed_slice_dims.size`" (plus the batching dimensions).
    let parts = d.offset_dims.len() + d.collapsed_slice_dims.len() + d.operand_batching_dims.len();
    if parts != rank {
        let batching = if d.operand_batching_dims.is_empty() {
            String::new()
        } else {
            format!(" + operand_batching_dims.size ({})", d.operand_batching_dims.len())
        };
        fail!(
            RANK_SUM,
            "operand rank {rank} must equal offset_dims.size ({}) + collapsed_slice_dims.size ({}){batching}",
            d.offset_dims.len(),
            d.collapsed_slice_dims.len()
        );
    }

    // The output: `batch_dims.size + offset_dims.size` dimensions.
    let batch_bounds = index_batch_bounds(start_indices, d.index_vector_dim);
    let out_rank = batch_bounds.len() + d.offset_dims.len();
    strictly_increasing(&OFFSET_DIMS, &d.offset_dims, "offset_dims")?;
    dims_in_range(&OFFSET_DIMS, &d.offset_dims, out_rank, "offset_dims")?;
    let adjusted_slice_sizes: Vec<i64> = (0..rank)
        .filter(|&i| !d.collapsed_slice_dims.contains(&(i as i64)) && !d.operand_batching_dims.contains(&(i as i64)))
        .map(|i| d.slice_sizes[i])
        .collect();
    let mut dims = Vec::with_capacity(out_rank);
    let (mut next_batch, mut next_offset) = (batch_bounds.iter(), adjusted_slice_sizes.iter());
    for i in 0..out_rank as i64 {
        let bound = if d.offset_dims.contains(&i) { next_offset.next() } else { next_batch.next() };
        // Unreachable: `offset_dims` (sorted, unique, in range) has
        // `rank - collapsed - batching` entries, the size of
        // `adjusted_slice_sizes` (collapsed and batching dimensions are
        // distinct, sorted and in range); the rest are the batch bounds.
        dims.push(*bound.ok_or_else(|| broken(&OUTPUT_DIMS, "the output dimensions do not add up"))?);
    }
    Ok(Shape::array(operand.element_type, dims))
}
