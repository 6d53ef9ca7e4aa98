//! The direct convolution for f32 and f64: the GEMM of the im2col path
//! without `col`. A tile of output positions keeps its sums in registers
//! and, for each window position, reads the input features under it where
//! they lie in the (canonical, feature-minor) input, through one pointer
//! per output position. Output positions whose window position falls on
//! padding or a hole read a run of zeros instead.
//!
//! The im2col path copies every input element once per window position
//! (nine times for 3×3) before the GEMM reads it; at small sizes that copy
//! was a third of the convolution (8×32×32×32, 3×3 over 32 features:
//! 1.07 ms against 0.65 ms of arithmetic at the machine's peak).
//!
//! Taken when the CPU has the skinny kernels' vectors (AVX-512 or AVX2),
//! every weight is finite (a zero then contributes nothing, as padding and
//! holes must: document), and a group has at least half a vector of
//! output features; otherwise the im2col path runs.
//!
//! Summation order: each output element is accumulated over the window
//! positions in ascending order (row-major over the window), over the
//! input features in ascending order within each, one fused multiply-add
//! at a time from zero: the reference's order, each step rounded once
//! instead of twice. A window position that lies off the input for every
//! output position of a tile is skipped, which changes no sum: adding
//! `0·w` (w finite) to a sum that started from +0 leaves it as it is.

use super::{Job, Plan};
use crate::isa::Isa;
use crate::kernels::gemm::skinny::{Read, Skinny, Write};
use crate::par;

/// Multiply-adds per task (a look at the clock between tasks).
const TASK_MULTIPLY_ADDS: usize = 1 << 21;

/// Whether the direct path is on: `XLAREF_FAST_CONV=im2col` turns it off
/// (to time the im2col path, or to run it on a CPU the direct path takes).
pub fn wanted() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("XLAREF_FAST_CONV").map_or(true, |v| v != "im2col"))
}

/// How many convolutions the direct path took (for the tests).
#[cfg(test)]
pub static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Output positions per tile for a panel of `nv` vectors: the sums, the
/// panel's row and a broadcast value must fit in the vector registers
/// (AVX-512's 32; AVX2's 16 hold six rows of two vectors).
pub const fn tile_rows(avx512: bool, nv: usize) -> usize {
    match (avx512, nv) {
        (true, _) => 8,
        (false, 1) => 8,
        _ => 6,
    }
}

/// A float with direct-convolution tiles.
pub trait Direct: Skinny {
    /// The value of a bias (an f32 value for f32: exact).
    fn from_f64(v: f64) -> Self;
    /// One tile of [`tile_rows`] rows by a panel of `nv` (1 or 2) vectors.
    ///
    /// # Safety
    /// `isa` is at most what the CPU has and `Self::lanes(isa) > 0`; as
    /// [`super::x86::tile`] with `R = tile_rows(isa is AVX-512, nv)`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn tile(isa: Isa, nv: usize, t: &super::x86::Tile<Self>);
}

/// Runs the job by direct tiles; false (nothing written) when it is not
/// for them.
pub fn run<T: Direct>(job: &mut Job<'_, T>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        run_x86(job)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = job;
        false
    }
}

/// The tiles' instruction set for `ozg` output features a group: on
/// AVX-512 hosts, AVX2's when the features fit one ymm vector. A zmm panel
/// for them is half zeros, so half of every multiply-add is wasted: the
/// conv net with 8 features (f32[4,128,128,8], 3×3, f32) took 1.34-1.43 ms
/// a convolution on zmm tiles, against 0.84-0.87 on ymm.
#[cfg(target_arch = "x86_64")]
pub(super) fn tile_isa<T: Direct>(isa: Isa, ozg: usize) -> Isa {
    if matches!(isa, Isa::Avx512 | Isa::Avx512Vbmi) && ozg <= T::lanes(Isa::Avx2) {
        Isa::Avx2
    } else {
        isa
    }
}

