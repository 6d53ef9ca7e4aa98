//! Generators for the element-wise ops: unary and binary functions,
//! comparisons, Select, Clamp, conversions, ReducePrecision, Map, and
//! chains of element-wise ops (programs of several instructions).

use proptest::prelude::*;
use serde_json::json;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert as convert_data;
use xlaref_reference::types::ElementType;

use super::values::{array, dims, literal, one_of, types, COMPLEX, FLOATS, INTS, SMALL_FLOATS};
use super::{Builder, Program};

use ElementType as E;

/// The element types each unary op accepts.
fn unary_types(op: &str) -> Vec<ElementType> {
    let signed = [E::S8, E::S16, E::S32, E::S64];
    match op {
        "Ceil" | "Floor" | "Round" | "RoundNearestEven" | "IsFinite" | "Cbrt" | "Erf" | "Logistic" => [&FLOATS[..], &SMALL_FLOATS].concat(),
        "Exp" | "Expm1" | "Log" | "Log1p" | "Sin" | "Cos" | "Tan" | "Tanh" | "Sqrt" | "Rsqrt" => [&FLOATS[..], &COMPLEX].concat(),
        "Abs" | "Neg" | "Sign" => [&signed[..], &FLOATS, &COMPLEX].concat(),
        "Not" => [&INTS[..], &[E::Pred]].concat(),
        "PopulationCount" | "Clz" => INTS.to_vec(),
        // CHLO extension ops
        "Sinh" | "Cosh" | "Asin" | "Acos" | "Atan" | "Asinh" | "Acosh" | "Atanh" => [&FLOATS[..], &COMPLEX].concat(),
        "ErfInv" | "Erfc" | "Lgamma" | "Digamma" | "BesselI1e" | "IsInf" | "IsPosInf" | "IsNegInf" => [&FLOATS[..], &SMALL_FLOATS].concat(),
        _ => COMPLEX.to_vec(), // Real, Imag, Conj
    }
}

const UNARY: [&str; 43] = [
    "Abs",
    "Cbrt",
    "Ceil",
    "Clz",
    "Conj",
    "Cos",
    "Erf",
    "Exp",
    "Expm1",
    "Floor",
    "Imag",
    "IsFinite",
    "Log",
    "Log1p",
    "Logistic",
    "Neg",
    "Not",
    "PopulationCount",
    "Real",
    "Round",
    "RoundNearestEven",
    "Rsqrt",
    "Sign",
    "Sin",
    "Sqrt",
    "Tan",
    "Tanh",
    "Sinh",
    "Cosh",
    "Asin",
    "Acos",
    "Atan",
    "Asinh",
    "Acosh",
    "Atanh",
    "ErfInv",
    "Erfc",
    "Lgamma",
    "Digamma",
    "BesselI1e",
    "IsInf",
    "IsPosInf",
    "IsNegInf",
];

fn unary(op: &'static str) -> BoxedStrategy<Program> {
    (one_of(&unary_types(op)), dims(0..=3, 5))
        .prop_flat_map(move |(t, d)| literal(t, d))
        .prop_map(move |x| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push(op, &[&p], json!({}));
            b.finish(op)
        })
        .boxed()
}

/// The element types each binary op accepts.
fn binary_types(op: &str) -> Vec<ElementType> {
    match op {
        "Add" | "Sub" | "Mul" => [&INTS[..], &FLOATS, &SMALL_FLOATS, &COMPLEX].concat(),
        "Div" => [&INTS[..], &FLOATS, &COMPLEX].concat(),
        "Rem" | "Max" | "Min" => [&INTS[..], &FLOATS].concat(),
        "Pow" => [&FLOATS[..], &COMPLEX].concat(),
        "Atan2" => FLOATS.to_vec(),
        "NextAfter" | "Zeta" => [&FLOATS[..], &SMALL_FLOATS].concat(),
        "Complex" => vec![E::F32, E::F64],
        "And" | "Or" | "Xor" => [&INTS[..], &[E::Pred]].concat(),
        _ => INTS.to_vec(), // shifts
    }
}

const BINARY: [&str; 18] = [
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Rem",
    "Max",
    "Min",
    "Pow",
    "Atan2",
    "Complex",
    "And",
    "Or",
    "Xor",
    "ShiftLeft",
    "ShiftRightArithmetic",
    "ShiftRightLogical",
    "NextAfter",
    "Zeta",
];

/// Polygamma(n, x): `n` mostly a small non-negative integer (the orders
/// where the function is defined), sometimes any value (NaN then).
fn polygamma() -> BoxedStrategy<Program> {
    (one_of(&[&FLOATS[..], &SMALL_FLOATS].concat()), dims(0..=2, 4), any::<bool>())
        .prop_flat_map(|(t, d, integer_orders)| {
            let n = d.iter().product::<i64>() as usize;
            let shape = d.clone();
            let orders = if integer_orders {
                proptest::collection::vec((0..=5i64).prop_map(|k| k as f64), n)
                    .prop_map(move |v| Literal::Array(ArrayLiteral::new(shape.clone(), convert_data(&Data::F64(v), t))))
                    .boxed()
            } else {
                literal(t, d.clone())
            };
            (orders, literal(t, d))
        })
        .prop_map(|(n, x)| two_operand_program("Polygamma", n, x, None))
        .boxed()
}

