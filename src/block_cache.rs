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
//! Only blocks of at least [`LARGE`] bytes are kept, at most [`SLOTS`] of
//! them and [`CAP`] bytes in all; an allocation of a large size that is not
//! in the cache first releases the whole cache, so kept blocks never add to
//! the peak memory of a run whose sizes change.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks smaller than this go straight to the system allocator.
const LARGE: usize = 1 << 20;
const SLOTS: usize = 8;
const CAP: usize = 1 << 30;

#[derive(Clone, Copy)]
struct Block {
    ptr: *mut u8,
    size: usize,
    align: usize,
}

struct Cache {
    blocks: [Option<Block>; SLOTS],
    bytes: usize,
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
        BlockCache { locked: AtomicBool::new(false), cache: std::cell::UnsafeCell::new(Cache { blocks: [None; SLOTS], bytes: 0 }) }
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

// SAFETY: every block handed out comes from `System` with the layout it is
// later freed or reallocated with (a cached block is reused only for the
// exact size and alignment it was allocated with), and a block is in the
// cache or handed out, never both.
unsafe impl GlobalAlloc for BlockCache {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
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
                    evicted = std::mem::replace(&mut c.blocks, [None; SLOTS]);
                    c.bytes = 0;
                    None
                }
            }
        });
        for b in evicted.into_iter().flatten() {
            System.dealloc(b.ptr, Layout::from_size_align_unchecked(b.size, b.align));
        }
        match hit {
            Some(b) => b.ptr,
            None => System.alloc(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            let block = Block { ptr, size: layout.size(), align: layout.align() };
            let kept = self.with(|c| {
                if c.bytes + block.size > CAP {
                    return false;
                }
                match c.blocks.iter_mut().find(|b| b.is_none()) {
                    Some(slot) => {
                        *slot = Some(block);
                        c.bytes += block.size;
                        true
                    }
                    None => false,
                }
            });
            if kept {
                return;
            }
        }
        System.dealloc(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < LARGE {
            return System.alloc_zeroed(layout);
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
        // Every live block is a System block of `layout`.
        System.realloc(ptr, layout, new_size)
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
            assert_eq!(cache.with(|c| c.bytes), 0, "a miss releases the cache");
            cache.dealloc(r, other);
            let small = Layout::from_size_align(64, 8).unwrap();
            let s = cache.alloc(small);
            cache.dealloc(s, small);
            assert_eq!(cache.with(|c| c.bytes), other.size());
        }
    }
}
