//! Fast Dot and DotGeneral: every batch is one GEMM `C[m][n] = Σ_k
//! A[m][k]·B[k][n]`, where m runs over the lhs free dimensions, n over the
//! rhs free dimensions and k over the contracting dimensions (row-major in
//! the order of `lhs_contracting_dimensions`, as the reference sums). The
//! operands are read in place through strides when each group of
//! dimensions collapses into one stride, and copied into that layout
//! otherwise. The result (batch, lhs free, rhs free) is the GEMM's C.

pub mod numeric;

use rayon::prelude::*;
use std::mem::MaybeUninit;
use xlaref_reference::ir::{DotDims, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::RunError;

use super::gemm::{self, Elem, MatRef};
use crate::exec::Executor;
use crate::internal;
use crate::par;
use numeric::SumOfProducts;

type R<T> = Result<T, RunError>;

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let [lhs, rhs] = operands else { return Err(internal("a dot takes two operands")) };
    let (lhs, rhs) = (lhs.as_array().ok_or_else(|| internal("array operand"))?, rhs.as_array().ok_or_else(|| internal("array operand"))?);
    let out = shape.as_array().ok_or_else(|| internal("array result"))?;
    let dims = match op {
        Op::Dot { .. } => DotDims {
            lhs_contracting_dimensions: vec![lhs.rank() as i64 - 1],
            rhs_contracting_dimensions: vec![0],
            lhs_batch_dimensions: vec![],
            rhs_batch_dimensions: vec![],
        },
        Op::DotGeneral { dimension_numbers, .. } => dimension_numbers.clone(),
        _ => return Err(internal("not a dot op")),
    };
    Ok(dot_general(lhs, rhs, &dims, out)?.into())
}

/// One group of dimensions of an operand (batch, free or contracting):
/// sizes and strides, outermost first.
#[derive(Default, Clone)]
pub struct Group {
    pub sizes: Vec<usize>,
    pub strides: Vec<usize>,
}

impl Group {
    pub fn push(&mut self, size: usize, stride: usize) {
        self.sizes.push(size);
        self.strides.push(stride);
    }

    pub fn count(&self) -> usize {
        self.sizes.iter().product()
    }

    /// The one stride that walks the whole group in row-major order, if
    /// there is one.
    pub fn collapsed(&self) -> Option<usize> {
        if self.count() <= 1 {
            return Some(1);
        }
        let live: Vec<(usize, usize)> = self.sizes.iter().copied().zip(self.strides.iter().copied()).filter(|&(s, _)| s > 1).collect();
        let ok = live.windows(2).all(|w| w[0].1 == w[1].0 * w[1].1);
        ok.then(|| live.last().map_or(1, |l| l.1))
    }

    /// The offset of every index of the group, row-major.
    pub fn offsets(&self) -> Vec<usize> {
        let mut out = vec![0usize];
        for (&size, &stride) in self.sizes.iter().zip(&self.strides) {
            out = out.iter().flat_map(|&o| (0..size).map(move |i| o + i * stride)).collect();
        }
        out
    }
}

/// An operand as a sequence of matrices: matrix `b` starts at
/// `batch[b]` and has the given row and column groups.
struct Operand {
    batch: Group,
    rows: Group,
    cols: Group,
}

/// The operand's data laid out so that its rows and columns each have one
/// stride: in place if they already do, else copied as [batch][rows][cols].
fn as_matrices<T: Elem>(data: &[T], op: Operand) -> (std::borrow::Cow<'_, [T]>, Vec<usize>, usize, usize) {
    if let (Some(rs), Some(cs)) = (op.rows.collapsed(), op.cols.collapsed()) {
        return (std::borrow::Cow::Borrowed(data), op.batch.offsets(), rs, cs);
    }
    let (r, c) = (op.rows.count(), op.cols.count());
    let batch = op.batch.offsets();
    let sizes: Vec<usize> = op.rows.sizes.iter().chain(&op.cols.sizes).copied().collect();
    let strides: Vec<usize> = op.rows.strides.iter().chain(&op.cols.strides).copied().collect();
    let mut copy = Vec::with_capacity(batch.len() * r * c);
    for &b in &batch {
        copy.extend(gather(data, b, &sizes, &strides));
    }
    let starts = (0..batch.len()).map(|i| i * r * c).collect();
    (std::borrow::Cow::Owned(copy), starts, c, 1)
}

