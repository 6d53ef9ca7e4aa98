//! The exact Max and Min of the AVX2 row folds, and their marks: AVX2 has
//! no mask registers, so the conditions are vector masks, of which
//! `vblendvps` reads the sign bits.

use std::arch::x86_64::*;

use super::zmm::Exact;
pub(super) use super::zmm::{marks, max, min};

macro_rules! exact {
    ($vec:ty, $cmp:ident, $and:ident, $or:ident, $andnot:ident, $blendv:ident, $movemask:ident, $zero:ident) => {
        impl Exact for $vec {
            /// `take_a`'s sign bits: NaN `a`, or no NaN `b` and `a`
            /// greater, or equal and `b` negative (the sign of `b` itself).
            #[inline(always)]
            unsafe fn max(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let greater = $cmp::<_CMP_GT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = $or(nan_a, $andnot(nan_b, $or(greater, $and(equal, b))));
                $blendv(b, a, take_a)
            }

            #[inline(always)]
            unsafe fn min(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let less = $cmp::<_CMP_LT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = $or(nan_a, $andnot(nan_b, $or(less, $and(equal, a))));
                $blendv(b, a, take_a)
            }

            /// NaNs (either kind) and zeros (either sign).
            #[inline(always)]
            unsafe fn marks(v: $vec) -> u32 {
                $movemask($or($cmp::<_CMP_UNORD_Q>(v, v), $cmp::<_CMP_EQ_OQ>(v, $zero()))) as u32
            }
        }
    };
}

exact!(__m256, _mm256_cmp_ps, _mm256_and_ps, _mm256_or_ps, _mm256_andnot_ps, _mm256_blendv_ps, _mm256_movemask_ps, _mm256_setzero_ps);
exact!(__m256d, _mm256_cmp_pd, _mm256_and_pd, _mm256_or_pd, _mm256_andnot_pd, _mm256_blendv_pd, _mm256_movemask_pd, _mm256_setzero_pd);
