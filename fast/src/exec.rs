//! The fast engine's executor: runs a verified module instruction by
//! instruction, dispatching each op to its kernel. Values are dropped after
//! their last use.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use xlaref_reference::eval::Env;
use xlaref_reference::ir::{Computation, ComputationId, ConditionalForm, InstrId, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::verify::VerifiedModule;
use xlaref_reference::RunError;

use crate::fusion::{self, Plan, Role};
use crate::internal;
use crate::kernels::{self, elementwise as ew, shape_ops};
use crate::profile::Profile;

type R<T> = Result<T, RunError>;

fn arr(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

/// One run of a module.
pub struct Executor<'a> {
    pub module: &'a VerifiedModule,
    pub env: &'a mut Env,
    depth: usize,
    /// Whether element-wise chains run fused (`fusion.rs`).
    fuse: bool,
    /// Each computation's fusion plan, made on its first call: kept with
    /// the module (`crate::Prepared`) when a fused run has it, else here.
    shared_plans: Option<&'a [OnceLock<Arc<Plan>>]>,
    plans: HashMap<ComputationId, Arc<Plan>>,
    /// Time per instruction, when `XLAREF_FAST_PROFILE` asks (`profile.rs`).
    profile: Option<Profile>,
}

impl<'a> Executor<'a> {
    pub fn new(module: &'a VerifiedModule, env: &'a mut Env) -> Self {
        let profile = crate::profile::enabled().then(Profile::default);
        Executor { module, env, depth: 0, fuse: fusion::enabled_by_environment(), shared_plans: None, plans: HashMap::new(), profile }
    }

    /// An executor that takes its fusion plans from `plans` (one cell per
    /// computation of `module`), making each one there the first time.
    pub fn with_plans(module: &'a VerifiedModule, env: &'a mut Env, plans: &'a [OnceLock<Arc<Plan>>]) -> Self {
        Executor { shared_plans: Some(plans), ..Executor::new(module, env) }
    }

    /// Prints the profile, if one was asked for.
    pub fn report(&self) {
        if let Some(p) = &self.profile {
            p.print(self.module);
        }
    }

    /// An executor that runs every op on its own (the differential tests
    /// compare it with the fused run).
    pub fn unfused(module: &'a VerifiedModule, env: &'a mut Env) -> Self {
        Executor { fuse: false, ..Executor::new(module, env) }
    }

    fn plan(&mut self, id: ComputationId) -> Arc<Plan> {
        let module = self.module;
        let fuse = self.fuse;
        if let Some(cell) = self.shared_plans.filter(|_| fuse).and_then(|p| p.get(id)) {
            return cell.get_or_init(|| Arc::new(fusion::plan_computation(module, id))).clone();
        }
        self.plans
            .entry(id)
            .or_insert_with(|| {
                let c = module.computation(id);
                if fuse {
                    Arc::new(fusion::plan_computation(module, id))
                } else {
                    Arc::new(Plan::unfused(c))
                }
            })
            .clone()
    }

    /// Runs computation `id` on `args`.
    pub fn call(&mut self, id: ComputationId, args: Vec<Literal>) -> R<Literal> {
        self.call_with(id, args.into_iter().map(Cow::Owned))
    }

    /// Runs computation `id` on borrowed `args`: kernels only read their
    /// operands, so a parameter needs no copy unless it is the result.
    pub fn call_borrowed(&mut self, id: ComputationId, args: &[Literal]) -> R<Literal> {
        self.call_with(id, args.iter().map(Cow::Borrowed))
    }

    fn call_with<'v>(&mut self, id: ComputationId, args: impl Iterator<Item = Cow<'v, Literal>>) -> R<Literal> {
        if self.depth >= self.env.limits.max_call_depth {
            return Err(RunError::Limit(format!("computation calls nested deeper than {}", self.env.limits.max_call_depth)));
        }
        self.depth += 1;
        let result = self.call_inner(id, args);
        self.depth -= 1;
        result
    }

    fn call_inner<'v>(&mut self, id: ComputationId, mut args: impl Iterator<Item = Cow<'v, Literal>>) -> R<Literal> {
        let module = self.module;
        let c = module.computation(id);
        let n = c.instructions.len();
        // How many readers each value still has; at zero it is freed.
        let mut readers = vec![0usize; n];
        for instr in &c.instructions {
            for &o in &instr.operands {
                readers[o] += 1;
            }
        }
        readers[c.root] += 1;
        let mut values: Vec<Option<Cow<'v, Literal>>> = vec![None; n];
        let plan = self.plan(id);
        for (i, instr) in c.instructions.iter().enumerate() {
            self.env.check_deadline()?;
            let started = self.profile.is_some().then(std::time::Instant::now);
            let value = if let Op::Parameter { .. } = instr.op {
                args.next().ok_or_else(|| internal("missing argument"))?
            } else if plan.roles[i] == Role::Member {
                // Runs with its group's root; its operands stay live until then.
                continue;
            } else if let Role::Root(g) = plan.roles[i] {
                let members = &plan.groups[g];
                xlaref_reference::watch::reserve(module.shape(id, i).byte_size().saturating_mul(2), self.env.limits.max_bytes)?;
                self.env.site = xlaref_reference::replicas::Site { computation: id, instruction: i };
                let shapes: Vec<&Shape> = (0..n).map(|k| module.shape(id, k)).collect();
                let value = fusion::run(c, &shapes, members, plan.reducers[g], &plan.folds[g], self.escapes(c, i, &readers), |o| {
                    values[o].as_deref().ok_or_else(|| internal("value freed too early"))
                });
                xlaref_reference::watch::passed()?;
                let value = Cow::Owned(value?);
                for &m in &members[..members.len() - 1] {
                    for &o in &c.instructions[m].operands {
                        readers[o] -= 1;
                        if readers[o] == 0 {
                            values[o] = None;
                        }
                    }
                }
                value
            } else if let Some(moved) = self.pass_through(instr, &mut values, &readers, module.shape(id, i))? {
                Cow::Owned(moved)
            } else {
                let operands = instr
                    .operands
                    .iter()
                    .map(|&o| values[o].as_deref().ok_or_else(|| internal("value freed too early")))
                    .collect::<R<Vec<_>>>()?;
                // The result, and about as much again for the kernel's own
                // buffers (relaid operands, packed panels).
                xlaref_reference::watch::reserve(module.shape(id, i).byte_size().saturating_mul(2), self.env.limits.max_bytes)?;
                self.env.site = xlaref_reference::replicas::Site { computation: id, instruction: i };
                let value = self.op(&instr.op, &operands, module.shape(id, i));
                // A kernel that ran out of time stopped early: its value
                // (or its error) is not the op's.
                xlaref_reference::watch::passed()?;
                Cow::Owned(value?)
            };
            if let (Some(p), Some(t)) = (self.profile.as_mut(), started) {
                let members = match plan.roles[i] {
                    Role::Root(g) => plan.groups[g].len(),
                    _ => 1,
                };
                p.add(id, i, t, members);
            }
            values[i] = Some(value);
            for &o in &instr.operands {
                readers[o] -= 1;
                if readers[o] == 0 {
                    values[o] = None;
                }
            }
        }
        values[c.root].take().map(Cow::into_owned).ok_or_else(|| internal("root value missing"))
    }

    /// Whether instruction `i`'s value is the entry computation's result
    /// (or an element of its result tuple) and nothing else reads it
    /// (`readers`: its uses, the root counted once).
    fn escapes(&self, c: &Computation, i: InstrId, readers: &[usize]) -> bool {
        let root = &c.instructions[c.root];
        let in_result = i == c.root || (matches!(root.op, Op::Tuple) && root.operands.iter().filter(|&&o| o == i).count() == 1);
        self.depth == 1 && in_result && readers[i] == 1
    }

    /// Runs an op that only passes its operands' storage on (Reshape and
    /// Collapse in order, Tuple, GetTupleElement, OptimizationBarrier) on
    /// the operands themselves, when this instruction is their last reader
    /// and the executor owns them: no copy and no fresh pages. `None` when
    /// the op must copy (the value is read again later, or borrowed).
    fn pass_through<'v>(
        &self,
        instr: &xlaref_reference::ir::Instruction,
        values: &mut [Option<Cow<'v, Literal>>],
        readers: &[usize],
        shape: &Shape,
    ) -> R<Option<Literal>> {
        let in_order = |d: &Option<Vec<i64>>| d.as_ref().is_none_or(|d| d.iter().enumerate().all(|(k, &x)| x == k as i64));
        let passes = match &instr.op {
            Op::Reshape { dimensions, .. } => in_order(dimensions),
            Op::Collapse { .. } | Op::Tuple | Op::GetTupleElement { .. } | Op::OptimizationBarrier => true,
            _ => false,
        };
        let ops = &instr.operands;
        let last_reader = |k: usize, o: usize| {
            readers[o] == 1
                && !ops[..k].contains(&o)
                && matches!(&values[o], Some(Cow::Owned(l)) if l.as_array().is_none_or(|a| a.dynamic_sizes.is_none()))
        };
        if !passes || !ops.iter().enumerate().all(|(k, &o)| last_reader(k, o)) {
            return Ok(None);
        }
        let mut owned = Vec::with_capacity(ops.len());
        for &o in ops {
            owned.push(values[o].take().ok_or_else(|| internal("value freed too early"))?.into_owned());
        }
        let mut first = || owned.pop().ok_or_else(|| internal("missing operand"));
        Ok(Some(match &instr.op {
            Op::Reshape { .. } | Op::Collapse { .. } => {
                let out = shape.as_array().ok_or_else(|| internal("expected an array result"))?.clone();
                let a = first()?.into_array().ok_or_else(|| internal("expected an array"))?;
                ArrayLiteral::with_shape(out, a.data).into()
            }
            Op::Tuple => Literal::Tuple(owned),
            Op::GetTupleElement { index } => match first()? {
                Literal::Tuple(items) => items.into_iter().nth(*index as usize).ok_or_else(|| internal("tuple index"))?,
                _ => return Err(internal("expected a tuple")),
            },
            _ => first()?,
        }))
    }

    /// Runs one op; operands with bounded dynamic sizes go through the
    /// dynamic-size policy of `kernels/world.rs`.
    fn op(&mut self, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
        if kernels::world::has_dynamic_sizes(x) {
            return kernels::world::with_dynamic_sizes(self, op, x, shape);
        }
        self.static_op(op, x, shape)
    }

    /// Runs one op, ignoring any dynamic sizes its operands carry.
    pub(crate) fn static_op(&mut self, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
        let out = || -> R<&ArrayShape> { shape.as_array().ok_or_else(|| internal("expected an array result")) };
        Ok(match op {
            Op::Parameter { .. } => return Err(internal("parameter outside a call")),
            Op::Constant { literal } => literal.clone(),
            Op::Unary(u) => ew::unary(*u, arr(x[0])?, out()?)?.into(),
            Op::Binary { op, broadcast_dimensions } => {
                ew::binary(*op, arr(x[0])?, arr(x[1])?, broadcast_dimensions.as_deref(), out()?)?.into()
            }
            Op::Compare { direction, total_order, broadcast_dimensions } => {
                ew::compare(*direction, *total_order, arr(x[0])?, arr(x[1])?, broadcast_dimensions.as_deref(), out()?)?.into()
            }
            Op::Select => ew::select(arr(x[0])?, x[1], x[2])?,
            Op::Clamp => ew::clamp(arr(x[0])?, arr(x[1])?, arr(x[2])?)?.into(),
            Op::ConvertElementType { new_element_type } => ew::convert(arr(x[0])?, *new_element_type).into(),
            Op::Broadcast { broadcast_sizes } => {
                let a = arr(x[0])?;
                let mapping: Vec<i64> = (broadcast_sizes.len() as i64..(broadcast_sizes.len() + a.rank()) as i64).collect();
                shape_ops::broadcast(a, out()?, &mapping).into()
            }
            Op::BroadcastInDim { broadcast_dimensions, .. } => shape_ops::broadcast(arr(x[0])?, out()?, broadcast_dimensions).into(),
            Op::Reshape { dimensions, .. } => {
                let a = arr(x[0])?;
                let flat = match dimensions {
                    Some(order) if order.iter().enumerate().any(|(i, &d)| d != i as i64) => {
                        let permuted = ArrayShape::new(a.element_type(), order.iter().map(|&d| a.dims()[d as usize]).collect());
                        shape_ops::transpose(a, order, &permuted)
                    }
                    _ => a.clone(),
                };
                ArrayLiteral::with_shape(out()?.clone(), flat.data).into()
            }
            Op::Collapse { .. } => ArrayLiteral::with_shape(out()?.clone(), arr(x[0])?.data.clone()).into(),
            Op::Transpose { permutation } => shape_ops::transpose(arr(x[0])?, permutation, out()?).into(),
            Op::Rev { dimensions } => shape_ops::rev(arr(x[0])?, dimensions).into(),
            Op::Slice { start_indices, strides, .. } => shape_ops::slice(arr(x[0])?, start_indices, strides, out()?).into(),
            Op::ConcatInDim { dimension } => {
                let parts = x.iter().map(|l| arr(l)).collect::<R<Vec<_>>>()?;
                shape_ops::concat(&parts, *dimension as usize, out()?).into()
            }
            Op::Pad { padding_config } => shape_ops::pad(arr(x[0])?, arr(x[1])?, padding_config, out()?).into(),
            Op::Iota { iota_dimension, .. } => shape_ops::iota(out()?, *iota_dimension as usize).into(),
            Op::Tuple => Literal::Tuple(x.iter().map(|&l| l.clone()).collect()),
            Op::GetTupleElement { index } => {
                x[0].as_tuple().and_then(|t| t.get(*index as usize)).cloned().ok_or_else(|| internal("tuple index"))?
            }
            Op::Call { computation } => self.call_with(*computation, x.iter().map(|&l| Cow::Borrowed(l)))?,
            Op::Conditional(form) => self.conditional(form, x)?,
            Op::While { condition, body } => self.while_loop(*condition, *body, x[0])?,
            Op::OptimizationBarrier => x[0].clone(),
            Op::AfterAll => Literal::Token,
            Op::BitcastConvertType { .. } | Op::ReducePrecision { .. } => kernels::precision::eval(self, op, x, shape)?,
            Op::DynamicSlice { .. } | Op::DynamicUpdateSlice | Op::Gather(_) | Op::Scatter { .. } => {
                kernels::indexing::eval(self, op, x, shape)?
            }
            Op::Reduce { .. } | Op::ReduceWindow { .. } | Op::SelectAndScatter { .. } | Op::Map { .. } => {
                kernels::reduce::eval(self, op, x, shape)?
            }
            Op::Sort { .. } | Op::TopK { .. } => kernels::sort::eval(self, op, x, shape)?,
            Op::Dot { .. } | Op::DotGeneral { .. } => kernels::dot::eval(self, op, x, shape)?,
            Op::Conv(_) => kernels::conv::eval(self, op, x, shape)?,
            Op::Fft { .. } => kernels::fft::eval(self, op, x, shape)?,
            Op::Cholesky { .. } | Op::TriangularSolve { .. } => kernels::linalg::eval(self, op, x, shape)?,
            Op::BatchNormTraining { .. } | Op::BatchNormInference { .. } | Op::BatchNormGrad { .. } => {
                kernels::batch_norm::eval(self, op, x, shape)?
            }
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
            | Op::RecvDone { .. } => kernels::collectives::eval(self, op, x, shape)?,
            Op::RngUniform { .. } | Op::RngNormal { .. } | Op::RngBitGenerator { .. } => kernels::rng::eval(self, op, x, shape)?,
            Op::Infeed { .. } | Op::Outfeed { .. } | Op::CustomCall { .. } | Op::GetDimensionSize { .. } | Op::SetDimensionSize { .. } => {
                kernels::world::eval(self, op, x, shape)?
            }
        })
    }

    fn conditional(&mut self, form: &ConditionalForm, x: &[&Literal]) -> R<Literal> {
        let selector = arr(x[0])?;
        let (branch, k) = match form {
            ConditionalForm::Predicate { true_computation, false_computation } => match selector.scalar_pred() {
                Some(true) => (*true_computation, 1),
                Some(false) => (*false_computation, 2),
                None => return Err(internal("predicate")),
            },
            ConditionalForm::Indexed { branch_computations } => {
                let last = branch_computations.len() - 1;
                let i = selector.scalar_i64().ok_or_else(|| internal("branch index"))?;
                let b = usize::try_from(i).ok().filter(|&b| b < last).unwrap_or(last);
                (branch_computations[b], b + 1)
            }
        };
        self.call(branch, vec![x[k].clone()])
    }

    fn while_loop(&mut self, condition: ComputationId, body: ComputationId, init: &Literal) -> R<Literal> {
        let mut state = init.clone();
        for trip in 0.. {
            let keep_going = self.call(condition, vec![state.clone()])?;
            if !arr(&keep_going)?.scalar_pred().ok_or_else(|| internal("condition"))? {
                break;
            }
            if trip >= self.env.limits.max_while_trips {
                return Err(RunError::Limit(format!("a While loop ran more than {} iterations", self.env.limits.max_while_trips)));
            }
            state = self.call(body, vec![state])?;
        }
        Ok(state)
    }
}
