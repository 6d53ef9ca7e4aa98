//! Data movement: every op that only moves elements is a strided copy —
//! output element `i` (row-major) reads the input at
//! `base + Σ index[d] * stride[d]` — done by one parallel kernel whose inner
//! loop is a contiguous copy, a fill, or a constant-stride gather. Transpose
//! has its own kernel (`transpose.rs`).

use rayon::prelude::*;
use xlaref_reference::literal::{ArrayLiteral, Data, Stored};
use xlaref_reference::types::ArrayShape;
use xlaref_reference::with_data;

use crate::par;

/// A strided view of an input: where output index 0 reads, and how far one
/// step along each output dimension moves in the input (0 = broadcast,
/// negative = reversed).
pub struct View {
    pub base: isize,
    pub strides: Vec<isize>,
}

/// Row-major strides of `dims`.
pub fn strides_of(dims: &[i64]) -> Vec<isize> {
    let mut s = vec![1isize; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1] as isize;
    }
    s
}

/// Copies the view of `src` into a new array of `out_dims`.
pub fn gather_view<T: Copy + Send + Sync>(src: &[T], view: &View, out_dims: &[i64]) -> Vec<T> {
    let n: usize = out_dims.iter().map(|&d| d as usize).product();
    if n == 0 {
        return Vec::new();
    }
    let rank = out_dims.len();
    let inner = if rank == 0 { 1 } else { out_dims[rank - 1] as usize };
    let inner_stride = if rank == 0 { 0 } else { view.strides[rank - 1] };
    let outer_dims = if rank == 0 { &[][..] } else { &out_dims[..rank - 1] };
    // Input offset of the first element of outer row `row`.
    let row_base = |mut row: usize| -> isize {
        let mut offset = view.base;
        for d in (0..outer_dims.len()).rev() {
            let size = outer_dims[d] as usize;
            offset += (row % size) as isize * view.strides[d];
            row /= size;
        }
        offset
    };
    let rows_per_task = (par::PARALLEL_THRESHOLD / inner.max(1)).max(1);
    let fill_rows = |first_row: usize, chunk: &mut [std::mem::MaybeUninit<T>]| {
        for (r, out_row) in chunk.chunks_mut(inner).enumerate() {
            let start = row_base(first_row + r);
            par::simd(
                #[inline(always)]
                || match inner_stride {
                    1 => {
                        let s = start as usize;
                        let len = out_row.len();
                        for (o, &x) in out_row.iter_mut().zip(&src[s..s + len]) {
                            o.write(x);
                        }
                    }
                    0 => {
                        let x = src[start as usize];
                        out_row.iter_mut().for_each(|o| {
                            o.write(x);
                        });
                    }
                    step => {
                        for (k, o) in out_row.iter_mut().enumerate() {
                            o.write(src[(start + k as isize * step) as usize]);
                        }
                    }
                },
            );
        }
    };
    let mut out: Vec<T> = Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    if n < par::PARALLEL_THRESHOLD {
        fill_rows(0, spare);
    } else {
        spare.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(k, chunk)| fill_rows(k * rows_per_task, chunk));
    }
    // SAFETY: the rows of all chunks cover `0..n` and every element of
    // every row is written above.
    unsafe { out.set_len(n) };
    out
}

/// Applies a view to an array of any element type.
pub fn apply_view(x: &ArrayLiteral, view: &View, out: &ArrayShape) -> ArrayLiteral {
    let data = with_data!(&x.data, v => Stored::wrap(gather_view(v, view, &out.dims)));
    ArrayLiteral::with_shape(out.with_element_type(x.element_type()), data)
}

/// `x` stretched to `out_dims`: x's dimension i is output dimension
/// `mapping[i]`; size-1 dimensions of x repeat (stride 0).
pub fn broadcast(x: &ArrayLiteral, out: &ArrayShape, mapping: &[i64]) -> ArrayLiteral {
    let in_strides = strides_of(x.dims());
    let mut strides = vec![0isize; out.rank()];
    for (i, &m) in mapping.iter().enumerate() {
        if x.dims()[i] != 1 {
            strides[m as usize] = in_strides[i];
        }
    }
    apply_view(x, &View { base: 0, strides }, out)
}

/// Transpose: output dimension i walks input dimension `permutation[i]`.
/// A batch of matrix transposes (`transpose.rs`), except when the last
/// dimension stays last as rows too long for that: then row copies.
pub fn transpose(x: &ArrayLiteral, permutation: &[i64], out: &ArrayShape) -> ArrayLiteral {
    let (dims, merged) = merge_dimensions(x.dims(), permutation);
    if let Some(t) = super::transpose::permute(x, &dims, &merged, out) {
        return t;
    }
    let in_strides = strides_of(x.dims());
    let strides = permutation.iter().map(|&p| in_strides[p as usize]).collect();
    apply_view(x, &View { base: 0, strides }, out)
}

