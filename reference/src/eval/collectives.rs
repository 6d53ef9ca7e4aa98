//! Reference evaluation of ReplicaId, the collectives and Send/Recv.
//!
//! The replicas meet through the run's [`Hub`] (`replicas.rs`): each
//! collective hands its operand to the hub and gets back the operands of
//! every member of its replica group, in the group's order; the functions
//! below then compute this replica's result from them, as the document
//! defines it. The rules they rely on are checked in `verify/collectives.rs`
//! and, for what needs the replica count, by [`replicas::check_module`].
//!
//! [`replicas::check_module`]: crate::replicas::check_module

use std::sync::Arc;

use super::applied::ScalarComputation;
use super::shape_ops::{concat_in_dim, slice};
use super::{array, array_shape, internal, Interpreter};
use crate::error::RunError;
use crate::ir::{BinaryOp, ComputationId, Op, ReplicaGroups};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::replicas::{self, Hub};
use crate::scalar::Scalar;
use crate::types::{ArrayShape, Shape};

pub fn eval(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    match op {
        Op::ReplicaId => Ok(ArrayLiteral::scalar(it.env.replica_id).into()),
        Op::AllGather { all_gather_dim, replica_groups, .. } => all_gather(it, op, *all_gather_dim, replica_groups, operands[0], shape),
        Op::AllReduce { computation, replica_groups, .. } => {
            all_reduce(it, op, Reduction::Computation(*computation), replica_groups, operands[0])
        }
        Op::CrossReplicaSum { replica_groups } => all_reduce(it, op, Reduction::Sum, replica_groups, operands[0]),
        Op::ReduceScatter { computation, scatter_dimension, replica_groups, .. } => {
            reduce_scatter(it, op, *computation, *scatter_dimension, replica_groups, operands[0], shape)
        }
        Op::AllToAll { split_dimension, concat_dimension, split_count, replica_groups } => {
            all_to_all(it, op, *split_dimension, *concat_dimension, *split_count, replica_groups, operands[0], shape)
        }
        Op::CollectivePermute { source_target_pairs, .. } => collective_permute(it, op, source_target_pairs, operands[0]),
        Op::Send { channel_id } => send(it, op, *channel_id, operands),
        Op::SendDone { channel_id } => send_done(it, op, *channel_id, operands[0]),
        Op::Recv { shape: data, channel_id } => recv(it, op, *channel_id, data, operands),
        Op::RecvDone { channel_id } => recv_done(it, op, *channel_id, operands[0]),
        other => Err(internal(&format!("{} is not a collective", other.name()))),
    }
}

/// The instruction being evaluated, for messages: "AllReduce `sum` in computation `main`".
pub fn describe(it: &Interpreter, op: &Op) -> String {
    let site = it.env.site;
    let c = it.module.module().computations.get(site.computation);
    let name = c.and_then(|c| c.instructions.get(site.instruction)).map_or("?", |i| i.name.as_str());
    format!("{} `{}` in computation `{}`", op.name(), name, c.map_or("?", |c| c.name.as_str()))
}

/// The run's hub; a single replica without one gets its own.
pub fn hub(env: &mut super::Env) -> Result<Arc<Hub>, RunError> {
    if env.hub.is_none() {
        if env.replica_count > 1 {
            return Err(RunError::Collective(format!("a run of {} replicas needs a hub shared by its replicas", env.replica_count)));
        }
        env.hub = Some(Arc::new(Hub::new(1)));
    }
    env.hub.clone().ok_or_else(|| internal("hub"))
}

/// This replica's group: the one of `replica_groups` holding its id, in the
/// listed order; all replicas in id order when `replica_groups` is empty.
fn group(it: &Interpreter, op: &Op, groups: &ReplicaGroups) -> Result<Vec<u32>, RunError> {
    replicas::check_group_size(op, it.env.replica_count)
        .and_then(|()| replicas::group_of(groups, it.env.replica_id, it.env.replica_count))
        .map_err(|e| RunError::Collective(format!("{}: {e}", describe(it, op))))
}

