//! Rules of the ops that move elements without changing them: Broadcast,
//! BroadcastInDim, Reshape, Collapse, Transpose, Rev, Slice, ConcatInDim,
//! Pad, Iota, Tuple, GetTupleElement.

use super::rules::*;
use crate::ir::PadDim;
use crate::types::{ArrayShape, Shape};

declare_rules! {
    BROADCAST_SIZES = "broadcast.c1": "(XLA) `broadcast_sizes`, \"The sizes of the new dimensions\", are non-negative.";
    BID_LENGTH = "broadcast_in_dim.c1": "`broadcast_dimensions` says \"Which dimension in the target shape each dimension of the operand shape corresponds to\": one entry per operand dimension.";
    BID_RANGE = "broadcast_in_dim.c2": "\"the i'th dimension of the operand is mapped to the broadcast_dimension[i]'th dimension of the output shape\": each entry is a dimension of `out_dim_size`.";
    BID_SIZE = "broadcast_in_dim.c3": "\"The dimensions of `operand` must have size 1 or be the same size as the dimension in the output shape they are mapped to.\"";
    BID_INCREASING = "broadcast_in_dim.c4": "(XLA) `broadcast_dimensions` is strictly increasing.";
    BID_OUT_SIZES = "broadcast_in_dim.c5": "(XLA) `out_dim_size` entries are non-negative.";
    RESHAPE_COUNT = "reshape.c1": "\"The product of the `dimensions` dimensions must equal the product of the operand's dimension sizes\" (the document's `dimensions` are `new_sizes`).";
    RESHAPE_ORDER = "reshape.c2": "(XLA) The optional `dimensions`, the order in which the operand is flattened, is a permutation of the operand's dimensions.";
    RESHAPE_SIZES = "reshape.c3": "(XLA) `new_sizes` entries are non-negative.";
    COLLAPSE_RANGE = "collapse.c1": "`dimensions` is a \"subset of T's dimensions\": each entry is a dimension of the operand.";
    COLLAPSE_CONSECUTIVE = "collapse.c2": "\"The dimension indices must be an in-order (low to high dimension numbers), consecutive subset of T's dimensions.\"";
    COLLAPSE_EMPTY = "collapse.c3": "(xlaref) `dimensions` names at least one dimension: an empty run has no place for the new dimension (XLA returns the operand unchanged).";
    TRANSPOSE_PERMUTATION = "transpose.c1": "\"Permutes the operand dimensions with the given permutation\": `permutation` is a permutation of the operand's dimensions.";
    REV_RANGE = "rev.c1": "`dimensions` are \"dimensions to reverse\": each is a dimension of the operand.";
    REV_UNIQUE = "rev.c2": "(XLA) `dimensions` names no dimension twice.";
    SLICE_LENGTH = "slice.c1": "`start_indices`, `limit_indices` and `strides` are each a \"List of N integers\", N the operand's rank.";
    SLICE_START = "slice.c2": "`start_indices`: \"Values must be greater than or equal to zero.\"";
    SLICE_LIMIT = "slice.c3": "Each `limit_indices` value \"must be greater than or equal to the respective `start_indices` value for the dimension and less than or equal to the size of the dimension\".";
    SLICE_STRIDES = "slice.c4": "(XLA) `strides` entries are at least 1.";
    CONCAT_RANK = "concat_in_dim.c1": "The operands \"must have the same number of dimensions as each other\".";
    CONCAT_TYPE = "concat_in_dim.c2": "The operands are \"N arrays of type T\": one element type.";
    CONCAT_DIMENSION = "concat_in_dim.c3": "`dimension` \"names the dimension to be concatenated\": it is a dimension of the operands.";
    CONCAT_SIZES = "concat_in_dim.c4": "\"With the exception of `dimension` all dimensions must be the same.\"";
    CONCAT_RANK0 = "concat_in_dim.c5": "\"0-dimensional values cannot be concatenated\".";
    PAD_VALUE_SCALAR = "pad.c1": "`padding_value` is a \"scalar of type `T`\": a scalar.";
    PAD_VALUE_TYPE = "pad.c2": "`padding_value` is a \"scalar of type `T`\": the operand's element type.";
    PAD_CONFIG_LENGTH = "pad.c3": "\"`padding_config` specifies the amount of edge padding and the interior padding for each dimension\": one entry per operand dimension.";
    PAD_INTERIOR = "pad.c4": "`interior_padding` \"may not be negative\".";
    PAD_NEGATIVE_SIZE = "pad.c5": "(XLA) Negative edge padding removes at most the elements of the interior-padded dimension: no padded dimension has a negative size.";
    IOTA_DIMENSION = "iota.c1": "`iota_dimension`, \"The dimension to increment along\", is a dimension of `shape`.";
    IOTA_TYPE = "iota.c2": "(XLA) The element type of `shape` is not pred.";
    IOTA_SIZES = "iota.c3": "(invariant) The dimension sizes of `shape` are non-negative (the reader's shape syntax has no negative size).";
    GTE_TUPLE = "get_tuple_element.c1": "GetTupleElement \"Indexes into a tuple\": the operand is a tuple.";
    GTE_INDEX = "get_tuple_element.c2": "GetTupleElement \"Indexes into a tuple\": `index` names one of its elements.";
}

