//! Fast kernels for Reduce (`reduce.rs`), ReduceWindow (`window.rs`),
//! SelectAndScatter (`select_and_scatter.rs`) and Map (`map.rs`).
//!
//! A reducer recognised as one commutative binary op ([`Kind::Bin`]) runs
//! as a typed loop ([`Combiner`]); any other computation runs through its
//! compiled scalar [`crate::applied::Program`] (in parallel), or through the
//! executor when it does not compile. Orders of application follow the
//! reference (row-major over the reduced or window elements) except where
//! the op is associative (integers, max/min, logic), or for f32/f64 sums,
//! which are reassociated (chunked partial sums, within the tolerance
//! model's γ(n)·Σ|terms|).

#[cfg(test)]
mod boundary_tests;
mod map;
#[allow(clippy::module_inception)]
mod reduce;
pub(crate) mod row_lanes;
mod select_and_scatter;
mod window;

use xlaref_reference::ir::{BinaryOp, Op};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::RunError;

use crate::elem::float::{maximum, minimum, FFloat};
use crate::elem::int::FInt;
use crate::exec::Executor;
use crate::internal;

pub(crate) type R<T> = Result<T, RunError>;

/// A call of a scalar computation: arguments, results.
pub(crate) type Call<'a> = dyn FnMut(&[Scalar], &mut Vec<Scalar>) -> R<()> + 'a;

pub fn eval(exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    match op {
        Op::Reduce { computation, dimensions } => reduce::reduce(exec, *computation, dimensions, operands, shape),
        Op::ReduceWindow { computation, window } => window::reduce_window(exec, *computation, window, operands, shape),
        Op::SelectAndScatter { select, scatter, window } => {
            select_and_scatter::select_and_scatter(exec, *select, *scatter, window, operands, shape)
        }
        Op::Map { computation, .. } => map::map(exec, *computation, operands, shape),
        other => Err(internal(&format!("{} is not a reduce op", other.name()))),
    }
}

fn arrays<'a>(ls: &[&'a Literal]) -> R<Vec<&'a ArrayLiteral>> {
    ls.iter().map(|l| l.as_array().ok_or_else(|| internal("expected an array operand"))).collect()
}

/// The values of scalar operands (init values).
fn scalars(ls: &[&Literal]) -> R<Vec<Scalar>> {
    ls.iter().map(|l| l.as_array().and_then(Scalar::from_array).ok_or_else(|| internal("expected a scalar operand"))).collect()
}

/// The N result arrays' shapes: the shape itself for N = 1, the tuple's
/// elements otherwise.
fn result_shapes(shape: &Shape, n: usize) -> R<Vec<&ArrayShape>> {
    match shape {
        Shape::Array(a) if n == 1 => Ok(vec![a]),
        Shape::Tuple(t) if t.len() == n && n > 1 => {
            t.iter().map(|s| s.as_array().ok_or_else(|| internal("expected array results"))).collect()
        }
        _ => Err(internal("result shape does not match the number of operands")),
    }
}

/// One array, or a tuple of them.
fn collate(results: Vec<Data>, shapes: &[&ArrayShape]) -> Literal {
    let mut arrays: Vec<Literal> =
        results.into_iter().zip(shapes).map(|(data, &s)| ArrayLiteral::with_shape(s.clone(), data).into()).collect();
    if arrays.len() == 1 {
        arrays.swap_remove(0)
    } else {
        Literal::Tuple(arrays)
    }
}

/// Results computed as flat runs of scalars (`n` values per output, in
/// output order) gathered into N result arrays.
fn scatter_scalars(flat: &[Scalar], n: usize, shapes: &[&ArrayShape]) -> R<Vec<Data>> {
    let mut results: Vec<Data> = shapes.iter().map(|s| Data::zeros(s.element_type, s.element_count())).collect();
    for (pos, values) in flat.chunks_exact(n.max(1)).enumerate() {
        for (data, &v) in results.iter_mut().zip(values) {
            if pos >= data.len() || !data.set(pos, v) {
                return Err(internal("a reducer returned a value of another type"));
            }
        }
    }
    Ok(results)
}

