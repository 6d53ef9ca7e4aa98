//! Element functions on one [`Scalar`] for the scalar programs: the same
//! element semantics as the element-wise kernels (`crate::elem`), applied to
//! single values without building arrays. Ops not covered here return None
//! and the program falls back to a one-element run of the array kernel.

use num_complex::Complex;
use xlaref_reference::ir::{BinaryOp, Direction};
use xlaref_reference::scalar::Scalar;

use crate::elem::complex::{self as cx, Part};
use crate::elem::float::{maximum, minimum, order_key, FFloat, Wide};
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
    // The whole-array functions of one pair (f32 in vector lanes).
    match op {
        Pow => return Some(crate::elem::one2(T::pow_into, x, y)),
        Atan2 => return Some(crate::elem::one2(T::atan2_into, x, y)),
        _ => {}
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

/// `op(a, b)` on two scalars of one type (None: not covered here).
#[inline]
pub fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Option<Scalar> {
    use BinaryOp as B;
    use Scalar as S;
    if op == B::Complex {
        return match (a, b) {
            (S::F32(x), S::F32(y)) => Some(S::C64(Complex::new(x, y))),
            (S::F64(x), S::F64(y)) => Some(S::C128(Complex::new(x, y))),
            _ => None,
        };
    }
    Some(xlaref_reference::scalar_by_class2!((a, b), (x, y) => {
        pred: S::Pred(match op {
            B::Add | B::Max | B::Or => x | y,
            B::Mul | B::Min | B::And => x & y,
            B::Xor => x ^ y,
            _ => return None,
        }),
        int: S::from(int_bin(op, x, y)?),
        float: S::from(float_bin(op, x, y)?),
        complex: S::from(complex_in(op, x, y)?),
    } else return None))
}

/// A complex binary op in [`cx::Z`], rounded back to the operands' type.
#[inline(always)]
fn complex_in<P: Part>(op: BinaryOp, x: Complex<P>, y: Complex<P>) -> Option<Complex<P>> {
    Some(P::down(complex_bin(op, P::up(x), P::up(y))?))
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
    Some(xlaref_reference::scalar_by_class2!((a, b), (x, y) => {
        pred: ordered(d, x, y),
        int: ordered(d, x, y),
        float: float_cmp(d, total, x, y),
        complex: (x == y) != (d == Direction::Ne),
    } else return None))
}
