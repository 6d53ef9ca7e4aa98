//! The AVX-512 tiles. The elements are moved as raw bits: loads, shuffles
//! and stores never look at the values.
//!
//! A tile is `side × side` elements whose rows are one 64-byte line each:
//! 64 × 64 elements of 1 byte, 32 × 32 of 2, 16 × 16 of 4, 8 × 8 of 8 or
//! 4 × 4 of 16. A tile at a matrix's edge holds fewer rows or columns: its
//! loads and stores are masked to the bytes inside the matrix (masked-out
//! bytes are neither read, so they cannot fault, nor written, so they
//! cannot race with the task that owns them), and the lanes past the edge
//! carry zeros through the shuffles.

use super::{Block, LINE};
use std::arch::x86_64::*;

/// Edge tiles with fewer than this fraction (1/4) of their elements inside
/// the matrix go element by element: a tile's shuffles cost about as much
/// as a quarter of its elements moved one at a time.
const SPARSE_EDGE: usize = 4;

/// How far ahead of a whole tile's rows the next lines are prefetched.
const PREFETCH_BYTES: usize = 1024;

/// The part of one tile inside the matrix: `rows` input rows of `cols`
/// elements (in bytes: `row_bytes` per input row, `col_bytes` per output
/// row). `stream`: store whole output rows with streaming stores.
#[derive(Clone, Copy)]
struct Edge {
    rows: usize,
    cols: usize,
    row_bytes: usize,
    col_bytes: usize,
    stream: bool,
}

/// Every tile of a block, whole or cut by the matrix's edge.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW, and AVX-512VBMI if `T` is one byte;
/// `T` is 1, 2, 4, 8 or 16 bytes; `dst` as in [`Block::transpose`], and
/// 64-byte aligned at every tile row when `stream`; a streaming caller
/// calls [`store_fence`] before its output is read.
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn tiles<T: Copy>(b: &Block<T>, dst: *mut T, stream: bool) {
    let size = std::mem::size_of::<T>();
    debug_assert!(matches!(size, 1 | 2 | 4 | 8 | 16));
    let side = LINE / size;
    let (ss, ds) = (b.ss * size, b.ds * size);
    for r0 in b.r.clone().step_by(side) {
        let rows = side.min(b.r.end - r0);
        for c0 in b.c.clone().step_by(side) {
            let cols = side.min(b.c.end - c0);
            if rows * cols * SPARSE_EDGE < side * side {
                b.elementwise(r0..r0 + rows, c0..c0 + cols, dst);
                continue;
            }
            // Output rows are whole lines (and aligned when `stream`) only
            // in tiles with every row.
            let edge = Edge { rows, cols, row_bytes: cols * size, col_bytes: rows * size, stream: stream && rows == side };
            let (from, to) = (b.src.as_ptr().add(r0 * b.ss + c0).cast::<u8>(), dst.add(c0 * b.ds + r0).cast::<u8>());
            let whole = rows == side && cols == side;
            if whole {
                prefetch_ahead(from, ss, side);
            }
            // Whole tiles (nearly all of them) skip the edge's tests.
            match (size, whole) {
                (1, true) => tile_byte::<true>(from, ss, to, ds, edge),
                (1, false) => tile_byte::<false>(from, ss, to, ds, edge),
                (2, true) => tile_word::<true>(from, ss, to, ds, edge),
                (2, false) => tile_word::<false>(from, ss, to, ds, edge),
                (4, true) => tile_dword::<true>(from, ss, to, ds, edge),
                (4, false) => tile_dword::<false>(from, ss, to, ds, edge),
                (8, true) => tile_qword::<true>(from, ss, to, ds, edge),
                (8, false) => tile_qword::<false>(from, ss, to, ds, edge),
                (_, true) => tile_oword::<true>(from, ss, to, ds, edge),
                (_, false) => tile_oword::<false>(from, ss, to, ds, edge),
            }
        }
    }
}

