//! ConvertElementType, element by element, for every pair of types.
//!
//! Each source element is first read exactly as a [`Num`], then rounded or
//! wrapped once into the target type. The document fixes only
//! int-to-float rounding (to nearest even); the rest is decided as XLA's
//! CPU backend behaves (docs/semantics-decisions.md):
//! - float → int: truncate toward zero, saturate at the type's range, NaN → 0;
//! - int → int: keep the low bits (two's complement);
//! - anything → pred: `x != 0` (NaN is true; complex: either part non-zero);
//! - complex → real: the real part, then as above;
//! - int → any float type: one rounding to nearest even, as the document
//!   fixes (not through f32: XLA's s32 2^30+2^22+1 → bf16 gives 2^30 by
//!   rounding twice, the document's rounding gives 2^30+2^23);
//! - → bf16 from f64 (and the real part of c128): rounded to f32 first,
//!   then to bf16, as XLA (float-to-float rounding is not fixed by the
//!   document);
//! - → f16: one rounding (XLA CPU converts f64 → f16 directly);
//! - → f8: one rounding; overflow is NaN (e4m3fn) or ±inf (e5m2).

use half::{bf16, f16};
use num_complex::Complex;

use super::f8::{F8E4M3FN, F8E5M2};
use super::float::Float;
use crate::literal::{Data, Stored};
use crate::types::ElementType;

/// An element's value, exactly.
#[derive(Clone, Copy, Debug)]
pub enum Num {
    Pred(bool),
    Int(i128),
    Real(f64),
    Complex(f64, f64),
}

pub trait ToNum: Copy {
    fn to_num(self) -> Num;
}

pub trait FromNum: Sized {
    fn from_num(n: Num) -> Self;
}

impl ToNum for bool {
    fn to_num(self) -> Num {
        Num::Pred(self)
    }
}
macro_rules! int_num {
    ($($t:ty),*) => {$(
        impl ToNum for $t {
            fn to_num(self) -> Num {
                Num::Int(self as i128)
            }
        }
        impl FromNum for $t {
            fn from_num(n: Num) -> Self {
                match n {
                    Num::Pred(b) => b as $t,
                    Num::Int(i) => i as $t,
                    // `as` from float: truncates, saturates, NaN -> 0
                    Num::Real(x) | Num::Complex(x, _) => x as $t,
                }
            }
        }
    )*};
}
int_num!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! real_num {
    ($($t:ty),*) => {$(
        impl ToNum for $t {
            fn to_num(self) -> Num {
                Num::Real(Float::to_f64(self))
            }
        }
    )*};
}
real_num!(f16, bf16, f32, f64, F8E4M3FN, F8E5M2);

impl ToNum for Complex<f32> {
    fn to_num(self) -> Num {
        Num::Complex(self.re as f64, self.im as f64)
    }
}
impl ToNum for Complex<f64> {
    fn to_num(self) -> Num {
        Num::Complex(self.re, self.im)
    }
}

