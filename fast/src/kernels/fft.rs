//! Fft with `rustfft`: c64 and f32 transforms in f32 (as XLA CPU), c128 and
//! f64 in f64. Multi-dimensional transforms are cascades of 1-D transforms
//! along each axis (the same order as the reference: RFFT innermost first,
//! IRFFT innermost last). An axis that is not the innermost is moved there
//! by a blocked transpose and back; many lines run in parallel, and one
//! long line is split by the four-step algorithm so that it runs in
//! parallel too. Inverse transforms divide by N per axis.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use num_complex::Complex;
use rayon::prelude::*;
use rustfft::{Fft, FftNum, FftPlanner};
use xlaref_reference::ir::{FftType, Op};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::RunError;

use crate::exec::Executor;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;

pub fn eval(_exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let Op::Fft { fft_type, fft_length } = op else { return Err(internal("not an Fft op")) };
    let x = operands.first().and_then(|l| l.as_array()).ok_or_else(|| internal("expected an array operand"))?;
    let out = shape.as_array().ok_or_else(|| internal("expected an array result"))?;
    let dims: Vec<usize> = x.dims().iter().map(|&d| d as usize).collect();
    let out_dims: Vec<usize> = out.dims.iter().map(|&d| d as usize).collect();
    if fft_length.is_empty() || fft_length.len() > dims.len() || out_dims.len() != dims.len() {
        return Err(internal("fft_length does not fit the operand"));
    }
    let t = *fft_type;
    let data = match &x.data {
        Data::C64(v) => finish32(t, transform(t, fft_length.len(), v.clone(), &dims, &out_dims)?),
        Data::C128(v) => finish64(t, transform(t, fft_length.len(), v.clone(), &dims, &out_dims)?),
        Data::F32(v) => finish32(t, transform(t, fft_length.len(), par::map(v, |r| Complex::new(r, 0.0)), &dims, &out_dims)?),
        Data::F64(v) => finish64(t, transform(t, fft_length.len(), par::map(v, |r| Complex::new(r, 0.0)), &dims, &out_dims)?),
        _ => return Err(internal("Fft operand type")),
    };
    if data.len() != out.element_count() {
        return Err(internal("Fft result size"));
    }
    Ok(ArrayLiteral::with_shape(out.clone(), data).into())
}

fn finish32(t: FftType, v: Vec<Complex<f32>>) -> Data {
    match t {
        FftType::Irfft => Data::F32(par::map(&v, |z| z.re)),
        _ => Data::C64(v),
    }
}

fn finish64(t: FftType, v: Vec<Complex<f64>>) -> Data {
    match t {
        FftType::Irfft => Data::F64(par::map(&v, |z| z.re)),
        _ => Data::C128(v),
    }
}

/// Cached twiddle tables of the four-step algorithm, by `(n, inverse)`.
type TwiddleCache<F> = Mutex<HashMap<(usize, bool), Arc<Twiddles<F>>>>;

/// The float types transforms run in, each with its shared plan caches.
trait Float: FftNum + Default {
    fn planner() -> &'static Mutex<FftPlanner<Self>>;
    fn twiddle_cache() -> &'static TwiddleCache<Self>;
    fn of(x: f64) -> Self;
}

macro_rules! float {
    ($t:ty) => {
        impl Float for $t {
            fn planner() -> &'static Mutex<FftPlanner<$t>> {
                static P: OnceLock<Mutex<FftPlanner<$t>>> = OnceLock::new();
                P.get_or_init(|| Mutex::new(FftPlanner::new()))
            }
            fn twiddle_cache() -> &'static TwiddleCache<$t> {
                static T: OnceLock<TwiddleCache<$t>> = OnceLock::new();
                T.get_or_init(|| Mutex::new(HashMap::new()))
            }
            fn of(x: f64) -> $t {
                x as $t
            }
        }
    };
}
float!(f32);
float!(f64);

