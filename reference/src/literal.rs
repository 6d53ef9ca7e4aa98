//! Values: arrays (a shape and one typed vector of elements, row-major),
//! tuples of values, and tokens.

use crate::types::{ArrayShape, Element, ElementType, Shape};

macro_rules! data_enum {
    ([] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        /// The elements of an array, one vector per element type.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Data {
            $($v(Vec<$t>),)*
        }

        $(impl Stored for $t {
            fn wrap(v: Vec<Self>) -> Data {
                Data::$v(v)
            }
            fn slice(d: &Data) -> Option<&[Self]> {
                match d {
                    Data::$v(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(d: &mut Data) -> Option<&mut Vec<Self>> {
                match d {
                    Data::$v(v) => Some(v),
                    _ => None,
                }
            }
        })*

        impl Data {
            /// `n` zeros (false, +0, 0+0i) of the given type.
            pub fn zeros(element_type: ElementType, n: usize) -> Data {
                match element_type {
                    $(ElementType::$v => Data::$v(vec![<$t>::default(); n]),)*
                }
            }
        }
    };
}
crate::element_types!([data_enum]);

/// Runs `$body` with `$v` bound to the typed vector inside a [`Data`],
/// whatever its element type: how generic element code is instantiated for
/// every storage type.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        $crate::element_types!([$crate::with_data_arms] $data, $v => $body)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! with_data_arms {
    ([$data:expr, $x:ident => $body:expr] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match $data {
            $($crate::literal::Data::$v($x) => $body,)*
        }
    };
}

/// Runs the expression for the class of a [`Data`]'s element type, with
/// `$v` bound to its typed vector: `by_class!(data, v => { pred: e1, int:
/// e2, float: e3, complex: e4 })` (signed and unsigned integers share
/// `int`). The evaluator's per-type dispatch, written once per op for the
/// four classes instead of once per type.
#[macro_export]
macro_rules! by_class {
    ($data:expr, $v:ident => $picks:tt) => {
        $crate::element_types!([$crate::by_class_arms] $data, $v => $picks)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! by_class_arms {
    ([$data:expr, $x:ident => $picks:tt] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match $data {
            // A class's expression may ignore the vector (an error for that class).
            $(#[allow(unused_variables)]
            $crate::literal::Data::$v($x) => $crate::pick_class!($class $picks),)*
        }
    };
}

/// Like [`by_class!`] for two operands of one element type:
/// `by_class2!((a_data, b_data), (a, b) => { ... } else other)`.
#[macro_export]
macro_rules! by_class2 {
    (($l:expr, $r:expr), ($a:ident, $b:ident) => $picks:tt else $other:expr) => {
        $crate::element_types!([$crate::by_class2_arms] $l, $r, $a, $b => $picks else $other)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! by_class2_arms {
    ([$l:expr, $r:expr, $a:ident, $b:ident => $picks:tt else $other:expr] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match ($l, $r) {
            $(#[allow(unused_variables)]
            ($crate::literal::Data::$v($a), $crate::literal::Data::$v($b)) => $crate::pick_class!($class $picks),)*
            _ => $other,
        }
    };
}

/// Runs the expression for the class of an [`ElementType`], with `$T`
/// naming its storage type: `by_type!(t, T => { pred: .., int: ..,
/// float: narrow::<T>(v), complex: .. })`.
#[macro_export]
macro_rules! by_type {
    ($element_type:expr, $T:ident => $picks:tt) => {
        $crate::element_types!([$crate::by_type_arms] $element_type, $T => $picks)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! by_type_arms {
    ([$element_type:expr, $T:ident => $picks:tt] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match $element_type {
            $($crate::types::ElementType::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $crate::pick_class!($class $picks)
            })*
        }
    };
}

/// [`with_data!`] for two operands of one element type:
/// `with_data2!((a_data, b_data), (a, b) => body else other)`, `other` when
/// their types differ.
#[macro_export]
macro_rules! with_data2 {
    (($l:expr, $r:expr), ($a:ident, $b:ident) => $body:expr, else $other:expr) => {
        $crate::element_types!([$crate::with_data2_arms] $l, $r, $a, $b => $body, else $other)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! with_data2_arms {
    ([$l:expr, $r:expr, $a:ident, $b:ident => $body:expr, else $other:expr] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match ($l, $r) {
            $(($crate::literal::Data::$v($a), $crate::literal::Data::$v($b)) => $body,)*
            _ => $other,
        }
    };
}

/// Runs `$body` with `$T` naming the storage type of an [`ElementType`],
/// whatever it is: [`with_data!`] for a type instead of a vector.
#[macro_export]
macro_rules! with_type {
    ($element_type:expr, $T:ident => $body:expr) => {
        $crate::element_types!([$crate::with_type_arms] $element_type, $T => $body)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! with_type_arms {
    ([$element_type:expr, $T:ident => $body:expr] $($v:ident: $t:ty, $name:literal, $class:ident, $bits:literal;)*) => {
        match $element_type {
            $($crate::types::ElementType::$v => {
                type $T = $t;
                $body
            })*
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! pick_class {
    (Pred {pred: $p:expr, int: $i:expr, float: $f:expr, complex: $c:expr $(,)?}) => {
        $p
    };
    (Signed {pred: $p:expr, int: $i:expr, float: $f:expr, complex: $c:expr $(,)?}) => {
        $i
    };
    (Unsigned {pred: $p:expr, int: $i:expr, float: $f:expr, complex: $c:expr $(,)?}) => {
        $i
    };
    (Float {pred: $p:expr, int: $i:expr, float: $f:expr, complex: $c:expr $(,)?}) => {
        $f
    };
    (Complex {pred: $p:expr, int: $i:expr, float: $f:expr, complex: $c:expr $(,)?}) => {
        $c
    };
}

/// A storage type that can be wrapped into and found in [`Data`].
pub trait Stored: Element {
    fn wrap(v: Vec<Self>) -> Data;
    fn slice(d: &Data) -> Option<&[Self]>;
    fn slice_mut(d: &mut Data) -> Option<&mut Vec<Self>>;
}

impl Data {
    pub fn element_type(&self) -> ElementType {
        fn of<T: Element>(_: &[T]) -> ElementType {
            T::TYPE
        }
        with_data!(self, v => of(v))
    }

    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements at the given linear positions, in order.
    pub fn pick(&self, positions: &[usize]) -> Data {
        with_data!(self, v => Stored::wrap(positions.iter().map(|&p| v[p]).collect()))
    }

    /// The elements of one linear position, as a one-element vector.
    pub fn element(&self, position: usize) -> Data {
        self.pick(&[position])
    }
}

/// An array value. `data.len()` is the product of `shape.dims`.
///
/// A bounded dynamic dimension is stored at its bound; `dynamic_sizes`
/// carries the runtime size of every dimension when any is dynamic.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayLiteral {
    pub shape: ArrayShape,
    pub data: Data,
    pub dynamic_sizes: Option<Vec<i64>>,
}

/// A value: an array, a tuple of values, or a token.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Array(ArrayLiteral),
    Tuple(Vec<Literal>),
    Token,
}

impl ArrayLiteral {
    /// Builds an array; the caller guarantees `data` fits `dims`.
    pub fn new(dims: Vec<i64>, data: Data) -> ArrayLiteral {
        let shape = ArrayShape::new(data.element_type(), dims);
        debug_assert_eq!(shape.element_count(), data.len());
        ArrayLiteral { shape, data, dynamic_sizes: None }
    }

    /// Builds an array of a given shape; the caller guarantees `data` fits.
    pub fn with_shape(shape: ArrayShape, data: Data) -> ArrayLiteral {
        debug_assert_eq!(shape.element_count(), data.len());
        debug_assert_eq!(shape.element_type, data.element_type());
        ArrayLiteral { shape, data, dynamic_sizes: None }
    }

    pub fn from_vec<T: Stored>(dims: Vec<i64>, v: Vec<T>) -> ArrayLiteral {
        ArrayLiteral::new(dims, T::wrap(v))
    }

    pub fn scalar<T: Stored>(x: T) -> ArrayLiteral {
        ArrayLiteral::new(vec![], T::wrap(vec![x]))
    }

    pub fn zeros(shape: &ArrayShape) -> ArrayLiteral {
        ArrayLiteral::with_shape(shape.clone(), Data::zeros(shape.element_type, shape.element_count()))
    }

    pub fn element_type(&self) -> ElementType {
        self.shape.element_type
    }

    pub fn dims(&self) -> &[i64] {
        &self.shape.dims
    }

    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    pub fn element_count(&self) -> usize {
        self.data.len()
    }

    pub fn typed<T: Stored>(&self) -> Option<&[T]> {
        T::slice(&self.data)
    }

    /// The first element as an i64, for integer scalars (start indices,
    /// branch indices, sizes). Unsigned values above i64::MAX saturate.
    pub fn scalar_i64(&self) -> Option<i64> {
        Some(match &self.data {
            Data::S8(v) => *v.first()? as i64,
            Data::S16(v) => *v.first()? as i64,
            Data::S32(v) => *v.first()? as i64,
            Data::S64(v) => *v.first()?,
            Data::U8(v) => *v.first()? as i64,
            Data::U16(v) => *v.first()? as i64,
            Data::U32(v) => *v.first()? as i64,
            Data::U64(v) => i64::try_from(*v.first()?).unwrap_or(i64::MAX),
            _ => return None,
        })
    }

    /// The first element of a pred array.
    pub fn scalar_pred(&self) -> Option<bool> {
        match &self.data {
            Data::Pred(v) => v.first().copied(),
            _ => None,
        }
    }

    /// Integer elements as i64 (index arrays of any integer type).
    pub fn to_i64_vec(&self) -> Option<Vec<i64>> {
        Some(match &self.data {
            Data::S8(v) => v.iter().map(|&x| x as i64).collect(),
            Data::S16(v) => v.iter().map(|&x| x as i64).collect(),
            Data::S32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::S64(v) => v.clone(),
            Data::U8(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U16(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U64(v) => v.iter().map(|&x| i64::try_from(x).unwrap_or(i64::MAX)).collect(),
            _ => return None,
        })
    }

    /// A new array of shape `out` whose element at `out_index` is this
    /// array's element at the index `source` writes into its second
    /// argument, or `fill` (a scalar of the same type) when `source`
    /// returns false. The building block of every data-movement op.
    pub fn remap(&self, out: &ArrayShape, fill: Option<&ArrayLiteral>, mut source: impl FnMut(&[i64], &mut [i64]) -> bool) -> ArrayLiteral {
        let count = out.element_count();
        let mut out_index = vec![0i64; out.rank()];
        let mut in_index = vec![0i64; self.rank()];
        let data = with_data!(&self.data, v => {
            let fill_value = fill.and_then(|f| Stored::slice(&f.data)).and_then(|f| f.first().copied()).unwrap_or_default();
            let mut result = Vec::with_capacity(count);
            for _ in 0..count {
                // Out of time: the rest stays the fill value and the engine
                // reports the limit (crate::watch).
                if crate::watch::tick(1) {
                    result.resize(count, fill_value);
                    break;
                }
                let value = if source(&out_index, &mut in_index) { v[self.shape.linear(&in_index)] } else { fill_value };
                result.push(value);
                crate::types::index::advance(&mut out_index, &out.dims);
            }
            Stored::wrap(result)
        });
        ArrayLiteral::with_shape(out.with_element_type(self.element_type()), data)
    }

    /// Reinterprets the same elements under new dimensions (same count).
    pub fn reshaped(&self, dims: Vec<i64>) -> ArrayLiteral {
        ArrayLiteral::with_shape(ArrayShape::new(self.element_type(), dims), self.data.clone())
    }

    /// Sets every element beyond a dynamic size (padding, whose value is
    /// unspecified) to zero, so values compare by their defined elements.
    pub fn clear_padding(&mut self) {
        let Some(sizes) = self.dynamic_sizes.clone() else { return };
        if sizes.len() != self.rank() || sizes.iter().zip(self.dims()).all(|(s, d)| s == d) {
            return;
        }
        let shape = self.shape.clone();
        let mut cleared = self.remap(&shape, None, |out, input| {
            input.copy_from_slice(out);
            out.iter().zip(&sizes).all(|(&i, &s)| i < s)
        });
        cleared.dynamic_sizes = Some(sizes);
        *self = cleared;
    }

    /// Bitwise equality of shapes and elements (NaN payloads compared too).
    pub fn bits_equal(&self, other: &ArrayLiteral) -> bool {
        self.shape.dims == other.shape.dims && crate::numerics::bits::data_bits_equal(&self.data, &other.data)
    }
}

impl Literal {
    pub fn shape(&self) -> Shape {
        match self {
            Literal::Array(a) => Shape::Array(a.shape.clone()),
            Literal::Tuple(elems) => Shape::Tuple(elems.iter().map(Literal::shape).collect()),
            Literal::Token => Shape::Token,
        }
    }

    pub fn as_array(&self) -> Option<&ArrayLiteral> {
        match self {
            Literal::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn into_array(self) -> Option<ArrayLiteral> {
        match self {
            Literal::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_tuple(&self) -> Option<&[Literal]> {
        match self {
            Literal::Tuple(t) => Some(t),
            _ => None,
        }
    }

    /// Total array elements (tuples summed).
    pub fn total_elements(&self) -> usize {
        match self {
            Literal::Array(a) => a.element_count(),
            Literal::Tuple(t) => t.iter().map(Literal::total_elements).sum(),
            Literal::Token => 0,
        }
    }

    /// [`ArrayLiteral::clear_padding`] on every array, recursively.
    pub fn clear_padding(&mut self) {
        match self {
            Literal::Array(a) => a.clear_padding(),
            Literal::Tuple(t) => t.iter_mut().for_each(Literal::clear_padding),
            Literal::Token => {}
        }
    }

    /// Bitwise equality, recursively.
    pub fn bits_equal(&self, other: &Literal) -> bool {
        match (self, other) {
            (Literal::Array(a), Literal::Array(b)) => a.bits_equal(b),
            (Literal::Tuple(a), Literal::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits_equal(y)),
            (Literal::Token, Literal::Token) => true,
            _ => false,
        }
    }
}

impl From<ArrayLiteral> for Literal {
    fn from(a: ArrayLiteral) -> Literal {
        Literal::Array(a)
    }
}
