//! The fast engine's loop fusion (`fast/src/fusion.rs`) changes how a
//! program runs, never what it computes: on generated programs with
//! fusible chains (and on the program DAGs), the fused run equals the
//! op-by-op run exactly: bit for bit but for NaN payloads (which NaN a sum
//! of two NaNs gives depends on the operand order the compiler picked for
//! each add loop). That both agree with the reference is
//! `tests/differential.rs`'s job (the generators are in `gen::generators`).

use xlaref::gen;
use xlaref::harness::campaign::draw;
use xlaref::harness::compare::compare;
use xlaref_reference::eval::{Env, Limits};

fn cases() -> u64 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48)
}

fn env() -> Env {
    Env::new(Limits { max_elements: 1 << 24, ..Limits::default() })
}

#[test]
fn fused_and_unfused_runs_agree_exactly() {
    let mut fused_groups = 0;
    let mut pipelines = 0;
    let mut problems = Vec::new();
    for (op, strategy) in gen::generators()
        .into_iter()
        .filter(|(op, _)| matches!(*op, "fused_chain" | "transposed_dot" | "conv_epilogue" | "Dag" | "chain" | "row_level"))
    {
        for i in 0..cases() {
            let Some(program) = draw(&strategy, 0xf05e, i) else { continue };
            let module = program.verified(1 << 24).expect("generated programs verify");
            fused_groups += xlaref_fast::fusion_groups(&module).len();
            pipelines += xlaref_fast::row_pipelines(&module);
            let fused = xlaref_fast::run_borrowed(&module, &program.args, &mut env());
            let unfused = xlaref_fast::run_unfused(&module, &program.args, &mut env());
            let same = match (&fused, &unfused) {
                (Ok(a), Ok(b)) => compare(a, b, None).is_none(),
                (Err(a), Err(b)) => a.to_string() == b.to_string(),
                _ => false,
            };
            if !same {
                problems.push(format!("{op} program {i}: fused {fused:?}\nunfused {unfused:?}\n{}", program.module));
            }
        }
    }
    for p in problems.iter().take(3) {
        eprintln!("{}\n", &p[..p.len().min(4000)]);
    }
    assert!(problems.is_empty(), "{} programs run differently fused", problems.len());
    assert!(fused_groups >= cases() as usize, "the generators made only {fused_groups} fusion groups");
    eprintln!("{fused_groups} fusion groups, {pipelines} of them row pipelines");
    assert!(pipelines * 8 >= cases() as usize, "the generators made only {pipelines} row pipelines");
}

/// A LayerNorm-like chain: what fuses, and what stays apart.
#[test]
fn a_chain_with_broadcasts_fuses_into_one_group() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "x", "shape": "f32[3,5000]"}, {"name": "g", "shape": "f32[5000]"}, {"name": "m", "shape": "f32[3]"}],
      "instructions": [
        {"name": "mb", "op": "BroadcastInDim", "operands": ["m"], "out_dim_size": [3, 5000], "broadcast_dimensions": [0]},
        {"name": "d", "op": "Sub", "operands": ["x", "mb"]},
        {"name": "gb", "op": "BroadcastInDim", "operands": ["g"], "out_dim_size": [3, 5000], "broadcast_dimensions": [1]},
        {"name": "y", "op": "Mul", "operands": ["d", "gb"]},
        {"name": "t", "op": "Tanh", "operands": ["y"]},
        {"name": "flat", "op": "Reshape", "operands": ["t"], "new_sizes": [15000]},
        {"name": "n", "op": "Neg", "operands": ["flat"]},
        {"name": "s", "op": "Sub", "operands": ["x", "x"]},
        {"name": "r", "op": "Tuple", "operands": ["n", "s"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    // mb, d, gb, y, t, flat, n fuse; s is a group of one (runs alone).
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 6, 7, 8, 9]]);
    let x: Vec<f32> = (0..15000).map(|i| (i % 97) as f32 * 0.01 - 0.3).collect();
    let g: Vec<f32> = (0..5000).map(|i| 1.0 + (i % 7) as f32 * 0.1).collect();
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![3, 5000], x.clone()).into(),
        ArrayLiteral::from_vec(vec![5000], g.clone()).into(),
        ArrayLiteral::from_vec(vec![3], vec![0.1f32, -0.2, 0.3]).into(),
    ];
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let reference = xlaref_reference::eval::run(&module, args.clone(), &mut env()).expect("runs");
    let got = fused.as_tuple().and_then(|t| t[0].as_array()).and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    let want = reference.as_tuple().and_then(|t| t[0].as_array()).and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    for (k, (a, b)) in got.iter().zip(&want).enumerate() {
        let exact = -((x[k] - [0.1f32, -0.2, 0.3][k / 5000]) * g[k % 5000]).tanh();
        assert!((a - b).abs() <= 4.0 * f32::EPSILON * b.abs().max(1e-30), "element {k}: fused {a}, reference {b}");
        assert!((a - exact).abs() <= 1e-5, "element {k}: {a} vs {exact}");
    }
}