fn plan<F: Float>(n: usize, inverse: bool) -> Arc<dyn Fft<F>> {
    // A poisoned lock only means another transform panicked; the planner's
    // cache is still usable.
    let mut planner = F::planner().lock().unwrap_or_else(|e| e.into_inner());
    if inverse {
        planner.plan_fft_inverse(n)
    } else {
        planner.plan_fft_forward(n)
    }
}

/// Runs the transform of type `t` over the `fft_rank` innermost axes of
/// `data` (dimensions `dims`), giving an array of `out_dims`.
fn transform<F: Float>(t: FftType, fft_rank: usize, mut data: Vec<Complex<F>>, dims: &[usize], out_dims: &[usize]) -> R<Vec<Complex<F>>> {
    let rank = dims.len();
    let (first, innermost) = (rank - fft_rank, rank - 1);
    let mut dims = dims.to_vec();
    match t {
        FftType::Fft | FftType::Ifft => {
            for axis in first..rank {
                along(&mut data, &dims, axis, t == FftType::Ifft);
            }
        }
        FftType::Rfft => {
            along(&mut data, &dims, innermost, false);
            let keep = out_dims[innermost];
            data = resize_lines(&data, dims[innermost], keep, |line, k| line[k]);
            dims[innermost] = keep;
            for axis in first..innermost {
                along(&mut data, &dims, axis, false);
            }
        }
        FftType::Irfft => {
            for axis in first..innermost {
                along(&mut data, &dims, axis, true);
            }
            let n = out_dims[innermost];
            // The Hermitian extension X[k] = conj(X[n - k]) beyond the kept half.
            data = resize_lines(&data, dims[innermost], n, |line, k| if k < line.len() { line[k] } else { line[n - k].conj() });
            dims[innermost] = n;
            along(&mut data, &dims, innermost, true);
        }
    }
    Ok(data)
}

/// Every line of `h` entries becomes a line of `n` entries, entry `k` being
/// `entry(line, k)`.
fn resize_lines<F: Float>(
    data: &[Complex<F>],
    h: usize,
    n: usize,
    entry: impl Fn(&[Complex<F>], usize) -> Complex<F> + Sync,
) -> Vec<Complex<F>> {
    if h == 0 || n == 0 {
        return Vec::new();
    }
    let lines = data.len() / h;
    par::build(lines * n, |start, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            let p = start + i;
            let line = &data[p / n * h..p / n * h + h];
            o.write(entry(line, p % n));
        }
    })
}

/// The 1-D transform of every line along `axis`, in place.
fn along<F: Float>(data: &mut Vec<Complex<F>>, dims: &[usize], axis: usize, inverse: bool) {
    let n = dims[axis];
    let total: usize = dims.iter().product();
    if n <= 1 || total == 0 {
        // A transform of length 1 is the identity (forward and inverse).
        return;
    }
    let stride: usize = dims[axis + 1..].iter().product();
    if stride == 1 {
        lines(data, n, inverse);
        return;
    }
    // Move the axis innermost: [outer][n][stride] -> [outer][stride][n].
    let outer = total / (n * stride);
    let mut moved = swap_minor(data, outer, n, stride);
    lines(&mut moved, n, inverse);
    *data = swap_minor(&moved, outer, stride, n);
}

/// Transforms every contiguous line of length `n` of `data`.
fn lines<F: Float>(data: &mut [Complex<F>], n: usize, inverse: bool) {
    let count = data.len() / n;
    if count < 4 && n >= 1 << 16 {
        if let Some((n1, n2)) = split(n) {
            for line in data.chunks_exact_mut(n) {
                four_step(line, n1, n2, inverse);
            }
            return;
        }
    }
    let fft = plan::<F>(n, inverse);
    let per_task = (par::PARALLEL_THRESHOLD / n).max(1);
    let scale = F::of(1.0 / n as f64);
    let exact_scale = n.is_power_of_two();
    let n_f = F::of(n as f64);
    let clock = xlaref_reference::watch::clock();
    let run = |chunk: &mut [Complex<F>]| {
        if clock.passed() {
            return;
        }
        let mut scratch = vec![Complex::<F>::default(); fft.get_inplace_scratch_len()];
        fft.process_with_scratch(chunk, &mut scratch);
        if inverse {
            par::simd(
                #[inline(always)]
                || {
                    if exact_scale {
                        chunk.iter_mut().for_each(|z| *z = *z * scale);
                    } else {
                        chunk.iter_mut().for_each(|z| *z = *z / n_f);
                    }
                },
            );
        }
    };
    if count <= 1 || data.len() < par::PARALLEL_THRESHOLD {
        run(data);
    } else {
        data.par_chunks_mut(per_task * n).for_each(run);
    }
}

