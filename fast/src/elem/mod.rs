//! Element semantics of the fast engine, written independently of the
//! reference's `numerics/` so that the two engines check each other.

pub mod complex;
pub mod convert;
pub mod exp;
pub mod f32_math;
pub mod f8;
pub mod float;
pub mod int;
