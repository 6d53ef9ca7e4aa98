//! The terms of the reference's sums: what the harness's tolerance model
//! (`src/harness/tolerance.rs`, docs/tolerance.md) needs to bound how far
//! an engine's Dot, DotGeneral, Conv, Reduce or ReduceWindow may honestly
//! be from the reference.
//!
//! The contract:
//! - [`dot_general_plan`] (with [`dot_dimension_numbers`] for Dot) and
//!   [`conv_plan`] are the plans the evaluator itself runs: a
//!   [`SumOfProducts`] that fills every result element with its sum of
//!   products. [`sums_in`] runs a plan in any number system [`Acc`] (the
//!   tolerance model uses an exact one, `harness/exact.rs`), so the model
//!   sums exactly the products the reference sums.
//! - [`reduction_groups`] and [`window_groups`] call back once per result
//!   element of a Reduce or a ReduceWindow with the linear operand
//!   positions it folds, in the reference's order: the same walk the
//!   evaluator folds.
//!
//! They are re-exported here, not copied: a change to how an op chooses
//! its terms changes the model's bounds with it. Anything else in
//! `eval::` is the evaluator's own business and may change freely.

pub use crate::eval::conv::conv_plan;
pub use crate::eval::dot::{dot_dimension_numbers, dot_general_plan, sums_in, Acc, SumOfProducts};
pub use crate::eval::reduce::reduction_groups;
pub use crate::eval::reduce::window::window_groups;
