//! Reduce.
//!
//! The operand's dimensions are simplified first: size-1 dimensions
//! dropped, neighbouring kept (or reduced) dimensions merged. Then either
//! - the last dimension is reduced: each output folds contiguous segments
//!   (vectorized; split across threads when there are few outputs and the
//!   op is associative), or
//! - the last dimension is kept: each output row accumulates whole input
//!   rows in the reduced space's row-major order (vectorized across the
//!   row, so every output still sees the reference's order).

use rayon::prelude::*;
use xlaref_reference::ir::ComputationId;
use xlaref_reference::literal::{Data, Literal};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::Shape;

use super::{
    arrays, collate, combine, fold_any_order, internal, result_shapes, scalars, scatter_scalars, Call, Combiner, Elem, Odometer, RowFold, R,
};
use crate::applied::{Kind, ScalarFn};
use crate::exec::Executor;
use crate::par;

/// Elements of work per parallel task.
const TASK: usize = 1 << 15;

/// The simplified iteration space of one Reduce.
#[derive(Clone, Debug, Default)]
struct Geom {
    kept_sizes: Vec<usize>,
    kept_strides: Vec<usize>,
    red_sizes: Vec<usize>,
    red_strides: Vec<usize>,
    /// Whether the last (merged) dimension is reduced.
    last_reduced: bool,
    /// Output element count.
    outputs: usize,
    /// Reduced elements per output.
    per_output: usize,
}

impl Geom {
    fn new(dims: &[i64], reduced: &[i64]) -> R<Geom> {
        let mut g = Geom { outputs: 1, per_output: 1, ..Geom::default() };
        let mut stride = 1usize;
        // Walk from the last dimension, merging runs of one kind.
        let mut last_kind: Option<bool> = None;
        for d in (0..dims.len()).rev() {
            let size = usize::try_from(dims[d]).map_err(|_| internal("negative dimension"))?;
            let is_red = reduced.contains(&(d as i64));
            if is_red {
                g.per_output *= size;
            } else {
                g.outputs *= size;
            }
            if size != 1 {
                let (sizes, strides) =
                    if is_red { (&mut g.red_sizes, &mut g.red_strides) } else { (&mut g.kept_sizes, &mut g.kept_strides) };
                if last_kind == Some(is_red) {
                    if let Some(s) = sizes.last_mut() {
                        *s *= size;
                    }
                } else {
                    sizes.push(size);
                    strides.push(stride);
                }
                if last_kind.is_none() {
                    g.last_reduced = is_red;
                }
                last_kind = Some(is_red);
            }
            stride = stride.saturating_mul(size.max(1));
        }
        g.kept_sizes.reverse();
        g.kept_strides.reverse();
        g.red_sizes.reverse();
        g.red_strides.reverse();
        if g.kept_sizes.is_empty() && g.red_sizes.is_empty() {
            // Every dimension has size 1: one element, one output.
            g.kept_sizes.push(1);
            g.kept_strides.push(1);
        }
        Ok(g)
    }
}

/// Reduce — the document's rule, as the reference: each output is the
/// init value folded with the computation over the reduced elements.
pub fn reduce(exec: &mut Executor, computation: ComputationId, dimensions: &[i64], operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let n = operands.len() / 2;
    let inputs = arrays(&operands[..n])?;
    let inits = scalars(&operands[n..])?;
    let first = inputs.first().ok_or_else(|| internal("Reduce without operands"))?;
    let out_shapes = result_shapes(shape, n)?;
    let g = Geom::new(first.dims(), dimensions)?;
    if g.outputs != out_shapes[0].element_count() || inputs.iter().any(|a| a.element_count() != first.element_count()) {
        return Err(internal("Reduce shapes do not match"));
    }
    let f = ScalarFn::new(computation);
    if n == 1 {
        if let Kind::Bin(op) = f.kind(exec.module) {
            if let Some(data) = combine(op, &first.data, inits[0], Typed { g: &g }) {
                return Ok(collate(vec![data?], &out_shapes));
            }
        }
    }
    let flat = generic(exec, &f, &g, &inputs.iter().map(|a| &a.data).collect::<Vec<_>>(), &inits)?;
    Ok(collate(scatter_scalars(&flat, n, &out_shapes)?, &out_shapes))
}

