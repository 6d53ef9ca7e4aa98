//! Rules of the ops that move elements without changing them: Broadcast,
//! BroadcastInDim, Reshape, Collapse, Transpose, Rev, Slice, ConcatInDim,
//! Pad, Iota, Tuple, GetTupleElement.

use super::rules::*;
use crate::ir::PadDim;
use crate::types::{ArrayShape, Shape};

declare_rules! {}

/// Broadcast: new dimensions `broadcast_sizes` on the left.
pub fn broadcast(broadcast_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&UNNUMBERED, broadcast_sizes, "broadcast_sizes")?;
    let dims = broadcast_sizes.iter().chain(&a.dims).copied().collect();
    Ok(Shape::array(a.element_type, dims))
}

/// BroadcastInDim: operand dimension i goes to output dimension
/// `broadcast_dimensions[i]` (strictly increasing, as XLA requires) and has
/// size 1 or that dimension's size.
pub fn broadcast_in_dim(out_dim_size: &[i64], broadcast_dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&UNNUMBERED, out_dim_size, "out_dim_size")?;
    length(&UNNUMBERED, broadcast_dimensions, a.rank(), "broadcast_dimensions", "the operand")?;
    dims_in_range(&UNNUMBERED, broadcast_dimensions, out_dim_size.len(), "broadcast_dimensions")?;
    strictly_increasing(&UNNUMBERED, broadcast_dimensions, "broadcast_dimensions")?;
    for (i, &d) in broadcast_dimensions.iter().enumerate() {
        let (size, out) = (a.dims[i], out_dim_size[d as usize]);
        if size != 1 && size != out {
            return Err(unnumbered(format!(
                "operand dimension {i} has size {size}; mapped to output dimension {d} of size {out} it must be 1 or {out}"
            )));
        }
    }
    Ok(Shape::array(a.element_type, out_dim_size.to_vec()))
}

/// Reshape: same element count; `dimensions`, when given, is a permutation
/// of the operand's dimensions (the order in which it is flattened).
pub fn reshape(dimensions: Option<&[i64]>, new_sizes: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    non_negative(&UNNUMBERED, new_sizes, "new_sizes")?;
    if let Some(order) = dimensions {
        permutation(&UNNUMBERED, order, a.rank(), "dimensions")?;
    }
    let (from, to) = (product(&a.dims)?, product(new_sizes)?);
    if from != to {
        return Err(unnumbered(format!("cannot reshape {a} ({from} elements) to {new_sizes:?} ({to} elements)")));
    }
    Ok(Shape::array(a.element_type, new_sizes.to_vec()))
}

/// Collapse: an in-order, consecutive, non-empty run of dimensions becomes one.
pub fn collapse(dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    dims_in_range(&UNNUMBERED, dimensions, a.rank(), "dimensions")?;
    let (Some(&first), Some(&last)) = (dimensions.first(), dimensions.last()) else {
        return Err(unnumbered("dimensions must name at least one dimension"));
    };
    if dimensions.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(unnumbered(format!("dimensions must be in-order and consecutive, got {dimensions:?}")));
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
    permutation(&UNNUMBERED, perm, a.rank(), "permutation")?;
    Ok(Shape::array(a.element_type, perm.iter().map(|&p| a.dims[p as usize]).collect()))
}

/// Rev: distinct dimensions of the operand.
pub fn rev(dimensions: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    dims_in_range(&UNNUMBERED, dimensions, a.rank(), "dimensions")?;
    unique(&UNNUMBERED, dimensions, "dimensions")?;
    Ok(Shape::Array(a.clone()))
}

