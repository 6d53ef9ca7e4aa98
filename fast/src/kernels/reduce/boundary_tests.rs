//! Boundary-size tests of the Reduce loops against a naive fold.

use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::verify::{self, VerifyOptions};

fn run_reduce(op: &str, ty: &str, dims: &[i64], reduced: &[i64], x: ArrayLiteral) -> Literal {
    let shape = format!("{ty}[{}]", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
    let text = format!(
        r#"{{"format": "xla-json/1", "computations": {{
          "f": {{"params": [{{"name": "a", "shape": "{ty}[]"}}, {{"name": "b", "shape": "{ty}[]"}}],
                 "instructions": [{{"name": "r", "op": "{op}", "operands": ["a", "b"]}}]}},
          "main": {{"params": [{{"name": "x", "shape": "{shape}"}}],
                 "instructions": [{{"name": "init", "op": "Constant", "operands": [], "shape": "{ty}[]", "literal": 1}},
                   {{"name": "r", "op": "Reduce", "operands": ["x", "init"], "computation": "f", "dimensions": {reduced:?}}}]}}}}}}"#
    );
    let m = json::parse_module(&text, ReadOptions::default()).expect("module reads");
    let v = verify::verify(m, &VerifyOptions::default()).expect("module verifies");
    crate::run(&v, vec![Literal::Array(x)], &mut Env::new(Limits::default())).expect("runs")
}

/// The naive row-major fold of the reference's rule.
fn naive<T: Copy>(dims: &[i64], reduced: &[i64], x: &[T], init: T, f: impl Fn(T, T) -> T) -> Vec<T> {
    let kept: Vec<usize> = (0..dims.len()).filter(|d| !reduced.contains(&(*d as i64))).collect();
    let out_n: usize = kept.iter().map(|&d| dims[d] as usize).product();
    let mut out = vec![init; out_n];
    let total: usize = dims.iter().map(|&d| d as usize).product();
    for (pos, &v) in x.iter().enumerate().take(total) {
        let mut rest = pos;
        let mut index = vec![0usize; dims.len()];
        for d in (0..dims.len()).rev() {
            index[d] = rest % dims[d] as usize;
            rest /= dims[d] as usize;
        }
        let o = kept.iter().fold(0usize, |acc, &d| acc * dims[d] as usize + index[d]);
        out[o] = f(out[o], v);
    }
    out
}

#[test]
fn reduce_boundary_shapes_match_a_naive_fold() {
    let cases: Vec<(Vec<i64>, Vec<i64>)> = vec![
        (vec![0], vec![0]),
        (vec![1], vec![0]),
        (vec![63], vec![0]),
        (vec![64], vec![0]),
        (vec![65], vec![0]),
        (vec![129], vec![0]),
        (vec![40_001], vec![0]),
        (vec![3, 5], vec![0]),
        (vec![3, 5], vec![1]),
        (vec![3, 0], vec![0]),
        (vec![2, 3, 4], vec![0, 2]),
        (vec![2, 3, 4], vec![1]),
        (vec![2, 1, 3, 1], vec![0, 1]),
        (vec![1, 1], vec![]),
        (vec![5, 9000], vec![1]),
        (vec![9000, 5], vec![0]),
        (vec![3, 20000], vec![0]),
        (vec![7, 3, 2000], vec![0, 2]),
        (vec![2, 5000, 3], vec![1]),
    ];
    for (dims, reduced) in cases {
        let n: usize = dims.iter().map(|&d| d as usize).product();
        let x: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1013 - 500).collect();
        for (op, f) in [("Add", (|a: i64, b: i64| a.wrapping_add(b)) as fn(i64, i64) -> i64), ("Max", |a: i64, b: i64| a.max(b))] {
            let got = run_reduce(op, "s64", &dims, &reduced, ArrayLiteral::from_vec(dims.clone(), x.clone()));
            let want = naive(&dims, &reduced, &x, 1, f);
            let got = got.as_array().and_then(|a| a.typed::<i64>()).expect("s64 result").to_vec();
            assert_eq!(got, want, "{op} over {reduced:?} of {dims:?}");
        }
        // f32 sums: within the reassociation bound of the exact sum.
        let xf: Vec<f32> = x.iter().map(|&v| v as f32 * 0.37).collect();
        let got = run_reduce("Add", "f32", &dims, &reduced, ArrayLiteral::from_vec(dims.clone(), xf.clone()));
        let got = got.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec();
        let wide: Vec<f64> = xf.iter().map(|&v| v as f64).collect();
        let exact = naive(&dims, &reduced, &wide, 1.0, |a, b| a + b);
        let bound = naive(&dims, &reduced, &wide, 1.0, |a, b| a + b.abs());
        assert_eq!(got.len(), exact.len());
        for ((&g, &e), &b) in got.iter().zip(&exact).zip(&bound) {
            assert!((g as f64 - e).abs() <= 1e-5 * b, "f32 sum over {reduced:?} of {dims:?}: {g} vs {e}");
        }
    }
}
