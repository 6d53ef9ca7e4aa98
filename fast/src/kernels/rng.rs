//! Fast kernels for the random-number ops. Every generator here is
//! counter-based, so each output element (or Philox block) is computed
//! independently: the work is split across threads by output position.
//!
//! RngBitGenerator matches XLA CPU's bits (ThreeFry-2x32-20, Philox-4x32-10,
//! DEFAULT = Philox); RngUniform/RngNormal produce xlaref's documented
//! stream (docs/semantics-decisions.md), bit-identical to the reference engine.

use std::mem::MaybeUninit;

use xlaref_reference::ir::{Op, RngAlgorithm};
use xlaref_reference::literal::Stored;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::numerics::bits::Bits;
use xlaref_reference::types::{ArrayShape, ElementType, Shape, TypeClass};
use xlaref_reference::RunError;

use crate::elem::convert::{Dst, Src, V};
use crate::elem::float::{FFloat, Wide};
use crate::exec::Executor;
use crate::internal;
use crate::par;

type R<T> = Result<T, RunError>;

fn arr(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

pub fn eval(exec: &mut Executor, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
    match op {
        Op::RngBitGenerator { algorithm, shape: out } => {
            let state = arr(x[0])?.typed::<u64>().ok_or_else(|| internal("state"))?;
            let out = out.as_array().ok_or_else(|| internal("output shape"))?;
            let width = out.element_type.bit_width();
            let (new_state, words) = match algorithm {
                RngAlgorithm::ThreeFry => threefry(state, &out.dims, width),
                RngAlgorithm::Philox | RngAlgorithm::Default => philox(state, out.element_count(), width),
            };
            let bits = ArrayLiteral::with_shape(out.clone(), reinterpret(out.element_type, words)?);
            Ok(Literal::Tuple(vec![ArrayLiteral::from_vec(vec![new_state.len() as i64], new_state).into(), bits.into()]))
        }
        Op::RngUniform { .. } | Op::RngNormal { .. } => {
            let out = shape.as_array().ok_or_else(|| internal("result shape"))?;
            let key = exec.env.seed;
            let stream = exec.env.rng_draws;
            exec.env.rng_draws = stream.wrapping_add(1);
            let (p, q) = (arr(x[0])?, arr(x[1])?);
            let data = if matches!(op, Op::RngUniform { .. }) {
                uniform(key, stream, p, q, out)?
            } else {
                normal(key, stream, scalar_f64(p)?, scalar_f64(q)?, out)?
            };
            Ok(ArrayLiteral::with_shape(out.clone(), data).into())
        }
        _ => Err(internal("not an rng op")),
    }
}

// --- the block functions -----------------------------------------------------

#[inline(always)]
fn threefry_block(k0: u32, k1: u32, c: u64) -> (u32, u32) {
    let k2 = 0x1BD1_1BDA ^ k0 ^ k1;
    let ks = [k0, k1, k2];
    let (mut a, mut b) = ((c as u32).wrapping_add(k0), ((c >> 32) as u32).wrapping_add(k1));
    macro_rules! mix {
        ($r:expr) => {
            a = a.wrapping_add(b);
            b = b.rotate_left($r) ^ a;
        };
    }
    for inject in 1..=5u32 {
        if inject % 2 == 1 {
            mix!(13);
            mix!(15);
            mix!(26);
            mix!(6);
        } else {
            mix!(17);
            mix!(29);
            mix!(16);
            mix!(24);
        }
        a = a.wrapping_add(ks[inject as usize % 3]);
        b = b.wrapping_add(ks[(inject as usize + 1) % 3]).wrapping_add(inject);
    }
    (a, b)
}

#[inline(always)]
fn philox_block(key: u64, counter: u128) -> [u32; 4] {
    let (mut k0, mut k1) = (key as u32, (key >> 32) as u32);
    let (mut x0, mut x1, mut x2, mut x3) = (counter as u32, (counter >> 32) as u32, (counter >> 64) as u32, (counter >> 96) as u32);
    for _ in 0..10 {
        let m0 = u64::from(x0) * 0xD251_1F53;
        let m1 = u64::from(x2) * 0xCD9E_8D57;
        (x0, x1, x2, x3) = (((m1 >> 32) as u32) ^ x1 ^ k0, m1 as u32, ((m0 >> 32) as u32) ^ x3 ^ k1, m0 as u32);
        k0 = k0.wrapping_add(0x9E37_79B9);
        k1 = k1.wrapping_add(0xBB67_AE85);
    }
    [x0, x1, x2, x3]
}

/// Fills `n` words in parallel; `fill(start, chunk)` as in `par::build`.
fn words(n: usize, fill: impl Fn(usize, &mut [MaybeUninit<u64>]) + Sync) -> Vec<u64> {
    par::build(n, fill)
}

// --- RngBitGenerator -----------------------------------------------------------

/// XLA's ThreeFry layout: 64-bit elements take one counter each; narrower
/// ones split a dimension (the first even one, else the first largest) in
/// halves and take the two words of one counter from neighbouring indices.
fn threefry(state: &[u64], dims: &[i64], width: u32) -> (Vec<u64>, Vec<u64>) {
    let (key, base) = (state[0], state[1]);
    let (k0, k1) = (key as u32, (key >> 32) as u32);
    let n: usize = dims.iter().map(|&d| d as usize).product();
    if width == 64 {
        let w = words(n, |start, chunk| {
            for (i, o) in chunk.iter_mut().enumerate() {
                let (a, b) = threefry_block(k0, k1, base.wrapping_add((start + i) as u64));
                o.write(u64::from(a) | u64::from(b) << 32);
            }
        });
        return (vec![key, base.wrapping_add(n as u64)], w);
    }
    // outer × split × inner, with the split dimension halved for counters.
    let (outer, split, inner) = match dims.iter().position(|&d| d % 2 == 0) {
        _ if dims.is_empty() => (1usize, 1usize, 1usize),
        Some(s) => parts(dims, s),
        None => {
            let max = dims.iter().copied().max().unwrap_or(1);
            parts(dims, dims.iter().position(|&d| d == max).unwrap_or(0))
        }
    };
    let half = split.div_ceil(2);
    let w = words(n, |start, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            let p = start + i;
            let (rest, r) = (p / inner.max(1), p % inner.max(1));
            let (q, j) = (rest / split.max(1), rest % split.max(1));
            let counter = (q * half + j / 2) * inner + r;
            let (a, b) = threefry_block(k0, k1, base.wrapping_add(counter as u64));
            o.write(u64::from(if j % 2 == 0 { a } else { b }));
        }
    });
    (vec![key, base.wrapping_add((outer * half * inner) as u64)], w)
}

