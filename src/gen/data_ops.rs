//! Generators for the data-movement, indexing, reduction, contraction,
//! sort and FFT ops.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};
use xlaref_reference::literal::Literal;
use xlaref_reference::types::ElementType;

use super::values::{array, dims, index_value, literal, nonempty_dims, one_of, scalar, types, COMPLEX, FLOATS, INTS, SMALL_FLOATS};
use super::{Builder, Program};

use ElementType as E;

/// Per window dimension: size, stride, base dilation, window dilation, padding low, padding high.
type WindowDim = (i64, i64, i64, i64, i64, i64);
/// Per spatial dimension: input size, window, stride, padding low, padding high, lhs dilation, rhs dilation.
type ConvDim = (i64, i64, i64, i64, i64, i64, i64);

/// Any element type data movement applies to.
fn any_type() -> BoxedStrategy<ElementType> {
    one_of(&ElementType::ALL)
}

/// A one-operand program `op(p0)` with the given attributes.
fn unary_program(op: &'static str, x: Literal, attrs: Value) -> Program {
    let mut b = Builder::default();
    let p = b.param(x);
    b.push(op, &[&p], attrs);
    b.finish(op)
}

fn broadcast_in_dim() -> BoxedStrategy<Program> {
    (any_type(), dims(0..=3, 4), proptest::collection::vec(0i64..=3, 0..=2))
        .prop_flat_map(|(t, out, keep)| {
            // Keep a subset of the output dimensions, in order, each of
            // size 1 or the output's size.
            let mut mapped: Vec<i64> = keep.iter().map(|&k| k.min(out.len() as i64 - 1)).filter(|&k| k >= 0).collect();
            mapped.sort_unstable();
            mapped.dedup();
            let operand: Vec<i64> = mapped.iter().map(|&k| out[k as usize]).collect();
            (literal(t, operand), Just(out), Just(mapped))
        })
        .prop_map(|(x, out, mapped)| unary_program("BroadcastInDim", x, json!({"out_dim_size": out, "broadcast_dimensions": mapped})))
        .boxed()
}

fn reshape() -> BoxedStrategy<Program> {
    (any_type(), nonempty_dims(1..=3, 4), any::<Index>())
        .prop_flat_map(|(t, d, split)| {
            let n: i64 = d.iter().product();
            // Refactor the element count into two dimensions.
            let divisors: Vec<i64> = (1..=n).filter(|k| n % k == 0).collect();
            let k = *split.get(&divisors);
            (literal(t, d), Just(vec![k, n / k]))
        })
        .prop_map(|(x, sizes)| unary_program("Reshape", x, json!({"new_sizes": sizes})))
        .boxed()
}

fn transpose() -> BoxedStrategy<Program> {
    (any_type(), dims(0..=4, 4))
        .prop_flat_map(|(t, d)| {
            let perm: Vec<i64> = (0..d.len() as i64).collect();
            (literal(t, d), Just(perm).prop_shuffle())
        })
        .prop_map(|(x, perm)| unary_program("Transpose", x, json!({"permutation": perm})))
        .boxed()
}

fn rev() -> BoxedStrategy<Program> {
    (any_type(), dims(0..=3, 5), any::<u8>())
        .prop_flat_map(|(t, d, mask)| {
            let which: Vec<i64> = (0..d.len() as i64).filter(|i| mask & (1 << i) != 0).collect();
            (literal(t, d), Just(which))
        })
        .prop_map(|(x, which)| unary_program("Rev", x, json!({"dimensions": which})))
        .boxed()
}

fn slice() -> BoxedStrategy<Program> {
    (any_type(), dims(1..=3, 6))
        .prop_flat_map(|(t, d)| {
            let per_dim: Vec<BoxedStrategy<(i64, i64, i64)>> =
                d.iter().map(|&n| (0..=n, 0..=n, 1i64..=3).prop_map(|(a, b, s)| (a.min(b), a.max(b), s)).boxed()).collect();
            (literal(t, d), per_dim)
        })
        .prop_map(|(x, bounds)| {
            let (starts, limits, strides): (Vec<i64>, Vec<i64>, Vec<i64>) =
                bounds.iter().fold((vec![], vec![], vec![]), |(mut a, mut b, mut c), &(s, l, st)| {
                    a.push(s);
                    b.push(l);
                    c.push(st);
                    (a, b, c)
                });
            unary_program("Slice", x, json!({"start_indices": starts, "limit_indices": limits, "strides": strides}))
        })
        .boxed()
}

