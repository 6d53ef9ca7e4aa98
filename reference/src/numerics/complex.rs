//! Complex element semantics, computed in `Complex<f64>` (c64 results are
//! rounded part by part). The document defines these functions only by name;
//! special values follow C99 Annex G, except where XLA's CPU backend is
//! observed to differ and the document is silent (docs/semantics-decisions.md):
//! - Sqrt and Log of a value with a NaN part are (NaN, NaN);
//! - Sqrt ignores the sign of a zero imaginary part: sqrt(-4 - 0i) = +2i,
//!   sqrt(4 - 0i) = 2 + 0i (Log keeps it: log(-4 - 0i) = ln 4 - πi).

use num_complex::Complex;

pub type C = Complex<f64>;

fn has_nan(z: C) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

const NAN2: C = C { re: f64::NAN, im: f64::NAN };

/// |z| without intermediate overflow; NaN if either part is NaN (XLA CPU:
/// |inf + NaN i| = NaN, where C99's hypot gives inf).
pub fn abs(z: C) -> f64 {
    if has_nan(z) {
        return f64::NAN;
    }
    libm::hypot(z.re, z.im)
}

/// Principal square root; the branch cut is the negative real axis, where
/// the result is +i·sqrt(|x|) whichever the sign of the zero imaginary part.
pub fn sqrt(z: C) -> C {
    if has_nan(z) {
        return NAN2;
    }
    let (x, y) = (z.re, if z.im == 0.0 { 0.0 } else { z.im });
    if y.is_infinite() {
        return C::new(f64::INFINITY, y);
    }
    if x == f64::NEG_INFINITY {
        return C::new(0.0, f64::INFINITY.copysign(y));
    }
    if x == f64::INFINITY {
        return C::new(f64::INFINITY, 0f64.copysign(y));
    }
    if x == 0.0 && y == 0.0 {
        return C::new(0.0, y);
    }
    // t = sqrt((|x| + |z|) / 2), scaled to avoid overflow of |x| + |z|,
    // and, below f64's normal range, the loss of its digits (unscaled,
    // `sqrt(0 + 5e-324 i)` would be `0 + inf i`: t = sqrt(5e-324 / 2) = 0).
    let t = if x.abs() > 1e300 || y.abs() > 1e300 {
        ((x.abs() / 4.0 + abs(C::new(x / 4.0, y / 4.0))) / 2.0).sqrt() * 2.0
    } else if x.abs() < 1e-300 && y.abs() < 1e-300 {
        // times 2^600 (exact), whose root is 2^300
        let s = 2f64.powi(600);
        ((x.abs() * s + abs(C::new(x * s, y * s))) / 2.0).sqrt() / 2f64.powi(300)
    } else {
        ((x.abs() + abs(C::new(x, y))) / 2.0).sqrt()
    };
    if x >= 0.0 {
        C::new(t, y / (2.0 * t))
    } else {
        C::new(y.abs() / (2.0 * t), t.copysign(y))
    }
}

/// Principal logarithm: ln|z| + i·atan2(im, re) (signed zeros respected).
pub fn log(z: C) -> C {
    if has_nan(z) {
        return NAN2;
    }
    C::new(libm::log(abs(z)), libm::atan2(z.im, z.re))
}

/// log(1 + z), accurate when |1 + z| is near 1: ln|1 + z| =
/// 0.5·log1p(2x + x² + y²), with the sum formed exactly (error-free
/// products and sums) so it cannot cancel away its digits.
pub fn log1p(z: C) -> C {
    if has_nan(z) {
        return NAN2;
    }
    let (x, y) = (z.re, z.im);
    if x.abs() < 1.0 && y.abs() < 1.0 {
        let sum = exact_sum(&[2.0 * x, x * x, (x).mul_add(x, -(x * x)), y * y, y.mul_add(y, -(y * y))]);
        C::new(0.5 * libm::log1p(sum), libm::atan2(y, 1.0 + x))
    } else {
        log(C::new(1.0 + x, y))
    }
}

