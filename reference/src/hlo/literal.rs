//! HLO literal syntax (`constant({ {1.5, nan}, {-inf, -0} })`, complex
//! `(1, 2)`, tuples `( {1, 2}, 3 )`) and attribute value syntax (`{1,0}`,
//! `1_0x0_2`, `window={size=3x3 pad=1_1x1_1}`, `slice={[0:2:1]}`), turned
//! into xla-json/1 values.

use serde_json::{json, Map, Value};

use super::cursor::Cursor;
use super::HloError;
use crate::numerics::float::Float;
use crate::types::{ArrayShape, ElementType, Shape};

/// Element type name and dimensions of an array shape `f32[2,<=3]`
/// (a bounded dimension counts as its bound).
pub fn array_shape(shape: &str) -> Option<(&str, Vec<i64>)> {
    let (element, rest) = shape.split_once('[')?;
    let dims = rest.strip_suffix(']')?;
    let dims = if dims.is_empty() {
        vec![]
    } else {
        dims.split(',').map(|d| d.trim().trim_start_matches("<=").parse().ok()).collect::<Option<Vec<i64>>>()?
    };
    Some((element, dims))
}

/// The element shapes of a tuple shape `(a, (b, c))` (top level only).
pub fn tuple_elements(shape: &str) -> Option<Vec<&str>> {
    let inner = shape.strip_prefix('(')?.strip_suffix(')')?;
    if inner.trim().is_empty() {
        return Some(vec![]);
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim());
    Some(parts)
}

/// A constant's literal text, read for its shape.
pub fn literal(c: &mut Cursor, shape: &str) -> Result<Value, HloError> {
    if let Some(elements) = tuple_elements(shape) {
        c.expect("(")?;
        let mut items = Vec::new();
        for (i, element) in elements.iter().enumerate() {
            if i > 0 {
                c.expect(",")?;
            }
            items.push(literal(c, element)?);
        }
        c.expect(")")?;
        return Ok(json!({ "tuple": items }));
    }
    if let Ok(Shape::Array(a)) = Shape::parse(shape) {
        if !a.is_dynamic() {
            return dense(c, &a);
        }
    }
    let (element, _) = array_shape(shape).ok_or_else(|| c.error(format!("`{shape}` is not an array shape")))?;
    let complex = element.starts_with('c');
    let is_float = element.starts_with('f') || element.starts_with("bf") || complex;
    array_literal(c, complex, is_float)
}

fn array_literal(c: &mut Cursor, complex: bool, is_float: bool) -> Result<Value, HloError> {
    if c.eat("{") {
        let mut items = Vec::new();
        if !c.eat("}") {
            loop {
                items.push(array_literal(c, complex, is_float)?);
                if c.eat("}") {
                    break;
                }
                c.expect(",")?;
            }
        }
        return Ok(Value::Array(items));
    }
    if complex {
        c.expect("(")?;
        let re = scalar(c, true)?;
        c.expect(",")?;
        let im = scalar(c, true)?;
        c.expect(")")?;
        return Ok(Value::Array(vec![re, im]));
    }
    scalar(c, is_float)
}

/// A constant of a static array shape, read straight into its elements'
/// little-endian bytes (`{"bytes": hex}`, docs/format.md §2): large dense
/// constants cost their bytes, not a JSON value per element. Each element
/// is rounded into its type exactly as the JSON reader rounds the value
/// [`scalar`] would make of it; bounded shapes take that slower path.
fn dense(c: &mut Cursor, shape: &ArrayShape) -> Result<Value, HloError> {
    let width = shape.element_type.byte_width();
    // Every element takes at least one character: reserve no more than that.
    let room = shape.element_count().saturating_mul(width);
    let mut out = Vec::with_capacity(room.min(c.rest().len().saturating_mul(16)));
    dense_level(c, shape, 0, &mut out)?;
    Ok(crate::json::literal_text::bytes_value(&out))
}

fn dense_level(c: &mut Cursor, shape: &ArrayShape, depth: usize, out: &mut Vec<u8>) -> Result<(), HloError> {
    let Some(&want) = shape.dims.get(depth) else { return dense_element(c, shape.element_type, out) };
    c.skip_ws();
    let start = c.clone();
    c.expect("{")?;
    let mut entries = 0i64;
    if !c.eat("}") {
        loop {
            dense_level(c, shape, depth + 1, out)?;
            entries += 1;
            if c.eat("}") {
                break;
            }
            c.expect(",")?;
        }
    }
    if entries != want {
        return Err(start.error(format!("dimension {depth} of {shape} has {entries} entries")));
    }
    Ok(())
}

