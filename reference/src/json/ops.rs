//! Op names and attributes of xla-json/1 → [`Op`]. Names and attribute names
//! are the document's; aliases are those docs/format.md lists plus a few
//! unambiguous spellings XLA itself uses (noted where they appear).

use serde_json::Value;

use super::attrs::Attrs;
use super::literal::read_literal;
use crate::error::ReadError;
use crate::ir::*;
use crate::types::Shape;

type R<T> = Result<T, ReadError>;

/// Ops whose `shape` key is an attribute (docs/format.md §3), not a declared
/// result shape to check.
pub fn shape_is_attribute(op: &str) -> bool {
    matches!(op, "Constant" | "Iota" | "RngUniform" | "RngNormal" | "RngBitGenerator" | "Infeed" | "Recv" | "CustomCall")
}

/// Parses an op by name. `a` holds the instruction's keys other than
/// `name`, `op` and `operands`.
pub fn parse_op(name: &str, a: &Attrs, max_elements: i64) -> R<Op> {
    if let Some(op) = elementwise(name, a)? {
        return Ok(op);
    }
    Ok(match name {
        "Constant" => {
            let shape = a.shape("shape")?;
            let value = a.get("literal").ok_or_else(|| a.path("literal").error("Constant needs the attribute `literal`"))?;
            Op::Constant { literal: read_literal(value, &shape, &a.path("literal"), max_elements)? }
        }
        "Broadcast" => Op::Broadcast { broadcast_sizes: a.i64s("broadcast_sizes")? },
        "BroadcastInDim" => {
            Op::BroadcastInDim { out_dim_size: a.i64s("out_dim_size")?, broadcast_dimensions: a.i64s("broadcast_dimensions")? }
        }
        "Reshape" => reshape(a)?,
        "Collapse" => Op::Collapse { dimensions: a.i64s("dimensions")? },
        "Transpose" => Op::Transpose { permutation: a.i64s("permutation")? },
        "Rev" => Op::Rev { dimensions: a.i64s("dimensions")? },
        "Slice" => {
            let start_indices = a.i64s("start_indices")?;
            let limit_indices = a.i64s("limit_indices")?;
            let strides = a.opt_i64s("strides")?.unwrap_or_else(|| vec![1; start_indices.len()]);
            Op::Slice { start_indices, limit_indices, strides }
        }
        "ConcatInDim" | "Concatenate" => Op::ConcatInDim { dimension: a.i64("dimension")? },
        "Pad" => Op::Pad { padding_config: padding_config(a)? },
        "Iota" => Op::Iota { shape: a.shape("shape")?, iota_dimension: a.i64("iota_dimension")? },
        "Select" => Op::Select,
        "Clamp" => Op::Clamp,
        "ConvertElementType" => Op::ConvertElementType { new_element_type: a.element_type("new_element_type")? },
        "BitcastConvertType" => Op::BitcastConvertType { new_element_type: a.element_type("new_element_type")? },
        "ReducePrecision" => Op::ReducePrecision { exponent_bits: a.i64("exponent_bits")?, mantissa_bits: a.i64("mantissa_bits")? },
        "Tuple" => Op::Tuple,
        "GetTupleElement" => Op::GetTupleElement { index: a.i64("index")? },
        // The document calls DynamicSlice's sizes `size_indices`; Gather's
        // `slice_sizes` spelling is accepted too.
        "DynamicSlice" => Op::DynamicSlice { slice_sizes: a.i64s_any(&["size_indices", "slice_sizes"])? },
        "DynamicUpdateSlice" => Op::DynamicUpdateSlice,
        "Gather" => Op::Gather(gather_dims(a)?),
        "Scatter" => Op::Scatter { dims: scatter_dims(a)?, update_computation: a.computation("update_computation")? },
        "Reduce" => Op::Reduce { computation: a.computation("computation")?, dimensions: a.i64s("dimensions")? },
        "ReduceWindow" => Op::ReduceWindow { computation: a.computation("computation")?, window: window(a, true)? },
        "SelectAndScatter" => {
            Op::SelectAndScatter { select: a.computation("select")?, scatter: a.computation("scatter")?, window: window(a, false)? }
        }
        "Map" => Op::Map { computation: a.computation("computation")?, dimensions: a.opt_i64s("dimensions")? },
        "Sort" => Op::Sort {
            comparator: a.computation("comparator")?,
            dimension: a.opt_i64("dimension")?,
            is_stable: a.bool_or("is_stable", false)?,
        },
        "TopK" => Op::TopK { k: a.i64("k")?, largest: a.bool_or("largest", true)? },
        "Dot" => {
            precision_config(a)?;
            Op::Dot { preferred_element_type: a.opt_element_type("preferred_element_type")? }
        }
        "DotGeneral" => {
            precision_config(a)?;
            Op::DotGeneral { dimension_numbers: dot_dims(a)?, preferred_element_type: a.opt_element_type("preferred_element_type")? }
        }
        "Conv" | "ConvWithGeneralPadding" | "ConvWithGeneralDimensions" | "ConvGeneral" | "ConvGeneralDilated" => Op::Conv(conv(a)?),
        "Fft" => Op::Fft { fft_type: fft_type(a)?, fft_length: a.i64s("fft_length")? },
        "Cholesky" => Op::Cholesky { lower: a.bool_or("lower", false)? },
        "TriangularSolve" => Op::TriangularSolve {
            left_side: a.bool_or("left_side", true)?,
            lower: a.bool_or("lower", false)?,
            unit_diagonal: a.bool_or("unit_diagonal", false)?,
            transpose_a: transpose_a(a)?,
        },
        "BatchNormTraining" => Op::BatchNormTraining { epsilon: a.f32("epsilon")?, feature_index: a.i64("feature_index")? },
        "BatchNormInference" => Op::BatchNormInference { epsilon: a.f32("epsilon")?, feature_index: a.i64("feature_index")? },
        "BatchNormGrad" => Op::BatchNormGrad { epsilon: a.f32("epsilon")?, feature_index: a.i64("feature_index")? },
        "Call" => Op::Call { computation: a.computation_any(&["computation", "to_apply"])? },
        "Conditional" => conditional(a)?,
        "While" => Op::While { condition: a.computation("condition")?, body: a.computation("body")? },
        "OptimizationBarrier" => Op::OptimizationBarrier,
        "AfterAll" => Op::AfterAll,
        _ => return world_op(name, a),
    })
}