/// Prefetches (into L2) the line [`PREFETCH_BYTES`] ahead in each of a
/// tile's `rows` input rows: the L2 prefetcher does not follow a tile's 16
/// or more streams that far on its own. Once per row, before the tile
/// kernel (byte tiles read their rows twice).
#[inline]
fn prefetch_ahead(src: *const u8, ss: usize, rows: usize) {
    for i in 0..rows {
        // A prefetch never faults, so the address may lie past the matrix
        // (hence wrapping arithmetic, which makes no claim about it).
        let ahead = src.wrapping_add(i * ss + PREFETCH_BYTES);
        // SAFETY: PREFETCHT1 is part of SSE, which every x86_64 CPU has,
        // and it reads nothing architecturally.
        unsafe { _mm_prefetch::<_MM_HINT_T1>(ahead.cast()) };
    }
}

/// Makes a task's streaming stores visible before it reports that it is
/// done (they are weakly ordered). Once per task, not per block: the fence
/// waits for every store in flight, and blocks of a few short rows (16-byte
/// elements) had spent a tenth of their time there.
pub fn store_fence() {
    // SAFETY: SFENCE is part of SSE, which every x86_64 CPU has.
    unsafe { _mm_sfence() }
}

/// The first `bytes` (< 64) bytes of a line.
#[inline]
fn low_bytes(bytes: usize) -> __mmask64 {
    (1u64 << bytes) - 1
}

/// Input row `i` of the tile at `src` (rows `ss` bytes apart): its bytes
/// inside the matrix, zeros past them. `FULL`: the tile is whole (no test).
///
/// # Safety
/// The edge's rows and columns of the tile are readable at `src`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load<const FULL: bool>(src: *const u8, ss: usize, i: usize, e: Edge) -> __m512i {
    if !FULL && i >= e.rows {
        return _mm512_setzero_si512();
    }
    let at = src.add(i * ss);
    if FULL || e.row_bytes == LINE {
        _mm512_loadu_si512(at.cast())
    } else {
        _mm512_maskz_loadu_epi8(low_bytes(e.row_bytes), at.cast())
    }
}

/// Stores output row `j` of the tile at `dst` (rows `ds` bytes apart): its
/// bytes inside the matrix only. `FULL`: the tile is whole (no test).
///
/// # Safety
/// The edge's rows and columns of the transposed tile are writable at
/// `dst`, and 64-byte aligned at every row when the edge streams.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn store<const FULL: bool>(dst: *mut u8, ds: usize, j: usize, v: __m512i, e: Edge) {
    if !FULL && j >= e.cols {
        return;
    }
    let at = dst.add(j * ds);
    if !FULL && e.col_bytes != LINE {
        _mm512_mask_storeu_epi8(at.cast(), low_bytes(e.col_bytes), v);
    } else if e.stream {
        _mm512_stream_si512(at.cast(), v);
    } else {
        _mm512_storeu_si512(at.cast(), v);
    }
}

/// Transposes the 64 × 64 tile of bytes at `src` into `dst`, as
/// [`transpose_words`] does one level up: rows `2i` and `2i + 1` are split
/// into the pairs of their even columns and of their odd columns, and the
/// 32 × 32 pairs of even (odd) columns transposed are the output's even
/// (odd) rows. The two halves take one pass each over the tile's rows (the
/// second from L1), so that one half's 32 registers are live at a time.
///
/// # Safety
/// The CPU has AVX-512VBMI; as [`load`] and [`store`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn tile_byte<const FULL: bool>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, e: Edge) {
    // Byte k of the even-columns row: column k of row 2i (k even) or column
    // k - 1 of row 2i + 1 (k odd; index 64 + c picks the second operand's
    // byte c).
    #[rustfmt::skip]
    let even = _mm512_set_epi8(
        126, 62, 124, 60, 122, 58, 120, 56, 118, 54, 116, 52, 114, 50, 112, 48,
        110, 46, 108, 44, 106, 42, 104, 40, 102, 38, 100, 36, 98, 34, 96, 32,
        94, 30, 92, 28, 90, 26, 88, 24, 86, 22, 84, 20, 82, 18, 80, 16,
        78, 14, 76, 12, 74, 10, 72, 8, 70, 6, 68, 4, 66, 2, 64, 0,
    );
    let odd = _mm512_add_epi8(even, _mm512_set1_epi8(1));
    for (parity, pattern) in [(0, even), (1, odd)] {
        let mut pairs = [_mm512_setzero_si512(); 32];
        for (i, row) in pairs.iter_mut().enumerate() {
            *row = _mm512_permutex2var_epi8(load::<FULL>(src, ss, 2 * i, e), pattern, load::<FULL>(src, ss, 2 * i + 1, e));
        }
        transpose_words(&mut pairs);
        for (k, row) in pairs.into_iter().enumerate() {
            store::<FULL>(dst, ds, 2 * k + parity, row, e);
        }
    }
}