/// Any reducer, any number of operands: per output, the row-major fold of
/// the reference, in parallel over outputs when the computation compiled.
fn generic(exec: &mut Executor, f: &ScalarFn, g: &Geom, inputs: &[&Data], inits: &[Scalar]) -> R<Vec<Scalar>> {
    let n = inputs.len();
    let one_output = |o: usize, call: &mut Call, out: &mut Vec<Scalar>| -> R<()> {
        let base = Odometer::new(&g.kept_sizes, &g.kept_strides, o).next().unwrap_or(0);
        let mut acc = inits.to_vec();
        let mut args = Vec::with_capacity(2 * n);
        let mut next = Vec::with_capacity(n);
        for off in Odometer::new(&g.red_sizes, &g.red_strides, 0) {
            args.clear();
            args.extend_from_slice(&acc);
            args.extend(inputs.iter().map(|d| d.get(base + off)));
            call(&args, &mut next)?;
            if next.len() != n {
                return Err(internal("a reducer returned the wrong number of values"));
            }
            std::mem::swap(&mut acc, &mut next);
        }
        out.extend_from_slice(&acc);
        Ok(())
    };
    if let Some(p) = f.program(exec.module) {
        let per_task = (TASK / g.per_output.max(1)).max(1);
        let parts: Vec<R<Vec<Scalar>>> = (0..g.outputs.div_ceil(per_task))
            .into_par_iter()
            .map(|t| {
                let mut out = Vec::with_capacity(per_task * n);
                for o in t * per_task..((t + 1) * per_task).min(g.outputs) {
                    one_output(o, &mut |a, r| p.call(a, r), &mut out)?;
                }
                Ok(out)
            })
            .collect();
        let mut flat = Vec::with_capacity(g.outputs * n);
        for p in parts {
            flat.extend(p?);
        }
        return Ok(flat);
    }
    let mut flat = Vec::with_capacity(g.outputs * n);
    for o in 0..g.outputs {
        exec.env.check_deadline()?;
        let mut call = |a: &[Scalar], r: &mut Vec<Scalar>| f.call(exec, a, r);
        one_output(o, &mut call, &mut flat)?;
    }
    Ok(flat)
}

/// The typed loops of a recognised reducer.
struct Typed<'a> {
    g: &'a Geom,
}

impl Combiner for Typed<'_> {
    fn run<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, assoc: bool) -> R<Vec<T>> {
        let g = self.g;
        let mut out = vec![init; g.outputs];
        if g.outputs == 0 || g.per_output == 0 {
            return Ok(out);
        }
        if g.last_reduced {
            segments(g, x, &mut out, f, assoc, None);
        } else {
            rows(g, x, &mut out, f);
        }
        Ok(out)
    }

    fn run_lanes<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, lanes: RowFold<T>) -> R<Vec<T>> {
        let g = self.g;
        if !g.last_reduced || g.outputs == 0 || g.per_output == 0 {
            return self.run(x, init, f, true);
        }
        let mut out = vec![init; g.outputs];
        segments(g, x, &mut out, f, true, Some(lanes));
        Ok(out)
    }
}

