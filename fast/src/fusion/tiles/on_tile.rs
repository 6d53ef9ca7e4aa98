//! Element functions over a tile's values: the tile runner's (and the
//! row pipeline's) way to apply the whole-array kernels' element functions
//! to slices, or to one value when the operands are one value.

use crate::kernels::elementwise::{BinaryUse, Side, UnaryUse};
use crate::par;

/// Probes whether an op has an element function, without running it.
pub(crate) struct Probe;
impl<T> BinaryUse<T> for Probe {
    type Out = ();
    fn apply<F: Fn(T, T) -> T + Copy + Sync>(self, _: F) {}
}
impl<T> UnaryUse<T> for Probe {
    type Out = ();
    fn apply<F: Fn(T) -> T + Copy + Sync>(self, _: F, _: bool) {}
}

/// A unary element function over a tile (one value for a one-value operand).
pub(crate) struct OnTile<'x, 'o, T> {
    pub x: Side<'x, T>,
    pub out: &'o mut [T],
}

impl<T: Copy + Sync> UnaryUse<T> for OnTile<'_, '_, T> {
    type Out = Option<T>;
    fn apply<F: Fn(T) -> T + Copy + Sync>(self, f: F, _heavy: bool) -> Option<T> {
        let Side::All(v) = self.x else {
            let Side::One(x) = self.x else { return None };
            return Some(f(x));
        };
        let out = self.out;
        par::simd(
            #[inline(always)]
            || {
                for (o, &x) in out.iter_mut().zip(v) {
                    *o = f(x);
                }
            },
        );
        None
    }
}

/// A binary element function over a tile.
/// `into(a, b)` for a tile: into `out`, or the one value of two single
/// operands.
pub(crate) fn pair_into<T: Copy + Default>(into: fn(Side<T>, Side<T>, &mut [T]), a: Side<T>, b: Side<T>, out: &mut [T]) -> Option<T> {
    if let (Side::One(x), Side::One(y)) = (a, b) {
        return Some(crate::elem::one2(into, x, y));
    }
    into(a, b, out);
    None
}

pub(crate) struct OnTile2<'x, 'o, T> {
    pub a: Side<'x, T>,
    pub b: Side<'x, T>,
    pub out: &'o mut [T],
}

impl<T: Copy + Sync> BinaryUse<T> for OnTile2<'_, '_, T> {
    type Out = Option<T>;
    fn apply<F: Fn(T, T) -> T + Copy + Sync>(self, f: F) -> Option<T> {
        let out = self.out;
        match (self.a, self.b) {
            (Side::One(x), Side::One(y)) => return Some(f(x, y)),
            (Side::All(x), Side::All(y)) => par::simd(
                #[inline(always)]
                || {
                    for ((o, &p), &q) in out.iter_mut().zip(x).zip(y) {
                        *o = f(p, q);
                    }
                },
            ),
            (Side::All(x), Side::One(q)) => par::simd(
                #[inline(always)]
                || {
                    for (o, &p) in out.iter_mut().zip(x) {
                        *o = f(p, q);
                    }
                },
            ),
            (Side::One(p), Side::All(y)) => par::simd(
                #[inline(always)]
                || {
                    for (o, &q) in out.iter_mut().zip(y) {
                        *o = f(p, q);
                    }
                },
            ),
        }
        None
    }
}
