//! Bit patterns of elements: exact equality (NaN payloads and signed zeros
//! included) and the hex literal form of docs/format.md §2.

use half::{bf16, f16};
use num_complex::Complex;

use super::f8::{F8E4M3FN, F8E5M2};
use crate::literal::Data;
use crate::types::Element;

/// An element's bits, zero-extended (complex: real part low, imaginary high).
pub trait Bits: Element {
    fn bits(self) -> u128;
}

macro_rules! bits_int {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u128 {
                self as $u as u128
            }
        }
    )*};
}
bits_int!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, u8 => u8, u16 => u16, u32 => u32, u64 => u64);

impl Bits for bool {
    fn bits(self) -> u128 {
        self as u128
    }
}
impl Bits for f16 {
    fn bits(self) -> u128 {
        self.to_bits() as u128
    }
}
impl Bits for bf16 {
    fn bits(self) -> u128 {
        self.to_bits() as u128
    }
}
impl Bits for f32 {
    fn bits(self) -> u128 {
        self.to_bits() as u128
    }
}
impl Bits for f64 {
    fn bits(self) -> u128 {
        self.to_bits() as u128
    }
}
impl Bits for Complex<f32> {
    fn bits(self) -> u128 {
        self.re.to_bits() as u128 | (self.im.to_bits() as u128) << 32
    }
}
impl Bits for Complex<f64> {
    fn bits(self) -> u128 {
        self.re.to_bits() as u128 | (self.im.to_bits() as u128) << 64
    }
}
impl Bits for F8E4M3FN {
    fn bits(self) -> u128 {
        self.0 as u128
    }
}
impl Bits for F8E5M2 {
    fn bits(self) -> u128 {
        self.0 as u128
    }
}

fn slices_equal<T: Bits>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// Same element type, same length, same bits element by element.
pub fn data_bits_equal(a: &Data, b: &Data) -> bool {
    use Data as D;
    match (a, b) {
        (D::Pred(x), D::Pred(y)) => slices_equal(x, y),
        (D::S8(x), D::S8(y)) => slices_equal(x, y),
        (D::S16(x), D::S16(y)) => slices_equal(x, y),
        (D::S32(x), D::S32(y)) => slices_equal(x, y),
        (D::S64(x), D::S64(y)) => slices_equal(x, y),
        (D::U8(x), D::U8(y)) => slices_equal(x, y),
        (D::U16(x), D::U16(y)) => slices_equal(x, y),
        (D::U32(x), D::U32(y)) => slices_equal(x, y),
        (D::U64(x), D::U64(y)) => slices_equal(x, y),
        (D::F16(x), D::F16(y)) => slices_equal(x, y),
        (D::BF16(x), D::BF16(y)) => slices_equal(x, y),
        (D::F32(x), D::F32(y)) => slices_equal(x, y),
        (D::F64(x), D::F64(y)) => slices_equal(x, y),
        (D::C64(x), D::C64(y)) => slices_equal(x, y),
        (D::C128(x), D::C128(y)) => slices_equal(x, y),
        (D::F8E4M3FN(x), D::F8E4M3FN(y)) => slices_equal(x, y),
        (D::F8E5M2(x), D::F8E5M2(y)) => slices_equal(x, y),
        _ => false,
    }
}
