//! Generators for linear algebra (Dot, Cholesky, TriangularSolve), the
//! batch-normalization ops, SelectAndScatter, TopK, and the document's older
//! shape ops Broadcast and Collapse.

use num_complex::Complex;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::ElementType;

use super::values::{dims, literal, one_of, scalar, types, COMPLEX, FLOATS, INTS, SMALL_FLOATS};
use super::{Builder, Program};

use ElementType as E;

/// The types Cholesky and TriangularSolve are drawn in: mostly f32, f64 and
/// complex; the 16-bit floats now and then.
fn linalg_type() -> BoxedStrategy<ElementType> {
    prop_oneof![4 => one_of(&[E::F32, E::F64, E::C64, E::C128]), 1 => one_of(&[E::F16, E::BF16])].boxed()
}

/// An array of `t` from f64 (or complex) values, rounded into the type.
fn from_values(t: ElementType, dims: Vec<i64>, values: Vec<Complex<f64>>) -> Literal {
    let data = if t.is_complex() { Data::C128(values) } else { Data::F64(values.into_iter().map(|z| z.re).collect()) };
    Literal::Array(ArrayLiteral::new(dims, convert(&data, t)))
}

/// Moderate values: quarters in [-4, 4] (exact in every float type) and
/// reals in [-3, 3].
fn moderate(n: usize) -> BoxedStrategy<Vec<f64>> {
    proptest::collection::vec(prop_oneof![(-16i32..=16).prop_map(|i| i as f64 / 4.0), -3.0f64..3.0], n).boxed()
}

fn element_count(d: &[i64]) -> usize {
    d.iter().map(|&x| x.max(0) as usize).product()
}

/// Batch dimensions (0 to 2 of them, sizes 0 to 2) and a matrix size.
fn batch_and_size() -> BoxedStrategy<(Vec<i64>, i64)> {
    (proptest::collection::vec(prop_oneof![1 => Just(0i64), 4 => 1i64..=2], 0..=2), prop_oneof![1 => Just(0i64), 6 => 1i64..=4]).boxed()
}

/// Symmetric (Hermitian) positive-definite matrices `A·Aᴴ + n·I`.
fn spd(t: ElementType, batch: Vec<i64>, n: i64) -> BoxedStrategy<Literal> {
    let count = element_count(&batch);
    let m = n as usize;
    (moderate(count * m * m), moderate(count * m * m))
        .prop_map(move |(re, im)| {
            let complex = t.is_complex();
            let a: Vec<Complex<f64>> = re.iter().zip(&im).map(|(&r, &i)| Complex::new(r, if complex { i } else { 0.0 })).collect();
            let mut out = Vec::with_capacity(a.len());
            for b in 0..count {
                let at = |i: usize, j: usize| a[b * m * m + i * m + j];
                for i in 0..m {
                    for j in 0..m {
                        let dot: Complex<f64> = (0..m).map(|k| at(i, k) * at(j, k).conj()).sum();
                        out.push(dot + if i == j { Complex::new(m as f64, 0.0) } else { Complex::new(0.0, 0.0) });
                    }
                }
            }
            let dims = [&batch[..], &[n, n]].concat();
            from_values(t, dims, out)
        })
        .boxed()
}

/// Cholesky of positive-definite matrices, and (one time in three) of
/// arbitrary values, which need not be positive definite or finite.
fn cholesky() -> BoxedStrategy<Program> {
    (linalg_type(), batch_and_size(), any::<bool>(), 0u8..3)
        .prop_flat_map(|(t, (batch, n), lower, arbitrary)| {
            let a = if arbitrary == 0 { literal(t, [&batch[..], &[n, n]].concat()) } else { spd(t, batch, n) };
            (a, Just(lower))
        })
        .prop_map(|(a, lower)| {
            let mut b = Builder::default();
            let p = b.param(a);
            b.push("Cholesky", &[&p], json!({"lower": lower}));
            b.finish("Cholesky")
        })
        .boxed()
}

