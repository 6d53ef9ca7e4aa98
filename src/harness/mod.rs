//! The test harness shared by the CLI, the tests and the fuzzers: cases,
//! the comparison of results, and the engine interface.

pub mod backend;
pub mod campaign;
pub mod case;
pub mod compare;
pub mod conformance;
pub mod deviation;
pub mod engine;
pub mod exact;
pub mod ftz;
pub mod generated;
pub mod interrupt;
pub mod lockstep;
pub mod progress;
pub mod report;
pub mod shard;
pub mod stablehlo_check;
pub mod stablehlo_suite;
pub mod stablehlo_table;
pub mod tolerance;
mod tolerance_bn;