/// LayerNorm's variance: `sum((x - mean)^2)` over rows fuses into one
/// group ending in the Reduce, and a row sum of a plain parameter stays
/// alone; the values match the op-by-op run bit for bit, the reference and
/// a closed form. Rows of 3000 run one a tile; rows of 1024 four a tile,
/// each summed in registers with its own value of the broadcast, and a
/// last tile of one row.
#[test]
fn a_row_reduce_ends_the_group_of_its_producers() {
    for (rows, cols) in [(6usize, 3000usize), (13, 1024)] {
        let module = format!(
            r#"{{"format": "xla-json/1", "computations": {{
          "add": {{"params": [{{"name": "a", "shape": "f32[]"}}, {{"name": "b", "shape": "f32[]"}}],
                  "instructions": [{{"name": "s", "op": "Add", "operands": ["a", "b"]}}]}},
          "main": {{
          "params": [{{"name": "x", "shape": "f32[{rows},{cols}]"}}, {{"name": "zero", "shape": "f32[]"}}],
          "instructions": [
            {{"name": "sum", "op": "Reduce", "operands": ["x", "zero"], "computation": "add", "dimensions": [1]}},
            {{"name": "mb", "op": "BroadcastInDim", "operands": ["sum"], "out_dim_size": [{rows}, {cols}], "broadcast_dimensions": [0]}},
            {{"name": "d", "op": "Sub", "operands": ["x", "mb"]}},
            {{"name": "sq", "op": "Mul", "operands": ["d", "d"]}},
            {{"name": "var", "op": "Reduce", "operands": ["sq", "zero"], "computation": "add", "dimensions": [1]}}]}}}}}}"#
        );
        let m = xlaref_reference::json::parse_module(&module, Default::default()).expect("reads");
        let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
        // mb, d, sq, var fuse (instructions 3..=6); sum runs alone.
        assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 6]]);
        use xlaref_reference::literal::{ArrayLiteral, Literal};
        let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 37) % 101) as f32 / 128.0).collect();
        let args: Vec<Literal> = vec![
            ArrayLiteral::from_vec(vec![rows as i64, cols as i64], x.clone()).into(),
            ArrayLiteral::from_vec(vec![], vec![0f32]).into(),
        ];
        let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
        let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
        assert!(compare(&fused, &unfused, None).is_none(), "rows of {cols}: fused {fused:?} unfused {unfused:?}");
        let reference = xlaref_reference::eval::run(&module, args.clone(), &mut env()).expect("runs");
        let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
        let want = reference.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
        for (r, (a, b)) in got.iter().zip(&want).enumerate() {
            let row = &x[r * cols..(r + 1) * cols];
            let sum: f64 = row.iter().map(|&v| v as f64).sum();
            let exact: f64 = row.iter().map(|&v| (v as f64 - sum).powi(2)).sum();
            assert!((a - b).abs() <= 1e-4 * b.abs(), "rows of {cols}, row {r}: fused {a}, reference {b}");
            assert!(((*a as f64) - exact).abs() <= 1e-4 * exact, "rows of {cols}, row {r}: {a} vs {exact}");
        }
    }
}