/// Two factors of `n` near its square root, both at least 64.
fn split(n: usize) -> Option<(usize, usize)> {
    let root = (n as f64).sqrt() as usize;
    (64..=root).rev().find(|&d| n.is_multiple_of(d)).map(|d| (d, n / d))
}

/// One transform of length `n1 · n2` as `n2` transforms of length `n1`,
/// twiddles, and `n1` transforms of length `n2` (Bailey's four steps),
/// each step parallel: with `x[n2' + n2 · n1']`,
/// `X[k1 + n1 · k2] = Σ_{n2'} w^(n2' k1) (Σ_{n1'} x[..] w1^(n1' k1)) w2^(n2' k2)`.
/// The three transpositions alternate between `line` and one buffer of
/// its size, so a transform needs one line of extra memory.
fn four_step<F: Float>(line: &mut [Complex<F>], n1: usize, n2: usize, inverse: bool) {
    // [n1][n2] -> [n2][n1]: rows of n1 samples.
    let mut a = swap_minor(line, 1, n1, n2);
    let fft1 = plan::<F>(n1, inverse);
    let twiddles = twiddles::<F>(n1 * n2, inverse);
    a.par_chunks_mut(n1).enumerate().for_each_init(
        || (vec![Complex::<F>::default(); fft1.get_inplace_scratch_len()], Vec::with_capacity(n1)),
        |(scratch, tw), (r, row)| {
            fft1.process_with_scratch(row, scratch);
            twiddles.row(r, n1, tw);
            par::simd(
                #[inline(always)]
                || row.iter_mut().zip(tw.iter()).for_each(|(z, &w)| *z = *z * w),
            );
        },
    );
    // [n2][n1] -> [n1][n2]: rows of n2 entries, then their transforms.
    swap_into(&a, line, 1, n2, n1);
    let fft2 = plan::<F>(n2, inverse);
    line.par_chunks_mut(n2).for_each_init(
        || vec![Complex::<F>::default(); fft2.get_inplace_scratch_len()],
        |scratch, row| fft2.process_with_scratch(row, scratch),
    );
    // [k1][k2] -> [k2][k1], the output order k1 + n1 · k2.
    swap_into(line, &mut a, 1, n1, n2);
    let n = n1 * n2;
    let scale = F::of(1.0 / n as f64);
    let exact_scale = n.is_power_of_two();
    let n_f = F::of(n as f64);
    line.par_chunks_mut(1 << 14).zip(a.par_chunks(1 << 14)).for_each(|(dst, src)| {
        par::simd(
            #[inline(always)]
            || {
                if !inverse {
                    dst.copy_from_slice(src);
                } else if exact_scale {
                    dst.iter_mut().zip(src).for_each(|(d, &z)| *d = z * scale);
                } else {
                    dst.iter_mut().zip(src).for_each(|(d, &z)| *d = z / n_f);
                }
            },
        )
    });
}

/// The twiddle factors `w^m`, `w = e^(∓2πi/n)`, as the product of two
/// small tables (`m = hi · 2^10 + lo`) multiplied in f64, so that a
/// transform of a million points needs kilobytes of tables, not a
/// table of its own size.
struct Twiddles<F> {
    n: usize,
    hi: Vec<Complex<f64>>,
    lo: Vec<Complex<f64>>,
    _of: std::marker::PhantomData<F>,
}

const LO_BITS: usize = 10;

