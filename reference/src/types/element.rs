//! Element types (docs/format.md §1) and the Rust types that store them.

use std::fmt;

use half::{bf16, f16};
use num_complex::Complex;

use crate::numerics::f8::{F8E4M3FN, F8E5M2};

/// One element type of XLA's `PrimitiveType`, minus tuple and token (which are
/// shapes, not element types).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum ElementType {
    Pred,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    C64,
    C128,
    F8E4M3FN,
    F8E5M2,
}

/// The kinds the document's type rules talk about.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TypeClass {
    Pred,
    Signed,
    Unsigned,
    Float,
    Complex,
}

impl ElementType {
    pub const ALL: [ElementType; 17] = [
        ElementType::Pred,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F32,
        ElementType::F64,
        ElementType::C64,
        ElementType::C128,
        ElementType::F8E4M3FN,
        ElementType::F8E5M2,
    ];

    /// The type's name in XLA's shape syntax (`f32`, `pred`, ...).
    pub fn name(self) -> &'static str {
        use ElementType::*;
        match self {
            Pred => "pred",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            C64 => "c64",
            C128 => "c128",
            F8E4M3FN => "f8e4m3fn",
            F8E5M2 => "f8e5m2",
        }
    }

    pub fn from_name(name: &str) -> Option<ElementType> {
        ElementType::ALL.iter().copied().find(|t| t.name() == name)
    }

    pub fn class(self) -> TypeClass {
        use ElementType::*;
        match self {
            Pred => TypeClass::Pred,
            S8 | S16 | S32 | S64 => TypeClass::Signed,
            U8 | U16 | U32 | U64 => TypeClass::Unsigned,
            F16 | BF16 | F32 | F64 | F8E4M3FN | F8E5M2 => TypeClass::Float,
            C64 | C128 => TypeClass::Complex,
        }
    }

    /// Size of one element in bits (pred occupies a byte, as in XLA).
    pub fn bit_width(self) -> u32 {
        use ElementType::*;
        match self {
            Pred | S8 | U8 | F8E4M3FN | F8E5M2 => 8,
            S16 | U16 | F16 | BF16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
        }
    }

    pub fn byte_width(self) -> usize {
        self.bit_width() as usize / 8
    }

    pub fn is_integer(self) -> bool {
        matches!(self.class(), TypeClass::Signed | TypeClass::Unsigned)
    }
    pub fn is_signed_integer(self) -> bool {
        self.class() == TypeClass::Signed
    }
    pub fn is_unsigned_integer(self) -> bool {
        self.class() == TypeClass::Unsigned
    }
    pub fn is_float(self) -> bool {
        self.class() == TypeClass::Float
    }
    pub fn is_complex(self) -> bool {
        self.class() == TypeClass::Complex
    }
    pub fn is_pred(self) -> bool {
        self == ElementType::Pred
    }
    /// Float or complex: the types whose arithmetic is IEEE.
    pub fn is_floating(self) -> bool {
        self.is_float() || self.is_complex()
    }
    /// Types the arithmetic ops accept (everything but pred).
    pub fn is_arithmetic(self) -> bool {
        !self.is_pred()
    }

    /// The real type of a complex type's parts (`c64` → `f32`); itself otherwise.
    pub fn component_type(self) -> ElementType {
        match self {
            ElementType::C64 => ElementType::F32,
            ElementType::C128 => ElementType::F64,
            t => t,
        }
    }

    /// The complex type whose parts have this type, if there is one.
    pub fn complex_of(self) -> Option<ElementType> {
        match self {
            ElementType::F32 => Some(ElementType::C64),
            ElementType::F64 => Some(ElementType::C128),
            _ => None,
        }
    }

    /// Number of explicit mantissa bits and exponent bits of a float type.
    pub fn float_format(self) -> Option<(u32, u32)> {
        use ElementType::*;
        match self {
            F16 => Some((10, 5)),
            BF16 => Some((7, 8)),
            F32 => Some((23, 8)),
            F64 => Some((52, 11)),
            F8E4M3FN => Some((3, 4)),
            F8E5M2 => Some((2, 5)),
            _ => None,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust type that stores elements of one [`ElementType`].
///
/// Generic data-movement code (transpose, slice, gather, ...) is written once
/// over `T: Element` and instantiated for every storage type by
/// [`crate::with_data!`].
pub trait Element: Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static {
    const TYPE: ElementType;
}

macro_rules! element {
    ($t:ty, $e:ident) => {
        impl Element for $t {
            const TYPE: ElementType = ElementType::$e;
        }
    };
}

element!(bool, Pred);
element!(i8, S8);
element!(i16, S16);
element!(i32, S32);
element!(i64, S64);
element!(u8, U8);
element!(u16, U16);
element!(u32, U32);
element!(u64, U64);
element!(f16, F16);
element!(bf16, BF16);
element!(f32, F32);
element!(f64, F64);
element!(Complex<f32>, C64);
element!(Complex<f64>, C128);
element!(F8E4M3FN, F8E4M3FN);
element!(F8E5M2, F8E5M2);
