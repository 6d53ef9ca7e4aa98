//! Reference evaluation of the ops that talk to the world — Infeed,
//! Outfeed, CustomCall, GetDimensionSize, SetDimensionSize — and the
//! dynamic-size policy: what the other ops do with operands whose bounded
//! dynamic dimensions carry a runtime size (docs/semantics-decisions.md).

use super::{array, internal, Env, Interpreter};
use crate::error::RunError;
use crate::ir::Op;
use crate::literal::{ArrayLiteral, Literal};
use crate::types::Shape;

pub fn eval(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    match op {
        Op::Infeed { .. } => infeed(it.env, operands.len() == 1, shape),
        Op::Outfeed { .. } => outfeed(it.env, operands[0]),
        Op::CustomCall { target_name, opaque, .. } => {
            let args: Vec<Literal> = operands.iter().map(|&l| l.clone()).collect();
            it.env.custom_calls.call(target_name, &args, shape, opaque)
        }
        Op::GetDimensionSize { dimension } => get_dimension_size(array(operands[0])?, *dimension),
        Op::SetDimensionSize { dimension } => set_dimension_size(array(operands[0])?, array(operands[1])?, *dimension, shape),
        _ => Err(internal("not a world op")),
    }
}

/// Infeed — document §Infeed: reads one data item of the given shape from
/// the infeed queue, in program order. "For an empty tuple shape, the
/// Infeed operation is effectively a no-op and proceeds without reading any
/// data." The token form returns `(data, token)`.
pub fn infeed(env: &mut Env, with_token: bool, shape: &Shape) -> Result<Literal, RunError> {
    let data_shape = match (with_token, shape.as_tuple()) {
        (true, Some([data, _token])) => data,
        (true, _) => return Err(internal("the token form of Infeed returns (data, token)")),
        (false, _) => shape,
    };
    let data = if data_shape.as_tuple().is_some_and(<[Shape]>::is_empty) {
        Literal::Tuple(vec![])
    } else {
        let value = env
            .infeed
            .pop_front()
            .ok_or_else(|| RunError::InfeedExhausted(format!("Infeed of {data_shape} found the infeed queue empty")))?;
        let got = value.shape();
        if !got.compatible(data_shape) {
            return Err(RunError::Other(format!("infeed: the next queued value has shape {got}, the Infeed reads {data_shape}")));
        }
        value
    };
    Ok(if with_token { Literal::Tuple(vec![data, Literal::Token]) } else { data })
}

/// Outfeed: appends the operand to the outfeed list; an empty tuple
/// writes nothing (as Infeed of `()` reads nothing). The result is a token.
pub fn outfeed(env: &mut Env, value: &Literal) -> Result<Literal, RunError> {
    if !value.as_tuple().is_some_and(<[Literal]>::is_empty) {
        env.outfeed.push(value.clone());
    }
    Ok(Literal::Token)
}

/// GetDimensionSize — document §GetDimensionSize: the size of the given
/// dimension, the runtime size for a bounded dynamic dimension, as s32.
pub fn get_dimension_size(operand: &ArrayLiteral, dimension: i64) -> Result<Literal, RunError> {
    let d = dimension as usize;
    let size = match &operand.dynamic_sizes {
        Some(sizes) => sizes.get(d).copied(),
        None => operand.dims().get(d).copied(),
    }
    .ok_or_else(|| internal("dimension out of range"))?;
    let size = i32::try_from(size).map_err(|_| RunError::Other(format!("GetDimensionSize: size {size} does not fit in s32")))?;
    Ok(ArrayLiteral::scalar(size).into())
}

/// SetDimensionSize — document §SetDimensionSize: "Pass through the operand
/// as result, with dynamic dimension tracked by the compiler"; the bound
/// (the static shape) is unchanged. A size outside `[0, bound]` is clamped
/// into it (XLA CPU reduces such an array as if clamped).
pub fn set_dimension_size(operand: &ArrayLiteral, size: &ArrayLiteral, dimension: i64, shape: &Shape) -> Result<Literal, RunError> {
    let d = dimension as usize;
    let out = shape.as_array().ok_or_else(|| internal("SetDimensionSize returns an array"))?;
    let size = size.scalar_i64().ok_or_else(|| internal("size is an integer scalar"))?;
    let bound = operand.dims().get(d).copied().ok_or_else(|| internal("dimension out of range"))?;
    let size = size.clamp(0, bound);
    let mut sizes = operand.dynamic_sizes.clone().unwrap_or_else(|| operand.dims().to_vec());
    sizes[d] = size;
    let mut result = operand.clone();
    result.shape = out.clone();
    result.dynamic_sizes = Some(sizes);
    Ok(result.into())
}

