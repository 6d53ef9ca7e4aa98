//! The GEMM against a plain triple loop, at the boundary sizes of every
//! micro-kernel (0, 1, tile size ± 1, odd shapes, several KC blocks).

use super::*;

fn naive(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    c
}

fn check<T: Elem + PartialEq + std::fmt::Debug>(m: usize, n: usize, k: usize, from: fn(f64) -> T, parallel: bool) {
    check_by(m, n, k, from, parallel, |m, n, k, a, b, c, ldc, parallel| gemm(m, n, k, a, b, c, ldc, parallel, Clock::default()));
    // In slabs of 5 rows, as a product too large for one slab is done.
    if m > 0 && n > 0 && k > 0 {
        check_by(m, n, k, from, parallel, |m, n, k, a, b, c, ldc, parallel| in_slabs(5, m, n, k, a, b, c, ldc, parallel, Clock::default()));
    }
}

type Multiply<T> = fn(usize, usize, usize, MatRef<T>, MatRef<T>, &mut [MaybeUninit<T>], usize, bool) -> Result<(), RunError>;

fn check_by<T: Elem + PartialEq + std::fmt::Debug>(
    m: usize,
    n: usize,
    k: usize,
    from: fn(f64) -> T,
    parallel: bool,
    multiply: Multiply<T>,
) {
    // Small integers: every sum is exact in every type.
    let av: Vec<f64> = (0..m * k).map(|x| ((x * 7 + 3) % 11) as f64 - 5.0).collect();
    let bv: Vec<f64> = (0..k * n).map(|x| ((x * 5 + 1) % 13) as f64 - 6.0).collect();
    let want: Vec<T> = naive(m, n, k, &av, &bv).into_iter().map(from).collect();
    let a: Vec<T> = av.iter().map(|&x| from(x)).collect();
    let b: Vec<T> = bv.iter().map(|&x| from(x)).collect();
    // Row-major A; B read transposed from its transpose (strided packing).
    let bt: Vec<T> = (0..n * k).map(|x| b[(x % k) * n + x / k]).collect();
    let ldc = n + 3;
    let mut c = vec![from(99.0); m * ldc];
    let am = MatRef { data: &a, offset: 0, row_stride: k, col_stride: 1 };
    let bm = MatRef { data: &bt, offset: 0, row_stride: 1, col_stride: k };
    multiply(m, n, k, am, bm, as_uninit(&mut c), ldc, parallel).unwrap();
    for i in 0..m {
        assert_eq!(&c[i * ldc..i * ldc + n], &want[i * n..(i + 1) * n], "{m}x{n}x{k} row {i}");
        assert!(c[i * ldc + n..(i + 1) * ldc].iter().all(|x| *x == from(99.0)), "{m}x{n}x{k} wrote past n");
    }
}

const SIZES: [usize; 9] = [0, 1, 5, 6, 7, 12, 13, 33, 70];

#[test]
fn f32_and_f64_match_naive_loop() {
    for &m in &SIZES {
        for &n in &[0, 1, 15, 16, 17, 31, 32, 33, 65] {
            for &k in &[0, 1, 3, 17] {
                check::<f32>(m, n, k, |x| x as f32, m > 12);
                check::<f64>(m, n, k, |x| x, m > 12);
            }
        }
    }
}

#[test]
fn several_kc_blocks_and_row_blocks() {
    check::<f32>(300, 70, 600, |x| x as f32, true);
    check::<f64>(200, 40, 520, |x| x, true);
}

/// A B stored column by column (`check_by` reads it so) is laid out
/// again before the `gemm` crate multiplies: B copied by rows, or, with few
/// rows of A and C's rows packed (`ldc == n`), `Cᵀ = Bᵀ·Aᵀ` transposed
/// into C. Both against the plain loop, exactly, with a C of `ldc == n`
/// (`check_by` writes with `ldc = n + 3`, which only B's copy serves).
#[test]
fn a_column_major_b_is_laid_out_either_way() {
    fn packed<T: Elem + PartialEq + std::fmt::Debug>(m: usize, n: usize, k: usize, from: fn(f64) -> T) {
        let av: Vec<f64> = (0..m * k).map(|x| ((x * 7 + 3) % 11) as f64 - 5.0).collect();
        let bv: Vec<f64> = (0..k * n).map(|x| ((x * 5 + 1) % 13) as f64 - 6.0).collect();
        let want: Vec<T> = naive(m, n, k, &av, &bv).into_iter().map(from).collect();
        let a: Vec<T> = av.iter().map(|&x| from(x)).collect();
        let bt: Vec<T> = (0..n * k).map(|x| from(bv[(x % k) * n + x / k])).collect();
        let am = MatRef { data: &a, offset: 0, row_stride: k, col_stride: 1 };
        let bm = MatRef { data: &bt, offset: 0, row_stride: 1, col_stride: k };
        let mut c = vec![from(99.0); m * n];
        gemm(m, n, k, am, bm, as_uninit(&mut c), n, m > 20, Clock::default()).unwrap();
        assert_eq!(c, want, "{m}x{n}x{k}");
    }
    // (m, n, k): Cᵀ through a scratch while m·k + 2·m·n < n·k, B copied
    // by rows after.
    for &(m, n, k) in &[(17, 100, 300), (33, 257, 129), (40, 300, 700), (70, 64, 100), (300, 70, 600)] {
        packed::<f32>(m, n, k, |x| x as f32);
        packed::<f64>(m, n, k, |x| x);
    }
}

