//! A position in MLIR text, and the lexical pieces of its grammar: value
//! names (`%0`, `%arg0#1`), symbols (`@main`), identifiers
//! (`stablehlo.add`), strings, numbers and balanced groups.

use super::MlirError;

/// Deepest nesting of brackets, regions and types the reader follows; past
/// it the input is rejected instead of overflowing the stack.
pub const MAX_DEPTH: usize = 200;

/// Deepest nesting of regions (each level is several stack frames in the
/// reader and in the evaluators; real programs nest a handful).
pub const MAX_REGION_DEPTH: usize = 64;

/// Characters of identifiers and of the suffixes of `%`/`@`/`^` names.
fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'-')
}

#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    text: &'a str,
    pub pos: usize,
    /// The cursor reads nothing at or past `end`.
    end: usize,
}

/// The bytes [`Cursor::balanced`] stops at: brackets and quotes.
static BRACKET_OR_QUOTE: [bool; 256] = {
    let mut table = [false; 256];
    let special = b"()[]{}<>\"";
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
};

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0, end: text.len() }
    }

    /// A cursor over `text[start..end]` of the same text, so errors keep
    /// their place in the file.
    pub fn span(&self, start: usize, end: usize) -> Cursor<'a> {
        Cursor { text: self.text, pos: start, end }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Line and column (1-based, in characters) of byte offset `pos`.
    pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
        let pos = pos.min(text.len());
        let before = &text.as_bytes()[..pos];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = text.get(start..pos).map_or(pos - start, |s| s.chars().count()) + 1;
        (line, column)
    }

    pub fn error_at(&self, pos: usize, message: impl Into<String>) -> MlirError {
        let (line, column) = Cursor::line_col(self.text, pos);
        MlirError { line, column, message: message.into() }
    }

    pub fn error(&self, message: impl Into<String>) -> MlirError {
        self.error_at(self.pos, message)
    }

    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..self.end).unwrap_or("")
    }

    /// A short quote of what comes next, for messages.
    pub fn found(&self) -> String {
        let r = self.rest();
        if r.is_empty() {
            return "the end of the input".into();
        }
        let word: String = r.chars().take(24).take_while(|&c| c != '\n').collect();
        super::quote(&word)
    }

    /// Skips blanks and `//` comments.
    pub fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.pos < self.end {
            let b = bytes[self.pos];
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if b == b'/' && bytes.get(self.pos + 1) == Some(&b'/') {
                while self.pos < self.end && bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else {
                return;
            }
        }
    }

    pub fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.end
    }

    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.as_bytes().get(self.pos).copied().filter(|_| self.pos < self.end)
    }

    pub fn peek_str(&mut self, s: &str) -> bool {
        self.skip_ws();
        // One byte (`[`, `,`) is most of what dense literals ask: no memcmp call.
        if let [one] = s.as_bytes() {
            return self.pos < self.end && self.text.as_bytes()[self.pos] == *one;
        }
        self.rest().starts_with(s)
    }

    /// Consumes `s` (after blanks) if it comes next.
    pub fn eat(&mut self, s: &str) -> bool {
        if self.peek_str(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, s: &str) -> Result<(), MlirError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{s}`, found {}", self.found())))
        }
    }

    /// Consumes the keyword `kw` if it comes next as a whole word.
    pub fn eat_keyword(&mut self, kw: &str) -> bool {
        let mut probe = *self;
        if probe.eat(kw) && !probe.text.as_bytes().get(probe.pos).is_some_and(|&b| is_ident_char(b) && probe.pos < probe.end) {
            *self = probe;
            true
        } else {
            false
        }
    }

    pub fn expect_keyword(&mut self, kw: &str) -> Result<(), MlirError> {
        if self.eat_keyword(kw) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{kw}`, found {}", self.found())))
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < self.end && f(bytes[self.pos]) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    /// An identifier: `stablehlo.add`, `dims`, `f32`, `tensor`.
    pub fn ident(&mut self) -> Result<&'a str, MlirError> {
        self.skip_ws();
        if !self.peek().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
            return Err(self.error(format!("expected an identifier, found {}", self.found())));
        }
        Ok(self.take_while(is_ident_char))
    }

    /// A name with a sigil (`%0`, `@main`, `^bb0`, `#loc1`), sigil included.
    /// Quoted symbols (`@"a b"`) are read whole.
    pub fn sigil_name(&mut self, sigil: u8) -> Result<&'a str, MlirError> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() != Some(sigil) {
            return Err(self.error(format!("expected a `{}` name, found {}", sigil as char, self.found())));
        }
        self.pos += 1;
        if self.text.as_bytes().get(self.pos) == Some(&b'"') {
            self.string()?;
        } else if self.take_while(is_ident_char).is_empty() {
            return Err(self.error_at(start, format!("a bare `{}`", sigil as char)));
        }
        Ok(&self.text[start..self.pos])
    }

    /// A string literal, unescaped.
    pub fn string(&mut self) -> Result<String, MlirError> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(self.error(format!("expected a string, found {}", self.found())));
        }
        self.pos += 1;
        let mut out = Vec::new();
        let bytes = self.text.as_bytes();
        while self.pos < self.end {
            let b = bytes[self.pos];
            self.pos += 1;
            match b {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let hex = |i: usize| bytes.get(i).and_then(|&c| (c as char).to_digit(16));
                    match bytes.get(self.pos) {
                        Some(b'n') => {
                            out.push(b'\n');
                            self.pos += 1;
                        }
                        Some(b't') => {
                            out.push(b'\t');
                            self.pos += 1;
                        }
                        Some(&c @ (b'"' | b'\\')) => {
                            out.push(c);
                            self.pos += 1;
                        }
                        _ => match (hex(self.pos), hex(self.pos + 1)) {
                            (Some(h), Some(l)) => {
                                out.push((h * 16 + l) as u8);
                                self.pos += 2;
                            }
                            _ => return Err(self.error("a `\\` escape that is neither two hex digits nor n, t, \\ or \"")),
                        },
                    }
                }
                _ => out.push(b),
            }
        }
        Err(self.error_at(start, "a string that is not closed"))
    }

    /// A number as written (`-12`, `1.5e+00`, `0x7FC00000`), not converted.
    pub fn number_text(&mut self) -> Result<&'a str, MlirError> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        if self.pos < self.end && matches!(bytes[self.pos], b'-' | b'+') {
            self.pos += 1;
        }
        if self.rest().starts_with("0x") || self.rest().starts_with("0X") {
            self.pos += 2;
            self.take_while(|b| b.is_ascii_hexdigit());
        } else {
            let digits = self.take_while(|b| b.is_ascii_digit());
            if digits.is_empty() {
                self.pos = start;
                return Err(self.error(format!("expected a number, found {}", self.found())));
            }
            if self.pos < self.end && bytes[self.pos] == b'.' {
                self.pos += 1;
                self.take_while(|b| b.is_ascii_digit());
            }
            if self.pos < self.end && matches!(bytes[self.pos], b'e' | b'E') {
                let save = self.pos;
                self.pos += 1;
                if self.pos < self.end && matches!(bytes[self.pos], b'-' | b'+') {
                    self.pos += 1;
                }
                if self.take_while(|b| b.is_ascii_digit()).is_empty() {
                    self.pos = save;
                }
            }
        }
        Ok(&self.text[start..self.pos])
    }

    /// A (possibly negative) integer.
    pub fn integer(&mut self) -> Result<i64, MlirError> {
        let start = self.pos;
        let t = self.number_text()?;
        t.parse::<i64>().map_err(|_| self.error_at(start, format!("expected an integer, found {}", super::quote(t))))
    }

    /// Skips one balanced group opened by the next character (`(`, `[`,
    /// `{` or `<`), strings included; returns the span inside it.
    pub fn balanced(&mut self) -> Result<(usize, usize), MlirError> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut stack: Vec<u8> = Vec::new();
        while self.pos < self.end {
            let b = bytes[self.pos];
            match b {
                b'(' | b'[' | b'{' | b'<' => {
                    if stack.len() >= MAX_DEPTH * 4 {
                        return Err(self.error("brackets nested too deeply"));
                    }
                    stack.push(b);
                }
                b')' | b']' | b'}' | b'>' => {
                    // `->` is an arrow, not a closing angle bracket.
                    if b == b'>' && self.pos > 0 && bytes[self.pos - 1] == b'-' {
                        self.pos += 1;
                        continue;
                    }
                    let open = match b {
                        b')' => b'(',
                        b']' => b'[',
                        b'}' => b'{',
                        _ => b'<',
                    };
                    if stack.pop() != Some(open) {
                        return Err(self.error(format!("unbalanced `{}`", b as char)));
                    }
                    if stack.is_empty() {
                        self.pos += 1;
                        return Ok((start + 1, self.pos - 1));
                    }
                }
                b'"' => {
                    self.string()?;
                    continue;
                }
                _ => {}
            }
            if stack.is_empty() {
                return Err(self.error(format!("expected a bracketed group, found {}", self.found())));
            }
            self.pos += 1;
            // Skip the run of plain bytes (a dense literal's digits) at once.
            self.pos += bytes[self.pos..self.end].iter().position(|&b| BRACKET_OR_QUOTE[usize::from(b)]).unwrap_or(self.end - self.pos);
        }
        Err(self.error_at(start, "a bracket that is not closed"))
    }
}
