//! Windows on a base array (ReduceWindow, SelectAndScatter) and
//! ReduceWindow.
//!
//! Per dimension, the base coordinates each window position covers are
//! listed once ([`Plan`]): base element `i` sits at position
//! `pad_low + i * base_dilation`, window element `k` of output `o` at
//! `o * stride + k * window_dilation`; padding and dilation holes hold no
//! element and are skipped (init counts once, as the reference). A window
//! is then walked row-major: the outer dimensions' combinations (shared by
//! a whole output row), then the last dimension's list.

use rayon::prelude::*;
use xlaref_reference::ir::{ComputationId, WindowAttrs};
use xlaref_reference::literal::{Data, Literal};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::Shape;

use super::{arrays, collate, combine, internal, result_shapes, scalars, scatter_scalars, Call, Combiner, Elem, Odometer, R};
use crate::applied::{Kind, ScalarFn};
use crate::exec::Executor;
use crate::par;

/// Covered base coordinates of one dimension, for every output coordinate.
#[derive(Clone, Debug)]
struct DimList {
    /// `list[starts[o]..starts[o + 1]]` are output `o`'s base coordinates.
    starts: Vec<usize>,
    list: Vec<usize>,
}

impl DimList {
    #[inline]
    fn of(&self, o: usize) -> &[usize] {
        &self.list[self.starts[o]..self.starts[o + 1]]
    }
}

/// A window walk over a base of some dimensions, for an output of others.
pub(super) struct Plan {
    dims: Vec<DimList>,
    base_strides: Vec<usize>,
    out_dims: Vec<usize>,
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

impl Plan {
    pub fn new(base: &[i64], out: &[i64], w: &WindowAttrs) -> R<Plan> {
        let n = base.len();
        let pads = w.padding.resolve(base, &w.window_dimensions, &w.window_dilations, &w.window_strides);
        if out.len() != n
            || [w.window_dimensions.len(), w.window_strides.len(), w.base_dilations.len(), w.window_dilations.len(), pads.len()]
                .iter()
                .any(|&l| l != n)
        {
            return Err(internal("window attributes do not match the rank"));
        }
        let mut dims = Vec::with_capacity(n);
        for d in 0..n {
            let (size, stride, bd, wd) =
                (w.window_dimensions[d] as i128, w.window_strides[d] as i128, w.base_dilations[d] as i128, w.window_dilations[d] as i128);
            if bd < 1 || wd < 1 || base[d] < 0 || out[d] < 0 {
                return Err(internal("window dilations"));
            }
            let mut starts = vec![0usize];
            let mut list = Vec::new();
            for o in 0..out[d] as i128 {
                // Position of window element 0 relative to base element 0.
                let first = o * stride - pads[d].0 as i128;
                let last = first + (size - 1) * wd;
                let lo = ceil_div(first, bd).max(0);
                let hi = last.div_euclid(bd).min(base[d] as i128 - 1);
                let mut i = lo;
                while i <= hi {
                    if (i * bd - first) % wd == 0 {
                        list.push(i as usize);
                    }
                    i += 1;
                }
                starts.push(list.len());
            }
            dims.push(DimList { starts, list });
        }
        let mut base_strides = vec![1usize; n];
        for d in (0..n.saturating_sub(1)).rev() {
            base_strides[d] = base_strides[d + 1] * base[d + 1].max(0) as usize;
        }
        Ok(Plan { dims, base_strides, out_dims: out.iter().map(|&o| o as usize).collect() })
    }

    /// Output elements per row (the last dimension), and rows.
    pub fn row_len(&self) -> usize {
        self.out_dims.last().copied().unwrap_or(1)
    }

    pub fn rows(&self) -> usize {
        let k = self.out_dims.len().saturating_sub(1);
        self.out_dims[..k].iter().product()
    }

    /// The rows from row `start` on, by their output coordinates in the
    /// outer dimensions (all but the last): [`Odometer::coordinates`]
    /// before each `next()`. (Its offsets are those of the base's strides,
    /// unused here.)
    pub fn rows_from(&self, start: usize) -> Odometer<'_> {
        let k = self.out_dims.len().saturating_sub(1);
        Odometer::new(&self.out_dims[..k], &self.base_strides[..k], start)
    }

