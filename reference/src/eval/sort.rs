//! Reference evaluation of Sort and TopK (rules in `verify/sort.rs`).

use super::applied::ScalarComputation;
use super::{array, arrays, internal, Interpreter};
use crate::error::RunError;
use crate::ir::{ComputationId, Op};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::numerics::float::total_order_key;
use crate::numerics::int::Int;
use crate::scalar::Scalar;
use crate::types::{ArrayShape, Shape};

pub fn eval(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    match op {
        Op::Sort { comparator, dimension, is_stable: _ } => sort(it, *comparator, *dimension, &arrays(operands)?),
        Op::TopK { k, largest } => top_k(array(operands.first().ok_or_else(|| internal("TopK without operand"))?)?, *k, *largest, shape),
        _ => Err(internal("not a sort op")),
    }
}

/// Sorts `perm` (positions along one slice) with a bottom-up merge sort:
/// stable, and it ends after `O(n log n)` calls of `less` whatever `less`
/// answers (an inconsistent comparator gives some permutation, never a
/// hang). An element of the right run goes first only when
/// `less(right, left)` holds, so elements the comparator calls equal keep
/// their order.
fn merge_sort(
    perm: &mut Vec<usize>,
    scratch: &mut Vec<usize>,
    mut less: impl FnMut(usize, usize) -> Result<bool, RunError>,
) -> Result<(), RunError> {
    let n = perm.len();
    scratch.clear();
    scratch.resize(n, 0);
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j) = (lo, mid);
            for slot in scratch[lo..hi].iter_mut() {
                if crate::watch::tick(1) {
                    crate::watch::passed()?;
                }
                let take_right = if i >= mid {
                    true
                } else if j >= hi {
                    false
                } else {
                    less(perm[j], perm[i])?
                };
                if take_right {
                    *slot = perm[j];
                    j += 1;
                } else {
                    *slot = perm[i];
                    i += 1;
                }
            }
            lo = hi;
        }
        std::mem::swap(perm, scratch);
        width *= 2;
    }
    Ok(())
}

/// Sort — document §Sort. Every 1-D slice along `dimension` is sorted, all
/// operands together: the comparator receives `2 * n` scalars, parameter
/// `2k` from operand `k` at one position and `2k + 1` at the other, and
/// `true` means the first position goes before the second.
///
/// The reference sorts stably whether or not `is_stable` is set: an
/// unstable sort may order equal elements in any way (implementation
/// defined), and the stable order is one of those.
pub fn sort(
    it: &mut Interpreter,
    comparator: ComputationId,
    dimension: Option<i64>,
    operands: &[&ArrayLiteral],
) -> Result<Literal, RunError> {
    let first = operands.first().ok_or_else(|| internal("Sort without operands"))?;
    let shape = &first.shape;
    let rank = shape.rank() as i64;
    let dim = match dimension.unwrap_or(-1) {
        d if d < 0 => d + rank,
        d => d,
    };
    let dim = usize::try_from(dim).ok().filter(|&d| d < shape.rank()).ok_or_else(|| internal("Sort dimension out of range"))?;
    let n = shape.dims[dim] as usize;
    let stride = shape.strides()[dim];
    let cmp = ScalarComputation::new(comparator);

    let mut outputs: Vec<ArrayLiteral> = operands.iter().map(|o| ArrayLiteral::zeros(&o.shape)).collect();
    if operands.iter().any(|o| o.element_count() != shape.element_count()) {
        return Err(internal("Sort operands differ in size"));
    }
    if shape.element_count() == 0 {
        return Ok(pack(outputs));
    }
    // The comparator's arguments, overwritten before every call.
    let mut args: Vec<Scalar> = operands.iter().flat_map(|o| [o.data.get(0); 2]).collect();
    let mut scratch_out = Vec::new();
    let mut perm: Vec<usize> = Vec::with_capacity(n);
    let mut merge_buffer: Vec<usize> = Vec::with_capacity(n);

    // One slice per index of the other dimensions: its start is the linear
    // position with index 0 along `dim`.
    let mut others = shape.dims.clone();
    others[dim] = 1;
    for start_index in ArrayShape::new(shape.element_type, others).indices() {
        let base = shape.linear(&start_index);
        perm.clear();
        perm.extend(0..n);
        merge_sort(&mut perm, &mut merge_buffer, |i, j| {
            for (k, o) in operands.iter().enumerate() {
                args[2 * k] = o.data.get(base + i * stride);
                args[2 * k + 1] = o.data.get(base + j * stride);
            }
            cmp.call_pred(it, &args, &mut scratch_out)
        })?;
        for (o, out) in operands.iter().zip(outputs.iter_mut()) {
            for (p, &source) in perm.iter().enumerate() {
                if !out.data.set(base + p * stride, o.data.get(base + source * stride)) {
                    return Err(internal("Sort output type differs from its operand"));
                }
            }
        }
    }
    Ok(pack(outputs))
}

