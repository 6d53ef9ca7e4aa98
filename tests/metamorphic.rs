//! Metamorphic properties: relations between programs that hold on any
//! correct engine, checked on both engines without a second opinion.
//! Cases per property: `PROPTEST_CASES` (default 64).

use proptest::prelude::*;
use serde_json::{json, Value};
use xlaref::harness::compare::{compare, Tolerance};
use xlaref::harness::engine::{Engine, Fast, Reference};
use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{read_module, Path, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::verify::{verify, VerifyOptions};

const ENGINES: [&dyn Engine; 2] = [&Reference, &Fast];

fn config() -> ProptestConfig {
    ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64), ..ProptestConfig::default() }
}

/// Runs a one-computation module (`params` shapes, `instructions`) on `engine`.
fn run(engine: &dyn Engine, params: &[&str], instructions: Value, computations: Value, args: Vec<Literal>) -> Literal {
    let params: Vec<Value> = params.iter().enumerate().map(|(i, s)| json!({"name": format!("p{i}"), "shape": s})).collect();
    let mut comps = computations.as_object().cloned().unwrap_or_default();
    comps.insert("main".into(), json!({"params": params, "instructions": instructions}));
    let module = json!({"format": "xla-json/1", "computations": comps});
    let module = read_module(&module, &Path::root(), ReadOptions { max_elements: 1 << 20 }).expect("module reads");
    let verified = verify(module, &VerifyOptions { max_elements: 1 << 20, ..VerifyOptions::default() }).expect("module verifies");
    engine.run(&verified, args, &mut Env::new(Limits::default())).expect("module runs")
}

fn f32_array(dims: Vec<i64>, values: Vec<f32>) -> Literal {
    Literal::Array(ArrayLiteral::from_vec(dims, values))
}

fn shape_of(l: &Literal) -> String {
    l.shape().to_string()
}

fn dims_strategy(max_rank: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(0i64..4, 1..=max_rank)
}

/// Any f32 bit pattern: NaNs, infinities, subnormals, signed zeros.
fn values(n: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(any::<u32>().prop_map(f32::from_bits), n)
}

fn array(max_rank: usize) -> impl Strategy<Value = (Vec<i64>, Vec<f32>)> {
    dims_strategy(max_rank).prop_flat_map(|dims| {
        let n = dims.iter().product::<i64>() as usize;
        (Just(dims), values(n))
    })
}

