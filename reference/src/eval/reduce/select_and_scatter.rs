//! SelectAndScatter.

use super::super::applied::ScalarComputation;
use super::super::{array, internal, Interpreter};
use super::scalars;
use super::window::{WindowDim, WindowWalk};
use crate::error::RunError;
use crate::ir::{ComputationId, WindowAttrs};
use crate::literal::{ArrayLiteral, Data, Literal};
use crate::scalar::Scalar;
use crate::types::Shape;

/// SelectAndScatter — document §SelectAndScatter.
///
/// The output starts as `init_value` everywhere. For each element of
/// `source`, in row-major order, the window at that index (placed as in
/// ReduceWindow, [`WindowDim::covered`]) selects one operand element: the
/// window's elements are visited in lexicographic order, the first one is
/// the current selection, and each following `candidate` replaces it unless
/// `select(current, candidate)` is true (the first parameter's index is the
/// lexicographically smaller one, as the document states). Padding cannot
/// be selected; a window that covers no operand element selects nothing and
/// its source value is dropped (as XLA). Then
/// `output[selected] = scatter(output[selected], source_value)`.
pub fn select_and_scatter(
    it: &mut Interpreter,
    select: ComputationId,
    scatter: ComputationId,
    w: &WindowAttrs,
    operands: &[&Literal],
    shape: &Shape,
) -> Result<Literal, RunError> {
    let [operand, source, init] = operands else {
        return Err(internal("SelectAndScatter takes three operands"));
    };
    let (operand, source) = (array(operand)?, array(source)?);
    let init_value = scalars(&[init])?[0];
    let out_shape = super::super::array_shape(shape)?;
    if source.rank() != operand.rank() || out_shape.element_count() != operand.element_count() {
        return Err(internal("SelectAndScatter shapes do not match"));
    }
    let mut walk = WindowWalk::new(WindowDim::all(&operand.shape.dims, w)?);

    let mut output = Data::zeros(out_shape.element_type, out_shape.element_count());
    for pos in 0..output.len() {
        if !output.set(pos, init_value) {
            return Err(internal("init_value has another type than the operand"));
        }
    }
    let select = ScalarComputation::new(select);
    let scatter = ScalarComputation::new(scatter);
    let mut scratch: Vec<Scalar> = Vec::with_capacity(1);
    for (source_pos, s) in source.shape.indices().enumerate() {
        it.env.check_deadline()?;
        walk.place(&s);
        let mut selected: Option<(usize, Scalar)> = None;
        for step in walk.positions() {
            let pos = operand.shape.linear(walk.base_index(&step));
            let candidate = operand.data.get(pos);
            selected = match selected {
                None => Some((pos, candidate)),
                Some((current_pos, current)) => {
                    if select.call_pred(it, &[current, candidate], &mut scratch)? {
                        Some((current_pos, current))
                    } else {
                        Some((pos, candidate))
                    }
                }
            };
        }
        if let Some((pos, _)) = selected {
            scatter.call(it, &[output.get(pos), source.data.get(source_pos)], &mut scratch)?;
            let value = scratch.first().copied().ok_or_else(|| internal("scatter returned nothing"))?;
            if !output.set(pos, value) {
                return Err(internal("scatter returned a value of another type"));
            }
        }
    }
    Ok(ArrayLiteral::with_shape(out_shape.clone(), output).into())
}
