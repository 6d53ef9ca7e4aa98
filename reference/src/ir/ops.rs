//! The ops of the document, each with its typed attributes.

use super::attrs::*;
use super::ComputationId;
use crate::literal::Literal;
use crate::types::{ElementType, Shape};

/// Element-wise unary functions (document §"Element-wise unary functions").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    Abs,
    Cbrt,
    Ceil,
    Clz,
    Conj,
    Cos,
    Erf,
    Exp,
    Expm1,
    Floor,
    Imag,
    IsFinite,
    Log,
    Log1p,
    Logistic,
    Neg,
    Not,
    PopulationCount,
    Real,
    Round,
    RoundNearestEven,
    Rsqrt,
    Sign,
    Sin,
    Sqrt,
    Tan,
    Tanh,
    // CHLO extension ops (docs/format.md, "CHLO extension ops"): the
    // element-wise functions of XLA's client math library that JAX emits
    // as `chlo.*` ops.
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    Asinh,
    Acosh,
    Atanh,
    ErfInv,
    Erfc,
    Lgamma,
    Digamma,
    BesselI1e,
    IsInf,
    IsPosInf,
    IsNegInf,
}

/// Element-wise binary arithmetic operations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Max,
    Min,
    Pow,
    Atan2,
    Complex,
    And,
    Or,
    Xor,
    ShiftLeft,
    ShiftRightArithmetic,
    ShiftRightLogical,
    // CHLO extension ops: NextAfter(from, to), Polygamma(n, x), Zeta(x, q).
    NextAfter,
    Polygamma,
    Zeta,
}

/// An op with its attributes. Operands are in the document's signature
/// order (docs/format.md §3); computations are resolved to ids.
#[derive(Clone, Debug)]
pub enum Op {
    /// A computation's `number`-th parameter.
    Parameter {
        number: usize,
    },
    Constant {
        literal: Literal,
    },
    Unary(UnaryOp),
    Binary {
        op: BinaryOp,
        broadcast_dimensions: Option<Vec<i64>>,
    },
    Compare {
        direction: Direction,
        total_order: bool,
        broadcast_dimensions: Option<Vec<i64>>,
    },
    Broadcast {
        broadcast_sizes: Vec<i64>,
    },
    BroadcastInDim {
        out_dim_size: Vec<i64>,
        broadcast_dimensions: Vec<i64>,
    },
    /// `dimensions` is the order in which the operand is flattened (the
    /// Korean document's three-argument form); `None` is row-major.
    Reshape {
        dimensions: Option<Vec<i64>>,
        new_sizes: Vec<i64>,
    },
    Collapse {
        dimensions: Vec<i64>,
    },
    Transpose {
        permutation: Vec<i64>,
    },
    Rev {
        dimensions: Vec<i64>,
    },
    Slice {
        start_indices: Vec<i64>,
        limit_indices: Vec<i64>,
        strides: Vec<i64>,
    },
    ConcatInDim {
        dimension: i64,
    },
    Pad {
        padding_config: Vec<PadDim>,
    },
    Iota {
        shape: Shape,
        iota_dimension: i64,
    },
    Select,
    Clamp,
    ConvertElementType {
        new_element_type: ElementType,
    },
    BitcastConvertType {
        new_element_type: ElementType,
    },
    ReducePrecision {
        exponent_bits: i64,
        mantissa_bits: i64,
    },
    Tuple,
    GetTupleElement {
        index: i64,
    },

