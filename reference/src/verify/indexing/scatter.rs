//! Rules of Scatter (document §Scatter).

use super::super::rules::*;
use super::super::Ctx;
use super::{batching_dims, index_array, index_batch_bounds, index_map, IndexRules};
use crate::ir::{ComputationId, ScatterDims};
use crate::types::{ArrayShape, Shape};

declare_rules! {
    UPDATE_TYPES = "scatter.c1": "`updates` are \"N arrays of types `T_0, ..., T_N`\": `updates[i]` has the element type of `operands[i]`.";
    UPDATE_COMPUTATION = "scatter.c2": "`update_computation` \"should be of type `T_0, ..., T_N, T_0, ..., T_N -> Collate(T_0, ..., T_N)`\" (scalar parameters and results).";
    MAP_ONE_TO_ONE = "scatter.c3": "`scatter_dims_to_operand_dims` \"has to be one-to-one\".";
    N_AT_LEAST_ONE = "scatter.c4": "\"N is required to be greater or equal to 1\": N operands, `scatter_indices`, N updates.";
    SAME_OPERAND_DIMS = "scatter.c5": "\"`operands`[`0`], ..., `operands`[`N-1`] must all have the same dimensions\".";
    SAME_UPDATE_DIMS = "scatter.c6": "\"`updates`[`0`], ..., `updates`[`N-1`] must all have the same dimensions\".";
    UPDATES_RANK = "scatter.c7": "\"Each `updates` array must have `update_window_dims.size + scatter_indices.rank - 1` dimensions\".";
    WINDOW_BOUNDS = "scatter.c8": "The bound of an update window dimension \"must not exceed the corresponding bound of `operand` after accounting for the `inserted_window_dims`\".";
    SCATTER_BOUNDS = "scatter.c9": "The bound of an update scatter dimension \"must be equal to the corresponding bound of `scatter_indices`, skipping `index_vector_dim`\".";
    UPDATE_WINDOW_DIMS = "scatter.c10": "\"`update_window_dims` must be in ascending order, not have any repeating dimension numbers, and be in the range `[0, updates.rank)`\".";
    INSERTED_WINDOW_DIMS = "scatter.c11": "\"`inserted_window_dims` must be in ascending order, not have any repeating dimension numbers, and be in the range `[0, operand.rank)`\".";
    RANK_SUM = "scatter.c12": "\"`operand.rank` must equal the sum of `update_window_dims.size` and `inserted_window_dims.size`\" (plus `input_batching_dims.size`).";
    MAP_SIZE = "scatter.c13": "\"`scatter_dims_to_operand_dims.size` must be equal to `scatter_indices.shape.dims`[`index_vector_dim`]\".";
    MAP_IN_RANGE = "scatter.c14": "The values of `scatter_dims_to_operand_dims` \"must be in the range `[0, operand.rank)`\".";
    INTEGER_INDICES = "scatter.c15": "(XLA) `scatter_indices` has an integer element type.";
    INDEX_VECTOR_DIM = "scatter.c16": "(XLA) `index_vector_dim` is in [0, scatter_indices.rank] (equal to the rank: an implicit trailing 1 dimension).";
}

/// Scatter's rules for the checks it shares with Gather.
static INDEX_RULES: IndexRules = IndexRules {
    integer_indices: &INTEGER_INDICES,
    index_vector_dim: &INDEX_VECTOR_DIM,
    map_size: &MAP_SIZE,
    map_in_range: &MAP_IN_RANGE,
    map_unique: &MAP_ONE_TO_ONE,
};

