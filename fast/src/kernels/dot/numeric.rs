//! How the fast engine computes sums of products (Dot, DotGeneral and the
//! convolutions) for every operand and result type, following the
//! reference's numerics (docs/semantics-decisions.md, "Numerics of sums of
//! products") except where speed asks for f32 sums:
//! - f32 operands with an f32 result: the f32 GEMM (sums rounded in f32 at
//!   every step, as XLA CPU; within the tolerance model's `γ(n)·Σ|terms|`);
//! - other real floats (operand or result float): f64 sums of exact
//!   operand values, rounded once to the result type (directly from f64,
//!   also for f16 and bf16);
//! - integers and pred: wrapping i64 sums, wrapped to the result type;
//! - complex: `Complex<f64>` sums of textbook products, in the reference's
//!   order.

use half::{bf16, f16};
use num_complex::Complex;
use xlaref_reference::literal::{ArrayLiteral, Data};
use xlaref_reference::types::{ArrayShape, ElementType};
use xlaref_reference::RunError;

use crate::elem::convert::{self, Src, V};
use crate::kernels::gemm::Elem;
use crate::par;

/// An op whose every result element is a sum of products of lhs and rhs
/// elements, written once for every number system.
pub trait SumOfProducts {
    /// The sums, row-major over the result, from the operands' elements in
    /// the number system `T` (row-major over their shapes).
    fn compute<T: Elem>(&self, lhs: &[T], rhs: &[T]) -> Result<Vec<T>, RunError>;
}

/// Runs `op` in the number system the operand and result types call for
/// and converts its sums to the result type.
pub fn run(op: &impl SumOfProducts, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> Result<ArrayLiteral, RunError> {
    let (operand, result) = (lhs.element_type(), out.element_type);
    let data = if operand.is_complex() || result.is_complex() {
        let sums = op.compute(&read(lhs, complex), &read(rhs, complex))?;
        round_complex(sums, result)
    } else if operand == ElementType::F32 && result == ElementType::F32 {
        match (&lhs.data, &rhs.data) {
            (Data::F32(l), Data::F32(r)) => Data::F32(op.compute(l, r)?),
            _ => return Err(crate::internal("f32 operands expected")),
        }
    } else if operand.is_float() || result.is_float() {
        let sums = match (&lhs.data, &rhs.data) {
            (Data::F64(l), Data::F64(r)) => op.compute(l, r)?,
            _ => op.compute(&read(lhs, real), &read(rhs, real))?,
        };
        round_real(sums, result)
    } else {
        let sums = op.compute(&read(lhs, integer), &read(rhs, integer))?;
        convert::convert(&Data::S64(sums), result)
    };
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

fn real(v: V) -> f64 {
    match v {
        V::B(b) => b as u8 as f64,
        V::I(i) => i as f64,
        V::U(u) => u as f64,
        V::F(x) | V::C(x, _) => x,
    }
}

fn integer(v: V) -> i64 {
    match v {
        V::B(b) => b as i64,
        V::I(i) => i,
        // Modulo 2^64, like every wrapping sum.
        V::U(u) => u as i64,
        V::F(x) | V::C(x, _) => x as i64,
    }
}

fn complex(v: V) -> Complex<f64> {
    match v {
        V::C(re, im) => Complex::new(re, im),
        other => Complex::new(real(other), 0.0),
    }
}

/// Every element of `a` in another number system.
fn read<T: Send>(a: &ArrayLiteral, f: fn(V) -> T) -> Vec<T> {
    fn go<S: Src, T: Send>(v: &[S], f: fn(V) -> T) -> Vec<T> {
        par::map(v, |x| f(x.v()))
    }
    xlaref_reference::with_data!(&a.data, v => go(v, f))
}

/// `x` rounded to f32 toward zero, with the last bit set when inexact
/// ("round to odd"): rounding that f32 to nearest even in a type with at
/// most 22 significand bits and f32's exponent range (f16, bf16) gives the
/// correctly rounded value of `x`, with no double-rounding error.
fn to_f32_odd(x: f64) -> f32 {
    let f = x as f32;
    if x.is_nan() || f as f64 == x {
        return f;
    }
    // Step back toward zero when rounding went outward (inf included).
    let f = if (f as f64).abs() > x.abs() { f32::from_bits(f.to_bits() - 1) } else { f };
    f32::from_bits(f.to_bits() | 1)
}

/// f64 sums to a real or integer type, rounded once.
fn round_real(sums: Vec<f64>, t: ElementType) -> Data {
    match t {
        ElementType::F64 => Data::F64(sums),
        ElementType::F16 => Data::F16(par::map(&sums, |x| f16::from_f32(to_f32_odd(x)))),
        ElementType::BF16 => Data::BF16(par::map(&sums, |x| bf16::from_f32(to_f32_odd(x)))),
        _ => convert::convert(&Data::F64(sums), t),
    }
}

/// Complex sums to the result type: each part rounded once; a real result
/// keeps the real part.
fn round_complex(sums: Vec<Complex<f64>>, t: ElementType) -> Data {
    match t {
        ElementType::C128 => Data::C128(sums),
        ElementType::F16 | ElementType::BF16 | ElementType::F64 => round_real(par::map(&sums, |z| z.re), t),
        _ => convert::convert(&Data::C128(sums), t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_round_once_to_f16_and_bf16() {
        // 1 + 2^-8 + 2^-30 lies above the bf16 midpoint 1 + 2^-8.
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
        assert_eq!(round_real(vec![x], ElementType::BF16), Data::BF16(vec![bf16::from_bits(0x3f81)]));
        let y = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(round_real(vec![y], ElementType::F16), Data::F16(vec![f16::from_bits(0x3c01)]));
        // Exact ties stay ties (to even); overflow and NaN pass through.
        assert_eq!(round_real(vec![1.0 + 2f64.powi(-8)], ElementType::BF16), Data::BF16(vec![bf16::ONE]));
        assert_eq!(round_real(vec![1e300, -1e300], ElementType::F16), Data::F16(vec![f16::INFINITY, f16::NEG_INFINITY]));
        let Data::BF16(v) = round_real(vec![f64::NAN], ElementType::BF16) else { panic!() };
        assert!(v[0].is_nan());
    }
}
