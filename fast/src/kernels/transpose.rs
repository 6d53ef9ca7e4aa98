//! Transpose of the two minor dimensions of a batch of matrices, at memory
//! speed.
//!
//! Every element is read once and written once, a whole cache line at a
//! time: the matrix is cut into `L × L` tiles whose rows are one 64-byte
//! line each, a tile's `L` input rows are loaded, transposed in registers
//! (AVX-512, for 4- and 8-byte elements) or through a small buffer (every
//! other size or CPU), and stored as `L` output rows. No line has to stay
//! in L1 between two tiles: with a power-of-two row length the `L` rows of
//! a tile fall on one cache set, which holds only 8 of them.
//!
//! Tiles are walked in square blocks (about 1 KiB of a row on each side, so
//! a block's input and output fit in L2), and the blocks are the parallel
//! tasks. A large output is written with streaming stores, which skip
//! reading each output line before writing it: a third less memory traffic,
//! and the output would not fit in cache anyway.

use std::mem::size_of;
use std::ops::Range;

use xlaref_reference::literal::{ArrayLiteral, Stored};
use xlaref_reference::types::ArrayShape;
use xlaref_reference::with_data;

use crate::par;

/// Bytes of a cache line: one tile row.
const LINE: usize = 64;
/// A block's side, in bytes of one of its rows.
const BLOCK_BYTES: usize = 1024;
/// Outputs of at least this many bytes are written with streaming stores.
const STREAM_BYTES: usize = 8 << 20;
/// Elements per parallel task, at least (small matrices are grouped).
const TASK_ELEMENTS: usize = 1 << 14;

/// Transposes every `rows × cols` matrix of `x` (row-major, one after the
/// other) into `out`.
pub fn swap_minor(x: &ArrayLiteral, rows: usize, cols: usize, out: &ArrayShape) -> ArrayLiteral {
    let data = with_data!(&x.data, v => Stored::wrap(swap_matrices(v, rows, cols, STREAM_BYTES)));
    ArrayLiteral::with_shape(out.with_element_type(x.element_type()), data)
}

/// How a tile is transposed: the widest way the CPU and element size allow.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tile {
    /// 16 × 16 four-byte elements in AVX-512 registers.
    Avx512Dword { stream: bool },
    /// 8 × 8 eight-byte elements in AVX-512 registers.
    Avx512Qword { stream: bool },
    /// Any element size, through a buffer of `side²` elements.
    Buffered { side: usize },
}

impl Tile {
    fn side(self) -> usize {
        match self {
            Tile::Avx512Dword { .. } => 16,
            Tile::Avx512Qword { .. } => 8,
            Tile::Buffered { side } => side,
        }
    }
}

/// The tile kernel for elements of `size` bytes. Streaming stores need
/// every tile row's destination on a line boundary: an aligned output whose
/// rows (the input's `rows` elements) are whole lines.
fn choose_tile(size: usize, out: *const u8, rows: usize, out_bytes: usize, stream_bytes: usize) -> Tile {
    let stream = out_bytes >= stream_bytes && (out as usize).is_multiple_of(LINE) && (rows * size).is_multiple_of(LINE);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        match size {
            4 => return Tile::Avx512Dword { stream },
            8 => return Tile::Avx512Qword { stream },
            _ => {}
        }
    }
    let _ = stream;
    Tile::Buffered { side: (LINE / size).clamp(2, 64) }
}

/// The output pointer shared by the tasks.
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut T);
// SAFETY: the tasks given an OutPtr write disjoint sets of elements (see
// `swap_matrices`) and nothing reads them until every task has finished.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    /// The pointer to element `k` (a method, so that closures capture the
    /// whole `OutPtr` rather than its raw pointer).
    ///
    /// # Safety
    /// `k` is within the allocation.
    unsafe fn at(self, k: usize) -> *mut T {
        self.0.add(k)
    }
}