impl<F: Float> Twiddles<F> {
    fn new(n: usize, inverse: bool) -> Twiddles<F> {
        let sign = if inverse { 1.0 } else { -1.0 };
        let w = |m: usize| {
            let angle = sign * 2.0 * std::f64::consts::PI * (m as f64 / n as f64);
            Complex::new(angle.cos(), angle.sin())
        };
        let lo = (0..1 << LO_BITS).map(w).collect();
        let hi = (0..(n >> LO_BITS) + 1).map(|h| w(h << LO_BITS)).collect();
        Twiddles { n, hi, lo, _of: std::marker::PhantomData }
    }

    /// `w^(r·c)` for `c < n1`, into `out`; the exponent is reduced mod `n`
    /// in integers.
    fn row(&self, r: usize, n1: usize, out: &mut Vec<Complex<F>>) {
        out.clear();
        let (n, step) = (self.n, r % self.n.max(1));
        let mut m = 0usize;
        for _ in 0..n1 {
            let z = self.hi[m >> LO_BITS] * self.lo[m & ((1 << LO_BITS) - 1)];
            out.push(Complex::new(F::of(z.re), F::of(z.im)));
            m += step;
            if m >= n {
                m -= n;
            }
        }
    }
}

/// The cached twiddle tables of a four-step transform of length `n`.
fn twiddles<F: Float>(n: usize, inverse: bool) -> Arc<Twiddles<F>> {
    let key = (n, inverse);
    if let Some(t) = F::twiddle_cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return t.clone();
    }
    let table = Arc::new(Twiddles::new(n, inverse));
    F::twiddle_cache().lock().unwrap_or_else(|e| e.into_inner()).insert(key, table.clone());
    table
}

/// `[outer][a][b]` -> `[outer][b][a]` (the Transpose kernel).
fn swap_minor<T: Copy + Default + Send + Sync>(src: &[T], outer: usize, a: usize, b: usize) -> Vec<T> {
    let mut out = vec![T::default(); outer * a * b];
    swap_into(src, &mut out, outer, a, b);
    out
}

/// [`swap_minor`] into `out` (of the same size as `src`).
fn swap_into<T: Copy + Send + Sync>(src: &[T], out: &mut [T], outer: usize, a: usize, b: usize) {
    debug_assert_eq!(src.len(), outer * a * b);
    super::transpose::swap_matrices_into(src, out, a, b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[Complex<f64>]) -> Vec<Complex<f64>> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(j, &v)| v * Complex::from_polar(1.0, -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64))
                    .sum()
            })
            .collect()
    }

    #[test]
    fn four_step_matches_the_definition() {
        let (n1, n2) = (64, 96);
        let x: Vec<Complex<f64>> = (0..n1 * n2).map(|i| Complex::new((i % 7) as f64 - 3.0, (i % 5) as f64 * 0.5)).collect();
        let mut y = x.clone();
        four_step(&mut y, n1, n2, false);
        let expected = naive(&x);
        for (a, b) in y.iter().zip(&expected) {
            assert!((a - b).norm() < 1e-8, "{a} vs {b}");
        }
        four_step(&mut y, n1, n2, true);
        for (a, b) in y.iter().zip(&x) {
            assert!((a - b).norm() < 1e-12);
        }
    }

    #[test]
    fn strided_axis() {
        // 2-D FFT of a 3x4 array equals transforming rows then columns.
        let x: Vec<Complex<f64>> = (0..12).map(|i| Complex::new(i as f64, (i * i % 5) as f64)).collect();
        let y = transform(FftType::Fft, 2, x.clone(), &[3, 4], &[3, 4]).unwrap();
        let mut rows: Vec<Complex<f64>> = x.chunks(4).flat_map(naive).collect();
        for c in 0..4 {
            let col: Vec<_> = (0..3).map(|r| rows[r * 4 + c]).collect();
            for (r, v) in naive(&col).into_iter().enumerate() {
                rows[r * 4 + c] = v;
            }
        }
        for (a, b) in y.iter().zip(&rows) {
            assert!((a - b).norm() < 1e-10);
        }
    }
}