    /// Base offsets of the outer dimensions' covered combinations for the
    /// row at `coords` ([`Plan::rows_from`]), row-major; replaces `offs`.
    /// The rows of a block walk their coordinates: finding them from the
    /// row number took a division per dimension and row, 18% of a 2×2
    /// pooling's samples.
    pub fn outer_offsets(&self, coords: &[usize], offs: &mut Vec<usize>) {
        offs.clear();
        offs.push(0);
        for (d, &c) in coords.iter().enumerate() {
            let l = self.dims[d].of(c);
            let s = self.base_strides[d];
            // Expanded in place, back to front: entry j moves to
            // `j * l.len() ..`, never over an entry not yet read.
            if l.is_empty() {
                // A window wholly in padding: no element, only init.
                offs.clear();
                return;
            }
            let prev = offs.len();
            offs.resize(prev * l.len(), 0);
            for j in (0..prev).rev() {
                let p = offs[j];
                for (t, &i) in l.iter().enumerate() {
                    offs[j * l.len() + t] = p + i * s;
                }
            }
        }
    }

    /// The last dimension's covered base coordinates for output `o` of a
    /// row (for rank 0: the one element).
    #[inline]
    pub fn last(&self, o: usize) -> &[usize] {
        match self.dims.last() {
            Some(l) => l.of(o),
            None => &[0],
        }
    }
}

/// ReduceWindow — as the reference: each output is the init values folded
/// with the computation over the base elements its window covers, in
/// row-major window order (so sums are exact, not reassociated).
pub fn reduce_window(exec: &mut Executor, computation: ComputationId, w: &WindowAttrs, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let n = operands.len() / 2;
    let inputs = arrays(&operands[..n])?;
    let inits = scalars(&operands[n..])?;
    let first = inputs.first().ok_or_else(|| internal("ReduceWindow without operands"))?;
    let out_shapes = result_shapes(shape, n)?;
    let plan = Plan::new(first.dims(), &out_shapes[0].dims, w)?;
    if inputs.iter().any(|a| a.element_count() != first.element_count()) {
        return Err(internal("ReduceWindow operands differ in size"));
    }
    let f = ScalarFn::new(computation);
    if n == 1 {
        if let Kind::Bin(op) = f.kind(exec.module) {
            if let Some(data) = combine(op, &first.data, inits[0], Typed { plan: &plan }) {
                return Ok(collate(vec![data?], &out_shapes));
            }
        }
    }
    let datas: Vec<&Data> = inputs.iter().map(|a| &a.data).collect();
    let flat = generic(exec, &f, &plan, &datas, &inits)?;
    Ok(collate(scatter_scalars(&flat, n, &out_shapes)?, &out_shapes))
}

struct Typed<'a> {
    plan: &'a Plan,
}

impl Combiner for Typed<'_> {
    fn run<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, _assoc: bool) -> R<Vec<T>> {
        let plan = self.plan;
        let (w, rows) = (plan.row_len(), plan.rows());
        if w * rows == 0 {
            return Ok(Vec::new());
        }
        // Whether the last dimension's windows are all `count` consecutive
        // coordinates `o * step + start ..`, so the row loop needs no lists.
        let regular = regular_last(plan);
        // Rows are often short (a pooling row is a few dozen outputs): each
        // task takes a block of rows, with one vector-dispatch and one
        // offsets buffer for the block.
        let rows_per_task = (4096 / w).max(1);
        let block = |first: usize, chunk: &mut [T]| {
            let mut offs = Vec::new();
            let mut rows = plan.rows_from(first);
            // Always inlined (as `fold_row` and what it calls), so the row
            // loops are compiled inside `par::simd`'s vector-feature function.
            par::simd(
                #[inline(always)]
                || {
                    for acc in chunk.chunks_mut(w) {
                        plan.outer_offsets(rows.coordinates(), &mut offs);
                        fold_row(plan, regular, x, f, acc, &offs);
                        rows.next();
                    }
                },
            )
        };
        // Tasks from the pool's shared counter (`par::tasks`): rayon's
        // splitting left the second worker idle in about a third of the
        // runs (pooling 8x64x56x56: 0.93 against 0.55 ms). Few large tasks
        // (four per thread): with a task per block the pooling took 0.73.
        let n = w * rows;
        let per_task = rows_per_task.max(rows.div_ceil(4 * rayon::current_num_threads()));
        let chunk = if x.len() + n < par::PARALLEL_THRESHOLD { n } else { w * per_task };
        Ok(par::build_in_chunks(n, chunk, |start, part| block(start / w, par::fill_with(part, init))))
    }
}