/// `out[m][c][r] = src[m][r][c]` for every matrix `m` of `rows × cols`
/// elements in `src`; outputs of `stream_bytes` or more use streaming
/// stores where they can.
pub(crate) fn swap_matrices<T: Copy + Send + Sync>(src: &[T], rows: usize, cols: usize, stream_bytes: usize) -> Vec<T> {
    let n = src.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let matrix = rows * cols;
    if n == 0 || matrix == 0 {
        return out;
    }
    let size = size_of::<T>();
    let tile = choose_tile(size, out.as_ptr().cast(), rows, std::mem::size_of_val(src), stream_bytes);
    // A multiple of the tile's side, so blocks start on the tile grid.
    let side = (BLOCK_BYTES / size).max(tile.side()) / tile.side() * tile.side();
    let (row_blocks, col_blocks) = (rows.div_ceil(side), cols.div_ceil(side));
    let blocks_per_matrix = row_blocks * col_blocks;
    let blocks = (n / matrix) * blocks_per_matrix;
    let block_elements = matrix.min(side * side);
    let per_task = (TASK_ELEMENTS / block_elements).max(1);
    let dst = OutPtr(out.as_mut_ptr());
    let run_blocks = |scratch: &mut Vec<T>, task: usize| {
        for b in task * per_task..((task + 1) * per_task).min(blocks) {
            let (m, rb, cb) = (b / blocks_per_matrix, (b % blocks_per_matrix) / col_blocks, b % col_blocks);
            let r = rb * side..((rb + 1) * side).min(rows);
            let c = cb * side..((cb + 1) * side).min(cols);
            let block = Block { src: &src[m * matrix..(m + 1) * matrix], rows, cols, r, c };
            // SAFETY: matrix `m` of the output is `out[m * matrix..][..matrix]`,
            // within the capacity `n`; the block writes its elements
            // `[c][r]` for its own ranges `c × r`, which no other block
            // writes.
            unsafe { block.transpose(dst.at(m * matrix), tile, scratch) };
        }
    };
    let tasks = blocks.div_ceil(per_task);
    let new_scratch = || vec![src[0]; tile.side() * tile.side()];
    if n < par::PARALLEL_THRESHOLD || tasks == 1 {
        let mut scratch = new_scratch();
        (0..tasks).for_each(|t| run_blocks(&mut scratch, t));
    } else {
        par::tasks(tasks, new_scratch, run_blocks);
    }
    // SAFETY: the blocks of every matrix cover all its `rows × cols`
    // positions and each block writes every output element of its ranges.
    unsafe { out.set_len(n) };
    out
}

/// The input rows `r` and columns `c` of one row-major `rows × cols`
/// matrix.
struct Block<'a, T> {
    src: &'a [T],
    rows: usize,
    cols: usize,
    r: Range<usize>,
    c: Range<usize>,
}