fn same_bits(a: &Literal, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Array(x), Literal::Array(y)) => match (&x.data, &y.data) {
            (Data::F32(u), Data::F32(v)) => x.shape == y.shape && u.iter().map(|f| f.to_bits()).eq(v.iter().map(|f| f.to_bits())),
            _ => a == b,
        },
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(config())]

    /// Transpose by p then by p⁻¹, and Reshape there and back: the identity, bit for bit.
    #[test]
    fn transpose_and_reshape_round_trips((dims, v) in array(4), seed in any::<u64>()) {
        let rank = dims.len();
        let mut perm: Vec<i64> = (0..rank as i64).collect();
        let mut s = seed | 1;
        for i in (1..rank).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            perm.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let mut inverse = vec![0i64; rank];
        for (i, &p) in perm.iter().enumerate() { inverse[p as usize] = i as i64; }
        let n: i64 = dims.iter().product();
        let x = f32_array(dims.clone(), v);
        let shape = shape_of(&x);
        for engine in ENGINES {
            let back = run(engine, &[&shape], json!([
                {"name": "t", "op": "Transpose", "operands": ["p0"], "permutation": perm},
                {"name": "u", "op": "Transpose", "operands": ["t"], "permutation": inverse},
                {"name": "flat", "op": "Reshape", "operands": ["u"], "new_sizes": [n]},
                {"name": "r", "op": "Reshape", "operands": ["flat"], "new_sizes": dims}
            ]), json!({}), vec![x.clone()]);
            prop_assert!(same_bits(&back, &x), "{}: {:?} vs {:?}", engine.name(), back, x);
        }
    }

    /// Sort along the last dimension with the total order: each row is sorted
    /// and a permutation of the input row (as bit patterns); a stable sort of
    /// (key, position) keeps equal keys in input order.
    #[test]
    fn sort_is_a_sorted_permutation_and_stable((rows, v) in (1i64..4).prop_flat_map(|r| (Just(r), prop::collection::vec(prop_oneof![
            Just(0.0f32), Just(-0.0), Just(1.0), Just(-1.0), Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY), any::<f32>()], (r * 5) as usize)))) {
        let x = f32_array(vec![rows, 5], v.clone());
        let positions: Vec<i32> = (0..rows * 5).map(|i| (i % 5) as i32).collect();
        let pos = Literal::Array(ArrayLiteral::from_vec(vec![rows, 5], positions));
        let comparator = json!({"lt": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"},
                                                  {"name": "c", "shape": "s32[]"}, {"name": "d", "shape": "s32[]"}],
                                       "instructions": [{"name": "r", "op": "Compare", "operands": ["a", "b"],
                                                         "comparison_direction": "LT", "comparison_type": "TOTALORDER"}]}});
        for engine in ENGINES {
            let out = run(engine, &[&shape_of(&x), &shape_of(&pos)], json!([
                {"name": "s", "op": "Sort", "operands": ["p0", "p1"], "comparator": "lt", "dimension": 1, "is_stable": true}
            ]), comparator.clone(), vec![x.clone(), pos.clone()]);
            let Literal::Tuple(parts) = out else { panic!("Sort of two operands returns a tuple") };
            let (Some(Data::F32(keys)), Some(Data::S32(idx))) = (parts[0].as_array().map(|a| &a.data), parts[1].as_array().map(|a| &a.data)) else { panic!("types") };
            let total = |f: f32| { let b = f.to_bits() as i32; b ^ (((b >> 31) as u32) >> 1) as i32 };
            for r in 0..rows as usize {
                let row = &keys[r * 5..r * 5 + 5];
                let ids = &idx[r * 5..r * 5 + 5];
                for i in 1..5 {
                    prop_assert!(total(row[i - 1]) <= total(row[i]), "{}: row {r} not sorted: {row:?}", engine.name());
                    if total(row[i - 1]) == total(row[i]) { prop_assert!(ids[i - 1] < ids[i], "{}: unstable: {ids:?}", engine.name()); }
                }
                let mut a: Vec<u32> = row.iter().map(|f| f.to_bits()).collect();
                let mut b: Vec<u32> = v[r * 5..r * 5 + 5].iter().map(|f| f.to_bits()).collect();
                a.sort(); b.sort();
                prop_assert_eq!(a, b);
                for (k, &i) in ids.iter().enumerate() { prop_assert_eq!(row[k].to_bits(), v[r * 5 + i as usize].to_bits()); }
            }
        }
    }

    /// Gather of rows equals a DynamicSlice per start index (both clamp out-of-bounds starts);
    /// Scatter (replace) of the gathered rows back at the same unique rows restores the operand.
    #[test]
    fn gather_matches_dynamic_slices_and_scatter_restores(rows in 1i64..5, cols in 1i64..4, v in values(20), starts in prop::collection::vec(-3i32..8, 1..4)) {
        let n = (rows * cols) as usize;
        let x = f32_array(vec![rows, cols], v[..n].to_vec());
        let k = starts.len() as i64;
        let idx = Literal::Array(ArrayLiteral::from_vec(vec![k, 1], starts.clone()));
        for engine in ENGINES {
            let g = run(engine, &[&shape_of(&x), &shape_of(&idx)], json!([
                {"name": "g", "op": "Gather", "operands": ["p0", "p1"], "offset_dims": [1], "collapsed_slice_dims": [0],
                 "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1, cols]}
            ]), json!({}), vec![x.clone(), idx.clone()]);
            let Some(Data::F32(gathered)) = g.as_array().map(|a| &a.data) else { panic!("f32") };
            for (j, &s) in starts.iter().enumerate() {
                let start = Literal::Array(ArrayLiteral::from_vec(vec![], vec![s]));
                let zero = Literal::Array(ArrayLiteral::from_vec(vec![], vec![0i32]));
                let d = run(engine, &[&shape_of(&x), "s32[]", "s32[]"], json!([
                    {"name": "d", "op": "DynamicSlice", "operands": ["p0", "p1", "p2"], "slice_sizes": [1, cols]}
                ]), json!({}), vec![x.clone(), start, zero]);
                let Some(Data::F32(slice)) = d.as_array().map(|a| &a.data) else { panic!("f32") };
                let row = &gathered[j * cols as usize..(j + 1) * cols as usize];
                prop_assert!(row.iter().map(|f| f.to_bits()).eq(slice.iter().map(|f| f.to_bits())), "{}: start {s}", engine.name());
            }
            // Unique in-bounds rows: scatter the gathered rows back.
            let mut unique: Vec<i32> = starts.iter().map(|&s| s.clamp(0, rows as i32 - 1)).collect();
            unique.sort(); unique.dedup();
            let uidx = Literal::Array(ArrayLiteral::from_vec(vec![unique.len() as i64, 1], unique.clone()));
            let replace = json!({"second": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
                                            "instructions": [{"name": "r", "op": "OptimizationBarrier", "operands": ["b"]}]}});
            let restored = run(engine, &[&shape_of(&x), &shape_of(&uidx)], json!([
                {"name": "g", "op": "Gather", "operands": ["p0", "p1"], "offset_dims": [1], "collapsed_slice_dims": [0],
                 "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1, cols]},
                {"name": "s", "op": "Scatter", "operands": ["p0", "p1", "g"], "update_window_dims": [1], "inserted_window_dims": [0],
                 "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1, "unique_indices": true, "update_computation": "second"}
            ]), replace, vec![x.clone(), uidx]);
            prop_assert!(same_bits(&restored, &x), "{}", engine.name());
        }
    }

    /// IFFT(FFT(x)) = x within n·log2(n)·u·‖x‖∞ (plus the last place).
    #[test]
    fn fft_then_ifft_is_the_identity(n in 1usize..33, re in prop::collection::vec(-1000.0f64..1000.0, 32), im in prop::collection::vec(-1000.0f64..1000.0, 32)) {
        let z: Vec<num_complex::Complex<f64>> = (0..n).map(|i| num_complex::Complex::new(re[i], im[i])).collect();
        let x = Literal::Array(ArrayLiteral::from_vec(vec![n as i64], z.clone()));
        let norm = z.iter().map(|c| c.norm()).fold(0.0, f64::max);
        let bound = 8.0 * ((n as f64).log2() + 2.0) * f64::EPSILON * norm + 1e-300;
        for engine in ENGINES {
            let out = run(engine, &[&shape_of(&x)], json!([
                {"name": "f", "op": "Fft", "operands": ["p0"], "fft_type": "FFT", "fft_length": [n]},
                {"name": "i", "op": "Fft", "operands": ["f"], "fft_type": "IFFT", "fft_length": [n]}
            ]), json!({}), vec![x.clone()]);
            let Some(Data::C128(back)) = out.as_array().map(|a| &a.data) else { panic!("c128") };
            for (a, b) in back.iter().zip(&z) {
                prop_assert!((a - b).norm() <= bound, "{}: {a} vs {b} (bound {bound})", engine.name());
            }
        }
    }

    /// Conv with 1x1 kernels, stride 1, no padding = DotGeneral over the
    /// feature dimension (exact on small integers: every sum is exact).
    #[test]
    fn conv_1x1_is_a_dot_over_features(b in 1i64..3, c in 1i64..4, o in 1i64..4, hw in 1i64..4, v in prop::collection::vec(-8i32..8, 200)) {
        let nx = (b * c * hw * hw) as usize;
        let x = f32_array(vec![b, c, hw, hw], v[..nx].iter().map(|&i| i as f32).collect());
        let w = f32_array(vec![o, c, 1, 1], v[nx..nx + (o * c) as usize].iter().map(|&i| i as f32).collect());
        for engine in ENGINES {
            let conv = run(engine, &[&shape_of(&x), &shape_of(&w)], json!([
                {"name": "c", "op": "ConvWithGeneralPadding", "operands": ["p0", "p1"], "window_strides": [1, 1], "padding": [[0, 0], [0, 0]]}
            ]), json!({}), vec![x.clone(), w.clone()]);
            let dot = run(engine, &[&shape_of(&x), &shape_of(&w)], json!([
                {"name": "w2", "op": "Reshape", "operands": ["p1"], "new_sizes": [o, c]},
                {"name": "d", "op": "DotGeneral", "operands": ["p0", "w2"], "dimension_numbers": {
                    "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [1], "lhs_batch_dimensions": [], "rhs_batch_dimensions": []}},
                {"name": "t", "op": "Transpose", "operands": ["d"], "permutation": [0, 3, 1, 2]}
            ]), json!({}), vec![x.clone(), w.clone()]);
            // Equal values; the sign of a zero sum may differ (a sum of
            // -0 products is -0 from its first term, +0 from a zeroed
            // accumulator), which a zero absolute tolerance allows.
            let zeros_of_either_sign = Tolerance { abs: Some(0.0), rel: None, ulp: None };
            prop_assert!(compare(&dot, &conv, Some(&zeros_of_either_sign)).is_none(), "{}: {:?} vs {:?}", engine.name(), dot, conv);
        }
    }
}