/// A Call's body fuses with its caller (a fused run inlines it), and a
/// row Sum of 1024 f32 behind a Tanh sums in registers: the values equal
/// the op-by-op run's bit for bit and a closed form.
#[test]
fn a_called_relu_fuses_with_its_caller_and_the_row_sum() {
    let module = r#"{"format": "xla-json/1", "computations": {
      "add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
              "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]},
      "relu": {"params": [{"name": "a", "shape": "f32[4,1024]"}, {"name": "z", "shape": "f32[]"}],
               "instructions": [{"name": "zb", "op": "Broadcast", "operands": ["z"], "broadcast_sizes": [4, 1024]},
                                {"name": "m", "op": "Max", "operands": ["a", "zb"]}]},
      "main": {
      "params": [{"name": "x", "shape": "f32[4,1024]"}, {"name": "bias", "shape": "f32[1024]"}, {"name": "zero", "shape": "f32[]"}],
      "instructions": [
        {"name": "bb", "op": "BroadcastInDim", "operands": ["bias"], "out_dim_size": [4, 1024], "broadcast_dimensions": [1]},
        {"name": "y", "op": "Add", "operands": ["x", "bb"]},
        {"name": "r", "op": "Call", "operands": ["y", "zero"], "computation": "relu"},
        {"name": "t", "op": "Tanh", "operands": ["r"]},
        {"name": "sq", "op": "Mul", "operands": ["t", "t"]},
        {"name": "s", "op": "Reduce", "operands": ["sq", "zero"], "computation": "add", "dimensions": [1]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    // Inlined: x, bias, zero, bb, y, r/zb, r/m, t, sq, s; all but the
    // parameters are one group.
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 6, 7, 8, 9]]);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let x: Vec<f32> = (0..4096).map(|i| ((i * 37) % 101) as f32 / 64.0 - 0.7).collect();
    let bias: Vec<f32> = (0..1024).map(|i| (i % 13) as f32 / 32.0 - 0.2).collect();
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![4, 1024], x.clone()).into(),
        ArrayLiteral::from_vec(vec![1024], bias.clone()).into(),
        ArrayLiteral::from_vec(vec![], vec![0f32]).into(),
    ];
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(
        fused.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
        unfused.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
    );
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    for (r, a) in got.iter().enumerate() {
        let exact: f64 = (0..1024).map(|c| (x[r * 1024 + c] as f64 + bias[c] as f64).max(0.0).tanh().powi(2)).sum();
        assert!(((*a as f64) - exact).abs() <= 1e-5 * exact, "row {r}: {a} vs {exact}");
    }
}

/// The ReLU gradient `select(x > 0, dy, 0) · x`: Compare and Select run in
/// the typed tiles (`fusion/choose.rs`) and give the op-by-op values, bit
/// for bit, NaN and signed zeros included.
#[test]
fn a_relu_gradient_fuses_its_compare_and_select() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "x", "shape": "f32[2,1000]"}, {"name": "dy", "shape": "f32[2,1000]"}, {"name": "zero", "shape": "f32[]"}],
      "instructions": [
        {"name": "zb", "op": "Broadcast", "operands": ["zero"], "broadcast_sizes": [2, 1000]},
        {"name": "gt", "op": "Gt", "operands": ["x", "zb"]},
        {"name": "g", "op": "Select", "operands": ["gt", "dy", "zb"]},
        {"name": "y", "op": "Mul", "operands": ["g", "x"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 6]]);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, -1.5];
    let x: Vec<f32> = (0..2000).map(|i| if i % 7 == 0 { specials[(i / 7) % 6] } else { ((i * 37) % 101) as f32 / 16.0 - 3.0 }).collect();
    let dy: Vec<f32> = (0..2000).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.0).collect();
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![2, 1000], x.clone()).into(),
        ArrayLiteral::from_vec(vec![2, 1000], dy.clone()).into(),
        ArrayLiteral::from_vec(vec![], vec![0f32]).into(),
    ];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let want: Vec<u32> = x.iter().zip(&dy).map(|(&a, &d)| (if a > 0.0 { d } else { 0.0 } * a).to_bits()).collect();
    let got = bits(&fused).expect("f32 result");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let nan = f32::from_bits(*g).is_nan() && f32::from_bits(*w).is_nan();
        assert!(g == w || nan, "position {i}: x {} dy {}: {} vs {}", x[i], dy[i], f32::from_bits(*g), f32::from_bits(*w));
    }
}

