//! Rules of the convolutions: Conv, ConvWithGeneralPadding and the general
//! forms with dimension numbers (document §Conv, §ConvWithGeneralPadding).

use super::dot::result_type;
use super::rules::*;
use crate::eval::conv::resolved_padding;
use crate::ir::{ConvAttrs, ConvDims};
use crate::types::{ArrayShape, Shape};

declare_rules! {
    LHS_RANK = "conv.c1": "lhs is an \"(n+2)-dimensional array of inputs\" (n spatial dimensions).";
    RHS_RANK = "conv.c2": "rhs is an \"(n+2)-dimensional array of kernel weights\".";
    PER_SPATIAL = "conv.c3": "window_strides, padding, lhs_dilation and rhs_dilation are \"n-d\" arrays: one entry per spatial dimension.";
    INPUT_Z = "conv.c4": "\"The input feature dimension of rhs needs to be equal to the lhs input feature dimension divided by feature_group_count\".";
    FEATURE_GROUPS_DIVIDE = "conv.c5": "\"feature_group_count needs to be a divisor of both the input and the output feature dimension\".";
    BATCH_GROUPS_DIVIDE_BATCH = "conv.c6": "\"batch_group_count needs to be a divisor of the size of the lhs (input) batch dimension\".";
    BATCH_GROUPS_DIVIDE_FEATURES = "conv.c7": "\"The batch_group_count must be a divisor of the output feature size\".";
    SAME_TYPE = "conv.c8": "(XLA) lhs and rhs have the same element type.";
    DIMENSION_NUMBERS = "conv.c9": "(XLA) dimension_numbers name every dimension of lhs, of rhs and of the output exactly once, with as many kernel and output spatial dimensions as input spatial dimensions.";
    AT_LEAST_ONE = "conv.c10": "(XLA) Every entry of window_strides, lhs_dilation and rhs_dilation is at least 1.";
    GROUP_COUNTS = "conv.c11": "(XLA) feature_group_count and batch_group_count are at least 1.";
    ONE_GROUPING = "conv.c12": "(XLA) feature_group_count and batch_group_count are not both greater than 1.";
    WINDOW_SIZE = "conv.c13": "(XLA) The window (the rhs spatial dimensions) has at least one element in each dimension.";
}

/// ConvWithGeneralPadding — document §ConvWithGeneralPadding: lhs and rhs
/// have n+2 dimensions (batch, feature, n spatial; output-z, input-z, n
/// spatial, or as `dimension_numbers` name them); the output has the batch
/// size / batch_group_count, the kernel's output-z and one spatial position
/// per valid placement of the window.
pub fn conv(attrs: &ConvAttrs, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    same_element_type(&SAME_TYPE, lhs, rhs, "lhs and rhs")?;
    if attrs.dimension_numbers.is_none() && lhs.rank() < 2 {
        fail!(LHS_RANK, "lhs must have n+2 dimensions (batch, feature and n spatial dimensions), got {lhs}");
    }
    let d = attrs.dims(lhs.rank());
    let n = d.input_spatial_dimensions.len();
    dimension_numbers(&d, n)?;
    if lhs.rank() != n + 2 {
        fail!(LHS_RANK, "lhs must have n+2 = {} dimensions for n = {n} spatial dimensions, got {lhs}", n + 2);
    }
    if rhs.rank() != n + 2 {
        fail!(RHS_RANK, "rhs must have n+2 = {} dimensions for n = {n} spatial dimensions, got {rhs}", n + 2);
    }
    for (values, attr) in
        [(&attrs.window_strides, "window_strides"), (&attrs.lhs_dilation, "lhs_dilation"), (&attrs.rhs_dilation, "rhs_dilation")]
    {
        if values.len() != n {
            fail!(PER_SPATIAL, "{attr} has {} entries; it needs one per spatial dimension ({n})", values.len());
        }
    }
    positive(&AT_LEAST_ONE, &attrs.window_strides, "window_strides")?;
    positive(&AT_LEAST_ONE, &attrs.lhs_dilation, "lhs_dilation")?;
    positive(&AT_LEAST_ONE, &attrs.rhs_dilation, "rhs_dilation")?;

    let (fgc, bgc) = (attrs.feature_group_count, attrs.batch_group_count);
    if fgc < 1 {
        fail!(GROUP_COUNTS, "feature_group_count must be at least 1, got {fgc}");
    }
    if bgc < 1 {
        fail!(GROUP_COUNTS, "batch_group_count must be at least 1, got {bgc}");
    }
    if fgc > 1 && bgc > 1 {
        fail!(ONE_GROUPING, "feature_group_count ({fgc}) and batch_group_count ({bgc}) cannot both be greater than 1");
    }
    let size = |a: &ArrayShape, dim: i64| a.dims[dim as usize];
    let batch = size(lhs, d.input_batch_dimension);
    let input_z = size(lhs, d.input_feature_dimension);
    let output_z = size(rhs, d.kernel_output_feature_dimension);
    let kernel_input_z = size(rhs, d.kernel_input_feature_dimension);
    if input_z % fgc != 0 {
        fail!(FEATURE_GROUPS_DIVIDE, "feature_group_count ({fgc}) must divide the lhs feature dimension ({input_z})");
    }
    if input_z / fgc != kernel_input_z {
        fail!(
            INPUT_Z,
            "the rhs input-z dimension ({kernel_input_z}) times feature_group_count ({fgc}) must equal the lhs feature dimension ({input_z})"
        );
    }
    if output_z % fgc != 0 {
        fail!(FEATURE_GROUPS_DIVIDE, "feature_group_count ({fgc}) must divide the output feature dimension (rhs output-z, {output_z})");
    }
    if batch % bgc != 0 {
        fail!(BATCH_GROUPS_DIVIDE_BATCH, "batch_group_count ({bgc}) must divide the lhs batch dimension ({batch})");
    }
    if output_z % bgc != 0 {
        fail!(
            BATCH_GROUPS_DIVIDE_FEATURES,
            "batch_group_count ({bgc}) must divide the output feature dimension (rhs output-z, {output_z})"
        );
    }

    let input_spatial: Vec<i64> = d.input_spatial_dimensions.iter().map(|&i| size(lhs, i)).collect();
    let window: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&i| size(rhs, i)).collect();
    if let Some(i) = window.iter().position(|&w| w < 1) {
        fail!(WINDOW_SIZE, "the window (rhs spatial dimensions {window:?}) must have at least one element in each dimension; spatial dimension {i} has none");
    }
    let padding = resolved_padding(attrs, &input_spatial, &window);
    if padding.len() != n {
        fail!(PER_SPATIAL, "padding has {} (low, high) pairs; it needs one per spatial dimension ({n})", padding.len());
    }

    let mut dims = vec![0i64; n + 2];
    dims[d.output_batch_dimension as usize] = batch / bgc;
    dims[d.output_feature_dimension as usize] = output_z;
    for i in 0..n {
        let placements = output_spatial_size(
            input_spatial[i],
            window[i],
            attrs.window_strides[i],
            padding[i],
            attrs.lhs_dilation[i],
            attrs.rhs_dilation[i],
        )
        .ok_or_else(|| broken(&SIZE_OVERFLOW, format!("spatial dimension {i}: the padded, dilated sizes overflow")))?;
        dims[d.output_spatial_dimensions[i] as usize] = placements;
    }
    Ok(Shape::array(result_type(lhs.element_type, attrs.preferred_element_type)?, dims))
}

