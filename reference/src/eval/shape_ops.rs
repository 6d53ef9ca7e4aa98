//! Ops that move elements without changing them: Reshape, Collapse,
//! Transpose, Rev, Slice, ConcatInDim, Pad, Iota, GetTupleElement.

use super::internal;
use crate::error::RunError;
use crate::ir::PadDim;
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::convert;
use crate::types::ArrayShape;

/// Reshape: flatten the operand in the order `dimensions` gives (row-major
/// when absent: slowest to fastest varying), then refill `new_sizes`
/// row-major. With a `dimensions` order that is the operand transposed first.
pub fn reshape(x: &ArrayLiteral, dimensions: Option<&[i64]>, out: &ArrayShape) -> ArrayLiteral {
    let flattened = match dimensions {
        Some(order) if order.iter().enumerate().any(|(i, &d)| d != i as i64) => {
            let permuted = ArrayShape::new(x.element_type(), order.iter().map(|&d| x.dims()[d as usize]).collect());
            transpose(x, order, &permuted)
        }
        _ => x.clone(),
    };
    ArrayLiteral::with_shape(out.clone(), flattened.data)
}

/// Collapse: a run of consecutive dimensions becomes one; row-major order
/// is unchanged, so the elements stay where they are.
pub fn collapse(x: &ArrayLiteral, out: &ArrayShape) -> ArrayLiteral {
    ArrayLiteral::with_shape(out.clone(), x.data.clone())
}

/// Transpose: `input_dimensions[permutation[i]] = output_dimensions[i]`, so
/// output index `out` reads input index `in` with `in[permutation[i]] = out[i]`.
pub fn transpose(x: &ArrayLiteral, permutation: &[i64], out: &ArrayShape) -> ArrayLiteral {
    x.remap(out, None, |out_index, in_index| {
        for (i, &p) in permutation.iter().enumerate() {
            in_index[p as usize] = out_index[i];
        }
        true
    })
}

/// Rev: index i of a reversed dimension of size N reads N - 1 - i.
pub fn rev(x: &ArrayLiteral, dimensions: &[i64]) -> ArrayLiteral {
    let dims = x.dims().to_vec();
    x.remap(&x.shape, None, |out_index, in_index| {
        in_index.copy_from_slice(out_index);
        for &d in dimensions {
            let d = d as usize;
            in_index[d] = dims[d] - 1 - out_index[d];
        }
        true
    })
}

/// Slice: output index `out` reads `start + out * stride` in each dimension.
pub fn slice(x: &ArrayLiteral, start: &[i64], strides: &[i64], out: &ArrayShape) -> ArrayLiteral {
    x.remap(out, None, |out_index, in_index| {
        for d in 0..out_index.len() {
            in_index[d] = start[d] + out_index[d] * strides[d];
        }
        true
    })
}

/// ConcatInDim: the operands one after another along `dimension`:
/// element `i` of operand k lands at `i + (sizes of operands before k)`.
pub fn concat_in_dim(operands: &[&ArrayLiteral], dimension: i64, out: &ArrayShape) -> ArrayLiteral {
    fn place<T: Stored>(operands: &[&ArrayLiteral], d: usize, out: &ArrayShape) -> Data {
        let mut result = vec![T::default(); out.element_count()];
        let mut start = 0;
        for x in operands {
            let values = T::slice(&x.data).unwrap_or(&[]);
            for (position, mut index) in x.shape.indices().enumerate() {
                if crate::watch::tick(1) {
                    break;
                }
                index[d] += start;
                result[out.linear(&index)] = values[position];
            }
            start += x.dims()[d];
        }
        T::wrap(result)
    }
    let d = dimension as usize;
    let data = crate::with_type!(out.element_type, T => place::<T>(operands, d, out));
    ArrayLiteral::with_shape(out.clone(), data)
}

/// Pad: interior padding first (i-th element of a dimension lands at
/// i * (interior + 1)), then edge padding (shift by the low amount; a
/// negative amount cuts). Output positions no element lands on hold the
/// padding value.
pub fn pad(x: &ArrayLiteral, padding_value: &ArrayLiteral, config: &[PadDim], out: &ArrayShape) -> ArrayLiteral {
    x.remap(out, Some(padding_value), |out_index, in_index| {
        for (d, p) in config.iter().enumerate() {
            // i128: padding attributes may be any i64.
            let pos = out_index[d] as i128 - p.edge_padding_low as i128;
            let step = p.interior_padding as i128 + 1;
            if pos < 0 || pos % step != 0 || pos / step >= x.dims()[d] as i128 {
                return false;
            }
            in_index[d] = (pos / step) as i64;
        }
        true
    })
}

/// Iota: the index along `iota_dimension`, converted to the element type
/// as ConvertElementType would (the document's definition for floats).
pub fn iota(out: &ArrayShape, iota_dimension: i64) -> ArrayLiteral {
    let d = iota_dimension as usize;
    let count = out.element_count();
    let mut counts: Vec<i64> = Vec::with_capacity(count);
    let mut index = vec![0i64; out.rank()];
    for _ in 0..count {
        if crate::watch::tick(1) {
            counts.resize(count, 0);
            break;
        }
        counts.push(index[d]);
        crate::types::index::advance(&mut index, &out.dims);
    }
    let data = convert::convert(&Data::S64(counts), out.element_type);
    ArrayLiteral::with_shape(out.clone(), data)
}

/// GetTupleElement: element `index` of the tuple.
pub fn get_tuple_element(t: &Literal, index: i64) -> Result<Literal, RunError> {
    t.as_tuple().and_then(|elems| elems.get(index as usize)).cloned().ok_or_else(|| internal("tuple index"))
}
