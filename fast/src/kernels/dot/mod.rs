//! Fast Dot and DotGeneral: every batch is one GEMM `C[m][n] = Σ_k
//! A[m][k]·B[k][n]`, where m runs over the lhs free dimensions, n over the
//! rhs free dimensions and k over the contracting dimensions (row-major in
//! the order of `lhs_contracting_dimensions`, as the reference sums). The
//! operands are read in place through strides when each group of
//! dimensions collapses into one stride, and copied into that layout
//! otherwise. The result (batch, lhs free, rhs free) is the GEMM's C.

pub mod numeric;

use rayon::prelude::*;
use xlaref_reference::ir::{DotDims, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::RunError;

use super::gemm::{self, Elem, MatRef};
use crate::exec::Executor;
use crate::internal;
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

struct Plan {
    lhs: Operand,
    rhs: Operand,
    m: usize,
    n: usize,
    k: usize,
    batches: usize,
}

impl SumOfProducts for Plan {
    fn compute<T: Elem>(&self, lhs: &[T], rhs: &[T]) -> R<Vec<T>> {
        let clone = |o: &Operand| Operand { batch: o.batch.clone(), rows: o.rows.clone(), cols: o.cols.clone() };
        let (a, a_starts, a_rs, a_cs) = as_matrices(lhs, clone(&self.lhs));
        let (b, b_starts, b_rs, b_cs) = as_matrices(rhs, clone(&self.rhs));
        let (m, n, k) = (self.m, self.n, self.k);
        let size = m.checked_mul(n).and_then(|x| x.checked_mul(self.batches)).ok_or_else(|| internal("result too large"))?;
        let mut out = vec![T::ZERO; size];
        if size == 0 {
            return Ok(out);
        }
        let clock = xlaref_reference::watch::clock();
        let one = |i: usize, c: &mut [T], parallel: bool| {
            if clock.passed() {
                return Ok(());
            }
            let am = MatRef { data: &a, offset: a_starts[i], row_stride: a_rs, col_stride: a_cs };
            let bm = MatRef { data: &b, offset: b_starts[i], row_stride: b_rs, col_stride: b_cs };
            gemm::gemm(m, n, k, am, bm, c, n, parallel, clock)
        };
        let flops = (m as f64) * (n as f64) * (k as f64);
        let threads = rayon::current_num_threads();
        if self.batches >= threads && self.batches > 1 && flops * (self.batches as f64) > 1e5 {
            out.par_chunks_mut(m * n).enumerate().try_for_each(|(i, c)| one(i, c, false))?;
        } else {
            for (i, c) in out.chunks_mut(m * n).enumerate() {
                one(i, c, flops > 1e5)?;
            }
        }
        Ok(out)
    }
}

/// DotGeneral — document §DotGeneral: result (batch, lhs free, rhs free),
/// each element the sum over the contracting indices of lhs·rhs.
pub fn dot_general(lhs: &ArrayLiteral, rhs: &ArrayLiteral, d: &DotDims, out: &ArrayShape) -> R<ArrayLiteral> {
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
    let plan = Plan {
        m: lm.count(),
        n: rn.count(),
        k: lk.count(),
        batches: lb.count(),
        lhs: Operand { batch: lb, rows: lm, cols: lk },
        rhs: Operand { batch: rb, rows: rk, cols: rn },
    };
    numeric::run(&plan, lhs, rhs, out)
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
