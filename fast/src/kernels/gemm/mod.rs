//! The fast engine's matrix multiply `C = A·B`: a blocked, packed GEMM in
//! the BLIS style. The operands are read through strides (any layout), cut
//! into cache blocks (NC columns of B, KC of the contracted dimension, MC
//! rows of A), each block is packed into micro-panels, and a register-tiled
//! micro-kernel multiplies one MR-row panel of A by one NR-column panel of
//! B. f32 and f64 go to the `gemm` crate instead (its packed kernels,
//! dispatched at run time over AVX-512, AVX2+FMA and scalar code, are
//! faster than ours were); every other element type uses the portable
//! kernel.
//!
//! Summation order (our GEMM): every result element is accumulated over
//! the contracted index in ascending order, one product at a time (a later
//! KC block starts from the value the earlier ones left in C), exactly as
//! a sequential loop. The `gemm` crate's f32/f64 order is its own, within
//! the tolerance model's bound for sums.

mod portable;
pub mod skinny;

use std::mem::MaybeUninit;

use crate::internal;
use num_complex::Complex;
use rayon::prelude::*;
use xlaref_reference::watch::Clock;
use xlaref_reference::RunError;

/// `kernel(kc, a, b, c, ldc, m, n, first)`: `C[0..m][0..n] (+)= Σ_k
/// a[k·MR + i] · b[k·NR + j]` (C overwritten when `first`).
///
/// # Safety
/// `a` holds `kc·MR` elements, `b` holds `kc·NR`, `m <= MR`, `n <= NR`, and
/// `c + i·ldc + j` is valid for reads and writes for `i < m`, `j < n`.
pub type KernelFn<T> = unsafe fn(usize, *const T, *const T, *mut T, usize, usize, usize, bool);

/// A micro-kernel and the cache blocking that suits it.
#[derive(Clone, Copy)]
pub struct Kernel<T> {
    pub mr: usize,
    pub nr: usize,
    pub mc: usize,
    pub kc: usize,
    pub nc: usize,
    pub run: KernelFn<T>,
}

/// An element type the GEMM multiplies.
pub trait Elem: Copy + Send + Sync + 'static {
    const ZERO: Self;
    /// `acc + a·b` (the portable kernel's step; wrapping for integers).
    fn mul_add(acc: Self, a: Self, b: Self) -> Self;
    /// Whether a zero times this is zero (false for infinities and NaN):
    /// convolutions must then skip padding and holes instead of
    /// multiplying them as zeros.
    fn zero_product_is_zero(self) -> bool {
        true
    }
    /// `self · s`, one rounding (f32 and f64: `s` a power of two of the
    /// type; the others are never scaled and stay as they are).
    fn times(self, s: f64) -> Self {
        let _ = s;
        self
    }
    /// A value of the type (f32 and f64: `x` a value of the type, exactly;
    /// the others are never masked and take zero).
    fn of_f64(x: f64) -> Self {
        let _ = x;
        Self::ZERO
    }
    /// Whether [`Elem::external_gemm`] multiplies this type.
    fn has_external() -> bool {
        false
    }
    /// `C = A·B` by an external packed GEMM when there is one for the type;
    /// false when the caller must use [`Kernel`]s. Called with operands
    /// already checked to fit their matrices.
    #[allow(clippy::too_many_arguments)]
    fn external_gemm(
        _m: usize,
        _n: usize,
        _k: usize,
        _a: &MatRef<Self>,
        _b: &MatRef<Self>,
        _c: &mut [MaybeUninit<Self>],
        _ldc: usize,
        _parallel: bool,
    ) -> bool {
        false
    }
    /// `C = A·B` by [`skinny::gemm`] when the type has it; false when the
    /// caller must multiply another way. Called only for skinny shapes
    /// ([`skinny::is_skinny`]), nothing empty, operands checked.
    #[allow(clippy::too_many_arguments)]
    fn skinny_gemm(
        _m: usize,
        _n: usize,
        _k: usize,
        _a: &MatRef<Self>,
        _b: &MatRef<Self>,
        _c: &mut [MaybeUninit<Self>],
        _ldc: usize,
        _parallel: bool,
        _clock: Clock,
    ) -> bool {
        false
    }
    /// A convolution's sums by [`crate::kernels::conv::direct`] when the
    /// type has it; false (nothing written) when the caller must take the
    /// im2col path.
    fn direct_conv(_job: &mut crate::kernels::conv::Job<'_, Self>) -> bool {
        false
    }
}

