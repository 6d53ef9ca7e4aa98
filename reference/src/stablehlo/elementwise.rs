//! Element-wise ops: the unary and binary name tables, comparisons, Select,
//! Clamp and the conversions. The broadcasting document's implicit forms
//! (a scalar operand, `broadcast_dimensions`, degenerate size-1 dimensions)
//! become an explicit `stablehlo.broadcast_in_dim` of the operand first:
//! StableHLO's element-wise ops take operands of the result's shape.

use super::emit::{At, FuncWriter, Leaf, Val};
use super::{Fail, Res};
use crate::ir::{BinaryOp, Direction, UnaryOp};
use crate::types::{ArrayShape, ElementType, Shape};

/// Unary ops by their xla-json name. One line per op: ops that are not
/// StableHLO ops come from CHLO, which StableHLO's tools and JAX lower.
const UNARY: &[(&str, &str)] = &[
    ("Abs", "stablehlo.abs"),
    ("Cbrt", "stablehlo.cbrt"),
    ("Ceil", "stablehlo.ceil"),
    ("Clz", "stablehlo.count_leading_zeros"),
    // Conj has no StableHLO op; `unary` writes it as real/imag/negate/complex.
    ("Conj", "chlo.conj"),
    ("Cos", "stablehlo.cosine"),
    // StableHLO has no erf op.
    ("Erf", "chlo.erf"),
    ("Exp", "stablehlo.exponential"),
    ("Expm1", "stablehlo.exponential_minus_one"),
    ("Floor", "stablehlo.floor"),
    ("Imag", "stablehlo.imag"),
    ("IsFinite", "stablehlo.is_finite"),
    ("Log", "stablehlo.log"),
    ("Log1p", "stablehlo.log_plus_one"),
    ("Logistic", "stablehlo.logistic"),
    ("Neg", "stablehlo.negate"),
    ("Not", "stablehlo.not"),
    ("PopulationCount", "stablehlo.popcnt"),
    ("Real", "stablehlo.real"),
    ("Round", "stablehlo.round_nearest_afz"),
    ("RoundNearestEven", "stablehlo.round_nearest_even"),
    ("Rsqrt", "stablehlo.rsqrt"),
    ("Sign", "stablehlo.sign"),
    ("Sin", "stablehlo.sine"),
    ("Sqrt", "stablehlo.sqrt"),
    ("Tan", "stablehlo.tan"),
    ("Tanh", "stablehlo.tanh"),
    // The CHLO extension ops (docs/format.md).
    ("Sinh", "chlo.sinh"),
    ("Cosh", "chlo.cosh"),
    ("Asin", "chlo.asin"),
    ("Acos", "chlo.acos"),
    ("Atan", "chlo.atan"),
    ("Asinh", "chlo.asinh"),
    ("Acosh", "chlo.acosh"),
    ("Atanh", "chlo.atanh"),
    ("ErfInv", "chlo.erf_inv"),
    ("Erfc", "chlo.erfc"),
    ("Lgamma", "chlo.lgamma"),
    ("Digamma", "chlo.digamma"),
    ("BesselI1e", "chlo.bessel_i1e"),
    ("IsInf", "chlo.is_inf"),
    ("IsPosInf", "chlo.is_pos_inf"),
    ("IsNegInf", "chlo.is_neg_inf"),
];

/// Binary ops by their xla-json name.
const BINARY: &[(&str, &str)] = &[
    ("Add", "stablehlo.add"),
    ("Sub", "stablehlo.subtract"),
    ("Mul", "stablehlo.multiply"),
    ("Div", "stablehlo.divide"),
    ("Rem", "stablehlo.remainder"),
    ("Max", "stablehlo.maximum"),
    ("Min", "stablehlo.minimum"),
    ("Pow", "stablehlo.power"),
    ("Atan2", "stablehlo.atan2"),
    ("Complex", "stablehlo.complex"),
    ("And", "stablehlo.and"),
    ("Or", "stablehlo.or"),
    ("Xor", "stablehlo.xor"),
    ("ShiftLeft", "stablehlo.shift_left"),
    ("ShiftRightArithmetic", "stablehlo.shift_right_arithmetic"),
    ("ShiftRightLogical", "stablehlo.shift_right_logical"),
    // The CHLO extension ops (docs/format.md).
    ("NextAfter", "chlo.next_after"),
    ("Polygamma", "chlo.polygamma"),
    ("Zeta", "chlo.zeta"),
];

fn lookup(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, op)| *op)
}

/// The MLIR op a unary op is written as (`None`: not in the table).
pub fn unary_op_name(op: UnaryOp) -> Option<&'static str> {
    lookup(UNARY, op.name())
}

/// The MLIR op a binary op is written as (`None`: not in the table).
pub fn binary_op_name(op: BinaryOp) -> Option<&'static str> {
    lookup(BINARY, op.name())
}