/// A Select applied to a Dot's (scaled) values as they are stored
/// (`dot_general_masked`): position `p` keeps its value where
/// `keep[p % keep.len()] == on_true`, else takes `fill`.
#[derive(Clone, Copy)]
pub struct Mask<'m> {
    pub keep: &'m [bool],
    pub on_true: bool,
    pub fill: f64,
}

struct Plan<'m> {
    lhs: Operand,
    rhs: Operand,
    m: usize,
    n: usize,
    k: usize,
    batches: usize,
    /// Each batch's result written as its transpose, `[n][m]`.
    transposed: bool,
    /// Every sum times this (1, or a power of two: `dot_general_scaled`).
    scale: f64,
    mask: Option<Mask<'m>>,
}

impl SumOfProducts for Plan<'_> {
    fn compute<T: Elem>(&self, lhs: &[T], rhs: &[T]) -> R<Vec<T>> {
        let clone = |o: &Operand| Operand { batch: o.batch.clone(), rows: o.rows.clone(), cols: o.cols.clone() };
        let (a, a_starts, a_rs, a_cs) = as_matrices(lhs, clone(&self.lhs));
        let (b, b_starts, b_rs, b_cs) = as_matrices(rhs, clone(&self.rhs));
        let (m, n, k) = (self.m, self.n, self.k);
        let size = m.checked_mul(n).and_then(|x| x.checked_mul(self.batches)).ok_or_else(|| internal("result too large"))?;
        // The GEMM writes every element without reading it: no zeroing
        // pass first (8 MiB of attention scores: a memset per run).
        let mut out: Vec<T> = Vec::with_capacity(size);
        if size == 0 {
            return Ok(out);
        }
        let spare = &mut out.spare_capacity_mut()[..size];
        let clock = xlaref_reference::watch::clock();
        let one = |i: usize, c: &mut [MaybeUninit<T>], parallel: bool| {
            if clock.passed() {
                return Ok(());
            }
            let am = MatRef { data: &a, offset: a_starts[i], row_stride: a_rs, col_stride: a_cs };
            let bm = MatRef { data: &b, offset: b_starts[i], row_stride: b_rs, col_stride: b_cs };
            if self.transposed && gemm::lays_b_out::<T>(k, n, &bm) {
                // The Dot copies such a B by rows first (`gemm`), which the
                // swapped product below would not: the Dot's own values,
                // through a scratch, then transposed.
                let mut plain = vec![T::ZERO; m * n];
                gemm::gemm(m, n, k, am, bm, gemm::as_uninit(&mut plain), n, parallel, clock)?;
                // SAFETY: `c` is this batch's n·m values; every one is
                // written by the transpose.
                let c = unsafe { &mut *(c as *mut [MaybeUninit<T>] as *mut [T]) };
                crate::kernels::transpose::swap_matrices_into(&plain, c, m, n);
                return Ok(());
            }
            if self.transposed {
                // Cᵀ = Bᵀ·Aᵀ: the operands' strides swapped. Each element is
                // the same sum of the same products in the same order (the
                // `gemm` crate turns a row-major result into this very
                // problem itself; `transposed_results_are_the_results_transposed`),
                // as long as neither product lays its B out again.
                let bt = MatRef { data: &b, offset: b_starts[i], row_stride: b_cs, col_stride: b_rs };
                let at = MatRef { data: &a, offset: a_starts[i], row_stride: a_cs, col_stride: a_rs };
                return gemm::gemm_as_laid_out(n, m, k, bt, at, c, m, parallel, clock);
            }
            if self.scale == 1.0 && self.mask.is_none() {
                return gemm::gemm(m, n, k, am, bm, c, n, parallel, clock);
            }
            gemm::gemm(m, n, k, am, bm, c, n, parallel, clock)?;
            if !clock.passed() {
                // SAFETY: the GEMM wrote all of C: it leaves rows unwritten
                // only once the clock has passed, and it has not.
                let c = unsafe { &mut *(c as *mut [MaybeUninit<T>] as *mut [T]) };
                // While this batch's result is still in the cache (cut in
                // slabs of rows, the GEMM ran slower by more than the
                // epilogue gained).
                epilogue(c, i * m * n, self.scale, self.mask.as_ref());
            }
            Ok(())
        };
        let flops = (m as f64) * (n as f64) * (k as f64);
        let threads = rayon::current_num_threads();
        if self.batches >= threads && self.batches > 1 && flops * (self.batches as f64) > 1e5 {
            spare.par_chunks_mut(m * n).enumerate().try_for_each(|(i, c)| one(i, c, false))?;
        } else {
            for (i, c) in spare.chunks_mut(m * n).enumerate() {
                one(i, c, flops > 1e5)?;
            }
        }
        if clock.passed() {
            // Batches or rows may be unwritten; the engine reports the
            // time limit and drops this result.
            par::fill_with(spare, T::ZERO);
        }
        // SAFETY: every element was written: by the GEMMs (all of every
        // batch while the clock had not passed) or by the fill above.
        unsafe { out.set_len(size) };
        Ok(out)
    }
}

