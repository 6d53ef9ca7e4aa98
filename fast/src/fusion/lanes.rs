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

use crate::isa::{isa, Isa};

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

/// One member: `op(a, b)` (`b` unused by the unary ones), stored to
/// `store[p]` when `store` is not null.
#[derive(Clone, Copy)]
pub(super) struct Link<T> {
    pub op: LinkOp,
    pub a: Arg<T>,
    pub b: Arg<T>,
    pub store: *mut T,
}

/// The element types chains run on.
pub(super) trait ChainFloat: Copy {
    /// Whether chains of this type run here (f32 and f64 on AVX-512).
    fn chains() -> bool;

    /// Runs `links` over positions `0..len`; false when this CPU has no
    /// vector unit for it (the caller runs the members one by one).
    ///
    /// # Safety
    /// Every `At` pointer is valid for reading `len` elements and every
    /// `store` for writing `len`, and a store never overlaps a pointer read
    /// by an earlier member of the chain except at positions that member
    /// has already read (the tile runner's buffer assignment).
    unsafe fn run_chain(links: &[Link<Self>], len: usize) -> bool;
}

/// Whether this CPU runs chains.
pub(super) fn available() -> bool {
    cfg!(target_arch = "x86_64") && isa() >= Isa::Avx512
}

macro_rules! chain_impl {
    ($t:ty, $module:ident, $vec:ty, $mask:ty, $lanes:expr,
     $maskz_loadu:ident, $mask_storeu:ident, $set1:ident,
     $add:ident, $sub:ident, $mul:ident, $div:ident, $sqrt:ident, $xor:ident, $andnot:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::{Arg, Link, LinkOp};
            use std::arch::x86_64::*;

            /// Vectors per block: a link's dispatch is paid once for
            /// this many, and the block's values still fit the 32
            /// registers (operands included).
            const UNROLL: usize = 8;
            type Regs = [$vec; UNROLL];

            /// See [`super::ChainFloat::run_chain`]; the CPU has AVX-512F and DQ.
            #[target_feature(enable = "avx512f,avx512dq")]
            pub(super) unsafe fn run(links: &[Link<$t>], len: usize) {
                const BLOCK: usize = $lanes * UNROLL;
                let mut i = 0;
                while i + BLOCK <= len {
                    block(links, i, [<$mask>::MAX; UNROLL]);
                    i += BLOCK;
                }
                if i < len {
                    // Masked-out lanes are neither read nor written.
                    let mut masks = [0; UNROLL];
                    for (k, m) in masks.iter_mut().enumerate() {
                        let left = (len - i).saturating_sub(k * $lanes).min($lanes);
                        *m = ((1u32 << left) - 1) as $mask;
                    }
                    block(links, i, masks);
                }
            }

            /// Positions `at..at + lanes·UNROLL` (those in `masks`) through
            /// every link.
            #[inline(always)]
            unsafe fn block(links: &[Link<$t>], at: usize, masks: [$mask; UNROLL]) {
                let zero = $set1(0.0);
                let sign = $set1(-0.0);
                let mut v: Regs = [zero; UNROLL];
                for l in links {
                    let a = arg(l.a, &v, at, &masks);
                    let mut r: Regs = [zero; UNROLL];
                    match l.op {
                        LinkOp::Add => {
                            let b = arg(l.b, &v, at, &masks);
                            for k in 0..UNROLL {
                                r[k] = $add(a[k], b[k]);
                            }
                        }
                        LinkOp::Sub => {
                            let b = arg(l.b, &v, at, &masks);
                            for k in 0..UNROLL {
                                r[k] = $sub(a[k], b[k]);
                            }
                        }
                        LinkOp::Mul => {
                            let b = arg(l.b, &v, at, &masks);
                            for k in 0..UNROLL {
                                r[k] = $mul(a[k], b[k]);
                            }
                        }
                        LinkOp::Div => {
                            let b = arg(l.b, &v, at, &masks);
                            for k in 0..UNROLL {
                                r[k] = $div(a[k], b[k]);
                            }
                        }
                        LinkOp::Neg => {
                            for k in 0..UNROLL {
                                r[k] = $xor(a[k], sign);
                            }
                        }
                        LinkOp::Abs => {
                            for k in 0..UNROLL {
                                r[k] = $andnot(sign, a[k]);
                            }
                        }
                        LinkOp::Sqrt => {
                            for k in 0..UNROLL {
                                r[k] = $sqrt(a[k]);
                            }
                        }
                        LinkOp::Rsqrt => {
                            for k in 0..UNROLL {
                                r[k] = $div($set1(1.0), $sqrt(a[k]));
                            }
                        }
                    }
                    v = r;
                    if !l.store.is_null() {
                        for k in 0..UNROLL {
                            $mask_storeu(l.store.add(at + k * $lanes), masks[k], v[k]);
                        }
                    }
                }
            }

            #[inline(always)]
            unsafe fn arg(a: Arg<$t>, prev: &Regs, at: usize, masks: &[$mask; UNROLL]) -> Regs {
                match a {
                    Arg::Prev => *prev,
                    Arg::At(p) => {
                        let mut r = *prev;
                        for k in 0..UNROLL {
                            r[k] = $maskz_loadu(masks[k], p.add(at + k * $lanes));
                        }
                        r
                    }
                    Arg::One(x) => [$set1(x); UNROLL],
                }
            }
        }

        impl ChainFloat for $t {
            fn chains() -> bool {
                available()
            }

            unsafe fn run_chain(links: &[Link<$t>], len: usize) -> bool {
                #[cfg(target_arch = "x86_64")]
                if available() {
                    $module::run(links, len);
                    return true;
                }
                let _ = (links, len);
                false
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
    _mm512_maskz_loadu_ps,
    _mm512_mask_storeu_ps,
    _mm512_set1_ps,
    _mm512_add_ps,
    _mm512_sub_ps,
    _mm512_mul_ps,
    _mm512_div_ps,
    _mm512_sqrt_ps,
    _mm512_xor_ps,
    _mm512_andnot_ps
);
chain_impl!(
    f64,
    f64_lanes,
    __m512d,
    u8,
    8,
    _mm512_maskz_loadu_pd,
    _mm512_mask_storeu_pd,
    _mm512_set1_pd,
    _mm512_add_pd,
    _mm512_sub_pd,
    _mm512_mul_pd,
    _mm512_div_pd,
    _mm512_sqrt_pd,
    _mm512_xor_pd,
    _mm512_andnot_pd
);

/// Half-precision values round after every op: no chains.
macro_rules! no_chains {
    ($($t:ty),*) => {$(
        impl ChainFloat for $t {
            fn chains() -> bool {
                false
            }

            unsafe fn run_chain(_: &[Link<$t>], _: usize) -> bool {
                false
            }
        }
    )*};
}

no_chains!(half::f16, half::bf16);
