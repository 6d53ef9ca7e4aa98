//! Native orders: comparators recognised as one `Compare` of the two
//! parameters of one operand, and integer keys whose unsigned order is the
//! element order.

use rayon::prelude::*;
use xlaref_reference::ir::{ComputationId, Direction, Op};
use xlaref_reference::literal::{Data, Stored};
use xlaref_reference::numerics::bits::Bits;

use crate::elem::float::{order_key, FFloat, Wide};
use crate::exec::Executor;
use crate::par;

/// A comparator that is `Compare(direction, total)` of operand `operand`'s
/// two parameters, first position on the left.
#[derive(Clone, Copy, Debug)]
pub struct Native {
    pub operand: usize,
    pub direction: Direction,
    pub total: bool,
}

/// The direction with its two sides swapped: `a < b` is `b > a`.
fn flip(d: Direction) -> Direction {
    match d {
        Direction::Lt => Direction::Gt,
        Direction::Gt => Direction::Lt,
        Direction::Le => Direction::Ge,
        Direction::Ge => Direction::Le,
        other => other,
    }
}

/// Recognises a comparator whose root compares parameters `2k` and `2k + 1`.
pub fn recognize(exec: &Executor, id: ComputationId) -> Option<Native> {
    let c = exec.module.computation(id);
    let root = c.instructions.get(c.root)?;
    let Op::Compare { direction, total_order, .. } = &root.op else { return None };
    let param = |i: usize| (i < c.param_count && matches!(c.instructions[i].op, Op::Parameter { number } if number == i)).then_some(i);
    let (a, b) = (param(*root.operands.first()?)?, param(*root.operands.get(1)?)?);
    if a / 2 != b / 2 || a == b {
        return None;
    }
    let direction = if a % 2 == 0 { *direction } else { flip(*direction) };
    Some(Native { operand: a / 2, direction, total: *total_order })
}

#[inline(always)]
pub fn holds<T: PartialOrd>(d: Direction, a: T, b: T) -> bool {
    match d {
        Direction::Eq => a == b,
        Direction::Ne => a != b,
        Direction::Lt => a < b,
        Direction::Le => a <= b,
        Direction::Gt => a > b,
        Direction::Ge => a >= b,
    }
}

/// A float's total-order key, shifted to `[0, 2^width)`; with `merge_zeros`
/// both zeros get the key of +0 (the IEEE order, for NaN-free data).
#[inline(always)]
fn float_key<T: FFloat>(x: T, merge_zeros: bool) -> u64 {
    let sign = 1u64 << (T::WIDTH - 1);
    let x = if merge_zeros && x.bits() & (sign - 1) == 0 { T::from_bits(0) } else { x };
    (order_key(x) as u64).wrapping_add(sign) & (if T::WIDTH == 64 { u64::MAX } else { (1u64 << T::WIDTH) - 1 })
}

/// An integer's (or pred's) key: its bits, with the sign bit flipped for
/// signed types so that the unsigned order is the numeric order.
#[inline(always)]
fn int_key<T: Bits>(x: T) -> u64 {
    let bits = x.bits() as u64;
    if T::TYPE.is_signed_integer() {
        bits ^ 1 << (T::TYPE.bit_width() - 1)
    } else {
        bits
    }
}

/// The width of [`int_key`]'s keys (pred: one bit).
fn int_key_width<T: Bits>() -> u32 {
    if T::TYPE.is_pred() {
        1
    } else {
        T::TYPE.bit_width()
    }
}

/// Keys whose ascending unsigned order is the element order (integers
/// numerically, pred false < true, floats by the total order or, with
/// `merge_zeros`, by IEEE order with -0 = +0), and their width in bits.
/// None for complex numbers.
pub fn ascending_keys(data: &Data, merge_zeros: bool) -> Option<(Vec<u64>, u32)> {
    fn fk<T: FFloat>(v: &[T], merge_zeros: bool) -> (Vec<u64>, u32) {
        (par::map(v, |x| float_key(x, merge_zeros)), T::WIDTH)
    }
    fn ik<T: Bits>(v: &[T]) -> (Vec<u64>, u32) {
        (par::map(v, int_key), int_key_width::<T>())
    }
    Some(xlaref_reference::by_class!(data, v => {
        pred: ik(v),
        int: ik(v),
        float: fk(v, merge_zeros),
        complex: return None,
    }))
}