fn pad() -> BoxedStrategy<Program> {
    (any_type(), dims(0..=3, 4))
        .prop_flat_map(|(t, d)| {
            // Negative edges crop, but never below zero size.
            let config: Vec<BoxedStrategy<(i64, i64, i64)>> = d
                .iter()
                .map(|&n| {
                    (-2i64..=3, -2i64..=3, 0i64..=2)
                        .prop_map(move |(lo, hi, interior)| {
                            let size = n + (n - 1).max(0) * interior;
                            let lo = lo.max(-size);
                            (lo, hi.max(-(size + lo)), interior)
                        })
                        .boxed()
                })
                .collect();
            (literal(t, d), scalar(t), config)
        })
        .prop_map(|(x, v, config)| {
            let mut b = Builder::default();
            let (p, q) = (b.param(x), b.param(v.into()));
            let cfg: Vec<Value> =
                config.iter().map(|&(l, h, i)| json!({"edge_padding_low": l, "edge_padding_high": h, "interior_padding": i})).collect();
            b.push("Pad", &[&p, &q], json!({"padding_config": cfg}));
            b.finish("Pad")
        })
        .boxed()
}

fn concat() -> BoxedStrategy<Program> {
    (any_type(), dims(1..=3, 4), any::<Index>(), proptest::collection::vec(0i64..=3, 1..=3))
        .prop_flat_map(|(t, d, dim, sizes)| {
            let k = dim.index(d.len());
            let parts: Vec<BoxedStrategy<Literal>> = sizes
                .iter()
                .map(|&s| {
                    let mut pd = d.clone();
                    pd[k] = s;
                    literal(t, pd)
                })
                .collect();
            (parts, Just(k))
        })
        .prop_map(|(parts, k)| {
            let mut b = Builder::default();
            let names: Vec<String> = parts.into_iter().map(|p| b.param(p)).collect();
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("ConcatInDim", &refs, json!({"dimension": k}));
            b.finish("ConcatInDim")
        })
        .boxed()
}

fn iota() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS, &COMPLEX]), dims(1..=3, 6), any::<Index>())
        .prop_map(|(t, d, k)| {
            let mut b = Builder::default();
            let shape = format!("{}{:?}", t.name(), d).replace(' ', "");
            b.push("Iota", &[], json!({"shape": shape, "iota_dimension": k.index(d.len())}));
            b.finish("Iota")
        })
        .boxed()
}

/// Start-index operands for a window of `sizes` in `d`, of one integer type,
/// in and out of range.
fn starts(d: &[i64], sizes: &[i64]) -> BoxedStrategy<Vec<Literal>> {
    let it = one_of(&[E::S32, E::S64, E::U32, E::S8, E::U64]);
    let bounds: Vec<i64> = d.iter().zip(sizes).map(|(&n, &s)| n - s).collect();
    it.prop_flat_map(move |t| bounds.iter().map(|&b| index_value(t, b).prop_map(Literal::Array).boxed()).collect::<Vec<_>>()).boxed()
}

/// DynamicSlice sizes and DynamicUpdateSlice update dimensions: from 1 to
/// the dimension ("strictly greater than zero").
fn slice_sizes(d: &[i64]) -> BoxedStrategy<Vec<i64>> {
    d.iter().map(|&n| (1..=n.max(1)).boxed()).collect::<Vec<_>>().boxed()
}

fn dynamic_slice() -> BoxedStrategy<Program> {
    (any_type(), nonempty_dims(1..=3, 5))
        .prop_flat_map(|(t, d)| (literal(t, d.clone()), Just(d.clone()), slice_sizes(&d)))
        .prop_flat_map(|(x, d, sizes)| (Just(x), starts(&d, &sizes), Just(sizes)))
        .prop_map(|(x, idx, sizes)| {
            let mut b = Builder::default();
            let mut names = vec![b.param(x)];
            names.extend(idx.into_iter().map(|i| b.param(i)));
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("DynamicSlice", &refs, json!({"size_indices": sizes}));
            b.finish("DynamicSlice")
        })
        .boxed()
}

fn dynamic_update_slice() -> BoxedStrategy<Program> {
    (any_type(), nonempty_dims(1..=3, 5))
        .prop_flat_map(|(t, d)| (literal(t, d.clone()), Just(d.clone()), slice_sizes(&d), Just(t)))
        .prop_flat_map(|(x, d, sizes, t)| (Just(x), literal(t, sizes.clone()), starts(&d, &sizes)))
        .prop_map(|(x, u, idx)| {
            let mut b = Builder::default();
            let mut names = vec![b.param(x), b.param(u)];
            names.extend(idx.into_iter().map(|i| b.param(i)));
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("DynamicUpdateSlice", &refs, json!({}));
            b.finish("DynamicUpdateSlice")
        })
        .boxed()
}