/// `dimension_numbers` name each dimension of lhs, rhs and the output once.
fn dimension_numbers(d: &ConvDims, n: usize) -> Check {
    length(&DIMENSION_NUMBERS, &d.kernel_spatial_dimensions, n, "kernel_spatial_dimensions", "input_spatial_dimensions")?;
    length(&DIMENSION_NUMBERS, &d.output_spatial_dimensions, n, "output_spatial_dimensions", "input_spatial_dimensions")?;
    let with = |a: i64, b: i64, spatial: &[i64]| [a, b].iter().chain(spatial).copied().collect::<Vec<_>>();
    permutation(
        &DIMENSION_NUMBERS,
        &with(d.input_batch_dimension, d.input_feature_dimension, &d.input_spatial_dimensions),
        n + 2,
        "dimension_numbers of lhs (input_batch_dimension, input_feature_dimension, input_spatial_dimensions)",
    )?;
    permutation(
        &DIMENSION_NUMBERS,
        &with(d.kernel_output_feature_dimension, d.kernel_input_feature_dimension, &d.kernel_spatial_dimensions),
        n + 2,
        "dimension_numbers of rhs (kernel_output_feature_dimension, kernel_input_feature_dimension, kernel_spatial_dimensions)",
    )?;
    permutation(
        &DIMENSION_NUMBERS,
        &with(d.output_batch_dimension, d.output_feature_dimension, &d.output_spatial_dimensions),
        n + 2,
        "dimension_numbers of the output (output_batch_dimension, output_feature_dimension, output_spatial_dimensions)",
    )
}

/// One output position per valid placement of the window: the lhs
/// dimension with `lhs_dilation - 1` holes between elements and the padding
/// added (negative padding removes elements), the window with
/// `rhs_dilation - 1` holes between elements, placed every `stride`:
/// `floor((padded - window) / stride) + 1`, or 0 if the window does not fit.
/// None if a size overflows.
pub fn output_spatial_size(input: i64, window: i64, stride: i64, padding: (i64, i64), lhs_dilation: i64, rhs_dilation: i64) -> Option<i64> {
    let dilated = |size: i64, dilation: i64| if size == 0 { 0 } else { (size as i128 - 1) * dilation as i128 + 1 };
    let padded = padding.0 as i128 + dilated(input, lhs_dilation) + padding.1 as i128;
    let window = dilated(window, rhs_dilation);
    let placements = if padded < window { 0 } else { (padded - window) / stride.max(1) as i128 + 1 };
    i64::try_from(placements).ok().filter(|_| i64::try_from(padded).is_ok() && i64::try_from(window).is_ok())
}
