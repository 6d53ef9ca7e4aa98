//! The exact Max and Min of the AVX-512 row folds, and their marks, on
//! mask registers.

use std::arch::x86_64::*;

/// A vector type's exact reducers (see [`max`], [`min`], [`marks`]).
pub(super) trait Exact: Copy {
    unsafe fn max(a: Self, b: Self) -> Self;
    unsafe fn min(a: Self, b: Self) -> Self;
    unsafe fn marks(v: Self) -> u32;
}

/// IEEE maximum as `elem::float::maximum`: NaN `a`, else NaN `b`, else the
/// greater, +0 over -0.
#[inline(always)]
pub(super) unsafe fn max<V: Exact>(a: V, b: V) -> V {
    V::max(a, b)
}

/// IEEE minimum as `elem::float::minimum`.
#[inline(always)]
pub(super) unsafe fn min<V: Exact>(a: V, b: V) -> V {
    V::min(a, b)
}

/// Nonzero when a lane holds a NaN or a zero (where the hardware's
/// `max`/`min` differ from [`max`]/[`min`]).
#[inline(always)]
pub(super) unsafe fn marks<V: Exact>(v: V) -> u32 {
    V::marks(v)
}

macro_rules! exact {
    ($vec:ty, $cmp:ident, $blend:ident, $movemask:ident, $cast:ident, $fpclass:ident) => {
        impl Exact for $vec {
            #[inline(always)]
            unsafe fn max(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let greater = $cmp::<_CMP_GT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = nan_a | (!nan_b & (greater | (equal & $movemask($cast(b)))));
                $blend(take_a, b, a)
            }

            #[inline(always)]
            unsafe fn min(a: $vec, b: $vec) -> $vec {
                let nan_a = $cmp::<_CMP_UNORD_Q>(a, a);
                let nan_b = $cmp::<_CMP_UNORD_Q>(b, b);
                let less = $cmp::<_CMP_LT_OQ>(a, b);
                let equal = $cmp::<_CMP_EQ_OQ>(a, b);
                let take_a = nan_a | (!nan_b & (less | (equal & $movemask($cast(a)))));
                $blend(take_a, b, a)
            }

            /// QNaN, +0, -0 and SNaN.
            #[inline(always)]
            unsafe fn marks(v: $vec) -> u32 {
                $fpclass::<0x87>(v) as u32
            }
        }
    };
}

exact!(__m512, _mm512_cmp_ps_mask, _mm512_mask_blend_ps, _mm512_movepi32_mask, _mm512_castps_si512, _mm512_fpclass_ps_mask);
exact!(__m512d, _mm512_cmp_pd_mask, _mm512_mask_blend_pd, _mm512_movepi64_mask, _mm512_castpd_si512, _mm512_fpclass_pd_mask);
