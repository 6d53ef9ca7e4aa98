//! Map: the computation applied lane-wise to whole arrays (a recognised
//! binary op is one element-wise kernel; a compiled program runs its steps
//! as element-wise kernels over all elements at once).

use xlaref_reference::ir::ComputationId;
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::Shape;

use super::{arrays, internal, R};
use crate::applied::{Kind, ScalarFn};
use crate::exec::Executor;
use crate::kernels::elementwise as ew;

/// Map — the document's rule: the result at each index is the computation
/// applied to the operands' elements at that index.
pub fn map(exec: &mut Executor, computation: ComputationId, operands: &[&Literal], shape: &Shape) -> R<Literal> {
    let inputs = arrays(operands)?;
    let out = shape.as_array().ok_or_else(|| internal("expected an array result"))?;
    let n = out.element_count();
    if inputs.iter().any(|a| a.element_count() != n) {
        return Err(internal("Map operands differ in size from the result"));
    }
    let f = ScalarFn::new(computation);
    if let (Kind::Bin(op), [a, b]) = (f.kind(exec.module), inputs.as_slice()) {
        if a.element_type() == out.element_type && b.element_type() == out.element_type {
            return Ok(ew::binary(op, a, b, None, out)?.into());
        }
    }
    let results = f.call_lanes(exec, &inputs, n, std::slice::from_ref(out))?;
    let data = results.into_iter().next().ok_or_else(|| internal("the mapped computation returned nothing"))?.data;
    if data.element_type() != out.element_type || data.len() != n {
        return Err(internal("the mapped computation returned another type"));
    }
    Ok(ArrayLiteral::with_shape(out.clone(), data).into())
}
