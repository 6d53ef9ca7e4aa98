//! Writing large outputs past the caches (non-temporal stores).
//!
//! An element-wise op over arrays larger than the last-level cache streams
//! from memory anyway; an ordinary store first reads the destination line
//! into the cache (read for ownership), so `out = a + b` moves four bytes of
//! memory per three it needs. Non-temporal stores write whole lines
//! without reading them. The loop computes a few hundred bytes of results
//! into a buffer in L1, then copies the buffer out with streaming stores.
//! Measured on the project's 2-core AMD EPYC (f32 Add of 16M elements,
//! output in place of a previous one): 4.5–6.0 ms with ordinary stores,
//! 2.4–3.3 ms streaming through a 512-byte buffer.

use std::mem::{size_of, MaybeUninit};

/// Outputs of at least this many bytes are streamed: half the last-level
/// cache of the machines the engine is tuned on (32 MiB). A smaller result
/// may still be in the cache when the next instruction reads it.
pub const MIN_BYTES: usize = 16 << 20;

/// Bytes computed into L1 before each streaming copy (a multiple of 64).
const BUFFER_BYTES: usize = 512;

#[repr(C, align(64))]
struct Buffer([MaybeUninit<u8>; BUFFER_BYTES]);

/// Whether an output of `n` elements of `T` is written with streaming stores.
pub fn worth_it<T>(n: usize) -> bool {
    cfg!(target_arch = "x86_64") && n.saturating_mul(size_of::<T>()) >= MIN_BYTES
}

