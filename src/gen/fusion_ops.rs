//! Programs the fast engine fuses (`fast/src/fusion/`): chains of
//! element-wise ops over one shape, reading broadcast rows, columns and
//! scalars, flattened and reshaped back, converted, compared and selected
//! (on predicates read from memory or computed in the chain),
//! clamped; sometimes an intermediate value escapes into a tuple result,
//! and often the chain ends in a Reduce of its rows or of everything.
//! Rows are long enough (up to 15,000 elements) that a group runs as
//! several blocks, split across threads, with a short last block; rows of
//! 576 and 1024 take the register row sum of `fusion/lanes.rs` (multiples
//! of its 64 partial sums, an odd and an even number of its blocks). Some
//! steps are Calls, which a fused run inlines (`fast/src/inline.rs`).

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;
use xlaref_reference::types::ElementType;

use super::values::{literal, one_of, scalar};
use super::{Builder, Program};

use ElementType as E;

const TYPES: [ElementType; 6] = [E::F32, E::F64, E::BF16, E::F16, E::S32, E::S8];

const STEPS: [&str; 12] =
    ["binary", "binary", "unary", "row", "column", "scalar", "flatten", "select", "clamp", "convert", "call", "escape"];

fn binary_ops(t: ElementType) -> &'static [&'static str] {
    if t.is_integer() {
        &["Add", "Sub", "Mul", "Div", "Rem", "Max", "Min", "And", "Or", "Xor"]
    } else {
        &["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Atan2"]
    }
}

fn unary_ops(t: ElementType) -> &'static [&'static str] {
    if t.is_integer() {
        &["Neg", "Abs", "Not", "Sign", "Clz", "PopulationCount"]
    } else {
        &["Neg", "Abs", "Exp", "Tanh", "Log", "Sqrt", "Logistic", "Floor", "Erf", "Erfc", "Cbrt", "Rsqrt"]
    }
}

/// One step: its kind, two picks among earlier values, and a byte choosing
/// the op.
type Step = (usize, Index, Index, u8);