/// Real float elements as f64 (exact), with whether any is NaN; None for
/// other types.
pub fn float_values(data: &Data) -> Option<(Vec<f64>, bool)> {
    fn fv<T: FFloat>(v: &[T]) -> (Vec<f64>, bool) {
        let w = par::map(v, |x| x.up().to_f64());
        let nan = w.par_iter().any(|x| x.is_nan());
        (w, nan)
    }
    Some(xlaref_reference::by_class!(data, v => {
        pred: return None,
        int: return None,
        float: fv(v),
        complex: return None,
    }))
}

/// Writes into `out` the positions `0..n` of the `out.len()` first
/// elements in ascending (or descending) key order, ties by position: the
/// stable order. `key(p)` is below `2^width`.
pub fn key_sort(key: impl Fn(usize) -> u64 + Sync, n: usize, width: u32, descending: bool, out: &mut [usize]) {
    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    let k = |p: usize| if descending { mask - key(p) } else { key(p) };
    let take = out.len().min(n);
    let big = n >= par::PARALLEL_THRESHOLD;
    fn order<T: Ord + Send + Copy>(v: &mut [T], take: usize, big: bool) {
        if take == 0 {
            return;
        }
        if take < v.len() / 8 {
            v.select_nth_unstable(take - 1);
            v[..take].sort_unstable();
        } else if big {
            v.par_sort_unstable();
        } else {
            v.sort_unstable();
        }
    }
    if width <= 32 && n <= 1 << 32 {
        let mut v: Vec<u64> = par::build(n, |start, chunk| {
            for (j, o) in chunk.iter_mut().enumerate() {
                o.write(k(start + j) << 32 | (start + j) as u64);
            }
        });
        order(&mut v, take, big);
        for (o, x) in out.iter_mut().zip(&v) {
            *o = (x & 0xffff_ffff) as usize;
        }
    } else {
        let mut v: Vec<u128> = par::build(n, |start, chunk| {
            for (j, o) in chunk.iter_mut().enumerate() {
                o.write((k(start + j) as u128) << 64 | (start + j) as u128);
            }
        });
        order(&mut v, take, big);
        for (o, x) in out.iter_mut().zip(&v) {
            *o = *x as u64 as usize;
        }
    }
}

/// The one operand of a sort along contiguous slices of `n`, sorted in
/// place of a copy by its key (ascending, or descending) — the reference's
/// stable order without a permutation. Elements with equal keys are equal
/// values, so an unstable sort is enough, except for the IEEE order of
/// floats (`ieee`; the caller has checked that there is no NaN) where -0
/// ties with +0: there the run of zeros is rewritten with the slice's zeros
/// in their input order, as a stable sort leaves them. None for complex
/// numbers.
pub fn sort_values(data: &Data, ieee: bool, descending: bool, n: usize) -> Option<Data> {
    fn run<T: Copy + Send + Sync>(v: &[T], n: usize, descending: bool, key: impl Fn(T) -> u64 + Sync, zero: Option<u64>) -> Vec<T> {
        let mut out = v.to_vec();
        let width = (std::mem::size_of::<T>() * 8) as u32;
        let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
        let key = |x: &T| if descending { mask - key(*x) } else { key(*x) };
        let sort_slice = |(s, input): (&mut [T], &[T])| {
            if s.len() >= RADIX_MIN {
                // Stable: ties (the zeros) keep their input order.
                radix_sort(s, width, key);
                return;
            }
            s.sort_unstable_by_key(key);
            if let Some(z) = zero {
                let z = if descending { mask - z } else { z };
                let first = s.partition_point(|x| key(x) < z);
                let zeros = input.iter().filter(|x| key(x) == z);
                for (slot, &x) in s[first..].iter_mut().zip(zeros) {
                    *slot = x;
                }
            }
        };
        if n == 0 {
        } else if out.len() < par::PARALLEL_THRESHOLD || n >= par::PARALLEL_THRESHOLD {
            out.chunks_mut(n).zip(v.chunks(n)).for_each(sort_slice);
        } else {
            out.par_chunks_mut(n).zip(v.par_chunks(n)).for_each(sort_slice);
        }
        out
    }
    fn fl<T: FFloat>(v: &[T], n: usize, ieee: bool, descending: bool) -> Vec<T> {
        run(v, n, descending, |x| float_key(x, ieee), ieee.then(|| float_key(T::from_bits(0), true)))
    }
    fn int<T: Bits + Stored>(v: &[T], n: usize, descending: bool) -> Data {
        T::wrap(run(v, n, descending, int_key, None))
    }
    fn float<T: FFloat + Stored>(v: &[T], n: usize, ieee: bool, descending: bool) -> Data {
        T::wrap(fl(v, n, ieee, descending))
    }
    Some(xlaref_reference::by_class!(data, v => {
        pred: int(v, n, descending),
        int: int(v, n, descending),
        float: float(v, n, ieee, descending),
        complex: return None,
    }))
}

