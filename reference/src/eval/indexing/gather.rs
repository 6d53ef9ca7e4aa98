//! Gather (document §Gather, "General Semantics").

use super::{batch_position, internal, IndexVectors};
use crate::error::RunError;
use crate::ir::GatherDims;
use crate::literal::ArrayLiteral;
use crate::types::ArrayShape;

/// Gather: the operand index `In` of each output index `Out`, in the
/// document's four steps.
///
/// 1. `G = { Out[k] for k in batch_dims }`; `S[i] = start_indices[Combine(G, i)]`.
/// 2. `S_in[start_index_map[k]] = S[k]`, 0 elsewhere.
/// 3. `O_in[remapped_offset_dims(k)] = Out[offset_dims[k]]`, 0 elsewhere.
/// 4. `In = O_in + S_in`.
///
/// Two things the document does not say, done as XLA does:
/// - between steps 2 and 3 every coordinate of `S_in` is clamped to
///   `[0, operand.dims[d] - slice_sizes[d]]`, so that the whole slice lies
///   inside the operand (out-of-bounds and negative starts move, as in
///   DynamicSlice);
/// - with batching dimensions (newer XLA), `S_in[operand_batching_dims[i]]`
///   is the coordinate of `G` along `start_indices_batching_dims[i]`, and
///   `remapped_offset_dims` skips the batching dimensions as it skips the
///   collapsed ones.
pub fn gather(operand: &ArrayLiteral, start_indices: &ArrayLiteral, d: &GatherDims, out: &ArrayShape) -> Result<ArrayLiteral, RunError> {
    let rank = operand.rank();
    let operand_dims = operand.dims();
    let is_offset = |i: usize| d.offset_dims.contains(&(i as i64));
    let is_collapsed = |i: usize| d.collapsed_slice_dims.contains(&(i as i64)) || d.operand_batching_dims.contains(&(i as i64));

    // "we label dimensions in the output array not in `offset_dims` as `batch_dims`".
    let batch_dims: Vec<usize> = (0..out.rank()).filter(|&i| !is_offset(i)).collect();
    let offset_dims: Vec<usize> = d.offset_dims.iter().map(|&i| i as usize).collect();
    // `remapped_offset_dims`: the monotonic map from [0, offset_dims.size) onto
    // [0, operand.rank) \ collapsed_slice_dims; entry k is remapped_offset_dims(k).
    let remapped_offset_dims: Vec<usize> = (0..rank).filter(|&i| !is_collapsed(i)).collect();
    let start_index_map: Vec<usize> = d.start_index_map.iter().map(|&i| i as usize).collect();
    // Batching pairs: (operand dimension, position of its index dimension in G).
    let batching: Vec<(usize, usize)> = d
        .operand_batching_dims
        .iter()
        .zip(&d.start_indices_batching_dims)
        .map(|(&o, &i)| (o as usize, batch_position(i, d.index_vector_dim)))
        .collect();
    // The largest start in each dimension that keeps the slice inside.
    let max_start: Vec<i64> = operand_dims.iter().zip(&d.slice_sizes).map(|(&dim, &size)| dim - size).collect();

    let index_vectors = IndexVectors::new(start_indices, d.index_vector_dim)?;
    if remapped_offset_dims.len() != offset_dims.len()
        || start_index_map.len() != index_vectors.vector_size()
        || max_start.len() != rank
        || start_index_map.iter().chain(remapped_offset_dims.iter()).any(|&i| i >= rank)
    {
        return Err(internal("gather dimension numbers do not fit the shapes"));
    }

    // Index buffers, reused for every output element.
    let mut g = vec![0i64; batch_dims.len()];
    let mut s = vec![0i64; index_vectors.vector_size()];
    let mut s_in = vec![0i64; rank];
    let mut o_in = vec![0i64; rank];
    let mut failure = None;
    let result = operand.remap(out, None, |out_index, in_index| {
        // Step 1: G, then S through Combine(G, i).
        for (k, &b) in batch_dims.iter().enumerate() {
            g[k] = out_index[b];
        }
        if let Err(e) = index_vectors.lookup(&g, &mut s) {
            failure = Some(e);
            return false;
        }
        // Step 2: S_in by scattering S through start_index_map.
        s_in.fill(0);
        for (k, &m) in start_index_map.iter().enumerate() {
            s_in[m] = s[k];
        }
        // XLA: clamp the start so the slice lies inside the operand.
        for (start, &max) in s_in.iter_mut().zip(&max_start) {
            *start = (*start).min(max).max(0);
        }
        // Batching dimensions: the batch coordinate itself.
        for &(o, k) in &batching {
            s_in[o] = g[k];
        }
        // Step 3: O_in by scattering the offset coordinates of Out.
        o_in.fill(0);
        for (k, &r) in remapped_offset_dims.iter().enumerate() {
            o_in[r] = out_index[offset_dims[k]];
        }
        // Step 4: In = O_in + S_in.
        for (i, entry) in in_index.iter_mut().enumerate() {
            *entry = o_in[i] + s_in[i];
        }
        true
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(result),
    }
}
