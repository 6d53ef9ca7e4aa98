//! Rules of the element-wise ops: unary functions, binary arithmetic with
//! the broadcasting document's rules, comparisons, Select, Clamp and the
//! element type conversions.

use super::rules::*;
use crate::ir::{BinaryOp, Direction, UnaryOp};
use crate::types::{ArrayShape, ElementType, Shape, TypeClass};

declare_rules! {
    UNARY_TYPE = "unary.c1": "(XLA) The operand's element type is one the function is defined on (Ceil, Floor, Round take real floating-point types, Cos, Exp, Log, Sqrt floating-point or complex, Not pred or integers, PopulationCount and Clz integers, Abs, Neg and Sign anything but pred).";
    BINARY_SAME_TYPE = "binary.c1": "`lhs` and `rhs` are each an \"array of type T\": one element type.";
    BINARY_TYPE = "binary.c2": "(XLA) The element type is one the operation is defined on (Sub, Div and Pow not pred, Rem integers and real floats, Atan2 real floats, Complex f32 or f64, And, Or and Xor pred or integers, shifts integers).";
    COMPARE_SAME_TYPE = "compare.c1": "`lhs` and `rhs` are each an \"array of type T\": one element type.";
    COMPARE_COMPLEX = "compare.c2": "(XLA) Complex operands, which have no order, are compared only with Eq or Ne (or their TotalOrder forms).";
    DIFFERENT_RANKS = "broadcasting.c1": "Without `broadcast_dimensions`, \"operations between arrays of different ranks are *not* supported, unless one of the operands is a scalar\".";
    BD_LENGTH = "broadcasting.c2": "`broadcast_dimensions` \"maps the dimensions of the lower-dimensional shape\": one entry per dimension of the lower-rank operand.";
    BD_RANGE = "broadcasting.c3": "`broadcast_dimensions` maps them \"to the dimensions of the higher-dimensional shape\": each entry is a dimension of the higher-rank operand.";
    BD_SIZE = "broadcasting.c4": "A lower-rank dimension \"has to be equal to the matching dimension of the higher-rank array\", or one of the two is 1 (broadcast composition).";
    BD_INCREASING = "broadcasting.c5": "\"The order of broadcast dimensions has to be strictly increasing.\"";
    DEGENERATE = "broadcasting.c6": "Same-rank shapes must be compatible: two dimensions are compatible if \"They are equal, or One of them is 1\".";
    BD_SAME_RANK = "broadcasting.c7": "(XLA) Operands of the same rank take an empty or identity `broadcast_dimensions`.";
    SELECT_PRED_TYPE = "select.c1": "`pred` is an \"array of type PRED\".";
    SELECT_SAME_SHAPE = "select.c2": "\"The arrays `on_true` and `on_false` must have the same shape.\"";
    SELECT_PRED_DIMS = "select.c3": "\"The array `pred` must have the same dimensionality as `on_true` and `on_false`\", or \"`pred` can be a scalar\".";
    SELECT_TUPLE_PRED = "select.c4": "\"If `on_true` and `on_false` are tuples ... then `pred` has to be a scalar of type `PRED`.\"";
    CLAMP_TYPE = "clamp.c1": "`min`, `operand` and `max` are each an \"array of type T\": one element type.";
    CLAMP_SHAPE = "clamp.c2": "\"All three arrays must be the same shape\", except that \"`min` and/or `max` can be a scalar of type `T`\".";
    CLAMP_ORDERED = "clamp.c3": "(XLA) The element type has an order: not complex.";
    BITCAST_WIDER = "bitcast_convert_type.c1": "\"for `B' > B` the instruction requires the last logical dimension of the input shape to be equal to `B'/B`\".";
    BITCAST_PRED = "bitcast_convert_type.c2": "(XLA) pred bitcasts only to pred: it has no bit pattern beyond 0 and 1.";
    BITCAST_COMPLEX = "bitcast_convert_type.c3": "(XLA) Complex and real element types do not bitcast into each other.";
    REDUCE_PRECISION_TYPE = "reduce_precision.c1": "`operand` is an \"array of floating-point type `T`\" (a real one).";
    EXPONENT_BITS = "reduce_precision.c2": "The lower-precision format \"must have at least one exponent bit\".";
    MANTISSA_BITS = "reduce_precision.c3": "The lower-precision format \"must have a non-negative number of mantissa bits\".";
}

