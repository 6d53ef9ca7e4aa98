//! f32 Pow of whole arrays in f64 lanes (AVX-512), eight at a time,
//! instead of a libm call per element.
//!
//! The accuracy argument is Erf's (`erf.rs`): `|x|^y` is computed in f64
//! with a relative error below `2·10⁻¹³` and rounded once to f32, so the
//! result is the reference's (`libm::pow` in f64, rounded once) or, where
//! `|x|^y` lies that close to a midpoint between two f32s, its neighbour.
//! `|x|^y = 2^w` with `w = y·log₂|x|`:
//! - `|x| = m·2^e` with `m ∈ [√½, √2)` (`vgetmantpd`, `vgetexppd`, one
//!   halving), `log₂ m = (2/ln 2)·atanh(f)`, `f = (m − 1)/(m + 1)` (one
//!   rounding: `m ± 1` are exact for an f32's `m`), `|f| <= 0.172`, and
//!   `atanh(f) = f·Σ f²ᵏ/(2k + 1)` to `k = 10` (the rest is below
//!   `3·10⁻¹⁷` of it). `log₂|x| = e + log₂ m` then has a relative error
//!   of a few `10⁻¹⁶` (near `|x| = 1` too, where `e = 0`).
//! - Only `|w| <= 150` matters (beyond, the f32 result is 0 or infinite;
//!   `w` is clamped to ±200), so the error of `y·log₂|x|` is at most
//!   `150·10⁻¹⁵` absolute, `10⁻¹³` relative in `2^w`.
//! - `2^w = 2^n·2^r` with `n = round(w)`, `r = w − n` exact, `|r| <= ½`;
//!   `2^r` is its Taylor polynomial `Σ (r ln 2)ᵏ/k!` to `k = 13`
//!   (truncation below `10⁻¹⁷`), scaled by `2^n` (`vscalefpd`, exact; the
//!   one rounding to f32 makes overflow infinite and handles subnormal
//!   and zero results).
//!
//! The special cases are C's `pow` (libm's, the reference's), in lanes:
//! `x^±0 = 1` and `1^y = 1`; a negative `x` with an integer `y` has the
//! sign of `(−1)^y` (`y` odd: `y` and `y/2` tested against their
//! rounding), with a non-integer `y` it is NaN; `|x| ∈ {0, inf}` gives 0 or
//! inf by the signs of `y` and `log|x|`, negative for a negative `x` and
//! an odd `y`; `(±1)^±inf = 1`, other `|x|^±inf` follow from `w = ±inf`.
//! NaN operands take the reference's function (the lanes patched after
//! the vector step), so a signaling NaN is quieted as [`super::float::pow`]
//! defines.
//!
//! A sample of argument pairs is checked in every test run
//! (`sampled_pairs_within_one_ulp`): of a million random pairs with
//! finite nonzero results, none differs from the reference; of a million
//! with negative bases and integer exponents, 2; none of a million bases
//! near 1 with exponents up to `2·10⁸`, nor of a million random bit
//! patterns.

use crate::kernels::elementwise::Side;

/// f32 Pow (each operand all elements or one value): eight f64 lanes at a
/// time where the CPU has AVX-512, the reference's function
/// ([`pow_scalar`]) per element elsewhere.
pub fn pow_f32_all(x: Side<f32>, y: Side<f32>) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all2(x, y, lanes::pow_into, pow_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each2_all(x, y, pow_scalar)
}

