//! The fast engine's complex Sinh, Cosh and inverse trigonometric and
//! hyperbolic functions (CHLO extension ops), independent of the
//! reference's Kahan formulas: Asin and Acos by Hull, Fairgrieve and Tang's
//! algorithm ("Implementing the complex arcsine and arccosine functions
//! using exception handling", 1997: the real parts from `x/A`, the
//! imaginary parts from `A = (|z+1| + |z−1|)/2` through log1p near 1), the
//! others through `asinh z = −i asin(iz)`, `acosh z = ±i acos z`,
//! `atan z = −i atanh(iz)`. Special values are the reference's (C99's,
//! with XLA CPU's choices: Asin, Acos, Asinh and Acosh do not see the sign
//! of a zero part; `asinh(NaN ± 0i)` is NaN + NaN i; Sinh and Cosh give a
//! +0 imaginary part for real arguments, Cosh also for imaginary ones, Atan
//! a −0 one for real arguments; `atanh(±0 ± 0i) = +0 ± 0i`).

use std::f64::consts::{FRAC_PI_2, LN_2, PI};

use super::complex::Z;

/// Where Hull's `A·A − 1` would overflow: `A + sqrt(A² − 1) = 2A` in f64.
const HUGE: f64 = 1e150;

/// Real part's switch from `asin(B)` to the atan form, and imaginary part's
/// switch from log1p to log (Hull et al.'s crossovers).
const B_CROSSOVER: f64 = 0.6417;
const A_CROSSOVER: f64 = 1.5;

/// Below this `y`, at `x = 1`, Hull's `A − 1 = y/2 + …` would be formed
/// from a subnormal `y` and lose its digits (`4·sqrt(f64::MIN_POSITIVE)`,
/// Hull et al.'s `safe_min`).
const SAFE_MIN: f64 = 5.966_672_584_960_166e-154;

/// Hull's quantities for `x, y >= 0` (finite, moderate): the real part of
/// asin (or acos when `for_acos`), and `ln(A + sqrt(A² − 1))`.
fn hull(x: f64, y: f64, for_acos: bool) -> (f64, f64) {
    if y == 0.0 && x <= 1.0 {
        return (if for_acos { x.acos() } else { x.asin() }, 0.0);
    }
    if x == 1.0 && y < SAFE_MIN {
        // Hull et al.'s case for tiny y at the branch point: asin(1 + iy) =
        // π/2 − √y + i√y to first order, the next terms below f64's
        // precision (without it acos(1 + 5e−324 i) had imaginary part −0,
        // not −2.2e−162).
        let root = y.sqrt();
        return (if for_acos { root } else { FRAC_PI_2 - root }, root);
    }
    let (xp1, xm1) = (x + 1.0, x - 1.0);
    let (r, s) = (xp1.hypot(y), xm1.hypot(y));
    let a = 0.5 * (r + s);
    let b = x / a;
    let yy = y * y;
    let real = if b <= B_CROSSOVER {
        if for_acos {
            b.acos()
        } else {
            b.asin()
        }
    } else {
        let apx = a + x;
        // `den` = sqrt(A² − x²)·… written without cancellation.
        let den = if x <= 1.0 {
            (0.5 * apx * (yy / (r + xp1) + (s - xm1))).sqrt()
        } else {
            y * (0.5 * (apx / (r + xp1) + apx / (s + xm1))).sqrt()
        };
        if for_acos {
            (den / x).atan()
        } else {
            (x / den).atan()
        }
    };
    let imag = if a <= A_CROSSOVER {
        let am1 = if x < 1.0 { 0.5 * (yy / (r + xp1) + yy / (s - xm1)) } else { 0.5 * (yy / (r + xp1) + (s + xm1)) };
        (am1 + (am1 * (a + 1.0)).sqrt()).ln_1p()
    } else {
        (a + (a * a - 1.0).sqrt()).ln()
    };
    (real, imag)
}

/// `ln(2|z|)` and the first-quadrant angle, for huge or infinite `x, y >= 0`.
fn asymptotic(x: f64, y: f64) -> (f64, f64) {
    let modulus = if x.is_infinite() || y.is_infinite() { f64::INFINITY } else { (x / 2.0).hypot(y / 2.0).ln() + 2.0 * LN_2 };
    (modulus, x.atan2(y))
}

