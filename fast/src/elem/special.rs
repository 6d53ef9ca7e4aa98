//! The fast engine's special functions for the CHLO extension ops, written
//! independently of the reference's `numerics/special.rs` (which follows
//! XLA's algorithms): here Lgamma is musl's (`libm::lgamma`), Digamma an
//! asymptotic series after upward recurrence, ErfInv Newton steps on
//! `erf`/`erfc` from a rough start, BesselI1e the power series and the
//! large-argument asymptotic expansion, Zeta Euler–Maclaurin with another
//! shift and term count, Polygamma through `Γ(n + 1)`. All in f64; the
//! callers round once into the element type. The special values (poles,
//! domains) are XLA's, as the reference's.

use std::f64::consts::PI;

/// `B_2k / (2k)` for k = 1..=8: the asymptotic series of digamma,
/// `ψ(x) ~ ln x − 1/(2x) − Σ B_2k / (2k x^2k)`.
const DIGAMMA_SERIES: [f64; 8] =
    [1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0, 1.0 / 132.0, -691.0 / 32760.0, 1.0 / 12.0, -3617.0 / 8160.0];

/// `ψ(x)`: poles at zero and the negative integers (and `−inf`) are NaN,
/// `+inf` is `+inf`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x.floor() == x) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < 0.0 {
        // ψ(x) = ψ(1 − x) − π/tan(πx), with πx reduced to the nearest
        // integer's neighbourhood first (tan has period π).
        let r = x - x.round();
        return digamma(1.0 - x) - PI / (PI * r).tan();
    }
    if x < 1e-8 {
        // ψ(x) = −1/x − γ + O(x)
        return -1.0 / x - 0.577_215_664_901_532_9;
    }
    let mut shift = 0.0;
    let mut y = x;
    while y < 16.0 {
        shift += 1.0 / y;
        y += 1.0;
    }
    let inv2 = 1.0 / (y * y);
    let mut series = 0.0;
    let mut power = inv2;
    for c in DIGAMMA_SERIES {
        series += c * power;
        power *= inv2;
    }
    y.ln() - 0.5 / y - series - shift
}

/// `ln|Γ(x)|`: musl's algorithm, with XLA's `+inf` at the poles and at `±inf`.
pub fn lgamma(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::INFINITY;
    }
    libm::lgamma(x)
}

/// The inverse of erf: a rough start, then Halley steps on `erf(y) − x`, or on
/// `erfc(y) − (1 − x)` for `|x| > 1/2` where `1 − x` is exact and erf is flat.
pub fn erf_inv(x: f64) -> f64 {
    let a = x.abs();
    if x.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(x);
    }
    if a < 1e-150 {
        // erfinv(x) = (√π/2)·x·(1 + O(x²))
        return 0.886_226_925_452_758 * x;
    }
    // Winitzki's closed form (relative error about 2e-3) as the start;
    // `1 − x²` as `(1 − a)(1 + a)`, exact enough near ±1.
    let ln_one_minus_square = ((1.0 - a) * (1.0 + a)).ln();
    let k = 0.147;
    let b = 2.0 / (PI * k) + ln_one_minus_square / 2.0;
    let mut y = ((b * b - ln_one_minus_square / k).sqrt() - b).sqrt();
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..4 {
        let residual = if a > 0.5 { -(libm::erfc(y) - (1.0 - a)) } else { libm::erf(y) - a };
        let slope = two_over_sqrt_pi * (-y * y).exp();
        if slope == 0.0 {
            break;
        }
        // Halley's correction: the second derivative of erf is −2y·erf'.
        let step = residual / slope;
        y -= step / (1.0 + y * step);
    }
    y.copysign(x)
}