/// Which element types a unary function accepts, and its result type.
fn unary_result(op: UnaryOp, t: ElementType) -> Check<ElementType> {
    use UnaryOp::*;
    let class = t.class();
    let ok = |allowed: bool, kinds: &str| element_type_is(&UNARY_TYPE, t, allowed, "operand", kinds).map(|_| t);
    match op {
        Abs => {
            element_type_is(&UNARY_TYPE, t, !t.is_pred(), "operand", "an integer, floating-point or complex type")?;
            Ok(t.component_type())
        }
        Neg | Sign => ok(!t.is_pred(), "an integer, floating-point or complex type"),
        Ceil | Floor | Round | RoundNearestEven | Cbrt | Erf => ok(t.is_float(), "a floating-point type"),
        Cos | Sin | Tan | Tanh | Exp | Expm1 | Log | Log1p | Logistic | Sqrt | Rsqrt => {
            ok(t.is_floating(), "a floating-point or complex type")
        }
        // CHLO extension ops: XLA's math library defines the hyperbolic and
        // inverse trigonometric functions on real and complex types, the
        // special functions on real floating-point types only.
        Sinh | Cosh | Asin | Acos | Atan | Asinh | Acosh | Atanh => ok(t.is_floating(), "a floating-point or complex type"),
        ErfInv | Erfc | Lgamma | Digamma | BesselI1e => ok(t.is_float(), "a real floating-point type"),
        IsInf | IsPosInf | IsNegInf => {
            element_type_is(&UNARY_TYPE, t, t.is_float(), "operand", "a real floating-point type")?;
            Ok(ElementType::Pred)
        }
        Not => ok(class == TypeClass::Pred || t.is_integer(), "pred or an integer type"),
        PopulationCount | Clz => ok(t.is_integer(), "an integer type"),
        IsFinite => {
            element_type_is(&UNARY_TYPE, t, t.is_float(), "operand", "a floating-point type")?;
            Ok(ElementType::Pred)
        }
        Real | Imag => {
            element_type_is(&UNARY_TYPE, t, t.is_floating(), "operand", "a floating-point or complex type")?;
            Ok(t.component_type())
        }
        Conj => ok(t.is_floating(), "a floating-point or complex type"),
    }
}

/// Element-wise unary functions: same dimensions, type by [`unary_result`].
pub fn unary(op: UnaryOp, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    Ok(Shape::Array(a.with_element_type(unary_result(op, a.element_type)?)))
}

/// Which element types a binary arithmetic op accepts.
fn binary_types(op: BinaryOp, t: ElementType) -> Check {
    use BinaryOp::*;
    let is = |allowed: bool, kinds: &str| element_type_is(&BINARY_TYPE, t, allowed, "operands", kinds);
    match op {
        // On pred, Add and Max are OR and Mul and Min are AND (as XLA).
        Add | Mul => Ok(()),
        // Complex Max/Min order lexicographically (real, then imaginary), as
        // JAX's lax.max/min on XLA CPU and StableHLO's maximum/minimum.
        Max | Min => Ok(()),
        Sub | Div | Pow => is(!t.is_pred(), "an integer, floating-point or complex type"),
        Rem => is(t.is_integer() || t.is_float(), "an integer or floating-point type"),
        Atan2 => is(t.is_float(), "a floating-point type"),
        // CHLO extension ops (XLA's math library): real floating-point only.
        NextAfter | Polygamma | Zeta => is(t.is_float(), "a real floating-point type"),
        Complex => is(matches!(t, ElementType::F32 | ElementType::F64), "f32 or f64"),
        And | Or | Xor => is(t.is_pred() || t.is_integer(), "pred or an integer type"),
        ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => is(t.is_integer(), "an integer type"),
    }
}

/// Binary arithmetic: operands of one element type whose shapes broadcast
/// (broadcasting document); the result has the broadcast dimensions.
pub fn binary(op: BinaryOp, broadcast_dimensions: Option<&[i64]>, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    same_element_type(&BINARY_SAME_TYPE, lhs, rhs, "lhs and rhs")?;
    binary_types(op, lhs.element_type)?;
    let dims = broadcast_shapes(lhs, rhs, broadcast_dimensions)?;
    let t = match op {
        BinaryOp::Complex => lhs.element_type.complex_of().unwrap_or(lhs.element_type),
        _ => lhs.element_type,
    };
    Ok(Shape::array(t, dims))
}