/// JAX's weight gradient `(dyᵀ·x)ᵀ`: the Dot and its Transpose are one
/// group, and the Dot writing its result transposed gives the op-by-op
/// values bit for bit (and the closed form, within the GEMM's rounding).
#[test]
fn a_transposed_weight_gradient_is_written_transposed() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "dy", "shape": "f32[96,40]"}, {"name": "x", "shape": "f32[96,70]"}],
      "instructions": [
        {"name": "g", "op": "DotGeneral", "operands": ["dy", "x"], "dimension_numbers": {"lhs_contracting_dimensions": [0],
          "rhs_contracting_dimensions": [0], "lhs_batch_dimensions": [], "rhs_batch_dimensions": []}},
        {"name": "t", "op": "Transpose", "operands": ["g"], "permutation": [1, 0]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![2, 3]]);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let dy: Vec<f32> = (0..96 * 40).map(|i| ((i * 37) % 101) as f32 / 64.0 - 0.7).collect();
    let x: Vec<f32> = (0..96 * 70).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.5).collect();
    let args: Vec<Literal> =
        vec![ArrayLiteral::from_vec(vec![96, 40], dy.clone()).into(), ArrayLiteral::from_vec(vec![96, 70], x.clone()).into()];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(fused.as_array().map(|a| a.dims().to_vec()), Some(vec![70, 40]));
    assert_eq!(bits(&fused), bits(&unfused));
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    for j in 0..70 {
        for i in 0..40 {
            let exact: f64 = (0..96).map(|k| dy[k * 40 + i] as f64 * x[k * 70 + j] as f64).sum();
            let bound: f64 = (0..96).map(|k| (dy[k * 40 + i] as f64 * x[k * 70 + j] as f64).abs()).sum::<f64>() * 1e-5;
            assert!((got[j * 40 + i] as f64 - exact).abs() <= bound, "({j}, {i})");
        }
    }
}

/// Attention's `q·kᵀ / 8`: the Dot scales its sums as it stores them,
/// bit for bit the Dot and then the Div.
#[test]
fn a_dot_divided_by_a_power_of_two_scales_its_sums() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "q", "shape": "f32[2,40,64]"}, {"name": "k", "shape": "f32[2,30,64]"}],
      "instructions": [
        {"name": "eight", "op": "Constant", "shape": "f32[]", "literal": 8.0},
        {"name": "b", "op": "Broadcast", "operands": ["eight"], "broadcast_sizes": [2, 40, 30]},
        {"name": "s", "op": "DotGeneral", "operands": ["q", "k"], "dimension_numbers": {"lhs_contracting_dimensions": [2],
          "rhs_contracting_dimensions": [2], "lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0]}},
        {"name": "d", "op": "Div", "operands": ["s", "b"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5]]);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let q: Vec<f32> = (0..2 * 40 * 64).map(|i| ((i * 37) % 101) as f32 / 64.0 - 0.7).collect();
    let k: Vec<f32> = (0..2 * 30 * 64).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.5).collect();
    let args: Vec<Literal> =
        vec![ArrayLiteral::from_vec(vec![2, 40, 64], q.clone()).into(), ArrayLiteral::from_vec(vec![2, 30, 64], k.clone()).into()];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    for h in 0..2 {
        for i in 0..40 {
            for j in 0..30 {
                let terms = (0..64).map(|d| q[(h * 40 + i) * 64 + d] as f64 * k[(h * 30 + j) * 64 + d] as f64);
                let (exact, size): (f64, f64) = terms.fold((0.0, 0.0), |(s, a), t| (s + t, a + t.abs()));
                assert!((got[(h * 40 + i) * 30 + j] as f64 - exact / 8.0).abs() <= size * 1e-5, "({h}, {i}, {j})");
            }
        }
    }
}