/// `exp(−|x|)·I1(x)`: the power series `Σ (x/2)^(2k+1) / (k!(k+1)!)` (all
/// terms positive) below 25, the asymptotic expansion
/// `e^−x I1(x) ~ (2πx)^−½ Σ (−1)^k Π_{j<=k}(4 − (2j−1)²) / (k! (8x)^k)`
/// above. Odd.
pub fn bessel_i1e(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let z = x.abs();
    let value = if z == f64::INFINITY {
        0.0
    } else if z < 25.0 {
        let h = z / 2.0;
        let h2 = h * h;
        let mut term = h;
        let mut sum = h;
        let mut k = 1.0;
        while term > sum * 1e-18 {
            term *= h2 / (k * (k + 1.0));
            sum += term;
            k += 1.0;
        }
        sum * (-z).exp()
    } else {
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..30 {
            let odd = (2 * k - 1) as f64;
            term *= -(4.0 - odd * odd) / (k as f64 * 8.0 * z);
            let next = sum + term;
            if next == sum {
                break;
            }
            sum = next;
        }
        sum / (2.0 * PI * z).sqrt()
    };
    value.copysign(x)
}

/// `B_2k / (2k)!` for k = 1..=10.
const BERNOULLI_OVER_FACTORIAL: [f64; 10] = [
    1.0 / 12.0,
    -1.0 / 720.0,
    1.0 / 30_240.0,
    -1.0 / 1_209_600.0,
    1.0 / 47_900_160.0,
    -691.0 / 1_307_674_368_000.0,
    1.0 / 74_724_249_600.0,
    -3617.0 / 10_670_622_842_880_000.0,
    43_867.0 / 5_109_094_217_170_944_000.0,
    -174_611.0 / 802_857_662_698_291_200_000.0,
];

/// Hurwitz `ζ(x, q)` with XLA's domain rules (`x = 1` → inf, `x < 1` → NaN,
/// `q <= 0` needs an integer `x`, integer `q <= 0` is a pole: inf for even
/// `x`, NaN otherwise); a negative `q` with integer `x` is split into its
/// negative terms (`(−1)^x` times a zeta difference) and the rest.
pub fn zeta(x: f64, q: f64) -> f64 {
    if x.is_nan() || q.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x == 1.0 {
        return f64::INFINITY;
    }
    let integer = x.floor() == x;
    if q <= 0.0 {
        let even = integer && x.is_finite() && x % 2.0 == 0.0;
        if q.floor() == q {
            return if even { f64::INFINITY } else { f64::NAN };
        }
        if !integer || x.is_infinite() {
            return f64::NAN;
        }
        let count = q.abs().ceil();
        let first_positive = q + count;
        let mirror = 1.0 - first_positive;
        let negatives = hurwitz(x, mirror) - hurwitz(x, mirror + count);
        return hurwitz(x, first_positive) + if even { negatives } else { -negatives };
    }
    hurwitz(x, q)
}

/// ζ(x, q) for x > 1, q > 0: terms summed until `q + n >= max(30, 3x)` (or
/// negligible), then Euler–Maclaurin with ten Bernoulli terms.
fn hurwitz(x: f64, q: f64) -> f64 {
    if x == f64::INFINITY {
        return match q.partial_cmp(&1.0) {
            Some(std::cmp::Ordering::Greater) => 0.0,
            Some(std::cmp::Ordering::Equal) => 1.0,
            _ => f64::INFINITY,
        };
    }
    if q == f64::INFINITY {
        return 0.0;
    }
    let start = (3.0 * x).max(30.0);
    let mut a = q;
    let mut sum = 0.0;
    let mut steps = 0;
    while a < start && steps < 200_000 {
        let term = a.powf(-x);
        sum += term;
        if sum.is_infinite() || term <= sum * 1e-19 {
            return sum;
        }
        a += 1.0;
        steps += 1;
    }
    let power = a.powf(-x);
    let mut tail = a * power / (x - 1.0) + power / 2.0;
    let mut rising = x;
    let mut a_power = power / a;
    for (k, c) in BERNOULLI_OVER_FACTORIAL.iter().enumerate() {
        if a_power == 0.0 {
            // The rest vanishes. (`rising` ~ x^(2k+1) overflows only for
            // x beyond 1e16, where a^−x has long underflowed: without this
            // stop, ζ(1.67e16, 3.4e38) was inf·0 = NaN, not 0.)
            break;
        }
        tail += c * rising * a_power;
        let m = (2 * k + 1) as f64;
        rising *= (x + m) * (x + m + 1.0);
        a_power /= a * a;
    }
    sum + tail
}

