//! Typed errors: reading (with the JSON path), verifying (instruction, op,
//! rule), and running (what only evaluation reveals).

use thiserror::Error;

/// A file or value that does not follow FORMAT.md.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{path}: {message}")]
pub struct ReadError {
    /// Where in the JSON document, e.g. `computations.main.instructions[3].slice_sizes`.
    pub path: String,
    pub message: String,
}

impl ReadError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ReadError {
        ReadError { path: path.into(), message: message.into() }
    }
}

/// A module the document forbids: names the instruction, the op and the rule.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{}", self.describe())]
pub struct VerifyError {
    pub computation: String,
    /// Empty for errors about the module or a computation as a whole.
    pub instruction: String,
    pub op: String,
    pub rule: String,
}

impl VerifyError {
    fn describe(&self) -> String {
        if self.instruction.is_empty() {
            format!("computation `{}`: {}", self.computation, self.rule)
        } else {
            format!("instruction `{}` ({}) in computation `{}`: {}", self.instruction, self.op, self.computation, self.rule)
        }
    }
}

/// What only running a verified module reveals.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum RunError {
    #[error("limit exceeded: {0}")]
    Limit(String),
    #[error("argument error: {0}")]
    Argument(String),
    #[error("infeed exhausted: {0}")]
    InfeedExhausted(String),
    #[error("collective mismatch/deadlock: {0}")]
    Collective(String),
    #[error("unknown custom-call target: {0}")]
    CustomCall(String),
    #[error("not supported by this engine: {0}")]
    Unsupported(String),
    #[error("{0}")]
    Other(String),
}

/// Any error of the library, for callers that do not care which stage failed.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum Error {
    #[error("read error: {0}")]
    Read(#[from] ReadError),
    #[error("verify error: {0}")]
    Verify(#[from] VerifyError),
    #[error("run error: {0}")]
    Run(#[from] RunError),
}