#[cfg(target_arch = "x86_64")]
fn run_x86<T: Direct>(job: &mut Job<'_, T>) -> bool {
    let p = job.plan;
    let isa = tile_isa::<T>(crate::isa::isa(), p.oz_per_group);
    let lanes = T::lanes(isa);
    let ozg = p.oz_per_group;
    if lanes == 0 || ozg * 2 < lanes || job.w.iter().any(|v| !v.zero_product_is_zero()) {
        return false;
    }
    #[cfg(test)]
    RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nv = if ozg <= lanes { 1 } else { 2 };
    let width = nv * lanes;
    let rows = tile_rows(matches!(isa, Isa::Avx512 | Isa::Avx512Vbmi), nv);
    let geometry = Geometry::new(p);
    let iz = p.iz_per_group;
    let k = geometry.windows * iz;
    let panels = ozg.div_ceil(width);
    let pack = pack_panels(p, job.w, k, width, panels);
    // The fused bias in the panels' columns, zero-padded like them.
    let bias: Option<Vec<T>> = p.bias.as_ref().map(|b| {
        (0..p.groups * panels * width)
            .map(|i| {
                let (g, q, j) = (i / (panels * width), i / width % panels, i % width);
                let column = q * width + j;
                if column < ozg {
                    b.values.get(g * ozg + column).map_or(T::ZERO, |&v| T::from_f64(v))
                } else {
                    T::ZERO
                }
            })
            .collect()
    });
    let relu = p.bias.as_ref().is_some_and(|b| b.relu);
    let out_spatial: usize = p.spatial.iter().map(|s| s.out_size).product();
    let m = p.out_batch * out_spatial;
    if m == 0 || p.output_z == 0 {
        return true;
    }
    let tiles = m.div_ceil(rows);
    let threads = rayon::current_num_threads().max(1);
    let per_tile = (rows * k * ozg * p.groups).max(1);
    let per_task = (TASK_MULTIPLY_ADDS / per_tile).clamp(1, tiles.div_ceil(4 * threads).max(1));
    let tasks = tiles.div_ceil(per_task);
    let zeros = vec![T::ZERO; iz.max(1)];
    let (x, clock, ldc) = (job.x, job.clock, p.output_z);
    let c = Write(job.c.as_mut_ptr().cast::<T>());
    let task = |scratch: &mut Scratch<T>, t: usize| {
        if clock.passed() {
            return;
        }
        for g in 0..p.groups {
            let (z0, b0) = if p.feature_groups { (g * iz, 0) } else { (0, g * p.out_batch) };
            for tile in t * per_task..tiles.min((t + 1) * per_task) {
                let r0 = tile * rows;
                geometry.pointers(p, x, &zeros, At { r0, rows, m, b0, z0 }, scratch);
                for panel in 0..panels {
                    let j0 = g * ozg + panel * width;
                    let group_panel = &pack[(g * panels + panel) * k * width..];
                    let t = super::x86::Tile {
                        segments: &scratch.segments,
                        rows: &scratch.rows,
                        b: group_panel.as_ptr(),
                        b_rs: width,
                        // SAFETY: row r0 < m and column j0 < output_z of C.
                        c: unsafe { c.ptr().add(r0 * ldc + j0) },
                        ldc,
                        rows_out: rows.min(m - r0),
                        cols: width.min(ozg - panel * width),
                        bias: bias.as_ref().map(|b| b[(g * panels + panel) * width..].as_ptr()),
                        relu,
                    };
                    // SAFETY: the ISA is the CPU's (capped) with lanes; the
                    // scratch holds `rows` readable pointers per segment
                    // (input features or zeros, `iz` each); the panel has
                    // k rows of `width`; the tile's rows and columns lie in
                    // C, and tasks write disjoint rows.
                    unsafe { T::tile(isa, nv, &t) };
                }
            }
        }
    };
    if tasks > 1 && threads > 1 && tiles * per_tile >= 1 << 18 {
        par::tasks(tasks, Scratch::default, task);
    } else {
        let mut scratch = Scratch::default();
        (0..tasks).for_each(|t| task(&mut scratch, t));
    }
    p.biased.store(p.bias.is_some(), std::sync::atomic::Ordering::Relaxed);
    true
}

