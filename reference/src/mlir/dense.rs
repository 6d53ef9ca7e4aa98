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
        return hex_literal(&b, at, &text, elem, count, max_elements);
    }
    if b.at_end() {
        if count != 0 {
            return Err(c.error_at(body.0, format!("an empty dense<> for {count} elements")));
        }
        return Ok(Dense::Full(empty(ty.dims())));
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
    let mut bytes = Vec::with_capacity(count as usize * elem.byte_width());
    nested(&mut b, elem, ty.dims(), &mut bytes)?;
    if !b.at_end() {
        return Err(b.error(format!("unexpected {} after the literal", b.found())));
    }
    Ok(Dense::Full(crate::json::literal_text::bytes_value(&bytes)))
}

/// A list nested as `dims` says, its elements appended as bytes.
fn nested(b: &mut Cursor, elem: ElementType, dims: &[i64], out: &mut Vec<u8>) -> R<()> {
    let Some((&n, inner)) = dims.split_first() else { return encode(b, elem, out) };
    let at = b.pos;
    b.expect("[")?;
    let mut items = 0i64;
    if !b.eat("]") {
        loop {
            nested(b, elem, inner, out)?;
            items += 1;
            if b.eat("]") {
                break;
            }
            b.expect(",")?;
        }
    }
    if items != n {
        return Err(b.error_at(at, format!("a list of {items} items where the type has {n}")));
    }
    Ok(())
}

/// One element, rounded once into its type, appended as its bytes.
fn encode(b: &mut Cursor, elem: ElementType, out: &mut Vec<u8>) -> R<()> {
    let at = b.pos;
    match elem.class() {
        TypeClass::Complex => {
            let part = if elem == ElementType::C64 { ElementType::F32 } else { ElementType::F64 };
            b.expect("(")?;
            encode(b, part, out)?;
            b.expect(",")?;
            encode(b, part, out)?;
            b.expect(")")
        }
        TypeClass::Pred => {
            let v = if b.eat_keyword("true") {
                1
            } else if b.eat_keyword("false") {
                0
            } else {
                match b.number_text()? {
                    "0" => 0,
                    "1" | "-1" => 1,
                    t => return Err(b.error_at(at, format!("{} is not an i1 value", quote(t)))),
                }
            };
            out.push(v);
            Ok(())
        }
        TypeClass::Signed | TypeClass::Unsigned => {
            let v: i128 = if b.eat_keyword("true") {
                1
            } else if b.eat_keyword("false") {
                0
            } else {
                let t = b.number_text()?;
                let parsed = match t.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).ok().map(i128::from),
                    None => t.trim_start_matches('+').parse::<i128>().ok(),
                };
                parsed.ok_or_else(|| b.error_at(at, format!("{} is not an integer", quote(t))))?
            };
            let bits = elem.bit_width();
            let (lo, hi) = if elem.class() == TypeClass::Signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if v < lo || v > hi {
                return Err(b.error_at(at, format!("{v} is out of range for {}", elem.name())));
            }
            out.extend_from_slice(&v.to_le_bytes()[..elem.byte_width()]);
            Ok(())
        }
        TypeClass::Float => {
            let bits = float_bits(b, elem)?;
            out.extend_from_slice(&bits.to_le_bytes()[..elem.byte_width()]);
            Ok(())
        }
    }
}

