//! Generators for the random-number ops and the collectives. Collective
//! programs run as 1 to 4 replicas, each replica with its own arguments;
//! every program also returns its ReplicaId.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::convert::convert;
use xlaref_reference::types::ElementType;

use super::values::{dims, literal, one_of, types, FLOATS, INTS, SMALL_FLOATS};
use super::{Builder, Program};

use ElementType as E;

/// RngBitGenerator of every algorithm, state length and output type
/// (compared exactly: the bits are specified).
fn rng_bit_generator() -> BoxedStrategy<Program> {
    let outputs = [&INTS[..], &FLOATS, &SMALL_FLOATS].concat();
    (proptest::sample::select(vec!["DEFAULT", "THREE_FRY", "PHILOX"]), any::<bool>(), any::<[u64; 3]>(), one_of(&outputs), dims(0..=3, 5))
        .prop_map(|(algorithm, long, words, t, d)| {
            let n = if long && algorithm != "THREE_FRY" { 3 } else { 2 };
            let state = Literal::Array(ArrayLiteral::from_vec(vec![n as i64], words[..n].to_vec()));
            let mut b = Builder::default();
            let p = b.param(state);
            let shape = super::array_shape(t, &d);
            b.push("RngBitGenerator", &[&p], json!({"algorithm": algorithm, "shape": shape}));
            b.finish("RngBitGenerator")
        })
        .boxed()
}

/// A scalar of `t` from an f64 (rounded or wrapped into the type).
fn scalar_of(t: ElementType, x: f64) -> Literal {
    let data = if t.is_float() {
        Data::F64(vec![x])
    } else if t.is_pred() {
        Data::Pred(vec![x != 0.0])
    } else {
        Data::S64(vec![x as i64])
    };
    Literal::Array(ArrayLiteral::new(vec![], convert(&data, t)))
}

/// RngUniform and RngNormal on tiny to small shapes, with ordered and
/// degenerate parameters.
fn rng(op: &'static str) -> BoxedStrategy<Program> {
    let t = if op == "RngUniform" { types(&[&[E::Pred], &INTS, &FLOATS]) } else { one_of(&FLOATS) };
    (t, dims(0..=3, 5), -8i32..=8, 0i32..=8)
        .prop_map(move |(t, d, a, width)| {
            let (a, b) = if t.is_pred() { (0.0, 1.0) } else { (f64::from(a), f64::from(a + width)) };
            let mut bld = Builder::default();
            let p = bld.param(scalar_of(t, a));
            let q = bld.param(scalar_of(t, if op == "RngNormal" { f64::from(width) / 2.0 } else { b }));
            bld.push(op, &[&p, &q], json!({"shape": super::array_shape(t, &d)}));
            bld.finish(op)
        })
        .boxed()
}

/// Replica groups for `n` replicas in groups of `size`: empty (one group,
/// when `size == n`) or a random partition of the ids.
fn groups(n: usize, size: usize, order: &[usize], empty: bool) -> Vec<Vec<i64>> {
    if empty && size == n {
        return vec![];
    }
    let ids: Vec<i64> = order.iter().map(|&i| i as i64).collect();
    ids.chunks(size.max(1)).map(|c| c.to_vec()).collect()
}

/// The collectives and the attributes each needs.
const COLLECTIVES: [&str; 7] = ["AllReduce", "CrossReplicaSum", "AllGather", "ReduceScatter", "AllToAll", "CollectivePermute", "ReplicaId"];

/// Replica count, group size, an order of the ids, and whether to leave
/// the groups empty.
fn replica_layout() -> BoxedStrategy<(usize, usize, Vec<usize>, bool)> {
    (1usize..=4, any::<Index>(), any::<bool>())
        .prop_flat_map(|(n, g, empty)| {
            let sizes: Vec<usize> = (1..=n).filter(|s| n % s == 0).collect();
            let size = *g.get(&sizes);
            (Just(n), Just(size), Just((0..n).collect::<Vec<_>>()).prop_shuffle(), Just(empty))
        })
        .boxed()
}