/// The kernel as panels of `width` output features per group, each `k`
/// rows (window-major, input feature minor) of `width` values, zero-padded.
fn pack_panels<T: Direct>(p: &Plan, w: &[T], k: usize, width: usize, panels: usize) -> Vec<T> {
    let ozg = p.oz_per_group;
    let mut pack = vec![T::ZERO; p.groups * panels * k * width];
    for (gp, panel) in pack.chunks_exact_mut(k * width).enumerate() {
        let (g, q) = (gp / panels, gp % panels);
        let j0 = g * ozg + q * width;
        let cols = width.min(ozg - q * width);
        for (kk, row) in panel.chunks_exact_mut(width).enumerate() {
            row[..cols].copy_from_slice(&w[kk * p.output_z + j0..kk * p.output_z + j0 + cols]);
        }
    }
    pack
}

/// A worker's tile pointers: the window positions some row lies on, and
/// for each, one pointer per row.
struct Scratch<T> {
    segments: Vec<(usize, usize)>,
    rows: Vec<Read<T>>,
    /// The row's output index, the window position and the partial
    /// offsets, per spatial dimension.
    out_index: Vec<usize>,
    window: Vec<usize>,
    partial: Vec<usize>,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch { segments: Vec::new(), rows: Vec::new(), out_index: Vec::new(), window: Vec::new(), partial: Vec::new() }
    }
}

/// A tile of output positions `r0..r0+rows` (those from `m` on are not
/// rows: their pointers read zeros) of the group whose input batch starts
/// at `b0` and features at `z0`.
#[derive(Clone, Copy)]
struct At {
    r0: usize,
    rows: usize,
    m: usize,
    b0: usize,
    z0: usize,
}

/// Where the input features under a window position lie.
struct Geometry {
    /// Per spatial dimension, `offsets[d][o·window + k]`: the input offset
    /// (index times the canonical input's stride) under window position
    /// `k` of output position `o`, or [`OFF`] for padding and holes.
    offsets: Vec<Vec<usize>>,
    x_batch: usize,
    /// Window positions (the product of the window sizes).
    windows: usize,
    /// The last spatial dimension's offsets, when they are regular: a
    /// step, and per window position `k` the output positions `lo..hi`
    /// that lie on the input, at `offset(lo) + (o - lo)·step` (none
    /// elsewhere). Without lhs dilation they always are.
    line_runs: Option<(usize, Vec<(usize, usize)>)>,
}

/// No input element: padding or a hole.
const OFF: usize = usize::MAX;

impl Geometry {
    fn new(p: &Plan) -> Geometry {
        let mut stride = p.input_z;
        let mut offsets = vec![Vec::new(); p.spatial.len()];
        for (d, s) in p.spatial.iter().enumerate().rev() {
            offsets[d] = s.table.iter().map(|i| i.map_or(OFF, |i| i * stride)).collect();
            stride *= p.lhs_view.sizes[d + 1];
        }
        let windows = p.spatial.iter().map(|s| s.window).product();
        let line_runs = p.spatial.last().and_then(|s| line_runs(s.out_size, s.window, offsets.last()?));
        Geometry { offsets, x_batch: stride, windows, line_runs }
    }

