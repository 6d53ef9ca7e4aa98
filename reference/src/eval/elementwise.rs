//! Element-wise ops: unary functions, binary arithmetic (with the
//! broadcasting document's rules), comparisons, Select, Clamp and the
//! element type conversions.

use std::borrow::Cow;

use half::{bf16, f16};
use num_complex::Complex;

use super::broadcast::broadcast_to;
use super::element::*;
use super::internal;
use crate::error::RunError;
use crate::ir::{BinaryOp, Direction, UnaryOp};
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::complex as cx;
use crate::numerics::convert;
use crate::numerics::f8::{F8E4M3FN, F8E5M2};
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

/// c64 values computed in c128 and rounded part by part.
fn widen(z: Complex<f32>) -> Complex<f64> {
    Complex::new(z.re as f64, z.im as f64)
}
fn narrow(z: Complex<f64>) -> Complex<f32> {
    Complex::new(z.re as f32, z.im as f32)
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
    fn complex<P: Copy, T: Stored + Copy>(
        op: UnaryOp,
        v: &[T],
        up: fn(T) -> Complex<f64>,
        down: fn(Complex<f64>) -> T,
        part: fn(f64) -> P,
        wrap: fn(Vec<P>) -> Data,
    ) -> R<Data> {
        Ok(match op {
            UnaryOp::Abs => wrap(map(v, |z| part(cx::abs(up(z))))),
            UnaryOp::Real => wrap(map(v, |z| part(up(z).re))),
            UnaryOp::Imag => wrap(map(v, |z| part(up(z).im))),
            _ => {
                let f = complex_unary(op).ok_or_else(|| unsupported(op.name(), "complex"))?;
                T::wrap(map(v, |z| down(f(up(z)))))
            }
        })
    }
    let data = match &x.data {
        Data::Pred(v) => Data::Pred(map(v, pred_unary(op).ok_or_else(|| unsupported(op.name(), "pred"))?)),
        Data::S8(v) => int(op, v)?,
        Data::S16(v) => int(op, v)?,
        Data::S32(v) => int(op, v)?,
        Data::S64(v) => int(op, v)?,
        Data::U8(v) => int(op, v)?,
        Data::U16(v) => int(op, v)?,
        Data::U32(v) => int(op, v)?,
        Data::U64(v) => int(op, v)?,
        Data::F16(v) => float(op, v)?,
        Data::BF16(v) => float(op, v)?,
        Data::F32(v) => float(op, v)?,
        Data::F64(v) => float(op, v)?,
        Data::F8E4M3FN(v) => float(op, v)?,
        Data::F8E5M2(v) => float(op, v)?,
        Data::C64(v) => complex(op, v, widen, narrow, |p| p as f32, Data::F32)?,
        Data::C128(v) => complex(op, v, |z| z, |z| z, |p| p, Data::F64)?,
    };
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
    let data = match (&l.data, &r.data) {
        (Data::Pred(a), Data::Pred(b)) => Data::Pred(zip(a, b, pred_binary(op).ok_or_else(|| unsupported(op.name(), "pred"))?)),
        (Data::S8(a), Data::S8(b)) => int(op, a, b)?,
        (Data::S16(a), Data::S16(b)) => int(op, a, b)?,
        (Data::S32(a), Data::S32(b)) => int(op, a, b)?,
        (Data::S64(a), Data::S64(b)) => int(op, a, b)?,
        (Data::U8(a), Data::U8(b)) => int(op, a, b)?,
        (Data::U16(a), Data::U16(b)) => int(op, a, b)?,
        (Data::U32(a), Data::U32(b)) => int(op, a, b)?,
        (Data::U64(a), Data::U64(b)) => int(op, a, b)?,
        (Data::F32(a), Data::F32(b)) if op == BinaryOp::Complex => Data::C64(zip(a, b, Complex::new)),
        (Data::F64(a), Data::F64(b)) if op == BinaryOp::Complex => Data::C128(zip(a, b, Complex::new)),
        (Data::F16(a), Data::F16(b)) => float::<f16>(op, a, b)?,
        (Data::BF16(a), Data::BF16(b)) => float::<bf16>(op, a, b)?,
        (Data::F32(a), Data::F32(b)) => float(op, a, b)?,
        (Data::F64(a), Data::F64(b)) => float(op, a, b)?,
        (Data::F8E4M3FN(a), Data::F8E4M3FN(b)) => float::<F8E4M3FN>(op, a, b)?,
        (Data::F8E5M2(a), Data::F8E5M2(b)) => float::<F8E5M2>(op, a, b)?,
        (Data::C64(a), Data::C64(b)) => {
            let f = complex_binary(op).ok_or_else(|| unsupported(op.name(), "c64"))?;
            Data::C64(zip(a, b, |x, y| narrow(f(widen(x), widen(y)))))
        }
        (Data::C128(a), Data::C128(b)) => Data::C128(zip(a, b, complex_binary(op).ok_or_else(|| unsupported(op.name(), "c128"))?)),
        _ => return Err(internal("binary operands of different element types")),
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
    let result = match (&l.data, &r.data) {
        (Data::Pred(a), Data::Pred(b)) => with(a, b, ordered_compare(direction)),
        (Data::S8(a), Data::S8(b)) => with(a, b, ordered_compare(direction)),
        (Data::S16(a), Data::S16(b)) => with(a, b, ordered_compare(direction)),
        (Data::S32(a), Data::S32(b)) => with(a, b, ordered_compare(direction)),
        (Data::S64(a), Data::S64(b)) => with(a, b, ordered_compare(direction)),
        (Data::U8(a), Data::U8(b)) => with(a, b, ordered_compare(direction)),
        (Data::U16(a), Data::U16(b)) => with(a, b, ordered_compare(direction)),
        (Data::U32(a), Data::U32(b)) => with(a, b, ordered_compare(direction)),
        (Data::U64(a), Data::U64(b)) => with(a, b, ordered_compare(direction)),
        (Data::F16(a), Data::F16(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::BF16(a), Data::BF16(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::F32(a), Data::F32(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::F64(a), Data::F64(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::F8E4M3FN(a), Data::F8E4M3FN(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::F8E5M2(a), Data::F8E5M2(b)) => with(a, b, float_compare(direction, total_order)),
        (Data::C64(a), Data::C64(b)) => zip(a, b, |x, y| complex_eq(direction == Direction::Ne)(x == y)),
        (Data::C128(a), Data::C128(b)) => zip(a, b, |x, y| complex_eq(direction == Direction::Ne)(x == y)),
        _ => return Err(internal("compared operands of different element types")),
    };
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
    let data = match &x.data {
        Data::F16(v) => each(v, exponent_bits, mantissa_bits)?,
        Data::BF16(v) => each(v, exponent_bits, mantissa_bits)?,
        Data::F32(v) => each(v, exponent_bits, mantissa_bits)?,
        Data::F64(v) => each(v, exponent_bits, mantissa_bits)?,
        Data::F8E4M3FN(v) => each(v, exponent_bits, mantissa_bits)?,
        Data::F8E5M2(v) => each(v, exponent_bits, mantissa_bits)?,
        other => return Err(unsupported("ReducePrecision", other.element_type())),
    };
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
