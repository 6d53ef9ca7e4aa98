//! f32 Erf and Erfc of whole arrays in f64 lanes (AVX-512), eight at a
//! time: the per-element libm calls held the exact GELU `x·Φ(x)` of an
//! f32[4096,1024] (`chlo.erfc` in JAX's StableHLO) at 25–49 ms where XLA
//! CPU runs the whole program in 8.
//!
//! The accuracy argument is Tanh's and Exp's (`tanh.rs`, `exp.rs`): the
//! value is computed in f64 with a relative error below `2·10⁻¹²` and
//! rounded once to f32, so it is the reference's (`erf` in f64, rounded
//! once) or its neighbour where `erf(x)` lies within `2·10⁻¹²` of a
//! midpoint between two f32s. With `a = |x|`:
//! - `[0, 4)` is cut into eight intervals of 1/2. On the first,
//!   `erf(a) = a·P₀(a)` (relative error near 0); on interval `i`,
//!   `erf(a) = Pᵢ(a − cᵢ)` about its midpoint `cᵢ`. Each `P` has degree 9,
//!   fitted by weighted least squares at 400 Chebyshev nodes against
//!   40-digit values (mpmath); the worst relative error over 20,001 points
//!   per interval is `1.7·10⁻¹²`. The interval's coefficients come from
//!   eight-entry tables, one lane each (`vpermpd`).
//! - `a >= 4`: 1 (`erf(a)` rounds to 1 in f32 from `a = 3.92` on).
//! - The sign is `x`'s (`erf(−0) = −0`); NaN flows through the polynomial.
//!
//! Erfc (relative error below `4·10⁻¹¹` before its rounding):
//! - `x < 0.5`: `1 − erf(x)` from the above (at least 0.48, so the
//!   subtraction keeps the relative error; 2 for `x <= −4`);
//! - `0.5 <= x < 12`: `e^(−x²)·R(x)`, `R(x) = erfc(x)·e^(x²)` fitted like
//!   erf's pieces (degree 9 about the midpoints of sixteen intervals, the
//!   worst relative error `3.5·10⁻¹¹`; the interval's coefficients from
//!   two eight-entry tables, `vpermt2pd`). `x²` is exact in f64 for an f32
//!   `x`; `e^(−x²)` is a degree-12 Taylor polynomial after reduction by
//!   `ln 2` (relative error below `10⁻¹⁵`), scaled by `2ⁿ`. The one
//!   rounding to f32 handles subnormal results.
//! - `x >= 12`: 0 (`erfc(x)` rounds to 0 in f32 from `x = 10.06` on).
//!
//! Checked over every f32 (`every_f32_within_one_ulp`, ignored: run it in
//! release); a sample of the bit patterns is checked in every test run.

/// f32 Erf of `v`: eight f64 lanes at a time where the CPU has AVX-512,
/// `libm::erf` in f64, rounded once, per element elsewhere (the
/// reference's function; `erff` differed from it in 3% of the values).
pub fn erf_f32_all(v: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all(v, super::Kernels::avx512(lanes::erf_into), erf_scalar, false);
    #[cfg(not(target_arch = "x86_64"))]
    crate::par::map_heavy(v, erf_scalar)
}

/// f32 Erfc of `v`, as [`erf_f32_all`] (`libm::erfc` in f64, rounded
/// once, per element elsewhere, as before).
pub fn erfc_f32_all(v: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    return super::f32_all(v, super::Kernels::avx512(lanes::erfc_into), erfc_scalar, false);
    #[cfg(not(target_arch = "x86_64"))]
    crate::par::map_heavy(v, erfc_scalar)
}

