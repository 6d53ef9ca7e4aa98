//! Complex element semantics of the fast engine, computed in `Complex<f64>`
//! with the corner behaviour xlaref pins to XLA CPU
//! (docs/semantics-decisions.md, complex sections):
//! - Sqrt and Log of a NaN-carrying value are (NaN, NaN); Sqrt treats a zero
//!   imaginary part as +0; |inf + NaN i| is NaN;
//! - a real argument (zero imaginary part of either sign) to Exp, Expm1 and
//!   Tanh gives a +0 imaginary part, even when the real part is NaN;
//! - division recovers infinities (Smith's method here).
//!
//! The formulas are the accurate ones (no cancellation, no spurious
//! overflow), evaluated with `libm` so the last bits are reproducible.

use num_complex::Complex;
use xlaref_reference::literal::Stored;

pub type Z = Complex<f64>;

/// The part type of a complex storage type (f32 for c64, f64 for c128), and
/// the way between that storage type and [`Z`], where the arithmetic runs.
pub trait Part: Copy + Send + Sync + Stored {
    fn up(z: Complex<Self>) -> Z;
    /// Each part rounded once to the part type.
    fn down(z: Z) -> Complex<Self>;
    fn narrow(x: f64) -> Self;
}

impl Part for f32 {
    #[inline(always)]
    fn up(z: Complex<f32>) -> Z {
        Z::new(f64::from(z.re), f64::from(z.im))
    }
    #[inline(always)]
    fn down(z: Z) -> Complex<f32> {
        Complex::new(z.re as f32, z.im as f32)
    }
    #[inline(always)]
    fn narrow(x: f64) -> f32 {
        x as f32
    }
}

impl Part for f64 {
    #[inline(always)]
    fn up(z: Z) -> Z {
        z
    }
    #[inline(always)]
    fn down(z: Z) -> Z {
        z
    }
    #[inline(always)]
    fn narrow(x: f64) -> f64 {
        x
    }
}

const NAN2: Z = Z { re: f64::NAN, im: f64::NAN };

fn nan_in(z: Z) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// |z| without intermediate overflow; NaN when either part is NaN.
pub fn abs(z: Z) -> f64 {
    if nan_in(z) {
        return f64::NAN;
    }
    libm::hypot(z.re, z.im)
}

/// Principal square root via t = sqrt((|x| + |z|) / 2): Re = t and
/// Im = y / 2t for x >= 0, mirrored for x < 0 (no cancellation).
pub fn sqrt(z: Z) -> Z {
    if nan_in(z) {
        return NAN2;
    }
    let x = z.re;
    let y = if z.im == 0.0 { 0.0 } else { z.im };
    if y.is_infinite() {
        return Z::new(f64::INFINITY, y);
    }
    if x.is_infinite() {
        return if x > 0.0 { Z::new(f64::INFINITY, 0f64.copysign(y)) } else { Z::new(0.0, f64::INFINITY.copysign(y)) };
    }
    if x == 0.0 && y == 0.0 {
        return Z::new(0.0, y);
    }
    let big = x.abs() > 1e300 || y.abs() > 1e300;
    let tiny = x.abs() < 1e-300 && y.abs() < 1e-300;
    let t = if big {
        // quarter the inputs so |x| + |z| cannot overflow; sqrt(4) = 2
        2.0 * ((x.abs() / 4.0 + abs(Z::new(x / 4.0, y / 4.0))) / 2.0).sqrt()
    } else if tiny {
        // scale by 2^108 so |x| + |z| and its halving keep their digits
        // (subnormal: sqrt(0 + 5e-324 i) had t = 0 and Im = inf); sqrt = 2^54
        const UP: f64 = (1u128 << 108) as f64;
        const DOWN: f64 = 1.0 / (1u64 << 54) as f64;
        ((x.abs() * UP + abs(Z::new(x * UP, y * UP))) / 2.0).sqrt() * DOWN
    } else {
        ((x.abs() + abs(Z::new(x, y))) / 2.0).sqrt()
    };
    if x >= 0.0 {
        Z::new(t, y / (2.0 * t))
    } else {
        Z::new(y.abs() / (2.0 * t), t.copysign(y))
    }
}

pub fn log(z: Z) -> Z {
    if nan_in(z) {
        return NAN2;
    }
    Z::new(libm::log(abs(z)), libm::atan2(z.im, z.re))
}

