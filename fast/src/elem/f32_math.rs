//! Log, Log1p, Expm1, Tanh, Logistic, and Sin, Cos and Tan below 2^20 in
//! magnitude, of f32 values (and of f16, bf16 and f8, which compute in
//! f32), without a call into libm, so that their loops vectorize: the
//! platform's functions are a call per element, which kept these ops at up
//! to a sixth of XLA CPU's speed (16M elements: Tanh 123 ms, Logistic 44
//! ms, Sin 40 ms, Log 24 ms; XLA 21–22 ms).
//!
//! Each is computed in f64, branch-free (both sides of a case split are
//! computed and one is selected), and rounded to f32 once, as the reference
//! does with its f64 functions. The f64 values carry relative errors below
//! `2^-46`, so the rounded result is within one ulp of the reference's (the
//! tolerance model's bound for these ops) and equal to it except where the
//! exact value lies within about `2^-46` (relative) of a midpoint between
//! two f32s. Checked over all 2^32 inputs by the ignored tests
//! `*_on_every_f32` (run in release).

use std::f64::consts::LN_2;

use super::exp::exp_f64_near;

/// `1.0f64.to_bits() - (√2/2).to_bits()`: added to the bits of a positive
/// normal `x = 2^e·M`, it carries into the exponent exactly when `M >= √2`,
/// which splits `x` as `2^k·m` with `m` in [√2/2, √2) (see [`ln_positive`]).
const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
const SHIFT_TO_SQRT_HALF: u64 = 0x3ff0_0000_0000_0000 - SQRT_HALF_BITS;
const MANTISSA: u64 = (1 << 52) - 1;

/// `atanh(s)/s = Σ s^(2i)/(2i+1)`, i = 8 down to 0, Horner order in `s²`.
/// With `|s| <= (√2-1)/(√2+1)`, `s² < 0.0295`, the first term left out is
/// below `2^-50` (relative).
const ATANH_SERIES: [f64; 9] = [1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0, 1.0];

/// `tanh(a)/a` as a series in `a²`: 1, -1/3, 2/15, -17/315, 62/2835,
/// -1382/155925 (Horner order). For `a < 2^-5` the first term left out is
/// below `2^-68` (relative).
const TANH_SERIES: [f64; 6] = [-1382.0 / 155925.0, 62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0];

/// `(e^a - 1)/a` as a series in `a`: `Σ a^i/(i+1)!`, i = 7 down to 0. For
/// `|a| < 2^-5` the first term left out is below `2^-55` (relative).
const EXPM1_SERIES: [f64; 8] = [1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 1.0 / 2.0, 1.0];

/// Below this magnitude Tanh and Expm1 take their series: above it,
/// `e^a - 1` loses at most `log2(1/(2a)) = 4` bits to cancellation.
const SERIES_BELOW: f64 = 1.0 / 32.0;

#[inline(always)]
fn horner(z: f64, coefficients: &[f64]) -> f64 {
    let mut p = coefficients[0];
    for &c in &coefficients[1..] {
        p = p.mul_add(z, c);
    }
    p
}

/// `ln x` for a positive normal f64 (every positive finite f32 is one):
/// `x = 2^k·m` with `m` in [√2/2, √2), `f = m - 1` (exact), and
/// `ln m = 2·atanh(s)` with `s = f/(2 + f)`.
#[inline(always)]
fn ln_positive(x: f64) -> f64 {
    let shifted = x.to_bits().wrapping_add(SHIFT_TO_SQRT_HALF);
    let k = ((shifted >> 52) as i64 - 0x3ff) as f64;
    let m = f64::from_bits((shifted & MANTISSA) + SQRT_HALF_BITS);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let ln_m = 2.0 * s * horner(s * s, &ATANH_SERIES);
    k.mul_add(LN_2, ln_m)
}

/// The document's Log: `ln x`; `-inf` at ±0, NaN below 0, `+inf` at `+inf`.
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    let y = ln_positive(x as f64) as f32;
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x == 0.0 { f32::NEG_INFINITY } else { y };
    // NaN arguments fail `x >= 0` too.
    if x >= 0.0 {
        y
    } else {
        f32::NAN
    }
}

