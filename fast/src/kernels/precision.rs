//! ReducePrecision and BitcastConvertType: bit manipulation on the
//! elements' own encodings (the reference goes through f64 values instead),
//! parallel over chunks.
//!
//! ReducePrecision rounds the bit pattern itself: adding half a step (minus
//! one, plus the lowest kept bit) to the pattern and clearing the dropped
//! bits rounds to nearest even, carries into the exponent field when the
//! mantissa overflows, rounds T's subnormals in T's smallest binade, and
//! with no mantissa bits left makes the exponent field's parity decide
//! ties. The exponent range is then narrowed by comparing exponent fields.

use half::{bf16, f16};
use num_complex::Complex;
use rayon::prelude::*;
use xlaref_reference::ir::Op;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::types::{ArrayShape, ElementType, Shape};
use xlaref_reference::RunError;

use crate::elem::f8::{F8E4M3FN, F8E5M2};
use crate::elem::float::{FFloat, Wide};
use crate::exec::Executor;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let x = operands.first().and_then(|l| l.as_array()).ok_or_else(|| internal("expected an array operand"))?;
    let out = shape.as_array().ok_or_else(|| internal("expected an array result"))?;
    Ok(match op {
        Op::ReducePrecision { exponent_bits, mantissa_bits } => reduce_precision(x, *exponent_bits, *mantissa_bits)?.into(),
        Op::BitcastConvertType { .. } => bitcast_convert(x, out)?.into(),
        _ => return Err(internal("not a precision op")),
    })
}

// ---------------------------------------------------------------------------
// ReducePrecision

/// The encoding of a real float type: mantissa and exponent field widths,
/// and whether its all-ones exponent is inf/NaN (IEEE) or, as in
/// f8e4m3fn, ordinary numbers with only S.1111.111 a NaN.
#[derive(Clone, Copy)]
struct Format {
    mantissa: u32,
    exponent: u32,
    ieee: bool,
}

/// The precomputed masks of one ReducePrecision.
#[derive(Clone, Copy)]
struct Reduce {
    /// Dropped mantissa bits (0: no rounding).
    drop: u32,
    /// `(lowest kept bit mask, half a step - 1, mask of the kept bits)`.
    round: (u64, u64, u64),
    /// `(largest and smallest exponent field kept)`, when the range narrows.
    range: Option<(u64, u64)>,
    mantissa: u32,
    exp_mask: u64,
    sign_mask: u64,
    ieee: bool,
}

impl Reduce {
    fn new(f: Format, exponent_bits: i64, mantissa_bits: i64) -> Reduce {
        let width = 1 + f.exponent + f.mantissa;
        let drop = if mantissa_bits < f.mantissa as i64 { f.mantissa - mantissa_bits.max(0) as u32 } else { 0 };
        let round = if drop > 0 {
            let last = 1u64 << drop;
            (last, (last >> 1) - 1, !(last - 1))
        } else {
            (0, 0, !0)
        };
        let range = (exponent_bits < f.exponent as i64).then(|| {
            let bias = (1u64 << (f.exponent - 1)) - 1;
            let reduced_bias = (1u64 << (exponent_bits.max(1) - 1)) - 1;
            (bias + reduced_bias, bias - reduced_bias)
        });
        Reduce {
            drop,
            round,
            range,
            mantissa: f.mantissa,
            exp_mask: ((1u64 << f.exponent) - 1) << f.mantissa,
            sign_mask: 1u64 << (width - 1),
            ieee: f.ieee,
        }
    }

    /// One element's bit pattern, known not to be NaN.
    #[inline(always)]
    fn apply(&self, bits: u64) -> u64 {
        let sign = bits & self.sign_mask;
        let mut magnitude = bits & !self.sign_mask;
        if self.drop > 0 {
            let (last, base, keep) = self.round;
            let odd = (magnitude & last) >> self.drop;
            magnitude = (magnitude + base + odd) & keep;
        }
        let mut overflow = false;
        if let Some((max_field, min_field)) = self.range {
            let field = magnitude >> self.mantissa;
            if field > max_field {
                overflow = true;
            } else if field <= min_field {
                magnitude = 0;
            }
        }
        if self.ieee {
            // A carry past the largest finite binade is the infinity pattern.
            if overflow {
                magnitude = self.exp_mask;
            }
            sign | magnitude
        } else if overflow || magnitude >= self.exp_mask | ((1u64 << self.mantissa) - 1) {
            // No infinity (f8e4m3fn): ±inf is stored as NaN.
            sign | self.exp_mask | ((1u64 << self.mantissa) - 1)
        } else {
            sign | magnitude
        }
    }
}

fn format_of(t: ElementType) -> Option<Format> {
    use ElementType as E;
    Some(match t {
        E::F16 => Format { mantissa: 10, exponent: 5, ieee: true },
        E::BF16 => Format { mantissa: 7, exponent: 8, ieee: true },
        E::F32 => Format { mantissa: 23, exponent: 8, ieee: true },
        E::F64 => Format { mantissa: 52, exponent: 11, ieee: true },
        E::F8E4M3FN => Format { mantissa: 3, exponent: 4, ieee: false },
        E::F8E5M2 => Format { mantissa: 2, exponent: 5, ieee: true },
        _ => return None,
    })
}

fn reduce_each<T: FFloat + Stored>(v: &[T], r: Reduce) -> Data {
    T::wrap(par::map(v, |x| {
        let b = x.bits();
        if x.up().is_nan() {
            x
        } else {
            T::from_bits(r.apply(b))
        }
    }))
}

