//! Generators for tuples, control flow (Call, While, Conditional),
//! OptimizationBarrier, tokens, dynamic dimension sizes, and the
//! multi-operand forms of Reduce, Sort and Map.
//!
//! Nested computations use only exactly rounded operations (add, sub, mul,
//! max, min, select, comparisons) unless the op's tolerance covers them
//! (Map): the lockstep comparison judges a While or Conditional exactly.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::ElementType;

use super::values::{array, dims, index_value, literal, nonempty_dims, one_of, scalar, types, FLOATS, INTS, SMALL_FLOATS};
use super::{comp, const_ins, counter_below, ins, scalar_shape, Builder, Program};

use ElementType as E;

/// Types whose arithmetic every engine rounds the same way.
const EXACT: [ElementType; 8] = [E::S8, E::S32, E::S64, E::U32, E::F16, E::BF16, E::F32, E::F64];

/// An exactly rounded element-wise step `name = op(a, b)`; the ops make
/// sense for every type of [`EXACT`].
const STEPS: [&str; 5] = ["Add", "Sub", "Mul", "Max", "Min"];

fn shape_of(x: &Literal) -> String {
    x.shape().to_string()
}

fn tuple_and_get() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), one_of(&ElementType::ALL), dims(0..=2, 3), dims(0..=2, 3), 0usize..=3)
        .prop_flat_map(|(t, u, d, e, pick)| (literal(t, d), literal(u, e), Just(pick)))
        .prop_map(|(x, y, pick)| {
            let mut b = Builder::default();
            let (p, q) = (b.param(x), b.param(y));
            let inner = b.push("Tuple", &[&q], json!({}));
            let outer = b.push("Tuple", &[&p, &inner, &q], json!({}));
            match pick {
                0 => {}
                1 | 2 => {
                    b.push("GetTupleElement", &[&outer], json!({"index": pick - 1}));
                }
                _ => {
                    let got = b.push("GetTupleElement", &[&outer], json!({"index": 1}));
                    b.push("GetTupleElement", &[&got], json!({"index": 0}));
                }
            }
            b.finish(if pick == 0 { "Tuple" } else { "GetTupleElement" })
        })
        .boxed()
}

/// Two arrays of one exact type and shape.
fn pair() -> BoxedStrategy<(Literal, Literal)> {
    (one_of(&EXACT), dims(0..=2, 4)).prop_flat_map(|(t, d)| (literal(t, d.clone()), literal(t, d))).boxed()
}

/// Call of `f(a, b) = s2(s1(a, b), a)`, which itself calls `g` one time in two.
fn call() -> BoxedStrategy<Program> {
    (pair(), proptest::sample::select(STEPS.to_vec()), proptest::sample::select(STEPS.to_vec()), any::<bool>())
        .prop_map(|((x, y), s1, s2, nested)| {
            let mut b = Builder::default();
            let shape = shape_of(&x);
            let params = [("a", shape.clone()), ("b", shape)];
            let first = if nested {
                b.computation("g", comp(&params, vec![ins("r", s1, &["a", "b"], json!({}))]));
                ins("m", "Call", &["a", "b"], json!({"computation": "g"}))
            } else {
                ins("m", s1, &["a", "b"], json!({}))
            };
            b.computation("f", comp(&params, vec![first, ins("r", s2, &["m", "a"], json!({}))]));
            let (p, q) = (b.param(x), b.param(y));
            b.push("Call", &[&p, &q], json!({"computation": "f"}));
            b.finish("Call")
        })
        .boxed()
}

/// A bounded While: the state is `(counter, x, y)`; the loop runs while
/// `counter < trips`, and each trip adds one to the counter and replaces
/// `x` by `step(x, y)` (directly, or through a Map).
fn while_loop() -> BoxedStrategy<Program> {
    (pair(), -1i64..=2, 0i64..=6, proptest::sample::select(STEPS.to_vec()), any::<bool>(), any::<bool>())
        .prop_map(|((x, y), start, trips, step, through_map, whole)| {
            let mut b = Builder::default();
            let t = x.as_array().map_or(E::F32, |a| a.element_type());
            let state = format!("(s32[], {}, {})", shape_of(&x), shape_of(&y));
            b.computation("cond", counter_below(&state, trips));
            let scalar = scalar_shape(t);
            b.computation("step", comp(&[("a", scalar.clone()), ("b", scalar)], vec![ins("r", step, &["a", "b"], json!({}))]));
            let rank = x.as_array().map_or(0, |a| a.rank()) as i64;
            let next = if through_map {
                ins("x2", "Map", &["x", "y"], json!({"computation": "step", "dimensions": (0..rank).collect::<Vec<_>>()}))
            } else {
                ins("x2", step, &["x", "y"], json!({}))
            };
            b.computation(
                "body",
                comp(
                    &[("s", state)],
                    vec![
                        ins("i", "GetTupleElement", &["s"], json!({"index": 0})),
                        ins("x", "GetTupleElement", &["s"], json!({"index": 1})),
                        ins("y", "GetTupleElement", &["s"], json!({"index": 2})),
                        const_ins("one", E::S32, 1),
                        ins("i2", "Add", &["i", "one"], json!({})),
                        next,
                        ins("r", "Tuple", &["i2", "x2", "y"], json!({})),
                    ],
                ),
            );
            let (p, q) = (b.param(x), b.param(y));
            let c = b.constant(&Literal::Array(ArrayLiteral::scalar(start as i32)));
            let init = b.push("Tuple", &[&c, &p, &q], json!({}));
            let w = b.push("While", &[&init], json!({"condition": "cond", "body": "body"}));
            if !whole {
                b.push("GetTupleElement", &[&w], json!({"index": 1}));
            }
            b.finish("While")
        })
        .boxed()
}