/// Broadcast: new dimensions `broadcast_sizes` on the left.
pub fn broadcast(broadcast_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&BROADCAST_SIZES, broadcast_sizes, "broadcast_sizes")?;
    let dims = broadcast_sizes.iter().chain(&a.dims).copied().collect();
    Ok(Shape::array(a.element_type, dims))
}

/// BroadcastInDim: operand dimension i goes to output dimension
/// `broadcast_dimensions[i]` (strictly increasing, as XLA requires) and has
/// size 1 or that dimension's size.
pub fn broadcast_in_dim(out_dim_size: &[i64], broadcast_dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&BID_OUT_SIZES, out_dim_size, "out_dim_size")?;
    length(&BID_LENGTH, broadcast_dimensions, a.rank(), "broadcast_dimensions", "the operand")?;
    dims_in_range(&BID_RANGE, broadcast_dimensions, out_dim_size.len(), "broadcast_dimensions")?;
    strictly_increasing(&BID_INCREASING, broadcast_dimensions, "broadcast_dimensions")?;
    for (i, &d) in broadcast_dimensions.iter().enumerate() {
        let (size, out) = (a.dims[i], out_dim_size[d as usize]);
        if size != 1 && size != out {
            fail!(BID_SIZE, "operand dimension {i} has size {size}; mapped to output dimension {d} of size {out} it must be 1 or {out}");
        }
    }
    Ok(Shape::array(a.element_type, out_dim_size.to_vec()))
}

/// Reshape: same element count; `dimensions`, when given, is a permutation
/// of the operand's dimensions (the order in which it is flattened).
pub fn reshape(dimensions: Option<&[i64]>, new_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&RESHAPE_SIZES, new_sizes, "new_sizes")?;
    if let Some(order) = dimensions {
        permutation(&RESHAPE_ORDER, order, a.rank(), "dimensions")?;
    }
    let (from, to) = (product(&a.dims)?, product(new_sizes)?);
    if from != to {
        fail!(RESHAPE_COUNT, "cannot reshape {a} ({from} elements) to {new_sizes:?} ({to} elements)");
    }
    Ok(Shape::array(a.element_type, new_sizes.to_vec()))
}

/// Collapse: an in-order, consecutive, non-empty run of dimensions becomes one.
pub fn collapse(dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    dims_in_range(&COLLAPSE_RANGE, dimensions, a.rank(), "dimensions")?;
    let (Some(&first), Some(&last)) = (dimensions.first(), dimensions.last()) else {
        fail!(COLLAPSE_EMPTY, "dimensions must name at least one dimension");
    };
    if dimensions.windows(2).any(|w| w[1] != w[0] + 1) {
        fail!(COLLAPSE_CONSECUTIVE, "dimensions must be in-order and consecutive, got {dimensions:?}");
    }
    let merged = product(&a.dims[first as usize..=last as usize])?;
    let mut dims = a.dims[..first as usize].to_vec();
    dims.push(merged);
    dims.extend_from_slice(&a.dims[last as usize + 1..]);
    Ok(Shape::array(a.element_type, dims))
}

/// Transpose: output dimension i is input dimension `permutation[i]`.
pub fn transpose(perm: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    permutation(&TRANSPOSE_PERMUTATION, perm, a.rank(), "permutation")?;
    Ok(Shape::array(a.element_type, perm.iter().map(|&p| a.dims[p as usize]).collect()))
}

/// Rev: distinct dimensions of the operand.
pub fn rev(dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    dims_in_range(&REV_RANGE, dimensions, a.rank(), "dimensions")?;
    unique(&REV_UNIQUE, dimensions, "dimensions")?;
    Ok(Shape::Array(a.clone()))
}

/// Slice: 0 <= start <= limit <= size and stride >= 1 in every dimension;
/// the output has ceil((limit - start) / stride) entries per dimension.
pub fn slice(start: &[i64], limit: &[i64], strides: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    length(&SLICE_LENGTH, start, a.rank(), "start_indices", "the operand")?;
    length(&SLICE_LENGTH, limit, a.rank(), "limit_indices", "the operand")?;
    length(&SLICE_LENGTH, strides, a.rank(), "strides", "the operand")?;
    positive(&SLICE_STRIDES, strides, "strides")?;
    let mut dims = Vec::with_capacity(a.rank());
    for d in 0..a.rank() {
        let (s, l, size) = (start[d], limit[d], a.dims[d]);
        let need = || format!("dimension {d}: need 0 <= start_indices ({s}) <= limit_indices ({l}) <= size ({size})");
        ensure(s >= 0, &SLICE_START, need)?;
        ensure(s <= l && l <= size, &SLICE_LIMIT, need)?;
        // ceil((l - s) / stride) without overflow for any stride >= 1
        dims.push((l - s).div_euclid(strides[d]) + i64::from((l - s).rem_euclid(strides[d]) != 0));
    }
    Ok(Shape::array(a.element_type, dims))
}