    /// Fills `scratch` for `tile`.
    fn pointers<T: Copy>(&self, p: &Plan, x: &[T], zeros: &[T], tile: At, scratch: &mut Scratch<T>) {
        let At { r0, rows, m, b0, z0 } = tile;
        let (n, iz) = (p.spatial.len(), p.iz_per_group);
        if self.along_one_line(p, x, zeros, tile, scratch) {
            return;
        }
        scratch.rows.clear();
        scratch.rows.resize(self.windows * rows, Read(zeros.as_ptr()));
        scratch.out_index.resize(n, 0);
        scratch.partial.resize(n + 1, 0);
        scratch.window.resize(n, 0);
        for r in 0..rows.min(m.saturating_sub(r0)) {
            let mut rest = r0 + r;
            for d in (0..n).rev() {
                scratch.out_index[d] = rest % p.spatial[d].out_size;
                rest /= p.spatial[d].out_size;
            }
            // An odometer over the window, row-major: partial[d] is the
            // offset of the dimensions before d (OFF once one is off the
            // input), recomputed only from the dimension that moved.
            scratch.partial[0] = (b0 + rest) * self.x_batch + z0;
            scratch.window.fill(0);
            let mut from = 0;
            for q in 0..self.windows {
                for d in from..n {
                    let s = &p.spatial[d];
                    let here = self.offsets[d][scratch.out_index[d] * s.window + scratch.window[d]];
                    let before = scratch.partial[d];
                    scratch.partial[d + 1] = if before == OFF || here == OFF { OFF } else { before + here };
                }
                let at = scratch.partial[n];
                if at != OFF {
                    scratch.rows[q * rows + r] = Read(x[at..].as_ptr());
                }
                from = n;
                while from > 0 {
                    from -= 1;
                    scratch.window[from] += 1;
                    if scratch.window[from] < p.spatial[from].window {
                        break;
                    }
                    scratch.window[from] = 0;
                }
            }
        }
        // Keep the window positions some row lies on.
        scratch.segments.clear();
        let mut kept = 0;
        for q in 0..self.windows {
            let block = q * rows..(q + 1) * rows;
            if scratch.rows[block.clone()].iter().any(|p| !std::ptr::eq(p.0, zeros.as_ptr())) {
                scratch.rows.copy_within(block, kept * rows);
                scratch.segments.push((q * iz, iz));
                kept += 1;
            }
        }
        scratch.rows.truncate(kept * rows);
    }

    /// [`Geometry::pointers`] for a tile whose rows lie along one line of
    /// the output (all indices equal but the last spatial one: the usual
    /// tile), false (nothing done) for any other. The window positions of
    /// the dimensions before the last are then off the input for all rows
    /// or for none, and only the last dimension's offsets differ by row:
    /// a few additions per pointer instead of a walk over every dimension.
    fn along_one_line<T: Copy>(&self, p: &Plan, x: &[T], zeros: &[T], tile: At, scratch: &mut Scratch<T>) -> bool {
        let At { r0, rows, m, b0, z0 } = tile;
        let Some((line, outer)) = p.spatial.split_last() else { return false };
        let (n, iz) = (outer.len(), p.iz_per_group);
        let real = rows.min(m.saturating_sub(r0));
        let first = r0 % line.out_size;
        if real == 0 || first + real > line.out_size {
            return false;
        }
        let mut rest = r0 / line.out_size;
        scratch.out_index.resize(n, 0);
        for d in (0..n).rev() {
            scratch.out_index[d] = rest % outer[d].out_size;
            rest /= outer[d].out_size;
        }
        scratch.segments.clear();
        scratch.rows.clear();
        scratch.window.clear();
        scratch.window.resize(n, 0);
        let base = (b0 + rest) * self.x_batch + z0;
        let lines = &self.offsets[n];
        for outer_q in 0..self.windows / line.window.max(1) {
            let mut at = base;
            for (d, s) in outer.iter().enumerate() {
                let here = self.offsets[d][scratch.out_index[d] * s.window + scratch.window[d]];
                at = if at == OFF || here == OFF { OFF } else { at + here };
            }
            for d in (0..n).rev() {
                scratch.window[d] += 1;
                if scratch.window[d] < outer[d].window {
                    break;
                }
                scratch.window[d] = 0;
            }
            if at == OFF {
                continue;
            }
            // Where the last run ends in row 0, when it was a regular one.
            let mut run_end = None;
            for k in 0..line.window {
                let start = scratch.rows.len();
                if let Some((step, runs)) = &self.line_runs {
                    let (lo, hi) = runs[k];
                    if lo <= first && first + real <= hi {
                        // Every row lies on the input, evenly spaced: the
                        // usual case, without a lookup per row.
                        let b = at + lines[first * line.window + k];
                        if let Some(last) = scratch.segments.last_mut().filter(|_| run_end == Some(b)) {
                            // This position's features follow the last
                            // run's in every row: one longer run.
                            last.1 += iz;
                        } else {
                            scratch.rows.extend((0..real).map(|r| Read(x.as_ptr().wrapping_add(b + r * step))));
                            scratch.rows.resize(start + rows, Read(zeros.as_ptr()));
                            scratch.segments.push(((outer_q * line.window + k) * iz, iz));
                        }
                        run_end = Some(b + iz);
                        continue;
                    }
                }
                run_end = None;
                let mut any = false;
                for o in first..first + real {
                    let here = lines[o * line.window + k];
                    any |= here != OFF;
                    scratch.rows.push(Read(if here == OFF { zeros.as_ptr() } else { x[at + here..].as_ptr() }));
                }
                if any {
                    scratch.rows.resize(start + rows, Read(zeros.as_ptr()));
                    scratch.segments.push(((outer_q * line.window + k) * iz, iz));
                } else {
                    scratch.rows.truncate(start);
                }
            }
        }
        true
    }
}

