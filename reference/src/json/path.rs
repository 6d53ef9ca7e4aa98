//! JSON paths for error messages: `computations.main.instructions[3].slice_sizes`.

use crate::error::ReadError;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path(String);

impl Path {
    pub fn root() -> Path {
        Path(String::new())
    }

    pub fn new(text: impl Into<String>) -> Path {
        Path(text.into())
    }

    pub fn key(&self, key: &str) -> Path {
        if self.0.is_empty() {
            Path(key.to_string())
        } else {
            Path(format!("{}.{key}", self.0))
        }
    }

    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    pub fn error(&self, message: impl Into<String>) -> ReadError {
        let path = if self.0.is_empty() { "(document)".to_string() } else { self.0.clone() };
        ReadError::new(path, message)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
