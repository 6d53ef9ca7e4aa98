//! The special functions of the CHLO extension ops (docs/format.md, "CHLO
//! extension ops"): what XLA's client math library
//! (`xla/hlo/builder/lib/math.cc`) and StableHLO's CHLO decompositions
//! compute, evaluated in f64 and rounded once into the element type like
//! every other real float op (numerics/float.rs).
//!
//! The algorithms are XLA's (Lanczos for Lgamma and Digamma, Giles for
//! ErfInv, Cephes' Chebyshev series for BesselI1e, Euler–Maclaurin for
//! Zeta), and so are the special values that XLA sets explicitly (poles,
//! domain errors). Evaluated in f64 they are accurate to a few f64 ulps,
//! which is more than XLA's own f32 evaluation gives: XLA's approximation
//! error is implementation-defined (docs/semantics-decisions.md, "CHLO
//! extension ops"). Where XLA's value is an artefact of its formula rather
//! than a rule (`Zeta(inf, 2)` is NaN there, an `inf·0`), these functions
//! give the mathematical limit instead; each such place says so.

use std::f64::consts::PI;

use super::float::Float;

/// g of the Lanczos approximation XLA uses (g = 7, n = 9).
const LANCZOS_G: f64 = 7.0;
/// The leading coefficient and the eight partial-fraction coefficients of
/// that approximation (XLA's `kBaseLanczosCoeff`, `kLanczosCoefficients`).
const LANCZOS_BASE: f64 = 0.9999999999998099;
const LANCZOS: [f64; 8] = [
    676.5203681218851,
    -1259.1392167224028,
    771.3234287776531,
    -176.6150291621406,
    12.507343278686905,
    -0.13857109526572012,
    9.984369578019572e-06,
    1.5056327351493116e-07,
];

/// `ln(g + 1/2)` and `t = z + g + 1/2` of the Lanczos formula, with the
/// logarithm split as `ln(g + 1/2) + log1p(z / (g + 1/2))`, as XLA does, so
/// that small `z` keeps its digits.
fn lanczos_t(z: f64) -> (f64, f64) {
    let half_g = LANCZOS_G + 0.5;
    (z + half_g, libm::log(half_g) + libm::log1p(z / half_g))
}

/// The fractional distance of `x` to the nearest integer, folded into
/// [0, 1/2]: `|sin(π x)| = sin(π · reduced(x))`, exactly 0 at integers and
/// without the rounding of `π x` for large `|x|`.
fn reduced_fraction(x: f64) -> f64 {
    let a = x.abs();
    let frac = a - a.floor();
    if frac > 0.5 {
        1.0 - frac
    } else {
        frac
    }
}

/// Lgamma — `ln |Γ(x)|` by Lanczos' approximation (g = 7, n = 9, XLA's
/// coefficients), with Euler's reflection `ln π − ln|sin πx| − lgamma(1 − x)`
/// for `x < 1/2`. Poles (0, negative integers) and `±inf` give `+inf`, NaN
/// gives NaN (XLA's rules).
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x == 1.0 || x == 2.0 {
        // Γ(1) = Γ(2) = 1: exactly 0 (as XLA CPU in f64), not Lanczos' 1e-16.
        return 0.0;
    }
    let reflect = x < 0.5;
    let z = if reflect { -x } else { x - 1.0 };
    let mut sum = LANCZOS_BASE;
    for (k, c) in LANCZOS.iter().enumerate() {
        sum += c / (z + k as f64 + 1.0);
    }
    let (t, ln_t) = lanczos_t(z);
    // (z + 1/2)·ln t − t written so that it cannot overflow for large z.
    let ln_y = 0.5 * libm::log(2.0 * PI) + (z + 0.5 - t / ln_t) * ln_t + libm::log(sum);
    if !reflect {
        return ln_y;
    }
    let r = reduced_fraction(x);
    // For tiny r, sin(πr) = πr to far below f64's precision, and ln π + ln r
    // keeps the digits that rounding πr onto the subnormal grid would lose
    // (lgamma(5e-324) = 744.44, not 744.49).
    let ln_sin = if r < 1e-8 { libm::log(PI) + libm::log(r) } else { libm::log(libm::sin(PI * r)) };
    if !ln_sin.is_finite() {
        // sin(πx) = 0: a pole; -ln 0 = +inf wins over the finite rest.
        return -ln_sin;
    }
    libm::log(PI) - ln_sin - ln_y
}

