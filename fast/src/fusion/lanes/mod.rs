//! Register chains: a run of light arithmetic members of an f32 or f64
//! group evaluated a block of positions at a time, each member's value kept
//! in vector registers for the next one: sixteen zmm vectors per block on
//! AVX-512 hosts, eight ymm vectors on AVX2 hosts (the same code, `chain_lanes!`,
//! instantiated for each width; `zmm.rs` and `ymm.rs` hold the few
//! operations that differ).
//!
//! The tile runner otherwise runs a member over the whole tile before the
//! next: each member loads its operands from L1 and stores its result
//! there. On the 2-core Zen 4 host a 512-bit store takes two cycles, so a
//! chain of a dozen adds and multiplies spent most of its time storing
//! values that the next member loaded straight back. Here a member's value
//! is stored only when a later member reads it other than as its
//! immediate successor's operand, or when it outlives the chain.
//!
//! The members are Add, Sub, Mul, Div, Neg, Abs, Sqrt and Rsqrt: each is
//! one IEEE operation (Rsqrt two: `1 / sqrt(x)`, as the whole-array kernel
//! computes it), so a lane computes exactly what the element function of
//! `kernels::elementwise` computes for f32 and f64, NaN payloads aside.
//! Compare (IEEE, not the total order) and Select are members too, on the
//! markers of `choose.rs`: a comparison gives bits one or zero, Select
//! picks by the marker's bits, exactly as the tiles do.
//! For f32 also Exp and Tanh: their lanes are the very functions the
//! whole-array kernels apply on the same host (`elem::exp`, `elem::tanh`:
//! sixteen lanes on AVX-512, eight on AVX2), so a GELU or a softmax
//! numerator is one pass per tile and still equals the op-by-op result bit
//! for bit. (f64 has no lane version of either; its Exp and Tanh members
//! run on their own, as before.)

use crate::isa::{isa, Isa};
use xlaref_reference::ir::Direction;

/// A chain member's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkOp {
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Abs,
    Sqrt,
    Rsqrt,
    /// f32 only (see [`ChainFloat::has_link`]).
    Exp,
    /// f32 only.
    Tanh,
    /// IEEE comparison (not the total order) to a marker of the type
    /// (`choose.rs`: bits one for true, zero for false).
    Compare(Direction),
    /// `a`'s marker true: `b`, else `c`.
    Select,
}

/// A chain member's operand at the current positions.
#[derive(Clone, Copy)]
pub(super) enum Arg<T> {
    /// The previous member's value (in the register).
    Prev,
    /// Read from memory: position `p` of the tile is `ptr[p]`.
    At(*const T),
    /// The same value at every position.
    One(T),
    /// One value per row of `row` positions: position `p` reads
    /// `ptr[p / row]`. Rows are whole vectors (`row` a multiple of
    /// [`ROW_LANES`]), so each vector reads one value.
    Rows(*const T, usize),
}

/// What a row of [`Arg::Rows`] must be a multiple of: the most lanes a
/// vector of any chain type has (f32 on zmm).
pub(super) const ROW_LANES: usize = 16;

/// One member: `op(a, b)` (`b` unused by the unary ones; `c` only by
/// Select), stored to `store[p]` when `store` is not null. The operands
/// are set through [`Link::new`] and [`Link::set`], which keep `code`, the
/// block loop's dispatch (`code.rs`), in step with them.
#[derive(Clone, Copy)]
pub(super) struct Link<T> {
    pub op: LinkOp,
    code: Code,
    a: Arg<T>,
    b: Arg<T>,
    c: Arg<T>,
    pub store: *mut T,
    /// The store goes past the caches (streaming stores, where a whole
    /// block lands on 64-byte lines): the program's large result, which no
    /// op reads next, so its lines need not be read in first. The caller
    /// fences them ([`crate::stream::fence`]) before its task ends (a fence
    /// after every tile cost most of the gain).
    pub stream: bool,
}

/// The element types chains run on.
pub(super) trait ChainFloat: Copy {
    /// Whether chains of this type run here (f32 and f64 on AVX-512 and
    /// AVX2).
    fn chains() -> bool;

    /// Whether `op` can be a link of this type's chains.
    fn has_link(op: LinkOp) -> bool;

    /// Runs `links` over positions `start..start + len` (a tile's row `r`
    /// is `start = r·row`: the links keep the tile's pointers); false when
    /// this CPU has no vector unit for it (the caller runs the members one
    /// by one).
    ///
    /// # Safety
    /// Every `At` pointer is valid for reading positions `start..start +
    /// len` and every `store` for writing them, and a store never overlaps a pointer read
    /// by an earlier member of the chain except at positions that member
    /// has already read (the tile runner's buffer assignment).
    unsafe fn run_chain(links: &[Link<Self>], start: usize, len: usize) -> bool;

