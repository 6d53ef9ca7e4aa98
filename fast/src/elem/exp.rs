//! `e^x` for f32 without a call into libm, so that the Exp loop is
//! vectorized: the platform's `expf` is a function call per element, which
//! kept Exp at a third of memory speed (16M elements: 22 ms, Add 6 ms).
//!
//! The value is computed in f64 and rounded to f32 once, as the reference
//! does (`libm::exp` in f64, then rounded):
//! - `x = k·ln2 + r` with `k = round(x·log2 e)`, so `|r| <= ln2/2`;
//! - `e^r` by its Taylor polynomial of degree 12, whose truncation error
//!   `|r|^13/13! < 2^-52` is below f64's own rounding;
//! - `e^x = e^r · 2^k`, exact in f64 for every `k` reached (the argument is
//!   clamped to [-110, 89], beyond which the f32 result is 0 or +inf).
//!
//! The f64 values of the two engines differ by a few f64 ulps, so their f32
//! results differ only where `e^x` lies within ~2^-50 (relative) of an f32
//! rounding boundary, and then by one ulp: the tolerance model's bound.
//!
//! Whole f32 arrays on AVX-512 machines take [`exp_f32_all`]'s f32-lane
//! method instead (module `lanes`), within the same bound.

/// Clamp bounds: `e^-110 < 2^-150` rounds to +0 and `e^89 > f32::MAX`
/// rounds to +inf, and `2^k` stays a normal f64 in between.
const LOWEST: f64 = -110.0;
const HIGHEST: f64 = 89.0;

/// `1.5·2^52`: adding it rounds a value below 2^51 in magnitude to an
/// integer, held in the low bits of the sum.
const ROUND_TO_INTEGER: f64 = 6755399441055744.0;

/// `1/n!` for n = 12 down to 0, Horner order.
const TAYLOR: [f64; 13] = [
    1.0 / 479001600.0,
    1.0 / 39916800.0,
    1.0 / 3628800.0,
    1.0 / 362880.0,
    1.0 / 40320.0,
    1.0 / 5040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    1.0 / 2.0,
    1.0,
    1.0,
];

/// `e^x` rounded to f32; NaN stays NaN, `e^-inf = 0`, `e^inf = inf`.
/// Branch-free, so loops over it vectorize.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // `clamp` returns a NaN argument unchanged.
    exp_f64_near((x as f64).clamp(LOWEST, HIGHEST)) as f32
}

/// `e^x` in f64, within a few f64 ulps, for `x` in [-700, 700] (or NaN),
/// where `2^k` below is a normal f64. Branch-free: the f64 core of the f32
/// functions built on `e^x` (Exp, and Expm1, Tanh and Logistic in
/// `elem::f32_math`).
#[inline(always)]
pub(crate) fn exp_f64_near(x: f64) -> f64 {
    let shifted = x.mul_add(std::f64::consts::LOG2_E, ROUND_TO_INTEGER);
    let k = shifted - ROUND_TO_INTEGER;
    let r = (-k).mul_add(std::f64::consts::LN_2, x);
    let mut p = TAYLOR[0];
    for &c in &TAYLOR[1..] {
        p = p.mul_add(r, c);
    }
    // The low bits of `shifted` are `2^51 + k`; shifted into the exponent
    // field with the bias added, they give `2^k` (|k| <= 1010, so the sum
    // is in (0, 2048)).
    let two_to_k = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    p * two_to_k
}

/// The lanes kernels: sixteen lanes on AVX-512, eight on AVX2.
#[cfg(target_arch = "x86_64")]
const KERNELS: super::Kernels = super::Kernels { avx512: lanes::exp_into, avx2: Some(lanes8::exp_into) };

/// f32 Exp of a whole array: sixteen f32 lanes at a time where the CPU has
/// AVX-512 ([`lanes`]), eight where it has AVX2 ([`lanes8`]), [`exp_f32`]
/// elsewhere.
pub fn exp_f32_all(v: &[f32]) -> Vec<f32> {
    // At memory speed, so a large result is streamed.
    #[cfg(target_arch = "x86_64")]
    return super::f32_all(v, KERNELS, exp_f32, true);
    #[cfg(not(target_arch = "x86_64"))]
    crate::par::map_heavy(v, exp_f32)
}

/// [`exp_f32_all`] into `out` (`out.len() == v.len()`), on this thread:
/// the same function for each element as the whole-array kernel, for
/// fused blocks.
pub fn exp_f32_into(v: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into(v, out, KERNELS, exp_f32);
    #[cfg(not(target_arch = "x86_64"))]
    super::each_into(v, out, exp_f32);
}

