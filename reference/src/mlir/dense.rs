//! `dense<...>` literals: nested lists, splats, complex `(re, im)` pairs,
//! booleans, hex floats (`0x7FC00000`) and the raw little-endian hex form
//! `dense<"0x...">`, read into xla-json/1 literals (docs/format.md §2).

use std::str::FromStr;

use serde_json::{Number, Value};

use super::cursor::Cursor;
use super::types::Ty;
use super::{quote, MlirError};
use crate::types::{ElementType, TypeClass};

type R<T> = Result<T, MlirError>;

/// A dense literal read for its type.
pub enum Dense {
    /// One element for the whole tensor.
    Splat(Value),
    /// Every element, row-major, as nested lists.
    Full(Value),
}

/// Reads the body of `dense<...>` (the span inside the brackets) as a
/// literal of type `ty`; `max_elements` bounds what is materialized.
pub fn literal(c: &Cursor, body: (usize, usize), ty: &Ty, max_elements: u64) -> R<Dense> {
    let elem = ty.elem().ok_or_else(|| c.error_at(body.0, format!("a dense literal of type {}", ty.shape())))?;
    let mut b = c.span(body.0, body.1);
    let count = ty.element_count();
    if b.peek() == Some(b'"') {
        let at = b.pos;
        let text = b.string()?;
        return hex_literal(&b, at, &text, elem, ty.dims(), count, max_elements);
    }
    if b.at_end() {
        if count != 0 {
            return Err(c.error_at(body.0, format!("an empty dense<> for {count} elements")));
        }
        return Ok(Dense::Full(nest(vec![], ty.dims())));
    }
    if b.peek() != Some(b'[') {
        let v = element(&mut b, elem)?;
        if !b.at_end() {
            return Err(b.error(format!("unexpected {} after a splat value", b.found())));
        }
        return Ok(Dense::Splat(v));
    }
    if count > max_elements {
        return Err(c.error_at(body.0, format!("a constant of {count} elements is over the limit of {max_elements}")));
    }
    let v = nested(&mut b, elem, ty.dims())?;
    if !b.at_end() {
        return Err(b.error(format!("unexpected {} after the literal", b.found())));
    }
    Ok(Dense::Full(v))
}

/// A list nested as `dims` says.
fn nested(b: &mut Cursor, elem: ElementType, dims: &[i64]) -> R<Value> {
    let Some((&n, inner)) = dims.split_first() else { return element(b, elem) };
    let at = b.pos;
    b.expect("[")?;
    let mut items = Vec::with_capacity(n.clamp(0, 1 << 16) as usize);
    if !b.eat("]") {
        loop {
            items.push(nested(b, elem, inner)?);
            if b.eat("]") {
                break;
            }
            b.expect(",")?;
        }
    }
    if items.len() as i64 != n {
        return Err(b.error_at(at, format!("a list of {} items where the type has {n}", items.len())));
    }
    Ok(Value::Array(items))
}

/// One element in the JSON form of its type.
fn element(b: &mut Cursor, elem: ElementType) -> R<Value> {
    match elem.class() {
        TypeClass::Complex => {
            let part = if elem == ElementType::C64 { ElementType::F32 } else { ElementType::F64 };
            b.expect("(")?;
            let re = element(b, part)?;
            b.expect(",")?;
            let im = element(b, part)?;
            b.expect(")")?;
            Ok(Value::Array(vec![re, im]))
        }
        TypeClass::Pred => {
            let at = b.pos;
            if b.eat_keyword("true") {
                return Ok(Value::Bool(true));
            }
            if b.eat_keyword("false") {
                return Ok(Value::Bool(false));
            }
            match b.number_text()? {
                "0" => Ok(Value::Bool(false)),
                "1" | "-1" => Ok(Value::Bool(true)),
                t => Err(b.error_at(at, format!("{} is not an i1 value", quote(t)))),
            }
        }
        TypeClass::Signed | TypeClass::Unsigned => {
            let at = b.pos;
            if b.eat_keyword("true") {
                return Ok(Value::from(1));
            }
            if b.eat_keyword("false") {
                return Ok(Value::from(0));
            }
            let t = b.number_text()?;
            if let Some(hex) = t.strip_prefix("0x") {
                let v = u64::from_str_radix(hex, 16).map_err(|_| b.error_at(at, format!("{} is not an integer", quote(t))))?;
                return Ok(Value::from(v));
            }
            if t.contains(['.', 'e', 'E']) {
                return Err(b.error_at(at, format!("{} is not an integer", quote(t))));
            }
            number(b, at, t.trim_start_matches('+'))
        }
        TypeClass::Float => {
            let at = b.pos;
            b.skip_ws();
            for (word, v) in [("inf", "inf"), ("-inf", "-inf"), ("nan", "nan"), ("-nan", "-nan")] {
                if b.eat_keyword(word) {
                    return Ok(Value::from(v));
                }
            }
            let t = b.number_text()?;
            if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                let digits = elem.bit_width() as usize / 4;
                let bits = u64::from_str_radix(hex, 16).map_err(|_| b.error_at(at, format!("{} is not a hex float", quote(t))))?;
                if digits < 16 && bits >> (digits * 4) != 0 {
                    return Err(b.error_at(at, format!("{} is wider than {}", quote(t), elem.name())));
                }
                return Ok(Value::from(format!("0x{bits:0digits$x}")));
            }
            number(b, at, t.trim_start_matches('+'))
        }
    }
}

