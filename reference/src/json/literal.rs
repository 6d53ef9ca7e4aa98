//! Literals in JSON (docs/format.md §2): reading into a given shape, writing
//! back losslessly.

use half::{bf16, f16};
use num_complex::Complex;
use serde_json::{Map, Number, Value};

use super::path::Path;
use crate::error::ReadError;
use crate::literal::{ArrayLiteral, Data, Literal, Stored};
use crate::numerics::decimal::{round_decimal, shortest};
use crate::numerics::f8::{F8E4M3FN, F8E5M2};
use crate::numerics::float::Float;
use crate::numerics::int::Int;
use crate::numerics::small_float::{self, Format};
use crate::types::{ArrayShape, ElementType, Shape};

/// Reads a typed literal `{"shape": ..., "value": ...}`.
pub fn read_typed_literal(value: &Value, path: &Path, max_elements: i64) -> Result<Literal, ReadError> {
    let obj = value.as_object().ok_or_else(|| path.error("a typed literal must be an object with `shape` and `value`"))?;
    for key in obj.keys() {
        if key != "shape" && key != "value" {
            return Err(path.error(format!("unknown key `{key}` in a typed literal")));
        }
    }
    let shape_text = obj.get("shape").and_then(Value::as_str).ok_or_else(|| path.key("shape").error("missing shape string"))?;
    let shape = Shape::parse(shape_text).map_err(|e| path.key("shape").error(e))?;
    let v = obj.get("value").ok_or_else(|| path.key("value").error("missing value"))?;
    read_literal(v, &shape, &path.key("value"), max_elements)
}

/// Reads a literal of the given shape.
pub fn read_literal(value: &Value, shape: &Shape, path: &Path, max_elements: i64) -> Result<Literal, ReadError> {
    match shape {
        Shape::Token => match value {
            Value::Object(o) if o.len() == 1 && o.contains_key("token") => Ok(Literal::Token),
            _ => Err(path.error("a token literal is {\"token\": null}")),
        },
        Shape::Tuple(elems) => {
            let list = value
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.get("tuple"))
                .and_then(Value::as_array)
                .ok_or_else(|| path.error(format!("expected {{\"tuple\": [...]}} for shape {shape}")))?;
            if list.len() != elems.len() {
                return Err(path.error(format!("tuple has {} elements, shape {shape} has {}", list.len(), elems.len())));
            }
            let tuple_path = path.key("tuple");
            let mut out = Vec::with_capacity(elems.len());
            for (i, (v, s)) in list.iter().zip(elems).enumerate() {
                out.push(read_literal(v, s, &tuple_path.index(i), max_elements)?);
            }
            Ok(Literal::Tuple(out))
        }
        Shape::Array(a) => read_array(value, a, path, max_elements).map(Literal::Array),
    }
}

fn read_array(value: &Value, shape: &ArrayShape, path: &Path, max_elements: i64) -> Result<ArrayLiteral, ReadError> {
    if Shape::Array(shape.clone()).written_size() > max_elements {
        return Err(path.error(format!("shape {shape} has more elements than the limit of {max_elements}")));
    }
    if let Value::Object(obj) = value {
        return read_bytes(obj, shape, path);
    }
    let actual = actual_dims(value, shape, path)?;
    let mut leaves: Vec<&Value> = Vec::new();
    collect_leaves(value, &actual, 0, path, &mut leaves)?;
    let element_type = shape.element_type;
    let data = read_elements(&leaves, element_type).map_err(|(position, message)| {
        // Name the failing element by its multi-index only when it fails.
        let index = ArrayShape::new(element_type, actual.clone()).unlinear(position);
        index.iter().fold(path.clone(), |p, &i| p.index(i as usize)).error(message)
    })?;
    let literal = ArrayLiteral::new(actual.clone(), data);
    if !shape.is_dynamic() {
        return Ok(literal);
    }
    // A bounded dynamic dimension: store at the bound, remember the size.
    let mut padded = literal.remap(shape, None, |out, input| {
        input.copy_from_slice(out);
        out.iter().zip(&actual).all(|(&i, &d)| i < d)
    });
    padded.shape = shape.clone();
    padded.dynamic_sizes = Some(actual);
    Ok(padded)
}