/// A float element's bits: `inf`/`nan` words, a hex pattern, or a decimal
/// rounded once into the type.
fn float_bits(b: &mut Cursor, elem: ElementType) -> R<u64> {
    use crate::numerics::decimal::round_decimal;
    use crate::numerics::small_float;
    let at = b.pos;
    let special = [("inf", f64::INFINITY), ("-inf", f64::NEG_INFINITY), ("nan", f64::NAN), ("-nan", -f64::NAN)];
    // Only a word starting so can be one of them: most elements skip the search.
    let maybe_special = matches!(b.peek(), Some(b'i' | b'n' | b'-'));
    let word = special.iter().find(|(w, _)| maybe_special && b.eat_keyword(w)).map(|(_, v)| *v);
    let t = if word.is_some() { "" } else { b.number_text()? };
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let bits = u64::from_str_radix(hex, 16).map_err(|_| b.error_at(at, format!("{} is not a hex float", quote(t))))?;
        let width = elem.bit_width();
        if width < 64 && bits >> width != 0 {
            return Err(b.error_at(at, format!("{} is wider than {}", quote(t), elem.name())));
        }
        return Ok(bits);
    }
    let format = match elem {
        ElementType::F16 => Some(small_float::F16),
        ElementType::BF16 => Some(small_float::BF16),
        ElementType::F8E4M3FN => Some(small_float::F8E4M3FN),
        ElementType::F8E5M2 => Some(small_float::F8E5M2),
        _ => None,
    };
    let bad = || b.error_at(at, format!("{} is not a number", quote(t)));
    match (elem, format) {
        (ElementType::F32, _) => Ok(u64::from(word.map(|w| w as f32).map_or_else(|| t.parse::<f32>().map_err(|_| bad()), Ok)?.to_bits())),
        (_, None) => Ok(word.map_or_else(|| t.parse::<f64>().map_err(|_| bad()), Ok)?.to_bits()),
        (_, Some(f)) => {
            let v = match word {
                Some(w) => w,
                None => round_decimal(t.trim_start_matches('+'), f).ok_or_else(bad)?,
            };
            if v.is_nan() {
                return Ok(f.nan_bits(v.is_sign_negative()));
            }
            Ok(f.from_f64_bits(v))
        }
    }
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
fn hex_literal(b: &Cursor, at: usize, text: &str, elem: ElementType, count: u64, max: u64) -> R<Dense> {
    let hex =
        text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).ok_or_else(|| b.error_at(at, "a dense string that is not `0x` hex"))?;
    if hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(b.error_at(at, "a dense hex string with an odd number of digits or a non-hex digit"));
    }
    let width = elem.byte_width();
    if hex.len() == 2 * width && count != 1 {
        let bytes: Vec<u8> = hex.as_bytes().chunks(2).map(|p| (hex_digit(p[0]) << 4) | hex_digit(p[1])).collect();
        return Ok(Dense::Splat(from_bytes(&bytes, elem)));
    }
    if count > max {
        return Err(b.error_at(at, format!("a constant of {count} elements is over the limit of {max}")));
    }
    if hex.len() as u64 != 2 * count.saturating_mul(width as u64) {
        return Err(b.error_at(at, format!("{} bytes of hex data for {count} elements of {}", hex.len() / 2, elem.name())));
    }
    let mut m = serde_json::Map::new();
    m.insert("bytes".into(), Value::String(hex.to_string()));
    Ok(Dense::Full(Value::Object(m)))
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

/// An integer tensor attribute (`dense<[[0, 1]]> : tensor<1x2xi64>`) as its
/// dimensions and row-major elements.
pub fn ints(c: &Cursor, body: (usize, usize), ty: &Ty) -> R<(Vec<i64>, Vec<i64>)> {
    let count = ty.element_count();
    if count > 1 << 20 {
        return Err(c.error_at(body.0, "an integer attribute of more than 2^20 elements"));
    }
    let elem = ty.elem().filter(|e| matches!(e.class(), TypeClass::Signed | TypeClass::Unsigned | TypeClass::Pred));
    let Some(elem) = elem else { return Err(c.error_at(body.0, "expected an integer tensor attribute")) };
    let out = match literal(c, body, ty, 1 << 20)? {
        Dense::Splat(v) => {
            let x = v.as_i64().or_else(|| v.as_u64().map(|u| u as i64)).or_else(|| v.as_bool().map(i64::from));
            vec![x.ok_or_else(|| c.error_at(body.0, "expected an integer tensor attribute"))?; count as usize]
        }
        Dense::Full(v) => {
            let hex = v.get("bytes").and_then(Value::as_str).unwrap_or("");
            let bytes: Vec<u8> =
                hex.as_bytes().chunks(2).map(|p| (hex_digit(p[0]) << 4) | hex_digit(p.get(1).copied().unwrap_or(b'0'))).collect();
            let width = elem.byte_width();
            let signed = elem.class() == TypeClass::Signed;
            bytes
                .chunks(width)
                .map(|e| {
                    let mut raw = [0u8; 8];
                    raw[..e.len()].copy_from_slice(e);
                    let u = u64::from_le_bytes(raw);
                    let shift = 64 - 8 * width as u32;
                    if signed {
                        ((u << shift) as i64) >> shift
                    } else {
                        u as i64
                    }
                })
                .collect()
        }
    };
    Ok((ty.dims().to_vec(), out))
}
