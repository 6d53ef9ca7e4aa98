//! Scatter (document §Scatter).

use super::super::applied::ScalarComputation;
use super::super::Interpreter;
use super::{batch_position, internal, IndexVectors};
use crate::error::RunError;
use crate::ir::{ComputationId, ScatterDims};
use crate::literal::{ArrayLiteral, Literal};
use crate::scalar::Scalar;
use crate::types::index::advance;

/// Scatter: `output = operands`, then for every index `U` of the updates
/// whose operand index `I` is valid,
/// `(output[0][I], ..., output[N-1][I]) = update_computation(output[0][I],
/// ..., output[N-1][I], updates[0][U], ..., updates[N-1][U])`.
///
/// `I` is computed in the document's four steps:
/// 1. `G = { U[k] for k in update_scatter_dims }`; `S[i] = scatter_indices[Combine(G, i)]`.
/// 2. `S_in[scatter_dims_to_operand_dims[k]] = S[k]`, 0 elsewhere.
/// 3. `W_in[window_dims_to_operand_dims(k)] = U[update_window_dims[k]]`, 0
///    elsewhere (the document writes `U[k]` "if k is in update_window_dims";
///    k ranges over positions in `update_window_dims`, so the coordinate is
///    `U[update_window_dims[k]]`).
/// 4. `I = W_in + S_in`.
///
/// Out of bounds, the reference follows the document: an element whose `I`
/// is not a valid index is skipped, the rest of its window is applied. (XLA's
/// CPU backend skips the whole window when any part of it is out of bounds.)
///
/// Order: the document leaves the order of updates unspecified; the
/// reference applies them one at a time, each scatter index `G` in row-major
/// order and, within it, each window index in row-major order (as XLA CPU).
/// When `update_window_dims` are the trailing dimensions of the updates this
/// is the row-major order of `U`.
///
/// Batching dimensions (newer XLA): `S_in[input_batching_dims[i]]` is the
/// coordinate of `G` along `scatter_indices_batching_dims[i]`, and
/// `window_dims_to_operand_dims` skips them as it skips `inserted_window_dims`.
pub fn scatter(
    it: &mut Interpreter,
    operands: &[&ArrayLiteral],
    scatter_indices: &ArrayLiteral,
    updates: &[&ArrayLiteral],
    d: &ScatterDims,
    update_computation: ComputationId,
) -> Result<Literal, RunError> {
    let n = operands.len();
    let (Some(&operand), Some(&update)) = (operands.first(), updates.first()) else {
        return Err(internal("Scatter has N >= 1 operands and updates"));
    };
    if updates.len() != n {
        return Err(internal("Scatter has as many updates as operands"));
    }
    let rank = operand.rank();
    let is_window = |i: usize| d.update_window_dims.contains(&(i as i64));
    let is_inserted = |i: usize| d.inserted_window_dims.contains(&(i as i64)) || d.input_batching_dims.contains(&(i as i64));

    // "`update_scatter_dims` ... the set of dimensions in `updates` shape that
    // are not in `update_window_dims`, in ascending order."
    let update_scatter_dims: Vec<usize> = (0..update.rank()).filter(|&i| !is_window(i)).collect();
    let update_window_dims: Vec<usize> = d.update_window_dims.iter().map(|&i| i as usize).collect();
    // `window_dims_to_operand_dims`: the monotonic map from
    // [0, update_window_dims.size) onto [0, operand.rank) \ inserted_window_dims.
    let window_dims_to_operand_dims: Vec<usize> = (0..rank).filter(|&i| !is_inserted(i)).collect();
    let scatter_dims_to_operand_dims: Vec<usize> = d.scatter_dims_to_operand_dims.iter().map(|&i| i as usize).collect();
    let batching: Vec<(usize, usize)> = d
        .input_batching_dims
        .iter()
        .zip(&d.scatter_indices_batching_dims)
        .map(|(&o, &i)| (o as usize, batch_position(i, d.index_vector_dim)))
        .collect();
    // The bounds of the two index spaces that make up U.
    let scatter_bounds: Vec<i64> = update_scatter_dims.iter().map(|&i| update.dims()[i]).collect();
    let window_bounds: Vec<i64> = update_window_dims.iter().map(|&i| update.dims()[i]).collect();

    let index_vectors = IndexVectors::new(scatter_indices, d.index_vector_dim)?;
    if window_dims_to_operand_dims.len() != update_window_dims.len()
        || scatter_dims_to_operand_dims.len() != index_vectors.vector_size()
        || scatter_dims_to_operand_dims.iter().chain(&window_dims_to_operand_dims).any(|&i| i >= rank)
    {
        return Err(internal("scatter dimension numbers do not fit the shapes"));
    }

    // "Initialize `output` with `operands`."
    let mut output: Vec<ArrayLiteral> = operands.iter().map(|&o| o.clone()).collect();
    let computation = ScalarComputation::new(update_computation);

    // Index buffers and argument lists, reused for every element.
    let mut g = vec![0i64; scatter_bounds.len()];
    let mut window = vec![0i64; window_bounds.len()];
    let mut u = vec![0i64; update.rank()];
    let mut s = vec![0i64; index_vectors.vector_size()];
    let mut s_in = vec![0i64; rank];
    let mut w_in = vec![0i64; rank];
    let mut i_index = vec![0i64; rank];
    let mut args: Vec<Scalar> = Vec::with_capacity(2 * n);
    let mut results: Vec<Scalar> = Vec::with_capacity(n);

    let empty = update.dims().contains(&0);
    let mut more_scatter = !empty;
    let window_size =
        (d.update_window_dims.iter().map(|&w| update.dims().get(w as usize).copied().unwrap_or(1)).product::<i64>() as u64).max(1);
    while more_scatter {
        if crate::watch::tick(window_size) {
            break;
        }
        // Step 1: G (the scatter part of U), then S through Combine(G, i).
        index_vectors.lookup(&g, &mut s)?;
        // Step 2: S_in by scattering S through scatter_dims_to_operand_dims.
        s_in.fill(0);
        for (k, &m) in scatter_dims_to_operand_dims.iter().enumerate() {
            s_in[m] = s[k];
        }
        for &(o, k) in &batching {
            s_in[o] = g[k];
        }
        for (k, &i) in update_scatter_dims.iter().enumerate() {
            u[i] = g[k];
        }
        window.fill(0);
        let mut more_window = true;
        while more_window {
            // Step 3: W_in by scattering the window coordinates of U.
            w_in.fill(0);
            for (k, &i) in update_window_dims.iter().enumerate() {
                u[i] = window[k];
                w_in[window_dims_to_operand_dims[k]] = window[k];
            }
            // Step 4: I = W_in + S_in (saturating: a huge start stays out of bounds).
            for (j, entry) in i_index.iter_mut().enumerate() {
                *entry = w_in[j].saturating_add(s_in[j]);
            }
            // "if `O` is a valid index for `output`": otherwise this element is skipped.
            if operand.shape.contains(&i_index) {
                let at = operand.shape.linear(&i_index);
                let from = update.shape.linear(&u);
                args.clear();
                args.extend(output.iter().map(|o| o.data.get(at)));
                args.extend(updates.iter().map(|x| x.data.get(from)));
                computation.call(it, &args, &mut results)?;
                if results.len() != n {
                    return Err(internal("update_computation returns N values"));
                }
                for (o, &r) in output.iter_mut().zip(&results) {
                    if !o.data.set(at, r) {
                        return Err(internal("update_computation returned a value of another type"));
                    }
                }
            }
            more_window = advance(&mut window, &window_bounds);
        }
        more_scatter = advance(&mut g, &scatter_bounds);
    }

    Ok(if n == 1 { output.remove(0).into() } else { Literal::Tuple(output.into_iter().map(Literal::from).collect()) })
}