/// `e^x` in f32 lanes, for throughput: the f64 evaluation of [`exp_f32`]
/// takes twenty 8-lane operations per 8 elements and bounds f32 Exp at
/// about a third of memory speed; this takes seventeen 16-lane ones per 16.
///
/// The method of table-driven `expf`s, with the table's entries carried as
/// two f32s:
/// - `x = (16k + j)·ln2/16 + r` with `n = 16k + j = round(x·16/ln2)`,
///   `0 <= j < 16`, `|r| <= ln2/32`; `n·ln2/16` is subtracted in two parts
///   (Cody–Waite), the first exact;
/// - `e^x = 2^k · T_j · e^r` with `T_j = 2^(j/16) = hi_j + lo_j`;
/// - `e^r - 1 = p = r + r²(1/2 + r/6 + r²/24)` (truncation error below
///   `2^-34`);
/// - `T_j·e^r = hi_j + (hi_j·p + lo_j)`, rounded once to f32, then scaled
///   by `2^k` (`vscalefps`, which rounds a subnormal result once).
///
/// Every error but the last rounding is below 0.05 ulp, so the result is
/// within one ulp of the reference's correctly rounded `e^x` (the tolerance
/// model's bound for Exp); it differs from it where `e^x` lies that close
/// to a midpoint between two f32s. Checked exhaustively over all 2^32
/// inputs (`lanes_match_the_reference_on_every_f32`, ignored: 15 s in
/// release): no difference beyond one ulp, one ulp for 0.04% of the inputs.
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `2^(j/16)` rounded to f32, and the rest rounded to f32.
    pub(crate) const TABLE_HI: [u32; 16] = [
        0x3f800000, 0x3f85aac3, 0x3f8b95c2, 0x3f91c3d3, 0x3f9837f0, 0x3f9ef532, 0x3fa5fed7, 0x3fad583f, 0x3fb504f3, 0x3fbd08a4, 0x3fc5672a,
        0x3fce248c, 0x3fd744fd, 0x3fe0ccdf, 0x3feac0c7, 0x3ff5257d,
    ];
    pub(crate) const TABLE_LO: [u32; 16] = [
        0x00000000, 0x334f9891, 0xb260aba1, 0x33675624, 0x33231b71, 0x33412342, 0xb32c9d5e, 0xb22deaf6, 0x32cfe77a, 0xb3414fe8, 0x320aa837,
        0x3228fc24, 0xb2d4a58a, 0xb21eab59, 0xb24116de, 0x32292436,
    ];
    /// `ln2/16` in two parts: twelve bits, so that `n·HI` is exact for
    /// every `|n| < 2^12` reached (|n| <= 2540), and the rest.
    pub(crate) const LN2_16_HI: f32 = 2839.0 / 65536.0;
    pub(crate) const LN2_16_LO: f32 = (std::f64::consts::LN_2 / 16.0 - 2839.0 / 65536.0) as f32;
    pub(crate) const SIXTEEN_OVER_LN2: f32 = (16.0 / std::f64::consts::LN_2) as f32;

    /// `dst[i] = e^src[i]` for `i < min(src.len(), dst.len())`.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn exp_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        let n = src.len().min(dst.len());
        let hi = _mm512_loadu_ps(TABLE_HI.as_ptr().cast());
        let lo = _mm512_loadu_ps(TABLE_LO.as_ptr().cast());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr().cast::<f32>());
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: elements i..i + 16 are inside both slices.
            _mm512_storeu_ps(d.add(i), exp16(_mm512_loadu_ps(s.add(i)), hi, lo));
            i += 16;
        }
        if i < n {
            // The tail under a mask: masked-out lanes are neither read nor
            // written, so nothing past the slices is touched.
            let mask: __mmask16 = (1u16 << (n - i)) - 1;
            let x = _mm512_maskz_loadu_ps(mask, s.add(i));
            _mm512_mask_storeu_ps(d.add(i), mask, exp16(x, hi, lo));
        }
    }

    /// [`exp16`] with the table loaded here (a register chain's link:
    /// inlined into its loop, the loads are hoisted out of it).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn exp16_tabled(x: __m512) -> __m512 {
        exp16(x, _mm512_loadu_ps(TABLE_HI.as_ptr().cast()), _mm512_loadu_ps(TABLE_LO.as_ptr().cast()))
    }

    /// Sixteen lanes of the method above.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn exp16(x: __m512, hi: __m512, lo: __m512) -> __m512 {
        // Clamped as in `exp_f32`; `max`/`min` return their second operand,
        // `x`, when it is NaN, and NaN flows through to the result.
        let x = _mm512_min_ps(_mm512_set1_ps(super::HIGHEST as f32), _mm512_max_ps(_mm512_set1_ps(super::LOWEST as f32), x));
        let n =
            _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm512_mul_ps(x, _mm512_set1_ps(SIXTEEN_OVER_LN2)));
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_16_HI), x);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_16_LO), r);
        // `vpermps` reads the low four bits of each index: `j = n mod 16`
        // in two's complement, negative `n` included.
        let j = _mm512_cvtps_epi32(n);
        let (t_hi, t_lo) = (_mm512_permutexvar_ps(j, hi), _mm512_permutexvar_ps(j, lo));
        let q = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0 / 24.0), _mm512_set1_ps(1.0 / 6.0));
        let q = _mm512_fmadd_ps(r, q, _mm512_set1_ps(0.5));
        let p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
        let t_er = _mm512_add_ps(t_hi, _mm512_fmadd_ps(t_hi, p, t_lo));
        // `vscalefps` multiplies by `2^floor(n/16) = 2^k`.
        _mm512_scalef_ps(t_er, _mm512_mul_ps(n, _mm512_set1_ps(1.0 / 16.0)))
    }
}

