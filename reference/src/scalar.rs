//! One element of any type, by value: what reducers, comparators and update
//! computations receive and return, without allocating.

use crate::literal::{ArrayLiteral, Data, Literal};
use crate::types::ElementType;

macro_rules! scalar_enum {
    ([] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Scalar {
            $($v($t),)*
        }

        $(impl From<$t> for Scalar {
            fn from(x: $t) -> Scalar {
                Scalar::$v(x)
            }
        })*

        impl Scalar {
            pub fn element_type(self) -> ElementType {
                match self {
                    $(Scalar::$v(_) => ElementType::$v,)*
                }
            }
        }

        impl Data {
            /// The element at a linear position (the caller keeps it in range).
            pub fn get(&self, position: usize) -> Scalar {
                match self {
                    $(Data::$v(v) => Scalar::$v(v[position]),)*
                }
            }

            /// Stores `value` at a linear position; false if its type differs.
            pub fn set(&mut self, position: usize, value: Scalar) -> bool {
                match (self, value) {
                    $((Data::$v(v), Scalar::$v(x)) => {
                        v[position] = x;
                        true
                    })*
                    _ => false,
                }
            }

            /// Collects scalars of type `t` (others are skipped) into data.
            pub fn from_scalars(t: ElementType, values: &[Scalar]) -> Data {
                match t {
                    $(ElementType::$v => Data::$v(values.iter().filter_map(|s| if let Scalar::$v(x) = s { Some(*x) } else { None }).collect()),)*
                }
            }
        }
    };
}
crate::element_types!([scalar_enum]);

/// [`by_class!`](crate::by_class) for one [`Scalar`]: `scalar_by_class!(s,
/// x => { pred: .., int: .., float: .., complex: .. })`.
#[macro_export]
macro_rules! scalar_by_class {
    ($s:expr, $x:ident => $picks:tt) => {
        $crate::element_types!([$crate::scalar_by_class_arms] $s, $x => $picks)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! scalar_by_class_arms {
    ([$s:expr, $x:ident => $picks:tt] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match $s {
            $(#[allow(unused_variables)]
            $crate::scalar::Scalar::$v($x) => $crate::pick_class!($class $picks),)*
        }
    };
}

/// [`by_class2!`](crate::by_class2) for two [`Scalar`]s of one type.
#[macro_export]
macro_rules! scalar_by_class2 {
    (($l:expr, $r:expr), ($x:ident, $y:ident) => $picks:tt else $other:expr) => {
        $crate::element_types!([$crate::scalar_by_class2_arms] $l, $r, $x, $y => $picks else $other)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! scalar_by_class2_arms {
    ([$l:expr, $r:expr, $x:ident, $y:ident => $picks:tt else $other:expr] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match ($l, $r) {
            $(#[allow(unused_variables)]
            ($crate::scalar::Scalar::$v($x), $crate::scalar::Scalar::$v($y)) => $crate::pick_class!($class $picks),)*
            _ => $other,
        }
    };
}

impl Scalar {
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
