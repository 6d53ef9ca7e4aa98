//! LayerNorm- and softmax-like programs: a value is reduced over its rows
//! (Add, Max or Min), the per-row results go through a little arithmetic
//! (a division by a broadcast scalar, a product with a scalar, a per-row
//! parameter added, Rsqrt, Sqrt or Abs, a Neg through `[r, 1]` and back),
//! and a broadcast spreads them back along the rows, from `[r]` or through
//! a reshape to `[r, 1]`, where the chain goes on (Sub, Mul, Div or Add
//! with the input or the chain, then often Exp, Tanh, Neg or Abs); one to
//! three such stages. These are the programs the fast engine's fusion
//! splits at each row Reduce (`fast/src/fusion/`: a Reduce ends a group,
//! its per-row results are materialized and broadcast into the next):
//! rows of 16 to 1100 positions, whole multiples of the register row
//! sum's 64 partial sums and of the 128 positions of a chain block and
//! not, and rows shorter than a block whose per-row values a chain reads
//! per vector (16 to 240 positions, whole vectors: `Arg::Rows`) or, not
//! whole vectors (40), row by row; 1 to 40 rows, alone
//! or in two or three batches, where a `[r]` value is sometimes also
//! spread over the batches (its rows then do not follow each other in the
//! operand across a batch); sometimes a per-row value also escapes into a
//! tuple result, and an S32 program takes the integer paths.

use proptest::prelude::*;
use serde_json::json;
use xlaref_reference::types::ElementType;

use super::fusion_ops::pick;
use super::values::{literal, one_of, scalar};
use super::{Builder, Program};

use ElementType as E;

const TYPES: [ElementType; 5] = [E::F32, E::F32, E::F64, E::BF16, E::S32];

/// One stage: the reducer, the per-row ops, how the result is spread
/// back, the op that combines it with the chain, and a unary op after.
type Stage = (u8, Vec<u8>, bool, u8, u8);

/// The row reducers; for floats Add is listed twice, so that half the
/// stages are sums, as in LayerNorm and softmax.
fn reducers(t: ElementType) -> &'static [&'static str] {
    if t.is_integer() {
        &["Add", "Max", "Min"]
    } else {
        &["Add", "Max", "Min", "Add"]
    }
}

/// Random row-level chains (see the module comment).
pub fn row_level() -> BoxedStrategy<Program> {
    let stage: BoxedStrategy<Stage> =
        (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..=3), any::<bool>(), any::<u8>(), any::<u8>()).boxed();
    let cols = proptest::sample::select(vec![16i64, 40, 64, 144, 256, 300, 384, 576, 1024, 1100]);
    // Batches: none (a matrix), or two or three of them in front.
    let batch = proptest::sample::select(vec![0i64, 0, 2, 3]);
    let rows = proptest::sample::select(vec![1i64, 2, 3, 5, 17, 40]);
    (one_of(&TYPES), (batch, rows), cols, proptest::collection::vec(stage, 1..=3), any::<u8>())
        .prop_flat_map(|(t, (b, r), c, stages, escape)| {
            let lead: Vec<i64> = if b == 0 { vec![r] } else { vec![b, r] };
            let whole = lead.iter().copied().chain([c]).collect();
            ((literal(t, whole), literal(t, lead), literal(t, vec![r]), scalar(t), scalar(t)), Just((stages, escape)))
        })
        .prop_map(|((x, per_row, per_inner, s, init), (stages, escape))| {
            let t = init.element_type();
            let dims = x.as_array().map_or(vec![], |a| a.dims().to_vec());
            let rank = dims.len();
            let lead = dims[..rank - 1].to_vec();
            let mut b = Builder::default();
            let x = b.param(x);
            let (per_row, s, init) = (b.param(per_row), b.param(s.into()), b.param(init.into()));
            // A [r] value spread over the batches too (dimension 1 of 3):
            // its rows do not follow each other in memory across a batch.
            let per_inner = (rank == 3).then(|| b.param(per_inner));
            let mut last = x.clone();
            let mut escaped = None;
            let column: Vec<i64> = lead.iter().copied().chain([1]).collect();
            let leading: Vec<usize> = (0..rank - 1).collect();
            for (k, (reducer, row_ops, through_column, combine, unary)) in stages.into_iter().enumerate() {
                let f = b.binary_computation(pick(reducers(t), reducer), t);
                let mut v = b.push("Reduce", &[&last, &init], json!({"computation": f, "dimensions": [rank - 1]}));
                for op in row_ops {
                    v = row_op(&mut b, t, &v, &per_row, &s, op, &lead);
                }
                if escape % 4 == k as u8 {
                    escaped = Some(v.clone());
                }
                let spread = if through_column {
                    let column = b.push("Reshape", &[&v], json!({"new_sizes": column}));
                    b.push(
                        "BroadcastInDim",
                        &[&column],
                        json!({"out_dim_size": dims, "broadcast_dimensions": (0..rank).collect::<Vec<_>>()}),
                    )
                } else {
                    b.push("BroadcastInDim", &[&v], json!({"out_dim_size": dims, "broadcast_dimensions": leading}))
                };
                let other = if combine % 2 == 0 { &x } else { &last };
                let ops: &[&str] = if t.is_integer() { &["Sub", "Add", "Max", "Mul"] } else { &["Sub", "Mul", "Div", "Add"] };
                last = b.push(pick(ops, combine / 2), &[other, &spread], json!({}));
                if let Some(p) = per_inner.as_ref().filter(|_| combine % 3 == 0) {
                    let spread = b.push("BroadcastInDim", &[p], json!({"out_dim_size": dims, "broadcast_dimensions": [1]}));
                    last = b.push("Add", &[&last, &spread], json!({}));
                }
                let unaries: &[&str] = if t.is_integer() { &["Neg", "Abs"] } else { &["Exp", "Tanh", "Neg", "Abs", "Exp"] };
                if unary % 3 != 0 {
                    last = b.push(pick(unaries, unary / 3), &[&last], json!({}));
                }
            }
            if let Some(v) = escaped {
                b.push("Tuple", &[&last, &v], json!({}));
            }
            b.finish("row_level")
        })
        .boxed()
}

/// One op on the per-row values `v` (of shape `lead`): with a scalar
/// spread by Broadcast, with the per-row parameter, or unary.
fn row_op(b: &mut Builder, t: ElementType, v: &str, per_row: &str, s: &str, op: u8, lead: &[i64]) -> String {
    let float = !t.is_integer();
    match op % 6 {
        0 => {
            let spread = b.push("Broadcast", &[s], json!({"broadcast_sizes": lead}));
            b.push(if float { "Div" } else { "Add" }, &[v, &spread], json!({}))
        }
        1 => b.push("Add", &[v, per_row], json!({})),
        2 => b.push("Mul", &[v, s], json!({})),
        3 if float => b.push(pick(&["Rsqrt", "Sqrt", "Abs"], op / 6), &[v], json!({})),
        4 => {
            // Through [.., 1] and back.
            let column: Vec<i64> = lead.iter().copied().chain([1]).collect();
            let column = b.push("Reshape", &[v], json!({"new_sizes": column}));
            let neg = b.push("Neg", &[&column], json!({}));
            b.push("Reshape", &[&neg], json!({"new_sizes": lead}))
        }
        _ => b.push("Neg", &[v], json!({})),
    }
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![("row_level", row_level())]
}