fn parts(dims: &[i64], s: usize) -> (usize, usize, usize) {
    let outer = dims[..s].iter().map(|&d| d as usize).product();
    let inner = dims[s + 1..].iter().map(|&d| d as usize).product();
    (outer, dims[s] as usize, inner)
}

/// XLA's Philox layout: the words of consecutive 128-bit counters, four per
/// block; 64-bit elements join two words.
fn philox(state: &[u64], n: usize, width: u32) -> (Vec<u64>, Vec<u64>) {
    let key = state[0];
    let high = if state.len() >= 3 { state[2] } else { state[0] };
    let counter = u128::from(state[1]) | u128::from(high) << 64;
    let per_block = if width == 64 { 2 } else { 4 };
    let blocks = n.div_ceil(per_block);
    // Chunks of `par::build` start at multiples of its chunk size (a power of
    // two), so each chunk starts on a block boundary.
    let w = words(n, |start, chunk| {
        let mut i = 0;
        while i < chunk.len() {
            let e = start + i;
            let b = philox_block(key, counter.wrapping_add((e / per_block) as u128));
            let first = e % per_block;
            for slot in first..per_block {
                if i >= chunk.len() {
                    break;
                }
                let v = if width == 64 { u64::from(b[2 * slot]) | u64::from(b[2 * slot + 1]) << 32 } else { u64::from(b[slot]) };
                chunk[i].write(v);
                i += 1;
            }
        }
    });
    let next = counter.wrapping_add(blocks as u128);
    let new_state = if state.len() >= 3 { vec![key, next as u64, (next >> 64) as u64] } else { vec![key, next as u64] };
    (new_state, w)
}

/// The low bits of each word as the output type's bit pattern.
fn reinterpret(t: ElementType, w: Vec<u64>) -> R<Data> {
    fn low_bits<T: Bits + Stored>(w: &[u64]) -> Data {
        T::wrap(par::map(w, |x| T::with_bits(u128::from(x))))
    }
    if matches!(t.class(), TypeClass::Pred | TypeClass::Complex) {
        return Err(internal("output type"));
    }
    Ok(xlaref_reference::with_type!(t, T => low_bits::<T>(&w)))
}

// --- RngUniform / RngNormal ----------------------------------------------------

const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// Block `i` of stream `(key, stream)` as (words 0-1, words 2-3).
#[inline(always)]
fn stream_block(key: u64, stream: u64, i: u64) -> (u64, u64) {
    let b = philox_block(key, u128::from(i) | u128::from(stream) << 64);
    (u64::from(b[0]) | u64::from(b[1]) << 32, u64::from(b[2]) | u64::from(b[3]) << 32)
}