/// `{"bytes": "hex"}` (docs/format.md §2): every element's little-endian
/// bytes, row-major, as hex digits; what the StableHLO reader writes for
/// `dense<...>` constants, as it costs no JSON value per element.
fn read_bytes(obj: &Map<String, Value>, shape: &ArrayShape, path: &Path) -> Result<ArrayLiteral, ReadError> {
    let hex = match (obj.len(), obj.get("bytes")) {
        (1, Some(Value::String(hex))) => hex,
        _ => return Err(path.error("expected a list (an array literal is a nested list, or {\"bytes\": \"hex\"})")),
    };
    if shape.is_dynamic() {
        return Err(path.key("bytes").error(format!("the bytes form needs a static shape, not {shape}")));
    }
    let t = shape.element_type;
    let want = shape.element_count() * t.byte_width();
    if hex.len() != 2 * want {
        return Err(path.key("bytes").error(format!("{} hex digits for {shape}, which takes {} ({want} bytes)", hex.len(), 2 * want)));
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut bytes = Vec::with_capacity(want);
    for pair in hex.as_bytes().chunks_exact(2) {
        match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => bytes.push(h << 4 | l),
            _ => return Err(path.key("bytes").error("not a hex string")),
        }
    }
    let data = crate::numerics::bytes::from_le_bytes(&bytes, t).ok_or_else(|| path.key("bytes").error("bytes of the wrong length"))?;
    Ok(ArrayLiteral::new(shape.dims.clone(), data))
}

/// The dimensions the value actually has: the shape's, except that a
/// dynamic dimension may be shorter than its bound.
fn actual_dims(value: &Value, shape: &ArrayShape, path: &Path) -> Result<Vec<i64>, ReadError> {
    let mut dims = Vec::with_capacity(shape.rank());
    let mut v = value;
    for (i, &bound) in shape.dims.iter().enumerate() {
        let list = v.as_array().ok_or_else(|| path.error(format!("expected a list for dimension {i} of {shape}")))?;
        let n = list.len() as i64;
        let ok = if shape.dynamic[i] { n <= bound } else { n == bound };
        if !ok {
            return Err(path.error(format!("dimension {i} of {shape} has {n} entries")));
        }
        dims.push(n);
        match list.first() {
            Some(first) => v = first,
            None => {
                // Zero-sized: the deeper dimensions must be static to be known.
                for j in i + 1..shape.rank() {
                    dims.push(if shape.dynamic[j] { 0 } else { shape.dims[j] });
                }
                return Ok(dims);
            }
        }
    }
    Ok(dims)
}

fn collect_leaves<'a>(value: &'a Value, dims: &[i64], depth: usize, path: &Path, out: &mut Vec<&'a Value>) -> Result<(), ReadError> {
    if depth == dims.len() {
        out.push(value);
        return Ok(());
    }
    let list = value.as_array().ok_or_else(|| path.error(format!("expected a list of {} entries", dims[depth])))?;
    if list.len() as i64 != dims[depth] {
        return Err(path.error(format!("expected {} entries, found {}", dims[depth], list.len())));
    }
    for (i, v) in list.iter().enumerate() {
        if depth + 1 == dims.len() {
            out.push(v);
        } else {
            collect_leaves(v, dims, depth + 1, &path.index(i), out)?;
        }
    }
    Ok(())
}

/// The elements, or the position and reason of the first bad one.
fn read_elements(leaves: &[&Value], t: ElementType) -> Result<Data, (usize, String)> {
    fn each<T: Stored>(leaves: &[&Value], f: impl Fn(&Value) -> Result<T, String>) -> Result<Data, (usize, String)> {
        let mut out = Vec::with_capacity(leaves.len());
        for (i, v) in leaves.iter().enumerate() {
            out.push(f(v).map_err(|m| (i, m))?);
        }
        Ok(T::wrap(out))
    }
    crate::by_type!(t, T => {
        pred: each::<bool>(leaves, |v| v.as_bool().ok_or_else(|| "expected true or false".to_string())),
        int: each::<T>(leaves, |v| read_int(v, t).map(T::wrap_i128)),
        float: each::<T>(leaves, |v| read_float::<T>(v, small_float::narrow_format(t))),
        complex: each::<T>(leaves, read_complex),
    })
}