/// A Dot's epilogue on the values of positions `from..` (`c`), in place:
/// the sums times `scale` (exact: a power of two), then the Select of
/// `mask`, whose values repeat along `c` (the mask spans the trailing
/// dimensions of the result).
fn epilogue<T: Elem>(c: &mut [T], from: usize, scale: f64, mask: Option<&Mask<'_>>) {
    let Some(mask) = mask.filter(|m| !m.keep.is_empty()) else {
        par::simd(
            #[inline(always)]
            || c.iter_mut().for_each(|x| *x = x.times(scale)),
        );
        return;
    };
    let len = mask.keep.len();
    let fill = T::of_f64(mask.fill);
    let on_true = mask.on_true as u8;
    let (mut at, mut rest) = (from % len, c);
    while !rest.is_empty() {
        let run = (len - at).min(rest.len());
        let (now, later) = rest.split_at_mut(run);
        let keep = &mask.keep[at..at + run];
        // Selects, not branches: they vectorize (a branch ran about a
        // cycle per value).
        par::simd(
            #[inline(always)]
            || {
                if scale == 1.0 {
                    for (x, &k) in now.iter_mut().zip(keep) {
                        *x = if k as u8 == on_true { *x } else { fill };
                    }
                } else {
                    for (x, &k) in now.iter_mut().zip(keep) {
                        *x = if k as u8 == on_true { x.times(scale) } else { fill };
                    }
                }
            },
        );
        rest = later;
        at = 0;
    }
}

/// DotGeneral — document §DotGeneral: result (batch, lhs free, rhs free),
/// each element the sum over the contracting indices of lhs·rhs.
pub fn dot_general(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape) -> R<ArrayLiteral> {
    dot_general_laid_out(lhs, rhs, d, out, false, 1.0, None)
}

/// A DotGeneral times a power of two `scale` (attention's `q·kᵀ / √d`
/// with d = 64), applied to each batch's result right after its GEMM,
/// while it is in the cache: bit for bit the Dot followed by the Mul or
/// Div, because a power of two times the rounded sum is the same real
/// value as the sum divided by its reciprocal. f32 and f64 only. (The
/// `gemm` crate's own `beta` is not this: with it, subnormal and
/// overflowing results differed from the Dot-then-Div in the last bits.)
pub fn dot_general_scaled(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape, scale: f64) -> R<ArrayLiteral> {
    let t = out.element_type;
    if !matches!(t, ElementType::F32 | ElementType::F64) || lhs.element_type() != t || rhs.element_type() != t {
        return Err(internal("a scaled dot of another type"));
    }
    dot_general_laid_out(lhs, rhs, d, out, false, scale, None)
}

/// [`dot_general_scaled`] followed by a Select between its values and a
/// constant by a pred array over the result's trailing dimensions
/// (attention's causal mask, broadcast over the batch and heads), applied
/// to each batch's result while it is in the cache: bit for bit the
/// Dot, the scaling and the Select, which only picks. f32 and f64 only.
pub fn dot_general_masked(
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    d: &DotDims,
    out: &ArrayShape,
    scale: f64,
    mask: Mask<'_>,
) -> R<ArrayLiteral> {
    let t = out.element_type;
    if !matches!(t, ElementType::F32 | ElementType::F64) || lhs.element_type() != t || rhs.element_type() != t {
        return Err(internal("a masked dot of another type"));
    }
    if mask.keep.is_empty() || !out.element_count().is_multiple_of(mask.keep.len()) {
        return Err(internal("a mask that is not the dot's trailing dimensions"));
    }
    dot_general_laid_out(lhs, rhs, d, out, false, scale, Some(mask))
}