/// Digamma — `ψ(x) = Γ'(x)/Γ(x)` from the derivative of the same Lanczos
/// approximation (`ln t + A'/A − g/t`), with the reflection
/// `ψ(x) = ψ(1 − x) − π cot(πx)` for `x < 1/2`, the cotangent taken of `x`
/// shifted into [−1/2, 1/2]. Zero, the negative integers and `−inf` give
/// NaN (XLA CPU; the one-sided limits disagree), `+inf` gives `+inf`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    let reflect = x < 0.5;
    let z = if reflect { -x } else { x - 1.0 };
    let (mut num, mut den) = (0.0, LANCZOS_BASE);
    for (k, c) in LANCZOS.iter().enumerate() {
        let d = z + k as f64 + 1.0;
        num -= c / (d * d);
        den += c / d;
    }
    let (t, ln_t) = lanczos_t(z);
    let y = ln_t + num / den - LANCZOS_G / t;
    if !reflect {
        return y;
    }
    let r = x + (x + 0.5).floor().abs();
    y - PI * libm::cos(PI * r) / libm::sin(PI * r)
}

/// Coefficients of Giles' double-precision erfinv approximation ("Approximating
/// the erfinv function", GPU Computing Gems, 2011), as XLA's `ErfInv64`:
/// three polynomials in `w = −ln(1 − x²)`, for `w < 6.25`, `w < 16` and beyond,
/// highest degree first.
const ERFINV_W_BELOW_6_25: [f64; 23] = [
    -3.64441206401782e-21,
    -1.6850591381820166e-19,
    1.28584807152564e-18,
    1.1157877678025181e-17,
    -1.333171662854621e-16,
    2.0972767875968562e-17,
    6.637638134358324e-15,
    -4.054566272975207e-14,
    -8.151934197605472e-14,
    2.6335093153082323e-12,
    -1.2975133253453532e-11,
    -5.415412054294628e-11,
    1.0512122733215323e-09,
    -4.112633980346984e-09,
    -2.9070369957882005e-08,
    4.2347877827932404e-07,
    -1.3654692000834679e-06,
    -1.3882523362786469e-05,
    0.00018673420803405714,
    -0.000740702534166267,
    -0.006033670871430149,
    0.24015818242558962,
    1.6536545626831027,
];
const ERFINV_W_BELOW_16: [f64; 19] = [
    2.2137376921775787e-09,
    9.075656193888539e-08,
    -2.7517406297064545e-07,
    1.8239629214389228e-08,
    1.5027403968909828e-06,
    -4.013867526981546e-06,
    2.9234449089955446e-06,
    1.2475304481671779e-05,
    -4.7318229009055734e-05,
    6.828485145957318e-05,
    2.4031110387097894e-05,
    -0.0003550375203628475,
    0.0009532893797373805,
    -0.0016882755560235047,
    0.002491442096107851,
    -0.003751208507569241,
    0.005370914553590064,
    1.0052589676941592,
    3.0838856104922208,
];
const ERFINV_W_ABOVE_16: [f64; 17] = [
    -2.7109920616438573e-11,
    -2.555641816996525e-10,
    1.5076572693500548e-09,
    -3.789465440126737e-09,
    7.61570120807834e-09,
    -1.496002662714924e-08,
    2.914795345090108e-08,
    -6.771199775845234e-08,
    2.2900482228026655e-07,
    -9.9298272942317e-07,
    4.526062597223154e-06,
    -1.968177810553167e-05,
    7.599527703001776e-05,
    -0.00021503011930044477,
    -0.00013871931833623122,
    1.0103004648645344,
    4.849906401408584,
];

/// Horner's rule, coefficients highest degree first.
fn horner(coefficients: &[f64], w: f64) -> f64 {
    coefficients.iter().fold(0.0, |p, &c| p * w + c)
}

