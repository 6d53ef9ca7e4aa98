//! The run's time limit where kernels can see it.
//!
//! The engines check `--timeout` between instructions, but one instruction
//! can run for minutes (a Dot of f32[16384,16384]², an O(n²) reference Fft,
//! a Sort with a comparator computation). Kernels therefore count their
//! work with [`tick`] inside their loops and stop early once the time is
//! up; the engine then sees [`passed`] right after the op and reports the
//! limit, discarding the unfinished value. Stopping by `break` keeps every
//! buffer its full length, so an interrupted kernel needs no error path and
//! cannot index past what it built.
//!
//! The deadline is per thread: [`start`] sets it for the thread that runs a
//! computation (every replica has its own thread). Worker threads of a
//! parallel kernel take a copy with [`clock`] and ask [`Clock::passed`].
//!
//! The byte budget lives here too ([`reserve`]): the engines ask it before
//! every op whether the op's result fits next to everything the process
//! holds, so a run fails with a limit error instead of being killed.

use crate::error::RunError;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Units of work between two looks at the clock: about a millisecond of
/// the reference's scalar loops, and a few microseconds' worth of reading
/// `Instant::now()` per look.
const UNITS_PER_LOOK: u64 = 1 << 18;

thread_local! {
    static DEADLINE: Cell<Option<(Instant, Option<Duration>)>> = const { Cell::new(None) };
    static EXPIRED: Cell<bool> = const { Cell::new(false) };
    static UNITS: Cell<u64> = const { Cell::new(0) };
}

/// Restores the thread's previous deadline when the run ends.
#[must_use = "the deadline holds while the guard lives"]
pub struct Guard {
    previous: Option<(Instant, Option<Duration>)>,
    previously_expired: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        DEADLINE.with(|d| d.set(self.previous));
        EXPIRED.with(|e| e.set(self.previously_expired));
    }
}

/// Sets this thread's deadline (`time_limit` is what the message quotes)
/// for as long as the guard lives.
pub fn start(deadline: Option<Instant>, time_limit: Option<Duration>) -> Guard {
    let previous = DEADLINE.with(|d| d.replace(deadline.map(|at| (at, time_limit))));
    let previously_expired = EXPIRED.with(|e| e.replace(false));
    Guard { previous, previously_expired }
}

/// Counts `units` of work (about one scalar operation each) and says
/// whether the time is up; once it is, it stays up for the rest of the run.
#[inline]
pub fn tick(units: u64) -> bool {
    let total = UNITS.with(|u| {
        let t = u.get().saturating_add(units);
        u.set(t);
        t
    });
    if total < UNITS_PER_LOOK {
        return EXPIRED.with(Cell::get);
    }
    UNITS.with(|u| u.set(0));
    look()
}

/// Looks at the clock now and says whether the time is up.
pub fn look() -> bool {
    let expired = EXPIRED.with(Cell::get) || DEADLINE.with(Cell::get).is_some_and(|(at, _)| Instant::now() > at);
    if expired {
        EXPIRED.with(|e| e.set(true));
    }
    expired
}

/// The limit error if the time is up (also when a kernel stopped early).
pub fn passed() -> Result<(), RunError> {
    if look() {
        return Err(limit_error(DEADLINE.with(Cell::get).and_then(|(_, limit)| limit)));
    }
    Ok(())
}

/// The error a run gets when its time limit passes.
pub fn limit_error(time_limit: Option<Duration>) -> RunError {
    RunError::Limit(match time_limit {
        Some(t) => format!("the run exceeded its time limit of {} s (--timeout)", t.as_secs_f64()),
        None => "the run exceeded its time limit".into(),
    })
}

/// This thread's deadline, to hand to worker threads.
pub fn clock() -> Clock {
    Clock { deadline: DEADLINE.with(Cell::get).map(|(at, _)| at) }
}

/// A copy of the deadline for threads that did not [`start`] the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    deadline: Option<Instant>,
}

impl Clock {
    /// Whether the deadline has passed (reads the clock: call it per block
    /// of work, not per element).
    pub fn passed(&self) -> bool {
        self.deadline.is_some_and(|at| Instant::now() > at)
    }
}

// ---------------------------------------------------------------------------
// The byte budget (`--max-bytes`).

/// Bytes the process holds from its allocator, kept by the `xlaref`
/// binary's global allocator (`src/block_cache.rs`); zero when the
/// library runs under another allocator, and then only the values an op
/// is about to make count.
pub static BYTES_IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The bytes the process holds now (all values of all replicas, the
/// module, the arguments).
pub fn bytes_in_use() -> u64 {
    BYTES_IN_USE.load(Ordering::Relaxed) as u64
}

/// Checks, before an op allocates its result, that `need` more bytes fit
/// in the budget `max_bytes` next to what the process holds.
pub fn reserve(need: u64, max_bytes: u64) -> Result<(), RunError> {
    let held = bytes_in_use();
    if held.saturating_add(need) > max_bytes {
        return Err(RunError::Limit(format!(
            "the run needs {} more with {} in use, over its memory budget of {} (--max-bytes)",
            size_text(need),
            size_text(held),
            size_text(max_bytes)
        )));
    }
    Ok(())
}

/// `n` bytes for a message: `3.0 GiB`, `512 KiB`, `12 bytes`.
pub fn size_text(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match UNITS.iter().find(|(_, size)| n >= *size) {
        Some((unit, size)) => format!("{:.1} {unit}", n as f64 / *size as f64),
        None => format!("{n} bytes"),
    }
}

/// The default budget: 8 GiB, or three quarters of the machine's memory
/// if that is less (Linux's MemTotal; 8 GiB where it cannot be read).
/// Read once per process: every `Limits::default()` asks, and a campaign
/// makes one per program.
pub fn default_max_bytes() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(machine_max_bytes)
}

fn machine_max_bytes() -> u64 {
    const DEFAULT: u64 = 8 << 30;
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines().find_map(|l| l.strip_prefix("MemTotal:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    match total_kib {
        Some(kib) => DEFAULT.min(kib.saturating_mul(1024) / 4 * 3),
        None => DEFAULT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_deadline_never_passes() {
        let _g = start(None, None);
        assert!(!(0..10).any(|_| tick(1 << 30)));
        assert!(passed().is_ok());
    }

    #[test]
    fn a_passed_deadline_stops_the_kernel_and_names_the_limit() {
        let _g = start(Some(Instant::now()), Some(Duration::from_secs(3)));
        std::thread::sleep(Duration::from_millis(2));
        assert!(tick(UNITS_PER_LOOK));
        assert!(tick(1), "the stop is sticky");
        let message = passed().map_err(|e| e.to_string());
        assert_eq!(message, Err("limit exceeded: the run exceeded its time limit of 3 s (--timeout)".to_string()));
        assert!(clock().passed());
    }

    #[test]
    fn the_budget_counts_what_is_held() {
        assert!(reserve(1 << 20, u64::MAX).is_ok());
        let message = reserve(3 << 30, 2 << 30).map_err(|e| e.to_string()).unwrap_err();
        assert!(message.contains("needs 3.0 GiB more") && message.contains("budget of 2.0 GiB (--max-bytes)"), "{message}");
        assert_eq!(size_text(12), "12 bytes");
        assert!(default_max_bytes() <= 8 << 30);
    }

    #[test]
    fn the_guard_restores_the_outer_run() {
        let outer = start(None, None);
        {
            let _inner = start(Some(Instant::now()), None);
            std::thread::sleep(Duration::from_millis(1));
            assert!(look());
        }
        assert!(!look());
        drop(outer);
    }
}
