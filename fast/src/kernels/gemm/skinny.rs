//! Skinny f32 and f64 products: one of `m`, `n`, `k` at most [`SMALL`]
//! (a 10-class classifier's logits `[256,1024]·[1024,10]`, its gradients
//! `[256,10]·[10,1024]` and `[10,256]·[256,1024]`). The `gemm` crate's
//! packed kernels run such shapes at a fifth of their speed on square ones:
//! the packing and the edge tiles are most of the work.
//!
//! Here C is cut into tiles of [`ROWS`] rows by `W` columns (one or two
//! vectors). A tile keeps its `ROWS × W` sums in registers and walks the
//! contracted index once: each step loads one row of B's `W` columns and
//! multiplies it by each of the tile's A values, read where they lie. B is
//! read in place when its rows are contiguous, else from a copy of its
//! columns in panels of `W` (B is then the small operand, or `k` is
//! small). When only `m` is small and B's rows are not contiguous, the
//! product is taken as `Cᵀ = Bᵀ·Aᵀ`, where the small side is the columns.
//!
//! The kernels are AVX-512 or AVX2 vectors, written with intrinsics
//! (`x86.rs`); on other CPUs (or `XLAREF_FAST_ISA=portable`) the `gemm`
//! crate takes these shapes too.
//!
//! Summation order: every element of C is `Σ_k a·b` accumulated over `k`
//! in ascending order from zero, one fused multiply-add at a time, within
//! the tolerance model's bound for sums like the `gemm` crate's own order.

use std::mem::MaybeUninit;

use super::MatRef;
use crate::isa::Isa;
use crate::par;
use xlaref_reference::watch::Clock;

/// A dimension at most this long makes a product skinny.
pub const SMALL: usize = 16;
/// Rows of C per tile: with one vector per row, eight independent sums
/// cover the multiply-add's latency on two pipes.
const ROWS: usize = 8;
/// Bytes of B's panels a block of rows runs against in turn (half of L1).
const L1_PANEL_BYTES: usize = 16 << 10;
/// Multiply-adds per task (a look at the clock between tasks).
const TASK_MULTIPLY_ADDS: usize = 1 << 22;

/// Whether [`gemm`] takes an `m × k` by `k × n` product.
pub fn is_skinny(m: usize, n: usize, k: usize) -> bool {
    m.min(n).min(k) <= SMALL
}

/// A matrix as a base pointer and two strides, for the tasks.
#[derive(Clone, Copy)]
pub struct Strided<P> {
    pub at: P,
    pub rs: usize,
    pub cs: usize,
}

#[derive(Clone, Copy)]
pub struct Read<T>(pub *const T);
#[derive(Clone, Copy)]
pub struct Write<T>(pub *mut T);

impl<T> Write<T> {
    /// The pointer (a closure that calls this captures the `Write`, which
    /// is `Sync`, not its `*mut` field, which is not).
    pub fn ptr(self) -> *mut T {
        self.0
    }
}
// SAFETY: the tasks only read through `Read` and write disjoint tiles of C
// through `Write` (see `gemm`).
unsafe impl<T> Send for Read<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Read<T> {}
// SAFETY: as above.
unsafe impl<T> Send for Write<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Write<T> {}

/// A float with skinny kernels: the tiles of rows `r0..r0+rows` against
/// one panel of `nv` vectors' width (`nv` 1 or 2), for the ISA level.
pub trait Skinny: super::Elem {
    /// Lanes of a vector at `isa` (0: no kernel at this level).
    fn lanes(isa: Isa) -> usize;
    /// # Safety
    /// `isa` is at most what the CPU has and `lanes(isa) > 0`; as
    /// [`x86::tiles`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn tiles(
        isa: Isa,
        nv: usize,
        k: usize,
        a: Strided<Read<Self>>,
        r0: usize,
        rows: usize,
        b: *const Self,
        b_rs: usize,
        c: Strided<Write<Self>>,
        j0: usize,
        cols: usize,
    );
}