/// The first element of a scalar, exactly.
fn scalar(a: &ArrayLiteral) -> Option<V> {
    xlaref_reference::with_data!(&a.data, v => v.first().map(|x| x.v()))
}

fn scalar_f64(a: &ArrayLiteral) -> R<f64> {
    match scalar(a) {
        Some(V::F(x)) => Ok(x),
        _ => Err(internal("float scalar")),
    }
}

fn scalar_i128(a: &ArrayLiteral) -> R<i128> {
    match scalar(a) {
        Some(V::B(b)) => Ok(i128::from(b)),
        Some(V::I(x)) => Ok(i128::from(x)),
        Some(V::U(x)) => Ok(i128::from(x)),
        _ => Err(internal("integer scalar")),
    }
}

fn uniform(key: u64, stream: u64, p: &ArrayLiteral, q: &ArrayLiteral, out: &ArrayShape) -> R<Data> {
    let n = out.element_count();
    let t = out.element_type;
    if t.is_float() {
        let (a, b) = (scalar_f64(p)?, scalar_f64(q)?);
        if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) {
            return floats(t, vec![a; n], None);
        }
        let v = par::build(n, |start, chunk| {
            for (i, o) in chunk.iter_mut().enumerate() {
                let u = (stream_block(key, stream, (start + i) as u64).1 >> 11) as f64 * TWO_POW_M53;
                let x = (1.0 - u) * a + u * b;
                o.write(x.clamp(a, b));
            }
        });
        return floats(t, v, Some(b));
    }
    let (a, b) = (scalar_i128(p)?, scalar_i128(q)?);
    let v: Vec<i128> = if a < b {
        let range = (b - a) as u64 as u128;
        par::build(n, |start, chunk| {
            for (i, o) in chunk.iter_mut().enumerate() {
                let (lo, hi) = stream_block(key, stream, (start + i) as u64);
                // floor((hi·2^64 + lo) · range / 2^128)
                let carry = (u128::from(lo) * range) >> 64;
                let r = ((u128::from(hi) * range + carry) >> 64) as i128;
                o.write(a + r);
            }
        })
    } else {
        vec![a; n]
    };
    // Two's-complement truncation of a value in [a, b): its bits in the type.
    fn wrapped<T: Bits + Stored>(v: &[i128]) -> Data {
        T::wrap(v.iter().map(|&x| T::with_bits(x as u128)).collect())
    }
    if !(t.is_integer() || t.is_pred()) {
        return Err(internal("uniform type"));
    }
    Ok(xlaref_reference::with_type!(t, T => wrapped::<T>(&v)))
}

fn normal(key: u64, stream: u64, mu: f64, sigma: f64, out: &ArrayShape) -> R<Data> {
    let v = par::build(out.element_count(), |start, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            let (lo, hi) = stream_block(key, stream, (start + i) as u64);
            let u1 = ((lo >> 11) + 1) as f64 * TWO_POW_M53;
            let u2 = (hi >> 11) as f64 * TWO_POW_M53;
            let radius = (-2.0 * libm::log(u1)).sqrt();
            o.write(mu + sigma * (radius * libm::cos(std::f64::consts::TAU * u2)));
        }
    });
    floats(out.element_type, v, None)
}

/// Rounds f64 values into float type `t` (narrower types through f32); with
/// `below: Some(b)`, a result equal to `b` steps down to the type's next
/// value below `b`.
fn floats(t: ElementType, v: Vec<f64>, below: Option<f64>) -> R<Data> {
    /// Each value rounded to `T` (narrower types through f32, as the
    /// reference); with `below`, a value that rounds up to it or past it
    /// steps down to the float just below it.
    fn rounded<T: FFloat + Dst + Stored>(v: &[f64], below: Option<f64>) -> Data {
        let to = |x: f64| T::from_v(V::F(if T::WIDTH == 64 { x } else { f64::from(x as f32) }));
        let limit = below.map(to);
        T::wrap(par::map(v, |x| {
            let y = to(x);
            match (below, limit) {
                (Some(b), Some(l)) if y.up().to_f64() >= b => T::from_bits(down_bits(l.bits(), T::WIDTH - 1)),
                _ => y,
            }
        }))
    }
    xlaref_reference::by_type!(t, T => {
        pred: Err(internal("float type")),
        int: Err(internal("float type")),
        float: Ok(rounded::<T>(&v, below)),
        complex: Err(internal("float type")),
    })
}

/// One step toward -inf on a sign-magnitude pattern with the sign at bit `s`.
fn down_bits(bits: u64, s: u32) -> u64 {
    let sign = 1u64 << s;
    match (bits & sign != 0, bits & !sign) {
        (_, 0) => sign | 1,
        (false, _) => bits - 1,
        (true, _) => bits + 1,
    }
}
