//! The AVX-512 chain modules' operations that are more than one
//! intrinsic. Inlined into the chain loops, which enable AVX-512.

use std::arch::x86_64::*;

/// A Select link's lanes: where `v`'s marker is true (any bit set,
/// `choose.rs`) `b`, else `c`.
#[inline(always)]
pub(super) unsafe fn select_ps(v: __m512, b: __m512, c: __m512) -> __m512 {
    let bits = _mm512_castps_si512(v);
    _mm512_mask_blend_ps(_mm512_test_epi32_mask(bits, bits), c, b)
}

/// [`select_ps`] for f64.
#[inline(always)]
pub(super) unsafe fn select_pd(v: __m512d, b: __m512d, c: __m512d) -> __m512d {
    let bits = _mm512_castpd_si512(v);
    _mm512_mask_blend_pd(_mm512_test_epi64_mask(bits, bits), c, b)
}

/// An Exp link over a block, in place (a copy in and out cost two
/// `memcpy` calls a block): the whole-array kernel's lanes.
#[inline(always)]
pub(super) unsafe fn exp_block<const N: usize>(v: &mut [__m512; N]) {
    for x in v.iter_mut() {
        *x = crate::elem::exp::lanes::exp16_tabled(*x);
    }
}

/// A Tanh link over a block: the whole-array kernel's lanes.
#[inline(always)]
pub(super) unsafe fn tanh_block<const N: usize>(v: &mut [__m512; N]) {
    for x in v.iter_mut() {
        *x = crate::elem::tanh::lanes::tanh16(*x);
    }
}

/// f64 Exp and Tanh have no lanes: `has_link` keeps them out of f64
/// chains, and `run_chain` refuses a chain with one.
#[inline(always)]
pub(super) unsafe fn no_lanes<const N: usize>(v: &mut [__m512d; N]) {
    *v = [_mm512_set1_pd(f64::NAN); N];
}