/// Comparisons: like binary arithmetic, with a pred result. Complex numbers
/// have no order: only Eq and Ne (and their TotalOrder forms) accept them.
pub fn compare(direction: Direction, total_order: bool, broadcast_dimensions: Option<&[i64]>, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    same_element_type(&COMPARE_SAME_TYPE, lhs, rhs, "lhs and rhs")?;
    let t = lhs.element_type;
    // The TotalOrder variants order real floats; on complex numbers, which
    // have no order, EqTotalOrder and NeTotalOrder are plain Eq and Ne.
    let _ = total_order;
    if t.is_complex() && !matches!(direction, Direction::Eq | Direction::Ne) {
        fail!(COMPARE_COMPLEX, "complex operands ({t}) can only be compared with Eq or Ne");
    }
    let dims = broadcast_shapes(lhs, rhs, broadcast_dimensions)?;
    Ok(Shape::array(ElementType::Pred, dims))
}

/// The broadcasting document: without `broadcast_dimensions`, same-rank
/// shapes broadcast along degenerate (size-1) dimensions and a scalar
/// broadcasts to anything; with it, the lower-rank operand's dimension `i`
/// is matched to dimension `broadcast_dimensions[i]` of the higher-rank one
/// (strictly increasing), the rest filled with 1s, then degenerate
/// broadcasting applies ("broadcast composition").
pub fn broadcast_shapes(lhs: &ArrayShape, rhs: &ArrayShape, broadcast_dimensions: Option<&[i64]>) -> Check<Vec<i64>> {
    let (low, high) = if lhs.rank() <= rhs.rank() { (lhs, rhs) } else { (rhs, lhs) };
    let expanded = match broadcast_dimensions {
        Some(bd) if !bd.is_empty() || low.rank() != high.rank() => {
            if low.rank() == high.rank() {
                if bd.len() != low.rank() || bd.iter().enumerate().any(|(i, &d)| d != i as i64) {
                    fail!(BD_SAME_RANK, "operands have the same rank; broadcast_dimensions must be empty or the identity, got {bd:?}");
                }
                low.dims.clone()
            } else {
                expand_with(low, high, bd)?
            }
        }
        _ if low.rank() == high.rank() => low.dims.clone(),
        _ if low.is_scalar() => vec![1; high.rank()],
        _ => {
            fail!(DIFFERENT_RANKS, "operands of different ranks ({} and {}) need broadcast_dimensions unless one is a scalar", lhs, rhs)
        }
    };
    degenerate_broadcast(&expanded, &high.dims)
}

/// Maps the lower-rank operand into the higher rank by `bd`, 1 elsewhere.
fn expand_with(low: &ArrayShape, high: &ArrayShape, bd: &[i64]) -> Check<Vec<i64>> {
    length(&BD_LENGTH, bd, low.rank(), "broadcast_dimensions", "the lower-rank operand")?;
    dims_in_range(&BD_RANGE, bd, high.rank(), "broadcast_dimensions")?;
    strictly_increasing(&BD_INCREASING, bd, "broadcast_dimensions")?;
    let mut expanded = vec![1; high.rank()];
    for (i, &d) in bd.iter().enumerate() {
        let (l, h) = (low.dims[i], high.dims[d as usize]);
        if l != h && l != 1 && h != 1 {
            fail!(BD_SIZE, "broadcast_dimensions maps dimension {i} (size {l}) to dimension {d} (size {h}); sizes must match or one be 1");
        }
        expanded[d as usize] = l;
    }
    Ok(expanded)
}

/// Same-rank shapes are compatible when each pair of sizes is equal or one
/// of them is 1; the result takes the larger size.
pub fn degenerate_broadcast(a: &[i64], b: &[i64]) -> Check<Vec<i64>> {
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (&x, &y))| match (x, y) {
            _ if x == y => Ok(x),
            (1, _) => Ok(y),
            (_, 1) => Ok(x),
            _ => Err(broken(&DEGENERATE, format!("shapes {a:?} and {b:?} are incompatible in dimension {i} ({x} vs {y})"))),
        })
        .collect()
}