/// ReducePrecision — document §ReducePrecision, on the bit patterns (see
/// the module comment); NaN is kept bit for bit.
pub fn reduce_precision(x: &ArrayLiteral, exponent_bits: i64, mantissa_bits: i64) -> R<ArrayLiteral> {
    let f = format_of(x.element_type()).ok_or_else(|| internal("ReducePrecision of a non-float"))?;
    let r = Reduce::new(f, exponent_bits, mantissa_bits);
    let data = xlaref_reference::by_class!(&x.data, v => {
        pred: return Err(internal("ReducePrecision of a non-float")),
        int: return Err(internal("ReducePrecision of a non-float")),
        float: reduce_each(v, r),
        complex: return Err(internal("ReducePrecision of a non-float")),
    });
    Ok(ArrayLiteral::with_shape(x.shape.clone(), data))
}

// ---------------------------------------------------------------------------
// BitcastConvertType

/// An element's little-endian bytes.
trait Bytes: Copy + Send + Sync {
    const W: usize;
    fn put(self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}

fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            const W: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(array(b))
            }
        }
    )*};
}
le_bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! via_bits {
    ($t:ty, $bits:ty, $to:expr, $from:expr) => {
        impl Bytes for $t {
            const W: usize = std::mem::size_of::<$bits>();
            #[inline(always)]
            fn put(self, out: &mut [u8]) {
                let b: $bits = $to(self);
                b.put(out)
            }
            #[inline(always)]
            fn get(b: &[u8]) -> Self {
                $from(<$bits>::get(b))
            }
        }
    };
}
via_bits!(bool, u8, |x: bool| x as u8, |b: u8| b != 0);
via_bits!(f16, u16, f16::to_bits, f16::from_bits);
via_bits!(bf16, u16, bf16::to_bits, bf16::from_bits);
via_bits!(F8E4M3FN, u8, |x: F8E4M3FN| x.0, F8E4M3FN);
via_bits!(F8E5M2, u8, |x: F8E5M2| x.0, F8E5M2);

impl<P: Bytes> Bytes for Complex<P> {
    const W: usize = 2 * P::W;
    #[inline(always)]
    fn put(self, out: &mut [u8]) {
        let (re, im) = out.split_at_mut(P::W);
        self.re.put(re);
        self.im.put(im);
    }
    #[inline(always)]
    fn get(b: &[u8]) -> Self {
        Complex::new(P::get(&b[..P::W]), P::get(&b[P::W..2 * P::W]))
    }
}

/// Elements per parallel task of the byte copies.
const CHUNK: usize = 1 << 14;

fn to_bytes<T: Bytes>(v: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; v.len() * T::W];
    let task = |(src, dst): (&[T], &mut [u8])| {
        for (x, o) in src.iter().zip(dst.chunks_exact_mut(T::W)) {
            x.put(o);
        }
    };
    if v.len() < par::PARALLEL_THRESHOLD {
        task((v, &mut out));
    } else {
        v.par_chunks(CHUNK).zip(out.par_chunks_mut(CHUNK * T::W)).for_each(task);
    }
    out
}

fn from_bytes<T: Bytes + Stored>(b: &[u8]) -> Data {
    let n = b.len() / T::W;
    T::wrap(par::build(n, |start, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            let at = (start + k) * T::W;
            o.write(T::get(&b[at..at + T::W]));
        }
    }))
}

fn encode(d: &Data) -> Vec<u8> {
    xlaref_reference::with_data!(d, v => to_bytes(v))
}

fn decode(b: &[u8], t: ElementType) -> Data {
    xlaref_reference::with_type!(t, T => from_bytes::<T>(b))
}

/// BitcastConvertType — document §BitcastConvertType: the row-major
/// little-endian bytes (XLA CPU's layout) reread as the new type.
pub fn bitcast_convert(x: &ArrayLiteral, out: &ArrayShape) -> R<ArrayLiteral> {
    let to = out.element_type;
    if x.element_type() == to {
        return Ok(ArrayLiteral::with_shape(out.clone(), x.data.clone()));
    }
    let bytes = encode(&x.data);
    if bytes.len() != out.element_count().saturating_mul(to.byte_width()) {
        return Err(internal("bitcast byte count"));
    }
    Ok(ArrayLiteral::with_shape(out.clone(), decode(&bytes, to)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp32(x: f32, e: i64, m: i64) -> f32 {
        let r = Reduce::new(format_of(ElementType::F32).unwrap(), e, m);
        f32::from_bits(r.apply(x.to_bits() as u64) as u32)
    }

    #[test]
    fn ties_to_even_exponent_with_no_mantissa() {
        assert_eq!([1.5f32, 3.0, 6.0, 12.0].map(|x| rp32(x, 8, 0)), [2.0, 2.0, 8.0, 8.0]);
    }

    #[test]
    fn half_range() {
        assert_eq!(rp32(65520.0, 5, 10), f32::INFINITY);
        assert_eq!(rp32(3e-5, 5, 10), 0.0);
        assert_eq!(rp32(2f32.powi(-14) - 2f32.powi(-26), 5, 10), 2f32.powi(-14));
        assert_eq!(rp32(-1.0, 1, 23), -0.0);
        assert_eq!(rp32(3.0, 1, 23), f32::INFINITY);
    }

    #[test]
    fn e4m3fn_overflow_is_nan() {
        let r = Reduce::new(format_of(ElementType::F8E4M3FN).unwrap(), 4, 1);
        assert_eq!(r.apply(0x7e), 0x7f);
        assert_eq!(r.apply(0xfe), 0xff);
        let narrow = Reduce::new(format_of(ElementType::F8E4M3FN).unwrap(), 3, 3);
        assert_eq!(narrow.apply(0x70), 0x7f);
    }
}