/// One collective on per-replica arguments of one shape, returned with the
/// replica's id.
fn collective(op: &'static str) -> BoxedStrategy<Program> {
    (replica_layout(), types(&[&INTS, &FLOATS, &SMALL_FLOATS]), dims(1..=3, 3), any::<Index>(), any::<Index>(), 0usize..4, any::<u64>())
        .prop_flat_map(move |((n, size, order, empty), t, mut d, k, k2, reducer, seed)| {
            let k = k.index(d.len());
            if matches!(op, "ReduceScatter" | "AllToAll") {
                // The split dimension is a multiple of the group size.
                d[k] = size as i64 * d[k].max(1);
            }
            let args = proptest::collection::vec(literal(t, d.clone()), n);
            (args, Just((n, size, order, empty, k, k2.index(d.len()), reducer, seed)))
        })
        .prop_map(move |(args, (n, size, order, empty, k, k2, reducer, seed))| {
            let mut b = Builder::default();
            let t = args[0].as_array().map_or(E::F32, |a| a.element_type());
            let x = b.param(args[0].clone());
            let reducers = ["Add", "Max", "Min", "Mul"];
            let g = groups(n, size, &order, empty);
            let attrs: Value = match op {
                "AllReduce" => {
                    let f = b.binary_computation(reducers[reducer], t);
                    json!({"computation": f, "replica_groups": g})
                }
                "CrossReplicaSum" => json!({"replica_groups": g}),
                "AllGather" => json!({"all_gather_dim": k, "shard_count": size, "replica_groups": g}),
                "ReduceScatter" => {
                    let f = b.binary_computation(reducers[reducer], t);
                    json!({"computation": f, "scatter_dimension": k, "shard_count": size, "replica_groups": g})
                }
                "AllToAll" => json!({"split_dimension": k, "concat_dimension": k2, "split_count": size, "replica_groups": g}),
                _ => json!({"source_target_pairs": permutation_pairs(n, &order, seed)}),
            };
            let id = b.push("ReplicaId", &[], json!({}));
            if op == "ReplicaId" {
                b.push("Tuple", &[&id, &x], json!({}));
            } else {
                let r = b.push(op, &[&x], attrs);
                b.push("Tuple", &[&r, &id], json!({}));
            }
            let mut program = b.finish(op);
            program.replicas = n;
            program.replica_args = Some(args.into_iter().map(|a| vec![a]).collect());
            program
        })
        .boxed()
}

/// Source-target pairs: a random partial permutation of the replica ids
/// (each source and each target at most once; some replicas receive
/// nothing and get zeros).
fn permutation_pairs(n: usize, order: &[usize], seed: u64) -> Vec<[i64; 2]> {
    (0..n).filter(|&s| seed >> (s % 64) & 1 == 1 || n == 1).map(|s| [s as i64, order[s] as i64]).collect()
}

/// Collectives inside a While: every replica runs the same number of
/// trips; each trip all-reduces the carried array within the groups and
/// adds the replica's own value back; after the loop an AllGather joins
/// the replicas' results.
fn collective_loop() -> BoxedStrategy<Program> {
    (replica_layout(), types(&[&INTS, &FLOATS]), dims(1..=2, 3), 0i64..=3, 0usize..3)
        .prop_flat_map(|((n, size, order, empty), t, d, trips, reducer)| {
            (proptest::collection::vec(literal(t, d), n), Just((n, size, order, empty, trips, reducer)))
        })
        .prop_map(|(args, (n, size, order, empty, trips, reducer))| {
            use super::{comp, const_ins, counter_below, ins};
            let mut b = Builder::default();
            let t = args[0].as_array().map_or(E::F32, |a| a.element_type());
            let shape = args[0].shape().to_string();
            let g = groups(n, size, &order, empty);
            let f = b.binary_computation(["Add", "Max", "Min"][reducer], t);
            let state = format!("(s32[], {shape})");
            b.computation("cond", counter_below(&state, trips));
            b.computation(
                "body",
                comp(
                    &[("s", state)],
                    vec![
                        ins("i", "GetTupleElement", &["s"], json!({"index": 0})),
                        ins("x", "GetTupleElement", &["s"], json!({"index": 1})),
                        const_ins("one", E::S32, 1),
                        ins("i2", "Add", &["i", "one"], json!({})),
                        ins("all", "AllReduce", &["x"], json!({"computation": f, "replica_groups": g})),
                        ins("x2", "Add", &["all", "x"], json!({})),
                        ins("r", "Tuple", &["i2", "x2"], json!({})),
                    ],
                ),
            );
            let x = b.param(args[0].clone());
            let zero = b.constant(&Literal::Array(ArrayLiteral::scalar(0i32)));
            let init = b.push("Tuple", &[&zero, &x], json!({}));
            let w = b.push("While", &[&init], json!({"condition": "cond", "body": "body"}));
            let out = b.push("GetTupleElement", &[&w], json!({"index": 1}));
            let gathered = b.push("AllGather", &[&out], json!({"all_gather_dim": 0, "shard_count": size, "replica_groups": g}));
            let id = b.push("ReplicaId", &[], json!({}));
            b.push("Tuple", &[&gathered, &id], json!({}));
            let mut program = b.finish("CollectiveLoop");
            program.replicas = n;
            program.replica_args = Some(args.into_iter().map(|a| vec![a]).collect());
            program
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    let mut out: Vec<(&'static str, BoxedStrategy<Program>)> =
        vec![("RngBitGenerator", rng_bit_generator()), ("RngUniform", rng("RngUniform")), ("RngNormal", rng("RngNormal"))];
    out.extend(COLLECTIVES.iter().map(|&op| (op, collective(op))));
    out.push(("CollectiveLoop", collective_loop()));
    out
}