/// The document's Log1p: `ln(1 + x)`. `u = 1 + x` is rounded in f64 (when
/// `|x| < 2^-29`); `ln u + (x - (u - 1))/u` restores the lost part to first
/// order, and below `2^-29` the result rounds to `x` itself (which keeps
/// `-0`).
#[inline(always)]
pub fn ln_1p_f32(x: f32) -> f32 {
    let d = x as f64;
    let u = 1.0 + d;
    let y = (ln_positive(u) + (d - (u - 1.0)) / u) as f32;
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x == -1.0 { f32::NEG_INFINITY } else { y };
    let y = if d.abs() < 1.0 / (1u64 << 29) as f64 { x } else { y };
    if x >= -1.0 {
        y
    } else {
        f32::NAN
    }
}

/// The document's Expm1: `e^x - 1`, by its series near 0 and from `e^x`
/// elsewhere (clamped where the f32 result is -1 or +inf anyway).
#[inline(always)]
pub fn exp_m1_f32(x: f32) -> f32 {
    let d = (x as f64).clamp(-110.0, 89.0);
    let near_zero = d * horner(d, &EXPM1_SERIES);
    let y = if d.abs() < SERIES_BELOW { near_zero } else { exp_f64_near(d) - 1.0 };
    y as f32
}

/// The document's Tanh: `sign(x)·(e^2a - 1)/(e^2a + 1)` with `a = |x|`,
/// by its series near 0. Beyond `a = 20` the f32 result is ±1.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = (x as f64).abs().clamp(0.0, 20.0);
    let near_zero = a * horner(a * a, &TANH_SERIES);
    let e = exp_f64_near(2.0 * a) - 1.0;
    let elsewhere = e / (e + 2.0);
    let t = if a < SERIES_BELOW { near_zero } else { elsewhere };
    (t as f32).copysign(x)
}

/// The document's Logistic: `1/(1 + e^-x)`, rounded once. Beyond ±110 the
/// f32 result is 1 or +0 anyway; `e^110` keeps the sum finite.
#[inline(always)]
pub fn logistic_f32(x: f32) -> f32 {
    let minus_x = (-(x as f64)).clamp(-110.0, 110.0);
    (1.0 / (1.0 + exp_f64_near(minus_x))) as f32
}

/// Sin, Cos and Tan take the libm path at and beyond this magnitude (and
/// for NaN): below it the three-part reduction of [`quadrant`] is exact to
/// far below an f32 ulp; above it the multiple of π/2 needs more bits than
/// an f64 carries (Payne–Hanek's domain).
pub const TRIG_NEAR: f32 = (1 << 20) as f32;

/// `π/2` in three parts of 33 bits and the rest (fdlibm's `pio2_1`,
/// `pio2_2`, `pio2_3`): `k·PIO2_1` and `k·PIO2_2` are exact for `k < 2^20`.
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000);

/// `1.5·2^52`: adding it rounds a value below 2^51 in magnitude to an
/// integer, held in the low bits of the sum.
const ROUND_TO_INTEGER: f64 = 6755399441055744.0;

/// Taylor series of `(sin r - r)/r³` and `(cos r - 1 + r²/2)/r⁴` in `r²`,
/// Horner order; on |r| <= π/4 the first terms left out are below `2^-55`
/// and `2^-58` (relative).
const SIN_SERIES: [f64; 7] =
    [1.0 / 1307674368000.0, -1.0 / 6227020800.0, 1.0 / 39916800.0, -1.0 / 362880.0, 1.0 / 5040.0, -1.0 / 120.0, 1.0 / 6.0];
const COS_SERIES: [f64; 7] =
    [1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0];

/// `x = k·π/2 + r` with `|r| <= π/4` (for `|x| <` [`TRIG_NEAR`]): `r` and
/// `k mod 4`.
#[inline(always)]
fn quadrant(x: f64) -> (f64, u64) {
    let shifted = x.mul_add(std::f64::consts::FRAC_2_PI, ROUND_TO_INTEGER);
    let k = shifted - ROUND_TO_INTEGER;
    let r = (-k).mul_add(PIO2_1, x);
    let r = (-k).mul_add(PIO2_2, r);
    let r = (-k).mul_add(PIO2_3, r);
    (r, shifted.to_bits() & 3)
}

/// `sin r` and `cos r` for `|r| <= π/4`.
#[inline(always)]
fn sin_cos_reduced(r: f64) -> (f64, f64) {
    let z = r * r;
    // At r = ±0 the series would sum `-0 + +0 = +0`: sin(-0) is -0.
    let sin = if r == 0.0 { r } else { (-z * r).mul_add(horner(z, &SIN_SERIES), r) };
    let cos = (z * z).mul_add(horner(z, &COS_SERIES), (-0.5f64).mul_add(z, 1.0));
    (sin, cos)
}