/// Elementwise ops: unary, binary arithmetic, comparisons.
fn elementwise(name: &str, a: &Attrs) -> R<Option<Op>> {
    let unary_name = match name {
        "LogicalNot" => "Not",
        n => n,
    };
    if let Some((_, u)) = UnaryOp::ALL.iter().find(|(n, _)| *n == unary_name) {
        return Ok(Some(Op::Unary(*u)));
    }
    let binary_name = match name {
        "LogicalAnd" => "And",
        "LogicalOr" => "Or",
        n => n,
    };
    if let Some((_, b)) = BinaryOp::ALL.iter().find(|(n, _)| *n == binary_name) {
        return Ok(Some(Op::Binary { op: *b, broadcast_dimensions: a.opt_i64s("broadcast_dimensions")? }));
    }
    let (direction, total_order) = match name {
        "Compare" => {
            let d = a.string("comparison_direction")?;
            let direction = Direction::from_name(&d)
                .ok_or_else(|| a.path("comparison_direction").error(format!("unknown comparison direction `{d}`")))?;
            let total = match a.opt_string("comparison_type")?.as_deref().map(str::to_ascii_uppercase).as_deref() {
                None | Some("FLOAT" | "SIGNED" | "UNSIGNED" | "PARTIALORDER" | "NOTYPE") => false,
                Some("TOTALORDER") => true,
                Some(other) => return Err(a.path("comparison_type").error(format!("unknown comparison type `{other}`"))),
            };
            (direction, total)
        }
        _ => {
            let base = name.strip_suffix("TotalOrder").unwrap_or(name);
            let total = base.len() != name.len();
            match base {
                "Eq" | "Ne" | "Ge" | "Gt" | "Le" | "Lt" => (Direction::from_name(base).unwrap_or(Direction::Eq), total),
                _ => return Ok(None),
            }
        }
    };
    Ok(Some(Op::Compare { direction, total_order, broadcast_dimensions: a.opt_i64s("broadcast_dimensions")? }))
}

