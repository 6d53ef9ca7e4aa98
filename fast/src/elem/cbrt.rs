//! f32 Cbrt of whole arrays in f64 lanes (AVX-512), eight at a time,
//! instead of a libm call per element.
//!
//! The accuracy argument is Erf's (`erf.rs`): the cube root is computed in
//! f64 with a relative error below `10⁻¹⁵` and rounded once to f32, so the
//! result is the reference's (`libm::cbrt` in f64, correctly rounded, then
//! rounded once to f32) or, where `∛x` lies within about `10⁻¹⁵` (relative)
//! of a midpoint between two f32s, its neighbour. (It is never exactly on
//! one: a midpoint has 25 significant bits, its cube 73 to 75, never an
//! f32's 24.) For `a = |x|`, an f32 and so a normal f64:
//! - `a = m·2^e` with `m ∈ [1, 2)` (`vgetmantpd`, `vgetexppd`) and
//!   `e = 3q + r`, `r ∈ {0, 1, 2}`, so `∛a = 2^q·∛(m·2^r)`;
//! - a first guess `t₀ = P(m)·2^(r/3)`: `P` is a degree-5 fit of `∛m` on
//!   `[1, 2]` (Chebyshev, mpmath), relative error `1.8·10⁻⁶`, and
//!   `2^(r/3)` comes from a three-entry table (`vpermpd`);
//! - one Halley step `t = t₀·(t₀³ + 2y)/(2t₀³ + y)` with `y = m·2^r`,
//!   which cubes the relative error (`< 10⁻¹⁷`), leaving the step's own
//!   f64 roundings, a few ulps (`< 10⁻¹⁵`);
//! - scaled by `2^q` (`vscalefpd`, exact) and given `x`'s sign.
//! - `±0`, `±inf` and NaN are returned as they are (libm's `cbrt` too;
//!   the widening has quieted a signaling NaN, as the reference's).
//!
//! The f32 results span `10⁻¹⁵` to `7·10¹²`, normal in f32: no underflow
//! or overflow to handle. Checked over every f32
//! (`every_f32_within_one_ulp`, ignored: 3 minutes in release on two
//! cores): not one of the 2^32 results differs from the reference's. A
//! sample of the bit patterns is checked in every test run.

/// f32 Cbrt of `v`: eight f64 lanes at a time where the CPU has AVX-512,
/// the reference's function ([`cbrt_scalar`]) per element elsewhere.
pub fn cbrt_f32_all(v: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all(v, super::Kernels::avx512(lanes::cbrt_into), cbrt_scalar, false);
    #[cfg(not(target_arch = "x86_64"))]
    crate::par::map_heavy(v, cbrt_scalar)
}

/// [`cbrt_f32_all`] into `out` (`out.len() == v.len()`), on this thread:
/// the same function for each element as the whole-array kernel, for
/// fused tiles.
pub fn cbrt_f32_into(v: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into(v, out, super::Kernels::avx512(lanes::cbrt_into), cbrt_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each_into(v, out, cbrt_scalar);
}

/// The reference's f32 Cbrt: `libm::cbrt` in f64, rounded once.
pub fn cbrt_scalar(x: f32) -> f32 {
    libm::cbrt(x as f64) as f32
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `∛m` on `[1, 2]`, constant term first (degree-5 Chebyshev fit in
    /// 40-digit arithmetic; relative error `1.8·10⁻⁶`).
    #[allow(clippy::excessive_precision)]
    const GUESS: [f64; 6] =
        [0.47514693623890253, 0.8317431442479309, -0.4602977267696209, 0.19665479701360078, -0.04831832068166114, 0.005072953325277491];
    /// `2^(r/3)` for `r = 0, 1, 2` (padded to a lane table).
    #[allow(clippy::excessive_precision)]
    const THIRDS: [f64; 8] = [1.0, 1.2599210498948732, 1.5874010519681996, 1.0, 1.0, 1.0, 1.0, 1.0];

    /// `dst[i] = ∛src[i]` for `i < min(src.len(), dst.len())`.
    ///
    /// # Safety
    /// The CPU has AVX-512F and DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub unsafe fn cbrt_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        let n = src.len().min(dst.len());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr().cast::<f32>());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: elements i..i + 8 are inside both slices.
            let x = _mm512_cvtps_pd(_mm256_loadu_ps(s.add(i)));
            _mm256_storeu_ps(d.add(i), _mm512_cvtpd_ps(cbrt8(x)));
            i += 8;
        }
        if i < n {
            // Masked-out lanes are neither read nor written.
            let mask: __mmask8 = ((1u16 << (n - i)) - 1) as u8;
            let x = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, s.add(i)));
            _mm256_mask_storeu_ps(d.add(i), mask, _mm512_cvtpd_ps(cbrt8(x)));
        }
    }

    /// Eight lanes of the method of the module comment.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn cbrt8(x: __m512d) -> __m512d {
        let sign_bit = _mm512_set1_pd(-0.0);
        let a = _mm512_andnot_pd(sign_bit, x);
        let m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(a);
        let e = _mm512_getexp_pd(a);
        // q = ⌊e/3⌋; the half keeps `(3k + 0.5)/3` clear of an integer,
        // whatever the rounding of 1/3.
        let q = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(_mm512_mul_pd(
            _mm512_add_pd(e, _mm512_set1_pd(0.5)),
            _mm512_set1_pd(1.0 / 3.0),
        ));
        let r = _mm512_fnmadd_pd(q, _mm512_set1_pd(3.0), e);
        // A NaN `r` (the lanes blended away below) converts to an index
        // out of 0..3, which `vpermpd` reduces modulo 8: still in the table.
        let thirds = _mm512_permutexvar_pd(_mm512_cvttpd_epi64(r), _mm512_loadu_pd(THIRDS.as_ptr()));
        let y = _mm512_scalef_pd(m, r);
        let mut p = _mm512_set1_pd(GUESS[5]);
        for &c in GUESS[..5].iter().rev() {
            p = _mm512_fmadd_pd(p, m, _mm512_set1_pd(c));
        }
        let t = _mm512_mul_pd(p, thirds);
        let t3 = _mm512_mul_pd(_mm512_mul_pd(t, t), t);
        let num = _mm512_fmadd_pd(y, _mm512_set1_pd(2.0), t3);
        let den = _mm512_fmadd_pd(t3, _mm512_set1_pd(2.0), y);
        let t = _mm512_div_pd(_mm512_mul_pd(t, num), den);
        let root = _mm512_or_pd(_mm512_scalef_pd(t, q), _mm512_and_pd(sign_bit, x));
        // 0 < a < inf (false for NaN): the method; else x itself.
        let finite = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, _mm512_set1_pd(f64::INFINITY));
        let nonzero = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, _mm512_setzero_pd());
        _mm512_mask_blend_pd(finite & nonzero, x, root)
    }
}

