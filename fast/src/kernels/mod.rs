//! The fast engine's kernels, one file per op family.

pub mod elementwise;
pub mod layout;
