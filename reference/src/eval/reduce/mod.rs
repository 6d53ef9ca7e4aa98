//! Reference evaluation of Reduce and Map (here), ReduceWindow (`window.rs`)
//! and SelectAndScatter (`select_and_scatter.rs`). The rules they rely on
//! are checked in `verify/reduce.rs`.
//!
//! Every called computation is applied through [`ScalarComputation`]; the
//! loops below reuse their index and argument buffers.

mod select_and_scatter;
pub mod window;

use super::applied::ScalarComputation;
use super::{array, arrays, internal, Interpreter};
use crate::error::RunError;
use crate::ir::{ComputationId, Op};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::scalar::Scalar;
use crate::types::{ArrayShape, Indices, Shape};

pub fn eval(it: &mut Interpreter, op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    match op {
        Op::Reduce { computation, dimensions } => reduce(it, *computation, dimensions, operands, shape),
        Op::ReduceWindow { computation, window } => window::reduce_window(it, *computation, window, operands, shape),
        Op::SelectAndScatter { select, scatter, window } => {
            select_and_scatter::select_and_scatter(it, *select, *scatter, window, operands, shape)
        }
        Op::Map { computation, .. } => map(it, *computation, operands, shape),
        other => Err(internal(&format!("{} is not a reduce op", other.name()))),
    }
}

/// Reduce — document §Reduce (and "Variadic Reduce").
///
/// For each index of the result (the operand's index with the reduced
/// `dimensions` removed), the running values start at `init_values` and the
/// computation is applied once per element of the reduced index space:
/// `acc = computation(acc_0..acc_{N-1}, operand_0[i]..operand_{N-1}[i])`.
/// The document allows any association; the reference walks the reduced
/// dimensions in row-major order (dimensions in increasing order, whatever
/// the order of `dimensions`), i.e. `f(..f(f(init, x_0), x_1).., x_last)`,
/// as XLA's CPU backend does. An empty reduced space leaves `init_values`.
pub fn reduce(
    it: &mut Interpreter,
    computation: ComputationId,
    dimensions: &[i64],
    operands: &[&Literal],
    shape: &Shape,
) -> Result<Literal, RunError> {
    fold_groups(it, computation, operands, shape, "Reduce", |operand, out, group| reduction_groups(operand, dimensions, out, group))
}

/// The fold Reduce and ReduceWindow share: for each result element, the
/// running values start at `init_values` and `computation` folds in the
/// operands' elements at each position of its group (running values first,
/// then inputs), in the order `groups` lists them.
pub(super) fn fold_groups(
    it: &mut Interpreter,
    computation: ComputationId,
    operands: &[&Literal],
    shape: &Shape,
    op: &str,
    groups: impl FnOnce(&ArrayShape, &ArrayShape, &mut dyn FnMut(usize, &[usize]) -> Result<(), RunError>) -> Result<(), RunError>,
) -> Result<Literal, RunError> {
    let n = operands.len() / 2;
    let inputs = arrays(&operands[..n])?;
    let init_values = scalars(&operands[n..])?;
    let base = &inputs.first().ok_or_else(|| internal(&format!("{op} without operands")))?.shape;
    let out_shapes = result_shapes(shape, n)?;
    let mut results = zeros(&out_shapes);
    let f = ScalarComputation::new(computation);
    let mut acc: Vec<Scalar> = Vec::with_capacity(n);
    let mut args: Vec<Scalar> = Vec::with_capacity(2 * n);
    groups(base, out_shapes[0], &mut |out_pos, positions| {
        it.env.check_deadline()?;
        acc.clear();
        acc.extend_from_slice(&init_values);
        for &pos in positions {
            args.clear();
            args.extend_from_slice(&acc);
            args.extend(inputs.iter().map(|a| a.data.get(pos)));
            f.call(it, &args, &mut acc)?;
        }
        store(&mut results, out_pos, &acc)
    })?;
    Ok(collate(results, &out_shapes))
}

