//! A global allocator that keeps a few recently freed large blocks for
//! reuse, as XLA's own allocator keeps its buffers.
//!
//! Why: the system allocator gives every large array fresh pages from the
//! kernel and returns them when the array is freed, so each result of a
//! large element-wise op pays one page fault per 4 KiB before a single
//! value is written — a third of an `Add` of 16M floats. Campaigns and
//! benchmarks run the same shapes again and again; a freed block of exactly
//! the size asked for is handed back with its pages already mapped.
//!
//! Only blocks of at least [`LARGE`] bytes (128 KiB) are kept, at most [`SLOTS`] of
//! them, and never more bytes than [`SPARE`] plus the bytes in use: a run's
//! peak (arrays in use plus kept blocks) stays under twice its arrays plus
//! 64 MiB. A miss evicts the oldest blocks only as far as that bound
//! needs. (It used to release the whole cache: a program that alternates
//! two sizes, like attention's 1 MiB projections and 8 MiB score
//! matrices, then faulted in every 8 MiB result afresh, 3 ms each.)
//!
//! Blocks of at least [`HUGE`] bytes are also aligned to 2 MiB and advised
//! to the kernel as transparent huge pages (`MADV_HUGEPAGE`; the hosts this
//! project runs on enable them on advice only). A 64 MB array then takes
//! 32 TLB entries instead of 16384. On the AMD EPYC machine (three
//! interleaved rounds against the binary without it) Add of 16M f32 went
//! from 4.9–5.6 to 3.3–3.6 ms and Reduce sum from 1.6–1.9 to 1.1–1.9 ms,
//! while Transpose 4096² lost 6% (21.5 to 22.8 ms: physically contiguous
//! 2 MiB pages make its power-of-two row stride hit the same cache sets).
//! Smaller blocks are left alone: 4 MiB blocks gained nothing measurable.
//!
//! It also counts the bytes handed out and not yet freed
//! (`xlaref_reference::watch::BYTES_IN_USE`): the byte budget of
//! `--max-bytes` is checked against that count before every op. Blocks
//! kept in the cache are not counted; they are given back before the
//! system is asked for a new large block.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};
use xlaref_reference::watch::BYTES_IN_USE;

/// Blocks smaller than this go straight to the system allocator. 128 KiB
/// is where glibc starts mapping blocks afresh (its initial `mmap`
/// threshold): below it freed memory stays in its heap and is reused
/// without faults. With 1 MiB here, the values of a few hundred KiB were
/// mapped and faulted in again on every run: attention at S = 256, whose
/// projections and head transposes are 512 KiB, took 4.45 ms against
/// 3.66 now (page faults of a `bench --programs` run 37.3k → 17.3k; each
/// head transpose 0.15 → 0.05 ms).
const LARGE: usize = 128 << 10;
/// Room for a program's medium values as well as its large ones.
const SLOTS: usize = 32;
/// Bytes the cache may keep beyond the bytes in use.
const SPARE: usize = 64 << 20;
/// Blocks this large are huge-page aligned and advised.
const HUGE: usize = 16 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// The layout a block is allocated with from `System`: the caller's, or for
/// a huge block the same size aligned to a huge page.
fn system_layout(layout: Layout) -> Layout {
    if layout.size() >= HUGE && layout.align() < HUGE_PAGE {
        // A power of two no smaller than the original alignment, and the
        // size is far below isize::MAX (the caller's layout was valid and
        // HUGE_PAGE is small), so this cannot fail; fall back regardless.
        Layout::from_size_align(layout.size(), HUGE_PAGE).unwrap_or(layout)
    } else {
        layout
    }
}

/// A fresh block from `System`; huge blocks are advised as huge pages over
/// their whole 2 MiB pages (the tail keeps small pages, so no page is
/// committed beyond what the array touches).
unsafe fn system_alloc(layout: Layout) -> *mut u8 {
    let p = System.alloc(system_layout(layout));
    #[cfg(target_os = "linux")]
    if !p.is_null() && layout.size() >= HUGE {
        // SAFETY: `p` starts a mapped block of `layout.size()` bytes,
        // aligned to HUGE_PAGE; the advice covers a prefix of it and only
        // changes how the kernel backs those pages. Failure is harmless
        // (the pages stay small), so the result is not checked.
        libc::madvise(p.cast(), layout.size() & !(HUGE_PAGE - 1), libc::MADV_HUGEPAGE);
    }
    p
}

#[derive(Clone, Copy)]
struct Block {
    ptr: *mut u8,
    size: usize,
    align: usize,
    /// When it was kept (a count of kept blocks): the oldest goes first.
    kept: u64,
}