/// `Reshape(operand, new_sizes)` or `Reshape(operand, dimensions, new_sizes)`
/// (the Korean document's forms); the English document's
/// `Reshape(operand, dimensions)` names the new sizes `dimensions`, so
/// `dimensions` alone means new sizes.
fn reshape(a: &Attrs) -> R<Op> {
    match a.opt_i64s("new_sizes")? {
        Some(new_sizes) => Ok(Op::Reshape { dimensions: a.opt_i64s("dimensions")?, new_sizes }),
        None => Ok(Op::Reshape { dimensions: None, new_sizes: a.i64s("dimensions")? }),
    }
}

fn padding_config(a: &Attrs) -> R<Vec<PadDim>> {
    let v = a.get("padding_config").ok_or_else(|| a.path("padding_config").error("Pad needs the attribute `padding_config`"))?;
    let p = a.path("padding_config");
    let list = v.as_array().ok_or_else(|| p.error("padding_config is a list with one object per dimension"))?;
    let mut dims = Vec::with_capacity(list.len());
    for (i, d) in list.iter().enumerate() {
        let dp = p.index(i);
        let obj = d.as_object().ok_or_else(|| dp.error("expected {\"edge_padding_low\", \"edge_padding_high\", \"interior_padding\"}"))?;
        for key in obj.keys() {
            if !matches!(key.as_str(), "edge_padding_low" | "edge_padding_high" | "interior_padding") {
                return Err(dp.key(key).error(format!("unknown key `{key}` in padding_config")));
            }
        }
        let field = |k: &str| obj.get(k).map(|v| Attrs::i64_value(v, &dp.key(k))).transpose().map(|x| x.unwrap_or(0));
        dims.push(PadDim {
            edge_padding_low: field("edge_padding_low")?,
            edge_padding_high: field("edge_padding_high")?,
            interior_padding: field("interior_padding")?,
        });
    }
    Ok(dims)
}

fn gather_dims(a: &Attrs) -> R<GatherDims> {
    Ok(GatherDims {
        offset_dims: a.i64s("offset_dims")?,
        collapsed_slice_dims: a.opt_i64s("collapsed_slice_dims")?.unwrap_or_default(),
        start_index_map: a.i64s("start_index_map")?,
        index_vector_dim: a.i64("index_vector_dim")?,
        slice_sizes: a.i64s("slice_sizes")?,
        indices_are_sorted: a.bool_or("indices_are_sorted", false)?,
        operand_batching_dims: a.opt_i64s("operand_batching_dims")?.unwrap_or_default(),
        start_indices_batching_dims: a.opt_i64s("start_indices_batching_dims")?.unwrap_or_default(),
    })
}

fn scatter_dims(a: &Attrs) -> R<ScatterDims> {
    Ok(ScatterDims {
        update_window_dims: a.i64s("update_window_dims")?,
        inserted_window_dims: a.opt_i64s("inserted_window_dims")?.unwrap_or_default(),
        scatter_dims_to_operand_dims: a.i64s("scatter_dims_to_operand_dims")?,
        index_vector_dim: a.i64("index_vector_dim")?,
        indices_are_sorted: a.bool_or("indices_are_sorted", false)?,
        unique_indices: a.bool_or("unique_indices", false)?,
        input_batching_dims: a.opt_i64s("input_batching_dims")?.unwrap_or_default(),
        scatter_indices_batching_dims: a.opt_i64s("scatter_indices_batching_dims")?.unwrap_or_default(),
    })
}

