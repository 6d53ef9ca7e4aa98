//! Which element function each element-wise op applies, per type class.
//! The functions themselves live in `numerics/`; this file only chooses.
//! An op/type pair the verifier rejects yields `None` here.

use num_complex::Complex;

use crate::ir::{BinaryOp, Direction, UnaryOp};
use crate::numerics::complex as cx;
use crate::numerics::complex_inverse as cxi;
use crate::numerics::float::{self as fl, Float};
use crate::numerics::int::Int;
use crate::numerics::special as sp;

pub type Un<T> = fn(T) -> T;
pub type Bin<T> = fn(T, T) -> T;
pub type Cmp<T> = fn(T, T) -> bool;

pub fn int_unary<T: Int>(op: UnaryOp) -> Option<Un<T>> {
    use UnaryOp::*;
    Some(match op {
        Neg => T::neg,
        Abs => T::abs,
        Sign => T::sign,
        Not => T::not,
        PopulationCount => T::population_count,
        Clz => T::count_leading_zeros,
        _ => return None,
    })
}

pub fn float_unary<T: Float>(op: UnaryOp) -> Option<Un<T>> {
    use UnaryOp::*;
    Some(match op {
        Neg => fl::neg,
        Abs => fl::abs,
        Sign => |x| fl::apply(x, fl::sign),
        Ceil => |x| fl::apply(x, f64::ceil),
        Floor => |x| fl::apply(x, f64::floor),
        Round => |x| fl::apply(x, f64::round),
        RoundNearestEven => |x| fl::apply(x, f64::round_ties_even),
        Sqrt => |x| fl::apply(x, f64::sqrt),
        Rsqrt => |x| fl::apply(x, fl::rsqrt),
        Cbrt => |x| fl::apply(x, libm::cbrt),
        Exp => |x| fl::apply(x, libm::exp),
        Expm1 => |x| fl::apply(x, libm::expm1),
        Log => |x| fl::apply(x, libm::log),
        Log1p => |x| fl::apply(x, libm::log1p),
        Logistic => |x| fl::apply(x, fl::logistic),
        Sin => |x| fl::apply(x, libm::sin),
        Cos => |x| fl::apply(x, libm::cos),
        Tan => |x| fl::apply(x, libm::tan),
        Tanh => |x| fl::apply(x, libm::tanh),
        Erf => |x| fl::apply(x, libm::erf),
        // CHLO extension ops (numerics/special.rs for the special functions).
        Sinh => |x| fl::apply(x, libm::sinh),
        Cosh => |x| fl::apply(x, libm::cosh),
        Asin => |x| fl::apply(x, libm::asin),
        Acos => |x| fl::apply(x, libm::acos),
        Atan => |x| fl::apply(x, libm::atan),
        Asinh => |x| fl::apply(x, libm::asinh),
        Acosh => |x| fl::apply(x, libm::acosh),
        Atanh => |x| fl::apply(x, libm::atanh),
        Erfc => |x| fl::apply(x, libm::erfc),
        ErfInv => |x| fl::apply(x, sp::erf_inv),
        Lgamma => |x| fl::apply(x, sp::lgamma),
        Digamma => |x| fl::apply(x, sp::digamma),
        BesselI1e => |x| fl::apply(x, sp::bessel_i1e),
        Real | Conj => |x| x,
        Imag => |_| T::from_f64(0.0),
        _ => return None,
    })
}

/// Complex unary functions that return a complex number, on c128 values.
pub fn complex_unary(op: UnaryOp) -> Option<Un<Complex<f64>>> {
    use UnaryOp::*;
    Some(match op {
        Neg => |z| -z,
        Conj => |z| z.conj(),
        Sign => cx::sign,
        Sqrt => cx::sqrt,
        Rsqrt => cx::rsqrt,
        Exp => cx::exp,
        Expm1 => cx::expm1,
        Log => cx::log,
        Log1p => cx::log1p,
        Logistic => cx::logistic,
        Sin => cx::sin,
        Cos => cx::cos,
        Tan => cx::tan,
        Tanh => cx::tanh,
        Sinh => cxi::sinh,
        Cosh => cxi::cosh,
        Asin => cxi::asin,
        Acos => cxi::acos,
        Atan => cxi::atan,
        Asinh => cxi::asinh,
        Acosh => cxi::acosh,
        Atanh => cxi::atanh,
        _ => return None,
    })
}

/// The float predicates: IsFinite and the CHLO extension ops IsInf,
/// IsPosInf, IsNegInf (f8e4m3fn has no infinity: always false there).
pub fn float_predicate(op: UnaryOp) -> Option<fn(f64) -> bool> {
    use UnaryOp::*;
    Some(match op {
        IsFinite => f64::is_finite,
        IsInf => f64::is_infinite,
        IsPosInf => |x| x == f64::INFINITY,
        IsNegInf => |x| x == f64::NEG_INFINITY,
        _ => return None,
    })
}

