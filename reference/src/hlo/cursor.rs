//! A position in one line of HLO text, and the small lexical pieces of the
//! grammar: names, shapes, balanced attribute values.

use super::HloError;

/// Characters of HLO names (`%get-tuple-element.3`, `Arg_0.1`) and of
/// opcodes (`shift-right-logical`).
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '%' | '$')
}

#[derive(Clone)]
pub struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str, line: usize) -> Self {
        Cursor { text, pos: 0, line }
    }

    pub fn error(&self, message: impl Into<String>) -> HloError {
        HloError { line: self.line, column: self.text[..self.pos].chars().count() + 1, message: message.into() }
    }

    /// Where the cursor is, as error messages and `location` name it.
    pub fn location(&self) -> String {
        let e = self.error("");
        format!("line {} column {}", e.line, e.column)
    }

    pub fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Skips blanks and `/*index=5*/`-style comments.
    pub fn skip_ws(&mut self) {
        loop {
            let rest = self.rest();
            self.pos += rest.len() - rest.trim_start().len();
            let rest = self.rest();
            match rest.strip_prefix("/*").and_then(|r| r.find("*/")) {
                Some(end) => self.pos += 2 + end + 2,
                None => return,
            }
        }
    }

    pub fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.rest().is_empty()
    }

    pub fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    /// Consumes `s` (after blanks) if it comes next.
    pub fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, s: &str) -> Result<(), HloError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{s}`, found `{}`", self.rest().chars().take(20).collect::<String>())))
        }
    }

    /// A name or keyword; a leading `%` is dropped.
    pub fn name(&mut self) -> Result<&'a str, HloError> {
        self.skip_ws();
        let rest = self.rest();
        let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error(format!("expected a name, found `{}`", rest.chars().take(20).collect::<String>())));
        }
        self.pos += len;
        Ok(rest[..len].trim_start_matches('%'))
    }

    /// A shape, layouts dropped: `f32[2,3]{1,0}` → `f32[2,3]`, tuples nest.
    pub fn shape(&mut self) -> Result<String, HloError> {
        if self.eat("(") {
            let mut parts = Vec::new();
            if !self.eat(")") {
                loop {
                    parts.push(self.shape()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(format!("({})", parts.join(", ")));
        }
        let element = self.name()?.to_string();
        self.expect("[")?;
        let start = self.pos;
        let close = self.rest().find(']').ok_or_else(|| self.error("unclosed `[` in a shape"))?;
        let dims: String = self.text[start..start + close].chars().filter(|c| !c.is_whitespace()).collect();
        self.pos += close + 1;
        if self.rest().starts_with('{') {
            self.balanced()?;
        }
        Ok(format!("{element}[{dims}]"))
    }

    /// A balanced group starting at `{`, `(` or `[`, returned whole
    /// (brackets included); strings inside are skipped over.
    pub fn balanced(&mut self) -> Result<&'a str, HloError> {
        self.skip_ws();
        let start = self.pos;
        let mut depth = 0usize;
        let mut chars = self.rest().char_indices();
        let mut in_string = false;
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => in_string = !in_string,
                '\\' if in_string => {
                    chars.next();
                }
                '{' | '(' | '[' if !in_string => depth += 1,
                '}' | ')' | ']' if !in_string => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.pos = start + i + c.len_utf8();
                        return Ok(&self.text[start..self.pos]);
                    }
                }
                _ => {}
            }
        }
        Err(self.error("unbalanced brackets"))
    }

    /// An attribute value: a balanced group, a string, or everything up to
    /// the next top-level `,` (`size=3x3 pad=1_1x1_1` inside `window={...}`
    /// comes whole as a group).
    pub fn attribute_value(&mut self) -> Result<&'a str, HloError> {
        match self.peek() {
            Some('[') => {
                // The iota form of replica groups, `[2,2]<=[4]` or
                // `[2,2]<=[2,2]T(1,0)`, is one value.
                let start = self.pos;
                self.balanced()?;
                if self.rest().starts_with("<=") {
                    self.pos += 2;
                    self.balanced()?;
                    if self.rest().starts_with("T(") {
                        self.pos += 1;
                        self.balanced()?;
                    }
                }
                Ok(&self.text[start..self.pos])
            }
            Some('{' | '(') => self.balanced(),
            Some('"') => {
                let start = self.pos;
                let rest = &self.rest()[1..];
                let mut escaped = false;
                for (i, c) in rest.char_indices() {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            self.pos = start + 1 + i + 1;
                            return Ok(&self.text[start..self.pos]);
                        }
                        _ => escaped = false,
                    }
                }
                Err(self.error("unclosed string"))
            }
            _ => {
                let start = self.pos;
                let rest = self.rest();
                let mut depth = 0usize;
                let mut end = rest.len();
                for (i, c) in rest.char_indices() {
                    match c {
                        '{' | '(' | '[' => depth += 1,
                        '}' | ')' | ']' => depth = depth.saturating_sub(1),
                        ',' if depth == 0 => {
                            end = i;
                            break;
                        }
                        _ => {}
                    }
                }
                self.pos = start + end;
                Ok(rest[..end].trim())
            }
        }
    }
}