/// Fills `chunk` through `produce(offset, part)`, which must write every
/// element of `part` (the elements `offset..offset + part.len()` of
/// `chunk`). With `stream`, whole 512-byte blocks go through an L1 buffer
/// and out with streaming stores; the unaligned head and the tail are
/// produced in place.
#[inline(always)]
pub fn fill<T>(chunk: &mut [MaybeUninit<T>], stream: bool, mut produce: impl FnMut(usize, &mut [MaybeUninit<T>])) {
    let size = size_of::<T>();
    let addr = chunk.as_ptr() as usize;
    // The element size must divide the buffer (so it is a power of two and
    // the chunk reaches a 64-byte boundary after whole elements).
    let streamable =
        stream && size != 0 && BUFFER_BYTES.is_multiple_of(size) && addr.is_multiple_of(size) && std::mem::align_of::<T>() <= 64;
    let per_block = if streamable { BUFFER_BYTES / size } else { 0 };
    let head = if streamable { ((64 - addr % 64) % 64 / size).min(chunk.len()) } else { chunk.len() };
    let (first, rest) = chunk.split_at_mut(head);
    let blocks = rest.len().checked_div(per_block).unwrap_or(0);
    if blocks > 0 {
        let mut buffer = Buffer([MaybeUninit::uninit(); BUFFER_BYTES]);
        // SAFETY: the buffer is 64-byte aligned, at least `T`'s alignment
        // (checked above), and `per_block` elements fill it exactly.
        let staging: &mut [MaybeUninit<T>] = unsafe { std::slice::from_raw_parts_mut(buffer.0.as_mut_ptr().cast(), per_block) };
        for b in 0..blocks {
            produce(head + b * per_block, staging);
            let dst = &mut rest[b * per_block..(b + 1) * per_block];
            // SAFETY: `produce` wrote every element of `staging`; `dst` is
            // `BUFFER_BYTES` long and 64-byte aligned (`head` elements reach
            // the next 64-byte boundary and `BUFFER_BYTES` is a multiple of
            // 64); the bytes move the values once (the buffer never drops
            // them).
            // Read through `staging` itself, which holds the buffer's only
            // live borrow.
            unsafe { copy_streaming(dst.as_mut_ptr().cast(), staging.as_ptr().cast()) };
        }
    }
    let done = blocks * per_block;
    // One call site for the head and the tail (and the whole chunk when not
    // streaming) keeps one copy of `produce`'s loop besides the staging one.
    for (offset, part) in [(0, first), (head + done, &mut rest[done..])] {
        produce(offset, part);
    }
    if blocks > 0 {
        // SAFETY: an SSE fence, part of x86-64's baseline: orders the
        // streaming stores before anything this thread does next (the
        // task's completion, which other threads synchronize with).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    }
}

/// Orders this thread's streaming stores before anything it does next
/// (the end of its task, which other threads synchronize with).
pub fn fence() {
    // SAFETY: an SSE fence, part of x86-64's baseline.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Copies `BUFFER_BYTES` from `src` to `dst` with streaming stores, as
/// wide as [`crate::isa::isa`] allows (at one store a cycle, 16-byte
/// stores cost a tenth of an f32 Exp's time).
///
/// # Safety
/// `dst` and `src` are 64-byte aligned and valid for `BUFFER_BYTES` bytes.
#[inline(always)]
unsafe fn copy_streaming(dst: *mut u8, src: *const u8) {
    #[cfg(target_arch = "x86_64")]
    match crate::isa::isa() {
        // SAFETY (both): `isa()` never exceeds what the CPU has.
        crate::isa::Isa::Avx512 | crate::isa::Isa::Avx512Vbmi => copy_streaming_512(dst, src),
        crate::isa::Isa::Avx2 => copy_streaming_256(dst, src),
        crate::isa::Isa::Portable => copy_streaming_128(dst, src),
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(src, dst, BUFFER_BYTES);
}

/// # Safety
/// As [`copy_streaming`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn copy_streaming_128(dst: *mut u8, src: *const u8) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
    let (d, s) = (dst.cast::<__m128i>(), src.cast::<__m128i>());
    for k in 0..BUFFER_BYTES / 16 {
        _mm_stream_si128(d.add(k), _mm_load_si128(s.add(k)));
    }
}

/// # Safety
/// As [`copy_streaming`], on a CPU with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_streaming_256(dst: *mut u8, src: *const u8) {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_stream_si256};
    let (d, s) = (dst.cast::<__m256i>(), src.cast::<__m256i>());
    for k in 0..BUFFER_BYTES / 32 {
        _mm256_stream_si256(d.add(k), _mm256_load_si256(s.add(k)));
    }
}

/// # Safety
/// As [`copy_streaming`], on a CPU with AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_streaming_512(dst: *mut u8, src: *const u8) {
    use std::arch::x86_64::{__m512i, _mm512_load_si512, _mm512_stream_si512};
    let (d, s) = (dst.cast::<__m512i>(), src.cast::<__m512i>());
    for k in 0..BUFFER_BYTES / 64 {
        _mm512_stream_si512(d.add(k), _mm512_load_si512(s.add(k)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills `n` elements starting `skip` elements into an allocation, so
    /// that the chunk starts at every alignment, and checks every element.
    fn filled<T: Copy + PartialEq + std::fmt::Debug>(n: usize, skip: usize, of: impl Fn(usize) -> T) {
        let mut v: Vec<MaybeUninit<T>> = (0..n + skip).map(|_| MaybeUninit::uninit()).collect();
        fill(&mut v[skip..], true, |offset, part| {
            for (i, o) in part.iter_mut().enumerate() {
                o.write(of(offset + i));
            }
        });
        for i in 0..n {
            // SAFETY: `fill` wrote every element of the chunk.
            assert_eq!(unsafe { v[skip + i].assume_init() }, of(i), "n {n} skip {skip} at {i}");
        }
    }

    #[test]
    fn streaming_writes_every_element_at_every_alignment() {
        for n in [0, 1, 15, 16, 17, 127, 128, 129, 1000, 4096 + 7] {
            for skip in 0..5 {
                filled(n, skip, |i| i as u8);
                filled(n, skip, |i| i as u16);
                filled(n, skip, |i| i as f32);
                filled(n, skip, |i| i as f64);
                filled(n, skip, |i| (i as u64, !(i as u64)));
                // 3 bytes: not streamed (does not divide the buffer).
                filled(n, skip, |i| [i as u8; 3]);
            }
        }
    }
}
