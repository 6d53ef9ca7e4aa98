//! f32 and f64 row folds (Add, Max, Min) in AVX-512 lanes, in exactly the
//! order and grouping of [`super::fold_any_order`]: its 64 partial results
//! are four (f32) or eight (f64) vectors, the first 64 values start them,
//! each later chunk of 64 is combined into them in position order, the
//! halving tree runs on whole vectors down to one vector and then on its
//! lanes, and the tail after the last whole chunk is folded in order last.
//! So a row folded here equals the portable fold bit for bit: Max and Min
//! pick the operand `maximum`/`minimum` pick, NaNs included; a sum of two
//! NaNs is some NaN either way (which one depends on the operand order the
//! compiler chose for each add, as everywhere in this engine).
//!
//! Why: `fold_any_order` reaches the reducers through generic iterator
//! code that the compiler did not always inline into the AVX-512 context,
//! so row folds ran in four SSE lanes: the row max of softmax's 8 MiB of
//! scores took 0.5 ms, twice its row sum.

use crate::elem::float::{maximum, minimum};

/// A reducer with lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneOp {
    Add,
    Max,
    Min,
}

/// The scalar reducer (the portable fold's `f` for f32 and f64).
#[inline(always)]
fn scalar<T: crate::elem::float::Wide + std::ops::Add<Output = T>>(op: LaneOp, a: T, b: T) -> T {
    match op {
        LaneOp::Add => a + b,
        LaneOp::Max => maximum(a, b),
        LaneOp::Min => minimum(a, b),
    }
}

/// Values of `fold_any_order` per partial result.
pub(crate) const PARTS: usize = 64;

macro_rules! row_lanes {
    ($t:ty, $module:ident, $public:ident, $vec:ty, $lanes:expr, $loadu:ident, $storeu:ident, $add:ident,
     $cmp:ident, $blend:ident, $movemask:ident, $cast:ident, $max_ps:ident, $min_ps:ident, $fpclass:ident) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $module {
            use super::{scalar, LaneOp, PARTS};
            use std::arch::x86_64::*;

            pub(crate) const VECTORS: usize = PARTS / $lanes;

            /// IEEE maximum as `elem::float::maximum`: NaN `a`, else NaN
            /// `b`, else the greater, +0 over -0.
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn max(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let greater = $cmp::<_CMP_GT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = nan_a | (!nan_b & (greater | (equal & $movemask($cast(b)))));
                $blend(take_a, b, a)
            }

            /// IEEE minimum as `elem::float::minimum`.
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn min(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let less = $cmp::<_CMP_LT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = nan_a | (!nan_b & (less | (equal & $movemask($cast(a)))));
                $blend(take_a, b, a)
            }

            /// `fold_any_order`'s result before `acc` (see the module
            /// comment); `xs.len() >= 2 * PARTS`, the CPU has AVX-512F/DQ.
            #[target_feature(enable = "avx512f,avx512dq")]
            pub(super) unsafe fn fold(op: LaneOp, xs: &[$t]) -> $t {
                match op {
                    LaneOp::Add => exact(op, xs, |a, b| $add(a, b)),
                    LaneOp::Max => plain(op, xs, |a, b| $max_ps(a, b)).unwrap_or_else(|| exact(op, xs, |a, b| max(a, b))),
                    LaneOp::Min => plain(op, xs, |a, b| $min_ps(a, b)).unwrap_or_else(|| exact(op, xs, |a, b| min(a, b))),
                }
            }

            /// Max or Min by the hardware's `max`/`min`, which equal
            /// `maximum`/`minimum` (bit for bit, operand for operand) but on
            /// NaNs and on a +0 met by a -0; None when the vector part of
            /// the row holds a NaN or a zero (the exact lanes then fold it
            /// again). The exact lanes cost five compares, three mask
            /// operations and a blend per vector: 103 ns per 512-value row
            /// against 25 for a sum.
            #[inline(always)]
            unsafe fn plain(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec) -> Option<$t> {
                // QNaN, +0, -0, SNaN.
                let (folded, seen) = with(op, xs, f, |v| $fpclass::<0x87>(v) as u32);
                (seen == 0).then_some(folded)
            }

            /// The fold with `f`, marking nothing.
            #[inline(always)]
            unsafe fn exact(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec) -> $t {
                with(op, xs, f, |_| 0).0
            }

            /// The fold with `f`, and the OR of `mark` over every vector
            /// it loaded.
            #[inline(always)]
            unsafe fn with(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec, mark: impl Fn($vec) -> u32) -> ($t, u32) {
                let p = xs.as_ptr();
                let mut part: [$vec; VECTORS] = std::array::from_fn(|k| $loadu(p.add(k * $lanes)));
                let mut seen = part.iter().fold(0, |m, &v| m | mark(v));
                let chunks = (xs.len() - PARTS) / PARTS;
                for c in 1..=chunks {
                    for (k, v) in part.iter_mut().enumerate() {
                        // SAFETY (caller): chunk c ends at (c + 1)·PARTS <= len.
                        let x = $loadu(p.add(c * PARTS + k * $lanes));
                        seen |= mark(x);
                        *v = f(*v, x);
                    }
                }
                let folded = tree(op, part, f);
                (xs[(chunks + 1) * PARTS..].iter().fold(folded, |a, &x| scalar(op, a, x)), seen)
            }

            /// `fold_any_order`'s halving tree over its 64 partial results
            /// held as vectors: on whole vectors down to one, then on its
            /// lanes.
            #[inline(always)]
            unsafe fn tree(op: LaneOp, mut part: [$vec; VECTORS], f: impl Fn($vec, $vec) -> $vec) -> $t {
                let mut width = VECTORS;
                while width > 1 {
                    width /= 2;
                    for k in 0..width {
                        part[k] = f(part[k], part[k + width]);
                    }
                }
                let mut lanes = [0.0 as $t; $lanes];
                $storeu(lanes.as_mut_ptr(), part[0]);
                let mut width = $lanes;
                while width > 1 {
                    width /= 2;
                    for k in 0..width {
                        lanes[k] = scalar(op, lanes[k], lanes[k + width]);
                    }
                }
                lanes[0]
            }

            /// The sum of 64 partial sums in `fold_any_order`'s tree (for
            /// the register row sums of `fusion/lanes.rs`).
            #[target_feature(enable = "avx512f,avx512dq")]
            pub(crate) unsafe fn sum_partials(part: [$vec; VECTORS]) -> $t {
                tree(LaneOp::Add, part, |a, b| $add(a, b))
            }
        }

        /// `fold_any_order(acc, xs, op)` in AVX-512 lanes; None when the
        /// CPU has no AVX-512 or the row is shorter than two chunks (the
        /// portable fold then folds in order, as it would).
        pub(crate) fn $public(op: LaneOp, acc: $t, xs: &[$t]) -> Option<$t> {
            #[cfg(target_arch = "x86_64")]
            if xs.len() >= 2 * PARTS && crate::isa::isa() >= crate::isa::Isa::Avx512 {
                // SAFETY: the length was checked, and `isa()` never
                // exceeds what the CPU has.
                let folded = unsafe { $module::fold(op, xs) };
                return Some(scalar(op, acc, folded));
            }
            let _ = (op, acc, xs);
            None
        }
    };
}