/// The sum of the terms, rounded once (compensated summation that keeps the
/// rounding error of every addition).
fn exact_sum(terms: &[f64]) -> f64 {
    let mut sum = 0.0f64;
    let mut error = 0.0f64;
    for &t in terms {
        let s = sum + t;
        let bp = s - sum;
        error += (sum - (s - bp)) + (t - bp);
        sum = s;
    }
    sum + error
}

/// e^z = e^x (cos y + i sin y). A real argument (zero imaginary part of
/// either sign) gives a +0 imaginary part, NaN + 0i gives NaN + 0i (XLA
/// CPU); e^(-inf + i·y) is 0 even for y = ±inf or NaN (C99); e^x is split in two halves
/// where it alone would overflow but the product does not.
pub fn exp(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(libm::exp(x), 0.0);
    }
    if x == f64::NEG_INFINITY && !y.is_finite() {
        return C::new(0.0, 0.0);
    }
    if x > 700.0 {
        let h = libm::exp(x / 2.0);
        return C::new(h * libm::cos(y) * h, h * libm::sin(y) * h);
    }
    let r = libm::exp(x);
    C::new(r * libm::cos(y), r * libm::sin(y))
}

/// e^z - 1, accurate for small |z|: expm1(x)·cos y - 2 sin²(y/2) + i e^x sin y.
/// A real argument gives a +0 imaginary part (as Exp).
pub fn expm1(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(libm::expm1(x), 0.0);
    }
    let half = libm::sin(y / 2.0);
    C::new(libm::expm1(x) * libm::cos(y) - 2.0 * half * half, libm::exp(x) * libm::sin(y))
}

pub fn sin(z: C) -> C {
    let (x, y) = (z.re, z.im);
    C::new(libm::sin(x) * libm::cosh(y), libm::cos(x) * libm::sinh(y))
}

pub fn cos(z: C) -> C {
    let (x, y) = (z.re, z.im);
    C::new(libm::cos(x) * libm::cosh(y), -libm::sin(x) * libm::sinh(y))
}

/// tanh by Kahan's formula, which neither overflows nor cancels. A real
/// argument gives a +0 imaginary part; tanh(±inf + i·NaN) = ±1 + 0i (XLA CPU).
pub fn tanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(libm::tanh(x), 0.0);
    }
    if x.is_infinite() && !y.is_finite() {
        return C::new(1f64.copysign(x), 0.0);
    }
    if x.abs() > 22.0 {
        let e = libm::exp(-2.0 * x.abs());
        return C::new(1f64.copysign(x), 4.0 * libm::sin(y) * libm::cos(y) * e);
    }
    let t = libm::tan(y);
    let beta = 1.0 + t * t;
    let s = libm::sinh(x);
    let rho = (1.0 + s * s).sqrt();
    let denom = 1.0 + beta * s * s;
    C::new(beta * rho * s / denom, t / denom)
}

