//! The direct convolution's tile with AVX-512 and AVX2 intrinsics: `R`
//! output positions by `NV` vectors of output features, the sums in
//! registers, the input read where it lies.

use crate::kernels::gemm::skinny::x86::Vector;
use crate::kernels::gemm::skinny::Read;

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
}

/// [`tile`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F and VL; as [`tile`].
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn tile_avx512<V: Vector, const NV: usize, const R: usize>(t: &Tile<V::T>) {
    tile::<V, NV, R>(t)
}

/// [`tile`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU has AVX2 and FMA; as [`tile`].
#[target_feature(enable = "avx2,fma")]
pub unsafe fn tile_avx2<V: Vector, const NV: usize, const R: usize>(t: &Tile<V::T>) {
    tile::<V, NV, R>(t)
}

/// `C[r][j] = Σ_((k0, len) in segments) Σ_(f < len) rows[s][r][f] ·
/// B[k0 + f][j]`, the contracted index ascending, one fused multiply-add
/// at a time from a zero sum.
///
/// # Safety
/// `rows` holds `R` pointers per segment, each readable for its length;
/// the panel has the rows the segments name, `NV·LANES` values each; C's
/// first `rows_out ≤ R` rows of `cols ≤ NV·LANES` values are writable.
#[inline(always)]
unsafe fn tile<V: Vector, const NV: usize, const R: usize>(t: &Tile<V::T>) {
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
    let width = NV * V::LANES;
    for (r, sums) in acc.iter().enumerate().take(t.rows_out) {
        let out = t.c.add(r * t.ldc);
        if t.cols == width {
            for (v, &s) in sums.iter().enumerate() {
                V::store(out.add(v * V::LANES), s);
            }
        } else {
            let mut lanes = [V::T::default(); 64];
            for (v, &s) in sums.iter().enumerate() {
                V::store(lanes.as_mut_ptr().add(v * V::LANES), s);
            }
            std::ptr::copy_nonoverlapping(lanes.as_ptr(), out, t.cols);
        }
    }
}
