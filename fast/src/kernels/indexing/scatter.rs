//! Scatter in two passes: first every update element's target (its
//! operand index, or none when the index is invalid), in the order updates
//! are applied, in parallel; then the updates applied one at a time in that
//! order — natively when `update_computation` is a recognised assignment
//! or Add/Mul/Max/Min of its two parameters, through [`ScalarFn`] otherwise.

use num_complex::Complex;
use rayon::prelude::*;
use xlaref_reference::ir::{BinaryOp, ComputationId, Op, ScatterDims};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::scalar::Scalar;

use super::{batch_position, internal, with_index, IndexElem, IndexLayout, R};
use crate::applied::ScalarFn;
use crate::elem::complex::{self as cx, Part};
use crate::elem::float::{maximum, minimum, FFloat};
use crate::elem::int::FInt;
use crate::exec::Executor;
use crate::kernels::shape_ops::strides_of;
use crate::par;

/// The target of an update element that is skipped.
const SKIP: usize = usize::MAX;

/// The index spaces of one Scatter.
struct Plan {
    rank: usize,
    odims: Vec<i64>,
    ostrides: Vec<usize>,
    /// Update strides of the scatter dimensions (one per dimension of `G`)
    /// and of the window dimensions.
    scatter_ustrides: Vec<usize>,
    window_ustrides: Vec<usize>,
    window_bounds: Vec<usize>,
    /// `window_dims_to_operand_dims`, `scatter_dims_to_operand_dims`.
    window_to_operand: Vec<usize>,
    scatter_to_operand: Vec<usize>,
    /// (operand dimension, dimension of `G`) of each batching pair.
    batching: Vec<(usize, usize)>,
    layout: IndexLayout,
}

/// Scatter (document §Scatter; semantics-decisions: invalid elements are
/// skipped one by one, updates applied scatter index major, then window
/// index, in row-major order).
pub fn scatter(
    exec: &mut Executor,
    operands: &[&ArrayLiteral],
    indices: &ArrayLiteral,
    updates: &[&ArrayLiteral],
    d: &ScatterDims,
    update_computation: ComputationId,
) -> R<Literal> {
    let n = operands.len();
    let (Some(&operand), Some(&update)) = (operands.first(), updates.first()) else {
        return Err(internal("Scatter has N >= 1 operands and updates"));
    };
    if updates.len() != n {
        return Err(internal("Scatter has as many updates as operands"));
    }
    let rank = operand.rank();
    let ustrides = strides_of(update.dims());
    let is_window = |i: usize| d.update_window_dims.contains(&(i as i64));
    let is_inserted = |i: usize| d.inserted_window_dims.contains(&(i as i64)) || d.input_batching_dims.contains(&(i as i64));
    let layout = IndexLayout::new(indices, d.index_vector_dim)?;
    let scatter_dims: Vec<usize> = (0..update.rank()).filter(|&i| !is_window(i)).collect();
    let window_dims: Vec<usize> = d.update_window_dims.iter().map(|&i| i as usize).collect();
    let plan = Plan {
        rank,
        odims: operand.dims().to_vec(),
        ostrides: strides_of(operand.dims()).iter().map(|&s| s as usize).collect(),
        scatter_ustrides: scatter_dims.iter().map(|&i| ustrides[i] as usize).collect(),
        window_ustrides: window_dims.iter().map(|&i| ustrides[i] as usize).collect(),
        window_bounds: window_dims.iter().map(|&i| update.dims()[i] as usize).collect(),
        window_to_operand: (0..rank).filter(|&i| !is_inserted(i)).collect(),
        scatter_to_operand: d.scatter_dims_to_operand_dims.iter().map(|&i| i as usize).collect(),
        batching: d
            .input_batching_dims
            .iter()
            .zip(&d.scatter_indices_batching_dims)
            .map(|(&o, &i)| (o as usize, batch_position(i, d.index_vector_dim)))
            .collect(),
        layout,
    };
    let scatter_bounds: Vec<usize> = scatter_dims.iter().map(|&i| update.dims()[i] as usize).collect();
    if plan.window_to_operand.len() != window_dims.len()
        || plan.scatter_to_operand.len() != plan.layout.vector_size
        || plan.scatter_to_operand.iter().chain(&plan.window_to_operand).any(|&i| i >= rank)
        || plan.batching.iter().any(|&(o, p)| o >= rank || p >= scatter_bounds.len())
        || scatter_bounds != plan.layout.batch_dims
    {
        return Err(internal("scatter dimension numbers do not fit the shapes"));
    }

    let mut outputs: Vec<ArrayLiteral> = operands.iter().map(|&o| o.clone()).collect();
    let window: usize = plan.window_bounds.iter().product();
    let count = plan.layout.count();
    if window > 0 && count > 0 && operand.element_count() > 0 {
        let targets = with_index!(&indices.data, v => targets(v, &plan, count, window)?);
        apply(exec, &mut outputs, updates, &targets, update_computation)?;
    }
    Ok(if n == 1 { outputs.remove(0).into() } else { Literal::Tuple(outputs.into_iter().map(Literal::from).collect()) })
}