/// The document's Sin, for `|x| <` [`TRIG_NEAR`] (elsewhere: unspecified;
/// the caller takes libm's).
#[inline(always)]
pub fn sin_near_f32(x: f32) -> f32 {
    let (r, q) = quadrant(x as f64);
    let (sin, cos) = sin_cos_reduced(r);
    let y = if q & 1 == 0 { sin } else { cos };
    (if q & 2 == 0 { y } else { -y }) as f32
}

/// The document's Cos, for `|x| <` [`TRIG_NEAR`].
#[inline(always)]
pub fn cos_near_f32(x: f32) -> f32 {
    let (r, q) = quadrant(x as f64);
    let (sin, cos) = sin_cos_reduced(r);
    let y = if q & 1 == 0 { cos } else { sin };
    (if (q + 1) & 2 == 0 { y } else { -y }) as f32
}

/// The document's Tan, for `|x| <` [`TRIG_NEAR`]: `sin r/cos r` or
/// `-cos r/sin r` by the parity of `k` (`r` is never 0 for odd `k`: no f32
/// is an odd multiple of π/2).
#[inline(always)]
pub fn tan_near_f32(x: f32) -> f32 {
    let (r, q) = quadrant(x as f64);
    let (sin, cos) = sin_cos_reduced(r);
    (if q & 1 == 0 { sin / cos } else { -cos / sin }) as f32
}

#[cfg(test)]
mod tests {
    use super::super::f32_ulps as ulps;
    use super::*;

