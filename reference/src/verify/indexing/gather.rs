//! Rules of Gather (document §Gather, "General Semantics").

use super::super::rules::*;
use super::{batching_dims, index_array, index_batch_bounds, index_map};
use crate::ir::GatherDims;
use crate::types::Shape;

declare_rules! {}

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
    let index_vector_size = index_array(start_indices, "start_indices", d.index_vector_dim)?;
    let rank = operand.rank();

    // "`slice_sizes.size` has to be equal to `operand.rank`"; each slice fits.
    length(&UNNUMBERED, &d.slice_sizes, rank, "slice_sizes", "the operand")?;
    for (i, (&size, &bound)) in d.slice_sizes.iter().zip(&operand.dims).enumerate() {
        if size < 0 || size > bound {
            return Err(unnumbered(format!("slice_sizes[{i}] = {size} is out of range [0, {bound}] (operand dimension {i})")));
        }
    }

    // `collapsed_slice_dims`: sorted, unique, operand dimensions whose slice
    // size is 1 ("These dimensions must have size 1").
    strictly_increasing(&UNNUMBERED, &d.collapsed_slice_dims, "collapsed_slice_dims")?;
    dims_in_range(&UNNUMBERED, &d.collapsed_slice_dims, rank, "collapsed_slice_dims")?;
    for &c in &d.collapsed_slice_dims {
        let size = d.slice_sizes[c as usize];
        if size != 1 {
            return Err(unnumbered(format!(
                "collapsed_slice_dims entry {c} has slice size {size}; collapsed dimensions must have slice size 1"
            )));
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
            return Err(unnumbered(format!(
                "operand_batching_dims entry {b} has slice size {size}; batching dimensions must have slice size 1"
            )));
        }
    }

    // `start_index_map`: one operand dimension per element of the index vector.
    index_map(&d.start_index_map, "start_index_map", index_vector_size, rank, (&d.operand_batching_dims, "operand_batching_dims"))?;

    // "The `operand.rank` must equal the sum of `offset_dims.size` and
    // `collapsed_slice_dims.size`" (plus the batching dimensions).
    let parts = d.offset_dims.len() + d.collapsed_slice_dims.len() + d.operand_batching_dims.len();
    if parts != rank {
        let batching = if d.operand_batching_dims.is_empty() {
            String::new()
        } else {
            format!(" + operand_batching_dims.size ({})", d.operand_batching_dims.len())
        };
        return Err(unnumbered(format!(
            "operand rank {rank} must equal offset_dims.size ({}) + collapsed_slice_dims.size ({}){batching}",
            d.offset_dims.len(),
            d.collapsed_slice_dims.len()
        )));
    }

    // The output: `batch_dims.size + offset_dims.size` dimensions.
    let batch_bounds = index_batch_bounds(start_indices, d.index_vector_dim);
    let out_rank = batch_bounds.len() + d.offset_dims.len();
    strictly_increasing(&UNNUMBERED, &d.offset_dims, "offset_dims")?;
    dims_in_range(&UNNUMBERED, &d.offset_dims, out_rank, "offset_dims")?;
    let adjusted_slice_sizes: Vec<i64> = (0..rank)
        .filter(|&i| !d.collapsed_slice_dims.contains(&(i as i64)) && !d.operand_batching_dims.contains(&(i as i64)))
        .map(|i| d.slice_sizes[i])
        .collect();
    let mut dims = Vec::with_capacity(out_rank);
    let (mut next_batch, mut next_offset) = (batch_bounds.iter(), adjusted_slice_sizes.iter());
    for i in 0..out_rank as i64 {
        let bound = if d.offset_dims.contains(&i) { next_offset.next() } else { next_batch.next() };
        dims.push(*bound.ok_or_else(|| unnumbered("the output dimensions do not add up"))?);
    }
    Ok(Shape::array(operand.element_type, dims))
}