/// Well-conditioned triangular-solve systems: `a` has small entries in both
/// triangles (the op must ignore the other one) and a dominant diagonal;
/// `b` is moderate or (one time in four) corner-biased.
fn triangular_solve() -> BoxedStrategy<Program> {
    let transpose = proptest::sample::select(vec!["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]);
    (linalg_type(), batch_and_size(), 0i64..=3, any::<[bool; 3]>(), transpose, 0u8..4)
        .prop_flat_map(|(t, (batch, m), k, [left, lower, unit], transpose_a, corners)| {
            let count = element_count(&batch) * (m * m) as usize;
            let a = (moderate(count), moderate(count), proptest::collection::vec(any::<bool>(), m as usize)).prop_map({
                let batch = batch.clone();
                move |(re, im, signs)| {
                    let values = (0..re.len())
                        .map(|i| {
                            let (row, col) = ((i / m as usize) % m as usize, i % m as usize);
                            let z = Complex::new(re[i] / 4.0, if t.is_complex() { im[i] / 4.0 } else { 0.0 });
                            let dominant = (m + 1) as f64 + re[i].abs();
                            if row == col {
                                Complex::new(if signs[row] { dominant } else { -dominant }, z.im)
                            } else {
                                z
                            }
                        })
                        .collect();
                    from_values(t, [&batch[..], &[m, m]].concat(), values)
                }
            });
            let b_dims = [&batch[..], &if left { [m, k] } else { [k, m] }].concat();
            let n = element_count(&b_dims);
            let b = if corners == 0 {
                literal(t, b_dims).boxed()
            } else {
                (moderate(n), moderate(n))
                    .prop_map(move |(re, im)| {
                        let values = re.iter().zip(&im).map(|(&r, &i)| Complex::new(r, if t.is_complex() { i } else { 0.0 })).collect();
                        from_values(t, b_dims.clone(), values)
                    })
                    .boxed()
            };
            (a, b, Just((left, lower, unit, transpose_a)))
        })
        .prop_map(|(a, x, (left, lower, unit, transpose_a))| {
            let mut b = Builder::default();
            let (p, q) = (b.param(a), b.param(x));
            b.push(
                "TriangularSolve",
                &[&p, &q],
                json!({"left_side": left, "lower": lower, "unit_diagonal": unit, "transpose_a": transpose_a}),
            );
            b.finish("TriangularSolve")
        })
        .boxed()
}

/// A float array: moderate values, or (one time in four) corner-biased ones.
fn float_array(t: ElementType, d: Vec<i64>, positive: bool) -> BoxedStrategy<Literal> {
    let n = element_count(&d);
    let dims = d.clone();
    prop_oneof![
        3 => moderate(n).prop_map(move |v| {
            let v = v.into_iter().map(|x| if positive { x.abs() } else { x }).map(|x| Complex::new(x, 0.0)).collect();
            from_values(t, dims.clone(), v)
        }),
        1 => literal(t, d),
    ]
    .boxed()
}

const EPSILONS: [f64; 5] = [0.0, 1e-5, 1e-3, 0.5, 1.0];

/// BatchNormTraining, BatchNormInference or BatchNormGrad over a random
/// operand with any feature dimension.
fn batch_norm(op: &'static str) -> BoxedStrategy<Program> {
    (one_of(&FLOATS), dims(1..=4, 4), any::<Index>(), proptest::sample::select(EPSILONS.to_vec()))
        .prop_flat_map(move |(t, d, k, epsilon)| {
            let k = k.index(d.len());
            let f = vec![d[k]];
            let per_feature: Vec<BoxedStrategy<Literal>> = match op {
                "BatchNormTraining" => vec![float_array(t, f.clone(), false), float_array(t, f, false)],
                "BatchNormInference" => vec![
                    float_array(t, f.clone(), false),
                    float_array(t, f.clone(), false),
                    float_array(t, f.clone(), false),
                    float_array(t, f, true),
                ],
                _ => vec![
                    float_array(t, f.clone(), false),
                    float_array(t, f.clone(), false),
                    float_array(t, f, true),
                    float_array(t, d.clone(), false),
                ],
            };
            (float_array(t, d, false), per_feature, Just(k), Just(epsilon))
        })
        .prop_map(move |(x, rest, k, epsilon)| {
            let mut b = Builder::default();
            let mut names = vec![b.param(x)];
            names.extend(rest.into_iter().map(|r| b.param(r)));
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push(op, &refs, json!({"epsilon": epsilon, "feature_index": k}));
            b.finish(op)
        })
        .boxed()
}

/// Per window dimension: operand size, window, stride, padding low, high.
type ScatterWindow = (i64, i64, i64, i64, i64);

/// SelectAndScatter with random windows, strides and padding, selecting
/// with Ge or Gt and scattering with Add.
fn select_and_scatter() -> BoxedStrategy<Program> {
    let dim = (1i64..=5, 1i64..=3, 1i64..=3, 0i64..=1, 0i64..=1).prop_map(|(n, w, s, lo, hi)| (n, w.min(n + lo + hi), s, lo, hi));
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), proptest::collection::vec(dim, 1..=3), any::<bool>())
        .prop_flat_map(|(t, window, strict): (ElementType, Vec<ScatterWindow>, bool)| {
            let operand: Vec<i64> = window.iter().map(|w| w.0).collect();
            let source: Vec<i64> = window.iter().map(|&(n, w, s, lo, hi)| (n + lo + hi - w) / s + 1).collect();
            (literal(t, operand), literal(t, source), scalar(t), Just(window), Just(strict))
        })
        .prop_map(|(x, source, init, window, strict)| {
            let mut b = Builder::default();
            let t = x.as_array().map_or(E::F32, |a| a.element_type());
            let select = b.binary_computation(if strict { "Gt" } else { "Ge" }, t);
            let scatter = b.binary_computation("Add", t);
            let names = [b.param(x), b.param(source), b.param(init.into())];
            let padding: Vec<[i64; 2]> = window.iter().map(|w| [w.3, w.4]).collect();
            b.push(
                "SelectAndScatter",
                &[&names[0], &names[1], &names[2]],
                json!({"select": select, "scatter": scatter, "padding": padding,
                       "window_dimensions": window.iter().map(|w| w.1).collect::<Vec<_>>(),
                       "window_strides": window.iter().map(|w| w.2).collect::<Vec<_>>()}),
            );
            b.finish("SelectAndScatter")
        })
        .boxed()
}