    DynamicSlice {
        slice_sizes: Vec<i64>,
    },
    DynamicUpdateSlice,
    Gather(GatherDims),
    Scatter {
        dims: ScatterDims,
        update_computation: ComputationId,
    },
    Reduce {
        computation: ComputationId,
        dimensions: Vec<i64>,
    },
    ReduceWindow {
        computation: ComputationId,
        window: WindowAttrs,
    },
    SelectAndScatter {
        select: ComputationId,
        scatter: ComputationId,
        window: WindowAttrs,
    },
    Map {
        computation: ComputationId,
        dimensions: Option<Vec<i64>>,
    },
    Sort {
        comparator: ComputationId,
        dimension: Option<i64>,
        is_stable: bool,
    },
    TopK {
        k: i64,
        largest: bool,
    },
    Dot {
        preferred_element_type: Option<ElementType>,
    },
    DotGeneral {
        dimension_numbers: DotDims,
        preferred_element_type: Option<ElementType>,
    },
    Conv(ConvAttrs),
    Fft {
        fft_type: FftType,
        fft_length: Vec<i64>,
    },
    Cholesky {
        lower: bool,
    },
    TriangularSolve {
        left_side: bool,
        lower: bool,
        unit_diagonal: bool,
        transpose_a: TransposeA,
    },
    BatchNormTraining {
        epsilon: f32,
        feature_index: i64,
    },
    BatchNormInference {
        epsilon: f32,
        feature_index: i64,
    },
    BatchNormGrad {
        epsilon: f32,
        feature_index: i64,
    },

    Call {
        computation: ComputationId,
    },
    Conditional(ConditionalForm),
    While {
        condition: ComputationId,
        body: ComputationId,
    },
    OptimizationBarrier,
    AfterAll,

    ReplicaId,
    AllGather {
        all_gather_dim: i64,
        shard_count: Option<i64>,
        replica_groups: ReplicaGroups,
        channel_id: Option<i64>,
    },
    AllReduce {
        computation: ComputationId,
        replica_groups: ReplicaGroups,
        channel_id: Option<i64>,
    },
    AllToAll {
        split_dimension: i64,
        concat_dimension: i64,
        split_count: i64,
        replica_groups: ReplicaGroups,
    },
    CollectivePermute {
        source_target_pairs: Vec<(i64, i64)>,
        channel_id: Option<i64>,
    },
    ReduceScatter {
        computation: ComputationId,
        scatter_dimension: i64,
        shard_count: Option<i64>,
        replica_groups: ReplicaGroups,
        channel_id: Option<i64>,
    },
    CrossReplicaSum {
        replica_groups: ReplicaGroups,
    },
    RngUniform {
        shape: Shape,
    },
    RngNormal {
        shape: Shape,
    },
    RngBitGenerator {
        algorithm: RngAlgorithm,
        shape: Shape,
    },
    Infeed {
        shape: Shape,
        config: String,
    },
    Outfeed {
        config: String,
    },
    Send {
        channel_id: i64,
    },
    SendDone {
        channel_id: i64,
    },
    Recv {
        shape: Shape,
        channel_id: i64,
    },
    RecvDone {
        channel_id: i64,
    },
    CustomCall {
        target_name: String,
        shape: Shape,
        opaque: String,
    },
    GetDimensionSize {
        dimension: i64,
    },
    SetDimensionSize {
        dimension: i64,
    },
}

