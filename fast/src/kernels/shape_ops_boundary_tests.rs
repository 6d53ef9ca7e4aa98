//! Boundary-size tests of the tiled Transpose and the parallel Gather
//! paths (both write uninitialized memory) against index arithmetic.

use xlaref_reference::eval::{Env, Limits};
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::verify::{self, VerifyOptions};

fn run(main: &str, args: Vec<ArrayLiteral>) -> Vec<f32> {
    let text = format!(r#"{{"format": "xla-json/1", "computations": {{"main": {main}}}}}"#);
    let m = json::parse_module(&text, ReadOptions { max_elements: 1 << 26 }).expect("module reads");
    let v = verify::verify(m, &VerifyOptions { max_elements: 1 << 26, ..VerifyOptions::default() }).expect("module verifies");
    let args = args.into_iter().map(Literal::Array).collect();
    let out = crate::run(&v, args, &mut Env::new(Limits { max_elements: 1 << 26, ..Limits::default() })).expect("runs");
    match out {
        Literal::Array(ArrayLiteral { data: Data::F32(v), .. }) => v,
        other => panic!("unexpected result {other:?}"),
    }
}

fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn transpose_of_the_minor_dimensions_at_tile_boundaries() {
    for (batch, rows, cols) in [(1, 0, 5), (1, 1, 1), (1, 31, 33), (2, 32, 32), (1, 33, 65), (3, 129, 7), (1, 300, 257), (1, 1024, 64)] {
        let x = iota(batch * rows * cols);
        let main = format!(
            r#"{{"params": [{{"name": "x", "shape": "f32[{batch},{rows},{cols}]"}}],
                "instructions": [{{"name": "t", "op": "Transpose", "operands": ["x"], "permutation": [0, 2, 1]}}]}}"#
        );
        let got = run(&main, vec![ArrayLiteral::from_vec(vec![batch as i64, rows as i64, cols as i64], x)]);
        let want: Vec<f32> = (0..batch * cols * rows)
            .map(|p| {
                let (b, c, r) = (p / (cols * rows), (p / rows) % cols, p % rows);
                (b * rows * cols + r * cols + c) as f32
            })
            .collect();
        assert_eq!(got, want, "{batch}x{rows}x{cols}");
    }
}

/// Every kind of permutation end to end, large enough to run in parallel
/// tasks, against index arithmetic: NCHW to NHWC with a size-1 dimension
/// moved, a reversal of three dimensions, attention heads over short rows
/// (runs of 4 elements), and a run of 3 that stays last.
#[test]
fn permutations_against_index_arithmetic() {
    let cases: [(&[usize], &[usize]); 4] =
        [(&[2, 17, 1, 6, 5], &[0, 3, 2, 4, 1]), (&[33, 40, 31], &[2, 1, 0]), (&[3, 65, 17, 4], &[0, 2, 1, 3]), (&[70, 129, 3], &[1, 0, 2])];
    for (dims, permutation) in cases {
        let n: usize = dims.iter().product();
        let mut strides = vec![1usize; dims.len()];
        for d in (0..dims.len() - 1).rev() {
            strides[d] = strides[d + 1] * dims[d + 1];
        }
        let out_dims: Vec<usize> = permutation.iter().map(|&p| dims[p]).collect();
        let shape = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
        let main = format!(
            r#"{{"params": [{{"name": "x", "shape": "f32[{shape}]"}}],
                "instructions": [{{"name": "t", "op": "Transpose", "operands": ["x"], "permutation": {permutation:?}}}]}}"#
        );
        let got = run(&main, vec![ArrayLiteral::from_vec(dims.iter().map(|&d| d as i64).collect(), iota(n))]);
        let want: Vec<f32> = (0..n)
            .map(|mut p| {
                let mut offset = 0;
                for d in (0..dims.len()).rev() {
                    offset += (p % out_dims[d]) * strides[permutation[d]];
                    p /= out_dims[d];
                }
                offset as f32
            })
            .collect();
        assert_eq!(got, want, "{dims:?} by {permutation:?}");
    }
}

#[test]
fn scalar_gather_across_parallel_chunks() {
    for n in [1usize, 7, (1 << 15) - 1, 1 << 15, (1 << 15) + 1, 100_003] {
        let x = iota(n);
        // Indices past both ends clamp to the first and last element.
        let idx: Vec<i32> = (0..n as i64).map(|i| ((i * 7919) % (n as i64 + 4) - 2) as i32).collect();
        let main = format!(
            r#"{{"params": [{{"name": "x", "shape": "f32[{n}]"}}, {{"name": "i", "shape": "s32[{n},1]"}}],
                "instructions": [{{"name": "g", "op": "Gather", "operands": ["x", "i"], "offset_dims": [],
                  "collapsed_slice_dims": [0], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1]}}]}}"#
        );
        let got = run(&main, vec![ArrayLiteral::from_vec(vec![n as i64], x), ArrayLiteral::from_vec(vec![n as i64, 1], idx.clone())]);
        let want: Vec<f32> = idx.iter().map(|&i| i.clamp(0, n as i32 - 1) as f32).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn gather_of_long_rows_split_across_tasks() {
    // Two slices of 40000 contiguous elements each: one output row is
    // longer than a parallel task, so tasks start inside rows.
    let (n, len) = (100_000usize, 40_000usize);
    let x = iota(n);
    let idx = vec![70_000i32, 5];
    let main = format!(
        r#"{{"params": [{{"name": "x", "shape": "f32[{n}]"}}, {{"name": "i", "shape": "s32[2,1]"}}],
            "instructions": [{{"name": "g", "op": "Gather", "operands": ["x", "i"], "offset_dims": [1],
              "collapsed_slice_dims": [], "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [{len}]}}]}}"#
    );
    let got = run(&main, vec![ArrayLiteral::from_vec(vec![n as i64], x), ArrayLiteral::from_vec(vec![2, 1], idx)]);
    // 70000 clamps to n - len = 60000.
    let want: Vec<f32> = (60_000..n).chain(5..5 + len).map(|i| i as f32).collect();
    assert_eq!(got, want);
}
