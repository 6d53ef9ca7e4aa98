//! The machine's f32 multiply-add throughput and memory bandwidth,
//! measured: the ceilings a GEMM and a memory-bound op can reach, against
//! which `xlaref bench` reports Dot and the element-wise workloads. The
//! cloud hosts this project runs on change their clock from day to day
//! (the same binary has measured 220 and 414 GFLOP/s on Dot), so a GFLOP/s
//! figure means little without the peak measured in the same run.

use std::time::Instant;

/// Independent accumulator registers: more chains than the multiply-add
/// units' latency times their count (4 cycles × 2 units).
const CHAINS: usize = 12;
const STEPS: usize = 4_000_000;

/// Peak f32 GFLOP/s of multiply-adds on every thread of rayon's pool (a
/// multiply-add counts two), best of three rounds of 4·10^6 steps per
/// thread, with the widest vector multiply-add the CPU has (16 lanes with
/// AVX-512, 8 with AVX2 and FMA; elsewhere a scalar loop, a lower bound).
pub fn fma_peak_gflops() -> f64 {
    // The first round also wakes the pool's threads and the clock up.
    (0..3).map(|_| one_round()).fold(0.0, f64::max)
}

fn one_round() -> f64 {
    let started = Instant::now();
    let per_thread = rayon::broadcast(|_| chains(STEPS));
    let seconds = started.elapsed().as_secs_f64();
    let flops: f64 = per_thread.iter().map(|&(lanes, _)| STEPS as f64 * (CHAINS * lanes * 2) as f64).sum();
    std::hint::black_box(per_thread);
    flops / seconds / 1e9
}

/// Runs `steps` rounds of `x = x·a + b` on [`CHAINS`] vector registers;
/// returns the lanes per register and the sum of every lane.
fn chains(steps: usize) -> (usize, f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, the only feature the callee enables.
            return (16, unsafe { x86::chains_avx512(steps) });
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA, the features the callee enables.
            return (8, unsafe { x86::chains_avx2(steps) });
        }
    }
    (1, scalar_chains(steps))
}

fn scalar_chains(steps: usize) -> f32 {
    let (a, b) = std::hint::black_box((A, B));
    let mut acc: [f32; CHAINS] = std::array::from_fn(|r| r as f32);
    for _ in 0..steps {
        acc = acc.map(|x| x * a + b);
    }
    acc.iter().sum()
}

/// Factors close to 1, so no chain overflows or underflows.
const A: f32 = 1.000_000_1;
const B: f32 = 0.999_999_9;

/// Bytes of each buffer of the copy probe: far beyond the caches.
const COPY_BYTES: usize = 64 << 20;

/// The machine's memory bandwidth as it is now, in GB/s of bytes read plus
/// bytes written: the best of six copies of [`COPY_BYTES`] through
/// [`crate::par::map`], the engine's own path for large element-wise
/// outputs (parallel, streaming stores). The ceiling of the memory-bound
/// workloads of `xlaref bench`, which on these shared hosts moves by 2x
/// within minutes. Each copy allocates its output as an op does; the CLI's
/// allocator hands the freed block back, so only the first copy takes page
/// faults.
pub fn copy_gbs() -> f64 {
    let src = vec![1_u32; COPY_BYTES / 4];
    let mut best = f64::INFINITY;
    for _ in 0..6 {
        let started = Instant::now();
        let copy = crate::par::map(&src, |x| x);
        best = best.min(started.elapsed().as_secs_f64());
        std::hint::black_box(copy);
    }
    2.0 * COPY_BYTES as f64 / best / 1e9
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{A, B, CHAINS};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn chains_avx512(steps: usize) -> f32 {
        let (a, b) = (_mm512_set1_ps(A), _mm512_set1_ps(B));
        let mut acc: [__m512; CHAINS] = std::array::from_fn(|r| _mm512_set1_ps(r as f32));
        for _ in 0..steps {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        acc.iter().map(|&x| _mm512_reduce_add_ps(x)).sum()
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn chains_avx2(steps: usize) -> f32 {
        let (a, b) = (_mm256_set1_ps(A), _mm256_set1_ps(B));
        let mut acc: [__m256; CHAINS] = std::array::from_fn(|r| _mm256_set1_ps(r as f32));
        for _ in 0..steps {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let mut lanes = [0.0_f32; 8];
        let mut sum = 0.0;
        for x in acc {
            _mm256_storeu_ps(lanes.as_mut_ptr(), x);
            sum += lanes.iter().sum::<f32>();
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path computes the same chains: row r holds r·a + b after one
    /// step, in every lane (the vector paths fuse the multiply-add, which
    /// for one step from an integer differs from the scalar path by less
    /// than an ulp of the sum).
    #[test]
    fn the_chains_compute_x_times_a_plus_b() {
        let (lanes, zero_steps) = chains(0);
        // Row r starts at r: lanes·(0 + 1 + ... + 11).
        assert_eq!(zero_steps, 66.0 * lanes as f32);
        assert_eq!(scalar_chains(0), 66.0);
        let want: f32 = (0..CHAINS).map(|r| (r as f32).mul_add(A, B)).sum::<f32>() * lanes as f32;
        let (_, one_step) = chains(1);
        assert!((one_step - want).abs() <= want * 1e-6, "{one_step} against {want}");
    }

    #[test]
    fn the_copy_bandwidth_is_a_positive_rate() {
        let g = copy_gbs();
        assert!(g.is_finite() && g > 0.0, "{g}");
    }

    #[test]
    fn the_peak_is_a_positive_rate() {
        let g = fma_peak_gflops();
        assert!(g.is_finite() && g > 0.0, "{g}");
    }
}