/// Causal attention's `where(tril, q·kᵀ / 8, -inf)`: the Dot, its scaling,
/// the broadcasts and the Select are one group whose Dot applies the mask
/// as it stores; bit for bit the op-by-op run, and each value the scaled
/// Dot's or -inf.
#[test]
fn a_causal_mask_is_applied_as_the_dot_stores() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "q", "shape": "f32[2,40,64]"}, {"name": "k", "shape": "f32[2,30,64]"}],
      "instructions": [
        {"name": "r", "op": "Iota", "operands": [], "shape": "s32[40,30]", "iota_dimension": 0},
        {"name": "c", "op": "Iota", "operands": [], "shape": "s32[40,30]", "iota_dimension": 1},
        {"name": "tril", "op": "Compare", "operands": ["r", "c"], "comparison_direction": "GE"},
        {"name": "eight", "op": "Constant", "shape": "f32[]", "literal": 8.0},
        {"name": "b", "op": "Broadcast", "operands": ["eight"], "broadcast_sizes": [2, 40, 30]},
        {"name": "s", "op": "DotGeneral", "operands": ["q", "k"], "dimension_numbers": {"lhs_contracting_dimensions": [2],
          "rhs_contracting_dimensions": [2], "lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0]}},
        {"name": "d", "op": "Div", "operands": ["s", "b"]},
        {"name": "mb", "op": "BroadcastInDim", "operands": ["tril"], "out_dim_size": [2, 40, 30], "broadcast_dimensions": [1, 2]},
        {"name": "ninf", "op": "Constant", "shape": "f32[]", "literal": "-inf"},
        {"name": "fb", "op": "Broadcast", "operands": ["ninf"], "broadcast_sizes": [2, 40, 30]},
        {"name": "w", "op": "Select", "operands": ["mb", "d", "fb"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    let groups = xlaref_fast::fusion_groups(&module);
    assert!(groups.contains(&vec![6, 7, 8, 9, 11, 12]), "{groups:?}");
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let q: Vec<f32> = (0..2 * 40 * 64).map(|i| ((i * 37) % 101) as f32 / 64.0 - 0.7).collect();
    let k: Vec<f32> = (0..2 * 30 * 64).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.5).collect();
    let args: Vec<Literal> = vec![ArrayLiteral::from_vec(vec![2, 40, 64], q).into(), ArrayLiteral::from_vec(vec![2, 30, 64], k).into()];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    for (p, v) in got.iter().enumerate() {
        let (i, j) = ((p / 30) % 40, p % 30);
        assert_eq!(*v == f32::NEG_INFINITY, j > i, "at {p}");
    }
}

/// A bias over the last dimension of 12 (shorter than a tile, so its
/// values repeat within every tile): built once per group as a pattern
/// and read at `start % 12`, including tiles that start mid-row (5000
/// positions are not whole tiles of whole rows). Fused equals op by op
/// bit for bit, and each value is `max(x + b[j], 0)`.
#[test]
fn a_short_bias_repeats_within_tiles() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "x", "shape": "f32[5000,12]"}, {"name": "b", "shape": "f32[12]"}, {"name": "zero", "shape": "f32[]"}],
      "instructions": [
        {"name": "bb", "op": "BroadcastInDim", "operands": ["b"], "out_dim_size": [5000, 12], "broadcast_dimensions": [1]},
        {"name": "zb", "op": "Broadcast", "operands": ["zero"], "broadcast_sizes": [5000, 12]},
        {"name": "h", "op": "Add", "operands": ["x", "bb"]},
        {"name": "y", "op": "Max", "operands": ["h", "zb"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 6]]);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let x: Vec<f32> = (0..60_000).map(|i| ((i * 37) % 101) as f32 / 16.0 - 3.0).collect();
    let b: Vec<f32> = (0..12).map(|j| j as f32 * 0.25 - 1.0).collect();
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![5000, 12], x.clone()).into(),
        ArrayLiteral::from_vec(vec![12], b.clone()).into(),
        ArrayLiteral::from_vec(vec![], vec![0f32]).into(),
    ];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let got = bits(&fused).expect("f32 result");
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (x[i] + b[i % 12]).max(0.0).to_bits(), "position {i}");
    }
}

/// A LayerNorm step over f32[4096,1024]: its tiles are four rows, each row
/// reading its own mean and scale (`View::Rows`), and its 16 MiB result is
/// the program's, written past the caches (`Link::stream`). Fused equals
/// op by op, and both equal the formula.
#[test]
fn a_large_normalization_runs_rows_per_tile_and_streams_its_result() {
    let module = r#"{"format": "xla-json/1", "computations": {"main": {
      "params": [{"name": "x", "shape": "f32[4096,1024]"}, {"name": "m", "shape": "f32[4096]"},
                 {"name": "s", "shape": "f32[4096]"}, {"name": "g", "shape": "f32[1024]"}],
      "instructions": [
        {"name": "mb", "op": "BroadcastInDim", "operands": ["m"], "out_dim_size": [4096, 1024], "broadcast_dimensions": [0]},
        {"name": "sb", "op": "BroadcastInDim", "operands": ["s"], "out_dim_size": [4096, 1024], "broadcast_dimensions": [0]},
        {"name": "gb", "op": "BroadcastInDim", "operands": ["g"], "out_dim_size": [4096, 1024], "broadcast_dimensions": [1]},
        {"name": "d", "op": "Sub", "operands": ["x", "mb"]},
        {"name": "n", "op": "Mul", "operands": ["d", "sb"]},
        {"name": "y", "op": "Mul", "operands": ["n", "gb"]},
        {"name": "t", "op": "Tanh", "operands": ["y"]}]}}}"#;
    let m = xlaref_reference::json::parse_module(module, Default::default()).expect("reads");
    let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
    assert_eq!(xlaref_fast::fusion_groups(&module).len(), 1);
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let (r, c) = (4096, 1024);
    let x: Vec<f32> = (0..r * c).map(|i| ((i * 37) % 1009) as f32 / 128.0 - 4.0).collect();
    let m: Vec<f32> = (0..r).map(|i| (i % 7) as f32 * 0.5 - 1.5).collect();
    let s: Vec<f32> = (0..r).map(|i| 0.25 + (i % 5) as f32 * 0.125).collect();
    let g: Vec<f32> = (0..c).map(|j| 1.0 + (j % 3) as f32 * 0.5).collect();
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![4096, 1024], x.clone()).into(),
        ArrayLiteral::from_vec(vec![4096], m.clone()).into(),
        ArrayLiteral::from_vec(vec![4096], s.clone()).into(),
        ArrayLiteral::from_vec(vec![1024], g.clone()).into(),
    ];
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result");
    for (i, &v) in got.iter().enumerate().step_by(97) {
        let y = (x[i] - m[i / c]) * s[i / c] * g[i % c];
        let want = (y as f64).tanh();
        assert!((v as f64 - want).abs() <= 2.0 * f32::EPSILON as f64 * want.abs().max(1e-30), "position {i}: {v} against {want}");
    }
}

