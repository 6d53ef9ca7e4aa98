//! Gather in two passes: first the operand offset where each batch index
//! `G`'s (clamped) slice starts, then the output as rows of a strided copy
//! whose output dimensions either walk a slice (offset dimensions: an
//! operand stride, contiguous rows become slice copies) or walk batches (a
//! step through the start offsets).

use std::mem::MaybeUninit;

use xlaref_reference::ir::GatherDims;
use xlaref_reference::literal::{ArrayLiteral, Stored};
use xlaref_reference::types::ArrayShape;
use xlaref_reference::with_data;

use super::{batch_position, internal, with_index, IndexElem, IndexLayout, R};
use crate::kernels::shape_ops::strides_of;
use crate::par;

/// One output dimension: its size and what a step along it moves.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Step {
    /// To the next batch index, `g += stride`.
    Batch(usize),
    /// Within the slice, `operand offset += stride`.
    Offset(usize),
}

/// Gather (document §Gather, semantics-decisions: starts clamped so the
/// slice lies inside the operand; batching dimensions supported).
pub fn gather(operand: &ArrayLiteral, indices: &ArrayLiteral, d: &GatherDims, out: &ArrayShape) -> R<ArrayLiteral> {
    let rank = operand.rank();
    let odims = operand.dims();
    if d.slice_sizes.len() != rank {
        return Err(internal("gather slice sizes"));
    }
    let n = out.element_count();
    if n == 0 {
        return Ok(ArrayLiteral::zeros(&out.with_element_type(operand.element_type())));
    }
    let ostrides: Vec<usize> = strides_of(odims).iter().map(|&s| s as usize).collect();
    let layout = IndexLayout::new(indices, d.index_vector_dim)?;
    let start_index_map: Vec<usize> = d.start_index_map.iter().map(|&i| i as usize).collect();
    if start_index_map.len() != layout.vector_size || start_index_map.iter().any(|&m| m >= rank) {
        return Err(internal("gather start_index_map"));
    }
    let max_start: Vec<i64> = odims.iter().zip(&d.slice_sizes).map(|(&dim, &size)| (dim - size).max(0)).collect();
    let batching: Vec<(usize, usize)> = d
        .operand_batching_dims
        .iter()
        .zip(&d.start_indices_batching_dims)
        .map(|(&o, &i)| (o as usize, batch_position(i, d.index_vector_dim)))
        .collect();
    if batching.iter().any(|&(o, p)| o >= rank || p >= layout.batch_dims.len()) {
        return Err(internal("gather batching dimensions"));
    }

    let count = layout.count();
    if d.slice_sizes.iter().all(|&s| s == 1) && layout.inner == 1 && batching.is_empty() && count == n {
        let data = with_data!(&operand.data, src => Stored::wrap(with_index!(&indices.data, v => {
            gather_elements(src, v, &layout, &start_index_map, &max_start, &ostrides)?
        })));
        return Ok(ArrayLiteral::with_shape(out.with_element_type(operand.element_type()), data));
    }

    // Pass 1: the operand offset of each batch's slice start.
    let bases: Vec<usize> = with_index!(&indices.data, v => {
        slice_starts(v, &layout, &start_index_map, &max_start, &ostrides, &batching, count)?
    });

    // Pass 2: the output dimensions as steps, merged where they can be.
    let is_collapsed = |i: usize| d.collapsed_slice_dims.contains(&(i as i64)) || d.operand_batching_dims.contains(&(i as i64));
    let remapped: Vec<usize> = (0..rank).filter(|&i| !is_collapsed(i)).collect();
    if remapped.len() != d.offset_dims.len() {
        return Err(internal("gather offset dims"));
    }
    let mut axes: Vec<(usize, Step)> = Vec::new();
    let (mut next_offset, mut next_batch) = (0, 0);
    for (o, &size) in out.dims.iter().enumerate() {
        let step = if d.offset_dims.contains(&(o as i64)) {
            next_offset += 1;
            Step::Offset(ostrides[remapped[next_offset - 1]])
        } else {
            next_batch += 1;
            Step::Batch(*layout.batch_strides.get(next_batch - 1).ok_or_else(|| internal("gather batch dimensions"))?)
        };
        push_axis(&mut axes, size as usize, step);
    }
    let data = with_data!(&operand.data, src => Stored::wrap(copy_rows(src, &bases, &axes, n)?));
    Ok(ArrayLiteral::with_shape(out.with_element_type(operand.element_type()), data))
}

/// Appends an output dimension, dropping size 1 and merging it into the
/// previous one when both step the same way contiguously.
fn push_axis(axes: &mut Vec<(usize, Step)>, size: usize, step: Step) {
    if size == 1 {
        return;
    }
    if let Some((prev_size, prev)) = axes.last_mut() {
        let merged = match (*prev, step) {
            (Step::Batch(a), Step::Batch(b)) if a == b * size => Some(Step::Batch(b)),
            (Step::Offset(a), Step::Offset(b)) if a == b * size => Some(Step::Offset(b)),
            _ => None,
        };
        if let Some(m) = merged {
            *prev_size *= size;
            *prev = m;
            return;
        }
    }
    axes.push((size, step));
}

