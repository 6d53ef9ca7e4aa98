//! Reference evaluation of the convolutions (document §Conv,
//! §ConvWithGeneralPadding): the document's pseudo-code for a 2-d
//! convolution, generalised to n spatial dimensions, dilations, groups and
//! dimension numbers. Sums of products are accumulated as Dot's
//! ([`super::dot`]).

use super::dot::{at, sum_of_products, Acc, SumOfProducts};
use super::{array, array_shape, internal};
use crate::error::RunError;
use crate::ir::ConvAttrs;
use crate::literal::{ArrayLiteral, Literal};
use crate::types::Indices;
use crate::types::{ArrayShape, Shape};

pub fn eval(attrs: &ConvAttrs, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let [lhs, rhs] = operands else { return Err(internal("a convolution takes two operands")) };
    Ok(conv(attrs, array(lhs)?, array(rhs)?, array_shape(shape)?)?.into())
}

/// The (low, high) padding of each spatial dimension. SAME and VALID are
/// resolved by [`crate::ir::Padding::resolve`]: output size
/// `ceil(input / stride)` for the undilated input, the window measured with
/// `rhs_dilation` (as JAX; the document's "same shape as the input"). A stride beyond the input
/// size places SAME's single window as the input size does, so strides are
/// clamped to it first (which keeps the arithmetic from overflowing).
pub fn resolved_padding(attrs: &ConvAttrs, input_spatial: &[i64], window: &[i64]) -> Vec<(i64, i64)> {
    let strides: Vec<i64> = attrs.window_strides.iter().zip(input_spatial).map(|(&s, &i)| s.min(i.max(1))).collect();
    attrs.padding.resolve(input_spatial, window, &attrs.rhs_dilation, &strides)
}

/// ConvWithGeneralPadding — document §ConvWithGeneralPadding, pseudo-code:
///
/// ```text
/// for (b, oz, oy, ox) {            // output coordinates
///   value = 0;
///   for (iz, ky, kx) {             // kernel coordinates and input z
///     iy = oy*stride_y + ky - pad_low_y;
///     ix = ox*stride_x + kx - pad_low_x;
///     if ((iy, ix) inside the base area considered without padding)
///       value += input(b, iz, iy, ix) * kernel(oz, iz, ky, kx);
///   }
///   output(b, oz, oy, ox) = value;
/// }
/// ```
///
/// generalised: n spatial dimensions; `rhs_dilation` spreads the kernel
/// coordinates (`ky * rhs_dilation_y`); `lhs_dilation` puts holes between
/// input elements, so `iy` is a position in the dilated base area and only
/// multiples of `lhs_dilation_y` hold an element (number `iy /
/// lhs_dilation_y`); `feature_group_count` makes `iz` run over the input
/// features of `oz`'s group only; `batch_group_count` makes `b` read the lhs
/// batch of `oz`'s batch group; `dimension_numbers` say where each of these
/// coordinates sits in lhs, rhs and the output.
pub fn conv(attrs: &ConvAttrs, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> Result<ArrayLiteral, RunError> {
    sum_of_products(&conv_plan(attrs, lhs, rhs, out)?, lhs, rhs, out)
}

/// The sums a convolution computes, as a [`SumOfProducts`] that can also be
/// run in other number systems (the harness accumulates it exactly).
pub fn conv_plan(attrs: &ConvAttrs, lhs: &ArrayLiteral, rhs: &ArrayLiteral, out: &ArrayShape) -> Result<impl SumOfProducts, RunError> {
    let d = attrs.dims(lhs.rank());
    if !attrs.indexable(&d, lhs.rank(), rhs.rank(), out.rank()) {
        return Err(internal("convolution attributes do not fit the operands"));
    }
    // From here on every dimension number is below the rank (n + 2) and
    // every per-spatial-dimension list has n entries.
    let (ls, rs) = (lhs.shape.strides(), rhs.shape.strides());
    let (lhs_dims, rhs_dims) = (lhs.dims(), rhs.dims());
    let input_spatial: Vec<i64> = d.input_spatial_dimensions.iter().map(|&i| lhs_dims[i as usize]).collect();
    let window: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&i| rhs_dims[i as usize]).collect();
    let padding = resolved_padding(attrs, &input_spatial, &window);
    let spatial = (0..input_spatial.len())
        .map(|i| Spatial {
            output_dimension: d.output_spatial_dimensions[i] as usize,
            input_size: input_spatial[i],
            input_stride: ls[d.input_spatial_dimensions[i] as usize],
            kernel_stride: rs[d.kernel_spatial_dimensions[i] as usize],
            window_stride: attrs.window_strides[i],
            pad_low: padding.get(i).map_or(0, |p| p.0),
            lhs_dilation: attrs.lhs_dilation[i],
            rhs_dilation: attrs.rhs_dilation[i],
        })
        .collect();
    let output_z = rhs_dims[d.kernel_output_feature_dimension as usize];
    let plan = Conv {
        out_dims: out.dims.clone(),
        output_batch_dimension: d.output_batch_dimension as usize,
        output_feature_dimension: d.output_feature_dimension as usize,
        window,
        spatial,
        input_batch_stride: ls[d.input_batch_dimension as usize],
        input_feature_stride: ls[d.input_feature_dimension as usize],
        kernel_output_feature_stride: rs[d.kernel_output_feature_dimension as usize],
        kernel_input_feature_stride: rs[d.kernel_input_feature_dimension as usize],
        input_z_per_group: rhs_dims[d.kernel_input_feature_dimension as usize],
        // max(1): with no output features there is nothing to divide.
        output_z_per_feature_group: (output_z / attrs.feature_group_count.max(1)).max(1),
        output_z_per_batch_group: (output_z / attrs.batch_group_count.max(1)).max(1),
        output_batch: lhs_dims[d.input_batch_dimension as usize] / attrs.batch_group_count.max(1),
    };
    Ok(plan)
}

