//! Element-wise ops: unary functions, binary arithmetic (with the
//! broadcasting document's rules), comparisons, Select, Clamp and the
//! element type conversions.

use std::borrow::Cow;

use num_complex::Complex;

use super::broadcast::broadcast_to;
use super::element::*;
use super::internal;
use crate::error::RunError;
use crate::ir::{BinaryOp, Direction, UnaryOp};
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::complex::{self as cx, Widened};
use crate::numerics::convert;
use crate::numerics::float::Float;
use crate::numerics::int::Int;
use crate::numerics::small_float::exponent_of;
use crate::types::ArrayShape;

type R<T> = Result<T, RunError>;

fn unsupported(what: &str, t: impl std::fmt::Display) -> RunError {
    internal(&format!("{what} on {t}"))
}

/// Elements between two [`crate::watch::tick`]s of the element-wise loops.
const BLOCK: usize = 4096;

fn map<T: Copy, U: Clone>(v: &[T], f: impl Fn(T) -> U) -> Vec<U> {
    let mut out = Vec::with_capacity(v.len());
    for block in v.chunks(BLOCK) {
        if crate::watch::tick(BLOCK as u64 * 4) {
            // Out of time: the engine drops this value (crate::watch).
            out.resize(v.len(), f(block[0]));
            break;
        }
        out.extend(block.iter().map(|&x| f(x)));
    }
    out
}

fn zip<T: Copy, U: Clone>(a: &[T], b: &[T], f: impl Fn(T, T) -> U) -> Vec<U> {
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    for (x, y) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
        if crate::watch::tick(BLOCK as u64 * 4) {
            out.resize(a.len().min(b.len()), f(x[0], y[0]));
            break;
        }
        out.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)));
    }
    out
}

/// Element-wise unary functions: `op` applied to every element.
pub fn unary(op: UnaryOp, x: &ArrayLiteral, out: &ArrayShape) -> R<ArrayLiteral> {
    fn int<T: Int + Stored>(op: UnaryOp, v: &[T]) -> R<Data> {
        let f = int_unary::<T>(op).ok_or_else(|| unsupported(op.name(), T::TYPE))?;
        Ok(T::wrap(map(v, f)))
    }
    fn float<T: Float + Stored>(op: UnaryOp, v: &[T]) -> R<Data> {
        if let Some(test) = float_predicate(op) {
            return Ok(Data::Pred(map(v, |x| test(x.to_f64()))));
        }
        let f = float_unary::<T>(op).ok_or_else(|| unsupported(op.name(), T::TYPE))?;
        Ok(T::wrap(map(v, f)))
    }
    fn complex<T: Widened + Stored>(op: UnaryOp, v: &[T]) -> R<Data>
    where
        T::Part: Stored,
    {
        let part = |p: f64| T::part(p);
        Ok(match op {
            UnaryOp::Abs => T::Part::wrap(map(v, |z| part(cx::abs(z.widen())))),
            UnaryOp::Real => T::Part::wrap(map(v, |z| part(z.widen().re))),
            UnaryOp::Imag => T::Part::wrap(map(v, |z| part(z.widen().im))),
            _ => {
                let f = complex_unary(op).ok_or_else(|| unsupported(op.name(), "complex"))?;
                T::wrap(map(v, |z| T::narrow(f(z.widen()))))
            }
        })
    }
    let data = crate::by_class!(&x.data, v => {
        pred: Data::Pred(map(v, pred_unary(op).ok_or_else(|| unsupported(op.name(), "pred"))?)),
        int: int(op, v)?,
        float: float(op, v)?,
        complex: complex(op, v)?,
    });
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

/// The two operands brought to the result's dimensions (broadcasting
/// document), borrowed when they already have them. An operand of the
/// result's rank maps dimension i to i (size-1 dimensions stretch); a
/// lower-rank one maps through `broadcast_dimensions` (empty for a scalar).
fn broadcast_pair<'a>(
    lhs: &'a ArrayLiteral,
    rhs: &'a ArrayLiteral,
    broadcast_dimensions: Option<&[i64]>,
    out_dims: &[i64],
) -> (Cow<'a, ArrayLiteral>, Cow<'a, ArrayLiteral>) {
    let bring = |x: &'a ArrayLiteral| -> Cow<'a, ArrayLiteral> {
        if x.dims() == out_dims {
            return Cow::Borrowed(x);
        }
        let mapping: Vec<i64> =
            if x.rank() == out_dims.len() { (0..x.rank() as i64).collect() } else { broadcast_dimensions.unwrap_or(&[]).to_vec() };
        Cow::Owned(broadcast_to(x, out_dims, &mapping))
    };
    (bring(lhs), bring(rhs))
}

