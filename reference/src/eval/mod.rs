//! The reference evaluator: a plain interpreter over a verified module.
//!
//! Values are computed instruction by instruction in program order; each op
//! is one function in the file of its family, a transcription of the
//! document's definition. Speed is `fast/`'s job; the reference only avoids
//! waste (no per-element allocation, values dropped after their last use).

pub mod applied;
pub mod batch_norm;
pub mod broadcast;
pub mod collectives;
pub mod control;
pub mod conv;
pub mod dot;
pub mod element;
pub mod elementwise;
pub mod fft;
pub mod indexing;
pub mod linalg;
pub mod reduce;
pub mod rng;
pub mod shape_ops;
pub mod sort;
pub mod world;

use std::collections::VecDeque;
use std::time::Instant;

use crate::error::RunError;
use crate::ir::{ComputationId, Op};
use crate::literal::{ArrayLiteral, Literal};
use crate::types::{ArrayShape, Shape};
use crate::verify::VerifiedModule;

/// Bounds on a run, so no input can make the evaluator hang or exhaust memory.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest element count of any value (the verifier checks static shapes
    /// against the same bound).
    pub max_elements: i64,
    /// Most iterations of any one While loop.
    pub max_while_trips: u64,
    /// Deepest nesting of computation calls.
    pub max_call_depth: usize,
    /// Most bytes the process may hold, checked before every op makes its
    /// result (`crate::watch::reserve`).
    pub max_bytes: u64,
    /// Wall-clock deadline for the whole run.
    pub deadline: Option<Instant>,
    /// The time the deadline was set from (`--timeout`), for the message
    /// that says the limit was passed.
    pub time_limit: Option<std::time::Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_elements: 1 << 28,
            max_while_trips: 10_000_000,
            max_call_depth: 512,
            max_bytes: crate::watch::default_max_bytes(),
            deadline: None,
            time_limit: None,
        }
    }
}

/// What the world around the computation provides.
#[derive(Debug, Default)]
pub struct Env {
    pub limits: Limits,
    /// Seed of RngUniform and RngNormal.
    pub seed: u64,
    /// How many RngUniform/RngNormal executions this run has made: the
    /// stream index of the next one (eval/rng.rs).
    pub rng_draws: u64,
    /// Values Infeed reads, in order.
    pub infeed: VecDeque<Literal>,
    /// Values Outfeed wrote, in order.
    pub outfeed: Vec<Literal>,
    /// This replica's id and the number of replicas.
    pub replica_id: u32,
    pub replica_count: u32,
    /// Where this run's replicas meet (None for a single replica).
    pub hub: Option<std::sync::Arc<crate::replicas::Hub>>,
    /// The CustomCall targets this run may call.
    pub custom_calls: crate::custom_call::Registry,
    /// The instruction being evaluated (set by the engines before each op):
    /// collectives rendezvous on it and name it in their messages.
    pub site: crate::replicas::Site,
}

impl Env {
    pub fn new(limits: Limits) -> Env {
        Env { limits, replica_count: 1, ..Env::default() }
    }

    /// The limit error once the deadline has passed, or a kernel of this
    /// thread stopped early because it had (`crate::watch`).
    pub fn check_deadline(&self) -> Result<(), RunError> {
        match self.limits.deadline {
            Some(d) if Instant::now() > d => Err(crate::watch::limit_error(self.limits.time_limit)),
            _ => crate::watch::passed(),
        }
    }
}

/// Runs the entry computation of a verified module on `args`.
pub fn run(module: &VerifiedModule, args: Vec<Literal>, env: &mut Env) -> Result<Literal, RunError> {
    check_arguments(module, &args)?;
    let _deadline = crate::watch::start(env.limits.deadline, env.limits.time_limit);
    let mut interp = Interpreter { module, env, depth: 0 };
    interp.call(module.entry(), args)
}

/// The arguments match the entry computation's parameters in number and type.
pub fn check_arguments(module: &VerifiedModule, args: &[Literal]) -> Result<(), RunError> {
    let params = &module.entry_signature().params;
    if params.len() != args.len() {
        return Err(RunError::Argument(format!("the entry computation takes {} arguments, got {}", params.len(), args.len())));
    }
    let entry = module.computation(module.entry());
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        let shape = a.shape();
        if !p.compatible(&shape) {
            let name = &entry.instructions[i].name;
            return Err(RunError::Argument(format!("argument {i} has shape {shape}, parameter {i} (`{name}`) has shape {p}")));
        }
    }
    Ok(())
}

