//! Fast kernels for Infeed, Outfeed, CustomCall and dynamic dimension
//! sizes, and the fast engine's own implementation of the dynamic-size
//! policy (docs/semantics-decisions.md). The custom-call registry and the feed
//! queues are the world's (`Env`), shared with every engine.

use xlaref_reference::ir::Op;
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::RunError;

use crate::exec::Executor;
use crate::internal;

type R<T> = Result<T, RunError>;

fn arr(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

pub fn eval(exec: &mut Executor, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
    match op {
        Op::Infeed { .. } => {
            let token = x.len() == 1;
            let data_shape = if token { shape.as_tuple().and_then(|t| t.first()).ok_or_else(|| internal("infeed shape"))? } else { shape };
            let data = if matches!(data_shape, Shape::Tuple(t) if t.is_empty()) {
                Literal::Tuple(Vec::new())
            } else {
                let v = exec
                    .env
                    .infeed
                    .pop_front()
                    .ok_or_else(|| RunError::InfeedExhausted(format!("Infeed of {data_shape} found the infeed queue empty")))?;
                if !v.shape().compatible(data_shape) {
                    return Err(RunError::Other(format!(
                        "infeed: the next queued value has shape {}, the Infeed reads {data_shape}",
                        v.shape()
                    )));
                }
                v
            };
            Ok(if token { Literal::Tuple(vec![data, Literal::Token]) } else { data })
        }
        Op::Outfeed { .. } => {
            match x[0] {
                Literal::Tuple(t) if t.is_empty() => {}
                v => exec.env.outfeed.push(v.clone()),
            }
            Ok(Literal::Token)
        }
        Op::CustomCall { target_name, opaque, .. } => {
            // xlaref's own LAPACK kernels, unless a user re-registered the name.
            if exec.env.custom_calls.is_builtin(target_name) {
                if let Some(value) = super::lapack::eval(target_name, x, opaque) {
                    let value = value?;
                    if !value.shape().compatible(shape) {
                        return Err(RunError::CustomCall(format!(
                            "target `{target_name}` returned a value of shape {}, the CustomCall declares {shape}",
                            value.shape()
                        )));
                    }
                    return Ok(value);
                }
            }
            let args: Vec<Literal> = x.iter().map(|&l| l.clone()).collect();
            exec.env.custom_calls.call(target_name, &args, shape, opaque)
        }
        Op::GetDimensionSize { dimension } => {
            let a = arr(x[0])?;
            let d = *dimension as usize;
            let size = a.dynamic_sizes.as_ref().map_or(a.dims().get(d), |s| s.get(d)).copied().ok_or_else(|| internal("dimension"))?;
            let size = i32::try_from(size).map_err(|_| RunError::Other(format!("GetDimensionSize: size {size} does not fit in s32")))?;
            Ok(ArrayLiteral::scalar(size).into())
        }
        Op::SetDimensionSize { dimension } => {
            let a = arr(x[0])?;
            let d = *dimension as usize;
            let size = arr(x[1])?.scalar_i64().ok_or_else(|| internal("size"))?;
            let bound = *a.dims().get(d).ok_or_else(|| internal("dimension"))?;
            let size = size.clamp(0, bound);
            let mut out = a.clone();
            out.shape = shape.as_array().ok_or_else(|| internal("result shape"))?.clone();
            let mut sizes = a.dynamic_sizes.clone().unwrap_or_else(|| a.dims().to_vec());
            sizes[d] = size;
            out.dynamic_sizes = Some(sizes);
            Ok(out.into())
        }
        _ => Err(internal("not a world op")),
    }
}

/// Whether any array operand carries runtime dynamic sizes.
pub fn has_dynamic_sizes(x: &[&Literal]) -> bool {
    x.iter().any(|l| l.as_array().is_some_and(|a| a.dynamic_sizes.is_some()))
}

/// For each dimension of `a`: its runtime size if it is dynamic.
fn runtime_sizes(a: &ArrayLiteral) -> Vec<Option<i64>> {
    match &a.dynamic_sizes {
        None => vec![None; a.rank()],
        Some(s) => a
            .dims()
            .iter()
            .enumerate()
            .map(|(d, &bound)| {
                let size = s.get(d).copied().unwrap_or(bound);
                (size != bound || a.shape.dynamic.get(d) == Some(&true)).then_some(size)
            })
            .collect(),
    }
}

/// Collects result sizes: `targets[j]` is the result dimension operand
/// dimension `j` lands on.
fn collect(out: &mut [Option<i64>], a: &ArrayLiteral, targets: &[Option<usize>]) {
    for (j, size) in runtime_sizes(a).into_iter().enumerate() {
        let (Some(size), Some(Some(i))) = (size, targets.get(j)) else { continue };
        // The first operand with a size for this dimension decides.
        if let Some(slot @ None) = out.get_mut(*i) {
            *slot = Some(size);
        }
    }
}

/// Marks the collected sizes on an array result, or on each array of a tuple.
fn mark(value: Literal, sizes: &[Option<i64>]) -> Literal {
    if sizes.iter().all(Option::is_none) {
        return value;
    }
    match value {
        Literal::Array(mut a) if a.rank() == sizes.len() => {
            let mut full = a.dims().to_vec();
            a.shape.dynamic.resize(full.len(), false);
            for (d, s) in sizes.iter().enumerate() {
                if let Some(s) = s {
                    full[d] = *s;
                    a.shape.dynamic[d] = true;
                }
            }
            a.dynamic_sizes = Some(full);
            a.into()
        }
        Literal::Tuple(t) => Literal::Tuple(t.into_iter().map(|e| mark(e, sizes)).collect()),
        v => v,
    }
}

/// Runs `op` under the dynamic-size policy.
pub fn with_dynamic_sizes(exec: &mut Executor, op: &Op, x: &[&Literal], shape: &Shape) -> R<Literal> {
    let rank = shape.as_array().map_or(0, |a| a.rank());
    let mut sizes = vec![None; rank];
    match op {
        Op::Tuple
        | Op::GetTupleElement { .. }
        | Op::Call { .. }
        | Op::Conditional(_)
        | Op::While { .. }
        | Op::OptimizationBarrier
        | Op::AfterAll
        | Op::Outfeed { .. }
        | Op::CustomCall { .. }
        | Op::GetDimensionSize { .. }
        | Op::SetDimensionSize { .. } => exec.static_op(op, x, shape),
        Op::Unary(_)
        | Op::Binary { .. }
        | Op::Compare { .. }
        | Op::Select
        | Op::Clamp
        | Op::ConvertElementType { .. }
        | Op::BitcastConvertType { .. }
        | Op::ReducePrecision { .. }
        | Op::Map { .. } => {
            let bd = match op {
                Op::Binary { broadcast_dimensions: Some(bd), .. } | Op::Compare { broadcast_dimensions: Some(bd), .. } => Some(bd),
                _ => None,
            };
            for a in x.iter().filter_map(|l| l.as_array()) {
                let targets: Vec<Option<usize>> = if a.rank() == rank {
                    (0..rank).map(Some).collect()
                } else if let Some(bd) = bd {
                    bd.iter().map(|&i| usize::try_from(i).ok()).collect()
                } else {
                    continue;
                };
                collect(&mut sizes, a, &targets);
            }
            Ok(mark(exec.static_op(op, x, shape)?, &sizes))
        }
        Op::Reduce { dimensions, .. } => {
            let n = x.len() / 2;
            let mut masked: Vec<Literal> = Vec::with_capacity(x.len());
            let mut kept_sizes: Option<Vec<Option<i64>>> = None;
            for k in 0..n {
                let a = arr(x[k])?;
                let init = arr(x[k + n])?;
                let dyn_sizes = runtime_sizes(a);
                // Targets of the kept dimensions, in order.
                let mut next = 0usize;
                let targets: Vec<Option<usize>> = (0..a.rank())
                    .map(|d| {
                        if dimensions.contains(&(d as i64)) {
                            None
                        } else {
                            next += 1;
                            Some(next - 1)
                        }
                    })
                    .collect();
                let kept = kept_sizes.get_or_insert_with(|| vec![None; next]);
                collect(kept, a, &targets);
                // Elements beyond the size in a reduced dimension become the init value.
                let limits: Vec<i64> = (0..a.rank())
                    .map(|d| match dyn_sizes[d] {
                        Some(s) if dimensions.contains(&(d as i64)) => s,
                        _ => a.dims()[d],
                    })
                    .collect();
                let mut m = a.remap(&a.shape, Some(init), |o, i| {
                    i.copy_from_slice(o);
                    o.iter().zip(&limits).all(|(&p, &l)| p < l)
                });
                m.dynamic_sizes = None;
                masked.push(m.into());
            }
            for &init in &x[n..] {
                let mut i = arr(init)?.clone();
                i.dynamic_sizes = None;
                masked.push(i.into());
            }
            let refs: Vec<&Literal> = masked.iter().collect();
            let value = exec.static_op(op, &refs, shape)?;
            Ok(mark(value, &kept_sizes.unwrap_or_default()))
        }
        Op::Transpose { permutation } => {
            let a = arr(x[0])?;
            let targets: Vec<Option<usize>> = (0..a.rank()).map(|j| permutation.iter().position(|&p| p == j as i64)).collect();
            collect(&mut sizes, a, &targets);
            Ok(mark(exec.static_op(op, x, shape)?, &sizes))
        }
        Op::Broadcast { broadcast_sizes } => {
            let a = arr(x[0])?;
            let targets: Vec<Option<usize>> = (0..a.rank()).map(|j| Some(j + broadcast_sizes.len())).collect();
            collect(&mut sizes, a, &targets);
            Ok(mark(exec.static_op(op, x, shape)?, &sizes))
        }
        Op::BroadcastInDim { broadcast_dimensions, .. } => {
            let a = arr(x[0])?;
            let out_dims = shape.as_array().map(|s| s.dims.clone()).unwrap_or_default();
            let targets: Vec<Option<usize>> = (0..a.rank())
                .map(|j| {
                    let i = usize::try_from(*broadcast_dimensions.get(j)?).ok()?;
                    (out_dims.get(i) == a.dims().get(j)).then_some(i)
                })
                .collect();
            collect(&mut sizes, a, &targets);
            Ok(mark(exec.static_op(op, x, shape)?, &sizes))
        }
        Op::Slice { start_indices, strides, .. } => {
            let a = arr(x[0])?;
            let out_dims = shape.as_array().map(|s| s.dims.clone()).unwrap_or_default();
            let ident: Vec<Option<usize>> = (0..a.rank()).map(Some).collect();
            collect(&mut sizes, a, &ident);
            for (j, slot) in sizes.iter_mut().enumerate() {
                let Some(n) = *slot else { continue };
                let start = start_indices.get(j).copied().unwrap_or(0);
                let stride = strides.get(j).copied().unwrap_or(1).max(1);
                let rest = n - start.clamp(0, n);
                let covered = rest / stride + i64::from(rest % stride != 0);
                *slot = Some(covered.min(out_dims.get(j).copied().unwrap_or(0)));
            }
            Ok(mark(exec.static_op(op, x, shape)?, &sizes))
        }
        _ => {
            let padded = x
                .iter()
                .filter_map(|l| l.as_array())
                .any(|a| a.dynamic_sizes.as_ref().is_some_and(|s| s.iter().zip(a.dims()).any(|(s, d)| s != d)));
            if padded {
                return Err(RunError::Unsupported(format!(
                    "{} on an operand whose dynamic size is below its bound is outside xlaref's dynamic-size policy \
                     (elementwise ops, Reduce, Map, Transpose, Broadcast, BroadcastInDim, Slice and pass-through ops)",
                    op.name()
                )));
            }
            exec.static_op(op, x, shape)
        }
    }
}