/// [`erfc_f32_all`] into `out`, on this thread, for fused tiles.
pub fn erfc_f32_into(v: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into(v, out, super::Kernels::avx512(lanes::erfc_into), erfc_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each_into(v, out, erfc_scalar);
}

fn erf_scalar(x: f32) -> f32 {
    libm::erf(x as f64) as f32
}

fn erfc_scalar(x: f32) -> f32 {
    libm::erfc(x as f64) as f32
}

/// [`erf_f32_all`] into `out` (`out.len() == v.len()`), on this thread:
/// the same function for each element as the whole-array kernel, for
/// fused tiles.
pub fn erf_f32_into(v: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    super::f32_into(v, out, super::Kernels::avx512(lanes::erf_into), erf_scalar);
    #[cfg(not(target_arch = "x86_64"))]
    super::each_into(v, out, erf_scalar);
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Each interval's expansion point `c_i` (0 for the first, whose
    /// polynomial is of `a` itself).
    const CENTER: [f64; 8] = [0.0, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75];
    /// `COEF[k][i]`: the coefficient of `t^k` on interval `i`.
    #[allow(clippy::excessive_precision)]
    const COEF: [[f64; 8]; 10] = [
        [
            1.1283791670963514,
            0.7111556336538307,
            0.9229001282579319,
            0.9866716712183773,
            0.9985372834132898,
            0.9998993780779831,
            0.9999956972205332,
            0.9999998862727383,
        ],
        [
            -3.391568970112502e-10,
            0.642931069199118,
            0.23652112244052154,
            0.05277499593047166,
            0.007142319022684855,
            0.0005862772469356742,
            2.9189025354674965e-05,
            8.814321988812538e-07,
        ],
        [
            -0.3761263663173396,
            -0.48219830214934506,
            -0.29565140423529807,
            -0.09235624223354659,
            -0.01607021777695829,
            -0.001612262511176204,
            -9.486432951434102e-05,
            -3.3053668199275576e-06,
        ],
        [
            -5.924900033630612e-07,
            0.026788793045409078,
            0.16753579685635667,
            0.09015728465389437,
            0.02172455347878178,
            0.0027603887556106447,
            0.00019580972133234398,
            7.9696136143751e-06,
        ],
        [
            0.11284580771561371,
            0.150687001859132,
            -0.006159253901307179,
            -0.04810229236678919,
            -0.01908338648373843,
            -0.0032581032038326305,
            -0.00028656972397303644,
            -1.3841738803979715e-05,
        ],
        [
            -6.081450726669668e-05,
            -0.053242578148833694,
            -0.047181172667315495,
            0.006624364115236885,
            0.010657698256382752,
            0.002755803882645141,
            0.00031379637801855366,
            1.8371196207394896e-05,
        ],
        [
            -0.026577801678990716,
            -0.02687397943877639,
            0.02129454085960737,
            0.008966750742704727,
            -0.0029042328014780585,
            -0.0016577959960580682,
            -0.0002635108947181764,
            -1.92503775901235e-05,
        ],
        [
            -0.0008599150380239378,
            0.01842926062344292,
            0.0036303101349096905,
            -0.0060587743901923475,
            -0.0006711540015950209,
            0.0006462070629442077,
            0.0001700225600913296,
            1.626714523229725e-05,
        ],
        [
            0.006814116625107102,
            0.002329195512460229,
            -0.0055744345536017864,
            0.0006619512694455904,
            0.000997341040894918,
            -8.043672951142054e-05,
            -8.198034212680811e-05,
            -1.1536376752011668e-05,
        ],
        [
            -0.0017047520841371835,
            -0.003866771713440512,
            0.0008163548147747112,
            0.0008936908706226258,
            -0.00035820804102288176,
            -7.389624101194681e-05,
            2.5415044592158653e-05,
            6.240475422526237e-06,
        ],
    ];

    /// The tail's interval bounds (`a >= BOUND[k]` moves past interval `k`).
    const BOUND: [f64; 15] = [0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.0, 5.0, 6.5, 8.5];
    /// The tail intervals' midpoints.
    const TAIL_CENTER: [f64; 16] =
        [0.625, 0.875, 1.125, 1.375, 1.625, 1.875, 2.125, 2.375, 2.625, 2.875, 3.25, 3.75, 4.5, 5.75, 7.5, 10.25];
    /// `TAIL[k][i]`: the coefficient of `t^k` of `erfc(a)·e^(a²)` on tail interval `i`.
    #[allow(clippy::excessive_precision)]
    const TAIL: [[f64; 16]; 10] = [
        [
            0.5568138808733641,
            0.46431158320266974,
            0.39569807955299613,
            0.34329588986212534,
            0.30226120936348605,
            0.26942998516467026,
            0.2426703646126545,
            0.22050569220490665,
            0.20188755454601712,
            0.18605493468447104,
            0.1663353484268221,
            0.14558972127503855,
            0.12248480427386099,
            0.09669877816983294,
            0.07457369306303431,
            0.05478458695472323,
        ],
        [
            -0.43236181600380386,
            -0.31583389649084015,
            -0.23805848810127006,
            -0.18431546997466686,
            -0.14603023666418313,
            -0.11801672272799851,
            -0.09703011749173059,
            -0.08097712912220639,
            -0.06846950572892226,
            -0.05856329265980374,
            -0.0471994023211703,
            -0.036456257532723385,
            -0.0260159286309218,
            -0.01634321814371937,
            -0.009773771152281131,
            -0.005295134559298668,
        ],
        [
            0.2865877458676442,
            0.1879569237719134,
            0.12788228043855673,
            0.08986211864673806,
            0.06496207478408986,
            0.04814863004963181,
            0.03648136494273842,
            0.028185010539666645,
            0.022155102007585067,
            0.01768546828751921,
            0.012937290882782696,
            0.008878755527248205,
            0.005413125430682854,
            0.002725273832235156,
            0.0012704094122539282,
            0.000509457684504515,
        ],
        [
            -0.16882964989378296,
            -0.10091439212751106,
            -0.06279394840602623,
            -0.04050337122401303,
            -0.02697791009342376,
            -0.0184920275897134,
            -0.013004811325874829,
            -0.009358486060094302,
            -0.006874908639964461,
            -0.0051450475557098425,
            -0.0034354713009174605,
            -0.002107282870184622,
            -0.0011045761172340798,
            -0.00044859569908140717,
            -0.0001638003344912253,
            -4.879533175359468e-05,
        ],
        [
            0.09053460905302074,
            0.04982841597766795,
            0.02861954450110437,
            0.017084991716125257,
            0.010561485488764798,
            0.006738039179908499,
            0.004423070439006559,
            0.0029793030764826054,
            0.00205423341980644,
            0.0014467282883314841,
            0.0008860046075173919,
            0.000488222391726861,
            0.00022126658035131946,
            7.29244399549532e-05,
            2.0953520443768272e-05,
            4.652861737951701e-06,
        ],
        [
            -0.04489820746340384,
            -0.022925811285022,
            -0.012238784218671596,
            -0.006804602986347403,
            -0.003926198455376946,
            -0.0023432817240073046,
            -0.0014423146080482332,
            -0.000913056564963557,
            -0.0005930182218699813,
            -0.0003942814143434601,
            -0.00022238257116251515,
            -0.00011057957545426524,
            -4.3550834607393946e-05,
            -1.1712422245092458e-05,
            -2.6597650307315992e-06,
            -4.417131307679272e-07,
        ],
        [
            0.020824103253298348,
            0.009922661401482766,
            0.004950257765231981,
            0.00257620160840072,
            0.0013937959875445203,
            0.0007814583554020478,
            0.00045271633202381126,
            0.0002702638664701277,
            0.0001658525794085392,
            0.00010438907677330334,
            5.441906777038848e-05,
            2.4515899517749764e-05,
            8.427833848902057e-06,
            1.8585501029737894e-06,
            3.349034255292471e-07,
            4.168274190521453e-08,
        ],
        [
            -0.009109415831233522,
            -0.004069535609181207,
            -0.0019056406996802542,
            -0.0009320926894932697,
            -0.00047465118380538224,
            -0.0002508624992636227,
            -0.0001372288816136596,
            -7.747350891609837e-05,
            -4.505698162902657e-05,
            -2.6910600027466876e-05,
            -1.3004472420585161e-05,
            -5.326610529681102e-06,
            -1.6053323905383386e-06,
            -2.917617263970917e-07,
            -4.188777632545617e-08,
            -3.925048389726345e-09,
        ],
        [
            0.0038050858169427935,
            0.0015988878289861614,
            0.0007049616063428982,
            0.00032503516619105717,
            0.0001562242194446184,
            7.80373222448693e-05,
            4.0379536570321744e-05,
            2.162203829936693e-05,
            1.1949553889600435e-05,
            6.786088555046667e-06,
            3.0633119036771787e-06,
            1.1430393024798094e-06,
            3.0754237467728664e-07,
            4.682538396974017e-08,
            5.403117020729429e-09,
            3.937839959614548e-10,
        ],
        [
            -0.0015037957685882018,
            -0.0005968672918614741,
            -0.0002482623458138868,
            -0.00010828787604683157,
            -4.9258276198895774e-05,
            -2.3584118552169095e-05,
            -1.1439472915794155e-05,
            -6.029908493386383e-06,
            -2.6776935049779655e-06,
            -1.4493895241837589e-06,
            -6.99583598836852e-07,
            -2.3902871555647183e-07,
            -5.6646378699568685e-08,
            -7.159052455764274e-09,
            -6.628466754020599e-10,
            -3.6467965756234326e-11,
        ],
    ];

    /// `dst[i] = erf(src[i])` for `i < min(src.len(), dst.len())`.
    ///
    /// # Safety
    /// The CPU has AVX-512F and DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub unsafe fn erf_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        each8(src, dst, erf8)
    }

    /// `dst[i] = erfc(src[i])`, as [`erf_into`].
    ///
    /// # Safety
    /// The CPU has AVX-512F and DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub unsafe fn erfc_into(src: &[f32], dst: &mut [MaybeUninit<f32>]) {
        each8(src, dst, erfc8)
    }

    /// `f` on eight f32s at a time, widened to f64 and rounded back once.
    #[inline(always)]
    unsafe fn each8(src: &[f32], dst: &mut [MaybeUninit<f32>], f: unsafe fn(__m512d) -> __m512d) {
        let n = src.len().min(dst.len());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr().cast::<f32>());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: elements i..i + 8 are inside both slices.
            let x = _mm512_cvtps_pd(_mm256_loadu_ps(s.add(i)));
            _mm256_storeu_ps(d.add(i), _mm512_cvtpd_ps(f(x)));
            i += 8;
        }
        if i < n {
            // Masked-out lanes are neither read nor written.
            let mask: __mmask8 = ((1u16 << (n - i)) - 1) as u8;
            let x = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, s.add(i)));
            _mm256_mask_storeu_ps(d.add(i), mask, _mm512_cvtpd_ps(f(x)));
        }
    }

    /// Eight lanes of the method of the module comment.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn erf8(x: __m512d) -> __m512d {
        let sign_bit = _mm512_set1_pd(-0.0);
        let a = _mm512_andnot_pd(sign_bit, x);
        // The interval: ⌊2a⌋, at most 7 (`min` gives 7 for a NaN `a`).
        let halves = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(_mm512_add_pd(a, a));
        let i = _mm512_cvttpd_epi64(_mm512_min_pd(halves, _mm512_set1_pd(7.0)));
        let table = |t: &[f64; 8]| _mm512_permutexvar_pd(i, _mm512_loadu_pd(t.as_ptr()));
        let t = _mm512_sub_pd(a, table(&CENTER));
        let mut p = table(&COEF[9]);
        for k in (0..9).rev() {
            p = _mm512_fmadd_pd(p, t, table(&COEF[k]));
        }
        let first = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, _mm512_set1_pd(0.5));
        let p = _mm512_mask_mul_pd(p, first, p, a);
        let p = _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(a, _mm512_set1_pd(4.0)), p, _mm512_set1_pd(1.0));
        _mm512_or_pd(p, _mm512_and_pd(sign_bit, x))
    }

    /// Eight lanes of Erfc (the module comment).
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn erfc8(x: __m512d) -> __m512d {
        let one = _mm512_set1_pd(1.0);
        let near = _mm512_sub_pd(one, erf8(x));
        // The tail interval: ⌊4x⌋ − 2 up to 3, then one step per bound.
        let quarters = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(_mm512_mul_pd(x, _mm512_set1_pd(4.0)));
        let quarters =
            _mm512_min_pd(_mm512_max_pd(_mm512_sub_pd(quarters, _mm512_set1_pd(2.0)), _mm512_setzero_pd()), _mm512_set1_pd(10.0));
        let mut i = _mm512_cvttpd_epi64(quarters);
        for &b in &BOUND[10..] {
            let past = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, _mm512_set1_pd(b));
            i = _mm512_mask_add_epi64(i, past, i, _mm512_set1_epi64(1));
        }
        let table = |t: &[f64; 16]| _mm512_permutex2var_pd(_mm512_loadu_pd(t.as_ptr()), i, _mm512_loadu_pd(t.as_ptr().add(8)));
        let t = _mm512_sub_pd(x, table(&TAIL_CENTER));
        let mut r = table(&TAIL[9]);
        for k in (0..9).rev() {
            r = _mm512_fmadd_pd(r, t, table(&TAIL[k]));
        }
        let tail = _mm512_mul_pd(exp_negative(_mm512_mul_pd(x, x)), r);
        let in_tail = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, _mm512_set1_pd(0.5));
        let v = _mm512_mask_blend_pd(in_tail, near, tail);
        _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, _mm512_set1_pd(12.0)), v, _mm512_setzero_pd())
    }

    /// `e^(−y)` for `0 <= y <= 150`: `y·log₂e` rounded to `n`, the rest
    /// `r = −y − n·ln 2` (|r| <= ln2/2, `ln 2` in two parts), Taylor to
    /// `r¹²/12!` (error below `2·10⁻¹⁶`), times `2ⁿ`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn exp_negative(y: __m512d) -> __m512d {
        const LN2_HI: f64 = 0.693_147_180_369_123_8;
        const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
        let minus_y = _mm512_sub_pd(_mm512_setzero_pd(), y);
        let n = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm512_mul_pd(
            minus_y,
            _mm512_set1_pd(std::f64::consts::LOG2_E),
        ));
        let r = _mm512_fnmadd_pd(n, _mm512_set1_pd(LN2_HI), minus_y);
        let r = _mm512_fnmadd_pd(n, _mm512_set1_pd(LN2_LO), r);
        let mut p = _mm512_set1_pd(1.0 / 479_001_600.0);
        let mut factorial = 479_001_600.0;
        for k in (0..12).rev() {
            factorial /= (k + 1) as f64;
            p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / factorial));
        }
        _mm512_scalef_pd(p, n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::f32_ulps as ulps;
    use super::*;

    fn reference(x: f32) -> f32 {
        libm::erf(x as f64) as f32
    }

    fn check(xs: &[f32]) -> (u64, u64) {
        let got = erf_f32_all(xs);
        let mut differ = 0;
        for (&x, &g) in xs.iter().zip(&got) {
            let want = reference(x);
            if want.is_nan() {
                assert!(g.is_nan(), "erf({x:e}) = {g:e}, not NaN");
                continue;
            }
            let d = ulps(g, want);
            assert!(d <= 1, "erf({x:e} = {:#x}) = {g:e}, the reference {want:e}: {d} ulps", x.to_bits());
            assert_eq!(g.is_sign_negative(), want.is_sign_negative(), "sign of erf({x:e})");
            differ += u64::from(d != 0);
        }
        (differ, xs.len() as u64)
    }

    #[test]
    fn special_values_and_interval_edges() {
        let mut xs = vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-45, -1e-45, f32::MIN_POSITIVE, 1e-10, 0.5, 1.0];
        for edge in [0.5_f32, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 3.92, 4.0, 20.0, f32::MAX] {
            let mut v = edge;
            for _ in 0..50 {
                xs.extend([v, -v]);
                v = f32::from_bits(v.to_bits() - 1);
            }
        }
        check(&xs);
        let got = erf_f32_all(&[-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 5.0]);
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            [0x8000_0000, 0, 1f32.to_bits(), (-1f32).to_bits(), 1f32.to_bits()]
        );
    }

    /// Every 1009th f32 bit pattern (4.3 million values), and a dense walk
    /// of [-5, 5]: within one ulp of the reference, and almost always
    /// equal to it.
    #[test]
    fn sampled_f32_within_one_ulp() {
        let xs: Vec<f32> = (0..=u32::MAX).step_by(1009).map(f32::from_bits).collect();
        let (differ, count) = check(&xs);
        assert!(differ * 100 < count, "{differ} of {count} differ");
        let walk: Vec<f32> = (0..2_000_000).map(|i| -5.0 + i as f32 * 5e-6).collect();
        check(&walk);
    }

    #[test]
    fn erfc_within_one_ulp_on_samples_and_edges() {
        let mut xs: Vec<f32> = (0..=u32::MAX).step_by(1009).map(f32::from_bits).collect();
        xs.extend((0..3_000_000).map(|i| -5.0 + i as f32 * 6e-6));
        for edge in [0.5_f32, 0.75, 3.0, 3.5, 4.0, 5.0, 6.5, 8.5, 10.05, 12.0] {
            let mut v = edge;
            for _ in 0..50 {
                xs.extend([v, -v]);
                v = f32::from_bits(v.to_bits() - 1);
            }
        }
        let got = erfc_f32_all(&xs);
        for (&x, &g) in xs.iter().zip(&got) {
            let want = libm::erfc(x as f64) as f32;
            if want.is_nan() {
                assert!(g.is_nan(), "erfc({x:e}) = {g:e}, not NaN");
                continue;
            }
            assert!(ulps(g, want) <= 1, "erfc({x:e} = {:#x}) = {g:e}, the reference {want:e}", x.to_bits());
        }
        let got = erfc_f32_all(&[f32::INFINITY, f32::NEG_INFINITY, -0.0, 20.0]);
        assert_eq!(got, [0.0, 2.0, 1.0, 0.0]);
    }

    /// Every f32 (run with `--ignored` in release).
    #[test]
    #[ignore]
    fn every_f32_within_one_ulp() {
        let (mut differ, mut count) = (0, 0);
        for chunk in 0..256u32 {
            let xs: Vec<f32> = (0..1u32 << 24).map(|i| f32::from_bits((chunk << 24) | i)).collect();
            let (d, c) = check(&xs);
            differ += d;
            count += c;
            let got = erfc_f32_all(&xs);
            for (&x, &g) in xs.iter().zip(&got) {
                let want = libm::erfc(x as f64) as f32;
                assert!(want.is_nan() && g.is_nan() || ulps(g, want) <= 1, "erfc({x:e}) = {g:e}, the reference {want:e}");
            }
        }
        eprintln!("{differ} of {count} one ulp off");
    }
}