/// ErfInv — the inverse of erf on [−1, 1] by Giles' double-precision
/// polynomials (XLA's `ErfInv64`), for every element type: `erfinv(±1) =
/// ±inf`, NaN outside [−1, 1]. `1 − x²` is formed as `(1 − x)(1 + x)` for
/// `|x| >= 1/2`, which keeps its digits near ±1 where XLA's `−x·x` rounds
/// them away (an XLA CPU deviation; its value there is approximate).
pub fn erf_inv(x: f64) -> f64 {
    let a = x.abs();
    if x.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(x);
    }
    let w = if a < 0.5 { -libm::log1p(-x * x) } else { -libm::log((1.0 - a) * (1.0 + a)) };
    let p = if w < 6.25 {
        horner(&ERFINV_W_BELOW_6_25, w - 3.125)
    } else if w < 16.0 {
        horner(&ERFINV_W_BELOW_16, w.sqrt() - 3.25)
    } else {
        horner(&ERFINV_W_ABOVE_16, w.sqrt() - 5.0)
    };
    p * x
}

/// Cephes' Chebyshev coefficients of `exp(−x)·I1(x)/x` on [0, 8] (in `x/2 − 2`)
/// and of `exp(−x)·sqrt(x)·I1(x)` on (8, inf) (in `32/x − 2`), as XLA's
/// `I1eImpl64`.
const I1E_A: [f64; 29] = [
    2.7779141127610464e-18,
    -2.111421214358166e-17,
    1.5536319577362005e-16,
    -1.1055969477353862e-15,
    7.600684294735408e-15,
    -5.042185504727912e-14,
    3.223793365945575e-13,
    -1.9839743977649436e-12,
    1.1736186298890901e-11,
    -6.663489723502027e-11,
    3.625590281552117e-10,
    -1.8872497517228294e-09,
    9.381537386495773e-09,
    -4.445059128796328e-08,
    2.0032947535521353e-07,
    -8.568720264695455e-07,
    3.4702513081376785e-06,
    -1.3273163656039436e-05,
    4.781565107550054e-05,
    -0.00016176081582589674,
    0.0005122859561685758,
    -0.0015135724506312532,
    0.004156422944312888,
    -0.010564084894626197,
    0.024726449030626516,
    -0.05294598120809499,
    0.1026436586898471,
    -0.17641651835783406,
    0.25258718644363365,
];
const I1E_B: [f64; 25] = [
    7.517296310842105e-18,
    4.414348323071708e-18,
    -4.6503053684893586e-17,
    -3.209525921993424e-17,
    2.96262899764595e-16,
    3.3082023109209285e-16,
    -1.8803547755107825e-15,
    -3.8144030724370075e-15,
    1.0420276984128802e-14,
    4.272440016711951e-14,
    -2.1015418427726643e-14,
    -4.0835511110921974e-13,
    -7.198551776245908e-13,
    2.0356285441470896e-12,
    1.4125807436613782e-11,
    3.2526035830154884e-11,
    -1.8974958123505413e-11,
    -5.589743462196584e-10,
    -3.835380385964237e-09,
    -2.6314688468895196e-08,
    -2.512236237870209e-07,
    -3.882564808877691e-06,
    -0.00011058893876262371,
    -0.009761097491361469,
    0.7785762350182801,
];

/// Cephes' `chbevl`: the Chebyshev series `Σ' c_k T_k(x/2)` by Clenshaw's
/// recurrence (coefficients highest order first, the last one halved).
fn chebyshev(x: f64, coefficients: &[f64]) -> f64 {
    let (mut b0, mut b1, mut b2) = (0.0, 0.0, 0.0);
    for &c in coefficients {
        b2 = b1;
        b1 = b0;
        b0 = x * b1 - b2 + c;
    }
    0.5 * (b0 - b2)
}

/// BesselI1e — `exp(−|x|)·I1(x)`, the exponentially scaled modified Bessel
/// function of the first kind of order one, by Cephes' Chebyshev series
/// (XLA's `I1eImpl64`). Odd: `±0 → ±0`, `±inf → ±0`, NaN → NaN.
pub fn bessel_i1e(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let z = x.abs();
    let magnitude = if z <= 8.0 { z * chebyshev(0.5 * z - 2.0, &I1E_A) } else { chebyshev(32.0 / z - 2.0, &I1E_B) / z.sqrt() };
    magnitude.copysign(x)
}

