//! The xlaref harness and CLI: cases, result comparison, engines, commands.

pub mod block_cache;
pub mod cli;
pub mod gen;
pub mod harness;
pub mod npy;