/// TopK of every ordered type, k from 0 to the last dimension (ties and
/// NaNs come from the values).
fn top_k() -> BoxedStrategy<Program> {
    let ordered: Vec<ElementType> = ElementType::ALL.iter().copied().filter(|t| !t.is_complex()).collect();
    (one_of(&ordered), dims(1..=3, 6), any::<Index>(), any::<bool>())
        .prop_flat_map(|(t, d, k, largest)| {
            let last = d.last().copied().unwrap_or(0);
            let k = k.index(last as usize + 1) as i64;
            (literal(t, d), Just(k), Just(largest))
        })
        .prop_map(|(x, k, largest)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("TopK", &[&p], json!({"k": k, "largest": largest}));
            b.finish("TopK")
        })
        .boxed()
}

/// A `preferred_element_type` the operand type allows, or none.
fn preferred(t: ElementType, pick: u8) -> Option<ElementType> {
    match pick % 3 {
        0 => None,
        1 => Some(t),
        _ if t.is_float() => Some(FLOATS[(pick as usize / 3) % FLOATS.len()]),
        _ if t.is_complex() => Some(E::C128),
        _ if t.is_integer() => Some(if t.is_signed_integer() { E::S64 } else { E::U64 }),
        _ => None,
    }
}

/// Dot of vectors and matrices (the document's three forms:
/// vector·vector, matrix·vector, matrix·matrix).
fn dot() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &COMPLEX]), 1usize..=2, 1usize..=2, dims(3..=3, 5), any::<u8>())
        .prop_flat_map(|(t, lr, rr, d, pick)| {
            let lhs = if lr == 1 { vec![d[1]] } else { vec![d[0], d[1]] };
            let rhs = if rr == 1 || lr == 1 { vec![d[1]] } else { vec![d[1], d[2]] };
            (literal(t, lhs), literal(t, rhs), Just(preferred(t, pick)))
        })
        .prop_map(|(l, r, pref)| {
            let mut b = Builder::default();
            let (p, q) = (b.param(l), b.param(r));
            let attrs = match pref {
                Some(t) => json!({"preferred_element_type": t.name()}),
                None => json!({}),
            };
            b.push("Dot", &[&p, &q], attrs);
            b.finish("Dot")
        })
        .boxed()
}

fn broadcast() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), dims(0..=2, 3), dims(0..=2, 3))
        .prop_flat_map(|(t, d, sizes)| (literal(t, d), Just(sizes)))
        .prop_map(|(x, sizes)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("Broadcast", &[&p], json!({"broadcast_sizes": sizes}));
            b.finish("Broadcast")
        })
        .boxed()
}

/// Collapse of a run of consecutive dimensions.
fn collapse() -> BoxedStrategy<Program> {
    (types(&[&ElementType::ALL, &SMALL_FLOATS]), dims(1..=4, 4), any::<Index>(), any::<Index>())
        .prop_flat_map(|(t, d, a, z)| {
            let (a, z) = (a.index(d.len()), z.index(d.len()));
            let run: Vec<i64> = (a.min(z) as i64..=a.max(z) as i64).collect();
            (literal(t, d), Just(run))
        })
        .prop_map(|(x, run)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("Collapse", &[&p], json!({"dimensions": run}));
            b.finish("Collapse")
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![
        ("Cholesky", cholesky()),
        ("TriangularSolve", triangular_solve()),
        ("BatchNormTraining", batch_norm("BatchNormTraining")),
        ("BatchNormInference", batch_norm("BatchNormInference")),
        ("BatchNormGrad", batch_norm("BatchNormGrad")),
        ("SelectAndScatter", select_and_scatter()),
        ("TopK", top_k()),
        ("Dot", dot()),
        ("Broadcast", broadcast()),
        ("Collapse", collapse()),
    ]
}