/// The state of one run: the module, the world, the call depth.
pub struct Interpreter<'a> {
    pub module: &'a VerifiedModule,
    pub env: &'a mut Env,
    pub(crate) depth: usize,
}

impl Interpreter<'_> {
    /// Evaluates computation `id` on `args`.
    pub fn call(&mut self, id: ComputationId, args: Vec<Literal>) -> Result<Literal, RunError> {
        if self.depth >= self.env.limits.max_call_depth {
            return Err(RunError::Limit(format!("computation calls nested deeper than {}", self.env.limits.max_call_depth)));
        }
        self.depth += 1;
        let result = self.call_inner(id, args);
        self.depth -= 1;
        result
    }

    fn call_inner(&mut self, id: ComputationId, args: Vec<Literal>) -> Result<Literal, RunError> {
        let module = self.module;
        let computation = module.computation(id);
        let last_use = last_uses(computation);
        let mut values: Vec<Option<Literal>> = Vec::with_capacity(computation.instructions.len());
        let mut args = args.into_iter();
        for (i, instr) in computation.instructions.iter().enumerate() {
            self.env.check_deadline()?;
            let value = match &instr.op {
                Op::Parameter { .. } => args.next().ok_or_else(|| RunError::Argument("missing argument".into()))?,
                op => {
                    let operands: Vec<&Literal> = instr
                        .operands
                        .iter()
                        .map(|&o| values[o].as_ref().ok_or_else(|| internal("operand value was dropped")))
                        .collect::<Result<_, _>>()?;
                    let shape = module.shape(id, i);
                    // The result, and about as much again for the kernel's
                    // own buffers (wide sums, index tables).
                    crate::watch::reserve(shape.byte_size().saturating_mul(2), self.env.limits.max_bytes)?;
                    self.env.site = crate::replicas::Site { computation: id, instruction: i };
                    let value = self.eval_op(op, &operands, shape);
                    // A kernel that ran out of time stopped early: its value
                    // (or its error) is not the op's.
                    crate::watch::passed()?;
                    value?
                }
            };
            values.push(Some(value));
            for &o in &instr.operands {
                if last_use[o] == i && o != computation.root {
                    values[o] = None;
                }
            }
        }
        values[computation.root].take().ok_or_else(|| internal("root value missing"))
    }

    /// Evaluates one op on its operand values; `shape` is its verified result shape.
    /// Operands with bounded dynamic sizes go through the dynamic-size policy
    /// of `world.rs` first.
    pub fn eval_op(&mut self, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
        if world::has_dynamic_sizes(operands) {
            return world::eval_with_dynamic_sizes(self, op, operands, shape);
        }
        self.eval_static_op(op, operands, shape)
    }

    /// Evaluates one op, ignoring any dynamic sizes its operands carry.
    pub fn eval_static_op(&mut self, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
        let out = || shape.as_array().ok_or_else(|| internal("expected an array result"));
        Ok(match op {
            Op::Parameter { .. } => return Err(internal("parameters are bound by the call")),
            Op::Constant { literal } => literal.clone(),
            Op::Unary(u) => elementwise::unary(*u, array(operands[0])?, out()?)?.into(),
            Op::Binary { op, broadcast_dimensions } => {
                elementwise::binary(*op, array(operands[0])?, array(operands[1])?, broadcast_dimensions.as_deref(), out()?)?.into()
            }
            Op::Compare { direction, total_order, broadcast_dimensions } => elementwise::compare(
                *direction,
                *total_order,
                array(operands[0])?,
                array(operands[1])?,
                broadcast_dimensions.as_deref(),
                out()?,
            )?
            .into(),
            Op::Select => elementwise::select(array(operands[0])?, operands[1], operands[2])?,
            Op::Clamp => elementwise::clamp(array(operands[0])?, array(operands[1])?, array(operands[2])?)?.into(),
            Op::ConvertElementType { new_element_type } => elementwise::convert(array(operands[0])?, *new_element_type).into(),
            Op::BitcastConvertType { .. } => elementwise::bitcast_convert(array(operands[0])?, out()?)?.into(),
            Op::ReducePrecision { exponent_bits, mantissa_bits } => {
                elementwise::reduce_precision(array(operands[0])?, *exponent_bits, *mantissa_bits)?.into()
            }

            Op::Broadcast { .. } => broadcast::broadcast(array(operands[0])?, out()?).into(),
            Op::BroadcastInDim { broadcast_dimensions, .. } => {
                broadcast::broadcast_in_dim(array(operands[0])?, out()?, broadcast_dimensions).into()
            }
            Op::Reshape { dimensions, .. } => shape_ops::reshape(array(operands[0])?, dimensions.as_deref(), out()?).into(),
            Op::Collapse { .. } => shape_ops::collapse(array(operands[0])?, out()?).into(),
            Op::Transpose { permutation } => shape_ops::transpose(array(operands[0])?, permutation, out()?).into(),
            Op::Rev { dimensions } => shape_ops::rev(array(operands[0])?, dimensions).into(),
            Op::Slice { start_indices, strides, .. } => shape_ops::slice(array(operands[0])?, start_indices, strides, out()?).into(),
            Op::ConcatInDim { dimension } => shape_ops::concat_in_dim(&arrays(operands)?, *dimension, out()?).into(),
            Op::Pad { padding_config } => shape_ops::pad(array(operands[0])?, array(operands[1])?, padding_config, out()?).into(),
            Op::Iota { iota_dimension, .. } => shape_ops::iota(out()?, *iota_dimension).into(),
            Op::Tuple => Literal::Tuple(operands.iter().map(|&o| o.clone()).collect()),
            Op::GetTupleElement { index } => shape_ops::get_tuple_element(operands[0], *index)?,

            Op::DynamicSlice { .. } | Op::DynamicUpdateSlice | Op::Gather(_) | Op::Scatter { .. } => {
                indexing::eval(self, op, operands, shape)?
            }
            Op::Reduce { .. } | Op::ReduceWindow { .. } | Op::SelectAndScatter { .. } | Op::Map { .. } => {
                reduce::eval(self, op, operands, shape)?
            }
            Op::Sort { .. } | Op::TopK { .. } => sort::eval(self, op, operands, shape)?,
            Op::Dot { .. } | Op::DotGeneral { .. } => dot::eval(op, operands, shape)?,
            Op::Conv(attrs) => conv::eval(attrs, operands, shape)?,
            Op::Fft { .. } => fft::eval(op, operands, shape)?,
            Op::Cholesky { .. } | Op::TriangularSolve { .. } => linalg::eval(op, operands, shape)?,
            Op::BatchNormTraining { .. } | Op::BatchNormInference { .. } | Op::BatchNormGrad { .. } => {
                batch_norm::eval(op, operands, shape)?
            }

            Op::Call { computation } => self.call(*computation, operands.iter().map(|&o| o.clone()).collect())?,
            Op::Conditional(form) => control::conditional(self, form, operands)?,
            Op::While { condition, body } => control::while_loop(self, *condition, *body, operands[0])?,
            Op::OptimizationBarrier => operands[0].clone(),
            Op::AfterAll => Literal::Token,

            Op::ReplicaId
            | Op::AllGather { .. }
            | Op::AllReduce { .. }
            | Op::AllToAll { .. }
            | Op::CollectivePermute { .. }
            | Op::ReduceScatter { .. }
            | Op::CrossReplicaSum { .. }
            | Op::Send { .. }
            | Op::SendDone { .. }
            | Op::Recv { .. }
            | Op::RecvDone { .. } => collectives::eval(self, op, operands, shape)?,

            Op::RngUniform { .. } | Op::RngNormal { .. } | Op::RngBitGenerator { .. } => rng::eval(self, op, operands, shape)?,

            Op::Infeed { .. } | Op::Outfeed { .. } | Op::CustomCall { .. } | Op::GetDimensionSize { .. } | Op::SetDimensionSize { .. } => {
                world::eval(self, op, operands, shape)?
            }
        })
    }
}

/// For each value, the index of the last instruction that reads it.
fn last_uses(c: &crate::ir::Computation) -> Vec<usize> {
    let mut last = vec![0; c.instructions.len()];
    for (i, instr) in c.instructions.iter().enumerate() {
        for &o in &instr.operands {
            last[o] = i;
        }
    }
    last
}

/// An error that verification should have made impossible.
pub fn internal(what: &str) -> RunError {
    RunError::Internal(format!("{what} (a verified module should not reach this)"))
}

/// The operand as an array (verified modules guarantee it).
pub fn array(l: &Literal) -> Result<&ArrayLiteral, RunError> {
    l.as_array().ok_or_else(|| internal("expected an array operand"))
}

pub fn arrays<'a>(ls: &[&'a Literal]) -> Result<Vec<&'a ArrayLiteral>, RunError> {
    ls.iter().map(|l| array(l)).collect()
}

/// An operand's shape as an array shape.
pub fn array_shape(s: &Shape) -> Result<&ArrayShape, RunError> {
    s.as_array().ok_or_else(|| internal("expected an array shape"))
}