    /// Runs `links` over positions `start..start + len`, one row, and returns the sum
    /// of the last link's values (which it does not store), added in the
    /// order and grouping of `kernels::reduce::fold_any_order`, so that a
    /// fused row sum equals the Reduce kernel's bit for bit. None when this
    /// CPU has no vector unit for it, or `len` is not a multiple of the
    /// 64 partial sums of at least two of them (the caller stores the
    /// values and folds them as before).
    ///
    /// # Safety
    /// As [`ChainFloat::run_chain`].
    unsafe fn run_chain_sum(links: &[Link<Self>], start: usize, len: usize) -> Option<Self>;

    /// `a + b`, the Reduce kernel's combiner for Add.
    fn plus(a: Self, b: Self) -> Self;
}

use crate::kernels::reduce::row_lanes::PARTS as PARTIAL_SUMS;

/// Whether [`ChainFloat::run_chain_sum`] takes rows of `len` values:
/// whole chunks of the 64 partial sums, at least two.
pub(super) fn sums_in_registers(len: usize) -> bool {
    len.is_multiple_of(PARTIAL_SUMS) && len >= 2 * PARTIAL_SUMS
}

/// Whether this CPU runs chains (AVX-512 or AVX2).
pub(super) fn available() -> bool {
    cfg!(target_arch = "x86_64") && isa() >= Isa::Avx2
}

mod code;
use code::Code;
#[cfg(target_arch = "x86_64")]
mod ymm;
#[cfg(target_arch = "x86_64")]
mod zmm;