impl<T: Copy> Block<'_, T> {
    /// Writes `dst[j * rows + i] = src[i * cols + j]` for every `i` in `r`
    /// and `j` in `c`: whole tiles with `tile`, the ragged edges (the
    /// matrix's last rows and columns) one element at a time.
    ///
    /// # Safety
    /// `dst` is valid for writes of `rows * cols` elements, and `tile` was
    /// chosen by [`choose_tile`] for `T`'s size and this `dst` and `rows`.
    unsafe fn transpose(&self, dst: *mut T, tile: Tile, scratch: &mut [T]) {
        let side = tile.side();
        let full_r = self.r.start + (self.r.len() / side) * side;
        let full_c = self.c.start + (self.c.len() / side) * side;
        match tile {
            #[cfg(target_arch = "x86_64")]
            Tile::Avx512Dword { stream } => x86::tiles_dword(self, full_r, full_c, dst, stream),
            #[cfg(target_arch = "x86_64")]
            Tile::Avx512Qword { stream } => x86::tiles_qword(self, full_r, full_c, dst, stream),
            _ => self.buffered_tiles(full_r, full_c, side, dst, scratch),
        }
        self.elementwise(self.r.start..full_r, full_c..self.c.end, dst);
        self.elementwise(full_r..self.r.end, self.c.clone(), dst);
    }

    /// The whole `side × side` tiles up to row `full_r` and column `full_c`,
    /// each read into `scratch` row by row and written out column by column.
    ///
    /// # Safety
    /// As [`Block::transpose`]; `scratch` holds `side²` elements.
    unsafe fn buffered_tiles(&self, full_r: usize, full_c: usize, side: usize, dst: *mut T, scratch: &mut [T]) {
        for r0 in (self.r.start..full_r).step_by(side) {
            for c0 in (self.c.start..full_c).step_by(side) {
                for (i, row) in scratch.chunks_exact_mut(side).enumerate() {
                    let at = (r0 + i) * self.cols + c0;
                    row.copy_from_slice(&self.src[at..at + side]);
                }
                for j in 0..side {
                    let out_row = dst.add((c0 + j) * self.rows + r0);
                    for i in 0..side {
                        out_row.add(i).write(scratch[i * side + j]);
                    }
                }
            }
        }
    }

    /// One element at a time, for the ragged edges.
    ///
    /// # Safety
    /// As [`Block::transpose`]; `r` and `c` lie within the matrix.
    unsafe fn elementwise(&self, r: Range<usize>, c: Range<usize>, dst: *mut T) {
        for j in c {
            for i in r.clone() {
                dst.add(j * self.rows + i).write(self.src[i * self.cols + j]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The AVX-512 tiles. The elements are moved as raw bits in float
    //! registers: loads, shuffles and stores never look at the values.
    use super::Block;
    use std::arch::x86_64::*;

    /// Every whole 16 × 16 tile of a block of 4-byte elements.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `T` is 4 bytes; `dst` as in
    /// [`Block::transpose`], and 64-byte aligned at every tile row when
    /// `stream`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tiles_dword<T>(b: &Block<T>, full_r: usize, full_c: usize, dst: *mut T, stream: bool) {
        debug_assert_eq!(std::mem::size_of::<T>(), 4);
        let (src, dst) = (b.src.as_ptr().cast::<f32>(), dst.cast::<f32>());
        for r0 in (b.r.start..full_r).step_by(16) {
            for c0 in (b.c.start..full_c).step_by(16) {
                tile_dword(src.add(r0 * b.cols + c0), b.cols, dst.add(c0 * b.rows + r0), b.rows, stream);
            }
        }
        if stream {
            // Streaming stores are weakly ordered: make them visible
            // before the task reports that it is done.
            _mm_sfence();
        }
    }

    /// Every whole 8 × 8 tile of a block of 8-byte elements.
    ///
    /// # Safety
    /// As [`tiles_dword`], for 8-byte `T`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tiles_qword<T>(b: &Block<T>, full_r: usize, full_c: usize, dst: *mut T, stream: bool) {
        debug_assert_eq!(std::mem::size_of::<T>(), 8);
        let (src, dst) = (b.src.as_ptr().cast::<f64>(), dst.cast::<f64>());
        for r0 in (b.r.start..full_r).step_by(8) {
            for c0 in (b.c.start..full_c).step_by(8) {
                tile_qword(src.add(r0 * b.cols + c0), b.cols, dst.add(c0 * b.rows + r0), b.rows, stream);
            }
        }
        if stream {
            _mm_sfence();
        }
    }

    /// Stores one tile row; streaming stores need `at` 64-byte aligned.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(at: *mut f32, v: __m512, stream: bool) {
        if stream {
            _mm512_stream_ps(at, v);
        } else {
            _mm512_storeu_ps(at, v);
        }
    }

    /// Transposes the 16 × 16 tile at `src` (row stride `ss`) into `dst`
    /// (row stride `ds`), in three rounds of shuffles: 32-bit pairs, 64-bit
    /// pairs, then 128-bit lanes twice.
    ///
    /// # Safety
    /// 16 rows of 16 elements are readable at `src` and writable at `dst`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn tile_dword(src: *const f32, ss: usize, dst: *mut f32, ds: usize, stream: bool) {
        let mut r = [_mm512_setzero_ps(); 16];
        for (i, row) in r.iter_mut().enumerate() {
            *row = _mm512_loadu_ps(src.add(i * ss));
        }
        // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved (even, odd columns
        // of each 128-bit lane).
        let mut t = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        // r[4i + k]: rows 4i..4i+4 of columns k, k+4, k+8, k+12.
        for i in 0..4 {
            for j in 0..2 {
                let (a, b) = (_mm512_castps_pd(t[4 * i + j]), _mm512_castps_pd(t[4 * i + j + 2]));
                r[4 * i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
                r[4 * i + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
            }
        }
        // t[8i + k], t[8i + 4 + k]: rows 8i..8i+8 of columns {k, k+8} and
        // {k+4, k+12}.
        for i in 0..2 {
            for k in 0..4 {
                t[8 * i + k] = _mm512_shuffle_f32x4::<0x88>(r[8 * i + k], r[8 * i + 4 + k]);
                t[8 * i + 4 + k] = _mm512_shuffle_f32x4::<0xDD>(r[8 * i + k], r[8 * i + 4 + k]);
            }
        }
        // Columns k and k + 8, all 16 rows: output rows k and k + 8.
        for k in 0..8 {
            store(dst.add(k * ds), _mm512_shuffle_f32x4::<0x88>(t[k], t[8 + k]), stream);
            store(dst.add((k + 8) * ds), _mm512_shuffle_f32x4::<0xDD>(t[k], t[8 + k]), stream);
        }
    }

    /// Transposes the 8 × 8 tile at `src` (row stride `ss`) into `dst` (row
    /// stride `ds`): 64-bit pairs, then 128-bit lanes twice.
    ///
    /// # Safety
    /// 8 rows of 8 elements are readable at `src` and writable at `dst`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn tile_qword(src: *const f64, ss: usize, dst: *mut f64, ds: usize, stream: bool) {
        let mut r = [_mm512_setzero_pd(); 8];
        for (i, row) in r.iter_mut().enumerate() {
            *row = _mm512_loadu_pd(src.add(i * ss));
        }
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
            store(dst.add(k * ds).cast(), _mm512_castpd_ps(lo), stream);
            store(dst.add((k + 4) * ds).cast(), _mm512_castpd_ps(hi), stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transpose by index arithmetic.
    fn expected<T: Copy>(src: &[T], rows: usize, cols: usize) -> Vec<T> {
        let matrix = rows * cols;
        (0..src.len())
            .map(|p| {
                let (m, c, r) = (p / matrix, (p / rows) % cols, p % rows);
                src[m * matrix + r * cols + c]
            })
            .collect()
    }

    /// Shapes at the tile sides (2..64 elements) and block sides (16..1024)
    /// of every element size, ± 1, and a few odd ones.
    const SHAPES: [(usize, usize, usize); 16] = [
        (1, 0, 5),
        (3, 5, 0),
        (1, 1, 1),
        (2, 1, 17),
        (3, 7, 9),
        (1, 8, 8),
        (2, 9, 7),
        (1, 15, 17),
        (2, 16, 16),
        (1, 17, 33),
        (1, 33, 65),
        (3, 64, 63),
        (1, 129, 255),
        (1, 256, 257),
        (2, 300, 129),
        (1, 1024, 40),
    ];

    fn check<T: Copy + Send + Sync + PartialEq + std::fmt::Debug>(of: impl Fn(usize) -> T) {
        for (batch, rows, cols) in SHAPES {
            let src: Vec<T> = (0..batch * rows * cols).map(&of).collect();
            // Streaming from 0 bytes on (where the output is aligned), and never.
            for stream_bytes in [0, usize::MAX] {
                let got = swap_matrices(&src, rows, cols, stream_bytes);
                assert!(got == expected(&src, rows, cols), "{batch}x{rows}x{cols}, {} bytes, stream from {stream_bytes}", size_of::<T>());
            }
        }
    }

    #[test]
    fn every_element_size_at_tile_and_block_boundaries() {
        check(|i| i as u8);
        check(|i| i as u16);
        check(|i| i as u32);
        check(|i| i as u64);
        check(|i| (i as u64, !(i as u64)));
        check(|i| [i as u8, (i >> 8) as u8, (i >> 16) as u8]);
    }

    /// Bits that are not ordinary numbers pass unchanged through the float
    /// registers.
    #[test]
    fn nan_payloads_and_signed_zeros_survive() {
        let bits32 = [0x7fc0_0001u32, 0xffa0_0000, 0x8000_0000, 0x7f80_0001, 1];
        check(|i| f32::from_bits(bits32[i % bits32.len()] ^ ((i as u32) << 8 & 0x3f00)).to_bits());
        let bits64 = [0x7ff8_0000_0000_0001u64, 0xfff4_0000_0000_0000, 0x8000_0000_0000_0000, 1];
        check(|i| bits64[i % bits64.len()] ^ (i as u64) << 20);
    }

    #[test]
    fn large_outputs_take_the_streaming_path_when_aligned() {
        // 2048 rows of 4 bytes are whole lines; the allocation is aligned
        // when the tile is chosen for an aligned pointer.
        let aligned = 4096 as *const u8;
        let simd = cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("avx512f");
        if simd {
            assert_eq!(choose_tile(4, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512Dword { stream: true });
            assert_eq!(choose_tile(4, aligned, 2047, 1 << 24, STREAM_BYTES), Tile::Avx512Dword { stream: false });
            assert_eq!(choose_tile(8, (4096 + 32) as *const u8, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512Qword { stream: false });
            assert_eq!(choose_tile(8, aligned, 2048, 1 << 10, STREAM_BYTES), Tile::Avx512Qword { stream: false });
        }
        assert_eq!(choose_tile(2, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Buffered { side: 32 });
        assert_eq!(choose_tile(16, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Buffered { side: 4 });
        // A big matrix through the real path, in parallel (streamed if the
        // allocator aligned it).
        let (rows, cols) = (2048, 1500);
        let src: Vec<u32> = (0..rows * cols).map(|i| i as u32).collect();
        assert!(swap_matrices(&src, rows, cols, STREAM_BYTES) == expected(&src, rows, cols));
    }

    /// The streaming stores, into a destination aligned by hand: every
    /// output row is whole lines, the ragged columns go element by element.
    #[test]
    fn streaming_tiles_into_an_aligned_destination() {
        if !(cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("avx512f")) {
            return;
        }
        fn streamed<T: Copy + PartialEq + std::fmt::Debug>(of: impl Fn(usize) -> T, tile: Tile) {
            for (rows, cols) in [(16, 16), (32, 8), (48, 17), (64, 33), (16, 1)] {
                let src: Vec<T> = (0..rows * cols).map(&of).collect();
                let mut buffer = vec![of(usize::MAX); rows * cols + LINE];
                let skip = buffer.as_ptr().align_offset(LINE);
                let dst = &mut buffer[skip..skip + rows * cols];
                let block = Block { src: &src, rows, cols, r: 0..rows, c: 0..cols };
                let mut scratch = vec![src[0]; tile.side() * tile.side()];
                // SAFETY: `dst` holds rows × cols elements, starts on a line,
                // and `rows` elements of T are whole lines.
                unsafe { block.transpose(dst.as_mut_ptr(), tile, &mut scratch) };
                assert_eq!(dst, &expected(&src, rows, cols)[..], "{rows}x{cols}");
            }
        }
        streamed(|i| i as u32, Tile::Avx512Dword { stream: true });
        streamed(|i| i as u64, Tile::Avx512Qword { stream: true });
    }
}
