//! Complex hyperbolic and inverse trigonometric functions of the CHLO
//! extension ops (Sinh, Cosh, Asin, Acos, Atan, Asinh, Acosh, Atanh), in
//! `Complex<f64>`.
//!
//! The inverse functions follow Kahan's algorithms ("Branch cuts for complex
//! elementary functions", 1987): each is written through square roots of
//! `1 ± z` whose signed zeros choose the side of a branch cut, so the
//! principal branches and cuts are C99's (Annex G): Asin and Acos cut the
//! real axis beyond ±1, Atan the imaginary axis beyond ±i, Asinh the
//! imaginary axis beyond ±i, Acosh the real axis left of 1, Atanh the real
//! axis beyond ±1. Arguments whose squares would overflow use the
//! asymptotic forms (`asin z ≈ −i·ln(2iz)`...), and non-finite arguments
//! C99's special values. Where XLA CPU differs and the document is silent,
//! as XLA (docs/semantics-decisions.md, "CHLO extension ops"):
//! - Asin, Acos, Asinh and Acosh ignore the sign of a zero part on their
//!   cuts (−0 counts as +0: `asin(2 − 0i) = π/2 + 1.317i`); Atan and Atanh
//!   keep it, as C99;
//! - `asinh(NaN ± 0i)` and `asin(±0 + NaN i)` are `NaN + NaN i`;
//!   `asin(±inf + NaN i) = NaN + inf i` (C99: the infinity's sign is
//!   unspecified);
//! - Sinh and Cosh of a real argument (zero imaginary part), and Cosh of an
//!   imaginary one, give a `+0` imaginary part; Atan of a real argument a
//!   `−0` one; `atanh(±0 ± 0i) = +0 ± 0i`.

use std::f64::consts::{FRAC_PI_2, LN_2};

use num_complex::Complex;

type C = Complex<f64>;

/// Beyond this modulus `z²` may overflow: the asymptotic forms take over
/// (their relative error, about `1/|z|²`, is far below f64's there).
const LARGE: f64 = 1e150;

/// C99's `csqrt`: the principal square root, the sign of a zero imaginary
/// part choosing the side of the cut (`√(−4 − 0i) = −2i`), scaled so that
/// `|x| + |z|` cannot overflow, nor lose digits below f64's normal range
/// (without that, `√(0 − 5e−324 i)` is `0 − ∞i`, and `asin(1 + 5e−324 i)`
/// NaN instead of `π/2 + 2.2e−162 i`). (Unlike the Sqrt op's, which follows
/// XLA in ignoring that sign: Kahan's formulas need it.)
fn csqrt(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return C::new(f64::INFINITY, y);
    }
    if x.is_nan() || y.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    if x == f64::NEG_INFINITY {
        return C::new(0.0, f64::INFINITY.copysign(y));
    }
    if x == f64::INFINITY {
        return C::new(x, 0f64.copysign(y));
    }
    if x == 0.0 && y == 0.0 {
        return C::new(0.0, y);
    }
    let scale = if x.abs() > 1e300 || y.abs() > 1e300 {
        0.25
    } else if x.abs() < 1e-300 && y.abs() < 1e-300 {
        // 2^600, an even power of two: exact, and its root is 2^300
        2f64.powi(600)
    } else {
        1.0
    };
    let (xs, ys) = (x * scale, y * scale);
    let t = ((xs.abs() + libm::hypot(xs, ys)) / 2.0).sqrt() / scale.sqrt();
    if x >= 0.0 {
        C::new(t, y / (2.0 * t))
    } else {
        C::new(y.abs() / (2.0 * t), t.copysign(y))
    }
}

/// A zero part as +0 (XLA's Asin family does not see the sign of zero).
fn unsigned_zero(v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

fn is_nan(z: C) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// ln|z| + i·arg z, for the asymptotic forms (moduli near f64's range).
fn clog_large(z: C) -> C {
    let m = libm::hypot(z.re / 4.0, z.im / 4.0);
    C::new(libm::log(m) + 2.0 * LN_2, libm::atan2(z.im, z.re))
}

/// sinh(x + iy) = sinh x·cos y + i·cosh x·sin y (a real argument gives a
/// +0 imaginary part, as XLA CPU).
pub fn sinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(libm::sinh(x), 0.0);
    }
    C::new(libm::sinh(x) * libm::cos(y), libm::cosh(x) * libm::sin(y))
}