/// A DotGeneral followed by the Transpose to (batch, rhs free, lhs free)
/// (JAX's weight gradients, `(dyᵀ·x)ᵀ`), written in that order directly:
/// no result to copy. `out` is the Dot's own shape; the result has the
/// Transpose's. Only for f32 and f64, whose GEMM is the `gemm` crate's:
/// the values are then the Dot's, transposed, bit for bit.
pub fn dot_general_transposed(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape) -> R<ArrayLiteral> {
    let t = out.element_type;
    if !matches!(t, ElementType::F32 | ElementType::F64) || lhs.element_type() != t || rhs.element_type() != t {
        return Err(internal("a transposed dot of another type"));
    }
    dot_general_laid_out(lhs, rhs, d, out, true, 1.0, None)
}

fn dot_general_laid_out(
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    d: &DotDims,
    out: &ArrayShape,
    transposed: bool,
    scale: f64,
    mask: Option<Mask<'_>>,
) -> R<ArrayLiteral> {
    let (ls, rs) = (lhs.shape.strides(), rhs.shape.strides());
    let (ld, rd) = (lhs.dims(), rhs.dims());
    let dim = |dims: &[i64], i: i64| -> R<usize> {
        usize::try_from(i).ok().filter(|&i| i < dims.len()).ok_or_else(|| internal("dot dimension out of range"))
    };
    let (mut lb, mut rb, mut lk, mut rk, mut lm, mut rn) =
        (Group::default(), Group::default(), Group::default(), Group::default(), Group::default(), Group::default());
    for (&l, &r) in d.lhs_batch_dimensions.iter().zip(&d.rhs_batch_dimensions) {
        let (l, r) = (dim(ld, l)?, dim(rd, r)?);
        lb.push(ld[l] as usize, ls[l]);
        rb.push(rd[r] as usize, rs[r]);
    }
    for (&l, &r) in d.lhs_contracting_dimensions.iter().zip(&d.rhs_contracting_dimensions) {
        let (l, r) = (dim(ld, l)?, dim(rd, r)?);
        lk.push(ld[l] as usize, ls[l]);
        rk.push(rd[r] as usize, rs[r]);
    }
    let free = |rank: usize, contracting: &[i64], batch: &[i64]| -> Vec<usize> {
        (0..rank).filter(|&i| !contracting.contains(&(i as i64)) && !batch.contains(&(i as i64))).collect()
    };
    for i in free(ld.len(), &d.lhs_contracting_dimensions, &d.lhs_batch_dimensions) {
        lm.push(ld[i] as usize, ls[i]);
    }
    for i in free(rd.len(), &d.rhs_contracting_dimensions, &d.rhs_batch_dimensions) {
        rn.push(rd[i] as usize, rs[i]);
    }
    let want: Vec<i64> = lb.sizes.iter().chain(&lm.sizes).chain(&rn.sizes).map(|&s| s as i64).collect();
    if want != out.dims || lk.sizes != rk.sizes {
        return Err(internal("dot result shape differs from the verified one"));
    }
    let mut shape = out.clone();
    if transposed {
        // (batch, rhs free, lhs free)
        shape.dims[lb.sizes.len()..].rotate_left(lm.sizes.len());
    }
    let plan = Plan {
        m: lm.count(),
        n: rn.count(),
        k: lk.count(),
        batches: lb.count(),
        lhs: Operand { batch: lb, rows: lm, cols: lk },
        rhs: Operand { batch: rb, rows: rk, cols: rn },
        transposed,
        scale,
        mask,
    };
    numeric::run(&plan, lhs, rhs, &shape)
}

/// Whether `sizes` with `strides` walk `len` values in row-major order,
/// each once: the view [`gather`] would copy is the data itself.
pub fn is_row_major(sizes: &[usize], strides: &[usize], len: usize) -> bool {
    let mut expect = 1usize;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size != 1 && stride != expect {
            return false;
        }
        expect = expect.saturating_mul(size);
    }
    expect == len
}