/// [`skinny::gemm`] for f32 and f64.
macro_rules! skinny_gemm {
    () => {
        #[allow(clippy::too_many_arguments)]
        fn skinny_gemm(
            m: usize,
            n: usize,
            k: usize,
            a: &MatRef<Self>,
            b: &MatRef<Self>,
            c: &mut [MaybeUninit<Self>],
            ldc: usize,
            parallel: bool,
            clock: Clock,
        ) -> bool {
            skinny::gemm::<Self>(m, n, k, a, b, c, ldc, parallel, clock)
        }
        fn direct_conv(job: &mut crate::kernels::conv::Job<'_, Self>) -> bool {
            crate::kernels::conv::direct::run(job)
        }
    };
}

/// The `gemm` crate's `dst = lhs·rhs` (no read of dst) for f32 and f64.
macro_rules! crate_gemm {
    () => {
        fn has_external() -> bool {
            true
        }
        #[allow(clippy::too_many_arguments)]
        fn external_gemm(
            m: usize,
            n: usize,
            k: usize,
            a: &MatRef<Self>,
            b: &MatRef<Self>,
            c: &mut [MaybeUninit<Self>],
            ldc: usize,
            parallel: bool,
        ) -> bool {
            let (Ok(ars), Ok(acs), Ok(brs), Ok(bcs), Ok(ldc_i)) = (
                isize::try_from(a.row_stride),
                isize::try_from(a.col_stride),
                isize::try_from(b.row_stride),
                isize::try_from(b.col_stride),
                isize::try_from(ldc),
            ) else {
                return false;
            };
            let threads = if parallel { gemm::Parallelism::Rayon(0) } else { gemm::Parallelism::None };
            // SAFETY: the caller checked that A (m×k) and B (k×n) lie inside
            // their slices from their offsets through their strides, and that
            // C's m×n block with row stride ldc lies inside `c`; C is
            // written only (read_dst = false), A and B only read.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    c.as_mut_ptr().cast::<Self>(),
                    1,
                    ldc_i,
                    false,
                    a.data.as_ptr().add(a.offset),
                    acs,
                    ars,
                    b.data.as_ptr().add(b.offset),
                    bcs,
                    brs,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    threads,
                );
            }
            true
        }
    };
}

impl Elem for f32 {
    const ZERO: Self = 0.0;
    fn zero_product_is_zero(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        acc + a * b
    }
    #[inline(always)]
    fn times(self, s: f64) -> Self {
        self * s as f32
    }
    fn of_f64(x: f64) -> Self {
        x as f32
    }
    crate_gemm!();
    skinny_gemm!();
}

impl Elem for f64 {
    const ZERO: Self = 0.0;
    fn zero_product_is_zero(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        acc + a * b
    }
    #[inline(always)]
    fn times(self, s: f64) -> Self {
        self * s
    }
    fn of_f64(x: f64) -> Self {
        x
    }
    crate_gemm!();
    skinny_gemm!();
}

/// Two's-complement arithmetic modulo 2^64: its low bits are those of
/// wrapping arithmetic in every narrower integer type.
impl Elem for i64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}

/// Complex products by the textbook formula `(ac - bd) + (ad + bc)i`, as
/// Mul, added part by part.
impl Elem for Complex<f64> {
    const ZERO: Self = Complex { re: 0.0, im: 0.0 };
    fn zero_product_is_zero(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    #[inline(always)]
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        Complex::new(acc.re + (a.re * b.re - a.im * b.im), acc.im + (a.re * b.im + a.im * b.re))
    }
}

