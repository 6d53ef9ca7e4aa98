//! Deliberate bugs, for showing that the differential tester finds bugs
//! (tests/planted_bugs.rs). No bug is planted unless a test calls [`plant`];
//! the CLI never does.
//!
//! This was a cargo feature; as a run-time switch it saves the test build a
//! third compilation of this crate (the feature made cargo build it once
//! with and once without). The checks sit outside the vectorized loops: a
//! relaxed load of one byte where they are.

use std::sync::atomic::{AtomicU8, Ordering};

/// The bugs that can be planted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Bug {
    /// Pad places input elements `interior_padding` apart instead of
    /// `interior_padding + 1`.
    PadInteriorOffByOne = 1,
    /// f32 → bf16 truncates instead of rounding to nearest even.
    Bf16Truncates = 2,
    /// Scatter calls its update computation with (update, current) instead
    /// of (current, update).
    ScatterSwapsOperands = 3,
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// Whether `bug` is planted now.
#[inline]
pub fn active(bug: Bug) -> bool {
    ACTIVE.load(Ordering::Relaxed) == bug as u8
}

/// Plants `bug` (None: removes the planted bug). For tests only: a planted
/// bug makes the engine wrong on purpose, process-wide.
#[doc(hidden)]
pub fn plant(bug: Option<Bug>) {
    ACTIVE.store(bug.map_or(0, |b| b as u8), Ordering::Relaxed);
}
