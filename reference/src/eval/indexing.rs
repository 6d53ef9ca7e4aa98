//! DynamicSlice, DynamicUpdateSlice, Gather and Scatter: reading elements at
//! run-time indices. Gather is in `indexing/gather.rs`, Scatter in
//! `indexing/scatter.rs`; the index helpers they share are here.

mod gather;
mod scatter;

pub use gather::gather;
pub use scatter::scatter;

use super::{array, array_shape, internal, Interpreter};
use crate::error::RunError;
use crate::ir::Op;
use crate::literal::{ArrayLiteral, Literal};
use crate::types::Shape;

pub fn eval(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let first = || operands.first().copied().ok_or_else(|| internal("missing operand")).and_then(array);
    match op {
        Op::DynamicSlice { .. } => Ok(dynamic_slice(first()?, &operands[1..], array_shape(shape)?)?.into()),
        Op::DynamicUpdateSlice => {
            let update = operands.get(1).copied().ok_or_else(|| internal("missing update")).and_then(array)?;
            Ok(dynamic_update_slice(first()?, update, &operands[2..])?.into())
        }
        Op::Gather(dims) => {
            let start_indices = operands.get(1).copied().ok_or_else(|| internal("missing start_indices")).and_then(array)?;
            Ok(gather(first()?, start_indices, dims, array_shape(shape)?)?.into())
        }
        Op::Scatter { dims, update_computation } => {
            let n = operands.len() / 2;
            let arrays = super::arrays(operands)?;
            let (inputs, rest) = arrays.split_at(n);
            let (&scatter_indices, updates) = rest.split_first().ok_or_else(|| internal("missing scatter_indices"))?;
            scatter(it, inputs, scatter_indices, updates, dims, *update_computation)
        }
        _ => Err(internal("not an indexing op")),
    }
}

/// The effective start indices of DynamicSlice and DynamicUpdateSlice: the
/// document's `start_indices[i] = clamp(start_indices[i], 0,
/// operand.dimension_size[i] - size[i])`, applied to every dimension `i` (the
/// document's text says `i` in `[1, N)`, a typo: XLA clamps dimension 0 too).
/// Start indices may have any integer type, each its own; an unsigned value
/// is read as unsigned (u64 values above `i64::MAX` saturate, which clamps
/// the same way).
fn clamped_starts(starts: &[&Literal], operand_dims: &[i64], sizes: &[i64]) -> Result<Vec<i64>, RunError> {
    if starts.len() != operand_dims.len() || sizes.len() != operand_dims.len() {
        return Err(internal("one start index per dimension"));
    }
    let mut clamped = Vec::with_capacity(starts.len());
    for ((start, &dim), &size) in starts.iter().zip(operand_dims).zip(sizes) {
        let start = array(start)?.scalar_i64().ok_or_else(|| internal("start index is an integer scalar"))?;
        clamped.push(start.min(dim - size).max(0));
    }
    Ok(clamped)
}

/// DynamicSlice: the slice `[start, start + size)` in every dimension, at
/// the clamped start indices (document §DynamicSlice).
pub fn dynamic_slice(operand: &ArrayLiteral, starts: &[&Literal], out: &crate::types::ArrayShape) -> Result<ArrayLiteral, RunError> {
    let start = clamped_starts(starts, operand.dims(), &out.dims)?;
    Ok(operand.remap(out, None, |out_index, in_index| {
        for (d, s) in start.iter().enumerate() {
            in_index[d] = s + out_index[d];
        }
        true
    }))
}

/// DynamicUpdateSlice: the operand with `update` written over the slice at
/// the clamped start indices (document §DynamicUpdateSlice).
pub fn dynamic_update_slice(operand: &ArrayLiteral, update: &ArrayLiteral, starts: &[&Literal]) -> Result<ArrayLiteral, RunError> {
    let start = clamped_starts(starts, operand.dims(), update.dims())?;
    let mut result = operand.clone();
    let mut target = vec![0i64; operand.rank()];
    for (position, index) in update.shape.indices().enumerate() {
        if crate::watch::tick(1) {
            break;
        }
        for (d, s) in start.iter().enumerate() {
            target[d] = s + index[d];
        }
        let at = result.shape.linear(&target);
        if !result.data.set(at, update.data.get(position)) {
            return Err(internal("update and operand element types differ"));
        }
    }
    Ok(result)
}

