//! DynamicSlice, DynamicUpdateSlice, Gather and Scatter in the fast engine.
//! DynamicSlice is a strided copy (`shape_ops::slice`) at clamped starts;
//! DynamicUpdateSlice copies the update row by row into a copy of the
//! operand. Gather is in `gather.rs`, Scatter in `scatter.rs`; the index
//! helpers they share are here.

mod gather;
mod scatter;

use xlaref_reference::ir::Op;
use xlaref_reference::literal::{ArrayLiteral, Data, Literal, Stored};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::{with_data, RunError};

use super::shape_ops;
use crate::exec::Executor;

type R<T> = Result<T, RunError>;

fn arr(l: &Literal) -> R<&ArrayLiteral> {
    l.as_array().ok_or_else(|| internal("expected an array"))
}

pub fn eval(exec: &mut Executor, op: &Op, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let out = || shape.as_array().ok_or_else(|| internal("expected an array result"));
    let first = || operands.first().copied().ok_or_else(|| internal("missing operand")).and_then(arr);
    match op {
        Op::DynamicSlice { .. } => Ok(dynamic_slice(first()?, &operands[1..], out()?)?.into()),
        Op::DynamicUpdateSlice => {
            let update = operands.get(1).copied().ok_or_else(|| internal("missing update")).and_then(arr)?;
            Ok(dynamic_update_slice(first()?, update, &operands[2..])?.into())
        }
        Op::Gather(dims) => {
            let indices = operands.get(1).copied().ok_or_else(|| internal("missing start_indices")).and_then(arr)?;
            Ok(gather::gather(first()?, indices, dims, out()?)?.into())
        }
        Op::Scatter { dims, update_computation } => {
            let arrays = operands.iter().map(|l| arr(l)).collect::<R<Vec<_>>>()?;
            let n = arrays.len() / 2;
            let (inputs, rest) = arrays.split_at(n);
            let (&indices, updates) = rest.split_first().ok_or_else(|| internal("missing scatter_indices"))?;
            scatter::scatter(exec, inputs, indices, updates, dims, *update_computation)
        }
        _ => Err(internal("not an indexing op")),
    }
}

/// DynamicSlice/DynamicUpdateSlice start indices, each clamped to
/// `[0, dim - size]` in every dimension (semantics-decisions: dimension 0
/// too; u64 above `i64::MAX` saturates).
fn clamped_starts(starts: &[&Literal], dims: &[i64], sizes: &[i64]) -> R<Vec<i64>> {
    if starts.len() != dims.len() || sizes.len() != dims.len() {
        return Err(internal("one start index per dimension"));
    }
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .map(|(s, (&dim, &size))| {
            let s = arr(s)?.scalar_i64().ok_or_else(|| internal("start index is an integer scalar"))?;
            Ok(s.min(dim - size).max(0))
        })
        .collect()
}

/// DynamicSlice: a unit-stride slice at the clamped starts.
fn dynamic_slice(x: &ArrayLiteral, starts: &[&Literal], out: &ArrayShape) -> R<ArrayLiteral> {
    let start = clamped_starts(starts, x.dims(), &out.dims)?;
    Ok(shape_ops::slice(x, &start, &vec![1; start.len()], out))
}

/// DynamicUpdateSlice: the operand copied, then each row of the update
/// (its last dimension, contiguous in both) copied into place.
fn dynamic_update_slice(x: &ArrayLiteral, update: &ArrayLiteral, starts: &[&Literal]) -> R<ArrayLiteral> {
    let start = clamped_starts(starts, x.dims(), update.dims())?;
    let mut result = x.clone();
    if update.element_count() == 0 {
        return Ok(result);
    }
    let out_strides = shape_ops::strides_of(x.dims());
    let rank = x.rank();
    let dims = update.dims();
    let row = if rank == 0 { 1 } else { dims[rank - 1] as usize };
    let rows = update.element_count() / row;
    // Operand offset of each update row.
    let row_offset = |mut r: usize| -> usize {
        let mut at = if rank == 0 { 0 } else { start[rank - 1] as usize };
        for d in (0..rank.saturating_sub(1)).rev() {
            let size = dims[d] as usize;
            at += (start[d] as usize + r % size) * out_strides[d] as usize;
            r /= size;
        }
        at
    };
    fn copy_rows<T: Stored>(dst: &mut Data, src: &[T], row: usize, rows: usize, offset: impl Fn(usize) -> usize) -> R<()> {
        let dst = T::slice_mut(dst).ok_or_else(|| internal("update and operand element types differ"))?;
        for r in 0..rows {
            let at = offset(r);
            let target = dst.get_mut(at..at + row).ok_or_else(|| internal("update out of range"))?;
            target.copy_from_slice(&src[r * row..(r + 1) * row]);
        }
        Ok(())
    }
    with_data!(&update.data, u => copy_rows(&mut result.data, u, row, rows, row_offset))?;
    Ok(result)
}