/// `C = A·B` (C row-major with row stride `ldc`, written only) for a
/// skinny product ([`is_skinny`]); false when this CPU has no kernel for
/// it. The caller checked that A, B and C's block fit their data and that
/// `m`, `n`, `k` are not zero.
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Skinny>(
    m: usize,
    n: usize,
    k: usize,
    a: &MatRef<T>,
    b: &MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
) -> bool {
    let isa = crate::isa::isa();
    let lanes = T::lanes(isa);
    if lanes == 0 {
        return false;
    }
    if m <= SMALL && n > SMALL && k > SMALL && b.col_stride == 1 {
        // Few rows of C against a wide B read in place: B's rows are read
        // a panel at a time, far apart (a 4096-wide B: 16 KiB), and the
        // `gemm` crate's packing is faster (16×4096×1024: 0.75 against
        // 1.4 ms).
        return false;
    }
    if a.col_stride != 1 && k > 512 {
        // A's values of one contracted index lie far apart, and a tile
        // reads each of its rows a cache line a step: over a long `k` the
        // lines are gone before the next tile reads the rest of them
        // (4096×1×4096 with A column-major: 9.9 against the crate's 3.1 ms).
        return false;
    }
    let base = |x: &MatRef<T>| Read(x.data[x.offset..].as_ptr());
    let mut a = Strided { at: base(a), rs: a.row_stride, cs: a.col_stride };
    let mut b = Strided { at: base(b), rs: b.row_stride, cs: b.col_stride };
    let mut cm = Strided { at: Write(c.as_mut_ptr().cast::<T>()), rs: ldc, cs: 1 };
    let (mut m, mut n) = (m, n);
    if m <= SMALL && n > SMALL && b.cs != 1 {
        // Cᵀ = Bᵀ·Aᵀ: the small side becomes the columns, whose panels
        // are copied.
        (m, n) = (n, m);
        (a, b) = (Strided { at: b.at, rs: b.cs, cs: b.rs }, Strided { at: a.at, rs: a.cs, cs: a.rs });
        cm = Strided { at: cm.at, rs: cm.cs, cs: cm.rs };
    }
    let nv = if n <= lanes { 1 } else { 2 };
    let w = nv * lanes;
    let copied = if b.cs == 1 { usize::from(!n.is_multiple_of(w)) } else { n.div_ceil(w) };
    if copied.saturating_mul(k).saturating_mul(w) > k.saturating_mul(n).saturating_mul(4).max(1 << 20) {
        // The copy of B's columns, zero-padded to whole vectors, would be
        // many times B (one long column: sixteen times): never more than
        // four times B, or a mebi-element.
        return false;
    }
    run(isa, w, nv, m, n, k, a, b, cm, parallel, clock);
    true
}

/// B's columns in panels of `w`, each as `k` rows of `w` values: in place
/// (row stride `b.rs`) when B's rows are contiguous and the panel whole,
/// else copied, zero-padded, into `pack` (row stride `w`).
struct Panels<T> {
    pack: Vec<T>,
    in_place: bool,
    w: usize,
    count: usize,
}

impl<T: Skinny> Panels<T> {
    fn new(w: usize, n: usize, k: usize, b: Strided<Read<T>>) -> Self {
        let count = n.div_ceil(w);
        let in_place = b.cs == 1;
        // Only the last, partial panel is copied when B's rows are
        // contiguous.
        let copied: Vec<usize> =
            if in_place { (!n.is_multiple_of(w)).then_some(count - 1).into_iter().collect() } else { (0..count).collect() };
        let mut pack = vec![T::ZERO; copied.len() * k * w];
        for (slot, &p) in copied.iter().enumerate() {
            let width = w.min(n - p * w);
            let panel = &mut pack[slot * k * w..(slot + 1) * k * w];
            // SAFETY (both loops): row kk < k and column p·w + j < n of B,
            // which the caller checked lies inside its data.
            if b.rs == 1 {
                // B's columns are contiguous: read them in order.
                for j in 0..width {
                    let column = unsafe { b.at.0.add((p * w + j) * b.cs) };
                    for kk in 0..k {
                        panel[kk * w + j] = unsafe { *column.add(kk) };
                    }
                }
            } else {
                for (kk, row) in panel.chunks_exact_mut(w).enumerate() {
                    for (j, x) in row[..width].iter_mut().enumerate() {
                        *x = unsafe { *b.at.0.add(kk * b.rs + (p * w + j) * b.cs) };
                    }
                }
            }
        }
        Panels { pack, in_place, w, count }
    }

    /// Panel `p`'s first row and row stride.
    fn panel(&self, p: usize, k: usize, b: Strided<Read<T>>) -> (*const T, usize) {
        match (self.in_place, p + 1 == self.count && !self.pack.is_empty()) {
            // SAFETY: column p·w is inside B (p < count).
            (true, false) => (unsafe { b.at.0.add(p * self.w * b.cs) }, b.rs),
            (true, true) => (self.pack.as_ptr(), self.w),
            (false, _) => (self.pack[p * k * self.w..].as_ptr(), self.w),
        }
    }
}