/// Window attributes; strides and dilations default to 1, padding to VALID.
fn window(a: &Attrs, dilations: bool) -> R<WindowAttrs> {
    let window_dimensions = a.i64s("window_dimensions")?;
    let ones = vec![1; window_dimensions.len()];
    let window_strides = a.opt_i64s("window_strides")?.unwrap_or_else(|| ones.clone());
    let (base_dilations, window_dilations) = if dilations {
        (a.opt_i64s("base_dilations")?.unwrap_or_else(|| ones.clone()), a.opt_i64s("window_dilations")?.unwrap_or_else(|| ones.clone()))
    } else {
        (ones.clone(), ones)
    };
    Ok(WindowAttrs {
        window_dimensions,
        window_strides,
        base_dilations,
        window_dilations,
        padding: a.padding_or("padding", Padding::Valid)?,
    })
}

fn dot_dims(a: &Attrs) -> R<DotDims> {
    let v = a
        .get("dimension_numbers")
        .ok_or_else(|| a.path("dimension_numbers").error("DotGeneral needs the attribute `dimension_numbers`"))?;
    let p = a.path("dimension_numbers");
    let obj = v.as_object().ok_or_else(|| p.error("dimension_numbers is an object of four lists"))?;
    let keys = ["lhs_contracting_dimensions", "rhs_contracting_dimensions", "lhs_batch_dimensions", "rhs_batch_dimensions"];
    for key in obj.keys() {
        if !keys.contains(&key.as_str()) {
            return Err(p.key(key).error(format!("unknown key `{key}` in dimension_numbers")));
        }
    }
    let list = |k: &str| obj.get(k).map(|v| Attrs::i64s_value(v, &p.key(k))).transpose().map(Option::unwrap_or_default);
    Ok(DotDims {
        lhs_contracting_dimensions: list(keys[0])?,
        rhs_contracting_dimensions: list(keys[1])?,
        lhs_batch_dimensions: list(keys[2])?,
        rhs_batch_dimensions: list(keys[3])?,
    })
}

/// `precision_config`: at most one precision per operand, each `DEFAULT`,
/// `HIGH` or `HIGHEST` (any case, as HLO prints them lowercase). It does
/// not change what a dot or convolution computes in the reference (which is
/// as precise as the element type), so a valid one is checked and ignored;
/// an unknown name is an error, not silently taken as DEFAULT.
fn precision_config(a: &Attrs) -> R<()> {
    const NAMES: [&str; 3] = ["DEFAULT", "HIGH", "HIGHEST"];
    let Some(value) = a.get("precision_config").filter(|v| !v.is_null()) else { return Ok(()) };
    let path = a.path("precision_config");
    let list = value.as_array().ok_or_else(|| path.error(format!("expected a list of precisions, found {value}")))?;
    if list.len() > 2 {
        return Err(path.error(format!("has {} entries; there is one precision per operand (at most 2)", list.len())));
    }
    for (i, p) in list.iter().enumerate() {
        let known = p.as_str().is_some_and(|s| NAMES.iter().any(|n| n.eq_ignore_ascii_case(s)));
        if !known {
            return Err(path.index(i).error(format!("unknown precision {p}; expected DEFAULT, HIGH or HIGHEST")));
        }
    }
    Ok(())
}