fn number(b: &Cursor, at: usize, t: &str) -> R<Value> {
    // JSON has no `1.` or `.5`; MLIR prints neither, but accept them.
    let fixed;
    let t = if t.ends_with('.') || t.contains(".e") || t.contains(".E") {
        fixed = t.replacen('.', ".0", 1);
        fixed.as_str()
    } else {
        t
    };
    Number::from_str(t).map(Value::Number).map_err(|_| b.error_at(at, format!("{} is not a number", quote(t))))
}

/// `dense<"0x...">`: the elements' bytes, little-endian, packed; one
/// element's worth is a splat.
fn hex_literal(b: &Cursor, at: usize, text: &str, elem: ElementType, dims: &[i64], count: u64, max: u64) -> R<Dense> {
    let hex =
        text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).ok_or_else(|| b.error_at(at, "a dense string that is not `0x` hex"))?;
    if hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(b.error_at(at, "a dense hex string with an odd number of digits or a non-hex digit"));
    }
    let bytes: Vec<u8> = hex.as_bytes().chunks(2).map(|p| (hex_digit(p[0]) << 4) | hex_digit(p[1])).collect();
    let width = elem.byte_width();
    if bytes.len() == width && count != 1 {
        return Ok(Dense::Splat(from_bytes(&bytes, elem)));
    }
    if count > max {
        return Err(b.error_at(at, format!("a constant of {count} elements is over the limit of {max}")));
    }
    if bytes.len() as u64 != count.saturating_mul(width as u64) {
        return Err(b.error_at(at, format!("{} bytes of hex data for {count} elements of {}", bytes.len(), elem.name())));
    }
    let flat: Vec<Value> = bytes.chunks(width).map(|e| from_bytes(e, elem)).collect();
    Ok(Dense::Full(nest(flat, dims)))
}

/// The nested empty lists of a shape with no elements (`[[], []]` for
/// `[2, 0]`).
fn empty(dims: &[i64]) -> Value {
    match dims.split_first() {
        Some((&n, rest)) if n > 0 && !rest.is_empty() => Value::Array((0..n.min(1 << 20)).map(|_| empty(rest)).collect()),
        _ => Value::Array(vec![]),
    }
}

fn hex_digit(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

/// One element from its little-endian bytes.
fn from_bytes(e: &[u8], elem: ElementType) -> Value {
    let mut raw = [0u8; 16];
    raw[..e.len()].copy_from_slice(e);
    let bits = u128::from_le_bytes(raw);
    let width = elem.bit_width();
    match elem.class() {
        TypeClass::Pred => Value::Bool(bits != 0),
        TypeClass::Unsigned => Value::from(bits as u64),
        TypeClass::Signed => {
            let shift = 128 - width;
            Value::from((((bits << shift) as i128) >> shift) as i64)
        }
        TypeClass::Float => Value::from(format!("0x{bits:0w$x}", w = width as usize / 4)),
        TypeClass::Complex => {
            let half = e.len() / 2;
            let part = if elem == ElementType::C64 { ElementType::F32 } else { ElementType::F64 };
            Value::Array(vec![from_bytes(&e[..half], part), from_bytes(&e[half..], part)])
        }
    }
}

/// Row-major flat elements nested as `dims` says.
fn nest(flat: Vec<Value>, dims: &[i64]) -> Value {
    if flat.is_empty() && !dims.is_empty() {
        return empty(dims);
    }
    let mut level = flat;
    for &d in dims.iter().skip(1).rev() {
        let d = d.max(1) as usize;
        let mut out = Vec::with_capacity(level.len() / d);
        let mut it = level.into_iter();
        loop {
            let chunk: Vec<Value> = it.by_ref().take(d).collect();
            if chunk.is_empty() {
                break;
            }
            out.push(Value::Array(chunk));
        }
        level = out;
    }
    if dims.is_empty() {
        level.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(level)
    }
}

/// An integer tensor attribute (`dense<[[0, 1]]> : tensor<1x2xi64>`) as its
/// dimensions and row-major elements.
pub fn ints(c: &Cursor, body: (usize, usize), ty: &Ty) -> R<(Vec<i64>, Vec<i64>)> {
    let count = ty.element_count();
    if count > 1 << 20 {
        return Err(c.error_at(body.0, "an integer attribute of more than 2^20 elements"));
    }
    let v = match literal(c, body, ty, 1 << 20)? {
        Dense::Splat(v) => vec![v; count as usize],
        Dense::Full(v) => flatten(v),
    };
    let out = v
        .iter()
        .map(|x| match x {
            Value::Bool(b) => Some(*b as i64),
            Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|u| u as i64)),
            _ => None,
        })
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| c.error_at(body.0, "expected an integer tensor attribute"))?;
    Ok((ty.dims().to_vec(), out))
}

fn flatten(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.into_iter().flat_map(flatten).collect(),
        x => vec![x],
    }
}
