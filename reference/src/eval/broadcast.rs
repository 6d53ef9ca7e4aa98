//! Broadcast and BroadcastInDim, and the index mapping every broadcast
//! (including the implicit one of binary ops) uses.

use crate::literal::ArrayLiteral;
use crate::types::ArrayShape;

/// `x` stretched to `out_dims`: x's dimension i stands for output dimension
/// `mapping[i]`; a size-1 dimension of x is repeated along it (degenerate
/// broadcasting), other dimensions must match (the verifier saw to it).
pub fn broadcast_to(x: &ArrayLiteral, out_dims: &[i64], mapping: &[i64]) -> ArrayLiteral {
    let out = ArrayShape::new(x.element_type(), out_dims.to_vec());
    let dims = x.dims().to_vec();
    x.remap(&out, None, |out_index, in_index| {
        for (i, &m) in mapping.iter().enumerate() {
            in_index[i] = if dims[i] == 1 { 0 } else { out_index[m as usize] };
        }
        true
    })
}

/// Broadcast: `output[i0, ..., iN, j0, ..., jM] = operand[j0, ..., jM]`.
pub fn broadcast(x: &ArrayLiteral, out: &ArrayShape) -> ArrayLiteral {
    let new = out.rank() - x.rank();
    let mapping: Vec<i64> = (new as i64..out.rank() as i64).collect();
    broadcast_to(x, &out.dims, &mapping)
}

/// BroadcastInDim: operand dimension i is output dimension
/// `broadcast_dimensions[i]`; the rest are new, size-1 dimensions stretch.
pub fn broadcast_in_dim(x: &ArrayLiteral, out: &ArrayShape, broadcast_dimensions: &[i64]) -> ArrayLiteral {
    broadcast_to(x, &out.dims, broadcast_dimensions)
}
