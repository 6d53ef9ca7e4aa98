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
//! rows of 256 to 1100, whole multiples of the register row sum's 64
//! partial sums and not, one to three rows; sometimes a per-row value also
//! escapes into a tuple result, and an S32 program takes the integer
//! paths.

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
    let cols = proptest::sample::select(vec![256i64, 300, 576, 1024, 1100]);
    (one_of(&TYPES), 1..=3i64, cols, proptest::collection::vec(stage, 1..=3), any::<u8>())
        .prop_flat_map(|(t, r, c, stages, escape)| {
            ((literal(t, vec![r, c]), literal(t, vec![r]), scalar(t), scalar(t)), Just((stages, escape)))
        })
        .prop_map(|((x, per_row, s, init), (stages, escape))| {
            let t = init.element_type();
            let dims = x.as_array().map_or(vec![], |a| a.dims().to_vec());
            let r = dims[0];
            let mut b = Builder::default();
            let x = b.param(x);
            let (per_row, s, init) = (b.param(per_row), b.param(s.into()), b.param(init.into()));
            let mut last = x.clone();
            let mut escaped = None;
            for (k, (reducer, row_ops, through_column, combine, unary)) in stages.into_iter().enumerate() {
                let f = b.binary_computation(pick(reducers(t), reducer), t);
                let mut v = b.push("Reduce", &[&last, &init], json!({"computation": f, "dimensions": [1]}));
                for op in row_ops {
                    v = row_op(&mut b, t, &v, &per_row, &s, op, r);
                }
                if escape % 4 == k as u8 {
                    escaped = Some(v.clone());
                }
                let spread = if through_column {
                    let column = b.push("Reshape", &[&v], json!({"new_sizes": [r, 1]}));
                    b.push("BroadcastInDim", &[&column], json!({"out_dim_size": dims, "broadcast_dimensions": [0, 1]}))
                } else {
                    b.push("BroadcastInDim", &[&v], json!({"out_dim_size": dims, "broadcast_dimensions": [0]}))
                };
                let other = if combine % 2 == 0 { &x } else { &last };
                let ops: &[&str] = if t.is_integer() { &["Sub", "Add", "Max", "Mul"] } else { &["Sub", "Mul", "Div", "Add"] };
                last = b.push(pick(ops, combine / 2), &[other, &spread], json!({}));
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

/// One op on the per-row values `v` (`[r]`): with a row-length scalar
/// spread by Broadcast, with the per-row parameter, or unary.
fn row_op(b: &mut Builder, t: ElementType, v: &str, per_row: &str, s: &str, op: u8, r: i64) -> String {
    let float = !t.is_integer();
    match op % 6 {
        0 => {
            let spread = b.push("Broadcast", &[s], json!({"broadcast_sizes": [r]}));
            b.push(if float { "Div" } else { "Add" }, &[v, &spread], json!({}))
        }
        1 => b.push("Add", &[v, per_row], json!({})),
        2 => b.push("Mul", &[v, s], json!({})),
        3 if float => b.push(pick(&["Rsqrt", "Sqrt", "Abs"], op / 6), &[v], json!({})),
        4 => {
            // Through [r, 1] and back.
            let column = b.push("Reshape", &[v], json!({"new_sizes": [r, 1]}));
            let neg = b.push("Neg", &[&column], json!({}));
            b.push("Reshape", &[&neg], json!({"new_sizes": [r]}))
        }
        _ => b.push("Neg", &[v], json!({})),
    }
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![("row_level", row_level())]
}
