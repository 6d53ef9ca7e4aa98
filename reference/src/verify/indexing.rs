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

declare_rules! {
    DS_START_COUNT = "dynamic_slice.c1": "\"The shape of `start_indices` must 1-dimensional, with dimension size equal to the number of dimensions of `operand`\": one start index per operand dimension.";
    DS_START_SCALAR_INT = "dynamic_slice.c2": "Each start index is one of \"N scalar integers containing the starting indices of the slice for each dimension\".";
    DS_SIZE_COUNT = "dynamic_slice.c3": "`size_indices` is a \"List of N integers containing the slice size for each dimension\".";
    DS_SIZE_RANGE = "dynamic_slice.c4": "Each `size_indices` entry \"must be strictly greater than zero\" and at most the operand's dimension size (XLA).";
    DS_START_ONE_TYPE = "dynamic_slice.c5": "(XLA) All start indices have one integer type.";

    DUS_START_COUNT = "dynamic_update_slice.c1": "\"The shape of `start_indices` must be 1-dimensional, with dimension size equal to the number of dimensions of `operand`\": one start index per operand dimension.";
    DUS_UPDATE_TYPE = "dynamic_update_slice.c2": "`update` is an \"N dimensional array of type T\": the operand's element type.";
    DUS_UPDATE_RANK = "dynamic_update_slice.c3": "`update` is an \"N dimensional array of type T\": the operand's rank.";
    DUS_UPDATE_POSITIVE = "dynamic_update_slice.c4": "\"Each dimension of update shape must be strictly greater than zero\".";
    DUS_UPDATE_FITS = "dynamic_update_slice.c5": "No update dimension is larger than the operand's: \"start + update must be less than or equal to the operand size for each dimension\" with start >= 0.";
    DUS_START_SCALAR_INT = "dynamic_update_slice.c6": "Each start index is one of \"N scalar integers containing the starting indices of the slice for each dimension\".";
    DUS_START_ONE_TYPE = "dynamic_update_slice.c7": "(XLA) All start indices have one integer type.";

    OPERAND_BATCHING_DIMS = "batching_dims.c1": "(XLA) The operand's batching dimensions (Gather's `operand_batching_dims`, Scatter's `input_batching_dims`) are sorted, without repeats, and in [0, operand.rank).";
    BATCHING_NOT_WINDOW = "batching_dims.c2": "(XLA) No operand batching dimension is also in `collapsed_slice_dims` (Gather) or `inserted_window_dims` (Scatter).";
    BATCHING_NOT_MAPPED = "batching_dims.c3": "(XLA) No operand batching dimension is also in `start_index_map` (Gather) or `scatter_dims_to_operand_dims` (Scatter).";
    INDEX_BATCHING_DIMS = "batching_dims.c4": "(XLA) The index array's batching dimensions (`start_indices_batching_dims`, `scatter_indices_batching_dims`) are without repeats and in [0, indices.rank).";
    BATCHING_NOT_INDEX_VECTOR = "batching_dims.c5": "(XLA) `index_vector_dim` is not one of the index array's batching dimensions.";
    BATCHING_PAIRS = "batching_dims.c6": "(XLA) The operand and the index array have the same number of batching dimensions.";
    BATCHING_SIZES = "batching_dims.c7": "(XLA) Paired batching dimensions of the operand and the index array have equal sizes.";
}

/// The rules of Gather or Scatter that the helpers they share check, so that
/// an error names the op's own rule.
pub(super) struct IndexRules {
    /// The index array has an integer element type.
    pub integer_indices: &'static Rule,
    /// `index_vector_dim` is in `[0, indices.rank]`.
    pub index_vector_dim: &'static Rule,
    /// The index map has one entry per element of the index vector.
    pub map_size: &'static Rule,
    /// The index map's entries are operand dimensions.
    pub map_in_range: &'static Rule,
    /// The index map is one-to-one.
    pub map_unique: &'static Rule,
}

