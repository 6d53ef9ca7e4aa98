//! Element-wise kernels: each op/type pair is its own monomorphized loop
//! (so f32 Add compiles to a vector add), parallel over chunks. A scalar
//! operand is never materialized; other broadcasts are (as a strided copy).

use std::borrow::Cow;

use num_complex::Complex;
use xlaref_reference::ir::{BinaryOp, Direction, UnaryOp};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::types::{ArrayShape, ElementType};
use xlaref_reference::RunError;

use super::shape_ops;
use crate::elem::complex::{self as cx, Part};
use crate::elem::complex_inverse as cxi;
use crate::elem::float::{maximum, minimum, order_key, sign, FFloat, Wide};
use crate::elem::int::FInt;
use crate::elem::one2;
use crate::elem::special;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;

/// One operand of an element-wise op: all elements, or one repeated.
#[derive(Clone, Copy)]
pub(crate) enum Side<'a, T> {
    All(&'a [T]),
    One(T),
}

fn run2<T: Copy + Sync, U: Send>(a: Side<T>, b: Side<T>, f: impl Fn(T, T) -> U + Sync) -> Vec<U> {
    match (a, b) {
        (Side::All(x), Side::All(y)) => par::zip(x, y, f),
        (Side::All(x), Side::One(s)) => par::map(x, |v| f(v, s)),
        (Side::One(s), Side::All(y)) => par::map(y, |v| f(s, v)),
        (Side::One(s), Side::One(t)) => vec![f(s, t)],
    }
}

/// Brings an operand to the output's dimensions: borrowed as is, kept as a
/// single scalar, or materialized by a broadcast copy.
fn prepare<'a>(x: &'a ArrayLiteral, out_dims: &[i64], broadcast_dimensions: Option<&[i64]>) -> Cow<'a, ArrayLiteral> {
    if x.dims() == out_dims || x.element_count() == 1 {
        return Cow::Borrowed(x);
    }
    let mapping: Vec<i64> =
        if x.rank() == out_dims.len() { (0..x.rank() as i64).collect() } else { broadcast_dimensions.unwrap_or(&[]).to_vec() };
    let out = ArrayShape::new(x.element_type(), out_dims.to_vec());
    Cow::Owned(shape_ops::broadcast(x, &out, &mapping))
}

fn side<'a, T: Copy>(v: &'a [T], n: usize) -> Side<'a, T> {
    if v.len() == 1 && n != 1 {
        Side::One(v[0])
    } else {
        Side::All(v)
    }
}

fn int_binary<T: FInt>(op: BinaryOp, a: Side<T>, b: Side<T>) -> R<Vec<T>> {
    use BinaryOp::*;
    Ok(match op {
        Add => run2(a, b, T::wadd),
        Sub => run2(a, b, T::wsub),
        Mul => run2(a, b, T::wmul),
        Div => run2(a, b, T::xdiv),
        Rem => run2(a, b, T::xrem),
        Max => run2(a, b, |x, y| x.max(y)),
        Min => run2(a, b, |x, y| x.min(y)),
        Pow => run2(a, b, T::xpow),
        And => run2(a, b, T::band),
        Or => run2(a, b, T::bor),
        Xor => run2(a, b, T::bxor),
        ShiftLeft => run2(a, b, T::shl),
        ShiftRightArithmetic => run2(a, b, T::sra),
        ShiftRightLogical => run2(a, b, T::srl),
        Atan2 | Complex | NextAfter | Polygamma | Zeta => return Err(internal("float op on integers")),
    })
}

/// What is done with one float function: the whole-array kernels here
/// map it over arrays; the fusion tiles (`fusion::tiles`) over blocks in
/// the caches. Both get the function from [`float_binary_fn`] or
/// [`float_unary_fn`], so a fused chain computes exactly what its ops
/// compute one by one.
pub(crate) trait BinaryUse<T> {
    type Out;
    fn apply<F: Fn(T, T) -> T + Copy + Sync>(self, f: F) -> Self::Out;
}

/// See [`BinaryUse`]. `heavy`: the function costs more than its memory
/// traffic (a transcendental), so a whole-array result is not streamed.
pub(crate) trait UnaryUse<T> {
    type Out;
    fn apply<F: Fn(T) -> T + Copy + Sync>(self, f: F, heavy: bool) -> Self::Out;
}

struct Sides<'a, T>(Side<'a, T>, Side<'a, T>);