/// asin of a value with a NaN part (C99's casin = −i·casinh(iz)), with
/// XLA CPU's `+inf` where C99 leaves the sign unspecified:
/// `asin(±inf + NaN i) = NaN + inf i`.
fn nan_asin(z: Z) -> Z {
    if z.re.is_infinite() {
        return Z::new(f64::NAN, f64::INFINITY);
    }
    let w = nan_asinh(Z::new(-z.im, z.re));
    Z::new(w.im, -w.re)
}

fn nan_asinh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        if y.is_infinite() {
            Z::new(f64::INFINITY, f64::NAN)
        } else {
            Z::new(f64::NAN, f64::NAN)
        }
    } else if x.is_infinite() {
        Z::new(x, f64::NAN)
    } else {
        Z::new(f64::NAN, f64::NAN)
    }
}

/// −0 as +0.
fn plain(v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

pub fn asin(z: Z) -> Z {
    let z = Z::new(z.re, plain(z.im));
    if z.re.is_nan() || z.im.is_nan() {
        return nan_asin(z);
    }
    let (x, y) = (z.re.abs(), z.im.abs());
    if x.max(y) < 1e-100 {
        // asin z = z + z³/6 + …: z itself, where Hull's y² would underflow
        return z;
    }
    let (re, im) = if x.max(y) > HUGE {
        let (l, angle) = asymptotic(x, y);
        (angle, l)
    } else {
        hull(x, y, false)
    };
    Z::new(re.copysign(z.re), im.copysign(z.im))
}

pub fn acos(z: Z) -> Z {
    let z = Z::new(z.re, plain(z.im));
    if z.re.is_nan() || z.im.is_nan() {
        // acos = π/2 − asin, except that acos(NaN ± i·inf) = NaN ∓ i·inf.
        let w = nan_asin(z);
        return if z.re.is_nan() && z.im.is_infinite() { Z::new(f64::NAN, -z.im) } else { Z::new(FRAC_PI_2 - w.re, -w.im) };
    }
    let (x, y) = (z.re.abs(), z.im.abs());
    let (re, im) = if x.max(y) > HUGE {
        let (l, angle) = asymptotic(x, y);
        (FRAC_PI_2 - angle, l)
    } else {
        hull(x, y, true)
    };
    let re = if z.re.is_sign_negative() { PI - re } else { re };
    Z::new(re, if z.im.is_sign_negative() { im } else { -im })
}

pub fn asinh(z: Z) -> Z {
    let z = Z::new(plain(z.re), z.im);
    if z.re.is_nan() || z.im.is_nan() {
        return nan_asinh(z);
    }
    let w = asin(Z::new(-z.im, z.re));
    Z::new(w.im, -w.re)
}

pub fn acosh(z: Z) -> Z {
    let z = Z::new(z.re, plain(z.im));
    if z.re.is_nan() || z.im.is_nan() {
        let inf = z.re.is_infinite() || z.im.is_infinite();
        return if inf { Z::new(f64::INFINITY, f64::NAN) } else { Z::new(f64::NAN, f64::NAN) };
    }
    let w = acos(z);
    // ±i·acos z with the sign that makes the real part non-negative; a zero
    // imaginary part of acos keeps the side of the cut z came from.
    if w.im.is_sign_negative() {
        Z::new(-w.im, w.re)
    } else {
        Z::new(w.im, -w.re)
    }
}

pub fn atanh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        return if y.is_infinite() {
            Z::new(0f64.copysign(x), FRAC_PI_2.copysign(y))
        } else if x.is_infinite() {
            Z::new(0f64.copysign(x), f64::NAN)
        } else if x == 0.0 {
            Z::new(x, f64::NAN)
        } else {
            Z::new(f64::NAN, f64::NAN)
        };
    }
    if x.abs().max(y.abs()) > HUGE {
        // atanh z → 1/z ± iπ/2: Re(1/z) = x/|z|², formed scaled.
        let re = if x.is_infinite() || y.is_infinite() {
            0f64.copysign(x)
        } else {
            let m = x.abs().max(y.abs());
            let (xs, ys) = (x / m, y / m);
            xs / (xs * xs + ys * ys) / m
        };
        return Z::new(re, FRAC_PI_2.copysign(y));
    }
    if x == 0.0 && y == 0.0 {
        return Z::new(0.0, y);
    }
    let yy = y * y;
    // ¼ ln(|1 + z|²/|1 − z|²) = ¼ log1p(4|x|/|1 − |x| − iy|²), odd in x;
    // for |x| the log1p argument is not negative.
    let ax = x.abs();
    let d = (1.0 - ax) * (1.0 - ax) + yy;
    // Where d underflows (x = ±1, tiny y), ln d comes from the hypotenuse.
    let re = if d < 1e-300 { 0.25 * (4.0 * ax).ln() - 0.5 * (1.0 - ax).hypot(y).ln() } else { 0.25 * (4.0 * ax / d).ln_1p() }.copysign(x);
    let im = 0.5 * (2.0 * y).atan2((1.0 - x) * (1.0 + x) - yy);
    Z::new(re, im)
}

