//! Writing modules back to xla-json/1: what the fuzzers, the HLO importer
//! and `xlaref import` emit. `read_module(write_module(m))` gives `m` again.

use serde_json::{json, Map, Value};

use super::literal::{write_literal, WriteOptions};
use crate::ir::*;

/// A module as an xla-json/1 object.
pub fn write_module(module: &Module) -> Value {
    let mut computations = Map::new();
    for c in &module.computations {
        computations.insert(c.name.clone(), write_computation(module, c));
    }
    let mut m = Map::new();
    m.insert("format".into(), json!("xla-json/1"));
    m.insert("entry".into(), json!(module.computations[module.entry].name));
    m.insert("computations".into(), Value::Object(computations));
    Value::Object(m)
}

fn write_computation(module: &Module, c: &Computation) -> Value {
    let params: Vec<Value> = c
        .params()
        .iter()
        .map(|p| json!({"name": p.name, "shape": p.declared_shape.as_ref().map(|s| s.to_string()).unwrap_or_default()}))
        .collect();
    let instructions: Vec<Value> = c.instructions[c.param_count..].iter().map(|i| write_instruction(module, c, i)).collect();
    json!({"params": params, "instructions": instructions, "root": c.instructions[c.root].name})
}

fn write_instruction(module: &Module, c: &Computation, instr: &Instruction) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(instr.name));
    m.insert("op".into(), json!(op_name(&instr.op)));
    let operands: Vec<&str> = instr.operands.iter().map(|&o| c.instructions[o].name.as_str()).collect();
    m.insert("operands".into(), json!(operands));
    if let Some(shape) = &instr.declared_shape {
        m.insert("shape".into(), json!(shape.to_string()));
    }
    let name = |id: ComputationId| json!(module.computations[id].name);
    write_attributes(&instr.op, &name, &mut m);
    if let Some(location) = &instr.location {
        m.insert("location".into(), json!(location));
    }
    Value::Object(m)
}

/// The name an op is written under (all convolutions as one form).
fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Conv(a) if a.dimension_numbers.is_some() => "ConvGeneralDilated",
        Op::Conv(_) => "ConvWithGeneralPadding",
        other => other.name(),
    }
}

fn padding(p: &Padding) -> Value {
    match p {
        Padding::Same => json!("SAME"),
        Padding::Valid => json!("VALID"),
        Padding::Explicit(pairs) => json!(pairs.iter().map(|(l, h)| json!([l, h])).collect::<Vec<_>>()),
    }
}