/// `(update position, operand position or SKIP)` of every update element,
/// in application order: slot `g * window + w`.
fn targets<I: IndexElem>(v: &[I], plan: &Plan, count: usize, window: usize) -> R<Vec<(usize, usize)>> {
    let layout = &plan.layout;
    let needed = if layout.vector_size == 0 { 0 } else { layout.start(count - 1) + (layout.vector_size - 1) * layout.inner + 1 };
    if needed > v.len() {
        return Err(internal("index vector out of range"));
    }
    let mut out = vec![(0usize, SKIP); count.checked_mul(window).ok_or_else(|| internal("scatter size"))?];
    // Dimensions outside the window must hold S_in itself.
    let mut in_window = vec![false; plan.rank];
    for &o in &plan.window_to_operand {
        in_window[o] = true;
    }
    // Fills the slots of the batch indices `first..`, buffers reused.
    let fill = |first: usize, group: &mut [(usize, usize)]| {
        let mut s_in = vec![0i64; plan.rank];
        let mut bounds = vec![(0usize, 0usize); plan.window_bounds.len()];
        let mut w = vec![0usize; plan.window_bounds.len()];
        for (dg, slots) in group.chunks_mut(window).enumerate() {
            let g = first + dg;
            // S_in: the index vector through scatter_dims_to_operand_dims, batching coordinates from G.
            s_in.fill(0);
            let at = layout.start(g);
            for (j, &m) in plan.scatter_to_operand.iter().enumerate() {
                s_in[m] = v[at + j * layout.inner].get();
            }
            for &(o, p) in &plan.batching {
                s_in[o] = layout.coordinate(g, p) as i64;
            }
            if (0..plan.rank).any(|o| !in_window[o] && !(0..plan.odims[o]).contains(&s_in[o])) {
                continue;
            }
            // Window dimension k is valid for w_k in [lo_k, hi_k).
            for ((b, &o), &size) in bounds.iter_mut().zip(&plan.window_to_operand).zip(&plan.window_bounds) {
                let (s, dim) = (s_in[o] as i128, plan.odims[o] as i128);
                *b = ((-s).clamp(0, size as i128) as usize, (dim - s).clamp(0, size as i128) as usize);
            }
            if bounds.iter().any(|&(lo, hi)| lo >= hi) {
                continue;
            }
            // Linear positions, wrapping: exact whenever the index is valid.
            let base = s_in.iter().zip(&plan.ostrides).fold(0usize, |acc, (&s, &st)| acc.wrapping_add((s as usize).wrapping_mul(st)));
            let ug: usize = (0..layout.batch_dims.len()).map(|p| layout.coordinate(g, p) * plan.scatter_ustrides[p]).sum();
            w.fill(0);
            for slot in slots.iter_mut() {
                if w.iter().zip(&bounds).all(|(&c, &(lo, hi))| c >= lo && c < hi) {
                    let mut i = base;
                    let mut u = ug;
                    for (k, &c) in w.iter().enumerate() {
                        i = i.wrapping_add(c * plan.ostrides[plan.window_to_operand[k]]);
                        u += c * plan.window_ustrides[k];
                    }
                    *slot = (u, i);
                }
                for k in (0..w.len()).rev() {
                    w[k] += 1;
                    if w[k] < plan.window_bounds[k] {
                        break;
                    }
                    w[k] = 0;
                }
            }
        }
    };
    if out.len() < par::PARALLEL_THRESHOLD {
        fill(0, &mut out);
    } else {
        let per_task = (par::PARALLEL_THRESHOLD / window).max(1);
        out.par_chunks_mut(per_task * window).enumerate().for_each(|(t, group)| fill(t * per_task, group));
    }
    Ok(out)
}

