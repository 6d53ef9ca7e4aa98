//! f32 Atan2 of whole arrays in f64 lanes (AVX-512), eight at a time,
//! instead of a libm call per element.
//!
//! The accuracy argument is Erf's (`erf.rs`): the angle is computed in f64
//! with a relative error below `10⁻¹⁵` and rounded once to f32, so the
//! result is the reference's (`libm::atan2` in f64, rounded once) or, where
//! the angle lies that close to a midpoint between two f32s, its
//! neighbour. For `atan2(y, x)` with `a = |y|`, `b = |x|` (f32s, exact in
//! f64):
//! - `z = atan(lo/hi)` with `lo = min(a, b)`, `hi = max(a, b)`, so
//!   `lo/hi ∈ [0, 1]`. Where `lo/hi > tan(π/8)`,
//!   `atan(lo/hi) = π/4 + atan(u)` with `u = (lo − hi)/(lo + hi)` (both
//!   exact: `lo` and `hi` are f32s less than a factor 2.5 apart), else
//!   `u = lo/hi`; either way `|u| <= tan(π/8)`, one division.
//! - `atan(u) = u·P(u²)`, `P` a degree-10 Chebyshev fit (40-digit mpmath)
//!   of `atan(u)/u` on `u² ∈ [0, tan²(π/8)]`, relative error `7·10⁻¹⁷`.
//!   `π/4 + atan(u)` is at least `π/8`: no cancellation.
//! - The octant and quadrant: `π/2 − z` where `a > b`, then `π − z` where
//!   `x` is negative (its sign bit: `x = −0` counts), then `y`'s sign.
//!   Each result is at least half the larger term, so each subtraction
//!   keeps the relative error. The smallest results (`y/x` down to
//!   `10⁻⁸³`) are normal f64s; the one rounding makes them f32 zeros or
//!   subnormals.
//!
//! The special values follow from the same steps, as C's `atan2` defines
//! them: `±0/±0` is `u = 0` (so `atan2(±0, +0) = ±0`, `atan2(±0, −0) =
//! ±π`); a finite over an infinite magnitude is `u = 0` (`±0`, `±π`, or
//! `±π/2` when `y` is the infinite one); two infinities are taken as
//! `1/1` (`±π/4`, `±3π/4`). NaN operands take the reference's function
//! (the lanes patched after the vector step).
//!
//! A sample of argument pairs is checked in every test run
//! (`sampled_pairs_within_one_ulp`): none of two million random bit
//! patterns, nor of two million pairs with `|y|/|x|` in `[1, 5)`, differs
//! from the reference.

use crate::kernels::elementwise::Side;

/// f32 Atan2 of `y` over `x` (each all elements or one value): eight f64
/// lanes at a time where the CPU has AVX-512, the reference's function
/// ([`atan2_scalar`]) per element elsewhere.
pub fn atan2_f32_all(y: Side<f32>, x: Side<f32>) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all2(y, x, lanes::atan2_into, atan2_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each2_all(y, x, atan2_scalar)
}