/// A branch computation `name(a) = op(a)` for an array shape.
fn branch(b: &mut Builder, name: &str, shape: &str, op: &str) -> String {
    let body = match op {
        "Neg" | "Abs" | "Sign" => vec![ins("r", op, &["a"], json!({}))],
        "Double" => vec![ins("r", "Add", &["a", "a"], json!({}))],
        "Square" => vec![ins("r", "Mul", &["a", "a"], json!({}))],
        _ => vec![ins("r", "Max", &["a", "a"], json!({}))], // identity through an op
    };
    b.computation(name, comp(&[("a", shape.into())], body))
}

const BRANCH_OPS: [&str; 6] = ["Neg", "Abs", "Sign", "Double", "Square", "Same"];

/// Conditional in its predicate form (a random pred) or its indexed form
/// (1 to 3 branches, the index in and out of range), each branch applying
/// a different op to its own operand.
fn conditional() -> BoxedStrategy<Program> {
    let signed_or_float = [E::S8, E::S32, E::S64, E::F16, E::BF16, E::F32, E::F64];
    (one_of(&signed_or_float), dims(0..=2, 4), any::<bool>(), 1usize..=3, proptest::collection::vec(0usize..BRANCH_OPS.len(), 3))
        .prop_flat_map(|(t, d, indexed, n, ops)| {
            let n = if indexed { n } else { 2 };
            let selector = if indexed { index_value(E::S32, n as i64 - 1) } else { scalar(E::Pred) };
            (selector, proptest::collection::vec(literal(t, d), n), Just(indexed), Just(ops))
        })
        .prop_map(|(selector, xs, indexed, ops)| {
            let mut b = Builder::default();
            let shape = shape_of(&xs[0]);
            let names: Vec<String> =
                (0..xs.len()).map(|k| branch(&mut b, &format!("branch{k}"), &shape, BRANCH_OPS[ops[k % ops.len()]])).collect();
            let mut operands = vec![b.param(selector.into())];
            operands.extend(xs.into_iter().map(|x| b.param(x)));
            let refs: Vec<&str> = operands.iter().map(|s| s.as_str()).collect();
            let attrs = if indexed {
                json!({"branch_computations": names})
            } else {
                json!({"true_computation": names[0], "false_computation": names[1]})
            };
            b.push("Conditional", &refs, attrs);
            b.finish("Conditional")
        })
        .boxed()
}

fn optimization_barrier() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), dims(0..=3, 4), any::<bool>(), any::<bool>())
        .prop_flat_map(|(t, d, tuple, get)| (literal(t, d.clone()), literal(t, d), Just(tuple), Just(get)))
        .prop_map(|(x, y, tuple, get)| {
            let mut b = Builder::default();
            let (p, q) = (b.param(x), b.param(y));
            let operand = if tuple { b.push("Tuple", &[&p, &q], json!({})) } else { p };
            let r = b.push("OptimizationBarrier", &[&operand], json!({}));
            if tuple && get {
                b.push("GetTupleElement", &[&r], json!({"index": 1}));
            }
            b.finish("OptimizationBarrier")
        })
        .boxed()
}

/// AfterAll of no tokens, then of several, in a tuple with an array.
fn after_all() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), dims(0..=2, 3), 0usize..=3)
        .prop_flat_map(|(t, d, n)| (literal(t, d), Just(n)))
        .prop_map(|(x, n)| {
            let mut b = Builder::default();
            let p = b.param(x);
            let first = b.push("AfterAll", &[], json!({}));
            let tokens: Vec<&str> = vec![first.as_str(); n];
            let joined = b.push("AfterAll", &tokens, json!({}));
            b.push("Tuple", &[&joined, &p], json!({}));
            b.finish("AfterAll")
        })
        .boxed()
}