/// A chain module for one element type and vector width: `run` and
/// `run_sum`, compiled for `$features`, over vectors of `$lanes` values
/// and `$unroll` of them per block.
macro_rules! chain_lanes {
    ($t:ty, $module:ident, $features:literal, $helpers:ident, $vec:ty, $mask:ty, $lanes:expr, $unroll:expr, $codes:expr,
     $loadu:ident, $storeu:ident, $maskz_loadu:ident, $mask_storeu:ident, $stream:ident, $set1:ident,
     $add:ident, $sub:ident, $mul:ident, $div:ident, $sqrt:ident, $xor:ident, $andnot:ident,
     $cmp:ident, $maskz_mov:ident, $select:ident, $exp:path, $tanh:path, $row:path) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::code::Code;
            #[allow(unused_imports)]
            use super::$helpers::*;
            use super::{Arg, Direction, Link, LinkOp, PARTIAL_SUMS};
            use std::arch::x86_64::*;
            use $row as row;

            /// Vectors per block: a link's dispatch is paid once for this
            /// many. Each link updates the block's values in place (an
            /// operand from memory is an instruction's memory operand), so
            /// the values and a few temporaries must fit the registers:
            /// sixteen of the 32 zmm, eight of the 16 ymm.
            const UNROLL: usize = $unroll;
            /// Whether the block loop dispatches on the links' codes
            /// (`code.rs`) or on their operations and operands (every link
            /// through the general arms). The codes made the ymm chains
            /// faster (eight vectors a block: LayerNorm + GELU 2048×768
            /// 1.09 -> 0.96 ms under `XLAREF_FAST_ISA=avx2`) and the zmm
            /// ones slower (LayerNorm + GELU 4096×256 0.533 -> 0.558 ms, the
            /// one-row chain 0.50 -> 0.54 ns per element): sixteen vectors
            /// amortize the dispatch, and the larger match cost more than
            /// it saved. Blocks of a quarter (`QUARTER`) dispatch on the
            /// codes at either width: they amortize it over four vectors at
            /// most (rows of 64 f32, one block each, LayerNorm + GELU over
            /// f32[16384,64] 0.855 -> 0.84 ms, within the noise).
            const CODES: bool = $codes;
            type Regs<const N: usize> = [$vec; N];

            /// See [`super::ChainFloat::run_chain`]; the CPU has `$features`.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn run(links: &[Link<$t>], start: usize, len: usize) {
                // Two copies of the loop: a check for streaming in the
                // one every other chain runs made GELU's light links
                // slower, 0.19 -> 0.24 ns per element (`chain_costs`).
                // And a copy for chains that read values per row, so
                // that the others' loop has no row operands' arms to make
                // room for (see `Code::PerRow` in `block`).
                let end = start + len;
                match (links.iter().any(|l| l.stream), reads_rows(links)) {
                    (true, false) => blocks::<true, false>(links, start, end),
                    (false, false) => blocks::<false, false>(links, start, end),
                    (true, true) => blocks::<true, true>(links, start, end),
                    (false, true) => blocks::<false, true>(links, start, end),
                }
            }

            /// Whether a link reads values per row (`Arg::Rows`).
            #[inline(always)]
            fn reads_rows(links: &[Link<$t>]) -> bool {
                links.iter().any(|l| l.code() == Code::PerRow)
            }

            /// Vectors per tail block: a run's positions after its whole
            /// blocks go in blocks of this many, the last one masked. A
            /// whole masked block ran every link on all `UNROLL` vectors:
            /// on rows of 64 f32 (LayerNorm + GELU over f32[16384,64]) the
            /// zmm chains computed four times the values they kept.
            const QUARTER: usize = UNROLL / 4;

            #[inline(always)]
            unsafe fn blocks<const STREAM: bool, const ROWS: bool>(links: &[Link<$t>], start: usize, end: usize) {
                const BLOCK: usize = $lanes * UNROLL;
                let mut i = start;
                while i + BLOCK <= end {
                    block::<STREAM, ROWS, true, UNROLL>(links, i, &[<$mask>::MAX; UNROLL]);
                    i += BLOCK;
                }
                while i + $lanes * QUARTER <= end {
                    block::<STREAM, ROWS, true, QUARTER>(links, i, &[<$mask>::MAX; QUARTER]);
                    i += $lanes * QUARTER;
                }
                if i < end {
                    block::<STREAM, ROWS, false, QUARTER>(links, i, &tail_masks(end - i));
                }
            }

            /// Masks of a last block with `left` positions: masked-out
            /// lanes are neither read nor written.
            #[inline(always)]
            fn tail_masks<const N: usize>(left: usize) -> [$mask; N] {
                let mut masks = [0; N];
                for (k, m) in masks.iter_mut().enumerate() {
                    let n = left.saturating_sub(k * $lanes).min($lanes);
                    *m = ((1u32 << n) - 1) as $mask;
                }
                masks
            }

            /// See [`super::ChainFloat::run_chain_sum`]; the CPU has
            /// `$features`, `len` is a multiple of the partial sums and at
            /// least two of them. Vector `p` of `part` holds partial
            /// sums `p·lanes ..`, which take positions `≡ p·lanes + l`
            /// (mod 64): the first 64 values start them, later ones are
            /// added in position order, then the halving tree.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn run_sum(links: &[Link<$t>], start: usize, len: usize) -> $t {
                if reads_rows(links) {
                    sum_blocks::<true>(links, start, len)
                } else {
                    sum_blocks::<false>(links, start, len)
                }
            }

            #[inline(always)]
            unsafe fn sum_blocks<const ROWS: bool>(links: &[Link<$t>], start: usize, len: usize) -> $t {
                const BLOCK: usize = $lanes * UNROLL;
                let mut part = [$set1(0.0); row::VECTORS];
                let (mut i, end) = (start, start + len);
                while i + BLOCK <= end {
                    let v = block::<false, ROWS, true, UNROLL>(links, i, &[<$mask>::MAX; UNROLL]);
                    add_block(&mut part, i - start, &v, UNROLL);
                    i += BLOCK;
                }
                // A quarter block is 64 positions or fewer, and divides
                // 64: no masked block is left when `len` is whole partial
                // sums. The masked one keeps a wrong `len` in bounds.
                while i + $lanes * QUARTER <= end {
                    let v = block::<false, ROWS, true, QUARTER>(links, i, &[<$mask>::MAX; QUARTER]);
                    add_block(&mut part, i - start, &v, QUARTER);
                    i += $lanes * QUARTER;
                }
                if i < end {
                    let v = block::<false, ROWS, false, QUARTER>(links, i, &tail_masks(end - i));
                    add_block(&mut part, i - start, &v, (end - i) / $lanes);
                }
                row::sum_partials(part)
            }

            /// Adds the first `whole` vectors of a block at row position
            /// `from` to the partial sums they belong to.
            #[inline(always)]
            unsafe fn add_block<const N: usize>(part: &mut [$vec; row::VECTORS], from: usize, v: &Regs<N>, whole: usize) {
                for (k, &x) in v.iter().enumerate().take(whole) {
                    let at = from + k * $lanes;
                    let p = (at / $lanes) % row::VECTORS;
                    part[p] = if at < PARTIAL_SUMS { x } else { $add(part[p], x) };
                }
            }

            /// Positions `at..at + lanes·N` (those in `masks`; all of
            /// them when `FULL`) through every link.
            #[inline(always)]
            unsafe fn block<const STREAM: bool, const ROWS: bool, const FULL: bool, const N: usize>(
                links: &[Link<$t>],
                at: usize,
                masks: &[$mask; N],
            ) -> Regs<N> {
                let sign = $set1(-0.0);
                let mut v: Regs<N> = [$set1(0.0); N];
                for l in links {
                    let v = &mut v;
                    // See `CODES`.
                    let code = if CODES || N < UNROLL { l.code() } else { Code::Other };
                    match code {
                        Code::AddPrevOne => prev_one(v, l.b.one(), |x, y| $add(x, y)),
                        Code::AddOnePrev => one_prev(v, l.a.one(), |x, y| $add(x, y)),
                        Code::AddPrevAt => prev_at::<FULL, N>(v, l.b.at(), at, masks, |x, y| $add(x, y)),
                        Code::AddAtPrev => at_prev::<FULL, N>(v, l.a.at(), at, masks, |x, y| $add(x, y)),
                        Code::AddPrevPrev => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $add(x, x)),
                        Code::AddAtOne => at_one::<FULL, N>(v, l.a.at(), l.b.one(), at, masks, |x, y| $add(x, y)),
                        Code::AddOneAt => one_at::<FULL, N>(v, l.a.one(), l.b.at(), at, masks, |x, y| $add(x, y)),
                        Code::AddAtAt => at_at::<FULL, N>(v, l.a.at(), l.b.at(), at, masks, |x, y| $add(x, y)),
                        Code::SubPrevOne => prev_one(v, l.b.one(), |x, y| $sub(x, y)),
                        Code::SubOnePrev => one_prev(v, l.a.one(), |x, y| $sub(x, y)),
                        Code::SubPrevAt => prev_at::<FULL, N>(v, l.b.at(), at, masks, |x, y| $sub(x, y)),
                        Code::SubAtPrev => at_prev::<FULL, N>(v, l.a.at(), at, masks, |x, y| $sub(x, y)),
                        Code::SubPrevPrev => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $sub(x, x)),
                        Code::SubAtOne => at_one::<FULL, N>(v, l.a.at(), l.b.one(), at, masks, |x, y| $sub(x, y)),
                        Code::SubOneAt => one_at::<FULL, N>(v, l.a.one(), l.b.at(), at, masks, |x, y| $sub(x, y)),
                        Code::SubAtAt => at_at::<FULL, N>(v, l.a.at(), l.b.at(), at, masks, |x, y| $sub(x, y)),
                        Code::MulPrevOne => prev_one(v, l.b.one(), |x, y| $mul(x, y)),
                        Code::MulOnePrev => one_prev(v, l.a.one(), |x, y| $mul(x, y)),
                        Code::MulPrevAt => prev_at::<FULL, N>(v, l.b.at(), at, masks, |x, y| $mul(x, y)),
                        Code::MulAtPrev => at_prev::<FULL, N>(v, l.a.at(), at, masks, |x, y| $mul(x, y)),
                        Code::MulPrevPrev => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $mul(x, x)),
                        Code::MulAtOne => at_one::<FULL, N>(v, l.a.at(), l.b.one(), at, masks, |x, y| $mul(x, y)),
                        Code::MulOneAt => one_at::<FULL, N>(v, l.a.one(), l.b.at(), at, masks, |x, y| $mul(x, y)),
                        Code::MulAtAt => at_at::<FULL, N>(v, l.a.at(), l.b.at(), at, masks, |x, y| $mul(x, y)),
                        Code::DivPrevOne => prev_one(v, l.b.one(), |x, y| $div(x, y)),
                        Code::DivOnePrev => one_prev(v, l.a.one(), |x, y| $div(x, y)),
                        Code::DivPrevAt => prev_at::<FULL, N>(v, l.b.at(), at, masks, |x, y| $div(x, y)),
                        Code::DivAtPrev => at_prev::<FULL, N>(v, l.a.at(), at, masks, |x, y| $div(x, y)),
                        Code::DivPrevPrev => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $div(x, x)),
                        Code::DivAtOne => at_one::<FULL, N>(v, l.a.at(), l.b.one(), at, masks, |x, y| $div(x, y)),
                        Code::DivOneAt => one_at::<FULL, N>(v, l.a.one(), l.b.at(), at, masks, |x, y| $div(x, y)),
                        Code::DivAtAt => at_at::<FULL, N>(v, l.a.at(), l.b.at(), at, masks, |x, y| $div(x, y)),
                        Code::Neg => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $xor(x, sign)),
                        Code::Abs => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $andnot(sign, x)),
                        Code::Sqrt => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $sqrt(x)),
                        Code::Rsqrt => unary::<ROWS, FULL, N>(v, Arg::Prev, at, masks, |x| $div($set1(1.0), $sqrt(x))),
                        Code::Exp => *v = heavy(exp_regs::<N>, *v),
                        Code::Tanh => *v = heavy(tanh_regs::<N>, *v),
                        // A link reading rows only comes in the copy of
                        // this loop for chains that read rows (`ROWS`):
                        // the general arms' row operands, in the other
                        // chains' loop, took the registers its links keep
                        // their values in (LayerNorm + GELU over
                        // f32[8192,512], no rows read, 1.9 -> 2.2 ms).
                        Code::Other | Code::PerRow => general::<ROWS, FULL, N>(v, l, at, masks),
                    }
                    if !l.store.is_null() {
                        let to = l.store.add(at);
                        if FULL && STREAM && l.stream && (to as usize).is_multiple_of(64) {
                            for k in 0..N {
                                $stream(to.add(k * $lanes), v[k]);
                            }
                        } else {
                            for k in 0..N {
                                store::<FULL>(to.add(k * $lanes), masks[k], v[k]);
                            }
                        }
                    }
                }
                v
            }

            /// `v = op(v, y)`.
            #[inline(always)]
            unsafe fn prev_one<const N: usize>(v: &mut Regs<N>, y: $t, op: impl Fn($vec, $vec) -> $vec) {
                let y = $set1(y);
                for x in v.iter_mut() {
                    *x = op(*x, y);
                }
            }

            /// `v = op(x, v)`.
            #[inline(always)]
            unsafe fn one_prev<const N: usize>(v: &mut Regs<N>, x: $t, op: impl Fn($vec, $vec) -> $vec) {
                let x = $set1(x);
                for y in v.iter_mut() {
                    *y = op(x, *y);
                }
            }

            /// `v = op(v, q[..])`.
            #[inline(always)]
            unsafe fn prev_at<const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                q: *const $t,
                at: usize,
                masks: &[$mask; N],
                op: impl Fn($vec, $vec) -> $vec,
            ) {
                for (k, x) in v.iter_mut().enumerate() {
                    *x = op(*x, load::<FULL, N>(q, at, k, masks));
                }
            }

            /// `v = op(p[..], v)`.
            #[inline(always)]
            unsafe fn at_prev<const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                p: *const $t,
                at: usize,
                masks: &[$mask; N],
                op: impl Fn($vec, $vec) -> $vec,
            ) {
                for (k, y) in v.iter_mut().enumerate() {
                    *y = op(load::<FULL, N>(p, at, k, masks), *y);
                }
            }

            /// `v = op(p[..], y)`.
            #[inline(always)]
            unsafe fn at_one<const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                p: *const $t,
                y: $t,
                at: usize,
                masks: &[$mask; N],
                op: impl Fn($vec, $vec) -> $vec,
            ) {
                let y = $set1(y);
                for (k, x) in v.iter_mut().enumerate() {
                    *x = op(load::<FULL, N>(p, at, k, masks), y);
                }
            }

            /// `v = op(x, q[..])`.
            #[inline(always)]
            unsafe fn one_at<const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                x: $t,
                q: *const $t,
                at: usize,
                masks: &[$mask; N],
                op: impl Fn($vec, $vec) -> $vec,
            ) {
                let x = $set1(x);
                for (k, y) in v.iter_mut().enumerate() {
                    *y = op(x, load::<FULL, N>(q, at, k, masks));
                }
            }

            /// `v = op(p[..], q[..])`.
            #[inline(always)]
            unsafe fn at_at<const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                p: *const $t,
                q: *const $t,
                at: usize,
                masks: &[$mask; N],
                op: impl Fn($vec, $vec) -> $vec,
            ) {
                for (k, x) in v.iter_mut().enumerate() {
                    *x = op(load::<FULL, N>(p, at, k, masks), load::<FULL, N>(q, at, k, masks));
                }
            }

            /// The general arms, for the links no code covers (`Code::Other`,
            /// `Code::PerRow`); the row operands' arms only when `ROWS`.
            #[inline(always)]
            unsafe fn general<const ROWS: bool, const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                l: &Link<$t>,
                at: usize,
                masks: &[$mask; N],
            ) {
                let sign = $set1(-0.0);
                let (a, b) = (l.a, l.b);
                match l.op {
                    LinkOp::Add => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $add(x, y)),
                    LinkOp::Sub => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $sub(x, y)),
                    LinkOp::Mul => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $mul(x, y)),
                    LinkOp::Div => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $div(x, y)),
                    LinkOp::Neg => unary::<ROWS, FULL, N>(v, a, at, masks, |x| $xor(x, sign)),
                    LinkOp::Abs => unary::<ROWS, FULL, N>(v, a, at, masks, |x| $andnot(sign, x)),
                    LinkOp::Sqrt => unary::<ROWS, FULL, N>(v, a, at, masks, |x| $sqrt(x)),
                    LinkOp::Rsqrt => unary::<ROWS, FULL, N>(v, a, at, masks, |x| $div($set1(1.0), $sqrt(x))),
                    LinkOp::Exp => {
                        unary::<ROWS, FULL, N>(v, a, at, masks, |x| x);
                        *v = heavy(exp_regs::<N>, *v);
                    }
                    LinkOp::Tanh => {
                        unary::<ROWS, FULL, N>(v, a, at, masks, |x| x);
                        *v = heavy(tanh_regs::<N>, *v);
                    }
                    LinkOp::Compare(d) => compare::<ROWS, FULL, N>(v, d, a, b, at, masks),
                    LinkOp::Select => {
                        let (b, c) = (arg::<ROWS, FULL, N>(b, v, at, masks), arg::<ROWS, FULL, N>(l.c, v, at, masks));
                        unary::<ROWS, FULL, N>(v, a, at, masks, |x| x);
                        for k in 0..N {
                            v[k] = $select(v[k], b[k], c[k]);
                        }
                    }
                }
            }

            /// Vector `k` of the block from `p` (`p` at the block's start).
            #[inline(always)]
            unsafe fn load<const FULL: bool, const N: usize>(p: *const $t, at: usize, k: usize, masks: &[$mask; N]) -> $vec {
                if FULL {
                    $loadu(p.add(at + k * $lanes))
                } else {
                    $maskz_loadu(masks[k], p.add(at + k * $lanes))
                }
            }

            #[inline(always)]
            unsafe fn store<const FULL: bool>(to: *mut $t, mask: $mask, x: $vec) {
                if FULL {
                    $storeu(to, x)
                } else {
                    $mask_storeu(to, mask, x)
                }
            }

            /// `v = f(a)`, in place when `a` is the previous value.
            #[inline(always)]
            unsafe fn unary<const ROWS: bool, const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                a: Arg<$t>,
                at: usize,
                masks: &[$mask; N],
                f: impl Fn($vec) -> $vec,
            ) {
                match a {
                    Arg::Prev => {
                        for x in v.iter_mut() {
                            *x = f(*x);
                        }
                    }
                    Arg::At(p) => {
                        for (k, x) in v.iter_mut().enumerate() {
                            *x = f(load::<FULL, N>(p, at, k, masks));
                        }
                    }
                    Arg::One(a) => *v = [f($set1(a)); N],
                    // Not in the loop of chains that read no rows.
                    Arg::Rows(p, row) => {
                        if ROWS {
                            let x = row_vectors::<FULL, N>(p, row, at, masks);
                            for k in 0..N {
                                v[k] = f(x[k]);
                            }
                        }
                    }
                }
            }

            /// `v = f(a, b)`, one arm per kind of operand pair: the arms
            /// the chains run (the previous value with a constant or a
            /// tile operand) update the values in place.
            #[inline(always)]
            unsafe fn binary<const ROWS: bool, const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                a: Arg<$t>,
                b: Arg<$t>,
                at: usize,
                masks: &[$mask; N],
                f: impl Fn($vec, $vec) -> $vec,
            ) {
                match (a, b) {
                    (Arg::Prev, Arg::One(y)) => prev_one(v, y, f),
                    (Arg::One(x), Arg::Prev) => one_prev(v, x, f),
                    (Arg::Prev, Arg::At(q)) => prev_at::<FULL, N>(v, q, at, masks, f),
                    (Arg::At(p), Arg::Prev) => at_prev::<FULL, N>(v, p, at, masks, f),
                    (Arg::At(p), Arg::One(y)) => at_one::<FULL, N>(v, p, y, at, masks, f),
                    (Arg::One(x), Arg::At(q)) => one_at::<FULL, N>(v, x, q, at, masks, f),
                    (Arg::At(p), Arg::At(q)) => at_at::<FULL, N>(v, p, q, at, masks, f),
                    (Arg::Prev, Arg::Prev) => {
                        for x in v.iter_mut() {
                            *x = f(*x, *x);
                        }
                    }
                    (Arg::Prev, Arg::Rows(q, row)) if ROWS => {
                        let y = row_vectors::<FULL, N>(q, row, at, masks);
                        for k in 0..N {
                            v[k] = f(v[k], y[k]);
                        }
                    }
                    (Arg::Rows(p, row), Arg::Prev) if ROWS => {
                        let x = row_vectors::<FULL, N>(p, row, at, masks);
                        for k in 0..N {
                            v[k] = f(x[k], v[k]);
                        }
                    }
                    (a, b) => {
                        // Two constants, or a row's value with a constant
                        // or a tile operand.
                        let (a, b) = (arg::<ROWS, FULL, N>(a, v, at, masks), arg::<ROWS, FULL, N>(b, v, at, masks));
                        for k in 0..N {
                            v[k] = f(a[k], b[k]);
                        }
                    }
                }
            }

            /// `v = a d b` as markers (`choose.rs`: bits one for true).
            #[inline(always)]
            unsafe fn compare<const ROWS: bool, const FULL: bool, const N: usize>(
                v: &mut Regs<N>,
                d: Direction,
                a: Arg<$t>,
                b: Arg<$t>,
                at: usize,
                masks: &[$mask; N],
            ) {
                let yes = $set1(<$t>::from_bits(1));
                match d {
                    Direction::Eq => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_EQ_OQ>(x, y), yes)),
                    Direction::Ne => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_NEQ_UQ>(x, y), yes)),
                    Direction::Lt => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_LT_OQ>(x, y), yes)),
                    Direction::Le => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_LE_OQ>(x, y), yes)),
                    Direction::Gt => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_GT_OQ>(x, y), yes)),
                    Direction::Ge => binary::<ROWS, FULL, N>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_GE_OQ>(x, y), yes)),
                }
            }

            /// The transcendental links, each over a block's vectors. Called
            /// through a pointer the compiler cannot see through, with the
            /// values in memory: inlined into [`block`], their temporaries
            /// took the registers the light links keep their values in,
            /// and every chain got slower (a 5-op polynomial 1.0 -> 1.6 ms
            /// over 4M f32). In place: an input and an output copy cost a
            /// block of stores more (one thread, `chain_costs`: the Tanh
            /// link 0.50 -> 0.47-0.49 ns per element).
            #[target_feature(enable = $features)]
            unsafe fn exp_regs<const N: usize>(v: &mut Regs<N>) {
                $exp(v);
            }

            #[target_feature(enable = $features)]
            unsafe fn tanh_regs<const N: usize>(v: &mut Regs<N>) {
                $tanh(v);
            }

            /// `f` on a copy of the block's values: the copy's address goes
            /// to `f`, and the block's own values, never address-taken,
            /// stay in registers (passed `&mut` themselves, every link kept
            /// them on the stack: GELU's light links 0.21 -> 0.39 ns per
            /// element, `chain_costs`).
            #[inline(always)]
            unsafe fn heavy<const N: usize>(f: unsafe fn(&mut Regs<N>), v: Regs<N>) -> Regs<N> {
                let mut copy = v;
                std::hint::black_box(f)(&mut copy);
                copy
            }

            /// An operand's vectors for the block (a copy of `prev` for the
            /// previous value).
            #[inline(always)]
            unsafe fn arg<const ROWS: bool, const FULL: bool, const N: usize>(
                a: Arg<$t>,
                prev: &Regs<N>,
                at: usize,
                masks: &[$mask; N],
            ) -> Regs<N> {
                match a {
                    Arg::Prev => *prev,
                    Arg::At(p) => {
                        // A loop, not `array::from_fn`: its closure has
                        // no target features, so the loads in it were
                        // calls.
                        let mut v = [$set1(0.0); N];
                        for (k, x) in v.iter_mut().enumerate() {
                            *x = load::<FULL, N>(p, at, k, masks);
                        }
                        v
                    }
                    Arg::One(x) => [$set1(x); N],
                    Arg::Rows(p, row) if ROWS => row_vectors::<FULL, N>(p, row, at, masks),
                    // Not in the loop of chains that read no rows.
                    Arg::Rows(..) => [$set1(0.0); N],
                }
            }

            /// The block's vectors of a value per row of `row` positions
            /// from `p`: each vector is in one row (rows are whole
            /// vectors), and the row moves on when a vector ends one.
            #[inline(always)]
            unsafe fn row_vectors<const FULL: bool, const N: usize>(p: *const $t, row: usize, at: usize, masks: &[$mask; N]) -> Regs<N> {
                let mut v = [$set1(0.0); N];
                let (mut r, mut into) = (at / row, at % row);
                for (k, x) in v.iter_mut().enumerate() {
                    if FULL || masks[k] != 0 {
                        *x = $set1(*p.add(r));
                    }
                    into += $lanes;
                    if into == row {
                        into = 0;
                        r += 1;
                    }
                }
                v
            }
        }
    };
}