/// The same transpose on fewer dimensions: size-1 dimensions dropped, and
/// input dimensions that stay adjacent and in order merged into one (NCHW
/// -> NHWC is `[N, C, H·W] -> [N, H·W, C]`). Returns the merged input
/// dimensions and permutation.
pub(crate) fn merge_dimensions(dims: &[i64], permutation: &[i64]) -> (Vec<usize>, Vec<usize>) {
    // Each input dimension's position among those that are not 1.
    let mut position = vec![usize::MAX; dims.len()];
    let mut kept = 0;
    for (d, &size) in dims.iter().enumerate() {
        if size != 1 {
            position[d] = kept;
            kept += 1;
        }
    }
    // Runs of consecutive kept dimensions, in output order: (first, size).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut previous = usize::MAX;
    for &p in permutation {
        let (p, size) = (p as usize, dims[p as usize] as usize);
        if position[p] == usize::MAX {
            continue;
        }
        match groups.last_mut() {
            Some(group) if position[p] == previous.wrapping_add(1) => group.1 *= size,
            _ => groups.push((position[p], size)),
        }
        previous = position[p];
    }
    // Number the groups in input order.
    let mut by_input: Vec<usize> = (0..groups.len()).collect();
    by_input.sort_by_key(|&g| groups[g].0);
    let merged_dims = by_input.iter().map(|&g| groups[g].1).collect();
    let mut merged_permutation = vec![0; groups.len()];
    for (rank, &g) in by_input.iter().enumerate() {
        merged_permutation[g] = rank;
    }
    (merged_dims, merged_permutation)
}

/// Rev: reversed dimensions start at their last element and step back.
pub fn rev(x: &ArrayLiteral, dimensions: &[i64]) -> ArrayLiteral {
    let mut strides = strides_of(x.dims());
    let mut base = 0isize;
    for &d in dimensions {
        let d = d as usize;
        if x.dims()[d] > 0 {
            base += (x.dims()[d] - 1) as isize * strides[d];
        }
        strides[d] = -strides[d];
    }
    apply_view(x, &View { base, strides }, &x.shape)
}

/// Slice: start at `start`, step by `strides`.
pub fn slice(x: &ArrayLiteral, start: &[i64], steps: &[i64], out: &ArrayShape) -> ArrayLiteral {
    let in_strides = strides_of(x.dims());
    let base = start.iter().zip(&in_strides).map(|(&s, &st)| s as isize * st).sum();
    let strides = steps.iter().zip(&in_strides).map(|(&k, &st)| k as isize * st).collect();
    apply_view(x, &View { base, strides }, out)
}

/// ConcatInDim: each operand copied into its band of the output, as the
/// row-major blocks `outer x (size_k * inner)` they form.
pub fn concat(xs: &[&ArrayLiteral], dimension: usize, out: &ArrayShape) -> ArrayLiteral {
    let outer: usize = out.dims[..dimension].iter().map(|&d| d as usize).product();
    let inner: usize = out.dims[dimension + 1..].iter().map(|&d| d as usize).product();
    fn join<T: Stored>(first: &[T], xs: &[&ArrayLiteral], widths: &[usize], outer: usize) -> Vec<T> {
        let _ = first;
        let parts: Vec<&[T]> = xs.iter().map(|x| T::slice(&x.data).unwrap_or(&[])).collect();
        let total: usize = widths.iter().sum();
        let mut out = Vec::with_capacity(outer * total);
        for row in 0..outer {
            for (p, &w) in parts.iter().zip(widths) {
                out.extend_from_slice(&p[row * w..(row + 1) * w]);
            }
        }
        out
    }
    let widths: Vec<usize> = xs.iter().map(|x| x.dims()[dimension] as usize * inner).collect();
    let data = with_data!(&xs[0].data, first => Stored::wrap(join(first, xs, &widths, outer)));
    ArrayLiteral::with_shape(out.with_element_type(xs[0].element_type()), data)
}

