//! The AVX2 chain modules' operations that are more than one intrinsic:
//! AVX2 has no mask registers, so a block's tail masks become vector masks
//! here, and a marker's test a comparison. Inlined into the chain loops,
//! which enable AVX2 and FMA.

use std::arch::x86_64::*;

/// The vector mask of a tail mask's lanes (always the first `n`: see
/// `tail_masks`), eight 32-bit lanes.
#[inline(always)]
unsafe fn lanes32(mask: u8) -> __m256i {
    crate::elem::lanes8::first_lanes(mask.count_ones() as usize)
}

/// [`lanes32`] for four 64-bit lanes.
#[inline(always)]
unsafe fn lanes64(mask: u8) -> __m256i {
    _mm256_cmpgt_epi64(_mm256_set1_epi64x(i64::from(mask.count_ones())), _mm256_setr_epi64x(0, 1, 2, 3))
}

/// The lanes of `mask` from `p`, zeros elsewhere; masked-out lanes are not
/// read.
#[inline(always)]
pub(super) unsafe fn maskz_loadu_ps(mask: u8, p: *const f32) -> __m256 {
    match mask {
        u8::MAX => _mm256_loadu_ps(p),
        0 => _mm256_setzero_ps(),
        _ => _mm256_maskload_ps(p, lanes32(mask)),
    }
}

/// The lanes of `mask` to `p`; masked-out lanes are not written.
#[inline(always)]
pub(super) unsafe fn mask_storeu_ps(p: *mut f32, mask: u8, x: __m256) {
    match mask {
        u8::MAX => _mm256_storeu_ps(p, x),
        0 => {}
        _ => _mm256_maskstore_ps(p, lanes32(mask), x),
    }
}

/// [`maskz_loadu_ps`] for f64.
#[inline(always)]
pub(super) unsafe fn maskz_loadu_pd(mask: u8, p: *const f64) -> __m256d {
    _mm256_maskload_pd(p, lanes64(mask))
}

/// [`mask_storeu_ps`] for f64.
#[inline(always)]
pub(super) unsafe fn mask_storeu_pd(p: *mut f64, mask: u8, x: __m256d) {
    _mm256_maskstore_pd(p, lanes64(mask), x)
}

/// A Select link's lanes: where `v`'s marker is true (any bit set,
/// `choose.rs`) `b`, else `c`.
#[inline(always)]
pub(super) unsafe fn select_ps(v: __m256, b: __m256, c: __m256) -> __m256 {
    let zero = _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_setzero_si256());
    _mm256_blendv_ps(b, c, _mm256_castsi256_ps(zero))
}

/// [`select_ps`] for f64.
#[inline(always)]
pub(super) unsafe fn select_pd(v: __m256d, b: __m256d, c: __m256d) -> __m256d {
    let zero = _mm256_cmpeq_epi64(_mm256_castpd_si256(v), _mm256_setzero_si256());
    _mm256_blendv_pd(b, c, _mm256_castsi256_pd(zero))
}

/// An Exp link over a block, in place: the whole-array kernel's lanes.
#[inline(always)]
pub(super) unsafe fn exp_block<const N: usize>(v: &mut [__m256; N]) {
    for x in v.iter_mut() {
        *x = crate::elem::exp::lanes8::exp8(*x);
    }
}

/// A Tanh link over a block: the whole-array kernel's lanes, two vectors
/// in lockstep as the kernel runs them (`tanh8_n`: the same values). In
/// fours they spilled: `chain_costs`' Tanh link took 0.83-0.89 ns per
/// element against 0.76 in pairs and 1.27 one by one.
#[inline(always)]
pub(super) unsafe fn tanh_block<const N: usize>(v: &mut [__m256; N]) {
    use crate::elem::tanh::lanes8::{tanh8, tanh8_n};
    let mut k = 0;
    while k + 2 <= N {
        [v[k], v[k + 1]] = tanh8_n([v[k], v[k + 1]]);
        k += 2;
    }
    if k < N {
        v[k] = tanh8(v[k]);
    }
}

/// f64 Exp and Tanh have no lanes (see `zmm::no_lanes`).
#[inline(always)]
pub(super) unsafe fn no_lanes<const N: usize>(v: &mut [__m256d; N]) {
    *v = [_mm256_set1_pd(f64::NAN); N];
}
