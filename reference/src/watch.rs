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

use crate::error::RunError;
use std::cell::Cell;
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