/// The reducers: (op, the types it applies to).
fn reducer() -> BoxedStrategy<(&'static str, ElementType)> {
    prop_oneof![
        3 => types(&[&INTS, &FLOATS, &SMALL_FLOATS, &COMPLEX]).prop_map(|t| ("Add", t)),
        2 => types(&[&INTS, &FLOATS, &SMALL_FLOATS]).prop_map(|t| ("Max", t)),
        1 => types(&[&INTS, &FLOATS, &SMALL_FLOATS]).prop_map(|t| ("Min", t)),
        1 => types(&[&INTS, &FLOATS, &SMALL_FLOATS]).prop_map(|t| ("Mul", t)),
        1 => Just(("Or", E::Pred)),
    ]
    .boxed()
}

fn reduce() -> BoxedStrategy<Program> {
    (reducer(), dims(0..=3, 5), any::<u8>())
        .prop_flat_map(|((op, t), d, mask)| {
            let which: Vec<i64> = (0..d.len() as i64).filter(|i| mask & (1 << i) != 0).collect();
            (literal(t, d), scalar(t), Just(which), Just(op))
        })
        .prop_map(|(x, init, which, op)| {
            let mut b = Builder::default();
            let f = b.binary_computation(op, x.as_array().map_or(E::F32, |a| a.element_type()));
            let (p, q) = (b.param(x), b.param(init.into()));
            b.push("Reduce", &[&p, &q], json!({"computation": f, "dimensions": which}));
            b.finish("Reduce")
        })
        .boxed()
}

fn reduce_window() -> BoxedStrategy<Program> {
    (reducer(), dims(1..=3, 5))
        .prop_flat_map(|((op, t), d)| {
            let per_dim: Vec<BoxedStrategy<WindowDim>> = d
                .iter()
                .map(|&n| {
                    (1i64..=3, 1i64..=3, 1i64..=2, 1i64..=2, 0i64..=2, 0i64..=2)
                        .prop_map(move |(w, s, bd, wd, lo, hi)| {
                            // Keep the dilated window within the padded base.
                            let base = (n - 1).max(0) * bd + 1 + lo + hi;
                            let w = w.min(((base - 1) / wd + 1).max(1));
                            (w, s, bd, wd, lo, hi)
                        })
                        .boxed()
                })
                .collect();
            (literal(t, d), scalar(t), per_dim, Just(op))
        })
        .prop_map(|(x, init, per_dim, op)| {
            let mut b = Builder::default();
            let f = b.binary_computation(op, x.as_array().map_or(E::F32, |a| a.element_type()));
            let (p, q) = (b.param(x), b.param(init.into()));
            let col = |k: usize| per_dim.iter().map(|t| [t.0, t.1, t.2, t.3, t.4, t.5][k]).collect::<Vec<i64>>();
            let padding: Vec<[i64; 2]> = per_dim.iter().map(|t| [t.4, t.5]).collect();
            b.push(
                "ReduceWindow",
                &[&p, &q],
                json!({"computation": f, "window_dimensions": col(0), "window_strides": col(1),
                       "base_dilations": col(2), "window_dilations": col(3), "padding": padding}),
            );
            b.finish("ReduceWindow")
        })
        .boxed()
}

fn dot_general() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &COMPLEX]), 0usize..=1, 1usize..=2, 0usize..=1, 0usize..=1, dims(4..=4, 5))
        .prop_flat_map(|(t, batch, contracting, lhs_free, rhs_free, sizes)| {
            // lhs = [batch..., lhs_free..., contracting...], rhs = [batch..., contracting..., rhs_free...].
            let b: Vec<i64> = sizes[..batch].to_vec();
            let c: Vec<i64> = sizes[1..1 + contracting].to_vec();
            let lf: Vec<i64> = sizes[3..3 + lhs_free].to_vec();
            let rf: Vec<i64> = sizes[2..2 + rhs_free].to_vec();
            let lhs = [&b[..], &lf, &c].concat();
            let rhs = [&b[..], &c, &rf].concat();
            let dn = json!({
                "lhs_batch_dimensions": (0..batch as i64).collect::<Vec<_>>(),
                "rhs_batch_dimensions": (0..batch as i64).collect::<Vec<_>>(),
                "lhs_contracting_dimensions": ((batch + lhs_free) as i64..(batch + lhs_free + contracting) as i64).collect::<Vec<_>>(),
                "rhs_contracting_dimensions": (batch as i64..(batch + contracting) as i64).collect::<Vec<_>>(),
            });
            (literal(t, lhs), literal(t, rhs), Just(dn))
        })
        .prop_map(|(l, r, dn)| {
            let mut b = Builder::default();
            let (p, q) = (b.param(l), b.param(r));
            b.push("DotGeneral", &[&p, &q], json!({"dimension_numbers": dn}));
            b.finish("DotGeneral")
        })
        .boxed()
}