/// ln(1 + z). Inside the unit square ln|1 + z| = log1p(2x + x² + y²) / 2
/// with the sum accumulated exactly (FMA residues of the squares plus
/// compensated addition), so nothing cancels near |1 + z| = 1.
pub fn log1p(z: Z) -> Z {
    if nan_in(z) {
        return NAN2;
    }
    let (x, y) = (z.re, z.im);
    if x.abs() >= 1.0 || y.abs() >= 1.0 {
        return log(Z::new(1.0 + x, y));
    }
    let (xx, yy) = (x * x, y * y);
    let parts = [2.0 * x, xx, x.mul_add(x, -xx), yy, y.mul_add(y, -yy)];
    Z::new(0.5 * libm::log1p(compensated_sum(&parts)), libm::atan2(y, 1.0 + x))
}

/// Sum rounded once at the end: each addition's rounding error (TwoSum)
/// is carried along.
fn compensated_sum(parts: &[f64]) -> f64 {
    let (mut s, mut err) = (0.0f64, 0.0f64);
    for &p in parts {
        let t = s + p;
        let pv = t - s;
        err += (s - (t - pv)) + (p - pv);
        s = t;
    }
    s + err
}

/// e^x (cos y + i sin y); a zero imaginary part gives (e^x, +0) even for
/// NaN x; e^(-inf + i·y) = 0 for infinite or NaN y; for x > 700 e^x is
/// applied as two halves so a representable product does not overflow.
pub fn exp(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return Z::new(libm::exp(x), 0.0);
    }
    if x == f64::NEG_INFINITY && !y.is_finite() {
        return Z::new(0.0, 0.0);
    }
    let (c, s) = (libm::cos(y), libm::sin(y));
    if x > 700.0 {
        let h = libm::exp(x / 2.0);
        return Z::new(h * c * h, h * s * h);
    }
    let r = libm::exp(x);
    Z::new(r * c, r * s)
}

/// e^z - 1 = (expm1(x) cos y - 2 sin²(y/2)) + i e^x sin y, accurate for
/// small |z|; a zero imaginary part gives (expm1(x), +0).
pub fn expm1(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return Z::new(libm::expm1(x), 0.0);
    }
    let sh = libm::sin(y / 2.0);
    Z::new(libm::expm1(x) * libm::cos(y) - 2.0 * sh * sh, libm::exp(x) * libm::sin(y))
}

/// tanh by Kahan's formula (t = tan y, s = sinh x,
/// tanh z = (s·sqrt(1+s²)·(1+t²) + i t) / (1 + (1+t²) s²)).
/// A zero imaginary part gives (tanh x, +0); tanh(±inf + i·(inf|NaN)) = ±1 + 0i.
pub fn tanh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return Z::new(libm::tanh(x), 0.0);
    }
    if x.is_infinite() && !y.is_finite() {
        return Z::new(1f64.copysign(x), 0.0);
    }
    if x.abs() > 22.0 {
        let e = libm::exp(-2.0 * x.abs());
        return Z::new(1f64.copysign(x), 4.0 * libm::sin(y) * libm::cos(y) * e);
    }
    let t = libm::tan(y);
    let beta = 1.0 + t * t;
    let s = libm::sinh(x);
    let rho = (1.0 + s * s).sqrt();
    let d = 1.0 + beta * s * s;
    Z::new(beta * rho * s / d, t / d)
}

pub fn tan(z: Z) -> Z {
    // tan z = -i tanh(iz)
    let t = tanh(Z::new(-z.im, z.re));
    Z::new(t.im, -t.re)
}

/// Smith's algorithm on a divisor scaled by a power of two (so `t` below
/// lies in [1, 4) and neither overflows nor underflows), with C99's recovery
/// of infinite quotients. A finite numerator whose products overflow is
/// scaled too, and only then: scaling it always would flush its smaller part
/// to zero.
pub fn div(a: Z, b: Z) -> Z {
    let (c, d) = (b.re, b.im);
    if c == 0.0 && d == 0.0 {
        if nan_in(a) {
            return Z::new(f64::NAN, f64::NAN);
        }
        let inf = f64::INFINITY.copysign(c);
        return Z::new(inf * a.re, inf * a.im);
    }
    let q = if c.is_finite() && d.is_finite() { scaled_smith(a, c, d) } else { smith(a, c, d) };
    if q.re.is_nan() && q.im.is_nan() && (a.re.is_infinite() || a.im.is_infinite()) && c.is_finite() && d.is_finite() {
        let ar = if a.re.is_infinite() { 1f64.copysign(a.re) } else { 0f64.copysign(a.re) };
        let ai = if a.im.is_infinite() { 1f64.copysign(a.im) } else { 0f64.copysign(a.im) };
        return Z::new(f64::INFINITY * (ar * c + ai * d), f64::INFINITY * (ai * c - ar * d));
    }
    if q.re.is_nan() && q.im.is_nan() && (c.is_infinite() || d.is_infinite()) && a.re.is_finite() && a.im.is_finite() {
        let cr = if c.is_infinite() { 1f64.copysign(c) } else { 0f64.copysign(c) };
        let di = if d.is_infinite() { 1f64.copysign(d) } else { 0f64.copysign(d) };
        return Z::new(0.0 * (a.re * cr + a.im * di), 0.0 * (a.im * cr - a.re * di));
    }
    q
}

