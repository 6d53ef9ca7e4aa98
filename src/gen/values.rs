//! Random element types, shapes and values, drawn to hit the corners: NaN,
//! ±inf, ±0, subnormals, the largest values, integer extremes, ties.

use num_complex::Complex;
use proptest::prelude::*;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::ElementType;

use ElementType as E;

pub const INTS: [ElementType; 8] = [E::S8, E::S16, E::S32, E::S64, E::U8, E::U16, E::U32, E::U64];
pub const FLOATS: [ElementType; 4] = [E::F16, E::BF16, E::F32, E::F64];
pub const SMALL_FLOATS: [ElementType; 2] = [E::F8E4M3FN, E::F8E5M2];
pub const COMPLEX: [ElementType; 2] = [E::C64, E::C128];

/// One of the given types.
pub fn one_of(types: &[ElementType]) -> BoxedStrategy<ElementType> {
    proptest::sample::select(types.to_vec()).boxed()
}

/// Types from several lists.
pub fn types(lists: &[&[ElementType]]) -> BoxedStrategy<ElementType> {
    one_of(&lists.concat())
}

/// Dimensions of rank `rank` (a range), each 0..=max with 0 and 1 common.
pub fn dims(rank: std::ops::RangeInclusive<usize>, max: i64) -> BoxedStrategy<Vec<i64>> {
    let size = prop_oneof![1 => Just(0i64), 2 => Just(1i64), 6 => 1..=max.max(1)];
    rank.prop_flat_map(move |r| proptest::collection::vec(size.clone(), r)).boxed()
}

/// Dimensions with no zero-sized dimension.
pub fn nonempty_dims(rank: std::ops::RangeInclusive<usize>, max: i64) -> BoxedStrategy<Vec<i64>> {
    rank.prop_flat_map(move |r| proptest::collection::vec(1..=max.max(1), r)).boxed()
}

/// The special values of a float type, as f64 (rounded into the type when
/// the literal is built: inf becomes NaN in f8e4m3fn, as ConvertElementType).
fn float_corners(t: ElementType) -> Vec<f64> {
    let (mantissa, exponent) = t.component_type().float_format().unwrap_or((52, 11));
    let min_normal = (2.0 - (1u64 << (exponent - 1)) as f64).exp2();
    let min_subnormal = min_normal * (-(mantissa as f64)).exp2();
    let max = (2.0 - (-(mantissa as f64)).exp2()) * ((1u64 << (exponent - 1)) as f64 - 1.0).exp2();
    vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        min_subnormal,
        -min_subnormal,
        min_normal,
        max,
        -max,
        1.0,
        -1.0,
        0.5,
        -2.5,
        1.5,
    ]
}

/// A float element: corners, small integers and halves (exact sums, ties in
/// rounding), moderate reals, or any f64 bit pattern.
fn float_value(t: ElementType) -> BoxedStrategy<f64> {
    prop_oneof![
        2 => proptest::sample::select(float_corners(t)),
        4 => (-16i32..=16).prop_map(|i| i as f64 / 2.0),
        3 => -1.0e3f64..1.0e3,
        1 => any::<u64>().prop_map(f64::from_bits),
    ]
    .boxed()
}

/// An integer element (wrapped into the type when the literal is built).
fn int_value() -> BoxedStrategy<i64> {
    prop_oneof![
        2 => proptest::sample::select(vec![0i64, 1, -1, i64::MIN, i64::MAX, 127, -128, 255, 32767, -32768, 65535, i32::MAX as i64, i32::MIN as i64, u32::MAX as i64]),
        4 => -10i64..=10,
        2 => any::<i64>(),
    ]
    .boxed()
}

/// An array of type `t` and dimensions `dims` with corner-biased values.
pub fn array(t: ElementType, dims: Vec<i64>) -> BoxedStrategy<ArrayLiteral> {
    let n = dims.iter().map(|&d| d.max(0) as usize).product::<usize>();
    if t.is_pred() {
        return proptest::collection::vec(any::<bool>(), n).prop_map(move |v| ArrayLiteral::from_vec(dims.clone(), v)).boxed();
    }
    if t.is_integer() {
        return proptest::collection::vec(int_value(), n)
            .prop_map(move |v| ArrayLiteral::new(dims.clone(), convert(&Data::S64(v), t)))
            .boxed();
    }
    if t.is_complex() {
        return proptest::collection::vec((float_value(t), float_value(t)), n)
            .prop_map(move |v| {
                let data = Data::C128(v.into_iter().map(|(re, im)| Complex::new(re, im)).collect());
                ArrayLiteral::new(dims.clone(), convert(&data, t))
            })
            .boxed();
    }
    proptest::collection::vec(float_value(t), n).prop_map(move |v| ArrayLiteral::new(dims.clone(), convert(&Data::F64(v), t))).boxed()
}

/// A scalar of type `t`.
pub fn scalar(t: ElementType) -> BoxedStrategy<ArrayLiteral> {
    array(t, vec![])
}

/// An array literal.
pub fn literal(t: ElementType, dims: Vec<i64>) -> BoxedStrategy<Literal> {
    array(t, dims).prop_map(Literal::Array).boxed()
}

/// Integer index values for start indices: in range, at the edges, and far
/// out of range (negative and past the end).
pub fn index_value(t: ElementType, bound: i64) -> BoxedStrategy<ArrayLiteral> {
    prop_oneof![4 => 0..=bound.max(0), 1 => Just(-1i64), 1 => Just(bound + 1), 1 => Just(i64::MIN), 1 => Just(i64::MAX)]
        .prop_map(move |i| ArrayLiteral::new(vec![], convert(&Data::S64(vec![i]), t)))
        .boxed()
}