/// [`atan2_f32_all`] into `out`, on this thread: the same function for
/// each element, for fused tiles and scalar programs.
pub fn atan2_f32_into(y: Side<f32>, x: Side<f32>, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into2(y, x, out, lanes::atan2_into, atan2_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each2_into(y, x, out, atan2_scalar);
}

/// The reference's f32 Atan2: `libm::atan2` in f64, rounded once.
pub fn atan2_scalar(y: f32, x: f32) -> f32 {
    libm::atan2(y as f64, x as f64) as f32
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use super::super::lanes2::each8;
    use crate::kernels::elementwise::Side;
    use std::arch::x86_64::*;
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    use std::mem::MaybeUninit;

    /// `atan(u)/u` in `s = u²` on `[0, tan²(π/8)]`, constant term first.
    #[allow(clippy::excessive_precision)]
    const P: [f64; 11] = [
        1.0,
        -0.3333333333332844,
        0.1999999999885511,
        -0.14285714180976467,
        0.11111106180455946,
        -0.09090773074808414,
        0.07689953496306857,
        -0.06640233930429408,
        0.056883492268090106,
        -0.04348052215716462,
        0.021135373157693246,
    ];
    /// `tan(π/8) = √2 − 1`.
    #[allow(clippy::excessive_precision)]
    const TAN_PI_8: f64 = 0.41421356237309503;

    /// `dst[i] = atan2(y[i], x[i])` for every `i < dst.len()`.
    ///
    /// # Safety
    /// The CPU has AVX-512F, DQ and VL (the masked eight-f32 loads and
    /// stores); whole operands are at least as long as `dst`.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
    pub unsafe fn atan2_into(y: Side<f32>, x: Side<f32>, dst: &mut [MaybeUninit<f32>]) {
        each8(y, x, dst, atan2_8, super::atan2_scalar)
    }

    /// Eight lanes of the method of the module comment, and the NaN lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn atan2_8(y: __m512d, x: __m512d) -> (__m512d, __mmask8) {
        let sign_bit = _mm512_set1_pd(-0.0);
        let one = _mm512_set1_pd(1.0);
        let inf = _mm512_set1_pd(f64::INFINITY);
        let (a, b) = (_mm512_andnot_pd(sign_bit, y), _mm512_andnot_pd(sign_bit, x));
        let both_inf = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, inf) & _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(b, inf);
        let (a, b) = (_mm512_mask_blend_pd(both_inf, a, one), _mm512_mask_blend_pd(both_inf, b, one));
        let (lo, hi) = (_mm512_min_pd(a, b), _mm512_max_pd(a, b));
        let far = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(lo, _mm512_mul_pd(hi, _mm512_set1_pd(TAN_PI_8)));
        let num = _mm512_mask_sub_pd(lo, far, lo, hi);
        let den = _mm512_mask_add_pd(hi, far, lo, hi);
        // 0/0 (two zeros) is u = 0.
        let u = _mm512_maskz_div_pd(_mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(den, _mm512_setzero_pd()), num, den);
        let s = _mm512_mul_pd(u, u);
        let mut p = _mm512_set1_pd(P[10]);
        for &c in P[..10].iter().rev() {
            p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(c));
        }
        let base = _mm512_maskz_mov_pd(far, _mm512_set1_pd(FRAC_PI_4));
        let z = _mm512_fmadd_pd(u, p, base);
        let z = _mm512_mask_sub_pd(z, _mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, b), _mm512_set1_pd(FRAC_PI_2), z);
        let x_negative = _mm512_movepi64_mask(_mm512_castpd_si512(x));
        let z = _mm512_mask_sub_pd(z, x_negative, _mm512_set1_pd(PI), z);
        let z = _mm512_or_pd(z, _mm512_and_pd(sign_bit, y));
        (z, _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ys: &[f32], xs: &[f32]) -> u64 {
        let got = atan2_f32_all(Side::All(ys), Side::All(xs));
        super::super::binary_differences("atan2", ys, xs, &got, atan2_scalar)
    }

    fn patterns(seed: u64, n: usize) -> Vec<f32> {
        super::super::xorshift_bits(seed, n).into_iter().map(f32::from_bits).collect()
    }

    /// Every pair of special and ordinary values is the reference's bits.
    #[test]
    fn special_values_are_the_reference_bits() {
        let values = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0,
            -1.0,
            0.5,
            -3.0,
            1e-45,
            -1e-45,
            f32::MAX,
            -f32::MAX,
            f32::MIN_POSITIVE,
            1e30,
            -1e-30,
        ];
        let (mut ys, mut xs) = (Vec::new(), Vec::new());
        for &y in &values {
            for &x in &values {
                ys.push(y);
                xs.push(x);
            }
        }
        let got = atan2_f32_all(Side::All(&ys), Side::All(&xs));
        for ((&y, &x), &g) in ys.iter().zip(&xs).zip(&got) {
            let want = atan2_scalar(y, x);
            let exact = y == 0.0 || x == 0.0 || y.is_infinite() || x.is_infinite();
            if exact {
                assert_eq!(g.to_bits(), want.to_bits(), "atan2({y:e}, {x:e}) = {g:e}, the reference {want:e}");
            }
        }
        assert_eq!(check(&ys, &xs), 0);
        // NaN operands take the reference's function, bit for bit.
        let nan = f32::from_bits(0x7fa0_0001);
        for (y, x) in [(nan, 1.0), (1.0, nan), (f32::NAN, nan), (-f32::NAN, 0.0)] {
            let g = atan2_f32_all(Side::One(y), Side::One(x))[0];
            assert_eq!(g.to_bits(), atan2_scalar(y, x).to_bits());
        }
    }

    /// Random bit patterns, random pairs of similar magnitude (where the
    /// reduction's branches meet), and a scalar against whole operands:
    /// within one ulp, and rarely one ulp off.
    #[test]
    fn sampled_pairs_within_one_ulp() {
        let n = 2_000_000;
        let (ys, xs) = (patterns(0x9e37_79b9_7f4a_7c15, n), patterns(0xd1b5_4a32_d192_ed03, n));
        let differ = check(&ys, &xs);
        eprintln!("atan2: {differ} of {n} random bit patterns one ulp off");
        assert!(differ * 1000 < n as u64, "{differ} of {n} differ");
        let near: Vec<f32> =
            ys.iter().zip(&xs).map(|(&y, &x)| (x.abs() * (1.0 + (y.to_bits() % 4096) as f32 / 1024.0)).copysign(y)).collect();
        let differ = check(&near, &xs);
        eprintln!("atan2: {differ} of {n} pairs with |y|/|x| in [1, 5) one ulp off");
        assert!(differ * 1000 < n as u64, "{differ} of {n} differ near |y| = |x|");
        let one = atan2_f32_all(Side::One(0.75), Side::All(&xs));
        let each = atan2_f32_all(Side::All(&vec![0.75; n]), Side::All(&xs));
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(one), bits(each));
    }
}