/// Folds an output row's windows into `acc`, window by window row (`offs`,
/// the outer dimensions' offsets), in window order. Inlined into the
/// caller's vector-dispatched loop, so its column loops are compiled for
/// the machine's widest vectors.
#[inline(always)]
fn fold_row<T: Copy, F: Fn(T, T) -> T + Copy>(plan: &Plan, regular: Option<Regular>, x: &[T], f: F, acc: &mut [T], offs: &[usize]) {
    if let Some(Regular { first, step: 1, count: 1, lo: 0, hi }) = regular {
        if hi == acc.len() {
            // Output `o` folds `x[off + first + o]` for each window row
            // (NHWC pooling: the features): all rows at once.
            fold_stacked(acc, x, offs, first, f);
            return;
        }
    }
    for &off in offs {
        let by_list = |acc: &mut [T], outputs: std::ops::Range<usize>| {
            for (o, a) in outputs.clone().zip(&mut acc[outputs]) {
                for &i in plan.last(o) {
                    *a = f(*a, x[off + i]);
                }
            }
        };
        match regular {
            Some(Regular { first, step, count, lo: 0, hi }) if hi == acc.len() && step == count && (2..=4).contains(&count) => {
                // Windows tile the row (pooling): each output folds the
                // next `count` elements, in order; with `count` a constant
                // the loop vectorizes over interleaved loads.
                let row = &x[off + first..off + first + acc.len() * count];
                match count {
                    2 => fold_tiles::<T, F, 2>(acc, row, f),
                    3 => fold_tiles::<T, F, 3>(acc, row, f),
                    _ => fold_tiles::<T, F, 4>(acc, row, f),
                }
            }
            Some(Regular { first, step, count, lo, hi }) => {
                // Each output's window row is `count` adjacent elements.
                // Column `k` of every window is folded across the outputs
                // at once (a strided, vectorizable loop); each output
                // still sees its elements in window order.
                if lo > 0 {
                    by_list(acc, 0..lo);
                }
                for k in 0..count {
                    fold_column(&mut acc[lo..hi], &x[off + first + k..], step, f);
                }
                if hi < acc.len() {
                    by_list(acc, hi..acc.len());
                }
            }
            None => by_list(acc, 0..acc.len()),
        }
    }
}

/// `acc[o] = f(…f(acc[o], x[offs[0] + first + o])…, x[offs[n − 1] +
/// first + o])`, a chunk of outputs at a time held in registers across the
/// window rows: folded one window row at a time, each output was loaded
/// and stored once per row (2×2 max pooling of f32[8,32,32,32]: four
/// masked stores per output). Chunks of 32, then of 8: rows shorter than
/// 32 (pooling with 8 features, f32[4,128,128,8]) had run wholly in the
/// scalar remainder, the pooling 0.50-0.72 ms.
#[inline(always)]
fn fold_stacked<T: Copy, F: Fn(T, T) -> T + Copy>(acc: &mut [T], x: &[T], offs: &[usize], first: usize, f: F) {
    let mut at = first;
    let rest = fold_stacked_chunks::<T, F, 32>(acc, x, offs, &mut at, f);
    let rest = fold_stacked_chunks::<T, F, 8>(rest, x, offs, &mut at, f);
    for (j, a) in rest.iter_mut().enumerate() {
        for &off in offs {
            *a = f(*a, x[off + at + j]);
        }
    }
}

/// [`fold_stacked`] over whole chunks of `C` outputs from `acc`'s start
/// (`at` their first element's column, moved past them); returns the
/// outputs left.
#[inline(always)]
fn fold_stacked_chunks<'a, T: Copy, F: Fn(T, T) -> T, const C: usize>(
    acc: &'a mut [T],
    x: &[T],
    offs: &[usize],
    at: &mut usize,
    f: F,
) -> &'a mut [T] {
    let mut chunks = acc.chunks_exact_mut(C);
    for chunk in &mut chunks {
        let mut a: [T; C] = std::array::from_fn(|j| chunk[j]);
        for &off in offs {
            for (a, &e) in a.iter_mut().zip(&x[off + *at..off + *at + C]) {
                *a = f(*a, e);
            }
        }
        chunk.copy_from_slice(&a);
        *at += C;
    }
    chunks.into_remainder()
}

/// `acc[o] = f(…f(acc[o], row[o·C])…, row[o·C + C − 1])`: windows of `C`
/// adjacent elements that tile `row`.
#[inline(always)]
fn fold_tiles<T: Copy, F: Fn(T, T) -> T, const C: usize>(acc: &mut [T], row: &[T], f: F) {
    for (a, tile) in acc.iter_mut().zip(row.chunks_exact(C)) {
        let mut v = *a;
        for &e in tile {
            v = f(v, e);
        }
        *a = v;
    }
}

