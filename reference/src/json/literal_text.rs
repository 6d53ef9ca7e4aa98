//! Literals read straight from JSON text into typed arrays.
//!
//! [`super::read_typed_literal`] reads a `serde_json::Value` tree; with
//! arbitrary-precision numbers each element costs a `Value` and a heap
//! string, so a 67 MB argument file took 3.5 GB. This reader scans the text
//! once and pushes each element into the array's own `Vec<T>`: its peak is
//! the text plus the arrays.
//!
//! It reads the common forms only: static array shapes, tuples and tokens,
//! elements as numbers, strings without escapes, complex pairs, booleans.
//! On anything else (a dynamic shape, the `bytes` form, an escape, an error
//! of any kind) it gives up and the tree reader reads the same text, so
//! what is accepted and every error message are the tree reader's. Only a
//! text too large for a tree ([`MAX_TREE_BYTES`]) gets this reader's own,
//! shorter error.

use num_complex::Complex;
use serde_json::Value;

use super::literal::{read_float_string, read_int_text};
use super::path::Path;
use crate::error::ReadError;
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::decimal::round_decimal;
use crate::numerics::float::Float;
use crate::numerics::int::Int;
use crate::numerics::small_float::{self, Format};
use crate::types::{ArrayShape, ElementType, Shape};

/// The largest text the tree reader is run on to explain an error.
const MAX_TREE_BYTES: usize = 64 << 20;

/// Deepest nesting of values skipped over (as the tree reader's limit).
const MAX_DEPTH: usize = 128;

/// How the typed literals sit in the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `[literal, ...]`, or an object whose `args` key holds that list (a
    /// case file).
    Args,
    /// `[literal, ...]`.
    List,
    /// `[[literal, ...], ...]`: one list per replica.
    Lists,
}

/// Reads the typed literals of a document laid out as `layout`; the paths
/// of errors start with `name` (`args`, `infeed`, `replica_args`).
pub fn read_typed_literals(text: &str, layout: Layout, name: &str, max_elements: i64) -> Result<Vec<Vec<Literal>>, ReadError> {
    let mut scan = Scan { b: text.as_bytes(), pos: 0, max_elements, failed: None };
    match scan.document(layout) {
        Some(lists) => Ok(lists),
        None if text.len() <= MAX_TREE_BYTES => read_with_tree(text, layout, name, max_elements),
        None => Err(scan.error(text)),
    }
}

/// Reads one literal of `shape` from JSON text (`--arg SHAPE=VALUE`).
pub fn read_literal_text(text: &str, shape: &Shape, path: &Path, max_elements: i64) -> Result<Literal, ReadError> {
    let mut scan = Scan { b: text.as_bytes(), pos: 0, max_elements, failed: None };
    if let Some(literal) = scan.literal(shape).filter(|_| scan.at_end()) {
        return Ok(literal);
    }
    if text.len() > MAX_TREE_BYTES {
        return Err(scan.error(text));
    }
    let value = super::parse_json(text)?;
    super::read_literal(&value, shape, path, max_elements)
}

/// `{"bytes": hex}`: raw little-endian elements (docs/format.md §2).
pub(crate) fn bytes_value(bytes: &[u8]) -> Value {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &x in bytes {
        text.push(char::from(HEX[usize::from(x >> 4)]));
        text.push(char::from(HEX[usize::from(x & 15)]));
    }
    let mut m = serde_json::Map::new();
    m.insert("bytes".into(), Value::String(text));
    Value::Object(m)
}

/// Whether `text` is a number by JSON's grammar.
pub(crate) fn is_json_number(text: &str) -> bool {
    let mut scan = Scan { b: text.as_bytes(), pos: 0, max_elements: 0, failed: None };
    scan.number().is_some() && scan.pos == text.len()
}