/// The entry of `list` that byte `k` picks (also `row_level`'s).
pub(super) fn pick<'a>(list: &'a [&'a str], k: u8) -> &'a str {
    list[k as usize % list.len()]
}

/// Random fusible chains (see the module comment).
pub fn fused_chain() -> BoxedStrategy<Program> {
    let step: BoxedStrategy<Step> = (0..STEPS.len(), any::<Index>(), any::<Index>(), any::<u8>()).boxed();
    let cols = proptest::sample::select(vec![1i64, 3, 576, 700, 1024, 2049, 5000]);
    (one_of(&TYPES), 1..=3i64, cols, proptest::collection::vec(step, 3..=14), any::<u8>())
        .prop_flat_map(|(t, r, c, steps, tail)| {
            (
                (literal(t, vec![r, c]), literal(t, vec![r, c]), literal(E::Pred, vec![r, c])),
                (literal(t, vec![c]), literal(t, vec![r]), scalar(t), scalar(t)),
                Just((steps, tail)),
            )
        })
        .prop_map(|((x, y, pred), (row, column, s, t_lo), (steps, tail))| {
            let t = s.element_type();
            let dims = x.as_array().map_or(vec![], |a| a.dims().to_vec());
            let mut b = Builder::default();
            let mut pool = vec![b.param(x), b.param(y)];
            let pred = b.param(pred);
            let (row, column, s, lo) = (b.param(row), b.param(column), b.param(s.into()), b.param(t_lo.into()));
            let mut escaped = Vec::new();
            for (kind, i, j, k) in steps {
                let last = pool[pool.len() - 1].clone();
                let other = i.get(&pool).clone();
                let v = match STEPS[kind] {
                    "binary" => b.push(pick(binary_ops(t), k), &[&last, &other], json!({})),
                    "unary" => b.push(pick(unary_ops(t), k), &[&last], json!({})),
                    "row" => {
                        let spread = b.push("BroadcastInDim", &[&row], json!({"out_dim_size": dims, "broadcast_dimensions": [1]}));
                        b.push(pick(binary_ops(t), k), &[&last, &spread], json!({}))
                    }
                    "column" => {
                        let spread = b.push("BroadcastInDim", &[&column], json!({"out_dim_size": dims, "broadcast_dimensions": [0]}));
                        b.push(pick(binary_ops(t), k), &[&spread, &last], json!({}))
                    }
                    // A scalar operand read as is, or spread by Broadcast.
                    "scalar" if k % 2 == 0 => b.push(pick(binary_ops(t), k / 2), &[&last, &s], json!({})),
                    "scalar" => {
                        let spread = b.push("Broadcast", &[&s], json!({"broadcast_sizes": dims}));
                        b.push(pick(binary_ops(t), k / 2), &[&spread, &other], json!({}))
                    }
                    "flatten" => {
                        let n: i64 = dims.iter().product();
                        let flat = b.push("Reshape", &[&last], json!({"new_sizes": [n]}));
                        let negated = b.push(pick(unary_ops(t), k), &[&flat], json!({}));
                        b.push("Reshape", &[&negated], json!({"new_sizes": dims}))
                    }
                    "select" => {
                        let third = j.get(&pool).clone();
                        let cmp = b.push(pick(&["Lt", "Ge", "Eq", "LtTotalOrder"], k), &[&last, &third], json!({}));
                        let either = b.push("Select", &[&cmp, &last, &other], json!({}));
                        let outer = match k % 3 {
                            // A pred read from memory (the block runner).
                            0 => pred.clone(),
                            // The ReLU gradient's mask, against a scalar.
                            1 => b.push("Gt", &[&third, &s], json!({})),
                            // A Compare of Compares (markers, `fusion/choose.rs`).
                            _ => {
                                let positive = b.push("Gt", &[&other, &s], json!({}));
                                b.push("Ne", &[&cmp, &positive], json!({}))
                            }
                        };
                        b.push("Select", &[&outer, &either, &third], json!({}))
                    }
                    "clamp" => b.push("Clamp", &[&lo, &last, &s], json!({})),
                    "call" => {
                        // One inexact op at most, and last: the lockstep
                        // comparison judges a Call by its body's allowance
                        // (an Atan2 feeding a Log compounds its error).
                        let exact: &[&str] = if t.is_integer() { binary_ops(t) } else { &["Add", "Sub", "Mul", "Div", "Max", "Min"] };
                        let (binary, unary) = (pick(exact, k), pick(unary_ops(t), k / 8));
                        let shape = format!("{}[{}]", t.name(), dims.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
                        let name = format!("call_{binary}_{unary}_{}", t.name()).to_lowercase();
                        let body = json!({"params": [{"name": "a", "shape": shape}, {"name": "b", "shape": shape}],
                                          "instructions": [{"name": "s", "op": binary, "operands": ["a", "b"]},
                                                           {"name": "r", "op": unary, "operands": ["s"]}]});
                        let f = b.computation(&name, body);
                        b.push("Call", &[&last, &other], json!({"computation": f}))
                    }
                    "convert" => {
                        let to = pick(&["f32", "f64", "s32", "bf16"], k);
                        let there = b.push("ConvertElementType", &[&last], json!({"new_element_type": to}));
                        b.push("ConvertElementType", &[&there], json!({"new_element_type": t.name()}))
                    }
                    _ => {
                        escaped.push(last.clone());
                        b.push(pick(unary_ops(t), k), &[&last], json!({}))
                    }
                };
                pool.push(v);
            }
            // The chain's end: as is, or reduced over its rows or over all.
            if tail % 3 != 0 {
                let f = b.binary_computation(pick(&["Add", "Max", "Min", "Mul"], tail / 3), t);
                let dimensions: &[i64] = if tail % 3 == 1 { &[1] } else { &[0, 1] };
                let last = pool[pool.len() - 1].clone();
                let reduced = b.push("Reduce", &[&last, &lo], json!({"computation": f, "dimensions": dimensions}));
                pool.push(reduced);
            }
            if !escaped.is_empty() {
                let mut parts: Vec<&str> = vec![&pool[pool.len() - 1]];
                parts.extend(escaped.iter().map(String::as_str));
                b.push("Tuple", &parts, json!({}));
            }
            b.finish("fused_chain")
        })
        .boxed()
}

/// A DotGeneral whose result is transposed to (batch, rhs free, lhs free),
/// as JAX writes a weight gradient `(dyᵀ·x)ᵀ`: the fast engine writes the
/// Dot's result transposed (`fusion/mod.rs`). Contracting dimensions come
/// before or after the free ones; some contract over more than 512 values
/// (the `gemm` crate's depth blocks); f16 and a permutation that is not the
/// swap stay unfused; a scaled copy may follow, as the learning rate. A
/// fifth are scaled instead of transposed: by a power of two (fused into
/// the Dot up to 512 contracted values) or not, a scalar or broadcast.
pub fn transposed_dot() -> BoxedStrategy<Program> {
    let size = || proptest::sample::select(vec![1i64, 2, 3, 5, 9, 17]);
    let types = proptest::sample::select(vec![E::F32, E::F32, E::F64, E::F16]);
    let depth = proptest::sample::select(vec![1i64, 5, 64, 600]);
    (types, 0usize..=1, 1usize..=2, 1usize..=2, proptest::collection::vec(size(), 5), depth, any::<u8>())
        .prop_flat_map(|(t, batch, lhs_free, rhs_free, sizes, depth, shape)| {
            // Deep contractions keep one free dimension a side, no batch:
            // the reference's loops stay short.
            let (batch, lhs_free, rhs_free) = if depth > 64 { (0, 1, 1) } else { (batch, lhs_free, rhs_free) };
            let bd: Vec<i64> = sizes[..batch].to_vec();
            let lf: Vec<i64> = sizes[1..1 + lhs_free].to_vec();
            let rf: Vec<i64> = sizes[3..3 + rhs_free].to_vec();
            // lhs: [batch, contracting, free] when `shape` is odd (JAX's
            // `dyᵀ` read in place), else [batch, free, contracting].
            let first = shape % 2 == 1;
            let lhs = if first { [&bd[..], &[depth], &lf].concat() } else { [&bd[..], &lf, &[depth]].concat() };
            let rhs = [&bd[..], &[depth], &rf].concat();
            let lc = if first { batch } else { batch + lhs_free };
            let dn = json!({
                "lhs_batch_dimensions": (0..batch as i64).collect::<Vec<_>>(),
                "rhs_batch_dimensions": (0..batch as i64).collect::<Vec<_>>(),
                "lhs_contracting_dimensions": [lc],
                "rhs_contracting_dimensions": [batch],
            });
            let (nb, nl, nr) = (batch, lhs_free, rhs_free);
            let mut permutation: Vec<usize> = (0..nb).chain(nb + nl..nb + nl + nr).chain(nb..nb + nl).collect();
            if shape % 7 == 0 {
                permutation.reverse();
            }
            let out = [&bd[..], &lf, &rf].concat();
            (literal(t, lhs), literal(t, rhs), scalar(t), Just((dn, permutation, shape, t, out)))
        })
        .prop_map(|(l, r, rate, (dn, permutation, shape, t, out))| {
            let mut b = Builder::default();
            let (p, q, rate) = (b.param(l), b.param(r), b.param(rate.into()));
            let d = b.push("DotGeneral", &[&p, &q], json!({"dimension_numbers": dn}));
            if shape % 5 == 0 {
                // Scaled instead: by a power of two (the Dot scales its
                // sums, `fusion/mod.rs`) or not, as a scalar or broadcast.
                let factor = [8.0, 0.25, 3.0, -0.5][(shape / 5) as usize % 4];
                let k = b.constant(&scalar_of(t, factor));
                let k = if shape % 2 == 0 { b.push("Broadcast", &[&k], json!({"broadcast_sizes": out})) } else { k };
                b.push(if shape % 3 == 0 { "Mul" } else { "Div" }, &[&d, &k], json!({}));
                return b.finish("transposed_dot");
            }
            let t = b.push("Transpose", &[&d], json!({"permutation": permutation}));
            if shape % 3 == 0 {
                b.push("Mul", &[&t, &rate], json!({}));
            }
            b.finish("transposed_dot")
        })
        .boxed()
}

/// A scalar literal of float type `t`.
fn scalar_of(t: ElementType, v: f64) -> xlaref_reference::literal::Literal {
    use xlaref_reference::literal::ArrayLiteral;
    match t {
        E::F64 => ArrayLiteral::from_vec(vec![], vec![v]).into(),
        E::F16 => ArrayLiteral::from_vec(vec![], vec![half::f16::from_f64(v)]).into(),
        _ => ArrayLiteral::from_vec(vec![], vec![v as f32]).into(),
    }
}

/// `relu(conv(x, k) + b)`, JAX's convolution layer, and its variants: the
/// fast engine adds the bias and applies the ReLU as the convolution
/// stores its sums (`fast/src/fusion/conv_epilogue.rs`). NHWC as JAX
/// writes it or the document's layout; the bias on either side of the Add;
/// the ReLU's zero on either side of the Max, or no ReLU; from one output
/// feature to over two vectors of them (the direct path's partial panels);
/// f16 (not fused); a zero that is -0 (not fused: `maximum(-0, -0)` is -0);
/// some programs read the convolution twice (not fused).
pub fn conv_epilogue() -> BoxedStrategy<Program> {
    let types = proptest::sample::select(vec![E::F32, E::F32, E::F64, E::F16]);
    let features = proptest::sample::select(vec![1i64, 8, 16, 20, 33]);
    (types, 1i64..=2, 1i64..=6, 1i64..=6, 1i64..=4, features, 1i64..=3, any::<u8>())
        .prop_flat_map(|(t, n, h, w, iz, oz, k, shape)| {
            let nhwc = shape % 2 == 0;
            let lhs = if nhwc { vec![n, h, w, iz] } else { vec![n, iz, h, w] };
            let rhs = if nhwc { vec![k, k, iz, oz] } else { vec![oz, iz, k, k] };
            let out = if nhwc { vec![n, h, w, oz] } else { vec![n, oz, h, w] };
            (literal(t, lhs), literal(t, rhs), literal(t, vec![oz]), Just((t, nhwc, out, k, shape)))
        })
        .prop_map(|(x, kernel, bias, (t, nhwc, out, k, shape))| {
            let mut b = Builder::default();
            let (x, kernel, bias) = (b.param(x), b.param(kernel), b.param(bias));
            let pad = [(k - 1) / 2, k / 2];
            let mut attrs = json!({"window_strides": [1, 1], "padding": [pad, pad]});
            if nhwc {
                attrs["dimension_numbers"] = json!("b01f_01io->b01f");
            }
            let conv = b.push("ConvGeneralDilated", &[&x, &kernel], attrs);
            let feature = if nhwc { 3 } else { 1 };
            let spread = b.push("BroadcastInDim", &[&bias], json!({"out_dim_size": out, "broadcast_dimensions": [feature]}));
            let sum =
                if shape % 3 == 0 { b.push("Add", &[&spread, &conv], json!({})) } else { b.push("Add", &[&conv, &spread], json!({})) };
            let mut last = sum.clone();
            if shape % 4 != 3 {
                let zero = b.constant(&scalar_of(t, if shape % 11 == 0 { -0.0 } else { 0.0 }));
                let zeros = b.push("Broadcast", &[&zero], json!({"broadcast_sizes": out}));
                last = if shape % 5 == 0 { b.push("Max", &[&zeros, &sum], json!({})) } else { b.push("Max", &[&sum, &zeros], json!({})) };
            }
            if shape % 13 == 0 {
                // The convolution read twice: it stays apart.
                b.push("Sub", &[&last, &conv], json!({}));
            }
            b.finish("conv_epilogue")
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![("fused_chain", fused_chain()), ("transposed_dot", transposed_dot()), ("conv_epilogue", conv_epilogue())]
}