/// One operand: its sorted array; several: the tuple of them.
fn pack(mut outputs: Vec<ArrayLiteral>) -> Literal {
    if outputs.len() == 1 {
        outputs.remove(0).into()
    } else {
        Literal::Tuple(outputs.into_iter().map(Literal::Array).collect())
    }
}

/// A key whose integer order is the element order TopK uses: numeric for
/// integers, false < true for pred, the document's total order for floats
/// (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
fn order_keys(data: &Data) -> Option<Vec<i128>> {
    fn floats<T: crate::numerics::float::Float>(v: &[T]) -> Vec<i128> {
        v.iter().map(|&x| total_order_key(x) as i128).collect()
    }
    fn ints<T: Int>(v: &[T]) -> Vec<i128> {
        v.iter().map(|&x| x.to_i128()).collect()
    }
    Some(crate::by_class!(data, v => {
        pred: v.iter().map(|&b| i128::from(b)).collect(),
        int: ints(v),
        float: floats(v),
        complex: return None,
    }))
}

/// TopK — document §TopK: along the last dimension, the `k` largest (or
/// smallest) elements in order and their indices; equal elements come
/// lower index first. Floats are ordered by the total order, so `+NaN` is
/// the largest and `-NaN` the smallest value (as XLA CPU).
pub fn top_k(operand: &ArrayLiteral, k: i64, largest: bool, shape: &Shape) -> Result<Literal, RunError> {
    let keys = order_keys(&operand.data).ok_or_else(|| internal("TopK on an unordered element type"))?;
    let row = operand.dims().last().copied().ok_or_else(|| internal("TopK on a scalar"))? as usize;
    let k = usize::try_from(k).map_err(|_| internal("negative k"))?;
    if k > row {
        return Err(internal("k exceeds the last dimension"));
    }
    let rows = operand.element_count().checked_div(row).unwrap_or(0);
    let mut positions: Vec<usize> = Vec::with_capacity(rows * k);
    let mut indices: Vec<i32> = Vec::with_capacity(rows * k);
    let mut order: Vec<usize> = Vec::with_capacity(row);
    for r in 0..rows {
        let base = r * row;
        order.clear();
        order.extend(0..row);
        // A stable sort: equal keys keep increasing index order.
        if largest {
            order.sort_by(|&i, &j| keys[base + j].cmp(&keys[base + i]));
        } else {
            order.sort_by(|&i, &j| keys[base + i].cmp(&keys[base + j]));
        }
        for &i in &order[..k] {
            positions.push(base + i);
            indices.push(i32::try_from(i).map_err(|_| internal("TopK index does not fit s32"))?);
        }
    }
    let tuple = shape.as_tuple().ok_or_else(|| internal("TopK result is not a tuple"))?;
    let (Some(values_shape), Some(indices_shape)) = (tuple.first().and_then(Shape::as_array), tuple.get(1).and_then(Shape::as_array))
    else {
        return Err(internal("TopK result is not a pair of arrays"));
    };
    let values = ArrayLiteral::with_shape(values_shape.clone(), operand.data.pick(&positions));
    let indices = ArrayLiteral::with_shape(indices_shape.clone(), Data::S32(indices));
    Ok(Literal::Tuple(vec![values.into(), indices.into()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(n: usize, mut less: impl FnMut(usize, usize) -> bool) -> Vec<usize> {
        let (mut perm, mut scratch) = ((0..n).collect::<Vec<_>>(), Vec::new());
        merge_sort(&mut perm, &mut scratch, |i, j| Ok(less(i, j))).unwrap();
        perm
    }

    #[test]
    fn stable_and_ordered() {
        let keys = [3, 1, 2, 1, 3, 0, 2];
        assert_eq!(sorted(keys.len(), |i, j| keys[i] < keys[j]), vec![5, 1, 3, 2, 6, 0, 4]);
    }

    #[test]
    fn inconsistent_comparators_terminate_with_a_permutation() {
        assert_eq!(sorted(7, |_, _| true), vec![6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(sorted(7, |_, _| false), (0..7).collect::<Vec<_>>());
        let mut state = 12345u64;
        let mut perm = sorted(1000, |_, _| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 63 == 1
        });
        perm.sort_unstable();
        assert_eq!(perm, (0..1000).collect::<Vec<_>>());
    }
}