/// Last dimension reduced: output `o` folds, in order, the contiguous
/// segments of length `inner` at its base plus each outer reduced offset.
fn segments<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(
    g: &Geom,
    x: &[T],
    out: &mut [T],
    f: F,
    assoc: bool,
    lanes: Option<RowFold<T>>,
) {
    let k = g.red_sizes.len() - 1;
    let inner = g.red_sizes[k];
    let (outer_sizes, outer_strides) = (&g.red_sizes[..k], &g.red_strides[..k]);
    let fold = |acc: T, seg: &[T]| match lanes.and_then(|l| l(acc, seg)) {
        Some(folded) => folded,
        None if assoc => fold_any_order(acc, seg, f),
        None => seg.iter().fold(acc, |a, &v| f(a, v)),
    };
    // Output `o` at `base`, the offset of its kept index.
    let one = |base: usize, acc: T| -> T {
        match outer_sizes {
            // One segment per output (a row): no odometer per row.
            [] => fold(acc, &x[base..base + inner]),
            _ => Odometer::new(outer_sizes, outer_strides, 0).fold(acc, |a, off| fold(a, &x[base + off..base + off + inner])),
        }
    };
    if assoc && g.outputs < 2 * rayon::current_num_threads() && g.per_output >= par::PARALLEL_THRESHOLD {
        // Few outputs, much work each: split each output's work.
        for (o, acc) in out.iter_mut().enumerate() {
            let base = Odometer::new(&g.kept_sizes, &g.kept_strides, o).next().unwrap_or(0);
            let segs = g.per_output / inner;
            let partial = if segs == 1 {
                let chunk = par::chunk_len(inner);
                let seg = &x[base..base + inner];
                let fold_chunk = |acc: &mut Option<T>, k: usize| {
                    let c = &seg[k * chunk..((k + 1) * chunk).min(inner)];
                    let folded = par::simd(
                        #[inline(always)]
                        || fold_any_order(c[0], &c[1..], f),
                    );
                    *acc = Some(acc.map_or(folded, |a| f(a, folded)));
                };
                par::tasks(inner.div_ceil(chunk), || None, fold_chunk).into_iter().flatten().reduce(f)
            } else {
                (0..segs)
                    .into_par_iter()
                    .with_min_len((TASK / inner).max(1))
                    .map(|s| {
                        let off = Odometer::new(outer_sizes, outer_strides, s).next().unwrap_or(0);
                        let seg = &x[base + off..base + off + inner];
                        par::simd(
                            #[inline(always)]
                            || fold_any_order(seg[0], &seg[1..], f),
                        )
                    })
                    .reduce_with(f)
            };
            if let Some(p) = partial {
                *acc = f(*acc, p);
            }
        }
        return;
    }
    let per_task = (TASK / g.per_output).max(1);
    let task = |t: usize, chunk: &mut [T]| {
        par::simd(
            #[inline(always)]
            || {
                // One odometer per task, stepped from output to output.
                let mut bases = Odometer::new(&g.kept_sizes, &g.kept_strides, t * per_task);
                for acc in chunk.iter_mut() {
                    *acc = one(bases.next().unwrap_or(0), *acc);
                }
            },
        )
    };
    if g.outputs * g.per_output < par::PARALLEL_THRESHOLD {
        for (t, chunk) in out.chunks_mut(per_task).enumerate() {
            task(t, chunk);
        }
    } else {
        out.par_chunks_mut(per_task).enumerate().for_each(|(t, chunk)| task(t, chunk));
    }
}

/// Last dimension kept: each block of an output row accumulates the
/// matching block of every reduced input row, in row-major reduced order.
fn rows<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(g: &Geom, x: &[T], out: &mut [T], f: F) {
    let k = g.kept_sizes.len() - 1;
    let row = g.kept_sizes[k];
    let (outer_sizes, outer_strides) = (&g.kept_sizes[..k], &g.kept_strides[..k]);
    let block = row.min(4096);
    let blocks_per_row = row.div_ceil(block);
    let task = |b: usize, chunk: &mut [T]| {
        let (r, j0) = (b / blocks_per_row, (b % blocks_per_row) * block);
        let base = Odometer::new(outer_sizes, outer_strides, r).next().unwrap_or(0) + j0;
        par::simd(
            #[inline(always)]
            || {
                for off in Odometer::new(&g.red_sizes, &g.red_strides, 0) {
                    let src = &x[base + off..base + off + chunk.len()];
                    for (a, &v) in chunk.iter_mut().zip(src) {
                        *a = f(*a, v);
                    }
                }
            },
        )
    };
    if g.outputs * g.per_output < par::PARALLEL_THRESHOLD {
        out.chunks_mut(row).flat_map(|r| r.chunks_mut(block)).enumerate().for_each(|(b, c)| task(b, c));
    } else if blocks_per_row == 1 {
        let per_task = (TASK / (row * g.per_output)).max(1);
        out.par_chunks_mut(row).enumerate().with_min_len(per_task).for_each(|(b, c)| task(b, c));
    } else {
        out.par_chunks_mut(row).enumerate().for_each(|(r, rr)| {
            rr.par_chunks_mut(block).enumerate().for_each(|(j, c)| task(r * blocks_per_row + j, c));
        });
    }
}
