//! The two 8-bit float types of docs/format.md, converted at the bit level.
//!
//! Not the `float8` crate: it saturates on overflow, where XLA's conversion
//! gives NaN (e4m3fn, which has no infinity) or ±inf (e5m2).

use std::fmt;

use super::small_float::{self, Format};

macro_rules! f8_type {
    ($name:ident, $format:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub u8);

        impl $name {
            pub const FORMAT: Format = $format;

            pub fn from_bits(bits: u8) -> Self {
                $name(bits)
            }
            pub fn to_bits(self) -> u8 {
                self.0
            }
            /// Round to nearest even, directly from f64 (one rounding).
            pub fn from_f64(x: f64) -> Self {
                $name(Self::FORMAT.from_f64_bits(x) as u8)
            }
            pub fn from_f32(x: f32) -> Self {
                Self::from_f64(x as f64)
            }
            /// Exact.
            pub fn to_f64(self) -> f64 {
                Self::FORMAT.to_f64(self.0 as u64)
            }
            /// Exact: every f8 value is an f32.
            pub fn to_f32(self) -> f32 {
                self.to_f64() as f32
            }
            pub fn is_nan(self) -> bool {
                self.to_f64().is_nan()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#04x})", self.to_f64(), self.0)
            }
        }
    };
}

f8_type!(F8E4M3FN, small_float::F8E4M3FN, "f8e4m3fn: 4 exponent bits (bias 7), 3 mantissa bits, no infinities, NaN = S.1111.111.");
f8_type!(F8E5M2, small_float::F8E5M2, "f8e5m2: IEEE-style 5 exponent bits (bias 15), 2 mantissa bits, with ±inf and NaN.");