#[test]
fn integers_and_complex() {
    for &m in &SIZES {
        check::<i64>(m, 9, 5, |x| x as i64, true);
        check::<Complex<f64>>(m, 7, 3, |x| Complex::new(x, 0.0), false);
    }
}

/// Our own GEMM on f32 and f64 too (the `gemm` crate takes them in
/// `gemm`), should the crate ever decline them.
#[test]
fn our_gemm_on_floats() {
    for &m in &SIZES {
        // k = 0 is `gemm`'s (it fills C with zeros before any kernel).
        for &k in &[1, 3, 17, 300] {
            check_by::<f32>(m, 33, k, |x| x as f32, m > 12, own_gemm);
            check_by::<f64>(m, 17, k, |x| x, m > 12, own_gemm);
        }
    }
}

#[test]
fn operands_outside_their_data_are_an_error() {
    let a = [1.0f32; 4];
    let m = MatRef { data: &a, offset: 0, row_stride: 2, col_stride: 1 };
    let mut c = [0.0f32; 9];
    assert!(gemm(3, 3, 2, m, m, as_uninit(&mut c), 3, false, Clock::default()).is_err());
}

/// `cargo test --release -p xlaref-fast gemm_speed -- --ignored --nocapture`
#[test]
#[ignore]
fn gemm_speed() {
    fn run<T: Elem>(name: &str, n: usize, from: fn(f64) -> T) {
        let a: Vec<T> = (0..n * n).map(|x| from((x % 7) as f64)).collect();
        let b: Vec<T> = (0..n * n).map(|x| from((x % 5) as f64)).collect();
        let mut c = vec![T::ZERO; n * n];
        let am = MatRef { data: &a, offset: 0, row_stride: n, col_stride: 1 };
        let bm = MatRef { data: &b, offset: 0, row_stride: n, col_stride: 1 };
        let mut best = f64::MAX;
        for _ in 0..8 {
            let t = std::time::Instant::now();
            gemm(n, n, n, am, bm, as_uninit(&mut c), n, true, Clock::default()).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        eprintln!("{name} {n}^3: {:.2} ms, {:.1} GFLOP/s", best * 1e3, 2.0 * (n * n * n) as f64 / best / 1e9);
    }
    run::<f32>("f32", 1024, |x| x as f32);
    run::<f64>("f64", 1024, |x| x);
}

/// Skinny shapes, both layouts of each operand, against the naive loop
/// (small integers: exact in any order).
#[test]
fn skinny_products_in_every_layout() {
    let shapes = [(256, 10, 100), (10, 300, 70), (70, 300, 10), (1, 40, 9), (9, 1, 40), (33, 17, 5), (5, 200, 16), (16, 16, 16)];
    for &(m, n, k) in &shapes {
        assert!(skinny::is_skinny(m, n, k));
        let av: Vec<f64> = (0..m * k).map(|x| ((x * 7 + 3) % 11) as f64 - 5.0).collect();
        let bv: Vec<f64> = (0..k * n).map(|x| ((x * 5 + 1) % 13) as f64 - 6.0).collect();
        let want = naive(m, n, k, &av, &bv);
        let at: Vec<f64> = (0..m * k).map(|x| av[(x % m) * k + x / m]).collect();
        let bt: Vec<f64> = (0..n * k).map(|x| bv[(x % k) * n + x / k]).collect();
        for (a_t, b_t, parallel) in [(false, false, true), (true, false, true), (false, true, false), (true, true, true)] {
            let am = if a_t {
                MatRef { data: &at, offset: 0, row_stride: 1, col_stride: m }
            } else {
                MatRef { data: &av, offset: 0, row_stride: k, col_stride: 1 }
            };
            let bm = if b_t {
                MatRef { data: &bt, offset: 0, row_stride: 1, col_stride: k }
            } else {
                MatRef { data: &bv, offset: 0, row_stride: n, col_stride: 1 }
            };
            let ldc = n + 2;
            let mut c = vec![99.0; m * ldc];
            gemm(m, n, k, am, bm, as_uninit(&mut c), ldc, parallel, Clock::default()).unwrap();
            let a32: Vec<f32> = am.data.iter().map(|&x| x as f32).collect();
            let b32: Vec<f32> = bm.data.iter().map(|&x| x as f32).collect();
            let mut c32 = vec![99.0f32; m * ldc];
            let a32m = MatRef { data: &a32, offset: 0, row_stride: am.row_stride, col_stride: am.col_stride };
            let b32m = MatRef { data: &b32, offset: 0, row_stride: bm.row_stride, col_stride: bm.col_stride };
            gemm(m, n, k, a32m, b32m, as_uninit(&mut c32), ldc, parallel, Clock::default()).unwrap();
            for i in 0..m {
                assert_eq!(&c[i * ldc..i * ldc + n], &want[i * n..(i + 1) * n], "{m}x{n}x{k} {a_t} {b_t} row {i}");
                assert!(c32[i * ldc..i * ldc + n].iter().zip(&want[i * n..]).all(|(&x, &y)| x as f64 == y), "f32 {m}x{n}x{k} row {i}");
                assert!(c[i * ldc + n..(i + 1) * ldc].iter().all(|&x| x == 99.0), "wrote past n");
            }
        }
    }
}

/// `cargo test --release -p xlaref-fast skinny_speed -- --ignored --nocapture`:
/// the skinny kernel against the `gemm` crate on the same shapes.
#[test]
#[ignore]
fn skinny_speed() {
    let shapes: Vec<(usize, usize, usize)> = match std::env::var("SKINNY_SHAPE") {
        Ok(s) => vec![{
            let v: Vec<usize> = s.split('x').filter_map(|x| x.parse().ok()).collect();
            (v[0], v[1], v[2])
        }],
        Err(_) => vec![
            (256, 10, 1024),
            (256, 1024, 10),
            (10, 1024, 256),
            (1024, 10, 256),
            (16, 4096, 1024),
            (4096, 16, 1024),
            (2048, 2048, 16),
            (1, 4096, 4096),
            (4096, 1, 4096),
            (64, 64, 16),
        ],
    };
    for &(m, n, k) in &shapes {
        for (a_t, b_t) in [(false, false), (false, true), (true, false)] {
            let a: Vec<f32> = (0..m * k).map(|x| (x % 7) as f32).collect();
            let b: Vec<f32> = (0..k * n).map(|x| (x % 5) as f32).collect();
            let am = if a_t {
                MatRef { data: &a, offset: 0, row_stride: 1, col_stride: m }
            } else {
                MatRef { data: &a, offset: 0, row_stride: k, col_stride: 1 }
            };
            let bm = if b_t {
                MatRef { data: &b, offset: 0, row_stride: 1, col_stride: k }
            } else {
                MatRef { data: &b, offset: 0, row_stride: n, col_stride: 1 }
            };
            let mut c = vec![0f32; m * n];
            let mut time = |f: &mut dyn FnMut(&mut [MaybeUninit<f32>])| {
                let mut best = f64::MAX;
                for _ in 0..50 {
                    let t = std::time::Instant::now();
                    f(as_uninit(&mut c));
                    best = best.min(t.elapsed().as_secs_f64());
                }
                best
            };
            let par = std::env::var("SKINNY_ONE_THREAD").is_err();
            let ours = time(&mut |c| {
                if !skinny::gemm::<f32>(m, n, k, &am, &bm, c, n, par, Clock::default()) {
                    f32::external_gemm(m, n, k, &am, &bm, c, n, par);
                }
            });
            let theirs = time(&mut |c| {
                f32::external_gemm(m, n, k, &am, &bm, c, n, par);
            });
            let gf = |t: f64| 2.0 * (m * n * k) as f64 / t / 1e9;
            eprintln!(
                "{m:>5}x{n:>5}x{k:>5} a_t={a_t:<5} b_t={b_t:<5}  skinny {:>8.1} us {:>6.1} GFLOP/s   crate {:>8.1} us {:>6.1} GFLOP/s",
                ours * 1e6,
                gf(ours),
                theirs * 1e6,
                gf(theirs)
            );
        }
    }
}

/// One long column of B would be copied sixteen times over in whole
/// vectors: the skinny kernel declines it (the crate multiplies), and
/// the sum is still right.
#[test]
fn a_long_column_is_not_padded_to_whole_vectors() {
    let k = 1 << 21;
    let ones = vec![1.0f32; k];
    let a = MatRef { data: &ones, offset: 0, row_stride: k, col_stride: 1 };
    let b = MatRef { data: &ones, offset: 0, row_stride: 1, col_stride: 1 };
    let mut c = [0.0f32; 1];
    assert!(!skinny::gemm::<f32>(1, 1, k, &a, &b, as_uninit(&mut c), 1, true, Clock::default()));
    gemm(1, 1, k, a, b, as_uninit(&mut c), 1, true, Clock::default()).unwrap();
    assert_eq!(c[0], k as f32);
    // A short one is still the skinny kernel's.
    if skinny::gemm::<f32>(1, 1, 4096, &a, &b, as_uninit(&mut c), 1, true, Clock::default()) {
        assert_eq!(c[0], 4096.0);
    } else {
        assert!(crate::isa::isa() < crate::isa::Isa::Avx2);
    }
}
