//! Attribute types of ops, named as in the document.

use super::ComputationId;
use crate::types::{ElementType, Shape};

/// `comparison_direction`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    Eq,
    Ne,
    Ge,
    Gt,
    Le,
    Lt,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Eq => "EQ",
            Direction::Ne => "NE",
            Direction::Ge => "GE",
            Direction::Gt => "GT",
            Direction::Le => "LE",
            Direction::Lt => "LT",
        }
    }

    pub fn from_name(name: &str) -> Option<Direction> {
        Some(match name.to_ascii_uppercase().as_str() {
            "EQ" => Direction::Eq,
            "NE" => Direction::Ne,
            "GE" => Direction::Ge,
            "GT" => Direction::Gt,
            "LE" => Direction::Le,
            "LT" => Direction::Lt,
            _ => return None,
        })
    }
}

/// One dimension of `Pad`'s `padding_config`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PadDim {
    pub edge_padding_low: i64,
    pub edge_padding_high: i64,
    pub interior_padding: i64,
}

/// `padding` of windowed ops: SAME, VALID, or explicit (low, high) pairs.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Padding {
    Same,
    Valid,
    Explicit(Vec<(i64, i64)>),
}

impl Padding {
    /// The explicit (low, high) pairs. VALID pads nothing. SAME pads so
    /// that the output size is ceil(input / stride) — the input's own size
    /// when the stride is 1, as the document says of Conv's and
    /// ReduceWindow's SAME — the odd element going to the high side
    /// (XlaBuilder's `MakePadding`). The window is measured dilated
    /// (`(size - 1) * window_dilation + 1`), as the document's "same shape as
    /// the input" requires and as JAX computes it for `reduce_window` and
    /// `conv_general_dilated`; the input is measured undilated (base and lhs
    /// dilation do not enter, as in JAX). See docs/semantics-decisions.md.
    pub fn resolve(&self, input_dims: &[i64], window_dims: &[i64], window_dilations: &[i64], strides: &[i64]) -> Vec<(i64, i64)> {
        match self {
            Padding::Explicit(pairs) => pairs.clone(),
            Padding::Valid => vec![(0, 0); input_dims.len()],
            Padding::Same => input_dims
                .iter()
                .zip(window_dims)
                .zip(strides)
                .enumerate()
                .map(|(d, ((&input, &window), &stride))| {
                    // In i128: no attribute value can overflow the arithmetic.
                    let dilation = window_dilations.get(d).copied().unwrap_or(1).max(1) as i128;
                    let window = if window > 0 { (window as i128 - 1) * dilation + 1 } else { window as i128 };
                    let (input, stride) = (input as i128, stride.max(1) as i128);
                    let output = (input + stride - 1) / stride;
                    let total = ((output - 1) * stride + window - input).max(0);
                    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                    (clamp(total / 2), clamp(total - total / 2))
                })
                .collect(),
        }
    }
}

/// `dimension_numbers` of DotGeneral.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct DotDims {
    pub lhs_contracting_dimensions: Vec<i64>,
    pub rhs_contracting_dimensions: Vec<i64>,
    pub lhs_batch_dimensions: Vec<i64>,
    pub rhs_batch_dimensions: Vec<i64>,
}

/// Gather's dimension numbers and slice sizes (document §Gather).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GatherDims {
    pub offset_dims: Vec<i64>,
    pub collapsed_slice_dims: Vec<i64>,
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
    pub slice_sizes: Vec<i64>,
    pub indices_are_sorted: bool,
    /// Newer XLA: operand dimensions that are batch dimensions, paired with
    /// `start_indices_batching_dims`. Empty in the document's form.
    pub operand_batching_dims: Vec<i64>,
    pub start_indices_batching_dims: Vec<i64>,
}

/// Scatter's dimension numbers (document §Scatter).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ScatterDims {
    pub update_window_dims: Vec<i64>,
    pub inserted_window_dims: Vec<i64>,
    pub scatter_dims_to_operand_dims: Vec<i64>,
    pub index_vector_dim: i64,
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
    pub input_batching_dims: Vec<i64>,
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// Window of ReduceWindow and SelectAndScatter.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WindowAttrs {
    pub window_dimensions: Vec<i64>,
    pub window_strides: Vec<i64>,
    pub base_dilations: Vec<i64>,
    pub window_dilations: Vec<i64>,
    pub padding: Padding,
}

