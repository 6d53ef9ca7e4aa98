//! Typed errors: reading (with the JSON path), verifying (instruction, op,
//! rule), and running (what only evaluation reveals).

use std::borrow::Cow;

use crate::verify::rules::Rule;
use thiserror::Error;

/// The longest message text printed whole; input quoted in a message (a
/// 120 KB `--arg`, a huge name) is cut there.
const MAX_MESSAGE_CHARS: usize = 2000;

/// `s` fit for a terminal: control characters escaped (a name from the
/// input holding `ESC [2J` must not clear the user's screen through an
/// error message) and cut after [`MAX_MESSAGE_CHARS`] characters. Every
/// error type of the library displays through it.
pub fn printable(s: &str) -> Cow<'_, str> {
    let long = s.char_indices().nth(MAX_MESSAGE_CHARS).map(|(i, _)| i);
    if long.is_none() && !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let kept = &s[..long.unwrap_or(s.len())];
    let mut out = String::with_capacity(kept.len() + 16);
    for c in kept.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if let Some(at) = long {
        out.push_str(&format!("... ({} more bytes)", s.len() - at));
    }
    Cow::Owned(out)
}

/// A file or value that does not follow docs/format.md.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{}: {}", printable(path), printable(message))]
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
#[error("{}", printable(&self.describe()))]
pub struct VerifyError {
    pub computation: String,
    /// Empty for errors about the module or a computation as a whole.
    pub instruction: String,
    pub op: &'static str,
    /// The rule broken (docs/rules.md).
    pub rule: &'static Rule,
    /// How this instruction broke it.
    pub detail: String,
    /// Where the instruction is in the HLO or MLIR text it was imported
    /// from (`line 4 column 7`), if it was.
    pub location: Option<String>,
}

impl VerifyError {
    fn describe(&self) -> String {
        let at = self.location.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
        if self.instruction.is_empty() {
            format!("{at}computation `{}`: {} [{}]", self.computation, self.detail, self.rule.id)
        } else {
            format!(
                "{at}instruction `{}` ({}) in computation `{}`: {} [{}]",
                self.instruction, self.op, self.computation, self.detail, self.rule.id
            )
        }
    }
}

/// What only running a verified module reveals.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum RunError {
    #[error("limit exceeded: {}", printable(.0))]
    Limit(String),
    #[error("argument error: {}", printable(.0))]
    Argument(String),
    #[error("infeed exhausted: {}", printable(.0))]
    InfeedExhausted(String),
    #[error("collective mismatch/deadlock: {}", printable(.0))]
    Collective(String),
    #[error("unknown custom-call target: {}", printable(.0))]
    CustomCall(String),
    #[error("not supported by this engine: {}", printable(.0))]
    Unsupported(String),
    #[error("{}", printable(.0))]
    Other(String),
    /// An engine's own invariant broke: a bug in the engine, not a failure
    /// of the program (the harness reports it as a crash, like a panic).
    #[error("internal error: {}", printable(.0))]
    Internal(String),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_fit_for_a_terminal() {
        assert_eq!(printable("plain `x`"), "plain `x`");
        assert_eq!(printable("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        let long = "y".repeat(5000);
        let cut = printable(&long);
        assert!(cut.len() < 2100 && cut.ends_with("... (3000 more bytes)"), "{cut}");
        let e = VerifyError {
            computation: "m\u{7}".into(),
            instruction: String::new(),
            op: "",
            rule: &crate::verify::rules::OPERAND_COUNT,
            detail: "r".into(),
            location: None,
        };
        assert_eq!(e.to_string(), "computation `m\\u{7}`: r [op.c1]");
    }
}