/// A single division by a value per row (softmax's last step) runs as a
/// chain of one link that takes each row's value as one (or, rows of
/// whole vectors shorter than a block, reads it per vector): exactly the
/// quotients, for rows shorter and longer than a tile.
#[test]
fn a_division_by_one_value_a_row_reads_it_row_by_row() {
    for (rows, cols) in [(24usize, 512usize), (5, 3000), (70, 100), (300, 64), (90, 40), (100, 16), (37, 144), (21, 240), (33, 128)] {
        let module = format!(
            r#"{{"format": "xla-json/1", "computations": {{"main": {{
          "params": [{{"name": "x", "shape": "f32[{rows},{cols}]"}}, {{"name": "s", "shape": "f32[{rows}]"}}],
          "instructions": [
            {{"name": "sb", "op": "BroadcastInDim", "operands": ["s"], "out_dim_size": [{rows}, {cols}], "broadcast_dimensions": [0]}},
            {{"name": "y", "op": "Div", "operands": ["x", "sb"]}}]}}}}}}"#
        );
        let m = xlaref_reference::json::parse_module(&module, Default::default()).expect("reads");
        let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
        assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![2, 3]]);
        use xlaref_reference::literal::{ArrayLiteral, Literal};
        let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 37) % 101) as f32 / 7.0 - 3.0).collect();
        let s: Vec<f32> = (0..rows).map(|r| if r % 9 == 4 { 0.0 } else { (r as f32 + 1.5) / 3.0 }).collect();
        let args: Vec<Literal> = vec![
            ArrayLiteral::from_vec(vec![rows as i64, cols as i64], x.clone()).into(),
            ArrayLiteral::from_vec(vec![rows as i64], s.clone()).into(),
        ];
        let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
        let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
        for (i, &y) in got.iter().enumerate() {
            let want = x[i] / s[i / cols];
            assert!(y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()), "rows of {cols}, element {i}: {y} against {want}");
        }
    }
}