/// A complex element `[re, im]`, each part read as a float of the part type.
fn read_complex<P: Float>(v: &Value) -> Result<Complex<P>, String> {
    let (re, im) = complex_parts(v)?;
    Ok(Complex::new(read_float::<P>(re, None)?, read_float::<P>(im, None)?))
}

fn complex_parts(v: &Value) -> Result<(&Value, &Value), String> {
    match v.as_array().map(Vec::as_slice) {
        Some([re, im]) => Ok((re, im)),
        _ => Err("a complex element is a pair [re, im]".into()),
    }
}

/// An integer element in the type's range, from a JSON integer or a decimal string.
pub fn read_int(v: &Value, t: ElementType) -> Result<i128, String> {
    match v {
        Value::Number(n) => read_int_text(&n.to_string(), t),
        Value::String(s) => read_int_text(s, t),
        _ => Err(format!("expected an integer of type {t}")),
    }
}

/// An integer element from its decimal text, in the type's range.
pub(crate) fn read_int_text(text: &str, t: ElementType) -> Result<i128, String> {
    let value: i128 = text.parse().map_err(|_| format!("`{text}` is not an integer (type {t})"))?;
    let (lo, hi) = int_range(t);
    if value < lo || value > hi {
        return Err(format!("{value} is out of range for {t}"));
    }
    Ok(value)
}

fn int_range(t: ElementType) -> (i128, i128) {
    let bits = t.bit_width();
    if t.is_signed_integer() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// A float element: a number rounded once into the type, a special-value
/// string, or an exact hex bit pattern of the type's width.
fn read_float<T: Float>(v: &Value, format: Option<Format>) -> Result<T, String> {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            let x = match format {
                Some(f) => round_decimal(&text, f),
                None if T::WIDTH == 32 => text.parse::<f32>().ok().map(f64::from),
                None => text.parse::<f64>().ok(),
            };
            x.map(T::from_f64).ok_or_else(|| format!("`{text}` is not a number"))
        }
        Value::String(s) => read_float_string::<T>(s),
        _ => Err("expected a number or one of \"nan\", \"-nan\", \"inf\", \"-inf\", \"-0\", \"0x...\"".into()),
    }
}

pub(crate) fn read_float_string<T: Float>(s: &str) -> Result<T, String> {
    match s {
        "nan" => return Ok(T::from_f64(f64::NAN)),
        "-nan" => return Ok(T::from_f64(-f64::NAN)),
        "inf" => return Ok(T::from_f64(f64::INFINITY)),
        "-inf" => return Ok(T::from_f64(f64::NEG_INFINITY)),
        "-0" => return Ok(T::from_f64(-0.0)),
        _ => {}
    }
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let digits = (T::WIDTH / 4) as usize;
        if hex.len() != digits {
            return Err(format!("hex pattern `{s}` must have exactly {digits} digits for this type"));
        }
        let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("`{s}` is not a hex pattern"))?;
        return Ok(T::from_bits(bits));
    }
    Err(format!("`{s}` is not a float: use a number, \"nan\", \"-nan\", \"inf\", \"-inf\", \"-0\" or \"0x...\""))
}

/// Options for writing literals.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Write every non-finite or payload-carrying float as its hex pattern.
    pub exact_bits: bool,
}

/// Writes `{"shape": ..., "value": ...}`.
pub fn write_typed_literal(literal: &Literal, options: WriteOptions) -> Value {
    let mut m = Map::new();
    m.insert("shape".into(), Value::String(literal_shape_text(literal)));
    m.insert("value".into(), write_literal(literal, options));
    Value::Object(m)
}

fn literal_shape_text(literal: &Literal) -> String {
    literal.shape().to_string()
}