impl<T: Copy + Sync + Send> BinaryUse<T> for Sides<'_, T> {
    type Out = Vec<T>;
    fn apply<F: Fn(T, T) -> T + Copy + Sync>(self, f: F) -> Vec<T> {
        run2(self.0, self.1, f)
    }
}

struct Whole<'a, T>(&'a [T]);

impl<T: Copy + Sync + Send> UnaryUse<T> for Whole<'_, T> {
    type Out = Vec<T>;
    fn apply<F: Fn(T) -> T + Copy + Sync>(self, f: F, heavy: bool) -> Vec<T> {
        if heavy {
            par::map_heavy(self.0, f)
        } else {
            par::map(self.0, f)
        }
    }
}

fn float_binary<T: FFloat>(op: BinaryOp, a: Side<T>, b: Side<T>) -> R<Vec<T>> {
    match op {
        // Whole-array kernels (f32 in vector lanes).
        BinaryOp::Pow => Ok(T::pow_all(a, b)),
        BinaryOp::Atan2 => Ok(T::atan2_all(a, b)),
        _ => float_binary_fn(op, Sides(a, b)),
    }
}

/// The element function of float binary op `op`, handed to `u`.
pub(crate) fn float_binary_fn<T: FFloat, U: BinaryUse<T>>(op: BinaryOp, u: U) -> R<U::Out> {
    use BinaryOp::*;
    // A macro, not a closure taking `fn` pointers: each op's closure is its
    // own type, so the loop inlines it and vectorizes (an `fn` pointer is an
    // indirect call per element).
    macro_rules! f {
        ($g:expr) => {
            move |x: T, y: T| T::down(($g)(x.up(), y.up()))
        };
    }
    Ok(match op {
        Add => u.apply(f!(|x: T::W, y: T::W| x + y)),
        Sub => u.apply(f!(|x: T::W, y: T::W| x - y)),
        Mul => u.apply(f!(|x: T::W, y: T::W| x * y)),
        Div => u.apply(f!(|x: T::W, y: T::W| x / y)),
        Rem => u.apply(f!(Wide::rem)),
        Max => u.apply(f!(maximum)),
        Min => u.apply(f!(minimum)),
        // The whole-array functions of one pair (whole arrays and fused
        // tiles call them on slices; this is for the rest).
        Pow => u.apply(|x: T, y: T| one2(T::pow_into, x, y)),
        Atan2 => u.apply(|y: T, x: T| one2(T::atan2_into, y, x)),
        // CHLO extension ops: NextAfter on the element's own bits; the
        // special functions in f64 (elem::special), rounded once.
        NextAfter => {
            let nan = T::down(T::W::from_f64(f64::NAN)).bits();
            u.apply(move |x: T, y: T| {
                T::from_bits(special::next_after_bits(x.bits(), y.bits(), T::WIDTH, x.up().is_nan(), y.up().is_nan(), nan))
            })
        }
        Polygamma => u.apply(|n: T, x: T| T::down(T::W::from_f64(special::polygamma(n.up().to_f64(), x.up().to_f64())))),
        Zeta => u.apply(|x: T, q: T| T::down(T::W::from_f64(special::zeta(x.up().to_f64(), q.up().to_f64())))),
        _ => return Err(internal("integer op on floats")),
    })
}

fn complex_binary<P: Part>(op: BinaryOp, a: Side<Complex<P>>, b: Side<Complex<P>>) -> R<Vec<Complex<P>>> {
    use BinaryOp::*;
    let g: fn(cx::Z, cx::Z) -> cx::Z = match op {
        Add => |x, y| x + y,
        Sub => |x, y| x - y,
        Mul => cx::mul,
        Div => cx::div,
        Pow => cx::pow,
        Max => cx::max,
        Min => cx::min,
        _ => return Err(internal("op not defined on complex numbers")),
    };
    Ok(run2(a, b, |x, y| P::down(g(P::up(x), P::up(y)))))
}

/// Pred's binary ops: the logical ones, and Add/Mul/Max/Min as XLA reads
/// them on pred (or/and).
fn pred_binary(op: BinaryOp, a: Side<bool>, b: Side<bool>) -> R<Vec<bool>> {
    use BinaryOp as B;
    Ok(match op {
        B::Add | B::Max | B::Or => run2(a, b, |x, y| x | y),
        B::Mul | B::Min | B::And => run2(a, b, |x, y| x & y),
        B::Xor => run2(a, b, |x, y| x ^ y),
        _ => return Err(internal("op not defined on pred")),
    })
}