/// A matrix read through strides: element `(r, c)` is
/// `data[offset + r·row_stride + c·col_stride]`.
#[derive(Clone, Copy)]
pub struct MatRef<'a, T> {
    pub data: &'a [T],
    pub offset: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<T> MatRef<'_, T> {
    /// Whether every element of a `rows × cols` matrix is inside `data`.
    fn fits(&self, rows: usize, cols: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        let last = (rows - 1)
            .checked_mul(self.row_stride)
            .and_then(|r| (cols - 1).checked_mul(self.col_stride).and_then(|c| r.checked_add(c)))
            .and_then(|x| x.checked_add(self.offset));
        last.is_some_and(|l| l < self.data.len())
    }
}

/// `c` as a slice [`gemm`] may write: it writes only values of `T`, so
/// the slice stays initialized.
pub fn as_uninit<T>(c: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and the callers
    // (`gemm`) write only initialized values through the view.
    unsafe { &mut *(c as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// A raw pointer to C shared by the tasks that write disjoint blocks of it.
#[derive(Clone, Copy)]
struct CPtr<T>(*mut T);
// SAFETY: the tasks given a CPtr write disjoint row blocks of C (see gemm).
unsafe impl<T> Send for CPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for CPtr<T> {}

/// Multiply-adds per slab of rows of C, between two looks at the clock
/// (about 10 ms at this engine's speed): large enough that B, repacked
/// for every slab, costs under 1% more.
const SLAB_MULTIPLY_ADDS: usize = 1 << 30;

/// `C = A·B` for an `m × k` A and a `k × n` B; C is row-major with row
/// stride `ldc`, only its `m × n` top-left block is written, never read:
/// C may be uninitialized (a Dot's result needs no zeroing first, which
/// cost a pass over attention's 8 MiB of scores). With
/// `parallel`, row blocks of C are spread over rayon's threads.
///
/// A large product is computed in slabs of rows, and once `clock` has
/// passed the rest is left unwritten: the engine reports the time limit
/// and drops C (`xlaref_reference::watch`).
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
) -> Result<(), RunError> {
    multiply(m, n, k, a, b, c, ldc, parallel, clock, true)
}

/// Whether [`gemm`] lays out a B of this layout again before the `gemm`
/// crate multiplies (when the skinny kernel does not take the product):
/// stored by columns, contiguously.
pub fn lays_b_out<T: Elem>(k: usize, n: usize, b: &MatRef<T>) -> bool {
    T::has_external() && b.row_stride == 1 && b.col_stride == k && k > 1 && n > 1
}

/// [`gemm`] with the operands as they are laid out (no copy of B by
/// rows): for a Dot written transposed, whose values must be the Dot's
/// own (`kernels::dot`).
#[allow(clippy::too_many_arguments)]
pub fn gemm_as_laid_out<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
) -> Result<(), RunError> {
    multiply(m, n, k, a, b, c, ldc, parallel, clock, false)
}

/// [`gemm`], laying a B stored by columns out again first only when
/// `lay_b_out`.
#[allow(clippy::too_many_arguments)]
fn multiply<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
    lay_b_out: bool,
) -> Result<(), RunError> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    let c_needed = (m - 1).checked_mul(ldc).and_then(|x| x.checked_add(n));
    if ldc < n || c_needed.is_none_or(|need| need > c.len()) || !a.fits(m, k) || !b.fits(k, n) {
        return Err(internal("operands do not fit their matrices"));
    }
    if k == 0 {
        for row in c.chunks_mut(ldc).take(m) {
            for x in &mut row[..n] {
                x.write(T::ZERO);
            }
        }
        return Ok(());
    }
    if skinny::is_skinny(m, n, k) && T::skinny_gemm(m, n, k, &a, &b, c, ldc, parallel, clock) {
        return Ok(());
    }
    if lay_b_out && lays_b_out::<T>(k, n, &b) {
        return with_b_laid_out(m, n, k, a, b, c, ldc, parallel, clock);
    }
    in_slabs(slab_rows(n, k), m, n, k, a, b, c, ldc, parallel, clock)
}

/// Rows of C per slab, for a look at the clock every
/// [`SLAB_MULTIPLY_ADDS`].
fn slab_rows(n: usize, k: usize) -> usize {
    (SLAB_MULTIPLY_ADDS / n.saturating_mul(k).max(1)).max(64)
}