/// [`pow_f32_all`] into `out`, on this thread: the same function for each
/// element, for fused tiles and scalar programs.
pub fn pow_f32_into(x: Side<f32>, y: Side<f32>, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into2(x, y, out, lanes::pow_into, pow_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each2_into(x, y, out, pow_scalar);
}

/// The reference's f32 Pow: a signaling NaN operand (`x` first) quieted,
/// else `libm::pow` in f64, rounded once.
pub fn pow_scalar(x: f32, y: f32) -> f32 {
    const QUIET: u32 = 1 << 22;
    for v in [x, y] {
        if v.is_nan() && v.to_bits() & QUIET == 0 {
            return f32::from_bits(v.to_bits() | QUIET);
        }
    }
    libm::pow(x as f64, y as f64) as f32
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use super::super::lanes2::each8;
    use crate::kernels::elementwise::Side;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `2/ln 2`.
    #[allow(clippy::excessive_precision)]
    const TWO_OVER_LN2: f64 = 2.8853900817779268;
    /// `(ln 2)ᵏ/k!` for `k = 0..=13`.
    #[allow(clippy::excessive_precision)]
    const EXP2: [f64; 14] = [
        1.0,
        std::f64::consts::LN_2,
        0.24022650695910072,
        0.05550410866482158,
        0.009618129107628477,
        0.0013333558146428443,
        0.0001540353039338161,
        1.5252733804059841e-05,
        1.321548679014431e-06,
        1.01780860092397e-07,
        7.054911620801123e-09,
        4.4455382718708116e-10,
        2.5678435993488206e-11,
        1.3691488853904128e-12,
    ];
    /// `|w|` beyond which `2^w` is 0 or infinite in f32, with room.
    const W_BOUND: f64 = 200.0;

    /// `dst[i] = x[i]^y[i]` for every `i < dst.len()`.
    ///
    /// # Safety
    /// The CPU has AVX-512F, DQ and VL (the masked eight-f32 loads and
    /// stores); whole operands are at least as long as `dst`.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
    pub unsafe fn pow_into(x: Side<f32>, y: Side<f32>, dst: &mut [MaybeUninit<f32>]) {
        each8(x, y, dst, pow8, super::pow_scalar)
    }

    /// `log₂ a` for positive finite `a` (the module comment).
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn log2(a: __m512d) -> __m512d {
        let one = _mm512_set1_pd(1.0);
        let m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(a);
        let e = _mm512_getexp_pd(a);
        let high = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(m, _mm512_set1_pd(std::f64::consts::SQRT_2));
        let m = _mm512_mask_mul_pd(m, high, m, _mm512_set1_pd(0.5));
        let e = _mm512_mask_add_pd(e, high, e, one);
        let f = _mm512_div_pd(_mm512_sub_pd(m, one), _mm512_add_pd(m, one));
        let f2 = _mm512_mul_pd(f, f);
        let mut q = _mm512_set1_pd(1.0 / 21.0);
        for k in (0..10).rev() {
            q = _mm512_fmadd_pd(q, f2, _mm512_set1_pd(1.0 / (2 * k + 1) as f64));
        }
        _mm512_fmadd_pd(_mm512_mul_pd(f, _mm512_set1_pd(TWO_OVER_LN2)), q, e)
    }

    /// `2^w` (`w` clamped to ±[`W_BOUND`], so NaN-free for a non-NaN `w`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn exp2(w: __m512d) -> __m512d {
        let w = _mm512_min_pd(_mm512_max_pd(w, _mm512_set1_pd(-W_BOUND)), _mm512_set1_pd(W_BOUND));
        let n = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(w);
        let r = _mm512_sub_pd(w, n);
        let mut p = _mm512_set1_pd(EXP2[13]);
        for &c in EXP2[..13].iter().rev() {
            p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
        }
        _mm512_scalef_pd(p, n)
    }

    /// Eight lanes of the method of the module comment, and the NaN lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn pow8(x: __m512d, y: __m512d) -> (__m512d, __mmask8) {
        let sign_bit = _mm512_set1_pd(-0.0);
        let (zero, one, inf) = (_mm512_setzero_pd(), _mm512_set1_pd(1.0), _mm512_set1_pd(f64::INFINITY));
        let a = _mm512_andnot_pd(sign_bit, x);
        let round = |v| _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(v);
        let y_integer = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(round(y), y);
        let half = _mm512_mul_pd(y, _mm512_set1_pd(0.5));
        let y_odd = y_integer & _mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(round(half), half);
        let x_negative = _mm512_movepi64_mask(_mm512_castpd_si512(x));
        let negate = x_negative & y_odd;
        // The finite, nonzero |x|: 2^(y·log₂|x|).
        let general = exp2(_mm512_mul_pd(y, log2(a)));
        // libm's `(x − x)/(x − x)`: the x86 default NaN, sign bit set.
        let default_nan = _mm512_set1_pd(f64::from_bits(0xfff8_0000_0000_0000));
        let general = _mm512_mask_mov_pd(general, x_negative & !y_integer, default_nan);
        // |x| = 0 or inf: inf where y < 0 and |x| = 0, or y > 0 and |x| = inf.
        let a_inf = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, inf);
        let a_edge = a_inf | _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, zero);
        let y_negative = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(y, zero);
        let edge = _mm512_maskz_mov_pd(y_negative ^ a_inf, inf);
        let v = _mm512_mask_blend_pd(a_edge, general, edge);
        let v = _mm512_mask_or_pd(v, negate, v, sign_bit);
        // x^±0 = 1, 1^y = 1, (−1)^±inf = 1.
        let y_zero = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(y, zero);
        let x_one = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, one);
        let unit = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, one) & _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(_mm512_andnot_pd(sign_bit, y), inf);
        let v = _mm512_mask_mov_pd(v, y_zero | x_one | unit, one);
        (v, _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(xs: &[f32], ys: &[f32]) -> u64 {
        let got = pow_f32_all(Side::All(xs), Side::All(ys));
        super::super::binary_differences("pow", xs, ys, &got, pow_scalar)
    }

    fn stream(seed: u64, n: usize) -> Vec<u32> {
        super::super::xorshift_bits(seed, n)
    }

    /// Every pair of special and ordinary values is the reference's bits
    /// (NaNs included: they take the reference's function).
    #[test]
    fn special_values_are_the_reference_bits() {
        let signaling = f32::from_bits(0x7fa0_0001);
        let values = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            signaling,
            -signaling,
            1.0,
            -1.0,
            2.0,
            -2.0,
            3.0,
            -3.0,
            0.5,
            -0.5,
            1.0 / 3.0,
            -8.0,
            1e-45,
            -1e-45,
            f32::MAX,
            -f32::MAX,
            f32::MIN_POSITIVE,
            16777215.0,
            -16777215.0,
            16777216.0,
            1.0 - f32::EPSILON / 2.0,
            1.0 + f32::EPSILON,
            -(1.0 + f32::EPSILON),
            127.5,
            -149.0,
            -150.0,
            128.0,
        ];
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &x in &values {
            for &y in &values {
                xs.push(x);
                ys.push(y);
            }
        }
        let got = pow_f32_all(Side::All(&xs), Side::All(&ys));
        for ((&x, &y), &g) in xs.iter().zip(&ys).zip(&got) {
            let want = pow_scalar(x, y);
            let special = [x, y].iter().any(|v| !v.is_finite() || *v == 0.0 || v.abs() == 1.0);
            if special || want.is_nan() || want == 0.0 || want.is_infinite() {
                assert_eq!(g.to_bits(), want.to_bits(), "pow({x:e}, {y:e}) = {g:e}, the reference {want:e}");
            }
        }
        assert_eq!(check(&xs, &ys), 0);
        assert_eq!(pow_f32_all(Side::One(-8.0), Side::One(1.0 / 3.0))[0].to_bits(), pow_scalar(-8.0, 1.0 / 3.0).to_bits());
        assert_eq!(pow_f32_all(Side::One(-2.0), Side::One(3.0)), [-8.0]);
    }

    /// Random pairs over the ranges where the result is finite and
    /// nonzero, random bit patterns, negative bases with integer
    /// exponents, and results near the f32 overflow and subnormal ranges:
    /// within one ulp, and rarely one ulp off.
    #[test]
    fn sampled_pairs_within_one_ulp() {
        let n = 1_000_000;
        let (r, s) = (stream(0x9e37_79b9_7f4a_7c15, n), stream(0xd1b5_4a32_d192_ed03, n));
        let unit = |v: u32| v as f32 / u32::MAX as f32;
        // |x| over every binade, y with |y·log₂|x|| up to 160.
        let binade = |v: u32| (1 + (v >> 23 & 0xff) % 254) << 23;
        let xs: Vec<f32> = r.iter().map(|&v| f32::from_bits(v & 0x007f_ffff | binade(v))).collect();
        let ys: Vec<f32> = xs.iter().zip(&s).map(|(&x, &v)| (unit(v) * 320.0 - 160.0) / x.log2().abs().max(1e-3)).collect();
        let differ = check(&xs, &ys);
        eprintln!("pow: {differ} of {n} random pairs one ulp off");
        assert!(differ * 1000 < n as u64, "{differ} of {n} differ");
        // Negative bases too, with the exponents rounded to integers.
        let signed: Vec<f32> = xs.iter().zip(&s).map(|(&x, &v)| if v & 1 == 0 { x } else { -x }).collect();
        let integer: Vec<f32> = ys.iter().map(|y| y.round()).collect();
        let differ = check(&signed, &integer);
        eprintln!("pow: {differ} of {n} with integer exponents one ulp off");
        assert!(differ * 1000 < n as u64, "{differ} of {n} differ for integer exponents");
        let near_one: Vec<f32> = r.iter().map(|&v| 1.0 + (v as i32 >> 12) as f32 * f32::EPSILON).collect();
        let big: Vec<f32> = s.iter().map(|&v| (unit(v) - 0.5) * 4e8).collect();
        let differ = check(&near_one, &big);
        eprintln!("pow: {differ} of {n} near 1 with large exponents one ulp off");
        assert!(differ * 1000 < n as u64, "{differ} of {n} differ near 1");
        let (bits_x, bits_y): (Vec<f32>, Vec<f32>) = r.iter().zip(&s).map(|(&a, &b)| (f32::from_bits(a), f32::from_bits(b))).unzip();
        let differ = check(&bits_x, &bits_y);
        eprintln!("pow: {differ} of {n} random bit patterns one ulp off");
        let one = pow_f32_all(Side::All(&xs), Side::One(2.5));
        let each = pow_f32_all(Side::All(&xs), Side::All(&vec![2.5; n]));
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(one), bits(each));
    }
}