/// Hands `value` to the hub and returns the group members' values in group order.
fn exchange(it: &mut Interpreter, op: &Op, group: &[u32], value: &Literal) -> Result<Vec<Literal>, RunError> {
    let what = describe(it, op);
    let hub = hub(it.env)?;
    let values = hub.exchange(it.env.replica_id, it.env.site, &what, group, value.clone(), it.env.limits.deadline)?;
    if values.iter().any(|v| v.shape() != value.shape()) {
        return Err(RunError::Collective(format!("{what}: the replicas of the group contributed values of different shapes")));
    }
    Ok(values)
}

/// This replica's position in its group.
fn position(it: &Interpreter, group: &[u32]) -> Result<usize, RunError> {
    group.iter().position(|&g| g == it.env.replica_id).ok_or_else(|| internal("replica not in its group"))
}

/// AllGather — document §AllGather: the group's operands concatenated along
/// `all_gather_dim` in the group's order ("The order of replicas in each
/// group determines the order in which their inputs are located in the
/// result").
fn all_gather(it: &mut Interpreter, op: &Op, dim: i64, groups: &ReplicaGroups, x: &Literal, shape: &Shape) -> Result<Literal, RunError> {
    let group = group(it, op, groups)?;
    check_shard_count(it, op, shape, x, dim, group.len())?;
    let values = exchange(it, op, &group, x)?;
    let parts: Vec<&ArrayLiteral> = values.iter().map(array).collect::<Result<_, _>>()?;
    Ok(concat_in_dim(&parts, dim, array_shape(shape)?).into())
}

/// The result's size along `dim` is the operand's times the group size
/// (`shard_count` equals the group size).
fn check_shard_count(it: &Interpreter, op: &Op, shape: &Shape, x: &Literal, dim: i64, n: usize) -> Result<(), RunError> {
    let (out, a) = (array_shape(shape)?, array(x)?);
    let d = dim as usize;
    if out.dims.get(d) != a.dims().get(d).map(|s| s * n as i64).as_ref() {
        return Err(RunError::Collective(format!("{}: shard_count does not match the replica group size {n}", describe(it, op))));
    }
    Ok(())
}

/// The reduction of AllReduce and ReduceScatter.
#[derive(Clone, Copy)]
enum Reduction {
    Computation(ComputationId),
    /// CrossReplicaSum: "AllReduce with a summation computation".
    Sum,
}

/// AllReduce — document §AllReduce (and §CrossReplicaSum): every element of
/// the result is the reduction of the group's elements at that position;
/// a tuple is reduced element by element. The document leaves the order
/// open; the reference folds left in the group's listed order, as XLA CPU
/// does: `f(..f(f(x_a, x_b), x_c).., x_z)` for the group `{a, b, c, .., z}`
/// (`{}` lists every replica in increasing id), so every member computes
/// the same value (docs/semantics-decisions.md).
fn all_reduce(it: &mut Interpreter, op: &Op, reduction: Reduction, groups: &ReplicaGroups, x: &Literal) -> Result<Literal, RunError> {
    let group = group(it, op, groups)?;
    let values = exchange(it, op, &group, x)?;
    reduce_values(it, reduction, &values)
}

/// Reduces the group's values, which come in the group's listed order.
fn reduce_values(it: &mut Interpreter, reduction: Reduction, values: &[Literal]) -> Result<Literal, RunError> {
    match values.first() {
        Some(Literal::Tuple(first)) => {
            let mut out = Vec::with_capacity(first.len());
            for k in 0..first.len() {
                let parts: Vec<&ArrayLiteral> = values
                    .iter()
                    .map(|v| v.as_tuple().and_then(|t| t.get(k)).and_then(Literal::as_array).ok_or_else(|| internal("tuple operand")))
                    .collect::<Result<_, _>>()?;
                out.push(reduce_arrays(it, reduction, &parts)?.into());
            }
            Ok(Literal::Tuple(out))
        }
        Some(_) => {
            let parts: Vec<&ArrayLiteral> = values.iter().map(|v| array(v)).collect::<Result<_, _>>()?;
            Ok(reduce_arrays(it, reduction, &parts)?.into())
        }
        None => Err(internal("an empty replica group")),
    }
}