/// `B_2j / (2j)!` for j = 1..=12: the Euler–Maclaurin coefficients of Zeta
/// (XLA's `kZetaCoeffs` are their reciprocals).
const ZETA_EM: [f64; 12] = [
    0.083_333_333_333_333_33,
    -0.001_388_888_888_888_889,
    3.306_878_306_878_307e-5,
    -8.267_195_767_195_768e-7,
    2.087_675_698_786_81e-8,
    -5.284_190_138_687_493e-10,
    1.338_253_653_068_467_9e-11,
    -3.389_680_296_322_582_7e-13,
    8.586_062_056_277_845e-15,
    -2.174_868_698_558_062e-16,
    5.509_002_828_360_229_5e-18,
    -1.395_446_468_581_252_2e-19,
];

/// Zeta — the Hurwitz zeta function `ζ(x, q) = Σ_{k>=0} (k + q)^−x`.
///
/// XLA's rules: `x = 1` gives `+inf` (the harmonic series), `x < 1` NaN;
/// for `q <= 0` a non-integer `x` gives NaN, and an integer `q <= 0` is a
/// pole: `+inf` for even integer `x`, NaN otherwise.
///
/// Values by Euler–Maclaurin summation (as math.cc, after Johansson 2015):
/// the first terms summed directly until `a = q + N` is at least
/// `max(16, 2x)` (or the terms stop mattering), then
/// `a^(1−x)/(x−1) + a^−x/2 + Σ_j B_2j/(2j)! · x(x+1)…(x+2j−2) · a^(−x−2j+1)`
/// with 12 terms. XLA shifts by a fixed 10, which is accurate only for
/// moderate `x` and `q > −10`; this is the function it approximates.
/// A negative non-integer `q` (integer `x`) is split into the positive
/// tail from `q + ⌈−q⌉` and the negative terms, which for integer `x` are
/// `(−1)^x` times a difference of two zetas — no term-by-term loop over
/// `|q|` terms. Limits where XLA's formula gives NaN: `ζ(+inf, q)` is 0 for
/// `q > 1`, 1 for `q = 1`, `+inf` for `0 < q < 1`; `ζ(x, +inf) = 0`; and
/// where every term underflows the sum is 0 (`ζ(1e300, 1e308)`: XLA CPU's
/// Euler–Maclaurin factors give `0·inf = NaN`; `ζ(1.67e16, 3.4e38)` is 0
/// on XLA CPU too).
pub fn zeta(x: f64, q: f64) -> f64 {
    if x.is_nan() || q.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x == 1.0 {
        return f64::INFINITY;
    }
    let x_is_integer = x == x.floor();
    if q <= 0.0 {
        if q == q.floor() {
            // A pole; only for even x do both sides agree on +inf.
            let even = x_is_integer && x.is_finite() && libm::fmod(x, 2.0) == 0.0;
            return if even { f64::INFINITY } else { f64::NAN };
        }
        if !x_is_integer || x.is_infinite() {
            return f64::NAN;
        }
        // q in (−2^52, 0), not an integer: m negative terms q, …, q + m − 1.
        let m = (-q).ceil();
        let f = q + m; // in (0, 1), exact
        let g = 1.0 - f;
        let sign = if libm::fmod(x, 2.0) == 0.0 { 1.0 } else { -1.0 };
        // Σ_{j<m} (j + g)^−x = ζ(x, g) − ζ(x, g + m)
        return zeta_positive(x, f) + sign * (zeta_positive(x, g) - zeta_positive(x, g + m));
    }
    zeta_positive(x, q)
}

/// ζ(x, q) for x > 1 and q > 0.
fn zeta_positive(x: f64, q: f64) -> f64 {
    if x == f64::INFINITY {
        return if q > 1.0 {
            0.0
        } else if q == 1.0 {
            1.0
        } else {
            f64::INFINITY
        };
    }
    if q == f64::INFINITY {
        return 0.0;
    }
    let target = (2.0 * x).max(16.0);
    let mut a = q;
    let mut sum = 0.0;
    // At most about 2x + 16 steps, and far fewer for large x: once a term
    // is negligible against the sum, so is everything after it.
    for _ in 0..100_000 {
        if a >= target {
            break;
        }
        let term = libm::pow(a, -x);
        sum += term;
        if !sum.is_finite() || term <= sum * 1e-20 {
            return sum;
        }
        a += 1.0;
    }
    let p = libm::pow(a, -x);
    let mut tail = libm::pow(a, 1.0 - x) / (x - 1.0) + 0.5 * p;
    // factor_j = x(x+1)…(x+2j−2) · a^(−x−2j+1)
    let mut factor = x * p / a;
    for (j, c) in ZETA_EM.iter().enumerate() {
        if factor == 0.0 {
            // Every later term is 0 too; and for huge x, (x+k)(x+k+1) and
            // a² may both overflow, giving 0·(inf/inf) = NaN
            // (ζ(1e300, 1e308) is 0, as its terms).
            break;
        }
        tail += c * factor;
        let k = 2.0 * j as f64 + 1.0;
        factor *= (x + k) * (x + k + 1.0) / (a * a);
    }
    sum + tail
}