/// `e^x` in eight f32 lanes (AVX2 and FMA), for hosts without AVX-512: the
/// method of [`lanes`] with an eight-entry table, which one `vpermps`
/// looks up (AVX2 has no two-register permute):
/// - `n = 8k + j = round(x·8/ln2)`, `0 <= j < 8`, `|r| <= ln2/16`: the
///   same two-part Cody–Waite subtraction (`n·HI` exact for `|n| < 2^11`,
///   and `|n| <= 1270` here);
/// - `T_j = 2^(j/8)`: entry `2j` of [`lanes`]' table;
/// - `p = r + r²(1/2 + r/6 + r²/24)`: truncation error `r^5/120 < 2^-29`,
///   a fiftieth of an ulp with `|r|` twice [`lanes`]' bound;
/// - `2^k` in two steps, as AVX2 has no `vscalefps`: `k = k1 + k2` with
///   `k1 = floor(k/2)`, each factor a normal f32 (`k` in [-159, 128]);
///   `T_j·e^r·2^k1` is exact (a normal number), and `·2^k2` rounds once,
///   into the subnormals too, as `vscalefps` does.
///
/// Checked over every f32 (`lanes_match_the_reference_on_every_f32`
/// covers both kernels): within one ulp of the reference, one ulp off for
/// 0.07% of the inputs (0.04% in sixteen lanes).
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes8 {
    use super::lanes::{TABLE_HI, TABLE_LO};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `2^(j/8)` for j < 8: every other entry of the sixteenth-power table.
    const fn every_other(table: [u32; 16]) -> [u32; 8] {
        let mut half = [0; 8];
        let mut j = 0;
        while j < 8 {
            half[j] = table[2 * j];
            j += 1;
        }
        half
    }
    pub(crate) const HI8: [u32; 8] = every_other(TABLE_HI);
    pub(crate) const LO8: [u32; 8] = every_other(TABLE_LO);
    /// `ln2/8` in two parts: the first with twelve significant bits.
    pub(crate) const LN2_8_HI: f32 = 2839.0 / 32768.0;
    pub(crate) const LN2_8_LO: f32 = (std::f64::consts::LN_2 / 8.0 - 2839.0 / 32768.0) as f32;
    const EIGHT_OVER_LN2: f32 = (8.0 / std::f64::consts::LN_2) as f32;

    /// `dst[i] = e^src[i]` for `i < min(src.len(), dst.len())`.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn exp_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        crate::elem::lanes8::each8(src, dst, |[a, b]| [exp8(a), exp8(b)], |x| exp8(x));
    }

    /// `2^k` for each lane's integer `k` in [-126, 127].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn two_to(k: __m256i) -> __m256 {
        _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(k, _mm256_set1_epi32(127))))
    }

    /// Eight lanes of the method above.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn exp8(x: __m256) -> __m256 {
        // Clamped as in `exp_f32`; `max`/`min` return their second operand,
        // `x`, when it is NaN, and NaN flows through `r` to the result.
        let x = _mm256_min_ps(_mm256_set1_ps(super::HIGHEST as f32), _mm256_max_ps(_mm256_set1_ps(super::LOWEST as f32), x));
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(x, _mm256_set1_ps(EIGHT_OVER_LN2)));
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_8_HI), x);
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_8_LO), r);
        // `vpermps` reads the low three bits of each index: `j = n mod 8`
        // in two's complement, negative `n` included.
        let ni = _mm256_cvtps_epi32(n);
        let t_hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(HI8.as_ptr().cast()), ni);
        let t_lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(LO8.as_ptr().cast()), ni);
        let q = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0 / 24.0), _mm256_set1_ps(1.0 / 6.0));
        let q = _mm256_fmadd_ps(r, q, _mm256_set1_ps(0.5));
        let p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r);
        let t_er = _mm256_add_ps(t_hi, _mm256_fmadd_ps(t_hi, p, t_lo));
        // k = floor(n/8) = k1 + k2, k1 = floor(k/2). (A NaN lane's `n`
        // converts to i32::MIN; its factors are finite, and NaN stays.)
        let k = _mm256_srai_epi32::<3>(ni);
        let k1 = _mm256_srai_epi32::<1>(k);
        let k2 = _mm256_sub_epi32(k, k1);
        _mm256_mul_ps(_mm256_mul_ps(t_er, two_to(k1)), two_to(k2))
    }
}