/// Slice: 0 <= start <= limit <= size and stride >= 1 in every dimension;
/// the output has ceil((limit - start) / stride) entries per dimension.
pub fn slice(start: &[i64], limit: &[i64], strides: &[i64], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    length(&UNNUMBERED, start, a.rank(), "start_indices", "the operand")?;
    length(&UNNUMBERED, limit, a.rank(), "limit_indices", "the operand")?;
    length(&UNNUMBERED, strides, a.rank(), "strides", "the operand")?;
    positive(&UNNUMBERED, strides, "strides")?;
    let mut dims = Vec::with_capacity(a.rank());
    for d in 0..a.rank() {
        let (s, l, size) = (start[d], limit[d], a.dims[d]);
        if s < 0 || s > l || l > size {
            return Err(unnumbered(format!("dimension {d}: need 0 <= start_indices ({s}) <= limit_indices ({l}) <= size ({size})")));
        }
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
        return Err(unnumbered("0-dimensional values cannot be concatenated"));
    }
    dims_in_range(&UNNUMBERED, &[dimension], first.rank(), "dimension")?;
    let d = dimension as usize;
    let mut dims = first.dims.clone();
    for (i, s) in operands.iter().enumerate().skip(1) {
        let a = array(s, &format!("operand {i}"))?;
        same_element_type(&UNNUMBERED, first, a, &format!("operand 0 and operand {i}"))?;
        if a.rank() != first.rank() {
            return Err(unnumbered(format!("operand {i} has rank {}, operand 0 has rank {}", a.rank(), first.rank())));
        }
        for k in 0..a.rank() {
            if k != d && a.dims[k] != first.dims[k] {
                return Err(unnumbered(format!(
                    "operand {i} has size {} in dimension {k}, operand 0 has {} (only dimension {d} may differ)",
                    a.dims[k], first.dims[k]
                )));
            }
        }
        dims[d] = dims[d].checked_add(a.dims[d]).ok_or_else(|| unnumbered("concatenated size overflows"))?;
    }
    Ok(Shape::array(first.element_type, dims))
}

/// Pad: one config per dimension, interior padding >= 0, a scalar padding
/// value of the operand's type, and no dimension of negative size.
pub fn pad(config: &[PadDim], operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let a = array(operands[0], "operand")?;
    let value = scalar(&UNNUMBERED, operands[1], "padding_value")?;
    same_element_type(&UNNUMBERED, a, value, "operand and padding_value")?;
    if config.len() != a.rank() {
        return Err(unnumbered(format!("padding_config has {} entries, the operand has {} dimensions", config.len(), a.rank())));
    }
    let mut dims = Vec::with_capacity(a.rank());
    for (d, (p, &size)) in config.iter().zip(&a.dims).enumerate() {
        if p.interior_padding < 0 {
            return Err(unnumbered(format!("dimension {d}: interior_padding {} is negative", p.interior_padding)));
        }
        // In i128: the attributes are i64, so no sum or product can overflow.
        let holes = (size as i128 - 1).max(0) * p.interior_padding as i128;
        let out = size as i128 + holes + p.edge_padding_low as i128 + p.edge_padding_high as i128;
        if out < 0 {
            return Err(unnumbered(format!(
                "dimension {d}: negative edge padding removes more than the {} elements there are",
                size as i128 + holes
            )));
        }
        let out = i64::try_from(out).map_err(|_| format!("dimension {d}: padded size {out} does not fit in 64 bits"))?;
        dims.push(out);
    }
    Ok(Shape::array(a.element_type, dims))
}

/// Iota: an array shape (not pred) and a dimension of it.
pub fn iota(shape: &Shape, iota_dimension: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 0)?;
    let a: &ArrayShape = array(shape, "shape")?;
    element_type_is(&UNNUMBERED, a.element_type, !a.element_type.is_pred(), "shape", "an integer, floating-point or complex type")?;
    dims_in_range(&UNNUMBERED, &[iota_dimension], a.rank(), "iota_dimension")?;
    non_negative(&UNNUMBERED, &a.dims, "shape dimensions")?;
    Ok(shape.clone())
}

/// Tuple: any values, in order.
pub fn tuple(operands: &[&Shape]) -> Check<Shape> {
    Ok(Shape::Tuple(operands.iter().map(|s| (*s).clone()).collect()))
}

/// GetTupleElement: `index` names an element of a tuple operand.
pub fn get_tuple_element(index: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let elems = operands[0].as_tuple().ok_or_else(|| unnumbered(format!("operand must be a tuple, got {}", operands[0])))?;
    if index < 0 || index as usize >= elems.len() {
        return Err(unnumbered(format!("index {index} is out of range for a tuple of {} elements", elems.len())));
    }
    Ok(elems[index as usize].clone())
}
