//! Values: arrays (a shape and one typed vector of elements, row-major),
//! tuples of values, and tokens.

use half::{bf16, f16};
use num_complex::Complex;

use crate::numerics::f8::{F8E4M3FN, F8E5M2};
use crate::types::{ArrayShape, Element, ElementType, Shape};

/// The elements of an array, one vector per element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Pred(Vec<bool>),
    S8(Vec<i8>),
    S16(Vec<i16>),
    S32(Vec<i32>),
    S64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<Complex<f32>>),
    C128(Vec<Complex<f64>>),
    F8E4M3FN(Vec<F8E4M3FN>),
    F8E5M2(Vec<F8E5M2>),
}

/// Runs `$body` with `$v` bound to the typed vector inside a [`Data`],
/// whatever its element type: how generic element code is instantiated for
/// every storage type.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::literal::Data::Pred($v) => $body,
            $crate::literal::Data::S8($v) => $body,
            $crate::literal::Data::S16($v) => $body,
            $crate::literal::Data::S32($v) => $body,
            $crate::literal::Data::S64($v) => $body,
            $crate::literal::Data::U8($v) => $body,
            $crate::literal::Data::U16($v) => $body,
            $crate::literal::Data::U32($v) => $body,
            $crate::literal::Data::U64($v) => $body,
            $crate::literal::Data::F16($v) => $body,
            $crate::literal::Data::BF16($v) => $body,
            $crate::literal::Data::F32($v) => $body,
            $crate::literal::Data::F64($v) => $body,
            $crate::literal::Data::C64($v) => $body,
            $crate::literal::Data::C128($v) => $body,
            $crate::literal::Data::F8E4M3FN($v) => $body,
            $crate::literal::Data::F8E5M2($v) => $body,
        }
    };
}

/// A storage type that can be wrapped into and found in [`Data`].
pub trait Stored: Element {
    fn wrap(v: Vec<Self>) -> Data;
    fn slice(d: &Data) -> Option<&[Self]>;
    fn slice_mut(d: &mut Data) -> Option<&mut Vec<Self>>;
}

macro_rules! stored {
    ($t:ty, $variant:ident) => {
        impl Stored for $t {
            fn wrap(v: Vec<Self>) -> Data {
                Data::$variant(v)
            }
            fn slice(d: &Data) -> Option<&[Self]> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(d: &mut Data) -> Option<&mut Vec<Self>> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}

stored!(bool, Pred);
stored!(i8, S8);
stored!(i16, S16);
stored!(i32, S32);
stored!(i64, S64);
stored!(u8, U8);
stored!(u16, U16);
stored!(u32, U32);
stored!(u64, U64);
stored!(f16, F16);
stored!(bf16, BF16);
stored!(f32, F32);
stored!(f64, F64);
stored!(Complex<f32>, C64);
stored!(Complex<f64>, C128);
stored!(F8E4M3FN, F8E4M3FN);
stored!(F8E5M2, F8E5M2);

impl Data {
    /// `n` zeros (false, +0, 0+0i) of the given type.
    pub fn zeros(element_type: ElementType, n: usize) -> Data {
        use ElementType as E;
        match element_type {
            E::Pred => Data::Pred(vec![false; n]),
            E::S8 => Data::S8(vec![0; n]),
            E::S16 => Data::S16(vec![0; n]),
            E::S32 => Data::S32(vec![0; n]),
            E::S64 => Data::S64(vec![0; n]),
            E::U8 => Data::U8(vec![0; n]),
            E::U16 => Data::U16(vec![0; n]),
            E::U32 => Data::U32(vec![0; n]),
            E::U64 => Data::U64(vec![0; n]),
            E::F16 => Data::F16(vec![f16::ZERO; n]),
            E::BF16 => Data::BF16(vec![bf16::ZERO; n]),
            E::F32 => Data::F32(vec![0.0; n]),
            E::F64 => Data::F64(vec![0.0; n]),
            E::C64 => Data::C64(vec![Complex::new(0.0, 0.0); n]),
            E::C128 => Data::C128(vec![Complex::new(0.0, 0.0); n]),
            E::F8E4M3FN => Data::F8E4M3FN(vec![F8E4M3FN::default(); n]),
            E::F8E5M2 => Data::F8E5M2(vec![F8E5M2::default(); n]),
        }
    }

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