/// ConcatInDim: N >= 1 arrays of one rank (>= 1) and element type, equal in
/// every dimension but `dimension`, which is summed.
pub fn concat_in_dim(dimension: i64, operands: &[&Shape]) -> Check<Shape> {
    min_operands(operands, 1)?;
    let first = array(operands[0], "operand 0")?;
    if first.rank() == 0 {
        fail!(CONCAT_RANK0, "0-dimensional values cannot be concatenated");
    }
    dims_in_range(&CONCAT_DIMENSION, &[dimension], first.rank(), "dimension")?;
    let d = dimension as usize;
    let mut dims = first.dims.clone();
    for (i, s) in operands.iter().enumerate().skip(1) {
        let a = array(s, &format!("operand {i}"))?;
        same_element_type(&CONCAT_TYPE, first, a, &format!("operand 0 and operand {i}"))?;
        if a.rank() != first.rank() {
            fail!(CONCAT_RANK, "operand {i} has rank {}, operand 0 has rank {}", a.rank(), first.rank());
        }
        for k in 0..a.rank() {
            if k != d && a.dims[k] != first.dims[k] {
                fail!(
                    CONCAT_SIZES,
                    "operand {i} has size {} in dimension {k}, operand 0 has {} (only dimension {d} may differ)",
                    a.dims[k],
                    first.dims[k]
                );
            }
        }
        dims[d] = dims[d].checked_add(a.dims[d]).ok_or_else(|| broken(&SIZE_OVERFLOW, "concatenated size overflows"))?;
    }
    Ok(Shape::array(first.element_type, dims))
}

/// Pad: one config per dimension, interior padding >= 0, a scalar padding
/// value of the operand's type, and no dimension of negative size.
pub fn pad(config: &[PadDim], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let a = array(operands[0], "operand")?;
    let value = scalar(&PAD_VALUE_SCALAR, operands[1], "padding_value")?;
    same_element_type(&PAD_VALUE_TYPE, a, value, "operand and padding_value")?;
    if config.len() != a.rank() {
        fail!(PAD_CONFIG_LENGTH, "padding_config has {} entries, the operand has {} dimensions", config.len(), a.rank());
    }
    let mut dims = Vec::with_capacity(a.rank());
    for (d, (p, &size)) in config.iter().zip(&a.dims).enumerate() {
        if p.interior_padding < 0 {
            fail!(PAD_INTERIOR, "dimension {d}: interior_padding {} is negative", p.interior_padding);
        }
        // In i128: the attributes are i64, so no sum or product can overflow.
        let holes = (size as i128 - 1).max(0) * p.interior_padding as i128;
        let out = size as i128 + holes + p.edge_padding_low as i128 + p.edge_padding_high as i128;
        if out < 0 {
            fail!(
                PAD_NEGATIVE_SIZE,
                "dimension {d}: negative edge padding removes more than the {} elements there are",
                size as i128 + holes
            );
        }
        let out =
            i64::try_from(out).map_err(|_| broken(&SIZE_OVERFLOW, format!("dimension {d}: padded size {out} does not fit in 64 bits")))?;
        dims.push(out);
    }
    Ok(Shape::array(a.element_type, dims))
}

/// Iota: an array shape (not pred) and a dimension of it.
pub fn iota(shape: &Shape, iota_dimension: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 0)?;
    let a: &ArrayShape = array(shape, "shape")?;
    element_type_is(&IOTA_TYPE, a.element_type, !a.element_type.is_pred(), "shape", "an integer, floating-point or complex type")?;
    dims_in_range(&IOTA_DIMENSION, &[iota_dimension], a.rank(), "iota_dimension")?;
    // The shape syntax the reader parses has no negative size.
    non_negative(&IOTA_SIZES, &a.dims, "shape dimensions")?;
    Ok(shape.clone())
}

/// Tuple: any values, in order.
pub fn tuple(operands: &[&Shape]) -> Check<Shape> {
    Ok(Shape::Tuple(operands.iter().map(|s| (*s).clone()).collect()))
}

/// GetTupleElement: `index` names an element of a tuple operand.
pub fn get_tuple_element(index: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let elems = operands[0].as_tuple().ok_or_else(|| broken(&GTE_TUPLE, format!("operand must be a tuple, got {}", operands[0])))?;
    if index < 0 || index as usize >= elems.len() {
        fail!(GTE_INDEX, "index {index} is out of range for a tuple of {} elements", elems.len());
    }
    Ok(elems[index as usize].clone())
}
