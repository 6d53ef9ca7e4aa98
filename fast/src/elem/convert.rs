//! ConvertElementType in the fast engine: every source element is read as
//! a [`V`], every target type builds itself from a `V` (integers round
//! once to every float type, as the document fixes — not through f32 to
//! bf16 as XLA; floats as XLA CPU: bf16 through f32, f16 and f8 directly, float → int saturating with NaN → 0,
//! int → int wrapping, complex → real by its real part).

use half::{bf16, f16};
use num_complex::Complex;
use xlaref_reference::literal::{Data, Stored};
use xlaref_reference::types::ElementType;

use super::f8::{self, F8E4M3FN, F8E5M2};
use crate::par;

#[derive(Clone, Copy)]
pub enum V {
    B(bool),
    I(i64),
    U(u64),
    F(f64),
    C(f64, f64),
}

pub trait Src: Copy + Sync {
    fn v(self) -> V;
}
pub trait Dst: Send {
    fn from_v(v: V) -> Self;
}

impl Src for bool {
    fn v(self) -> V {
        V::B(self)
    }
}
macro_rules! src {
    ($kind:ident, $via:ty: $($t:ty),*) => {$(
        impl Src for $t {
            #[inline(always)]
            fn v(self) -> V {
                V::$kind(self as $via)
            }
        }
    )*};
}
src!(I, i64: i8, i16, i32, i64);
src!(U, u64: u8, u16, u32, u64);
src!(F, f64: f32, f64);
impl Src for f16 {
    fn v(self) -> V {
        V::F(self.to_f64())
    }
}
impl Src for bf16 {
    fn v(self) -> V {
        V::F(self.to_f64())
    }
}
impl Src for F8E4M3FN {
    fn v(self) -> V {
        V::F(f8::e4m3fn_to_f32(self.0) as f64)
    }
}
impl Src for F8E5M2 {
    fn v(self) -> V {
        V::F(f8::e5m2_to_f32(self.0) as f64)
    }
}
impl Src for Complex<f32> {
    fn v(self) -> V {
        V::C(self.re as f64, self.im as f64)
    }
}
impl Src for Complex<f64> {
    fn v(self) -> V {
        V::C(self.re, self.im)
    }
}

impl Dst for bool {
    fn from_v(v: V) -> Self {
        match v {
            V::B(b) => b,
            V::I(i) => i != 0,
            V::U(u) => u != 0,
            V::F(x) => x != 0.0,
            V::C(re, im) => re != 0.0 || im != 0.0,
        }
    }
}
macro_rules! dst_int {
    ($($t:ty),*) => {$(
        impl Dst for $t {
            #[inline(always)]
            fn from_v(v: V) -> Self {
                match v {
                    V::B(b) => b as $t,
                    V::I(i) => i as $t,
                    V::U(u) => u as $t,
                    V::F(x) | V::C(x, _) => x as $t,
                }
            }
        }
    )*};
}
dst_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The value as f32, rounded once (the path XLA takes to bf16).
fn to_f32(v: V) -> f32 {
    match v {
        V::B(b) => b as u8 as f32,
        V::I(i) => i as f32,
        V::U(u) => u as f32,
        V::F(x) | V::C(x, _) => x as f32,
    }
}
/// The value as f64, rounded once.
fn to_f64(v: V) -> f64 {
    match v {
        V::B(b) => b as u8 as f64,
        V::I(i) => i as f64,
        V::U(u) => u as f64,
        V::F(x) | V::C(x, _) => x,
    }
}
impl Dst for f32 {
    fn from_v(v: V) -> Self {
        to_f32(v)
    }
}
impl Dst for f64 {
    fn from_v(v: V) -> Self {
        to_f64(v)
    }
}
impl Dst for f16 {
    fn from_v(v: V) -> Self {
        f16_from_f64(to_f64(v))
    }
}