/// Element by element: `acc = x_0[i]`, then `acc = f(acc, x_j[i])` for j = 1..
fn reduce_arrays(it: &mut Interpreter, reduction: Reduction, parts: &[&ArrayLiteral]) -> Result<ArrayLiteral, RunError> {
    let first = *parts.first().ok_or_else(|| internal("an empty replica group"))?;
    match reduction {
        Reduction::Sum => {
            let mut acc = first.clone();
            for x in &parts[1..] {
                acc = super::elementwise::binary(BinaryOp::Add, &acc, x, None, &first.shape)?;
            }
            Ok(acc)
        }
        Reduction::Computation(id) => {
            let f = ScalarComputation::new(id);
            let count = first.element_count();
            let mut data = Data::zeros(first.element_type(), count);
            let mut acc: Vec<Scalar> = Vec::with_capacity(1);
            let mut args: Vec<Scalar> = Vec::with_capacity(2);
            for pos in 0..count {
                it.env.check_deadline()?;
                acc.clear();
                acc.push(first.data.get(pos));
                for x in &parts[1..] {
                    args.clear();
                    args.push(acc[0]);
                    args.push(x.data.get(pos));
                    f.call(it, &args, &mut acc)?;
                }
                let value = acc.first().copied().ok_or_else(|| internal("the reduction returned nothing"))?;
                if !data.set(pos, value) {
                    return Err(internal("the reduction returned another type"));
                }
            }
            Ok(ArrayLiteral::with_shape(first.shape.clone(), data))
        }
    }
}

/// Block `k` of `n` equal blocks of `x` along `dim`.
fn block(x: &ArrayLiteral, dim: usize, k: usize, n: usize) -> ArrayLiteral {
    let size = x.dims()[dim] / n as i64;
    let mut start = vec![0; x.rank()];
    start[dim] = k as i64 * size;
    let mut dims = x.dims().to_vec();
    dims[dim] = size;
    let strides = vec![1; x.rank()];
    slice(x, &start, &strides, &ArrayShape::new(x.element_type(), dims))
}

/// ReduceScatter — document §ReduceScatter: an AllReduce, whose result is
/// split into `shard_count` blocks along `scatter_dimension`; "replica `i`
/// in the replica group receives the `ith` shard" (`i` its position in the
/// group's order). A tuple is reduce-scattered element by element.
fn reduce_scatter(
    it: &mut Interpreter,
    op: &Op,
    computation: ComputationId,
    dim: i64,
    groups: &ReplicaGroups,
    x: &Literal,
    shape: &Shape,
) -> Result<Literal, RunError> {
    let group = group(it, op, groups)?;
    let out_first = match shape {
        Shape::Tuple(t) => t.first().ok_or_else(|| internal("empty tuple"))?,
        other => other,
    };
    let scattered = array_shape(out_first)?.dims.get(dim as usize).copied();
    let x_first = match x {
        Literal::Tuple(t) => t.first().ok_or_else(|| internal("empty tuple"))?,
        other => other,
    };
    if array(x_first)?.dims().get(dim as usize).copied() != scattered.map(|s| s * group.len() as i64) {
        return Err(RunError::Collective(format!(
            "{}: shard_count does not match the replica group size {}",
            describe(it, op),
            group.len()
        )));
    }
    let values = exchange(it, op, &group, x)?;
    let reduced = reduce_values(it, Reduction::Computation(computation), &values)?;
    let me = position(it, &group)?;
    let d = dim as usize;
    Ok(match reduced {
        Literal::Tuple(t) => {
            Literal::Tuple(t.iter().map(|e| array(e).map(|a| block(a, d, me, group.len()).into())).collect::<Result<_, _>>()?)
        }
        other => block(array(&other)?, d, me, group.len()).into(),
    })
}

/// AllToAll — document §AllToAll: each member splits its operand into
/// `split_count` blocks along `split_dimension` and sends block `i` to the
/// `i`-th member of the group; each member concatenates the blocks it
/// receives along `concat_dimension`, in the group's order.
#[allow(clippy::too_many_arguments)]
fn all_to_all(
    it: &mut Interpreter,
    op: &Op,
    split: i64,
    concat: i64,
    count: i64,
    groups: &ReplicaGroups,
    x: &Literal,
    shape: &Shape,
) -> Result<Literal, RunError> {
    let group = group(it, op, groups)?;
    if group.len() as i64 != count {
        return Err(RunError::Collective(format!("{}: split_count {count} is not the group size {}", describe(it, op), group.len())));
    }
    let values = exchange(it, op, &group, x)?;
    let me = position(it, &group)?;
    let blocks: Vec<ArrayLiteral> =
        values.iter().map(|v| array(v).map(|a| block(a, split as usize, me, group.len()))).collect::<Result<_, _>>()?;
    let parts: Vec<&ArrayLiteral> = blocks.iter().collect();
    Ok(concat_in_dim(&parts, concat, array_shape(shape)?).into())
}