/// An element type kernels loop over.
pub(crate) trait Elem: Stored + Copy + Send + Sync + 'static {}
impl<T: Stored + Copy + Send + Sync + 'static> Elem for T {}

/// A typed loop, instantiated by [`combine`] for one element type and one
/// combining function `f`. `assoc`: `f` may be applied in any order and
/// grouping (integers, max/min, logic, and f32/f64 Add by the tolerance
/// model); otherwise the reference's order must be kept.
pub(crate) trait Combiner {
    fn run<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, assoc: bool) -> R<Vec<T>>;

    /// [`Combiner::run`] for an associative `f` that also has a lane fold:
    /// `lanes(acc, row)` is `fold_any_order(acc, row, f)` bit for bit, or
    /// None (then the portable fold runs). Combiners that fold rows use it.
    fn run_lanes<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, lanes: RowFold<T>) -> R<Vec<T>>
    where
        Self: Sized,
    {
        let _ = lanes;
        self.run(x, init, f, true)
    }
}

/// A lane fold of rows (see [`Combiner::run_lanes`]).
pub(crate) type RowFold<T> = fn(T, &[T]) -> Option<T>;

pub(crate) use row_lanes::{fold_row_f32, fold_row_f64, LaneOp};

fn typed<T: Elem>(x: &[T], init: Scalar) -> Option<(&[T], T)> {
    let init = T::slice(&Data::from_scalars(init.element_type(), &[init]))?.first().copied()?;
    Some((x, init))
}

/// Runs `c` with the typed function of `op` on `x`'s element type and
/// `init` (None when this op/type pair has no typed loop).
pub(crate) fn combine<C: Combiner>(op: BinaryOp, x: &Data, init: Scalar, c: C) -> Option<R<Data>> {
    use BinaryOp::*;
    fn int<T: Elem + FInt + Ord + Stored, C: Combiner>(op: BinaryOp, xs: &[T], init: Scalar, c: C) -> Option<R<Data>> {
        let (xs, i) = typed(xs, init)?;
        let r = match op {
            Add => c.run(xs, i, |a, b| FInt::wadd(a, b), true),
            Mul => c.run(xs, i, |a, b| FInt::wmul(a, b), true),
            Max => c.run(xs, i, |a, b| Ord::max(a, b), true),
            Min => c.run(xs, i, |a, b| Ord::min(a, b), true),
            And => c.run(xs, i, |a, b| FInt::band(a, b), true),
            Or => c.run(xs, i, |a, b| FInt::bor(a, b), true),
            Xor => c.run(xs, i, |a, b| FInt::bxor(a, b), true),
            _ => return None,
        };
        Some(r.map(T::wrap))
    }
    fn pred<C: Combiner>(op: BinaryOp, xs: &[bool], init: Scalar, c: C) -> Option<R<Data>> {
        let (xs, i) = typed(xs, init)?;
        let r = match op {
            Add | Max | Or => c.run(xs, i, |a: bool, b: bool| a | b, true),
            Mul | Min | And => c.run(xs, i, |a: bool, b: bool| a & b, true),
            Xor => c.run(xs, i, |a: bool, b: bool| a ^ b, true),
            _ => return None,
        };
        Some(r.map(Data::Pred))
    }
    xlaref_reference::by_class!(x, xs => {
        pred: pred(op, xs, init, c),
        int: int(op, xs, init, c),
        float: {
            let (xs, i) = typed(xs, init)?;
            Some(float_combine(op, xs, i, c)?.map(Stored::wrap))
        },
        complex: None,
    })
}