/// f64 → f16 rounded once to nearest even (`half`'s `from_f64` rounds
/// through f32, i.e. twice): the value is rounded to a multiple of its f16
/// quantum `2^(e - 10)` (at least the subnormal quantum `2^-24`), which is
/// then exact in f16.
fn f16_from_f64(x: f64) -> f16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    if x.is_nan() {
        return f16::from_bits(sign | 0x7e00);
    }
    let a = x.abs();
    // 65520 is the tie between 65504 and 2^16; ties go to the even 2^16: inf.
    if a >= 65520.0 {
        return f16::from_bits(sign | 0x7c00);
    }
    let exponent = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-14);
    let quantum = f64::from_bits(((exponent - 10 + 1023) as u64) << 52);
    let rounded = (a / quantum).round_ties_even() * quantum;
    let magnitude = f16::from_f64(rounded);
    f16::from_bits(magnitude.to_bits() | sign)
}
/// A 64-bit magnitude rounded once, to nearest even, to bf16's 8
/// significant bits, as an f32 (exact: at most 9 significant bits, below
/// 2^65).
fn magnitude_to_bf16_precision(m: u64) -> f32 {
    let top = 64 - m.leading_zeros();
    if top <= 8 {
        return m as f32;
    }
    let shift = top - 8;
    let (head, tail, half) = (m >> shift, m & ((1u64 << shift) - 1), 1u64 << (shift - 1));
    let up = tail > half || (tail == half && head & 1 == 1);
    (head + up as u64) as f32 * f32::from_bits((127 + shift) << 23)
}
impl Dst for bf16 {
    fn from_v(v: V) -> Self {
        if crate::planted::active(crate::planted::Bug::Bf16Truncates) {
            return bf16::from_bits((to_f32(v).to_bits() >> 16) as u16);
        }
        match v {
            // One rounding (document: int → float rounds to nearest even).
            V::I(i) => {
                let x = magnitude_to_bf16_precision(i.unsigned_abs());
                bf16::from_f32(if i < 0 { -x } else { x })
            }
            V::U(u) => bf16::from_f32(magnitude_to_bf16_precision(u)),
            _ => bf16::from_f32(to_f32(v)),
        }
    }
}
impl Dst for F8E4M3FN {
    fn from_v(v: V) -> Self {
        F8E4M3FN(f8::e4m3fn_from_f64(to_f64(v)))
    }
}
impl Dst for F8E5M2 {
    fn from_v(v: V) -> Self {
        F8E5M2(f8::e5m2_from_f64(to_f64(v)))
    }
}
impl Dst for Complex<f32> {
    fn from_v(v: V) -> Self {
        match v {
            V::C(re, im) => Complex::new(re as f32, im as f32),
            other => Complex::new(to_f32(other), 0.0),
        }
    }
}
impl Dst for Complex<f64> {
    fn from_v(v: V) -> Self {
        match v {
            V::C(re, im) => Complex::new(re, im),
            other => Complex::new(to_f64(other), 0.0),
        }
    }
}

fn column<S: Src, D: Dst + Stored>(v: &[S]) -> Data {
    D::wrap(par::map(v, |x| D::from_v(x.v())))
}

fn from_source<S: Src>(v: &[S], to: ElementType) -> Data {
    xlaref_reference::with_type!(to, D => column::<S, D>(v))
}

/// Converts all elements of `data` to `to`.
pub fn convert(data: &Data, to: ElementType) -> Data {
    xlaref_reference::with_data!(data, v => from_source(v, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_to_bf16_rounds_once() {
        let one = |v: V| bf16::from_v(v).to_f64();
        assert_eq!(one(V::I((1 << 30) + (1 << 22) + 1)), (1u64 << 30 | 1 << 23) as f64);
        assert_eq!(one(V::I(-((1 << 40) + (1 << 32) + 1))), -((1u64 << 40 | 1 << 33) as f64));
        assert_eq!(one(V::I((1 << 40) + (1 << 32))), (1u64 << 40) as f64);
        assert_eq!(one(V::U(u64::MAX)), 2f64.powi(64));
        assert_eq!(one(V::U((1 << 63) + (1 << 55) + 1)), (1u64 << 63 | 1 << 56) as f64);
        assert_eq!([one(V::I(257)), one(V::I(259)), one(V::I(-255))], [256.0, 260.0, -255.0]);
        assert_eq!(one(V::I(i64::MIN)), -(2f64.powi(63)));
    }

    #[test]
    fn f64_to_f16_rounds_once() {
        let above_tie = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(above_tie).to_bits(), 0x3c01);
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_bits(), 0x3c00);
        assert_eq!(f16_from_f64(65519.99999999).to_bits(), 0x7bff);
        assert_eq!(f16_from_f64(65520.0).to_bits(), 0x7c00);
        assert_eq!(f16_from_f64(-0.0).to_bits(), 0x8000);
        assert_eq!(f16_from_f64(2f64.powi(-25)).to_bits(), 0x0000);
        assert_eq!(f16_from_f64(3.0 * 2f64.powi(-25)).to_bits(), 0x0002);
        assert_eq!(f16_from_f64(1e-300).to_bits(), 0);
    }
}