/// One element of type `t`, appended as its little-endian bytes.
fn dense_element(c: &mut Cursor, t: ElementType, out: &mut Vec<u8>) -> Result<(), HloError> {
    use crate::numerics::small_float;
    fn float<T: Float>(word: &str, format: Option<small_float::Format>) -> Option<u64> {
        use crate::json::literal::read_float_string;
        use crate::json::literal_text::{float_from_number, is_json_number};
        let negative_zero = word.len() > 1 && word.starts_with('-') && word[1..].chars().all(|ch| ch == '0' || ch == '.');
        let x: T = match word {
            "nan" | "-nan" | "inf" | "-inf" => read_float_string(word).ok()?,
            "+inf" => read_float_string("inf").ok()?,
            _ if negative_zero => read_float_string("-0").ok()?,
            w => Some(w.trim_start_matches('+')).filter(|n| is_json_number(n)).and_then(|n| float_from_number(n, format))?,
        };
        Some(x.to_bits())
    }
    use ElementType as E;
    if matches!(t, E::C64 | E::C128) {
        let part = if t == E::C64 { E::F32 } else { E::F64 };
        c.expect("(")?;
        dense_element(c, part, out)?;
        c.expect(",")?;
        dense_element(c, part, out)?;
        return c.expect(")");
    }
    c.skip_ws();
    let at = c.clone();
    let rest = c.rest();
    let len = rest.find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '.' | '-' | '+' | '_'))).unwrap_or(rest.len());
    let word = &rest[..len];
    let bad = || at.error(format!("`{word}` is not a literal element"));
    let bits: u64 = match t {
        E::Pred => match word {
            "true" => 1,
            "false" => 0,
            _ => return Err(at.error(format!("`{word}` is not true or false"))),
        },
        E::F16 => float::<half::f16>(word, Some(small_float::F16)).ok_or_else(bad)?,
        E::BF16 => float::<half::bf16>(word, Some(small_float::BF16)).ok_or_else(bad)?,
        E::F32 => float::<f32>(word, None).ok_or_else(bad)?,
        E::F64 => float::<f64>(word, None).ok_or_else(bad)?,
        E::F8E4M3FN => float::<crate::numerics::f8::F8E4M3FN>(word, Some(small_float::F8E4M3FN)).ok_or_else(bad)?,
        E::F8E5M2 => float::<crate::numerics::f8::F8E5M2>(word, Some(small_float::F8E5M2)).ok_or_else(bad)?,
        _ => {
            let text = word.trim_start_matches('+');
            if !crate::json::literal_text::is_json_number(text) {
                return Err(bad());
            }
            let v = crate::json::literal::read_int_text(text, t).map_err(|e| at.error(e))?;
            out.extend_from_slice(&v.to_le_bytes()[..t.byte_width()]);
            c.eat(word);
            return Ok(());
        }
    };
    out.extend_from_slice(&bits.to_le_bytes()[..t.byte_width()]);
    c.eat(word);
    Ok(())
}

/// One element: a number, `true`/`false`, or `nan`/`inf` with a sign.
fn scalar(c: &mut Cursor, is_float: bool) -> Result<Value, HloError> {
    c.skip_ws();
    let rest = c.rest();
    let len = rest.find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '.' | '-' | '+' | '_'))).unwrap_or(rest.len());
    let word = &rest[..len];
    let value = match word {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "nan" | "-nan" | "inf" | "-inf" => Value::from(word),
        "+inf" => Value::from("inf"),
        w if is_float && w.starts_with('-') && w[1..].chars().all(|ch| ch == '0' || ch == '.') && w.len() > 1 => Value::from("-0"),
        w => match serde_json::from_str::<Value>(w.trim_start_matches('+')) {
            Ok(v @ Value::Number(_)) => v,
            _ => return Err(c.error(format!("`{w}` is not a literal element"))),
        },
    };
    c.eat(word);
    Ok(value)
}

/// `{1,0}` or `{}` → `[1, 0]`; a bare number `3` → `[3]`.
pub fn int_list(c: &Cursor, raw: &str) -> Result<Vec<i64>, HloError> {
    let inner = raw.trim().trim_start_matches('{').trim_end_matches('}');
    inner.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| int(c, s)).collect()
}

pub fn int(c: &Cursor, s: &str) -> Result<i64, HloError> {
    s.trim().parse().map_err(|_| c.error(format!("`{s}` is not an integer")))
}