/// Pad: the output filled with the padding value, then every input element
/// that survives the (possibly negative) edge padding written at
/// `low + i * (interior + 1)`.
pub fn pad(x: &ArrayLiteral, value: &ArrayLiteral, config: &[xlaref_reference::ir::PadDim], out: &ArrayShape) -> ArrayLiteral {
    fn fill<T: Copy + Default>(src: &[T], pad: T, in_dims: &[i64], config: &[xlaref_reference::ir::PadDim], out_dims: &[i64]) -> Vec<T> {
        let n: usize = out_dims.iter().map(|&d| d as usize).product();
        let mut out = vec![pad; n];
        if src.is_empty() || n == 0 {
            return out;
        }
        let out_strides = strides_of(out_dims);
        // For each dimension: the input indices that land inside the output.
        let ranges: Vec<(i64, i64)> = config
            .iter()
            .zip(in_dims)
            .zip(out_dims)
            .map(|((p, &size), &o)| {
                // i128: padding attributes may be any i64.
                let (low, step) = (p.edge_padding_low as i128, p.interior_padding as i128 + 1);
                let first = if low >= 0 { 0 } else { (-low + step - 1) / step };
                let last = ((o as i128 - 1 - low).div_euclid(step)).min(size as i128 - 1);
                (first.min(i64::MAX as i128) as i64, last.max(-1) as i64)
            })
            .collect();
        if ranges.iter().any(|&(f, l)| f > l) {
            return out;
        }
        let in_strides = strides_of(in_dims);
        let mut index: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        loop {
            let mut from = 0isize;
            let mut to = 0isize;
            for d in 0..index.len() {
                from += index[d] as isize * in_strides[d];
                let mut step = config[d].interior_padding as i128 + 1;
                if step > 1 && crate::planted::active(crate::planted::Bug::PadInteriorOffByOne) {
                    step -= 1;
                }
                let at = config[d].edge_padding_low as i128 + index[d] as i128 * step;
                to += at as isize * out_strides[d];
            }
            if let Some(slot) = usize::try_from(to).ok().and_then(|t| out.get_mut(t)) {
                *slot = src[from as usize];
            }
            let mut d = index.len();
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                index[d] += 1;
                if index[d] <= ranges[d].1 {
                    break;
                }
                index[d] = ranges[d].0;
            }
        }
    }
    let data = with_data!(&x.data, v => {
        let p = Stored::slice(&value.data).and_then(|p| p.first().copied()).unwrap_or_default();
        Stored::wrap(fill(v, p, x.dims(), config, &out.dims))
    });
    ArrayLiteral::with_shape(out.with_element_type(x.element_type()), data)
}

/// Iota: the index along `dimension`, in the element type.
pub fn iota(out: &ArrayShape, dimension: usize) -> ArrayLiteral {
    let strides = strides_of(&out.dims);
    let size = out.dims[dimension].max(1) as usize;
    let step = strides[dimension] as usize;
    let n = out.element_count();
    let counts: Vec<u64> = par::build(n, |start, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            o.write((((start + k) / step) % size) as u64);
        }
    });
    let data = crate::elem::convert::convert(&Data::U64(counts), out.element_type);
    ArrayLiteral::with_shape(out.clone(), data)
}

#[cfg(test)]
mod tests {
    use super::merge_dimensions;

    /// Input dimensions and permutation, and the merged ones expected.
    type Case = (&'static [i64], &'static [i64], &'static [usize], &'static [usize]);

    #[test]
    fn merged_dimensions_of_transposes() {
        let cases: [Case; 11] = [
            (&[3, 5], &[1, 0], &[3, 5], &[1, 0]),
            (&[2, 3, 5], &[0, 2, 1], &[2, 3, 5], &[0, 2, 1]),
            // NCHW -> NHWC and back.
            (&[2, 3, 4, 5], &[0, 2, 3, 1], &[2, 3, 20], &[0, 2, 1]),
            (&[2, 4, 5, 3], &[0, 3, 1, 2], &[2, 20, 3], &[0, 2, 1]),
            // [A, B, C] -> [B, C, A]: one matrix of A x (B·C).
            (&[2, 3, 4], &[1, 2, 0], &[2, 12], &[1, 0]),
            // Size-1 dimensions do not count, wherever they go.
            (&[1, 3, 1, 5], &[3, 2, 0, 1], &[3, 5], &[1, 0]),
            (&[3, 1, 5], &[1, 0, 2], &[15], &[0]),
            // The identity; a permutation of the major dimensions; a full
            // reversal: nothing to merge.
            (&[3, 5], &[0, 1], &[15], &[0]),
            (&[2, 3, 5], &[1, 0, 2], &[2, 3, 5], &[1, 0, 2]),
            (&[2, 3, 5], &[2, 1, 0], &[2, 3, 5], &[2, 1, 0]),
            (&[], &[], &[], &[]),
        ];
        for (dims, permutation, want_dims, want_permutation) in cases {
            let (d, p) = merge_dimensions(dims, permutation);
            assert_eq!((&d[..], &p[..]), (want_dims, want_permutation), "{dims:?} by {permutation:?}");
        }
    }
}