struct Cache {
    blocks: [Option<Block>; SLOTS],
    bytes: usize,
    kept: u64,
}

impl Cache {
    /// Takes the oldest blocks out until at most `budget` bytes are kept;
    /// they go to `out` (freed by the caller, outside the lock).
    fn evict_to(&mut self, budget: usize, out: &mut [Option<Block>; SLOTS]) {
        while self.bytes > budget {
            let oldest = self.blocks.iter().enumerate().filter_map(|(i, b)| b.map(|b| (b.kept, i))).min();
            let Some((_, i)) = oldest else { break };
            if let Some(b) = self.blocks[i].take() {
                self.bytes -= b.size;
                if let Some(slot) = out.iter_mut().find(|o| o.is_none()) {
                    *slot = Some(b);
                }
            }
        }
    }
}

/// The most bytes the cache keeps while `in_use` bytes are handed out.
fn budget(in_use: usize) -> usize {
    SPARE.saturating_add(in_use)
}

/// The allocator: the system's, with the cache in front for large blocks.
pub struct BlockCache {
    locked: AtomicBool,
    cache: std::cell::UnsafeCell<Cache>,
}

// SAFETY: `cache` is only touched while `locked` is held (see `with`).
unsafe impl Sync for BlockCache {}

impl BlockCache {
    pub const fn new() -> BlockCache {
        BlockCache { locked: AtomicBool::new(false), cache: std::cell::UnsafeCell::new(Cache { blocks: [None; SLOTS], bytes: 0, kept: 0 }) }
    }

    /// Runs `f` on the cache under a spin lock (held for a few loads and
    /// stores only; a system call never happens while it is held).
    fn with<R>(&self, f: impl FnOnce(&mut Cache) -> R) -> R {
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: the lock above gives this thread the only access.
        let result = f(unsafe { &mut *self.cache.get() });
        self.locked.store(false, Ordering::Release);
        result
    }
}

impl Default for BlockCache {
    fn default() -> Self {
        BlockCache::new()
    }
}