/// `{{0,1},{2,3}}` → `[[0,1],[2,3]]`; XLA's iota form `[2,2]<=[4]` (groups
/// of consecutive ids, optionally transposed `[2,2]<=[2,2]T(1,0)`) too.
pub fn int_lists(c: &Cursor, raw: &str) -> Result<Vec<Vec<i64>>, HloError> {
    let raw = raw.trim();
    if let Some((dims, rest)) = raw.split_once("<=") {
        let dims = int_list(c, &dims.replace(['[', ']'], ""))?;
        let (reshape, transpose) = match rest.split_once('T') {
            Some((r, t)) => (r, Some(int_list(c, &t.replace(['(', ')'], ""))?)),
            None => (rest, None),
        };
        let reshape = int_list(c, &reshape.replace(['[', ']'], ""))?;
        let ids = iota_ids(&reshape, transpose.as_deref()).ok_or_else(|| c.error(format!("bad iota replica groups `{raw}`")))?;
        let [groups, size] = dims[..] else { return Err(c.error(format!("replica groups `{raw}` need two dimensions"))) };
        if groups.checked_mul(size) != Some(ids.len() as i64) || size <= 0 {
            return Err(c.error(format!("replica groups `{raw}` do not cover the ids")));
        }
        return Ok(ids.chunks(size as usize).map(<[i64]>::to_vec).collect());
    }
    let inner = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')).unwrap_or(raw);
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while let Some(start) = rest.find('{') {
        let end = rest[start..].find('}').ok_or_else(|| c.error(format!("unbalanced list `{raw}`")))? + start;
        out.push(int_list(c, &rest[start..=end])?);
        rest = &rest[end + 1..];
    }
    Ok(out)
}

