//! Element functions on one [`Scalar`] for the scalar programs: the same
//! element semantics as the element-wise kernels (`crate::elem`), applied to
//! single values without building arrays. Ops not covered here return None
//! and the program falls back to a one-element run of the array kernel.

use half::{bf16, f16};
use num_complex::Complex;
use xlaref_reference::ir::{BinaryOp, Direction};
use xlaref_reference::scalar::Scalar;

use crate::elem::complex as cx;
use crate::elem::f8::{F8E4M3FN, F8E5M2};
use crate::elem::float::{maximum, minimum, order_key, pow, FFloat, Wide};
use crate::elem::int::FInt;

#[inline(always)]
fn int_bin<T: FInt>(op: BinaryOp, x: T, y: T) -> Option<T> {
    use BinaryOp::*;
    Some(match op {
        Add => x.wadd(y),
        Sub => x.wsub(y),
        Mul => x.wmul(y),
        Div => x.xdiv(y),
        Rem => x.xrem(y),
        Max => x.max(y),
        Min => x.min(y),
        Pow => x.xpow(y),
        And => x.band(y),
        Or => x.bor(y),
        Xor => x.bxor(y),
        ShiftLeft => x.shl(y),
        ShiftRightArithmetic => x.sra(y),
        ShiftRightLogical => x.srl(y),
        Atan2 | Complex | NextAfter | Polygamma | Zeta => return None,
    })
}

#[inline(always)]
fn float_bin<T: FFloat>(op: BinaryOp, x: T, y: T) -> Option<T> {
    use BinaryOp::*;
    if op == Pow {
        return Some(pow(x, y));
    }
    let (a, b) = (x.up(), y.up());
    Some(T::down(match op {
        Add => a + b,
        Sub => a - b,
        Mul => a * b,
        Div => a / b,
        Rem => a.rem(b),
        Max => maximum(a, b),
        Min => minimum(a, b),
        Atan2 => a.atan2(b),
        _ => return None,
    }))
}

fn complex_bin(op: BinaryOp, a: cx::Z, b: cx::Z) -> Option<cx::Z> {
    use BinaryOp::*;
    Some(match op {
        Add => a + b,
        Sub => a - b,
        Mul => cx::mul(a, b),
        Div => cx::div(a, b),
        Pow => cx::pow(a, b),
        Max => cx::max(a, b),
        Min => cx::min(a, b),
        _ => return None,
    })
}

fn up32(z: Complex<f32>) -> cx::Z {
    cx::Z::new(z.re as f64, z.im as f64)
}
fn down32(z: cx::Z) -> Complex<f32> {
    Complex::new(z.re as f32, z.im as f32)
}

/// `op(a, b)` on two scalars of one type (None: not covered here).
#[inline]
pub fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Option<Scalar> {
    use BinaryOp as B;
    use Scalar as S;
    Some(match (a, b) {
        (S::Pred(x), S::Pred(y)) => S::Pred(match op {
            B::Add | B::Max | B::Or => x | y,
            B::Mul | B::Min | B::And => x & y,
            B::Xor => x ^ y,
            _ => return None,
        }),
        (S::S8(x), S::S8(y)) => S::S8(int_bin(op, x, y)?),
        (S::S16(x), S::S16(y)) => S::S16(int_bin(op, x, y)?),
        (S::S32(x), S::S32(y)) => S::S32(int_bin(op, x, y)?),
        (S::S64(x), S::S64(y)) => S::S64(int_bin(op, x, y)?),
        (S::U8(x), S::U8(y)) => S::U8(int_bin(op, x, y)?),
        (S::U16(x), S::U16(y)) => S::U16(int_bin(op, x, y)?),
        (S::U32(x), S::U32(y)) => S::U32(int_bin(op, x, y)?),
        (S::U64(x), S::U64(y)) => S::U64(int_bin(op, x, y)?),
        (S::F16(x), S::F16(y)) => S::F16(float_bin::<f16>(op, x, y)?),
        (S::BF16(x), S::BF16(y)) => S::BF16(float_bin::<bf16>(op, x, y)?),
        (S::F32(x), S::F32(y)) if op == B::Complex => S::C64(Complex::new(x, y)),
        (S::F64(x), S::F64(y)) if op == B::Complex => S::C128(Complex::new(x, y)),
        (S::F32(x), S::F32(y)) => S::F32(float_bin(op, x, y)?),
        (S::F64(x), S::F64(y)) => S::F64(float_bin(op, x, y)?),
        (S::F8E4M3FN(x), S::F8E4M3FN(y)) => S::F8E4M3FN(float_bin::<F8E4M3FN>(op, x, y)?),
        (S::F8E5M2(x), S::F8E5M2(y)) => S::F8E5M2(float_bin::<F8E5M2>(op, x, y)?),
        (S::C64(x), S::C64(y)) => S::C64(down32(complex_bin(op, up32(x), up32(y))?)),
        (S::C128(x), S::C128(y)) => S::C128(complex_bin(op, x, y)?),
        _ => return None,
    })
}

#[inline(always)]
fn ordered<T: PartialOrd>(d: Direction, x: T, y: T) -> bool {
    match d {
        Direction::Eq => x == y,
        Direction::Ne => x != y,
        Direction::Lt => x < y,
        Direction::Le => x <= y,
        Direction::Gt => x > y,
        Direction::Ge => x >= y,
    }
}

#[inline(always)]
fn float_cmp<T: FFloat>(d: Direction, total: bool, x: T, y: T) -> bool {
    if total {
        ordered(d, order_key(x), order_key(y))
    } else {
        ordered(d, x.up().to_f64(), y.up().to_f64())
    }
}

/// Compare on two scalars of one type (None: mixed types).
#[inline]
pub fn compare(d: Direction, total: bool, a: Scalar, b: Scalar) -> Option<bool> {
    use Scalar as S;
    Some(match (a, b) {
        (S::Pred(x), S::Pred(y)) => ordered(d, x, y),
        (S::S8(x), S::S8(y)) => ordered(d, x, y),
        (S::S16(x), S::S16(y)) => ordered(d, x, y),
        (S::S32(x), S::S32(y)) => ordered(d, x, y),
        (S::S64(x), S::S64(y)) => ordered(d, x, y),
        (S::U8(x), S::U8(y)) => ordered(d, x, y),
        (S::U16(x), S::U16(y)) => ordered(d, x, y),
        (S::U32(x), S::U32(y)) => ordered(d, x, y),
        (S::U64(x), S::U64(y)) => ordered(d, x, y),
        (S::F16(x), S::F16(y)) => float_cmp(d, total, x, y),
        (S::BF16(x), S::BF16(y)) => float_cmp(d, total, x, y),
        (S::F32(x), S::F32(y)) => float_cmp(d, total, x, y),
        (S::F64(x), S::F64(y)) => float_cmp(d, total, x, y),
        (S::F8E4M3FN(x), S::F8E4M3FN(y)) => float_cmp(d, total, x, y),
        (S::F8E5M2(x), S::F8E5M2(y)) => float_cmp(d, total, x, y),
        (S::C64(x), S::C64(y)) => (x == y) != (d == Direction::Ne),
        (S::C128(x), S::C128(y)) => (x == y) != (d == Direction::Ne),
        _ => return None,
    })
}