/// `acc[o] = f(acc[o], x[o * step])` for every output `o` of a row; the
/// common strides are constants, so the loop vectorizes.
#[inline(always)]
fn fold_column<T: Copy, F: Fn(T, T) -> T>(acc: &mut [T], x: &[T], step: usize, f: F) {
    #[inline(always)]
    fn strided<T: Copy, F: Fn(T, T) -> T, const STEP: usize>(acc: &mut [T], x: &[T], f: F) {
        let Some((tail, rest)) = acc.split_last_mut() else { return };
        // Chunks of a constant length, not indices: no bounds check in the
        // loop, which then vectorizes over interleaved loads.
        let n = rest.len();
        for (a, chunk) in rest.iter_mut().zip(x[..n * STEP].chunks_exact(STEP)) {
            *a = f(*a, chunk[0]);
        }
        *tail = f(*tail, x[n * STEP]);
    }
    match step {
        // Zipped, not indexed: the indexed loop kept a bounds check that
        // stopped it vectorizing (NHWC 2×2 max pooling, 8×64×64×64: 1.4 ms).
        1 => acc.iter_mut().zip(x).for_each(|(a, &e)| *a = f(*a, e)),
        2 => strided::<T, F, 2>(acc, x, f),
        3 => strided::<T, F, 3>(acc, x, f),
        4 => strided::<T, F, 4>(acc, x, f),
        _ => {
            for (o, a) in acc.iter_mut().enumerate() {
                *a = f(*a, x[o * step]);
            }
        }
    }
}

/// Outputs `lo..hi` of a row whose last-dimension windows are all `count`
/// adjacent coordinates, `first + (o - lo)·step + 0..count` (no padding
/// reached, no dilation): folded a column at a time across them. The
/// outputs before and after (windows that reach padding: SAME pooling's
/// last output) take the per-output lists.
#[derive(Clone, Copy)]
struct Regular {
    first: usize,
    step: usize,
    count: usize,
    lo: usize,
    hi: usize,
}

/// The longest run of outputs with [`Regular`] windows, if any.
fn regular_last(plan: &Plan) -> Option<Regular> {
    let w = plan.row_len();
    // Windows wholly in padding (no element at all) fold nothing.
    let count = (0..w).map(|o| plan.last(o).len()).max().filter(|&c| c > 0)?;
    let contiguous = |l: &[usize]| l.len() == count && l.windows(2).all(|p| p[1] == p[0] + 1);
    let lo = (0..w).find(|&o| contiguous(plan.last(o)))?;
    let first = plan.last(lo)[0];
    let step = match (lo + 1 < w).then(|| plan.last(lo + 1)) {
        Some(l) if contiguous(l) => l[0].checked_sub(first)?,
        _ => 0,
    };
    let mut hi = lo + 1;
    while hi < w && contiguous(plan.last(hi)) && plan.last(hi)[0] == first + (hi - lo) * step {
        hi += 1;
    }
    Some(Regular { first, step, count, lo, hi })
}

/// Any computation, any number of operands: per output, the reference's
/// row-major fold over the window, in parallel over rows when the
/// computation compiled.
fn generic(exec: &mut Executor, f: &ScalarFn, plan: &Plan, inputs: &[&Data], inits: &[Scalar]) -> R<Vec<Scalar>> {
    let n = inputs.len();
    let (w, rows) = (plan.row_len(), plan.rows());
    let one_row = |r: usize, call: &mut Call, out: &mut Vec<Scalar>| -> R<()> {
        let mut offs = Vec::new();
        plan.outer_offsets(plan.rows_from(r).coordinates(), &mut offs);
        let (mut args, mut next) = (Vec::with_capacity(2 * n), Vec::with_capacity(n));
        for o in 0..w {
            let mut acc = inits.to_vec();
            for &off in &offs {
                for &i in plan.last(o) {
                    args.clear();
                    args.extend_from_slice(&acc);
                    args.extend(inputs.iter().map(|d| d.get(off + i)));
                    call(&args, &mut next)?;
                    if next.len() != n {
                        return Err(internal("a reducer returned the wrong number of values"));
                    }
                    std::mem::swap(&mut acc, &mut next);
                }
            }
            out.extend_from_slice(&acc);
        }
        Ok(())
    };
    if let Some(p) = f.program(exec.module) {
        let parts: Vec<R<Vec<Scalar>>> = (0..rows)
            .into_par_iter()
            .map(|r| {
                let mut out = Vec::with_capacity(w * n);
                one_row(r, &mut |a, res| p.call(a, res), &mut out)?;
                Ok(out)
            })
            .collect();
        let mut flat = Vec::with_capacity(rows * w * n);
        for p in parts {
            flat.extend(p?);
        }
        return Ok(flat);
    }
    let mut flat = Vec::with_capacity(rows * w * n);
    for r in 0..rows {
        exec.env.check_deadline()?;
        let mut call = |a: &[Scalar], res: &mut Vec<Scalar>| f.call(exec, a, res);
        one_row(r, &mut call, &mut flat)?;
    }
    Ok(flat)
}
