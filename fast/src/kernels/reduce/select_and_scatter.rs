//! SelectAndScatter, in two passes: every source element's window selects
//! its operand element (in parallel, when `select` compiled), then the
//! source values are scattered in source order (a typed loop for a
//! recognised `scatter`).

use rayon::prelude::*;
use xlaref_reference::ir::{ComputationId, WindowAttrs};
use xlaref_reference::literal::{ArrayLiteral, Data, Literal};
use xlaref_reference::scalar::Scalar;
use xlaref_reference::types::Shape;

use super::window::Plan;
use super::{combine, internal, scalars, Combiner, Elem, R};
use crate::applied::{Kind, ScalarFn};
use crate::exec::Executor;

/// No selection: the window covered no operand element.
const NONE: usize = usize::MAX;

/// SelectAndScatter — as the reference: each source element's window is
/// walked row-major; the first covered element is the current selection and
/// each next candidate replaces it unless `select(current, candidate)`.
/// Then `output[selected] = scatter(output[selected], source_value)` in
/// source order, the output starting as `init_value` everywhere.
pub fn select_and_scatter(
    exec: &mut Executor,
    select: ComputationId,
    scatter: ComputationId,
    w: &WindowAttrs,
    operands: &[&Literal],
    shape: &Shape,
) -> R<Literal> {
    let [operand, source, init] = operands else {
        return Err(internal("SelectAndScatter takes three operands"));
    };
    let (operand, source) = (
        operand.as_array().ok_or_else(|| internal("operand is not an array"))?,
        source.as_array().ok_or_else(|| internal("source is not an array"))?,
    );
    let init = scalars(&[init])?[0];
    let out_shape = shape.as_array().ok_or_else(|| internal("expected an array result"))?;
    if out_shape.element_count() != operand.element_count() {
        return Err(internal("SelectAndScatter shapes do not match"));
    }
    let plan = Plan::new(operand.dims(), source.dims(), w)?;
    let selected = choose(exec, &ScalarFn::new(select), &plan, &operand.data)?;
    if selected.len() != source.element_count() {
        return Err(internal("SelectAndScatter source size"));
    }

    let scatter = ScalarFn::new(scatter);
    if let Kind::Bin(op) = scatter.kind(exec.module) {
        let run = Scatter { selected: &selected, out_len: out_shape.element_count() };
        if let Some(data) = combine(op, &source.data, init, run) {
            return Ok(ArrayLiteral::with_shape(out_shape.clone(), data?).into());
        }
    }
    let mut output = Data::zeros(out_shape.element_type, out_shape.element_count());
    for pos in 0..output.len() {
        if !output.set(pos, init) {
            return Err(internal("init_value has another type than the operand"));
        }
    }
    let mut scratch = Vec::with_capacity(1);
    for (s, &pos) in selected.iter().enumerate() {
        if pos == NONE {
            continue;
        }
        if s % 4096 == 0 {
            exec.env.check_deadline()?;
        }
        scatter.call(exec, &[output.get(pos), source.data.get(s)], &mut scratch)?;
        let value = scratch.first().copied().ok_or_else(|| internal("scatter returned nothing"))?;
        if !output.set(pos, value) {
            return Err(internal("scatter returned a value of another type"));
        }
    }
    Ok(ArrayLiteral::with_shape(out_shape.clone(), output).into())
}

/// The selected operand position of every source element (row-major), or
/// [`NONE`].
fn choose(exec: &mut Executor, select: &ScalarFn, plan: &Plan, operand: &Data) -> R<Vec<usize>> {
    let (w, rows) = (plan.row_len(), plan.rows());
    let one_row = |r: usize, keep: &mut dyn FnMut(Scalar, Scalar) -> R<bool>, out: &mut Vec<usize>| -> R<()> {
        let mut offs = Vec::new();
        plan.outer_offsets(plan.rows_from(r).coordinates(), &mut offs);
        for o in 0..w {
            let mut current: Option<(usize, Scalar)> = None;
            for &off in &offs {
                for &i in plan.last(o) {
                    let pos = off + i;
                    let candidate = operand.get(pos);
                    current = match current {
                        Some((p, c)) if keep(c, candidate)? => Some((p, c)),
                        _ => Some((pos, candidate)),
                    };
                }
            }
            out.push(current.map_or(NONE, |(p, _)| p));
        }
        Ok(())
    };
    if let Some(p) = select.program(exec.module) {
        let parts: Vec<R<Vec<usize>>> = (0..rows)
            .into_par_iter()
            .map(|r| {
                let mut scratch = Vec::with_capacity(1);
                let mut keep = |a: Scalar, b: Scalar| -> R<bool> {
                    p.call(&[a, b], &mut scratch)?;
                    scratch.first().and_then(|s| s.as_pred()).ok_or_else(|| internal("select returned a non-pred"))
                };
                let mut out = Vec::with_capacity(w);
                one_row(r, &mut keep, &mut out)?;
                Ok(out)
            })
            .collect();
        let mut all = Vec::with_capacity(rows * w);
        for p in parts {
            all.extend(p?);
        }
        return Ok(all);
    }
    let mut all = Vec::with_capacity(rows * w);
    let mut scratch = Vec::with_capacity(1);
    for r in 0..rows {
        exec.env.check_deadline()?;
        let mut keep = |a: Scalar, b: Scalar| select.call_pred(exec, &[a, b], &mut scratch);
        one_row(r, &mut keep, &mut all)?;
    }
    Ok(all)
}

/// The scatter pass with a recognised update op.
struct Scatter<'a> {
    selected: &'a [usize],
    out_len: usize,
}

impl Combiner for Scatter<'_> {
    fn run<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, source: &[T], init: T, f: F, _assoc: bool) -> R<Vec<T>> {
        let mut out = vec![init; self.out_len];
        for (&pos, &v) in self.selected.iter().zip(source) {
            if pos != NONE {
                let slot = out.get_mut(pos).ok_or_else(|| internal("selected position out of range"))?;
                *slot = f(*slot, v);
            }
        }
        Ok(out)
    }
}