/// tan z = -i · tanh(i z).
pub fn tan(z: C) -> C {
    let w = tanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// Division as C99's `__divdc3`: the divisor scaled to avoid spurious
/// overflow and underflow, with infinities recovered where the naive formula
/// gives NaN.
///
/// Unlike `__divdc3`, when the products of a finite numerator with the
/// scaled divisor overflow (`(MAX + 0i) / (0 + MAX·i)` overflowed in `ar·c`
/// and gave `0 - inf·i` for the exact `-i`), the quotient is recomputed with
/// the numerator scaled too. Only then: scaling it always would flush its
/// smaller part (`(34.6 + 5e-324i) / 5e-324` must keep its imaginary part 1).
/// Both found by differential testing against the fast engine; decision in
/// docs/semantics-decisions.md.
pub fn div(a: C, b: C) -> C {
    let (ar, ai, mut c, mut d) = (a.re, a.im, b.re, b.im);
    let logbw = logb(c.abs().max(d.abs()));
    let mut ilogbw = 0i32;
    if logbw.is_finite() {
        ilogbw = logbw as i32;
        c = libm::scalbn(c, -ilogbw);
        d = libm::scalbn(d, -ilogbw);
    }
    let denom = c * c + d * d;
    let mut x = (ar * c + ai * d) / denom;
    let mut y = (ai * c - ar * d) / denom;
    let mut ilogba = 0;
    if ar.is_finite() && ai.is_finite() && denom.is_finite() && denom != 0.0 && !(x.is_finite() && y.is_finite()) {
        ilogba = libm::ilogb(ar.abs().max(ai.abs()));
        let (sr, si) = (libm::scalbn(ar, -ilogba), libm::scalbn(ai, -ilogba));
        x = (sr * c + si * d) / denom;
        y = (si * c - sr * d) / denom;
    }
    x = libm::scalbn(x, ilogba - ilogbw);
    y = libm::scalbn(y, ilogba - ilogbw);
    if x.is_nan() && y.is_nan() {
        if denom == 0.0 && (!ar.is_nan() || !ai.is_nan()) {
            x = f64::INFINITY.copysign(c) * ar;
            y = f64::INFINITY.copysign(c) * ai;
        } else if (ar.is_infinite() || ai.is_infinite()) && c.is_finite() && d.is_finite() {
            let (ar2, ai2) = (inf_to_one(ar), inf_to_one(ai));
            x = f64::INFINITY * (ar2 * c + ai2 * d);
            y = f64::INFINITY * (ai2 * c - ar2 * d);
        } else if logbw == f64::INFINITY && ar.is_finite() && ai.is_finite() {
            let (c2, d2) = (inf_to_one(c), inf_to_one(d));
            x = 0.0 * (ar * c2 + ai * d2);
            y = 0.0 * (ai * c2 - ar * d2);
        }
    }
    C::new(x, y)
}

/// The binary exponent of |x| (C's `logb`): -inf for 0, +inf for inf/NaN.
fn logb(x: f64) -> f64 {
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if !x.is_finite() {
        x.abs()
    } else {
        libm::ilogb(x) as f64
    }
}

/// ±1 for an infinity, ±0 for a finite value (C99 Annex G's recovery step).
fn inf_to_one(v: f64) -> f64 {
    (if v.is_infinite() { 1.0f64 } else { 0.0 }).copysign(v)
}

/// The textbook product (ac - bd) + (ad + bc)i, as XLA computes it.
/// Max of complex numbers (the document is silent): the lexicographic order
/// on (real, imaginary), as JAX's `lax.max` computes it on XLA CPU and as
/// StableHLO's `maximum` specifies: `a` when `a.re > b.re`, or `a.re == b.re`
/// and `a.im > b.im`; `b` otherwise — so an unordered (NaN) comparison, or
/// equal values, give `b` (docs/semantics-decisions.md).
pub fn max(a: C, b: C) -> C {
    let a_greater = if a.re == b.re { a.im > b.im } else { a.re > b.re };
    if a_greater {
        a
    } else {
        b
    }
}

/// Min of complex numbers: [`max`] with `<`; `b` on a tie or a NaN.
pub fn min(a: C, b: C) -> C {
    let a_less = if a.re == b.re { a.im < b.im } else { a.re < b.re };
    if a_less {
        a
    } else {
        b
    }
}

pub fn mul(a: C, b: C) -> C {
    C::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// a^b = exp(b · log a), with 0^0 = 1.
pub fn pow(a: C, b: C) -> C {
    if a.re == 0.0 && a.im == 0.0 && b.re == 0.0 && b.im == 0.0 {
        return C::new(1.0, 0.0);
    }
    exp(mul(b, log(a)))
}

pub fn rsqrt(z: C) -> C {
    div(C::new(1.0, 0.0), sqrt(z))
}

pub fn logistic(z: C) -> C {
    div(C::new(1.0, 0.0), C::new(1.0, 0.0) + exp(-z))
}

/// z / |z|; zero (either sign) maps to itself, NaN to NaN.
pub fn sign(z: C) -> C {
    if has_nan(z) {
        return NAN2;
    }
    if z.re == 0.0 && z.im == 0.0 {
        return z;
    }
    let r = abs(z);
    if r.is_infinite() {
        // direction of an infinite value: scale down first
        let s = C::new(z.re / 2f64.powi(1000), z.im / 2f64.powi(1000));
        let rs = abs(s);
        return C::new(s.re / rs, s.im / rs);
    }
    C::new(z.re / r, z.im / r)
}

/// A stored complex type as the evaluator computes it: in c128, a c64
/// value widened exactly and each part of the result rounded back once.
pub trait Widened: Copy {
    /// The real type of the parts (`f32` for c64).
    type Part: Copy;
    fn widen(self) -> Complex<f64>;
    fn narrow(z: Complex<f64>) -> Self;
    fn part(p: f64) -> Self::Part;
}

impl Widened for Complex<f32> {
    type Part = f32;
    fn widen(self) -> Complex<f64> {
        Complex::new(self.re as f64, self.im as f64)
    }
    fn narrow(z: Complex<f64>) -> Self {
        Complex::new(z.re as f32, z.im as f32)
    }
    fn part(p: f64) -> f32 {
        p as f32
    }
}

impl Widened for Complex<f64> {
    type Part = f64;
    fn widen(self) -> Complex<f64> {
        self
    }
    fn narrow(z: Complex<f64>) -> Self {
        z
    }
    fn part(p: f64) -> f64 {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_branch_cut_as_xla_cpu() {
        assert_eq!(sqrt(C::new(-4.0, 0.0)), C::new(0.0, 2.0));
        assert_eq!(sqrt(C::new(-4.0, -0.0)), C::new(0.0, 2.0));
        let s = sqrt(C::new(-4.0, -1e-300));
        assert!(s.im == -2.0 && s.re > 0.0);
        assert_eq!(sqrt(C::new(3.0, 4.0)), C::new(2.0, 1.0));
        assert_eq!(sqrt(C::new(f64::NEG_INFINITY, -1.0)), C::new(0.0, f64::NEG_INFINITY));
        assert!(sqrt(C::new(f64::INFINITY, f64::NAN)).re.is_nan());
        let big = sqrt(C::new(1e308, 1e308));
        assert!((big.re - 1.0986841134678098e154).abs() < 1e140);
        // subnormal parts keep their digits (mpmath: sqrt(2^-1074 i) =
        // 2^-537.5 (1 + i), sqrt(2^-1074 (1 + i)) = 2.44e-162 + 1.01e-162 i)
        let r = sqrt(C::new(0.0, 5e-324));
        assert!((r.re - 1.5717277847026288e-162).abs() < 1e-176 && (r.im - 1.5717277847026288e-162).abs() < 1e-176);
        let s = sqrt(C::new(5e-324, 5e-324));
        assert!((s.re - 2.4421097261308304e-162).abs() < 1e-176 && (s.im - 1.0115549693666347e-162).abs() < 1e-176);
    }

    #[test]
    fn log_respects_signed_zero() {
        assert_eq!(log(C::new(-4.0, -0.0)).im, -std::f64::consts::PI);
        assert_eq!(log(C::new(-4.0, 0.0)).im, std::f64::consts::PI);
        assert_eq!(log(C::new(0.0, 0.0)).re, f64::NEG_INFINITY);
    }

    #[test]
    fn division_recovers_infinities_and_scales() {
        let q = div(C::new(1.0, 1.0), C::new(0.0, 0.0));
        assert!(q.re.is_infinite() && q.im.is_infinite());
        let r = div(C::new(1.0, 0.0), C::new(1e-300, 1e-300));
        assert!((r.re - 5e299).abs() < 1e285 && (r.im + 5e299).abs() < 1e285);
        assert_eq!(div(C::new(1e300, 1e300), C::new(1e300, 1e300)), C::new(1.0, 0.0));
    }

    #[test]
    fn tanh_large() {
        let t = tanh(C::new(1000.0, 1.0));
        assert_eq!(t.re, 1.0);
        let u = tanh(C::new(1.0, 1.0));
        assert!((u.re - 1.0839233273386946).abs() < 1e-15 && (u.im - 0.27175258531951174).abs() < 1e-15);
    }
}