fn get_dimension_size() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), dims(1..=4, 4), any::<Index>())
        .prop_flat_map(|(t, d, k)| (literal(t, d.clone()), Just(k.index(d.len()))))
        .prop_map(|(x, k)| {
            let mut b = Builder::default();
            let p = b.param(x);
            b.push("GetDimensionSize", &[&p], json!({"dimension": k}));
            b.finish("GetDimensionSize")
        })
        .boxed()
}

/// SetDimensionSize with sizes in and out of the bound, then the value
/// itself, its size, or a Reduce (which must ignore the padding).
fn set_dimension_size() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), nonempty_dims(1..=3, 4), any::<Index>(), 0usize..=2)
        .prop_flat_map(|(t, d, k, then)| {
            let k = k.index(d.len());
            (literal(t, d.clone()), index_value(E::S32, d[k]), scalar(t), Just(k), Just(then))
        })
        .prop_map(|(x, size, init, k, then)| {
            let mut b = Builder::default();
            let t = x.as_array().map_or(E::F32, |a| a.element_type());
            let rank = x.as_array().map_or(0, |a| a.rank()) as i64;
            let p = b.param(x);
            let s = b.param(size.into());
            let set = b.push("SetDimensionSize", &[&p, &s], json!({"dimension": k}));
            match then {
                0 => {}
                1 => {
                    b.push("GetDimensionSize", &[&set], json!({"dimension": k}));
                }
                _ => {
                    let f = b.binary_computation("Max", t);
                    let i = b.param(init.into());
                    b.push("Reduce", &[&set, &i], json!({"computation": f, "dimensions": (0..rank).collect::<Vec<_>>()}));
                }
            }
            b.finish("SetDimensionSize")
        })
        .boxed()
}

/// The argmax reducer over `(value, index)` pairs: the larger value (in the
/// total order for floats, so the reducer is associative and commutative
/// even with NaNs), ties to the smaller index.
fn argmax_reducer(b: &mut Builder, t: ElementType) -> String {
    let (gt, eq) = if t.is_float() { ("GtTotalOrder", "EqTotalOrder") } else { ("Gt", "Eq") };
    let v = scalar_shape(t);
    let i = scalar_shape(E::S32);
    b.computation(
        "argmax",
        comp(
            &[("a", v.clone()), ("ai", i.clone()), ("b", v), ("bi", i)],
            vec![
                ins("gt", gt, &["a", "b"], json!({})),
                ins("eq", eq, &["a", "b"], json!({})),
                ins("lt", "Lt", &["ai", "bi"], json!({})),
                ins("tie", "And", &["eq", "lt"], json!({})),
                ins("take", "Or", &["gt", "tie"], json!({})),
                ins("v", "Select", &["take", "a", "b"], json!({})),
                ins("w", "Select", &["take", "ai", "bi"], json!({})),
                ins("r", "Tuple", &["v", "w"], json!({})),
            ],
        ),
    )
}

/// Variadic Reduce: argmax of values with their indices over random
/// dimensions.
fn reduce_variadic() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), dims(0..=3, 5), any::<u8>())
        .prop_flat_map(|(t, d, mask)| {
            let which: Vec<i64> = (0..d.len() as i64).filter(|i| mask & (1 << i) != 0).collect();
            (literal(t, d.clone()), literal(E::S32, d), scalar(t), scalar(E::S32), Just(which))
        })
        .prop_map(|(x, idx, init, init_idx, which)| {
            let mut b = Builder::default();
            let t = x.as_array().map_or(E::F32, |a| a.element_type());
            let f = argmax_reducer(&mut b, t);
            let names = [b.param(x), b.param(idx), b.param(init.into()), b.param(init_idx.into())];
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("Reduce", &refs, json!({"computation": f, "dimensions": which}));
            b.finish("ReduceVariadic")
        })
        .boxed()
}

/// The comparators of multi-operand sorts.
const COMPARATORS: [&str; 5] = ["descending", "total_descending", "lexicographic", "by_second", "total_ascending"];

/// The comparator instructions over parameters a, b (first operand) and
/// c, d (second operand).
fn comparator(kind: &str, key_float: bool) -> Vec<Value> {
    let (lt, gt, eq) = if key_float { ("LtTotalOrder", "GtTotalOrder", "EqTotalOrder") } else { ("Lt", "Gt", "Eq") };
    match kind {
        "descending" => vec![ins("r", "Gt", &["a", "b"], json!({}))],
        "total_descending" => vec![ins("r", gt, &["a", "b"], json!({}))],
        "total_ascending" => vec![ins("r", lt, &["a", "b"], json!({}))],
        "by_second" => vec![ins("r", "Lt", &["c", "d"], json!({}))],
        _ => vec![
            ins("l", lt, &["a", "b"], json!({})),
            ins("e", eq, &["a", "b"], json!({})),
            ins("m", "Lt", &["c", "d"], json!({})),
            ins("t", "And", &["e", "m"], json!({})),
            ins("r", "Or", &["l", "t"], json!({})),
        ],
    }
}