/// Runs `c` with the typed function of float reducer `op` (None when the
/// op has no typed loop). Sums are reassociated in f32 and f64 only (the
/// tolerance model's bound covers them); narrower sums keep the order.
pub(crate) fn float_combine<T: FFloat + Elem, C: Combiner>(op: BinaryOp, xs: &[T], init: T, c: C) -> Option<R<Vec<T>>> {
    use BinaryOp::*;
    let sum_assoc = T::WIDTH >= 32;
    Some(match op {
        Add if sum_assoc => c.run_lanes(xs, init, |a: T, b: T| T::down(a.up() + b.up()), |acc, row| T::fold_row(LaneOp::Add, acc, row)),
        Add => c.run(xs, init, |a: T, b: T| T::down(a.up() + b.up()), false),
        Mul => c.run(xs, init, |a: T, b: T| T::down(a.up() * b.up()), false),
        Max => c.run_lanes(xs, init, |a: T, b: T| T::down(maximum(a.up(), b.up())), |acc, row| T::fold_row(LaneOp::Max, acc, row)),
        Min => c.run_lanes(xs, init, |a: T, b: T| T::down(minimum(a.up(), b.up())), |acc, row| T::fold_row(LaneOp::Min, acc, row)),
        _ => return None,
    })
}

/// Lanes of partial results in [`fold_any_order`]: enough independent
/// accumulators for the vector units to stay busy. The row lanes
/// (`row_lanes.rs`) keep the same ones.
pub(crate) const LANES: usize = 64;

/// [`fold_any_order`]'s partial results for rows shorter than two of
/// [`LANES`].
pub(crate) const SHORT_LANES: usize = 16;

/// [`fold_any_order`]'s partial results for rows shorter than two of
/// [`SHORT_LANES`] (shorter than two of these: in order).
const SHORTEST_LANES: usize = 8;

/// `f` over `acc` and all of `xs`, in any order and grouping (for an
/// associative, commutative `f`): `LANES` partial results the compiler
/// vectorizes, then combined. Rows too short for two values per partial
/// result take [`SHORT_LANES`] or [`SHORTEST_LANES`]: folded one by one, a row of 64 f32 was a
/// chain of 64 dependent adds (LayerNorm over f32[16384,64]: its two row
/// sums took most of the group's time, 1.9x XLA's).
#[inline(always)]
pub(crate) fn fold_any_order<T: Copy, F: Fn(T, T) -> T>(acc: T, xs: &[T], f: F) -> T {
    match xs.len() {
        n if n >= 2 * LANES => fold_parts::<T, F, LANES>(acc, xs, f),
        n if n >= 2 * SHORT_LANES => fold_parts::<T, F, SHORT_LANES>(acc, xs, f),
        n if n >= 2 * SHORTEST_LANES => fold_parts::<T, F, SHORTEST_LANES>(acc, xs, f),
        _ => xs.iter().fold(acc, |a, &x| f(a, x)),
    }
}

/// [`fold_any_order`] with `P` partial results: the first `P` values
/// start them, each later whole chunk of `P` adds to them in order, a
/// halving tree combines them, the rest of `xs` follows one by one, then
/// `acc` (`xs` holds at least `P` values).
#[inline(always)]
fn fold_parts<T: Copy, F: Fn(T, T) -> T, const P: usize>(acc: T, xs: &[T], f: F) -> T {
    let mut part: [T; P] = std::array::from_fn(|k| xs[k]);
    let mut chunks = xs[P..].chunks_exact(P);
    for c in &mut chunks {
        // A new array each step, not stores into `part`: the compiler then
        // keeps the partial results in vector registers (stored into, the
        // array stayed in memory and every step waited on a reload).
        part = std::array::from_fn(|k| f(part[k], c[k]));
    }
    let tail = chunks.remainder();
    let mut width = P;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            part[k] = f(part[k], part[k + width]);
        }
    }
    let folded = tail.iter().fold(part[0], |a, &x| f(a, x));
    f(acc, folded)
}