/// Gather of one-element slices with the index vector last in `G`: output
/// element `g` is the operand element at batch `g`'s clamped start, read in
/// one pass (no table of slice starts).
fn gather_elements<T: Copy + Send + Sync, I: IndexElem>(
    src: &[T],
    v: &[I],
    layout: &IndexLayout,
    start_index_map: &[usize],
    max_start: &[i64],
    ostrides: &[usize],
) -> R<Vec<T>> {
    let size = layout.vector_size;
    let count = layout.count();
    if count.checked_mul(size).is_none_or(|need| need > v.len()) || src.is_empty() {
        return Err(internal("gather index vectors out of range"));
    }
    let clamp_and_stride: Vec<(i64, usize)> = start_index_map.iter().map(|&m| (max_start[m], ostrides[m])).collect();
    if clamp_and_stride.iter().map(|&(max, stride)| max.max(0) as usize * stride).sum::<usize>() >= src.len() {
        return Err(internal("gather slice out of range"));
    }
    if let [(max, stride)] = clamp_and_stride[..] {
        // One start index per element (a 1-D table lookup): no inner loop,
        // so the loads of consecutive elements overlap.
        // SAFETY: each offset is at most `max.max(0) * stride`, which the
        // check above bounds by `src.len()`.
        return Ok(unsafe {
            if stride == 1 {
                table_lookup(src, v, count, move |s: &I| s.get().min(max).max(0) as usize)
            } else {
                table_lookup(src, v, count, move |s: &I| s.get().min(max).max(0) as usize * stride)
            }
        });
    }
    Ok(par::build(count, |first, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            let at = (first + k) * size;
            let mut offset = 0usize;
            for (s, &(max, stride)) in v[at..at + size].iter().zip(&clamp_and_stride) {
                offset += s.get().min(max).max(0) as usize * stride;
            }
            o.write(src[offset]);
        }
    }))
}

/// `out[g] = src[at(v[g])]` for the first `count` elements of `v`.
///
/// # Safety
/// `at(s) < src.len()` for every `s` in `v[..count]`: the loads are not
/// bounds-checked, so that they are issued back to back.
unsafe fn table_lookup<T: Copy + Send + Sync, I: IndexElem>(
    src: &[T],
    v: &[I],
    count: usize,
    at: impl Fn(&I) -> usize + Copy + Send + Sync,
) -> Vec<T> {
    par::build(count, |first, chunk| {
        let v = &v[first..first + chunk.len()];
        par::simd(
            #[inline(always)]
            move || {
                // Eight loads issued together, then eight stores: the random
                // loads overlap instead of each waiting behind a store.
                let mut outs = chunk.chunks_exact_mut(8);
                let mut ins = v.chunks_exact(8);
                for (o, s) in (&mut outs).zip(&mut ins) {
                    // SAFETY: the caller's contract.
                    let loaded: [T; 8] = std::array::from_fn(|k| unsafe { *src.get_unchecked(at(&s[k])) });
                    for (o, x) in o.iter_mut().zip(loaded) {
                        o.write(x);
                    }
                }
                for (o, s) in outs.into_remainder().iter_mut().zip(ins.remainder()) {
                    o.write(src[at(s)]);
                }
            },
        )
    })
}

/// The operand offset where the slice of each batch index starts: `S_in`
/// through `start_index_map`, each coordinate clamped to
/// `[0, dim - slice_size]`, batching coordinates taken from `G`.
fn slice_starts<I: IndexElem>(
    v: &[I],
    layout: &IndexLayout,
    start_index_map: &[usize],
    max_start: &[i64],
    ostrides: &[usize],
    batching: &[(usize, usize)],
    count: usize,
) -> R<Vec<usize>> {
    // Every vector element read lies inside `v`.
    let needed =
        if count == 0 || layout.vector_size == 0 { 0 } else { layout.start(count - 1) + (layout.vector_size - 1) * layout.inner + 1 };
    if needed > v.len() {
        return Err(internal("index vector out of range"));
    }
    let inner = layout.inner;
    if inner == 1 && batching.is_empty() {
        // The index vector is G's last dimension (the common layout): the
        // vector of batch g starts at g·vector_size, no division per index.
        let size = layout.vector_size;
        let clamp_and_stride: Vec<(i64, usize)> = start_index_map.iter().map(|&m| (max_start[m], ostrides[m])).collect();
        return Ok(par::build(count, |first, chunk| {
            for (k, o) in chunk.iter_mut().enumerate() {
                let at = (first + k) * size;
                let mut offset = 0usize;
                for (s, &(max, stride)) in v[at..at + size].iter().zip(&clamp_and_stride) {
                    offset += s.get().min(max).max(0) as usize * stride;
                }
                o.write(offset);
            }
        }));
    }
    Ok(par::build(count, |first, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            let g = first + k;
            let at = layout.start(g);
            let mut offset = 0usize;
            for (j, &m) in start_index_map.iter().enumerate() {
                let s = v[at + j * inner].get();
                offset += s.min(max_start[m]).max(0) as usize * ostrides[m];
            }
            for &(od, p) in batching {
                offset += layout.coordinate(g, p) * ostrides[od];
            }
            o.write(offset);
        }
    }))
}

