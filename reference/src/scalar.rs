//! One element of any type, by value: what reducers, comparators and update
//! computations receive and return, without allocating.

use half::{bf16, f16};
use num_complex::Complex;

use crate::literal::{ArrayLiteral, Data, Literal};
use crate::numerics::f8::{F8E4M3FN, F8E5M2};
use crate::types::ElementType;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Pred(bool),
    S8(i8),
    S16(i16),
    S32(i32),
    S64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
    C64(Complex<f32>),
    C128(Complex<f64>),
    F8E4M3FN(F8E4M3FN),
    F8E5M2(F8E5M2),
}

macro_rules! each_variant {
    ($m:ident) => {
        $m!(Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128, F8E4M3FN, F8E5M2)
    };
}

impl Scalar {
    pub fn element_type(self) -> ElementType {
        macro_rules! m {
            ($($v:ident),*) => {
                match self { $(Scalar::$v(_) => ElementType::$v,)* }
            };
        }
        each_variant!(m)
    }

    /// A rank-0 array holding this value.
    pub fn to_literal(self) -> Literal {
        Literal::Array(ArrayLiteral::new(vec![], Data::from_scalars(self.element_type(), &[self])))
    }

    /// The value of a one-element array.
    pub fn from_array(a: &ArrayLiteral) -> Option<Scalar> {
        (a.element_count() == 1).then(|| a.data.get(0))
    }

    pub fn as_pred(self) -> Option<bool> {
        match self {
            Scalar::Pred(b) => Some(b),
            _ => None,
        }
    }
}

impl Data {
    /// The element at a linear position (the caller keeps it in range).
    pub fn get(&self, position: usize) -> Scalar {
        macro_rules! m {
            ($($v:ident),*) => {
                match self { $(Data::$v(v) => Scalar::$v(v[position]),)* }
            };
        }
        each_variant!(m)
    }

    /// Stores `value` at a linear position; false if its type differs.
    pub fn set(&mut self, position: usize, value: Scalar) -> bool {
        macro_rules! m {
            ($($v:ident),*) => {
                match (self, value) {
                    $((Data::$v(v), Scalar::$v(x)) => { v[position] = x; true })*
                    _ => false,
                }
            };
        }
        each_variant!(m)
    }

    /// Collects scalars of type `t` (others are skipped) into data.
    pub fn from_scalars(t: ElementType, values: &[Scalar]) -> Data {
        macro_rules! m {
            ($($v:ident),*) => {
                match t {
                    $(ElementType::$v => Data::$v(values.iter().filter_map(|s| if let Scalar::$v(x) = s { Some(*x) } else { None }).collect()),)*
                }
            };
        }
        each_variant!(m)
    }
}
