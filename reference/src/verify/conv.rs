//! Rules of the convolutions: Conv, ConvWithGeneralPadding and the general
//! forms with dimension numbers (document §Conv, §ConvWithGeneralPadding).

use super::dot::result_type;
use super::rules::*;
use crate::eval::conv::resolved_padding;
use crate::ir::{ConvAttrs, ConvDims};
use crate::types::{ArrayShape, Shape};

declare_rules! {}

/// ConvWithGeneralPadding — document §ConvWithGeneralPadding: lhs and rhs
/// have n+2 dimensions (batch, feature, n spatial; output-z, input-z, n
/// spatial, or as `dimension_numbers` name them); the output has the batch
/// size / batch_group_count, the kernel's output-z and one spatial position
/// per valid placement of the window.
pub fn conv(attrs: &ConvAttrs, operands: &[&Shape]) -> Check<Shape> {
    operand_count(operands, 2)?;
    let lhs = array(operands[0], "lhs")?;
    let rhs = array(operands[1], "rhs")?;
    same_element_type(&UNNUMBERED, lhs, rhs, "lhs and rhs")?;
    if attrs.dimension_numbers.is_none() && lhs.rank() < 2 {
        return Err(unnumbered(format!("lhs must have n+2 dimensions (batch, feature and n spatial dimensions), got {lhs}")));
    }
    let d = attrs.dims(lhs.rank());
    let n = d.input_spatial_dimensions.len();
    dimension_numbers(&d, n)?;
    if lhs.rank() != n + 2 {
        return Err(unnumbered(format!("lhs must have n+2 = {} dimensions for n = {n} spatial dimensions, got {lhs}", n + 2)));
    }
    if rhs.rank() != n + 2 {
        return Err(unnumbered(format!("rhs must have n+2 = {} dimensions for n = {n} spatial dimensions, got {rhs}", n + 2)));
    }
    for (values, attr) in
        [(&attrs.window_strides, "window_strides"), (&attrs.lhs_dilation, "lhs_dilation"), (&attrs.rhs_dilation, "rhs_dilation")]
    {
        if values.len() != n {
            return Err(unnumbered(format!("{attr} has {} entries; it needs one per spatial dimension ({n})", values.len())));
        }
    }
    positive(&UNNUMBERED, &attrs.window_strides, "window_strides")?;
    positive(&UNNUMBERED, &attrs.lhs_dilation, "lhs_dilation")?;
    positive(&UNNUMBERED, &attrs.rhs_dilation, "rhs_dilation")?;

    let (fgc, bgc) = (attrs.feature_group_count, attrs.batch_group_count);
    if fgc < 1 {
        return Err(unnumbered(format!("feature_group_count must be at least 1, got {fgc}")));
    }
    if bgc < 1 {
        return Err(unnumbered(format!("batch_group_count must be at least 1, got {bgc}")));
    }
    if fgc > 1 && bgc > 1 {
        return Err(unnumbered(format!("feature_group_count ({fgc}) and batch_group_count ({bgc}) cannot both be greater than 1")));
    }
    let size = |a: &ArrayShape, dim: i64| a.dims[dim as usize];
    let batch = size(lhs, d.input_batch_dimension);
    let input_z = size(lhs, d.input_feature_dimension);
    let output_z = size(rhs, d.kernel_output_feature_dimension);
    let kernel_input_z = size(rhs, d.kernel_input_feature_dimension);
    if input_z % fgc != 0 {
        return Err(unnumbered(format!("feature_group_count ({fgc}) must divide the lhs feature dimension ({input_z})")));
    }
    if input_z / fgc != kernel_input_z {
        return Err(unnumbered(format!(
            "the rhs input-z dimension ({kernel_input_z}) times feature_group_count ({fgc}) must equal the lhs feature dimension ({input_z})"
        )));
    }
    if output_z % fgc != 0 {
        return Err(unnumbered(format!("feature_group_count ({fgc}) must divide the output feature dimension (rhs output-z, {output_z})")));
    }
    if batch % bgc != 0 {
        return Err(unnumbered(format!("batch_group_count ({bgc}) must divide the lhs batch dimension ({batch})")));
    }
    if output_z % bgc != 0 {
        return Err(unnumbered(format!("batch_group_count ({bgc}) must divide the output feature dimension (rhs output-z, {output_z})")));
    }

    let input_spatial: Vec<i64> = d.input_spatial_dimensions.iter().map(|&i| size(lhs, i)).collect();
    let window: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&i| size(rhs, i)).collect();
    if let Some(i) = window.iter().position(|&w| w < 1) {
        return Err(unnumbered(format!("the window (rhs spatial dimensions {window:?}) must have at least one element in each dimension; spatial dimension {i} has none")));
    }
    let padding = resolved_padding(attrs, &input_spatial, &window);
    if padding.len() != n {
        return Err(unnumbered(format!("padding has {} (low, high) pairs; it needs one per spatial dimension ({n})", padding.len())));
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
        .ok_or_else(|| unnumbered(format!("spatial dimension {i}: the padded, dilated sizes overflow")))?;
        dims[d.output_spatial_dimensions[i] as usize] = placements;
    }
    Ok(Shape::array(result_type(lhs.element_type, attrs.preferred_element_type)?, dims))
}

/// `dimension_numbers` name each dimension of lhs, rhs and the output once.
fn dimension_numbers(d: &ConvDims, n: usize) -> Check {
    length(&UNNUMBERED, &d.kernel_spatial_dimensions, n, "kernel_spatial_dimensions", "input_spatial_dimensions")?;
    length(&UNNUMBERED, &d.output_spatial_dimensions, n, "output_spatial_dimensions", "input_spatial_dimensions")?;
    let with = |a: i64, b: i64, spatial: &[i64]| [a, b].iter().chain(spatial).copied().collect::<Vec<_>>();
    permutation(
        &UNNUMBERED,
        &with(d.input_batch_dimension, d.input_feature_dimension, &d.input_spatial_dimensions),
        n + 2,
        "dimension_numbers of lhs (input_batch_dimension, input_feature_dimension, input_spatial_dimensions)",
    )?;
    permutation(
        &UNNUMBERED,
        &with(d.kernel_output_feature_dimension, d.kernel_input_feature_dimension, &d.kernel_spatial_dimensions),
        n + 2,
        "dimension_numbers of rhs (kernel_output_feature_dimension, kernel_input_feature_dimension, kernel_spatial_dimensions)",
    )?;
    permutation(
        &UNNUMBERED,
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