/// Complex(re, im) of two f32 or two f64 operands.
fn complex_of_parts(l: &ArrayLiteral, r: &ArrayLiteral, n: usize) -> R<Data> {
    Ok(match (&l.data, &r.data) {
        (Data::F32(re), Data::F32(im)) => Data::C64(run2(side(re, n), side(im, n), Complex::new)),
        (Data::F64(re), Data::F64(im)) => Data::C128(run2(side(re, n), side(im, n), Complex::new)),
        _ => return Err(internal("Complex of operands that are not f32 or f64")),
    })
}

/// Element-wise binary arithmetic with the broadcasting document's rules.
pub fn binary(
    op: BinaryOp,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    broadcast_dimensions: Option<&[i64]>,
    out: &ArrayShape,
) -> R<ArrayLiteral> {
    let (l, r) = (prepare(lhs, &out.dims, broadcast_dimensions), prepare(rhs, &out.dims, broadcast_dimensions));
    let n = out.element_count();
    if op == BinaryOp::Complex {
        return Ok(ArrayLiteral::with_shape(out.clone(), complex_of_parts(&l, &r, n)?));
    }
    let data = xlaref_reference::by_class2!((&l.data, &r.data), (p, q) => {
        pred: Data::Pred(pred_binary(op, side(p, n), side(q, n))?),
        int: Stored::wrap(int_binary(op, side(p, n), side(q, n))?),
        float: Stored::wrap(float_binary(op, side(p, n), side(q, n))?),
        complex: Stored::wrap(complex_binary(op, side(p, n), side(q, n))?),
    } else return Err(internal("operands of different types")));
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

fn ordered<T: Copy + Sync + PartialOrd>(d: Direction, a: Side<T>, b: Side<T>) -> Vec<bool> {
    match d {
        Direction::Eq => run2(a, b, |x, y| x == y),
        Direction::Ne => run2(a, b, |x, y| x != y),
        Direction::Lt => run2(a, b, |x, y| x < y),
        Direction::Le => run2(a, b, |x, y| x <= y),
        Direction::Gt => run2(a, b, |x, y| x > y),
        Direction::Ge => run2(a, b, |x, y| x >= y),
    }
}

fn float_compare<T: FFloat>(d: Direction, total: bool, a: Side<T>, b: Side<T>) -> Vec<bool> {
    if total {
        let key = |s: Side<T>| match s {
            Side::All(v) => Side2::All(par::map(v, order_key)),
            Side::One(x) => Side2::One(order_key(x)),
        };
        let (ka, kb) = (key(a), key(b));
        return ordered(d, ka.side(), kb.side());
    }
    let wide = |s: Side<T>| match s {
        Side::All(v) => Side2::All(par::map(v, |x| x.up().to_f64())),
        Side::One(x) => Side2::One(x.up().to_f64()),
    };
    let (wa, wb) = (wide(a), wide(b));
    ordered(d, wa.side(), wb.side())
}

/// An owned [`Side`].
enum Side2<T> {
    All(Vec<T>),
    One(T),
}
impl<T: Copy> Side2<T> {
    fn side(&self) -> Side<'_, T> {
        match self {
            Side2::All(v) => Side::All(v),
            Side2::One(x) => Side::One(*x),
        }
    }
}

/// Comparisons: IEEE for floats, or the total order; pred result.
pub fn compare(
    d: Direction,
    total: bool,
    lhs: &ArrayLiteral,
    rhs: &ArrayLiteral,
    broadcast_dimensions: Option<&[i64]>,
    out: &ArrayShape,
) -> R<ArrayLiteral> {
    let (l, r) = (prepare(lhs, &out.dims, broadcast_dimensions), prepare(rhs, &out.dims, broadcast_dimensions));
    let n = out.element_count();
    let result = xlaref_reference::by_class2!((&l.data, &r.data), (p, q) => {
        pred: ordered(d, side(p, n), side(q, n)),
        int: ordered(d, side(p, n), side(q, n)),
        float: float_compare(d, total, side(p, n), side(q, n)),
        // Complex numbers have no order: only Eq and Ne pass the verifier.
        complex: match d {
            Direction::Ne => run2(side(p, n), side(q, n), |x, y| x != y),
            _ => run2(side(p, n), side(q, n), |x, y| x == y),
        },
    } else return Err(internal("operands of different types")));
    Ok(ArrayLiteral::with_shape(out.clone(), Data::Pred(result)))
}

