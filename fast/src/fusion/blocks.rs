//! The general fusion runner: any group, any element type. Each member
//! runs the engine's own whole-array kernel on a block of 16384 positions,
//! so the group computes exactly what its ops compute one by one; the
//! blocks run in parallel. Groups the typed tiles (`tiles.rs`) cannot run
//! come here.

use std::mem::MaybeUninit;
use std::rc::Rc;
use std::sync::Mutex;

use xlaref_reference::ir::{Computation, InstrId, Op};
use xlaref_reference::literal::{ArrayLiteral, Literal, Stored};
use xlaref_reference::types::{ArrayShape, Shape};
use xlaref_reference::with_data;
use xlaref_reference::RunError;

use super::{array, internal, spread, spread_into, Rows, Spread, R};
use crate::kernels::elementwise as ew;
use crate::kernels::reduce::{combine, fold_any_order, Combiner, Elem, RowFold};
use crate::par;

/// Positions per block: small enough that a chain's live blocks stay in the
/// L2 cache, large enough that each op's loop runs long vector stretches.
const BLOCK: usize = 16384;

/// Where a member's operand comes from, for one block.
enum Input<'a> {
    /// Another member's block (its index in the group).
    Member(usize),
    /// A materialized value of the group's element count: sliced per block.
    Slice(&'a ArrayLiteral),
    /// A one-element value, passed whole (the kernels read it as a scalar).
    Whole(&'a Literal),
}

/// One member, ready to run on blocks.
struct Step<'a> {
    op: &'a Op,
    out: ArrayShape,
    inputs: Vec<Input<'a>>,
    spread: Option<Spread<'a>>,
}

impl Step<'_> {
    /// This member's values at positions `start..start + len`.
    fn run(&self, done: &[Option<Rc<Literal>>], start: usize, len: usize) -> R<Rc<Literal>> {
        let shape = ArrayShape::new(self.out.element_type, vec![len as i64]);
        if let Some(s) = &self.spread {
            let data = with_data!(&s.operand.data, v => {
                let mut out = Vec::with_capacity(len);
                spread_into(v, s, start, len, &mut out);
                Stored::wrap(out)
            });
            return Ok(Rc::new(ArrayLiteral::with_shape(shape, data).into()));
        }
        let x = self
            .inputs
            .iter()
            .map(|input| {
                Ok(match input {
                    Input::Member(k) => done[*k].clone().ok_or_else(|| internal("fused value freed too early"))?,
                    Input::Slice(a) => {
                        let data = with_data!(&a.data, v => Stored::wrap(v[start..start + len].to_vec()));
                        Rc::new(ArrayLiteral::with_shape(ArrayShape::new(a.element_type(), vec![len as i64]), data).into())
                    }
                    Input::Whole(l) => Rc::new((*l).clone()),
                })
            })
            .collect::<R<Vec<Rc<Literal>>>>()?;
        let a = |k: usize| array(&x[k]);
        Ok(Rc::new(match self.op {
            Op::Unary(u) => ew::unary(*u, a(0)?, &shape)?.into(),
            Op::Binary { op, .. } => ew::binary(*op, a(0)?, a(1)?, None, &shape)?.into(),
            Op::Compare { direction, total_order, .. } => ew::compare(*direction, *total_order, a(0)?, a(1)?, None, &shape)?.into(),
            Op::Select => ew::select(a(0)?, &x[1], &x[2])?,
            Op::Clamp => ew::clamp(a(0)?, a(1)?, a(2)?)?.into(),
            Op::ConvertElementType { new_element_type } => ew::convert(a(0)?, *new_element_type).into(),
            // A block of a reshape is the same block of its operand.
            Op::Reshape { .. } | Op::Collapse { .. } => return Ok(x[0].clone()),
            _ => return Err(internal("op in a fusion group")),
        }))
    }
}

/// Each row of `len` elements folded from the init value, as the Reduce
/// kernel folds a row it gives one thread (`reduce.rs`, `segments`).
pub(super) struct RowFolds {
    pub len: usize,
}

impl Combiner for RowFolds {
    fn run<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, assoc: bool) -> R<Vec<T>> {
        Ok(par::simd(
            #[inline(always)]
            || {
                x.chunks(self.len.max(1))
                    .map(|row| if assoc { fold_any_order(init, row, f) } else { row.iter().fold(init, |a, &v| f(a, v)) })
                    .collect()
            },
        ))
    }

    fn run_lanes<T: Elem, F: Fn(T, T) -> T + Copy + Send + Sync>(self, x: &[T], init: T, f: F, lanes: RowFold<T>) -> R<Vec<T>> {
        Ok(x.chunks(self.len.max(1)).map(|row| lanes(init, row).unwrap_or_else(|| fold_any_order(init, row, f))).collect())
    }
}

