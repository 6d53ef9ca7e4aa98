//! Linear algebra: Dot, DotGeneral, the convolutions, Fft, Cholesky,
//! TriangularSolve and the batch norms.

use super::emit::{all_leaves, flat_leaves, rebuild, At, FuncWriter, Val};
use super::types::{bracket, f32_attr, i64_array, padding};
use super::{Fail, Res};
use crate::ir::{ConvAttrs, DotDims, FftType, TransposeA};
use crate::types::Shape;

fn two(w: &mut FuncWriter, operands: &[Val]) -> Res<(super::emit::Leaf, super::emit::Leaf, Vec<i64>, Vec<i64>)> {
    let [l, r] = operands else { return Err(Fail::internal("expected two operands")) };
    let (l, la) = w.array(l)?;
    let (r, ra) = w.array(r)?;
    Ok((l, r, la.dims, ra.dims))
}

fn dot_props(d: &DotDims) -> String {
    let mut fields = Vec::new();
    for (name, values) in [
        ("lhs_batching_dimensions", &d.lhs_batch_dimensions),
        ("rhs_batching_dimensions", &d.rhs_batch_dimensions),
        ("lhs_contracting_dimensions", &d.lhs_contracting_dimensions),
        ("rhs_contracting_dimensions", &d.rhs_contracting_dimensions),
    ] {
        if !values.is_empty() {
            fields.push(format!("{name} = {}", bracket(values)));
        }
    }
    format!("dot_dimension_numbers = #stablehlo.dot<{}>", fields.join(", "))
}

/// Dot (vector·vector, matrix·vector, matrix·matrix) contracts lhs's last
/// dimension with rhs's first.
pub fn dot(w: &mut FuncWriter, at: &At, operands: &[Val]) -> Res<Val> {
    let (l, r, ld, _) = two(w, operands)?;
    let d = DotDims {
        lhs_contracting_dimensions: vec![ld.len() as i64 - 1],
        rhs_contracting_dimensions: vec![0],
        lhs_batch_dimensions: vec![],
        rhs_batch_dimensions: vec![],
    };
    Ok(w.op1("stablehlo.dot_general", &[l, r], &dot_props(&d), &[], at.shape().clone()).val())
}

pub fn dot_general(w: &mut FuncWriter, at: &At, d: &DotDims, operands: &[Val]) -> Res<Val> {
    let (l, r, _, _) = two(w, operands)?;
    Ok(w.op1("stablehlo.dot_general", &[l, r], &dot_props(d), &[], at.shape().clone()).val())
}

/// One operand's layout in `#stablehlo.conv<...>`: `b`/`f` (`o`/`i` for
/// the kernel) and the spatial dimensions' numbers.
fn layout(rank: usize, first: (i64, char), second: (i64, char), spatial: &[i64]) -> String {
    let labels: Vec<String> = (0..rank as i64)
        .map(|d| {
            if d == first.0 {
                first.1.to_string()
            } else if d == second.0 {
                second.1.to_string()
            } else {
                spatial.iter().position(|&s| s == d).map_or_else(|| "?".into(), |i| i.to_string())
            }
        })
        .collect();
    format!("[{}]", labels.join(", "))
}

