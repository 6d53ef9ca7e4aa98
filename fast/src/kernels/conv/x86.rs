//! The direct convolution's tile with AVX-512 and AVX2 intrinsics: `R`
//! output positions by `NV` vectors of output features, the sums in
//! registers, the input read where it lies.

use std::arch::x86_64::*;

use crate::kernels::gemm::skinny::x86::{F32x16, F32x8, F64x4, F64x8, Vector};
use crate::kernels::gemm::skinny::Read;

/// What a tile does to its sums before it stores them (a bias add and
/// ReLU fused into the convolution, `fusion::conv_epilogue`).
pub trait Epilogue: Vector {
    /// `a + b`, each lane rounded once (the Add the fusion replaced).
    unsafe fn add(a: Self, b: Self) -> Self;
    /// `maximum(x, +0)` lane by lane, as the Max the fusion replaced: x
    /// where x > 0 or x is NaN, else +0 (also for x = -0).
    unsafe fn relu(x: Self) -> Self;
}

macro_rules! epilogue512 {
    ($name:ident, $add:ident, $cmp:ident, $movz:ident) => {
        impl Epilogue for $name {
            #[inline(always)]
            unsafe fn add(a: Self, b: Self) -> Self {
                $name($add(a.0, b.0))
            }
            #[inline(always)]
            unsafe fn relu(x: Self) -> Self {
                let keep = $cmp::<_CMP_GT_OQ>(x.0, Self::zero().0) | $cmp::<_CMP_UNORD_Q>(x.0, x.0);
                $name($movz(keep, x.0))
            }
        }
    };
}
epilogue512!(F32x16, _mm512_add_ps, _mm512_cmp_ps_mask, _mm512_maskz_mov_ps);
epilogue512!(F64x8, _mm512_add_pd, _mm512_cmp_pd_mask, _mm512_maskz_mov_pd);

macro_rules! epilogue256 {
    ($name:ident, $add:ident, $cmp:ident, $or:ident, $and:ident) => {
        impl Epilogue for $name {
            #[inline(always)]
            unsafe fn add(a: Self, b: Self) -> Self {
                $name($add(a.0, b.0))
            }
            #[inline(always)]
            unsafe fn relu(x: Self) -> Self {
                // All-ones lanes where x is kept; the others become +0.
                let keep = $or($cmp::<_CMP_GT_OQ>(x.0, Self::zero().0), $cmp::<_CMP_UNORD_Q>(x.0, x.0));
                $name($and(keep, x.0))
            }
        }
    };
}
epilogue256!(F32x8, _mm256_add_ps, _mm256_cmp_ps, _mm256_or_ps, _mm256_and_ps);
epilogue256!(F64x4, _mm256_add_pd, _mm256_cmp_pd, _mm256_or_pd, _mm256_and_pd);

/// One tile's operands.
pub struct Tile<'a, T> {
    /// Runs of the contracted index (window position major, input
    /// feature minor) some row of the tile lies on, ascending: the first
    /// index and the length. A run is one window position's features, or
    /// several positions' whose features lie one after the other in the
    /// input for every row.
    pub segments: &'a [(usize, usize)],
    /// For each of `segments` in turn, `R` row pointers: the run's first
    /// input value of that row, or a run of zeros as long.
    pub rows: &'a [Read<T>],
    /// The kernel panel: contracted index `kk` is the row `b + kk·b_rs`,
    /// `NV·LANES` values.
    pub b: *const T,
    pub b_rs: usize,
    /// The tile's first output element, its row stride, and how many of
    /// its rows and columns are real.
    pub c: *mut T,
    pub ldc: usize,
    pub rows_out: usize,
    pub cols: usize,
    /// The bias of the panel's `NV·LANES` columns (zero-padded), added to
    /// every row's sums, if any; then ReLU when `relu`.
    pub bias: Option<*const T>,
    pub relu: bool,
}

/// [`tile`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F and VL; as [`tile`].
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn tile_avx512<V: Epilogue, const NV: usize, const R: usize>(t: &Tile<V::T>) {
    tile::<V, NV, R>(t)
}

/// [`tile`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU has AVX2 and FMA; as [`tile`].
#[target_feature(enable = "avx2,fma")]
pub unsafe fn tile_avx2<V: Epilogue, const NV: usize, const R: usize>(t: &Tile<V::T>) {
    tile::<V, NV, R>(t)
}

/// `C[r][j] = Σ_((k0, len) in segments) Σ_(f < len) rows[s][r][f] ·
/// B[k0 + f][j]`, the contracted index ascending, one fused multiply-add
/// at a time from a zero sum.
///
/// # Safety
/// `rows` holds `R` pointers per segment, each readable for its length;
/// the panel has the rows the segments name, `NV·LANES` values each; C's
/// first `rows_out ≤ R` rows of `cols ≤ NV·LANES` values are writable;
/// `bias`, if any, is readable for `NV·LANES` values.
#[inline(always)]
unsafe fn tile<V: Epilogue, const NV: usize, const R: usize>(t: &Tile<V::T>) {
    let mut acc = [[V::zero(); NV]; R];
    for (s, &(k0, len)) in t.segments.iter().enumerate() {
        let rows: [*const V::T; R] = std::array::from_fn(|r| t.rows.get_unchecked(s * R + r).0);
        let b = t.b.add(k0 * t.b_rs);
        for f in 0..len {
            let b_row = b.add(f * t.b_rs);
            let bv: [V; NV] = std::array::from_fn(|v| V::load(b_row.add(v * V::LANES)));
            for (sums, row) in acc.iter_mut().zip(&rows) {
                let x = V::splat(row.add(f));
                for (s, &y) in sums.iter_mut().zip(&bv) {
                    *s = V::fma(x, y, *s);
                }
            }
        }
    }
    // The epilogue on the values as they are stored, not on `acc` in
    // place: a pass over `acc` after the loop made the compiler keep some
    // sums on the stack inside it (the tile at half speed).
    let zero = V::zero();
    let bias: [V; NV] = std::array::from_fn(|v| t.bias.map_or(zero, |b| V::load(b.add(v * V::LANES))));
    let finish = |v: usize, s: V| {
        let s = if t.bias.is_some() { V::add(s, bias[v]) } else { s };
        if t.relu {
            V::relu(s)
        } else {
            s
        }
    };
    let width = NV * V::LANES;
    for (r, sums) in acc.iter().enumerate().take(t.rows_out) {
        let out = t.c.add(r * t.ldc);
        if t.cols == width {
            for (v, &s) in sums.iter().enumerate() {
                V::store(out.add(v * V::LANES), finish(v, s));
            }
        } else {
            let mut lanes = [V::T::default(); 64];
            for (v, &s) in sums.iter().enumerate() {
                V::store(lanes.as_mut_ptr().add(v * V::LANES), finish(v, s));
            }
            std::ptr::copy_nonoverlapping(lanes.as_ptr(), out, t.cols);
        }
    }
}