/// CollectivePermute — document §CollectivePermute: for each pair the
/// operand of `source` becomes the result of `target`; "If a replica id is
/// not a target in any pair, then the output on that replica is a tensor
/// consisting of 0(s)". Every replica takes part.
fn collective_permute(it: &mut Interpreter, op: &Op, pairs: &[(i64, i64)], x: &Literal) -> Result<Literal, RunError> {
    replicas::check_pairs(pairs, it.env.replica_count).map_err(|e| RunError::Collective(format!("{}: {e}", describe(it, op))))?;
    let group: Vec<u32> = (0..it.env.replica_count).collect();
    let values = exchange(it, op, &group, x)?;
    let me = it.env.replica_id as i64;
    match pairs.iter().find(|p| p.1 == me) {
        Some(&(source, _)) => values.get(source as usize).cloned().ok_or_else(|| internal("source replica")),
        None => Ok(ArrayLiteral::zeros(&array(x)?.shape).into()),
    }
}

/// The request identifier of a Send/Recv context `(data, u32[] id[, token])`.
fn request_id(context: &Literal) -> Result<(u32, bool), RunError> {
    let parts = context.as_tuple().ok_or_else(|| internal("context tuple"))?;
    let id = parts.get(1).and_then(Literal::as_array).and_then(|a| a.typed::<u32>()).and_then(|v| v.first().copied());
    Ok((id.ok_or_else(|| internal("context request id"))?, parts.len() == 3))
}

fn context(data: Literal, id: u32, token: bool) -> Literal {
    let mut parts = vec![data, ArrayLiteral::scalar(id).into()];
    if token {
        parts.push(Literal::Token);
    }
    Literal::Tuple(parts)
}

/// Send — document §Send: starts the transfer of the operand to the Recv
/// with the same channel id; returns the context {operand, request id}.
fn send(it: &mut Interpreter, op: &Op, channel: i64, operands: &[&Literal]) -> Result<Literal, RunError> {
    let what = describe(it, op);
    let hub = hub(it.env)?;
    let data = operands[0].clone();
    let id = hub.send(it.env.replica_id, channel, &what, data.clone())?;
    Ok(context(data, id, operands.len() == 2))
}

/// SendDone — document §SendDone: completes the Send of its context. The
/// data was buffered by Send, so this never waits. Returns a token.
fn send_done(it: &mut Interpreter, op: &Op, channel: i64, context: &Literal) -> Result<Literal, RunError> {
    let what = describe(it, op);
    let (id, _) = request_id(context)?;
    hub(it.env)?.send_done(it.env.replica_id, channel, &what, id)?;
    Ok(Literal::Token)
}

/// Recv — document §Recv: allocates the receive buffer for the transfer of
/// the same channel id; returns the context {buffer, request id} (the
/// buffer holds zeros until RecvDone).
fn recv(it: &mut Interpreter, op: &Op, channel: i64, data: &Shape, operands: &[&Literal]) -> Result<Literal, RunError> {
    let what = describe(it, op);
    let id = hub(it.env)?.recv(it.env.replica_id, channel, &what)?;
    Ok(context(ArrayLiteral::zeros(array_shape(data)?).into(), id, !operands.is_empty()))
}

/// RecvDone — document §RecvDone: waits for the transfer of its context and
/// returns the received data (and a token when the context has one).
fn recv_done(it: &mut Interpreter, op: &Op, channel: i64, context: &Literal) -> Result<Literal, RunError> {
    let what = describe(it, op);
    let (id, token) = request_id(context)?;
    let buffer = context.as_tuple().and_then(|t| t.first()).ok_or_else(|| internal("context buffer"))?;
    let data = hub(it.env)?.recv_done(it.env.replica_id, channel, &what, id, it.env.limits.deadline)?;
    if data.shape() != buffer.shape() {
        return Err(RunError::Collective(format!(
            "{what}: channel {channel} carried a value of shape {}, but the Recv expects {} (mismatched pair)",
            data.shape(),
            buffer.shape()
        )));
    }
    Ok(if token { Literal::Tuple(vec![data, Literal::Token]) } else { data })
}