chain_lanes!(
    f32,
    f32_zmm,
    "avx512f,avx512dq",
    zmm,
    __m512,
    u16,
    16,
    16,
    false,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_maskz_loadu_ps,
    _mm512_mask_storeu_ps,
    _mm512_stream_ps,
    _mm512_set1_ps,
    _mm512_add_ps,
    _mm512_sub_ps,
    _mm512_mul_ps,
    _mm512_div_ps,
    _mm512_sqrt_ps,
    _mm512_xor_ps,
    _mm512_andnot_ps,
    _mm512_cmp_ps_mask,
    _mm512_maskz_mov_ps,
    select_ps,
    exp_block,
    tanh_block,
    crate::kernels::reduce::row_lanes::f32_lanes
);
chain_lanes!(
    f64,
    f64_zmm,
    "avx512f,avx512dq",
    zmm,
    __m512d,
    u8,
    8,
    16,
    false,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_maskz_loadu_pd,
    _mm512_mask_storeu_pd,
    _mm512_stream_pd,
    _mm512_set1_pd,
    _mm512_add_pd,
    _mm512_sub_pd,
    _mm512_mul_pd,
    _mm512_div_pd,
    _mm512_sqrt_pd,
    _mm512_xor_pd,
    _mm512_andnot_pd,
    _mm512_cmp_pd_mask,
    _mm512_maskz_mov_pd,
    select_pd,
    no_lanes,
    no_lanes,
    crate::kernels::reduce::row_lanes::f64_lanes
);
chain_lanes!(
    f32,
    f32_ymm,
    "avx2,fma",
    ymm,
    __m256,
    u8,
    8,
    8,
    true,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    maskz_loadu_ps,
    mask_storeu_ps,
    _mm256_stream_ps,
    _mm256_set1_ps,
    _mm256_add_ps,
    _mm256_sub_ps,
    _mm256_mul_ps,
    _mm256_div_ps,
    _mm256_sqrt_ps,
    _mm256_xor_ps,
    _mm256_andnot_ps,
    _mm256_cmp_ps,
    _mm256_and_ps,
    select_ps,
    exp_block,
    tanh_block,
    crate::kernels::reduce::row_lanes::f32_ymm
);
chain_lanes!(
    f64,
    f64_ymm,
    "avx2,fma",
    ymm,
    __m256d,
    u8,
    4,
    8,
    true,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    maskz_loadu_pd,
    mask_storeu_pd,
    _mm256_stream_pd,
    _mm256_set1_pd,
    _mm256_add_pd,
    _mm256_sub_pd,
    _mm256_mul_pd,
    _mm256_div_pd,
    _mm256_sqrt_pd,
    _mm256_xor_pd,
    _mm256_andnot_pd,
    _mm256_cmp_pd,
    _mm256_and_pd,
    select_pd,
    no_lanes,
    no_lanes,
    crate::kernels::reduce::row_lanes::f64_ymm
);