impl UnaryOp {
    pub const ALL: [(&'static str, UnaryOp); 43] = [
        ("Abs", UnaryOp::Abs),
        ("Cbrt", UnaryOp::Cbrt),
        ("Ceil", UnaryOp::Ceil),
        ("Clz", UnaryOp::Clz),
        ("Conj", UnaryOp::Conj),
        ("Cos", UnaryOp::Cos),
        ("Erf", UnaryOp::Erf),
        ("Exp", UnaryOp::Exp),
        ("Expm1", UnaryOp::Expm1),
        ("Floor", UnaryOp::Floor),
        ("Imag", UnaryOp::Imag),
        ("IsFinite", UnaryOp::IsFinite),
        ("Log", UnaryOp::Log),
        ("Log1p", UnaryOp::Log1p),
        ("Logistic", UnaryOp::Logistic),
        ("Neg", UnaryOp::Neg),
        ("Not", UnaryOp::Not),
        ("PopulationCount", UnaryOp::PopulationCount),
        ("Real", UnaryOp::Real),
        ("Round", UnaryOp::Round),
        ("RoundNearestEven", UnaryOp::RoundNearestEven),
        ("Rsqrt", UnaryOp::Rsqrt),
        ("Sign", UnaryOp::Sign),
        ("Sin", UnaryOp::Sin),
        ("Sqrt", UnaryOp::Sqrt),
        ("Tan", UnaryOp::Tan),
        ("Tanh", UnaryOp::Tanh),
        ("Sinh", UnaryOp::Sinh),
        ("Cosh", UnaryOp::Cosh),
        ("Asin", UnaryOp::Asin),
        ("Acos", UnaryOp::Acos),
        ("Atan", UnaryOp::Atan),
        ("Asinh", UnaryOp::Asinh),
        ("Acosh", UnaryOp::Acosh),
        ("Atanh", UnaryOp::Atanh),
        ("ErfInv", UnaryOp::ErfInv),
        ("Erfc", UnaryOp::Erfc),
        ("Lgamma", UnaryOp::Lgamma),
        ("Digamma", UnaryOp::Digamma),
        ("BesselI1e", UnaryOp::BesselI1e),
        ("IsInf", UnaryOp::IsInf),
        ("IsPosInf", UnaryOp::IsPosInf),
        ("IsNegInf", UnaryOp::IsNegInf),
    ];

    pub fn name(self) -> &'static str {
        UnaryOp::ALL.iter().find(|(_, op)| *op == self).map_or("?", |(n, _)| n)
    }
}

impl BinaryOp {
    pub const ALL: [(&'static str, BinaryOp); 19] = [
        ("Add", BinaryOp::Add),
        ("Sub", BinaryOp::Sub),
        ("Mul", BinaryOp::Mul),
        ("Div", BinaryOp::Div),
        ("Rem", BinaryOp::Rem),
        ("Max", BinaryOp::Max),
        ("Min", BinaryOp::Min),
        ("Pow", BinaryOp::Pow),
        ("Atan2", BinaryOp::Atan2),
        ("Complex", BinaryOp::Complex),
        ("And", BinaryOp::And),
        ("Or", BinaryOp::Or),
        ("Xor", BinaryOp::Xor),
        ("ShiftLeft", BinaryOp::ShiftLeft),
        ("ShiftRightArithmetic", BinaryOp::ShiftRightArithmetic),
        ("ShiftRightLogical", BinaryOp::ShiftRightLogical),
        ("NextAfter", BinaryOp::NextAfter),
        ("Polygamma", BinaryOp::Polygamma),
        ("Zeta", BinaryOp::Zeta),
    ];

    pub fn name(self) -> &'static str {
        BinaryOp::ALL.iter().find(|(_, op)| *op == self).map_or("?", |(n, _)| n)
    }
}