/// Writes a literal's value (its shape is written elsewhere).
pub fn write_literal(literal: &Literal, options: WriteOptions) -> Value {
    match literal {
        Literal::Token => {
            let mut m = Map::new();
            m.insert("token".into(), Value::Null);
            Value::Object(m)
        }
        Literal::Tuple(elems) => {
            let mut m = Map::new();
            m.insert("tuple".into(), Value::Array(elems.iter().map(|e| write_literal(e, options)).collect()));
            Value::Object(m)
        }
        Literal::Array(a) => write_array(a, options),
    }
}

fn write_array(a: &ArrayLiteral, options: WriteOptions) -> Value {
    let elements: Vec<Value> = write_elements(&a.data, options);
    let dims = a.dims().to_vec();
    match &a.dynamic_sizes {
        None => nest(&elements, &dims, &dims),
        Some(sizes) => nest(&elements, &dims, sizes),
    }
}

/// Nests flat row-major elements of `dims` into lists, keeping only the
/// first `sizes[i]` entries of each dimension.
fn nest(elements: &[Value], dims: &[i64], sizes: &[i64]) -> Value {
    if dims.is_empty() {
        return elements.first().cloned().unwrap_or(Value::Null);
    }
    let inner: usize = dims[1..].iter().map(|&d| d as usize).product();
    let list = (0..sizes[0] as usize).map(|i| nest(&elements[i * inner..(i + 1) * inner], &dims[1..], &sizes[1..])).collect();
    Value::Array(list)
}

fn number(text: &str) -> Value {
    text.parse::<Number>().map(Value::Number).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn int_value(v: i128) -> Value {
    if v.unsigned_abs() > (1u128 << 53) {
        Value::String(v.to_string())
    } else {
        number(&v.to_string())
    }
}

fn write_elements(data: &Data, options: WriteOptions) -> Vec<Value> {
    crate::by_class!(data, v => {
        pred: v.iter().map(|&b| Value::Bool(b)).collect(),
        int: v.iter().map(|&x| int_value(x.to_i128())).collect(),
        float: v.iter().map(|&x| write_float(x, options)).collect(),
        complex: v.iter().map(|c| Value::Array(vec![write_float(c.re, options), write_float(c.im, options)])).collect(),
    })
}

/// A float element: shortest round-trip decimal; `"-0"`, `"inf"`, `"-inf"`,
/// `"nan"`, `"-nan"` for the values JSON numbers cannot carry; hex for
/// non-finite values when exact bits are asked for.
pub fn write_float<T: Float + WriteShortest>(x: T, options: WriteOptions) -> Value {
    let v = x.to_f64();
    if !v.is_finite() {
        if options.exact_bits {
            return Value::String(format!("0x{:0width$x}", x.to_bits(), width = (T::WIDTH / 4) as usize));
        }
        let text = match (v.is_nan(), v.is_sign_negative()) {
            (true, false) => "nan",
            (true, true) => "-nan",
            (false, false) => "inf",
            (false, true) => "-inf",
        };
        return Value::String(text.into());
    }
    if v == 0.0 && v.is_sign_negative() {
        return Value::String("-0".into());
    }
    number(&x.shortest_text())
}

/// The shortest decimal that reads back to the same value in the type.
pub trait WriteShortest {
    fn shortest_text(self) -> String;
}

/// f64 and f32: the digits `ryu` chooses, laid out as the streaming
/// writer lays them out ([`super::stream`]), so both writers agree.
impl WriteShortest for f64 {
    fn shortest_text(self) -> String {
        super::stream::shortest_text(self)
    }
}

impl WriteShortest for f32 {
    fn shortest_text(self) -> String {
        super::stream::shortest_text(self)
    }
}

macro_rules! shortest_via_format {
    ($t:ty, $format:expr) => {
        impl WriteShortest for $t {
            fn shortest_text(self) -> String {
                shortest(Float::to_f64(self), |t| round_decimal(t, $format))
            }
        }
    };
}
shortest_via_format!(f16, small_float::F16);
shortest_via_format!(bf16, small_float::BF16);
shortest_via_format!(F8E4M3FN, small_float::F8E4M3FN);
shortest_via_format!(F8E5M2, small_float::F8E5M2);
