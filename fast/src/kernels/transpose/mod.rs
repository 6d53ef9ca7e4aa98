//! Transpose at memory speed: every permutation of an array's dimensions
//! as a batch of (strided) matrix transposes.
//!
//! Once size-1 dimensions are dropped and input dimensions that stay
//! adjacent and in order are merged ([`super::layout::merge_dimensions`]),
//! the output's last dimension walks some input dimension `a` and the
//! input's last dimension becomes some output dimension `b`. For each index
//! of the other dimensions (the batch), the `a × last` sub-matrix of the
//! input is transposed into the `b × last` sub-matrix of the output: rows
//! `ss` apart in the input become rows `ds` apart in the output. When the
//! last dimension does not move, its rows are short runs that move
//! together: each run is one wider element and the rest is permuted.
//!
//! Every element is read once and written once, a whole cache line at a
//! time: a matrix is cut into `L × L` tiles whose rows are one 64-byte
//! line each, a tile's `L` input rows are loaded, transposed in registers
//! (AVX-512, for elements of 1, 2, 4, 8 and 16 bytes; 1 needs VBMI) or
//! through a small buffer (every other size or CPU), and stored as `L`
//! output rows. No line has to stay
//! in L1 between two tiles: with a power-of-two row length the `L` rows of
//! a tile fall on one cache set, which holds only 8 of them.
//!
//! Tiles are walked in wide blocks, which are the parallel tasks: one row
//! of tiles across up to 16 KiB of the input's rows, so that each of the
//! tile's `L` input rows is read as one long sequential stream (the tile's
//! loads also prefetch 1 KiB ahead in each row, further than the L2
//! prefetcher goes for that many streams). Short input rows take more rows
//! of tiles per block, up to 64 KiB. Square blocks of 1 KiB a side, read
//! as `L` streams of 1 KiB each, were 12-14% slower on 4096² f32 and
//! 256³ f32 (AMD EPYC, docs/performance.md). A large output is written with
//! streaming stores, which skip reading each output line before writing
//! it: a third less memory traffic, and the output would not fit in cache
//! anyway.

use std::mem::size_of;
use std::ops::Range;

use xlaref_reference::literal::{ArrayLiteral, Stored};
use xlaref_reference::types::ArrayShape;
use xlaref_reference::with_data;

use crate::par;

/// Bytes of a cache line: one tile row.
const LINE: usize = 64;
/// A block's width, in bytes of one of its input rows.
const BAND_BYTES: usize = 16 << 10;
/// A block is one row of tiles high, or as many (a power of two) as make
/// this many bytes of input when its rows are short: smaller blocks cost
/// more in task hand-outs and in fences for their streaming stores.
const MIN_BLOCK_BYTES: usize = 64 << 10;
/// Outputs of at least this many bytes are written with streaming stores.
const STREAM_BYTES: usize = 8 << 20;
/// Elements per parallel task, at least (small matrices are grouped).
const TASK_ELEMENTS: usize = 1 << 14;
/// Runs of the unmoved last dimension up to this many bytes become one
/// element; longer runs are copied as rows by the caller.
const MAX_RUN_BYTES: usize = 32;

/// A permutation as a batch of matrix transposes: for every batch index,
/// `out[o + j·ds + i] = in[s + i·ss + j]` for `i < rows` and `j < cols`,
/// where `s` and `o` are the batch index's offsets.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Plan {
    pub rows: usize,
    pub cols: usize,
    /// Input elements from one row to the next.
    pub ss: usize,
    /// Output elements from one row (one input column) to the next.
    pub ds: usize,
    /// The batch dimensions, outermost first: (size, input stride, output
    /// stride).
    pub batch: Vec<(usize, usize, usize)>,
}

impl Plan {
    /// `count` row-major `rows × cols` matrices one after the other.
    pub fn matrices(count: usize, rows: usize, cols: usize) -> Plan {
        Plan { rows, cols, ss: cols, ds: rows, batch: vec![(count, rows * cols, rows * cols)] }
    }

