//! Register chains: a run of light arithmetic members of an f32 or f64
//! group evaluated sixteen (f32) or eight (f64) positions at a time, each
//! member's value kept in a vector register for the next one.
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
//! whole-array kernels apply on AVX-512 (`elem::exp`, `elem::tanh`), so a
//! GELU or a softmax numerator is one pass per tile and still equals the
//! op-by-op result bit for bit. (f64 has no lane version of either; its
//! Exp and Tanh members run on their own, as before.)

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
}

/// One member: `op(a, b)` (`b` unused by the unary ones; `c` only by
/// Select), stored to `store[p]` when `store` is not null.
#[derive(Clone, Copy)]
pub(super) struct Link<T> {
    pub op: LinkOp,
    pub a: Arg<T>,
    pub b: Arg<T>,
    pub c: Arg<T>,
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
    /// Whether chains of this type run here (f32 and f64 on AVX-512).
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

/// Whether this CPU runs chains.
pub(super) fn available() -> bool {
    cfg!(target_arch = "x86_64") && isa() >= Isa::Avx512
}

macro_rules! chain_impl {
    ($t:ty, $module:ident, $vec:ty, $mask:ty, $lanes:expr,
     $loadu:ident, $storeu:ident, $maskz_loadu:ident, $mask_storeu:ident, $stream:ident, $set1:ident,
     $add:ident, $sub:ident, $mul:ident, $div:ident, $sqrt:ident, $xor:ident, $andnot:ident,
     $cmp:ident, $maskz_mov:ident, $blend:ident, $cast_int:ident, $test:ident,
     transcendental: $transcendental:expr, $exp:path, $tanh:path, $row:path) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::{Arg, Direction, Link, LinkOp, PARTIAL_SUMS};
            use std::arch::x86_64::*;
            use $row as row;

            /// Vectors per block: a link's dispatch is paid once for this
            /// many. Each link updates the block's values in place (an
            /// operand from memory is an instruction's memory operand), so
            /// sixteen values and a few temporaries fit the 32 registers.
            const UNROLL: usize = 16;
            type Regs = [$vec; UNROLL];

            /// See [`super::ChainFloat::run_chain`]; the CPU has AVX-512F and DQ.
            #[target_feature(enable = "avx512f,avx512dq")]
            pub(super) unsafe fn run(links: &[Link<$t>], start: usize, len: usize) {
                // Two copies of the loop: a check for streaming in the
                // one every other chain runs made GELU's light links
                // slower, 0.19 -> 0.24 ns per element (`chain_costs`).
                if links.iter().any(|l| l.stream) {
                    blocks::<true>(links, start, start + len)
                } else {
                    blocks::<false>(links, start, start + len)
                }
            }

            #[inline(always)]
            unsafe fn blocks<const STREAM: bool>(links: &[Link<$t>], start: usize, end: usize) {
                const BLOCK: usize = $lanes * UNROLL;
                let mut i = start;
                while i + BLOCK <= end {
                    block::<STREAM, true>(links, i, &[<$mask>::MAX; UNROLL]);
                    i += BLOCK;
                }
                if i < end {
                    block::<STREAM, false>(links, i, &tail_masks(end - i));
                }
            }

            /// Masks of a last block with `left` positions: masked-out
            /// lanes are neither read nor written.
            #[inline(always)]
            fn tail_masks(left: usize) -> [$mask; UNROLL] {
                let mut masks = [0; UNROLL];
                for (k, m) in masks.iter_mut().enumerate() {
                    let n = left.saturating_sub(k * $lanes).min($lanes);
                    *m = ((1u32 << n) - 1) as $mask;
                }
                masks
            }

            /// See [`super::ChainFloat::run_chain_sum`]; the CPU has
            /// AVX-512F and DQ, `len` is a multiple of the partial sums and
            /// at least two of them. Vector `p` of `part` holds partial
            /// sums `p·lanes ..`, which take positions `≡ p·lanes + l`
            /// (mod 64): the first 64 values start them, later ones are
            /// added in position order, then the halving tree.
            #[target_feature(enable = "avx512f,avx512dq")]
            pub(super) unsafe fn run_sum(links: &[Link<$t>], start: usize, len: usize) -> $t {
                const BLOCK: usize = $lanes * UNROLL;
                const PARTS: usize = row::VECTORS;
                let mut part = [$set1(0.0); PARTS];
                let mut add_block = |i: usize, v: &Regs, whole: usize| {
                    for (k, &x) in v.iter().enumerate().take(whole) {
                        // The position in the row.
                        let at = i - start + k * $lanes;
                        let p = (at / $lanes) % PARTS;
                        part[p] = if at < PARTIAL_SUMS { x } else { $add(part[p], x) };
                    }
                };
                let (mut i, end) = (start, start + len);
                while i + BLOCK <= end {
                    add_block(i, &block::<false, true>(links, i, &[<$mask>::MAX; UNROLL]), UNROLL);
                    i += BLOCK;
                }
                if i < end {
                    // Whole vectors only (len is a multiple of 64).
                    add_block(i, &block::<false, false>(links, i, &tail_masks(end - i)), (end - i) / $lanes);
                }
                row::sum_partials(part)
            }

            /// Positions `at..at + lanes·UNROLL` (those in `masks`; all of
            /// them when `FULL`) through every link.
            #[inline(always)]
            unsafe fn block<const STREAM: bool, const FULL: bool>(links: &[Link<$t>], at: usize, masks: &[$mask; UNROLL]) -> Regs {
                let sign = $set1(-0.0);
                let mut v: Regs = [$set1(0.0); UNROLL];
                for l in links {
                    let (a, b) = (l.a, l.b);
                    match l.op {
                        LinkOp::Add => binary::<FULL>(&mut v, a, b, at, masks, |x, y| $add(x, y)),
                        LinkOp::Sub => binary::<FULL>(&mut v, a, b, at, masks, |x, y| $sub(x, y)),
                        LinkOp::Mul => binary::<FULL>(&mut v, a, b, at, masks, |x, y| $mul(x, y)),
                        LinkOp::Div => binary::<FULL>(&mut v, a, b, at, masks, |x, y| $div(x, y)),
                        LinkOp::Neg => unary::<FULL>(&mut v, a, at, masks, |x| $xor(x, sign)),
                        LinkOp::Abs => unary::<FULL>(&mut v, a, at, masks, |x| $andnot(sign, x)),
                        LinkOp::Sqrt => unary::<FULL>(&mut v, a, at, masks, |x| $sqrt(x)),
                        LinkOp::Rsqrt => unary::<FULL>(&mut v, a, at, masks, |x| $div($set1(1.0), $sqrt(x))),
                        LinkOp::Exp => {
                            unary::<FULL>(&mut v, a, at, masks, |x| x);
                            v = heavy(exp_regs, v);
                        }
                        LinkOp::Tanh => {
                            unary::<FULL>(&mut v, a, at, masks, |x| x);
                            v = heavy(tanh_regs, v);
                        }
                        LinkOp::Compare(d) => compare::<FULL>(&mut v, d, a, b, at, masks),
                        LinkOp::Select => {
                            let (b, c) = (arg::<FULL>(b, &v, at, masks), arg::<FULL>(l.c, &v, at, masks));
                            unary::<FULL>(&mut v, a, at, masks, |x| x);
                            for k in 0..UNROLL {
                                let bits = $cast_int(v[k]);
                                v[k] = $blend($test(bits, bits), c[k], b[k]);
                            }
                        }
                    }
                    if !l.store.is_null() {
                        let to = l.store.add(at);
                        if FULL && STREAM && l.stream && (to as usize).is_multiple_of(64) {
                            for k in 0..UNROLL {
                                $stream(to.add(k * $lanes), v[k]);
                            }
                        } else {
                            for k in 0..UNROLL {
                                store::<FULL>(to.add(k * $lanes), masks[k], v[k]);
                            }
                        }
                    }
                }
                v
            }

            /// Vector `k` of the block from `p` (`p` at the block's start).
            #[inline(always)]
            unsafe fn load<const FULL: bool>(p: *const $t, at: usize, k: usize, masks: &[$mask; UNROLL]) -> $vec {
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
            unsafe fn unary<const FULL: bool>(v: &mut Regs, a: Arg<$t>, at: usize, masks: &[$mask; UNROLL], f: impl Fn($vec) -> $vec) {
                match a {
                    Arg::Prev => {
                        for x in v.iter_mut() {
                            *x = f(*x);
                        }
                    }
                    Arg::At(p) => {
                        for (k, x) in v.iter_mut().enumerate() {
                            *x = f(load::<FULL>(p, at, k, masks));
                        }
                    }
                    Arg::One(a) => *v = [f($set1(a)); UNROLL],
                }
            }

            /// `v = f(a, b)`, one arm per kind of operand pair: the arms
            /// the chains run (the previous value with a constant or a
            /// tile operand) update the values in place.
            #[inline(always)]
            unsafe fn binary<const FULL: bool>(
                v: &mut Regs,
                a: Arg<$t>,
                b: Arg<$t>,
                at: usize,
                masks: &[$mask; UNROLL],
                f: impl Fn($vec, $vec) -> $vec,
            ) {
                match (a, b) {
                    (Arg::Prev, Arg::One(y)) => {
                        let y = $set1(y);
                        for x in v.iter_mut() {
                            *x = f(*x, y);
                        }
                    }
                    (Arg::One(x), Arg::Prev) => {
                        let x = $set1(x);
                        for y in v.iter_mut() {
                            *y = f(x, *y);
                        }
                    }
                    (Arg::Prev, Arg::At(q)) => {
                        for (k, x) in v.iter_mut().enumerate() {
                            *x = f(*x, load::<FULL>(q, at, k, masks));
                        }
                    }
                    (Arg::At(p), Arg::Prev) => {
                        for (k, y) in v.iter_mut().enumerate() {
                            *y = f(load::<FULL>(p, at, k, masks), *y);
                        }
                    }
                    (Arg::Prev, Arg::Prev) => {
                        for x in v.iter_mut() {
                            *x = f(*x, *x);
                        }
                    }
                    (a, b) => {
                        // Neither is the previous value: both from memory
                        // or constants.
                        let (a, b) = (arg::<FULL>(a, v, at, masks), arg::<FULL>(b, v, at, masks));
                        for k in 0..UNROLL {
                            v[k] = f(a[k], b[k]);
                        }
                    }
                }
            }

            /// `v = a d b` as markers (`choose.rs`: bits one for true).
            #[inline(always)]
            unsafe fn compare<const FULL: bool>(v: &mut Regs, d: Direction, a: Arg<$t>, b: Arg<$t>, at: usize, masks: &[$mask; UNROLL]) {
                let yes = $set1(<$t>::from_bits(1));
                match d {
                    Direction::Eq => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_EQ_OQ>(x, y), yes)),
                    Direction::Ne => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_NEQ_UQ>(x, y), yes)),
                    Direction::Lt => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_LT_OQ>(x, y), yes)),
                    Direction::Le => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_LE_OQ>(x, y), yes)),
                    Direction::Gt => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_GT_OQ>(x, y), yes)),
                    Direction::Ge => binary::<FULL>(v, a, b, at, masks, |x, y| $maskz_mov($cmp::<_CMP_GE_OQ>(x, y), yes)),
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
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn exp_regs(v: &mut Regs) {
                for x in v.iter_mut() {
                    *x = $exp(*x);
                }
            }

            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn tanh_regs(v: &mut Regs) {
                for x in v.iter_mut() {
                    *x = $tanh(*x);
                }
            }

            /// `f` on a copy of the block's values: the copy's address goes
            /// to `f`, and the block's own values, never address-taken,
            /// stay in registers (passed `&mut` themselves, every link kept
            /// them on the stack: GELU's light links 0.21 -> 0.39 ns per
            /// element, `chain_costs`).
            #[inline(always)]
            unsafe fn heavy(f: unsafe fn(&mut Regs), v: Regs) -> Regs {
                let mut copy = v;
                std::hint::black_box(f)(&mut copy);
                copy
            }

            /// An operand's vectors for the block (a copy of `prev` for the
            /// previous value).
            #[inline(always)]
            unsafe fn arg<const FULL: bool>(a: Arg<$t>, prev: &Regs, at: usize, masks: &[$mask; UNROLL]) -> Regs {
                match a {
                    Arg::Prev => *prev,
                    Arg::At(p) => std::array::from_fn(|k| load::<FULL>(p, at, k, masks)),
                    Arg::One(x) => [$set1(x); UNROLL],
                }
            }
        }

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
                    $module::run(links, start, len);
                    return true;
                }
                let _ = (links, start, len);
                false
            }

            unsafe fn run_chain_sum(links: &[Link<$t>], start: usize, len: usize) -> Option<$t> {
                let whole = sums_in_registers(len);
                #[cfg(target_arch = "x86_64")]
                if whole && available() && links.iter().all(|l| Self::has_link(l.op)) {
                    return Some($module::run_sum(links, start, len));
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

chain_impl!(
    f32,
    f32_lanes,
    __m512,
    u16,
    16,
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
    _mm512_mask_blend_ps,
    _mm512_castps_si512,
    _mm512_test_epi32_mask,
    transcendental: true,
    crate::elem::exp::lanes::exp16_tabled,
    crate::elem::tanh::lanes::tanh16,
    crate::kernels::reduce::row_lanes::f32_lanes
);
chain_impl!(
    f64,
    f64_lanes,
    __m512d,
    u8,
    8,
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
    _mm512_mask_blend_pd,
    _mm512_castpd_si512,
    _mm512_test_epi64_mask,
    transcendental: false,
    super::no_lanes,
    super::no_lanes,
    crate::kernels::reduce::row_lanes::f64_lanes
);

/// f64 Exp and Tanh have no lanes: `has_link` keeps them out of f64
/// chains, and `run_chain` refuses a chain with one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn no_lanes(_: std::arch::x86_64::__m512d) -> std::arch::x86_64::__m512d {
    std::arch::x86_64::_mm512_set1_pd(f64::NAN)
}

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
mod timing {
    use super::*;
    use std::time::Instant;

    fn time(name: &str, n: usize, f: &mut dyn FnMut()) {
        let reps = 20000;
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        eprintln!("{name}: {:.3} ns/elem", best * 1e9 / (reps * n) as f64);
    }

    fn link(op: LinkOp, a: Arg<f32>, b: Arg<f32>, store: *mut f32) -> Link<f32> {
        Link { op, a, b, c: Arg::One(0.0), store, stream: false }
    }

    #[test]
    #[ignore]
    fn chain_costs() {
        if !available() {
            return;
        }
        let n = 1024;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 512.0) / 200.0).collect();
        let (mut by_link, mut by_kernel) = (vec![0f32; n], vec![0f32; n]);
        let tanh_only = [link(LinkOp::Tanh, Arg::At(x.as_ptr()), Arg::One(0.0), by_link.as_mut_ptr())];
        // SAFETY: the link reads `n` values of `x` and writes `n` of `by_link`.
        time("tanh link", n, &mut || unsafe {
            f32::run_chain(&tanh_only, 0, n);
        });
        time("tanh kernel", n, &mut || crate::elem::tanh::tanh_f32_into(&x, &mut by_kernel));
        assert!(by_link.iter().zip(&by_kernel).all(|(a, b)| a.to_bits() == b.to_bits()));
        let mut gelu = vec![0f32; n];
        let xp = x.as_ptr();
        let none = std::ptr::null_mut();
        let chain = [
            link(LinkOp::Mul, Arg::At(xp), Arg::At(xp), none),
            link(LinkOp::Mul, Arg::Prev, Arg::At(xp), none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.044715), none),
            link(LinkOp::Add, Arg::At(xp), Arg::Prev, none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.797_884_6), none),
            link(LinkOp::Tanh, Arg::Prev, Arg::One(0.0), none),
            link(LinkOp::Add, Arg::Prev, Arg::One(1.0), none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.5), none),
            link(LinkOp::Mul, Arg::At(xp), Arg::Prev, gelu.as_mut_ptr()),
        ];
        // SAFETY: the links read `n` values of `x` and write `n` of `gelu`.
        time("gelu chain", n, &mut || unsafe {
            f32::run_chain(&chain, 0, n);
        });
        let u: Vec<f32> = x.iter().map(|&v| (v + v * v * v * 0.044715) * 0.797_884_6).collect();
        crate::elem::tanh::tanh_f32_into(&u, &mut by_kernel);
        for ((&v, &t), &g) in x.iter().zip(&by_kernel).zip(&gelu) {
            assert_eq!((v * ((t + 1.0) * 0.5)).to_bits(), g.to_bits(), "gelu({v})");
        }
        let light: Vec<_> = chain.iter().copied().filter(|l| l.op != LinkOp::Tanh).collect();
        // SAFETY: as above.
        time("gelu without tanh", n, &mut || unsafe {
            f32::run_chain(&light, 0, n);
        });
        layernorm_gelu(&x);
    }

    /// LayerNorm's last steps and GELU, as the tile runner links them for
    /// one 1024-position row (`add.15` stored: three later links read it).
    fn ln_gelu_links(x: *const f32, gamma: *const f32, beta: *const f32, kept: *mut f32, out: *mut f32) -> Vec<Link<f32>> {
        let none = std::ptr::null_mut();
        let k = kept as *const f32;
        vec![
            link(LinkOp::Sub, Arg::At(x), Arg::One(0.1), none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(1.3), none),
            link(LinkOp::Mul, Arg::Prev, Arg::At(gamma), none),
            link(LinkOp::Add, Arg::Prev, Arg::At(beta), kept),
            link(LinkOp::Mul, Arg::Prev, Arg::At(k), none),
            link(LinkOp::Mul, Arg::Prev, Arg::At(k), none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.044715), none),
            link(LinkOp::Add, Arg::At(k), Arg::Prev, none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.797_884_6), none),
            link(LinkOp::Tanh, Arg::Prev, Arg::One(0.0), none),
            link(LinkOp::Add, Arg::Prev, Arg::One(1.0), none),
            link(LinkOp::Mul, Arg::Prev, Arg::One(0.5), none),
            link(LinkOp::Mul, Arg::At(k), Arg::Prev, out),
        ]
    }

    /// The LayerNorm + GELU chain on one L1-resident row, and row by row
    /// over f32[4096, 1024] (the result written with plain stores, then
    /// streamed past the caches).
    fn layernorm_gelu(x: &[f32]) {
        let n = x.len();
        let gamma: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 * 1e-4).collect();
        let beta: Vec<f32> = (0..n).map(|i| i as f32 * 1e-4).collect();
        let (mut kept, mut out) = (vec![0f32; n], vec![0f32; n]);
        let links = ln_gelu_links(x.as_ptr(), gamma.as_ptr(), beta.as_ptr(), kept.as_mut_ptr(), out.as_mut_ptr());
        // SAFETY: every link reads `n` values of a vector of `n` and writes `n` of one.
        time("layernorm gelu chain, one row", n, &mut || unsafe {
            f32::run_chain(&links, 0, n);
        });
        let light: Vec<_> = links.iter().copied().filter(|l| l.op != LinkOp::Tanh).collect();
        // SAFETY: as above.
        time("layernorm gelu without tanh, one row", n, &mut || unsafe {
            f32::run_chain(&light, 0, n);
        });
        let rows = 4096;
        let big: Vec<f32> = (0..rows * n).map(|i| x[i % n] + (i / n) as f32 * 1e-3).collect();
        let mut big_out = vec![0f32; rows * n];
        for stream in [false, true] {
            let mut best = f64::INFINITY;
            for _ in 0..20 {
                let t = Instant::now();
                for r in 0..rows {
                    let mut links = ln_gelu_links(
                        big[r * n..].as_ptr(),
                        gamma.as_ptr(),
                        beta.as_ptr(),
                        kept.as_mut_ptr(),
                        big_out[r * n..].as_mut_ptr(),
                    );
                    links[12].stream = stream;
                    // SAFETY: row `r` of `big` and `big_out` has `n` values.
                    unsafe { f32::run_chain(&links, 0, n) };
                }
                crate::stream::fence();
                best = best.min(t.elapsed().as_secs_f64());
            }
            eprintln!("layernorm gelu chain, f32[4096,1024], streamed result {stream}: {:.3} ns/elem", best * 1e9 / (rows * n) as f64);
        }
    }
}