/// [`gather`] from the start of `data`, or `data` itself when the view is
/// already its row-major order (no copy).
pub fn laid_out<'d, T: Copy + Send + Sync>(data: &'d [T], sizes: &[usize], strides: &[usize]) -> std::borrow::Cow<'d, [T]> {
    if is_row_major(sizes, strides, data.len()) {
        std::borrow::Cow::Borrowed(data)
    } else {
        std::borrow::Cow::Owned(gather(data, 0, sizes, strides))
    }
}

/// A strided view copied out row-major: element `idx` of the result is
/// `data[start + Σ idx_i · strides_i]` over `sizes`. Large copies run in
/// parallel over the outermost dimension.
pub fn gather<T: Copy + Send + Sync>(data: &[T], start: usize, sizes: &[usize], strides: &[usize]) -> Vec<T> {
    let total: usize = sizes.iter().product();
    if total == 0 {
        return Vec::new();
    }
    let Some((&inner, outer)) = sizes.split_last() else { return vec![data[start]] };
    let inner_stride = strides[sizes.len() - 1];
    // Fills the rows (all but the last dimension) from `first_row` on.
    let fill = |first_row: usize, dst: &mut [T]| {
        for (r, row) in dst.chunks_mut(inner).enumerate() {
            let (mut rest, mut at) = (first_row + r, start);
            for (&size, &stride) in outer.iter().zip(&strides[..outer.len()]).rev() {
                at += (rest % size) * stride;
                rest /= size;
            }
            if inner_stride == 1 {
                row.copy_from_slice(&data[at..at + inner]);
            } else {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = data[at + i * inner_stride];
                }
            }
        }
    };
    let mut out = vec![data[start]; total];
    let rows_per_task = (1usize << 14).div_ceil(inner).max(1);
    if total >= 1 << 16 {
        out.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(t, dst)| fill(t * rows_per_task, dst));
    } else {
        fill(0, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlaref_reference::literal::Data;

    /// Uniform values in [-1, 1) from a xorshift generator.
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    /// The scaled Dot equals the Dot then the scaling, bit for bit, down
    /// to subnormal results.
    #[test]
    fn scaled_results_are_the_results_scaled() {
        let dims = DotDims {
            lhs_contracting_dimensions: vec![1],
            rhs_contracting_dimensions: vec![0],
            lhs_batch_dimensions: vec![],
            rhs_batch_dimensions: vec![],
        };
        let mut next = uniform(0x2545_f491_4f6c_dd1du64);
        for (m, n, k) in [(1, 1, 1), (3, 5, 7), (64, 48, 64), (130, 33, 512), (300, 257, 200)] {
            for scale in [0.125, 8.0, 2f64.powi(-120), 0.5] {
                let a: Vec<f32> = (0..m * k).map(|_| next() as f32).collect();
                let b: Vec<f32> = (0..k * n).map(|_| next() as f32 * 1e-5).collect();
                let (l, r) = (ArrayLiteral::from_vec(vec![m as i64, k as i64], a), ArrayLiteral::from_vec(vec![k as i64, n as i64], b));
                let out = ArrayShape::new(ElementType::F32, vec![m as i64, n as i64]);
                let Data::F32(plain) = dot_general(&l, &r, &dims, &out).expect("dot").data else { unreachable!() };
                let Data::F32(scaled) = dot_general_scaled(&l, &r, &dims, &out, scale).expect("scaled dot").data else { unreachable!() };
                for (i, (p, s)) in plain.iter().zip(&scaled).enumerate() {
                    let want = if scale < 1.0 { p / (1.0 / scale) as f32 } else { p * scale as f32 };
                    assert_eq!(want.to_bits(), s.to_bits(), "{m}x{n}x{k} scale {scale} at {i}");
                }
            }
        }
    }

    /// The masked Dot equals the scaled Dot then the Select, bit for bit,
    /// with batches (the mask repeats over them), either branch taking the
    /// Dot's values, and without a scale.
    #[test]
    fn masked_results_are_the_results_selected() {
        let dims = DotDims {
            lhs_contracting_dimensions: vec![2],
            rhs_contracting_dimensions: vec![2],
            lhs_batch_dimensions: vec![0],
            rhs_batch_dimensions: vec![0],
        };
        let mut next = uniform(0x1234_5678_9abc_def1u64);
        for (h, s, d) in [(1, 1, 1), (3, 5, 7), (4, 64, 32), (2, 130, 64)] {
            let q: Vec<f32> = (0..h * s * d).map(|_| next() as f32).collect();
            let k: Vec<f32> = (0..h * s * d).map(|_| next() as f32).collect();
            let dims3 = vec![h as i64, s as i64, d as i64];
            let (l, r) = (ArrayLiteral::from_vec(dims3.clone(), q), ArrayLiteral::from_vec(dims3, k));
            let out = ArrayShape::new(ElementType::F32, vec![h as i64, s as i64, s as i64]);
            // Causal: row i keeps columns j <= i.
            let keep: Vec<bool> = (0..s * s).map(|p| p % s <= p / s).collect();
            for (scale, on_true, fill) in [(0.125, true, f64::NEG_INFINITY), (1.0, false, -1e9), (8.0, true, 0.0)] {
                let Data::F32(scaled) = dot_general_scaled(&l, &r, &dims, &out, scale).expect("scaled dot").data else { unreachable!() };
                let mask = Mask { keep: &keep, on_true, fill };
                let Data::F32(masked) = dot_general_masked(&l, &r, &dims, &out, scale, mask).expect("masked dot").data else {
                    unreachable!()
                };
                for (i, (v, m)) in scaled.iter().zip(&masked).enumerate() {
                    let want = if keep[i % (s * s)] == on_true { *v } else { fill as f32 };
                    assert_eq!(want.to_bits(), m.to_bits(), "{h}x{s}x{d} scale {scale} at {i}");
                }
            }
            // A mask that does not divide the result is refused.
            let odd = vec![true; s * s + 1];
            assert!(dot_general_masked(&l, &r, &dims, &out, 1.0, Mask { keep: &odd, on_true: true, fill: 0.0 }).is_err());
        }
    }

    /// Whether the `gemm` crate's sums depend on the result's orientation:
    /// the transposed fold relies on them not doing so.
    #[test]
    fn transposed_results_are_the_results_transposed() {
        // B by rows, and B by columns (the rhs contracting its last
        // dimension: `gemm` copies it by rows first).
        for rhs_by_columns in [false, true] {
            transposed_equals_plain(rhs_by_columns);
        }
    }

    fn transposed_equals_plain(rhs_by_columns: bool) {
        let dims = DotDims {
            lhs_contracting_dimensions: vec![1],
            rhs_contracting_dimensions: vec![rhs_by_columns as i64],
            lhs_batch_dimensions: vec![],
            rhs_batch_dimensions: vec![],
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let rhs_dims = |k: usize, n: usize| if rhs_by_columns { vec![n as i64, k as i64] } else { vec![k as i64, n as i64] };
        for (m, n, k) in
            [(1, 1, 1), (1, 7, 3), (7, 1, 3), (2, 3, 1), (5, 17, 33), (64, 48, 700), (130, 33, 1500), (300, 257, 64), (256, 200, 2100)]
        {
            let a: Vec<f64> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f64> = (0..k * n).map(|_| next()).collect();
            let af: Vec<f32> = a.iter().map(|&x| x as f32).collect();
            let bf: Vec<f32> = b.iter().map(|&x| x as f32).collect();
            for (l, r) in [
                (ArrayLiteral::from_vec(vec![m as i64, k as i64], a.clone()), ArrayLiteral::from_vec(rhs_dims(k, n), b.clone())),
                (ArrayLiteral::from_vec(vec![m as i64, k as i64], af.clone()), ArrayLiteral::from_vec(rhs_dims(k, n), bf.clone())),
            ] {
                let out = ArrayShape::new(l.element_type(), vec![m as i64, n as i64]);
                let c = dot_general(&l, &r, &dims, &out).expect("dot");
                let t = dot_general_transposed(&l, &r, &dims, &out).expect("transposed dot");
                assert_eq!(t.dims(), [n as i64, m as i64]);
                let bits = |x: &ArrayLiteral, i: usize| match &x.data {
                    Data::F32(v) => v[i].to_bits() as u64,
                    Data::F64(v) => v[i].to_bits(),
                    _ => unreachable!(),
                };
                for i in 0..m {
                    for j in 0..n {
                        assert_eq!(bits(&c, i * n + j), bits(&t, j * m + i), "{m}x{n}x{k} at ({i}, {j})");
                    }
                }
            }
        }
    }
}