/// One spatial dimension: where it is in each array and how the window
/// moves along it.
struct Spatial {
    output_dimension: usize,
    input_size: i64,
    input_stride: usize,
    kernel_stride: usize,
    window_stride: i64,
    pad_low: i64,
    lhs_dilation: i64,
    rhs_dilation: i64,
}

impl Spatial {
    /// The document's `iy = oy*stride_y + ky - pad_low_y`, with the kernel
    /// coordinate dilated: a position in the dilated base area. The input
    /// element there, if it is one (not padding, not a hole between dilated
    /// elements).
    fn input_index(&self, o: i64, k: i64) -> Option<i64> {
        let iy = o as i128 * self.window_stride as i128 + k as i128 * self.rhs_dilation as i128 - self.pad_low as i128;
        let dilation = self.lhs_dilation as i128;
        if iy < 0 || iy % dilation != 0 || iy / dilation >= self.input_size as i128 {
            return None;
        }
        Some((iy / dilation) as i64)
    }
}

struct Conv {
    out_dims: Vec<i64>,
    output_batch_dimension: usize,
    output_feature_dimension: usize,
    /// The kernel's spatial sizes.
    window: Vec<i64>,
    spatial: Vec<Spatial>,
    input_batch_stride: usize,
    input_feature_stride: usize,
    kernel_output_feature_stride: usize,
    kernel_input_feature_stride: usize,
    /// The rhs input-z size: the input features of one feature group.
    input_z_per_group: i64,
    output_z_per_feature_group: i64,
    output_z_per_batch_group: i64,
    /// lhs batch / batch_group_count: the output batch size.
    output_batch: i64,
}

