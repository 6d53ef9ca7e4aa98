//! Constants: `stablehlo.constant` with a `dense<...>` value. Integers and
//! pred are written in decimal (`true`/`false`); floats and complex numbers
//! as the little-endian bytes of their bit patterns (`dense<"0x...">`), so
//! every value, NaN payloads and signed zeros included, is exact. A value
//! whose elements are all equal is written once (a splat).

use super::emit::{FuncWriter, Leaf, Val};
use super::types::{array_type, tensor_type};
use super::{Fail, Res};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::numerics::bits::Bits;
use crate::types::{ArrayShape, ElementType, Shape};

pub fn constant(w: &mut FuncWriter, literal: &Literal) -> Res<Val> {
    match literal {
        Literal::Tuple(parts) => Ok(Val::Tuple(parts.iter().map(|p| constant(w, p)).collect::<Res<_>>()?)),
        Literal::Token => Ok(w.op1("stablehlo.after_all", &[], "", &[], Shape::Token).val()),
        Literal::Array(a) => array_constant(w, a),
    }
}

/// A constant array. A bounded dynamic value is its full static array with
/// `stablehlo.set_dimension_size` for each dynamic dimension.
fn array_constant(w: &mut FuncWriter, a: &ArrayLiteral) -> Res<Val> {
    let static_shape = ArrayShape::new(a.element_type(), a.dims().to_vec());
    let mut value = static_constant(w, &static_shape, &a.data);
    if !a.shape.is_dynamic() {
        return Ok(value.val());
    }
    let sizes = a.dynamic_sizes.clone().unwrap_or_else(|| a.dims().to_vec());
    let mut shape = static_shape;
    for (d, dynamic) in a.shape.dynamic.iter().enumerate() {
        if !dynamic {
            continue;
        }
        let size = sizes.get(d).copied().ok_or_else(|| Fail::internal("dynamic sizes do not match the rank"))?;
        let size = i32::try_from(size).map_err(|_| Fail::unsupported(format!("dynamic size {size} does not fit s32")))?;
        let size = scalar_constant(w, ElementType::S32, &size.to_string());
        shape.dynamic.resize(shape.dims.len(), false);
        shape.dynamic[d] = true;
        value = w.op1("stablehlo.set_dimension_size", &[value, size], &format!("dimension = {d} : i64"), &[], Shape::Array(shape.clone()));
    }
    Ok(value.val())
}

fn static_constant(w: &mut FuncWriter, shape: &ArrayShape, data: &Data) -> Leaf {
    let ty = array_type(shape);
    let props = format!("value = dense<{}> : {ty}", dense_body(&shape.dims, data));
    w.op1("stablehlo.constant", &[], &props, &[], Shape::Array(shape.clone()))
}

/// A scalar constant from its decimal text (`1`, `true`, `0.5`).
pub fn scalar_constant(w: &mut FuncWriter, t: ElementType, text: &str) -> Leaf {
    let shape = Shape::scalar(t);
    let props = format!("value = dense<{text}> : {}", tensor_type(&shape));
    w.op1("stablehlo.constant", &[], &props, &[], shape)
}

/// The text inside `dense<...>`.
pub fn dense_body(dims: &[i64], data: &Data) -> String {
    if data.is_empty() {
        return String::new();
    }
    match data {
        Data::Pred(v) => decimal(dims, v, |b| b.to_string()),
        Data::S8(v) => decimal(dims, v, |x| x.to_string()),
        Data::S16(v) => decimal(dims, v, |x| x.to_string()),
        Data::S32(v) => decimal(dims, v, |x| x.to_string()),
        Data::S64(v) => decimal(dims, v, |x| x.to_string()),
        Data::U8(v) => decimal(dims, v, |x| x.to_string()),
        Data::U16(v) => decimal(dims, v, |x| x.to_string()),
        Data::U32(v) => decimal(dims, v, |x| x.to_string()),
        Data::U64(v) => decimal(dims, v, |x| x.to_string()),
        Data::F16(v) => hex(v, 2),
        Data::BF16(v) => hex(v, 2),
        Data::F32(v) => hex(v, 4),
        Data::F64(v) => hex(v, 8),
        Data::C64(v) => hex(v, 8),
        Data::C128(v) => hex(v, 16),
        Data::F8E4M3FN(v) => hex(v, 1),
        Data::F8E5M2(v) => hex(v, 1),
    }
}

fn splat<T: Bits>(v: &[T]) -> bool {
    v.first().is_some_and(|first| v.iter().all(|x| x.bits() == first.bits()))
}

/// Nested decimal lists, row-major, or one value for a splat.
fn decimal<T: Bits>(dims: &[i64], v: &[T], show: impl Fn(&T) -> String) -> String {
    if splat(v) {
        return v.first().map(&show).unwrap_or_default();
    }
    let mut out = String::with_capacity(v.len() * 4);
    nest(dims, v, &show, &mut out);
    out
}

fn nest<T>(dims: &[i64], v: &[T], show: &impl Fn(&T) -> String, out: &mut String) {
    match dims.split_first() {
        None => {
            if let Some(x) = v.first() {
                out.push_str(&show(x));
            }
        }
        Some((&n, rest)) => {
            let n = n.max(0) as usize;
            let chunk = v.len().checked_div(n).unwrap_or(0);
            out.push('[');
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                nest(rest, &v[i * chunk..(i + 1) * chunk], show, out);
            }
            out.push(']');
        }
    }
}

/// `"0x..."`: each element's bytes, little-endian (complex: real part
/// first), as MLIR's raw dense form; one element for a splat.
fn hex<T: Bits>(v: &[T], width: usize) -> String {
    let elements = if splat(v) { &v[..1] } else { v };
    let mut out = String::with_capacity(4 + elements.len() * width * 2);
    out.push_str("\"0x");
    for x in elements {
        for byte in &x.bits().to_le_bytes()[..width] {
            out.push_str(&format!("{byte:02X}"));
        }
    }
    out.push('"');
    out
}