/// The element type's chains: on the AVX-512 module where the CPU has
/// AVX-512, else on the AVX2 one. `$transcendental`: Exp and Tanh links
/// (f32 only: f64 has no lane version of either).
macro_rules! chain_float {
    ($t:ty, $zmm:ident, $ymm:ident, transcendental: $transcendental:expr) => {
        impl ChainFloat for $t {
            fn chains() -> bool {
                available()
            }

            fn has_link(op: LinkOp) -> bool {
                $transcendental || !matches!(op, LinkOp::Exp | LinkOp::Tanh)
            }

            unsafe fn run_chain(links: &[Link<$t>], start: usize, len: usize) -> bool {
                #[cfg(target_arch = "x86_64")]
                if available() && links.iter().all(|l| Self::has_link(l.op)) {
                    if isa() >= Isa::Avx512 {
                        $zmm::run(links, start, len);
                    } else {
                        $ymm::run(links, start, len);
                    }
                    return true;
                }
                let _ = (links, start, len);
                false
            }

            unsafe fn run_chain_sum(links: &[Link<$t>], start: usize, len: usize) -> Option<$t> {
                let whole = sums_in_registers(len);
                #[cfg(target_arch = "x86_64")]
                if whole && available() && links.iter().all(|l| Self::has_link(l.op)) {
                    return Some(if isa() >= Isa::Avx512 { $zmm::run_sum(links, start, len) } else { $ymm::run_sum(links, start, len) });
                }
                let _ = (links, start, whole);
                None
            }

            fn plus(a: $t, b: $t) -> $t {
                a + b
            }
        }
    };
}

chain_float!(f32, f32_zmm, f32_ymm, transcendental: true);
chain_float!(f64, f64_zmm, f64_ymm, transcendental: false);

/// Half-precision values round after every op: no chains.
macro_rules! no_chains {
    ($($t:ty),*) => {$(
        impl ChainFloat for $t {
            fn chains() -> bool {
                false
            }

            fn has_link(_: LinkOp) -> bool {
                false
            }

            unsafe fn run_chain(_: &[Link<$t>], _: usize, _: usize) -> bool {
                false
            }

            unsafe fn run_chain_sum(_: &[Link<$t>], _: usize, _: usize) -> Option<$t> {
                None
            }

            fn plus(a: $t, b: $t) -> $t {
                a + b
            }
        }
    )*};
}

no_chains!(half::f16, half::bf16);

/// Costs of register chains against the whole-array kernels, one thread,
/// L1-resident tiles (`cargo test --release -p xlaref-fast --lib
/// chain_costs -- --ignored --nocapture`): prints ns per element; asserts
/// that a Tanh link and the GELU chain give the op-by-op values bit for bit.
#[cfg(all(test, target_arch = "x86_64"))]
mod timing;