/// Which dimensions of lhs, rhs and output are batch, feature and spatial.
/// The document's fixed order is `ConvDims::document_order(n)`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ConvDims {
    pub input_batch_dimension: i64,
    pub input_feature_dimension: i64,
    pub input_spatial_dimensions: Vec<i64>,
    pub kernel_output_feature_dimension: i64,
    pub kernel_input_feature_dimension: i64,
    pub kernel_spatial_dimensions: Vec<i64>,
    pub output_batch_dimension: i64,
    pub output_feature_dimension: i64,
    pub output_spatial_dimensions: Vec<i64>,
}

impl ConvDims {
    /// lhs (batch, feature, spatial...), rhs (output-z, input-z, spatial...),
    /// output (batch, z, spatial...), as the document lays them out.
    pub fn document_order(spatial: usize) -> ConvDims {
        let s: Vec<i64> = (2..2 + spatial as i64).collect();
        ConvDims {
            input_batch_dimension: 0,
            input_feature_dimension: 1,
            input_spatial_dimensions: s.clone(),
            kernel_output_feature_dimension: 0,
            kernel_input_feature_dimension: 1,
            kernel_spatial_dimensions: s.clone(),
            output_batch_dimension: 0,
            output_feature_dimension: 1,
            output_spatial_dimensions: s,
        }
    }
}

/// Every form of convolution (Conv, ConvWithGeneralPadding,
/// ConvGeneralDilated) after parsing. `dimension_numbers` is `None` for the
/// document's fixed layout (resolved once the rank is known).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ConvAttrs {
    pub window_strides: Vec<i64>,
    pub padding: Padding,
    pub lhs_dilation: Vec<i64>,
    pub rhs_dilation: Vec<i64>,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
    pub dimension_numbers: Option<ConvDims>,
    pub preferred_element_type: Option<ElementType>,
}

impl ConvAttrs {
    pub fn dims(&self, rank: usize) -> ConvDims {
        self.dimension_numbers.clone().unwrap_or_else(|| ConvDims::document_order(rank.saturating_sub(2)))
    }

    /// What verification guarantees and both engines index by: `n + 2`
    /// dimensions in the operands and the result, every dimension number
    /// below that, `n` entries in every per-spatial-dimension list (`n`
    /// the spatial dimensions of `d`, these attributes' dimension numbers).
    pub fn indexable(&self, d: &ConvDims, lhs_rank: usize, rhs_rank: usize, out_rank: usize) -> bool {
        let n = d.input_spatial_dimensions.len();
        let rank = n + 2;
        let lists =
            [&d.kernel_spatial_dimensions, &d.output_spatial_dimensions, &self.window_strides, &self.lhs_dilation, &self.rhs_dilation];
        let numbers =
            [d.input_batch_dimension, d.input_feature_dimension, d.kernel_output_feature_dimension, d.kernel_input_feature_dimension]
                .into_iter()
                .chain([d.output_batch_dimension, d.output_feature_dimension])
                .chain(d.input_spatial_dimensions.iter().chain(&d.kernel_spatial_dimensions).chain(&d.output_spatial_dimensions).copied());
        [lhs_rank, rhs_rank, out_rank].iter().all(|&r| r == rank)
            && lists.iter().all(|l| l.len() == n)
            && numbers.into_iter().all(|x| x >= 0 && (x as usize) < rank)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FftType {
    Fft,
    Ifft,
    Rfft,
    Irfft,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TransposeA {
    NoTranspose,
    Transpose,
    Adjoint,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RngAlgorithm {
    Default,
    ThreeFry,
    Philox,
}

/// The two forms of Conditional.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ConditionalForm {
    /// `Conditional(pred, true_operand, true_computation, false_operand, false_computation)`.
    Predicate { true_computation: ComputationId, false_computation: ComputationId },
    /// `Conditional(branch_index, branch_computations, branch_operands)`.
    Indexed { branch_computations: Vec<ComputationId> },
}

/// `replica_groups`: empty means one group of all replicas.
pub type ReplicaGroups = Vec<Vec<i64>>;

/// A shape given as an attribute (Iota, Rng*, Infeed, Recv, CustomCall).
pub type ShapeAttr = Shape;