// ---------------------------------------------------------------------------
// The dynamic-size policy.
//
// A bounded dynamic dimension is stored at its bound; elements beyond the
// runtime size ("padding") hold unspecified values. The ops below know what
// to do with them, as XLA's dynamic padder does:
//   - elementwise ops (Unary, Binary, Compare, Select, Clamp, conversions,
//     ReducePrecision, Map) compute on every element; the result carries the
//     operands' sizes (where operands disagree, the first one's, as XLA);
//   - Reduce ignores the elements beyond the size in the reduced dimensions
//     (it reduces the init value in their place); kept dimensions keep
//     their sizes;
//   - Transpose, Broadcast and BroadcastInDim move sizes with dimensions;
//     Slice keeps the part of the size it covers, ceil((size - start) /
//     stride) within [0, result dimension], as XLA;
//   - ops that only pass values on (Tuple, GetTupleElement, Call,
//     Conditional, While, OptimizationBarrier, Outfeed, CustomCall,
//     GetDimensionSize, SetDimensionSize) keep the values as they are.
// Any other op given an operand whose runtime size is below its bound is
// reported as unsupported; at full size it runs as on a static array.
// ---------------------------------------------------------------------------

/// Whether any array operand carries runtime dynamic sizes.
pub fn has_dynamic_sizes(operands: &[&Literal]) -> bool {
    operands.iter().any(|l| matches!(l, Literal::Array(a) if a.dynamic_sizes.is_some()))
}

/// The runtime size of each dimension of `a` that is dynamic, `None` for
/// static dimensions.
fn dynamic_dims(a: &ArrayLiteral) -> Vec<Option<i64>> {
    let Some(sizes) = &a.dynamic_sizes else { return vec![None; a.rank()] };
    (0..a.rank())
        .map(|d| {
            let size = sizes.get(d).copied().unwrap_or(a.dims()[d]);
            (a.shape.dynamic.get(d).copied().unwrap_or(false) || size != a.dims()[d]).then_some(size)
        })
        .collect()
}

/// Whether some dynamic size is below its bound (the array has padding).
fn has_padding(a: &ArrayLiteral) -> bool {
    a.dynamic_sizes.as_ref().is_some_and(|s| s.iter().zip(a.dims()).any(|(s, d)| s != d))
}

/// Result dimension sizes, filled from operand dimensions: operand
/// dimension `j` of `a` lands on result dimension `map(j)`.
struct Sizes {
    dims: Vec<Option<i64>>,
}

impl Sizes {
    fn new(rank: usize) -> Sizes {
        Sizes { dims: vec![None; rank] }
    }

    fn take(&mut self, a: &ArrayLiteral, map: impl Fn(usize) -> Option<usize>) {
        for (j, size) in dynamic_dims(a).into_iter().enumerate() {
            let (Some(size), Some(i)) = (size, map(j)) else { continue };
            let Some(slot) = self.dims.get_mut(i) else { continue };
            // The first operand's size wins, as in XLA (operands that
            // disagree make the rest of the other operand padding).
            if slot.is_none() {
                *slot = Some(size);
            }
        }
    }

    /// Puts the sizes on an array result (every array of a tuple result).
    fn attach(&self, result: Literal) -> Literal {
        if self.dims.iter().all(Option::is_none) {
            return result;
        }
        match result {
            Literal::Array(mut a) if a.rank() == self.dims.len() => {
                a.shape.dynamic.resize(a.rank(), false);
                let mut sizes = a.dims().to_vec();
                for (d, s) in self.dims.iter().enumerate() {
                    if let Some(s) = *s {
                        sizes[d] = s;
                        a.shape.dynamic[d] = true;
                    }
                }
                a.dynamic_sizes = Some(sizes);
                Literal::Array(a)
            }
            Literal::Tuple(t) => Literal::Tuple(t.into_iter().map(|e| self.attach(e)).collect()),
            other => other,
        }
    }
}