/// cosh(x + iy) = cosh x·cos y + i·sinh x·sin y (a real or imaginary
/// argument gives a +0 imaginary part, as XLA CPU).
pub fn cosh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(libm::cosh(x), 0.0);
    }
    if x == 0.0 && y.is_finite() {
        return C::new(libm::cos(y), 0.0);
    }
    C::new(libm::cosh(x) * libm::cos(y), libm::sinh(x) * libm::sin(y))
}

/// asin z = atan2(x, Re(√(1−z)·√(1+z))) + i·asinh(Im(conj(√(1−z))·√(1+z)))
/// (Kahan). Odd, and `asin(conj z) = conj(asin z)`. `asin(±inf + NaN i)`
/// is `NaN + inf i`: C99 leaves the sign of the infinite part unspecified,
/// XLA CPU's is `+`.
pub fn asin(z: C) -> C {
    let (x, y) = (z.re, unsigned_zero(z.im));
    if x.is_infinite() && y.is_nan() {
        return C::new(f64::NAN, f64::INFINITY);
    }
    if !x.is_finite() || !y.is_finite() || x.abs().max(y.abs()) > LARGE {
        // asin z = −i·asinh(iz), with iz's zero signs as they come
        let w = asinh_c99(C::new(-y, x));
        return C::new(w.im, -w.re);
    }
    let (s1, s2) = (csqrt(C::new(1.0 - x, -y)), csqrt(C::new(1.0 + x, y)));
    let re = libm::atan2(x, s1.re * s2.re - s1.im * s2.im);
    let im = libm::asinh(s1.re * s2.im - s1.im * s2.re);
    C::new(re, im)
}

/// acos z = 2·atan2(Re √(1−z), Re √(1+z)) + i·asinh(Im(conj(√(1+z))·√(1−z)))
/// (Kahan).
pub fn acos(z: C) -> C {
    let z = C::new(z.re, unsigned_zero(z.im));
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() || x.abs().max(y.abs()) > LARGE {
        // acos z = π/2 − asin z; both parts of asin are accurate there.
        let w = asin(z);
        if is_nan(z) && x.is_nan() && y.is_infinite() {
            return C::new(f64::NAN, -y);
        }
        return C::new(FRAC_PI_2 - w.re, -w.im);
    }
    let (s1, s2) = (csqrt(C::new(1.0 - x, -y)), csqrt(C::new(1.0 + x, y)));
    let re = 2.0 * libm::atan2(s1.re, s2.re);
    let im = libm::asinh(s2.re * s1.im - s2.im * s1.re);
    C::new(re, im)
}

/// asinh z = −i·asin(iz) for finite moderate z; for large or non-finite
/// z, `±(ln 2 + ln|z|) + i·arg` (C99's special values for infinities and NaN).
pub fn asinh(z: C) -> C {
    asinh_c99(C::new(unsigned_zero(z.re), z.im))
}

/// [`asinh`] with the zero signs of `z` respected.
fn asinh_c99(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        // asinh(NaN + i·inf) = ±inf + i·NaN; NaN otherwise (XLA: also for
        // NaN ± 0i, where C99 keeps the zero).
        return if y.is_infinite() { C::new(f64::INFINITY, f64::NAN) } else { C::new(f64::NAN, f64::NAN) };
    }
    if y.is_nan() {
        return if x.is_infinite() { C::new(x, f64::NAN) } else { C::new(f64::NAN, f64::NAN) };
    }
    if x.is_infinite() || y.is_infinite() {
        let im = if x.is_infinite() && y.is_infinite() {
            std::f64::consts::FRAC_PI_4.copysign(y)
        } else if x.is_infinite() {
            0f64.copysign(y)
        } else {
            FRAC_PI_2.copysign(y)
        };
        return C::new(f64::INFINITY.copysign(x), im);
    }
    if x.abs().max(y.abs()) > LARGE {
        // asinh z ≈ ln(2z) for Re z >= 0; odd.
        let flip = x.is_sign_negative();
        let w = if flip { C::new(-x, -y) } else { z };
        let l = clog_large(w);
        let r = C::new(l.re + LN_2, l.im);
        return if flip { -r } else { r };
    }
    let w = asin(C::new(-y, x));
    C::new(w.im, -w.re)
}

