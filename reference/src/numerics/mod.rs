//! Element-level semantics, one concern per file, pinned by unit tests next
//! to the code. Everything an op does to a single element lives here; the
//! ops in `eval/` only decide which elements meet.

pub mod bits;
pub mod bytes;
pub mod complex;
pub mod complex_inverse;
pub mod convert;
pub mod decimal;
pub mod f8;
pub mod float;
pub mod int;
pub mod small_float;
pub mod special;