row_lanes!(
    f32,
    f32_lanes,
    fold_row_f32,
    __m512,
    16,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_add_ps,
    _mm512_cmp_ps_mask,
    _mm512_mask_blend_ps,
    _mm512_movepi32_mask,
    _mm512_castps_si512,
    _mm512_max_ps,
    _mm512_min_ps,
    _mm512_fpclass_ps_mask
);
row_lanes!(
    f64,
    f64_lanes,
    fold_row_f64,
    __m512d,
    8,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_add_pd,
    _mm512_cmp_pd_mask,
    _mm512_mask_blend_pd,
    _mm512_movepi64_mask,
    _mm512_castpd_si512,
    _mm512_max_pd,
    _mm512_min_pd,
    _mm512_fpclass_pd_mask
);

#[cfg(test)]
mod tests {
    use super::super::fold_any_order;
    use super::*;

    fn portable(op: LaneOp, acc: f32, xs: &[f32]) -> f32 {
        fold_any_order(acc, xs, |a, b| scalar(op, a, b))
    }

    /// Equal to the portable fold bit for bit on every length around the
    /// chunk boundaries, with NaNs, signed zeros and infinities mixed in.
    #[test]
    fn lanes_equal_the_portable_fold() {
        let snan = f32::from_bits(0x7f80_0001);
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN, snan, -0.0, 0.0];
        for len in [0, 1, 127, 128, 129, 191, 192, 193, 255, 256, 512, 576, 1000, 1024, 4097] {
            for seed in 0..6u32 {
                let mut xs: Vec<f32> = (0..len as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 7.0 - 140.0).collect();
                if seed > 0 && len > 0 {
                    for k in 0..(seed as usize).min(len) {
                        let at = (k * 97 + seed as usize * 13) % len;
                        xs[at] = specials[(k + seed as usize) % specials.len()];
                    }
                }
                for op in [LaneOp::Add, LaneOp::Max, LaneOp::Min] {
                    let want = portable(op, 0.5, &xs);
                    let got = fold_row_f32(op, 0.5, &xs).unwrap_or(want);
                    let same = got.to_bits() == want.to_bits() || (op == LaneOp::Add && got.is_nan() && want.is_nan());
                    assert!(same, "{op:?} over {len} values, seed {seed}: {got} against {want}");
                    let xd: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
                    let want = fold_any_order(0.5, &xd, |a, b| scalar(op, a, b));
                    let got = fold_row_f64(op, 0.5, &xd).unwrap_or(want);
                    let same = got.to_bits() == want.to_bits() || (op == LaneOp::Add && got.is_nan() && want.is_nan());
                    assert!(same, "f64 {op:?} over {len} values, seed {seed}: {got} against {want}");
                }
            }
        }
    }

    /// Cost of one 512-value row fold, L1-resident (`cargo test --release
    /// -p xlaref-fast --lib row_fold_costs -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn row_fold_costs() {
        let xs: Vec<f32> = (0..512).map(|i| (i as f32 * 0.37 + 0.1).sin()).collect();
        let mut with_zero = xs.clone();
        with_zero[100] = 0.0;
        for (op, row, what) in [(LaneOp::Add, &xs, ""), (LaneOp::Max, &xs, ""), (LaneOp::Max, &with_zero, ", a zero in the row")] {
            let reps = 200_000;
            let t = std::time::Instant::now();
            let mut acc = 0.0;
            for _ in 0..reps {
                acc += fold_row_f32(op, 0.0, std::hint::black_box(row)).unwrap_or(0.0);
            }
            eprintln!("{op:?}{what}: {:.1} ns per 512-value row", t.elapsed().as_secs_f64() * 1e9 / reps as f64);
            assert!(acc.is_finite());
            let want = fold_any_order(0.0, row, |a, b| scalar(op, a, b));
            assert_eq!(fold_row_f32(op, 0.0, row).map(f32::to_bits), Some(want.to_bits()));
        }
    }
}