/// Element-wise binary arithmetic: both operands are broadcast to the
/// result's dimensions, then `op` combines elements at equal indices.
pub fn binary(
    op: BinaryOp,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    broadcast_dimensions: Option<&[i64]>,
    out: &ArrayShape,
) -> R<ArrayLiteral> {
    let (l, r) = broadcast_pair(lhs, rhs, broadcast_dimensions, &out.dims);
    fn int<T: Int + Stored>(op: BinaryOp, a: &[T], b: &[T]) -> R<Data> {
        let f = int_binary::<T>(op).ok_or_else(|| unsupported(op.name(), T::TYPE))?;
        Ok(T::wrap(zip(a, b, f)))
    }
    fn float<T: Float + Stored>(op: BinaryOp, a: &[T], b: &[T]) -> R<Data> {
        let f = float_binary::<T>(op).ok_or_else(|| unsupported(op.name(), T::TYPE))?;
        Ok(T::wrap(zip(a, b, f)))
    }
    fn complex<T: Widened + Stored>(op: BinaryOp, a: &[T], b: &[T]) -> R<Data> {
        let f = complex_binary(op).ok_or_else(|| unsupported(op.name(), T::TYPE))?;
        Ok(T::wrap(zip(a, b, |x, y| T::narrow(f(x.widen(), y.widen())))))
    }
    // Complex(re, im) builds c64/c128 from two f32/f64 arrays.
    let data = match (&l.data, &r.data) {
        (Data::F32(a), Data::F32(b)) if op == BinaryOp::Complex => Data::C64(zip(a, b, Complex::new)),
        (Data::F64(a), Data::F64(b)) if op == BinaryOp::Complex => Data::C128(zip(a, b, Complex::new)),
        (l, r) => crate::by_class2!((l, r), (a, b) => {
            pred: Data::Pred(zip(a, b, pred_binary(op).ok_or_else(|| unsupported(op.name(), "pred"))?)),
            int: int(op, a, b)?,
            float: float(op, a, b)?,
            complex: complex(op, a, b)?,
        } else return Err(internal("binary operands of different element types"))),
    };
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

/// Comparisons: broadcast like binary arithmetic, then compare elements
/// (IEEE for floats unless `total_order`).
pub fn compare(
    direction: Direction,
    total_order: bool,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    broadcast_dimensions: Option<&[i64]>,
    out: &ArrayShape,
) -> R<ArrayLiteral> {
    let (l, r) = broadcast_pair(lhs, rhs, broadcast_dimensions, &out.dims);
    fn with<T: Copy>(a: &[T], b: &[T], (d, lt, eq): (Direction, Cmp<T>, Cmp<T>)) -> Vec<bool> {
        zip(a, b, |x, y| decide(d, x, y, lt, eq))
    }
    let complex_eq = |ne: bool| move |eq: bool| eq != ne;
    let result = crate::by_class2!((&l.data, &r.data), (a, b) => {
        pred: with(a, b, ordered_compare(direction)),
        int: with(a, b, ordered_compare(direction)),
        float: with(a, b, float_compare(direction, total_order)),
        complex: zip(a, b, |x, y| complex_eq(direction == Direction::Ne)(x == y)),
    } else return Err(internal("compared operands of different element types")));
    Ok(ArrayLiteral::with_shape(out.clone(), Data::Pred(result)))
}

/// Select: each output element from `on_true` where `pred` holds, from
/// `on_false` elsewhere; a scalar pred (or tuple operands) picks a whole operand.
pub fn select(pred: &ArrayLiteral, on_true: &Literal, on_false: &Literal) -> R<Literal> {
    let p = pred.typed::<bool>().ok_or_else(|| internal("pred is not pred"))?;
    if pred.rank() == 0 || !matches!(on_true, Literal::Array(_)) {
        let choice = p.first().copied().unwrap_or(false);
        return Ok(if choice { on_true.clone() } else { on_false.clone() });
    }
    let (t, f) = (super::array(on_true)?, super::array(on_false)?);
    let data = crate::with_data!(&t.data, tv => {
        let fv = Stored::slice(&f.data).ok_or_else(|| internal("select operands differ in type"))?;
        Stored::wrap(p.iter().zip(tv.iter().zip(fv)).map(|(&c, (&x, &y))| if c { x } else { y }).collect())
    });
    Ok(ArrayLiteral::with_shape(t.shape.clone(), data).into())
}

/// Clamp(min, operand, max) = Min(Max(min, operand), max), element-wise,
/// scalar bounds broadcast: the document's formula with the type's own Max and Min.
pub fn clamp(min: &ArrayLiteral, x: &ArrayLiteral, max: &ArrayLiteral) -> R<ArrayLiteral> {
    let raised = binary(BinaryOp::Max, min, x, None, &x.shape)?;
    binary(BinaryOp::Min, &raised, max, None, &x.shape)
}

/// ConvertElementType: every element converted (numerics/convert.rs).
pub fn convert(x: &ArrayLiteral, to: crate::types::ElementType) -> ArrayLiteral {
    ArrayLiteral::with_shape(x.shape.with_element_type(to), convert::convert(&x.data, to))
}

/// BitcastConvertType: the operand's bytes (little-endian, row-major, as
/// XLA CPU lays them out) reread as elements of the new type.
pub fn bitcast_convert(x: &ArrayLiteral, out: &ArrayShape) -> R<ArrayLiteral> {
    let bytes = crate::numerics::bytes::to_le_bytes(&x.data);
    let data = crate::numerics::bytes::from_le_bytes(&bytes, out.element_type).ok_or_else(|| internal("bitcast byte count"))?;
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

/// ReducePrecision — document §ReducePrecision: every value converted to a
/// format with `exponent_bits` exponent bits and `mantissa_bits` mantissa
/// bits and back to its type T. Where the format has as many bits as T or
/// more, that part of the conversion is a no-op (the document).
///
/// 1. Mantissa: |x| is rounded to `m = min(mantissa_bits, T's)` fraction
///    bits in its own binade 2^k (T's subnormals in T's smallest normal
///    binade, as in T's own encoding), to nearest, ties to even (the
///    document). "Even" is the bit pattern's: with `m = 0` both neighbours
///    2^k and 2^(k+1) are "1.0", and the tie goes to the one whose exponent
///    field is even (XLA's bit-level rounding; the document is silent).
/// 2. Exponent, when `exponent_bits` is less than T's: with the format's
///    bias `b = 2^(exponent_bits-1) - 1`, a result beyond the largest binade
///    2^b becomes ±inf (the document), and one below the smallest normal
///    2^(1-b) becomes ±0: the format has no subnormals (XLA; the document is
///    silent).
///
/// NaN is kept unchanged, payload and sign included (the document allows
/// canonical NaNs; XLA CPU keeps them); ±inf and ±0 are unchanged.
pub fn reduce_precision(x: &ArrayLiteral, exponent_bits: i64, mantissa_bits: i64) -> R<ArrayLiteral> {
    fn each<T: Float + Stored>(v: &[T], exponent_bits: i64, mantissa_bits: i64) -> R<Data> {
        let (t_mantissa, t_exponent) = T::TYPE.float_format().ok_or_else(|| unsupported("ReducePrecision", T::TYPE))?;
        let t = SourceFormat { bias: (1 << (t_exponent - 1)) - 1, min_exponent: 2 - (1 << (t_exponent - 1)) };
        let m = mantissa_bits.clamp(0, t_mantissa as i64) as i32;
        // The reduced format's bias, only when it narrows T's exponent range.
        let reduced_bias = (exponent_bits < t_exponent as i64).then(|| (1i32 << (exponent_bits.max(1) - 1)) - 1);
        Ok(T::wrap(map(v, |x| {
            let value = x.to_f64();
            if !value.is_finite() || value == 0.0 {
                return x;
            }
            let rounded = round_mantissa(value.abs(), m, t);
            let magnitude = match reduced_bias {
                Some(b) if rounded != 0.0 && exponent_of(rounded) > b => f64::INFINITY,
                Some(b) if rounded != 0.0 && exponent_of(rounded) < 1 - b => 0.0,
                _ => rounded,
            };
            T::from_f64(if value < 0.0 { -magnitude } else { magnitude })
        })))
    }
    let unsupported_type = || unsupported("ReducePrecision", x.data.element_type());
    let data = crate::by_class!(&x.data, v => {
        pred: return Err(unsupported_type()),
        int: return Err(unsupported_type()),
        float: each(v, exponent_bits, mantissa_bits)?,
        complex: return Err(unsupported_type()),
    });
    Ok(ArrayLiteral::with_shape(x.shape.clone(), data))
}

/// The facts of the operand's type T that ReducePrecision's rounding needs.
#[derive(Clone, Copy)]
struct SourceFormat {
    /// T's exponent bias (odd for every type: 2^(e-1) - 1).
    bias: i32,
    /// The binade of T's smallest normal number, 1 - bias.
    min_exponent: i32,
}

/// Step 1 of ReducePrecision: `a` (finite, > 0, a value of T) rounded to `m`
/// fraction bits in its binade, ties to even at the bit level. Exact.
fn round_mantissa(a: f64, m: i32, t: SourceFormat) -> f64 {
    let k = exponent_of(a).max(t.min_exponent);
    // 2^q is the spacing of the reduced values in this binade.
    let q = k - m;
    // a = significand * 2^e exactly, from the f64's own bits.
    let bits = a.to_bits();
    let (field, fraction) = ((bits >> 52) & 0x7ff, bits & ((1u64 << 52) - 1));
    let (significand, e) = if field == 0 { (fraction, -1074) } else { (fraction | 1 << 52, field as i32 - 1075) };
    if q <= e {
        return a; // already a multiple of 2^q
    }
    let shift = (q - e) as u32;
    if shift >= 64 {
        return 0.0; // a < 2^(q-11): far below half a step
    }
    let mut n = significand >> shift;
    let rest = significand & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    // The lowest bit T's encoding keeps: n's last bit, except for m = 0 in a
    // normal binade, where it is the exponent field's last bit.
    let kept_bit_is_odd = if m == 0 && exponent_of(a) >= t.min_exponent { (k + t.bias) & 1 == 1 } else { n & 1 == 1 };
    if rest > half || (rest == half && kept_bit_is_odd) {
        n += 1;
    }
    times_power_of_two(n, q)
}

/// `n * 2^q`, exact when the result is an f64 (n <= 2^53). Here
/// `q = k - m` lies in [-1074, 1023] (k >= -1022, 0 <= m <= 52).
fn times_power_of_two(n: u64, q: i32) -> f64 {
    let power = |p: i32| f64::from_bits(((p.clamp(-1022, 1023) + 1023) as u64) << 52);
    if q < -1022 {
        // two steps, so that no factor is itself subnormal
        (n as f64 * power(q + 64)) * power(-64)
    } else {
        n as f64 * power(q)
    }
}
