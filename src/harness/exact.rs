//! Exact sums for the tolerance model: real numbers `m · 2^e` with an
//! arbitrary-size integer `m` (every finite float is one), added and
//! multiplied without rounding, and an accumulator that runs the
//! reference's own sum-of-products plans (Dot, DotGeneral, Conv) exactly.

use std::ops::{Add, Mul};

use num_bigint::BigInt;
use num_complex::Complex;
use num_traits::{Signed, ToPrimitive, Zero};
use xlaref_reference::literal::Data;
use xlaref_reference::numerics::convert::Num;
use xlaref_reference::terms::Acc;

/// A dyadic rational `m · 2^e`, held exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Dyadic {
    m: BigInt,
    e: i64,
}

impl Dyadic {
    pub fn zero() -> Dyadic {
        Dyadic { m: BigInt::zero(), e: 0 }
    }

    /// The exact value of a finite float; None for NaN and infinities.
    pub fn from_f64(x: f64) -> Option<Dyadic> {
        if !x.is_finite() {
            return None;
        }
        if x == 0.0 {
            return Some(Dyadic::zero());
        }
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        // Subnormals have no implicit leading bit and the exponent of 1.
        let (mantissa, exponent) = if biased == 0 { (fraction, -1074) } else { (fraction | (1u64 << 52), biased - 1075) };
        let m = BigInt::from(mantissa);
        Some(Dyadic { m: if x < 0.0 { -m } else { m }, e: exponent })
    }

    /// The exact value of an integer.
    pub fn from_i128(i: i128) -> Dyadic {
        Dyadic { m: BigInt::from(i), e: 0 }
    }

    pub fn is_zero(&self) -> bool {
        self.m.is_zero()
    }

    /// The nearest f64 (to within the rounding of num-bigint's conversion
    /// and of the final scaling: far below any tolerance it feeds).
    pub fn to_f64(&self) -> f64 {
        if self.m.is_zero() {
            return 0.0;
        }
        // Keep 64 significant bits so the conversion never overflows.
        let shift = (self.m.bits() as i64 - 64).max(0);
        let top = (&self.m >> shift as usize).to_f64().unwrap_or(0.0);
        scale(top, self.e + shift)
    }

    pub fn abs(&self) -> Dyadic {
        Dyadic { m: self.m.abs(), e: self.e }
    }
}

/// `x · 2^n` without intermediate overflow or underflow.
fn scale(mut x: f64, mut n: i64) -> f64 {
    let step = |x: f64, k: i32| x * f64::from_bits(((k + 1023) as u64) << 52);
    while n > 1000 {
        x = step(x, 1000);
        n -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while n < -1000 {
        x = step(x, -1000);
        n += 1000;
        if x == 0.0 {
            return x;
        }
    }
    step(x, n as i32)
}

impl Add for &Dyadic {
    type Output = Dyadic;
    fn add(self, other: &Dyadic) -> Dyadic {
        if self.m.is_zero() {
            return other.clone();
        }
        if other.m.is_zero() {
            return self.clone();
        }
        let e = self.e.min(other.e);
        let m = (&self.m << (self.e - e) as usize) + (&other.m << (other.e - e) as usize);
        Dyadic { m, e }
    }
}

impl Mul for &Dyadic {
    type Output = Dyadic;
    fn mul(self, other: &Dyadic) -> Dyadic {
        Dyadic { m: &self.m * &other.m, e: self.e + other.e }
    }
}

/// What a sum with non-finite terms is, whatever the order: NaN once any
/// term is NaN or both infinities appear, else the infinity that appears.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Specials {
    pub nan: bool,
    pub pos_inf: bool,
    pub neg_inf: bool,
}

impl Specials {
    fn add_term(&mut self, x: f64) {
        if x.is_nan() {
            self.nan = true;
        } else if x == f64::INFINITY {
            self.pos_inf = true;
        } else if x == f64::NEG_INFINITY {
            self.neg_inf = true;
        }
    }

    /// The order-independent non-finite value of the sum, if there is one.
    pub fn value(&self) -> Option<f64> {
        match (self.nan || (self.pos_inf && self.neg_inf), self.pos_inf, self.neg_inf) {
            (true, _, _) => Some(f64::NAN),
            (false, true, _) => Some(f64::INFINITY),
            (false, _, true) => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }
}

/// One real component of an exact sum: its value, the sum of the absolute
/// values of its terms, their number, and its non-finite terms.
#[derive(Clone, Debug)]
pub struct ExactSum {
    pub value: Dyadic,
    pub abs_sum: f64,
    pub terms: u64,
    pub specials: Specials,
}

impl ExactSum {
    pub fn new() -> ExactSum {
        ExactSum { value: Dyadic::zero(), abs_sum: 0.0, terms: 0, specials: Specials::default() }
    }

    /// Adds one term given as a float.
    pub fn add_f64(&mut self, x: f64) {
        self.terms += 1;
        match Dyadic::from_f64(x) {
            Some(d) => {
                self.value = &self.value + &d;
                self.abs_sum += x.abs();
            }
            None => self.specials.add_term(x),
        }
    }
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum::new()
    }
}

/// A number in a sum of products, accumulated exactly: operands are read as
/// (complex) floats, every product is formed exactly and added exactly.
/// Used through the reference's [`Acc`] plans, so the terms are exactly the
/// reference's terms.
#[derive(Clone, Debug)]
pub struct ExactAcc {
    /// The operand value (for an operand) — as read, non-finite parts kept.
    pub input: Complex<f64>,
    pub re: ExactSum,
    pub im: ExactSum,
}