/// Ids `0..n` laid out as `reshape`, transposed by `perm`, flattened.
fn iota_ids(reshape: &[i64], perm: Option<&[i64]>) -> Option<Vec<i64>> {
    let n: i64 = reshape.iter().product();
    if !(0..=1 << 20).contains(&n) {
        return None;
    }
    let Some(perm) = perm else { return Some((0..n).collect()) };
    if perm.len() != reshape.len() {
        return None;
    }
    let dims: Vec<i64> = perm.iter().map(|&p| reshape.get(usize::try_from(p).ok()?).copied()).collect::<Option<_>>()?;
    let mut strides = vec![1i64; reshape.len()];
    for i in (0..reshape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * reshape[i + 1];
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut index = vec![0i64; dims.len()];
    for _ in 0..n {
        out.push(index.iter().zip(perm).map(|(&i, &p)| i * strides[p as usize]).sum());
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(out)
}

/// Pad's `padding=1_0_0x0_2_1` → `padding_config` objects.
pub fn padding_config(c: &Cursor, raw: &str) -> Result<Value, HloError> {
    let dims: Result<Vec<Value>, HloError> = raw
        .split('x')
        .filter(|s| !s.is_empty())
        .map(|d| {
            let parts: Vec<i64> = d.split('_').map(|p| int(c, p)).collect::<Result<_, _>>()?;
            let (low, high, interior) = match parts[..] {
                [l, h] => (l, h, 0),
                [l, h, i] => (l, h, i),
                _ => return Err(c.error(format!("padding `{d}` is not low_high[_interior]"))),
            };
            Ok(json!({"edge_padding_low": low, "edge_padding_high": high, "interior_padding": interior}))
        })
        .collect();
    Ok(Value::Array(dims?))
}

/// A window `{size=2x2 stride=2x2 pad=0_0x1_1 lhs_dilate=1x1 rhs_dilate=1x1}`:
/// its fields by name (`size`, `stride`, `pad` pairs, dilations), one entry
/// per window dimension.
pub struct Window {
    pub size: Vec<i64>,
    pub stride: Vec<i64>,
    pub pad: Vec<(i64, i64)>,
    pub lhs_dilate: Vec<i64>,
    pub rhs_dilate: Vec<i64>,
}

pub fn window(c: &Cursor, raw: &str) -> Result<Window, HloError> {
    let inner = raw.trim().trim_start_matches('{').trim_end_matches('}');
    let mut fields = Map::new();
    for field in inner.split_whitespace() {
        let (k, v) = field.split_once('=').ok_or_else(|| c.error(format!("window field `{field}` has no `=`")))?;
        fields.insert(k.to_string(), Value::from(v));
    }
    let xs = |key: &str| -> Result<Option<Vec<i64>>, HloError> {
        fields.get(key).and_then(Value::as_str).map(|v| v.split('x').map(|s| int(c, s)).collect()).transpose()
    };
    let size = xs("size")?.unwrap_or_default();
    let ones = vec![1; size.len()];
    let pad = match fields.get("pad").and_then(Value::as_str) {
        None => vec![(0, 0); size.len()],
        Some(p) => p
            .split('x')
            .map(|d| match d.split_once('_') {
                Some((l, h)) => Ok((int(c, l)?, int(c, h)?)),
                None => Err(c.error(format!("window pad `{d}` is not low_high"))),
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Window {
        stride: xs("stride")?.unwrap_or_else(|| ones.clone()),
        lhs_dilate: xs("lhs_dilate")?.unwrap_or_else(|| ones.clone()),
        rhs_dilate: xs("rhs_dilate")?.unwrap_or_else(|| ones.clone()),
        size,
        pad,
    })
}

/// Slice's bounds: start, limit and stride indices.
pub type SliceBounds = (Vec<i64>, Vec<i64>, Vec<i64>);

/// Slice's `slice={[0:2:1], [1:3]}` → (starts, limits, strides).
pub fn slice(c: &Cursor, raw: &str) -> Result<SliceBounds, HloError> {
    let (mut starts, mut limits, mut strides) = (vec![], vec![], vec![]);
    for part in raw.split('[').skip(1) {
        let body = part.split(']').next().unwrap_or("");
        let nums: Vec<i64> = body.split(':').map(|s| int(c, s)).collect::<Result<_, _>>()?;
        let (s, l, st) = match nums[..] {
            [s, l] => (s, l, 1),
            [s, l, st] => (s, l, st),
            _ => return Err(c.error(format!("slice `[{body}]` is not start:limit[:stride]"))),
        };
        starts.push(s);
        limits.push(l);
        strides.push(st);
    }
    Ok((starts, limits, strides))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{read_literal, Path};

    /// The literal of `text` for `shape` through the dense bytes path and
    /// through the JSON value path, both read by the JSON reader.
    fn both(shape: &str, text: &str) -> (Result<crate::literal::Literal, String>, Result<crate::literal::Literal, String>) {
        let parsed = Shape::parse(shape).expect("shape");
        let read = |value: Result<Value, HloError>| {
            value.map_err(|e| e.message).and_then(|v| read_literal(&v, &parsed, &Path::root(), 1 << 20).map_err(|e| e.message))
        };
        let Shape::Array(a) = &parsed else { panic!("array shape") };
        let (element, _) = array_shape(shape).expect("array");
        let complex = element.starts_with('c');
        let is_float = element.starts_with('f') || element.starts_with("bf") || complex;
        (read(dense(&mut Cursor::new(text, 1), a)), read(array_literal(&mut Cursor::new(text, 1), complex, is_float)))
    }

    #[test]
    fn dense_constants_read_as_the_json_path_reads_them() {
        let cases = [
            ("f32[2,3]", "{ {1, 2.5, -0}, {1e-45, 3.4028235e38, nan} }"),
            ("f32[4]", "{-nan, inf, -inf, +inf}"),
            ("f32[3]", "{-0.000, +1.5, 0.1}"),
            ("f64[3]", "{0.1, 1e308, -2.2250738585072014e-308}"),
            ("f16[4]", "{65504, 65520, 6e-8, 1.00048828125}"),
            ("bf16[3]", "{1.00390625, 3.1, -nan}"),
            ("f8e4m3fn[3]", "{448, 464, nan}"),
            ("f8e5m2[2]", "{57344, -inf}"),
            ("s8[3]", "{-128, 127, +5}"),
            ("u64[2]", "{18446744073709551615, 0}"),
            ("pred[2]", "{true, false}"),
            ("c64[2]", "{(1, 2), (-inf, nan)}"),
            ("c128[]", "(0.1, -0)"),
            ("s32[]", "7"),
            ("f32[2,0]", "{ {}, {} }"),
            ("f32[0,3]", "{}"),
        ];
        for (shape, text) in cases {
            let (dense, tree) = both(shape, text);
            let (dense, tree) = (dense.expect(text), tree.expect(text));
            assert!(dense.bits_equal(&tree), "{shape} {text}: {dense:?} vs {tree:?}");
        }
        for (shape, text) in
            [("s8[1]", "{128}"), ("s32[1]", "{1.5}"), ("f32[1]", "{1.}"), ("pred[1]", "{1}"), ("f32[2]", "{1, 2, 3}"), ("f32[1]", "{x}")]
        {
            let (dense, tree) = both(shape, text);
            assert!(dense.is_err() && tree.is_err(), "{shape} {text}: {dense:?} / {tree:?}");
        }
    }
}