/// Fills the output row by row (rows = the last merged dimension).
fn copy_rows<T: Copy + Send + Sync>(src: &[T], bases: &[usize], axes: &[(usize, Step)], n: usize) -> R<Vec<T>> {
    let (inner, last) = axes.last().copied().unwrap_or((1, Step::Offset(0)));
    let outer = &axes[..axes.len().saturating_sub(1)];
    // The largest batch index and slice offset any element reaches must be in range.
    let (mut max_g, mut max_o) = (0usize, 0usize);
    for &(size, step) in axes {
        match step {
            Step::Batch(s) => max_g += (size - 1) * s,
            Step::Offset(s) => max_o += (size - 1) * s,
        }
    }
    let top = bases.get(..=max_g).ok_or_else(|| internal("gather batch out of range"))?.iter().max().copied().unwrap_or(0);
    if top + max_o >= src.len() {
        return Err(internal("gather slice out of range"));
    }
    // The batch index and slice offset of the first element of row `row`.
    let row_start = |mut row: usize| -> (usize, usize) {
        let (mut g, mut o) = (0, 0);
        for &(size, step) in outer.iter().rev() {
            let c = row % size;
            row /= size;
            match step {
                Step::Batch(s) => g += c * s,
                Step::Offset(s) => o += c * s,
            }
        }
        (g, o)
    };
    // Writes elements `k0..k0 + out.len()` of row `row`.
    let fill_row_part = |row: usize, k0: usize, out: &mut [MaybeUninit<T>]| {
        let (g, o) = row_start(row);
        par::simd(
            #[inline(always)]
            || match last {
                Step::Offset(1) => {
                    let (s, len) = (bases[g] + o + k0, out.len());
                    for (slot, &x) in out.iter_mut().zip(&src[s..s + len]) {
                        slot.write(x);
                    }
                }
                Step::Offset(step) => {
                    let s = bases[g] + o;
                    for (k, slot) in out.iter_mut().enumerate() {
                        slot.write(src[s + (k0 + k) * step]);
                    }
                }
                Step::Batch(1) => {
                    for (slot, &b) in out.iter_mut().zip(&bases[g + k0..]) {
                        slot.write(src[b + o]);
                    }
                }
                Step::Batch(step) => {
                    for (k, slot) in out.iter_mut().enumerate() {
                        slot.write(src[bases[g + (k0 + k) * step] + o]);
                    }
                }
            },
        );
    };
    // Elements `start..start + chunk.len()`, which may begin and end
    // inside rows (one long row is split across tasks too).
    let fill_range = |start: usize, chunk: &mut [MaybeUninit<T>]| {
        let mut pos = start;
        let mut rest = chunk;
        while !rest.is_empty() {
            let (row, k0) = (pos / inner, pos % inner);
            let len = (inner - k0).min(rest.len());
            let (part, tail) = rest.split_at_mut(len);
            fill_row_part(row, k0, part);
            pos += len;
            rest = tail;
        }
    };
    // `fill_range` writes every element of its chunk, as `build` needs;
    // below one chunk's size the copy stays on the calling thread.
    Ok(par::build_in_chunks(n, par::PARALLEL_THRESHOLD, fill_range))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unchecked loads at the sizes around the eight-load groups and
    /// the parallel split, with indices clamped from both sides.
    #[test]
    fn table_lookup_boundary_sizes() {
        let src: Vec<u32> = (0..1000).collect();
        for n in [0, 1, 7, 8, 9, 15, 16, 17, par::PARALLEL_THRESHOLD + 3, (1 << 20) + 5] {
            let v: Vec<i32> = (0..n as i32).map(|k| k.wrapping_mul(7919) % 1400 - 200).collect();
            for stride in [1usize, 3] {
                let max = (999 / stride) as i64;
                let at = move |s: &i32| (*s as i64).min(max).max(0) as usize * stride;
                // SAFETY: `at` clamps to `max * stride <= 999 < src.len()`.
                let got = unsafe { table_lookup(&src, &v, n, at) };
                let want: Vec<u32> = v.iter().map(|s| src[at(s)]).collect();
                assert_eq!(got, want, "n = {n}, stride = {stride}");
            }
        }
    }
}
