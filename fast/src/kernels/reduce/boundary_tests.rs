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

/// A 2-D max ReduceWindow (window `w`, stride `s`, low padding `p` in
/// both dimensions) of an `h × n` f32 array, on the fast engine.
fn run_window_max(h: i64, n: i64, w: i64, s: i64, p: i64, x: Vec<f32>) -> Vec<f32> {
    run_max_window(&[h, n], &[(w, s, p), (w, s, p)], x)
}

/// A max ReduceWindow of an f32 array of `dims`, with per dimension a
/// (window, stride, low padding), on the fast engine.
fn run_max_window(dims: &[i64], windows: &[(i64, i64, i64)], x: Vec<f32>) -> Vec<f32> {
    let list = |f: &dyn Fn(&(i64, i64, i64)) -> String| windows.iter().map(f).collect::<Vec<_>>().join(", ");
    let shape = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
    let (sizes, strides, padding) = (list(&|w| w.0.to_string()), list(&|w| w.1.to_string()), list(&|w| format!("[{}, 0]", w.2)));
    let text = format!(
        r#"{{"format": "xla-json/1", "computations": {{
          "f": {{"params": [{{"name": "a", "shape": "f32[]"}}, {{"name": "b", "shape": "f32[]"}}],
                 "instructions": [{{"name": "r", "op": "Max", "operands": ["a", "b"]}}]}},
          "main": {{"params": [{{"name": "x", "shape": "f32[{shape}]"}}],
                 "instructions": [{{"name": "init", "op": "Constant", "operands": [], "shape": "f32[]", "literal": "-inf"}},
                   {{"name": "r", "op": "ReduceWindow", "operands": ["x", "init"], "computation": "f",
                     "window_dimensions": [{sizes}], "window_strides": [{strides}], "padding": [{padding}]}}]}}}}}}"#
    );
    let m = json::parse_module(&text, ReadOptions::default()).expect("module reads");
    let v = verify::verify(m, &VerifyOptions::default()).expect("module verifies");
    let x = Literal::Array(ArrayLiteral::from_vec(dims.to_vec(), x));
    let out = crate::run(&v, vec![x], &mut Env::new(Limits::default())).expect("runs");
    out.as_array().and_then(|a| a.typed::<f32>()).expect("f32 result").to_vec()
}

/// IEEE maximum of the document (NaN wins, +0 over -0), bit for bit.
fn ieee_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() { a } else { b };
    }
    if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

#[test]
fn window_boundary_rows_match_a_naive_fold() {
    // Output rows of 0, 1, vector width ± 1 and odd lengths; tiled windows
    // (stride = window: 2, 3, 4), overlapping ones (stride 1), and low
    // padding that leaves whole window rows in the padding.
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY];
    for &n_out in &[0i64, 1, 15, 16, 17, 33] {
        for &(w, s, p) in &[(2i64, 2i64, 0i64), (3, 3, 0), (4, 4, 0), (2, 1, 0), (3, 2, 0), (2, 2, 3)] {
            let n = if n_out == 0 { 0 } else { (n_out - 1) * s + w - p };
            let h = (w + 1).max(p + 1);
            let x: Vec<f32> = (0..h * n.max(0))
                .map(|i| if i % 11 == 5 { specials[(i / 11) as usize % specials.len()] } else { ((i * 7919) % 101) as f32 - 50.0 })
                .collect();
            let n = n.max(0);
            let got = run_window_max(h, n, w, s, p, x.clone());
            let (oh, ow) = ((h + p - w) / s + 1, if n + p >= w { (n + p - w) / s + 1 } else { 0 });
            let mut want = Vec::new();
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut v = f32::NEG_INFINITY;
                    for ky in 0..w {
                        for kx in 0..w {
                            let (y, xx) = (oy * s + ky - p, ox * s + kx - p);
                            if y >= 0 && xx >= 0 && y < h && xx < n {
                                v = ieee_max(v, x[(y * n + xx) as usize]);
                            }
                        }
                    }
                    want.push(v);
                }
            }
            let bits = |v: &[f32]| v.iter().map(|f| if f.is_nan() { u32::MAX } else { f.to_bits() }).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "window {w} stride {s} pad {p}, {h}x{n}");
        }
    }
}

/// A max ReduceWindow over the first two dimensions of an `h × n × c` f32
/// array (window `w`, stride `s`, low padding `p`; window 1 over the
/// last), on the fast engine: NHWC pooling, whose window rows fold a
/// chunk of features at a time.
fn run_pool_max(h: i64, n: i64, c: i64, (w, s, p): (i64, i64, i64), x: Vec<f32>) -> Vec<f32> {
    run_max_window(&[h, n, c], &[(w, s, p), (w, s, p), (1, 1, 0)], x)
}

#[test]
fn pooling_feature_chunks_match_a_naive_fold() {
    // Feature rows shorter than a chunk (32), one chunk, chunks and a
    // remainder; NaN, signed zeros and infinities among the values.
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY];
    for &c in &[1i64, 8, 15, 16, 31, 32, 33, 45, 70] {
        for &(w, s, p) in &[(2i64, 2i64, 0i64), (3, 2, 0), (2, 1, 0), (2, 2, 1)] {
            let (h, n) = (5, 6);
            let x: Vec<f32> = (0..h * n * c)
                .map(|i| if i % 13 == 5 { specials[(i / 13) as usize % specials.len()] } else { ((i * 7919) % 101) as f32 - 50.0 })
                .collect();
            let got = run_pool_max(h, n, c, (w, s, p), x.clone());
            let (oh, ow) = ((h + p - w) / s + 1, (n + p - w) / s + 1);
            let mut want = Vec::new();
            for oy in 0..oh {
                for ox in 0..ow {
                    for z in 0..c {
                        let mut v = f32::NEG_INFINITY;
                        for ky in 0..w {
                            for kx in 0..w {
                                let (y, xx) = (oy * s + ky - p, ox * s + kx - p);
                                if y >= 0 && xx >= 0 && y < h && xx < n {
                                    v = ieee_max(v, x[((y * n + xx) * c + z) as usize]);
                                }
                            }
                        }
                        want.push(v);
                    }
                }
            }
            let bits = |v: &[f32]| v.iter().map(|f| if f.is_nan() { u32::MAX } else { f.to_bits() }).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "window {w} stride {s} pad {p}, {h}x{n}x{c}");
        }
    }
}