fn one(operands: &[Val], n: usize) -> Res<&[Val]> {
    if operands.len() != n {
        return Err(Fail::internal(format!("expected {n} operands, got {}", operands.len())));
    }
    Ok(operands)
}

pub fn unary(w: &mut FuncWriter, at: &At, op: UnaryOp, operands: &[Val]) -> Res<Val> {
    let operands = one(operands, 1)?;
    let (x, a) = w.array(&operands[0])?;
    let result = dynamic_like(at.shape(), &[&x]);
    if op == UnaryOp::Conj {
        return conj(w, x, &a);
    }
    // stablehlo.abs and sign take signed types only; on unsigned ones Abs
    // is the identity and Sign is min(x, 1).
    if a.element_type.is_unsigned_integer() && matches!(op, UnaryOp::Abs | UnaryOp::Sign) {
        if op == UnaryOp::Abs {
            return Ok(x.val());
        }
        let one = super::literal::scalar_constant(w, a.element_type, "1");
        let one = broadcast_to(w, one, &ArrayShape::scalar(a.element_type), &a.dims, &[]);
        return Ok(w.op1("stablehlo.minimum", &[x, one], "", &[], result).val());
    }
    let name = unary_op_name(op).ok_or_else(|| Fail::no_op(format!("no StableHLO or CHLO op is known for {}", op.name())))?;
    Ok(w.op1(name, &[x], "", &[], result).val())
}

/// Conj: the identity on real types; on complex ones the real part with
/// the negated imaginary part (StableHLO has no conj op; JAX writes it so).
fn conj(w: &mut FuncWriter, x: Leaf, a: &ArrayShape) -> Res<Val> {
    if !a.element_type.is_complex() {
        return Ok(x.val());
    }
    let part = Shape::Array(a.with_element_type(a.element_type.component_type()));
    let re = w.op1("stablehlo.real", std::slice::from_ref(&x), "", &[], part.clone());
    let im = w.op1("stablehlo.imag", &[x], "", &[], part.clone());
    let neg = w.op1("stablehlo.negate", &[im], "", &[], part);
    Ok(w.op1("stablehlo.complex", &[re, neg], "", &[], Shape::Array(a.clone())).val())
}

/// The result shape with the bounded dynamic dimensions of its operands.
/// The verifier's shapes leave dynamism to the values (a size travels
/// with the array at run time), but a StableHLO type says it: an
/// element-wise result is dynamic where an operand of its dimensions is.
pub fn dynamic_like(result: &Shape, operands: &[&Leaf]) -> Shape {
    let Shape::Array(out) = result else { return result.clone() };
    let mut out = out.clone();
    out.dynamic.resize(out.dims.len(), false);
    for o in operands {
        if let Shape::Array(a) = &o.shape {
            if a.dims == out.dims {
                for (d, &dynamic) in a.dynamic.iter().enumerate() {
                    out.dynamic[d] |= dynamic;
                }
            }
        }
    }
    Shape::Array(out)
}

/// Broadcasts an operand of an implicitly broadcasting op to `out` dims:
/// `map[i]` is the output dimension of operand dimension `i`.
pub fn broadcast_to(w: &mut FuncWriter, x: Leaf, a: &ArrayShape, out: &[i64], map: &[i64]) -> Leaf {
    if a.dims == out {
        return x;
    }
    let shape = Shape::array(a.element_type, out.to_vec());
    let props = format!("broadcast_dimensions = {}", super::types::i64_array(map));
    w.op1("stablehlo.broadcast_in_dim", &[x], &props, &[], shape)
}

/// Both operands of a binary op or comparison at the result's dimensions,
/// as the broadcasting document places them (see
/// `verify::elementwise::broadcast_shapes`).
fn broadcast_pair(w: &mut FuncWriter, at: &At, bd: Option<&[i64]>, operands: &[Val]) -> Res<(Leaf, Leaf)> {
    let operands = one(operands, 2)?;
    let out = at.array()?.dims.clone();
    let (l, la) = w.array(&operands[0])?;
    let (r, ra) = w.array(&operands[1])?;
    // A lower-rank operand's dimension i goes to `broadcast_dimensions[i]`
    // (a scalar has none); a same-rank one maps to itself, and
    // broadcast_in_dim stretches its size-1 dimensions.
    let map_of = |a: &ArrayShape| -> Vec<i64> {
        match bd {
            Some(bd) if a.rank() < out.len() && bd.len() == a.rank() => bd.to_vec(),
            _ => (0..a.rank() as i64).collect(),
        }
    };
    let (lmap, rmap) = (map_of(&la), map_of(&ra));
    let l = broadcast_to(w, l, &la, &out, &lmap);
    let r = broadcast_to(w, r, &ra, &out, &rmap);
    Ok((l, r))
}