/// Scatter(operands..., scatter_indices, updates...) with its dimension
/// numbers: every constraint of the document's list, in its order, plus
/// XLA's for the newer batching dimensions. The result is the operand's
/// shape for N = 1, the tuple of the N operand shapes otherwise.
pub fn scatter(d: &ScatterDims, update_computation: ComputationId, operands: &[&Shape], ctx: &Ctx) -> Check<Shape> {
    // "N is required to be greater or equal to 1": N operands, the indices, N updates.
    let n = operands.len().saturating_sub(1) / 2;
    if n == 0 || operands.len() != 2 * n + 1 {
        fail!(
            N_AT_LEAST_ONE,
            "takes N operands, scatter_indices and N updates with N >= 1 (an odd number, at least 3), got {} operands",
            operands.len()
        );
    }
    let inputs: Vec<&ArrayShape> =
        operands[..n].iter().enumerate().map(|(j, s)| array(s, &format!("operands[{j}]"))).collect::<Check<_>>()?;
    let scatter_indices = array(operands[n], "scatter_indices")?;
    let updates: Vec<&ArrayShape> =
        operands[n + 1..].iter().enumerate().map(|(j, s)| array(s, &format!("updates[{j}]"))).collect::<Check<_>>()?;
    let (operand, update) = (inputs[0], updates[0]);

    // "operands[0], ..., operands[N-1] must all have the same dimensions", so
    // must the updates; `updates[i]` has the type `T_i` of `operands[i]`.
    for j in 1..n {
        if inputs[j].dims != operand.dims {
            fail!(
                SAME_OPERAND_DIMS,
                "operands[{j}] has dimensions {:?}, operands[0] has {:?}; they must be equal",
                inputs[j].dims,
                operand.dims
            );
        }
        if updates[j].dims != update.dims {
            fail!(
                SAME_UPDATE_DIMS,
                "updates[{j}] has dimensions {:?}, updates[0] has {:?}; they must be equal",
                updates[j].dims,
                update.dims
            );
        }
    }
    for j in 0..n {
        if updates[j].element_type != inputs[j].element_type {
            fail!(
                UPDATE_TYPES,
                "updates[{j}] has element type {}, operands[{j}] has {}; they must be equal",
                updates[j].element_type,
                inputs[j].element_type
            );
        }
    }

    let index_vector_size = index_array(&INDEX_RULES, scatter_indices, "scatter_indices", d.index_vector_dim)?;
    let scatter_bounds = index_batch_bounds(scatter_indices, d.index_vector_dim);
    let rank = operand.rank();

    // "Each `updates` array must have `update_window_dims.size +
    // scatter_indices.rank - 1` dimensions" (the rank counting the implicit
    // trailing 1 when `index_vector_dim == scatter_indices.rank`).
    let expected_rank = d.update_window_dims.len() + scatter_bounds.len();
    if update.rank() != expected_rank {
        fail!(
            UPDATES_RANK,
            "updates have rank {}; they must have update_window_dims.size ({}) + scatter_indices.rank - 1 ({}) = {expected_rank} dimensions",
            update.rank(),
            d.update_window_dims.len(),
            scatter_bounds.len()
        );
    }

    // "`update_window_dims` must be in ascending order, not have any
    // repeating dimension numbers, and be in the range `[0, updates.rank)`."
    strictly_increasing(&UPDATE_WINDOW_DIMS, &d.update_window_dims, "update_window_dims")?;
    dims_in_range(&UPDATE_WINDOW_DIMS, &d.update_window_dims, update.rank(), "update_window_dims")?;

    // "`inserted_window_dims` must be in ascending order, not have any
    // repeating dimension numbers, and be in the range `[0, operand.rank)`."
    strictly_increasing(&INSERTED_WINDOW_DIMS, &d.inserted_window_dims, "inserted_window_dims")?;
    dims_in_range(&INSERTED_WINDOW_DIMS, &d.inserted_window_dims, rank, "inserted_window_dims")?;

    // Batching dimensions (newer XLA): neither inserted nor mapped.
    batching_dims(
        &d.input_batching_dims,
        &d.scatter_indices_batching_dims,
        ["input_batching_dims", "scatter_indices_batching_dims"],
        operand,
        scatter_indices,
        d.index_vector_dim,
        (&d.inserted_window_dims, "inserted_window_dims"),
    )?;

    // "`operand.rank` must equal the sum of `update_window_dims.size` and
    // `inserted_window_dims.size`" (plus the batching dimensions).
    let parts = d.update_window_dims.len() + d.inserted_window_dims.len() + d.input_batching_dims.len();
    if parts != rank {
        let batching = if d.input_batching_dims.is_empty() {
            String::new()
        } else {
            format!(" + input_batching_dims.size ({})", d.input_batching_dims.len())
        };
        fail!(
            RANK_SUM,
            "operand rank {rank} must equal update_window_dims.size ({}) + inserted_window_dims.size ({}){batching}",
            d.update_window_dims.len(),
            d.inserted_window_dims.len()
        );
    }

    // "`scatter_dims_to_operand_dims.size` must be equal to
    // `scatter_indices.shape.dims[index_vector_dim]`, and its values must be
    // in the range `[0, operand.rank)`"; "one-to-one".
    index_map(
        &INDEX_RULES,
        &d.scatter_dims_to_operand_dims,
        "scatter_dims_to_operand_dims",
        index_vector_size,
        rank,
        (&d.input_batching_dims, "input_batching_dims"),
    )?;

    // Bounds of the update dimensions: window dimensions within
    // `adjusted_window_bounds`, scatter dimensions equal to the index array's.
    let adjusted_window_bounds: Vec<i64> = (0..rank as i64)
        .filter(|i| !d.inserted_window_dims.contains(i) && !d.input_batching_dims.contains(i))
        .map(|i| operand.dims[i as usize])
        .collect();
    let (mut window_k, mut scatter_k) = (0, 0);
    for (i, &bound) in update.dims.iter().enumerate() {
        if d.update_window_dims.contains(&(i as i64)) {
            let limit = adjusted_window_bounds[window_k];
            if bound > limit {
                fail!(
                    WINDOW_BOUNDS,
                    "updates dimension {i} (update_window_dims[{window_k}]) has bound {bound}, more than the operand's adjusted_window_bounds[{window_k}] = {limit}"
                );
            }
            window_k += 1;
        } else {
            let expected = scatter_bounds[scatter_k];
            if bound != expected {
                fail!(
                    SCATTER_BOUNDS,
                    "updates dimension {i} (update_scatter_dims[{scatter_k}]) has bound {bound}; it must equal the scatter_indices bound {expected}"
                );
            }
            scatter_k += 1;
        }
    }

    update_computation_signature(update_computation, &inputs, ctx)?;
    Ok(if n == 1 { Shape::Array(operand.clone()) } else { Shape::Tuple(inputs.iter().map(|&a| Shape::Array(a.clone())).collect()) })
}

