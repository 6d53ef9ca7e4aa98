//! Compare and Select in the typed tiles (`tiles.rs`): the ReLU gradient
//! `select(x > 0, dy, 0)` and the masks of `jnp.where` run in a float
//! group's tiles instead of sending the whole group to the block runner.
//!
//! A Compare member's tile holds markers of the group's float type, not
//! `pred`s: [`FALSE`]'s bits are zero, [`yes`]'s are one. Select reads the
//! markers by their bits. A Compare of two marker tiles (a Compare of
//! Compares) orders them as `false < true`, as `pred`s are ordered, under
//! both the IEEE and the total order. Comparisons and choices are exact,
//! so the fused values are the op-by-op values bit for bit.

use xlaref_reference::ir::Direction;

use super::tiles::OnTile2;
use crate::elem::float::{order_key, FFloat, Wide};
use crate::kernels::elementwise::{BinaryUse, Side};
use crate::par;

/// The marker of a false comparison: all bits zero.
fn no<T: FFloat>() -> T {
    T::from_bits(0)
}

/// The marker of a true comparison: the smallest positive subnormal
/// (bits 1), greater than [`no`] under both orders.
fn yes<T: FFloat>() -> T {
    T::from_bits(1)
}

/// Compare's markers for a tile: `out[i]` holds the comparison of `a[i]`
/// and `b[i]` (IEEE on the wide values, or the total order's keys, as the
/// whole-array kernel compares). Returns the one marker when both sides
/// are one value (`out` untouched).
pub(super) fn compare_tile<T: FFloat>(d: Direction, total: bool, a: Side<T>, b: Side<T>, out: &mut [T]) -> Option<T> {
    if total {
        by_direction(d, a, b, out, order_key::<T>)
    } else {
        by_direction(d, a, b, out, |x: T| x.up().to_f64())
    }
}

fn by_direction<T: FFloat, K: PartialOrd>(
    d: Direction,
    a: Side<T>,
    b: Side<T>,
    out: &mut [T],
    key: impl Fn(T) -> K + Copy + Sync,
) -> Option<T> {
    match d {
        Direction::Eq => mark(a, b, out, move |x, y| key(x) == key(y)),
        Direction::Ne => mark(a, b, out, move |x, y| key(x) != key(y)),
        Direction::Lt => mark(a, b, out, move |x, y| key(x) < key(y)),
        Direction::Le => mark(a, b, out, move |x, y| key(x) <= key(y)),
        Direction::Gt => mark(a, b, out, move |x, y| key(x) > key(y)),
        Direction::Ge => mark(a, b, out, move |x, y| key(x) >= key(y)),
    }
}

fn mark<T: FFloat>(a: Side<T>, b: Side<T>, out: &mut [T], holds: impl Fn(T, T) -> bool + Copy + Sync) -> Option<T> {
    let (t, f) = (yes::<T>(), no::<T>());
    // The tiles' binary loop, with a function to markers.
    OnTile2 { a, b, out }.apply(move |x, y| if holds(x, y) { t } else { f })
}

/// Whether a marker is [`yes`].
fn holds<T: FFloat>(marker: T) -> bool {
    marker.bits() != 0
}

/// Whether a one-value predicate chooses the true side.
pub(super) fn chooses_true<T: FFloat>(marker: T) -> bool {
    holds(marker)
}

/// Select's values for a tile whose predicate varies: `out[i]` is `x[i]`
/// where the marker `p[i]` is true, else `y[i]`.
pub(super) fn select_tile<T: FFloat>(p: &[T], x: Side<T>, y: Side<T>, out: &mut [T]) {
    let pick = move |c: T, a: T, b: T| if holds(c) { a } else { b };
    match (x, y) {
        (Side::All(x), Side::All(y)) => par::simd(
            #[inline(always)]
            || {
                for (((o, &c), &a), &b) in out.iter_mut().zip(p).zip(x).zip(y) {
                    *o = pick(c, a, b);
                }
            },
        ),
        (Side::All(x), Side::One(b)) => par::simd(
            #[inline(always)]
            || {
                for ((o, &c), &a) in out.iter_mut().zip(p).zip(x) {
                    *o = pick(c, a, b);
                }
            },
        ),
        (Side::One(a), Side::All(y)) => par::simd(
            #[inline(always)]
            || {
                for ((o, &c), &b) in out.iter_mut().zip(p).zip(y) {
                    *o = pick(c, a, b);
                }
            },
        ),
        (Side::One(a), Side::One(b)) => par::simd(
            #[inline(always)]
            || {
                for (o, &c) in out.iter_mut().zip(p) {
                    *o = pick(c, a, b);
                }
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_order_as_preds_and_select_reads_them() {
        let x = [1.0f32, f32::NAN, -0.0, 0.0, -2.0];
        let mut m = [0f32; 5];
        assert_eq!(compare_tile(Direction::Gt, false, Side::All(&x), Side::One(0.0), &mut m), None);
        let got: Vec<bool> = m.iter().map(|&v| holds(v)).collect();
        assert_eq!(got, [true, false, false, false, false]);
        // Total order: -0 < +0, NaN (positive) above everything.
        compare_tile(Direction::Lt, true, Side::All(&x), Side::One(0.0), &mut m);
        let got: Vec<bool> = m.iter().map(|&v| holds(v)).collect();
        assert_eq!(got, [false, false, true, false, true]);
        // A Compare of markers: false < true.
        let (t, f) = (yes::<f32>(), no::<f32>());
        assert_eq!(compare_tile(Direction::Lt, false, Side::One(f), Side::One(t), &mut m), Some(t));
        assert_eq!(compare_tile(Direction::Lt, true, Side::One(t), Side::One(f), &mut m), Some(f));
        let mut out = [0f32; 5];
        let dy = [10.0f32, 20.0, 30.0, 40.0, 50.0];
        compare_tile(Direction::Gt, false, Side::All(&x), Side::One(0.0), &mut m);
        select_tile(&m, Side::All(&dy), Side::One(-0.0), &mut out);
        assert_eq!(out.map(f32::to_bits), [10.0f32, -0.0, -0.0, -0.0, -0.0].map(f32::to_bits));
        assert!(chooses_true(t) && !chooses_true(f));
    }
}
