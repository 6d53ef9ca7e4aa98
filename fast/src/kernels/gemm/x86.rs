//! x86-64 micro-kernels for f32 and f64: AVX-512F (32 vector registers,
//! an MR×NR tile of 12 rows × 2 vectors) and AVX2+FMA (16 registers, 6 rows
//! × 2 vectors), chosen at run time. Each step of the contracted index
//! loads two vectors of the packed B row, broadcasts each of the MR packed
//! A elements and fuses a multiply-add into each accumulator.
#![allow(clippy::incompatible_msrv)]

use std::arch::x86_64::*;

use super::Kernel;

fn has_avx512() -> bool {
    is_x86_feature_detected!("avx512f")
}

fn has_avx2() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

pub fn kernel_f32() -> Option<Kernel<f32>> {
    if has_avx512() {
        Some(Kernel { mr: 12, nr: 32, mc: 192, kc: 256, nc: 2048, run: avx512_f32 })
    } else if has_avx2() {
        Some(Kernel { mr: 6, nr: 16, mc: 144, kc: 256, nc: 2048, run: avx2_f32 })
    } else {
        None
    }
}

pub fn kernel_f64() -> Option<Kernel<f64>> {
    if has_avx512() {
        Some(Kernel { mr: 12, nr: 16, mc: 192, kc: 256, nc: 2048, run: avx512_f64 })
    } else if has_avx2() {
        Some(Kernel { mr: 6, nr: 8, mc: 144, kc: 256, nc: 2048, run: avx2_f64 })
    } else {
        None
    }
}

/// Defines one micro-kernel: `$mr` rows × `2 · $lanes` columns.
macro_rules! micro_kernel {
    ($name:ident, $feature:literal, $t:ty, $v:ty, $lanes:expr, $mr:expr,
     $zero:ident, $load:ident, $store:ident, $set1:ident, $fma:ident) => {
        /// # Safety
        /// The CPU has the enabled features; otherwise as
        /// [`super::KernelFn`]: `a` holds `kc·MR` elements, `b` `kc·NR`, and
        /// C's `m × n` block at `c` (row stride `ldc`) is valid.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = $feature)]
        unsafe fn $name(kc: usize, a: *const $t, b: *const $t, c: *mut $t, ldc: usize, m: usize, n: usize, first: bool) {
            const MR: usize = $mr;
            const L: usize = $lanes;
            const NR: usize = 2 * L;
            let full = m == MR && n == NR;
            // Edge tiles go through a full-size scratch tile.
            let mut scratch = [0.0 as $t; MR * NR];
            let (tile, ld) = if full { (c, ldc) } else { (scratch.as_mut_ptr(), NR) };
            if !full && !first {
                for i in 0..m {
                    for j in 0..n {
                        scratch[i * NR + j] = *c.add(i * ldc + j);
                    }
                }
            }
            let mut acc0: [$v; MR] = [$zero(); MR];
            let mut acc1: [$v; MR] = [$zero(); MR];
            if !first {
                for i in 0..MR {
                    acc0[i] = $load(tile.add(i * ld));
                    acc1[i] = $load(tile.add(i * ld + L));
                }
            }
            let (mut a, mut b) = (a, b);
            for _ in 0..kc {
                let b0 = $load(b);
                let b1 = $load(b.add(L));
                for i in 0..MR {
                    let ai = $set1(*a.add(i));
                    acc0[i] = $fma(ai, b0, acc0[i]);
                    acc1[i] = $fma(ai, b1, acc1[i]);
                }
                a = a.add(MR);
                b = b.add(NR);
            }
            for i in 0..MR {
                $store(tile.add(i * ld), acc0[i]);
                $store(tile.add(i * ld + L), acc1[i]);
            }
            if !full {
                for i in 0..m {
                    for j in 0..n {
                        *c.add(i * ldc + j) = scratch[i * NR + j];
                    }
                }
            }
        }
    };
}

micro_kernel!(
    avx512_f32,
    "avx512f",
    f32,
    __m512,
    16,
    12,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_set1_ps,
    _mm512_fmadd_ps
);
micro_kernel!(
    avx512_f64,
    "avx512f",
    f64,
    __m512d,
    8,
    12,
    _mm512_setzero_pd,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_set1_pd,
    _mm512_fmadd_pd
);
micro_kernel!(
    avx2_f32,
    "avx2,fma",
    f32,
    __m256,
    8,
    6,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_set1_ps,
    _mm256_fmadd_ps
);
micro_kernel!(
    avx2_f64,
    "avx2,fma",
    f64,
    __m256d,
    4,
    6,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_set1_pd,
    _mm256_fmadd_pd
);
