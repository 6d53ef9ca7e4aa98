//! Element types (docs/format.md §1) and the Rust types that store them.

use std::fmt;

/// The element types, one row each: the variant (of [`ElementType`], of
/// [`Data`](crate::literal::Data) and of [`Scalar`](crate::scalar::Scalar)),
/// the Rust type that stores it, its name in XLA's shape syntax, its
/// [`TypeClass`] and its width in bits.
///
/// This is the only list of the element types: the enums, the storage
/// traits and the dispatch macros ([`with_data!`](crate::with_data),
/// [`by_class!`](crate::by_class)) are expansions of it, so a new type is a
/// new row plus its arithmetic. `element_types!([callback] args...)`
/// expands to `callback! { [args...] row; row; ... }`, each row being
/// `Variant: StorageType, "name", Class, bits;`.
#[doc(hidden)]
#[macro_export]
macro_rules! element_types {
    ([$($callback:tt)*] $($args:tt)*) => {
        $($callback)*! { [$($args)*]
            Pred: bool, "pred", Pred, 8;
            S8: i8, "s8", Signed, 8;
            S16: i16, "s16", Signed, 16;
            S32: i32, "s32", Signed, 32;
            S64: i64, "s64", Signed, 64;
            U8: u8, "u8", Unsigned, 8;
            U16: u16, "u16", Unsigned, 16;
            U32: u32, "u32", Unsigned, 32;
            U64: u64, "u64", Unsigned, 64;
            F16: $crate::types::element::storage::f16, "f16", Float, 16;
            BF16: $crate::types::element::storage::bf16, "bf16", Float, 16;
            F32: f32, "f32", Float, 32;
            F64: f64, "f64", Float, 64;
            C64: $crate::types::element::storage::Complex<f32>, "c64", Complex, 64;
            C128: $crate::types::element::storage::Complex<f64>, "c128", Complex, 128;
            F8E4M3FN: $crate::types::element::storage::F8E4M3FN, "f8e4m3fn", Float, 8;
            F8E5M2: $crate::types::element::storage::F8E5M2, "f8e5m2", Float, 8;
        }
    };
}

/// The storage types the table names, reachable from expansions of it in
/// other crates (the fast engine's).
#[doc(hidden)]
pub mod storage {
    pub use crate::numerics::f8::{F8E4M3FN, F8E5M2};
    pub use half::{bf16, f16};
    pub use num_complex::Complex;
}

macro_rules! element_type_enum {
    ([] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        /// One element type of XLA's `PrimitiveType`, minus tuple and token
        /// (which are shapes, not element types).
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum ElementType {
            $($v,)*
        }

        impl ElementType {
            /// Every element type, in the table's order.
            pub const ALL: [ElementType; [$(ElementType::$v),*].len()] = [$(ElementType::$v,)*];

            /// The type's name in XLA's shape syntax (`f32`, `pred`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(ElementType::$v => $name,)*
                }
            }

            pub fn class(self) -> TypeClass {
                match self {
                    $(ElementType::$v => TypeClass::$class,)*
                }
            }

            /// Size of one element in bits (pred occupies a byte, as in XLA).
            pub fn bit_width(self) -> u32 {
                match self {
                    $(ElementType::$v => $bits,)*
                }
            }
        }

        $(impl Element for $t {
            const TYPE: ElementType = ElementType::$v;
        })*
    };
}
crate::element_types!([element_type_enum]);

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
    pub fn from_name(name: &str) -> Option<ElementType> {
        ElementType::ALL.iter().copied().find(|t| t.name() == name)
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