/// A float element from a JSON number's text, rounded once into `T`
/// exactly as the tree reader rounds it.
pub(crate) fn float_from_number<T: Float>(text: &str, format: Option<Format>) -> Option<T> {
    let x = match format {
        Some(f) => round_decimal(text, f),
        None if T::WIDTH == 32 => text.parse::<f32>().ok().map(f64::from),
        None => text.parse::<f64>().ok(),
    };
    x.map(T::from_f64)
}

/// The tree reader on the whole document: what the scan could not read.
fn read_with_tree(text: &str, layout: Layout, name: &str, max: i64) -> Result<Vec<Vec<Literal>>, ReadError> {
    let doc = super::parse_json(text)?;
    let list_of = |v: &Value, path: &Path| -> Result<Vec<Literal>, ReadError> {
        let list = v.as_array().ok_or_else(|| path.error("expected a list of typed literals"))?;
        list.iter().enumerate().map(|(i, v)| super::read_typed_literal(v, &path.index(i), max)).collect()
    };
    let root = Path::new(name);
    match (layout, &doc) {
        (Layout::Args, Value::Object(o)) if o.contains_key("args") => Ok(vec![list_of(&o["args"], &root)?]),
        (Layout::Args | Layout::List, _) => Ok(vec![list_of(&doc, &root)?]),
        (Layout::Lists, _) => {
            let lists = doc.as_array().ok_or_else(|| root.error("expected a list with one list of typed literals per replica"))?;
            lists.iter().enumerate().map(|(r, l)| list_of(l, &root.index(r))).collect()
        }
    }
}

/// A cursor over the JSON text. Every method returns `None` on anything it
/// does not read, leaving the position and a reason in `failed`.
struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
    max_elements: i64,
    failed: Option<(usize, &'static str)>,
}

impl<'a> Scan<'a> {
    fn fail<T>(&mut self, why: &'static str) -> Option<T> {
        self.failed.get_or_insert((self.pos, why));
        None
    }