/// The reduction groups of Reduce: calls `group(out_pos, positions)` once
/// per element of the result `out` (the operand's index with `dimensions`
/// removed), with the linear operand positions it reduces, in row-major
/// order of the reduced dimensions (in increasing dimension order, whatever
/// the order of `dimensions`). The harness's tolerance model walks the same
/// groups.
pub fn reduction_groups(
    operand: &ArrayShape,
    dimensions: &[i64],
    out: &ArrayShape,
    mut group: impl FnMut(usize, &[usize]) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let rank = operand.rank();
    let mut reduced: Vec<usize> = dimensions.iter().map(|&d| d as usize).collect();
    reduced.sort_unstable();
    let kept: Vec<usize> = (0..rank).filter(|d| !reduced.contains(d)).collect();
    let reduced_sizes: Vec<i64> = reduced
        .iter()
        .map(|&d| operand.dims.get(d).copied().ok_or_else(|| internal("Reduce dimension out of range")))
        .collect::<Result<_, _>>()?;
    let mut index = vec![0i64; rank];
    let mut positions = Vec::new();
    let work = (reduced_sizes.iter().product::<i64>() as u64).max(1);
    for (out_pos, out_index) in out.indices().enumerate() {
        if crate::watch::tick(work) {
            break;
        }
        for (&d, &i) in kept.iter().zip(&out_index) {
            index[d] = i;
        }
        positions.clear();
        for r in Indices::new(&reduced_sizes) {
            for (&d, &i) in reduced.iter().zip(&r) {
                index[d] = i;
            }
            positions.push(operand.linear(&index));
        }
        group(out_pos, &positions)?;
    }
    Ok(())
}

/// Map — document §Map: the result at each index is `computation` applied
/// to the operands' elements at that index (all operands have the result's
/// dimensions, so one linear position serves all).
pub fn map(it: &mut Interpreter, computation: ComputationId, operands: &[&Literal], shape: &Shape) -> Result<Literal, RunError> {
    let inputs = arrays(operands)?;
    let out = super::array_shape(shape)?;
    let count = out.element_count();
    if inputs.iter().any(|a| a.element_count() != count) {
        return Err(internal("Map operands differ in size from the result"));
    }
    let mut data = Data::zeros(out.element_type, count);
    let f = ScalarComputation::new(computation);
    let mut args: Vec<Scalar> = Vec::with_capacity(inputs.len());
    let mut result: Vec<Scalar> = Vec::with_capacity(1);
    for pos in 0..count {
        args.clear();
        args.extend(inputs.iter().map(|a| a.data.get(pos)));
        f.call(it, &args, &mut result)?;
        let value = result.first().copied().ok_or_else(|| internal("the mapped computation returned nothing"))?;
        if !data.set(pos, value) {
            return Err(internal("the mapped computation returned another type"));
        }
    }
    Ok(ArrayLiteral::with_shape(out.clone(), data).into())
}

/// The values of scalar operands (init values).
fn scalars(operands: &[&Literal]) -> Result<Vec<Scalar>, RunError> {
    operands.iter().map(|l| Scalar::from_array(array(l)?).ok_or_else(|| internal("expected a scalar operand"))).collect()
}

/// The N result arrays' shapes: the shape itself for N = 1, the tuple's
/// elements otherwise (the document's `Collate`).
fn result_shapes(shape: &Shape, n: usize) -> Result<Vec<&ArrayShape>, RunError> {
    let shapes: Vec<&ArrayShape> = match shape {
        Shape::Array(a) if n == 1 => vec![a],
        Shape::Tuple(t) if t.len() == n && n > 1 => {
            t.iter().map(|s| s.as_array().ok_or_else(|| internal("expected array results"))).collect::<Result<_, _>>()?
        }
        _ => return Err(internal("result shape does not match the number of operands")),
    };
    Ok(shapes)
}

fn zeros(shapes: &[&ArrayShape]) -> Vec<Data> {
    shapes.iter().map(|s| Data::zeros(s.element_type, s.element_count())).collect()
}

/// Writes one value into each result at `pos`.
fn store(results: &mut [Data], pos: usize, values: &[Scalar]) -> Result<(), RunError> {
    if values.len() != results.len() {
        return Err(internal("a reducer returned the wrong number of values"));
    }
    for (data, &value) in results.iter_mut().zip(values) {
        if !data.set(pos, value) {
            return Err(internal("a reducer returned a value of another type"));
        }
    }
    Ok(())
}

/// One array, or a tuple of them (the document's `Collate`).
fn collate(results: Vec<Data>, shapes: &[&ArrayShape]) -> Literal {
    let mut arrays: Vec<Literal> =
        results.into_iter().zip(shapes).map(|(data, &s)| ArrayLiteral::with_shape(s.clone(), data).into()).collect();
    if arrays.len() == 1 {
        arrays.swap_remove(0)
    } else {
        Literal::Tuple(arrays)
    }
}
