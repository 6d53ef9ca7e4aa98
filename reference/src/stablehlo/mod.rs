//! The StableHLO writer: a verified module as StableHLO MLIR text that
//! StableHLO's own parser accepts and that means the same thing
//! (docs/stablehlo.md, "Writing").
//!
//! Every op is printed in MLIR's generic form (`"stablehlo.add"(%1, %2) :
//! (...) -> ...`, attributes as properties `<{...}>`): one uniform syntax,
//! independent of each op's custom assembly. Only `module` and `func.func`
//! use their pretty form.
//!
//! The entry computation becomes `func.func public @main`; computations
//! called by `Call` become `func.func private` functions; every other called
//! computation (reductions, comparators, loop and branch bodies) is inlined
//! into the region of the op that calls it. Tuples are tracked while
//! writing ([`emit::Val`]): StableHLO's region ops take and return flat
//! lists of tensors and tokens, so a tuple is written as its leaves and a
//! `stablehlo.tuple` appears only where a whole tuple value is needed (a
//! tuple-typed result of the entry, say).
//!
//! One file per op family, as in `verify/` and `eval/`.

mod control;
mod elementwise;
mod emit;
mod indexing;
mod linalg;
mod literal;
mod reduce;
mod shape_ops;
mod types;
mod world;

use thiserror::Error;

use crate::ir::{ComputationId, Op};
use crate::verify::VerifiedModule;

pub use elementwise::{binary_op_name, unary_op_name};
pub use types::{element_type, tensor_type};

/// Why an instruction could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportErrorKind {
    /// The op has no StableHLO counterpart with the same meaning
    /// (docs/stablehlo.md lists these ops).
    NoStableHloOp,
    /// The op has a counterpart, but not for these operands or attributes.
    Unsupported,
    /// The verified module is not what the writer expects: a writer bug.
    Internal,
}

/// An instruction that cannot be written as StableHLO, with where and why.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("instruction `{instruction}` ({op}) in computation `{computation}`: {message}")]
pub struct ExportError {
    pub kind: ExportErrorKind,
    pub computation: String,
    pub instruction: String,
    pub op: String,
    pub message: String,
}

/// An op handler's failure, before the instruction's name is attached; or
/// the located error of an instruction inside an inlined computation.
#[derive(Debug, Clone)]
pub(crate) enum Fail {
    Op { kind: ExportErrorKind, message: String },
    Nested(Box<ExportError>),
}

impl Fail {
    pub(crate) fn no_op(message: impl Into<String>) -> Fail {
        Fail::Op { kind: ExportErrorKind::NoStableHloOp, message: message.into() }
    }
    pub(crate) fn unsupported(message: impl Into<String>) -> Fail {
        Fail::Op { kind: ExportErrorKind::Unsupported, message: message.into() }
    }
    pub(crate) fn internal(message: impl Into<String>) -> Fail {
        Fail::Op { kind: ExportErrorKind::Internal, message: message.into() }
    }
}

pub(crate) type Res<T> = Result<T, Fail>;

/// Writes a verified module as StableHLO MLIR text.
pub fn write_stablehlo(m: &VerifiedModule) -> Result<String, ExportError> {
    emit::ModuleWriter::new(m).write()
}

/// The xla-json ops the writer cannot write (for docs and tests).
pub const UNWRITABLE_OPS: [&str; 4] = ["Send", "SendDone", "Recv", "RecvDone"];

