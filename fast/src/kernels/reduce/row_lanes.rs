//! f32 and f64 row folds (Add, Max, Min) in AVX-512 or AVX2 lanes, in
//! exactly the order and grouping of [`super::fold_any_order`]: its 64
//! partial results are four (f32) or eight (f64) zmm vectors, or eight or
//! sixteen ymm ones, the first 64 values start them,
//! each later chunk of 64 is combined into them in position order, the
//! halving tree runs on whole vectors down to one vector and then on its
//! lanes, and the tail after the last whole chunk is folded in order last.
//! Rows of 32 to 127 values take its 16 partial results ([`SHORT_PARTS`]:
//! one to four vectors) the same way.
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

/// Partial results of `fold_any_order`.
pub(crate) const PARTS: usize = super::LANES;

/// Partial results of `fold_any_order` for rows shorter than two of
/// [`PARTS`]; rows shorter than two of these go to the portable fold (its
/// 8 partial results for rows of 16 to 31 have no lanes here).
pub(crate) const SHORT_PARTS: usize = super::SHORT_LANES;

/// A row-fold module for one element type and vector width, compiled for
/// `$features`; `$helpers` holds its exact `max`/`min` and `marks` (see
/// `plain`).
macro_rules! row_lanes {
    ($t:ty, $module:ident, $features:literal, $helpers:ident, $vec:ty, $lanes:expr, $loadu:ident, $storeu:ident, $add:ident,
     $max_ps:ident, $min_ps:ident) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $module {
            use super::$helpers::{marks, max, min};
            use super::{scalar, LaneOp, PARTS, SHORT_PARTS};
            use std::arch::x86_64::*;

            pub(crate) const VECTORS: usize = PARTS / $lanes;

            /// Vectors of [`SHORT_PARTS`] partial results.
            const SHORT: usize = SHORT_PARTS / $lanes;

            /// `fold_any_order`'s result before `acc` (see the module
            /// comment): its 64 partial results for `xs.len() >= 2 * PARTS`,
            /// else its 16 (`xs.len() >= 2 * SHORT_PARTS`); the CPU has
            /// `$features`.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn fold(op: LaneOp, xs: &[$t]) -> $t {
                if xs.len() >= 2 * PARTS {
                    fold_in::<VECTORS>(op, xs)
                } else {
                    fold_in::<SHORT>(op, xs)
                }
            }

            /// [`fold`] with `V` vectors of partial results.
            #[inline(always)]
            unsafe fn fold_in<const V: usize>(op: LaneOp, xs: &[$t]) -> $t {
                match op {
                    LaneOp::Add => exact::<V>(op, xs, |a, b| $add(a, b)),
                    LaneOp::Max => plain::<V>(op, xs, |a, b| $max_ps(a, b)).unwrap_or_else(|| exact::<V>(op, xs, |a, b| max(a, b))),
                    LaneOp::Min => plain::<V>(op, xs, |a, b| $min_ps(a, b)).unwrap_or_else(|| exact::<V>(op, xs, |a, b| min(a, b))),
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
            unsafe fn plain<const V: usize>(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec) -> Option<$t> {
                // QNaN, +0, -0, SNaN.
                let (folded, seen) = with::<V>(op, xs, f, |v| marks(v));
                (seen == 0).then_some(folded)
            }

            /// The fold with `f`, marking nothing.
            #[inline(always)]
            unsafe fn exact<const V: usize>(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec) -> $t {
                with::<V>(op, xs, f, |_| 0).0
            }

            /// The fold with `f` over `V` vectors of partial results
            /// (`xs` holds two of them at least), and the OR of `mark` over
            /// every vector it loaded.
            #[inline(always)]
            unsafe fn with<const V: usize>(op: LaneOp, xs: &[$t], f: impl Fn($vec, $vec) -> $vec, mark: impl Fn($vec) -> u32) -> ($t, u32) {
                let parts = V * $lanes;
                let p = xs.as_ptr();
                let mut part = [$loadu(p); V];
                for (k, v) in part.iter_mut().enumerate() {
                    *v = $loadu(p.add(k * $lanes));
                }
                let mut seen = part.iter().fold(0, |m, &v| m | mark(v));
                let chunks = (xs.len() - parts) / parts;
                for c in 1..=chunks {
                    for (k, v) in part.iter_mut().enumerate() {
                        // SAFETY (caller): chunk c ends at (c + 1)·parts <= len.
                        let x = $loadu(p.add(c * parts + k * $lanes));
                        seen |= mark(x);
                        *v = f(*v, x);
                    }
                }
                let folded = tree::<V>(op, part, f);
                (xs[(chunks + 1) * parts..].iter().fold(folded, |a, &x| scalar(op, a, x)), seen)
            }

            /// `fold_any_order`'s halving tree over its partial results
            /// held as `V` vectors: on whole vectors down to one, then on
            /// its lanes.
            #[inline(always)]
            unsafe fn tree<const V: usize>(op: LaneOp, mut part: [$vec; V], f: impl Fn($vec, $vec) -> $vec) -> $t {
                let mut width = V;
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
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn sum_partials(part: [$vec; VECTORS]) -> $t {
                tree::<VECTORS>(LaneOp::Add, part, |a, b| $add(a, b))
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod ymm;
#[cfg(target_arch = "x86_64")]
mod zmm;

row_lanes!(
    f32,
    f32_lanes,
    "avx512f,avx512dq",
    zmm,
    __m512,
    16,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_add_ps,
    _mm512_max_ps,
    _mm512_min_ps
);
row_lanes!(
    f64,
    f64_lanes,
    "avx512f,avx512dq",
    zmm,
    __m512d,
    8,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_add_pd,
    _mm512_max_pd,
    _mm512_min_pd
);
row_lanes!(f32, f32_ymm, "avx2,fma", ymm, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_add_ps, _mm256_max_ps, _mm256_min_ps);
row_lanes!(f64, f64_ymm, "avx2,fma", ymm, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_add_pd, _mm256_max_pd, _mm256_min_pd);

/// `fold_any_order(acc, xs, op)` in vector lanes (AVX-512, else AVX2);
/// None when the CPU has neither or the row is shorter than two of
/// [`SHORT_PARTS`] (the portable fold then folds it as it would).
macro_rules! public_fold {
    ($t:ty, $public:ident, $zmm:ident, $ymm:ident) => {
        pub(crate) fn $public(op: LaneOp, acc: $t, xs: &[$t]) -> Option<$t> {
            #[cfg(target_arch = "x86_64")]
            if xs.len() >= 2 * SHORT_PARTS && crate::isa::isa() >= crate::isa::Isa::Avx2 {
                // SAFETY: the length was checked, and `isa()` never
                // exceeds what the CPU has.
                let folded = unsafe {
                    if crate::isa::isa() >= crate::isa::Isa::Avx512 {
                        $zmm::fold(op, xs)
                    } else {
                        $ymm::fold(op, xs)
                    }
                };
                return Some(scalar(op, acc, folded));
            }
            let _ = (op, acc, xs);
            None
        }
    };
}

public_fold!(f32, fold_row_f32, f32_lanes, f32_ymm);
public_fold!(f64, fold_row_f64, f64_lanes, f64_ymm);

#[cfg(all(test, target_arch = "x86_64"))]
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
        for len in [0, 1, 15, 16, 31, 32, 33, 47, 48, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193, 255, 256, 512, 576, 1000, 1024, 4097] {
            for seed in 0..6u32 {
                let mut xs: Vec<f32> = (0..len as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 7.0 - 140.0).collect();
                if seed > 0 && len > 0 {
                    for k in 0..(seed as usize).min(len) {
                        let at = (k * 97 + seed as usize * 13) % len;
                        xs[at] = specials[(k + seed as usize) % specials.len()];
                    }
                }
                for op in [LaneOp::Add, LaneOp::Max, LaneOp::Min] {
                    let xd: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
                    let (want, want_d) = (portable(op, 0.5, &xs), fold_any_order(0.5, &xd, |a, b| scalar(op, a, b)));
                    for (got, got_d, isa) in [
                        (fold_row_f32(op, 0.5, &xs), fold_row_f64(op, 0.5, &xd), "dispatched"),
                        (ymm_fold(op, 0.5, &xs, f32_ymm::fold), ymm_fold(op, 0.5, &xd, f64_ymm::fold), "AVX2"),
                    ] {
                        let got = got.unwrap_or(want);
                        let same = got.to_bits() == want.to_bits() || (op == LaneOp::Add && got.is_nan() && want.is_nan());
                        assert!(same, "{isa} {op:?} over {len} values, seed {seed}: {got} against {want}");
                        let got = got_d.unwrap_or(want_d);
                        let same = got.to_bits() == want_d.to_bits() || (op == LaneOp::Add && got.is_nan() && want_d.is_nan());
                        assert!(same, "{isa} f64 {op:?} over {len} values, seed {seed}: {got} against {want_d}");
                    }
                }
            }
        }
    }

    /// The AVX2 fold whatever the ISA cap, where the CPU has AVX2 (an
    /// AVX-512 host's dispatch never reaches it).
    fn ymm_fold<T: crate::elem::float::Wide + std::ops::Add<Output = T>>(
        op: LaneOp,
        acc: T,
        xs: &[T],
        fold: unsafe fn(LaneOp, &[T]) -> T,
    ) -> Option<T> {
        let usable = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && xs.len() >= 2 * SHORT_PARTS;
        // SAFETY: the CPU has the features and the row is long enough.
        usable.then(|| scalar(op, acc, unsafe { fold(op, xs) }))
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