/// Transposes the 32 × 32 tile of 2-byte elements at `src` into `dst`.
///
/// # Safety
/// As [`load`] and [`store`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn tile_word<const FULL: bool>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, e: Edge) {
    let mut r: [__m512i; 32] = std::array::from_fn(|i| load::<FULL>(src, ss, i, e));
    transpose_words(&mut r);
    for (k, row) in r.into_iter().enumerate() {
        store::<FULL>(dst, ds, k, row, e);
    }
}

/// The 32 × 32 matrix of 2-byte elements in `r` (one row per register)
/// transposed in place. Rows `2i` and `2i + 1` are first split into their
/// even columns and their odd columns, each a row of 16 pairs; the 16 × 16
/// pairs of even columns transposed are the output's even rows, those of
/// odd columns its odd rows.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn transpose_words(r: &mut [__m512i; 32]) {
    // Word k of the even-columns row: column k/2 of row 2i (k even) or
    // 2i + 1 (k odd; index 32 + c picks the second operand's word c).
    #[rustfmt::skip]
    let even = _mm512_set_epi16(
        62, 30, 60, 28, 58, 26, 56, 24, 54, 22, 52, 20, 50, 18, 48, 16,
        46, 14, 44, 12, 42, 10, 40, 8, 38, 6, 36, 4, 34, 2, 32, 0,
    );
    let odd = _mm512_add_epi16(even, _mm512_set1_epi16(1));
    let mut evens = [_mm512_setzero_si512(); 16];
    let mut odds = [_mm512_setzero_si512(); 16];
    for i in 0..16 {
        evens[i] = _mm512_permutex2var_epi16(r[2 * i], even, r[2 * i + 1]);
        odds[i] = _mm512_permutex2var_epi16(r[2 * i], odd, r[2 * i + 1]);
    }
    transpose_dwords(&mut evens);
    transpose_dwords(&mut odds);
    for j in 0..16 {
        r[2 * j] = evens[j];
        r[2 * j + 1] = odds[j];
    }
}

/// Transposes the 16 × 16 tile of 4-byte elements at `src` into `dst`.
///
/// # Safety
/// As [`load`] and [`store`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn tile_dword<const FULL: bool>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, e: Edge) {
    let mut r: [__m512i; 16] = std::array::from_fn(|i| load::<FULL>(src, ss, i, e));
    transpose_dwords(&mut r);
    for (k, row) in r.into_iter().enumerate() {
        store::<FULL>(dst, ds, k, row, e);
    }
}

