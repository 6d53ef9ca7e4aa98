//! f32 Tanh of whole arrays in sixteen f32 lanes (AVX-512), for
//! throughput: [`super::f32_math::tanh_f32`] works in f64, eight lanes at
//! a time with a division, and held a GELU (LayerNorm + GELU of 4096×1024)
//! at 2.4 ms of Tanh alone where XLA CPU runs the whole program in 2.5 ms.
//!
//! The result is within one ulp of the reference's (`tanh` in f64, rounded
//! once). That holds whenever the value before the one final rounding is
//! less than one ulp from `tanh(x)`: the reference and this result are then
//! each within half an ulp of their own unrounded values, so they are less
//! than two ulps, hence at most one, apart. With `a = |x|` and `u =
//! 2^-24` (the relative bound of one rounding, and the ulp of results in
//! [0.5, 1)):
//! - `a < 0.9`: `tanh(a) = a + a·q` with `q = z·P(z)`, `z = a²` and `P` a
//!   degree-6 fit of `(tanh(a)/a - 1)/z` (relative error `6·10⁻⁸`, about
//!   `u`). `q` is within about `4u` of its value (the fit, Horner's last
//!   steps where the partial values are near `-1/3`, the product `z·P`),
//!   and `|a·q| <= 0.184`, so `a + a·q`, one fused multiply-add, is off by
//!   under `0.75u` before its rounding: under one ulp of the result, which
//!   is `u` at the top of the range (0.716 at `a = 0.9`) and shrinks more
//!   slowly than `|a·q|` below it.
//! - `0.9 <= a`: `tanh(a) = 1 - d` with `d = 2E/(1 + E)` and `E = e^-2a`
//!   (`a` clamped to 9.1, beyond which the f32 result is 1). `E = 2^n·e^r`
//!   with `w = -2a = n·ln 2 + r`, `|r| <= ln2/2`: `n` by the round-to-
//!   nearest shifter (an FMA that adds `1.5·2^23`), `r` with `ln 2` in two
//!   parts (`n·LN2_HI` is exact for `|n| <= 27`), `e^r = 1 + r·Q(r)` with
//!   `Q` a degree-5 fit (relative error `1.8·10⁻⁸ = 0.3u` with its f32
//!   coefficients), Horner in FMAs, and `2^n` exact by `vscalefps`. Its
//!   last FMA rounds once (`0.5u`) and carries `Q`'s rounding scaled by
//!   `|r·Q| <= 0.41` (under `0.45u`): `E` is within `1.25u·E`. `1 + E` is
//!   rounded once (`0.5u`) and `d` is a correctly rounded division
//!   (`0.5u`), so `d` is within `2.25u·d` of its value, and
//!   `d <= 1 - tanh(0.9) = 0.284` makes that under `0.64u`, less than one
//!   ulp of the result (`u`: the results lie in [0.716, 1]); `1 - d` is
//!   the final rounding. (`E = e^-2a` rather than `e^2a`: `E <= 0.17`
//!   cannot overflow, and `2E` is exact.) This takes 17 instructions where
//!   `exp::lanes`' table method with a Newton reciprocal took 24: the
//!   whole-array Tanh and every GELU run this.
//!
//! Checked over every f32 (`every_f32_within_one_ulp`, ignored: about a
//! minute in release, far longer in the unoptimized test build): none is
//! more than one ulp from the reference. A sample of the bit patterns is
//! checked in every test run.

/// f32 Tanh of `v`: sixteen lanes at a time where the CPU has AVX-512,
/// [`super::f32_math::tanh_f32`] per element elsewhere.
pub fn tanh_f32_all(v: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all(v, lanes::tanh_into, super::f32_math::tanh_f32, false);
    #[cfg(not(target_arch = "x86_64"))]
    crate::par::map_heavy(v, super::f32_math::tanh_f32)
}