/// A recognised update computation of one operand.
#[derive(Clone, Copy)]
enum Native {
    /// Returns its first parameter: the operand is unchanged.
    Keep,
    /// Returns its second parameter: the update is stored.
    Replace,
    /// `op(old, update)`, or `op(update, old)` when swapped.
    Binary(BinaryOp, bool),
}

fn recognize(exec: &Executor, id: ComputationId) -> Option<Native> {
    let c = exec.module.computation(id);
    if c.param_count != 2 {
        return None;
    }
    let param = |i: usize| (i < c.param_count && matches!(c.instructions[i].op, Op::Parameter { number } if number == i)).then_some(i);
    let root = c.instructions.get(c.root)?;
    match &root.op {
        Op::Parameter { .. } => Some(if param(c.root)? == 0 { Native::Keep } else { Native::Replace }),
        Op::Binary { op: op @ (BinaryOp::Add | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min), .. } => {
            let (a, b) = (param(*root.operands.first()?)?, param(*root.operands.get(1)?)?);
            (a != b).then_some(Native::Binary(*op, a == 1))
        }
        _ => None,
    }
}

/// Applies the updates at their targets, in order.
fn apply(
    exec: &mut Executor,
    outputs: &mut [ArrayLiteral],
    updates: &[&ArrayLiteral],
    targets: &[(usize, usize)],
    id: ComputationId,
) -> R<()> {
    // The planted bug (tests only) calls the update computation with
    // (update, current) instead of (current, update).
    let swapped = crate::planted::active(crate::planted::Bug::ScatterSwapsOperands);
    if let (false, Some(native), [out], [upd]) = (swapped, recognize(exec, id), &mut *outputs, updates) {
        if apply_native(native, &mut out.data, &upd.data, targets) {
            return Ok(());
        }
    }
    let f = ScalarFn::new(id);
    let n = outputs.len();
    let mut args: Vec<Scalar> = Vec::with_capacity(2 * n);
    let mut results: Vec<Scalar> = Vec::with_capacity(n);
    for &(u, i) in targets {
        if i == SKIP {
            continue;
        }
        if xlaref_reference::watch::tick(8) {
            break;
        }
        args.clear();
        if swapped {
            args.extend(updates.iter().map(|x| x.data.get(u)));
            args.extend(outputs.iter().map(|o| o.data.get(i)));
        } else {
            args.extend(outputs.iter().map(|o| o.data.get(i)));
            args.extend(updates.iter().map(|x| x.data.get(u)));
        }
        f.call(exec, &args, &mut results)?;
        if results.len() != n {
            return Err(internal("update_computation returns N values"));
        }
        for (o, &r) in outputs.iter_mut().zip(&results) {
            if !o.data.set(i, r) {
                return Err(internal("update_computation returned a value of another type"));
            }
        }
    }
    Ok(())
}