/// Select: `pred` has the shape of `on_true` (or is a scalar); `on_true` and
/// `on_false` have one shape. Tuples select as wholes, with a scalar pred.
pub fn select(operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 3)?;
    let pred = array(operands[0], "pred")?;
    element_type_is(&SELECT_PRED_TYPE, pred.element_type, pred.element_type.is_pred(), "pred", "pred")?;
    let (on_true, on_false) = (operands[1], operands[2]);
    if !on_true.compatible(on_false) {
        fail!(SELECT_SAME_SHAPE, "on_true and on_false must have the same shape, got {on_true} and {on_false}");
    }
    match on_true {
        Shape::Array(t) if !pred.is_scalar() && pred.dims != t.dims => {
            Err(broken(&SELECT_PRED_DIMS, format!("pred has shape {pred} but on_true has {t}; pred must match it or be a scalar")))
        }
        Shape::Array(_) => Ok(on_true.clone()),
        _ if !pred.is_scalar() => Err(broken(&SELECT_TUPLE_PRED, format!("selecting between tuples needs a scalar pred, got {pred}"))),
        _ => Ok(on_true.clone()),
    }
}

/// Clamp(min, operand, max): min and max have the operand's shape or are
/// scalars, all of one element type (complex has no order).
pub fn clamp(operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 3)?;
    let min = array(operands[0], "min")?;
    let x = array(operands[1], "operand")?;
    let max = array(operands[2], "max")?;
    same_element_type(&CLAMP_TYPE, min, x, "min and operand")?;
    same_element_type(&CLAMP_TYPE, max, x, "max and operand")?;
    element_type_is(&CLAMP_ORDERED, x.element_type, !x.element_type.is_complex(), "operand", "a type with an order (not complex)")?;
    for (bound, name) in [(min, "min"), (max, "max")] {
        if !bound.is_scalar() && bound.dims != x.dims {
            fail!(CLAMP_SHAPE, "{name} has shape {bound}; it must be a scalar or have the operand's shape {x}");
        }
    }
    Ok(Shape::Array(x.clone()))
}

/// ConvertElementType: any array to any element type, same dimensions.
pub fn convert(new_element_type: ElementType, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    Ok(Shape::Array(a.with_element_type(new_element_type)))
}

/// BitcastConvertType — document §BitcastConvertType: equal widths keep the
/// dimensions; a narrower target adds a minor dimension of size B/B'; a
/// wider one drops a minor dimension that must be B'/B. As XLA: real and
/// complex types do not mix, and pred (no defined bit pattern beyond 0/1)
/// only bitcasts to itself.
pub fn bitcast_convert(new_element_type: ElementType, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    let (from, to) = (a.element_type, new_element_type);
    if from.is_pred() != to.is_pred() {
        fail!(BITCAST_PRED, "BitcastConvertType does not convert to or from pred");
    }
    if from.is_complex() != to.is_complex() {
        fail!(BITCAST_COMPLEX, "BitcastConvertType does not convert between complex and real types ({from} => {to})");
    }
    let (b, b2) = (from.byte_width() as i64, to.byte_width() as i64);
    let mut dims = a.dims.clone();
    if b > b2 {
        dims.push(b / b2);
    } else if b2 > b {
        match dims.last() {
            Some(&last) if last == b2 / b => {
                dims.pop();
            }
            _ => {
                fail!(BITCAST_WIDER, "converting {from} to the wider {to} needs a last dimension of size {}, operand is {a}", b2 / b)
            }
        }
    }
    Ok(Shape::array(to, dims))
}

/// ReducePrecision: a real floating-point array; at least one exponent bit,
/// no negative mantissa bits.
pub fn reduce_precision(exponent_bits: i64, mantissa_bits: i64, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 1)?;
    let a = array(operands[0], "operand")?;
    element_type_is(&REDUCE_PRECISION_TYPE, a.element_type, a.element_type.is_float(), "operand", "a floating-point type")?;
    if exponent_bits < 1 {
        fail!(EXPONENT_BITS, "exponent_bits is {exponent_bits}; it must be at least 1");
    }
    if mantissa_bits < 0 {
        fail!(MANTISSA_BITS, "mantissa_bits is {mantissa_bits}; it must not be negative");
    }
    Ok(Shape::Array(a.clone()))
}