/// [`gemm`] of a B stored column by column (`Bᵀ` row-major: JAX's `x·Wᵀ`,
/// a DotGeneral contracting the rhs's last dimension, as backward passes
/// make). The `gemm` crate multiplies that layout at a third to a fifth of
/// its speed on others (f32 32×1024·1024×1024: 2.5 ms against 0.50 for
/// XLA CPU; 128×512·512×512: 0.83 against 0.31 for a row-major B), so one
/// operand is laid out again first, whichever copy is smaller:
/// - B copied row by row (`k·n` values), or
/// - for a row-major A and few rows, `Cᵀ = Bᵀ·Aᵀ` computed into a
///   scratch `n × m` from a copy of `Aᵀ` and transposed into C (`m·k +
///   2·m·n` values): 32×1024·1024×1024 in 0.33 ms.
///
/// The crate's sums are in its own order either way (the module comment).
#[allow(clippy::too_many_arguments)]
fn with_b_laid_out<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
) -> Result<(), RunError> {
    use crate::kernels::transpose::swap_matrices_into;
    // Checked by `gemm`: B's k×n and A's m×k lie inside their data.
    let b_values = &b.data[b.offset..b.offset + n * k];
    let a_row_major = a.col_stride == 1 && a.row_stride == k;
    if a_row_major && ldc == n && m * k + 2 * m * n < n * k {
        let mut at = vec![T::ZERO; k * m];
        swap_matrices_into(&a.data[a.offset..a.offset + m * k], &mut at, m, k);
        let mut ct = vec![T::ZERO; n * m];
        let bt = MatRef { data: b.data, offset: b.offset, row_stride: k, col_stride: 1 };
        let at = MatRef { data: &at, offset: 0, row_stride: m, col_stride: 1 };
        in_slabs(slab_rows(m, k), n, m, k, bt, at, as_uninit(&mut ct), m, parallel, clock)?;
        // SAFETY: C holds m rows of ldc = n (checked by `gemm`); every
        // element is written below, from `ct`.
        let c = unsafe { std::slice::from_raw_parts_mut(c.as_mut_ptr().cast::<T>(), m * n) };
        swap_matrices_into(&ct, c, n, m);
        return Ok(());
    }
    let mut rows = vec![T::ZERO; k * n];
    swap_matrices_into(b_values, &mut rows, n, k);
    let b = MatRef { data: &rows, offset: 0, row_stride: n, col_stride: 1 };
    in_slabs(slab_rows(n, k), m, n, k, a, b, c, ldc, parallel, clock)
}

/// [`gemm`] `slab` rows of C at a time (checked operands).
#[allow(clippy::too_many_arguments)]
fn in_slabs<T: Elem>(
    slab: usize,
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
    clock: Clock,
) -> Result<(), RunError> {
    for r0 in (0..m).step_by(slab.max(1)) {
        if clock.passed() {
            break;
        }
        let rows = slab.min(m - r0);
        let a_rows = MatRef { offset: a.offset + r0 * a.row_stride, ..a };
        let c_rows = &mut c[r0 * ldc..];
        if !T::external_gemm(rows, n, k, &a_rows, &b, c_rows, ldc, parallel) {
            own_gemm(rows, n, k, a_rows, b, c_rows, ldc, parallel)?;
        }
    }
    Ok(())
}