/// Every tile of C, spread over the threads in tasks of whole panels of
/// rows or columns.
#[allow(clippy::too_many_arguments)]
fn run<T: Skinny>(
    isa: Isa,
    w: usize,
    nv: usize,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<Read<T>>,
    b: Strided<Read<T>>,
    c: Strided<Write<T>>,
    parallel: bool,
    clock: Clock,
) {
    let bp = Panels::new(w, n, k, b);
    let panels = bp.count;
    let work = m.saturating_mul(n).saturating_mul(k);
    let threads = if parallel && work >= 1 << 18 { rayon::current_num_threads().max(1) } else { 1 };
    // Rows in blocks of ROWS per task, or (few rows) columns in panels.
    let spread = if threads > 1 { 4 * threads } else { 1 };
    let tasks_wanted = spread.max(work / TASK_MULTIPLY_ADDS);
    let row_blocks = m.div_ceil(ROWS);
    let (row_step, col_step) = if row_blocks >= tasks_wanted || row_blocks >= panels {
        (row_blocks.div_ceil(tasks_wanted) * ROWS, panels)
    } else {
        (m, panels.div_ceil(tasks_wanted))
    };
    let row_tasks = m.div_ceil(row_step);
    let count = row_tasks * panels.div_ceil(col_step);
    let task = |t: usize| {
        if clock.passed() {
            return;
        }
        let (r0, p0) = ((t % row_tasks) * row_step, (t / row_tasks) * col_step);
        let end = r0 + row_step.min(m - r0);
        let p_end = panels.min(p0 + col_step);
        // Panels in groups that stay in L1 together; a block of rows
        // against a whole group before the next block. C is then written
        // in row segments of the group's width, not a panel at a time down
        // far-apart rows (2048×2048×16: 1.4 → 0.9 ms), and B is read from
        // L1 (256×1024×10, all 40 KiB of B a block: 0.045 → 0.105 ms).
        let group = (L1_PANEL_BYTES / (k * w * std::mem::size_of::<T>()).max(1)).max(1);
        for g in (p0..p_end).step_by(group) {
            for r in (r0..end).step_by(ROWS) {
                for p in g..p_end.min(g + group) {
                    let (b_at, b_rs) = bp.panel(p, k, b);
                    // SAFETY: the ISA level is the CPU's (capped); rows r..
                    // of A and C, the panel's k rows of w values and
                    // columns p·w.. of C exist (checked by the caller;
                    // panels hold w columns).
                    unsafe { T::tiles(isa, nv, k, a, r, ROWS.min(end - r), b_at, b_rs, c, p * w, w.min(n - p * w)) };
                }
            }
        }
    };
    if threads > 1 && count > 1 {
        par::tasks(count, || (), |_, t| task(t));
    } else {
        (0..count).for_each(task);
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

#[cfg(target_arch = "x86_64")]
macro_rules! skinny_x86 {
    ($t:ty, $v512:ty, $v256:ty) => {
        impl Skinny for $t {
            fn lanes(isa: Isa) -> usize {
                match isa {
                    Isa::Avx512 | Isa::Avx512Vbmi => 64 / std::mem::size_of::<$t>(),
                    Isa::Avx2 => 32 / std::mem::size_of::<$t>(),
                    Isa::Portable => 0,
                }
            }
            unsafe fn tiles(
                isa: Isa,
                nv: usize,
                k: usize,
                a: Strided<Read<Self>>,
                r0: usize,
                rows: usize,
                b: *const Self,
                b_rs: usize,
                c: Strided<Write<Self>>,
                j0: usize,
                cols: usize,
            ) {
                match (isa, nv) {
                    (Isa::Avx512 | Isa::Avx512Vbmi, 1) => x86::tiles_avx512::<$v512, 1>(k, a, r0, rows, b, b_rs, c, j0, cols),
                    (Isa::Avx512 | Isa::Avx512Vbmi, _) => x86::tiles_avx512::<$v512, 2>(k, a, r0, rows, b, b_rs, c, j0, cols),
                    (_, 1) => x86::tiles_avx2::<$v256, 1>(k, a, r0, rows, b, b_rs, c, j0, cols),
                    _ => x86::tiles_avx2::<$v256, 2>(k, a, r0, rows, b, b_rs, c, j0, cols),
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
skinny_x86!(f32, x86::F32x16, x86::F32x8);
#[cfg(target_arch = "x86_64")]
skinny_x86!(f64, x86::F64x8, x86::F64x4);

#[cfg(not(target_arch = "x86_64"))]
macro_rules! skinny_none {
    ($t:ty) => {
        impl Skinny for $t {
            fn lanes(_: Isa) -> usize {
                0
            }
            unsafe fn tiles(
                _: Isa,
                _: usize,
                _: usize,
                _: Strided<Read<Self>>,
                _: usize,
                _: usize,
                _: *const Self,
                _: usize,
                _: Strided<Write<Self>>,
                _: usize,
                _: usize,
            ) {
            }
        }
    };
}
#[cfg(not(target_arch = "x86_64"))]
skinny_none!(f32);
#[cfg(not(target_arch = "x86_64"))]
skinny_none!(f64);