pub fn pred_unary(op: UnaryOp) -> Option<Un<bool>> {
    match op {
        UnaryOp::Not => Some(|b: bool| !b),
        _ => None,
    }
}

pub fn int_binary<T: Int>(op: BinaryOp) -> Option<Bin<T>> {
    use BinaryOp::*;
    Some(match op {
        Add => T::add,
        Sub => T::sub,
        Mul => T::mul,
        Div => T::div,
        Rem => T::rem,
        Max => |a, b| if a >= b { a } else { b },
        Min => |a, b| if a <= b { a } else { b },
        Pow => T::pow,
        And => T::and,
        Or => T::or,
        Xor => T::xor,
        ShiftLeft => T::shift_left,
        ShiftRightArithmetic => T::shift_right_arithmetic,
        ShiftRightLogical => T::shift_right_logical,
        Atan2 | Complex | NextAfter | Polygamma | Zeta => return None,
    })
}

pub fn float_binary<T: Float>(op: BinaryOp) -> Option<Bin<T>> {
    use BinaryOp::*;
    Some(match op {
        Add => |a, b| fl::apply2(a, b, |x, y| x + y),
        Sub => |a, b| fl::apply2(a, b, |x, y| x - y),
        Mul => |a, b| fl::apply2(a, b, |x, y| x * y),
        Div => |a, b| fl::apply2(a, b, |x, y| x / y),
        // Rem: the C `fmod` result, sign of the dividend, exact.
        Rem => |a, b| fl::apply2(a, b, libm::fmod),
        Max => |a, b| fl::apply2(a, b, fl::maximum),
        Min => |a, b| fl::apply2(a, b, fl::minimum),
        Pow => fl::pow,
        Atan2 => |a, b| fl::apply2(a, b, libm::atan2),
        // CHLO extension ops: NextAfter steps in the element type's own bits.
        NextAfter => sp::next_after,
        Polygamma => |n, x| fl::apply2(n, x, sp::polygamma),
        Zeta => |x, q| fl::apply2(x, q, sp::zeta),
        _ => return None,
    })
}

/// Complex binary arithmetic on c128 values.
pub fn complex_binary(op: BinaryOp) -> Option<Bin<Complex<f64>>> {
    use BinaryOp::*;
    Some(match op {
        Add => |a, b| a + b,
        Sub => |a, b| a - b,
        Mul => cx::mul,
        Div => cx::div,
        Pow => cx::pow,
        Max => cx::max,
        Min => cx::min,
        _ => return None,
    })
}

/// On pred, Add and Max are OR; Mul and Min are AND (as XLA's i1 arithmetic).
pub fn pred_binary(op: BinaryOp) -> Option<Bin<bool>> {
    use BinaryOp::*;
    Some(match op {
        Add | Max | Or => |a, b| a | b,
        Mul | Min | And => |a, b| a & b,
        Xor => |a, b| a ^ b,
        _ => return None,
    })
}

/// Ordered comparison from "less than" and "equal".
fn by_order<T: Copy>(direction: Direction, lt: fn(T, T) -> bool, eq: fn(T, T) -> bool) -> (Direction, Cmp<T>, Cmp<T>) {
    (direction, lt, eq)
}

/// Evaluates a comparison given "less than" and "equal" for the type.
#[inline]
pub fn decide<T: Copy>(direction: Direction, a: T, b: T, lt: Cmp<T>, eq: Cmp<T>) -> bool {
    match direction {
        Direction::Eq => eq(a, b),
        Direction::Ne => !eq(a, b),
        Direction::Lt => lt(a, b),
        Direction::Gt => lt(b, a),
        Direction::Le => lt(a, b) || eq(a, b),
        Direction::Ge => lt(b, a) || eq(a, b),
    }
}

/// Integers and pred: the usual order (total order is the same order).
pub fn ordered_compare<T: PartialOrd + Copy>(direction: Direction) -> (Direction, Cmp<T>, Cmp<T>) {
    by_order(direction, |a, b| a < b, |a, b| a == b)
}

/// Floats: IEEE comparison (NaN unordered: only Ne is true), or the
/// document's total order -NaN < -Inf < ... < +Inf < +NaN.
pub fn float_compare<T: Float>(direction: Direction, total_order: bool) -> (Direction, Cmp<T>, Cmp<T>) {
    if total_order {
        by_order(direction, |a, b| fl::total_order_key(a) < fl::total_order_key(b), |a, b| fl::total_order_key(a) == fl::total_order_key(b))
    } else {
        by_order(direction, |a, b| a.to_f64() < b.to_f64(), |a, b| a.to_f64() == b.to_f64())
    }
}
