//! MLIR types and attribute syntax: `tensor<2x?xf32, #stablehlo.bounds<?, 5>>`,
//! `array<i64: 1, 2>`, `dense<[[0, 1]]> : tensor<1x2xi64>`.

use crate::types::{ArrayShape, ElementType, Shape};

/// The MLIR element type of an xla-json element type.
pub fn element_type(t: ElementType) -> &'static str {
    use ElementType::*;
    match t {
        Pred => "i1",
        S8 => "i8",
        S16 => "i16",
        S32 => "i32",
        S64 => "i64",
        U8 => "ui8",
        U16 => "ui16",
        U32 => "ui32",
        U64 => "ui64",
        F16 => "f16",
        BF16 => "bf16",
        F32 => "f32",
        F64 => "f64",
        C64 => "complex<f32>",
        C128 => "complex<f64>",
        F8E4M3FN => "f8E4M3FN",
        F8E5M2 => "f8E5M2",
    }
}

/// The MLIR type of a shape: a ranked tensor (bounded dynamic dimensions as
/// `?` with `#stablehlo.bounds`), `!stablehlo.token`, or `tuple<...>`.
pub fn tensor_type(shape: &Shape) -> String {
    match shape {
        Shape::Array(a) => array_type(a),
        Shape::Token => "!stablehlo.token".into(),
        Shape::Tuple(parts) => format!("tuple<{}>", type_list(parts)),
    }
}

pub fn array_type(a: &ArrayShape) -> String {
    let dynamic = |i: usize| a.dynamic.get(i).copied().unwrap_or(false);
    let mut text = String::from("tensor<");
    for (i, d) in a.dims.iter().enumerate() {
        if dynamic(i) {
            text.push('?');
        } else {
            text.push_str(&d.to_string());
        }
        text.push('x');
    }
    text.push_str(element_type(a.element_type));
    if a.is_dynamic() {
        let bounds: Vec<String> = a.dims.iter().enumerate().map(|(i, d)| if dynamic(i) { d.to_string() } else { "?".into() }).collect();
        text.push_str(&format!(", #stablehlo.bounds<{}>", bounds.join(", ")));
    }
    text.push('>');
    text
}

/// Types separated by commas.
pub fn type_list(shapes: &[Shape]) -> String {
    shapes.iter().map(tensor_type).collect::<Vec<_>>().join(", ")
}

/// An op's result types after `->`: one bare, else parenthesised.
pub fn result_types(shapes: &[Shape]) -> String {
    match shapes {
        [one] => tensor_type(one),
        _ => format!("({})", type_list(shapes)),
    }
}

/// `array<i64: 1, 2>` (a `DenseI64ArrayAttr`).
pub fn i64_array(values: &[i64]) -> String {
    if values.is_empty() {
        return "array<i64>".into();
    }
    format!("array<i64: {}>", join(values))
}

/// Integers separated by commas.
pub fn join(values: &[i64]) -> String {
    values.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// `[1, 2]` (a list in a dimension-numbers attribute).
pub fn bracket(values: &[i64]) -> String {
    format!("[{}]", join(values))
}

/// A rows-by-`width` i64 matrix as a dense elements attribute:
/// `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`.
pub fn i64_matrix(rows: &[Vec<i64>], width: usize) -> String {
    if rows.is_empty() || width == 0 {
        return format!("dense<> : tensor<{}x{width}xi64>", rows.len());
    }
    let body: Vec<String> = rows.iter().map(|r| bracket(r)).collect();
    format!("dense<[{}]> : tensor<{}x{width}xi64>", body.join(", "), rows.len())
}

/// `padding` of windowed ops: `dense<[[lo, hi], ...]> : tensor<Nx2xi64>`.
pub fn padding(pairs: &[(i64, i64)]) -> String {
    let rows: Vec<Vec<i64>> = pairs.iter().map(|&(l, h)| vec![l, h]).collect();
    i64_matrix(&rows, 2)
}

/// A 1-d i64 tensor constant's value: `dense<[2, 3]> : tensor<2xi64>`.
pub fn i64_vector(values: &[i64]) -> String {
    if values.is_empty() {
        return "dense<> : tensor<0xi64>".into();
    }
    format!("dense<{}> : tensor<{}xi64>", bracket(values), values.len())
}

/// An f32 attribute: the shortest decimal that rounds back to `x`
/// (`1.0e-3 : f32`; MLIR rounds it once into f32), or its exact bits
/// (`0x7FC00000 : f32`) when it is not finite.
pub fn f32_attr(x: f32) -> String {
    if !x.is_finite() {
        return format!("0x{:08X} : f32", x.to_bits());
    }
    let text = format!("{x:e}");
    // MLIR's float literal needs a `.` in the mantissa.
    let text = match text.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => text,
    };
    format!("{text} : f32")
}

/// `replica_groups`: a groups-by-size matrix; empty (all replicas in one
/// group) is a `0x0` tensor. Groups of unequal sizes (AllReduce) are
/// padded with -1, as StableHLO writes them.
pub fn replica_groups(groups: &[Vec<i64>]) -> String {
    let width = groups.iter().map(Vec::len).max().unwrap_or(0);
    let padded: Vec<Vec<i64>> = groups.iter().map(|g| g.iter().copied().chain(std::iter::repeat(-1)).take(width).collect()).collect();
    i64_matrix(&padded, width)
}

/// `channel_handle` of a collective, when it has a channel id. Type 1 is
/// DEVICE_TO_DEVICE.
pub fn channel_handle(channel_id: Option<i64>) -> Option<String> {
    channel_id.map(|c| format!("channel_handle = #stablehlo.channel_handle<handle = {c}, type = 1>"))
}

/// The scalar shape of an array's element type.
pub fn scalar(t: ElementType) -> Shape {
    Shape::scalar(t)
}