    /// The plan of a merged permutation (`dims` of the input, output
    /// dimension `i` walks input dimension `permutation[i]`) whose last
    /// dimension moves; `None` for fewer than two dimensions.
    pub fn of(dims: &[usize], permutation: &[usize]) -> Option<Plan> {
        let rank = dims.len();
        if rank < 2 || permutation.len() != rank {
            return None;
        }
        let in_strides = row_major_strides(dims);
        let out_dims: Vec<usize> = permutation.iter().map(|&p| dims[p]).collect();
        let out_strides = row_major_strides(&out_dims);
        let a = permutation[rank - 1];
        let b = permutation.iter().position(|&p| p == rank - 1)?;
        let batch =
            (0..rank).filter(|&k| k != b && k != rank - 1).map(|k| (out_dims[k], in_strides[permutation[k]], out_strides[k])).collect();
        Some(Plan { rows: dims[a], cols: dims[rank - 1], ss: in_strides[a], ds: out_strides[b], batch })
    }

    /// How many matrices the batch holds.
    fn count(&self) -> usize {
        self.batch.iter().map(|d| d.0).product()
    }

    /// The input and output offsets of batch index `m` (row-major over the
    /// batch dimensions).
    fn offsets(&self, mut m: usize) -> (usize, usize) {
        let (mut from, mut to) = (0, 0);
        for &(size, in_stride, out_stride) in self.batch.iter().rev() {
            from += (m % size) * in_stride;
            to += (m % size) * out_stride;
            m /= size;
        }
        (from, to)
    }
}

fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    strides
}

/// The transpose of `x` by a merged permutation (see
/// [`super::layout::merge_dimensions`]); `None` when its unmoved last
/// dimension is a run of elements longer than half a line or of a byte
/// count without a kernel, which the caller copies row by row.
pub fn permute(x: &ArrayLiteral, dims: &[usize], permutation: &[usize], out: &ArrayShape) -> Option<ArrayLiteral> {
    let data = with_data!(&x.data, v => Stored::wrap(permute_elements(v, dims, permutation)?));
    Some(ArrayLiteral::with_shape(out.with_element_type(x.element_type()), data))
}

/// [`permute`] on the elements, moved as bytes. `T` must be plain data
/// without padding bytes, so that each element is exactly its bytes: every
/// element type of a literal is (numbers, `bool`, complex pairs, f8
/// bytes).
fn permute_elements<T: Copy + Send + Sync>(src: &[T], dims: &[usize], permutation: &[usize]) -> Option<Vec<T>> {
    let rank = dims.len();
    let (plan, run) = if rank > 0 && permutation[rank - 1] == rank - 1 {
        (Plan::of(&dims[..rank - 1], &permutation[..rank - 1]), dims[rank - 1])
    } else {
        (Plan::of(dims, permutation), 1)
    };
    let Some(plan) = plan else {
        // The identity.
        return Some(src.to_vec());
    };
    match run * size_of::<T>() {
        // Every element size, and runs of them: RGB bytes, xyz triples.
        1 => Some(permute_bytes::<T, 1>(src, &plan)),
        2 => Some(permute_bytes::<T, 2>(src, &plan)),
        3 => Some(permute_bytes::<T, 3>(src, &plan)),
        4 => Some(permute_bytes::<T, 4>(src, &plan)),
        6 => Some(permute_bytes::<T, 6>(src, &plan)),
        8 => Some(permute_bytes::<T, 8>(src, &plan)),
        12 => Some(permute_bytes::<T, 12>(src, &plan)),
        16 => Some(permute_bytes::<T, 16>(src, &plan)),
        24 => Some(permute_bytes::<T, 24>(src, &plan)),
        b if b == MAX_RUN_BYTES => Some(permute_bytes::<T, MAX_RUN_BYTES>(src, &plan)),
        _ => None,
    }
}