#[cfg(test)]
mod tests {
    use super::super::f32_ulps as ulps;
    use super::*;

    fn reference(x: f32) -> f32 {
        (x as f64).exp() as f32
    }

    #[test]
    fn special_values() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(1.0), std::f32::consts::E);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert!(exp_f32(-f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::MAX), f32::INFINITY);
        assert_eq!(exp_f32(f32::MIN).to_bits(), 0);
        assert_eq!(exp_f32(f32::MIN_POSITIVE), 1.0);
        assert_eq!(exp_f32(-1e-45), 1.0);
    }

    /// The overflow and underflow thresholds, and the subnormal range of
    /// results, where a single rounding from f64 matters most.
    #[test]
    fn thresholds_match_the_reference() {
        let largest = 88.72283_f32; // the largest x with a finite e^x
        for x in [largest, f32::from_bits(largest.to_bits() + 1), -87.33655, -103.27893, -103.97208, -103.972084, -104.0, -109.99] {
            assert_eq!(exp_f32(x).to_bits(), reference(x).to_bits(), "x = {x}");
        }
        let mut x = -88.0_f32;
        while x > -104.5 {
            assert!(ulps(exp_f32(x), reference(x)) <= 1, "x = {x}");
            x -= 0.001;
        }
    }

    /// Every 97th f32 bit pattern (44 million values): within one ulp of
    /// the reference's `exp` in f64 rounded, and almost always equal.
    #[test]
    fn within_one_ulp_of_the_reference_over_the_whole_range() {
        let mut differ = 0u64;
        let mut count = 0u64;
        for bits in (0..=u32::MAX).step_by(97) {
            let x = f32::from_bits(bits);
            let (got, want) = (exp_f32(x), reference(x));
            if want.is_nan() {
                assert!(got.is_nan(), "x = {x}");
                continue;
            }
            count += 1;
            let d = ulps(got, want);
            assert!(d <= 1, "x = {x:e}: {got:e} against {want:e}");
            differ += d;
        }
        assert!(differ * 1_000_000 < count, "{differ} of {count} differ");
    }

    /// Runs the AVX-512 lanes over `x` (None without AVX-512).
    #[cfg(target_arch = "x86_64")]
    fn lanes_of(x: &[f32]) -> Option<Vec<f32>> {
        // SAFETY: run only where the CPU has AVX-512F.
        unsafe { crate::elem::lanes8::collect(is_x86_feature_detected!("avx512f"), lanes::exp_into, x) }
    }

    /// Runs the AVX2 lanes over `x` (None without AVX2 and FMA).
    #[cfg(target_arch = "x86_64")]
    fn lanes8_of(x: &[f32]) -> Option<Vec<f32>> {
        let usable = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        // SAFETY: run only where the CPU has the features.
        unsafe { crate::elem::lanes8::collect(usable, lanes8::exp_into, x) }
    }

    /// A lanes kernel over a whole slice (None where the CPU lacks it).
    #[cfg(target_arch = "x86_64")]
    type Run = fn(&[f32]) -> Option<Vec<f32>>;

    /// Both lanes kernels.
    #[cfg(target_arch = "x86_64")]
    const KERNELS_OF: [Run; 2] = [lanes_of, lanes8_of];

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lanes_table_and_constants() {
        for j in 0..16 {
            let t = (j as f64 / 16.0).exp2();
            let (hi, lo) = (f32::from_bits(lanes::TABLE_HI[j]), f32::from_bits(lanes::TABLE_LO[j]));
            assert_eq!(hi, t as f32, "j = {j}");
            assert_eq!(lo, (t - hi as f64) as f32, "j = {j}");
        }
        let hi = lanes::LN2_16_HI;
        assert_eq!(hi.to_bits() & 0xfff, 0, "twelve significant bits");
        // The f32 rest leaves 2^-24 of itself (1.2e-13): times |n| <= 2540,
        // an error of 3e-10 in `r`, 0.005 ulp of the result.
        assert!(((hi as f64 + lanes::LN2_16_LO as f64) - std::f64::consts::LN_2 / 16.0).abs() < 1.3e-13);
        for j in 0..8 {
            assert_eq!(f32::from_bits(lanes8::HI8[j]), (j as f64 / 8.0).exp2() as f32, "j = {j}");
        }
        assert_eq!(lanes8::LN2_8_HI.to_bits() & 0xfff, 0, "twelve significant bits");
        assert!(((lanes8::LN2_8_HI as f64 + lanes8::LN2_8_LO as f64) - std::f64::consts::LN_2 / 8.0).abs() < 2.6e-13);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lanes_special_values_and_every_tail_length() {
        let special = [
            0.0,
            -0.0,
            1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MAX,
            f32::MIN,
            88.72283,
            88.72284,
            -103.97208,
            -104.0,
            -87.33655,
            1e-45,
            -1e-45,
        ];
        for run in KERNELS_OF {
            let Some(got) = run(&special) else { continue };
            for (x, g) in special.iter().zip(&got) {
                let want = reference(*x);
                assert!(want.is_nan() && g.is_nan() || ulps(*g, want) <= 1, "x = {x:e}: {g:e} against {want:e}");
            }
            assert_eq!(got[0], 1.0);
            assert_eq!(got[2], std::f32::consts::E);
            assert_eq!(got[3], f32::INFINITY);
            assert_eq!(got[4].to_bits(), 0);
            assert_eq!(got[7], f32::INFINITY);
            // Lengths 0 to 40 (every tail, the 16-lane width ± 1, two
            // blocks ± 1), each element against the scalar function.
            let values: Vec<f32> = (0..40).map(|i| i as f32 * 2.37 - 45.0).collect();
            for len in 0..=values.len() {
                let got = run(&values[..len]).unwrap_or_default();
                assert_eq!(got.len(), len);
                for (x, g) in values.iter().zip(&got) {
                    assert!(ulps(*g, reference(*x)) <= 1, "len {len}, x = {x}");
                }
            }
        }
    }

    /// Every 97th f32 bit pattern, as for `exp_f32`; one ulp differences
    /// are rarer than 1 in 1000.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lanes_within_one_ulp_of_the_reference_over_the_whole_range() {
        let x: Vec<f32> = (0..=u32::MAX).step_by(97).map(f32::from_bits).collect();
        for run in KERNELS_OF {
            let Some(got) = run(&x) else { continue };
            let mut differ = 0usize;
            for (x, g) in x.iter().zip(&got) {
                let want = reference(*x);
                if want.is_nan() {
                    assert!(g.is_nan(), "x = {x}");
                    continue;
                }
                let d = ulps(*g, want);
                assert!(d <= 1, "x = {x:e}: {g:e} against {want:e}");
                differ += d as usize;
            }
            assert!(differ * 1000 < x.len(), "{differ} of {} differ", x.len());
        }
    }

    /// All 2^32 inputs (15 s in release with two threads): `cargo test
    /// --release -p xlaref-fast --lib -- --ignored lanes_match`.
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[ignore]
    fn lanes_match_the_reference_on_every_f32() {
        // One ulp off: 1,684,894 inputs in sixteen lanes, 3,036,376 in
        // eight (|r| twice as large: Horner's roundings weigh more).
        for (run, limit) in KERNELS_OF.into_iter().zip([2_000_000, 3_500_000]) {
            every_f32(run, limit);
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn every_f32(run: Run, limit: u64) {
        use rayon::prelude::*;
        let (worse, differ) = (0u32..1 << 16)
            .into_par_iter()
            .map(|high| {
                let x: Vec<f32> = (0..1u32 << 16).map(|low| f32::from_bits(high << 16 | low)).collect();
                let got = run(&x).unwrap_or_default();
                let (mut worse, mut differ) = (0u64, 0u64);
                for (x, g) in x.iter().zip(&got) {
                    let want = reference(*x);
                    match (want.is_nan(), ulps(*g, want)) {
                        (true, _) => worse += u64::from(!g.is_nan()),
                        (false, 0) => {}
                        (false, 1) => differ += 1,
                        _ => worse += 1,
                    }
                }
                (worse, differ)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        eprintln!("{differ} of 2^32 one ulp from the reference");
        assert_eq!(worse, 0);
        assert!(differ < limit, "{differ}");
    }
}