/// Slices at least this long are radix sorted.
const RADIX_MIN: usize = 1 << 12;

/// Least-significant-digit radix sort of `s` by `key` (below `2^width`),
/// one byte per pass, stable. Passes whose byte is the same for every
/// element are skipped.
fn radix_sort<T: Copy>(s: &mut [T], width: u32, key: impl Fn(&T) -> u64) {
    let passes = width.div_ceil(8) as usize;
    let mut counts = vec![[0usize; 256]; passes];
    for x in s.iter() {
        let k = key(x);
        for (p, c) in counts.iter_mut().enumerate() {
            c[(k >> (8 * p)) as usize & 255] += 1;
        }
    }
    let mut buffer = s.to_vec();
    let mut in_buffer = false;
    for (p, c) in counts.iter().enumerate() {
        if c.contains(&s.len()) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (n, &count) in next.iter_mut().zip(c) {
            *n = sum;
            sum += count;
        }
        let (from, to): (&[T], &mut [T]) = if in_buffer { (&buffer, s) } else { (s, &mut buffer) };
        for x in from {
            let d = (key(x) >> (8 * p)) as usize & 255;
            to[next[d]] = *x;
            next[d] += 1;
        }
        in_buffer = !in_buffer;
    }
    if in_buffer {
        s.copy_from_slice(&buffer);
    }
}

/// Whether a real float array holds a NaN; false for other types.
pub fn has_nan(data: &Data) -> bool {
    fn any<T: FFloat>(v: &[T]) -> bool {
        v.par_iter().any(|&x| x.up().is_nan())
    }
    xlaref_reference::by_class!(data, v => {
        pred: false,
        int: false,
        float: any(v),
        complex: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's order: a stable sort by `<` (or `>`) of the IEEE
    /// values (NaN-free here), or by the total order.
    fn stable(v: &[f32], total: bool, descending: bool) -> Vec<f32> {
        let mut s = v.to_vec();
        let cmp = |a: &f32, b: &f32| if total { a.total_cmp(b) } else { a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal) };
        if descending {
            s.sort_by(|a, b| cmp(b, a));
        } else {
            s.sort_by(cmp);
        }
        s
    }

    #[test]
    fn sorted_values_match_a_stable_sort_at_the_radix_boundary() {
        for n in [0usize, 1, 2, 17, RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 1, 3 * RADIX_MIN + 5] {
            // Many ±0 ties (stability shows), subnormals, infinities.
            let v: Vec<f32> = (0..n)
                .map(|i| match i % 9 {
                    0 => -0.0,
                    1 => 0.0,
                    2 => f32::from_bits(1),
                    3 => f32::NEG_INFINITY,
                    _ => ((i * 7919) % 2003) as f32 - 1000.5,
                })
                .collect();
            for (total, descending) in [(false, false), (false, true), (true, false), (true, true)] {
                let Some(Data::F32(got)) = sort_values(&Data::F32(v.clone()), !total, descending, n.max(1)) else { panic!("f32 sorts") };
                let want = stable(&v, total, descending);
                let bits = |s: &[f32]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "n = {n}, total = {total}, descending = {descending}");
            }
            // Integers, in rows of 5 (many slices).
            let ints: Vec<i16> = (0..n).map(|i| ((i * 7919) % 65521) as i16).collect();
            if n % 5 == 0 && n > 0 {
                let Some(Data::S16(got)) = sort_values(&Data::S16(ints.clone()), false, true, 5) else { panic!("s16 sorts") };
                for (g, row) in got.chunks(5).zip(ints.chunks(5)) {
                    let mut want = row.to_vec();
                    want.sort_by(|a, b| b.cmp(a));
                    assert_eq!(g, &want[..]);
                }
            }
        }
    }
}