impl FromNum for bool {
    fn from_num(n: Num) -> Self {
        match n {
            Num::Pred(b) => b,
            Num::Int(i) => i != 0,
            Num::Real(x) => x != 0.0,
            Num::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }
}

/// The real value a number converts to: its real part, ints rounded once
/// to nearest even (i128 → f64 is a single correct rounding).
fn real_part(n: Num) -> f64 {
    match n {
        Num::Pred(b) => b as u8 as f64,
        Num::Int(i) => i as f64,
        Num::Real(x) | Num::Complex(x, _) => x,
    }
}

impl FromNum for f64 {
    fn from_num(n: Num) -> Self {
        real_part(n)
    }
}
impl FromNum for f32 {
    fn from_num(n: Num) -> Self {
        match n {
            // i128 -> f32 directly: one rounding, not two via f64
            Num::Int(i) => i as f32,
            other => real_part(other) as f32,
        }
    }
}
/// The integer `i` rounded once, to nearest even, to `bits` significant
/// bits (the precision of a float type, at most 53): the value the document's
/// int-to-float conversion gives, before any overflow to ±inf (which the
/// target type's `from_f64` then applies exactly, the result being
/// representable or beyond its range).
fn int_rounded_to_bits(i: i128, bits: u32) -> f64 {
    let magnitude = i.unsigned_abs();
    let length = 128 - magnitude.leading_zeros();
    let rounded = if length <= bits {
        magnitude as f64
    } else {
        let dropped = length - bits;
        let kept = magnitude >> dropped;
        let rest = magnitude & ((1u128 << dropped) - 1);
        let half = 1u128 << (dropped - 1);
        let kept = if rest > half || (rest == half && kept & 1 == 1) { kept + 1 } else { kept };
        // kept <= 2^bits: exact in f64, as is the power of two.
        kept as f64 * 2f64.powi(dropped as i32)
    };
    if i < 0 {
        -rounded
    } else {
        rounded
    }
}

impl FromNum for f16 {
    fn from_num(n: Num) -> Self {
        match n {
            Num::Int(i) => Float::from_f64(int_rounded_to_bits(i, 11)),
            other => Float::from_f64(real_part(other)),
        }
    }
}
impl FromNum for bf16 {
    fn from_num(n: Num) -> Self {
        match n {
            // One rounding (the document), not XLA's two through f32.
            Num::Int(i) => Float::from_f64(int_rounded_to_bits(i, 8)),
            other => Float::from_f64(f32::from_num(other) as f64),
        }
    }
}
impl FromNum for F8E4M3FN {
    fn from_num(n: Num) -> Self {
        F8E4M3FN::from_f64(real_part(n))
    }
}
impl FromNum for F8E5M2 {
    fn from_num(n: Num) -> Self {
        F8E5M2::from_f64(real_part(n))
    }
}
impl FromNum for Complex<f32> {
    fn from_num(n: Num) -> Self {
        match n {
            Num::Complex(re, im) => Complex::new(re as f32, im as f32),
            other => Complex::new(f32::from_num(other), 0.0),
        }
    }
}
impl FromNum for Complex<f64> {
    fn from_num(n: Num) -> Self {
        match n {
            Num::Complex(re, im) => Complex::new(re, im),
            other => Complex::new(real_part(other), 0.0),
        }
    }
}

fn convert_vec<S: ToNum, D: FromNum + Stored>(v: &[S]) -> Data {
    D::wrap(v.iter().map(|&x| D::from_num(x.to_num())).collect())
}

fn convert_from<S: ToNum>(v: &[S], to: ElementType) -> Data {
    crate::with_type!(to, D => convert_vec::<S, D>(v))
}

/// Converts every element of `data` to `to`.
pub fn convert(data: &Data, to: ElementType) -> Data {
    crate::with_data!(data, v => convert_from(v, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(data: Data, to: ElementType) -> Data {
        convert(&data, to)
    }

    #[test]
    fn float_to_int_saturates_and_nan_is_zero() {
        let d = one(Data::F32(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -0.9, 2.5]), ElementType::S32);
        assert_eq!(d, Data::S32(vec![0, i32::MAX, i32::MIN, i32::MAX, 0, 2]));
        assert_eq!(one(Data::F32(vec![300.0, -1.0]), ElementType::U8), Data::U8(vec![255, 0]));
    }

    #[test]
    fn int_to_bf16_rounds_once() {
        // 2^40 + 2^32 + 1 is above the bf16 tie: 2^40 + 2^33 (through f32:
        // the tie 2^40 + 2^32, then 2^40).
        let v = (1i64 << 40) + (1 << 32) + 1;
        assert_eq!(one(Data::S64(vec![v, -v]), ElementType::BF16), Data::BF16(vec![bf16::from_bits(0x5381), bf16::from_bits(0xd381)]));
        let w = (1i32 << 30) + (1 << 22) + 1;
        assert_eq!(one(Data::S32(vec![w]), ElementType::BF16), Data::BF16(vec![bf16::from_f64(((1u64 << 30) + (1 << 23)) as f64)]));
        assert_eq!(one(Data::U64(vec![u64::MAX]), ElementType::BF16), Data::BF16(vec![bf16::from_f64(2f64.powi(64))]));
        // Exact ties go to even: 257 -> 256, 259 -> 260, 65520 -> f16 inf.
        assert_eq!(one(Data::S32(vec![257, 259]), ElementType::BF16), Data::BF16(vec![bf16::from_f64(256.0), bf16::from_f64(260.0)]));
        assert_eq!(
            one(Data::S32(vec![65519, 65520, 2049]), ElementType::F16),
            Data::F16(vec![f16::from_bits(0x7bff), f16::INFINITY, f16::from_f64(2048.0)])
        );
    }

    #[test]
    fn wide_float_to_bf16_rounds_through_f32() {
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(one(Data::F64(vec![x]), ElementType::BF16), Data::BF16(vec![bf16::from_bits(0x3f80)]));
        // f16 is rounded once, as XLA CPU: 1 + 2^-11 + 2^-40 is above the tie.
        let y = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(one(Data::F64(vec![y]), ElementType::F16), Data::F16(vec![f16::from_bits(0x3c01)]));
    }

    #[test]
    fn f64_to_f8_rounds_once() {
        let x = 1.0 + 2f64.powi(-4) + 2f64.powi(-40);
        assert_eq!(one(Data::F64(vec![x]), ElementType::F8E4M3FN), Data::F8E4M3FN(vec![F8E4M3FN(0x39)]));
    }

    #[test]
    fn complex_to_real_takes_real_part() {
        let d = one(Data::C64(vec![Complex::new(-3.7, 1.0)]), ElementType::S32);
        assert_eq!(d, Data::S32(vec![-3]));
        assert_eq!(one(Data::C64(vec![Complex::new(0.0, 1.0)]), ElementType::Pred), Data::Pred(vec![true]));
    }

    #[test]
    fn ints_wrap() {
        assert_eq!(one(Data::S32(vec![300, -200]), ElementType::S8), Data::S8(vec![44, 56]));
        assert_eq!(one(Data::S8(vec![-1]), ElementType::U32), Data::U32(vec![u32::MAX]));
    }
}