impl ExactAcc {
    fn product_part(sum: &mut ExactSum, terms: [(f64, f64, bool); 2], magnitude: f64) {
        // terms: (x, y, negate) for sum += ±x*y, one component of a complex product.
        sum.terms += 1;
        let mut finite = true;
        let mut value = 0.0f64;
        for (x, y, negate) in terms {
            let p = if negate { -(x * y) } else { x * y };
            value += p;
            if !(x.is_finite() && y.is_finite()) {
                finite = false;
            }
        }
        if !finite {
            // A non-finite operand: the term is what IEEE arithmetic gives.
            sum.specials.add_term(value);
            return;
        }
        for (x, y, negate) in terms {
            if let (Some(a), Some(b)) = (Dyadic::from_f64(x), Dyadic::from_f64(y)) {
                let p = &a * &b;
                let p = if negate { Dyadic { m: -p.m, e: p.e } } else { p };
                sum.value = &sum.value + &p;
            }
        }
        sum.abs_sum += magnitude;
    }
}

impl Acc for ExactAcc {
    fn zero() -> Self {
        ExactAcc { input: Complex::new(0.0, 0.0), re: ExactSum::new(), im: ExactSum::new() }
    }

    fn from_num(n: Num) -> Self {
        let input = match n {
            Num::Pred(b) => Complex::new(b as u8 as f64, 0.0),
            Num::Int(i) => Complex::new(i as f64, 0.0),
            Num::Real(x) => Complex::new(x, 0.0),
            Num::Complex(re, im) => Complex::new(re, im),
        };
        ExactAcc { input, ..ExactAcc::zero() }
    }

    /// `self += a * b` with `(a.re + a.im i)(b.re + b.im i)`, both
    /// components exact; the absolute term bound is `|a| |b|`.
    fn mul_add(&mut self, a: &Self, b: &Self) {
        let (a, b) = (a.input, b.input);
        let magnitude = a.norm() * b.norm();
        Self::product_part(&mut self.re, [(a.re, b.re, false), (a.im, b.im, true)], magnitude);
        // Real operands (both imaginary parts zero) have an exactly zero
        // imaginary product unless a real part is infinite or NaN, where the
        // textbook formula forms inf·0 = NaN.
        if a.im != 0.0 || b.im != 0.0 || a.im.is_nan() || b.im.is_nan() || !a.re.is_finite() || !b.re.is_finite() {
            Self::product_part(&mut self.im, [(a.re, b.im, false), (a.im, b.re, false)], magnitude);
        } else {
            self.im.terms += 1;
        }
    }

    fn into_data(v: Vec<Self>) -> Data {
        Data::C128(v.iter().map(|x| Complex::new(x.re.value.to_f64(), x.im.value.to_f64())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_exact() {
        for x in [1.0, -0.1, 1e-310, f64::MAX, f64::MIN_POSITIVE, 3.0e300] {
            assert_eq!(Dyadic::from_f64(x).unwrap().to_f64(), x);
        }
        assert!(Dyadic::from_f64(f64::NAN).is_none());
    }

    #[test]
    fn sums_do_not_round() {
        // 1e16 + 1 - 1e16 is 0 in f64 but 1 exactly.
        let mut s = ExactSum::new();
        for x in [1e16, 1.0, -1e16] {
            s.add_f64(x);
        }
        assert_eq!(s.value.to_f64(), 1.0);
        assert_eq!(s.terms, 3);
        assert_eq!(s.abs_sum, 2e16 + 1.0);
    }

    #[test]
    fn products_do_not_round() {
        let mut acc = ExactAcc::zero();
        let third = ExactAcc::from_num(Num::Real(1.0 / 3.0));
        acc.mul_add(&third, &ExactAcc::from_num(Num::Real(3.0)));
        acc.mul_add(&ExactAcc::from_num(Num::Real(-1.0)), &ExactAcc::from_num(Num::Real(1.0)));
        // (1/3 in f64) * 3 - 1 is -2^-54 exactly, 0 in f64 arithmetic.
        assert_eq!(acc.re.value.to_f64(), -(2f64.powi(-54)));
    }

    #[test]
    fn specials() {
        let mut s = ExactSum::new();
        s.add_f64(f64::INFINITY);
        assert_eq!(s.specials.value(), Some(f64::INFINITY));
        s.add_f64(f64::NEG_INFINITY);
        assert!(s.specials.value().unwrap().is_nan());
    }

    /// NaN·0 in the imaginary part of a product of operands with zero
    /// imaginary parts is NaN, not an exact 0.
    #[test]
    fn nan_real_part_reaches_the_imaginary_sum() {
        let a = ExactAcc::from_num(Num::Complex(f64::NAN, -0.0));
        let b = ExactAcc::from_num(Num::Complex(f64::NAN, 0.0));
        let mut acc = ExactAcc::zero();
        acc.mul_add(&a, &b);
        assert!(acc.im.specials.value().is_some_and(f64::is_nan));
        let (c, d) = (ExactAcc::from_num(Num::Complex(2.0, 0.0)), ExactAcc::from_num(Num::Complex(3.0, 0.0)));
        let mut exact = ExactAcc::zero();
        exact.mul_add(&c, &d);
        assert_eq!(exact.im.specials.value(), None);
        assert_eq!(exact.re.value.to_f64(), 6.0);
    }
}