/// `out[m][j][i] = src[m][i][j]` for each row-major `rows × cols` matrix
/// `m` of `src`, into `out` of the same length, without streaming stores
/// (the FFT reads its transposes back at once, from cache). Writes nothing
/// when the lengths do not make whole matrices.
pub(crate) fn swap_matrices_into<T: Copy + Send + Sync>(src: &[T], out: &mut [T], rows: usize, cols: usize) {
    let matrix = rows * cols;
    if matrix == 0 || out.len() != src.len() || !src.len().is_multiple_of(matrix) {
        return;
    }
    permute_into(src, &Plan::matrices(src.len() / matrix, rows, cols), OutPtr(out.as_mut_ptr()), usize::MAX);
}

/// The plan run on `src` seen as elements of `B` bytes.
fn permute_bytes<T: Copy + Send + Sync, const B: usize>(src: &[T], plan: &Plan) -> Vec<T> {
    let n = src.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let bytes = std::mem::size_of_val(src);
    debug_assert_eq!(bytes % B, 0);
    // SAFETY: `[u8; B]` has alignment 1 and T is plain data (every bit
    // pattern of its bytes is readable as bytes), so the `bytes / B`
    // elements of B bytes cover exactly the memory of `src`.
    let wide: &[[u8; B]] = unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), bytes / B) };
    permute_into(wide, plan, OutPtr(out.as_mut_ptr().cast()), STREAM_BYTES);
    // SAFETY: `permute_into` wrote every byte of the `n` elements (the
    // plan's matrices cover the whole output), and any bytes copied from
    // T's are a valid T.
    unsafe { out.set_len(n) };
    out
}

/// How a tile is transposed: the widest way the CPU and element size allow.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tile {
    /// `side × side` elements of 1, 2, 4, 8 or 16 bytes (side 64, 32, 16, 8
    /// or 4) in AVX-512 registers, stored with streaming stores when
    /// `stream`.
    Avx512 { side: usize, stream: bool },
    /// Any element size, through a buffer of `side²` elements.
    Buffered { side: usize },
}

impl Tile {
    fn side(self) -> usize {
        match self {
            Tile::Avx512 { side, .. } | Tile::Buffered { side } => side,
        }
    }
}

/// The tile kernel for elements of `size` bytes. Streaming stores need
/// every tile row's destination on a line boundary: an aligned output whose
/// rows (the input's `rows` elements) are whole lines.
fn choose_tile(size: usize, out: *const u8, rows: usize, out_bytes: usize, stream_bytes: usize) -> Tile {
    let stream = out_bytes >= stream_bytes && (out as usize).is_multiple_of(LINE) && (rows * size).is_multiple_of(LINE);
    #[cfg(target_arch = "x86_64")]
    {
        use crate::isa::{isa, Isa};
        // Byte tiles need VBMI's byte permute (`x86::tiles`).
        let needs = if size == 1 { Isa::Avx512Vbmi } else { Isa::Avx512 };
        if matches!(size, 1 | 2 | 4 | 8 | 16) && isa() >= needs {
            return Tile::Avx512 { side: LINE / size, stream };
        }
    }
    let _ = stream;
    Tile::Buffered { side: (LINE / size).clamp(2, 64) }
}

/// The output pointer shared by the tasks.
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut T);
// SAFETY: the tasks given an OutPtr write disjoint sets of elements (see
// `permute_into`) and nothing reads them until every task has finished.
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