/// `ψ^(n)(x)`: NaN unless n is a non-negative integer, digamma for n = 0,
/// else `(−1)^(n+1) Γ(n+1) ζ(n+1, x)` (in logarithms where `Γ(n+1)`
/// overflows).
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || x.is_nan() || n < 0.0 || n.floor() != n || n.is_infinite() {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let odd = n % 2.0 == 1.0;
    let z = zeta(n + 1.0, x);
    let magnitude = if n <= 170.0 {
        libm::tgamma(n + 1.0) * z
    } else if z == 0.0 || !z.is_finite() {
        z
    } else {
        (libm::lgamma(n + 1.0) + z.abs().ln()).exp().copysign(z)
    };
    if odd {
        magnitude
    } else {
        -magnitude
    }
}

/// asinh: the platform's, except beyond 1e300 where its `x + x/(…)`
/// overflows: `ln|x| + ln 2` there.
pub fn asinh(x: f64) -> f64 {
    if x.abs() > 1e300 && x.is_finite() {
        return (x.abs().ln() + std::f64::consts::LN_2).copysign(x);
    }
    x.asinh()
}

/// acosh: NaN below 1; `log1p(t + sqrt(2t + t²))` with the exact `t = x − 1`
/// below 2 (the platform's `ln(x + …)` loses digits near 1); `ln x + ln 2`
/// beyond 1e300, where `x + sqrt(x² − 1)` would overflow.
pub fn acosh(x: f64) -> f64 {
    if x.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x < 2.0 {
        let t = x - 1.0;
        return (t + (2.0 * t + t * t).sqrt()).ln_1p();
    }
    if x > 1e300 {
        return x.ln() + std::f64::consts::LN_2;
    }
    x.acosh()
}

/// NextAfter on bit patterns of width `width` (the element's own bits):
/// NaN pattern `nan` if either operand is NaN.
#[inline]
pub fn next_after_bits(from: u64, to: u64, width: u32, from_nan: bool, to_nan: bool, nan: u64) -> u64 {
    if from_nan || to_nan {
        return nan;
    }
    if from == to {
        return to;
    }
    let sign = 1u64 << (width - 1);
    let magnitude = |b: u64| b & (sign - 1);
    if magnitude(from) == 0 {
        return if magnitude(to) == 0 { to } else { (to & sign) | 1 };
    }
    let away = (from & sign) == (to & sign) && magnitude(from) < magnitude(to);
    if away {
        from + 1
    } else {
        from - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn against_known_values() {
        assert!(rel(digamma(1.0), -0.5772156649015329) < 1e-15);
        assert!(rel(digamma(-2.5), 1.103_156_640_645_243) < 1e-14);
        assert!(rel(digamma(0.001), -1000.5755719318103) < 1e-15);
        assert!(rel(bessel_i1e(1.0), 0.2079104153497085) < 1e-15);
        assert!(rel(bessel_i1e(30.0), 0.07191633059864755) < 1e-14);
        assert!(rel(bessel_i1e(24.0), 0.08014413927653474) < 1e-14);
        assert!(rel(zeta(2.0, 1.0), PI * PI / 6.0) < 1e-15);
        assert!(rel(zeta(3.0, -1.5), 0.11810202582086413) < 1e-12);
        // every term underflows (XLA CPU: 0 too)
        assert_eq!(zeta(1.6746823e16, 3.4028235e38), 0.0);
        assert_eq!(zeta(1e300, 1e308), 0.0);
        assert!(rel(polygamma(3.0, -2.5), 194.74787621918773) < 1e-12);
        for x in [-0.99, -0.5, 1e-5, 0.3, 0.6, 0.9, 0.999999] {
            assert!(rel(libm::erf(erf_inv(x)), x) < 1e-15, "{x}");
        }
    }

    #[test]
    fn next_after_steps() {
        let f = |a: f32, b: f32| {
            f32::from_bits(next_after_bits(a.to_bits() as u64, b.to_bits() as u64, 32, a.is_nan(), b.is_nan(), 0x7fc0_0000) as u32)
        };
        assert_eq!(f(0.0, -1.0).to_bits(), 0x8000_0001);
        assert_eq!(f(1.0, 2.0).to_bits(), 0x3f80_0001);
        assert_eq!(f(-1.0, 2.0).to_bits(), 0xbf7f_ffff);
        assert_eq!(f(f32::INFINITY, 0.0), f32::MAX);
    }
}