/// The index array of Gather (`start_indices`) and Scatter
/// (`scatter_indices`) read as index vectors: `S[i] =
/// indices[Combine(G, i)]`, where `Combine(G, i)` inserts `i` at position
/// `index_vector_dim` into the batch index `G` (one coordinate per dimension
/// of the index array but `index_vector_dim`). With `index_vector_dim ==
/// rank` the array has an implicit trailing dimension of size 1.
struct IndexVectors {
    /// The elements as i64 (u64 values above `i64::MAX` saturate).
    values: Vec<i64>,
    /// The linear stride of each dimension of `G`, in order.
    batch_strides: Vec<usize>,
    /// The linear stride and size of `index_vector_dim`.
    vector_stride: usize,
    vector_size: usize,
}

impl IndexVectors {
    fn new(indices: &ArrayLiteral, index_vector_dim: i64) -> Result<IndexVectors, RunError> {
        let values = indices.to_i64_vec().ok_or_else(|| internal("index arrays have an integer type"))?;
        let ivd = usize::try_from(index_vector_dim).map_err(|_| internal("index_vector_dim"))?;
        if ivd > indices.rank() {
            return Err(internal("index_vector_dim is at most the rank"));
        }
        // The dimensions with the implicit trailing 1 when `ivd == rank`.
        let mut dims = indices.dims().to_vec();
        if ivd == dims.len() {
            dims.push(1);
        }
        let strides = crate::types::ArrayShape::new(indices.element_type(), dims.clone()).strides();
        let batch_strides = strides.iter().enumerate().filter(|&(d, _)| d != ivd).map(|(_, &s)| s).collect();
        Ok(IndexVectors { values, batch_strides, vector_stride: strides[ivd], vector_size: dims[ivd] as usize })
    }

    fn vector_size(&self) -> usize {
        self.vector_size
    }

    /// Writes `S` for the batch index `g` into `s` (`vector_size` entries).
    fn lookup(&self, g: &[i64], s: &mut [i64]) -> Result<(), RunError> {
        let base: usize = g.iter().zip(&self.batch_strides).map(|(&c, &stride)| c as usize * stride).sum();
        for (i, entry) in s.iter_mut().enumerate().take(self.vector_size) {
            *entry = *self.values.get(base + i * self.vector_stride).ok_or_else(|| internal("index vector out of range"))?;
        }
        Ok(())
    }
}

/// The position in `G` (the index array's dimensions without
/// `index_vector_dim`) of index array dimension `d`.
fn batch_position(d: i64, index_vector_dim: i64) -> usize {
    (if d > index_vector_dim { d - 1 } else { d }) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s32(dims: Vec<i64>, v: Vec<i32>) -> ArrayLiteral {
        ArrayLiteral::from_vec(dims, v)
    }

    #[test]
    fn index_vectors_combine_inserts_at_index_vector_dim() {
        // indices[2,3,2] with the vector in the middle dimension: S for
        // G = (g0, g2) is indices[g0, :, g2].
        let indices = s32(vec![2, 3, 2], (0..12).collect());
        let v = IndexVectors::new(&indices, 1).unwrap();
        assert_eq!(v.vector_size(), 3);
        let mut s = [0i64; 3];
        v.lookup(&[1, 1], &mut s).unwrap();
        assert_eq!(s, [7, 9, 11]);
        v.lookup(&[0, 0], &mut s).unwrap();
        assert_eq!(s, [0, 2, 4]);
    }

    #[test]
    fn index_vectors_implicit_trailing_one() {
        // index_vector_dim == rank: every element is a vector of size 1.
        let indices = s32(vec![2, 2], vec![5, 6, 7, 8]);
        let v = IndexVectors::new(&indices, 2).unwrap();
        assert_eq!(v.vector_size(), 1);
        let mut s = [0i64; 1];
        v.lookup(&[1, 0], &mut s).unwrap();
        assert_eq!(s, [7]);
        // A rank-0 index array: G is empty and S is the one element.
        let scalar = ArrayLiteral::scalar(-3i64);
        let v = IndexVectors::new(&scalar, 0).unwrap();
        v.lookup(&[], &mut s).unwrap();
        assert_eq!(s, [-3]);
    }

    #[test]
    fn start_indices_clamp_in_every_dimension() {
        let starts: Vec<Literal> = vec![ArrayLiteral::scalar(-5i8).into(), ArrayLiteral::scalar(u64::MAX).into()];
        let refs: Vec<&Literal> = starts.iter().collect();
        assert_eq!(clamped_starts(&refs, &[4, 6], &[2, 3]).unwrap(), vec![0, 3]);
        assert_eq!(batch_position(3, 1), 2);
        assert_eq!(batch_position(0, 1), 0);
    }
}