/// acosh z = asinh(Re(conj(√(z−1))·√(z+1))) + i·2·atan2(Im √(z−1), Re √(z+1))
/// (Kahan); large and non-finite arguments through `ln(2z)` and C99. On the
/// cut left of 1 the result is `… + πi` for a zero imaginary part of either
/// sign, at every magnitude (XLA CPU; C99 gives `− πi` for `−0`).
pub fn acosh(z: C) -> C {
    let (x, y) = (z.re, unsigned_zero(z.im));
    if x.is_nan() || y.is_nan() {
        return if x.is_infinite() || y.is_infinite() { C::new(f64::INFINITY, f64::NAN) } else { C::new(f64::NAN, f64::NAN) };
    }
    if x.is_infinite() || y.is_infinite() {
        let im = if x.is_infinite() && y.is_infinite() {
            if x > 0.0 {
                std::f64::consts::FRAC_PI_4
            } else {
                3.0 * std::f64::consts::FRAC_PI_4
            }
        } else if x.is_infinite() {
            if x > 0.0 {
                0.0
            } else {
                std::f64::consts::PI
            }
        } else {
            FRAC_PI_2
        };
        return C::new(f64::INFINITY, im.copysign(y));
    }
    if x.abs().max(y.abs()) > LARGE {
        // acosh z ≈ ln(2z), the imaginary part taken with y's sign, a −0
        // counted as +0 as on the rest of the cut (XLA CPU:
        // `acosh(−5.4e235 − 0i) = 543.5 + πi`).
        let l = clog_large(C::new(x, y));
        return C::new(l.re + LN_2, l.im);
    }
    let (s1, s2) = (csqrt(C::new(x - 1.0, y)), csqrt(C::new(x + 1.0, y)));
    let re = libm::asinh(s1.re * s2.re + s1.im * s2.im);
    let im = 2.0 * libm::atan2(s1.im, s2.re);
    C::new(re, im)
}

/// atanh z = ¼·log1p(4x / ((1−x)² + y²)) + i·½·atan2(2y, (1−x)(1+x) − y²)
/// (Kahan's formula without his scaling); large and non-finite arguments
/// tend to `1/z ± iπ/2`.
pub fn atanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        return if y.is_infinite() {
            C::new(0f64.copysign(x), FRAC_PI_2.copysign(y))
        } else if x.is_infinite() {
            C::new(0f64.copysign(x), f64::NAN)
        } else if x == 0.0 {
            C::new(x, f64::NAN)
        } else {
            C::new(f64::NAN, f64::NAN)
        };
    }
    if x.abs().max(y.abs()) > LARGE {
        // 1/z's real part x/|z|² (scaled), and ±π/2.
        let (xs, ys) = (x / LARGE, y / LARGE);
        let re = if x.is_infinite() || y.is_infinite() { 0f64.copysign(x) } else { xs / (xs * xs + ys * ys) / LARGE };
        return C::new(re, FRAC_PI_2.copysign(y));
    }
    if x == 0.0 && y == 0.0 {
        // XLA CPU: atanh(±0 ± 0i) = +0 ± 0i
        return C::new(0.0, y);
    }
    // The real part is odd in x: formed for |x|, where the log1p argument
    // is not negative (no cancellation near x = −1).
    let a = x.abs();
    let one_minus = 1.0 - a;
    let d = one_minus * one_minus + y * y;
    let re = if d < 1e-300 {
        // d underflows (x = ±1, tiny y): ¼ ln(4|x|/d) with ln d from the
        // hypotenuse, which does not.
        0.25 * libm::log(4.0 * a) - 0.5 * libm::log(libm::hypot(one_minus, y))
    } else {
        0.25 * libm::log1p(4.0 * a / d)
    }
    .copysign(x);
    let im = 0.5 * libm::atan2(2.0 * y, (1.0 - x) * (1.0 + x) - y * y);
    C::new(re, im)
}