/// Polygamma — `ψ^(n)(x)`, the n-th derivative of digamma: NaN unless `n`
/// is a non-negative integer (XLA's rule), `digamma(x)` for `n = 0`, else
/// `(−1)^(n+1) · n! · ζ(n + 1, x)` (so its poles and domain follow Zeta's).
/// `n!` is exact up to 22! and rounded beyond; where it overflows the
/// product is formed in logarithms.
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || x.is_nan() || n < 0.0 || n != n.floor() || n.is_infinite() {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let sign = if libm::fmod(n, 2.0) == 0.0 { -1.0 } else { 1.0 };
    let z = zeta(n + 1.0, x);
    let mut factorial = 1.0f64;
    let mut k = 2.0;
    while k <= n && factorial.is_finite() {
        factorial *= k;
        k += 1.0;
    }
    if factorial.is_finite() {
        return sign * factorial * z;
    }
    if z == 0.0 || !z.is_finite() {
        // An underflowed zeta stays 0, an infinite (or NaN) one wins.
        return sign * z;
    }
    sign * z.signum() * libm::exp(lgamma(n + 1.0) + libm::log(z.abs()))
}

/// Acosh on reals: `libm::acosh` for `x >= 1`, NaN below (the `libm`
/// crate's own answer for `x < −2` is not NaN).
pub fn acosh(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    libm::acosh(x)
}