fn window(w: &WindowAttrs) -> [(&'static str, Value); 5] {
    [
        ("window_dimensions", json!(w.window_dimensions)),
        ("window_strides", json!(w.window_strides)),
        ("base_dilations", json!(w.base_dilations)),
        ("window_dilations", json!(w.window_dilations)),
        ("padding", padding(&w.padding)),
    ]
}

fn groups(g: &ReplicaGroups) -> Value {
    json!(g)
}

fn write_attributes(op: &Op, name: &dyn Fn(ComputationId) -> Value, m: &mut Map<String, Value>) {
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    match op {
        Op::Parameter { .. } | Op::Unary(_) | Op::Select | Op::Clamp | Op::Tuple | Op::DynamicUpdateSlice => {}
        Op::OptimizationBarrier | Op::AfterAll | Op::ReplicaId => {}
        Op::Constant { literal } => {
            put("shape", json!(literal.shape().to_string()));
            put("literal", write_literal(literal, WriteOptions { exact_bits: true }));
        }
        Op::Binary { broadcast_dimensions, .. } | Op::Compare { broadcast_dimensions, .. } => {
            if let Some(bd) = broadcast_dimensions {
                put("broadcast_dimensions", json!(bd));
            }
        }
        Op::Broadcast { broadcast_sizes } => put("broadcast_sizes", json!(broadcast_sizes)),
        Op::BroadcastInDim { out_dim_size, broadcast_dimensions } => {
            put("out_dim_size", json!(out_dim_size));
            put("broadcast_dimensions", json!(broadcast_dimensions));
        }
        Op::Reshape { dimensions, new_sizes } => {
            if let Some(d) = dimensions {
                put("dimensions", json!(d));
            }
            put("new_sizes", json!(new_sizes));
        }
        Op::Collapse { dimensions } | Op::Rev { dimensions } => put("dimensions", json!(dimensions)),
        Op::Transpose { permutation } => put("permutation", json!(permutation)),
        Op::Slice { start_indices, limit_indices, strides } => {
            put("start_indices", json!(start_indices));
            put("limit_indices", json!(limit_indices));
            put("strides", json!(strides));
        }
        Op::ConcatInDim { dimension } => put("dimension", json!(dimension)),
        Op::Pad { padding_config } => put(
            "padding_config",
            json!(padding_config
                .iter()
                .map(|p| json!({"edge_padding_low": p.edge_padding_low, "edge_padding_high": p.edge_padding_high, "interior_padding": p.interior_padding}))
                .collect::<Vec<_>>()),
        ),
        Op::Iota { shape, iota_dimension } => {
            put("shape", json!(shape.to_string()));
            put("iota_dimension", json!(iota_dimension));
        }
        Op::ConvertElementType { new_element_type } | Op::BitcastConvertType { new_element_type } => put("new_element_type", json!(new_element_type.name())),
        Op::ReducePrecision { exponent_bits, mantissa_bits } => {
            put("exponent_bits", json!(exponent_bits));
            put("mantissa_bits", json!(mantissa_bits));
        }
        Op::GetTupleElement { index } => put("index", json!(index)),
        Op::DynamicSlice { slice_sizes } => put("size_indices", json!(slice_sizes)),
        Op::Gather(d) => {
            put("offset_dims", json!(d.offset_dims));
            put("collapsed_slice_dims", json!(d.collapsed_slice_dims));
            put("start_index_map", json!(d.start_index_map));
            put("index_vector_dim", json!(d.index_vector_dim));
            put("slice_sizes", json!(d.slice_sizes));
            put("indices_are_sorted", json!(d.indices_are_sorted));
            if !d.operand_batching_dims.is_empty() || !d.start_indices_batching_dims.is_empty() {
                put("operand_batching_dims", json!(d.operand_batching_dims));
                put("start_indices_batching_dims", json!(d.start_indices_batching_dims));
            }
        }
        Op::Scatter { dims: d, update_computation } => {
            put("update_window_dims", json!(d.update_window_dims));
            put("inserted_window_dims", json!(d.inserted_window_dims));
            put("scatter_dims_to_operand_dims", json!(d.scatter_dims_to_operand_dims));
            put("index_vector_dim", json!(d.index_vector_dim));
            put("indices_are_sorted", json!(d.indices_are_sorted));
            put("unique_indices", json!(d.unique_indices));
            if !d.input_batching_dims.is_empty() || !d.scatter_indices_batching_dims.is_empty() {
                put("input_batching_dims", json!(d.input_batching_dims));
                put("scatter_indices_batching_dims", json!(d.scatter_indices_batching_dims));
            }
            put("update_computation", name(*update_computation));
        }
        Op::Reduce { computation, dimensions } => {
            put("computation", name(*computation));
            put("dimensions", json!(dimensions));
        }
        Op::ReduceWindow { computation, window: w } => {
            put("computation", name(*computation));
            for (k, v) in window(w) {
                put(k, v);
            }
        }
        Op::SelectAndScatter { select, scatter, window: w } => {
            put("select", name(*select));
            put("scatter", name(*scatter));
            put("window_dimensions", json!(w.window_dimensions));
            put("window_strides", json!(w.window_strides));
            put("padding", padding(&w.padding));
        }
        Op::Map { computation, dimensions } => {
            put("computation", name(*computation));
            if let Some(d) = dimensions {
                put("dimensions", json!(d));
            }
        }
        Op::Sort { comparator, dimension, is_stable } => {
            put("comparator", name(*comparator));
            if let Some(d) = dimension {
                put("dimension", json!(d));
            }
            put("is_stable", json!(is_stable));
        }
        Op::TopK { k, largest } => {
            put("k", json!(k));
            put("largest", json!(largest));
        }
        Op::Dot { preferred_element_type } => {
            if let Some(t) = preferred_element_type {
                put("preferred_element_type", json!(t.name()));
            }
        }
        Op::DotGeneral { dimension_numbers: d, preferred_element_type } => {
            put(
                "dimension_numbers",
                json!({
                    "lhs_contracting_dimensions": d.lhs_contracting_dimensions,
                    "rhs_contracting_dimensions": d.rhs_contracting_dimensions,
                    "lhs_batch_dimensions": d.lhs_batch_dimensions,
                    "rhs_batch_dimensions": d.rhs_batch_dimensions,
                }),
            );
            if let Some(t) = preferred_element_type {
                put("preferred_element_type", json!(t.name()));
            }
        }
        Op::Conv(a) => {
            put("window_strides", json!(a.window_strides));
            put("padding", padding(&a.padding));
            put("lhs_dilation", json!(a.lhs_dilation));
            put("rhs_dilation", json!(a.rhs_dilation));
            put("feature_group_count", json!(a.feature_group_count));
            put("batch_group_count", json!(a.batch_group_count));
            if let Some(d) = &a.dimension_numbers {
                put(
                    "dimension_numbers",
                    json!({
                        "input_batch_dimension": d.input_batch_dimension,
                        "input_feature_dimension": d.input_feature_dimension,
                        "input_spatial_dimensions": d.input_spatial_dimensions,
                        "kernel_output_feature_dimension": d.kernel_output_feature_dimension,
                        "kernel_input_feature_dimension": d.kernel_input_feature_dimension,
                        "kernel_spatial_dimensions": d.kernel_spatial_dimensions,
                        "output_batch_dimension": d.output_batch_dimension,
                        "output_feature_dimension": d.output_feature_dimension,
                        "output_spatial_dimensions": d.output_spatial_dimensions,
                    }),
                );
            }
            if let Some(t) = a.preferred_element_type {
                put("preferred_element_type", json!(t.name()));
            }
        }
        Op::Fft { fft_type, fft_length } => {
            let t = match fft_type {
                FftType::Fft => "FFT",
                FftType::Ifft => "IFFT",
                FftType::Rfft => "RFFT",
                FftType::Irfft => "IRFFT",
            };
            put("fft_type", json!(t));
            put("fft_length", json!(fft_length));
        }
        Op::Cholesky { lower } => put("lower", json!(lower)),
        Op::TriangularSolve { left_side, lower, unit_diagonal, transpose_a } => {
            put("left_side", json!(left_side));
            put("lower", json!(lower));
            put("unit_diagonal", json!(unit_diagonal));
            let t = match transpose_a {
                TransposeA::NoTranspose => "NO_TRANSPOSE",
                TransposeA::Transpose => "TRANSPOSE",
                TransposeA::Adjoint => "ADJOINT",
            };
            put("transpose_a", json!(t));
        }
        Op::BatchNormTraining { epsilon, feature_index } | Op::BatchNormInference { epsilon, feature_index } | Op::BatchNormGrad { epsilon, feature_index } => {
            put("epsilon", json!(epsilon));
            put("feature_index", json!(feature_index));
        }
        Op::Call { computation } => put("computation", name(*computation)),
        Op::Conditional(ConditionalForm::Predicate { true_computation, false_computation }) => {
            put("true_computation", name(*true_computation));
            put("false_computation", name(*false_computation));
        }
        Op::Conditional(ConditionalForm::Indexed { branch_computations }) => {
            put("branch_computations", json!(branch_computations.iter().map(|&b| name(b)).collect::<Vec<_>>()))
        }
        Op::While { condition, body } => {
            put("condition", name(*condition));
            put("body", name(*body));
        }
        Op::AllGather { all_gather_dim, shard_count, replica_groups, channel_id } => {
            put("all_gather_dim", json!(all_gather_dim));
            if let Some(s) = shard_count {
                put("shard_count", json!(s));
            }
            put("replica_groups", groups(replica_groups));
            if let Some(c) = channel_id {
                put("channel_id", json!(c));
            }
        }
        Op::AllReduce { computation, replica_groups, channel_id } => {
            put("computation", name(*computation));
            put("replica_groups", groups(replica_groups));
            if let Some(c) = channel_id {
                put("channel_id", json!(c));
            }
        }
        Op::AllToAll { split_dimension, concat_dimension, split_count, replica_groups } => {
            put("split_dimension", json!(split_dimension));
            put("concat_dimension", json!(concat_dimension));
            put("split_count", json!(split_count));
            put("replica_groups", groups(replica_groups));
        }
        Op::CollectivePermute { source_target_pairs, channel_id } => {
            put("source_target_pairs", json!(source_target_pairs.iter().map(|(s, t)| json!([s, t])).collect::<Vec<_>>()));
            if let Some(c) = channel_id {
                put("channel_id", json!(c));
            }
        }
        Op::ReduceScatter { computation, scatter_dimension, shard_count, replica_groups, channel_id } => {
            put("computation", name(*computation));
            put("scatter_dimension", json!(scatter_dimension));
            if let Some(s) = shard_count {
                put("shard_count", json!(s));
            }
            put("replica_groups", groups(replica_groups));
            if let Some(c) = channel_id {
                put("channel_id", json!(c));
            }
        }
        Op::CrossReplicaSum { replica_groups } => put("replica_groups", groups(replica_groups)),
        Op::RngUniform { shape } | Op::RngNormal { shape } => put("shape", json!(shape.to_string())),
        Op::RngBitGenerator { algorithm, shape } => {
            let a = match algorithm {
                RngAlgorithm::Default => "DEFAULT",
                RngAlgorithm::ThreeFry => "THREE_FRY",
                RngAlgorithm::Philox => "PHILOX",
            };
            put("algorithm", json!(a));
            put("shape", json!(shape.to_string()));
        }
        Op::Infeed { shape, config } => {
            put("shape", json!(shape.to_string()));
            if !config.is_empty() {
                put("config", json!(config));
            }
        }
        Op::Outfeed { config } => {
            if !config.is_empty() {
                put("outfeed_config", json!(config));
            }
        }
        Op::Send { channel_id } | Op::SendDone { channel_id } | Op::RecvDone { channel_id } => put("channel_id", json!(channel_id)),
        Op::Recv { shape, channel_id } => {
            put("shape", json!(shape.to_string()));
            put("channel_id", json!(channel_id));
        }
        Op::CustomCall { target_name, shape, opaque } => {
            put("target_name", json!(target_name));
            put("shape", json!(shape.to_string()));
            if !opaque.is_empty() {
                put("opaque", json!(opaque));
            }
        }
        Op::GetDimensionSize { dimension } | Op::SetDimensionSize { dimension } => put("dimension", json!(dimension)),
    }
}