/// ConvWithGeneralPadding in the default layout (lhs [N, C, spatial...],
/// rhs [O, I, spatial...]) with strides, padding, dilations, and feature
/// or batch groups.
fn conv() -> BoxedStrategy<Program> {
    // Output features per group: few (the im2col path), or from half a
    // vector to over two (the fast engine's direct path, whole and partial
    // panels).
    let out_per_group = prop_oneof![2 => 1i64..=2, 1 => 4i64..=20, 1 => Just(33i64)];
    (one_of(&[E::F32, E::F64, E::S32, E::F16]), 1usize..=2, 1i64..=2, 1i64..=3, 1i64..=3, out_per_group, any::<bool>())
        .prop_flat_map(|(t, n_spatial, batch, groups, in_per_group, out_per_group, by_batch)| {
            let spatial = proptest::collection::vec((1i64..=5, 1i64..=3, 1i64..=2, -1i64..=2, 0i64..=2, 1i64..=2, 1i64..=2), n_spatial);
            (Just(t), Just(batch), Just(groups), Just(in_per_group), Just((out_per_group, by_batch)), spatial)
        })
        .prop_flat_map(|(t, batch, groups, ipg, (opg, by_batch), spatial)| {
            let spatial: Vec<_> = spatial
                .into_iter()
                .map(|(input, window, stride, lo, hi, ld, rd)| {
                    let dilated_input = (input - 1) * ld + 1;
                    let lo = lo.max(-(dilated_input - 1));
                    let padded = dilated_input + lo + hi;
                    let window = window.min((padded - 1) / rd + 1).max(1);
                    (input, window, stride, lo, hi, ld, rd)
                })
                .collect();
            // Feature groups split the input features; batch groups split
            // the batch (each group convolved with its share of the kernels).
            let (lhs_batch, lhs_features) = if by_batch { (batch * groups, ipg) } else { (batch, groups * ipg) };
            let lhs = [vec![lhs_batch, lhs_features], spatial.iter().map(|s| s.0).collect()].concat();
            let rhs = [vec![groups * opg, ipg], spatial.iter().map(|s| s.1).collect()].concat();
            let (fgc, bgc) = if by_batch { (1, groups) } else { (groups, 1) };
            (literal(t, lhs), literal(t, rhs), Just(spatial), Just((fgc, bgc)))
        })
        .prop_map(|(l, r, spatial, (fgc, bgc))| {
            let mut b = Builder::default();
            let (p, q) = (b.param(l), b.param(r));
            let col = |f: fn(&ConvDim) -> i64| spatial.iter().map(f).collect::<Vec<i64>>();
            let padding: Vec<[i64; 2]> = spatial.iter().map(|s| [s.3, s.4]).collect();
            b.push(
                "ConvWithGeneralPadding",
                &[&p, &q],
                json!({"window_strides": col(|s| s.2), "padding": padding, "lhs_dilation": col(|s| s.5),
                       "rhs_dilation": col(|s| s.6), "feature_group_count": fgc, "batch_group_count": bgc}),
            );
            b.finish("Conv")
        })
        .boxed()
}

/// Sort of one operand (ascending with Lt, or total order) or of a key and
/// a value operand, stable or not, along any dimension.
fn sort() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), dims(1..=3, 6), any::<Index>(), any::<bool>(), any::<bool>(), any::<bool>())
        .prop_flat_map(|(t, d, k, two, total, stable)| {
            (
                literal(t, d.clone()),
                literal(E::S32, d.clone()),
                Just(k.index(d.len())),
                Just(two),
                Just(total && t.is_float()),
                Just(stable),
            )
        })
        .prop_map(|(keys, values, dim, two, total, stable)| {
            let mut b = Builder::default();
            let t = keys.as_array().map_or(E::F32, |a| a.element_type());
            let scalar = |t: ElementType| format!("{}[]", t.name());
            let mut params = vec![json!({"name": "a", "shape": scalar(t)}), json!({"name": "b", "shape": scalar(t)})];
            if two {
                params.push(json!({"name": "c", "shape": "s32[]"}));
                params.push(json!({"name": "d", "shape": "s32[]"}));
            }
            let cmp = if total { "LtTotalOrder" } else { "Lt" };
            let f = b.computation("less", json!({"params": params, "instructions": [{"name": "r", "op": cmp, "operands": ["a", "b"]}]}));
            let mut names = vec![b.param(keys)];
            if two {
                names.push(b.param(values));
            }
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            b.push("Sort", &refs, json!({"comparator": f, "dimension": dim, "is_stable": stable}));
            b.finish("Sort")
        })
        .boxed()
}

