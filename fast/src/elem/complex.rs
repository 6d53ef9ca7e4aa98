//! Complex element semantics of the fast engine: num-complex's functions
//! with the corner behaviour xlaref pins (docs/semantics-decisions.md):
//! Sqrt and Log of a NaN-carrying value are (NaN, NaN); Sqrt treats a zero
//! imaginary part as +0; division recovers infinities (Smith's method here).

use num_complex::Complex;

pub type Z = Complex<f64>;

fn nan_in(z: Z) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

pub fn sqrt(z: Z) -> Z {
    if nan_in(z) {
        return Z::new(f64::NAN, f64::NAN);
    }
    let im = if z.im == 0.0 { 0.0 } else { z.im };
    if im == 0.0 {
        return if z.re >= 0.0 { Z::new(z.re.sqrt(), 0.0) } else { Z::new(0.0, (-z.re).sqrt()) };
    }
    Z::new(z.re, im).sqrt()
}

pub fn log(z: Z) -> Z {
    if nan_in(z) {
        return Z::new(f64::NAN, f64::NAN);
    }
    Z::new(z.re.hypot(z.im).ln(), z.im.atan2(z.re))
}

pub fn log1p(z: Z) -> Z {
    if nan_in(z) {
        return Z::new(f64::NAN, f64::NAN);
    }
    if z.norm() < 1e-4 {
        // ln(1+z) = z - z²/2 + z³/3 - ...: enough terms for f64 at |z| < 1e-4
        let z2 = z * z;
        return z - z2 / 2.0 + z2 * z / 3.0 - z2 * z2 / 4.0;
    }
    log(z + 1.0)
}

pub fn exp(z: Z) -> Z {
    if z.im == 0.0 && !z.re.is_nan() {
        return Z::new(z.re.exp(), z.im);
    }
    z.exp()
}

pub fn expm1(z: Z) -> Z {
    if z.norm() < 1e-4 {
        let z2 = z * z;
        return z + z2 / 2.0 + z2 * z / 6.0 + z2 * z2 / 24.0;
    }
    exp(z) - 1.0
}

pub fn tanh(z: Z) -> Z {
    if z.re.abs() > 20.0 {
        let e = (-2.0 * z.re.abs()).exp();
        return Z::new(1f64.copysign(z.re), 2.0 * (2.0 * z.im).sin() * e);
    }
    z.tanh()
}

pub fn tan(z: Z) -> Z {
    // tan z = -i tanh(iz)
    let t = tanh(Z::new(-z.im, z.re));
    Z::new(t.im, -t.re)
}

/// Smith's algorithm, with C99's recovery of infinite quotients.
pub fn div(a: Z, b: Z) -> Z {
    let (c, d) = (b.re, b.im);
    if c == 0.0 && d == 0.0 {
        if nan_in(a) {
            return Z::new(f64::NAN, f64::NAN);
        }
        let inf = f64::INFINITY.copysign(c);
        return Z::new(inf * a.re, inf * a.im);
    }
    let q = if c.abs() >= d.abs() {
        let r = d / c;
        let t = c + d * r;
        Z::new((a.re + a.im * r) / t, (a.im - a.re * r) / t)
    } else {
        let r = c / d;
        let t = c * r + d;
        Z::new((a.re * r + a.im) / t, (a.im * r - a.re) / t)
    };
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

pub fn mul(a: Z, b: Z) -> Z {
    Z::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

pub fn pow(a: Z, b: Z) -> Z {
    if a == Z::new(0.0, 0.0) && b == Z::new(0.0, 0.0) {
        return Z::new(1.0, 0.0);
    }
    exp(mul(b, log(a)))
}

pub fn sign(z: Z) -> Z {
    if nan_in(z) {
        return Z::new(f64::NAN, f64::NAN);
    }
    if z.re == 0.0 && z.im == 0.0 {
        return z;
    }
    let m = z.re.abs().max(z.im.abs());
    let s = Z::new(z.re / m, z.im / m);
    s / s.norm()
}

pub fn abs(z: Z) -> f64 {
    z.re.hypot(z.im)
}

pub fn logistic(z: Z) -> Z {
    div(Z::new(1.0, 0.0), exp(-z) + 1.0)
}

pub fn rsqrt(z: Z) -> Z {
    div(Z::new(1.0, 0.0), sqrt(z))
}
