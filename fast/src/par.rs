//! Parallel, vectorized loops over slices: the two tools every fast kernel
//! uses. Work is split into chunks across rayon's threads (small inputs stay
//! on one thread), and each chunk's loop is compiled for the widest vector
//! extension the CPU has, chosen at run time (`crate::isa`).

#[cfg(target_arch = "x86_64")]
use crate::isa::Isa;
use crate::stream;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Inputs smaller than this run on the calling thread: splitting costs more
/// than it saves.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;
/// Elements per parallel task.
const CHUNK: usize = 1 << 14;

/// Elements per task for `n` elements: at least [`CHUNK`], and few tasks
/// per thread, since at memory speed the cost per task is not small.
pub fn chunk_len(n: usize) -> usize {
    n.div_ceil(8 * rayon::current_num_threads()).max(CHUNK)
}

/// Runs `task(k)` for every `k < count` across the pool and returns each
/// worker's accumulator (`init()`, then every task that worker ran), in no
/// particular order.
///
/// Every thread of the pool is started at once (`rayon::broadcast`) and
/// takes the next task from a shared counter until none is left. Rayon's
/// splitting (`par_chunks`, `join`) leaves the second worker idle in about
/// half of the runs of a one-shot memory-bound loop on this project's
/// 2-core machines (a 64 MB sum: median 2.0 ms split by rayon, 1.5 ms
/// here, 1.9 ms on one thread). Inside a pool thread (nested parallelism)
/// the loop stays on rayon's splitting, which never waits for a busy
/// thread.
pub fn tasks<A: Send>(count: usize, init: impl Fn() -> A + Sync, task: impl Fn(&mut A, usize) + Sync) -> Vec<A> {
    let done = Mutex::new(Vec::new());
    let new_worker = || Box::new(Accumulating { acc: init(), task: &task, done: &done }) as Box<dyn Worker + Send + '_>;
    run_workers(count, &new_worker);
    done.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One worker's share of a [`tasks`] run, behind a trait object: rayon's
/// machinery is then compiled once, not once per kernel, closure and
/// element type (that had made it half the crate's machine code).
trait Worker {
    fn run(&mut self, k: usize);
    /// Hands the accumulator over once the worker has no task left.
    fn finish(self: Box<Self>);
}

struct Accumulating<'a, A, F> {
    acc: A,
    task: &'a F,
    done: &'a Mutex<Vec<A>>,
}

impl<A, F: Fn(&mut A, usize)> Worker for Accumulating<'_, A, F> {
    fn run(&mut self, k: usize) {
        (self.task)(&mut self.acc, k);
    }

    fn finish(self: Box<Self>) {
        // A poisoned lock means another worker panicked; the panic is
        // re-raised by rayon, so the partial list is never used.
        self.done.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(self.acc);
    }
}

/// The pool's side of [`tasks`]: `new_worker()` on every thread that takes
/// part, tasks `0..count` handed out once each.
fn run_workers<'a>(count: usize, new_worker: &(dyn Fn() -> Box<dyn Worker + Send + 'a> + Sync)) {
    if rayon::current_thread_index().is_some() {
        (0..count)
            .into_par_iter()
            .fold(new_worker, |mut worker, k| {
                worker.run(k);
                worker
            })
            .for_each(|worker| worker.finish());
        return;
    }
    let next = AtomicUsize::new(0);
    rayon::broadcast(|_| {
        let mut worker = new_worker();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                break;
            }
            worker.run(k);
        }
        worker.finish();
    });
}