/// Runs group `members`, block by block (see [`super::run`]).
pub(super) fn run<'a>(
    c: &'a Computation,
    shapes: &[&Shape],
    members: &[InstrId],
    rows: Option<&Rows>,
    value: &impl Fn(InstrId) -> R<&'a Literal>,
) -> R<Literal> {
    let root = *members.last().ok_or_else(|| internal("empty fusion group"))?;
    let out = shapes[root].as_array().ok_or_else(|| internal("fusion root is not an array"))?.clone();
    // Without a Reduce, the members but the root are its operand's members.
    let elementwise = if rows.is_some() { &members[..members.len() - 1] } else { members };
    let n = elementwise.last().and_then(|&m| shapes[m].as_array()).map_or(0, ArrayShape::element_count);
    let index: std::collections::HashMap<InstrId, usize> = elementwise.iter().enumerate().map(|(k, &m)| (m, k)).collect();
    let mut steps = Vec::with_capacity(elementwise.len());
    // The block of member k can be dropped after its last reader runs.
    let mut last_use = vec![0usize; elementwise.len()];
    for (j, &m) in elementwise.iter().enumerate() {
        let instr = &c.instructions[m];
        let member_out = shapes[m].as_array().ok_or_else(|| internal("fused value is not an array"))?.clone();
        let mut inputs = Vec::new();
        let mut broadcast = None;
        for &o in &instr.operands {
            if let Some(&k) = index.get(&o) {
                last_use[k] = j;
                inputs.push(Input::Member(k));
                continue;
            }
            let l = value(o)?;
            if matches!(instr.op, Op::Broadcast { .. } | Op::BroadcastInDim { .. }) {
                broadcast = Some(spread(&instr.op, array(l)?, &member_out));
            } else if l.as_array().is_some_and(|a| a.element_count() == n && a.dynamic_sizes.is_none()) {
                inputs.push(Input::Slice(array(l)?));
            } else if l.as_array().is_some_and(|a| a.element_count() == 1 && a.dynamic_sizes.is_none()) {
                inputs.push(Input::Whole(l));
            } else {
                return Err(internal("fused operand of another size"));
            }
        }
        steps.push(Step { op: &instr.op, out: member_out, inputs, spread: broadcast });
    }
    let ratio = rows.map_or(1, |r| r.len);
    let reduced = match rows {
        Some(r) => {
            let operand =
                c.instructions[root].operands.first().and_then(|o| index.get(o)).ok_or_else(|| internal("fused Reduce's operand"))?;
            // The operand's block outlives every member's loop.
            last_use[*operand] = usize::MAX;
            Some((r, *operand, r.init.data.get(0)))
        }
        None => None,
    };
    if out.element_count() == 0 || n == 0 {
        return Ok(ArrayLiteral::zeros(&out).into());
    }
    // Output positions `start..start + len`: input positions times `ratio`.
    let block = |start: usize, len: usize| -> R<Rc<Literal>> {
        let (start, len) = (start * ratio, len * ratio);
        let mut done: Vec<Option<Rc<Literal>>> = vec![None; steps.len()];
        for (j, step) in steps.iter().enumerate() {
            done[j] = Some(step.run(&done, start, len)?);
            for (k, &last) in last_use.iter().enumerate().take(j) {
                if last == j {
                    done[k] = None;
                }
            }
        }
        let Some((r, operand, init)) = &reduced else { return done.pop().flatten().ok_or_else(|| internal("fusion root value missing")) };
        let x = done[*operand].take().ok_or_else(|| internal("fused Reduce operand missing"))?;
        let data = combine(r.op, &array(&x)?.data, *init, RowFolds { len: r.len })
            .ok_or_else(|| internal("fused Reduce without a typed loop"))??;
        Ok(Rc::new(ArrayLiteral::with_shape(ArrayShape::new(out.element_type, vec![(len / ratio) as i64]), data).into()))
    };
    let rows_per_block = (BLOCK / ratio).max(1);
    let n_out = out.element_count();
    let first = block(0, n_out.min(rows_per_block))?;
    let first = array(&first)?;
    let data = with_data!(&first.data, v => Stored::wrap(assemble(v, n_out, rows_per_block, n, &block)?));
    Ok(ArrayLiteral::with_shape(out, data).into())
}

/// The group's result: every block of `block_len` results run once, in
/// parallel across chunks of whole blocks (`work`: the positions the group
/// iterates over, which sizes the chunks). `first` (block 0's values) only
/// fixes the element type.
fn assemble<T: Stored + Copy + Send + Sync>(
    first: &[T],
    n: usize,
    block_len: usize,
    work: usize,
    block: &(dyn Fn(usize, usize) -> R<Rc<Literal>> + Sync),
) -> R<Vec<T>> {
    let failed: Mutex<Option<RunError>> = Mutex::new(None);
    let clock = xlaref_reference::watch::clock();
    let chunk = if work <= 2 * BLOCK { n } else { n.div_ceil(4 * rayon::current_num_threads()).next_multiple_of(block_len) };
    let filler = first[0];
    let out = par::build_in_chunks(n, chunk, |start, chunk: &mut [MaybeUninit<T>]| {
        let mut at = 0;
        while at < chunk.len() {
            let len = (chunk.len() - at).min(block_len);
            // After the time limit, blocks are skipped: the executor reports it.
            let values = if clock.passed() { Ok(None) } else { block(start + at, len).map(Some) };
            let record = |e: RunError| {
                failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            };
            match values {
                Ok(Some(l)) => match l.as_array().and_then(|a| T::slice(&a.data)).filter(|v| v.len() == len) {
                    Some(v) => {
                        for (o, &x) in chunk[at..at + len].iter_mut().zip(v) {
                            o.write(x);
                        }
                        at += len;
                        continue;
                    }
                    None => record(internal("fused block of another type or length")),
                },
                Ok(None) => {}
                Err(e) => record(e),
            }
            par::fill_with(&mut chunk[at..at + len], filler);
            at += len;
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