/// JAX's convolution layer `relu(conv(x, k) + b)` in NHWC: the Conv joins
/// the group of its bias Add and ReLU Max and stores `max(sum + b[o], 0)`
/// directly (`fast/src/fusion/conv_epilogue.rs`), bit for bit the op-by-op
/// values. A second reader of the convolution keeps it apart.
#[test]
fn a_conv_layer_adds_its_bias_and_relu_as_it_stores() {
    let program = |extra: &str| {
        format!(
            r#"{{"format": "xla-json/1", "computations": {{"main": {{
      "params": [{{"name": "x", "shape": "f32[2,5,7,3]"}}, {{"name": "k", "shape": "f32[3,3,3,20]"}}, {{"name": "b", "shape": "f32[20]"}}],
      "instructions": [
        {{"name": "c", "op": "ConvGeneralDilated", "operands": ["x", "k"], "window_strides": [1, 1], "padding": [[1, 1], [1, 1]],
          "dimension_numbers": "b01f_01io->b01f"}},
        {{"name": "bb", "op": "BroadcastInDim", "operands": ["b"], "out_dim_size": [2, 5, 7, 20], "broadcast_dimensions": [3]}},
        {{"name": "s", "op": "Add", "operands": ["c", "bb"]}},
        {{"name": "zero", "op": "Constant", "shape": "f32[]", "literal": 0.0}},
        {{"name": "z", "op": "Broadcast", "operands": ["zero"], "broadcast_sizes": [2, 5, 7, 20]}},
        {{"name": "r", "op": "Max", "operands": ["s", "z"]}}{extra}]}}}}}}"#
        )
    };
    let verified = |text: &str| {
        let m = xlaref_reference::json::parse_module(text, Default::default()).expect("reads");
        xlaref_reference::verify::verify(m, &Default::default()).expect("verifies")
    };
    use xlaref_reference::literal::{ArrayLiteral, Literal};
    let x: Vec<f32> = (0..2 * 5 * 7 * 3).map(|i| ((i * 37) % 101) as f32 / 16.0 - 3.0).collect();
    let k: Vec<f32> = (0..9 * 3 * 20).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.75).collect();
    let b: Vec<f32> = (0..20).map(|i| i as f32 - 9.5).collect();
    let args: Vec<Literal> = vec![
        ArrayLiteral::from_vec(vec![2, 5, 7, 3], x.clone()).into(),
        ArrayLiteral::from_vec(vec![3, 3, 3, 20], k.clone()).into(),
        ArrayLiteral::from_vec(vec![20], b.clone()).into(),
    ];
    let module = verified(&program(""));
    assert_eq!(xlaref_fast::fusion_groups(&module), vec![vec![3, 4, 5, 7, 8]]);
    let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
    let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
    assert_eq!(bits(&fused), bits(&unfused));
    let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
    let mut positive = 0;
    for (p, &g) in got.iter().enumerate() {
        let (n, y, xx, o) = (p / (5 * 7 * 20), p / (7 * 20) % 5, p / 20 % 7, p % 20);
        let mut exact = 0.0f64;
        for ky in 0..3 {
            for kx in 0..3 {
                let (iy, ix) = (y as i64 + ky - 1, xx as i64 + kx - 1);
                if (0..5).contains(&iy) && (0..7).contains(&ix) {
                    for z in 0..3 {
                        let xv = x[((n * 5 + iy as usize) * 7 + ix as usize) * 3 + z] as f64;
                        exact += xv * k[((ky as usize * 3 + kx as usize) * 3 + z) * 20 + o] as f64;
                    }
                }
            }
        }
        let want = (exact + b[o] as f64).max(0.0);
        assert!((g as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()), "{p}: {g} against {want}");
        assert!(g.to_bits() != (-0.0f32).to_bits(), "{p}: ReLU gives +0, not -0");
        positive += usize::from(g > 0.0);
    }
    assert!(positive > 100 && positive < got.len() - 100, "{positive} positive values: both sides of the ReLU");
    // Read twice, the convolution stays apart (its value is needed).
    let twice = verified(&program(r#", {"name": "t", "op": "Sub", "operands": ["r", "c"]}"#));
    assert!(xlaref_fast::fusion_groups(&twice).iter().all(|g| !g.contains(&3)));
}

/// LayerNorm as JAX writes it, then a Tanh: the mean's and the variance's
/// row sums, the per-row arithmetic between them and the normalization
/// are one row pipeline (`fast/src/fusion/pipeline.rs`) that folds a few
/// rows and normalizes them while they are in L1. It computes bit for bit
/// what the ops compute one by one, for rows read several a tile (768),
/// one a tile (3000), shorter than a tile (100) and shorter than a quarter
/// of one, whole vectors or not (64, 40), rows of whole vectors shorter
/// than a block, whose values the last stage reads per vector (32, 64,
/// 144, 240: `Arg::Rows`), and whether its last
/// stage runs on the typed tiles or, with a round trip through f64 that
/// they do not run, after the other stages over all rows.
#[test]
fn a_layer_norm_is_one_row_pipeline() {
    for (rows, cols) in [(37usize, 768usize), (5, 3000), (64, 100), (300, 64), (70, 40), (130, 32), (37, 144), (19, 240)] {
        for round_trip in [false, true] {
            let last = if round_trip {
                r#"{"name": "w", "op": "ConvertElementType", "operands": ["y"], "new_element_type": "f64"},
                   {"name": "y2", "op": "ConvertElementType", "operands": ["w"], "new_element_type": "f32"},
                   {"name": "t", "op": "Tanh", "operands": ["y2"]}"#
            } else {
                r#"{"name": "t", "op": "Tanh", "operands": ["y"]}"#
            };
            let module = format!(
                r#"{{"format": "xla-json/1", "computations": {{
              "add": {{"params": [{{"name": "a", "shape": "f32[]"}}, {{"name": "b", "shape": "f32[]"}}],
                      "instructions": [{{"name": "s", "op": "Add", "operands": ["a", "b"]}}]}},
              "main": {{
              "params": [{{"name": "x", "shape": "f32[{rows},{cols}]"}}, {{"name": "g", "shape": "f32[{cols}]"}},
                         {{"name": "zero", "shape": "f32[]"}}, {{"name": "count", "shape": "f32[]"}}, {{"name": "eps", "shape": "f32[]"}}],
              "instructions": [
                {{"name": "sum", "op": "Reduce", "operands": ["x", "zero"], "computation": "add", "dimensions": [1]}},
                {{"name": "mean", "op": "Div", "operands": ["sum", "count"]}},
                {{"name": "mc", "op": "Reshape", "operands": ["mean"], "new_sizes": [{rows}, 1]}},
                {{"name": "mb", "op": "BroadcastInDim", "operands": ["mc"], "out_dim_size": [{rows}, {cols}], "broadcast_dimensions": [0, 1]}},
                {{"name": "d", "op": "Sub", "operands": ["x", "mb"]}},
                {{"name": "sq", "op": "Mul", "operands": ["d", "d"]}},
                {{"name": "ss", "op": "Reduce", "operands": ["sq", "zero"], "computation": "add", "dimensions": [1]}},
                {{"name": "var", "op": "Div", "operands": ["ss", "count"]}},
                {{"name": "ve", "op": "Add", "operands": ["var", "eps"]}},
                {{"name": "rs", "op": "Rsqrt", "operands": ["ve"]}},
                {{"name": "rb", "op": "BroadcastInDim", "operands": ["rs"], "out_dim_size": [{rows}, {cols}], "broadcast_dimensions": [0]}},
                {{"name": "n", "op": "Mul", "operands": ["d", "rb"]}},
                {{"name": "gb", "op": "BroadcastInDim", "operands": ["g"], "out_dim_size": [{rows}, {cols}], "broadcast_dimensions": [1]}},
                {{"name": "y", "op": "Mul", "operands": ["n", "gb"]}},
                {last}]}}}}}}"#
            );
            let m = xlaref_reference::json::parse_module(&module, Default::default()).expect("reads");
            let module = xlaref_reference::verify::verify(m, &Default::default()).expect("verifies");
            // Every instruction after the five parameters, in one group.
            let count = if round_trip { 17 } else { 15 };
            assert_eq!(xlaref_fast::fusion_groups(&module), vec![(5..5 + count).collect::<Vec<_>>()], "rows of {cols}");
            assert_eq!(xlaref_fast::row_pipelines(&module), 1);
            use xlaref_reference::literal::{ArrayLiteral, Literal};
            let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 37) % 101) as f32 / 16.0 + (i / cols) as f32).collect();
            let g: Vec<f32> = (0..cols).map(|j| 0.5 + (j % 5) as f32 * 0.25).collect();
            let args: Vec<Literal> = vec![
                ArrayLiteral::from_vec(vec![rows as i64, cols as i64], x.clone()).into(),
                ArrayLiteral::from_vec(vec![cols as i64], g.clone()).into(),
                ArrayLiteral::from_vec(vec![], vec![0f32]).into(),
                ArrayLiteral::from_vec(vec![], vec![cols as f32]).into(),
                ArrayLiteral::from_vec(vec![], vec![1e-5f32]).into(),
            ];
            let bits = |l: &Literal| l.as_array().and_then(|a| a.typed::<f32>()).map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            let fused = xlaref_fast::run_borrowed(&module, &args, &mut env()).expect("runs");
            let unfused = xlaref_fast::run_unfused(&module, &args, &mut env()).expect("runs");
            assert_eq!(bits(&fused), bits(&unfused), "rows of {cols}, round trip {round_trip}");
            let got = fused.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result");
            for r in 0..rows {
                let row = &x[r * cols..(r + 1) * cols];
                let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
                let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
                for j in (0..cols).step_by(7) {
                    let want = ((row[j] as f64 - mean) / (var + 1e-5).sqrt() * g[j] as f64).tanh();
                    let v = got[r * cols + j] as f64;
                    assert!((v - want).abs() <= 1e-5, "rows of {cols}, row {r}, column {j}: {v} against {want}");
                }
            }
        }
    }
}