fn fft() -> BoxedStrategy<Program> {
    (proptest::sample::select(vec!["FFT", "IFFT", "RFFT", "IRFFT"]), any::<bool>(), 1usize..=2, dims(1..=3, 5), 0usize..=1)
        .prop_flat_map(|(kind, wide, k, lengths, batch)| {
            let k = k.min(lengths.len());
            let lengths: Vec<i64> = lengths[..k].iter().map(|&l| l.max(1)).collect();
            let mut operand: Vec<i64> = vec![2; batch];
            operand.extend(&lengths);
            let t = match (kind, wide) {
                ("RFFT", false) => E::F32,
                ("RFFT", true) => E::F64,
                (_, false) => E::C64,
                (_, true) => E::C128,
            };
            if kind == "IRFFT" {
                if let Some(last) = operand.last_mut() {
                    *last = *last / 2 + 1;
                }
            }
            (literal(t, operand), Just(kind), Just(lengths))
        })
        .prop_map(|(x, kind, lengths)| unary_program("Fft", x, json!({"fft_type": kind, "fft_length": lengths})))
        .boxed()
}

/// Gather of rows: operand [n, m], indices [k] (some out of bounds, which
/// clamp), slices [1, w] collapsed to [k, w].
fn gather() -> BoxedStrategy<Program> {
    (types(&[&INTS, &FLOATS, &SMALL_FLOATS]), 1i64..=6, 1i64..=4, 0i64..=5)
        .prop_flat_map(|(t, n, m, k)| {
            let idx = proptest::collection::vec(-2i32..=(n as i32 + 1), k as usize);
            (literal(t, vec![n, m]), idx, 0..=m)
        })
        .prop_map(|(x, idx, w)| {
            let mut b = Builder::default();
            let k = idx.len() as i64;
            let p = b.param(x);
            let q = b.param(Literal::Array(xlaref_reference::literal::ArrayLiteral::from_vec(vec![k, 1], idx)));
            b.push(
                "Gather",
                &[&p, &q],
                json!({"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1, w]}),
            );
            b.finish("Gather")
        })
        .boxed()
}

/// Scatter-add of rows: operand [n, m], indices [k, 1] (duplicates and out
/// of bounds), updates [k, m].
fn scatter() -> BoxedStrategy<Program> {
    (one_of(&[E::S32, E::F32, E::F64]), 1i64..=6, 1i64..=4, 0i64..=5, any::<bool>())
        .prop_flat_map(|(t, n, m, k, add)| {
            let idx = proptest::collection::vec(-1i32..=(n as i32), k as usize);
            (literal(t, vec![n, m]), idx, array(t, vec![k, m]), Just(add))
        })
        .prop_map(|(x, idx, updates, add)| {
            let mut b = Builder::default();
            let t = updates.element_type();
            let k = idx.len() as i64;
            let f = if add {
                b.binary_computation("Add", t)
            } else {
                let shape = format!("{}[]", t.name());
                b.computation(
                    "replace",
                    json!({"params": [{"name": "a", "shape": shape}, {"name": "b", "shape": shape}], "instructions": [], "root": "b"}),
                )
            };
            let p = b.param(x);
            let q = b.param(Literal::Array(xlaref_reference::literal::ArrayLiteral::from_vec(vec![k, 1], idx)));
            let u = b.param(updates.into());
            b.push(
                "Scatter",
                &[&p, &q, &u],
                json!({"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0],
                       "index_vector_dim": 1, "update_computation": f}),
            );
            b.finish("Scatter")
        })
        .boxed()
}

pub fn generators() -> Vec<(&'static str, BoxedStrategy<Program>)> {
    vec![
        ("BroadcastInDim", broadcast_in_dim()),
        ("Reshape", reshape()),
        ("Transpose", transpose()),
        ("Rev", rev()),
        ("Slice", slice()),
        ("Pad", pad()),
        ("ConcatInDim", concat()),
        ("Iota", iota()),
        ("DynamicSlice", dynamic_slice()),
        ("DynamicUpdateSlice", dynamic_update_slice()),
        ("Reduce", reduce()),
        ("ReduceWindow", reduce_window()),
        ("DotGeneral", dot_general()),
        ("Conv", conv()),
        ("Sort", sort()),
        ("Fft", fft()),
        ("Gather", gather()),
        ("Scatter", scatter()),
    ]
}