fn smith(a: Z, c: f64, d: f64) -> Z {
    if c.abs() >= d.abs() {
        let r = d / c;
        let t = c + d * r;
        Z::new((a.re + a.im * r) / t, (a.im - a.re * r) / t)
    } else {
        let r = c / d;
        let t = c * r + d;
        Z::new((a.re * r + a.im) / t, (a.im * r - a.re) / t)
    }
}

/// `a / (c + di)` for a finite nonzero divisor: Smith's algorithm on the
/// divisor scaled to [1, 2), the quotient scaled back once at the end.
fn scaled_smith(a: Z, c: f64, d: f64) -> Z {
    let eb = libm::ilogb(c.abs().max(d.abs()));
    let (c1, d1) = (libm::scalbn(c, -eb), libm::scalbn(d, -eb));
    let mut q = smith(a, c1, d1);
    let mut shift = -eb;
    if a.re.is_finite() && a.im.is_finite() && !(q.re.is_finite() && q.im.is_finite()) {
        let ea = libm::ilogb(a.re.abs().max(a.im.abs()));
        q = smith(Z::new(libm::scalbn(a.re, -ea), libm::scalbn(a.im, -ea)), c1, d1);
        shift += ea;
    }
    Z::new(libm::scalbn(q.re, shift), libm::scalbn(q.im, shift))
}

/// Complex Max: lexicographic on (re, im) — the first operand when it is
/// strictly greater, else the second (ties and NaN comparisons give `b`), as
/// JAX's `lax.max` on XLA CPU. Exact: the result is an operand.
#[inline(always)]
pub fn max(a: Z, b: Z) -> Z {
    let first = if a.re == b.re { a.im > b.im } else { a.re > b.re };
    if first {
        a
    } else {
        b
    }
}

/// Complex Min: as [`max`] with the order reversed.
#[inline(always)]
pub fn min(a: Z, b: Z) -> Z {
    let first = if a.re == b.re { a.im < b.im } else { a.re < b.re };
    if first {
        a
    } else {
        b
    }
}

pub fn mul(a: Z, b: Z) -> Z {
    Z::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

pub fn pow(a: Z, b: Z) -> Z {
    if a == Z::new(0.0, 0.0) && b == Z::new(0.0, 0.0) {
        return Z::new(1.0, 0.0);
    }
    exp(mul(b, log(a)))
}

/// z / |z|; a zero maps to itself, a NaN part gives (NaN, NaN). An
/// infinite |z| is scaled down by 2^1000 first (so inf + 1i gives NaN + 0i,
/// as XLA CPU).
pub fn sign(z: Z) -> Z {
    if nan_in(z) {
        return NAN2;
    }
    if z.re == 0.0 && z.im == 0.0 {
        return z;
    }
    let r = abs(z);
    if r.is_infinite() {
        let scale = 2f64.powi(-1000);
        let w = Z::new(z.re * scale, z.im * scale);
        let rw = abs(w);
        return Z::new(w.re / rw, w.im / rw);
    }
    Z::new(z.re / r, z.im / r)
}

pub fn logistic(z: Z) -> Z {
    div(Z::new(1.0, 0.0), exp(-z) + 1.0)
}

pub fn rsqrt(z: Z) -> Z {
    div(Z::new(1.0, 0.0), sqrt(z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_of_subnormal_parts() {
        // mpmath: sqrt(2^-1074 i) = 2^-537.5 (1 + i)
        let r = sqrt(Z::new(0.0, 5e-324));
        assert!((r.re - 1.5717277847026288e-162).abs() < 1e-176 && (r.im - 1.5717277847026288e-162).abs() < 1e-176);
        let s = sqrt(Z::new(-5e-324, 5e-324));
        assert!((s.re - 1.0115549693666347e-162).abs() < 1e-176 && (s.im - 2.4421097261308304e-162).abs() < 1e-176);
    }
}