/// `out[i] = f(out[i], upd[u])` (or `f(upd[u], out[i])` when swapped).
fn run<T: Copy>(out: &mut [T], upd: &[T], targets: &[(usize, usize)], swap: bool, f: impl Fn(T, T) -> T) -> bool {
    for &(u, i) in targets {
        if i != SKIP {
            out[i] = if swap { f(upd[u], out[i]) } else { f(out[i], upd[u]) };
        }
    }
    true
}

fn int_apply<T: FInt>(f: Native, out: &mut [T], upd: &[T], t: &[(usize, usize)]) -> bool {
    match f {
        Native::Keep => true,
        Native::Replace => run(out, upd, t, false, |_, b| b),
        Native::Binary(op, swap) => match op {
            BinaryOp::Add => run(out, upd, t, swap, T::wadd),
            BinaryOp::Mul => run(out, upd, t, swap, T::wmul),
            BinaryOp::Max => run(out, upd, t, swap, |a, b| a.max(b)),
            BinaryOp::Min => run(out, upd, t, swap, |a, b| a.min(b)),
            _ => false,
        },
    }
}

fn float_apply<T: FFloat>(f: Native, out: &mut [T], upd: &[T], t: &[(usize, usize)]) -> bool {
    match f {
        Native::Keep => true,
        Native::Replace => run(out, upd, t, false, |_, b| b),
        Native::Binary(op, swap) => match op {
            BinaryOp::Add => run(out, upd, t, swap, |a: T, b: T| T::down(a.up() + b.up())),
            BinaryOp::Mul => run(out, upd, t, swap, |a: T, b: T| T::down(a.up() * b.up())),
            BinaryOp::Max => run(out, upd, t, swap, |a: T, b: T| T::down(maximum(a.up(), b.up()))),
            BinaryOp::Min => run(out, upd, t, swap, |a: T, b: T| T::down(minimum(a.up(), b.up()))),
            _ => false,
        },
    }
}

fn pred_apply(f: Native, out: &mut [bool], upd: &[bool], t: &[(usize, usize)]) -> bool {
    match f {
        Native::Keep => true,
        Native::Replace => run(out, upd, t, false, |_, b| b),
        Native::Binary(BinaryOp::Add | BinaryOp::Max, swap) => run(out, upd, t, swap, |a, b| a | b),
        Native::Binary(BinaryOp::Mul | BinaryOp::Min, swap) => run(out, upd, t, swap, |a, b| a & b),
        Native::Binary(..) => false,
    }
}

fn complex_apply<P: Part>(f: Native, out: &mut [Complex<P>], upd: &[Complex<P>], t: &[(usize, usize)]) -> bool {
    match f {
        Native::Keep => true,
        Native::Replace => run(out, upd, t, false, |_, b| b),
        Native::Binary(BinaryOp::Add, swap) => run(out, upd, t, swap, |a, b| P::down(P::up(a) + P::up(b))),
        Native::Binary(BinaryOp::Mul, swap) => run(out, upd, t, swap, |a, b| P::down(cx::mul(P::up(a), P::up(b)))),
        Native::Binary(BinaryOp::Max, swap) => run(out, upd, t, swap, |a, b| P::down(cx::max(P::up(a), P::up(b)))),
        Native::Binary(BinaryOp::Min, swap) => run(out, upd, t, swap, |a, b| P::down(cx::min(P::up(a), P::up(b)))),
        Native::Binary(..) => false,
    }
}

/// The native update of one operand; false when the type has no native
/// version of the computation.
fn apply_native(f: Native, out: &mut Data, upd: &Data, t: &[(usize, usize)]) -> bool {
    xlaref_reference::by_class2!((out, upd), (o, u) => {
        pred: pred_apply(f, o, u, t),
        int: int_apply(f, o, u, t),
        float: float_apply(f, o, u, t),
        complex: complex_apply(f, o, u, t),
    } else false)
}