pub fn binary(w: &mut FuncWriter, at: &At, op: BinaryOp, bd: Option<&[i64]>, operands: &[Val]) -> Res<Val> {
    let name = binary_op_name(op).ok_or_else(|| Fail::no_op(format!("no StableHLO or CHLO op is known for {}", op.name())))?;
    let (l, r) = broadcast_pair(w, at, bd, operands)?;
    let result = dynamic_like(at.shape(), &[&l, &r]);
    Ok(w.op1(name, &[l, r], "", &[], result).val())
}

/// `compare_type`: the total order where asked for on real floats; the
/// kind of the element type otherwise.
pub fn compare_type(t: ElementType, total_order: bool) -> &'static str {
    if t.is_float() && total_order {
        "TOTALORDER"
    } else if t.is_floating() {
        "FLOAT"
    } else if t.is_signed_integer() {
        "SIGNED"
    } else {
        "UNSIGNED"
    }
}

/// The properties of a `stablehlo.compare`.
pub fn compare_props(direction: Direction, t: ElementType, total_order: bool) -> String {
    format!(
        "compare_type = #stablehlo<comparison_type {}>, comparison_direction = #stablehlo<comparison_direction {}>",
        compare_type(t, total_order),
        direction.name()
    )
}

pub fn compare(w: &mut FuncWriter, at: &At, direction: Direction, total_order: bool, bd: Option<&[i64]>, operands: &[Val]) -> Res<Val> {
    let (l, r) = broadcast_pair(w, at, bd, operands)?;
    let t = match &l.shape {
        Shape::Array(a) => a.element_type,
        other => return Err(Fail::internal(format!("compare of {other}"))),
    };
    let result = dynamic_like(at.shape(), &[&l, &r]);
    Ok(w.op1("stablehlo.compare", &[l, r], &compare_props(direction, t, total_order), &[], result).val())
}

/// Select. A scalar pred over arrays is StableHLO's own form; selecting
/// between tuples (whole values, by a scalar pred) is a `stablehlo.if`.
pub fn select(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    let operands = one(operands, 3)?;
    let (pred, _) = w.array(&operands[0])?;
    if at.shape().is_array() {
        let (t, _) = w.array(&operands[1])?;
        let (f, _) = w.array(&operands[2])?;
        let result = dynamic_like(at.shape(), &[&pred, &t, &f]);
        return Ok(w.op1("stablehlo.select", &[pred, t, f], "", &[], result).val());
    }
    let shape = at.shape().clone();
    let on_true = operands[1].clone();
    let on_false = operands[2].clone();
    let then_region = w.region(&[], |w, _| w.leaves(&on_true))?;
    let else_region = w.region(&[], |w, _| w.leaves(&on_false))?;
    let types = super::emit::flat_leaves(&shape);
    let results = w.op("stablehlo.if", &[pred], "", &[then_region, else_region], &types);
    Ok(super::emit::rebuild(&shape, &mut results.into_iter()))
}

/// Clamp(min, operand, max): StableHLO takes scalar bounds as XLA does.
pub fn clamp(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    let operands = one(operands, 3)?;
    let mut leaves = Vec::with_capacity(3);
    for v in operands {
        leaves.push(w.array(v)?.0);
    }
    let result = dynamic_like(at.shape(), &leaves.iter().collect::<Vec<_>>());
    Ok(w.op1("stablehlo.clamp", &leaves, "", &[], result).val())
}

/// ConvertElementType and BitcastConvertType: the result type says it all.
pub fn convert(w: &mut FuncWriter, at: &At, name: &str, operands: &[Val]) -> Res<Val> {
    let operands = one(operands, 1)?;
    let (x, _) = w.array(&operands[0])?;
    let result = dynamic_like(at.shape(), &[&x]);
    Ok(w.op1(name, &[x], "", &[], result).val())
}

pub fn reduce_precision(w: &mut FuncWriter, at: &At, exponent_bits: i64, mantissa_bits: i64, operands: &[Val]) -> Res<Val> {
    let operands = one(operands, 1)?;
    let (x, _) = w.array(&operands[0])?;
    let (e, m) = match (i32::try_from(exponent_bits), i32::try_from(mantissa_bits)) {
        (Ok(e), Ok(m)) => (e, m),
        _ => return Err(Fail::unsupported(format!("exponent_bits {exponent_bits} or mantissa_bits {mantissa_bits} does not fit i32"))),
    };
    let props = format!("exponent_bits = {e} : i32, mantissa_bits = {m} : i32");
    let result = dynamic_like(at.shape(), &[&x]);
    Ok(w.op1("stablehlo.reduce_precision", &[x], &props, &[], result).val())
}