/// Our BLIS-style GEMM (see the module comment).
#[allow(clippy::too_many_arguments)]
fn own_gemm<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: &mut [MaybeUninit<T>],
    ldc: usize,
    parallel: bool,
) -> Result<(), RunError> {
    let kern = portable::kernel::<T>();
    let threads = if parallel { rayon::current_num_threads().max(1) } else { 1 };
    // Enough row blocks for every thread (a few each, for balance).
    let per_thread = m.div_ceil(2 * threads).div_ceil(kern.mr) * kern.mr;
    let mc = kern.mc.min(per_thread.max(kern.mr));
    let kc_max = kern.kc.min(k);
    let nc_max = kern.nc.min(n.div_ceil(kern.nr) * kern.nr);
    let mut bpack = vec![T::ZERO; kc_max * nc_max];
    let cptr = CPtr(c.as_mut_ptr().cast::<T>());
    for jc in (0..n).step_by(kern.nc) {
        let nc = kern.nc.min(n - jc);
        for pc in (0..k).step_by(kern.kc) {
            let kc = kern.kc.min(k - pc);
            pack_b(&b, pc, jc, kc, nc, kern.nr, &mut bpack);
            let bpack = &bpack[..];
            let block = |ic: usize, apack: &mut Vec<T>| {
                let mcb = mc.min(m - ic);
                pack_a(&a, ic, pc, mcb, kc, kern.mr, apack);
                for jr in (0..nc).step_by(kern.nr) {
                    let nr = kern.nr.min(nc - jr);
                    let bp = &bpack[(jr / kern.nr) * kc * kern.nr..];
                    for ir in (0..mcb).step_by(kern.mr) {
                        let mr = kern.mr.min(mcb - ir);
                        let ap = &apack[(ir / kern.mr) * kc * kern.mr..];
                        let cp = cptr;
                        // SAFETY: ap and bp hold kc·MR and kc·NR packed
                        // elements; rows ic+ir.. (< m) and columns jc+jr..
                        // (< n) of C are inside `c` (checked above), and
                        // this task alone writes rows ic..ic+mcb.
                        unsafe {
                            (kern.run)(kc, ap.as_ptr(), bp.as_ptr(), cp.0.add((ic + ir) * ldc + jc + jr), ldc, mr, nr, pc == 0);
                        }
                    }
                }
            };
            if threads > 1 && m > mc {
                (0..m.div_ceil(mc)).into_par_iter().for_each_init(Vec::new, |apack, i| block(i * mc, apack));
            } else {
                let mut apack = Vec::new();
                for ic in (0..m).step_by(mc) {
                    block(ic, &mut apack);
                }
            }
        }
    }
    Ok(())
}

/// Packs rows `pc..pc+kc`, columns `jc..jc+nc` of B into NR-column
/// micro-panels: panel `p`, row `r` at `out[(p·kc + r)·NR ..]`, zero-padded.
fn pack_b<T: Elem>(b: &MatRef<T>, pc: usize, jc: usize, kc: usize, nc: usize, nr: usize, out: &mut [T]) {
    let panels = nc.div_ceil(nr);
    let out = &mut out[..panels * kc * nr];
    let fill = |p: usize, dst: &mut [T]| {
        let j0 = jc + p * nr;
        let w = nr.min(jc + nc - j0);
        for (r, row) in dst.chunks_exact_mut(nr).enumerate() {
            let start = b.offset + (pc + r) * b.row_stride + j0 * b.col_stride;
            if b.col_stride == 1 {
                row[..w].copy_from_slice(&b.data[start..start + w]);
            } else {
                for (j, x) in row[..w].iter_mut().enumerate() {
                    *x = b.data[start + j * b.col_stride];
                }
            }
            row[w..].fill(T::ZERO);
        }
    };
    if kc * nc >= 1 << 16 {
        out.par_chunks_mut(kc * nr).enumerate().for_each(|(p, dst)| fill(p, dst));
    } else {
        out.chunks_mut(kc * nr).enumerate().for_each(|(p, dst)| fill(p, dst));
    }
}

/// Packs rows `ic..ic+mc`, columns `pc..pc+kc` of A into MR-row
/// micro-panels: panel `p`, column `k` at `out[(p·kc + k)·MR ..]`.
fn pack_a<T: Elem>(a: &MatRef<T>, ic: usize, pc: usize, mc: usize, kc: usize, mr: usize, out: &mut Vec<T>) {
    let panels = mc.div_ceil(mr);
    out.clear();
    out.resize(panels * kc * mr, T::ZERO);
    for (p, dst) in out.chunks_mut(kc * mr).enumerate() {
        let h = mr.min(mc - p * mr);
        for i in 0..h {
            let start = a.offset + (ic + p * mr + i) * a.row_stride + pc * a.col_stride;
            if a.col_stride == 1 {
                for (kk, &x) in a.data[start..start + kc].iter().enumerate() {
                    dst[kk * mr + i] = x;
                }
            } else {
                for kk in 0..kc {
                    dst[kk * mr + i] = a.data[start + kk * a.col_stride];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