    /// The scan's own error: where it stopped and why.
    fn error(&self, text: &str) -> ReadError {
        let (at, why) = self.failed.unwrap_or((self.pos, "not a literal"));
        let before = &text.as_bytes()[..at.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        ReadError::new(format!("line {line} column {column}"), why)
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn at_end(&mut self) -> bool {
        self.ws();
        self.pos == self.b.len()
    }

    /// Skips white space, then eats `c` if it comes next.
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.b.get(self.pos) == Some(&c);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, c: u8, why: &'static str) -> Option<()> {
        if self.eat(c) {
            Some(())
        } else {
            self.fail(why)
        }
    }

    fn document(&mut self, layout: Layout) -> Option<Vec<Vec<Literal>>> {
        self.ws();
        let lists = match layout {
            Layout::Args if self.b.get(self.pos) == Some(&b'{') => vec![self.args_of_object()?],
            Layout::Args | Layout::List => vec![self.list(Self::typed_literal)?],
            Layout::Lists => self.list(|s| s.list(Self::typed_literal))?,
        };
        if self.at_end() {
            Some(lists)
        } else {
            self.fail("text after the end")
        }
    }

    /// `[x, ...]` with each `x` read by `item`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.expect(b'[', "expected a list")?;
        let mut out = Vec::new();
        if self.eat(b']') {
            return Some(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(b']') {
                return Some(out);
            }
            self.expect(b',', "expected `,` or `]`")?;
        }
    }

    /// A case file's `args`, every other key skipped.
    fn args_of_object(&mut self) -> Option<Vec<Literal>> {
        let mut args = None;
        self.object(|s, key| {
            if key == "args" && args.is_none() {
                args = Some(s.list(Self::typed_literal)?);
                Some(())
            } else {
                s.skip_value(0)
            }
        })?;
        args.or_else(|| self.fail("no `args` key"))
    }

    /// `{"key": value, ...}` with each value read by `field`.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.expect(b'{', "expected an object")?;
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.expect(b':', "expected `:`")?;
            field(self, key)?;
            if self.eat(b'}') {
                return Some(());
            }
            self.expect(b',', "expected `,` or `}`")?;
        }
    }

    /// `{"shape": ..., "value": ...}` in either order.
    fn typed_literal(&mut self) -> Option<Literal> {
        let (mut shape, mut value_at, mut literal) = (None::<Shape>, None::<usize>, None);
        self.object(|s, key| match key {
            "shape" if shape.is_none() => {
                s.ws();
                shape = Some(Shape::parse(s.string()?).ok().or_else(|| s.fail("not a shape"))?);
                Some(())
            }
            "value" if value_at.is_none() => {
                s.ws();
                value_at = Some(s.pos);
                match &shape {
                    Some(shape) => literal = Some(s.literal(shape)?),
                    None => s.skip_value(0)?,
                }
                Some(())
            }
            _ => s.fail("unknown or repeated key in a typed literal"),
        })?;
        if literal.is_none() {
            // The value came before the shape: read it now.
            let (Some(shape), Some(at)) = (&shape, value_at) else { return self.fail("a typed literal needs `shape` and `value`") };
            let end = self.pos;
            self.pos = at;
            literal = Some(self.literal(shape)?);
            self.pos = end;
        }
        literal
    }

    fn literal(&mut self, shape: &Shape) -> Option<Literal> {
        match shape {
            Shape::Token => {
                let mut seen = false;
                self.object(|s, key| {
                    if key == "token" && !seen && s.eat_word("null") {
                        seen = true;
                        Some(())
                    } else {
                        s.fail("not a token")
                    }
                })?;
                seen.then_some(Literal::Token).or_else(|| self.fail("not a token"))
            }
            Shape::Tuple(elements) => {
                let mut out = None;
                self.object(|s, key| {
                    if key != "tuple" || out.is_some() {
                        return s.fail("not a tuple");
                    }
                    let mut shapes = elements.iter();
                    let items = s.list(|s| match shapes.next() {
                        Some(e) => s.literal(e),
                        None => s.fail("too many tuple elements"),
                    })?;
                    out = Some(items);
                    Some(())
                })?;
                out.filter(|items| items.len() == elements.len()).map(Literal::Tuple).or_else(|| self.fail("not a tuple"))
            }
            Shape::Array(a) if a.is_dynamic() => self.fail("a dynamic shape"),
            Shape::Array(a) => self.array(a).map(Literal::Array),
        }
    }

    fn array(&mut self, shape: &ArrayShape) -> Option<ArrayLiteral> {
        if Shape::Array(shape.clone()).written_size() > self.max_elements {
            return self.fail("more elements than the limit");
        }
        // Every element takes at least a character: reserve no more than the text can fill.
        let n = shape.element_count().min(self.b.len() - self.pos);
        let dims = &shape.dims;
        let t = shape.element_type;
        let data = crate::by_type!(t, T => {
            pred: self.elements(dims, n, |s| {
                s.ws();
                if s.eat_word("true") {
                    Some(true)
                } else if s.eat_word("false") {
                    Some(false)
                } else {
                    s.fail("expected true or false")
                }
            }),
            int: self.elements(dims, n, |s| s.integer(t).map(T::wrap_i128)),
            float: self.elements(dims, n, |s| s.float::<T>(small_float::narrow_format(t))),
            complex: self.elements::<T>(dims, n, |s| s.complex()),
        })?;
        Some(ArrayLiteral::new(dims.clone(), data))
    }

    /// The nested lists of `dims`, each element read by `element`, into one
    /// `Vec` reserved at its final length.
    fn elements<T: Stored>(&mut self, dims: &[i64], n: usize, mut element: impl FnMut(&mut Self) -> Option<T>) -> Option<Data> {
        let mut out = Vec::with_capacity(n);
        self.nested(dims, &mut out, &mut element)?;
        Some(T::wrap(out))
    }

    fn nested<T>(&mut self, dims: &[i64], out: &mut Vec<T>, element: &mut impl FnMut(&mut Self) -> Option<T>) -> Option<()> {
        let Some((&d, inner)) = dims.split_first() else {
            out.push(element(self)?);
            return Some(());
        };
        self.expect(b'[', "expected a list")?;
        for i in 0..d {
            if i > 0 {
                self.expect(b',', "expected `,` (too few entries?)")?;
            }
            self.nested(inner, out, element)?;
        }
        self.expect(b']', "expected `]` (too many entries?)")
    }

    fn eat_word(&mut self, word: &str) -> bool {
        self.ws();
        let hit = self.b[self.pos..].starts_with(word.as_bytes());
        self.pos += if hit { word.len() } else { 0 };
        hit
    }

    /// A string without escapes, as text.
    fn string(&mut self) -> Option<&'a str> {
        if self.b.get(self.pos) != Some(&b'"') {
            return self.fail("expected a string");
        }
        let start = self.pos + 1;
        let len = self.b[start..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        if self.b[start + len] != b'"' {
            return self.fail("a string with an escape");
        }
        self.pos = start + len + 1;
        std::str::from_utf8(&self.b[start..start + len]).ok()
    }

    /// A number's text, by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let digits = |s: &mut Self| {
            let from = s.pos;
            while s.b.get(s.pos).is_some_and(u8::is_ascii_digit) {
                s.pos += 1;
            }
            s.pos > from
        };
        self.pos += usize::from(self.b.get(self.pos) == Some(&b'-'));
        let leading_zero = self.b.get(self.pos) == Some(&b'0');
        if !digits(self) || (leading_zero && self.pos - start > 1 + usize::from(self.b[start] == b'-')) {
            return self.fail("not a JSON number");
        }
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !digits(self) {
                return self.fail("not a JSON number");
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if !digits(self) {
                return self.fail("not a JSON number");
            }
        }
        std::str::from_utf8(&self.b[start..self.pos]).ok()
    }

    /// An integer element: a number or a decimal string, in range.
    fn integer(&mut self, t: ElementType) -> Option<i128> {
        self.ws();
        let text = if self.b.get(self.pos) == Some(&b'"') { self.string()? } else { self.number()? };
        read_int_text(text, t).ok().or_else(|| self.fail("not an integer of the type"))
    }

    /// A float element: a number rounded once into the type (as the tree
    /// reader does), or one of the strings it takes.
    fn float<T: Float>(&mut self, format: Option<Format>) -> Option<T> {
        self.ws();
        if self.b.get(self.pos) == Some(&b'"') {
            let text = self.string()?;
            return read_float_string::<T>(text).ok().or_else(|| self.fail("not a float"));
        }
        let text = self.number()?;
        float_from_number(text, format).or_else(|| self.fail("not a number"))
    }

    fn complex<T: Float>(&mut self) -> Option<Complex<T>> {
        self.expect(b'[', "a complex element is a pair [re, im]")?;
        let re = self.float::<T>(None)?;
        self.expect(b',', "a complex element is a pair [re, im]")?;
        let im = self.float::<T>(None)?;
        self.expect(b']', "a complex element is a pair [re, im]")?;
        Some(Complex::new(re, im))
    }

    /// Skips any JSON value (checked only as far as finding its end).
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        self.ws();
        match self.b.get(self.pos) {
            Some(b'[') => self.list(|s| s.skip_value(depth + 1)).map(drop),
            Some(b'{') => self.object(|s, _| s.skip_value(depth + 1)),
            Some(b'"') => self.string().map(drop),
            Some(b't') if self.eat_word("true") => Some(()),
            Some(b'f') if self.eat_word("false") => Some(()),
            Some(b'n') if self.eat_word("null") => Some(()),
            _ => self.number().map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str, layout: Layout) -> Result<Vec<Vec<Literal>>, ReadError> {
        read_with_tree(text, layout, "args", 1 << 20)
    }

    /// Literals as exact JSON (NaN payloads as bits), for comparing.
    fn exact(lists: &[Vec<Literal>]) -> Vec<Value> {
        let options = super::super::WriteOptions { exact_bits: true };
        lists.iter().flatten().map(|l| super::super::write_typed_literal(l, options)).collect()
    }

    fn scanned(text: &str, layout: Layout) -> Option<Vec<Vec<Literal>>> {
        Scan { b: text.as_bytes(), pos: 0, max_elements: 1 << 20, failed: None }.document(layout)
    }

    #[test]
    fn the_scan_reads_what_the_tree_reads() {
        let docs = [
            r#"[{"shape": "f32[2,3]", "value": [[1, 2.5, -0], [1e-45, 3.4028235e38, "nan"]]}]"#,
            r#"[{"value": [[1, 2], [3, 4]], "shape": "s8[2,2]"}, {"shape": "u64[]", "value": "18446744073709551615"}]"#,
            r#"{"name": "x", "module": {"a": [1, {"b": null}]}, "args": [{"shape": "pred[3]", "value": [true, false, true]}]}"#,
            r#"[{"shape": "c64[2]", "value": [[1, 2], ["-inf", "0x7fc00001"]]}, {"shape": "bf16[2]", "value": [1.00390625, 3.1]}]"#,
            r#"[{"shape": "(f64[0], token[], (s32[]))", "value": {"tuple": [[], {"token": null}, {"tuple": [7]}]}}]"#,
            r#"[{"shape": "f16[2,0]", "value": [[], []]}, {"shape": "f8e4m3fn[1]", "value": [448]}]"#,
        ];
        for doc in docs {
            let fast = scanned(doc, Layout::Args).unwrap_or_else(|| panic!("scans: {doc}"));
            assert_eq!(exact(&fast), exact(&tree(doc, Layout::Args).expect("reads")), "{doc}");
        }
        let lists = r#"[[{"shape": "s32[]", "value": 1}], []]"#;
        assert_eq!(scanned(lists, Layout::Lists), Some(tree(lists, Layout::Lists).expect("reads")));
    }

    #[test]
    fn what_the_scan_cannot_read_goes_to_the_tree_reader() {
        for doc in [
            r#"[{"shape": "f32[<=3]", "value": [1, 2]}]"#,
            r#"[{"shape": "f32[2]", "value": {"bytes": "0000803f00000040"}}]"#,
            r#"[{"shape": "f32[2]", "value": ["\u006ean", 1]}]"#,
        ] {
            assert!(scanned(doc, Layout::Args).is_none(), "{doc}");
            let read = read_typed_literals(doc, Layout::Args, "args", 100).expect("the tree reader reads it");
            assert_eq!(exact(&read), exact(&tree(doc, Layout::Args).expect("reads")));
        }
        for doc in [
            r#"[{"shape": "f32[2]", "value": [1, 2, 3]}]"#,
            r#"[{"shape": "f32[2]", "value": [1, 01]}]"#,
            r#"[{"shape": "s8[1]", "value": [128]}]"#,
            r#"[{"shape": "f32[2]", "value": [1, 2], "shape": "f32[2]"}]"#,
            r#"[{"shape": "f32[1]", "value": [1]}] x"#,
            r#"[{"shape": "(f32[])", "value": {"tuple": [1, 2]}}]"#,
        ] {
            assert!(scanned(doc, Layout::Args).is_none(), "{doc}");
            let (got, want) = (read_typed_literals(doc, Layout::Args, "args", 100), tree(doc, Layout::Args));
            assert!(got.is_err() && got == want, "{doc}: {got:?} vs {want:?}");
        }
    }

    #[test]
    fn one_literal_from_text() {
        let shape = Shape::parse("s32[2]").expect("shape");
        let got = read_literal_text("[1, -2]", &shape, &Path::new("--arg"), 10).expect("reads");
        assert_eq!(got, Literal::Array(ArrayLiteral::new(vec![2], Data::S32(vec![1, -2]))));
        assert!(read_literal_text("[1, -2, 3]", &shape, &Path::new("--arg"), 10).is_err());
    }
}