/// Conv, ConvWithGeneralPadding, ConvWithGeneralDimensions and
/// ConvGeneralDilated share one attribute set; what a form does not name
/// takes its default (strides and dilations 1, groups 1, document layout).
fn conv(a: &Attrs) -> R<ConvAttrs> {
    precision_config(a)?;
    let window_strides = a.i64s("window_strides")?;
    let ones = vec![1; window_strides.len()];
    Ok(ConvAttrs {
        padding: a.padding_or("padding", Padding::Valid)?,
        lhs_dilation: a.opt_i64s("lhs_dilation")?.unwrap_or_else(|| ones.clone()),
        rhs_dilation: a.opt_i64s("rhs_dilation")?.unwrap_or(ones),
        window_strides,
        feature_group_count: a.opt_i64("feature_group_count")?.unwrap_or(1),
        batch_group_count: a.opt_i64("batch_group_count")?.unwrap_or(1),
        dimension_numbers: conv_dims(a)?,
        preferred_element_type: a.opt_element_type("preferred_element_type")?,
    })
}

/// `dimension_numbers` of a convolution: an object with the fields of XLA's
/// ConvolutionDimensionNumbers, or XLA's text form `"b01f_01io->b01f"`.
fn conv_dims(a: &Attrs) -> R<Option<ConvDims>> {
    let Some(v) = a.get("dimension_numbers") else { return Ok(None) };
    let p = a.path("dimension_numbers");
    if let Some(text) = v.as_str() {
        return parse_dim_labels(text)
            .map(Some)
            .ok_or_else(|| p.error(format!("`{text}` is not a dim_labels string like \"b01f_01io->b01f\"")));
    }
    let obj = v.as_object().ok_or_else(|| p.error("dimension_numbers is an object or a \"b01f_01io->b01f\" string"))?;
    let scalar_keys = [
        "input_batch_dimension",
        "input_feature_dimension",
        "kernel_output_feature_dimension",
        "kernel_input_feature_dimension",
        "output_batch_dimension",
        "output_feature_dimension",
    ];
    let list_keys = ["input_spatial_dimensions", "kernel_spatial_dimensions", "output_spatial_dimensions"];
    for key in obj.keys() {
        if !scalar_keys.contains(&key.as_str()) && !list_keys.contains(&key.as_str()) {
            return Err(p.key(key).error(format!("unknown key `{key}` in dimension_numbers")));
        }
    }
    let scalar =
        |k: &str| obj.get(k).ok_or_else(|| p.error(format!("dimension_numbers needs `{k}`"))).and_then(|v| Attrs::i64_value(v, &p.key(k)));
    let list = |k: &str| obj.get(k).map(|v| Attrs::i64s_value(v, &p.key(k))).transpose().map(Option::unwrap_or_default);
    Ok(Some(ConvDims {
        input_batch_dimension: scalar(scalar_keys[0])?,
        input_feature_dimension: scalar(scalar_keys[1])?,
        input_spatial_dimensions: list(list_keys[0])?,
        kernel_output_feature_dimension: scalar(scalar_keys[2])?,
        kernel_input_feature_dimension: scalar(scalar_keys[3])?,
        kernel_spatial_dimensions: list(list_keys[1])?,
        output_batch_dimension: scalar(scalar_keys[4])?,
        output_feature_dimension: scalar(scalar_keys[5])?,
        output_spatial_dimensions: list(list_keys[2])?,
    }))
}

/// XLA's `dim_labels`: `b01f_01io->b01f` (b batch, f feature, i/o kernel
/// input/output feature, digits spatial dimensions in order).
pub fn parse_dim_labels(text: &str) -> Option<ConvDims> {
    let (inputs, output) = text.split_once("->")?;
    let (lhs, rhs) = inputs.split_once('_')?;
    let find = |s: &str, c: char| s.find(c).map(|i| i as i64);
    let spatial = |s: &str| -> Option<Vec<i64>> {
        let n = s.chars().filter(char::is_ascii_digit).count();
        (0..n).map(|d| s.find(char::from_digit(d as u32, 10)?).map(|i| i as i64)).collect()
    };
    let dims = ConvDims {
        input_batch_dimension: find(lhs, 'b')?,
        input_feature_dimension: find(lhs, 'f')?,
        input_spatial_dimensions: spatial(lhs)?,
        kernel_output_feature_dimension: find(rhs, 'o')?,
        kernel_input_feature_dimension: find(rhs, 'i')?,
        kernel_spatial_dimensions: spatial(rhs)?,
        output_batch_dimension: find(output, 'b')?,
        output_feature_dimension: find(output, 'f')?,
        output_spatial_dimensions: spatial(output)?,
    };
    let n = dims.input_spatial_dimensions.len();
    let consistent = lhs.len() == n + 2
        && rhs.len() == n + 2
        && output.len() == n + 2
        && dims.kernel_spatial_dimensions.len() == n
        && dims.output_spatial_dimensions.len() == n;
    consistent.then_some(dims)
}