/// An integer index element read as i64 (u64 above `i64::MAX` saturates).
trait IndexElem: Copy + Sync {
    fn get(self) -> i64;
}

macro_rules! index_elem {
    ($($t:ty),*) => {$(
        impl IndexElem for $t {
            #[inline(always)]
            fn get(self) -> i64 {
                self as i64
            }
        }
    )*};
}
index_elem!(i8, i16, i32, i64, u8, u16, u32);

impl IndexElem for u64 {
    #[inline(always)]
    fn get(self) -> i64 {
        i64::try_from(self).unwrap_or(i64::MAX)
    }
}

/// Runs `$body` with `$v` bound to the typed elements of an index array.
macro_rules! with_index {
    ($data:expr, $v:ident => $body:expr) => {
        xlaref_reference::by_class!($data, $v => {
            pred: return Err(internal("index arrays have an integer type")),
            int: $body,
            float: return Err(internal("index arrays have an integer type")),
            complex: return Err(internal("index arrays have an integer type")),
        })
    };
}
use crate::internal;
use with_index;

/// How the index array of Gather/Scatter splits into index vectors: the
/// batch index `G` runs row-major over every dimension but
/// `index_vector_dim`; `S[k]` of batch `g` is at `start(g) + k * inner`.
struct IndexLayout {
    /// The sizes of the dimensions of `G`, and their row-major strides.
    batch_dims: Vec<usize>,
    batch_strides: Vec<usize>,
    /// Elements after `index_vector_dim` (the vector's stride).
    inner: usize,
    vector_size: usize,
}

impl IndexLayout {
    fn new(indices: &ArrayLiteral, index_vector_dim: i64) -> R<IndexLayout> {
        let ivd = usize::try_from(index_vector_dim).ok().filter(|&d| d <= indices.rank()).ok_or_else(|| internal("index_vector_dim"))?;
        let dims: Vec<usize> = indices.dims().iter().map(|&d| d as usize).collect();
        let vector_size = dims.get(ivd).copied().unwrap_or(1);
        let inner = dims.get(ivd + 1..).map_or(1, |d| d.iter().product());
        let batch_dims: Vec<usize> = dims.iter().enumerate().filter(|&(d, _)| d != ivd).map(|(_, &s)| s).collect();
        let mut batch_strides = vec![1usize; batch_dims.len()];
        for d in (0..batch_dims.len().saturating_sub(1)).rev() {
            batch_strides[d] = batch_strides[d + 1] * batch_dims[d + 1];
        }
        Ok(IndexLayout { batch_dims, batch_strides, inner, vector_size })
    }

    /// The number of batch indices `G`.
    fn count(&self) -> usize {
        self.batch_dims.iter().product()
    }

    /// Where the index vector of batch `g` starts.
    #[inline(always)]
    fn start(&self, g: usize) -> usize {
        (g / self.inner) * self.inner * self.vector_size + g % self.inner
    }

    /// The coordinate of batch `g` along `G`'s dimension `p`.
    #[inline(always)]
    fn coordinate(&self, g: usize, p: usize) -> usize {
        (g / self.batch_strides[p]) % self.batch_dims[p]
    }
}

/// The position in `G` of index array dimension `d`.
fn batch_position(d: i64, index_vector_dim: i64) -> usize {
    (if d > index_vector_dim { d - 1 } else { d }) as usize
}
