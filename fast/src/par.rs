//! Parallel, vectorized loops over slices: the two tools every fast kernel
//! uses. Work is split into chunks across rayon's threads (small inputs stay
//! on one thread), and each chunk's loop is compiled for the widest vector
//! extension the CPU has, chosen at run time.

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Inputs smaller than this run on the calling thread: splitting costs more
/// than it saves.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;
/// Elements per parallel task.
const CHUNK: usize = 1 << 14;

/// Runs `f` compiled with AVX-512 or AVX2+FMA when the CPU has them. `f` is
/// inlined into a function with those target features, so simple loops in
/// it are auto-vectorized for the machine that runs them.
#[inline(always)]
pub fn simd<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports every feature the callee enables.
            return unsafe { with_avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports every feature the callee enables.
            return unsafe { with_avx2(f) };
        }
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,bmi2,popcnt")]
unsafe fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi2,popcnt")]
unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `out[i] = f(i, chunk...)`: fills a new vector of `n` elements chunk by
/// chunk; `fill(start, chunk)` writes `chunk` (the elements `start..`).
pub fn build<T: Send>(n: usize, fill: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    if n < PARALLEL_THRESHOLD {
        fill(0, spare);
    } else {
        spare.par_chunks_mut(CHUNK).enumerate().for_each(|(k, chunk)| fill(k * CHUNK, chunk));
    }
    // SAFETY: every `fill` call writes every element of its chunk (the
    // callers below do so unconditionally), and the chunks cover `0..n`.
    unsafe { out.set_len(n) };
    out
}

/// `out[i] = f(a[i])`, in parallel and vectorized.
pub fn map<A: Copy + Sync, T: Send>(a: &[A], f: impl Fn(A) -> T + Sync) -> Vec<T> {
    build(a.len(), |start, chunk| {
        simd(
            #[inline(always)]
            || {
                for (o, &x) in chunk.iter_mut().zip(&a[start..]) {
                    o.write(f(x));
                }
            },
        )
    })
}

/// `out[i] = f(a[i], b[i])`, in parallel and vectorized.
pub fn zip<A: Copy + Sync, B: Copy + Sync, T: Send>(a: &[A], b: &[B], f: impl Fn(A, B) -> T + Sync) -> Vec<T> {
    let n = a.len().min(b.len());
    build(n, |start, chunk| {
        simd(
            #[inline(always)]
            || {
                for ((o, &x), &y) in chunk.iter_mut().zip(&a[start..]).zip(&b[start..]) {
                    o.write(f(x, y));
                }
            },
        )
    })
}

/// `out[i] = f(a[i], b[i], c[i])`.
pub fn zip3<A: Copy + Sync, B: Copy + Sync, C: Copy + Sync, T: Send>(a: &[A], b: &[B], c: &[C], f: impl Fn(A, B, C) -> T + Sync) -> Vec<T> {
    let n = a.len().min(b.len()).min(c.len());
    build(n, |start, chunk| {
        simd(
            #[inline(always)]
            || {
                for (((o, &x), &y), &z) in chunk.iter_mut().zip(&a[start..]).zip(&b[start..]).zip(&c[start..]) {
                    o.write(f(x, y, z));
                }
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_sizes() {
        for n in [0, 1, 7, 15, 16, 17, 63, 64, 65, CHUNK - 1, CHUNK, CHUNK + 1, PARALLEL_THRESHOLD + 3] {
            let a: Vec<u32> = (0..n as u32).collect();
            let b: Vec<u32> = (0..n as u32).map(|x| x * 3).collect();
            assert_eq!(zip(&a, &b, |x, y| x + y), (0..n as u32).map(|x| 4 * x).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(map(&a, |x| x ^ 1), (0..n as u32).map(|x| x ^ 1).collect::<Vec<_>>());
        }
    }
}