/// Sort of two or three operands of different types, with comparators other
/// than Lt: descending, total order, lexicographic over two keys, by the
/// second operand.
fn sort_multi() -> BoxedStrategy<Program> {
    (
        types(&[&INTS, &FLOATS, &SMALL_FLOATS]),
        one_of(&[E::S32, E::U8, E::S64, E::F32]),
        dims(1..=3, 5),
        any::<Index>(),
        0usize..COMPARATORS.len(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(t, u, d, k, cmp, stable, third)| {
            let k = k.index(d.len());
            (literal(t, d.clone()), literal(u, d.clone()), literal(E::Pred, d), Just((k, cmp, stable, third)))
        })
        .prop_map(|(keys, second, extra, (k, cmp, stable, third))| {
            let mut b = Builder::default();
            let t = keys.as_array().map_or(E::F32, |a| a.element_type());
            let u = second.as_array().map_or(E::S32, |a| a.element_type());
            let mut params = vec![("a", scalar_shape(t)), ("b", scalar_shape(t)), ("c", scalar_shape(u)), ("d", scalar_shape(u))];
            if third {
                params.push(("p", scalar_shape(E::Pred)));
                params.push(("q", scalar_shape(E::Pred)));
            }
            let kind = COMPARATORS[cmp];
            let key_float = if kind == "by_second" { u.is_float() } else { t.is_float() };
            b.computation("cmp", comp(&params, comparator(kind, key_float)));
            let mut names = vec![b.param(keys), b.param(second)];
            if third {
                names.push(b.param(extra));
            }
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("Sort", &refs, json!({"comparator": "cmp", "dimension": k, "is_stable": stable}));
            b.finish("SortMulti")
        })
        .boxed()
}

/// Map over one to three operands with a branching body:
/// `select(a > b, f(a, b), g(a, b))`, or a Clamp of three operands, with a
/// transcendental step for floats one time in three.
fn map_body() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS]), dims(0..=3, 4), 1usize..=3, 0usize..3)
        .prop_flat_map(|(t, d, n, flavour)| (proptest::collection::vec(array(t, d), n), Just(flavour)))
        .prop_map(|(xs, flavour)| {
            let mut b = Builder::default();
            let t = xs[0].element_type();
            let rank = xs[0].rank() as i64;
            let s = scalar_shape(t);
            let names = ["a", "b", "c"];
            let params: Vec<(&str, String)> = names[..xs.len()].iter().map(|&n| (n, s.clone())).collect();
            let second = if xs.len() >= 2 { "b" } else { "a" };
            let body = if xs.len() == 3 {
                vec![ins("r", "Clamp", &["a", "b", "c"], json!({}))]
            } else {
                let f = if flavour == 0 && t.is_float() {
                    ins("f", "Exp", &["a"], json!({}))
                } else {
                    ins("f", "Mul", &["a", second], json!({}))
                };
                vec![
                    ins("g", "Gt", &["a", second], json!({})),
                    f,
                    ins("h", "Sub", &[second, "a"], json!({})),
                    ins("r", "Select", &["g", "f", "h"], json!({})),
                ]
            };
            b.computation("body", comp(&params, body));
            let refs: Vec<String> = xs.into_iter().map(|x| b.param(x.into())).collect();
            let refs: Vec<&str> = refs.iter().map(|s| s.as_str()).collect();
            b.push("Map", &refs, json!({"computation": "body", "dimensions": (0..rank).collect::<Vec<_>>()}));
            b.finish("MapBody")
        })
        .boxed()
}

/// A constant of every type, read back exactly.
fn constant() -> BoxedStrategy<Program> {
    (one_of(&ElementType::ALL), dims(0..=2, 4))
        .prop_flat_map(|(t, d)| literal(t, d))
        .prop_map(|x| {
            let mut b = Builder::default();
            let c = b.constant(&x);
            let rank = x.as_array().map_or(0, |a| a.rank());
            b.push("Transpose", &[&c], json!({"permutation": (0..rank as i64).rev().collect::<Vec<_>>()}));
            b.finish("Constant")
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![
        ("Tuple", tuple_and_get()),
        ("GetTupleElement", tuple_and_get()),
        ("Call", call()),
        ("While", while_loop()),
        ("Conditional", conditional()),
        ("OptimizationBarrier", optimization_barrier()),
        ("AfterAll", after_all()),
        ("GetDimensionSize", get_dimension_size()),
        ("SetDimensionSize", set_dimension_size()),
        ("ReduceVariadic", reduce_variadic()),
        ("SortMulti", sort_multi()),
        ("MapBody", map_body()),
        ("Constant", constant()),
    ]
}