fn int_unary<T: FInt>(op: UnaryOp, v: &[T]) -> R<Vec<T>> {
    use UnaryOp::*;
    Ok(match op {
        Neg => par::map(v, T::wneg),
        Abs => par::map(v, T::wabs),
        Sign => par::map(v, T::signum),
        Not => par::map(v, T::bnot),
        PopulationCount => par::map(v, T::popcnt),
        Clz => par::map(v, T::clz),
        _ => return Err(internal("float op on integers")),
    })
}

fn float_unary<T: FFloat + xlaref_reference::literal::Stored>(op: UnaryOp, v: &[T]) -> R<Data> {
    use UnaryOp::*;
    let out: Vec<T> = match op {
        IsFinite => return Ok(Data::Pred(par::map(v, |x| x.up().is_finite()))),
        IsInf => return Ok(Data::Pred(par::map(v, |x| x.up().to_f64().is_infinite()))),
        IsPosInf => return Ok(Data::Pred(par::map(v, |x| x.up().to_f64() == f64::INFINITY))),
        IsNegInf => return Ok(Data::Pred(par::map(v, |x| x.up().to_f64() == f64::NEG_INFINITY))),
        Exp => T::exp_all(v),
        Tanh => T::tanh_all(v),
        Erf => T::erf_all(v),
        Erfc => T::erfc_all(v),
        Cbrt => T::cbrt_all(v),
        Sin => trig(v, Wide::sin_near, Wide::sin),
        Cos => trig(v, Wide::cos_near, Wide::cos),
        Tan => trig(v, Wide::tan_near, Wide::tan),
        Real | Conj => v.to_vec(),
        _ => float_unary_fn(op, Whole(v)).ok_or_else(|| internal("integer op on floats"))?,
    };
    Ok(T::wrap(out))
}

/// The element function of float unary op `op`, handed to `u`; None for
/// the ops that are not one function of one element to the same type
/// (the predicates, Exp, Erf, Erfc, Cbrt and the trigonometric
/// functions, which have whole-array kernels, and Real and Conj).
pub(crate) fn float_unary_fn<T: FFloat, U: UnaryUse<T>>(op: UnaryOp, u: U) -> Option<U::Out> {
    use UnaryOp::*;
    macro_rules! f {
        ($g:expr) => {
            move |x: T| T::down(($g)(x.up()))
        };
    }
    macro_rules! g {
        ($g:expr) => {
            move |x: T| T::down(T::W::from_f64(($g)(x.up().to_f64())))
        };
    }
    let sign_mask = 1u64 << (T::WIDTH - 1);
    // Transcendentals cost more than their memory traffic: `heavy`.
    Some(match op {
        Neg => u.apply(move |x: T| T::from_bits(x.bits() ^ sign_mask), false),
        Abs => u.apply(move |x: T| T::from_bits(x.bits() & !sign_mask), false),
        Sign => u.apply(f!(sign), false),
        Ceil => u.apply(f!(Wide::ceil), false),
        Floor => u.apply(f!(Wide::floor), false),
        Round => u.apply(f!(Wide::round), false),
        RoundNearestEven => u.apply(f!(Wide::round_ties_even), false),
        Sqrt => u.apply(f!(Wide::sqrt), false),
        Rsqrt => u.apply(f!(|x: T::W| T::W::ONE / x.sqrt()), false),
        Expm1 => u.apply(f!(Wide::exp_m1), true),
        Log => u.apply(f!(Wide::ln), true),
        Log1p => u.apply(f!(Wide::ln_1p), true),
        // In f64, rounded once (elem::f32_math for f32 and narrower):
        // composed in f32, `1 / (1 + e^-x)` is 2 ulps off near 0.5 (found by
        // the campaign, logistic(-0.00055)).
        Logistic => u.apply(f!(Wide::logistic), true),
        Tanh => u.apply(f!(Wide::tanh), true),
        // CHLO extension ops: evaluated in f64 (the platform's libm, or
        // elem::special), rounded once; narrow types round through f32.
        Sinh => u.apply(g!(f64::sinh), true),
        Cosh => u.apply(g!(f64::cosh), true),
        Asin => u.apply(g!(f64::asin), true),
        Acos => u.apply(g!(f64::acos), true),
        Atan => u.apply(g!(f64::atan), true),
        Asinh => u.apply(g!(special::asinh), true),
        Acosh => u.apply(g!(special::acosh), true),
        Atanh => u.apply(g!(f64::atanh), true),
        ErfInv => u.apply(g!(special::erf_inv), true),
        Lgamma => u.apply(g!(special::lgamma), true),
        Digamma => u.apply(g!(special::digamma), true),
        BesselI1e => u.apply(g!(special::bessel_i1e), true),
        Imag => u.apply(|_| T::down(T::W::ZERO), false),
        _ => return None,
    })
}

