//! The portable micro-kernel: plain scalar code over any [`Elem`], a 4×4
//! register tile. Used for integers and complex numbers (f32 and f64 go
//! to the `gemm` crate).

use super::{Elem, Kernel};

const MR: usize = 4;
const NR: usize = 4;

pub fn kernel<T: Elem>() -> Kernel<T> {
    Kernel { mr: MR, nr: NR, mc: 64, kc: 256, nc: 1024, run: run::<T> }
}

/// # Safety
/// As [`super::KernelFn`]: `a` holds `kc·MR` elements, `b` `kc·NR`, and
/// C's `m × n` block at `c` (row stride `ldc`) is valid.
#[allow(clippy::too_many_arguments)]
unsafe fn run<T: Elem>(kc: usize, a: *const T, b: *const T, c: *mut T, ldc: usize, m: usize, n: usize, first: bool) {
    let mut acc = [[T::ZERO; NR]; MR];
    if !first {
        for (i, row) in acc.iter_mut().enumerate().take(m) {
            for (j, x) in row.iter_mut().enumerate().take(n) {
                *x = *c.add(i * ldc + j);
            }
        }
    }
    let a = std::slice::from_raw_parts(a, kc * MR);
    let b = std::slice::from_raw_parts(b, kc * NR);
    for (ak, bk) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        for i in 0..MR {
            for j in 0..NR {
                acc[i][j] = T::mul_add(acc[i][j], ak[i], bk[j]);
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(m) {
        for (j, &x) in row.iter().enumerate().take(n) {
            *c.add(i * ldc + j) = x;
        }
    }
}