/// Runs `f` compiled with AVX-512 or AVX2+FMA when [`crate::isa::isa`]
/// allows them. `f` is inlined into a function with those target features,
/// so simple loops in it are auto-vectorized for the machine that runs them.
#[inline(always)]
pub fn simd<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    match crate::isa::isa() {
        // SAFETY: `isa()` never exceeds what the CPU has, and these levels
        // include every feature the callee enables.
        Isa::Avx512 | Isa::Avx512Vbmi => return unsafe { with_avx512(f) },
        // SAFETY: as above.
        Isa::Avx2 => return unsafe { with_avx2(f) },
        Isa::Portable => {}
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,bmi2,popcnt")]
unsafe fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi2,popcnt")]
unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `out[i] = f(i, chunk...)`: fills a new vector of `n` elements chunk by
/// chunk; `fill(start, chunk)` writes `chunk` (the elements `start..`).
pub fn build<T: Send>(n: usize, fill: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync) -> Vec<T> {
    build_in_chunks(n, if n < PARALLEL_THRESHOLD { n } else { chunk_len(n) }, fill)
}

/// [`build`] with chunks of `chunk` elements (the last may be shorter),
/// for kernels whose tasks must start on a row; one chunk (`chunk >= n`)
/// runs on the calling thread.
pub fn build_in_chunks<T: Send>(n: usize, chunk: usize, fill: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    if chunk >= n {
        fill(0, spare);
    } else {
        // Each chunk is handed out once, through its own (uncontended) lock.
        let chunks: Vec<Mutex<&mut [MaybeUninit<T>]>> = spare.chunks_mut(chunk.max(1)).map(Mutex::new).collect();
        tasks(
            chunks.len(),
            || (),
            |(), k| {
                // Task `k` is the only one to lock chunk `k`, so the lock is
                // never poisoned; unwrapping the guard regardless keeps the
                // write unconditional, which `set_len` below relies on.
                let mut c = chunks[k].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                fill(k * chunk, &mut c);
            },
        );
    }
    // SAFETY: every `fill` call writes every element of its chunk (the
    // callers do so unconditionally), and the chunks cover `0..n`.
    unsafe { out.set_len(n) };
    out
}

/// Writes `value` to every element of `chunk` and returns it initialized.
pub fn fill_with<T: Copy>(chunk: &mut [MaybeUninit<T>], value: T) -> &mut [T] {
    for o in chunk.iter_mut() {
        o.write(value);
    }
    // SAFETY: every element was written just above, and `MaybeUninit<T>`
    // has the layout of `T`.
    unsafe { &mut *(chunk as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// `out[i] = f(a[i])`, in parallel and vectorized; a large output is
/// written past the caches ([`stream`]).
pub fn map<A: Copy + Sync, T: Send>(a: &[A], f: impl Fn(A) -> T + Sync) -> Vec<T> {
    map_with(a, f, stream::worth_it::<T>(a.len()))
}

/// [`map`] for functions that cost more than their memory traffic
/// (transcendentals): their results are not streamed, since the detour
/// through the staging buffer costs more than the stores save (f32 Exp of
/// 16M elements: 5.5 ms written in place, 5.9 ms streamed).
pub fn map_heavy<A: Copy + Sync, T: Send>(a: &[A], f: impl Fn(A) -> T + Sync) -> Vec<T> {
    map_with(a, f, false)
}

fn map_with<A: Copy + Sync, T: Send>(a: &[A], f: impl Fn(A) -> T + Sync, streaming: bool) -> Vec<T> {
    build(a.len(), |start, chunk| {
        simd(
            #[inline(always)]
            || {
                stream::fill(
                    chunk,
                    streaming,
                    // Inlined like the closure around it, so that `f` is
                    // compiled with the target features of `simd`.
                    #[inline(always)]
                    |offset, part| {
                        for (o, &x) in part.iter_mut().zip(&a[start + offset..]) {
                            o.write(f(x));
                        }
                    },
                )
            },
        )
    })
}

/// [`map_heavy`] for a vectorized `f` that holds on part of the domain:
/// `patch(x)` gives the result where it does not (None elsewhere). It runs
/// over each block of [`PATCH_BLOCK`] results right after `f`, while they
/// are in L1.
pub fn map_heavy_patched<A: Copy + Sync, T: Send>(a: &[A], f: impl Fn(A) -> T + Sync, patch: impl Fn(A) -> Option<T> + Sync) -> Vec<T> {
    build(a.len(), |start, chunk| {
        for (b, block) in chunk.chunks_mut(PATCH_BLOCK).enumerate() {
            let from = start + b * PATCH_BLOCK;
            let input = &a[from..from + block.len()];
            simd(
                #[inline(always)]
                || {
                    for (o, &x) in block.iter_mut().zip(input) {
                        o.write(f(x));
                    }
                },
            );
            for (o, &x) in block.iter_mut().zip(input) {
                if let Some(y) = patch(x) {
                    // Overwriting a `MaybeUninit` does not drop `f`'s value
                    // (a float for every caller; a leak would be safe).
                    o.write(y);
                }
            }
        }
    })
}

/// Results per block of [`map_heavy_patched`]: 4 KiB of f32.
const PATCH_BLOCK: usize = 1024;

/// `out[i] = f(a[i], b[i])`, in parallel and vectorized.
pub fn zip<A: Copy + Sync, B: Copy + Sync, T: Send>(a: &[A], b: &[B], f: impl Fn(A, B) -> T + Sync) -> Vec<T> {
    let n = a.len().min(b.len());
    let streaming = stream::worth_it::<T>(n);
    build(n, |start, chunk| {
        simd(
            #[inline(always)]
            || {
                stream::fill(
                    chunk,
                    streaming,
                    // Inlined like the closure around it, so that `f` is
                    // compiled with the target features of `simd`.
                    #[inline(always)]
                    |offset, part| {
                        for ((o, &x), &y) in part.iter_mut().zip(&a[start + offset..]).zip(&b[start + offset..]) {
                            o.write(f(x, y));
                        }
                    },
                )
            },
        )
    })
}

/// `out[i] = f(a[i], b[i], c[i])`.
pub fn zip3<A: Copy + Sync, B: Copy + Sync, C: Copy + Sync, T: Send>(a: &[A], b: &[B], c: &[C], f: impl Fn(A, B, C) -> T + Sync) -> Vec<T> {
    let n = a.len().min(b.len()).min(c.len());
    let streaming = stream::worth_it::<T>(n);
    build(n, |start, chunk| {
        simd(
            #[inline(always)]
            || {
                stream::fill(
                    chunk,
                    streaming,
                    // Inlined like the closure around it, so that `f` is
                    // compiled with the target features of `simd`.
                    #[inline(always)]
                    |offset, part| {
                        for (((o, &x), &y), &z) in
                            part.iter_mut().zip(&a[start + offset..]).zip(&b[start + offset..]).zip(&c[start + offset..])
                        {
                            o.write(f(x, y, z));
                        }
                    },
                )
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_sizes() {
        for n in [0, 1, 7, 15, 16, 17, 63, 64, 65, CHUNK - 1, CHUNK, CHUNK + 1, PARALLEL_THRESHOLD + 3] {
            let a: Vec<u32> = (0..n as u32).collect();
            let b: Vec<u32> = (0..n as u32).map(|x| x * 3).collect();
            assert_eq!(zip(&a, &b, |x, y| x + y), (0..n as u32).map(|x| 4 * x).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(map(&a, |x| x ^ 1), (0..n as u32).map(|x| x ^ 1).collect::<Vec<_>>());
        }
    }

    /// Every element is `f`'s or, where `patch` answers, the patch's: in
    /// every block, at block edges, and across parallel chunks.
    #[test]
    fn map_heavy_patched_patches_exactly_where_asked() {
        for n in [0, 1, PATCH_BLOCK - 1, PATCH_BLOCK, PATCH_BLOCK + 1, 3 * PATCH_BLOCK + 5, PARALLEL_THRESHOLD + 3] {
            let a: Vec<u32> = (0..n as u32).collect();
            let got =
                map_heavy_patched(&a, |x| x * 2, |x| (x % 7 == 3 || (x as usize).is_multiple_of(PATCH_BLOCK)).then_some(u32::MAX - x));
            let want: Vec<u32> =
                a.iter().map(|&x| if x % 7 == 3 || (x as usize).is_multiple_of(PATCH_BLOCK) { u32::MAX - x } else { x * 2 }).collect();
            assert!(got == want, "n = {n}");
        }
    }

    /// Outputs over the streaming threshold, of odd lengths and element
    /// sizes, go through [`stream::fill`] in every task.
    #[test]
    fn large_outputs_are_streamed_completely() {
        let n = stream::MIN_BYTES / 4 + 37;
        assert!(stream::worth_it::<u32>(n) && !stream::worth_it::<u32>(n / 2));
        let a: Vec<u32> = (0..n as u32).collect();
        assert!(zip(&a, &a, |x, y| x.wrapping_mul(3) ^ y).iter().enumerate().all(|(i, &v)| v == (i as u32).wrapping_mul(3) ^ i as u32));
        assert!(map(&a, |x| x as u64 * 5).iter().enumerate().all(|(i, &v)| v == i as u64 * 5));
        assert!(zip3(&a, &a, &a, |x, y, z| (x ^ y) as u8 ^ z as u8).iter().enumerate().all(|(i, &v)| v == i as u8));
        let bytes: Vec<u8> = (0..stream::MIN_BYTES + 3).map(|i| i as u8).collect();
        assert!(map(&bytes, |x| x.wrapping_add(1)).iter().enumerate().all(|(i, &v)| v == (i as u8).wrapping_add(1)));
    }

    #[test]
    fn build_in_chunks_starts_each_chunk_where_asked() {
        for (n, chunk) in [(0, 0), (0, 5), (1, 1), (10, 3), (10, 10), (10, 11), (100_003, 4096)] {
            let v = build_in_chunks(n, chunk, |start, c| {
                assert!(chunk >= n || start % chunk == 0, "n = {n}, chunk = {chunk}, start = {start}");
                let c = fill_with(c, 0usize);
                for (i, o) in c.iter_mut().enumerate() {
                    *o = start + i;
                }
            });
            assert_eq!(v, (0..n).collect::<Vec<_>>(), "n = {n}, chunk = {chunk}");
        }
    }

    #[test]
    fn build_covers_every_chunk_of_a_large_odd_size() {
        let n = 8 * CHUNK * rayon::current_num_threads() + 12_345;
        let v = build(n, |start, chunk| {
            for (i, o) in chunk.iter_mut().enumerate() {
                o.write(start + i);
            }
        });
        assert!(v.iter().enumerate().all(|(i, &x)| i == x));
    }

    /// Every task runs exactly once, called from outside the pool
    /// (broadcast) and from inside it (rayon's splitting).
    fn each_task_once(count: usize) {
        let done: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
        let per_thread = tasks(
            count,
            || 0usize,
            |ran, k| {
                done[k].fetch_add(1, Ordering::Relaxed);
                *ran += 1;
            },
        );
        assert_eq!(per_thread.iter().sum::<usize>(), count);
        assert!(done.iter().all(|d| d.load(Ordering::Relaxed) == 1), "count = {count}");
    }

    #[test]
    fn tasks_run_each_task_once() {
        for count in [0, 1, 2, 3, 1000] {
            each_task_once(count);
            rayon::scope(|_| each_task_once(count));
        }
    }
}
