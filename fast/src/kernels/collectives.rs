//! Fast kernels for ReplicaId, the collectives and Send/Recv.
//!
//! The exchange between replicas is the world's (`xlaref_reference::replicas`
//! — the shared hub); what each replica computes from the values it
//! receives is this engine's own: reductions through [`ScalarFn`] (or the
//! fast element-wise Add for CrossReplicaSum), blocks and concatenations
//! through the layout kernels. Reductions fold left in the group's listed
//! order, as the reference does (docs/semantics-decisions.md).

use std::sync::Arc;

use xlaref_reference::eval::Env;
use xlaref_reference::ir::{BinaryOp, ComputationId, Op, ReplicaGroups};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::replicas::{self, Hub};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::RunError;

use super::{elementwise as ew, shape_ops};
use crate::applied::ScalarFn;
use crate::exec::Executor;
use crate::internal;

type R<T> = Result<T, RunError>;

fn arr(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

fn out(shape: &Shape) -> R<&ArrayShape> {
    shape.as_array().ok_or_else(|| internal("expected an array result"))
}

pub fn eval(exec: &mut Executor, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
    match op {
        Op::ReplicaId => Ok(ArrayLiteral::scalar(exec.env.replica_id).into()),
        Op::AllGather { all_gather_dim, replica_groups, .. } => {
            let group = group(exec, op, replica_groups)?;
            let values = exchange(exec, op, &group, x[0])?;
            let parts = values.iter().map(arr).collect::<R<Vec<_>>>()?;
            let o = out(shape)?;
            let d = *all_gather_dim as usize;
            if parts.iter().map(|p| p.dims().get(d).copied().unwrap_or(0)).sum::<i64>() != o.dims.get(d).copied().unwrap_or(-1) {
                return Err(mismatch(exec, op, "shard_count does not match the replica group size"));
            }
            Ok(shape_ops::concat(&parts, d, o).into())
        }
        Op::AllReduce { computation, replica_groups, .. } => {
            let group = group(exec, op, replica_groups)?;
            let values = exchange(exec, op, &group, x[0])?;
            reduce(exec, Some(*computation), &values)
        }
        Op::CrossReplicaSum { replica_groups } => {
            let group = group(exec, op, replica_groups)?;
            let values = exchange(exec, op, &group, x[0])?;
            reduce(exec, None, &values)
        }
        Op::ReduceScatter { computation, scatter_dimension, replica_groups, .. } => {
            let group = group(exec, op, replica_groups)?;
            let d = *scatter_dimension as usize;
            let n = group.len();
            let first_in = match x[0] {
                Literal::Tuple(t) => t.first().ok_or_else(|| internal("empty tuple"))?,
                l => l,
            };
            let first_out = match shape {
                Shape::Tuple(t) => t.first().ok_or_else(|| internal("empty tuple"))?,
                s => s,
            };
            if arr(first_in)?.dims().get(d).copied() != out(first_out)?.dims.get(d).map(|s| s * n as i64) {
                return Err(mismatch(exec, op, "shard_count does not match the replica group size"));
            }
            let values = exchange(exec, op, &group, x[0])?;
            let me = position(exec, &group)?;
            match reduce(exec, Some(*computation), &values)? {
                Literal::Tuple(t) => Ok(Literal::Tuple(t.iter().map(|e| arr(e).map(|a| block(a, d, me, n).into())).collect::<R<_>>()?)),
                l => Ok(block(arr(&l)?, d, me, n).into()),
            }
        }
        Op::AllToAll { split_dimension, concat_dimension, split_count, replica_groups } => {
            let group = group(exec, op, replica_groups)?;
            if group.len() as i64 != *split_count {
                return Err(mismatch(exec, op, "split_count is not the replica group size"));
            }
            let values = exchange(exec, op, &group, x[0])?;
            let me = position(exec, &group)?;
            let blocks =
                values.iter().map(|v| arr(v).map(|a| block(a, *split_dimension as usize, me, group.len()))).collect::<R<Vec<_>>>()?;
            let parts: Vec<&ArrayLiteral> = blocks.iter().collect();
            Ok(shape_ops::concat(&parts, *concat_dimension as usize, out(shape)?).into())
        }
        Op::CollectivePermute { source_target_pairs, .. } => {
            replicas::check_pairs(source_target_pairs, exec.env.replica_count).map_err(|e| mismatch(exec, op, &e))?;
            let group: Vec<u32> = (0..exec.env.replica_count).collect();
            let values = exchange(exec, op, &group, x[0])?;
            let me = exec.env.replica_id as i64;
            match source_target_pairs.iter().find(|p| p.1 == me) {
                Some(&(s, _)) => values.into_iter().nth(s as usize).ok_or_else(|| internal("source replica")),
                None => Ok(ArrayLiteral::zeros(&arr(x[0])?.shape).into()),
            }
        }
        Op::Send { channel_id } => {
            let what = describe(exec, op);
            let data = x[0].clone();
            let id = hub(exec.env)?.send(exec.env.replica_id, *channel_id, &what, data.clone())?;
            Ok(context(data, id, x.len() == 2))
        }
        Op::SendDone { channel_id } => {
            let what = describe(exec, op);
            let (id, _) = request(x[0])?;
            hub(exec.env)?.send_done(exec.env.replica_id, *channel_id, &what, id)?;
            Ok(Literal::Token)
        }
        Op::Recv { shape: data, channel_id } => {
            let what = describe(exec, op);
            let id = hub(exec.env)?.recv(exec.env.replica_id, *channel_id, &what)?;
            Ok(context(ArrayLiteral::zeros(out(data)?).into(), id, !x.is_empty()))
        }
        Op::RecvDone { channel_id } => {
            let what = describe(exec, op);
            let (id, token) = request(x[0])?;
            let buffer_shape = x[0].as_tuple().and_then(|t| t.first()).ok_or_else(|| internal("context"))?.shape();
            let deadline = exec.env.limits.deadline;
            let data = hub(exec.env)?.recv_done(exec.env.replica_id, *channel_id, &what, id, deadline)?;
            if data.shape() != buffer_shape {
                return Err(RunError::Collective(format!(
                    "{what}: channel {channel_id} carried a value of shape {}, but the Recv expects {buffer_shape} (mismatched pair)",
                    data.shape()
                )));
            }
            Ok(if token { Literal::Tuple(vec![data, Literal::Token]) } else { data })
        }
        other => Err(internal(&format!("{} is not a collective", other.name()))),
    }
}

fn describe(exec: &Executor, op: &Op) -> String {
    let site = exec.env.site;
    let c = exec.module.module().computations.get(site.computation);
    let name = c.and_then(|c| c.instructions.get(site.instruction)).map_or("?", |i| i.name.as_str());
    format!("{} `{}` in computation `{}`", op.name(), name, c.map_or("?", |c| c.name.as_str()))
}

fn mismatch(exec: &Executor, op: &Op, e: &str) -> RunError {
    RunError::Collective(format!("{}: {e}", describe(exec, op)))
}

fn hub(env: &mut Env) -> R<Arc<Hub>> {
    if env.hub.is_none() {
        if env.replica_count > 1 {
            return Err(RunError::Collective(format!("a run of {} replicas needs a hub shared by its replicas", env.replica_count)));
        }
        env.hub = Some(Arc::new(Hub::new(1)));
    }
    env.hub.clone().ok_or_else(|| internal("hub"))
}

fn group(exec: &Executor, op: &Op, groups: &ReplicaGroups) -> R<Vec<u32>> {
    replicas::check_group_size(op, exec.env.replica_count)
        .and_then(|()| replicas::group_of(groups, exec.env.replica_id, exec.env.replica_count))
        .map_err(|e| mismatch(exec, op, &e))
}

fn position(exec: &Executor, group: &[u32]) -> R<usize> {
    group.iter().position(|&g| g == exec.env.replica_id).ok_or_else(|| internal("replica not in its group"))
}

fn exchange(exec: &mut Executor, op: &Op, group: &[u32], value: &Literal) -> R<Vec<Literal>> {
    let what = describe(exec, op);
    let h = hub(exec.env)?;
    let values = h.exchange(exec.env.replica_id, exec.env.site, &what, group, value.clone(), exec.env.limits.deadline)?;
    let shape = value.shape();
    if values.iter().any(|v| v.shape() != shape) {
        return Err(RunError::Collective(format!("{what}: the replicas of the group contributed values of different shapes")));
    }
    Ok(values)
}

/// Folds the group's values (in its listed order) with `f`, or sums them.
fn reduce(exec: &mut Executor, f: Option<ComputationId>, values: &[Literal]) -> R<Literal> {
    match values.first() {
        Some(Literal::Tuple(first)) => {
            let mut parts = Vec::with_capacity(first.len());
            for k in 0..first.len() {
                let column = values
                    .iter()
                    .map(|v| v.as_tuple().and_then(|t| t.get(k)).ok_or_else(|| internal("tuple")).and_then(arr))
                    .collect::<R<Vec<_>>>()?;
                parts.push(reduce_arrays(exec, f, &column)?.into());
            }
            Ok(Literal::Tuple(parts))
        }
        Some(_) => {
            let column = values.iter().map(|v| arr(v)).collect::<R<Vec<_>>>()?;
            Ok(reduce_arrays(exec, f, &column)?.into())
        }
        None => Err(internal("empty replica group")),
    }
}

fn reduce_arrays(exec: &mut Executor, f: Option<ComputationId>, xs: &[&ArrayLiteral]) -> R<ArrayLiteral> {
    let (first, rest) = xs.split_first().ok_or_else(|| internal("empty replica group"))?;
    let Some(id) = f else {
        let mut acc = (*first).clone();
        for x in rest {
            acc = ew::binary(BinaryOp::Add, &acc, x, None, &first.shape)?;
        }
        return Ok(acc);
    };
    if rest.is_empty() {
        return Ok((*first).clone());
    }
    let f = ScalarFn::new(id);
    let n = first.element_count();
    let mut acc: Vec<Scalar> = (0..n).map(|p| first.data.get(p)).collect();
    let mut args = [acc.first().copied().unwrap_or(Scalar::Pred(false)); 2];
    let mut result: Vec<Scalar> = Vec::with_capacity(1);
    for x in rest {
        exec.env.check_deadline()?;
        for (p, a) in acc.iter_mut().enumerate() {
            args[0] = *a;
            args[1] = x.data.get(p);
            f.call(exec, &args, &mut result)?;
            *a = result.first().copied().ok_or_else(|| internal("reduction result"))?;
        }
    }
    let data = Data::from_scalars(first.element_type(), &acc);
    if data.len() != n {
        return Err(internal("the reduction returned another type"));
    }
    Ok(ArrayLiteral::with_shape(first.shape.clone(), data))
}

/// Block `k` of `n` equal blocks along `dim`.
fn block(x: &ArrayLiteral, dim: usize, k: usize, n: usize) -> ArrayLiteral {
    let size = x.dims()[dim] / n as i64;
    let mut start = vec![0; x.rank()];
    start[dim] = k as i64 * size;
    let mut dims = x.dims().to_vec();
    dims[dim] = size;
    shape_ops::slice(x, &start, &vec![1; x.rank()], &ArrayShape::new(x.element_type(), dims))
}

fn request(context: &Literal) -> R<(u32, bool)> {
    let parts = context.as_tuple().ok_or_else(|| internal("context"))?;
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