/// The 16 × 16 matrix of 4-byte elements in `r` (one row per register)
/// transposed in place, in three rounds of shuffles: 32-bit pairs, 64-bit
/// pairs, then 128-bit lanes twice.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_dwords(r: &mut [__m512i; 16]) {
    // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved (even, odd columns of
    // each 128-bit lane).
    let mut t = [_mm512_setzero_si512(); 16];
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // r[4i + k]: rows 4i..4i+4 of columns k, k+4, k+8, k+12.
    for i in 0..4 {
        for j in 0..2 {
            r[4 * i + 2 * j] = _mm512_unpacklo_epi64(t[4 * i + j], t[4 * i + j + 2]);
            r[4 * i + 2 * j + 1] = _mm512_unpackhi_epi64(t[4 * i + j], t[4 * i + j + 2]);
        }
    }
    // t[8i + k], t[8i + 4 + k]: rows 8i..8i+8 of columns {k, k+8} and
    // {k+4, k+12}.
    for i in 0..2 {
        for k in 0..4 {
            t[8 * i + k] = _mm512_shuffle_i32x4::<0x88>(r[8 * i + k], r[8 * i + 4 + k]);
            t[8 * i + 4 + k] = _mm512_shuffle_i32x4::<0xDD>(r[8 * i + k], r[8 * i + 4 + k]);
        }
    }
    // Columns k and k + 8, all 16 rows: rows k and k + 8.
    for k in 0..8 {
        r[k] = _mm512_shuffle_i32x4::<0x88>(t[k], t[8 + k]);
        r[k + 8] = _mm512_shuffle_i32x4::<0xDD>(t[k], t[8 + k]);
    }
}

/// Transposes the 8 × 8 tile of 8-byte elements at `src` into `dst`: 64-bit
/// pairs, then 128-bit lanes twice.
///
/// # Safety
/// As [`load`] and [`store`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn tile_qword<const FULL: bool>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, e: Edge) {
    let mut r: [__m512d; 8] = std::array::from_fn(|i| _mm512_castsi512_pd(load::<FULL>(src, ss, i, e)));
    // t[2i], t[2i+1]: rows 2i and 2i+1, even and odd columns.
    let mut t = [_mm512_setzero_pd(); 8];
    for i in 0..4 {
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    // r[4i + k], r[4i + 2 + k]: rows 4i..4i+4 of columns {k, k+4} and
    // {k+2, k+6}.
    for i in 0..2 {
        for k in 0..2 {
            r[4 * i + k] = _mm512_shuffle_f64x2::<0x88>(t[4 * i + k], t[4 * i + 2 + k]);
            r[4 * i + 2 + k] = _mm512_shuffle_f64x2::<0xDD>(t[4 * i + k], t[4 * i + 2 + k]);
        }
    }
    // Columns k and k + 4, all 8 rows: output rows k and k + 4.
    for k in 0..4 {
        let (lo, hi) = (_mm512_shuffle_f64x2::<0x88>(r[k], r[4 + k]), _mm512_shuffle_f64x2::<0xDD>(r[k], r[4 + k]));
        store::<FULL>(dst, ds, k, _mm512_castpd_si512(lo), e);
        store::<FULL>(dst, ds, k + 4, _mm512_castpd_si512(hi), e);
    }
}

/// Transposes the 4 × 4 tile of 16-byte elements at `src` into `dst`:
/// 256-bit halves, then 128-bit lanes.
///
/// # Safety
/// As [`load`] and [`store`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn tile_oword<const FULL: bool>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, e: Edge) {
    let r: [__m512d; 4] = std::array::from_fn(|i| _mm512_castsi512_pd(load::<FULL>(src, ss, i, e)));
    // Elements 0, 1 (and 2, 3) of rows 0, 1 and of rows 2, 3.
    let low01 = _mm512_shuffle_f64x2::<0x44>(r[0], r[1]);
    let high01 = _mm512_shuffle_f64x2::<0xEE>(r[0], r[1]);
    let low23 = _mm512_shuffle_f64x2::<0x44>(r[2], r[3]);
    let high23 = _mm512_shuffle_f64x2::<0xEE>(r[2], r[3]);
    // Element k of all four rows: output row k.
    let out = [
        _mm512_shuffle_f64x2::<0x88>(low01, low23),
        _mm512_shuffle_f64x2::<0xDD>(low01, low23),
        _mm512_shuffle_f64x2::<0x88>(high01, high23),
        _mm512_shuffle_f64x2::<0xDD>(high01, high23),
    ];
    for (k, v) in out.into_iter().enumerate() {
        store::<FULL>(dst, ds, k, _mm512_castpd_si512(v), e);
    }
}