/// Evaluates `op` under the dynamic-size policy above.
pub fn eval_with_dynamic_sizes(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let rank = shape.as_array().map_or(0, |a| a.rank());
    let arrays = || operands.iter().filter_map(|l| l.as_array());
    let mut sizes = Sizes::new(rank);
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
        | Op::SetDimensionSize { .. } => it.eval_static_op(op, operands, shape),

        Op::Unary(_)
        | Op::Compare { .. }
        | Op::Binary { .. }
        | Op::Select
        | Op::Clamp
        | Op::ConvertElementType { .. }
        | Op::BitcastConvertType { .. }
        | Op::ReducePrecision { .. }
        | Op::Map { .. } => {
            let broadcast = match op {
                Op::Binary { broadcast_dimensions, .. } | Op::Compare { broadcast_dimensions, .. } => broadcast_dimensions.as_deref(),
                _ => None,
            };
            for a in arrays() {
                if a.rank() == rank {
                    sizes.take(a, Some);
                } else if let Some(bd) = broadcast {
                    sizes.take(a, |j| bd.get(j).map(|&i| i as usize));
                }
            }
            let result = it.eval_static_op(op, operands, shape)?;
            Ok(sizes.attach(result))
        }

        Op::Reduce { dimensions, .. } => {
            let n = operands.len() / 2;
            let reduced = |d: usize| dimensions.contains(&(d as i64));
            let input_rank = operands.first().and_then(|l| l.as_array()).map_or(0, ArrayLiteral::rank);
            let kept: Vec<usize> = (0..input_rank).filter(|&d| !reduced(d)).collect();
            let mut kept_sizes = Sizes::new(kept.len());
            let mut values: Vec<Literal> = Vec::with_capacity(operands.len());
            for k in 0..n {
                let input = array(operands[k])?;
                kept_sizes.take(input, |j| kept.iter().position(|&d| d == j));
                values.push(mask_reduced(input, array(operands[k + n])?, &reduced).into());
            }
            for &init in &operands[n..] {
                let mut init = array(init)?.clone();
                init.dynamic_sizes = None;
                values.push(init.into());
            }
            let refs: Vec<&Literal> = values.iter().collect();
            Ok(kept_sizes.attach(it.eval_static_op(op, &refs, shape)?))
        }

        Op::Transpose { permutation } => {
            let a = array(operands[0])?;
            sizes.take(a, |j| permutation.iter().position(|&p| p == j as i64));
            Ok(sizes.attach(it.eval_static_op(op, operands, shape)?))
        }
        Op::BroadcastInDim { broadcast_dimensions, .. } => {
            let a = array(operands[0])?;
            let out = shape.as_array().ok_or_else(|| internal("BroadcastInDim returns an array"))?;
            let map = |j: usize| broadcast_dimensions.get(j).map(|&i| i as usize).filter(|&i| out.dims.get(i) == a.dims().get(j));
            sizes.take(a, map);
            Ok(sizes.attach(it.eval_static_op(op, operands, shape)?))
        }
        Op::Broadcast { broadcast_sizes } => {
            let a = array(operands[0])?;
            sizes.take(a, |j| Some(j + broadcast_sizes.len()));
            Ok(sizes.attach(it.eval_static_op(op, operands, shape)?))
        }
        Op::Slice { start_indices, strides, .. } => {
            // The elements of the slice below the operand's size:
            // ceil((size - start) / stride), within [0, result dimension].
            let a = array(operands[0])?;
            let out = shape.as_array().ok_or_else(|| internal("Slice returns an array"))?;
            sizes.take(a, Some);
            for (j, slot) in sizes.dims.iter_mut().enumerate() {
                if let (Some(n), Some(&start), Some(&stride), Some(&bound)) = (*slot, start_indices.get(j), strides.get(j), out.dims.get(j))
                {
                    let rest = n.saturating_sub(start).max(0);
                    *slot = Some((rest / stride.max(1) + i64::from(rest % stride.max(1) != 0)).min(bound));
                }
            }
            Ok(sizes.attach(it.eval_static_op(op, operands, shape)?))
        }

        _ => {
            if arrays().any(has_padding) {
                return Err(RunError::Unsupported(format!(
                    "{} on an operand whose dynamic size is below its bound is outside xlaref's dynamic-size policy \
                     (elementwise ops, Reduce, Map, Transpose, Broadcast, BroadcastInDim, Slice and pass-through ops)",
                    op.name()
                )));
            }
            it.eval_static_op(op, operands, shape)
        }
    }
}

/// The input of a Reduce with every element beyond a dynamic size in a
/// reduced dimension replaced by the init value — document §SetDimensionSize:
/// "Padded values will be ignored by downstream reduction ops."
fn mask_reduced(input: &ArrayLiteral, init: &ArrayLiteral, reduced: &dyn Fn(usize) -> bool) -> ArrayLiteral {
    let sizes: Vec<Option<i64>> = dynamic_dims(input);
    let mut masked = input.remap(&input.shape, Some(init), |out, index| {
        index.copy_from_slice(out);
        out.iter().enumerate().all(|(d, &i)| !reduced(d) || sizes[d].is_none_or(|s| i < s))
    });
    masked.dynamic_sizes = None;
    masked
}