/// "This computation should be of type `T_0, ..., T_N, T_0, ..., T_N ->
/// Collate(T_0, ..., T_N)`": 2N scalar parameters (the current output
/// values, then the update values) and one scalar (N = 1) or a tuple of N
/// scalars.
fn update_computation_signature(id: ComputationId, inputs: &[&ArrayShape], ctx: &Ctx) -> Check {
    let sig = ctx.signature(id)?;
    let name = ctx.computation_name(id);
    let n = inputs.len();
    let scalar_of = |j: usize| Shape::scalar(inputs[j].element_type);
    if sig.params.len() != 2 * n {
        fail!(
            UPDATE_COMPUTATION,
            "update_computation `{name}` takes {} parameters; with {n} operand{} it must take {} (the current values, then the updates)",
            sig.params.len(),
            if n == 1 { "" } else { "s" },
            2 * n
        );
    }
    for (p, param) in sig.params.iter().enumerate() {
        let expected = scalar_of(p % n);
        if !param.compatible(&expected) {
            fail!(UPDATE_COMPUTATION, "update_computation `{name}` parameter {p} has shape {param}; it must be {expected}");
        }
    }
    let expected = if n == 1 { scalar_of(0) } else { Shape::Tuple((0..n).map(scalar_of).collect()) };
    if !sig.result.compatible(&expected) {
        fail!(UPDATE_COMPUTATION, "update_computation `{name}` returns {}; it must return {expected}", sig.result);
    }
    Ok(())
}