/// Writes one instruction. `operands` are the operands' values; the result
/// is the instruction's value.
fn write_op(w: &mut emit::FuncWriter, at: &emit::At, operands: &[emit::Val]) -> Res<emit::Val> {
    match &at.instr().op {
        Op::Parameter { .. } => Err(Fail::internal("parameters are bound before the body is written")),
        Op::Constant { literal } => literal::constant(w, literal),
        Op::Unary(u) => elementwise::unary(w, at, *u, operands),
        Op::Binary { op, broadcast_dimensions } => elementwise::binary(w, at, *op, broadcast_dimensions.as_deref(), operands),
        Op::Compare { direction, total_order, broadcast_dimensions } => {
            elementwise::compare(w, at, *direction, *total_order, broadcast_dimensions.as_deref(), operands)
        }
        Op::Select => elementwise::select(w, at, operands),
        Op::Clamp => elementwise::clamp(w, at, operands),
        Op::ConvertElementType { .. } => elementwise::convert(w, at, "stablehlo.convert", operands),
        Op::BitcastConvertType { .. } => elementwise::convert(w, at, "stablehlo.bitcast_convert", operands),
        Op::ReducePrecision { exponent_bits, mantissa_bits } => {
            elementwise::reduce_precision(w, at, *exponent_bits, *mantissa_bits, operands)
        }

        Op::Broadcast { .. } | Op::BroadcastInDim { .. } => shape_ops::broadcast(w, at, operands),
        Op::Reshape { dimensions, .. } => shape_ops::reshape(w, at, dimensions.as_deref(), operands),
        Op::Collapse { .. } => shape_ops::reshape(w, at, None, operands),
        Op::Transpose { permutation } => shape_ops::transpose(w, at, permutation, operands),
        Op::Rev { dimensions } => shape_ops::rev(w, at, dimensions, operands),
        Op::Slice { start_indices, limit_indices, strides } => shape_ops::slice(w, at, start_indices, limit_indices, strides, operands),
        Op::ConcatInDim { dimension } => shape_ops::concat(w, at, *dimension, operands),
        Op::Pad { padding_config } => shape_ops::pad(w, at, padding_config, operands),
        Op::Iota { iota_dimension, .. } => shape_ops::iota(w, at, *iota_dimension),
        Op::Tuple => Ok(emit::Val::Tuple(operands.to_vec())),
        Op::GetTupleElement { index } => control::get_tuple_element(w, *index, operands),

        Op::DynamicSlice { slice_sizes } => indexing::dynamic_slice(w, at, slice_sizes, operands),
        Op::DynamicUpdateSlice => indexing::dynamic_update_slice(w, at, operands),
        Op::Gather(dims) => indexing::gather(w, at, dims, operands),
        Op::Scatter { dims, update_computation } => indexing::scatter(w, at, dims, *update_computation, operands),

        Op::Reduce { computation, dimensions } => reduce::reduce(w, at, *computation, dimensions, operands),
        Op::ReduceWindow { computation, window } => reduce::reduce_window(w, at, *computation, window, operands),
        Op::SelectAndScatter { select, scatter, window } => reduce::select_and_scatter(w, at, *select, *scatter, window, operands),
        Op::Map { computation, .. } => reduce::map(w, at, *computation, operands),
        Op::Sort { comparator, dimension, is_stable } => reduce::sort(w, at, *comparator, *dimension, *is_stable, operands),
        Op::TopK { k, largest } => reduce::top_k(w, at, *k, *largest, operands),

        Op::Dot { .. } => linalg::dot(w, at, operands),
        Op::DotGeneral { dimension_numbers, .. } => linalg::dot_general(w, at, dimension_numbers, operands),
        Op::Conv(attrs) => linalg::conv(w, at, attrs, operands),
        Op::Fft { fft_type, fft_length } => linalg::fft(w, at, *fft_type, fft_length, operands),
        Op::Cholesky { lower } => linalg::cholesky(w, at, *lower, operands),
        Op::TriangularSolve { left_side, lower, unit_diagonal, transpose_a } => {
            linalg::triangular_solve(w, at, *left_side, *lower, *unit_diagonal, *transpose_a, operands)
        }
        Op::BatchNormTraining { epsilon, feature_index } => {
            linalg::batch_norm(w, at, "stablehlo.batch_norm_training", *epsilon, *feature_index, operands)
        }
        Op::BatchNormInference { epsilon, feature_index } => {
            linalg::batch_norm(w, at, "stablehlo.batch_norm_inference", *epsilon, *feature_index, operands)
        }
        Op::BatchNormGrad { epsilon, feature_index } => {
            linalg::batch_norm(w, at, "stablehlo.batch_norm_grad", *epsilon, *feature_index, operands)
        }

        Op::Call { computation } => control::call(w, at, *computation, operands),
        Op::Conditional(form) => control::conditional(w, at, form, operands),
        Op::While { condition, body } => control::while_loop(w, at, *condition, *body, operands),
        Op::OptimizationBarrier => control::optimization_barrier(w, at, operands),
        Op::AfterAll => control::after_all(w, operands),

        Op::ReplicaId => world::replica_id(w),
        Op::AllGather { all_gather_dim, replica_groups, channel_id, .. } => {
            world::all_gather(w, at, *all_gather_dim, replica_groups, *channel_id, operands)
        }
        Op::AllReduce { computation, replica_groups, channel_id } => {
            world::all_reduce(w, at, Some(*computation), replica_groups, *channel_id, operands)
        }
        Op::CrossReplicaSum { replica_groups } => world::all_reduce(w, at, None, replica_groups, None, operands),
        Op::AllToAll { split_dimension, concat_dimension, split_count, replica_groups } => {
            world::all_to_all(w, at, *split_dimension, *concat_dimension, *split_count, replica_groups, operands)
        }
        Op::CollectivePermute { source_target_pairs, channel_id } => {
            world::collective_permute(w, at, source_target_pairs, *channel_id, operands)
        }
        Op::ReduceScatter { computation, scatter_dimension, replica_groups, channel_id, .. } => {
            world::reduce_scatter(w, at, *computation, *scatter_dimension, replica_groups, *channel_id, operands)
        }
        Op::Send { .. } | Op::SendDone { .. } | Op::Recv { .. } | Op::RecvDone { .. } => Err(Fail::no_op(
            "XLA's asynchronous Send/Recv contexts (data, request id) have no StableHLO counterpart: \
             stablehlo.send and stablehlo.recv are synchronous and carry no request id",
        )),
        Op::RngUniform { .. } => world::rng(w, at, "UNIFORM", operands),
        Op::RngNormal { .. } => world::rng(w, at, "NORMAL", operands),
        Op::RngBitGenerator { algorithm, .. } => world::rng_bit_generator(w, at, *algorithm, operands),
        Op::Infeed { config, .. } => world::infeed(w, at, config, operands),
        Op::Outfeed { config } => world::outfeed(w, config, operands),
        Op::CustomCall { target_name, opaque, .. } => world::custom_call(w, at, target_name, opaque, operands),
        Op::GetDimensionSize { dimension } => world::get_dimension_size(w, at, *dimension, operands),
        Op::SetDimensionSize { dimension } => world::set_dimension_size(w, at, *dimension, operands),
    }
}

/// The computations `Call` instructions reach from `root` (these become
/// private functions), in first-call order.
fn called_functions(m: &VerifiedModule) -> Vec<ComputationId> {
    let mut out = Vec::new();
    let mut stack = vec![m.entry()];
    let mut seen = vec![false; m.module().computations.len()];
    while let Some(c) = stack.pop() {
        if std::mem::replace(&mut seen[c], true) {
            continue;
        }
        for instr in &m.computation(c).instructions {
            if let Op::Call { computation } = instr.op {
                if !out.contains(&computation) && computation != m.entry() {
                    out.push(computation);
                }
            }
            stack.extend(instr.op.called_computations());
        }
    }
    out
}