/// atan z = −i·atanh(iz); a finite real argument gives `atan x − 0i`
/// (XLA CPU: the imaginary part is −0 whatever the sign of the argument's).
pub fn atan(z: C) -> C {
    if z.im == 0.0 && z.re.is_finite() {
        return C::new(libm::atan(z.re), -0.0);
    }
    let w = atanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: C, b: C) -> bool {
        (a - b).norm() <= 1e-14 * b.norm().max(1e-300)
    }

    #[test]
    fn principal_values() {
        let z = C::new(0.5, 0.25);
        assert!(near(asin(z), C::new(0.5016088532755008, 0.28139605624529274)));
        assert!(near(acos(z), C::new(1.0691874735193958, -0.28139605624529274)));
        assert!(near(atan(z), C::new(0.4842544903299662, 0.20058661813123432)));
        assert!(near(asinh(z), C::new(0.4926756834207706, 0.2243284526346675)));
        assert!(near(acosh(z), C::new(0.28139605624529274, 1.0691874735193958)));
        assert!(near(atanh(z), C::new(0.5003700000525311, 0.3143981432077165)));
        assert!(near(sinh(z), C::new(0.504895714387995, 0.2789791283502615)));
        assert!(near(cosh(z), C::new(1.0925708047319176, 0.12892104172809826)));
    }

    #[test]
    fn branch_cuts_follow_the_zero_sign() {
        let up = asin(C::new(2.0, 0.0));
        let down = asin(C::new(2.0, -0.0));
        // Asin and Acosh ignore the zero's sign on their cuts (as XLA CPU,
        // see the module comment); Atanh keeps it (as C99).
        assert!(up.im > 0.0 && up.re == FRAC_PI_2 && down == up);
        assert!(atanh(C::new(2.0, 0.0)).im > 0.0 && atanh(C::new(2.0, -0.0)).im < 0.0);
        let (left_up, left_down) = (acosh(C::new(-2.0, 0.0)), acosh(C::new(-2.0, -0.0)));
        assert!(left_up.im > 0.0 && left_down == left_up);
    }

    #[test]
    fn subnormal_parts_at_the_branch_points() {
        // mpmath (3000 bits): asin(1 + 2^-1074 i) = π/2 + 2^-537 i, ...
        let (e, r) = (5e-324, 2f64.powi(-537));
        assert!(near(asin(C::new(1.0, e)), C::new(FRAC_PI_2, r)));
        assert!(near(asin(C::new(-1.0, e)), C::new(-FRAC_PI_2, r)));
        assert!(near(acos(C::new(1.0, e)), C::new(r, -r)));
        assert!(near(acosh(C::new(1.0, e)), C::new(r, r)));
        assert!(near(acosh(C::new(-1.0, e)), C::new(r, std::f64::consts::PI)));
        assert!(near(asinh(C::new(e, -1.0)), C::new(r, -FRAC_PI_2)));
        assert!(near(asinh(C::new(-e, -1.0)), C::new(-r, -FRAC_PI_2)));
    }

    #[test]
    fn acosh_ignores_the_zero_sign_at_every_magnitude() {
        // XLA CPU: acosh(-5.4e235 - 0i) = 543.495 + πi, as acosh(-2 - 0i)
        for x in [-2.0, -5.443832637775661e235, -f64::MAX] {
            assert_eq!(acosh(C::new(x, -0.0)).im, std::f64::consts::PI);
        }
        assert!(near(acosh(C::new(-f64::MAX, -0.0)), C::new(710.475860073944, std::f64::consts::PI)));
    }

    #[test]
    fn asin_of_infinity_and_nan() {
        // C99 leaves the infinite part's sign open; XLA CPU: +inf
        let w = asin(C::new(f64::NEG_INFINITY, f64::NAN));
        assert!(w.re.is_nan() && w.im == f64::INFINITY);
        let w = acos(C::new(f64::INFINITY, f64::NAN));
        assert!(w.re.is_nan() && w.im == f64::NEG_INFINITY);
    }

    #[test]
    fn small_and_large_arguments_keep_their_digits() {
        let tiny = C::new(1e-30, 1e-30);
        assert!(near(asin(tiny), tiny) && near(asinh(tiny), tiny) && near(atanh(tiny), tiny) && near(atan(tiny), tiny));
        let big = asinh(C::new(1e300, 0.0));
        assert!((big.re - 691.4686750787736).abs() < 1e-12 && big.im == 0.0);
        let w = atanh(C::new(1e300, 1e300));
        assert!((w.re - 5e-301).abs() < 1e-314 && w.im == FRAC_PI_2);
    }
}