/// NextAfter — the neighbour of `from` in the direction of `to`, on the bit
/// patterns (XLA's `NextAfter`): NaN if either is NaN; `to` if the two are
/// the same bits or both zeros; from a zero, the smallest subnormal with
/// `to`'s sign; otherwise one step of the magnitude's bit pattern, down if
/// the signs differ or `|from| > |to|`, up otherwise. No flushing: the
/// smallest subnormal is a result like any other.
pub fn next_after<T: Float>(from: T, to: T) -> T {
    if from.is_nan() || to.is_nan() {
        return T::from_f64(f64::NAN);
    }
    let (a, b) = (from.to_bits(), to.to_bits());
    if a == b {
        return to;
    }
    let sign = 1u64 << (T::WIDTH - 1);
    let (a_abs, b_abs) = (a & !sign, b & !sign);
    if a_abs == 0 {
        return if b_abs == 0 { to } else { T::from_bits((b & sign) | 1) };
    }
    let towards_zero = a_abs > b_abs || (a & sign) != (b & sign);
    T::from_bits(if towards_zero { a - 1 } else { a + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn lgamma_values_and_poles() {
        assert!(close(lgamma(0.5), 0.5723649429247001, 1e-15));
        assert!(close(lgamma(3.0), std::f64::consts::LN_2, 1e-14));
        assert!(close(lgamma(-2.5), -0.05624371649767405, 1e-13));
        assert!(close(lgamma(1e-30), 69.07755278982137, 1e-15));
        assert!(lgamma(1.0).abs() < 1e-15 && lgamma(2.0).abs() < 1e-15);
        for pole in [0.0, -0.0, -1.0, -2.0, -1e30, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(lgamma(pole), f64::INFINITY, "{pole}");
        }
    }

    #[test]
    fn digamma_values_and_poles() {
        assert!(close(digamma(1.0), -0.5772156649015329, 1e-14));
        assert!(close(digamma(-2.5), 1.103_156_640_645_243, 1e-13));
        assert!(close(digamma(1e-30), -1e30, 1e-15));
        assert!(close(digamma(1e300), 690.7755278982137, 1e-15));
        for pole in [0.0, -0.0, -1.0, -3.0, f64::NEG_INFINITY] {
            assert!(digamma(pole).is_nan(), "{pole}");
        }
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn erf_inv_inverts_erf() {
        for x in [-0.999999, -0.9, -0.3, 1e-10, 0.25, 0.5, 0.75, 0.99, 0.999999999, 1.0 - 1e-15] {
            let y = erf_inv(x);
            assert!(close(libm::erf(y), x, 4e-16), "{x}");
        }
        assert_eq!(erf_inv(1.0), f64::INFINITY);
        assert_eq!(erf_inv(-1.0), f64::NEG_INFINITY);
        assert!(erf_inv(1.5).is_nan() && erf_inv(f64::NAN).is_nan());
        assert_eq!(erf_inv(-0.0).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn bessel_i1e_values() {
        assert!(close(bessel_i1e(1.0), 0.2079104153497085, 1e-15));
        assert!(close(bessel_i1e(-2.5), -0.20658464953126654, 1e-14));
        assert!(close(bessel_i1e(1e30), 3.9894228040143274e-16, 1e-15));
        assert_eq!(bessel_i1e(f64::NEG_INFINITY).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn zeta_values_and_rules() {
        assert!(close(zeta(2.0, 1.0), PI * PI / 6.0, 1e-15));
        assert!(close(zeta(3.0, 0.5), 8.41439832211716, 1e-14));
        assert!(close(zeta(2.0, -1.5), 9.379246644989122, 1e-14));
        assert!(close(zeta(3.0, -1.5), 0.11810202582086413, 1e-12));
        // ζ(2, −20.5) = ζ(2, 0.5) + Σ_{j<21} (j + 0.5)^−2 (even x)
        let direct: f64 = (0..21).map(|j| (j as f64 + 0.5).powi(-2)).sum::<f64>() + zeta(2.0, 0.5);
        assert!(close(zeta(2.0, -20.5), direct, 1e-14));
        assert!(close(zeta(40.0, 1.5), 1.5f64.powf(-40.0) + 2.5f64.powf(-40.0), 1e-12));
        assert_eq!(zeta(1.0, 3.0), f64::INFINITY);
        assert!(zeta(0.5, 1.0).is_nan() && zeta(2.5, -1.5).is_nan() && zeta(3.0, -1.0).is_nan());
        assert_eq!(zeta(2.0, 0.0), f64::INFINITY);
        assert_eq!(zeta(f64::INFINITY, 2.0), 0.0);
        assert_eq!(zeta(1e300, 1.0), 1.0);
        // every term underflows: 0, not 0·(inf/inf)
        assert_eq!(zeta(1e300, 1e308), 0.0);
        assert_eq!(zeta(1.6746823e16, 3.4028235e38), 0.0);
    }

    #[test]
    fn polygamma_values() {
        assert!(close(polygamma(1.0, 1.0), PI * PI / 6.0, 1e-15));
        assert!(close(polygamma(2.0, 1.0), -2.4041138063191885, 1e-14));
        assert!(close(polygamma(3.0, -2.5), 194.74787621918773, 1e-12));
        assert!(polygamma(1.5, 1.0).is_nan() && polygamma(-1.0, 1.0).is_nan());
        assert_eq!(polygamma(1.0, 0.0), f64::INFINITY);
        assert!(polygamma(2.0, 0.0).is_nan());
        assert_eq!(polygamma(300.0, 1e10), 0.0);
    }

    #[test]
    fn next_after_bits() {
        assert_eq!(next_after(0.0f32, 1.0).to_bits(), 1);
        assert_eq!(next_after(0.0f32, -1.0).to_bits(), 0x8000_0001);
        assert_eq!(next_after(-0.0f32, 0.0).to_bits(), 0);
        assert_eq!(next_after(1.0f32, 2.0).to_bits(), 0x3f80_0001);
        assert_eq!(next_after(1.0f32, 0.0).to_bits(), 0x3f7f_ffff);
        assert_eq!(next_after(f32::INFINITY, 0.0), f32::MAX);
        assert!(next_after(f32::NAN, 0.0).is_nan());
        assert_eq!(next_after(-1.0f64, 5.0), -1.0 + f64::EPSILON / 2.0);
    }
}