/// Sin, Cos or Tan: the vectorized `near` form, and `far` (the platform's
/// libm) where `|x|` is not below `Wide::TRIG_NEAR` (or is NaN), patched in
/// while the block is in L1.
fn trig<T: FFloat>(v: &[T], near: impl Fn(T::W) -> T::W + Sync, far: impl Fn(T::W) -> T::W + Sync) -> Vec<T> {
    let bound = T::W::TRIG_NEAR;
    par::map_heavy_patched(
        v,
        move |x| T::down(near(x.up())),
        move |x| {
            let w = x.up();
            (!(w < bound && w > -bound)).then(|| T::down(far(w)))
        },
    )
}

fn complex_unary<P: Part>(op: UnaryOp, v: &[Complex<P>]) -> R<Data>
where
    Complex<P>: Stored,
{
    use UnaryOp::*;
    let g: fn(cx::Z) -> cx::Z = match op {
        Abs => return Ok(P::wrap(par::map(v, |z| P::narrow(cx::abs(P::up(z)))))),
        Real => return Ok(P::wrap(par::map(v, |z| P::narrow(P::up(z).re)))),
        Imag => return Ok(P::wrap(par::map(v, |z| P::narrow(P::up(z).im)))),
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
        Sin => |z| z.sin(),
        Cos => |z| z.cos(),
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
        _ => return Err(internal("op not defined on complex numbers")),
    };
    Ok(Stored::wrap(par::map(v, |z| P::down(g(P::up(z))))))
}

/// Element-wise unary functions.
pub fn unary(op: UnaryOp, x: &ArrayLiteral, out: &ArrayShape) -> R<ArrayLiteral> {
    let data = xlaref_reference::by_class!(&x.data, v => {
        pred: match op {
            UnaryOp::Not => Data::Pred(par::map(v, |b| !b)),
            _ => return Err(internal("op not defined on pred")),
        },
        int: Stored::wrap(int_unary(op, v)?),
        float: float_unary(op, v)?,
        complex: complex_unary(op, v)?,
    });
    Ok(ArrayLiteral::with_shape(out.clone(), data))
}

/// Select: element-wise from on_true/on_false by pred, or wholesale for a
/// scalar pred or tuples.
pub fn select(pred: &ArrayLiteral, on_true: &Literal, on_false: &Literal) -> R<Literal> {
    let Data::Pred(p) = &pred.data else { return Err(internal("select predicate is not pred")) };
    let (Literal::Array(t), Literal::Array(f)) = (on_true, on_false) else {
        return Ok(if p.first().copied().unwrap_or(false) { on_true.clone() } else { on_false.clone() });
    };
    if p.len() == 1 && t.element_count() != 1 {
        return Ok(if p[0] { on_true.clone() } else { on_false.clone() });
    }
    fn choose<T: Stored + Send + Sync>(p: &[bool], a: &[T], b: &[T]) -> Data {
        T::wrap(par::zip3(p, a, b, |c, x, y| if c { x } else { y }))
    }
    let data = xlaref_reference::with_data2!((&t.data, &f.data), (a, b) => choose(p, a, b),
        else return Err(internal("select operands of different types")));
    Ok(Literal::Array(ArrayLiteral::with_shape(t.shape.clone(), data)))
}

/// Clamp(min, x, max) = Min(Max(min, x), max), scalar bounds kept scalar.
pub fn clamp(min: &ArrayLiteral, x: &ArrayLiteral, max: &ArrayLiteral) -> R<ArrayLiteral> {
    let raised = binary(BinaryOp::Max, min, x, None, &x.shape)?;
    binary(BinaryOp::Min, &raised, max, None, &x.shape)
}

/// ConvertElementType.
pub fn convert(x: &ArrayLiteral, to: ElementType) -> ArrayLiteral {
    ArrayLiteral::with_shape(x.shape.with_element_type(to), crate::elem::convert::convert(&x.data, to))
}