/// Two operands of one shape, or (one time in four) the lower-rank operand
/// broadcast with `broadcast_dimensions`.
fn binary(op: &'static str) -> BoxedStrategy<Program> {
    two_operands(binary_types(op)).prop_map(move |(x, y, bd)| two_operand_program(op, x, y, bd)).boxed()
}

fn two_operand_program(op: &'static str, x: Literal, y: Literal, broadcast_dimensions: Option<Vec<i64>>) -> Program {
    let mut b = Builder::default();
    let (p, q) = (b.param(x), b.param(y));
    let attrs = match broadcast_dimensions {
        Some(bd) => json!({"broadcast_dimensions": bd}),
        None => json!({}),
    };
    b.push(op, &[&p, &q], attrs);
    b.finish(op)
}

fn two_operands(types: Vec<ElementType>) -> BoxedStrategy<(Literal, Literal, Option<Vec<i64>>)> {
    (one_of(&types), dims(0..=3, 4), any::<bool>(), any::<prop::sample::Index>())
        .prop_flat_map(|(t, d, broadcast, pick)| {
            if broadcast && !d.is_empty() {
                // y has one of x's dimensions, mapped by broadcast_dimensions.
                let k = pick.index(d.len());
                (literal(t, d.clone()), literal(t, vec![d[k]]), Just(Some(vec![k as i64]))).boxed()
            } else {
                (literal(t, d.clone()), literal(t, d), Just(None)).boxed()
            }
        })
        .boxed()
}

const COMPARE: [&str; 12] =
    ["Eq", "Ne", "Lt", "Le", "Gt", "Ge", "EqTotalOrder", "NeTotalOrder", "LtTotalOrder", "LeTotalOrder", "GtTotalOrder", "GeTotalOrder"];

fn compare(op: &'static str) -> BoxedStrategy<Program> {
    let t = if op.ends_with("TotalOrder") { FLOATS.to_vec() } else { [&INTS[..], &FLOATS, &SMALL_FLOATS, &[E::Pred]].concat() };
    two_operands(t).prop_map(move |(x, y, bd)| two_operand_program(op, x, y, bd)).boxed()
}

fn select() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS, &COMPLEX]), dims(0..=3, 4), any::<bool>())
        .prop_flat_map(|(t, d, scalar_pred)| {
            let pd = if scalar_pred { vec![] } else { d.clone() };
            (literal(E::Pred, pd), literal(t, d.clone()), literal(t, d))
        })
        .prop_map(|(p, x, y)| {
            let mut b = Builder::default();
            let names = [b.param(p), b.param(x), b.param(y)];
            b.push("Select", &[&names[0], &names[1], &names[2]], json!({}));
            b.finish("Select")
        })
        .boxed()
}

fn clamp() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), dims(0..=3, 4), any::<bool>())
        .prop_flat_map(|(t, d, scalar_bounds)| {
            let bd = if scalar_bounds { vec![] } else { d.clone() };
            (literal(t, bd.clone()), literal(t, d), literal(t, bd))
        })
        .prop_map(|(lo, x, hi)| {
            let mut b = Builder::default();
            let names = [b.param(lo), b.param(x), b.param(hi)];
            b.push("Clamp", &[&names[0], &names[1], &names[2]], json!({}));
            b.finish("Clamp")
        })
        .boxed()
}

fn convert() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), one_of(&ElementType::ALL), dims(0..=2, 6))
        .prop_flat_map(|(from, to, d)| (literal(from, d), Just(to)))
        .prop_map(|(x, to)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("ConvertElementType", &[&p], json!({"new_element_type": to.name()}));
            b.finish("ConvertElementType")
        })
        .boxed()
}

/// Bitcasts between widths: to a narrower type the result gains a minor
/// dimension of the width ratio; to a wider type the operand's minor
/// dimension is the ratio and goes away.
fn bitcast_widths() -> BoxedStrategy<Program> {
    let reals: Vec<ElementType> = [&INTS[..], &FLOATS, &SMALL_FLOATS].concat();
    prop_oneof![
        4 => (one_of(&reals), one_of(&reals)).boxed(),
        1 => (one_of(&COMPLEX), one_of(&COMPLEX)).boxed(),
    ]
    .prop_flat_map(|(from, to)| {
        let (b, b2) = (from.byte_width() as i64, to.byte_width() as i64);
        let d = dims(0..=2, 4).prop_map(move |mut d| {
            if b2 > b {
                d.push(b2 / b);
            }
            d
        });
        (d.prop_flat_map(move |d| literal(from, d)), Just(to))
    })
    .prop_map(|(x, to)| {
        let mut b = Builder::default();
        let p = b.param(x);
        b.push("BitcastConvertType", &[&p], json!({"new_element_type": to.name()}));
        b.finish("BitcastConvertType")
    })
    .boxed()
}

