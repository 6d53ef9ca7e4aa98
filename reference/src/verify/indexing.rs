//! Rules of DynamicSlice, DynamicUpdateSlice, Gather and Scatter.
//!
//! Gather's and Scatter's rules are in `indexing/gather.rs` and
//! `indexing/scatter.rs`; the helpers they share (the index vector of
//! `start_indices`/`scatter_indices`, the batching dimension pairs) are here.

pub(super) mod gather;
pub(super) mod scatter;

pub use gather::gather;
pub use scatter::scatter;

use super::rules::*;
use crate::types::{ArrayShape, Shape};

declare_rules! {}

/// DynamicSlice(operand, start_indices...) with `size_indices` (document
/// §DynamicSlice): one scalar integer start index per operand dimension,
/// all of one integer type (as XLA's and StableHLO's verifiers ask), one
/// size per dimension, "strictly greater than zero" and at most the
/// dimension size. The result has dimensions `size_indices`.
pub fn dynamic_slice(slice_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    min_operands(operands, 1)?;
    let a = array(operands[0], "operand")?;
    start_index_operands(&operands[1..], a)?;
    length(&UNNUMBERED, slice_sizes, a.rank(), "size_indices", "the operand")?;
    for (d, (&size, &bound)) in slice_sizes.iter().zip(&a.dims).enumerate() {
        if size <= 0 || size > bound {
            return Err(unnumbered(format!(
                "size_indices[{d}] = {size} is out of range [1, {bound}] (operand dimension {d}; sizes must be strictly greater than zero)"
            )));
        }
    }
    Ok(Shape::array(a.element_type, slice_sizes.to_vec()))
}

/// DynamicUpdateSlice(operand, update, start_indices...) (document
/// §DynamicUpdateSlice): `update` has the operand's element type and rank,
/// every dimension "strictly greater than zero" and none larger than the
/// operand's; one scalar start index per dimension, all of one integer
/// type. The result has the operand's shape.
pub fn dynamic_update_slice(operands: &[&Shape]) -> Check<Shape> {
    min_operands(operands, 2)?;
    let a = array(operands[0], "operand")?;
    let u = array(operands[1], "update")?;
    same_element_type(&UNNUMBERED, a, u, "operand and update")?;
    if u.rank() != a.rank() {
        return Err(unnumbered(format!("update has rank {}, operand has rank {}; they must be equal", u.rank(), a.rank())));
    }
    for (d, (&size, &bound)) in u.dims.iter().zip(&a.dims).enumerate() {
        if size > bound {
            return Err(unnumbered(format!("update dimension {d} has size {size}, larger than operand dimension {d} ({bound})")));
        }
        if size == 0 {
            return Err(unnumbered(format!("update dimension {d} has size 0; every update dimension must be strictly greater than zero")));
        }
    }
    start_index_operands(&operands[2..], a)?;
    Ok(Shape::Array(a.clone()))
}