fn fft_type(a: &Attrs) -> R<FftType> {
    let s = a.string("fft_type")?;
    Ok(match s.to_ascii_uppercase().as_str() {
        "FFT" => FftType::Fft,
        "IFFT" => FftType::Ifft,
        "RFFT" => FftType::Rfft,
        "IRFFT" => FftType::Irfft,
        _ => return Err(a.path("fft_type").error(format!("fft_type must be FFT, IFFT, RFFT or IRFFT, found `{s}`"))),
    })
}

fn transpose_a(a: &Attrs) -> R<TransposeA> {
    Ok(match a.opt_string("transpose_a")?.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None | Some("NO_TRANSPOSE") => TransposeA::NoTranspose,
        Some("TRANSPOSE") => TransposeA::Transpose,
        Some("ADJOINT") => TransposeA::Adjoint,
        Some(other) => {
            return Err(a.path("transpose_a").error(format!("transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, found `{other}`")))
        }
    })
}

fn conditional(a: &Attrs) -> R<Op> {
    if a.has("branch_computations") {
        return Ok(Op::Conditional(ConditionalForm::Indexed { branch_computations: a.computations("branch_computations")? }));
    }
    Ok(Op::Conditional(ConditionalForm::Predicate {
        true_computation: a.computation("true_computation")?,
        false_computation: a.computation("false_computation")?,
    }))
}

fn replica_groups(a: &Attrs) -> R<ReplicaGroups> {
    let Some(v) = a.get("replica_groups").filter(|v| !v.is_null()) else { return Ok(vec![]) };
    let p = a.path("replica_groups");
    let list = v.as_array().ok_or_else(|| p.error("replica_groups is a list of lists of replica ids"))?;
    list.iter().enumerate().map(|(i, g)| Attrs::i64s_value(g, &p.index(i))).collect()
}

fn channel_id(a: &Attrs) -> R<i64> {
    match a.get_any(&["channel_id", "channel_handle"]) {
        Some((v, p)) => Attrs::i64_value(v, &p),
        None => Err(a.path("channel_id").error("needs the attribute `channel_id`")),
    }
}