/// DynamicSlice(operand, start_indices...) with `size_indices` (document
/// §DynamicSlice): one scalar integer start index per operand dimension,
/// all of one integer type (as XLA's and StableHLO's verifiers ask), one
/// size per dimension, "strictly greater than zero" and at most the
/// dimension size. The result has dimensions `size_indices`.
pub fn dynamic_slice(slice_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    min_operands(operands, 1)?;
    let a = array(operands[0], "operand")?;
    start_index_operands(&operands[1..], a, [&DS_START_COUNT, &DS_START_SCALAR_INT, &DS_START_ONE_TYPE])?;
    length(&DS_SIZE_COUNT, slice_sizes, a.rank(), "size_indices", "the operand")?;
    for (d, (&size, &bound)) in slice_sizes.iter().zip(&a.dims).enumerate() {
        if size <= 0 || size > bound {
            fail!(
                DS_SIZE_RANGE,
                "size_indices[{d}] = {size} is out of range [1, {bound}] (operand dimension {d}; sizes must be strictly greater than zero)"
            );
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
    same_element_type(&DUS_UPDATE_TYPE, a, u, "operand and update")?;
    if u.rank() != a.rank() {
        fail!(DUS_UPDATE_RANK, "update has rank {}, operand has rank {}; they must be equal", u.rank(), a.rank());
    }
    for (d, (&size, &bound)) in u.dims.iter().zip(&a.dims).enumerate() {
        if size > bound {
            fail!(DUS_UPDATE_FITS, "update dimension {d} has size {size}, larger than operand dimension {d} ({bound})");
        }
        if size == 0 {
            fail!(DUS_UPDATE_POSITIVE, "update dimension {d} has size 0; every update dimension must be strictly greater than zero");
        }
    }
    start_index_operands(&operands[2..], a, [&DUS_START_COUNT, &DUS_START_SCALAR_INT, &DUS_START_ONE_TYPE])?;
    Ok(Shape::Array(a.clone()))
}

/// The start index operands of DynamicSlice and DynamicUpdateSlice: one per
/// operand dimension, each a scalar of an integer type, all of one type.
/// `rules` are the op's rules for these three.
fn start_index_operands(starts: &[&Shape], operand: &ArrayShape, rules: [&'static Rule; 3]) -> Check {
    let [count, scalar_integer, one_type] = rules;
    if starts.len() != operand.rank() {
        fail!(
            *count,
            "takes one start index per operand dimension: got {} start indices for an operand of rank {}",
            starts.len(),
            operand.rank()
        );
    }
    let mut first = None;
    for (i, s) in starts.iter().enumerate() {
        let what = format!("start index {i}");
        let s = scalar(scalar_integer, s, &what)?;
        element_type_is(scalar_integer, s.element_type, s.element_type.is_integer(), &what, "an integer type")?;
        match first {
            None => first = Some(s.element_type),
            Some(t) if t != s.element_type => {
                fail!(*one_type, "start index {i} is {}, start index 0 is {t}; all start indices must have one type", s.element_type);
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
fn index_array(rules: &IndexRules, indices: &ArrayShape, name: &str, index_vector_dim: i64) -> Check<i64> {
    element_type_is(rules.integer_indices, indices.element_type, indices.element_type.is_integer(), name, "an integer type")?;
    let rank = indices.rank() as i64;
    if index_vector_dim < 0 || index_vector_dim > rank {
        fail!(*rules.index_vector_dim, "index_vector_dim {index_vector_dim} is out of range [0, {rank}] ({name} has rank {rank})");
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
    strictly_increasing(&OPERAND_BATCHING_DIMS, operand_dims, operand_name)?;
    dims_in_range(&OPERAND_BATCHING_DIMS, operand_dims, operand.rank(), operand_name)?;
    if let Some(d) = operand_dims.iter().find(|d| window_dims.0.contains(d)) {
        fail!(BATCHING_NOT_WINDOW, "dimension {d} is in both {} and {operand_name}", window_dims.1);
    }
    unique(&INDEX_BATCHING_DIMS, index_dims, index_name)?;
    dims_in_range(&INDEX_BATCHING_DIMS, index_dims, indices.rank(), index_name)?;
    if index_dims.contains(&index_vector_dim) {
        fail!(BATCHING_NOT_INDEX_VECTOR, "{index_name} contains index_vector_dim ({index_vector_dim})");
    }
    if operand_dims.len() != index_dims.len() {
        fail!(
            BATCHING_PAIRS,
            "{operand_name} has {} entries, {index_name} has {}; they must pair up",
            operand_dims.len(),
            index_dims.len()
        );
    }
    for (&o, &i) in operand_dims.iter().zip(index_dims) {
        let (a, b) = (operand.dims[o as usize], indices.dims[i as usize]);
        if a != b {
            fail!(BATCHING_SIZES, "batching dimensions differ in size: operand dimension {o} has {a}, index dimension {i} has {b}");
        }
    }
    Ok(())
}

/// The map from the index vector to operand dimensions (Gather's
/// `start_index_map`, Scatter's `scatter_dims_to_operand_dims`): one entry
/// per index vector element, in `[0, operand.rank)`, one-to-one, and no
/// batching dimension.
fn index_map(rules: &IndexRules, map: &[i64], name: &str, index_vector_size: i64, operand_rank: usize, batching: (&[i64], &str)) -> Check {
    if map.len() as i64 != index_vector_size {
        fail!(*rules.map_size, "{name} has {} entries; it must have one per element of the index vector ({index_vector_size})", map.len());
    }
    dims_in_range(rules.map_in_range, map, operand_rank, name)?;
    unique(rules.map_unique, map, name)?;
    if let Some(d) = map.iter().find(|d| batching.0.contains(d)) {
        fail!(BATCHING_NOT_MAPPED, "dimension {d} is in both {name} and {}", batching.1);
    }
    Ok(())
}