/// Same-width bitcasts, and (one time in two) bitcasts between widths.
fn bitcast() -> BoxedStrategy<Program> {
    prop_oneof![same_width_bitcast(), bitcast_widths()].boxed()
}

fn same_width_bitcast() -> BoxedStrategy<Program> {
    let widths: Vec<Vec<ElementType>> = vec![
        vec![E::S8, E::U8, E::F8E4M3FN, E::F8E5M2],
        vec![E::S16, E::U16, E::F16, E::BF16],
        vec![E::S32, E::U32, E::F32],
        vec![E::S64, E::U64, E::F64],
    ];
    (proptest::sample::select(widths), any::<prop::sample::Index>(), any::<prop::sample::Index>(), dims(0..=2, 5))
        .prop_flat_map(|(group, i, j, d)| (literal(*i.get(&group), d), Just(*j.get(&group))))
        .prop_map(|(x, to)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("BitcastConvertType", &[&p], json!({"new_element_type": to.name()}));
            b.finish("BitcastConvertType")
        })
        .boxed()
}

fn reduce_precision() -> BoxedStrategy<Program> {
    (one_of(&FLOATS), dims(0..=2, 6), 1i64..=11, 0i64..=52)
        .prop_flat_map(|(t, d, e, m)| (literal(t, d), Just(e), Just(m)))
        .prop_map(|(x, e, m)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("ReducePrecision", &[&p], json!({"exponent_bits": e, "mantissa_bits": m}));
            b.finish("ReducePrecision")
        })
        .boxed()
}

/// Map with a two-instruction computation `max(a * b, a)`.
fn map() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS]), dims(0..=3, 4))
        .prop_flat_map(|(t, d)| (array(t, d.clone()), array(t, d)))
        .prop_map(|(x, y)| {
            let mut b = Builder::default();
            let t = x.element_type();
            let shape = format!("{}[]", t.name());
            let rank = x.rank() as i64;
            let f = b.computation(
                "mul_max",
                json!({"params": [{"name": "a", "shape": shape}, {"name": "b", "shape": shape}],
                       "instructions": [{"name": "m", "op": "Mul", "operands": ["a", "b"]},
                                        {"name": "r", "op": "Max", "operands": ["m", "a"]}]}),
            );
            let (p, q) = (b.param(x.into()), b.param(y.into()));
            b.push("Map", &[&p, &q], json!({"computation": f, "dimensions": (0..rank).collect::<Vec<_>>()}));
            b.finish("Map")
        })
        .boxed()
}

/// A chain of 2 to 8 element-wise instructions on f32 or s32 values, each
/// reading the previous result and a parameter or an earlier value.
fn chain() -> BoxedStrategy<Program> {
    let step =
        (proptest::sample::select(vec!["Add", "Sub", "Mul", "Max", "Min", "Neg", "Abs", "Exp", "Select"]), any::<prop::sample::Index>());
    (proptest::sample::select(vec![E::F32, E::S32]), dims(0..=2, 4), proptest::collection::vec(step, 2..=8))
        .prop_flat_map(|(t, d, steps)| (literal(t, d.clone()), literal(t, d.clone()), literal(E::Pred, d), Just(steps), Just(t)))
        .prop_map(|(x, y, c, steps, t)| {
            let mut b = Builder::default();
            let mut values = vec![b.param(x), b.param(y)];
            let pred = b.param(c);
            for (op, pick) in steps {
                let last = values[values.len() - 1].clone();
                let other = pick.get(&values).clone();
                let name = match op {
                    "Neg" | "Abs" => b.push(op, &[&last], json!({})),
                    "Exp" if t == E::F32 => b.push(op, &[&last], json!({})),
                    "Exp" => b.push("Not", &[&last], json!({})),
                    "Select" => b.push(op, &[&pred, &last, &other], json!({})),
                    _ => b.push(op, &[&last, &other], json!({})),
                };
                values.push(name);
            }
            b.finish("chain")
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    let mut out: Vec<(&'static str, BoxedStrategy<Program>)> = Vec::new();
    out.extend(UNARY.iter().map(|&op| (op, unary(op))));
    out.extend(BINARY.iter().map(|&op| (op, binary(op))));
    out.push(("Polygamma", polygamma()));
    out.extend(COMPARE.iter().map(|&op| (op, compare(op))));
    out.push(("Select", select()));
    out.push(("Clamp", clamp()));
    out.push(("ConvertElementType", convert()));
    out.push(("BitcastConvertType", bitcast()));
    out.push(("ReducePrecision", reduce_precision()));
    out.push(("Map", map()));
    out.push(("chain", chain()));
    out
}
