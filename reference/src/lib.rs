//! xlaref's reference: XLA's operation semantics as plain, checkable code.
//!
//! The flow is `json` (read) → [`ir::Module`] → `verify` → [`verify::VerifiedModule`]
//! → `eval` (this crate's reference evaluator, or any other engine) → [`literal::Literal`].

pub mod custom_call;
pub mod error;
pub mod eval;
pub mod hlo;
pub mod ir;
pub mod json;
pub mod literal;
pub mod mlir;
pub mod numerics;
pub mod replicas;
pub mod scalar;
pub mod stablehlo;
pub mod terms;
pub mod types;
pub mod verify;
pub mod watch;

pub use error::{Error, ReadError, RunError, VerifyError};
pub use literal::{ArrayLiteral, Data, Literal};
pub use types::{ArrayShape, ElementType, Shape};