impl SumOfProducts for Conv {
    fn compute<A: Acc>(&self, lhs: &[A], rhs: &[A], out: &mut [A]) -> Result<(), RunError> {
        let mut output_positions = out.iter_mut();
        let work = (self.window.iter().product::<i64>() * self.input_z_per_group).max(1) as u64;
        for out_index in Indices::new(&self.out_dims) {
            if crate::watch::tick(work) {
                break;
            }
            let b = out_index[self.output_batch_dimension];
            let oz = out_index[self.output_feature_dimension];
            // feature_group_count: output feature oz is in group g, which
            // reads the g-th run of input_z_per_group input features.
            let g = oz / self.output_z_per_feature_group;
            // batch_group_count: output feature oz is in batch group h, and
            // output batch b reads lhs batch h * output_batch + b.
            let h = oz / self.output_z_per_batch_group;
            let input_b = h * self.output_batch + b;
            let lhs_start = input_b as usize * self.input_batch_stride + (g * self.input_z_per_group) as usize * self.input_feature_stride;
            let rhs_start = oz as usize * self.kernel_output_feature_stride;

            let mut value = A::zero();
            'kernel: for k in Indices::new(&self.window) {
                let (mut l, mut r) = (lhs_start, rhs_start);
                for (i, s) in self.spatial.iter().enumerate() {
                    let Some(input_i) = s.input_index(out_index[s.output_dimension], k[i]) else { continue 'kernel };
                    l += input_i as usize * s.input_stride;
                    r += k[i] as usize * s.kernel_stride;
                }
                for iz in 0..self.input_z_per_group as usize {
                    value.mul_add(at(lhs, l + iz * self.input_feature_stride)?, at(rhs, r + iz * self.kernel_input_feature_stride)?);
                }
            }
            *output_positions.next().ok_or_else(|| internal("convolution output too short"))? = value;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Padding;

    fn spatial(stride: i64, pad_low: i64, lhs_dilation: i64, rhs_dilation: i64) -> Spatial {
        Spatial {
            output_dimension: 2,
            input_size: 3,
            input_stride: 1,
            kernel_stride: 1,
            window_stride: stride,
            pad_low,
            lhs_dilation,
            rhs_dilation,
        }
    }

    #[test]
    fn input_index_skips_padding_and_holes() {
        // Padded by 1: position 0 is padding, position 1 is element 0.
        let s = spatial(1, 1, 1, 1);
        assert_eq!((0..5).map(|o| s.input_index(o, 0)).collect::<Vec<_>>(), [None, Some(0), Some(1), Some(2), None]);
        // lhs_dilation 2: [x0, _, x1, _, x2]; holes at odd positions.
        let s = spatial(1, 0, 2, 1);
        assert_eq!((0..5).map(|o| s.input_index(o, 0)).collect::<Vec<_>>(), [Some(0), None, Some(1), None, Some(2)]);
        // Negative padding -1 starts at element 1; rhs_dilation 2 skips one.
        let s = spatial(1, -1, 1, 2);
        assert_eq!(s.input_index(0, 1), None);
        assert_eq!(s.input_index(0, 0), Some(1));
    }

    /// `cargo test --release -p xlaref-reference -- --ignored --nocapture conv_speed`
    #[test]
    #[ignore]
    fn conv_speed() {
        let (c, hw, k) = (64i64, 32i64, 3i64);
        let lhs = ArrayLiteral::from_vec(vec![1, c, hw, hw], (0..c * hw * hw).map(|x| (x % 7) as f32).collect());
        let rhs = ArrayLiteral::from_vec(vec![c, c, k, k], (0..c * c * k * k).map(|x| (x % 5) as f32).collect());
        let attrs = ConvAttrs {
            window_strides: vec![1, 1],
            padding: Padding::Same,
            lhs_dilation: vec![1, 1],
            rhs_dilation: vec![1, 1],
            feature_group_count: 1,
            batch_group_count: 1,
            dimension_numbers: None,
            preferred_element_type: None,
        };
        let out = ArrayShape::new(crate::types::ElementType::F32, vec![1, c, hw, hw]);
        let start = std::time::Instant::now();
        conv(&attrs, &lhs, &rhs, &out).unwrap();
        let seconds = start.elapsed().as_secs_f64();
        let mflops = 2.0 * (c * c * hw * hw * k * k) as f64 / seconds / 1e6;
        eprintln!("1x64x32x32 * 64x64x3x3 f32 conv: {:.1} ms, {mflops:.0} MFLOP/s", seconds * 1e3);
    }
}