/// [`tanh_f32_all`] into `out` (`out.len() == v.len()`), on this thread:
/// the same function for each element as the whole-array kernel, for
/// fused tiles.
pub fn tanh_f32_into(v: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into(v, out, lanes::tanh_into, super::f32_math::tanh_f32);
    #[cfg(not(target_arch = "x86_64"))]
    super::each_into(v, out, super::f32_math::tanh_f32);
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Below this magnitude the polynomial; at and above it `1 - d`.
    const SMALL: f32 = 0.9;
    /// `tanh(a)` rounds to 1 in f32 for `a > 9.011`.
    const CLAMP: f32 = 9.1;
    /// `P(z)`, constant term first: a least-squares fit, weighted for
    /// relative error, of `(tanh(a)/a - 1)/z` at 600 Chebyshev nodes of
    /// [0, 0.9²] in 40-digit arithmetic; with the coefficients rounded to
    /// f32 its relative error is below `6·10⁻⁸`.
    const P: [f32; 7] = [-0.333_333_3, 0.133_332_58, -0.053_953_41, 0.021_756_943, -0.008_445_107, 0.002_752_883_6, -0.000_517_816_46];
    /// `Q(r)`, constant term first: `(e^r - 1)/r` on `|r| <= ln2/2`, a
    /// least-squares fit (iteratively reweighted towards minimax) of the
    /// relative error of `e^r`, at 2000 Chebyshev nodes.
    const Q: [f32; 6] = [1.0, 0.499_999_94, 0.166_664_3, 0.041_668_005, 0.008_374_196, 0.001_384_359_4];
    /// `ln 2` in two parts, the first with nine trailing zero bits.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = (std::f64::consts::LN_2 - 0.693_145_751_953_125) as f32;
    /// Added and subtracted, it rounds a value below `2^22` to an integer
    /// (round to nearest, ties to even).
    const SHIFTER: f32 = 12_582_912.0;

    /// `dst[i] = tanh(src[i])` for `i < min(src.len(), dst.len())`.
    ///
    /// # Safety
    /// The CPU has AVX-512F and DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub unsafe fn tanh_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        let n = src.len().min(dst.len());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr().cast::<f32>());
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: elements i..i + 16 are inside both slices.
            _mm512_storeu_ps(d.add(i), tanh16(_mm512_loadu_ps(s.add(i))));
            i += 16;
        }
        if i < n {
            // Masked-out lanes are neither read nor written.
            let mask: __mmask16 = (1u16 << (n - i)) - 1;
            _mm512_mask_storeu_ps(d.add(i), mask, tanh16(_mm512_maskz_loadu_ps(mask, s.add(i))));
        }
    }

    /// Sixteen lanes of the method of the module comment.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(crate) unsafe fn tanh16(x: __m512) -> __m512 {
        let sign_bit = _mm512_set1_ps(-0.0);
        let one = _mm512_set1_ps(1.0);
        let a = _mm512_andnot_ps(sign_bit, x);
        // a + a·z·P(z)
        let z = _mm512_mul_ps(a, a);
        let mut p = _mm512_set1_ps(P[6]);
        for &c in P[..6].iter().rev() {
            p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(c));
        }
        let small = _mm512_fmadd_ps(a, _mm512_mul_ps(z, p), a);
        // 1 - 2E/(1 + E) with E = e^-2a; `min` returns its second operand,
        // `a`, when it is NaN, and NaN flows through.
        let w = _mm512_mul_ps(_mm512_min_ps(_mm512_set1_ps(CLAMP), a), _mm512_set1_ps(-2.0));
        let shifter = _mm512_set1_ps(SHIFTER);
        let n = _mm512_sub_ps(_mm512_fmadd_ps(w, _mm512_set1_ps(std::f32::consts::LOG2_E), shifter), shifter);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), w);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), r);
        let mut q = _mm512_set1_ps(Q[5]);
        for &c in Q[..5].iter().rev() {
            q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(c));
        }
        let e = _mm512_scalef_ps(_mm512_fmadd_ps(q, r, one), n);
        // d = 2E/s, s = 1 + E, each rounded once: as E/h with h = s/2 =
        // 0.5 + 0.5·E in one FMA (halving is exact, so h is s halved and
        // the quotient is the same), one instruction fewer than `E + E`
        // and `1 + E`.
        let half = _mm512_set1_ps(0.5);
        let d = _mm512_div_ps(e, _mm512_fmadd_ps(half, e, half));
        let large = _mm512_sub_ps(one, d);
        let is_small = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, _mm512_set1_ps(SMALL));
        let t = _mm512_mask_blend_ps(is_small, large, small);
        // t | (x & sign) in one instruction: x's sign on |tanh|.
        _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xF8>(
            _mm512_castps_si512(t),
            _mm512_castps_si512(x),
            _mm512_castps_si512(sign_bit),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::f32_ulps as ulps;
    use super::*;

    fn reference(x: f32) -> f32 {
        (x as f64).tanh() as f32
    }

    fn check(xs: &[f32]) -> (u64, u64) {
        let got = tanh_f32_all(xs);
        let mut differ = 0;
        for (&x, &g) in xs.iter().zip(&got) {
            let want = reference(x);
            if want.is_nan() {
                assert!(g.is_nan(), "tanh({x:e}) = {g:e}, not NaN");
                continue;
            }
            let d = ulps(g, want);
            assert!(d <= 1, "tanh({x:e} = {:#x}) = {g:e}, the reference {want:e}: {d} ulps", x.to_bits());
            assert_eq!(g.is_sign_negative(), want.is_sign_negative(), "sign of tanh({x:e})");
            differ += u64::from(d != 0);
        }
        (differ, xs.len() as u64)
    }

    #[test]
    fn special_values_and_region_edges() {
        let mut xs = vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-45, -1e-45, f32::MIN_POSITIVE, 1e-10, 0.5, 1.0];
        for edge in [0.625_f32, 9.011, 9.1, 0.55, 20.0, f32::MAX] {
            let mut v = edge;
            for _ in 0..50 {
                xs.extend([v, -v]);
                v = f32::from_bits(v.to_bits() - 1);
            }
        }
        check(&xs);
        let got = tanh_f32_all(&[-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY]);
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [0x8000_0000, 0, 1f32.to_bits(), (-1f32).to_bits()]);
    }

    /// Every 1009th f32 bit pattern (4.3 million values), and a dense walk
    /// of [-10, 10]: within one ulp of the reference, and almost always
    /// equal to it.
    #[test]
    fn sampled_f32_within_one_ulp() {
        let xs: Vec<f32> = (0..=u32::MAX).step_by(1009).map(f32::from_bits).collect();
        let (differ, count) = check(&xs);
        assert!(differ * 20 < count, "{differ} of {count} differ");
        let walk: Vec<f32> = (0..2_000_000).map(|i| -10.0 + i as f32 * 1e-5).collect();
        check(&walk);
    }

    /// Every f32 (run with `--ignored` in release: about a minute).
    #[test]
    #[ignore]
    fn every_f32_within_one_ulp() {
        let mut differ = 0;
        for block in 0..256u32 {
            let xs: Vec<f32> = (0..1u32 << 24).map(|i| f32::from_bits(block << 24 | i)).collect();
            differ += check(&xs).0;
        }
        eprintln!("{differ} of 2^32 differ from the reference by one ulp");
    }
}