/// Ops whose meaning depends on the world around the computation.
fn world_op(name: &str, a: &Attrs) -> R<Op> {
    Ok(match name {
        "ReplicaId" => Op::ReplicaId,
        "AllGather" => Op::AllGather {
            all_gather_dim: a.i64("all_gather_dim")?,
            shard_count: a.opt_i64("shard_count")?,
            replica_groups: replica_groups(a)?,
            channel_id: a.opt_i64("channel_id")?,
        },
        "AllReduce" => Op::AllReduce {
            computation: a.computation("computation")?,
            replica_groups: replica_groups(a)?,
            channel_id: a.opt_i64("channel_id")?,
        },
        "AllToAll" => Op::AllToAll {
            split_dimension: a.i64("split_dimension")?,
            concat_dimension: a.i64("concat_dimension")?,
            split_count: a.i64("split_count")?,
            replica_groups: replica_groups(a)?,
        },
        "CollectivePermute" => {
            let v = a
                .get("source_target_pairs")
                .ok_or_else(|| a.path("source_target_pairs").error("CollectivePermute needs `source_target_pairs`"))?;
            let p = a.path("source_target_pairs");
            let list = v.as_array().ok_or_else(|| p.error("source_target_pairs is a list of [source, target] pairs"))?;
            let mut pairs = Vec::with_capacity(list.len());
            for (i, pair) in list.iter().enumerate() {
                match Attrs::i64s_value(pair, &p.index(i))?.as_slice() {
                    [s, t] => pairs.push((*s, *t)),
                    _ => return Err(p.index(i).error("each entry is a [source, target] pair")),
                }
            }
            Op::CollectivePermute { source_target_pairs: pairs, channel_id: a.opt_i64("channel_id")? }
        }
        "ReduceScatter" => Op::ReduceScatter {
            computation: a.computation("computation")?,
            scatter_dimension: a.i64("scatter_dimension")?,
            shard_count: a.opt_i64("shard_count")?,
            replica_groups: replica_groups(a)?,
            channel_id: a.opt_i64("channel_id")?,
        },
        "CrossReplicaSum" => Op::CrossReplicaSum { replica_groups: replica_groups(a)? },
        "RngUniform" => Op::RngUniform { shape: a.shape("shape")? },
        "RngNormal" => Op::RngNormal { shape: a.shape("shape")? },
        "RngBitGenerator" => {
            let s = a.opt_string("algorithm")?.unwrap_or_else(|| "DEFAULT".into());
            let algorithm = match s.to_ascii_uppercase().trim_start_matches("RNG_") {
                "DEFAULT" => RngAlgorithm::Default,
                "THREE_FRY" | "THREEFRY" => RngAlgorithm::ThreeFry,
                "PHILOX" => RngAlgorithm::Philox,
                _ => return Err(a.path("algorithm").error(format!("algorithm must be DEFAULT, THREE_FRY or PHILOX, found `{s}`"))),
            };
            Op::RngBitGenerator { algorithm, shape: a.shape("shape")? }
        }
        "Infeed" => Op::Infeed { shape: a.shape("shape")?, config: a.opt_string("config")?.unwrap_or_default() },
        "Outfeed" => {
            let _ = a.get("shape_with_layout");
            Op::Outfeed { config: a.opt_string("outfeed_config")?.unwrap_or_default() }
        }
        "Send" => Op::Send { channel_id: channel_id(a)? },
        "SendDone" => Op::SendDone { channel_id: channel_id(a)? },
        "Recv" => Op::Recv { shape: a.shape("shape")?, channel_id: channel_id(a)? },
        "RecvDone" => Op::RecvDone { channel_id: channel_id(a)? },
        "CustomCall" => {
            let target = match a.get_any(&["target_name", "call_target_name"]) {
                Some((Value::String(s), _)) => s.clone(),
                Some((_, p)) => return Err(p.error("target_name is a string")),
                None => return Err(a.path("target_name").error("CustomCall needs the attribute `target_name`")),
            };
            let opaque = a.opt_string("opaque")?.or(a.opt_string("backend_config")?).unwrap_or_default();
            let _ = a.get("has_side_effect");
            Op::CustomCall { target_name: target, shape: a.shape("shape")?, opaque }
        }
        "GetDimensionSize" => Op::GetDimensionSize { dimension: a.i64("dimension")? },
        "SetDimensionSize" => Op::SetDimensionSize { dimension: a.i64("dimension")? },
        _ => return Err(a.path("op").error(format!("unknown op `{name}`{}", super::suggest::op_hint(name)))),
    })
}

/// A result shape declared by an op whose shape is an attribute, if any.
pub fn attribute_shape(op: &Op) -> Option<&Shape> {
    match op {
        Op::Iota { shape, .. }
        | Op::RngUniform { shape }
        | Op::RngNormal { shape }
        | Op::Infeed { shape, .. }
        | Op::Recv { shape, .. }
        | Op::CustomCall { shape, .. } => Some(shape),
        _ => None,
    }
}