    /// The functions and their reference: the f64 function of `std`,
    /// rounded once (the reference engine evaluates in f64 too).
    type Pair = (&'static str, fn(f32) -> f32, fn(f32) -> f32);
    fn near(x: f32) -> bool {
        x.abs() < TRIG_NEAR
    }
    fn pairs() -> [Pair; 8] {
        [
            ("ln", ln_f32, |x| (x as f64).ln() as f32),
            ("ln_1p", ln_1p_f32, |x| (x as f64).ln_1p() as f32),
            ("exp_m1", exp_m1_f32, |x| (x as f64).exp_m1() as f32),
            ("tanh", tanh_f32, |x| (x as f64).tanh() as f32),
            ("logistic", logistic_f32, |x| (1.0 / (1.0 + (-(x as f64)).exp())) as f32),
            // Below TRIG_NEAR (NaN beyond, for both).
            ("sin", |x| if near(x) { sin_near_f32(x) } else { f32::NAN }, |x| if near(x) { (x as f64).sin() as f32 } else { f32::NAN }),
            ("cos", |x| if near(x) { cos_near_f32(x) } else { f32::NAN }, |x| if near(x) { (x as f64).cos() as f32 } else { f32::NAN }),
            ("tan", |x| if near(x) { tan_near_f32(x) } else { f32::NAN }, |x| if near(x) { (x as f64).tan() as f32 } else { f32::NAN }),
        ]
    }

    /// (ulps off by one, beyond one or NaN mismatched) over `bits`.
    fn compare(f: fn(f32) -> f32, reference: fn(f32) -> f32, bits: impl Iterator<Item = u32>) -> (u64, u64, u64) {
        let (mut count, mut one, mut worse) = (0, 0, 0);
        for b in bits {
            let x = f32::from_bits(b);
            let (got, want) = (f(x), reference(x));
            count += 1;
            match (want.is_nan(), got.is_nan()) {
                (true, true) => {}
                (true, false) | (false, true) => worse += 1,
                (false, false) => match ulps(got, want) {
                    0 => {}
                    1 => one += 1,
                    _ => worse += 1,
                },
            }
        }
        (count, one, worse)
    }

    #[test]
    fn special_values() {
        let inf = f32::INFINITY;
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        type Case = (fn(f32) -> f32, f32, f32);
        let cases: [Case; 35] = [
            (ln_f32, 1.0, 0.0),
            (ln_f32, 0.0, -inf),
            (ln_f32, -0.0, -inf),
            (ln_f32, -1e-45, f32::NAN),
            (ln_f32, inf, inf),
            (ln_f32, -inf, f32::NAN),
            (ln_f32, f32::NAN, f32::NAN),
            (ln_f32, 2.0, std::f32::consts::LN_2),
            (ln_1p_f32, 0.0, 0.0),
            (ln_1p_f32, -0.0, -0.0),
            (ln_1p_f32, -1.0, -inf),
            (ln_1p_f32, -1.5, f32::NAN),
            (ln_1p_f32, inf, inf),
            (ln_1p_f32, 1e-45, 1e-45),
            (ln_1p_f32, f32::NAN, f32::NAN),
            (exp_m1_f32, -0.0, -0.0),
            (exp_m1_f32, -inf, -1.0),
            (exp_m1_f32, inf, inf),
            (exp_m1_f32, 1e-45, 1e-45),
            (exp_m1_f32, f32::NAN, f32::NAN),
            (tanh_f32, -0.0, -0.0),
            (tanh_f32, inf, 1.0),
            (tanh_f32, -inf, -1.0),
            (tanh_f32, -1e-45, -1e-45),
            (tanh_f32, f32::NAN, f32::NAN),
            (logistic_f32, 0.0, 0.5),
            (logistic_f32, inf, 1.0),
            (logistic_f32, -inf, 0.0),
            (logistic_f32, f32::NAN, f32::NAN),
            (sin_near_f32, 0.0, 0.0),
            (sin_near_f32, -0.0, -0.0),
            (sin_near_f32, -1e-45, -1e-45),
            (cos_near_f32, -0.0, 1.0),
            (tan_near_f32, -0.0, -0.0),
            (tan_near_f32, 1e-45, 1e-45),
        ];
        for (i, (f, x, want)) in cases.into_iter().enumerate() {
            assert!(same(f(x), want), "case {i}: f({x:e}) = {:e}, want {want:e}", f(x));
        }
    }

    /// Near the case splits and the clamps, where a wrong constant shows:
    /// every f32 in a window around each, against the reference.
    #[test]
    fn around_the_case_splits() {
        let points = [
            TRIG_NEAR,
            -TRIG_NEAR,
            std::f32::consts::FRAC_PI_4,
            std::f32::consts::FRAC_PI_2,
            -std::f32::consts::PI,
            1.0_f32 / 32.0,
            -1.0 / 32.0,
            1.0,
            -1.0,
            2f32.powi(-29),
            -(2f32.powi(-29)),
            std::f32::consts::FRAC_1_SQRT_2,
            std::f32::consts::SQRT_2,
            20.0,
            9.0,
            89.0,
            -88.7,
            -103.9,
            110.0,
            -110.0,
        ];
        for (name, f, reference) in pairs() {
            for p in points {
                let b = p.to_bits();
                let (count, one, worse) = compare(f, reference, b.saturating_sub(5000)..b.saturating_add(5000));
                assert_eq!(worse, 0, "{name} near {p:e}");
                assert!(one * 1000 < count, "{name} near {p:e}: {one} of {count} differ by one ulp");
            }
        }
    }

    /// Every 97th f32 bit pattern (44 million values) for each function:
    /// never beyond one ulp of the reference, and one ulp off for fewer
    /// than one in ten thousand.
    #[test]
    fn within_one_ulp_of_the_reference_over_the_whole_range() {
        use rayon::prelude::*;
        // Split by the top 8 bits across threads: the test build does not
        // optimize this crate (Cargo.toml), so one thread takes a minute.
        const STEP: u32 = 97;
        for (name, f, reference) in pairs() {
            let (count, one, worse) = (0u32..256)
                .into_par_iter()
                .map(|high| {
                    let start = high << 24;
                    // The patterns of the serial `(0..=u32::MAX).step_by(97)` in this block.
                    let first = start.div_ceil(STEP) * STEP;
                    let end = start | 0x00ff_ffff;
                    compare(f, reference, (first..=end).step_by(STEP as usize))
                })
                .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
            assert_eq!(worse, 0, "{name}");
            assert!(one * 10_000 < count, "{name}: {one} of {count} differ by one ulp");
        }
    }

    /// All 2^32 inputs of each function (about 20 s each in release with
    /// two threads): `cargo test --release -p xlaref-fast --lib --
    /// --ignored on_every_f32`.
    #[test]
    #[ignore]
    fn f32_math_matches_the_reference_on_every_f32() {
        use rayon::prelude::*;
        for (name, f, reference) in pairs() {
            let (count, one, worse) = (0u32..1 << 12)
                .into_par_iter()
                .map(|high| compare(f, reference, (0..1u32 << 20).map(move |low| high << 20 | low)))
                .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
            println!("{name}: {one} of {count} differ by one ulp, {worse} by more");
            assert_eq!(worse, 0, "{name}");
        }
    }
}
