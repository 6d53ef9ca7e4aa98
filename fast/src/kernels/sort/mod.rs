//! Sort and TopK in the fast engine. One operand along its last dimension
//! under a strict `Lt`/`Gt` order is sorted in place of a copy (no
//! permutation, so little more memory than the result). Otherwise a sort
//! computes, per slice, the permutation of positions, then moves every
//! operand through it in one parallel pass. The permutation comes from:
//! - a key sort (parallel, stable by position) when the comparator is
//!   `Lt`/`Gt` of one operand's two parameters and that is a strict weak
//!   order on the data (integers, pred, total-order floats, IEEE floats
//!   without NaN): the stable order is then the only one the reference's
//!   merge sort can give;
//! - the reference's merge sort with native comparisons for other
//!   recognised comparators (`Le`, `Ne`, `Lt` on NaNs, ...), so that even
//!   orders that are not strict weak orders give the same permutation;
//! - the same merge sort calling the comparator through [`ScalarFn`]
//!   otherwise (multi-key comparators and the like).

mod keys;
mod merge;

use rayon::prelude::*;
use xlaref_reference::ir::{ComputationId, Direction, Op};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::Shape;
use xlaref_reference::{with_data, RunError};

use crate::applied::ScalarFn;
use crate::exec::Executor;
use crate::internal;
use crate::par;
use keys::{ascending_keys, float_values, has_nan, holds, key_sort, sort_values};
use merge::merge_sort;

type R<T> = Result<T, RunError>;

pub fn eval(exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let arrays = operands.iter().map(|l| l.as_array().ok_or_else(|| internal("expected an array"))).collect::<R<Vec<_>>>()?;
    match op {
        Op::Sort { comparator, dimension, is_stable: _ } => sort(exec, *comparator, *dimension, &arrays),
        Op::TopK { k, largest } => top_k(arrays.first().ok_or_else(|| internal("TopK without operand"))?, *k, *largest, shape),
        _ => Err(internal("not a sort op")),
    }
}

/// The slices of a sort: `count` slices of `n` elements `stride` apart;
/// slice `s` starts at `(s / stride) * n * stride + s % stride`.
#[derive(Clone, Copy)]
struct Slices {
    count: usize,
    n: usize,
    stride: usize,
}

impl Slices {
    #[inline(always)]
    fn base(&self, s: usize) -> usize {
        (s / self.stride) * self.n * self.stride + s % self.stride
    }
}

/// Sort — document §Sort, with the reference's stable order (see the
/// module comment for how each comparator is run).
fn sort(exec: &mut Executor, comparator: ComputationId, dimension: Option<i64>, operands: &[&ArrayLiteral]) -> R<Literal> {
    let first = operands.first().ok_or_else(|| internal("Sort without operands"))?;
    let dims = first.dims();
    let rank = dims.len() as i64;
    let dim = match dimension.unwrap_or(-1) {
        d if d < 0 => d + rank,
        d => d,
    };
    let dim = usize::try_from(dim).ok().filter(|&d| d < dims.len()).ok_or_else(|| internal("Sort dimension out of range"))?;
    let total = first.element_count();
    if operands.iter().any(|o| o.element_count() != total) {
        return Err(internal("Sort operands differ in size"));
    }
    if total == 0 {
        return Ok(pack(operands.iter().map(|&o| o.clone()).collect()));
    }
    let n = dims[dim] as usize;
    let stride: usize = dims[dim + 1..].iter().map(|&d| d as usize).product();
    let slices = Slices { count: total / n, n, stride };

    let native = keys::recognize(exec, comparator).and_then(|c| operands.get(c.operand).map(|o| (c, *o)));
    if let (Some((c, only)), 1, 1) = (native, operands.len(), stride) {
        // One operand under a strict order: sort its values, no permutation.
        let strict = matches!(c.direction, Direction::Lt | Direction::Gt);
        if strict && (c.total || !has_nan(&only.data)) {
            if let Some(sorted) = sort_values(&only.data, !c.total, c.direction == Direction::Gt, n) {
                return Ok(ArrayLiteral::with_shape(only.shape.clone(), sorted).into());
            }
        }
    }
    let mut perm = vec![0usize; total];
    let done = match native {
        Some((c, key_operand)) => native_sort(c.direction, c.total, &key_operand.data, slices, &mut perm),
        None => false,
    };
    if !done {
        generic_sort(exec, comparator, operands, slices, &mut perm)?;
    }
    let outputs = operands
        .iter()
        .map(|o| {
            let data = with_data!(&o.data, v => Stored::wrap(permute(v, &perm, slices)));
            ArrayLiteral::with_shape(o.shape.clone(), data)
        })
        .collect();
    Ok(pack(outputs))
}

/// Runs `f(base, positions)` for every slice, in parallel.
fn each_slice(slices: Slices, perm: &mut [usize], f: impl Fn(usize, &mut [usize]) + Sync) {
    if slices.count == 1 {
        f(0, perm);
    } else if slices.count * slices.n < par::PARALLEL_THRESHOLD {
        perm.chunks_mut(slices.n).enumerate().for_each(|(s, p)| f(slices.base(s), p));
    } else {
        perm.par_chunks_mut(slices.n).enumerate().for_each(|(s, p)| f(slices.base(s), p));
    }
}