pub fn atan(z: Z) -> Z {
    if z.im == 0.0 && z.re.is_finite() {
        return Z::new(z.re.atan(), -0.0);
    }
    let w = atanh(Z::new(-z.im, z.re));
    Z::new(w.im, -w.re)
}

/// sinh; a real argument gives a +0 imaginary part.
pub fn sinh(z: Z) -> Z {
    if z.im == 0.0 {
        return Z::new(z.re.sinh(), 0.0);
    }
    z.sinh()
}

/// cosh; a real or imaginary argument gives a +0 imaginary part.
pub fn cosh(z: Z) -> Z {
    if z.im == 0.0 {
        return Z::new(z.re.cosh(), 0.0);
    }
    if z.re == 0.0 && z.im.is_finite() {
        return Z::new(z.im.cos(), 0.0);
    }
    z.cosh()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: Z, b: Z) -> bool {
        (a - b).norm() <= 1e-14 * b.norm()
    }

    #[test]
    fn principal_values() {
        let z = Z::new(0.5, 0.25);
        assert!(near(asin(z), Z::new(0.5016088532755008, 0.28139605624529274)));
        assert!(near(acos(z), Z::new(1.0691874735193958, -0.28139605624529274)));
        assert!(near(atan(z), Z::new(0.4842544903299662, 0.20058661813123432)));
        assert!(near(asinh(z), Z::new(0.4926756834207706, 0.2243284526346675)));
        assert!(near(acosh(z), Z::new(0.28139605624529274, 1.0691874735193958)));
        assert!(near(atanh(z), Z::new(0.5003700000525311, 0.3143981432077165)));
        let far = Z::new(-3.0, -4.0);
        assert!(near(asin(far), Z::new(-0.6339838656391766, -2.305509031243477)));
        assert!(near(acos(far), Z::new(2.204_780_192_434_073, 2.305509031243477)));
    }

    #[test]
    fn tiny_imaginary_part_at_the_branch_points() {
        // mpmath (3000 bits): acos(1 + 2^-1074 i) = 2^-537 − 2^-537 i, ...
        let (e, r) = (5e-324, 2f64.powi(-537));
        assert!(near(acos(Z::new(1.0, e)), Z::new(r, -r)));
        assert!(near(acos(Z::new(-1.0, e)), Z::new(PI, -r)));
        assert!(near(asin(Z::new(1.0, e)), Z::new(FRAC_PI_2, r)));
        assert!(near(acosh(Z::new(1.0, e)), Z::new(r, r)));
        assert!(near(asinh(Z::new(-e, -1.0)), Z::new(-r, -FRAC_PI_2)));
        // 1e-200 is no special case: Hull's general formulas
        assert!(near(acos(Z::new(1.0, 1e-200)), Z::new(1e-100, -1e-100)));
    }

    #[test]
    fn asin_of_infinity_and_nan() {
        let w = asin(Z::new(f64::NEG_INFINITY, f64::NAN));
        assert!(w.re.is_nan() && w.im == f64::INFINITY);
        let w = acos(Z::new(f64::INFINITY, f64::NAN));
        assert!(w.re.is_nan() && w.im == f64::NEG_INFINITY);
    }
}
