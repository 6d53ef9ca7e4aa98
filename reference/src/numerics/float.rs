//! Real floating-point element semantics.
//!
//! Every real float type is evaluated the same way: widen exactly to f64,
//! apply the operation once, round once back to the type (ties to even).
//! For + - * / and sqrt that is the correctly rounded IEEE result for every
//! type narrower than f64 (f64 has more than 2p+2 bits for p <= 24, so the
//! second rounding is innocuous); transcendental functions come from the
//! pure-Rust `libm`, so results do not depend on the host's C library.

use half::{bf16, f16};

use super::f8::{F8E4M3FN, F8E5M2};
use super::small_float;
use crate::types::Element;

/// A real floating-point storage type.
pub trait Float: Element {
    /// Total width in bits; the sign is the top bit.
    const WIDTH: u32;
    /// Exact.
    fn to_f64(self) -> f64;
    /// Round to nearest, ties to even; overflow as the type requires.
    fn from_f64(x: f64) -> Self;
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
    fn is_nan(self) -> bool {
        self.to_f64().is_nan()
    }
    /// The bit that marks a NaN quiet, for the types whose signaling NaNs
    /// XLA CPU's Pow sees (f64, f32, bf16); None where a signaling NaN
    /// acts as a quiet one (see [`pow`]).
    const POW_QUIET_BIT: Option<u64> = None;
}

/// Pow — C's `pow`: `x^±0` and `1^y` are 1 even for a quiet NaN.
/// Implementation-defined (the document is silent; decided as XLA CPU): a
/// signaling NaN operand gives that NaN quieted, as IEEE 754 requires, for
/// f64, f32 and bf16; XLA CPU widens f16 (and the f8 types) with a
/// conversion that quiets the NaN first, so there `sNaN^0` is 1.
pub fn pow<T: Float>(a: T, b: T) -> T {
    if let Some(quiet) = T::POW_QUIET_BIT {
        for x in [a, b] {
            if x.is_nan() && x.to_bits() & quiet == 0 {
                return T::from_bits(x.to_bits() | quiet);
            }
        }
    }
    apply2(a, b, libm::pow)
}

impl Float for f64 {
    const WIDTH: u32 = 64;
    const POW_QUIET_BIT: Option<u64> = Some(1 << 51);
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl Float for f32 {
    const WIDTH: u32 = 32;
    const POW_QUIET_BIT: Option<u64> = Some(1 << 22);
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl Float for f16 {
    const WIDTH: u32 = 16;
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(x: f64) -> Self {
        f16::from_bits(small_float::F16.from_f64_bits(x) as u16)
    }
    fn to_bits(self) -> u64 {
        f16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f16::from_bits(bits as u16)
    }
}

impl Float for bf16 {
    const WIDTH: u32 = 16;
    const POW_QUIET_BIT: Option<u64> = Some(1 << 6);
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn from_f64(x: f64) -> Self {
        bf16::from_bits(small_float::BF16.from_f64_bits(x) as u16)
    }
    fn to_bits(self) -> u64 {
        bf16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        bf16::from_bits(bits as u16)
    }
}

macro_rules! f8_float {
    ($t:ty) => {
        impl Float for $t {
            const WIDTH: u32 = 8;
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn from_f64(x: f64) -> Self {
                <$t>::from_f64(x)
            }
            fn to_bits(self) -> u64 {
                self.0 as u64
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as u8)
            }
        }
    };
}
f8_float!(F8E4M3FN);
f8_float!(F8E5M2);

/// Applies a real function to a value of any float type: widen, apply, round once.
pub fn apply<T: Float>(x: T, f: impl Fn(f64) -> f64) -> T {
    T::from_f64(f(x.to_f64()))
}

/// Applies a real binary function to values of any float type.
pub fn apply2<T: Float>(a: T, b: T, f: impl Fn(f64, f64) -> f64) -> T {
    T::from_f64(f(a.to_f64(), b.to_f64()))
}

/// Neg flips the sign bit only, so NaN payloads survive.
pub fn neg<T: Float>(x: T) -> T {
    T::from_bits(x.to_bits() ^ (1 << (T::WIDTH - 1)))
}

/// Abs clears the sign bit only.
pub fn abs<T: Float>(x: T) -> T {
    T::from_bits(x.to_bits() & !(1 << (T::WIDTH - 1)))
}

/// Max: IEEE 754-2019 `maximum` — NaN if either operand is NaN, and
/// -0 < +0 (XLA CPU gives `max(-0, +0) = +0` in both orders).
pub fn maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else if a > b {
        a
    } else {
        b
    }
}

/// Min: IEEE 754-2019 `minimum` — NaN propagates, -0 < +0.
pub fn minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

/// Sign: -1, -0, NaN, +0 or 1, as the document's table.
pub fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        1f64.copysign(x)
    }
}

/// Logistic: 1 / (1 + e^-x).
pub fn logistic(x: f64) -> f64 {
    let d = 1.0 + libm::exp(-x);
    if d.is_finite() {
        1.0 / d
    } else {
        // x < -709: e^-x overflows, but the result e^x / (1 + e^x) is a
        // subnormal down to x ≈ -745 (found by differential testing).
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}

/// Rsqrt: 1 / sqrt(x) (so rsqrt(-0) = -inf, rsqrt(+inf) = 0).
pub fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// The key that orders a float's bit pattern as the document's total order:
/// -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN.
pub fn total_order_key<T: Float>(x: T) -> i64 {
    let width = T::WIDTH;
    let bits = x.to_bits();
    let sign = bits >> (width - 1) & 1 == 1;
    let magnitude = (bits & ((1u64 << (width - 1)) - 1)) as i64;
    if sign {
        -magnitude - 1
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_nan_and_zero() {
        assert!(maximum(f64::NAN, 1.0).is_nan());
        assert!(maximum(1.0, f64::NAN).is_nan());
        assert!(maximum(-0.0, 0.0).is_sign_positive());
        assert!(maximum(0.0, -0.0).is_sign_positive());
        assert!(minimum(0.0, -0.0).is_sign_negative());
        assert!(minimum(-0.0, 0.0).is_sign_negative());
    }

    #[test]
    fn total_order() {
        let order = [-f32::NAN, f32::NEG_INFINITY, -1.0, -1e-45, -0.0, 0.0, 1e-45, 1.0, f32::INFINITY, f32::NAN];
        for w in order.windows(2) {
            assert!(total_order_key(w[0]) < total_order_key(w[1]), "{:?}", w);
        }
        let order64 = [-f64::NAN, f64::NEG_INFINITY, -0.0, 0.0, f64::MAX, f64::NAN];
        for w in order64.windows(2) {
            assert!(total_order_key(w[0]) < total_order_key(w[1]), "{:?}", w);
        }
    }

    #[test]
    fn neg_keeps_payload() {
        let x = f32::from_bits(0x7fc0_0001);
        assert_eq!(neg(x).to_bits(), 0xffc0_0001);
        assert_eq!(abs(neg(x)).to_bits(), 0x7fc0_0001);
    }

    #[test]
    fn sign_table() {
        assert!(sign(-0.0).is_sign_negative() && sign(-0.0) == 0.0);
        assert!(sign(f64::NAN).is_nan());
        assert_eq!(sign(-3.0), -1.0);
        assert_eq!(sign(1e-310), 1.0, "subnormals are kept, not flushed");
    }
}