/// The permutation of a recognised comparator `direction` on `data`;
/// false for complex keys (left to the generic path).
fn native_sort(direction: Direction, total: bool, data: &Data, slices: Slices, perm: &mut [usize]) -> bool {
    let Slices { n, stride, .. } = slices;
    let strict = matches!(direction, Direction::Lt | Direction::Gt);
    let descending = direction == Direction::Gt;
    if !total {
        if let Some((values, nan)) = float_values(data) {
            if !strict || nan {
                // IEEE comparisons that are not a strict weak order: the merge sort.
                each_slice(slices, perm, |base, p| {
                    let mut order: Vec<usize> = (0..n).collect();
                    let _ = merge_sort::<()>(&mut order, &mut Vec::new(), |i, j| {
                        Ok(holds(direction, values[base + i * stride], values[base + j * stride]))
                    });
                    p.copy_from_slice(&order);
                });
                return true;
            }
        }
    }
    // Integers, pred, total-order floats, or NaN-free floats (zeros merged).
    let Some((keys, width)) = ascending_keys(data, !total) else { return false };
    if strict {
        each_slice(slices, perm, |base, p| key_sort(|i| keys[base + i * stride], n, width, descending, p));
    } else {
        each_slice(slices, perm, |base, p| {
            let mut order: Vec<usize> = (0..n).collect();
            let _ = merge_sort::<()>(&mut order, &mut Vec::new(), |i, j| {
                Ok(holds(direction, keys[base + i * stride], keys[base + j * stride]))
            });
            p.copy_from_slice(&order);
        });
    }
    true
}

/// The permutation through the comparator itself, slice by slice.
fn generic_sort(exec: &mut Executor, comparator: ComputationId, operands: &[&ArrayLiteral], slices: Slices, perm: &mut [usize]) -> R<()> {
    let Slices { n, stride, .. } = slices;
    let cmp = ScalarFn::new(comparator);
    let mut args: Vec<Scalar> = operands.iter().flat_map(|o| [o.data.get(0); 2]).collect();
    let mut scratch = Vec::new();
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut buffer: Vec<usize> = Vec::with_capacity(n);
    for (s, p) in perm.chunks_mut(n).enumerate() {
        let base = slices.base(s);
        order.clear();
        order.extend(0..n);
        merge_sort(&mut order, &mut buffer, |i, j| {
            if xlaref_reference::watch::tick(8) {
                xlaref_reference::watch::passed()?;
            }
            for (k, o) in operands.iter().enumerate() {
                args[2 * k] = o.data.get(base + i * stride);
                args[2 * k + 1] = o.data.get(base + j * stride);
            }
            cmp.call_pred(exec, &args, &mut scratch)
        })?;
        p.copy_from_slice(&order);
    }
    Ok(())
}

/// Moves an operand through the permutation: position `p` of slice `s`
/// takes the slice's element `perm[s * n + p]`.
fn permute<T: Copy + Send + Sync>(src: &[T], perm: &[usize], slices: Slices) -> Vec<T> {
    let Slices { n, stride, .. } = slices;
    let block = n * stride;
    par::build(src.len(), |start, chunk| {
        if stride == 1 {
            for (k, o) in chunk.iter_mut().enumerate() {
                let e = start + k;
                o.write(src[e - e % n + perm[e]]);
            }
        } else {
            for (k, o) in chunk.iter_mut().enumerate() {
                let e = start + k;
                let (outer, rem) = (e / block, e % block);
                let (p, i) = (rem / stride, rem % stride);
                o.write(src[outer * block + perm[(outer * stride + i) * n + p] * stride + i]);
            }
        }
    })
}

/// One operand: its sorted array; several: the tuple of them.
fn pack(mut outputs: Vec<ArrayLiteral>) -> Literal {
    if outputs.len() == 1 {
        outputs.remove(0).into()
    } else {
        Literal::Tuple(outputs.into_iter().map(Literal::Array).collect())
    }
}

/// TopK — document §TopK: along the last dimension, the `k` largest (or
/// smallest) elements by the total order, equal elements lower index
/// first, and their s32 indices.
fn top_k(x: &ArrayLiteral, k: i64, largest: bool, shape: &Shape) -> R<Literal> {
    let (keys, width) = ascending_keys(&x.data, false).ok_or_else(|| internal("TopK on an unordered element type"))?;
    let row = x.dims().last().copied().ok_or_else(|| internal("TopK on a scalar"))? as usize;
    let k = usize::try_from(k).ok().filter(|&k| k <= row).ok_or_else(|| internal("TopK k out of range"))?;
    if row > i32::MAX as usize + 1 {
        return Err(internal("TopK index does not fit s32"));
    }
    let rows = x.element_count().checked_div(row).unwrap_or(0);
    let mut positions = vec![0usize; rows * k];
    if k > 0 {
        let fill = |r: usize, p: &mut [usize]| {
            let base = r * row;
            key_sort(|i| keys[base + i], row, width, largest, p);
        };
        if rows * row < par::PARALLEL_THRESHOLD || rows == 1 {
            positions.chunks_mut(k).enumerate().for_each(|(r, p)| fill(r, p));
        } else {
            positions.par_chunks_mut(k).enumerate().for_each(|(r, p)| fill(r, p));
        }
    }
    let indices: Vec<i32> = positions.iter().map(|&p| p as i32).collect();
    for (r, chunk) in positions.chunks_mut(k.max(1)).enumerate() {
        chunk.iter_mut().for_each(|p| *p += r * row);
    }
    let tuple = shape.as_tuple().ok_or_else(|| internal("TopK result is not a tuple"))?;
    let (Some(values_shape), Some(indices_shape)) = (tuple.first().and_then(Shape::as_array), tuple.get(1).and_then(Shape::as_array))
    else {
        return Err(internal("TopK result is not a pair of arrays"));
    };
    let values = ArrayLiteral::with_shape(values_shape.clone(), x.data.pick(&positions));
    let indices = ArrayLiteral::with_shape(indices_shape.clone(), Data::S32(indices));
    Ok(Literal::Tuple(vec![values.into(), indices.into()]))
}