/// [`Geometry::line_runs`] from one dimension's offsets
/// (`offsets[o·window + k]`), or None when they are not regular.
fn line_runs(out_size: usize, window: usize, offsets: &[usize]) -> Option<(usize, Vec<(usize, usize)>)> {
    let mut step = None;
    let mut runs = Vec::with_capacity(window);
    for k in 0..window {
        let at = |o: usize| offsets[o * window + k];
        let lo = (0..out_size).find(|&o| at(o) != OFF).unwrap_or(out_size);
        let hi = (lo..out_size).find(|&o| at(o) == OFF).unwrap_or(out_size);
        if (hi..out_size).any(|o| at(o) != OFF) {
            return None;
        }
        if hi > lo + 1 {
            let s = at(lo + 1).checked_sub(at(lo))?;
            if *step.get_or_insert(s) != s || (lo..hi).any(|o| at(o) != at(lo) + (o - lo) * s) {
                return None;
            }
        }
        runs.push((lo, hi));
    }
    // A run of one position needs no step; with none longer, any will do.
    Some((step.unwrap_or(0), runs))
}

#[cfg(target_arch = "x86_64")]
macro_rules! direct_x86 {
    ($t:ty, $v512:ty, $v256:ty) => {
        impl Direct for $t {
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            unsafe fn tile(isa: Isa, nv: usize, t: &super::x86::Tile<Self>) {
                use super::x86::{tile_avx2, tile_avx512};
                const R512: usize = tile_rows(true, 1);
                const R1: usize = tile_rows(false, 1);
                const R2: usize = tile_rows(false, 2);
                match (isa, nv) {
                    (Isa::Avx512 | Isa::Avx512Vbmi, 1) => tile_avx512::<$v512, 1, R512>(t),
                    (Isa::Avx512 | Isa::Avx512Vbmi, _) => tile_avx512::<$v512, 2, R512>(t),
                    (_, 1) => tile_avx2::<$v256, 1, R1>(t),
                    _ => tile_avx2::<$v256, 2, R2>(t),
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
direct_x86!(f32, crate::kernels::gemm::skinny::x86::F32x16, crate::kernels::gemm::skinny::x86::F32x8);
#[cfg(target_arch = "x86_64")]
direct_x86!(f64, crate::kernels::gemm::skinny::x86::F64x8, crate::kernels::gemm::skinny::x86::F64x4);

#[cfg(not(target_arch = "x86_64"))]
impl Direct for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
#[cfg(not(target_arch = "x86_64"))]
impl Direct for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}