/// Row-major iteration over the linear offsets of a strided index space.
#[derive(Clone)]
pub(crate) struct Odometer<'a> {
    sizes: &'a [usize],
    strides: &'a [usize],
    /// The index, for spaces of up to [`INLINE`] dimensions: the row
    /// loops start one per row, and an allocation each cost a row sum of
    /// f32[16384,256] 35 ns a row (0.52 ms against XLA's 0.32).
    inline: [usize; INLINE],
    /// The index of a space of more dimensions.
    heap: Vec<usize>,
    offset: usize,
    done: bool,
}

/// Dimensions an [`Odometer`] indexes without allocating.
const INLINE: usize = 8;

impl<'a> Odometer<'a> {
    /// Starts at row-major position `start` of the space.
    pub fn new(sizes: &'a [usize], strides: &'a [usize], start: usize) -> Odometer<'a> {
        let heap = if sizes.len() > INLINE { vec![0; sizes.len()] } else { Vec::new() };
        let mut o = Odometer { sizes, strides, inline: [0; INLINE], heap, offset: 0, done: false };
        let mut rest = start;
        let mut offset = 0;
        let index = o.index();
        for d in (0..sizes.len()).rev() {
            let s = sizes[d].max(1);
            index[d] = rest % s;
            rest /= s;
            offset += index[d] * strides[d];
        }
        o.offset = offset;
        o.done = sizes.contains(&0) || rest > 0;
        o
    }

    /// The current position's index, one coordinate per dimension (what
    /// the next `next()` returns the offset of).
    pub fn coordinates(&self) -> &[usize] {
        match self.sizes.len() {
            n if n <= INLINE => &self.inline[..n],
            _ => &self.heap,
        }
    }

    fn index(&mut self) -> &mut [usize] {
        match self.sizes.len() {
            n if n <= INLINE => &mut self.inline[..n],
            _ => &mut self.heap,
        }
    }
}

impl Iterator for Odometer<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let current = self.offset;
        let (sizes, strides) = (self.sizes, self.strides);
        let mut offset = self.offset;
        let mut done = false;
        let index = self.index();
        let mut d = sizes.len();
        loop {
            if d == 0 {
                done = true;
                break;
            }
            d -= 1;
            index[d] += 1;
            offset += strides[d];
            if index[d] < sizes[d] {
                break;
            }
            offset -= index[d] * strides[d];
            index[d] = 0;
        }
        self.offset = offset;
        self.done = done;
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odometer_walks_row_major() {
        let all: Vec<usize> = Odometer::new(&[2, 3], &[10, 1], 0).collect();
        assert_eq!(all, vec![0, 1, 2, 10, 11, 12]);
        let from: Vec<usize> = Odometer::new(&[2, 3], &[10, 1], 4).collect();
        assert_eq!(from, vec![11, 12]);
        assert_eq!(Odometer::new(&[], &[], 0).count(), 1);
        assert_eq!(Odometer::new(&[3, 0], &[1, 1], 0).count(), 0);
        // More dimensions than the inline index holds.
        let sizes = [2usize; INLINE + 2];
        let strides: Vec<usize> = (0..INLINE + 2).rev().map(|d| 1 << d).collect();
        let all: Vec<usize> = Odometer::new(&sizes, &strides, 3).collect();
        assert_eq!(all, (3..1 << (INLINE + 2)).collect::<Vec<_>>());
    }

    #[test]
    fn fold_any_order_boundaries() {
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 2 * LANES - 1, 2 * LANES, 2 * LANES + 1, 1000] {
            let xs: Vec<u64> = (0..n as u64).collect();
            assert_eq!(fold_any_order(5, &xs, |a, b| a + b), 5 + xs.iter().sum::<u64>(), "n = {n}");
            assert_eq!(fold_any_order(0, &xs, |a, b| a.max(b)), xs.iter().copied().max().unwrap_or(0));
        }
    }
}