/// The start index operands of DynamicSlice and DynamicUpdateSlice: one per
/// operand dimension, each a scalar of an integer type.
fn start_index_operands(starts: &[&Shape], operand: &ArrayShape) -> Check {
    if starts.len() != operand.rank() {
        return Err(unnumbered(format!(
            "takes one start index per operand dimension: got {} start indices for an operand of rank {}",
            starts.len(),
            operand.rank()
        )));
    }
    let mut first = None;
    for (i, s) in starts.iter().enumerate() {
        let what = format!("start index {i}");
        let s = scalar(&UNNUMBERED, s, &what)?;
        element_type_is(&UNNUMBERED, s.element_type, s.element_type.is_integer(), &what, "an integer type")?;
        match first {
            None => first = Some(s.element_type),
            Some(t) if t != s.element_type => {
                return Err(unnumbered(format!(
                    "start index {i} is {}, start index 0 is {t}; all start indices must have one type",
                    s.element_type
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The index array of Gather (`start_indices`) or Scatter
/// (`scatter_indices`): an integer array and an `index_vector_dim` in
/// `[0, rank]`. Returns the size of the index vector (1 when
/// `index_vector_dim == rank`: the implicit trailing 1 dimension).
fn index_array(indices: &ArrayShape, name: &str, index_vector_dim: i64) -> Check<i64> {
    element_type_is(&UNNUMBERED, indices.element_type, indices.element_type.is_integer(), name, "an integer type")?;
    let rank = indices.rank() as i64;
    if index_vector_dim < 0 || index_vector_dim > rank {
        return Err(unnumbered(format!("index_vector_dim {index_vector_dim} is out of range [0, {rank}] ({name} has rank {rank})")));
    }
    Ok(indices.dims.get(index_vector_dim as usize).copied().unwrap_or(1))
}

/// The bounds of the batch (Gather) or scatter (Scatter) dimensions: the
/// dimensions of the index array, skipping `index_vector_dim` (document:
/// "`dims[k]` if `k < index_vector_dim` and `dims[k+1]` otherwise").
fn index_batch_bounds(indices: &ArrayShape, index_vector_dim: i64) -> Vec<i64> {
    indices.dims.iter().enumerate().filter(|&(d, _)| d as i64 != index_vector_dim).map(|(_, &b)| b).collect()
}

/// The batching dimension pairs of newer XLA (Gather's
/// `operand_batching_dims`/`start_indices_batching_dims`, Scatter's
/// `input_batching_dims`/`scatter_indices_batching_dims`): operand dimension
/// `operand_dims[i]` is indexed by the batch index along index-array
/// dimension `index_dims[i]`. Operand side: strictly increasing, in range,
/// not in `window_dims` (collapsed/inserted), not mapped by the start index
/// map; index side: unique, in range, not `index_vector_dim`; same count;
/// paired dimensions of equal size.
fn batching_dims(
    operand_dims: &[i64],
    index_dims: &[i64],
    names: [&str; 2],
    operand: &ArrayShape,
    indices: &ArrayShape,
    index_vector_dim: i64,
    window_dims: (&[i64], &str),
) -> Check {
    let [operand_name, index_name] = names;
    strictly_increasing(&UNNUMBERED, operand_dims, operand_name)?;
    dims_in_range(&UNNUMBERED, operand_dims, operand.rank(), operand_name)?;
    if let Some(d) = operand_dims.iter().find(|d| window_dims.0.contains(d)) {
        return Err(unnumbered(format!("dimension {d} is in both {} and {operand_name}", window_dims.1)));
    }
    unique(&UNNUMBERED, index_dims, index_name)?;
    dims_in_range(&UNNUMBERED, index_dims, indices.rank(), index_name)?;
    if index_dims.contains(&index_vector_dim) {
        return Err(unnumbered(format!("{index_name} contains index_vector_dim ({index_vector_dim})")));
    }
    if operand_dims.len() != index_dims.len() {
        return Err(unnumbered(format!(
            "{operand_name} has {} entries, {index_name} has {}; they must pair up",
            operand_dims.len(),
            index_dims.len()
        )));
    }
    for (&o, &i) in operand_dims.iter().zip(index_dims) {
        let (a, b) = (operand.dims[o as usize], indices.dims[i as usize]);
        if a != b {
            return Err(unnumbered(format!(
                "batching dimensions differ in size: operand dimension {o} has {a}, index dimension {i} has {b}"
            )));
        }
    }
    Ok(())
}

/// The map from the index vector to operand dimensions (Gather's
/// `start_index_map`, Scatter's `scatter_dims_to_operand_dims`): one entry
/// per index vector element, in `[0, operand.rank)`, one-to-one, and no
/// batching dimension.
fn index_map(map: &[i64], name: &str, index_vector_size: i64, operand_rank: usize, batching: (&[i64], &str)) -> Check {
    if map.len() as i64 != index_vector_size {
        return Err(unnumbered(format!(
            "{name} has {} entries; it must have one per element of the index vector ({index_vector_size})",
            map.len()
        )));
    }
    dims_in_range(&UNNUMBERED, map, operand_rank, name)?;
    unique(&UNNUMBERED, map, name)?;
    if let Some(d) = map.iter().find(|d| batching.0.contains(d)) {
        return Err(unnumbered(format!("dimension {d} is in both {name} and {}", batching.1)));
    }
    Ok(())
}
