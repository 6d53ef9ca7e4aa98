//! The fast engine's kernels, one file per op family (the same families as
//! the reference's `eval/`).

pub mod batch_norm;
pub mod collectives;
pub mod conv;
pub mod dot;
pub mod elementwise;
pub mod fft;
pub mod gemm;
pub mod indexing;
pub mod lapack;
pub mod linalg;
pub mod precision;
pub mod reduce;
pub mod rng;
pub mod shape_ops;
pub mod sort;
pub mod transpose;
pub mod world;

#[cfg(test)]
mod shape_ops_boundary_tests;