// SAFETY: every block handed out comes from `System` with
// `system_layout(layout)` of the layout it is later freed or reallocated
// with, and goes back to `System` with that same layout (a cached block is
// reused only for the exact size and alignment it was allocated with), and
// a block is in the cache or handed out, never both.
unsafe impl GlobalAlloc for BlockCache {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.alloc_block(layout);
        if !p.is_null() {
            BYTES_IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        BYTES_IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        self.dealloc_block(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < LARGE {
            let p = System.alloc_zeroed(layout);
            if !p.is_null() {
                BYTES_IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
            }
            return p;
        }
        // Clearing a cached block (memset speed) beats faulting in fresh
        // zero pages one by one.
        let p = self.alloc(layout);
        if !p.is_null() {
            p.write_bytes(0, layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if system_layout(layout) == layout && system_layout(new_layout) == new_layout {
            // Neither block is huge: every live block is a System block of
            // its own layout.
            let q = System.realloc(ptr, layout, new_size);
            if !q.is_null() {
                BYTES_IN_USE.fetch_add(new_size, Ordering::Relaxed);
                BYTES_IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            }
            return q;
        }
        let q = self.alloc(new_layout);
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(ptr, q, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        q
    }
}

/// The cache itself, below the count of bytes in use.
impl BlockCache {
    unsafe fn alloc_block(&self, layout: Layout) -> *mut u8 {
        if layout.size() < LARGE {
            return System.alloc(layout);
        }
        let mut evicted = [None; SLOTS];
        let hit = self.with(|c| {
            let slot = c.blocks.iter().position(|b| b.is_some_and(|b| b.size == layout.size() && b.align == layout.align()));
            match slot {
                Some(i) => {
                    let b = c.blocks[i].take();
                    c.bytes -= layout.size();
                    b
                }
                None => {
                    // The new block will be in use: the bound is on the
                    // bytes in use with it.
                    let in_use = BYTES_IN_USE.load(Ordering::Relaxed).saturating_add(layout.size());
                    c.evict_to(budget(in_use).saturating_sub(layout.size()), &mut evicted);
                    None
                }
            }
        });
        for b in evicted.into_iter().flatten() {
            System.dealloc(b.ptr, system_layout(Layout::from_size_align_unchecked(b.size, b.align)));
        }
        match hit {
            Some(b) => b.ptr,
            None => system_alloc(layout),
        }
    }

    unsafe fn dealloc_block(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            let mut evicted = [None; SLOTS];
            let kept = self.with(|c| {
                let budget = budget(BYTES_IN_USE.load(Ordering::Relaxed));
                if layout.size() > budget {
                    return false;
                }
                c.evict_to(budget - layout.size(), &mut evicted);
                if c.blocks.iter().all(Option::is_some) {
                    // No free slot: the oldest block makes room.
                    let mut one = [None; SLOTS];
                    c.evict_to(c.bytes.saturating_sub(1), &mut one);
                    if let Some(slot) = evicted.iter_mut().find(|o| o.is_none()) {
                        *slot = one[0];
                    }
                }
                c.kept += 1;
                let block = Block { ptr, size: layout.size(), align: layout.align(), kept: c.kept };
                match c.blocks.iter_mut().find(|b| b.is_none()) {
                    Some(slot) => {
                        *slot = Some(block);
                        c.bytes += block.size;
                        true
                    }
                    None => false,
                }
            });
            for b in evicted.into_iter().flatten() {
                System.dealloc(b.ptr, system_layout(Layout::from_size_align_unchecked(b.size, b.align)));
            }
            if kept {
                return;
            }
        }
        System.dealloc(ptr, system_layout(layout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_large_block_is_reused_for_the_same_size_only() {
        let cache = BlockCache::new();
        let big = Layout::from_size_align(LARGE, 64).unwrap();
        let other = Layout::from_size_align(LARGE + 4096, 64).unwrap();
        // SAFETY: every pointer is freed once with the layout it was
        // allocated with.
        unsafe {
            let p = cache.alloc(big);
            assert!(!p.is_null());
            p.write(7);
            cache.dealloc(p, big);
            let q = cache.alloc(big);
            assert_eq!(p, q, "the cached block comes back");
            cache.dealloc(q, big);
            let r = cache.alloc(other);
            assert!(!r.is_null());
            assert_eq!(cache.with(|c| c.bytes), big.size(), "a miss within the budget keeps the cache");
            cache.dealloc(r, other);
            let small = Layout::from_size_align(64, 8).unwrap();
            let s = cache.alloc(small);
            cache.dealloc(s, small);
            assert_eq!(cache.with(|c| c.bytes), big.size() + other.size());
        }
    }

    #[test]
    fn kept_blocks_stay_within_the_budget_oldest_evicted_first() {
        let cache = BlockCache::new();
        let block = Layout::from_size_align(40 << 20, 64).unwrap();
        // SAFETY: every pointer is freed once with the layout it was
        // allocated with; none is written.
        unsafe {
            let ps: Vec<*mut u8> = (0..3).map(|_| cache.alloc(block)).collect();
            assert!(ps.iter().all(|p| !p.is_null()));
            for &p in &ps {
                cache.dealloc(p, block);
            }
            // Nothing else in use (this cache's own count is shared with
            // other tests, so only an upper bound is certain).
            let (bytes, newest) = cache.with(|c| (c.bytes, c.blocks.iter().flatten().map(|b| b.ptr).collect::<Vec<_>>()));
            assert!(bytes <= budget(BYTES_IN_USE.load(Ordering::Relaxed)) && bytes >= block.size());
            assert!(newest.contains(&ps[2]), "the newest block is kept");
        }
    }

    #[test]
    fn huge_blocks_are_page_aligned_and_survive_reallocation() {
        let cache = BlockCache::new();
        let huge = Layout::from_size_align(HUGE + 12, 8).unwrap();
        // SAFETY: every pointer is freed once with the layout it was
        // allocated (or reallocated) with; accesses stay within the sizes.
        unsafe {
            let p = cache.alloc(huge);
            assert!(!p.is_null());
            assert_eq!(p as usize % HUGE_PAGE, 0);
            for k in [0, 1, HUGE_PAGE, HUGE + 11] {
                p.add(k).write(k as u8 ^ 0x5a);
            }
            // Shrunk below HUGE: a System block of its own layout.
            let q = cache.realloc(p, huge, HUGE - 1);
            assert!(!q.is_null());
            for k in [0, 1, HUGE_PAGE] {
                assert_eq!(q.add(k).read(), k as u8 ^ 0x5a);
            }
            let small = Layout::from_size_align(HUGE - 1, 8).unwrap();
            // Grown back above it: aligned again, the prefix kept.
            let r = cache.realloc(q, small, 2 * HUGE);
            assert!(!r.is_null());
            assert_eq!(r as usize % HUGE_PAGE, 0);
            assert_eq!(r.add(HUGE_PAGE).read(), HUGE_PAGE as u8 ^ 0x5a);
            cache.dealloc(r, Layout::from_size_align(2 * HUGE, 8).unwrap());
            let z = cache.alloc_zeroed(huge);
            assert!(!z.is_null() && z.add(HUGE + 11).read() == 0);
            cache.dealloc(z, huge);
        }
    }
}