#[cfg(test)]
mod tests {
    use super::super::f32_ulps as ulps;
    use super::*;

    /// How many of `xs` differ from the reference (all by one ulp at most;
    /// NaN where the reference is NaN; signs equal).
    fn check(xs: &[f32]) -> u64 {
        let got = cbrt_f32_all(xs);
        let mut differ = 0;
        for (&x, &g) in xs.iter().zip(&got) {
            let want = cbrt_scalar(x);
            if want.is_nan() {
                assert!(g.is_nan(), "cbrt({x:e}) = {g:e}, not NaN");
                continue;
            }
            let d = ulps(g, want);
            assert!(d <= 1, "cbrt({x:e} = {:#x}) = {g:e}, the reference {want:e}: {d} ulps", x.to_bits());
            assert_eq!(g.is_sign_negative(), want.is_sign_negative(), "sign of cbrt({x:e})");
            differ += u64::from(d != 0);
        }
        differ
    }

    #[test]
    fn special_values_are_the_reference_bits() {
        let xs = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, 8.0, -8.0, 27.0, 1.0, -1.0, 1e-45, -1e-45, f32::MAX, f32::MIN_POSITIVE];
        let got = cbrt_f32_all(&xs);
        for (&x, &g) in xs.iter().zip(&got) {
            assert_eq!(g.to_bits(), cbrt_scalar(x).to_bits(), "cbrt({x:e})");
        }
        let nan = cbrt_f32_all(&[f32::NAN, -f32::NAN]);
        assert!(nan.iter().all(|v| v.is_nan()));
        // Every exact cube of an integer up to 2^8 is exact.
        let cubes: Vec<f32> = (1..=256).map(|k| (k * k * k) as f32).collect();
        let got = cbrt_f32_all(&cubes);
        assert!(got.iter().zip(1..).all(|(&g, k)| g == k as f32));
    }

    /// Every 1009th f32 bit pattern (4.3 million values) and the powers of
    /// two and their neighbours (the exponent split's edges): within one
    /// ulp, and almost always equal to the reference.
    #[test]
    fn sampled_f32_within_one_ulp() {
        let xs: Vec<f32> = (0..=u32::MAX).step_by(1009).map(f32::from_bits).collect();
        let differ = check(&xs);
        eprintln!("cbrt: {differ} of {} sampled bit patterns one ulp off", xs.len());
        assert!(differ * 1000 < xs.len() as u64, "{differ} of {} differ", xs.len());
        let mut edges = Vec::new();
        for e in 0..255u32 {
            for d in 0..4u32 {
                let b = (e << 23) + d;
                edges.extend([b, b.wrapping_sub(d + 1) & 0x7fff_ffff, b | 0x8000_0000].map(f32::from_bits));
            }
        }
        check(&edges);
    }

    /// Every f32 (run with `--ignored` in release).
    #[test]
    #[ignore]
    fn every_f32_within_one_ulp() {
        use rayon::prelude::*;
        let differ: u64 = (0..256u32)
            .into_par_iter()
            .map(|chunk| check(&(0..1u32 << 24).map(|i| f32::from_bits((chunk << 24) | i)).collect::<Vec<_>>()))
            .sum();
        eprintln!("cbrt: {differ} of 2^32 one ulp off");
    }
}