/// Every convolution form as `stablehlo.convolution` with explicit
/// padding (SAME/VALID resolved as the reference resolves them), dilations,
/// group counts and dimension numbers (the document's fixed layout when
/// none are given).
pub fn conv(w: &mut FuncWriter, at: &At, attrs: &ConvAttrs, operands: &[Val]) -> Res<Val> {
    let (l, r, ld, rd) = two(w, operands)?;
    let d = attrs.dims(ld.len());
    let size = |dims: &[i64], i: i64| dims.get(i as usize).copied().unwrap_or(0);
    let input_spatial: Vec<i64> = d.input_spatial_dimensions.iter().map(|&i| size(&ld, i)).collect();
    let window: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&i| size(&rd, i)).collect();
    let pads = crate::eval::conv::resolved_padding(attrs, &input_spatial, &window);
    let n = input_spatial.len();
    let ones = |v: &[i64]| if v.is_empty() { vec![1; n] } else { v.to_vec() };
    let numbers = format!(
        "#stablehlo.conv<{}x{}->{}>",
        layout(ld.len(), (d.input_batch_dimension, 'b'), (d.input_feature_dimension, 'f'), &d.input_spatial_dimensions),
        layout(rd.len(), (d.kernel_output_feature_dimension, 'o'), (d.kernel_input_feature_dimension, 'i'), &d.kernel_spatial_dimensions),
        layout(ld.len(), (d.output_batch_dimension, 'b'), (d.output_feature_dimension, 'f'), &d.output_spatial_dimensions),
    );
    let props = format!(
        "batch_group_count = {} : i64, dimension_numbers = {numbers}, feature_group_count = {} : i64, lhs_dilation = {}, padding = {}, rhs_dilation = {}, window_strides = {}",
        attrs.batch_group_count,
        attrs.feature_group_count,
        i64_array(&ones(&attrs.lhs_dilation)),
        padding(&pads),
        i64_array(&ones(&attrs.rhs_dilation)),
        i64_array(&ones(&attrs.window_strides)),
    );
    Ok(w.op1("stablehlo.convolution", &[l, r], &props, &[], at.shape().clone()).val())
}

pub fn fft(w: &mut FuncWriter, at: &At, fft_type: FftType, fft_length: &[i64], operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("Fft takes one operand")) };
    let (x, _) = w.array(x)?;
    let name = match fft_type {
        FftType::Fft => "FFT",
        FftType::Ifft => "IFFT",
        FftType::Rfft => "RFFT",
        FftType::Irfft => "IRFFT",
    };
    let props = format!("fft_length = {}, fft_type = #stablehlo<fft_type {name}>", i64_array(fft_length));
    Ok(w.op1("stablehlo.fft", &[x], &props, &[], at.shape().clone()).val())
}

pub fn cholesky(w: &mut FuncWriter, at: &At, lower: bool, operands: &[Val]) -> Res<Val> {
    let [x] = operands else { return Err(Fail::internal("Cholesky takes one operand")) };
    let (x, _) = w.array(x)?;
    Ok(w.op1("stablehlo.cholesky", &[x], &format!("lower = {lower}"), &[], at.shape().clone()).val())
}

pub fn triangular_solve(
    w: &mut FuncWriter,
    at: &At,
    left_side: bool,
    lower: bool,
    unit_diagonal: bool,
    transpose_a: TransposeA,
    operands: &[Val],
) -> Res<Val> {
    let (a, b, _, _) = two(w, operands)?;
    let t = match transpose_a {
        TransposeA::NoTranspose => "NO_TRANSPOSE",
        TransposeA::Transpose => "TRANSPOSE",
        TransposeA::Adjoint => "ADJOINT",
    };
    let props =
        format!("left_side = {left_side}, lower = {lower}, transpose_a = #stablehlo<transpose {t}>, unit_diagonal = {unit_diagonal}");
    Ok(w.op1("stablehlo.triangular_solve", &[a, b], &props, &[], at.shape().clone()).val())
}

/// BatchNormTraining/Inference/Grad: same operands in the same order;
/// Training and Grad return three results (a tuple in xla-json).
pub fn batch_norm(w: &mut FuncWriter, at: &At, name: &str, epsilon: f32, feature_index: i64, operands: &[Val]) -> Res<Val> {
    let leaves = all_leaves(w, operands)?;
    let props = format!("epsilon = {}, feature_index = {feature_index} : i64", f32_attr(epsilon));
    let shape: Shape = at.shape().clone();
    let results = w.op(name, &leaves, &props, &[], &flat_leaves(&shape));
    Ok(rebuild(&shape, &mut results.into_iter()))
}
