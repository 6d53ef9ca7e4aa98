//! Deliberate bugs, for showing that the differential tester finds bugs
//! (tests/planted_bugs.rs). They exist only with the test-only feature
//! `planted-bugs` and only while a test switches one on; otherwise
//! [`active`] is the constant `false` and the checks compile away.

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

#[cfg(feature = "planted-bugs")]
static ACTIVE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether `bug` is planted now.
#[inline]
pub fn active(bug: Bug) -> bool {
    #[cfg(feature = "planted-bugs")]
    {
        ACTIVE.load(std::sync::atomic::Ordering::Relaxed) == bug as u8
    }
    #[cfg(not(feature = "planted-bugs"))]
    {
        let _ = bug;
        false
    }
}

/// Plants `bug` (None: removes the planted bug).
#[cfg(feature = "planted-bugs")]
pub fn plant(bug: Option<Bug>) {
    ACTIVE.store(bug.map_or(0, |b| b as u8), std::sync::atomic::Ordering::Relaxed);
}
