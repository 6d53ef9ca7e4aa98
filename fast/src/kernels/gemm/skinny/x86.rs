//! The skinny tiles with AVX-512 and AVX2 intrinsics: `R` rows of C by
//! `NV` vectors of columns, the sums in registers.

use std::arch::x86_64::*;

use super::{Read, Strided, Write, ROWS};

/// One vector of floats.
pub trait Vector: Copy {
    type T: Copy + Default;
    const LANES: usize;
    /// Vector registers the instruction set has.
    const REGISTERS: usize;
    /// # Safety
    /// The CPU has the vector's instructions (as for all the methods).
    unsafe fn zero() -> Self;
    /// # Safety
    /// `p` is readable.
    unsafe fn splat(p: *const Self::T) -> Self;
    /// # Safety
    /// `p..p+LANES` is readable.
    unsafe fn load(p: *const Self::T) -> Self;
    /// `a·b + c`, each lane rounded once.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
    /// # Safety
    /// `p..p+LANES` is writable.
    unsafe fn store(p: *mut Self::T, v: Self);
}

macro_rules! vector {
    ($name:ident, $v:ty, $t:ty, $lanes:literal, $registers:literal, $zero:ident, $set1:ident, $load:ident, $fma:ident, $store:ident) => {
        #[derive(Clone, Copy)]
        pub struct $name(pub $v);
        impl Vector for $name {
            type T = $t;
            const LANES: usize = $lanes;
            const REGISTERS: usize = $registers;
            #[inline(always)]
            unsafe fn zero() -> Self {
                $name($zero())
            }
            #[inline(always)]
            unsafe fn splat(p: *const $t) -> Self {
                $name($set1(*p))
            }
            #[inline(always)]
            unsafe fn load(p: *const $t) -> Self {
                $name($load(p))
            }
            #[inline(always)]
            unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
                $name($fma(a.0, b.0, c.0))
            }
            #[inline(always)]
            unsafe fn store(p: *mut $t, v: Self) {
                $store(p, v.0)
            }
        }
    };
}

vector!(F32x16, __m512, f32, 16, 32, _mm512_setzero_ps, _mm512_set1_ps, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_storeu_ps);
vector!(F64x8, __m512d, f64, 8, 32, _mm512_setzero_pd, _mm512_set1_pd, _mm512_loadu_pd, _mm512_fmadd_pd, _mm512_storeu_pd);
vector!(F32x8, __m256, f32, 8, 16, _mm256_setzero_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_storeu_ps);
vector!(F64x4, __m256d, f64, 4, 16, _mm256_setzero_pd, _mm256_set1_pd, _mm256_loadu_pd, _mm256_fmadd_pd, _mm256_storeu_pd);

/// [`tiles`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F and VL; as [`tiles`].
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tiles_avx512<V: Vector, const NV: usize>(
    k: usize,
    a: Strided<Read<V::T>>,
    r0: usize,
    rows: usize,
    b: *const V::T,
    b_rs: usize,
    c: Strided<Write<V::T>>,
    j0: usize,
    cols: usize,
) {
    tiles::<V, NV>(k, a, r0, rows, b, b_rs, c, j0, cols)
}

/// [`tiles`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU has AVX2 and FMA; as [`tiles`].
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tiles_avx2<V: Vector, const NV: usize>(
    k: usize,
    a: Strided<Read<V::T>>,
    r0: usize,
    rows: usize,
    b: *const V::T,
    b_rs: usize,
    c: Strided<Write<V::T>>,
    j0: usize,
    cols: usize,
) {
    tiles::<V, NV>(k, a, r0, rows, b, b_rs, c, j0, cols)
}

/// Rows `r0..r0+rows` of C against one panel (`NV` vectors wide, `cols`
/// of its columns real): tiles of eight rows, then four, two and one.
///
/// # Safety
/// Rows `r0..r0+rows` of A (`k` columns) and of C (columns
/// `j0..j0+cols`) exist; the panel `b` has `k` readable rows (row stride
/// `b_rs`) of `NV·LANES` values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tiles<V: Vector, const NV: usize>(
    k: usize,
    a: Strided<Read<V::T>>,
    r0: usize,
    rows: usize,
    b: *const V::T,
    b_rs: usize,
    c: Strided<Write<V::T>>,
    j0: usize,
    cols: usize,
) {
    let end = r0 + rows;
    let mut i = r0;
    // Eight rows' sums, the panel's vectors and a broadcast value must fit
    // in the registers (AVX2's sixteen hold eight rows of one vector, or
    // four of two).
    let eight = ROWS * NV + NV < V::REGISTERS;
    while i < end {
        let at = |r| Strided { at: Read(a.at.0.add(r * a.rs)), ..a };
        let ct = |r| Strided { at: Write(c.at.0.add(r * c.rs + j0 * c.cs)), ..c };
        i += match end - i {
            ROWS.. if eight => tile::<V, NV, ROWS>(k, at(i), b, b_rs, ct(i), cols),
            4.. => tile::<V, NV, 4>(k, at(i), b, b_rs, ct(i), cols),
            2.. => tile::<V, NV, 2>(k, at(i), b, b_rs, ct(i), cols),
            _ => tile::<V, NV, 1>(k, at(i), b, b_rs, ct(i), cols),
        };
    }
}

/// One tile: `C[r][j] = Σ_kk A[r][kk]·B[kk][j]` for `r < R`, `j < cols`,
/// `kk` ascending from a zero sum. Returns `R`.
///
/// # Safety
/// As [`tiles`], for rows `0..R` of `a` and `c`.
#[inline(always)]
unsafe fn tile<V: Vector, const NV: usize, const R: usize>(
    k: usize,
    a: Strided<Read<V::T>>,
    b: *const V::T,
    b_rs: usize,
    c: Strided<Write<V::T>>,
    cols: usize,
) -> usize {
    let mut acc = [[V::zero(); NV]; R];
    let rows: [*const V::T; R] = std::array::from_fn(|r| a.at.0.add(r * a.rs));
    for kk in 0..k {
        let b_row = b.add(kk * b_rs);
        let bv: [V; NV] = std::array::from_fn(|v| V::load(b_row.add(v * V::LANES)));
        for (sums, row) in acc.iter_mut().zip(&rows) {
            let x = V::splat(row.add(kk * a.cs));
            for (s, &y) in sums.iter_mut().zip(&bv) {
                *s = V::fma(x, y, *s);
            }
        }
    }
    let width = NV * V::LANES;
    for (r, sums) in acc.iter().enumerate() {
        let out = c.at.0.add(r * c.rs);
        if c.cs == 1 && cols == width {
            for (v, &s) in sums.iter().enumerate() {
                V::store(out.add(v * V::LANES), s);
            }
        } else {
            let mut lanes = [V::T::default(); 32];
            for (v, &s) in sums.iter().enumerate() {
                V::store(lanes.as_mut_ptr().add(v * V::LANES), s);
            }
            for (j, &x) in lanes.iter().enumerate().take(cols) {
                *out.add(j * c.cs) = x;
            }
        }
    }
    R
}
