//! Bit patterns of elements: exact equality (NaN payloads and signed zeros
//! included) and the hex literal form of docs/format.md §2.

use half::{bf16, f16};
use num_complex::Complex;

use super::f8::{F8E4M3FN, F8E5M2};
use crate::literal::Data;
use crate::types::Element;

/// An element's bits, zero-extended (complex: real part low, imaginary
/// high), and back: the one place that knows each storage type's bit
/// layout, so byte and bit conversions elsewhere are generic.
pub trait Bits: Element {
    fn bits(self) -> u128;
    /// The element whose bits are the low `bit_width` bits of `bits`
    /// (pred: any nonzero low byte is true, as a byte read from memory).
    fn with_bits(bits: u128) -> Self;
}

macro_rules! bits_via_unsigned {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            #[inline]
            fn bits(self) -> u128 {
                self as $u as u128
            }
            #[inline]
            fn with_bits(bits: u128) -> Self {
                bits as $u as $t
            }
        }
    )*};
}
bits_via_unsigned!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, u8 => u8, u16 => u16, u32 => u32, u64 => u64);

macro_rules! bits_via_to_bits {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            #[inline]
            fn bits(self) -> u128 {
                self.to_bits() as u128
            }
            #[inline]
            fn with_bits(bits: u128) -> Self {
                <$t>::from_bits(bits as $u)
            }
        }
    )*};
}
bits_via_to_bits!(f16 => u16, bf16 => u16, f32 => u32, f64 => u64, F8E4M3FN => u8, F8E5M2 => u8);

impl Bits for bool {
    #[inline]
    fn bits(self) -> u128 {
        self as u128
    }
    #[inline]
    fn with_bits(bits: u128) -> Self {
        bits as u8 != 0
    }
}

macro_rules! bits_of_complex {
    ($($t:ty => $half:literal),*) => {$(
        impl Bits for Complex<$t> {
            #[inline]
            fn bits(self) -> u128 {
                self.re.bits() | self.im.bits() << $half
            }
            #[inline]
            fn with_bits(bits: u128) -> Self {
                Complex::new(<$t>::with_bits(bits), <$t>::with_bits(bits >> $half))
            }
        }
    )*};
}
bits_of_complex!(f32 => 32, f64 => 64);

fn slices_equal<T: Bits>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// Same element type, same length, same bits element by element.
pub fn data_bits_equal(a: &Data, b: &Data) -> bool {
    crate::with_data2!((a, b), (x, y) => slices_equal(x, y), else false)
}