impl Op {
    /// The op's canonical name in xla-json/1, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Parameter { .. } => "Parameter",
            Op::Constant { .. } => "Constant",
            Op::Unary(u) => u.name(),
            Op::Binary { op, .. } => op.name(),
            Op::Compare { direction, total_order, .. } => match (direction, total_order) {
                (Direction::Eq, false) => "Eq",
                (Direction::Ne, false) => "Ne",
                (Direction::Ge, false) => "Ge",
                (Direction::Gt, false) => "Gt",
                (Direction::Le, false) => "Le",
                (Direction::Lt, false) => "Lt",
                (Direction::Eq, true) => "EqTotalOrder",
                (Direction::Ne, true) => "NeTotalOrder",
                (Direction::Ge, true) => "GeTotalOrder",
                (Direction::Gt, true) => "GtTotalOrder",
                (Direction::Le, true) => "LeTotalOrder",
                (Direction::Lt, true) => "LtTotalOrder",
            },
            Op::Broadcast { .. } => "Broadcast",
            Op::BroadcastInDim { .. } => "BroadcastInDim",
            Op::Reshape { .. } => "Reshape",
            Op::Collapse { .. } => "Collapse",
            Op::Transpose { .. } => "Transpose",
            Op::Rev { .. } => "Rev",
            Op::Slice { .. } => "Slice",
            Op::ConcatInDim { .. } => "ConcatInDim",
            Op::Pad { .. } => "Pad",
            Op::Iota { .. } => "Iota",
            Op::Select => "Select",
            Op::Clamp => "Clamp",
            Op::ConvertElementType { .. } => "ConvertElementType",
            Op::BitcastConvertType { .. } => "BitcastConvertType",
            Op::ReducePrecision { .. } => "ReducePrecision",
            Op::Tuple => "Tuple",
            Op::GetTupleElement { .. } => "GetTupleElement",
            Op::DynamicSlice { .. } => "DynamicSlice",
            Op::DynamicUpdateSlice => "DynamicUpdateSlice",
            Op::Gather(_) => "Gather",
            Op::Scatter { .. } => "Scatter",
            Op::Reduce { .. } => "Reduce",
            Op::ReduceWindow { .. } => "ReduceWindow",
            Op::SelectAndScatter { .. } => "SelectAndScatter",
            Op::Map { .. } => "Map",
            Op::Sort { .. } => "Sort",
            Op::TopK { .. } => "TopK",
            Op::Dot { .. } => "Dot",
            Op::DotGeneral { .. } => "DotGeneral",
            Op::Conv(_) => "Conv",
            Op::Fft { .. } => "Fft",
            Op::Cholesky { .. } => "Cholesky",
            Op::TriangularSolve { .. } => "TriangularSolve",
            Op::BatchNormTraining { .. } => "BatchNormTraining",
            Op::BatchNormInference { .. } => "BatchNormInference",
            Op::BatchNormGrad { .. } => "BatchNormGrad",
            Op::Call { .. } => "Call",
            Op::Conditional(_) => "Conditional",
            Op::While { .. } => "While",
            Op::OptimizationBarrier => "OptimizationBarrier",
            Op::AfterAll => "AfterAll",
            Op::ReplicaId => "ReplicaId",
            Op::AllGather { .. } => "AllGather",
            Op::AllReduce { .. } => "AllReduce",
            Op::AllToAll { .. } => "AllToAll",
            Op::CollectivePermute { .. } => "CollectivePermute",
            Op::ReduceScatter { .. } => "ReduceScatter",
            Op::CrossReplicaSum { .. } => "CrossReplicaSum",
            Op::RngUniform { .. } => "RngUniform",
            Op::RngNormal { .. } => "RngNormal",
            Op::RngBitGenerator { .. } => "RngBitGenerator",
            Op::Infeed { .. } => "Infeed",
            Op::Outfeed { .. } => "Outfeed",
            Op::Send { .. } => "Send",
            Op::SendDone { .. } => "SendDone",
            Op::Recv { .. } => "Recv",
            Op::RecvDone { .. } => "RecvDone",
            Op::CustomCall { .. } => "CustomCall",
            Op::GetDimensionSize { .. } => "GetDimensionSize",
            Op::SetDimensionSize { .. } => "SetDimensionSize",
        }
    }

    /// The computations this op calls, for call-graph checks.
    pub fn called_computations(&self) -> Vec<ComputationId> {
        match self {
            Op::Scatter { update_computation, .. } => vec![*update_computation],
            Op::Reduce { computation, .. }
            | Op::ReduceWindow { computation, .. }
            | Op::Map { computation, .. }
            | Op::Call { computation }
            | Op::AllReduce { computation, .. }
            | Op::ReduceScatter { computation, .. } => vec![*computation],
            Op::SelectAndScatter { select, scatter, .. } => vec![*select, *scatter],
            Op::Sort { comparator, .. } => vec![*comparator],
            Op::Conditional(ConditionalForm::Predicate { true_computation, false_computation }) => {
                vec![*true_computation, *false_computation]
            }
            Op::Conditional(ConditionalForm::Indexed { branch_computations }) => branch_computations.clone(),
            Op::While { condition, body } => vec![*condition, *body],
            _ => vec![],
        }
    }
}