/// Runs `plan` on `src` into the `src.len()` elements at `dst`; outputs
/// of `stream_bytes` or more use streaming stores where they can.
fn permute_into<T: Copy + Send + Sync>(src: &[T], plan: &Plan, dst: OutPtr<T>, stream_bytes: usize) {
    let n = src.len();
    let (rows, cols) = (plan.rows, plan.cols);
    if n == 0 || rows == 0 || cols == 0 {
        return;
    }
    let size = size_of::<T>();
    let tile = choose_tile(size, dst.0.cast_const().cast(), rows, std::mem::size_of_val(src), stream_bytes);
    // Blocks start on the tile grid: `width` columns, and as many rows of
    // tiles as make MIN_BLOCK_BYTES when the input's rows are short.
    let width = (BAND_BYTES / size).max(tile.side()) / tile.side() * tile.side();
    let band = tile.side() * width.min(cols) * size;
    let side = tile.side() * (MIN_BLOCK_BYTES / band).max(1).next_power_of_two();
    let (row_blocks, col_blocks) = (rows.div_ceil(side), cols.div_ceil(width));
    let blocks_per_matrix = row_blocks * col_blocks;
    let blocks = plan.count() * blocks_per_matrix;
    let block_elements = rows.min(side) * cols.min(width);
    let per_task = (TASK_ELEMENTS / block_elements).max(1);
    let run_blocks = |scratch: &mut Vec<T>, task: usize| {
        for b in task * per_task..((task + 1) * per_task).min(blocks) {
            let (m, rb, cb) = (b / blocks_per_matrix, (b % blocks_per_matrix) / col_blocks, b % col_blocks);
            let (from, to) = plan.offsets(m);
            let r = rb * side..((rb + 1) * side).min(rows);
            let c = cb * width..((cb + 1) * width).min(cols);
            let block = Block { src: &src[from..], ss: plan.ss, ds: plan.ds, r, c };
            // SAFETY: the plan maps the matrices' elements one to one onto
            // the `n` output elements; this block writes the outputs of its
            // own rows `r` and columns `c` of matrix `m`, which no other
            // block writes.
            unsafe { block.transpose(dst.at(to), tile, scratch) };
        }
        #[cfg(target_arch = "x86_64")]
        if matches!(tile, Tile::Avx512 { stream: true, .. }) {
            x86::store_fence();
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
}

/// The input rows `r` and columns `c` of one matrix whose rows start `ss`
/// elements apart in `src`, and whose columns become output rows `ds`
/// elements apart.
struct Block<'a, T> {
    src: &'a [T],
    ss: usize,
    ds: usize,
    r: Range<usize>,
    c: Range<usize>,
}

impl<T: Copy> Block<'_, T> {
    /// Writes `dst[j * ds + i] = src[i * ss + j]` for every `i` in `r`
    /// and `j` in `c`: tile by tile. Register tiles also take the tiles cut
    /// by the matrix's edge (masked); buffered tiles leave the ragged edges
    /// (the matrix's last rows and columns) to a loop over elements.
    ///
    /// # Safety
    /// `dst + j * ds + i` is valid for writes for every `i` in `r` and `j`
    /// in `c`, and `tile` was chosen by [`choose_tile`] for `T`'s size, this
    /// `dst` and an output row length that makes `ds` and `dst`'s offset
    /// from the output's start whole lines when it streams.
    unsafe fn transpose(&self, dst: *mut T, tile: Tile, scratch: &mut [T]) {
        match tile {
            #[cfg(target_arch = "x86_64")]
            Tile::Avx512 { stream, .. } => x86::tiles(self, dst, stream),
            _ => {
                let side = tile.side();
                let full_r = self.r.start + (self.r.len() / side) * side;
                let full_c = self.c.start + (self.c.len() / side) * side;
                self.buffered_tiles(full_r, full_c, side, dst, scratch);
                self.elementwise(self.r.start..full_r, full_c..self.c.end, dst);
                self.elementwise(full_r..self.r.end, self.c.clone(), dst);
            }
        }
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
                    let at = (r0 + i) * self.ss + c0;
                    row.copy_from_slice(&self.src[at..at + side]);
                }
                for j in 0..side {
                    let out_row = dst.add((c0 + j) * self.ds + r0);
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
                dst.add(j * self.ds + i).write(self.src[i * self.ss + j]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;

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

    /// Shapes at the tile sides (2..64 elements) and block sides (rows of
    /// 16..1024 elements, block widths of 1024..16384) of every element
    /// size, ± 1, and a few odd and narrow ones.
    const SHAPES: [(usize, usize, usize); 23] = [
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
        (2, 64, 65),
        (1, 129, 255),
        (1, 256, 257),
        (2, 300, 129),
        (1, 1024, 40),
        // Narrow matrices: edge tiles with few columns or rows, on both
        // sides of the masked tiles' threshold (a quarter of a tile).
        (1, 200, 16),
        (1, 16, 200),
        (2, 70, 40),
        // Rows wider than a block (BAND_BYTES) for 16-, 4- and 1-byte
        // elements: several blocks across, the last one ragged.
        (2, 5, 1030),
        (1, 17, 4100),
        (1, 65, 16390),
    ];

    /// A batch of row-major matrix transposes through the plan kernel.
    fn swap_matrices<T: Copy + Send + Sync>(src: &[T], rows: usize, cols: usize, stream_bytes: usize) -> Vec<T> {
        let mut out: Vec<T> = Vec::with_capacity(src.len());
        let count = src.len().checked_div(rows * cols).unwrap_or(0);
        permute_into(src, &Plan::matrices(count, rows, cols), OutPtr(out.as_mut_ptr()), stream_bytes);
        // SAFETY: the matrices cover the whole output.
        unsafe { out.set_len(src.len()) };
        out
    }

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

    /// Matrix transposes at the tile and block boundaries, and every
    /// merged permutation, for elements of 1, 2, 4, 8, 16 and 3 bytes.
    #[test]
    fn every_element_size_at_tile_and_block_boundaries() {
        fn both<T: Copy + Send + Sync + PartialEq + std::fmt::Debug>(of: impl Fn(usize) -> T) {
            check(&of);
            check_permutations(&of);
        }
        both(|i| i as u8);
        both(|i| i as u16);
        both(|i| i as u32);
        both(|i| i as u64);
        both(|i| (i as u64, !(i as u64)));
        both(|i| [i as u8, (i >> 8) as u8, (i >> 16) as u8]);
    }

    /// Bits that are not ordinary numbers (NaN payloads, signed zeros)
    /// pass unchanged through the register tiles.
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
        use crate::isa::{isa, Isa};
        if cfg!(target_arch = "x86_64") && isa() >= Isa::Avx512 {
            assert_eq!(choose_tile(4, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 16, stream: true });
            assert_eq!(choose_tile(4, aligned, 2047, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 16, stream: false });
            assert_eq!(choose_tile(8, (4096 + 32) as *const u8, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 8, stream: false });
            assert_eq!(choose_tile(8, aligned, 2048, 1 << 10, STREAM_BYTES), Tile::Avx512 { side: 8, stream: false });
            assert_eq!(choose_tile(16, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 4, stream: true });
            assert_eq!(choose_tile(2, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 32, stream: true });
        }
        if cfg!(target_arch = "x86_64") && isa() >= Isa::Avx512Vbmi {
            assert_eq!(choose_tile(1, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 64, stream: true });
            assert_eq!(choose_tile(1, aligned, 2047, 1 << 24, STREAM_BYTES), Tile::Avx512 { side: 64, stream: false });
        } else {
            assert_eq!(choose_tile(1, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Buffered { side: 64 });
        }
        if isa() < Isa::Avx512 {
            assert_eq!(choose_tile(4, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Buffered { side: 16 });
        }
        assert_eq!(choose_tile(32, aligned, 2048, 1 << 24, STREAM_BYTES), Tile::Buffered { side: 2 });
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
        use crate::isa::{isa, Isa};
        if !(cfg!(target_arch = "x86_64") && isa() >= Isa::Avx512) {
            return;
        }
        fn streamed<T: Copy + PartialEq + std::fmt::Debug>(of: impl Fn(usize) -> T, tile: Tile) {
            let side = tile.side();
            for (rows, cols) in [(side, side), (2 * side, 8), (3 * side, side + 1), (2 * side, 2 * side + 1), (side, 1)] {
                let src: Vec<T> = (0..rows * cols).map(&of).collect();
                let mut buffer = vec![of(usize::MAX); rows * cols + LINE];
                let skip = buffer.as_ptr().align_offset(LINE);
                let dst = &mut buffer[skip..skip + rows * cols];
                let block = Block { src: &src, ss: cols, ds: rows, r: 0..rows, c: 0..cols };
                let mut scratch = vec![src[0]; tile.side() * tile.side()];
                // SAFETY: `dst` holds rows × cols elements, starts on a line,
                // and `rows` elements of T are whole lines.
                unsafe { block.transpose(dst.as_mut_ptr(), tile, &mut scratch) };
                assert_eq!(dst, &expected(&src, rows, cols)[..], "{rows}x{cols}");
            }
        }
        if isa() >= Isa::Avx512Vbmi {
            streamed(|i| i as u8, Tile::Avx512 { side: 64, stream: true });
        }
        streamed(|i| i as u16, Tile::Avx512 { side: 32, stream: true });
        streamed(|i| i as u32, Tile::Avx512 { side: 16, stream: true });
        streamed(|i| i as u64, Tile::Avx512 { side: 8, stream: true });
        streamed(|i| (i as u64, !(i as u64)), Tile::Avx512 { side: 4, stream: true });
    }

    /// The transpose of a row-major array of `dims` by index arithmetic.
    fn permuted<T: Copy>(src: &[T], dims: &[usize], permutation: &[usize]) -> Vec<T> {
        let in_strides = row_major_strides(dims);
        let out_dims: Vec<usize> = permutation.iter().map(|&p| dims[p]).collect();
        (0..src.len())
            .map(|mut k| {
                let mut from = 0;
                for (d, &size) in out_dims.iter().enumerate().rev() {
                    from += (k % size) * in_strides[permutation[d]];
                    k /= size;
                }
                src[from]
            })
            .collect()
    }

    /// Merged permutations of up to five dimensions, sizes at the tile
    /// sides ± 1, with the last dimension moved or kept (as runs of one,
    /// two, ... elements).
    const PERMUTATIONS: &[(&[usize], &[usize])] = &[
        (&[3, 5], &[1, 0]),
        (&[17, 33], &[1, 0]),
        (&[2, 3, 5], &[2, 1, 0]),
        (&[9, 17, 31], &[2, 1, 0]),
        (&[2, 3, 5], &[1, 0, 2]),
        (&[33, 7, 16], &[1, 0, 2]),
        (&[4, 5, 6, 7], &[3, 2, 1, 0]),
        (&[4, 17, 6, 2], &[0, 2, 1, 3]),
        (&[3, 16, 17, 8], &[2, 0, 3, 1]),
        (&[2, 3, 4, 5, 6], &[4, 1, 3, 0, 2]),
        (&[2, 3, 4, 5, 6], &[1, 3, 0, 2, 4]),
        (&[5, 9, 1], &[1, 0, 2]),
        (&[5, 9, 3], &[1, 0, 2]),
        (&[3, 0, 4], &[2, 1, 0]),
        (&[7], &[0]),
    ];

    fn check_permutations<T: Copy + Send + Sync + PartialEq + std::fmt::Debug>(of: impl Fn(usize) -> T) {
        for &(dims, permutation) in PERMUTATIONS {
            let src: Vec<T> = (0..dims.iter().product()).map(&of).collect();
            let want = permuted(&src, dims, permutation);
            match permute_elements(&src, dims, permutation) {
                Some(got) => assert!(got == want, "{dims:?} by {permutation:?}, {} bytes", size_of::<T>()),
                // Only runs longer than half a line or of an unusual byte
                // count are left to the caller.
                None => {
                    let run = dims[dims.len() - 1] * size_of::<T>();
                    assert!(run > MAX_RUN_BYTES || ![1, 2, 3, 4, 6, 8, 12, 16, 24].contains(&run), "{dims:?} by {permutation:?}");
                }
            }
        }
    }

    #[test]
    fn plans_of_merged_permutations() {
        // [A, B, C] -> [C, B, A]: C×A matrices, one per B.
        let p = Plan::of(&[2, 3, 5], &[2, 1, 0]).unwrap();
        assert_eq!(p, Plan { rows: 2, cols: 5, ss: 15, ds: 6, batch: vec![(3, 5, 2)] });
        assert_eq!(Plan::of(&[3, 5], &[1, 0]).unwrap(), Plan { rows: 3, cols: 5, ss: 5, ds: 3, batch: vec![] });
        assert_eq!(Plan::of(&[7], &[0]), None);
        assert_eq!(Plan::of(&[], &[]), None);
    }
}
