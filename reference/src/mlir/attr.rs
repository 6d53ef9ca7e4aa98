//! Attribute values: `3 : i64`, `[1, 2]`, `array<i64: 1, 2>`,
//! `dense<...> : tensor<...>`, `#stablehlo<comparison_direction EQ>`,
//! `#stablehlo.gather<offset_dims = [1], ...>`, `{k = v}`, `@sym`, types.

use super::cursor::{Cursor, MAX_DEPTH};
use super::types::{self, Ty};
use super::{quote, MlirError};

type R<T> = Result<T, MlirError>;

/// An attribute value, as read; what it means is decided by the op that
/// holds it.
#[derive(Clone, Debug)]
pub enum Attr<'a> {
    /// A number as written (`3`, `-1.5e+00`, `0x7FC00000`).
    Number(&'a str),
    Bool(bool),
    Str(String),
    List(Vec<Attr<'a>>),
    /// `array<i64: 1, 2>`: the elements as written.
    DenseArray(Vec<&'a str>),
    /// `dense<...>`: the span inside the angle brackets and, where written,
    /// its type.
    Dense {
        body: (usize, usize),
        ty: Option<Ty>,
    },
    /// An enum value or a bare keyword: `#stablehlo<precision DEFAULT>` and
    /// `DEFAULT` both read as `Enum("DEFAULT")`.
    Enum(&'a str),
    /// `#dialect.name<key = value, ...>` (the name without `#`).
    Struct(&'a str, Vec<(&'a str, Attr<'a>)>),
    /// `#dialect.name<...>` whose body is not `key = value` pairs (the span
    /// inside the angle brackets), e.g. `#stablehlo.conv<[b, 0, f]x...>`.
    Raw(&'a str, (usize, usize)),
    Dict(Vec<(&'a str, Attr<'a>)>),
    Symbol(&'a str),
    Type(Ty),
    Unit,
}

impl<'a> Attr<'a> {
    /// What kind of value this is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Attr::Number(_) => "a number".into(),
            Attr::Bool(_) => "a boolean".into(),
            Attr::Str(_) => "a string".into(),
            Attr::List(_) => "a list".into(),
            Attr::DenseArray(_) => "an array<...>".into(),
            Attr::Dense { .. } => "a dense<...>".into(),
            Attr::Enum(_) => "a keyword".into(),
            Attr::Struct(name, _) | Attr::Raw(name, _) => format!("a #{}<...> attribute", quote(name).trim_matches('`')),
            Attr::Dict(_) => "a dictionary".into(),
            Attr::Symbol(_) => "a symbol".into(),
            Attr::Type(t) => format!("the type {}", t.shape()),
            Attr::Unit => "a unit attribute".into(),
        }
    }

    /// The field `key` of a struct or dictionary attribute.
    pub fn field(&self, key: &str) -> Option<&Attr<'a>> {
        match self {
            Attr::Struct(_, fields) | Attr::Dict(fields) => fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// An attribute value. With `typed`, a `: type` suffix (as in attribute
/// dictionaries, `0 : i64`) is read as part of it.
pub fn value<'a>(c: &mut Cursor<'a>, typed: bool, depth: usize) -> R<Attr<'a>> {
    if depth > MAX_DEPTH {
        return Err(c.error("attributes nested too deeply"));
    }
    c.skip_ws();
    let at = c.pos;
    let v = match c.peek() {
        None => return Err(c.error("expected an attribute value, found the end of the input")),
        Some(b'[') => {
            c.expect("[")?;
            Attr::List(list(c, "]", depth)?)
        }
        Some(b'{') => Attr::Dict(dict(c, depth)?),
        Some(b'"') => Attr::Str(c.string()?),
        Some(b'@') => {
            let s = c.sigil_name(b'@')?;
            // Nested references `@a::@b` name the last symbol.
            let mut last = s;
            while c.eat("::") {
                last = c.sigil_name(b'@')?;
            }
            Attr::Symbol(last)
        }
        Some(b'#') => hash_attr(c, depth)?,
        Some(b'!') => Attr::Type(types::ty(c, depth + 1)?),
        Some(b) if b == b'-' || b == b'+' || b.is_ascii_digit() => Attr::Number(c.number_text()?),
        Some(b'(') => {
            // A complex number `(re, im)` in a splat or an attribute.
            let (s, e) = c.balanced()?;
            Attr::Raw("complex", (s, e))
        }
        Some(_) => word(c, depth, at)?,
    };
    if typed && matches!(v, Attr::Number(_) | Attr::Bool(_) | Attr::Str(_) | Attr::Dense { .. }) {
        let mut probe = *c;
        if probe.eat(":") && !probe.peek_str(":") {
            let t = types::ty(&mut probe, depth + 1)?;
            *c = probe;
            if let Attr::Dense { body, .. } = v {
                return Ok(Attr::Dense { body, ty: Some(t) });
            }
        }
    }
    Ok(v)
}

/// Values that start with a word: `true`, `dense<...>`, `array<...>`,
/// `unit`, `loc(...)`, types, enum keywords.
fn word<'a>(c: &mut Cursor<'a>, depth: usize, at: usize) -> R<Attr<'a>> {
    let mut probe = *c;
    let w = probe.ident()?;
    match w {
        "true" => {
            *c = probe;
            Ok(Attr::Bool(true))
        }
        "false" => {
            *c = probe;
            Ok(Attr::Bool(false))
        }
        "unit" => {
            *c = probe;
            Ok(Attr::Unit)
        }
        "loc" => {
            *c = probe;
            c.balanced()?;
            Ok(Attr::Unit)
        }
        "dense" => {
            *c = probe;
            let body = c.balanced()?;
            Ok(Attr::Dense { body, ty: None })
        }
        "dense_resource" | "sparse" => {
            Err(c.error_at(at, format!("{} attributes are not read (write the values inline as dense<...>)", quote(w))))
        }
        "array" => {
            *c = probe;
            c.expect("<")?;
            c.ident()?;
            if c.eat(">") {
                return Ok(Attr::DenseArray(vec![]));
            }
            c.expect(":")?;
            let mut items = Vec::new();
            if !c.eat(">") {
                loop {
                    c.skip_ws();
                    let item = if c.peek().is_some_and(|b| b.is_ascii_alphabetic()) { c.ident()? } else { c.number_text()? };
                    items.push(item);
                    if c.eat(">") {
                        break;
                    }
                    c.expect(",")?;
                }
            }
            Ok(Attr::DenseArray(items))
        }
        "tensor" | "tuple" | "complex" => Ok(Attr::Type(types::ty(c, depth + 1)?)),
        _ if types::element_type(c, at, w).is_ok() && !probe.peek_str("=") => Ok(Attr::Type(types::ty(c, depth + 1)?)),
        _ => {
            *c = probe;
            // `affine_map<...>` and other words with a body are kept raw.
            if c.peek_str("<") {
                let body = c.balanced()?;
                return Ok(Attr::Raw(w, body));
            }
            Ok(Attr::Enum(w))
        }
    }
}

/// `#stablehlo<kind VALUE>`, `#dialect.name<k = v, ...>`, `#alias`.
fn hash_attr<'a>(c: &mut Cursor<'a>, depth: usize) -> R<Attr<'a>> {
    let at = c.pos;
    let name = c.sigil_name(b'#')?;
    let name = &name[1..];
    if !c.rest().starts_with('<') {
        // An alias defined at the top of the file (`#loc1 = loc(...)`):
        // only locations use them in the programs xlaref reads.
        return Ok(Attr::Raw(name, (at, at)));
    }
    let (s, e) = c.balanced()?;
    let mut inner = c.span(s, e);
    if !name.contains('.') {
        // `#stablehlo<comparison_direction EQ>`: the kind, then the value.
        inner.ident()?;
        let v = inner.ident()?;
        if !inner.at_end() {
            return Ok(Attr::Raw(name, (s, e)));
        }
        return Ok(Attr::Enum(v));
    }
    let mut probe = inner;
    if probe.at_end() {
        return Ok(Attr::Struct(name, vec![]));
    }
    if probe.ident().is_ok() && probe.peek_str("=") {
        let mut fields = Vec::new();
        loop {
            let key = inner.ident()?;
            inner.expect("=")?;
            fields.push((key, value(&mut inner, false, depth + 1)?));
            if inner.at_end() {
                return Ok(Attr::Struct(name, fields));
            }
            inner.expect(",")?;
        }
    }
    Ok(Attr::Raw(name, (s, e)))
}

/// Items up to `close`, comma-separated (the opening bracket is read).
pub fn list<'a>(c: &mut Cursor<'a>, close: &str, depth: usize) -> R<Vec<Attr<'a>>> {
    let mut items = Vec::new();
    if c.eat(close) {
        return Ok(items);
    }
    loop {
        items.push(value(c, true, depth + 1)?);
        if c.eat(close) {
            return Ok(items);
        }
        c.expect(",")?;
    }
}

/// `{key = value, key, ...}` (a key alone is a unit attribute).
pub fn dict<'a>(c: &mut Cursor<'a>, depth: usize) -> R<Vec<(&'a str, Attr<'a>)>> {
    c.expect("{")?;
    let mut fields = Vec::new();
    if c.eat("}") {
        return Ok(fields);
    }
    loop {
        c.skip_ws();
        let key = if c.peek() == Some(b'"') {
            // Quoted keys are never attributes xlaref needs.
            c.string()?;
            "\"quoted\""
        } else {
            c.ident()?
        };
        let v = if c.eat("=") { value(c, true, depth + 1)? } else { Attr::Unit };
        fields.push((key, v));
        if c.eat("}") {
            return Ok(fields);
        }
        c.expect(",")?;
    }
}
